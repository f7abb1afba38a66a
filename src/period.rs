//! C face of [`weir_core::period`].

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{
    decide, free_handle, on, place_plain, plain_footprint, read_counts, reconfigure,
    start_counting, Guarded, Handle,
};
use crate::lock::ShortLock;
#[cfg(feature = "std")]
use crate::region::{
    attach, lay_shared, read_recoveries, region_footprint, weir_recoveries, Layout, Repair,
    Shareable, WEIR_REGION_PERIOD,
};
use crate::status::weir_status;
#[cfg(feature = "std")]
use crate::status::weir_status::WEIR_ERR_INVALID_ARGUMENT;
use weir_core::period::{Period, PeriodError, PeriodQuota};
use weir_core::time::NEVER;

/// A fixed-window counter: at most `quota` events per period. Takes a short
/// per-handle lock and is safe to use from many threads at once; 104 bytes
/// of heap per handle. Made by `weir_period_new`, freed by
/// `weir_period_free`.
///
/// In the firmware build (docs/firmware.md) a period is placed only: on a
/// 32-bit core 88 bytes. Its updates hold the build's critical section
/// (interrupts masked, with `single-core`); the longest measured under QEMU: a
/// call of 255 instructions on a Cortex-M4F, a section of 527 on a Cortex-M0.
pub struct weir_period(Guarded<ShortLock<Period>>);

impl Handle for weir_period {
    type State = ShortLock<Period>;
    fn guarded(&self) -> &Guarded<ShortLock<Period>> {
        &self.0
    }

    #[cfg(feature = "std")]
    unsafe fn recover(state: &Self::State) -> bool {
        // SAFETY: by `recover`'s contract the caller holds the region's
        // lock.
        unsafe { crate::region::repair(state) }
    }
}

/// Where a period's quota stands after `weir_period_take`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum weir_period_quota {
    /// Admitted, and more may follow in this period.
    WEIR_PERIOD_QUOTA_UNDER = 0,
    /// Admitted, and it was the last event this period allows: the moment
    /// to warn that the next will be refused.
    WEIR_PERIOD_QUOTA_HIT = 1,
    /// Refused: this period's quota was already spent.
    WEIR_PERIOD_QUOTA_OVER = 2,
}

impl From<PeriodQuota> for weir_period_quota {
    fn from(quota: PeriodQuota) -> weir_period_quota {
        match quota {
            PeriodQuota::Under => weir_period_quota::WEIR_PERIOD_QUOTA_UNDER,
            PeriodQuota::Hit => weir_period_quota::WEIR_PERIOD_QUOTA_HIT,
            PeriodQuota::Over => weir_period_quota::WEIR_PERIOD_QUOTA_OVER,
        }
    }
}

impl From<PeriodError> for weir_status {
    fn from(error: PeriodError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// Makes a counter no event has touched, allowing `quota` events per
/// `period_ns`, and writes it to `*out`. A period under one nanosecond is
/// raised to one. Without `align`, a period opens with the first event
/// after the previous one closed; with `align`, periods open on multiples
/// of `period_ns` on the caller's clock (floor division, so negative
/// readings align too; with a Unix clock a daily quota resets at midnight
/// UTC). Returns `WEIR_ERR_NULL` if `out` is NULL and `WEIR_ERR_QUOTA` for
/// a quota of 0 or less. `*out` is written only on success.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_period_new(
    quota: i64,
    period_ns: i64,
    align: bool,
    out: *mut *mut weir_period,
) -> weir_status {
    new_handle(out, || make(quota, period_ns, align))
}

/// The handle `weir_period_new` and `weir_period_init_in` make.
fn make(quota: i64, period_ns: i64, align: bool) -> Result<weir_period, weir_status> {
    let period = Period::new(quota, period_ns, align)?;
    Ok(weir_period(Guarded::new(ShortLock::new(period))))
}

/// The bytes and the alignment a placed period counter needs (`weir_period_init_in`),
/// written to `*bytes` and `*align`: its handle and nothing more.
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align`
/// pointer; nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_period_footprint(bytes: *mut usize, align: *mut usize) -> weir_status {
    plain_footprint::<weir_period>(bytes, align)
}

/// Lays a period counter in memory the caller owns (a static array, a field of its
/// own struct) and writes it to `*out`: the period counter `weir_period_new` makes from `quota`, `period_ns` and `align`,
/// taken by every `weir_period_*` call, without a heap. `mem` holds `len`
/// bytes, at least the footprint `weir_period_footprint` answers, at a
/// multiple of its alignment. The memory stays the caller's:
/// `weir_period_free` on a placed period counter does nothing, and the memory may be
/// reused once no call uses it. Checked in this order, nothing written on
/// an error: `out` (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), the arguments
/// (`WEIR_ERR_QUOTA`, as `weir_period_new` answers them), then `mem` NULL
/// (`WEIR_ERR_NULL`), `mem` misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len`
/// below the footprint (`WEIR_ERR_PLACED_TOO_SMALL`).
#[no_mangle]
pub extern "C" fn weir_period_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    quota: i64,
    period_ns: i64,
    align: bool,
    out: *mut *mut weir_period,
) -> weir_status {
    place_plain(mem, len, out, || make(quota, period_ns, align))
}

#[cfg(feature = "std")]
impl Repair for Period {
    /// Keeps the counter as the dead call left it: every field of a
    /// half-made take is a value a take could leave (a period moved on with
    /// its old count refuses more, never admits more).
    fn repair(&mut self) -> bool {
        true
    }
}

#[cfg(feature = "std")]
impl Shareable for weir_period {
    const KIND: u32 = WEIR_REGION_PERIOD;
    const LOCKED: bool = true;

    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        if slots != 0 {
            return Err(WEIR_ERR_INVALID_ARGUMENT);
        }
        Ok(Layout {
            bytes: core::mem::size_of::<weir_period>(),
            align: core::mem::align_of::<weir_period>(),
            runs: [0, 0],
        })
    }

    fn slots(&self) -> usize {
        0
    }

    /// Its lock made process-shared.
    fn fits(&self, _: &Layout, _: usize) -> bool {
        true
    }
}

/// The bytes and the alignment a shared period needs
/// (`weir_period_init_shared`), written to `*bytes` and `*align`: a
/// 256-byte `weir_region_header` and the region's 64-byte lock, then the period; 64-aligned.
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad pointer; nothing is
/// written on an error.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_period_shared_footprint(
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    crate::guard::guard_status(|| {
        let layout = weir_period::layout_for(0)?;
        crate::guard::write_footprint(region_footprint(&layout)?, bytes, align)
    })
}

/// Checks the region at `mem` that `weir_period_init_shared` laid and
/// writes its period, for this process, to `*out`: refused with the
/// statuses `weir_breaker_attach` lists, nothing written.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_period_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_period,
) -> weir_status {
    attach(mem, len, out)
}

/// Lays a period counter that processes share in `mem`, memory the caller
/// maps `MAP_SHARED`, and writes it to `*out` for this process: a
/// `weir_region_header` (its kind WEIR_REGION_PERIOD; its policy the quota
/// and the period, two int64_t, then `align` as one byte), then the
/// counter `weir_period_init_in` would lay, its lock a robust,
/// process-shared mutex. Another process gets its own `weir_period *` from
/// `weir_period_attach`; the quota then holds across the processes
/// together. A process killed holding the lock leaves the counter as its
/// take left it (a take cut off part-way counts the event or not, or keeps
/// the old period's count into a new period, which refuses more, never
/// admits more); the next call answers as a recovered call does (see
/// `weir_breaker_init_shared`: `weir_period_take` refuses) and
/// `weir_period_recoveries` counts it. Lay it once, before any process
/// attaches. Checked as `weir_breaker_init_shared` checks its region, the
/// arguments as `weir_period_new` checks them.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_period_init_shared(
    mem: *mut core::ffi::c_void,
    len: usize,
    quota: i64,
    period_ns: i64,
    align: bool,
    out: *mut *mut weir_period,
) -> weir_status {
    let mut policy = [0u8; 17];
    policy[..8].copy_from_slice(&quota.to_le_bytes());
    policy[8..16].copy_from_slice(&period_ns.to_le_bytes());
    policy[16] = u8::from(align);
    lay_shared(mem, len, out, &policy, |at, room, placed| {
        weir_period_init_in(at, room, quota, period_ns, align, placed)
    })
}

/// Writes what a shared period counter's lock has recovered from (see
/// `weir_period_init_shared`) to `*out`; all zero for one that is not
/// shared. `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`, `WEIR_ERR_POISONED`. A
/// reading: it changes nothing.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_period_recoveries(
    period: *const weir_period,
    out: *mut weir_recoveries,
) -> weir_status {
    crate::guard::guard_status(|| read_recoveries(period, out))
}

/// Frees a period counter. NULL is accepted and ignored, and so is a placed one
/// (`weir_period_init_in`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_period_free(period: *mut weir_period) {
    free_handle(period)
}

/// Counts one event at `now` and says where the quota stands:
/// `WEIR_PERIOD_QUOTA_UNDER` and `WEIR_PERIOD_QUOTA_HIT` are admitted, `WEIR_PERIOD_QUOTA_OVER`
/// is refused. An earlier `now` than one already seen counts as the latest.
/// A NULL counter answers `WEIR_PERIOD_QUOTA_OVER`.
#[no_mangle]
pub extern "C" fn weir_period_take(period: *const weir_period, now: i64) -> weir_period_quota {
    let over = weir_period_quota::WEIR_PERIOD_QUOTA_OVER;
    let counted = move |_: &_, quota: &weir_period_quota| Tally::of(*quota != over);
    decide(period, over, counted, move |period| {
        period.lock().take(now).into()
    })
}

/// How many more events the open period admits at `now` (a `now` earlier
/// than the latest take's counts as that one); the whole quota when no
/// period is open; 0 for a NULL counter. A pure reading: it changes no later
/// answer, and only takes move the counter's clock.
#[no_mangle]
pub extern "C" fn weir_period_left(period: *const weir_period, now: i64) -> i64 {
    on(period, 0, |period| period.lock().left(now))
}

/// Nanoseconds from `now` until the open period ends; 0 when no period is
/// open (the next event opens one). `INT64_MAX` when the open period
/// reaches the end of the clock, and for a NULL counter. A pure reading, as
/// `weir_period_left` is.
#[no_mangle]
pub extern "C" fn weir_period_next(period: *const weir_period, now: i64) -> i64 {
    on(period, NEVER, |period| period.lock().next(now))
}

/// Gives a period counter a new `quota`, `period_ns` and `align` in place,
/// checked as `weir_period_new` checks them. The open period keeps its end
/// and its count: the events it admitted count against the new quota (it
/// admits quota' − count more, none if that is not positive, and
/// `weir_period_left` answers at least 0), and it closes when it would
/// have. The periods that open after it have the new length and alignment.
/// The clock (the latest take's `now`) and the counts carry over. So each
/// period admits at most its own quota: the one open at the change at most
/// the larger of the two, every later one at most the new quota.
///
/// Safe beside the counter's other calls (not `weir_period_free`): it
/// takes the counter's own lock, as they do, so a take racing it is judged
/// by the old policy or the new one, wholly. `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED` for a bad `period`, `WEIR_ERR_REGION_UNSUPPORTED`
/// for a shared counter (`weir_period_init_shared`: its policy is its
/// region's, laid once for every process), `WEIR_ERR_POISONED` for a
/// poisoned one, then
/// `WEIR_ERR_QUOTA` for a quota of 0 or less; an error changes nothing. It
/// counts nothing.
#[no_mangle]
pub extern "C" fn weir_period_reconfigure(
    period: *mut weir_period,
    quota: i64,
    period_ns: i64,
    align: bool,
) -> weir_status {
    reconfigure(period, |period| {
        Ok(period.lock().reconfigure(quota, period_ns, align)?)
    })
}

/// Turns counting on for a period counter: from this call on,
/// `weir_period_read_counts` reports what it decided. Call it right after
/// `weir_period_new` to count everything since the handle was made; a second
/// call changes nothing. Until then the handle costs what it did before
/// counting existed (see `weir_counts` for what counting costs).
/// `WEIR_ERR_NULL` for a NULL handle, `WEIR_ERR_MISALIGNED` for one no handle
/// can be at, `WEIR_ERR_POISONED` for a poisoned one.
#[no_mangle]
pub extern "C" fn weir_period_start_counting(period: *const weir_period) -> weir_status {
    start_counting(period)
}

/// Writes to `*out` what a period counter decided since
/// `weir_period_start_counting`. A reading: it changes nothing. `admitted`:
/// takes answered `WEIR_PERIOD_QUOTA_UNDER` or `WEIR_PERIOD_QUOTA_HIT`;
/// `refused`: takes answered `WEIR_PERIOD_QUOTA_OVER`; `errors`: 0; `units`:
/// equal to `admitted`.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_period_read_counts(
    period: *const weir_period,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(period, out)
}

#[cfg(all(test, target_pointer_width = "64", target_os = "linux"))]
mod tests {
    #[test]
    fn the_documented_handle_size_is_right() {
        assert_eq!(core::mem::size_of::<super::weir_period>(), 104);
    }
}
