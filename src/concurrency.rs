//! C face of [`weir_core::concurrency`].

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::counts::{weir_counts, Tally};
use crate::guard::{
    decide, decide_status, decide_status_counted, decide_status_or, read_counts, start_counting,
};
use crate::guard::{
    free_handle, on, place_plain, plain_footprint, policy_or, reconfigure, usable, value_mut,
    write_out, Guarded, Handle,
};
#[cfg(feature = "std")]
use crate::guard::{new_handle, slice_in};
use crate::lock::ShortLock;
#[cfg(feature = "std")]
use crate::region::{
    attach, lay_shared, plain_bytes, read_recoveries, region_footprint, weir_recoveries, Layout,
    Repair, Shareable, WEIR_REGION_CONCURRENCY,
};
use crate::status::weir_status::{self, *};
use weir_core::concurrency::{Concurrency, ConcurrencyError, ConcurrencyPolicy, ConcurrencyTicket};
#[cfg(feature = "std")]
use weir_core::partitioned::Partition;
use weir_core::partitioned::{PartitionError, Partitioned, MAX_PARTITIONS};

/// The largest `max_limit` a `weir_concurrency_policy` may have: 2^20 calls in flight.
pub const WEIR_CONCURRENCY_MAX_LIMIT: i32 = 1 << 20;
const_assert_eq!(
    WEIR_CONCURRENCY_MAX_LIMIT,
    weir_core::concurrency::MAX_LIMIT
);

/// The constants of the adaptive limit's controller (Gradient2; see
/// `weir_concurrency`). Start from `weir_concurrency_policy_preset()` and change what
/// you need; every field is checked when a limit is made from it. 40
/// bytes, aligned as an int64_t.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct weir_concurrency_policy {
    /// The limit before any sample; in [min_limit, max_limit].
    pub initial_limit: i32,
    /// The floor of the limit; at least 1.
    pub min_limit: i32,
    /// The ceiling of the limit; at most WEIR_CONCURRENCY_MAX_LIMIT.
    pub max_limit: i32,
    /// How much the limit may grow a sample while latency holds; in
    /// [0, max_limit].
    pub queue_size: i32,
    /// How far a sample moves the limit toward its new value; in (0, 1].
    pub smoothing: f64,
    /// How much latency may grow before the limit falls; finite, at least 1
    /// (1 is today's upstream Gradient2).
    pub tolerance: f64,
    /// The long-term latency average's window, in samples; at least 1.
    pub long_window: i32,
    /// Samples averaged plainly before the exponential average starts; at
    /// least 1.
    pub warmup: i32,
}

assert_eq_size!(weir_concurrency_policy, [u8; 40]);
const_assert_eq!(core::mem::align_of::<weir_concurrency_policy>(), 8);
const_assert_eq!(
    core::mem::offset_of!(weir_concurrency_policy, initial_limit),
    0
);
const_assert_eq!(core::mem::offset_of!(weir_concurrency_policy, min_limit), 4);
const_assert_eq!(core::mem::offset_of!(weir_concurrency_policy, max_limit), 8);
const_assert_eq!(
    core::mem::offset_of!(weir_concurrency_policy, queue_size),
    12
);
const_assert_eq!(
    core::mem::offset_of!(weir_concurrency_policy, smoothing),
    16
);
const_assert_eq!(
    core::mem::offset_of!(weir_concurrency_policy, tolerance),
    24
);
const_assert_eq!(
    core::mem::offset_of!(weir_concurrency_policy, long_window),
    32
);
const_assert_eq!(core::mem::offset_of!(weir_concurrency_policy, warmup), 36);

impl From<ConcurrencyPolicy> for weir_concurrency_policy {
    fn from(g: ConcurrencyPolicy) -> weir_concurrency_policy {
        weir_concurrency_policy {
            initial_limit: g.initial_limit,
            min_limit: g.min_limit,
            max_limit: g.max_limit,
            queue_size: g.queue_size,
            smoothing: g.smoothing,
            tolerance: g.tolerance,
            long_window: g.long_window,
            warmup: g.warmup,
        }
    }
}

impl From<weir_concurrency_policy> for ConcurrencyPolicy {
    fn from(g: weir_concurrency_policy) -> ConcurrencyPolicy {
        ConcurrencyPolicy {
            initial_limit: g.initial_limit,
            min_limit: g.min_limit,
            max_limit: g.max_limit,
            queue_size: g.queue_size,
            smoothing: g.smoothing,
            tolerance: g.tolerance,
            long_window: g.long_window,
            warmup: g.warmup,
        }
    }
}

impl From<ConcurrencyError> for weir_status {
    fn from(error: ConcurrencyError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// The preset: Gradient2's defaults (limit 20 in [20, 200], queue 4,
/// smoothing 0.2, a 600-sample long window after 10 warm-up samples) with
/// the older Gradient2's tolerance of 1.5.
#[no_mangle]
pub extern "C" fn weir_concurrency_policy_preset() -> weir_concurrency_policy {
    ConcurrencyPolicy::PRESET.into()
}

/// A call the adaptive limit let in: a plain value the caller keeps and
/// hands back, by address, to `weir_concurrency_leave` of the same limit
/// exactly once. `weir_concurrency_enter` fills it in. Read and written
/// under the limit's lock, so two threads leaving with one ticket at once
/// leave once between them. 16 bytes, aligned as an int64_t: a misaligned
/// one is refused, never read or written.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_concurrency_ticket {
    /// When the call entered, on the caller's clock.
    pub start: i64,
    /// Calls in flight when it entered, itself included.
    pub inflight: i32,
    /// 1 while in flight, 0 once left (or refused).
    pub flying: i32,
}

assert_eq_size!(weir_concurrency_ticket, [u8; 16]);
const_assert_eq!(core::mem::align_of::<weir_concurrency_ticket>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_concurrency_ticket, start), 0);
const_assert_eq!(core::mem::offset_of!(weir_concurrency_ticket, inflight), 8);
const_assert_eq!(core::mem::offset_of!(weir_concurrency_ticket, flying), 12);

/// An adaptive concurrency limit: a gate whose ceiling follows the latency
/// it measures, with Netflix concurrency-limits' Gradient2 controller. A
/// call enters while fewer than `⌊limit⌋` are in flight. On each leave, with
/// `rtt = now − start` (at least 1 ns) and `inflight` as it entered:
///
///   longRtt = mean of the first `warmup` rtts, then
///             longRtt × (1 − 2/(long_window+1)) + rtt × 2/(long_window+1)
///   if longRtt / rtt > 2: longRtt ×= 0.9
///   if inflight < limit / 2: no change (the caller is not using the room)
///   gradient = max(0.5, min(1, tolerance × longRtt / rtt))
///   limit    = limit × (1 − smoothing)
///            + (limit × gradient + queue_size) × smoothing,
///              held to [min_limit, max_limit]
///
/// So under steady latency the limit climbs by up to `queue_size ×
/// smoothing` a sample to `max_limit`; when queueing raises latency past
/// `tolerance` times the long average it falls, at most halving each
/// sample's target; held long enough, a higher latency becomes the new
/// baseline (Gradient2's design). A dropped call is a sample like any other,
/// as upstream takes it. A `now` before `start` is a 1 ns sample. Safe to
/// share between threads: each call takes a short per-handle lock, so the
/// calls in flight never exceed the limit at the moment each entered. Heap
/// per handle: about 930 bytes. Made by `weir_concurrency_new`, freed by
/// `weir_concurrency_free`.
///
/// In the firmware build (docs/firmware.md) a concurrency is placed only: on a
/// 32-bit core 912 bytes. Its updates hold the build's critical section
/// (interrupts masked, with `single-core`); the longest measured under QEMU: a
/// call of 1274 instructions on a Cortex-M4F, a section of 4190 on a Cortex-M0.
pub struct weir_concurrency(Guarded<ShortLock<Partitioned>>);

impl Handle for weir_concurrency {
    type State = ShortLock<Partitioned>;
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

/// Makes an adaptive limit at `initial_limit` with nothing in flight and
/// writes it to `*out`. `policy` NULL means the preset. A bad policy gets its
/// own status: `WEIR_ERR_CONCURRENCY_LIMITS`, `WEIR_ERR_CONCURRENCY_QUEUE`,
/// `WEIR_ERR_CONCURRENCY_SMOOTHING`, `WEIR_ERR_CONCURRENCY_TOLERANCE`,
/// `WEIR_ERR_CONCURRENCY_WINDOW` (checked in that order); `WEIR_ERR_MISALIGNED`
/// for a misaligned policy. `WEIR_ERR_NULL` if `out` is NULL; `*out` is
/// written only on success.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_concurrency_new(
    policy: *const weir_concurrency_policy,
    out: *mut *mut weir_concurrency,
) -> weir_status {
    new_handle(out, || make(policy))
}

/// The handle `weir_concurrency_new` and `weir_concurrency_init_in` make.
fn make(policy: *const weir_concurrency_policy) -> Result<weir_concurrency, weir_status> {
    let gradient = policy_or(policy, weir_concurrency_policy_preset())?;
    let limit = Concurrency::new(gradient.into())?;
    Ok(weir_concurrency(Guarded::new(ShortLock::new(limit.into()))))
}

/// The bytes and the alignment a placed adaptive limit needs (`weir_concurrency_init_in`),
/// written to `*bytes` and `*align`: its handle and nothing more.
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align`
/// pointer; nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_concurrency_footprint(bytes: *mut usize, align: *mut usize) -> weir_status {
    plain_footprint::<weir_concurrency>(bytes, align)
}

/// Lays a adaptive limit in memory the caller owns (a static array, a field of its
/// own struct) and writes it to `*out`: the adaptive limit `weir_concurrency_new` makes from `policy` (NULL: the preset),
/// taken by every `weir_concurrency_*` call, without a heap. `mem` holds `len`
/// bytes, at least the footprint `weir_concurrency_footprint` answers, at a
/// multiple of its alignment. The memory stays the caller's:
/// `weir_concurrency_free` on a placed adaptive limit does nothing, and the memory may be
/// reused once no call uses it. Checked in this order, nothing written on
/// an error: `out` (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), the arguments
/// (`WEIR_ERR_CONCURRENCY_LIMITS`, `WEIR_ERR_CONCURRENCY_QUEUE`,
/// `WEIR_ERR_CONCURRENCY_SMOOTHING`, `WEIR_ERR_CONCURRENCY_TOLERANCE`,
/// `WEIR_ERR_CONCURRENCY_WINDOW`, and
/// `WEIR_ERR_MISALIGNED` for a misaligned policy, as `weir_concurrency_new` answers them), then `mem` NULL
/// (`WEIR_ERR_NULL`), `mem` misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len`
/// below the footprint (`WEIR_ERR_PLACED_TOO_SMALL`).
#[no_mangle]
pub extern "C" fn weir_concurrency_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    policy: *const weir_concurrency_policy,
    out: *mut *mut weir_concurrency,
) -> weir_status {
    place_plain(mem, len, out, || make(policy))
}

#[cfg(feature = "std")]
impl Repair for Partitioned {
    /// Keeps the state as the dead call left it: a half-made enter or leave is at most that call's one count or sample, and the limit's estimates stay finite numbers.
    fn repair(&mut self) -> bool {
        true
    }
}

#[cfg(feature = "std")]
impl Shareable for weir_concurrency {
    const KIND: u32 = WEIR_REGION_CONCURRENCY;
    const LOCKED: bool = true;

    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        if slots != 0 {
            return Err(WEIR_ERR_INVALID_ARGUMENT);
        }
        Ok(Layout {
            bytes: core::mem::size_of::<weir_concurrency>(),
            align: core::mem::align_of::<weir_concurrency>(),
            runs: [0, 0],
        })
    }

    fn slots(&self) -> usize {
        0
    }

    fn fits(&self, _: &Layout, _: usize) -> bool {
        true
    }
}

/// The bytes and the alignment a shared adaptive limit needs
/// (`weir_concurrency_init_shared`), written to `*bytes` and `*align`: a
/// 256-byte `weir_region_header` and the region's 64-byte lock, then the placed adaptive limit
/// (`weir_concurrency_footprint`); 64-aligned. Checked and answered as
/// `weir_concurrency_footprint`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_concurrency_shared_footprint(
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    crate::guard::guard_status(|| {
        let layout = weir_concurrency::layout_for(0)?;
        crate::guard::write_footprint(region_footprint(&layout)?, bytes, align)
    })
}

/// Lays a adaptive limit that processes share in `mem`, memory the caller maps
/// `MAP_SHARED`, and writes it to `*out` for this process: a
/// `weir_region_header` (its kind WEIR_REGION_CONCURRENCY; its policy the `weir_concurrency_policy`),
/// then the adaptive limit `weir_concurrency_init_in` would lay, its lock a robust,
/// process-shared mutex. Another process gets its own `weir_concurrency *` from
/// `weir_concurrency_attach`; every `weir_concurrency_*` call then works on the one
/// adaptive limit. A process killed holding the lock leaves the adaptive limit as its
/// call left it (at most that call's one enter or leave counted or not; a process killed between its enter and its leave keeps its place in flight); the next call answers as a recovered call
/// does (see `weir_breaker_init_shared`) and `weir_concurrency_recoveries`
/// counts it. Lay it once, before any process attaches. Checked as
/// `weir_breaker_init_shared` checks its region (`WEIR_ERR_NULL`,
/// `WEIR_ERR_PLACED_MISALIGNED`, `WEIR_ERR_REGION_UNSUPPORTED`,
/// `WEIR_ERR_PLACED_TOO_SMALL`), the arguments as `weir_concurrency_init_in`
/// checks them.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_concurrency_init_shared(
    mem: *mut core::ffi::c_void,
    len: usize,
    policy: *const weir_concurrency_policy,
    out: *mut *mut weir_concurrency,
) -> weir_status {
    let gradient = match policy_or(policy, weir_concurrency_policy_preset()) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let policy = plain_bytes(&gradient).to_vec();
    lay_shared(mem, len, out, &policy, |at, room, placed| {
        weir_concurrency_init_in(at, room, &gradient, placed)
    })
}

/// Checks the region at `mem` that `weir_concurrency_init_shared` laid and
/// writes its adaptive limit, for this process, to `*out`: refused with the
/// statuses `weir_breaker_attach` lists, nothing written.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_concurrency_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_concurrency,
) -> weir_status {
    attach(mem, len, out)
}

/// Writes what a shared adaptive limit's lock has recovered from (see
/// `weir_concurrency_init_shared`) to `*out`; all zero for one that is not
/// shared. `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`, `WEIR_ERR_POISONED`. A
/// reading: it changes nothing.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_concurrency_recoveries(
    handle: *const weir_concurrency,
    out: *mut weir_recoveries,
) -> weir_status {
    crate::guard::guard_status(|| read_recoveries(handle, out))
}

/// Gives an adaptive limit a new policy in place (NULL: the preset), checked
/// as `weir_concurrency_new` checks it. It keeps the limit the controller
/// has reached, held to the new `min_limit` to `max_limit` (`initial_limit`
/// is where a new limit starts; this one has started), the calls in flight
/// (their tickets leave as before; calls beyond a lower limit stay, and
/// none enters until enough have left), the latency averages and the count
/// of warm-up samples (a longer warm-up goes on averaging plainly from the
/// samples it has), which the new constants move from the next sample. A
/// partitioned limit (`weir_concurrency_new_partitioned`) keeps its
/// partitions, their shares, borrowing caps, calls in flight and claims:
/// their rooms follow the kept limit. So from the change on a call enters
/// only while fewer than `⌊limit⌋ ≤ max_limit'` are in flight, and the calls
/// in flight never exceed the larger of their count at the change and the
/// new `max_limit`.
///
/// Safe beside the limit's other calls (not `weir_concurrency_free`): it
/// takes the limit's own lock, as they do, so a call racing it is judged by
/// the old policy or the new one, wholly. A shared limit
/// (`weir_concurrency_init_shared`) keeps its region's policy, laid once for
/// every process: `WEIR_ERR_REGION_UNSUPPORTED`. Checked in this order,
/// nothing changed on an error: `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for
/// a bad `limit`, `WEIR_ERR_REGION_UNSUPPORTED`, `WEIR_ERR_POISONED`, then
/// the policy's statuses as `weir_concurrency_new` answers them. It counts
/// nothing.
#[no_mangle]
pub extern "C" fn weir_concurrency_reconfigure(
    limit: *mut weir_concurrency,
    policy: *const weir_concurrency_policy,
) -> weir_status {
    reconfigure(limit, |state| {
        let gradient = policy_or(policy, weir_concurrency_policy_preset())?;
        Ok(state.lock().reconfigure(gradient.into())?)
    })
}

/// Frees an adaptive limit. NULL is accepted and ignored, and so is a placed one
/// (`weir_concurrency_init_in`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_concurrency_free(limit: *mut weir_concurrency) {
    free_handle(limit)
}

/// Asks to start one call at `now`. True: go ahead; `*ticket` holds the
/// call, to be given back once to `weir_concurrency_leave`. False: the
/// limit is full, and `*ticket` is written as already left. False, changing
/// nothing, for a NULL limit or a NULL or misaligned `ticket`.
#[no_mangle]
pub extern "C" fn weir_concurrency_enter(
    limit: *const weir_concurrency,
    now: i64,
    ticket: *mut weir_concurrency_ticket,
) -> bool {
    let counted = move |_: &_, &admitted: &bool| match usable(ticket) {
        Ok(()) => Tally::of(admitted),
        Err(_) => Tally::Error,
    };
    decide(limit, false, counted, move |state| {
        if usable(ticket).is_err() {
            return false;
        }
        let entered = state.lock().enter(now);
        let written = match entered {
            Some(entry) => weir_concurrency_ticket {
                start: entry.start,
                inflight: i32::try_from(entry.inflight).unwrap_or(i32::MAX),
                flying: 1,
            },
            None => weir_concurrency_ticket {
                start: now,
                inflight: 0,
                flying: 0,
            },
        };
        write_out(ticket, written).is_ok() && entered.is_some()
    })
}

/// The call behind `*ticket` ended at `now`; `dropped` says it timed out or
/// was refused downstream rather than answered (a sample all the same, see
/// `weir_concurrency`). It leaves flight, its latency moves the limit, and
/// `*ticket` is written as left. `WEIR_ERR_SETTLED`, changing nothing, if
/// it already left (or was refused); `WEIR_ERR_INVALID_ARGUMENT` if its
/// `flying` is neither 0 nor 1 or its `inflight` is below 1;
/// `WEIR_ERR_NULL` for a NULL limit or ticket; `WEIR_ERR_MISALIGNED`,
/// changing nothing, for a misaligned ticket.
#[no_mangle]
pub extern "C" fn weir_concurrency_leave(
    limit: *const weir_concurrency,
    ticket: *mut weir_concurrency_ticket,
    now: i64,
    dropped: bool,
) -> weir_status {
    decide_status(limit, Tally::errors, move |state| {
        let mut limit = state.lock();
        let (held, entry) = held_entry(ticket)?;
        limit.leave(entry, now, dropped);
        held.flying = 0;
        Ok(())
    })
}

/// The caller's ticket behind `ticket` for a leave, and the entry it holds:
/// `WEIR_ERR_SETTLED` if it already left (or was refused),
/// `WEIR_ERR_INVALID_ARGUMENT` if its `flying` is neither 0 nor 1 or its
/// `inflight` is below 1, `WEIR_ERR_NULL` / `WEIR_ERR_MISALIGNED` for a bad
/// pointer.
#[inline]
fn held_entry<'a>(
    ticket: *mut weir_concurrency_ticket,
) -> Result<(&'a mut weir_concurrency_ticket, ConcurrencyTicket), weir_status> {
    let held = value_mut(ticket)?;
    match held.flying {
        0 => return Err(WEIR_ERR_SETTLED),
        1 if held.inflight >= 1 => {}
        _ => return Err(WEIR_ERR_INVALID_ARGUMENT),
    }
    let entry = ConcurrencyTicket {
        start: held.start,
        inflight: i64::from(held.inflight),
    };
    Ok((held, entry))
}

/// The limit calls are admitted against now, `⌊limit⌋`; 0 for a NULL limit.
#[no_mangle]
pub extern "C" fn weir_concurrency_limit(limit: *const weir_concurrency) -> i64 {
    on(limit, 0, |state| state.lock().limit())
}

/// How many calls are in flight; 0 for a NULL limit.
#[no_mangle]
pub extern "C" fn weir_concurrency_flying(limit: *const weir_concurrency) -> i64 {
    on(limit, 0, |state| state.lock().flying())
}

/// The long-term latency average in nanoseconds (0 before any sample); 0
/// for a NULL limit.
#[no_mangle]
pub extern "C" fn weir_concurrency_long_rtt(limit: *const weir_concurrency) -> f64 {
    on(limit, 0.0, |state| state.lock().long_rtt())
}

/// Turns counting on for an adaptive limit: from this call on,
/// `weir_concurrency_read_counts` reports what it decided. Call it right after
/// `weir_concurrency_new` to count everything since the handle was made; a
/// second call changes nothing. Until then the handle costs what it did before
/// counting existed (see `weir_counts` for what counting costs).
/// `WEIR_ERR_NULL` for a NULL handle, `WEIR_ERR_MISALIGNED` for one no handle
/// can be at, `WEIR_ERR_POISONED` for a poisoned one.
#[no_mangle]
pub extern "C" fn weir_concurrency_start_counting(limit: *const weir_concurrency) -> weir_status {
    start_counting(limit)
}

/// Writes to `*out` what an adaptive limit decided since
/// `weir_concurrency_start_counting`. A reading: it changes nothing.
/// `admitted`: enters answered true (or, for `weir_concurrency_enter_partition`,
/// `WEIR_OK` with a ticket in flight); `refused`: enters refused at the limit
/// or at their partition's room; `errors`: enters given a NULL or misaligned
/// ticket, partitioned enters that answered an error, and leaves of either
/// form that answered an error; `units`: equal to `admitted`.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_concurrency_read_counts(
    limit: *const weir_concurrency,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(limit, out)
}

/// The most partitions `weir_concurrency_new_partitioned` takes.
pub const WEIR_CONCURRENCY_MAX_PARTITIONS: i32 = 16;
const_assert_eq!(WEIR_CONCURRENCY_MAX_PARTITIONS as usize, MAX_PARTITIONS);

/// One partition's terms for `weir_concurrency_new_partitioned`. 16 bytes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct weir_concurrency_partition {
    /// Its share of the limit, in [0, 1]; all shares sum to at most 1.
    pub share: f64,
    /// How many calls past its own room it may borrow from room the others
    /// are not using; 0 to `WEIR_CONCURRENCY_MAX_LIMIT`.
    pub borrow: i64,
}

assert_eq_size!(weir_concurrency_partition, [u8; 16]);
const_assert_eq!(core::mem::offset_of!(weir_concurrency_partition, share), 0);
const_assert_eq!(core::mem::offset_of!(weir_concurrency_partition, borrow), 8);

impl From<PartitionError> for weir_status {
    fn from(error: PartitionError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// Makes an adaptive limit (as `weir_concurrency_new`) split into `count`
/// partitions, numbered 0 to `count − 1` in the order of `parts`, and
/// writes it to `*out`. With `L = ⌊limit⌋`, partition `i` owns
/// `room_i = ⌊L × share_i⌋`; a call of partition `i`
/// (`weir_concurrency_enter_partition`) enters when fewer than `L` calls are
/// in flight in all and:
///
///   own room:  flying_i < room_i
///   borrowing: flying_i − room_i < borrow_i, and no partition holds a claim
///
/// A partition refused within its own room (the others' borrowed calls fill
/// the limit) holds a claim for one long-term round-trip time
/// (`weir_concurrency_long_rtt`) or until one of its calls enters: while a
/// claim holds nobody borrows, so room given back as borrowed calls leave
/// goes to its owner first. Every call enters only while fewer than `L` are
/// in flight, under the handle's lock, so the calls in flight never exceed
/// the limit at the moment each entered, under any interleaving. Every
/// partition's samples move the one limit. `weir_concurrency_enter` on a
/// partitioned limit enters against the global limit alone.
///
/// Statuses: the policy's as for `weir_concurrency_new`, then
/// `WEIR_ERR_CONCURRENCY_PARTITIONS` (`count` not 1 to
/// `WEIR_CONCURRENCY_MAX_PARTITIONS`, or `parts` NULL),
/// `WEIR_ERR_CONCURRENCY_SHARE` (a share NaN or outside [0, 1], or the
/// shares summing past 1), `WEIR_ERR_CONCURRENCY_BORROW` (a cap negative or
/// above `WEIR_CONCURRENCY_MAX_LIMIT`); `WEIR_ERR_MISALIGNED` for a
/// misaligned policy or `parts`, `WEIR_ERR_NULL` if `out` is NULL. `*out`
/// is written only on success; `parts` is copied.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_concurrency_new_partitioned(
    policy: *const weir_concurrency_policy,
    parts: *const weir_concurrency_partition,
    count: i32,
    out: *mut *mut weir_concurrency,
) -> weir_status {
    new_handle(out, || {
        let gradient = policy_or(policy, weir_concurrency_policy_preset())?;
        Concurrency::new(gradient.into())?;
        let n = usize::try_from(count)
            .ok()
            .filter(|n| (1..=MAX_PARTITIONS).contains(n))
            .ok_or(WEIR_ERR_CONCURRENCY_PARTITIONS)?;
        let given = slice_in(parts, n)?;
        if given.len() != n {
            return Err(WEIR_ERR_CONCURRENCY_PARTITIONS);
        }
        let mut terms = [Partition::default(); MAX_PARTITIONS];
        for (t, p) in terms.iter_mut().zip(given) {
            *t = Partition {
                share: p.share,
                borrow: p.borrow,
            };
        }
        let limit = Partitioned::new(gradient.into(), &terms[..n])?;
        Ok(weir_concurrency(Guarded::new(ShortLock::new(limit))))
    })
}

/// The partition numbered `partition` as an index. A negative number
/// becomes one at least 2^31, above any partition count, so the limit's
/// own check under its lock answers it as any other number it has no
/// partition for (one compare, not two, on every call).
fn partition_index(partition: i32) -> usize {
    partition as u32 as usize
}

/// Asks to start one call of partition `partition` at `now`, by the rule in
/// `weir_concurrency_new_partitioned`. `WEIR_OK`: decided, and
/// `ticket->flying` says how: 1, go ahead (give the ticket back once to
/// `weir_concurrency_leave_partition` with the same partition); 0, refused.
/// `WEIR_ERR_CONCURRENCY_PARTITION` if the limit has no such partition (a
/// limit made by `weir_concurrency_new` has none), `WEIR_ERR_NULL` for a
/// NULL limit or ticket, `WEIR_ERR_MISALIGNED` for a misaligned ticket;
/// each changes nothing and writes nothing.
#[no_mangle]
pub extern "C" fn weir_concurrency_enter_partition(
    limit: *const weir_concurrency,
    partition: i32,
    now: i64,
    ticket: *mut weir_concurrency_ticket,
) -> weir_status {
    let cold = move || enter_partition_counted(limit, partition, now, ticket);
    decide_status_or(limit, cold, move |state| {
        enter_partition_in(state, partition, now, ticket, |_| {})
    })
}

/// `weir_concurrency_enter_partition` on a limit that counts (or is
/// poisoned): out of line, with the call's own arguments, so that the call
/// reaches it by a jump (see `decide_or`). It counts a decision as
/// `weir_concurrency_enter` does, and an error status as an error.
#[cold]
#[inline(never)]
extern "C" fn enter_partition_counted(
    limit: *const weir_concurrency,
    partition: i32,
    now: i64,
    ticket: *mut weir_concurrency_ticket,
) -> weir_status {
    let admitted = core::cell::Cell::new(false);
    let counted = |status| match status {
        WEIR_OK => Tally::of(admitted.get()),
        _ => Tally::Error,
    };
    decide_status_counted(limit, counted, |state| {
        enter_partition_in(state, partition, now, ticket, |went| admitted.set(went))
    })
}

/// `weir_concurrency_enter_partition`'s work; `decided` hears whether the
/// call went in (the counting twin counts it; the plain call needs nothing).
#[inline]
fn enter_partition_in(
    state: &ShortLock<Partitioned>,
    partition: i32,
    now: i64,
    ticket: *mut weir_concurrency_ticket,
    decided: impl FnOnce(bool),
) -> Result<(), weir_status> {
    usable(ticket)?;
    let i = partition_index(partition);
    let entered = state.lock().enter_partition(i, now)?;
    let written = match entered {
        Some(entry) => weir_concurrency_ticket {
            start: entry.start,
            inflight: i32::try_from(entry.inflight).unwrap_or(i32::MAX),
            flying: 1,
        },
        None => weir_concurrency_ticket {
            start: now,
            inflight: 0,
            flying: 0,
        },
    };
    write_out(ticket, written)?;
    decided(entered.is_some());
    Ok(())
}

/// The call of partition `partition` behind `*ticket` ended at `now`, as
/// `weir_concurrency_leave` (same statuses), and it leaves its partition.
/// `WEIR_ERR_CONCURRENCY_PARTITION` if there is no such partition,
/// `WEIR_ERR_CONCURRENCY_PARTITION_EMPTY` if the partition has no call in
/// flight (the ticket was entered in another); each changes nothing. The
/// ticket is checked first, as `weir_concurrency_leave` checks it, then the
/// partition.
#[no_mangle]
pub extern "C" fn weir_concurrency_leave_partition(
    limit: *const weir_concurrency,
    partition: i32,
    ticket: *mut weir_concurrency_ticket,
    now: i64,
    dropped: bool,
) -> weir_status {
    let cold = move || leave_partition_counted(limit, partition, ticket, now, dropped);
    decide_status_or(limit, cold, move |state| {
        leave_partition_in(state, partition, ticket, now, dropped)
    })
}

/// `weir_concurrency_leave_partition` on a limit that counts (or is
/// poisoned), as `enter_partition_counted` is for an enter.
#[cold]
#[inline(never)]
extern "C" fn leave_partition_counted(
    limit: *const weir_concurrency,
    partition: i32,
    ticket: *mut weir_concurrency_ticket,
    now: i64,
    dropped: bool,
) -> weir_status {
    decide_status_counted(limit, Tally::errors, move |state| {
        leave_partition_in(state, partition, ticket, now, dropped)
    })
}

/// `weir_concurrency_leave_partition`'s work.
#[inline]
fn leave_partition_in(
    state: &ShortLock<Partitioned>,
    partition: i32,
    ticket: *mut weir_concurrency_ticket,
    now: i64,
    dropped: bool,
) -> Result<(), weir_status> {
    let mut limit = state.lock();
    let (held, entry) = held_entry(ticket)?;
    limit.leave_partition(partition_index(partition), entry, now, dropped)?;
    held.flying = 0;
    Ok(())
}

/// Calls of partition `partition` in flight; 0 for a NULL limit or no such
/// partition.
#[no_mangle]
pub extern "C" fn weir_concurrency_partition_flying(
    limit: *const weir_concurrency,
    partition: i32,
) -> i64 {
    on(limit, 0, |state| {
        state
            .lock()
            .flying_in(partition_index(partition))
            .unwrap_or(0)
    })
}

/// The room partition `partition` owns now, `⌊⌊limit⌋ × share⌋`; 0 for a
/// NULL limit or no such partition.
#[no_mangle]
pub extern "C" fn weir_concurrency_partition_room(
    limit: *const weir_concurrency,
    partition: i32,
) -> i64 {
    on(limit, 0, |state| {
        state.lock().room(partition_index(partition)).unwrap_or(0)
    })
}
