//! C face of [`weir_core::shedder`].

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{decide, decide_status, read_counts, start_counting};
use crate::guard::{
    free_handle, guard_status, on, place_handle2, placement2, policy_or, reconfigure, status_on,
    usable, value_mut, write_footprint, write_out, Guarded, Handle,
};
use crate::lock::ShortLock;
#[cfg(feature = "std")]
use crate::region::{
    attach, lay_shared, plain_bytes, read_recoveries, region_footprint, run_fits, weir_recoveries,
    Layout, Repair, Shareable, WEIR_REGION_SHEDDER,
};
use crate::slots::Slots;
use crate::status::weir_status::{self, *};
use weir_core::shedder::{
    Criticality, Settled, Shedder, ShedderFront, ShedderPolicy, ShedderPolicyError, ShedderStats,
    ShedderTicket,
};
use weir_core::window::WindowTotal;

/// The shedder's policy (for `weir_shedder_new`): the constants of adaptive
/// load shedding. Start from `weir_shedder_policy_preset()` and change what you need; every field is checked when a shedder is made
/// from it. 48 bytes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct weir_shedder_policy {
    /// Buckets in the window; below one is raised to one, above 1048576 is
    /// `WEIR_ERR_SHEDDER_SIZE`.
    pub size: i32,
    /// CPU use in thousandths at or above which the server is hot; in
    /// [0, 1000).
    pub cpu: i32,
    /// How far back the window reaches; positive.
    pub window_ns: i64,
    /// Response time assumed while no complete bucket holds a pass; positive.
    pub latency_ns: i64,
    /// Weight of the old value in the moving average of calls in flight; in
    /// [0, 1).
    pub beta: f64,
    /// How long the server stays hot after the CPU falls, if the shedder has
    /// refused since; zero or more.
    pub cool_ns: i64,
    /// The least share of capacity admitted however hot the CPU; in (0, 1].
    pub floor: f64,
}

assert_eq_size!(weir_shedder_policy, [u8; 48]);
const_assert_eq!(core::mem::align_of::<weir_shedder_policy>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_shedder_policy, size), 0);
const_assert_eq!(core::mem::offset_of!(weir_shedder_policy, cpu), 4);
const_assert_eq!(core::mem::offset_of!(weir_shedder_policy, window_ns), 8);
const_assert_eq!(core::mem::offset_of!(weir_shedder_policy, latency_ns), 16);
const_assert_eq!(core::mem::offset_of!(weir_shedder_policy, beta), 24);
const_assert_eq!(core::mem::offset_of!(weir_shedder_policy, cool_ns), 32);
const_assert_eq!(core::mem::offset_of!(weir_shedder_policy, floor), 40);

impl From<ShedderPolicy> for weir_shedder_policy {
    fn from(shed: ShedderPolicy) -> weir_shedder_policy {
        weir_shedder_policy {
            size: shed.size,
            cpu: shed.cpu,
            window_ns: shed.window_ns,
            latency_ns: shed.latency_ns,
            beta: shed.beta,
            cool_ns: shed.cool_ns,
            floor: shed.floor,
        }
    }
}

impl From<weir_shedder_policy> for ShedderPolicy {
    fn from(shed: weir_shedder_policy) -> ShedderPolicy {
        ShedderPolicy {
            size: shed.size,
            cpu: shed.cpu,
            window_ns: shed.window_ns,
            latency_ns: shed.latency_ns,
            beta: shed.beta,
            cool_ns: shed.cool_ns,
            floor: shed.floor,
        }
    }
}

impl From<ShedderPolicyError> for weir_status {
    fn from(error: ShedderPolicyError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// The preset: 50 buckets over 5 s, hot at 900‰ CPU, 1 s assumed response
/// time, average weighted 0.9, 1 s to cool, never under 0.1 of capacity.
#[no_mangle]
pub extern "C" fn weir_shedder_policy_preset() -> weir_shedder_policy {
    ShedderPolicy::PRESET.into()
}

/// A call the shedder let through: a plain value the caller keeps (on its
/// stack, in its request struct) and hands back, by address, to
/// `weir_shedder_pass` or `weir_shedder_fail` of the same shedder exactly
/// once. `weir_shedder_allow` fills it in; the caller does not. Settle the
/// ticket itself, not a copy: each copy would settle on its own. Two threads
/// may settle one ticket at once (a completion racing a timeout): weir reads
/// and writes it under the shedder's lock, so one settles it and the other
/// gets `WEIR_ERR_SETTLED`. 16 bytes, aligned as an int64_t: a misaligned
/// ticket is refused (`WEIR_ERR_MISALIGNED`), never read or written.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_shedder_ticket {
    /// When the call started, on the caller's clock.
    pub start: i64,
    /// 1 while the call is in flight, 0 once settled (or refused).
    pub flying: i32,
    /// Always 0.
    pub reserved: i32,
}

assert_eq_size!(weir_shedder_ticket, [u8; 16]);
const_assert_eq!(core::mem::align_of::<weir_shedder_ticket>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_shedder_ticket, start), 0);
const_assert_eq!(core::mem::offset_of!(weir_shedder_ticket, flying), 8);
const_assert_eq!(core::mem::offset_of!(weir_shedder_ticket, reserved), 12);

impl From<ShedderTicket> for weir_shedder_ticket {
    fn from(ticket: ShedderTicket) -> weir_shedder_ticket {
        weir_shedder_ticket {
            start: ticket.start,
            flying: i32::from(ticket.open),
            reserved: 0,
        }
    }
}

/// What a shedder knows at a moment, for a dashboard. 40 bytes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct weir_shedder_stats {
    /// Calls in flight now.
    pub flying: i64,
    /// The moving average of calls in flight.
    pub average: f64,
    /// Calls the server has shown it can hold at once: the busiest complete
    /// bucket's passes per nanosecond times the fastest complete bucket's
    /// mean response time; at least 1.
    pub capacity: f64,
    /// `capacity` scaled by the last CPU reading: what both `flying` and
    /// `average` must exceed, while hot, for a refusal; at least 1.
    pub limit: f64,
    /// The last CPU reading, in thousandths, clamped into [0, 1000].
    pub cpu: i32,
    /// 1 if the shedder counts as hot, else 0.
    pub hot: i32,
}

assert_eq_size!(weir_shedder_stats, [u8; 40]);
const_assert_eq!(core::mem::align_of::<weir_shedder_stats>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_shedder_stats, flying), 0);
const_assert_eq!(core::mem::offset_of!(weir_shedder_stats, average), 8);
const_assert_eq!(core::mem::offset_of!(weir_shedder_stats, capacity), 16);
const_assert_eq!(core::mem::offset_of!(weir_shedder_stats, limit), 24);
const_assert_eq!(core::mem::offset_of!(weir_shedder_stats, cpu), 32);
const_assert_eq!(core::mem::offset_of!(weir_shedder_stats, hot), 36);

impl From<ShedderStats> for weir_shedder_stats {
    fn from(stats: ShedderStats) -> weir_shedder_stats {
        weir_shedder_stats {
            flying: stats.flying,
            average: stats.average,
            capacity: stats.capacity,
            limit: stats.limit,
            cpu: stats.cpu,
            hot: i32::from(stats.hot),
        }
    }
}

/// Adaptive load shedding: a call is refused only when the server is both
/// hot and full. Hot: the CPU the caller reads is at or over the threshold,
/// or was within `cool_ns` and the shedder has refused since. Full: both the
/// moving average and the current count of calls in flight exceed the limit
/// (see `weir_shedder_stats`): the busiest complete bucket's passes per
/// nanosecond times the fastest complete bucket's mean response time,
/// scaled by `(1000 - cpu) / (1000 - threshold)` held to [floor, 1], and
/// never under one call. The moving average moves on every completion (pass
/// or fail) with the count left in flight, starting from 0, so nothing is
/// refused before a call has completed; with no complete bucket holding a
/// pass the response time is the policy's `latency_ns`. Safe to share
/// between threads: each call takes a short per-handle lock, and a decision
/// never rescans the window: the busiest pass count and the fastest mean
/// response time are kept in two monotonic queues over the complete
/// buckets, so a decision's work is O(1) amortised at any bucket count.
/// Heap per handle: 48 bytes per bucket (the bucket and room for its entry
/// in each queue, reserved at construction) plus about 280 bytes (under
/// 3 KB at the preset). Made by `weir_shedder_new`, freed by
/// `weir_shedder_free`.
///
/// In the firmware build (docs/firmware.md) a shedder is placed only: on a
/// 32-bit core the preset needs 2616 bytes (48 per bucket plus 216). Its
/// updates hold the build's critical section (interrupts masked, with
/// `single-core`); the longest measured under QEMU: a call of 2531 instructions
/// on a Cortex-M4F, a section of 8658 on a Cortex-M0.
pub struct weir_shedder(Guarded<ShortLock<Held>>);

/// The shedder behind a handle, heap or placed.
type Held = Shedder<Slots<WindowTotal>, Slots<ShedderFront>>;

impl Handle for weir_shedder {
    type State = ShortLock<Held>;
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

/// Makes a shedder with an empty window opening at `now` and writes it to
/// `*out`. `policy` NULL means the preset. A bad policy gets a status naming
/// the field, the fields checked in this order (with several bad, the first
/// is named): `WEIR_ERR_SHEDDER_CPU`, `WEIR_ERR_SHEDDER_WINDOW`,
/// `WEIR_ERR_SHEDDER_LATENCY`, `WEIR_ERR_SHEDDER_BETA`, `WEIR_ERR_SHEDDER_FLOOR`,
/// `WEIR_ERR_SHEDDER_COOL`, `WEIR_ERR_SHEDDER_SIZE`. `WEIR_ERR_NO_MEMORY` if the
/// buckets cannot be allocated, `WEIR_ERR_NULL` if `out` is NULL; `*out` is
/// written only on success.
/// The policy is copied: the caller may change or free it after.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_shedder_new(
    policy: *const weir_shedder_policy,
    now: i64,
    out: *mut *mut weir_shedder,
) -> weir_status {
    new_handle(out, || {
        let shed = policy_or(policy, weir_shedder_policy_preset())?;
        let shedder = Shedder::new(shed.into(), now)?.map_store(Slots::heap, Slots::heap);
        Ok(weir_shedder(Guarded::new(ShortLock::new(shedder))))
    })
}

/// The caller's policy (or the preset for NULL), checked as
/// `weir_shedder_new` checks it, and how many buckets it keeps.
fn checked(policy: *const weir_shedder_policy) -> Result<(usize, ShedderPolicy), weir_status> {
    let shed = ShedderPolicy::from(policy_or(policy, weir_shedder_policy_preset())?).check()?;
    let size = i64::from(shed.size).max(1);
    if size > weir_core::window::MAX_SIZE {
        return Err(WEIR_ERR_SHEDDER_SIZE);
    }
    // 1 <= size <= MAX_SIZE.
    Ok((size as usize, shed))
}

/// The bytes and the alignment a placed shedder with this policy needs
/// (NULL: the preset), written to `*bytes` and `*align`: the handle, one
/// 16-byte bucket and one 32-byte queue slot per `size`. The policy is
/// checked as `weir_shedder_new` checks it, with its statuses
/// (`WEIR_ERR_SHEDDER_CPU`, `WEIR_ERR_SHEDDER_WINDOW`,
/// `WEIR_ERR_SHEDDER_LATENCY`, `WEIR_ERR_SHEDDER_BETA`,
/// `WEIR_ERR_SHEDDER_FLOOR`, `WEIR_ERR_SHEDDER_COOL`,
/// `WEIR_ERR_SHEDDER_SIZE`); `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a
/// bad `bytes` or `align` pointer. Nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_shedder_footprint(
    policy: *const weir_shedder_policy,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    guard_status(|| {
        let (size, _) = checked(policy)?;
        let (total, alignment, _, _) = placement2::<weir_shedder, WindowTotal, ShedderFront>(size)?;
        write_footprint((total, alignment), bytes, align)
    })
}

/// Lays a shedder in memory the caller owns and writes it to `*out`: the
/// shedder `weir_shedder_new` makes, taken by every `weir_shedder_*` call,
/// without a heap. `mem` holds `len` bytes, at least the footprint
/// `weir_shedder_footprint` answers for this policy, at a multiple of its
/// alignment. The memory stays the caller's: `weir_shedder_free` on a
/// placed shedder does nothing, and the memory may be reused once no call
/// uses it. Checked in this order, nothing written on an error: `out`
/// (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), the policy (the statuses of
/// `weir_shedder_footprint`), then `mem` NULL (`WEIR_ERR_NULL`), `mem`
/// misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len` below the footprint
/// (`WEIR_ERR_PLACED_TOO_SMALL`).
#[no_mangle]
pub extern "C" fn weir_shedder_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    policy: *const weir_shedder_policy,
    now: i64,
    out: *mut *mut weir_shedder,
) -> weir_status {
    place_handle2(
        mem,
        len,
        out,
        (WindowTotal::default(), ShedderFront::default()),
        || checked(policy),
        |shed, buckets, fronts| {
            let shedder =
                Shedder::new_in(shed, Slots::placed(buckets), Slots::placed(fronts), now)?;
            Ok(weir_shedder(Guarded::new(ShortLock::new(shedder))))
        },
    )
}

#[cfg(feature = "std")]
impl Repair for Held {
    /// Keeps a shedder whose queues and counts hold together
    /// (`Shedder::consistent`), resets one that does not.
    fn repair(&mut self) -> bool {
        if self.consistent() {
            return true;
        }
        self.reset();
        false
    }
}

#[cfg(feature = "std")]
impl Shareable for weir_shedder {
    const KIND: u32 = WEIR_REGION_SHEDDER;
    const LOCKED: bool = true;

    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        if slots == 0 || slots as u64 > weir_core::window::MAX_SIZE as u64 {
            return Err(WEIR_ERR_SHEDDER_SIZE);
        }
        let (bytes, align, first, second) =
            placement2::<weir_shedder, WindowTotal, ShedderFront>(slots)?;
        Ok(Layout {
            bytes,
            align,
            runs: [first, second],
        })
    }

    fn slots(&self) -> usize {
        // SAFETY: read by the laying call, before the handle is handed
        // out: no other reference to the value is in use.
        unsafe { &*self.0.state().peek() }.stores().0.as_ref().len()
    }

    fn share(&mut self) {
        let lock = self.0.state_mut();
        let (buckets, fronts) = lock.owned().stores_mut();
        buckets.make_relative();
        fronts.make_relative();
    }

    fn fits(&self, layout: &Layout, slots: usize) -> bool {
        let lock = self.0.state();
        // SAFETY: the stores' places and lengths are integers written when
        // the handle was laid and never changed after; the attach reads
        // them, and the lock's flag, and nothing else.
        let (buckets, fronts) = unsafe { &*lock.peek() }.stores();
        let at = self as *const weir_shedder as usize;
        run_fits(
            buckets.relative(),
            (buckets as *const Slots<WindowTotal>).cast(),
            at.wrapping_add(layout.runs[0]),
            slots,
        ) && run_fits(
            fronts.relative(),
            (fronts as *const Slots<ShedderFront>).cast(),
            at.wrapping_add(layout.runs[1]),
            slots,
        )
    }
}

/// The bytes and the alignment a shared shedder with this policy needs
/// (NULL: the preset), for `weir_shedder_init_shared`: a 256-byte
/// `weir_region_header` and the region's 64-byte lock, then the placed shedder
/// (`weir_shedder_footprint`); 64-aligned. Checked and answered as
/// `weir_shedder_footprint`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_shedder_shared_footprint(
    policy: *const weir_shedder_policy,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    guard_status(|| {
        let (size, _) = checked(policy)?;
        let layout = weir_shedder::layout_for(size)?;
        write_footprint(region_footprint(&layout)?, bytes, align)
    })
}

/// Lays a shedder that processes share in `mem`, memory the caller maps
/// `MAP_SHARED`, and writes it to `*out` for this process: a
/// `weir_region_header` (its kind WEIR_REGION_SHEDDER, the policy), then
/// the shedder `weir_shedder_init_in` would lay, its slots found from the
/// region and its lock a robust, process-shared mutex. Another process gets
/// its own `weir_shedder *` from `weir_shedder_attach`; every
/// `weir_shedder_*` call then works on the one shedder, so it sees every
/// process's calls in flight and latencies together (a ticket settles in
/// any process). Lay it once, before any process attaches.
///
/// A process killed while it holds the lock leaves it to the next caller,
/// which checks the shedder's queues and counts: kept as the dead call left
/// it if they hold together (that call's one update may be half made),
/// reset otherwise to an empty window at the latest `now` it saw, with no
/// call in flight (calls settled later do not count below zero). That call
/// answers `WEIR_ERR_REGION_RECOVERED` (`weir_shedder_allow` refuses
/// instead) and does nothing else; `weir_shedder_recoveries` counts both
/// outcomes. A process killed outside the lock leaves its calls in flight
/// unsettled: they count in `weir_shedder_flying` until a reset.
/// Checked as `weir_breaker_init_shared` checks its region, the policy as
/// `weir_shedder_new` checks it.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_shedder_init_shared(
    mem: *mut core::ffi::c_void,
    len: usize,
    policy: *const weir_shedder_policy,
    now: i64,
    out: *mut *mut weir_shedder,
) -> weir_status {
    let shed = match policy_or(policy, weir_shedder_policy_preset()) {
        Ok(shed) => shed,
        Err(status) => return status,
    };
    lay_shared(mem, len, out, plain_bytes(&shed), |at, room, placed| {
        weir_shedder_init_in(at, room, &shed, now, placed)
    })
}

/// Checks the region at `mem` that `weir_shedder_init_shared` laid and
/// writes its shedder, for this process, to `*out`: refused with the
/// statuses `weir_breaker_attach` lists, nothing written.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_shedder_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_shedder,
) -> weir_status {
    attach(mem, len, out)
}

/// Writes what a shared shedder's lock has recovered from (see
/// `weir_shedder_init_shared`) to `*out`; all zero for a shedder that is
/// not shared. `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`, `WEIR_ERR_POISONED`.
/// A reading: it changes nothing.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_shedder_recoveries(
    shedder: *const weir_shedder,
    out: *mut weir_recoveries,
) -> weir_status {
    guard_status(|| read_recoveries(shedder, out))
}

/// Gives a shedder a new policy in place (NULL: the preset), checked as
/// `weir_shedder_new` checks it. It keeps its calls in flight (their tickets
/// settle as before), the moving average of calls in flight (the new `beta`
/// weighs it from the next completion), its last CPU reading, when the CPU
/// was last at or over the threshold and whether it has refused since
/// (judged from then on by the new `cpu` and `cool_ns`), and its clock. A
/// classed call (`weir_shedder_allow_class`) is judged by the same shares
/// of the new limit and threshold. Its measured capacity: kept, window and
/// queues, when the buckets keep their layout (the same `size` and
/// `window_ns / size`), read again under the new `latency_ns` from the next
/// call; otherwise the window opens empty at the latest `now` the shedder
/// has seen (passes per bucket mean nothing at another width), and the
/// capacity is the new policy's before a complete bucket holds a pass,
/// exactly a new shedder's. From the change on, a call is refused exactly
/// when a shedder of the new policy holding that state would refuse it.
///
/// Memory: a heap shedder of another `size` allocates its new buckets and
/// queues before it lets go of the old; a placed shedder keeps the size its
/// memory holds (a smaller `size` is held to it, as `weir_shedder_init_in`
/// holds a window to its memory) and answers `WEIR_ERR_PLACED_TOO_SMALL` for
/// a larger one.
///
/// Safe beside the shedder's other calls (not `weir_shedder_free`): it takes
/// the shedder's own lock, as they do, so a call racing it is judged by the
/// old policy or the new one, wholly. A shared shedder
/// (`weir_shedder_init_shared`) keeps its region's policy, laid once for
/// every process: `WEIR_ERR_REGION_UNSUPPORTED`. Checked in this order,
/// nothing changed on an error: `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for
/// a bad `shedder`, `WEIR_ERR_REGION_UNSUPPORTED`, `WEIR_ERR_POISONED`, the
/// policy's statuses as `weir_shedder_new` answers them,
/// `WEIR_ERR_PLACED_TOO_SMALL`, `WEIR_ERR_NO_MEMORY`. It counts nothing.
#[no_mangle]
pub extern "C" fn weir_shedder_reconfigure(
    shedder: *mut weir_shedder,
    policy: *const weir_shedder_policy,
) -> weir_status {
    reconfigure(shedder, |state| {
        let (size, shed) = checked(policy)?;
        let mut shedder = state.lock();
        let held = shedder.policy().size as usize;
        let placed = shedder.stores().0.is_placed();
        if size == held || (placed && size < held) {
            return Ok(shedder.reconfigure(shed)?);
        }
        if placed {
            return Err(WEIR_ERR_PLACED_TOO_SMALL);
        }
        let buckets = Slots::grown(size, WindowTotal::default())?;
        let fronts = Slots::grown(size, ShedderFront::default())?;
        *shedder = shedder.reconfigure_into(shed, buckets, fronts)?;
        Ok(())
    })
}

/// Frees a shedder. NULL is accepted and ignored, and so is a placed one
/// (`weir_shedder_init_in`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_shedder_free(shedder: *mut weir_shedder) {
    free_handle(shedder)
}

/// Asks to start one call at `now`, with the CPU at `cpu_permille`
/// thousandths (values outside [0, 1000] are clamped into it). True: go
/// ahead; `*ticket` now holds the call, to be settled once with
/// `weir_shedder_pass` or `weir_shedder_fail`. False: refused, and `*ticket`
/// is written as already settled. False, changing nothing, for a NULL
/// shedder or a NULL or misaligned `ticket`.
#[no_mangle]
pub extern "C" fn weir_shedder_allow(
    shedder: *const weir_shedder,
    now: i64,
    cpu_permille: i32,
    ticket: *mut weir_shedder_ticket,
) -> bool {
    let counted = move |_: &_, &admitted: &bool| match usable(ticket) {
        Ok(()) => Tally::of(admitted),
        Err(_) => Tally::Error,
    };
    decide(shedder, false, counted, move |state| {
        if usable(ticket).is_err() {
            return false;
        }
        let mut shedder = state.lock();
        let issued = shedder.allow(now, cpu_permille);
        let written = issued.unwrap_or(ShedderTicket {
            start: now,
            open: false,
        });
        write_out(ticket, written.into()).is_ok() && issued.is_some()
    })
}

/// A call's class for `weir_shedder_allow_class`: the default, decided
/// exactly as `weir_shedder_allow` decides. 0, so a zeroed field is it.
pub const WEIR_SHEDDER_CRITICAL: i32 = 0;
/// A call's class: refused last, only with the CPU at or over the threshold
/// now and the load over the limit by a quarter (health checks, control).
pub const WEIR_SHEDDER_CRITICAL_PLUS: i32 = 1;
/// A call's class: refused from three quarters of the CPU threshold and of
/// the limit (work a user waits for but can retry).
pub const WEIR_SHEDDER_SHEDDABLE_PLUS: i32 = 2;
/// A call's class: refused first, from half the CPU threshold and half the
/// limit (prefetch, batch, anything that can wait).
pub const WEIR_SHEDDER_SHEDDABLE: i32 = 3;

/// The core class named by a `WEIR_SHEDDER_*` class constant.
fn criticality(class: i32) -> Option<Criticality> {
    match class {
        WEIR_SHEDDER_CRITICAL => Some(Criticality::Critical),
        WEIR_SHEDDER_CRITICAL_PLUS => Some(Criticality::CriticalPlus),
        WEIR_SHEDDER_SHEDDABLE_PLUS => Some(Criticality::SheddablePlus),
        WEIR_SHEDDER_SHEDDABLE => Some(Criticality::Sheddable),
        _ => None,
    }
}

/// Asks to start one call of class `criticality` (a `WEIR_SHEDDER_*` class
/// constant) at `now`, with the CPU at `cpu_permille` thousandths (clamped
/// into [0, 1000]). With `L` the limit (`weir_shedder_stats.limit` at this
/// CPU), `t` the policy's CPU threshold, `hot` as for `weir_shedder`, and
/// "over x" meaning both the moving average and the count in flight exceed
/// x, a call is refused when:
///
///   CRITICAL_PLUS   cpu >= t (now, not merely cooling)  and over L * 5/4
///   CRITICAL        hot                                 and over L
///   SHEDDABLE_PLUS  hot or cpu >= floor(t * 3/4)        and over L * 3/4
///   SHEDDABLE       hot or cpu >= floor(t / 2)          and over L / 2
///
/// So at any one moment a class is never refused while a lower class would
/// be admitted. `WEIR_SHEDDER_CRITICAL` decides and changes the shedder
/// exactly as `weir_shedder_allow`. An admitted call of any class changes
/// it as an admitted CRITICAL call; a refused CRITICAL_PLUS call as a
/// refused CRITICAL one; a refused sheddable call does not count as a
/// refusal for cooling, so it never keeps CRITICAL calls hot.
///
/// `WEIR_OK`: decided, and `ticket->flying` says how: 1, go ahead (settle
/// the ticket once with `weir_shedder_pass` or `weir_shedder_fail`); 0,
/// refused, the ticket written as already settled.
/// `WEIR_ERR_SHEDDER_CLASS` if `criticality` names no class,
/// `WEIR_ERR_NULL` if `shedder` or `ticket` is NULL, `WEIR_ERR_MISALIGNED`
/// if `ticket` is misaligned; each changes nothing and writes nothing.
#[no_mangle]
pub extern "C" fn weir_shedder_allow_class(
    shedder: *const weir_shedder,
    now: i64,
    cpu_permille: i32,
    criticality: i32,
    ticket: *mut weir_shedder_ticket,
) -> weir_status {
    // A counting shedder counts a decision as `weir_shedder_allow` does,
    // and an error status as an error.
    let admitted = core::cell::Cell::new(false);
    let counted = |status| match status {
        WEIR_OK => Tally::of(admitted.get()),
        _ => Tally::Error,
    };
    decide_status(shedder, counted, |state| {
        usable(ticket)?;
        let class = self::criticality(criticality).ok_or(WEIR_ERR_SHEDDER_CLASS)?;
        let issued = state.lock().allow_class(now, cpu_permille, class);
        admitted.set(issued.is_some());
        let written = issued.unwrap_or(ShedderTicket {
            start: now,
            open: false,
        });
        write_out(ticket, written.into())
    })
}

/// Settles the call behind `*ticket` with `settle`, after checking the
/// ticket, and writes it back as settled. The ticket is read and written
/// under the shedder's lock, so two threads settling one ticket at once
/// (a completion racing a timeout) settle it once between them.
fn settle(
    shedder: *const weir_shedder,
    ticket: *mut weir_shedder_ticket,
    settle: impl FnOnce(&mut Held, &mut ShedderTicket) -> Result<(), Settled>,
) -> weir_status {
    decide_status(shedder, Tally::errors, move |state| {
        let mut shedder = state.lock();
        let held = value_mut(ticket)?;
        let mut open = match held.flying {
            0 => return Err(WEIR_ERR_SETTLED),
            1 => ShedderTicket {
                start: held.start,
                open: true,
            },
            _ => return Err(WEIR_ERR_INVALID_ARGUMENT),
        };
        settle(&mut shedder, &mut open).map_err(|settled| weir_status::of(settled.code()))?;
        *held = open.into();
        Ok(())
    })
}

/// The call behind `*ticket` succeeded at `now`: it leaves flight, and its
/// response time and its pass count towards capacity. `WEIR_ERR_SETTLED`,
/// changing nothing, if the ticket was already settled (or refused);
/// `WEIR_ERR_INVALID_ARGUMENT` if its `flying` is neither 0 nor 1;
/// `WEIR_ERR_NULL` if `shedder` or `ticket` is NULL; `WEIR_ERR_MISALIGNED`,
/// changing nothing, if `ticket` is misaligned.
#[no_mangle]
pub extern "C" fn weir_shedder_pass(
    shedder: *const weir_shedder,
    ticket: *mut weir_shedder_ticket,
    now: i64,
) -> weir_status {
    settle(shedder, ticket, |shedder, ticket| shedder.pass(ticket, now))
}

/// The call behind `*ticket` failed: it leaves flight but feeds neither the
/// pass count nor the response times. Statuses as for `weir_shedder_pass`.
#[no_mangle]
pub extern "C" fn weir_shedder_fail(
    shedder: *const weir_shedder,
    ticket: *mut weir_shedder_ticket,
) -> weir_status {
    settle(shedder, ticket, Shedder::fail)
}

/// How many calls are in flight; 0 for a NULL shedder.
#[no_mangle]
pub extern "C" fn weir_shedder_flying(shedder: *const weir_shedder) -> i64 {
    on(shedder, 0, |state| state.lock().flying())
}

/// Writes what the shedder knows at `now` to `*out`. A reading: it changes
/// nothing, at any `now` (an earlier one than seen counts as the latest),
/// so no later decision depends on whether or when it was asked.
/// `WEIR_ERR_NULL` if `shedder` or `out` is NULL, `WEIR_ERR_MISALIGNED` if
/// `out` is misaligned.
#[no_mangle]
pub extern "C" fn weir_shedder_read_stats(
    shedder: *const weir_shedder,
    now: i64,
    out: *mut weir_shedder_stats,
) -> weir_status {
    status_on(shedder, |state| {
        let stats = state.lock().stats(now);
        write_out(out, stats.into())
    })
}

/// Turns counting on for a shedder: from this call on,
/// `weir_shedder_read_counts` reports what it decided. Call it right after
/// `weir_shedder_new` to count everything since the handle was made; a second
/// call changes nothing. Until then the handle costs what it did before
/// counting existed (see `weir_counts` for what counting costs).
/// `WEIR_ERR_NULL` for a NULL handle, `WEIR_ERR_MISALIGNED` for one no handle
/// can be at, `WEIR_ERR_POISONED` for a poisoned one.
#[no_mangle]
pub extern "C" fn weir_shedder_start_counting(shedder: *const weir_shedder) -> weir_status {
    start_counting(shedder)
}

/// Writes to `*out` what a shedder decided since `weir_shedder_start_counting`.
/// A reading: it changes nothing. `admitted`: allows answered true (or, for
/// `weir_shedder_allow_class`, `WEIR_OK` with a ticket in flight); `refused`:
/// allows answered false (shed); `errors`: allows given a NULL or misaligned
/// ticket, classed allows that answered an error, and passes and fails that
/// answered an error; `units`: equal to `admitted`. The load behind the answers is in `weir_shedder_read_stats`.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_shedder_read_counts(
    shedder: *const weir_shedder,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(shedder, out)
}
