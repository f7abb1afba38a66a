//! C face of [`weir_core::gate`].

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{
    decide, free_handle, on, place_plain, plain_footprint, read_counts, reconfigure,
    start_counting, Guarded, Handle,
};
#[cfg(feature = "std")]
use crate::region::{attach, lay_shared, region_footprint, Layout, Shareable, WEIR_REGION_GATE};
use crate::status::weir_status;
#[cfg(feature = "std")]
use crate::status::weir_status::*;
use weir_core::gate::Gate;

/// A concurrency ceiling: at most `limit` calls inside at once. Lock-free and
/// safe to use from many threads at once; 56 bytes of heap per handle.
/// Made by `weir_gate_new`, freed by `weir_gate_free`.
///
/// In the firmware build (docs/firmware.md) a gate is placed only: on a 32-bit
/// core 56 bytes. Its updates hold the build's critical section (interrupts
/// masked, with `single-core`); the longest measured under QEMU: a call of 42
/// instructions on a Cortex-M4F, a section of 29 on a Cortex-M0.
pub struct weir_gate(Guarded<Gate>);

impl Handle for weir_gate {
    type State = Gate;
    fn guarded(&self) -> &Guarded<Gate> {
        &self.0
    }
}

/// Makes a gate that nothing has entered and writes it to `*out`. A `limit`
/// of zero or less means no ceiling. `WEIR_ERR_NULL` if `out` is NULL;
/// `*out` is written only on success.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_gate_new(limit: i64, out: *mut *mut weir_gate) -> weir_status {
    new_handle(out, || Ok(weir_gate(Guarded::new(Gate::new(limit)))))
}

/// The bytes and the alignment a placed gate needs (`weir_gate_init_in`),
/// written to `*bytes` and `*align`: its handle and nothing more.
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align`
/// pointer; nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_gate_footprint(bytes: *mut usize, align: *mut usize) -> weir_status {
    plain_footprint::<weir_gate>(bytes, align)
}

/// Lays a gate in memory the caller owns (a static array, a field of its
/// own struct) and writes it to `*out`: the gate `weir_gate_new` makes from `limit`,
/// taken by every `weir_gate_*` call, without a heap. `mem` holds `len`
/// bytes, at least the footprint `weir_gate_footprint` answers, at a
/// multiple of its alignment. The memory stays the caller's:
/// `weir_gate_free` on a placed gate does nothing, and the memory may be
/// reused once no call uses it. Checked in this order, nothing written on
/// an error: `out` (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), the arguments
/// (none: every `limit` is accepted), then `mem` NULL
/// (`WEIR_ERR_NULL`), `mem` misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len`
/// below the footprint (`WEIR_ERR_PLACED_TOO_SMALL`).
#[no_mangle]
pub extern "C" fn weir_gate_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    limit: i64,
    out: *mut *mut weir_gate,
) -> weir_status {
    place_plain(mem, len, out, || {
        Ok(weir_gate(Guarded::new(Gate::new(limit))))
    })
}

#[cfg(feature = "std")]
impl Shareable for weir_gate {
    const KIND: u32 = WEIR_REGION_GATE;
    const LOCKED: bool = false;

    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        if slots != 0 {
            return Err(WEIR_ERR_INVALID_ARGUMENT);
        }
        Ok(Layout {
            bytes: core::mem::size_of::<weir_gate>(),
            align: core::mem::align_of::<weir_gate>(),
            runs: [0, 0],
        })
    }

    fn slots(&self) -> usize {
        0
    }

    /// Marks it laid in a region: it takes no lock, but its policy is the
    /// region's, so `weir_gate_reconfigure` refuses it.
    fn share(&mut self) {
        self.0.mark_in_region();
    }

    /// Nothing to change: the gate is one atomic count and its limit, with no lock.
    fn fits(&self, _: &Layout, _: usize) -> bool {
        true
    }
}

/// The bytes and the alignment a shared gate needs
/// (`weir_gate_init_shared`), written to `*bytes` and `*align`: a
/// 256-byte `weir_region_header` and the region's 64-byte lock, then the gate; 64-aligned.
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad pointer; nothing is
/// written on an error.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_gate_shared_footprint(bytes: *mut usize, align: *mut usize) -> weir_status {
    crate::guard::guard_status(|| {
        let layout = weir_gate::layout_for(0)?;
        crate::guard::write_footprint(region_footprint(&layout)?, bytes, align)
    })
}

/// Checks the region at `mem` that `weir_gate_init_shared` laid and
/// writes its gate, for this process, to `*out`: refused with the
/// statuses `weir_breaker_attach` lists, nothing written.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_gate_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_gate,
) -> weir_status {
    attach(mem, len, out)
}

/// Lays a gate that processes share in `mem`, memory the caller maps
/// `MAP_SHARED`, and writes it to `*out` for this process: a
/// `weir_region_header` (its kind WEIR_REGION_GATE; its policy the limit,
/// an int64_t), then the gate `weir_gate_init_in` would lay. Another
/// process gets its own `weir_gate *` from `weir_gate_attach`; the ceiling
/// then holds across the processes together. Its state is one atomic
/// count, so a process killed at any point leaves it whole, but a process
/// killed inside (between its enter and its leave) never leaves: its place
/// stays taken until the region is laid again. Lay it once, before any
/// process attaches. Checked as `weir_breaker_init_shared` checks its
/// region (`WEIR_ERR_NULL`, `WEIR_ERR_PLACED_MISALIGNED`,
/// `WEIR_ERR_REGION_UNSUPPORTED`, `WEIR_ERR_PLACED_TOO_SMALL`).
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_gate_init_shared(
    mem: *mut core::ffi::c_void,
    len: usize,
    limit: i64,
    out: *mut *mut weir_gate,
) -> weir_status {
    lay_shared(mem, len, out, &limit.to_le_bytes(), |at, room, placed| {
        weir_gate_init_in(at, room, limit, placed)
    })
}

/// Frees a gate. NULL is accepted and ignored, and so is a placed one
/// (`weir_gate_init_in`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_gate_free(gate: *mut weir_gate) {
    free_handle(gate)
}

/// Takes room if there is some. Returns whether it did; false for a NULL
/// gate.
#[no_mangle]
pub extern "C" fn weir_gate_enter(gate: *const weir_gate) -> bool {
    decide(gate, false, |_, &entered| Tally::of(entered), Gate::enter)
}

/// Gives room back. Leaving more often than entering never takes the count
/// below zero. Does nothing for a NULL gate.
#[no_mangle]
pub extern "C" fn weir_gate_leave(gate: *const weir_gate) {
    on(gate, (), Gate::leave)
}

/// Gives a gate a new `limit` in place (zero or less: no ceiling), keeping
/// the calls inside and its counts: the next `weir_gate_enter` is judged by
/// it. Calls inside beyond a lower limit stay (a gate cannot call them
/// back) and none enters until enough have left to bring the count under
/// it, so from the change on at most the larger of the count at the change
/// and the new limit are inside. Safe beside the gate's other calls (not
/// `weir_gate_free`): the limit is an atomic word of its own, so an enter
/// racing the change is judged by the old limit or the new one. Lock-free
/// as the gate's other calls are. `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED` for a bad `gate`, `WEIR_ERR_REGION_UNSUPPORTED`
/// for a shared gate (`weir_gate_init_shared`: its limit is its region's,
/// laid once for every process), `WEIR_ERR_POISONED` for a poisoned one; an error changes nothing. It counts nothing.
#[no_mangle]
pub extern "C" fn weir_gate_reconfigure(gate: *mut weir_gate, limit: i64) -> weir_status {
    reconfigure(gate, |gate| {
        gate.reconfigure(limit);
        Ok(())
    })
}

/// How many are inside now; 0 for a NULL gate.
#[no_mangle]
pub extern "C" fn weir_gate_held(gate: *const weir_gate) -> i64 {
    on(gate, 0, Gate::held)
}

/// Turns counting on for a gate: from this call on, `weir_gate_read_counts`
/// reports what it decided. Call it right after `weir_gate_new` to count
/// everything since the handle was made; a second call changes nothing. Until
/// then the handle costs what it did before counting existed (see `weir_counts`
/// for what counting costs). `WEIR_ERR_NULL` for a NULL handle,
/// `WEIR_ERR_MISALIGNED` for one no handle can be at, `WEIR_ERR_POISONED` for a
/// poisoned one.
#[no_mangle]
pub extern "C" fn weir_gate_start_counting(gate: *const weir_gate) -> weir_status {
    start_counting(gate)
}

/// Writes to `*out` what a gate decided since `weir_gate_start_counting`. A
/// reading: it changes nothing. `admitted`: enters that took room; `refused`:
/// enters refused at the limit; `errors`: 0 (leaves are not counted); `units`:
/// equal to `admitted`.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_gate_read_counts(
    gate: *const weir_gate,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(gate, out)
}
