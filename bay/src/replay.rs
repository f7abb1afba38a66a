//! Single calls over weir-core for the conformance traces (`traces/`): the
//! bay's wasm build exports one function per traced call of the types it
//! replays, so that `bay/test/traces.mjs` drives the very build the page
//! runs through the same calls the C ABI answers.
//!
//! Every argument is a 64-bit integer (a double passed as its IEEE-754 bit
//! pattern, a narrower integer widened): JavaScript hands each trace token
//! over as one BigInt, whatever its C type. Each call writes its answers,
//! in the order `traces/README.md` gives, as 64-bit patterns to a buffer
//! read through [`bay_trace_out`], and returns how many it wrote.
//! Errors answer the C statuses (`weir_status` codes of `include/weir.h`).
//! Single threaded, as a page is: one held object of each type.

use std::cell::RefCell;
use std::sync::atomic::AtomicU64;

use weir_core::bucket::{Bucket, BucketError};
use weir_core::deadline::Deadline;
use weir_core::gate::Gate;
use weir_core::gcra::{self, GcraError, GcraLimit};
use weir_core::limiter::{Limiter, LimiterError, RefundError};
use weir_core::period::{Period, PeriodError, PeriodQuota};
use weir_core::rate::{self, RateError, RateLimit};
use weir_core::sliding::{Sliding, SlidingError};

/// The held objects, as the trace format has them.
#[derive(Default)]
struct Held {
    /// The rate word and its limit's raw fields (interval_ns, interval_frac, burst).
    rate: u64,
    rate_limit: (u64, u32, u32),
    /// The GCRA word and its limit's raw fields (per_token, tolerance, shift, reserved).
    gcra: u64,
    gcra_limit: (u64, i64, u32, u32),
    /// The deadline's fields (start, budget_ns).
    deadline: (i64, i64),
    /// The handle types: none until a constructor succeeds.
    bucket: Option<Bucket>,
    /// The limiter: none until a constructor succeeds (a failed one keeps
    /// the held limiter, as the C value is written only on success).
    limiter: Option<Limiter>,
    sliding: Option<Sliding>,
    period: Option<Period>,
    gate: Option<Gate>,
}

thread_local! {
    static HELD: RefCell<Held> = RefCell::new(Held::default());
    static OUT: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// `WEIR_ERR_NOT_FINITE`, `WEIR_ERR_NEGATIVE`: the general codes.
const NOT_FINITE: i64 = 3;
const NEGATIVE: i64 = 4;
/// `WEIR_ERR_TOO_LARGE`, `WEIR_ERR_NO_MEMORY`, `WEIR_ERR_QUOTA`,
/// `WEIR_ERR_SLIDING_WINDOW`.
const TOO_LARGE: i64 = 5;
const NO_MEMORY: i64 = 6;
const QUOTA: i64 = 18;
const SLIDING_WINDOW: i64 = 19;

/// The C status of a limiter's error.
fn limiter_status(error: LimiterError) -> i64 {
    match error {
        LimiterError::ZeroCapacity => 100,
        LimiterError::ZeroRefillAmount => 101,
        LimiterError::ZeroRefillInterval => 102,
        LimiterError::ZeroWindow => 103,
        LimiterError::ZeroCooldown => 104,
        LimiterError::InitialAboveCapacity => 105,
        LimiterError::BucketAnchorInFuture => 106,
        LimiterError::WindowAnchorInFuture => 107,
        LimiterError::CooldownArmedWithTokens => 108,
        LimiterError::CooldownDeadlineOverflow => 109,
        LimiterError::RateLimited => 110,
        LimiterError::InvalidAmount => 111,
        LimiterError::WrongVariant => 112,
    }
}

/// The C status of a refund's error.
fn refund_status(error: RefundError) -> i64 {
    match error {
        RefundError::Amount => 111,
        RefundError::Future => 43,
        RefundError::Expired => 40,
        RefundError::Armed => 41,
        RefundError::Full => 42,
    }
}

/// The C status of a rate limit's error (the codes of `weir_status`).
fn rate_status(error: RateError) -> i64 {
    match error {
        RateError::NotFinite => NOT_FINITE,
        RateError::Negative => NEGATIVE,
        RateError::Zero => 401,
        RateError::Burst => 400,
        RateError::TooSlow => 402,
        RateError::TooFast => 403,
        RateError::Invalid => 404,
    }
}

/// The C status of a GCRA limit's error.
fn gcra_status(error: GcraError) -> i64 {
    match error {
        GcraError::NotFinite => NOT_FINITE,
        GcraError::Negative => NEGATIVE,
        GcraError::Zero => 431,
        GcraError::Burst => 430,
        GcraError::TooSlow => 432,
        GcraError::TooFast => 433,
        GcraError::Invalid => 434,
    }
}

/// Writes `answers` as the call's outputs; returns their count.
fn answer(answers: &[i64]) -> usize {
    OUT.with(|o| {
        let mut o = o.borrow_mut();
        o.clear();
        o.extend(answers.iter().map(|&a| a as u64));
        o.len()
    })
}

fn with<R>(f: impl FnOnce(&mut Held) -> R) -> R {
    HELD.with(|h| f(&mut h.borrow_mut()))
}

fn f64_of(bits: i64) -> f64 {
    f64::from_bits(bits as u64)
}

/// Where the last call's answers start (u64s, as many as it returned).
#[no_mangle]
pub extern "C" fn bay_trace_out() -> *const u64 {
    OUT.with(|o| o.borrow().as_ptr())
}

/// Drops every held object: the state at the start of a trace.
#[no_mangle]
pub extern "C" fn bay_trace_reset() {
    with(|h| *h = Held::default());
}

// The rate word.

fn rate_limit(h: &Held) -> Option<RateLimit> {
    let (interval_ns, frac, burst) = h.rate_limit;
    RateLimit::from_parts(interval_ns, frac, burst).ok()
}

/// `rate_limit_new`: status, then the held limit's fields.
#[no_mangle]
pub extern "C" fn bay_rate_limit_new(limit_per_s: i64, burst: i64) -> usize {
    with(|h| {
        let status = match RateLimit::new(f64_of(limit_per_s), burst) {
            Ok(limit) => {
                h.rate_limit = limit.parts();
                0
            }
            Err(e) => rate_status(e),
        };
        let (a, b, c) = h.rate_limit;
        answer(&[status, a as i64, b.into(), c.into()])
    })
}

/// `rate_limit_set`: the held limit's fields, raw.
#[no_mangle]
pub extern "C" fn bay_rate_limit_set(interval_ns: i64, interval_frac: i64, burst: i64) -> usize {
    with(|h| h.rate_limit = (interval_ns as u64, interval_frac as u32, burst as u32));
    answer(&[])
}

/// `rate_set`: the word, raw.
#[no_mangle]
pub extern "C" fn bay_rate_set(state: i64) -> usize {
    with(|h| h.rate = state as u64);
    answer(&[])
}

/// `rate_allow`: the decision, then the word.
#[no_mangle]
pub extern "C" fn bay_rate_allow(now: i64) -> usize {
    with(|h| {
        let word = AtomicU64::new(h.rate);
        let ok = rate_limit(h).is_some_and(|limit| rate::allow(&word, &limit, now));
        h.rate = word.into_inner();
        answer(&[ok.into(), h.rate as i64])
    })
}

/// `rate_next`.
#[no_mangle]
pub extern "C" fn bay_rate_next(now: i64) -> usize {
    with(|h| {
        let word = AtomicU64::new(h.rate);
        let next = rate_limit(h).map_or(i64::MAX, |limit| rate::next(&word, &limit, now));
        answer(&[next])
    })
}

// The GCRA word.

fn gcra_limit(h: &Held) -> Option<GcraLimit> {
    let (per_token, tolerance, shift, reserved) = h.gcra_limit;
    if reserved != 0 {
        return None;
    }
    GcraLimit::from_parts(per_token, tolerance, shift).ok()
}

/// `gcra_limit_new`: status, then the held limit's fields.
#[no_mangle]
pub extern "C" fn bay_gcra_limit_new(rate_per_s: i64, burst: i64) -> usize {
    with(|h| {
        let status = match GcraLimit::new(f64_of(rate_per_s), burst) {
            Ok(limit) => {
                let (p, t, s) = limit.parts();
                h.gcra_limit = (p, t, s, 0);
                0
            }
            Err(e) => gcra_status(e),
        };
        let (p, t, s, r) = h.gcra_limit;
        answer(&[status, p as i64, t, s.into(), r.into()])
    })
}

/// `gcra_limit_set`: the held limit's fields, raw.
#[no_mangle]
pub extern "C" fn bay_gcra_limit_set(
    per_token: i64,
    tolerance: i64,
    shift: i64,
    reserved: i64,
) -> usize {
    with(|h| h.gcra_limit = (per_token as u64, tolerance, shift as u32, reserved as u32));
    answer(&[])
}

/// `gcra_set`: the word, raw.
#[no_mangle]
pub extern "C" fn bay_gcra_set(state: i64) -> usize {
    with(|h| h.gcra = state as u64);
    answer(&[])
}

/// `gcra_allow_n`: the decision, then the word.
#[no_mangle]
pub extern "C" fn bay_gcra_allow_n(now: i64, n: i64) -> usize {
    with(|h| {
        let word = AtomicU64::new(h.gcra);
        let ok = gcra_limit(h).is_some_and(|limit| gcra::allow_n(&word, &limit, now, n));
        h.gcra = word.into_inner();
        answer(&[ok.into(), h.gcra as i64])
    })
}

/// `gcra_allow`: `gcra_allow_n` of one.
#[no_mangle]
pub extern "C" fn bay_gcra_allow(now: i64) -> usize {
    bay_gcra_allow_n(now, 1)
}

/// `gcra_next`.
#[no_mangle]
pub extern "C" fn bay_gcra_next(now: i64) -> usize {
    with(|h| {
        let word = AtomicU64::new(h.gcra);
        answer(&[gcra_limit(h).map_or(i64::MAX, |limit| gcra::next(&word, &limit, now))])
    })
}

/// `gcra_room`.
#[no_mangle]
pub extern "C" fn bay_gcra_room(now: i64) -> usize {
    with(|h| {
        let word = AtomicU64::new(h.gcra);
        answer(&[gcra_limit(h).map_or(0, |limit| gcra::room(&word, &limit, now))])
    })
}

// The sliding window, the period counter and the gate: one held handle each.

/// `sliding_new`: status.
#[no_mangle]
pub extern "C" fn bay_sliding_new(quota: i64, window_ns: i64) -> usize {
    let (made, status) = match Sliding::new(quota, window_ns) {
        Ok(s) => (Some(s), 0),
        Err(SlidingError::Quota) => (None, QUOTA),
        Err(SlidingError::Window) => (None, SLIDING_WINDOW),
        Err(SlidingError::TooLarge) => (None, TOO_LARGE),
        Err(SlidingError::NoMemory) => (None, NO_MEMORY),
    };
    with(|h| h.sliding = made);
    answer(&[status])
}

/// `sliding_take`.
#[no_mangle]
pub extern "C" fn bay_sliding_take(now: i64) -> usize {
    let ok = with(|h| h.sliding.as_mut().is_some_and(|s| s.take(now)));
    answer(&[ok.into()])
}

/// `sliding_left`.
#[no_mangle]
pub extern "C" fn bay_sliding_left(now: i64) -> usize {
    answer(&[with(|h| h.sliding.as_ref().map_or(0, |s| s.left(now)))])
}

/// `sliding_next`.
#[no_mangle]
pub extern "C" fn bay_sliding_next(now: i64) -> usize {
    answer(&[with(|h| {
        h.sliding.as_ref().map_or(i64::MAX, |s| s.next(now))
    })])
}

/// `sliding_reconfigure`: status (1, NULL, with no window held). The ring
/// grows as a heap handle's does.
#[no_mangle]
pub extern "C" fn bay_sliding_reconfigure(quota: i64, window_ns: i64) -> usize {
    let status = with(|h| {
        h.sliding.as_mut().map_or(1, |s| {
            let grown = match usize::try_from(quota) {
                Ok(size) if size > s.capacity() && window_ns > 0 && size < 1 << 24 => s
                    .reconfigure_into(vec![0; size], window_ns)
                    .map(|grown| *s = grown),
                _ => s.reconfigure(quota, window_ns),
            };
            match grown {
                Ok(()) => 0,
                Err(SlidingError::Quota) => QUOTA,
                Err(SlidingError::Window) => SLIDING_WINDOW,
                Err(SlidingError::TooLarge) => TOO_LARGE,
                Err(SlidingError::NoMemory) => NO_MEMORY,
            }
        })
    });
    answer(&[status])
}

/// `period_new`: status.
#[no_mangle]
pub extern "C" fn bay_period_new(quota: i64, period_ns: i64, align: i64) -> usize {
    let (made, status) = match Period::new(quota, period_ns, align != 0) {
        Ok(p) => (Some(p), 0),
        Err(PeriodError::Zero | PeriodError::Negative) => (None, QUOTA),
    };
    with(|h| h.period = made);
    answer(&[status])
}

/// `period_take`: 0 under, 1 hit, 2 over (`weir_period_quota`).
#[no_mangle]
pub extern "C" fn bay_period_take(now: i64) -> usize {
    let quota = with(|h| h.period.as_mut().map_or(PeriodQuota::Over, |p| p.take(now)));
    answer(&[match quota {
        PeriodQuota::Under => 0,
        PeriodQuota::Hit => 1,
        PeriodQuota::Over => 2,
    }])
}

/// `period_left`.
#[no_mangle]
pub extern "C" fn bay_period_left(now: i64) -> usize {
    answer(&[with(|h| h.period.as_ref().map_or(0, |p| p.left(now)))])
}

/// `period_next`.
#[no_mangle]
pub extern "C" fn bay_period_next(now: i64) -> usize {
    answer(&[with(|h| {
        h.period.as_ref().map_or(i64::MAX, |p| p.next(now))
    })])
}

/// `period_reconfigure`: status (1, NULL, with no counter held).
#[no_mangle]
pub extern "C" fn bay_period_reconfigure(quota: i64, period_ns: i64, align: i64) -> usize {
    let status = with(|h| {
        h.period
            .as_mut()
            .map_or(1, |p| match p.reconfigure(quota, period_ns, align != 0) {
                Ok(()) => 0,
                Err(PeriodError::Zero | PeriodError::Negative) => QUOTA,
            })
    });
    answer(&[status])
}

/// `gate_new`: status (a gate takes any limit).
#[no_mangle]
pub extern "C" fn bay_gate_new(limit: i64) -> usize {
    with(|h| h.gate = Some(Gate::new(limit)));
    answer(&[0])
}

/// `gate_enter`.
#[no_mangle]
pub extern "C" fn bay_gate_enter() -> usize {
    answer(&[with(|h| h.gate.as_ref().is_some_and(Gate::enter)).into()])
}

/// `gate_leave`.
#[no_mangle]
pub extern "C" fn bay_gate_leave() -> usize {
    with(|h| h.gate.as_ref().map(Gate::leave));
    answer(&[])
}

/// `gate_held`.
#[no_mangle]
pub extern "C" fn bay_gate_held() -> usize {
    answer(&[with(|h| h.gate.as_ref().map_or(0, Gate::held))])
}

/// `gate_reconfigure`: status (1, NULL, with no gate held).
#[no_mangle]
pub extern "C" fn bay_gate_reconfigure(limit: i64) -> usize {
    let status = with(|h| {
        h.gate.as_mut().map_or(1, |g| {
            g.reconfigure(limit);
            0
        })
    });
    answer(&[status])
}

// Deadlines: a held value.

/// `deadline_start`: the returned value's fields; it becomes the held one.
#[no_mangle]
pub extern "C" fn bay_deadline_start(budget_ns: i64, now: i64) -> usize {
    let d = Deadline::start(budget_ns, now);
    with(|h| h.deadline = (d.start, d.budget_ns));
    answer(&[d.start, d.budget_ns])
}

/// `deadline_set`: the held value's fields, raw.
#[no_mangle]
pub extern "C" fn bay_deadline_set(start: i64, budget_ns: i64) -> usize {
    with(|h| h.deadline = (start, budget_ns));
    answer(&[])
}

fn deadline(h: &Held) -> Deadline {
    Deadline {
        start: h.deadline.0,
        budget_ns: h.deadline.1,
    }
}

/// `deadline_expired`.
#[no_mangle]
pub extern "C" fn bay_deadline_expired(now: i64) -> usize {
    answer(&[with(|h| deadline(h).expired(now)).into()])
}

/// `deadline_remaining`: whether there is time left, then it (0 when not).
#[no_mangle]
pub extern "C" fn bay_deadline_remaining(now: i64) -> usize {
    let left = with(|h| deadline(h).remaining(now));
    answer(&[left.is_some().into(), left.unwrap_or(0)])
}

// The token bucket: one held handle.

/// `bucket_new`: status.
#[no_mangle]
pub extern "C" fn bay_bucket_new(rate: i64, burst: i64, now: i64) -> usize {
    let (made, status) = match Bucket::new(f64_of(rate), f64_of(burst), now) {
        Ok(b) => (Some(b), 0),
        Err(BucketError::NotFinite) => (None, NOT_FINITE),
        Err(BucketError::Negative) => (None, NEGATIVE),
        Err(BucketError::TooLarge) => (None, TOO_LARGE),
    };
    with(|h| h.bucket = made);
    answer(&[status])
}

/// `bucket_take`: one token by the one-token path, as the C call does.
#[no_mangle]
pub extern "C" fn bay_bucket_take(now: i64, n: i64) -> usize {
    let n = f64_of(n);
    let ok = with(|h| {
        h.bucket.as_ref().is_some_and(|b| {
            if n == 1.0 {
                b.take_one(now)
            } else {
                b.take(now, n)
            }
        })
    });
    answer(&[ok.into()])
}

/// `bucket_refund`: status.
#[no_mangle]
pub extern "C" fn bay_bucket_refund(now: i64, taken_at: i64, n: i64) -> usize {
    let status = with(|h| {
        h.bucket.as_ref().map_or(1, |b| {
            b.refund(now, taken_at, f64_of(n))
                .map_or_else(refund_status, |_| 0)
        })
    });
    answer(&[status])
}

/// `bucket_next`.
#[no_mangle]
pub extern "C" fn bay_bucket_next(now: i64, n: i64) -> usize {
    answer(&[with(|h| {
        h.bucket
            .as_ref()
            .map_or(i64::MAX, |b| b.next(now, f64_of(n)))
    })])
}

/// `bucket_tokens`: a double, as its bits.
#[no_mangle]
pub extern "C" fn bay_bucket_tokens(now: i64) -> usize {
    let tokens = with(|h| h.bucket.as_ref().map_or(0.0, |b| b.tokens(now)));
    answer(&[tokens.to_bits() as i64])
}

/// `bucket_reconfigure`: status (1, NULL, with no bucket held).
#[no_mangle]
pub extern "C" fn bay_bucket_reconfigure(rate: i64, burst: i64, now: i64) -> usize {
    let status = with(|h| {
        h.bucket.as_mut().map_or(1, |b| {
            match b.reconfigure(f64_of(rate), f64_of(burst), now) {
                Ok(()) => 0,
                Err(BucketError::NotFinite) => NOT_FINITE,
                Err(BucketError::Negative) => NEGATIVE,
                Err(BucketError::TooLarge) => TOO_LARGE,
            }
        })
    });
    answer(&[status])
}

// The limiter: a held value.

fn limiter_made(made: Result<Limiter, LimiterError>) -> usize {
    let status = match made {
        Ok(l) => {
            with(|h| h.limiter = Some(l));
            0
        }
        Err(e) => limiter_status(e),
    };
    answer(&[status])
}

/// `limiter_bucket`: status.
#[no_mangle]
pub extern "C" fn bay_limiter_bucket(
    capacity: i64,
    amount: i64,
    interval_ns: i64,
    last_refill: i64,
    initial: i64,
    now: i64,
) -> usize {
    limiter_made(Limiter::bucket(
        capacity as u64,
        amount as u64,
        interval_ns,
        last_refill,
        initial as u64,
        now,
    ))
}

/// `limiter_fixed_window`: status.
#[no_mangle]
pub extern "C" fn bay_limiter_fixed_window(
    capacity: i64,
    window_ns: i64,
    start: i64,
    initial: i64,
    now: i64,
) -> usize {
    limiter_made(Limiter::fixed_window(
        capacity as u64,
        window_ns,
        start,
        initial as u64,
        now,
    ))
}

/// `limiter_cooldown`: status.
#[no_mangle]
pub extern "C" fn bay_limiter_cooldown(
    capacity: i64,
    cooldown_ns: i64,
    end: i64,
    initial: i64,
    now: i64,
) -> usize {
    limiter_made(Limiter::cooldown(
        capacity as u64,
        cooldown_ns,
        end,
        initial as u64,
        now,
    ))
}

/// The held limiter's answer, or `none` when no constructor succeeded
/// (the traces make no such call outside `limiter-zeroed.trace`).
fn on_limiter<R>(none: R, f: impl FnOnce(&mut Limiter) -> R) -> R {
    with(|h| h.limiter.as_mut().map_or(none, f))
}

/// `limiter_consume`: status.
#[no_mangle]
pub extern "C" fn bay_limiter_consume(now: i64, amount: i64) -> usize {
    let r = on_limiter(Err(LimiterError::WrongVariant), |l| {
        l.consume(now, amount as u64)
    });
    answer(&[r.map_or_else(limiter_status, |()| 0)])
}

/// `limiter_try_consume`: whether the consume succeeded.
#[no_mangle]
pub extern "C" fn bay_limiter_try_consume(now: i64, amount: i64) -> usize {
    let ok = on_limiter(false, |l| l.consume(now, amount as u64).is_ok());
    answer(&[ok.into()])
}

/// `limiter_refund`: status.
#[no_mangle]
pub extern "C" fn bay_limiter_refund(now: i64, taken_at: i64, amount: i64) -> usize {
    let status = on_limiter(0, |l| {
        l.refund(now, taken_at, amount as u64)
            .map_or_else(refund_status, |_| 0)
    });
    answer(&[status])
}

/// `limiter_available`.
#[no_mangle]
pub extern "C" fn bay_limiter_available(now: i64) -> usize {
    answer(&[on_limiter(0, |l| l.available(now)) as i64])
}

/// `limiter_capacity`.
#[no_mangle]
pub extern "C" fn bay_limiter_capacity() -> usize {
    answer(&[on_limiter(0, |l| l.capacity()) as i64])
}

/// A reading: its status, then its value (0 when not written).
fn limiter_reading(f: impl FnOnce(&mut Limiter) -> Result<i64, LimiterError>) -> usize {
    match on_limiter(Err(LimiterError::WrongVariant), f) {
        Ok(v) => answer(&[0, v]),
        Err(e) => answer(&[limiter_status(e), 0]),
    }
}

/// `limiter_last_refill`.
#[no_mangle]
pub extern "C" fn bay_limiter_last_refill(now: i64) -> usize {
    limiter_reading(|l| l.last_refill(now))
}

/// `limiter_window_start`.
#[no_mangle]
pub extern "C" fn bay_limiter_window_start(now: i64) -> usize {
    limiter_reading(|l| l.window_start(now))
}

/// `limiter_cooldown_end`.
#[no_mangle]
pub extern "C" fn bay_limiter_cooldown_end() -> usize {
    limiter_reading(|l| l.cooldown_end())
}
