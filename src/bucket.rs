//! C face of [`weir_core::bucket`].

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{
    decide_counted, decide_or, decide_status, free_handle, on, place_plain, plain_footprint,
    read_counts, reconfigure_alone, start_counting, Guarded, Handle, HandleMut,
};
#[cfg(feature = "std")]
use crate::guard::{guard_status, write_footprint};
#[cfg(feature = "std")]
use crate::region::{attach, lay_shared, region_footprint, Layout, Shareable, WEIR_REGION_BUCKET};
use crate::status::weir_status;
#[cfg(feature = "std")]
use crate::status::weir_status::*;
use weir_core::bucket::{Bucket, BucketError};
use weir_core::time::NEVER;

/// A token bucket: `rate` tokens a second accrue up to `burst`, and each
/// call spends what it costs. Lock-free (its whole state is one atomic word)
/// and safe to use from many threads at once; 88 bytes of heap per handle.
/// Made by `weir_bucket_new`, freed by `weir_bucket_free`.
///
/// The word is a GCRA theoretical arrival time (TAT), held less the
/// tolerance but one token so that a one-token take refuses with one
/// comparison, in ticks of 2^-s ns after the `now` the bucket was made.
/// s (0..4) is the coarsest that makes a token worth at least 128 ticks
/// (4 above 1.25 × 10^8 tokens/s). A token is worth
/// per_token = ceil(2^s × 10^9 / rate) ticks, exactly; a full bucket holds
/// floor(burst × per_token) ticks and a take of n tokens costs
/// ceil(n × per_token) ticks. The capacity and the costs share the one
/// rounded per_token, and every rounding runs against admitting. For every
/// rate and burst `weir_bucket_new` accepts:
/// - a full bucket admits exactly floor(burst) unit takes at one instant
///   (all of a whole burst);
/// - the tokens taken at instants within any T seconds are at most
///   burst + rate × T, whatever the order of the instants;
/// - a token is worth at most one tick more than 1 / rate, so a steady
///   stream of unit takes, one at least every d seconds, with a burst of at
///   least 1 + rate × d (a token more than the spacing), gets at least
///   128/129 of the rate (over 99.2 %) up to 1.25 × 10^8/s, and at least
///   rate × r0 / (r0 + rate) above, with r0 = 1.6 × 10^10 (94 % at 10^9/s);
///   never more than 1.6 × 10^10 unit takes a second.
///
/// A fractional burst is held to a tick, rounded down, so a take of all of
/// it may never pass (`weir_bucket_next` answers INT64_MAX for it); whole
/// tokens up to floor(burst) always fit. These hold for every `now`; the
/// clock runs for 2^62 ticks after the bucket was made (146 years at rates
/// up to 7.8 × 10^6/s, halving with each finer tick to 9.1 years above
/// 6.25 × 10^7/s), and stands still after that.
///
/// In the firmware build (docs/firmware.md) a bucket is placed only: on a
/// 32-bit core 88 bytes. Its updates hold the build's critical section
/// (interrupts masked, with `single-core`); the longest measured under QEMU: a
/// call of 118 instructions on a Cortex-M4F, a section of 43 on a Cortex-M0.
pub struct weir_bucket(Guarded<Bucket>);

impl Handle for weir_bucket {
    type State = Bucket;
    fn guarded(&self) -> &Guarded<Bucket> {
        &self.0
    }
}

impl HandleMut for weir_bucket {
    fn guarded_mut(&mut self) -> &mut Guarded<Bucket> {
        &mut self.0
    }
}

impl From<BucketError> for weir_status {
    fn from(error: BucketError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// Makes a full bucket at `now` and writes it to `*out`.
///
/// `rate` is tokens per second; 0 is a bucket that never refills. `burst`
/// is the most it holds: 0 or less means the rate, and a burst under one is
/// raised to one. Returns `WEIR_ERR_NULL` if `out` is NULL,
/// `WEIR_ERR_NOT_FINITE` for a NaN or infinite rate or burst,
/// `WEIR_ERR_NEGATIVE` for a negative rate, and `WEIR_ERR_TOO_LARGE` when
/// the full burst does not fit the bucket's clock: the burst's ticks, burst
/// × ceil(10^9 / rate) ns even at the coarsest tick, must stay within 2^61
/// ns (about 73 years). So it answers for
/// - a burst that takes longer than that to refill (burst / rate);
/// - above 10^9/s, where a token still costs one whole 1-ns tick, a burst
///   over about 2.3 × 10^18 whatever it takes to refill
///   (`weir_bucket_new(1e12, 3e18, ...)`, 35 days);
/// - a rate of 2^64/s (about 1.8 × 10^19) or more, whatever the burst: a
///   token's cost cannot be computed exactly there;
/// - with a rate of 0, a burst over about 2.3 × 10^9 (its tokens count as
///   seconds of refill).
///
/// `*out` is written only on success.
///
/// Refill is kept in ticks of 2^-s ns (see `weir_bucket`): a take costs at
/// least one tick, so one bucket admits at most 1.6 × 10^10 takes a second
/// (express higher rates with larger costs). The bucket's clock runs for
/// 2^62 ticks after `now` (146 years at rates up to 7.8 × 10^6/s, at least
/// 9.1 years at any rate); later readings count as that instant. A burst
/// whose refill does not fit a fine tick gets a coarser one.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bucket_new(
    rate: f64,
    burst: f64,
    now: i64,
    out: *mut *mut weir_bucket,
) -> weir_status {
    new_handle(out, || {
        Ok(weir_bucket(Guarded::new(Bucket::new(rate, burst, now)?)))
    })
}

/// The bytes and the alignment a placed bucket needs (`weir_bucket_init_in`),
/// written to `*bytes` and `*align`: its handle and nothing more.
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align`
/// pointer; nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_bucket_footprint(bytes: *mut usize, align: *mut usize) -> weir_status {
    plain_footprint::<weir_bucket>(bytes, align)
}

/// Lays a bucket in memory the caller owns (a static array, a field of its
/// own struct) and writes it to `*out`: the bucket `weir_bucket_new` makes from `rate` and `burst`, full at `now`,
/// taken by every `weir_bucket_*` call, without a heap. `mem` holds `len`
/// bytes, at least the footprint `weir_bucket_footprint` answers, at a
/// multiple of its alignment. The memory stays the caller's:
/// `weir_bucket_free` on a placed bucket does nothing, and the memory may be
/// reused once no call uses it. Checked in this order, nothing written on
/// an error: `out` (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), the arguments
/// (`WEIR_ERR_NOT_FINITE`, `WEIR_ERR_NEGATIVE`, `WEIR_ERR_TOO_LARGE`, as `weir_bucket_new` answers them), then `mem` NULL
/// (`WEIR_ERR_NULL`), `mem` misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len`
/// below the footprint (`WEIR_ERR_PLACED_TOO_SMALL`).
#[no_mangle]
pub extern "C" fn weir_bucket_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    rate: f64,
    burst: f64,
    now: i64,
    out: *mut *mut weir_bucket,
) -> weir_status {
    place_plain(mem, len, out, || {
        Ok(weir_bucket(Guarded::new(Bucket::new(rate, burst, now)?)))
    })
}

#[cfg(feature = "std")]
impl Shareable for weir_bucket {
    const KIND: u32 = WEIR_REGION_BUCKET;
    const LOCKED: bool = false;

    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        if slots != 0 {
            return Err(WEIR_ERR_INVALID_ARGUMENT);
        }
        Ok(Layout {
            bytes: core::mem::size_of::<weir_bucket>(),
            align: core::mem::align_of::<weir_bucket>(),
            runs: [0, 0],
        })
    }

    fn slots(&self) -> usize {
        0
    }

    /// Marks it laid in a region: it takes no lock, but its policy is the
    /// region's, so `weir_bucket_reconfigure` refuses it.
    fn share(&mut self) {
        self.0.mark_in_region();
    }

    /// Nothing to change: the bucket is one atomic word and its constants,
    /// with no lock and no slots.
    fn fits(&self, _: &Layout, _: usize) -> bool {
        true
    }
}

/// The bytes and the alignment a shared bucket needs
/// (`weir_bucket_init_shared`), written to `*bytes` and `*align`: a
/// 256-byte `weir_region_header` and the region's 64-byte lock, then the bucket; 64-aligned.
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad pointer; nothing is
/// written on an error.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bucket_shared_footprint(
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    guard_status(|| {
        let layout = weir_bucket::layout_for(0)?;
        write_footprint(region_footprint(&layout)?, bytes, align)
    })
}

/// Lays a bucket that processes share in `mem`, memory the caller maps
/// `MAP_SHARED`, and writes it to `*out` for this process: a
/// `weir_region_header` (its kind WEIR_REGION_BUCKET; its policy the rate
/// then the burst, two doubles), then the bucket `weir_bucket_init_in`
/// would lay, full at `now`. Another process gets its own `weir_bucket *`
/// from `weir_bucket_attach`; every `weir_bucket_*` call then takes from
/// the one bucket, with every bound `weir_bucket` states holding across
/// the processes together. Its state is one atomic word, updated by one
/// compare-and-swap, so a process killed at any point leaves it whole:
/// there is no lock and nothing to recover. Lay it once, before any process
/// attaches. Checked as `weir_breaker_init_shared` checks its region, with
/// the arguments checked as `weir_bucket_new` checks them.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bucket_init_shared(
    mem: *mut core::ffi::c_void,
    len: usize,
    rate: f64,
    burst: f64,
    now: i64,
    out: *mut *mut weir_bucket,
) -> weir_status {
    let mut policy = [0u8; 16];
    policy[..8].copy_from_slice(&rate.to_le_bytes());
    policy[8..].copy_from_slice(&burst.to_le_bytes());
    lay_shared(mem, len, out, &policy, |at, room, placed| {
        weir_bucket_init_in(at, room, rate, burst, now, placed)
    })
}

/// Checks the region at `mem` that `weir_bucket_init_shared` laid and
/// writes its bucket, for this process, to `*out`: refused with the
/// statuses `weir_breaker_attach` lists, nothing written.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bucket_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_bucket,
) -> weir_status {
    attach(mem, len, out)
}

/// Frees a bucket. NULL is accepted and ignored, and so is a placed one
/// (`weir_bucket_init_in`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_bucket_free(bucket: *mut weir_bucket) {
    free_handle(bucket)
}

/// Takes `n` tokens at `now` if the bucket holds them; whether it did.
/// Fractional costs are allowed. Refuses (false, taking nothing) a NULL
/// bucket and an `n` that is 0, negative, NaN, infinite or more than the
/// bucket holds (the burst, held to a tick): a cost of zero is refused
/// rather than admitted for free. An earlier `now` than one a take already
/// used (passed, or refused for want of tokens) sees the bucket as it stood then: it passes
/// only if that take's `now` would have, and then leaves the bucket as
/// that would have. The readings `weir_bucket_tokens` and
/// `weir_bucket_next` write nothing (the bucket is one word), so they
/// change no later answer and set no such time: a take at a `now` earlier
/// than a reading's is judged at its own `now`. Pass a monotonic clock.
#[no_mangle]
pub extern "C" fn weir_bucket_take(bucket: *const weir_bucket, now: i64, n: f64) -> bool {
    // The unit take on its own guard, and any other cost on another, so
    // that the common call has no frame and other costs are a tail call.
    if n == 1.0 {
        let counted = move || take_counted(bucket, now, n);
        decide_or(bucket, false, counted, move |bucket| bucket.take_one(now))
    } else {
        take_cost(bucket, now, n)
    }
}

/// `weir_bucket_take` for a cost other than one token.
#[inline(never)]
extern "C" fn take_cost(bucket: *const weir_bucket, now: i64, n: f64) -> bool {
    let counted = move || take_counted(bucket, now, n);
    decide_or(bucket, false, counted, move |bucket| bucket.take(now, n))
}

/// `weir_bucket_take` on a bucket that counts (or is poisoned): out of
/// line, with the take's own arguments, so that the take reaches it by a
/// jump (see `decide_or`).
#[cold]
#[inline(never)]
extern "C" fn take_counted(bucket: *const weir_bucket, now: i64, n: f64) -> bool {
    let counted = move |bucket: &Bucket, &taken: &bool| match (taken, bucket.holds(n)) {
        (true, _) => Tally::Admitted(n),
        (false, true) => Tally::Refused,
        (false, false) => Tally::Error,
    };
    decide_counted(bucket, false, counted, move |bucket| bucket.take(now, n))
}

/// Nanoseconds from `now` until `n` tokens will be there, without taking
/// them (what a Retry-After header needs): 0 when they are there now, else
/// the wait until the first instant from which `weir_bucket_take(n)`
/// passes, if nothing is taken before. `INT64_MAX` when `n` is more than
/// the bucket holds, when the bucket will not refill enough (a rate of 0, or the instant lies past the end of the
/// clock), and for a NULL bucket or an `n` that is 0, negative, NaN or
/// infinite.
#[no_mangle]
pub extern "C" fn weir_bucket_next(bucket: *const weir_bucket, now: i64, n: f64) -> i64 {
    on(bucket, NEVER, |bucket| bucket.next(now, n))
}

/// Gives back `n` tokens taken at `taken_at` (the `now` of that take) for a
/// call that was let through but never made, as x/time/rate's
/// `Reservation.Cancel` does. Lock-free, one compare-and-swap, like a take.
///
/// What a refund gives back: the take's cost less the refill since
/// `taken_at`, n − rate × (now − taken_at) tokens (in ticks: the cost
/// rounded down where the take rounded it up), and never more than the
/// room left under the burst at `now`. A partial refund is `WEIR_OK`; read
/// `weir_bucket_tokens` for the result. A refund at the take's own `now`
/// undoes a whole-token take exactly; a bucket that never refills (rate 0)
/// takes back the whole cost whenever.
///
/// What it cannot undo: refill that has already made the take good
/// (`WEIR_ERR_REFUND_EXPIRED` once rate × (now − taken_at) covers the
/// cost). The refill since the take went to the hole it made, or, had the
/// bucket been full without it, was thrown away; the bucket keeps no record
/// to tell, so it assumes the latter and a refund never leaves the bucket
/// fuller than if the take had not been made. It cannot give back room the
/// bucket no longer has (`WEIR_ERR_REFUND_FULL` when it is full at `now`),
/// and it cannot check that the tokens were taken, or not refunded
/// already: give back only what a take that passed took, once.
///
/// Every error changes nothing, checked in this order: `WEIR_ERR_NULL` (a
/// NULL bucket), `WEIR_ERR_LIMITER_INVALID_AMOUNT` (`n` zero, negative, NaN,
/// infinite or more than the burst: no take could have taken it),
/// `WEIR_ERR_REFUND_FUTURE` (`taken_at` later than `now`),
/// `WEIR_ERR_REFUND_EXPIRED`, `WEIR_ERR_REFUND_FULL`.
#[no_mangle]
pub extern "C" fn weir_bucket_refund(
    bucket: *const weir_bucket,
    now: i64,
    taken_at: i64,
    n: f64,
) -> weir_status {
    decide_status(bucket, Tally::errors, move |bucket| {
        bucket.refund(now, taken_at, n)?;
        Ok(())
    })
}

/// Gives a bucket a new `rate` and `burst` at `now`, in place: it becomes
/// the bucket `weir_bucket_new(rate, burst, now)` makes, holding the tokens
/// it held at `now` up to the new burst (counted in the new token's ticks,
/// rounded down), so a caller's spent tokens stay spent and a fuller burst
/// fills at the new rate from what was there. Its counts
/// (`weir_bucket_read_counts`) and whether it counts carry over, and so
/// does a placed bucket's memory (its footprint is one size for every
/// rate). Its clock then runs from `now` (2^62 ticks, as from
/// `weir_bucket_new`). A refund of a take made before the change gives
/// back the new tokens' worth of its cost, less the refill since, as for
/// any take.
///
/// What a change admits: the tokens taken at instants in [a, c) before a
/// change at c keep the old bound, burst + rate × (c − a); the change adds
/// none, so those in [a, b] across it are at most
/// burst + rate × (c − a) + rate' × (b − c), and those in a stretch wholly
/// after it at most burst' + rate' × T.
///
/// Not concurrent, unlike the other types' reconfigurations: a take reads
/// the bucket's policy without a lock (the bucket is one atomic word and
/// its policy beside it), so no other call on this bucket may run while it
/// does (as for `weir_bucket_free`); a program that changes the rate of a
/// bucket its threads share under load holds its callers off with a lock of
/// its own (a reader-writer lock: the takes share it, the change takes it
/// alone; tests/c/bucket_reconfigure_rwlock.c does so and checks the
/// bound). Why not under a lock of the bucket's own: a take commits with one
/// compare-and-swap of the word, which checks only the word's value, and a
/// take that read the old policy and the word before a change could still
/// commit after it whenever the new word happens to hold that same value;
/// ruling that out needs a generation the word's 64 bits have no room for,
/// a lock on every take, or a new word per change, each a cost on every
/// take or on the handle's footprint. Returns `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED` for a bad `bucket`, `WEIR_ERR_REGION_UNSUPPORTED`
/// for a bucket that processes share (`weir_bucket_init_shared`: its policy
/// is its region's, laid once for every process, whose takes no lock here
/// could hold off),
/// `WEIR_ERR_POISONED` for a poisoned one, then `WEIR_ERR_NOT_FINITE`,
/// `WEIR_ERR_NEGATIVE` and `WEIR_ERR_TOO_LARGE` as `weir_bucket_new` answers
/// them; an error changes nothing. It counts nothing.
#[no_mangle]
pub extern "C" fn weir_bucket_reconfigure(
    bucket: *mut weir_bucket,
    rate: f64,
    burst: f64,
    now: i64,
) -> weir_status {
    reconfigure_alone(bucket, |bucket| Ok(bucket.reconfigure(rate, burst, now)?))
}

/// How many tokens the bucket holds at `now`, from 0 up to the burst; 0 for
/// a NULL bucket.
#[no_mangle]
pub extern "C" fn weir_bucket_tokens(bucket: *const weir_bucket, now: i64) -> f64 {
    on(bucket, 0.0, |bucket| bucket.tokens(now))
}

/// Turns counting on for a bucket: from this call on, `weir_bucket_read_counts`
/// reports what it decided. Call it right after `weir_bucket_new` to count
/// everything since the handle was made; a second call changes nothing. Until
/// then the handle costs what it did before counting existed (see `weir_counts`
/// for what counting costs). `WEIR_ERR_NULL` for a NULL handle,
/// `WEIR_ERR_MISALIGNED` for one no handle can be at, `WEIR_ERR_POISONED` for a
/// poisoned one.
#[no_mangle]
pub extern "C" fn weir_bucket_start_counting(bucket: *const weir_bucket) -> weir_status {
    start_counting(bucket)
}

/// Writes to `*out` what a bucket decided since `weir_bucket_start_counting`. A
/// reading: it changes nothing. `admitted`: takes that passed; `refused`: takes
/// refused for want of tokens; `errors`: takes of a cost no take could pass (0,
/// negative, NaN, infinite or over the burst) and refunds that answered an
/// error; `units`: the tokens the admitted takes took.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_bucket_read_counts(
    bucket: *const weir_bucket,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(bucket, out)
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    #[test]
    fn the_documented_handle_size_is_right() {
        assert_eq!(core::mem::size_of::<super::weir_bucket>(), 88);
    }
}
