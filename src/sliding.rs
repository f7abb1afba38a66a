//! C face of [`weir_core::sliding`].

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{
    decide, free_handle, guard_status, on, place_handle, placement, read_counts, reconfigure,
    start_counting, write_footprint, Guarded, Handle,
};
use crate::lock::ShortLock;
#[cfg(feature = "std")]
use crate::region::{
    attach, lay_shared, read_recoveries, region_footprint, run_fits, weir_recoveries, Layout,
    Repair, Shareable, WEIR_REGION_SLIDING,
};
use crate::slots::Slots;
use crate::status::weir_status::{self, *};
use weir_core::sliding::{Sliding, SlidingError};
use weir_core::time::NEVER;

/// An exact sliding-window counter: at most `quota` events in any stretch
/// of `window_ns`. Takes a short per-handle lock and is safe to use from
/// many threads at once; 120 bytes of heap per handle plus 8 bytes per unit
/// of quota (one stamp per event it counts), allocated once by
/// `weir_sliding_new`. Freed by `weir_sliding_free`.
///
/// In the firmware build (docs/firmware.md) a sliding is placed only: on a
/// 32-bit core 8 bytes per unit of quota plus 80 (880 for a quota of 100). Its
/// updates hold the build's critical section (interrupts masked, with
/// `single-core`); the longest measured under QEMU: a call of 3561 instructions
/// (quota 100) on a Cortex-M4F, a section of 4865 on a Cortex-M0.
pub struct weir_sliding(Guarded<ShortLock<Sliding<Slots<i64>>>>);

impl Handle for weir_sliding {
    type State = ShortLock<Sliding<Slots<i64>>>;
    fn guarded(&self) -> &Guarded<Self::State> {
        &self.0
    }

    #[cfg(feature = "std")]
    unsafe fn recover(state: &Self::State) -> bool {
        // SAFETY: by `recover`'s contract the caller holds the region's
        // lock.
        unsafe { crate::region::repair(state) }
    }
}

impl From<SlidingError> for weir_status {
    fn from(error: SlidingError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// Makes an empty window that counts at most `quota` events in any
/// `window_ns`-long stretch, and writes it to `*out`. An event stamped `t`
/// is counted while `now < t + window_ns` and falls out at exactly
/// `t + window_ns`.
///
/// Returns `WEIR_ERR_NULL` if `out` is NULL, `WEIR_ERR_QUOTA` for a quota
/// of 0 or less, `WEIR_ERR_SLIDING_WINDOW` for a window of 0 or less (the
/// quota is checked first), `WEIR_ERR_TOO_LARGE` when `quota` stamps (8
/// bytes each) cannot be represented, and `WEIR_ERR_NO_MEMORY` when they
/// cannot be allocated.
/// `*out` is written only on success.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_sliding_new(
    quota: i64,
    window_ns: i64,
    out: *mut *mut weir_sliding,
) -> weir_status {
    new_handle(out, || {
        let sliding = Sliding::new(quota, window_ns)?.map_store(Slots::heap);
        Ok(weir_sliding(Guarded::new(ShortLock::new(sliding))))
    })
}

/// How many stamps a sliding window of `quota` over `window_ns` keeps,
/// checked as `weir_sliding_new` checks them (`WEIR_ERR_TOO_LARGE` for a
/// quota whose stamps no memory could hold).
fn stamps(quota: i64, window_ns: i64) -> Result<usize, weir_status> {
    if quota <= 0 {
        return Err(WEIR_ERR_QUOTA);
    }
    if window_ns <= 0 {
        return Err(WEIR_ERR_SLIDING_WINDOW);
    }
    usize::try_from(quota).map_err(|_| WEIR_ERR_TOO_LARGE)
}

/// The bytes and the alignment a placed sliding window of `quota` over
/// `window_ns` needs, written to `*bytes` and `*align`: the handle and one
/// 8-byte stamp per unit of quota. `WEIR_ERR_QUOTA` and
/// `WEIR_ERR_SLIDING_WINDOW` as for `weir_sliding_new`, `WEIR_ERR_TOO_LARGE`
/// for a footprint no `size_t` holds; `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align` pointer. Nothing is
/// written on an error.
#[no_mangle]
pub extern "C" fn weir_sliding_footprint(
    quota: i64,
    window_ns: i64,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    guard_status(|| {
        let (total, alignment, _) = placement::<weir_sliding, i64>(stamps(quota, window_ns)?)?;
        write_footprint((total, alignment), bytes, align)
    })
}

/// Lays a sliding window in memory the caller owns and writes it to
/// `*out`: the window `weir_sliding_new` makes, taken by every
/// `weir_sliding_*` call, without a heap. `mem` holds `len` bytes, at least
/// the footprint `weir_sliding_footprint` answers, at a multiple of its
/// alignment. The memory stays the caller's: `weir_sliding_free` on a
/// placed window does nothing, and the memory may be reused once no call
/// uses the window. Checked in this order, nothing written on an error:
/// `out` (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), `WEIR_ERR_QUOTA`,
/// `WEIR_ERR_SLIDING_WINDOW`, `WEIR_ERR_TOO_LARGE`, then `mem` NULL
/// (`WEIR_ERR_NULL`), `mem` misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len`
/// below the footprint (`WEIR_ERR_PLACED_TOO_SMALL`).
#[no_mangle]
pub extern "C" fn weir_sliding_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    quota: i64,
    window_ns: i64,
    out: *mut *mut weir_sliding,
) -> weir_status {
    place_handle(
        mem,
        len,
        out,
        0i64,
        || Ok((stamps(quota, window_ns)?, ())),
        |(), slots| {
            let sliding = Sliding::new_in(Slots::placed(slots), window_ns)?;
            Ok(weir_sliding(Guarded::new(ShortLock::new(sliding))))
        },
    )
}

#[cfg(feature = "std")]
impl Repair for Sliding<Slots<i64>> {
    /// Keeps the state as the dead call left it: a half-made take is at most that call's one stamp written or not, and the ring's places stay within its slots (an index read out of them stops at the slice's bound).
    fn repair(&mut self) -> bool {
        true
    }
}

#[cfg(feature = "std")]
impl Shareable for weir_sliding {
    const KIND: u32 = WEIR_REGION_SLIDING;
    const LOCKED: bool = true;

    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        if slots == 0 || slots as u64 > weir_core::window::MAX_SIZE as u64 {
            return Err(WEIR_ERR_QUOTA);
        }
        let (bytes, align, first) = placement::<weir_sliding, i64>(slots)?;
        Ok(Layout {
            bytes,
            align,
            runs: [first, 0],
        })
    }

    fn slots(&self) -> usize {
        // SAFETY: read by the laying call, before the handle is handed
        // out: no other reference to the value is in use.
        unsafe { &*self.0.state().peek() }.store().as_ref().len()
    }

    fn share(&mut self) {
        let lock = self.0.state_mut();
        lock.owned().store_mut().make_relative();
    }

    fn fits(&self, layout: &Layout, slots: usize) -> bool {
        let lock = self.0.state();
        // SAFETY: the store's place and length are integers written when
        // the handle was laid and never changed after; the attach reads
        // them, and the lock's flag, and nothing else.
        let store = unsafe { &*lock.peek() }.store();
        let first = (self as *const weir_sliding as usize).wrapping_add(layout.runs[0]);
        run_fits(
            store.relative(),
            (store as *const Slots<i64>).cast(),
            first,
            slots,
        )
    }
}

/// The bytes and the alignment a shared sliding window needs
/// (`weir_sliding_init_shared`), written to `*bytes` and `*align`: a
/// 256-byte `weir_region_header` and the region's 64-byte lock, then the placed sliding window
/// (`weir_sliding_footprint`); 64-aligned. Checked and answered as
/// `weir_sliding_footprint`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_sliding_shared_footprint(
    quota: i64,
    window_ns: i64,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    crate::guard::guard_status(|| {
        let layout = weir_sliding::layout_for(stamps(quota, window_ns)?)?;
        crate::guard::write_footprint(region_footprint(&layout)?, bytes, align)
    })
}

/// Lays a sliding window that processes share in `mem`, memory the caller maps
/// `MAP_SHARED`, and writes it to `*out` for this process: a
/// `weir_region_header` (its kind WEIR_REGION_SLIDING; its policy the quota then `window_ns`, two int64_t),
/// then the sliding window `weir_sliding_init_in` would lay, its lock a robust,
/// process-shared mutex. Another process gets its own `weir_sliding *` from
/// `weir_sliding_attach`; every `weir_sliding_*` call then works on the one
/// sliding window. A process killed holding the lock leaves the sliding window as its
/// call left it (at most that call's one stamp written or not); the next call answers as a recovered call
/// does (see `weir_breaker_init_shared`) and `weir_sliding_recoveries`
/// counts it. Lay it once, before any process attaches. Checked as
/// `weir_breaker_init_shared` checks its region (`WEIR_ERR_NULL`,
/// `WEIR_ERR_PLACED_MISALIGNED`, `WEIR_ERR_REGION_UNSUPPORTED`,
/// `WEIR_ERR_PLACED_TOO_SMALL`), the arguments as `weir_sliding_init_in`
/// checks them.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_sliding_init_shared(
    mem: *mut core::ffi::c_void,
    len: usize,
    quota: i64,
    window_ns: i64,
    out: *mut *mut weir_sliding,
) -> weir_status {
    let mut policy = [0u8; 16];
    policy[..8].copy_from_slice(&quota.to_le_bytes());
    policy[8..].copy_from_slice(&window_ns.to_le_bytes());
    lay_shared(mem, len, out, &policy, |at, room, placed| {
        weir_sliding_init_in(at, room, quota, window_ns, placed)
    })
}

/// Checks the region at `mem` that `weir_sliding_init_shared` laid and
/// writes its sliding window, for this process, to `*out`: refused with the
/// statuses `weir_breaker_attach` lists, nothing written.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_sliding_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_sliding,
) -> weir_status {
    attach(mem, len, out)
}

/// Writes what a shared sliding window's lock has recovered from (see
/// `weir_sliding_init_shared`) to `*out`; all zero for one that is not
/// shared. `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`, `WEIR_ERR_POISONED`. A
/// reading: it changes nothing.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_sliding_recoveries(
    handle: *const weir_sliding,
    out: *mut weir_recoveries,
) -> weir_status {
    crate::guard::guard_status(|| read_recoveries(handle, out))
}

/// Gives a sliding window a new `quota` and `window_ns` in place. It keeps
/// the stamps it counts at the latest take's `now` (events that had fallen
/// out of the old window stay gone, even under a longer one), the newest
/// quota' of them if it counts more, and judges them from then on by the
/// new window; its clock and its counts carry over. Keeping the newest is
/// exact: a window that counts more than quota' admits nothing until fewer
/// than quota' of them all would be left. So any stretch of window_ns in
/// which an event is admitted after the change holds at most quota' events
/// that the window counted at the change or admitted after it.
///
/// Memory: a new quota up to the one the window holds stamps for (the
/// largest it was made or placed with, or grown to) uses the same stamps;
/// a heap window grows for a larger one, allocating the new ring before it
/// lets go of the old, and a placed window cannot grow: its memory is the
/// caller's (make the larger footprint, `weir_sliding_footprint`, and place
/// a new window there).
///
/// Safe beside the window's other calls (not `weir_sliding_free`): it
/// takes the window's own lock, as they do, so a call racing it sees the
/// old quota and window or the new ones, wholly; a window that grows
/// allocates its new ring and moves into it under that lock. Checked in
/// this order, nothing changed on an
/// error: `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `sliding`,
/// `WEIR_ERR_REGION_UNSUPPORTED` for a shared window
/// (`weir_sliding_init_shared`: its policy is its region's, laid once for
/// every process), `WEIR_ERR_POISONED`, `WEIR_ERR_QUOTA`, `WEIR_ERR_SLIDING_WINDOW`,
/// `WEIR_ERR_TOO_LARGE` (stamps no memory could hold),
/// `WEIR_ERR_PLACED_TOO_SMALL` (a placed window asked to hold more stamps
/// than its memory has), `WEIR_ERR_NO_MEMORY`. It counts nothing.
#[no_mangle]
pub extern "C" fn weir_sliding_reconfigure(
    sliding: *mut weir_sliding,
    quota: i64,
    window_ns: i64,
) -> weir_status {
    reconfigure(sliding, |sliding| {
        let mut sliding = sliding.lock();
        let size = stamps(quota, window_ns)?;
        if size <= sliding.capacity() {
            return Ok(sliding.reconfigure(quota, window_ns)?);
        }
        if sliding.store().is_placed() {
            return Err(WEIR_ERR_PLACED_TOO_SMALL);
        }
        if size > isize::MAX as usize / core::mem::size_of::<i64>() {
            return Err(WEIR_ERR_TOO_LARGE);
        }
        *sliding = sliding.reconfigure_into(Slots::grown(size, 0)?, window_ns)?;
        Ok(())
    })
}

/// Frees a sliding window. NULL is accepted and ignored, and so is a placed one
/// (`weir_sliding_init_in`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_sliding_free(sliding: *mut weir_sliding) {
    free_handle(sliding)
}

/// Counts an event at `now` if the window has room; whether it did. O(1)
/// amortised; never allocates. An earlier `now` than one already seen
/// counts as the latest. False for a NULL window.
#[no_mangle]
pub extern "C" fn weir_sliding_take(sliding: *const weir_sliding, now: i64) -> bool {
    let counted = move |_: &_, &taken: &bool| Tally::of(taken);
    decide(sliding, false, counted, move |sliding| {
        sliding.lock().take(now)
    })
}

/// How many more events the window would count at `now` (a `now` earlier
/// than the latest take's counts as that one); 0 for a NULL window. A pure
/// reading: it drops no stamp and changes no later answer. O(log quota).
#[no_mangle]
pub extern "C" fn weir_sliding_left(sliding: *const weir_sliding, now: i64) -> i64 {
    on(sliding, 0, |sliding| sliding.lock().left(now))
}

/// Nanoseconds from `now` until the window has room: 0 when it has room
/// now, otherwise when its oldest counted event falls out. The wait counts
/// from this `now`, even one earlier than the latest take's, so a caller
/// that waits it finds room by its own clock. `INT64_MAX` when that instant
/// is past the end of the clock or the wait does not fit in an `int64_t`,
/// and for a NULL window. A pure reading, as `weir_sliding_left` is.
#[no_mangle]
pub extern "C" fn weir_sliding_next(sliding: *const weir_sliding, now: i64) -> i64 {
    on(sliding, NEVER, |sliding| sliding.lock().next(now))
}

/// Turns counting on for a sliding window: from this call on,
/// `weir_sliding_read_counts` reports what it decided. Call it right after
/// `weir_sliding_new` to count everything since the handle was made; a second
/// call changes nothing. Until then the handle costs what it did before
/// counting existed (see `weir_counts` for what counting costs).
/// `WEIR_ERR_NULL` for a NULL handle, `WEIR_ERR_MISALIGNED` for one no handle
/// can be at, `WEIR_ERR_POISONED` for a poisoned one.
#[no_mangle]
pub extern "C" fn weir_sliding_start_counting(sliding: *const weir_sliding) -> weir_status {
    start_counting(sliding)
}

/// Writes to `*out` what a sliding window decided since
/// `weir_sliding_start_counting`. A reading: it changes nothing. `admitted`:
/// takes that counted an event; `refused`: takes refused for want of room;
/// `errors`: 0 (no take has an invalid argument); `units`: equal to `admitted`.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_sliding_read_counts(
    sliding: *const weir_sliding,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(sliding, out)
}

#[cfg(all(test, target_pointer_width = "64", target_os = "linux"))]
mod tests {
    #[test]
    fn the_documented_handle_size_is_right() {
        assert_eq!(core::mem::size_of::<super::weir_sliding>(), 120);
    }
}
