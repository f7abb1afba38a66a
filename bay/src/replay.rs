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
//! Errors answer the C statuses (`weir_status` codes of `include/weir.h`):
//! each weir-core error's own `code()`, the one mapping the C library uses
//! too, and for the checks only the C surface makes (its policy structs'
//! enumeration and reserved fields, a charge item's cost) the codes below.
//!
//! The calls whose arguments vary in number or hold a key
//! (`backoff_schedule`, `bloom_allow`, `bloom_next`, `charge_all`) take no
//! parameters: they read their tokens from the buffer [`bay_trace_in`]
//! hands out, one 64-bit pattern each, a key being its length followed by
//! one pattern per byte. Single threaded, as a page is: one held object of
//! each type.

use std::cell::RefCell;
use std::sync::atomic::AtomicU64;

use weir_core::backoff::{Backoff, BackoffJitter};
use weir_core::bloom::{Bloom, BloomLimit, BloomShape};
use weir_core::breaker::{Breaker, BreakerPolicy, BreakerPolicyError, BreakerTicket};
use weir_core::bucket::Bucket;
use weir_core::budget::Budget;
use weir_core::charge::{self, ChargeAnswer, ChargeItem, MAX_ITEMS};
use weir_core::concurrency::{Concurrency, ConcurrencyPolicy, ConcurrencyTicket};
use weir_core::deadline::Deadline;
use weir_core::gate::Gate;
use weir_core::gcra::{self, GcraError, GcraLimit};
use weir_core::keyed::{self, Decision, Keyed, KeyedShape, Overflow};
use weir_core::lease::{Lease, LeasePolicy, LeaseTake};
use weir_core::limiter::{Limiter, LimiterError};
use weir_core::partitioned::{Partition, PartitionError, Partitioned, MAX_PARTITIONS};
use weir_core::period::{Period, PeriodQuota};
use weir_core::pool::{Pool, PoolPolicy, PoolPolicyError, PoolSlot, PoolTaken};
use weir_core::rate::{self, RateError, RateLimit};
use weir_core::shedder::{
    Criticality, Settled, Shedder, ShedderFront, ShedderPolicy, ShedderPolicyError, ShedderTicket,
};
use weir_core::sliding::Sliding;
use weir_core::time::NEVER;
use weir_core::window::{Window, WindowError, WindowTotal};

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
    /// The backoff policy's fields, raw: none until a line sets them (the
    /// preset, as at the start of a trace).
    backoff: Option<BackoffFields>,
    /// The handle types: none until a constructor succeeds.
    bucket: Option<Bucket>,
    /// The limiter: none until a constructor succeeds (a failed one keeps
    /// the held limiter, as the C value is written only on success).
    limiter: Option<Limiter>,
    sliding: Option<Sliding>,
    period: Option<Period>,
    gate: Option<Gate>,
    window: Option<Window<WindowTotal>>,
    budget: Option<Budget>,
    concurrency: Option<Partitioned>,
    breaker: Option<Breaker>,
    shedder: Option<Shedder>,
    pool: Option<Pool>,
    bloom: Option<Bloom>,
    /// The held bloom's shape with the limit in force, for a charge item
    /// (which borrows it).
    bloom_shape: Option<BloomShape>,
    lease: Option<Lease>,
    keyed: Option<Keyed>,
    /// Ticket slots: the k-th allow or enter line of a trace writes slot k.
    tickets: Vec<Ticket>,
}

/// A ticket slot, as the C replay's ticket structs hold it.
#[derive(Clone, Copy)]
enum Ticket {
    Breaker(BreakerTicket),
    Shedder(ShedderTicket),
    /// The ticket and whether it is still in flight (`flying`).
    Concurrency(ConcurrencyTicket, bool),
}

thread_local! {
    static HELD: RefCell<Held> = RefCell::new(Held::default());
    static OUT: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    static IN: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

// The statuses of checks the C surface makes itself, on the fields of its
// policy and item structs, which have no weir-core error (`weir_status` in
// include/weir.h). Every weir-core error answers its own code, `code()`.
/// `WEIR_ERR_NULL`: a charge item's missing bucket, bloom or key.
const NULL: i64 = 1;
/// `WEIR_ERR_SETTLED`: a concurrency ticket no longer in flight.
const SETTLED: i64 = 9;
/// `WEIR_ERR_UNKNOWN_KIND`: a jitter, budget form or charge kind that
/// names no case.
const UNKNOWN_KIND: i64 = 10;
/// `WEIR_ERR_RESERVED`: a reserved field that is not zero.
const RESERVED: i64 = 12;
/// `WEIR_ERR_CHARGE_COST`: a charge item's cost.
const CHARGE_COST: i64 = 81;
/// `WEIR_ERR_BREAKER_REFUSALS`: `skip_refusals` neither 0 nor 1.
const BREAKER_REFUSALS: i64 = 333;
/// `WEIR_ERR_SHEDDER_CLASS`: a class outside the four.
const SHEDDER_CLASS: i64 = 350;
/// `WEIR_ERR_NEGATIVE`: a negative `now` where a status is answered.
const NEGATIVE: i64 = 4;
/// `WEIR_ERR_KEYED_OVERFLOW`: an overflow policy that names no case.
const KEYED_OVERFLOW: i64 = 451;
/// `WEIR_ERR_KEYED_SIZING`: a chance the sizing does not take.
const KEYED_SIZING: i64 = 452;
/// `WEIR_ERR_KEYED_COUNT`: a count outside 1..=burst.
const KEYED_COUNT: i64 = 453;

/// A weir-core error's status.
fn code_status(code: i32) -> i64 {
    code.into()
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

/// Room for `n` argument patterns of a call that reads them from this
/// buffer; returns where to write them.
#[no_mangle]
pub extern "C" fn bay_trace_in(n: usize) -> *mut u64 {
    IN.with(|i| {
        let mut i = i.borrow_mut();
        i.clear();
        i.resize(n, 0);
        i.as_mut_ptr()
    })
}

/// The arguments [`bay_trace_in`]'s buffer holds, read in order.
struct Args {
    tokens: Vec<u64>,
    at: usize,
}

impl Args {
    fn take() -> Args {
        Args {
            tokens: IN.with(|i| i.borrow().clone()),
            at: 0,
        }
    }

    fn u64(&mut self) -> u64 {
        let t = self.tokens[self.at];
        self.at += 1;
        t
    }

    fn i64(&mut self) -> i64 {
        self.u64() as i64
    }

    fn f64(&mut self) -> f64 {
        f64::from_bits(self.u64())
    }

    fn key(&mut self) -> Vec<u8> {
        let n = self.u64() as usize;
        (0..n).map(|_| self.u64() as u8).collect()
    }
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
            Err(e) => code_status(e.code()),
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
            Err(e) => code_status(e.code()),
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
        Err(e) => (None, code_status(e.code())),
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
            grown.map_or_else(|e| code_status(e.code()), |()| 0)
        })
    });
    answer(&[status])
}

/// `period_new`: status.
#[no_mangle]
pub extern "C" fn bay_period_new(quota: i64, period_ns: i64, align: i64) -> usize {
    let (made, status) = match Period::new(quota, period_ns, align != 0) {
        Ok(p) => (Some(p), 0),
        Err(e) => (None, code_status(e.code())),
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
        h.period.as_mut().map_or(1, |p| {
            p.reconfigure(quota, period_ns, align != 0)
                .map_or_else(|e| code_status(e.code()), |()| 0)
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
        Err(e) => (None, code_status(e.code())),
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
                .map_or_else(|e| code_status(e.code()), |_| 0)
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
            b.reconfigure(f64_of(rate), f64_of(burst), now)
                .map_or_else(|e| code_status(e.code()), |()| 0)
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
        Err(e) => code_status(e.code()),
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
    answer(&[r.map_or_else(|e| code_status(e.code()), |()| 0)])
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
            .map_or_else(|e| code_status(e.code()), |_| 0)
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
        Err(e) => answer(&[code_status(e.code()), 0]),
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

// Backoff: a held policy value, as its C fields.

/// A `weir_backoff`'s fields: base_ns, factor, cap_ns, attempts, jitter, spread.
type BackoffFields = (i64, f64, i64, i32, i32, f64);

/// `weir_backoff_preset()`'s fields (`WEIR_BACKOFF_JITTER_SPREAD` is 4).
const BACKOFF_PRESET: BackoffFields = (100_000_000, 2.0, 1_000_000_000, 3, 4, 0.2);

fn backoff_fields(h: &Held) -> BackoffFields {
    h.backoff.unwrap_or(BACKOFF_PRESET)
}

/// The held policy, checked as `weir_backoff_check` checks it.
fn backoff(h: &Held) -> Result<Backoff, i64> {
    let (base, factor, cap, attempts, jitter, spread) = backoff_fields(h);
    let jitter = match jitter {
        0 => BackoffJitter::Rigid,
        1 => BackoffJitter::Full,
        2 => BackoffJitter::Equal,
        3 => BackoffJitter::Decorrelated,
        4 => BackoffJitter::Spread,
        _ => return Err(UNKNOWN_KIND),
    };
    Backoff::new(base, factor, cap, attempts, jitter, spread).map_err(|e| code_status(e.code()))
}

fn answer_backoff(fields: BackoffFields) -> usize {
    let (base, factor, cap, attempts, jitter, spread) = fields;
    answer(&[
        base,
        factor.to_bits() as i64,
        cap,
        attempts.into(),
        jitter.into(),
        spread.to_bits() as i64,
    ])
}

/// `backoff_preset`: the preset's fields; it becomes the held policy.
#[no_mangle]
pub extern "C" fn bay_backoff_preset() -> usize {
    with(|h| h.backoff = Some(BACKOFF_PRESET));
    answer_backoff(BACKOFF_PRESET)
}

/// `backoff_full_jitter`: the preset with full jitter (1).
#[no_mangle]
pub extern "C" fn bay_backoff_full_jitter() -> usize {
    let (base, factor, cap, attempts, _, spread) = BACKOFF_PRESET;
    let fields = (base, factor, cap, attempts, 1, spread);
    with(|h| h.backoff = Some(fields));
    answer_backoff(fields)
}

/// `backoff_set`: the held policy's fields, raw.
#[no_mangle]
pub extern "C" fn bay_backoff_set(
    base_ns: i64,
    factor: i64,
    cap_ns: i64,
    attempts: i64,
    jitter: i64,
    spread: i64,
) -> usize {
    let fields = (
        base_ns,
        f64_of(factor),
        cap_ns,
        attempts as i32,
        jitter as i32,
        f64_of(spread),
    );
    with(|h| h.backoff = Some(fields));
    answer(&[])
}

/// `backoff_check`: status.
#[no_mangle]
pub extern "C" fn bay_backoff_check() -> usize {
    answer(&[with(|h| backoff(h).map_or_else(|e| e, |_| 0))])
}

/// `backoff_more`: false for an invalid policy.
#[no_mangle]
pub extern "C" fn bay_backoff_more(made: i64) -> usize {
    let more = with(|h| backoff(h).is_ok_and(|p| p.more(made as i32)));
    answer(&[more.into()])
}

/// `backoff_delay`: -1 for an invalid policy.
#[no_mangle]
pub extern "C" fn bay_backoff_delay(retry: i64, random: i64, previous_ns: i64) -> usize {
    let delay =
        with(|h| backoff(h).map_or(-1, |p| p.delay(retry as i32, f64_of(random), previous_ns)));
    answer(&[delay])
}

/// `backoff_ceiling`: -1 for an invalid policy.
#[no_mangle]
pub extern "C" fn bay_backoff_ceiling(retry: i64) -> usize {
    answer(&[with(|h| backoff(h).map_or(-1, |p| p.ceiling(retry as i32)))])
}

/// `backoff_schedule <cap> <n> <random>...` (from the input buffer): the
/// count written (`cap` at most), then the delays.
#[no_mangle]
pub extern "C" fn bay_backoff_schedule() -> usize {
    let mut args = Args::take();
    let cap = usize::try_from(args.u64()).unwrap_or(usize::MAX);
    let n = args.u64() as usize;
    let randoms: Vec<f64> = (0..n).map(|_| args.f64()).collect();
    let Ok(p) = with(|h| backoff(h)) else {
        return answer(&[0]);
    };
    let count = cap.min(p.retries());
    let randoms = &randoms[..n.min(p.retries())];
    let mut out = vec![count as i64];
    out.extend(p.delays(randoms).take(count));
    answer(&out)
}

// The bucketed rolling window: one held handle.

/// `window_new`: status.
#[no_mangle]
pub extern "C" fn bay_window_new(size: i64, window_ns: i64, now: i64) -> usize {
    let made = Window::new(i64::from(size as i32), window_ns, now);
    let status = made.as_ref().map_or_else(|e| code_status(e.code()), |_| 0);
    with(|h| h.window = made.ok());
    answer(&[status])
}

/// `window_add`: status (0: a held window takes any value).
#[no_mangle]
pub extern "C" fn bay_window_add(now: i64, value: i64) -> usize {
    with(|h| h.window.as_mut().map(|w| w.add(now, value)));
    answer(&[0])
}

/// `window_read_total`: status, then the sum and count.
#[no_mangle]
pub extern "C" fn bay_window_read_total(now: i64, current: i64) -> usize {
    let total = with(|h| h.window.as_ref().map(|w| w.total(now, current != 0)));
    let total = total.unwrap_or_default();
    answer(&[0, total.sum, total.count])
}

/// `window_read_buckets`: how many it wrote (`cap` at most: the newest),
/// then each one's sum and count, oldest first.
#[no_mangle]
pub extern "C" fn bay_window_read_buckets(now: i64, current: i64, cap: i64) -> usize {
    let current = current != 0;
    let out = with(|h| {
        let Some(w) = h.window.as_ref() else {
            return vec![0];
        };
        let live = w.size() - usize::from(!current);
        let room = usize::try_from(cap as u64).unwrap_or(usize::MAX).min(live);
        let skip = live - room;
        let mut out = vec![room as i64];
        let mut seen = 0;
        w.each(now, current, |b| {
            if seen >= skip {
                out.extend([b.sum, b.count]);
            }
            seen += 1;
        });
        out
    });
    answer(&out)
}

/// `window_reconfigure`: status (1, NULL, with no window held), checked
/// in the C call's order. A window of the same size keeps its buckets;
/// another size moves into new ones, as a heap window's does.
#[no_mangle]
pub extern "C" fn bay_window_reconfigure(size: i64, window_ns: i64, now: i64) -> usize {
    let status = with(|h| {
        let Some(window) = h.window.as_mut() else {
            return NULL;
        };
        let changed = (|| {
            if window_ns <= 0 {
                return Err(WindowError::Span);
            }
            let count = i64::from(size as i32).max(1);
            if count > weir_core::window::MAX_SIZE {
                return Err(WindowError::TooLarge);
            }
            // 1 <= count <= MAX_SIZE.
            let count = count as usize;
            if count == window.size() {
                return window.reconfigure(window_ns, now);
            }
            let mut ring = Vec::new();
            ring.try_reserve_exact(count)
                .map_err(|_| WindowError::NoMemory)?;
            ring.resize(count, WindowTotal::default());
            *window = window.reconfigure_into(ring, window_ns, now)?;
            Ok(())
        })();
        changed.map_or_else(|e| code_status(e.code()), |()| 0)
    });
    answer(&[status])
}

/// `window_size`.
#[no_mangle]
pub extern "C" fn bay_window_size() -> usize {
    answer(&[with(|h| h.window.as_ref().map_or(0, |w| w.size() as i32)).into()])
}

/// `window_width`.
#[no_mangle]
pub extern "C" fn bay_window_width() -> usize {
    answer(&[with(|h| h.window.as_ref().map_or(0, Window::width))])
}

// The retry budget: one held handle.

/// `budget_new`: status; `form` 0 is tokens, 1 percent (`weir_budget_policy`).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn bay_budget_new(
    form: i64,
    max_tokens: i64,
    token_ratio: i64,
    ttl_ns: i64,
    min_per_s: i64,
    reserved: i64,
    percent: i64,
    now: i64,
) -> usize {
    let made = if reserved as i32 != 0 {
        Err(RESERVED)
    } else {
        match form as i32 {
            0 => Budget::tokens(max_tokens as i32, f64_of(token_ratio)),
            1 => Budget::percent(ttl_ns, min_per_s as i32, f64_of(percent), now),
            _ => return made_none(|h| h.budget = None, UNKNOWN_KIND),
        }
        .map_err(|e| code_status(e.code()))
    };
    let status = made.as_ref().map_or_else(|&e| e, |_| 0);
    with(|h| h.budget = made.ok());
    answer(&[status])
}

/// A constructor's failure: drops the held handle (`clear`) and answers
/// the status.
fn made_none(clear: impl FnOnce(&mut Held), status: i64) -> usize {
    with(clear);
    answer(&[status])
}

/// `budget_reconfigure`: status (1, NULL, with no budget held), checked in
/// the C call's order; the new policy's budget made at `now`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn bay_budget_reconfigure(
    form: i64,
    max_tokens: i64,
    token_ratio: i64,
    ttl_ns: i64,
    min_per_s: i64,
    reserved: i64,
    percent: i64,
    now: i64,
) -> usize {
    let status = with(|h| {
        let Some(budget) = h.budget.as_mut() else {
            return NULL;
        };
        if reserved as i32 != 0 {
            return RESERVED;
        }
        let to = match form as i32 {
            0 => Budget::tokens(max_tokens as i32, f64_of(token_ratio)),
            1 => Budget::percent(ttl_ns, min_per_s as i32, f64_of(percent), now),
            _ => return UNKNOWN_KIND,
        };
        match to {
            Ok(to) => {
                budget.reconfigure(to, now);
                0
            }
            Err(e) => code_status(e.code()),
        }
    });
    answer(&[status])
}

/// `budget_deposit`.
#[no_mangle]
pub extern "C" fn bay_budget_deposit(now: i64) -> usize {
    with(|h| h.budget.as_mut().map(|b| b.deposit(now)));
    answer(&[])
}

/// `budget_withdraw`.
#[no_mangle]
pub extern "C" fn bay_budget_withdraw(now: i64) -> usize {
    answer(&[with(|h| h.budget.as_mut().is_some_and(|b| b.withdraw(now))).into()])
}

/// `budget_left`.
#[no_mangle]
pub extern "C" fn bay_budget_left(now: i64) -> usize {
    answer(&[with(|h| h.budget.as_ref().map_or(0, |b| b.left(now)))])
}

/// `budget_tokens`.
#[no_mangle]
pub extern "C" fn bay_budget_tokens(now: i64) -> usize {
    answer(&[with(|h| h.budget.as_ref().map_or(0, |b| b.tokens_at(now)))])
}

// The adaptive concurrency limit: one held handle (partitioned or not).

#[allow(clippy::too_many_arguments)]
fn concurrency_policy(
    initial_limit: i64,
    min_limit: i64,
    max_limit: i64,
    queue_size: i64,
    smoothing: i64,
    tolerance: i64,
    long_window: i64,
    warmup: i64,
) -> ConcurrencyPolicy {
    ConcurrencyPolicy {
        initial_limit: initial_limit as i32,
        min_limit: min_limit as i32,
        max_limit: max_limit as i32,
        queue_size: queue_size as i32,
        smoothing: f64_of(smoothing),
        tolerance: f64_of(tolerance),
        long_window: long_window as i32,
        warmup: warmup as i32,
    }
}

/// `concurrency_new`: status.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn bay_concurrency_new(
    initial_limit: i64,
    min_limit: i64,
    max_limit: i64,
    queue_size: i64,
    smoothing: i64,
    tolerance: i64,
    long_window: i64,
    warmup: i64,
) -> usize {
    let policy = concurrency_policy(
        initial_limit,
        min_limit,
        max_limit,
        queue_size,
        smoothing,
        tolerance,
        long_window,
        warmup,
    );
    let made = Concurrency::new(policy);
    let status = made.as_ref().map_or_else(|e| code_status(e.code()), |_| 0);
    with(|h| h.concurrency = made.ok().map(Partitioned::from));
    answer(&[status])
}

/// `concurrency_new_partitioned <policy...> <count> <share> <borrow>
/// <share> <borrow>`: status (the line always gives two partitions; `count`
/// says how many the call reads, as in the C replay).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn bay_concurrency_new_partitioned(
    initial_limit: i64,
    min_limit: i64,
    max_limit: i64,
    queue_size: i64,
    smoothing: i64,
    tolerance: i64,
    long_window: i64,
    warmup: i64,
    count: i64,
    share0: i64,
    borrow0: i64,
    share1: i64,
    borrow1: i64,
) -> usize {
    let policy = concurrency_policy(
        initial_limit,
        min_limit,
        max_limit,
        queue_size,
        smoothing,
        tolerance,
        long_window,
        warmup,
    );
    let parts = [
        Partition {
            share: f64_of(share0),
            borrow: borrow0,
        },
        Partition {
            share: f64_of(share1),
            borrow: borrow1,
        },
    ];
    let made = Concurrency::new(policy)
        .map_err(PartitionError::Policy)
        .and_then(|_| {
            let n = usize::try_from(count as i32)
                .ok()
                .filter(|n| (1..=MAX_PARTITIONS).contains(n))
                .ok_or(PartitionError::Count)?;
            // The replay gives two partitions, as the C replay's array holds.
            let given = parts
                .get(..n)
                .expect("a trace gives at most two partitions");
            Partitioned::new(policy, given)
        });
    let status = made.as_ref().map_or_else(|e| code_status(e.code()), |_| 0);
    with(|h| h.concurrency = made.ok());
    answer(&[status])
}

/// A new ticket slot holding `ticket`.
fn new_ticket(h: &mut Held, ticket: Ticket) {
    h.tickets.push(ticket);
}

/// The concurrency ticket in `slot`.
fn concurrency_ticket(h: &Held, slot: i64) -> (ConcurrencyTicket, bool) {
    match h.tickets[slot as usize] {
        Ticket::Concurrency(t, flying) => (t, flying),
        _ => panic!("ticket slot {slot} is not a concurrency ticket"),
    }
}

/// A ticket as the C call writes it: the entry (its in-flight count held
/// in an int32_t) or, refused, one not flying.
fn concurrency_entered(entered: Option<ConcurrencyTicket>, now: i64) -> Ticket {
    match entered {
        Some(entry) => Ticket::Concurrency(
            ConcurrencyTicket {
                start: entry.start,
                inflight: entry.inflight.min(i32::MAX.into()),
            },
            true,
        ),
        None => Ticket::Concurrency(
            ConcurrencyTicket {
                start: now,
                inflight: 0,
            },
            false,
        ),
    }
}

/// `concurrency_enter`: whether it entered (writes the next ticket slot).
#[no_mangle]
pub extern "C" fn bay_concurrency_enter(now: i64) -> usize {
    let entered = with(|h| {
        let entered = h.concurrency.as_mut().and_then(|c| c.enter(now));
        new_ticket(h, concurrency_entered(entered, now));
        entered.is_some()
    });
    answer(&[entered.into()])
}

/// `concurrency_leave <slot> <now> <dropped>`: status.
#[no_mangle]
pub extern "C" fn bay_concurrency_leave(slot: i64, now: i64, dropped: i64) -> usize {
    let status = with(|h| {
        let (entry, flying) = concurrency_ticket(h, slot);
        if !flying {
            return SETTLED;
        }
        let Some(c) = h.concurrency.as_mut() else {
            return NULL;
        };
        c.leave(entry, now, dropped != 0);
        h.tickets[slot as usize] = Ticket::Concurrency(entry, false);
        0
    });
    answer(&[status])
}

/// `concurrency_enter_partition <partition> <now>`: status, then whether
/// the ticket it wrote to the next slot is flying.
#[no_mangle]
pub extern "C" fn bay_concurrency_enter_partition(partition: i64, now: i64) -> usize {
    let (status, flying) = with(|h| {
        let entered = usize::try_from(partition as i32)
            .map_err(|_| PartitionError::Unknown)
            .and_then(|i| {
                h.concurrency
                    .as_mut()
                    .expect("a held concurrency limit")
                    .enter_partition(i, now)
            });
        match entered {
            Ok(entered) => {
                new_ticket(h, concurrency_entered(entered, now));
                (0, entered.is_some())
            }
            Err(e) => {
                // The C call writes no ticket: the slot stays as it was
                // (zero: not flying).
                let unwritten = ConcurrencyTicket {
                    start: 0,
                    inflight: 0,
                };
                new_ticket(h, Ticket::Concurrency(unwritten, false));
                (code_status(e.code()), false)
            }
        }
    });
    answer(&[status, flying.into()])
}

/// `concurrency_leave_partition <partition> <slot> <now>`: status (not
/// dropped, as the C replay leaves).
#[no_mangle]
pub extern "C" fn bay_concurrency_leave_partition(partition: i64, slot: i64, now: i64) -> usize {
    let status = with(|h| {
        let Ok(i) = usize::try_from(partition as i32) else {
            return code_status(PartitionError::Unknown.code());
        };
        let (entry, flying) = concurrency_ticket(h, slot);
        if !flying {
            return SETTLED;
        }
        let c = h.concurrency.as_mut().expect("a held concurrency limit");
        match c.leave_partition(i, entry, now, false) {
            Ok(()) => {
                h.tickets[slot as usize] = Ticket::Concurrency(entry, false);
                0
            }
            Err(e) => code_status(e.code()),
        }
    });
    answer(&[status])
}

/// `concurrency_partition_flying`: 0 for a partition it does not have.
#[no_mangle]
pub extern "C" fn bay_concurrency_partition_flying(partition: i64) -> usize {
    answer(&[with(|h| {
        let c = h.concurrency.as_ref();
        usize::try_from(partition as i32)
            .ok()
            .and_then(|i| c.and_then(|c| c.flying_in(i).ok()))
            .unwrap_or(0)
    })])
}

/// `concurrency_partition_room`: 0 for a partition it does not have.
#[no_mangle]
pub extern "C" fn bay_concurrency_partition_room(partition: i64) -> usize {
    answer(&[with(|h| {
        let c = h.concurrency.as_ref();
        usize::try_from(partition as i32)
            .ok()
            .and_then(|i| c.and_then(|c| c.room(i).ok()))
            .unwrap_or(0)
    })])
}

/// `concurrency_reconfigure`: status (1, NULL, with no limit held).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn bay_concurrency_reconfigure(
    initial_limit: i64,
    min_limit: i64,
    max_limit: i64,
    queue_size: i64,
    smoothing: i64,
    tolerance: i64,
    long_window: i64,
    warmup: i64,
) -> usize {
    let policy = concurrency_policy(
        initial_limit,
        min_limit,
        max_limit,
        queue_size,
        smoothing,
        tolerance,
        long_window,
        warmup,
    );
    let status = with(|h| match h.concurrency.as_mut() {
        None => NULL,
        Some(limit) => limit
            .reconfigure(policy)
            .map_or_else(|e| code_status(e.code()), |()| 0),
    });
    answer(&[status])
}

/// `concurrency_limit`.
#[no_mangle]
pub extern "C" fn bay_concurrency_limit() -> usize {
    answer(&[with(|h| h.concurrency.as_ref().map_or(0, |c| c.limit()))])
}

/// `concurrency_flying`.
#[no_mangle]
pub extern "C" fn bay_concurrency_flying() -> usize {
    answer(&[with(|h| h.concurrency.as_ref().map_or(0, |c| c.flying()))])
}

/// `concurrency_long_rtt`: a double, as its bits.
#[no_mangle]
pub extern "C" fn bay_concurrency_long_rtt() -> usize {
    let rtt = with(|h| h.concurrency.as_ref().map_or(0.0, |c| c.long_rtt()));
    answer(&[rtt.to_bits() as i64])
}

// The circuit breaker: one held handle.

thread_local! {
    /// The next breaker's tag, as the C library numbers its breakers (from
    /// 1), so that a ticket of an earlier breaker is foreign to a later one.
    static BREAKER_TAG: RefCell<u32> = const { RefCell::new(1) };
}

/// `breaker_new`: status, checked in the C call's order.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn bay_breaker_new(
    k: i64,
    floor: i64,
    protection: i64,
    probe_ns: i64,
    size: i64,
    skip_refusals: i64,
    window_ns: i64,
    max_rejection_probability: i64,
    rps_threshold: i64,
    aggression: i64,
    now: i64,
) -> usize {
    let skip_refusals = skip_refusals as i32;
    let policy = BreakerPolicy {
        k: f64_of(k),
        floor: f64_of(floor),
        protection: f64_of(protection),
        probe_ns,
        size: size as i32,
        window_ns,
        max_rejection_probability: f64_of(max_rejection_probability),
        rps_threshold: f64_of(rps_threshold),
        aggression: f64_of(aggression),
        skip_refusals: skip_refusals != 0,
    };
    let made = breaker_checked(policy, skip_refusals)
        .and_then(|policy| Breaker::new(policy, now).map_err(|e| code_status(e.code())))
        .map(|breaker| {
            let tag = BREAKER_TAG.with(|t| {
                let mut t = t.borrow_mut();
                let tag = *t;
                *t = t.wrapping_add(1).max(1);
                tag
            });
            breaker.tagged(tag)
        });
    let status = made.as_ref().map_or_else(|&e| e, |_| 0);
    with(|h| h.breaker = made.ok());
    answer(&[status])
}

/// The checks `breaker_new` and `breaker_reconfigure` make on a policy, in
/// the C calls' order.
fn breaker_checked(policy: BreakerPolicy, skip_refusals: i32) -> Result<BreakerPolicy, i64> {
    let policy = policy.check().map_err(|e| code_status(e.code()))?;
    if i64::from(policy.size) > weir_core::window::MAX_SIZE {
        return Err(code_status(
            BreakerPolicyError::Window(WindowError::TooLarge).code(),
        ));
    }
    if !matches!(skip_refusals, 0 | 1) {
        return Err(BREAKER_REFUSALS);
    }
    Ok(policy)
}

/// `breaker_reconfigure`: status (1, NULL, with no breaker held), checked
/// in the C call's order. A breaker of the same size keeps its buckets;
/// another size moves into new ones, as a heap breaker's does.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn bay_breaker_reconfigure(
    k: i64,
    floor: i64,
    protection: i64,
    probe_ns: i64,
    size: i64,
    skip_refusals: i64,
    window_ns: i64,
    max_rejection_probability: i64,
    rps_threshold: i64,
    aggression: i64,
) -> usize {
    let skip_refusals = skip_refusals as i32;
    let policy = BreakerPolicy {
        k: f64_of(k),
        floor: f64_of(floor),
        protection: f64_of(protection),
        probe_ns,
        size: size as i32,
        window_ns,
        max_rejection_probability: f64_of(max_rejection_probability),
        rps_threshold: f64_of(rps_threshold),
        aggression: f64_of(aggression),
        skip_refusals: skip_refusals != 0,
    };
    let status = with(|h| {
        let Some(breaker) = h.breaker.as_mut() else {
            return NULL;
        };
        let changed = breaker_checked(policy, skip_refusals).and_then(|policy| {
            // 1 <= size <= MAX_SIZE once checked and raised to one.
            let size = policy.size.max(1) as usize;
            if size == breaker.policy().size as usize {
                return breaker
                    .reconfigure(policy)
                    .map_err(|e| code_status(e.code()));
            }
            let mut ring = Vec::new();
            ring.try_reserve_exact(size)
                .map_err(|_| code_status(WindowError::NoMemory.code()))?;
            ring.resize(size, Default::default());
            *breaker = breaker
                .reconfigure_into(policy, ring)
                .map_err(|e| code_status(e.code()))?;
            Ok(())
        });
        changed.map_or_else(|e| e, |()| 0)
    });
    answer(&[status])
}

/// `breaker_allow <now> <roll>`: whether it let the call through (writes
/// the next ticket slot).
#[no_mangle]
pub extern "C" fn bay_breaker_allow(now: i64, roll: i64) -> usize {
    let allowed = with(|h| {
        let breaker = h.breaker.as_mut().expect("a held breaker");
        let issued = breaker.allow(now, f64_of(roll));
        let written = issued.unwrap_or(BreakerTicket {
            breaker: breaker.tag(),
            serial: 0,
            open: false,
        });
        new_ticket(h, Ticket::Breaker(written));
        issued.is_some()
    });
    answer(&[allowed.into()])
}

fn breaker_settle(slot: i64, pass: bool, now: i64) -> usize {
    let status = with(|h| {
        let Ticket::Breaker(mut ticket) = h.tickets[slot as usize] else {
            panic!("ticket slot {slot} is not a breaker ticket");
        };
        let breaker = h.breaker.as_mut().expect("a held breaker");
        let settled = if pass {
            breaker.pass(&mut ticket, now)
        } else {
            breaker.fail(&mut ticket, now)
        };
        match settled {
            Ok(()) => {
                h.tickets[slot as usize] = Ticket::Breaker(ticket);
                0
            }
            Err(e) => code_status(e.code()),
        }
    });
    answer(&[status])
}

/// `breaker_pass <slot> <now>`: status.
#[no_mangle]
pub extern "C" fn bay_breaker_pass(slot: i64, now: i64) -> usize {
    breaker_settle(slot, true, now)
}

/// `breaker_fail <slot> <now>`: status.
#[no_mangle]
pub extern "C" fn bay_breaker_fail(slot: i64, now: i64) -> usize {
    breaker_settle(slot, false, now)
}

/// `breaker_ratio`: a double, as its bits.
#[no_mangle]
pub extern "C" fn bay_breaker_ratio(now: i64) -> usize {
    let ratio = with(|h| h.breaker.as_ref().map_or(0.0, |b| b.ratio(now)));
    answer(&[ratio.to_bits() as i64])
}

/// `breaker_read_tally`: status, then total, success, failure, drop.
#[no_mangle]
pub extern "C" fn bay_breaker_read_tally(now: i64) -> usize {
    let t = with(|h| h.breaker.as_ref().expect("a held breaker").tally(now));
    answer(&[0, t.total, t.success, t.failure, t.drop])
}

// The load shedder: one held handle.

/// `shedder_new`: status.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn bay_shedder_new(
    size: i64,
    cpu: i64,
    window_ns: i64,
    latency_ns: i64,
    beta: i64,
    cool_ns: i64,
    floor: i64,
    now: i64,
) -> usize {
    let policy = ShedderPolicy {
        size: size as i32,
        cpu: cpu as i32,
        window_ns,
        latency_ns,
        beta: f64_of(beta),
        cool_ns,
        floor: f64_of(floor),
    };
    let made = Shedder::new(policy, now);
    let status = made.as_ref().map_or_else(|e| code_status(e.code()), |_| 0);
    with(|h| h.shedder = made.ok());
    answer(&[status])
}

/// `shedder_reconfigure`: status (1, NULL, with no shedder held), checked
/// in the C call's order. A shedder of the same size keeps its stores;
/// another size moves into new ones, as a heap shedder does.
#[no_mangle]
pub extern "C" fn bay_shedder_reconfigure(
    size: i64,
    cpu: i64,
    window_ns: i64,
    latency_ns: i64,
    beta: i64,
    cool_ns: i64,
    floor: i64,
) -> usize {
    let policy = ShedderPolicy {
        size: size as i32,
        cpu: cpu as i32,
        window_ns,
        latency_ns,
        beta: f64_of(beta),
        cool_ns,
        floor: f64_of(floor),
    };
    let status = with(|h| {
        let Some(shedder) = h.shedder.as_mut() else {
            return NULL;
        };
        let changed = (|| {
            let shed = policy.check()?;
            let count = i64::from(shed.size).max(1);
            if count > weir_core::window::MAX_SIZE {
                return Err(ShedderPolicyError::Window(WindowError::TooLarge));
            }
            // 1 <= count <= MAX_SIZE.
            let count = count as usize;
            if count == shedder.policy().size as usize {
                return shedder.reconfigure(shed);
            }
            let no_memory = |_| ShedderPolicyError::Window(WindowError::NoMemory);
            let mut buckets = Vec::new();
            buckets.try_reserve_exact(count).map_err(no_memory)?;
            buckets.resize(count, WindowTotal::default());
            let mut fronts = Vec::new();
            fronts.try_reserve_exact(count).map_err(no_memory)?;
            fronts.resize(count, ShedderFront::default());
            *shedder = shedder.reconfigure_into(shed, buckets, fronts)?;
            Ok(())
        })();
        changed.map_or_else(|e| code_status(e.code()), |()| 0)
    });
    answer(&[status])
}

/// The ticket the C call writes: the one issued, or one not flying.
fn shedder_ticket(issued: Option<ShedderTicket>, now: i64) -> Ticket {
    Ticket::Shedder(issued.unwrap_or(ShedderTicket {
        start: now,
        open: false,
    }))
}

/// `shedder_allow <now> <cpu_permille>`: whether it let the call through
/// (writes the next ticket slot).
#[no_mangle]
pub extern "C" fn bay_shedder_allow(now: i64, cpu_permille: i64) -> usize {
    let allowed = with(|h| {
        let shedder = h.shedder.as_mut().expect("a held shedder");
        let issued = shedder.allow(now, cpu_permille as i32);
        new_ticket(h, shedder_ticket(issued, now));
        issued.is_some()
    });
    answer(&[allowed.into()])
}

/// `shedder_allow_class <now> <cpu_permille> <class>`: status, then
/// whether the ticket it wrote to the next slot is flying. Classes are
/// `WEIR_SHEDDER_CRITICAL` (0) to `WEIR_SHEDDER_SHEDDABLE` (3).
#[no_mangle]
pub extern "C" fn bay_shedder_allow_class(now: i64, cpu_permille: i64, class: i64) -> usize {
    let class = match class as i32 {
        0 => Some(Criticality::Critical),
        1 => Some(Criticality::CriticalPlus),
        2 => Some(Criticality::SheddablePlus),
        3 => Some(Criticality::Sheddable),
        _ => None,
    };
    let (status, flying) = with(|h| {
        let Some(class) = class else {
            // The C call writes no ticket: the slot stays zero (not flying).
            new_ticket(h, shedder_ticket(None, 0));
            return (SHEDDER_CLASS, false);
        };
        let shedder = h.shedder.as_mut().expect("a held shedder");
        let issued = shedder.allow_class(now, cpu_permille as i32, class);
        new_ticket(h, shedder_ticket(issued, now));
        (0, issued.is_some())
    });
    answer(&[status, flying.into()])
}

fn shedder_settle(
    slot: i64,
    settle: impl FnOnce(&mut Shedder, &mut ShedderTicket) -> Result<(), Settled>,
) -> usize {
    let status = with(|h| {
        let Ticket::Shedder(mut ticket) = h.tickets[slot as usize] else {
            panic!("ticket slot {slot} is not a shedder ticket");
        };
        if !ticket.open {
            // The C call refuses a ticket not flying before the shedder sees it.
            return code_status(Settled.code());
        }
        match settle(h.shedder.as_mut().expect("a held shedder"), &mut ticket) {
            Ok(()) => {
                h.tickets[slot as usize] = Ticket::Shedder(ticket);
                0
            }
            Err(e) => code_status(e.code()),
        }
    });
    answer(&[status])
}

/// `shedder_pass <slot> <now>`: status.
#[no_mangle]
pub extern "C" fn bay_shedder_pass(slot: i64, now: i64) -> usize {
    shedder_settle(slot, |s, t| s.pass(t, now))
}

/// `shedder_fail <slot>`: status.
#[no_mangle]
pub extern "C" fn bay_shedder_fail(slot: i64) -> usize {
    shedder_settle(slot, Shedder::fail)
}

/// `shedder_flying`.
#[no_mangle]
pub extern "C" fn bay_shedder_flying() -> usize {
    answer(&[with(|h| h.shedder.as_ref().map_or(0, Shedder::flying))])
}

/// `shedder_read_stats`: status, then flying, average, capacity, limit
/// (doubles as bits), cpu and hot.
#[no_mangle]
pub extern "C" fn bay_shedder_read_stats(now: i64) -> usize {
    let s = with(|h| h.shedder.as_ref().expect("a held shedder").stats(now));
    answer(&[
        0,
        s.flying,
        s.average.to_bits() as i64,
        s.capacity.to_bits() as i64,
        s.limit.to_bits() as i64,
        s.cpu.into(),
        s.hot.into(),
    ])
}

// The pool: one held handle. Items are the caller's numbers; a wasm32
// usize holds 32 bits, and every item the traces give fits.

fn item(item: i64) -> usize {
    usize::try_from(item as u64).expect("a pool item the wasm build's usize holds")
}

fn on_pool<R>(f: impl FnOnce(&mut Pool) -> R) -> R {
    with(|h| f(h.pool.as_mut().expect("a held pool")))
}

/// `pool_new`: status.
#[no_mangle]
pub extern "C" fn bay_pool_new(
    size: i64,
    idle: i64,
    keep_ns: i64,
    life_ns: i64,
    life_jitter: i64,
    min_idle: i64,
    max_making: i64,
) -> usize {
    let made = Pool::new(PoolPolicy {
        size,
        idle,
        keep_ns,
        life_ns,
        life_jitter: f64_of(life_jitter),
        min_idle,
        max_making,
    });
    let status = made.as_ref().map_or_else(|e| code_status(e.code()), |_| 0);
    with(|h| h.pool = made.ok());
    answer(&[status])
}

/// `pool_reconfigure`: status. A pool whose store cannot hold the new
/// limits moves into a larger one, as a heap pool's
/// `weir_pool_reconfigure` does.
#[no_mangle]
pub extern "C" fn bay_pool_reconfigure(
    size: i64,
    idle: i64,
    keep_ns: i64,
    life_ns: i64,
    life_jitter: i64,
    min_idle: i64,
    max_making: i64,
) -> usize {
    let limits = PoolPolicy {
        size,
        idle,
        keep_ns,
        life_ns,
        life_jitter: f64_of(life_jitter),
        min_idle,
        max_making,
    };
    let r = on_pool(|p| match p.reconfigure(limits) {
        Err(PoolPolicyError::NoMemory) => {
            let need = p.store_len_for(limits)?;
            *p = p.reconfigure_into(limits, vec![PoolSlot::default(); need])?;
            Ok(())
        }
        changed => changed,
    });
    answer(&[r.map_or_else(|e| code_status(e.code()), |_| 0)])
}

/// `pool_take`: the kind (1 ready, 2 stale, 3 make, 4 wait) and the item.
#[no_mangle]
pub extern "C" fn bay_pool_take(now: i64) -> usize {
    let (kind, item) = match on_pool(|p| p.take(now)) {
        PoolTaken::Ready(item) => (1, item),
        PoolTaken::Stale(item) => (2, item),
        PoolTaken::Make => (3, 0),
        PoolTaken::Wait => (4, 0),
    };
    answer(&[kind, item as i64])
}

fn pool_status(r: Result<(), weir_core::pool::PoolMisuse>) -> usize {
    answer(&[r.map_or_else(|e| code_status(e.code()), |()| 0)])
}

/// `pool_made <item> <now>`: status.
#[no_mangle]
pub extern "C" fn bay_pool_made(it: i64, now: i64) -> usize {
    pool_status(on_pool(|p| p.made(item(it), now)))
}

/// `pool_made_jittered <item> <now> <draw>`: status.
#[no_mangle]
pub extern "C" fn bay_pool_made_jittered(it: i64, now: i64, draw: i64) -> usize {
    pool_status(on_pool(|p| p.made_jittered(item(it), now, draw as u64)))
}

/// `pool_unmade`: status.
#[no_mangle]
pub extern "C" fn bay_pool_unmade() -> usize {
    pool_status(on_pool(Pool::unmade))
}

/// `pool_give <item> <now>`: status, then whether the pool kept it.
#[no_mangle]
pub extern "C" fn bay_pool_give(it: i64, now: i64) -> usize {
    match on_pool(|p| p.give(item(it), now)) {
        Ok(kept) => answer(&[0, kept.into()]),
        Err(e) => answer(&[code_status(e.code()), 0]),
    }
}

/// `pool_drop <item>`: status.
#[no_mangle]
pub extern "C" fn bay_pool_drop(it: i64) -> usize {
    pool_status(on_pool(|p| p.drop_item(item(it))))
}

/// The count a listing call returned, then the items (`cap` at most).
fn pool_listed(
    cap: i64,
    fill: impl FnOnce(&mut Pool, usize, &mut dyn FnMut(usize)) -> usize,
) -> usize {
    let cap = usize::try_from(cap as u64).unwrap_or(usize::MAX);
    let mut items = Vec::new();
    let count = on_pool(|p| {
        let room = cap.min(p.idle());
        fill(p, room, &mut |i| items.push(i))
    });
    let mut out = vec![count as i64];
    out.extend(items.iter().take(count.min(cap)).map(|&i| i as i64));
    answer(&out)
}

/// `pool_evict <now> <cap>`.
#[no_mangle]
pub extern "C" fn bay_pool_evict(now: i64, cap: i64) -> usize {
    pool_listed(cap, |p, room, put| p.evict_with(now, room, put))
}

/// `pool_close <cap>`.
#[no_mangle]
pub extern "C" fn bay_pool_close(cap: i64) -> usize {
    pool_listed(cap, |p, room, put| p.close_with(room, put))
}

/// `pool_mark_old`.
#[no_mangle]
pub extern "C" fn bay_pool_mark_old() -> usize {
    answer(&[on_pool(Pool::mark_old) as i64])
}

/// `pool_make_ahead`.
#[no_mangle]
pub extern "C" fn bay_pool_make_ahead() -> usize {
    answer(&[on_pool(Pool::make_ahead) as i64])
}

/// `pool_live`.
#[no_mangle]
pub extern "C" fn bay_pool_live() -> usize {
    answer(&[on_pool(|p| p.live()) as i64])
}

/// `pool_idle`.
#[no_mangle]
pub extern "C" fn bay_pool_idle() -> usize {
    answer(&[on_pool(|p| p.idle()) as i64])
}

/// `pool_busy`.
#[no_mangle]
pub extern "C" fn bay_pool_busy() -> usize {
    answer(&[on_pool(|p| p.busy()) as i64])
}

/// `pool_next_expiry`.
#[no_mangle]
pub extern "C" fn bay_pool_next_expiry(now: i64) -> usize {
    answer(&[on_pool(|p| p.next_expiry(now))])
}

/// `pool_read_stats`: status, then the eleven counters.
#[no_mangle]
pub extern "C" fn bay_pool_read_stats() -> usize {
    let s = on_pool(|p| p.stats());
    let counters = [
        s.made,
        s.reused,
        s.stale,
        s.evicted_idle,
        s.evicted_age,
        s.dropped,
        s.refused,
        s.waits,
        s.unmade,
        s.closed,
        s.retired,
    ];
    let mut out = vec![0];
    out.extend(counters.map(|c| c as i64));
    answer(&out)
}

// The bloom of rate or GCRA words: one held handle, made with the held
// rate or GCRA limit.

/// The held rate limit, checked as the C call checks one from memory.
fn rate_limit_checked(h: &Held) -> Result<RateLimit, i64> {
    let (interval_ns, frac, burst) = h.rate_limit;
    RateLimit::from_parts(interval_ns, frac, burst).map_err(|e: RateError| code_status(e.code()))
}

/// The held GCRA limit, checked as the C call checks one from memory.
fn gcra_limit_checked(h: &Held) -> Result<GcraLimit, i64> {
    let (per_token, tolerance, shift, reserved) = h.gcra_limit;
    if reserved != 0 {
        return Err(code_status(GcraError::Invalid.code()));
    }
    GcraLimit::from_parts(per_token, tolerance, shift).map_err(|e| code_status(e.code()))
}

fn bloom_made(shape: Result<BloomShape, i64>) -> usize {
    let made = shape.and_then(|shape| Bloom::new(shape).map_err(|e| code_status(e.code())));
    let status = made.as_ref().map_or_else(|&e| e, |_| 0);
    with(|h| {
        h.bloom_shape = made.as_ref().ok().map(Bloom::shape);
        h.bloom = made.ok();
    });
    answer(&[status])
}

/// A new limit for the held bloom, as `weir_bloom_reconfigure(_gcra)`
/// answers: the held limit's status if it is invalid, else the core's.
fn bloom_reconfigured(limit: impl FnOnce(&Held) -> Result<BloomLimit, i64>) -> usize {
    let status = with(|h| {
        let limit = limit(h);
        let bloom = h.bloom.as_ref().ok_or(NULL)?;
        bloom
            .reconfigure(limit?)
            .map_err(|e| code_status(e.code()))?;
        h.bloom_shape = Some(bloom.shape());
        Ok(())
    });
    answer(&[status.err().unwrap_or(0)])
}

/// `bloom_reconfigure`: status; the limit is the held rate limit.
#[no_mangle]
pub extern "C" fn bay_bloom_reconfigure() -> usize {
    bloom_reconfigured(|h| rate_limit_checked(h).map(BloomLimit::Window))
}

/// `bloom_reconfigure_gcra`: status; the limit is the held GCRA limit.
#[no_mangle]
pub extern "C" fn bay_bloom_reconfigure_gcra() -> usize {
    bloom_reconfigured(|h| gcra_limit_checked(h).map(BloomLimit::Gcra))
}

/// `bloom_new <size_log2> <hashes> <seed0> <seed1>`: status.
#[no_mangle]
pub extern "C" fn bay_bloom_new(size_log2: i64, hashes: i64, seed0: i64, seed1: i64) -> usize {
    let shape = with(|h| rate_limit_checked(h)).and_then(|limit| {
        BloomShape::new(
            size_log2 as u32,
            hashes as u32,
            limit,
            seed0 as u64,
            seed1 as u64,
        )
        .map_err(|e| code_status(e.code()))
    });
    bloom_made(shape)
}

/// `bloom_new_gcra <size_log2> <hashes> <seed0> <seed1>`: status.
#[no_mangle]
pub extern "C" fn bay_bloom_new_gcra(size_log2: i64, hashes: i64, seed0: i64, seed1: i64) -> usize {
    let shape = with(|h| gcra_limit_checked(h)).and_then(|limit| {
        BloomShape::new(
            size_log2 as u32,
            hashes as u32,
            limit,
            seed0 as u64,
            seed1 as u64,
        )
        .map_err(|e| code_status(e.code()))
    });
    bloom_made(shape)
}

/// `bloom_allow <now> <key>` (from the input buffer).
#[no_mangle]
pub extern "C" fn bay_bloom_allow() -> usize {
    let mut args = Args::take();
    let (now, key) = (args.i64(), args.key());
    let allowed = with(|h| h.bloom.as_ref().is_some_and(|b| b.allow(now, &key)));
    answer(&[allowed.into()])
}

/// `bloom_next <now> <key>` (from the input buffer).
#[no_mangle]
pub extern "C" fn bay_bloom_next() -> usize {
    let mut args = Args::take();
    let (now, key) = (args.i64(), args.key());
    answer(&[with(|h| {
        h.bloom.as_ref().map_or(NEVER, |b| b.next(now, &key))
    })])
}

// Charging several limits at once: the held rate and GCRA words, bucket
// and bloom.

/// An item as the C call judges it (`kind` 1 GCRA, 2 rate, 3 bucket, 4
/// bloom): the core's item or the status.
fn charge_item<'a>(
    h: &'a Held,
    words: (&'a AtomicU64, &'a AtomicU64),
    (kind, reserved, cost, key): &'a (u32, u32, f64, Vec<u8>),
) -> Result<ChargeItem<'a>, i64> {
    let whole = |cost: f64| charge::whole_cost(cost).ok_or(CHARGE_COST);
    if *reserved != 0 {
        return Err(RESERVED);
    }
    Ok(match kind {
        1 => ChargeItem::Gcra {
            word: words.1,
            limit: gcra_limit_checked(h)?,
            cost: whole(*cost)?,
        },
        2 => ChargeItem::Rate {
            word: words.0,
            limit: rate_limit_checked(h)?,
            cost: whole(*cost)?,
        },
        3 => {
            let bucket = h.bucket.as_ref().ok_or(NULL)?;
            if !(*cost > 0.0 && cost.is_finite()) {
                return Err(CHARGE_COST);
            }
            ChargeItem::Bucket {
                bucket,
                cost: *cost,
            }
        }
        4 => {
            let bloom = h.bloom.as_ref().ok_or(NULL)?;
            let shape = h.bloom_shape.as_ref().ok_or(NULL)?;
            if key.is_empty() {
                // The C replay passes an empty key as NULL.
                return Err(NULL);
            }
            ChargeItem::Bloom {
                shape,
                lines: bloom.lines(),
                key,
                cost: whole(*cost)?,
            }
        }
        _ => return Err(UNKNOWN_KIND),
    })
}

/// `charge_all <now> <n> (<kind> <reserved> <cost> <key>)...` (from the
/// input buffer): status, admitted, wait, index, kept, then the held rate
/// word's and GCRA word's states.
#[no_mangle]
pub extern "C" fn bay_charge_all() -> usize {
    let mut args = Args::take();
    let now = args.i64();
    let n = args.u64() as usize;
    let given: Vec<(u32, u32, f64, Vec<u8>)> = (0..n)
        .map(|_| (args.u64() as u32, args.u64() as u32, args.f64(), args.key()))
        .collect();
    with(|h| {
        let rate = AtomicU64::new(h.rate);
        let gcra = AtomicU64::new(h.gcra);
        let judged = if n > MAX_ITEMS {
            Err((n, code_status(charge::ChargeError::TooMany.code())))
        } else {
            given
                .iter()
                .enumerate()
                .map(|(i, g)| charge_item(h, (&rate, &gcra), g).map_err(|e| (i, e)))
                .collect::<Result<Vec<_>, _>>()
                .and_then(|items| {
                    charge::charge_all(&items, now).map_err(|e| (n, code_status(e.code())))
                })
        };
        let (status, admitted, wait, index, kept) = match judged {
            Ok(ChargeAnswer::Admitted) => (0, 1, 0, n, 0),
            Ok(ChargeAnswer::Refused { index, wait, kept }) => (0, 0, wait, index, kept),
            Err((index, status)) => (status, 0, 0, index, 0),
        };
        let (rate, gcra) = (rate.into_inner(), gcra.into_inner());
        h.rate = rate;
        h.gcra = gcra;
        answer(&[
            status,
            admitted,
            wait,
            index as i64,
            kept as i64,
            rate as i64,
            gcra as i64,
        ])
    })
}

// The lease: one held handle.

fn on_lease<R>(f: impl FnOnce(&mut Lease) -> R) -> R {
    with(|h| f(h.lease.as_mut().expect("a held lease")))
}

/// `lease_new <interval_ns> <ttl_ns> <burst> <share> <now>`: status.
#[no_mangle]
pub extern "C" fn bay_lease_new(
    interval_ns: i64,
    ttl_ns: i64,
    burst: i64,
    share: i64,
    now: i64,
) -> usize {
    let policy = LeasePolicy {
        interval_ns,
        ttl_ns,
        burst,
        share: f64_of(share),
    };
    let made = Lease::new(&policy, now);
    let status = made.as_ref().map_or_else(|e| code_status(e.code()), |_| 0);
    with(|h| h.lease = made.ok());
    answer(&[status])
}

/// `lease_take <now> <cost>`: status, then the verdict (0 go, 1 ask, 2
/// refuse), ask and retry_after_ns.
#[no_mangle]
pub extern "C" fn bay_lease_take(now: i64, cost: i64) -> usize {
    match on_lease(|l| l.take(now, cost)) {
        Ok(LeaseTake::Go { ask }) => answer(&[0, 0, ask, 0]),
        Ok(LeaseTake::Ask { ask }) => answer(&[0, 1, ask, 0]),
        Ok(LeaseTake::Refuse { retry_after }) => answer(&[0, 2, 0, retry_after]),
        Err(e) => answer(&[code_status(e.code()), 0, 0, 0]),
    }
}

/// `lease_reconfigure <interval_ns> <ttl_ns> <burst> <share>`: status.
#[no_mangle]
pub extern "C" fn bay_lease_reconfigure(
    interval_ns: i64,
    ttl_ns: i64,
    burst: i64,
    share: i64,
) -> usize {
    let policy = LeasePolicy {
        interval_ns,
        ttl_ns,
        burst,
        share: f64_of(share),
    };
    let r = on_lease(|l| l.reconfigure(&policy));
    answer(&[r.map_or_else(|e| code_status(e.code()), |_| 0)])
}

/// `lease_grant <now> <granted> <until> <next>`: status.
#[no_mangle]
pub extern "C" fn bay_lease_grant(now: i64, granted: i64, until: i64, next: i64) -> usize {
    let r = on_lease(|l| l.grant(now, granted, until, next));
    answer(&[r.map_or_else(|e| code_status(e.code()), |_| 0)])
}

/// `lease_release`.
#[no_mangle]
pub extern "C" fn bay_lease_release(now: i64) -> usize {
    answer(&[on_lease(|l| l.release(now))])
}

/// `lease_unspent`.
#[no_mangle]
pub extern "C" fn bay_lease_unspent(now: i64) -> usize {
    answer(&[on_lease(|l| l.unspent(now))])
}

/// `lease_expires`.
#[no_mangle]
pub extern "C" fn bay_lease_expires(now: i64) -> usize {
    answer(&[on_lease(|l| l.expires(now))])
}

/// `lease_cap`.
#[no_mangle]
pub extern "C" fn bay_lease_cap() -> usize {
    answer(&[on_lease(|l| l.cap())])
}

/// `lease_read_stats`: status, then the eight fields.
#[no_mangle]
pub extern "C" fn bay_lease_read_stats(now: i64) -> usize {
    let s = on_lease(|l| l.stats(now));
    answer(&[
        0,
        s.asks as i64,
        s.granted as i64,
        s.spent as i64,
        s.expired as i64,
        s.released as i64,
        s.held as i64,
        s.rate_milli as i64,
        s.rtt_ns,
    ])
}

// The keyed table: one held table, made with the held GCRA limit
// (`keyed_new`) or rate limit (`keyed_new_rate`), checked in the C
// calls' order: the limit, the overflow policy, the buckets.

fn keyed_made(
    limit: Result<BloomLimit, i64>,
    buckets: i64,
    overflow: i64,
    seed0: i64,
    seed1: i64,
) -> usize {
    let made = limit
        .and_then(|limit| {
            let overflow = match overflow {
                0 => Overflow::Refuse,
                1 => Overflow::Admit,
                2 => Overflow::Shared,
                _ => return Err(KEYED_OVERFLOW),
            };
            KeyedShape::new(buckets as u64, limit, overflow, seed0 as u64, seed1 as u64)
                .map_err(|e| code_status(e.code()))
        })
        .and_then(|shape| Keyed::new(shape).map_err(|e| code_status(e.code())));
    let status = made.as_ref().map_or_else(|&e| e, |_| 0);
    with(|h| h.keyed = made.ok());
    answer(&[status])
}

/// `keyed_new <buckets> <overflow> <seed0> <seed1>`: status.
#[no_mangle]
pub extern "C" fn bay_keyed_new(buckets: i64, overflow: i64, seed0: i64, seed1: i64) -> usize {
    let limit = with(|h| gcra_limit_checked(h)).map(BloomLimit::from);
    keyed_made(limit, buckets, overflow, seed0, seed1)
}

/// `keyed_new_rate <buckets> <overflow> <seed0> <seed1>`: status.
#[no_mangle]
pub extern "C" fn bay_keyed_new_rate(buckets: i64, overflow: i64, seed0: i64, seed1: i64) -> usize {
    let limit = with(|h| rate_limit_checked(h)).map(BloomLimit::from);
    keyed_made(limit, buckets, overflow, seed0, seed1)
}

/// A new limit for the held table, as `weir_keyed_reconfigure(_rate)`
/// answers: the held limit's status if it is invalid, else the core's.
fn keyed_reconfigured(limit: impl FnOnce(&Held) -> Result<BloomLimit, i64>) -> usize {
    let status = with(|h| {
        let limit = limit(h);
        let table = h.keyed.as_ref().ok_or(NULL)?;
        table.reconfigure(limit?).map_err(|e| code_status(e.code()))
    });
    answer(&[status.err().unwrap_or(0)])
}

/// `keyed_reconfigure`: status; the limit is the held GCRA limit.
#[no_mangle]
pub extern "C" fn bay_keyed_reconfigure() -> usize {
    keyed_reconfigured(|h| gcra_limit_checked(h).map(BloomLimit::from))
}

/// `keyed_reconfigure_rate`: status; the limit is the held rate limit.
#[no_mangle]
pub extern "C" fn bay_keyed_reconfigure_rate() -> usize {
    keyed_reconfigured(|h| rate_limit_checked(h).map(BloomLimit::from))
}

/// The most tokens one call may ask of a word of `limit`, as the C call
/// bounds `n`.
fn keyed_burst(limit: &BloomLimit) -> i64 {
    match limit {
        BloomLimit::Gcra(limit) => {
            let (per_token, tolerance, _) = limit.parts();
            tolerance / per_token.max(1) as i64
        }
        BloomLimit::Window(limit) => i64::from(limit.burst()),
    }
}

/// `keyed_allow <now> <key>` (from the input buffer): bool.
#[no_mangle]
pub extern "C" fn bay_keyed_allow() -> usize {
    let mut args = Args::take();
    let (now, key) = (args.i64(), args.key());
    let allowed = with(|h| h.keyed.as_ref().is_some_and(|t| t.allow(now, &key)));
    answer(&[allowed.into()])
}

/// `keyed_decide <now> <key> <n>` (from the input buffer): status, decision.
#[no_mangle]
pub extern "C" fn bay_keyed_decide() -> usize {
    let mut args = Args::take();
    let (now, key, n) = (args.i64(), args.key(), args.i64());
    let Some((status, decision)) = with(|h| {
        h.keyed.as_ref().map(|t| {
            if now < 0 {
                return (NEGATIVE, 0);
            }
            if n < 1 || n > keyed_burst(t.shape().limit()) {
                return (KEYED_COUNT, 0);
            }
            let decision = match t.decide(now, &key, n) {
                Decision::Refused => 0,
                Decision::Allowed => 1,
                Decision::Overflowed(true) => 2,
                Decision::Overflowed(false) => 3,
            };
            (0, decision)
        })
    }) else {
        return answer(&[NULL, 0]);
    };
    answer(&[status, decision])
}

/// `keyed_next <now> <key>` (from the input buffer): status, the wait.
#[no_mangle]
pub extern "C" fn bay_keyed_next() -> usize {
    let mut args = Args::take();
    let (now, key) = (args.i64(), args.key());
    let Some(out) = with(|h| {
        h.keyed.as_ref().map(|t| {
            if now < 0 {
                return [NEGATIVE, 0];
            }
            [0, t.next(now, &key)]
        })
    }) else {
        return answer(&[NULL, 0]);
    };
    answer(&out)
}

/// `keyed_read`: status, buckets, slots, occupied, overflows, kind, policy.
#[no_mangle]
pub extern "C" fn bay_keyed_read() -> usize {
    let Some(out) = with(|h| {
        h.keyed.as_ref().map(|t| {
            let shape = t.shape();
            let buckets = shape.buckets() as i64;
            let kind = match shape.limit() {
                BloomLimit::Window(_) => 1,
                BloomLimit::Gcra(_) => 2,
            };
            let policy = match shape.overflow() {
                Overflow::Refuse => 0,
                Overflow::Admit => 1,
                Overflow::Shared => 2,
            };
            [
                0,
                buckets,
                buckets * keyed::SLOTS as i64,
                t.occupied() as i64,
                t.counters().overflows() as i64,
                kind,
                policy,
            ]
        })
    }) else {
        return answer(&[NULL, 0, 0, 0, 0, 0, 0]);
    };
    answer(&out)
}

/// `keyed_buckets_for <keys> <chance>`: status, buckets.
#[no_mangle]
pub extern "C" fn bay_keyed_buckets_for(keys: i64, chance: i64) -> usize {
    let chance = f64_of(chance);
    if chance.is_nan() || chance <= 0.0 || chance > 1.0 {
        return answer(&[KEYED_SIZING, 0]);
    }
    match keyed::buckets_for(keys as u64, chance) {
        Some(buckets) => answer(&[0, buckets as i64]),
        None => answer(&[KEYED_SIZING, 0]),
    }
}

/// `keyed_overflow_chance <keys> <slots>`: the chance, NaN for keys or
/// slots NaN, infinite or negative.
#[no_mangle]
pub extern "C" fn bay_keyed_overflow_chance(keys: i64, slots: i64) -> usize {
    let (keys, slots) = (f64_of(keys), f64_of(slots));
    let valid = |x: f64| x.is_finite() && x >= 0.0;
    let chance = if valid(keys) && valid(slots) {
        keyed::overflow_chance(keys, slots)
    } else {
        f64::NAN
    };
    answer(&[chance.to_bits() as i64])
}
