//! The limits: bucket, sliding window, period, gate, embeddable limiter,
//! rate word and bloom array, lease, plus the plain functions (backoff, deadline,
//! status, version). Each handle gets the fuzzer's parameters and then a
//! run of calls on a clock that floods one instant, lands near multiples of
//! 512 ns and goes backwards. Checked: what each admits stays within the
//! header's bound (an exact model where the header pins the behaviour:
//! gate, sliding, period, cooldown), readings agree with decisions, and a
//! refused or failed call changes nothing.
#![no_main]

use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};

use libfuzzer_sys::fuzz_target;
use weir::atomic::*;
use weir::backoff::*;
use weir::bloom::*;
use weir::bucket::*;
use weir::budget::*;
use weir::concurrency::*;
use weir::deadline::*;
use weir::gate::*;
use weir::gcra::*;
use weir::lease::*;
use weir::limiter::*;
use weir::period::weir_period_quota::*;
use weir::period::*;
use weir::rate::*;
use weir::sliding::*;
use weir::status::weir_status::*;
use weir::status::*;
use weir::version::*;
use weir_fuzz::{abort_on_panic, skipped, trace, Clock, Counting, Input, RateBound};

/// The most calls one flood makes at one instant.
const FLOOD: u64 = 3000;

fuzz_target!(|data: &[u8]| {
    abort_on_panic();
    let mut input = Input::new(data);
    match input.u8() % 12 {
        0 => rate_words(&mut input),
        1 => bucket(&mut input),
        2 => sliding(&mut input),
        3 => period(&mut input),
        4 => gate(&mut input),
        5 => limiter(&mut input),
        6 => bloom(&mut input),
        7 => budget(&mut input),
        8 => concurrency(&mut input),
        9 => gcra(&mut input),
        10 => lease(&mut input),
        _ => plain(&mut input),
    }
});

// ---------------------------------------------------------------------------
// The rate word.

/// A burst and a limit a second, mostly ones `weir_rate_limit_new`
/// accepts, favouring the edges: burst 1, 100, 101 and 1023, the shortest
/// window, and intervals under and around 512 ns.
fn rate_params(input: &mut Input) -> (f64, i64) {
    let burst = match input.u8() % 6 {
        0 => 1,
        1 => 100,
        2 => 101,
        3 => 1023,
        4 => 1 + input.below(1023) as i64,
        _ => input.i64(),
    };
    let window_ns = match input.u8() % 6 {
        0 => WEIR_RATE_MIN_WINDOW_NS as f64,
        1 => 51_200.0 + input.below(1 << 20) as f64,
        // An interval of 400..1100 ns: across the word's 512 ns unit.
        2 => burst.max(1) as f64 * (400.0 + input.below(700) as f64),
        3 => 1e9,
        4 => input.span() as f64 * 1000.0,
        _ => return (input.f64(), burst),
    };
    (burst.max(1) as f64 * 1e9 / window_ns, burst)
}

struct Word {
    rate: Box<weir_rate>,
    limit: weir_rate_limit,
    bound: RateBound,
    /// The latest non-negative `now` an allow was given.
    latest: i64,
}

fn rate_words(input: &mut Input) {
    let mut words = Vec::new();
    for _ in 0..1 + input.below(3) {
        let (per_s, burst) = rate_params(input);
        let mut limit = weir_rate_limit {
            interval_ns: 7,
            interval_frac: 7,
            burst: 7,
        };
        let status = weir_rate_limit_new(per_s, burst, &mut limit);
        if status != WEIR_OK {
            assert_eq!(
                limit.interval_ns, 7,
                "a failed constructor wrote its output"
            );
            continue;
        }
        assert!(
            (1..=WEIR_RATE_MAX_BURST).contains(&burst) && per_s.is_finite() && per_s > 0.0,
            "weir_rate_limit_new({per_s}, {burst}) accepted"
        );
        let window_ns = burst as f64 * 1e9 / per_s;
        assert!(window_ns >= WEIR_RATE_MIN_WINDOW_NS as f64 * 0.999999);
        words.push(Word {
            rate: Box::new(weir_rate { state: 0 }),
            limit,
            bound: RateBound::new(burst as u64, window_ns, 1),
            latest: 0,
        });
    }
    assert_eq!(weir_rate_limit_new(1.0, 1, null_mut()), WEIR_ERR_NULL);
    if words.is_empty() {
        return;
    }
    let mut clock = Clock::new(input);
    clock.now = clock.now.max(0);
    let mut spare = [0u64; 2];
    while !input.is_empty() {
        let at = input.below(words.len() as u64) as usize;
        let now = clock.tick(input);
        let word = &mut words[at];
        match input.u8() % 8 {
            0..=2 => rate_allow(word, now, 1),
            3 => {
                let count = 1 + input.below(FLOOD);
                rate_allow(word, now, count);
            }
            4 => {
                let next = weir_rate_next(&*word.rate, &word.limit, now);
                assert!(next >= 0, "weir_rate_next answered {next}");
                if now < 0 {
                    assert_eq!(next, i64::MAX);
                } else if now >= word.latest {
                    let before = word.rate.state;
                    let allowed = weir_rate_allow(&mut *word.rate, &word.limit, now);
                    assert_eq!(
                        allowed,
                        next == 0,
                        "weir_rate_next said {next} at {now}, allow answered {allowed}"
                    );
                    if allowed {
                        word.latest = now;
                        if !skipped("rate-bound") {
                            word.bound.admitted(now, "weir_rate_allow");
                        }
                    } else {
                        assert_eq!(word.rate.state, before, "a refusal wrote the word");
                    }
                }
            }
            5 => {
                // An invalid limit, a misaligned or NULL word: refused,
                // the word untouched.
                let mut bad = word.limit;
                match input.u8() % 4 {
                    0 => bad.burst = [0, 1024, u32::MAX][input.below(3) as usize],
                    1 => bad.interval_ns = 0,
                    2 => bad.interval_ns = u64::MAX,
                    _ => bad.interval_frac = input.u32(),
                }
                let before = word.rate.state;
                let allowed = weir_rate_allow(&mut *word.rate, &bad, now);
                if allowed {
                    // Still a valid limit after the scribble: only a
                    // fraction moved, which the ranges allow.
                    let window = bad.burst as f64
                        * (bad.interval_ns as f64 + bad.interval_frac as f64 / 4294967296.0);
                    assert!(
                        (1..=1023).contains(&bad.burst)
                            && window >= WEIR_RATE_MIN_WINDOW_NS as f64
                            && window <= 2f64.powi(63),
                        "an invalid limit {bad:?} was used"
                    );
                    // The bound no longer applies to this word.
                    words.remove(at);
                    if words.is_empty() {
                        return;
                    }
                    continue;
                }
                assert_eq!(word.rate.state, before);
                let odd = (spare.as_mut_ptr() as *mut u8).wrapping_add(1 + input.below(7) as usize)
                    as *mut weir_rate;
                assert!(!weir_rate_allow(odd, &word.limit, now));
                assert_eq!(weir_rate_next(odd, &word.limit, now), i64::MAX);
                assert!(!weir_rate_allow(null_mut(), &word.limit, now));
                assert!(!weir_rate_allow(&mut *word.rate, null(), now));
                assert_eq!(spare, [0, 0], "a misaligned word was written");
            }
            _ => {
                // A negative now is refused and writes nothing.
                let before = word.rate.state;
                let bad = -1 - (input.u64() >> 1) as i64;
                assert!(!weir_rate_allow(&mut *word.rate, &word.limit, bad));
                assert_eq!(weir_rate_next(&*word.rate, &word.limit, bad), i64::MAX);
                assert_eq!(word.rate.state, before);
            }
        }
    }
}

/// `count` allows at one instant, each admitted one checked against the
/// bound.
fn rate_allow(word: &mut Word, now: i64, count: u64) {
    for _ in 0..count {
        let before = word.rate.state;
        if weir_rate_allow(&mut *word.rate, &word.limit, now) {
            assert!(now >= 0, "a negative now was admitted");
            word.latest = word.latest.max(now);
            if !skipped("rate-bound") {
                word.bound.admitted(word.latest, "weir_rate_allow");
            }
        } else {
            assert_eq!(word.rate.state, before, "a refusal wrote the word");
        }
    }
}

// ---------------------------------------------------------------------------
// The token bucket.

/// Takes that cost `n` tokens each, at the clock's running maximum, checked
/// against `burst + rate × elapsed` over every stretch a power of two takes
/// long (with 1 % and one token of slack for the nanosecond the bucket
/// keeps refill in).
struct TokenBound {
    rate: f64,
    burst: f64,
    /// (time, tokens taken up to and including this take).
    taken: Vec<(i64, f64)>,
}

impl TokenBound {
    /// Records a take of `n` admitted at `at`; `made` is when the bucket
    /// was made, full.
    fn admitted(&mut self, at: i64, n: f64, made: i64) {
        let total = self.taken.last().map_or(0.0, |t| t.1) + n;
        self.taken.push((at, total));
        let check = |from: i64, tokens: f64| {
            // The difference in integers: as f64s, two instants near the
            // clock's end lose their last ~1000 ns, and the bound with them.
            let elapsed = at.saturating_sub(from).max(0) as f64 / 1e9;
            let allowed = self.burst + self.rate * elapsed * 1.01 + 1.0 + self.burst * 1e-9;
            assert!(
                tokens <= allowed,
                "weir_bucket_take: {tokens} tokens taken in {elapsed} s, bound {allowed} \
                 (rate {}, burst {})",
                self.rate,
                self.burst
            );
        };
        check(made, total);
        let len = self.taken.len();
        let mut back = 1;
        while back < len {
            let from = len - 1 - back;
            let prior = if from == 0 {
                0.0
            } else {
                self.taken[from - 1].1
            };
            check(self.taken[from].0, total - prior);
            back *= 2;
        }
    }
}

fn bucket(input: &mut Input) {
    let rate = match input.u8() % 6 {
        0 => 0.0,
        1 => 1.0 + input.below(1000) as f64,
        2 => 1e6 + input.below(1 << 30) as f64,
        3 => [3e8, 7.5e8, 1e9, 2e9][input.below(4) as usize],
        4 => input.unit() * 1e4,
        _ => input.f64(),
    };
    let burst = match input.u8() % 6 {
        0 => 0.0,
        1 => 1.0 + input.below(200) as f64,
        2 => input.unit() * 10.0,
        3 => rate,
        4 => -1.0,
        _ => input.f64(),
    };
    let mut clock = Clock::new(input);
    let mut start = clock.now;
    let mut handle = null_mut();
    let status = weir_bucket_new(rate, burst, start, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null(), "a failed weir_bucket_new wrote *out");
        return;
    }
    let mut full = if burst <= 0.0 { rate } else { burst }.max(1.0);
    let mut bound = TokenBound {
        rate,
        burst: full,
        taken: Vec::new(),
    };
    let mut latest = start;
    let bucket = handle as *const weir_bucket;
    // Takes that passed, (now, n), for refunds to name. After the first
    // refund that gives anything back the take bound no longer applies as
    // written (it counts takes, not takes less refunds), so it stops.
    let mut passed: Vec<(i64, f64)> = Vec::new();
    let mut refunded = false;
    let mut counting = Counting::begin(input.even(), || weir_bucket_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_bucket_read_counts(handle, out));
        let now = clock.tick(input);
        let n = match input.u8() % 6 {
            0..=2 => 1.0,
            3 => full,
            4 => input.unit() * full * 1.1,
            _ => input.f64(),
        };
        match input.u8() % 8 {
            0..=2 => {
                if weir_bucket_take(bucket, now, n) {
                    assert!(n > 0.0 && n.is_finite() && n <= full, "took {n} of {full}");
                    latest = latest.max(now);
                    passed.push((now, n));
                    if !skipped("bucket-bound") && !refunded {
                        bound.admitted(latest, n, start);
                    }
                }
            }
            6 => {
                // A refund of a take that passed, or of anything at all. It
                // gives back at most what it names, never past the burst,
                // and an error changes nothing.
                let (taken_at, back) = match passed.pop() {
                    Some(take) if input.bool() => take,
                    _ => (input.i64(), n),
                };
                let before = weir_bucket_tokens(bucket, now);
                let status = weir_bucket_refund(bucket, now, taken_at, back);
                let after = weir_bucket_tokens(bucket, now);
                if status == WEIR_OK {
                    refunded = true;
                    assert!(back > 0.0 && back <= full && taken_at <= now);
                    assert!(
                        after <= full * (1.0 + 1e-12)
                            && after - before <= back * (1.0 + 1e-9) + full * 1e-12,
                        "a refund of {back} took {before} to {after} of {full}"
                    );
                } else {
                    assert!(
                        matches!(
                            status,
                            WEIR_ERR_LIMITER_INVALID_AMOUNT
                                | WEIR_ERR_REFUND_FUTURE
                                | WEIR_ERR_REFUND_EXPIRED
                                | WEIR_ERR_REFUND_FULL
                        ),
                        "weir_bucket_refund answered {status:?}"
                    );
                    assert_eq!(
                        before.to_bits(),
                        after.to_bits(),
                        "a failed refund changed the bucket"
                    );
                }
            }
            7 => {
                // A change of rate and burst in place: an error changes
                // nothing; a change keeps at most the tokens there were, up
                // to the new burst, and from it on the new bound holds,
                // takes judged from the change on.
                let (rate, burst) = (input.unit() * 1e6, input.f64());
                let before = weir_bucket_tokens(bucket, now);
                let status = weir_bucket_reconfigure(handle, rate, burst, now);
                let after = weir_bucket_tokens(bucket, now);
                if status == WEIR_OK {
                    full = if burst <= 0.0 { rate } else { burst }.max(1.0);
                    assert!(
                        after <= before.min(full) * (1.0 + 1e-12),
                        "a change kept {after} of {before}, burst {full}"
                    );
                    latest = latest.max(now);
                    start = latest;
                    bound = TokenBound {
                        rate,
                        burst: full,
                        taken: Vec::new(),
                    };
                } else {
                    assert!(
                        matches!(
                            status,
                            WEIR_ERR_NOT_FINITE | WEIR_ERR_NEGATIVE | WEIR_ERR_TOO_LARGE
                        ),
                        "weir_bucket_reconfigure answered {status:?}"
                    );
                    assert_eq!(before.to_bits(), after.to_bits(), "a refused change wrote");
                }
            }
            3 => {
                let count = 1 + input.below(FLOOD);
                for _ in 0..count {
                    if weir_bucket_take(bucket, now, 1.0) {
                        latest = latest.max(now);
                        if !skipped("bucket-bound") && !refunded {
                            bound.admitted(latest, 1.0, start);
                        }
                    }
                }
            }
            4 => {
                let tokens = weir_bucket_tokens(bucket, now);
                assert!(
                    tokens.is_finite() && (0.0..=full * (1.0 + 1e-12)).contains(&tokens),
                    "weir_bucket_tokens answered {tokens} of {full}"
                );
            }
            _ => {
                let next = weir_bucket_next(bucket, now, n);
                assert!(next >= 0, "weir_bucket_next answered {next}");
                if !(n > 0.0 && n.is_finite() && n <= full) {
                    assert_eq!(next, i64::MAX, "weir_bucket_next({n}) of {full}");
                } else if now >= latest {
                    let took = weir_bucket_take(bucket, now, n);
                    assert_eq!(
                        took,
                        next == 0,
                        "weir_bucket_next({n}) said {next} at {now}"
                    );
                    if took {
                        latest = now;
                        if !skipped("bucket-bound") && !refunded {
                            bound.admitted(latest, n, start);
                        }
                    }
                }
            }
        }
    }
    assert!(!weir_bucket_take(null(), 0, 1.0));
    assert_eq!(weir_bucket_refund(null(), 0, 0, 1.0), WEIR_ERR_NULL);
    counting.end(|out| weir_bucket_read_counts(handle, out));
    weir_bucket_free(handle);
    weir_bucket_free(null_mut());
}

// ---------------------------------------------------------------------------
// The sliding window: an exact model.

fn sliding(input: &mut Input) {
    let (mut quota, mut window) = sliding_policy(input);
    let mut handle = null_mut();
    let status = weir_sliding_new(quota, window, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null());
        assert!(
            quota <= 0
                || window <= 0
                || status == WEIR_ERR_TOO_LARGE
                || status == WEIR_ERR_NO_MEMORY,
            "weir_sliding_new({quota}, {window}) answered {status:?}"
        );
        return;
    }
    assert!(quota > 0 && window > 0);
    trace!("weir_sliding_new({quota}, {window})");
    let sliding = handle as *const weir_sliding;
    let mut clock = Clock::new(input);
    // The stamps the model counts, oldest first, and the latest take.
    let mut stamps = std::collections::VecDeque::new();
    let mut latest = i64::MIN;
    let expire = |stamps: &mut std::collections::VecDeque<i64>, at: i64, window: i64| {
        while stamps
            .front()
            .is_some_and(|&t| t as i128 + window as i128 <= at as i128)
        {
            stamps.pop_front();
        }
    };
    let mut counting = Counting::begin(input.even(), || weir_sliding_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_sliding_read_counts(handle, out));
        let now = clock.tick(input);
        match input.u8() % 6 {
            5 => {
                // A new quota and window in place: the newest stamps the
                // old window counts at the latest take, up to the new
                // quota, judged by the new window. An error changes nothing.
                let (q, w) = sliding_policy(input);
                let status = weir_sliding_reconfigure(handle, q, w);
                trace!("weir_sliding_reconfigure({q}, {w}) -> {status:?}");
                if status == WEIR_OK {
                    if latest != i64::MIN {
                        expire(&mut stamps, latest, window);
                    }
                    while stamps.len() as i64 > q {
                        stamps.pop_front();
                    }
                    (quota, window) = (q, w);
                } else {
                    assert!(
                        q <= 0
                            || w <= 0
                            || status == WEIR_ERR_TOO_LARGE
                            || status == WEIR_ERR_NO_MEMORY,
                        "weir_sliding_reconfigure({q}, {w}) answered {status:?}"
                    );
                }
            }
            0..=2 => {
                let count = if input.one_in(4) {
                    1 + input.below(FLOOD)
                } else {
                    1
                };
                for _ in 0..count {
                    let at = now.max(latest);
                    latest = at;
                    expire(&mut stamps, at, window);
                    let room = (stamps.len() as i64) < quota;
                    trace!("sliding_take({now}), model {stamps:?}");
                    assert_eq!(
                        weir_sliding_take(sliding, now),
                        room,
                        "weir_sliding_take at {now} (latest {at}): {} of {quota} counted",
                        stamps.len()
                    );
                    if room {
                        stamps.push_back(at);
                    }
                }
            }
            _ => {
                // Readings at the latest take's `now` (exact) or earlier
                // (in range): neither can move the window's clock.
                let at = if latest == i64::MIN || input.bool() {
                    latest
                } else {
                    latest.saturating_sub(input.span())
                };
                let left = weir_sliding_left(sliding, at);
                let next = weir_sliding_next(sliding, at);
                trace!("sliding_left({at}) -> {left}, next -> {next}");
                assert!(
                    (0..=quota).contains(&left),
                    "weir_sliding_left {left} of {quota}"
                );
                assert!(next >= 0);
                {
                    // An earlier `at` reads as the latest take's; its wait
                    // runs from `at` itself to the same instant.
                    let mut live = stamps.clone();
                    expire(&mut live, latest.max(at), window);
                    assert_eq!(left, quota - live.len() as i64, "weir_sliding_left at {at}");
                    let want = if (live.len() as i64) < quota {
                        0
                    } else {
                        let out = live[0] as i128 + window as i128;
                        if out > i64::MAX as i128 || out - at as i128 > i64::MAX as i128 {
                            i64::MAX
                        } else {
                            (out - at as i128) as i64
                        }
                    };
                    assert_eq!(next, want, "weir_sliding_next at {at}");
                }
            }
        }
    }
    counting.end(|out| weir_sliding_read_counts(handle, out));
    weir_sliding_free(handle);
}

/// A sliding window's quota and window, as `weir_sliding_new` and
/// `weir_sliding_reconfigure` take them.
fn sliding_policy(input: &mut Input) -> (i64, i64) {
    let quota = match input.u8() % 4 {
        0 => 1 + input.below(4) as i64,
        1 => 1 + input.below(200) as i64,
        2 => input.i64().clamp(-5, 1 << 16),
        _ => input.i64(),
    };
    // A quota is real memory (8 bytes a stamp): keep the ones the
    // constructor would allocate small, and the ones it refuses as they are.
    let quota = if quota > 1 << 16 && quota < 1 << 60 {
        quota % (1 << 16) + 1
    } else {
        quota
    };
    let window = match input.u8() % 4 {
        0 => 1 + input.below(2048) as i64,
        1 => input.span(),
        _ => input.i64(),
    };
    (quota, window)
}

// ---------------------------------------------------------------------------
// The period counter: an exact model.

fn period(input: &mut Input) {
    let (mut quota, period_ns, mut align) = period_policy(input);
    let mut handle = null_mut();
    let status = weir_period_new(quota, period_ns, align, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null());
        assert!(
            quota <= 0,
            "weir_period_new({quota}, {period_ns}) answered {status:?}"
        );
        return;
    }
    assert!(quota > 0);
    trace!("weir_period_new({quota}, {period_ns}, {align})");
    let mut length = period_ns.max(1) as i128;
    let counter = handle as *const weir_period;
    let mut clock = Clock::new(input);
    // The open period (start, end, events) and the latest `now` seen.
    let mut open: Option<(i128, i128, i64)> = None;
    let mut latest = i64::MIN;
    let mut counting = Counting::begin(input.even(), || weir_period_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_period_read_counts(handle, out));
        let now = clock.tick(input);
        match input.u8() % 6 {
            5 => {
                // A new policy in place: the open period keeps its end and
                // its events, which count against the new quota; later
                // periods take the new length. A refusal changes nothing.
                let (q, p, a) = period_policy(input);
                let status = weir_period_reconfigure(handle, q, p, a);
                trace!("weir_period_reconfigure({q}, {p}, {a}) -> {status:?}");
                if status == WEIR_OK {
                    (quota, length, align) = (q, p.max(1) as i128, a);
                } else {
                    assert!(q <= 0 && status == WEIR_ERR_QUOTA, "{status:?}");
                }
            }
            0..=2 => {
                let count = if input.one_in(4) {
                    1 + input.below(FLOOD)
                } else {
                    1
                };
                for _ in 0..count {
                    let at = now.max(latest);
                    latest = at;
                    let t = at as i128;
                    let got = weir_period_take(counter, now);
                    trace!("period_take({now}) -> {got:?}, model {open:?}");
                    // A period whose end reaches INT64_MAX, the end of the
                    // clock, stays open for good (its `next` is INT64_MAX).
                    if open.is_none_or(|(_, end, _)| t >= end && end < i64::MAX as i128) {
                        let start = if align {
                            t.div_euclid(length) * length
                        } else {
                            t
                        };
                        open = Some((start, start + length, 0));
                    }
                    let want = period_count(&mut open, quota);
                    assert_eq!(
                        got, want,
                        "weir_period_take at {now} (latest {at}), {open:?}"
                    );
                }
            }
            _ => {
                // Readings at or before the latest `now`, which no version
                // of the counter lets move its clock.
                let at = if latest == i64::MIN || input.bool() {
                    latest
                } else {
                    latest.saturating_sub(input.span())
                };
                let left = weir_period_left(counter, at);
                let next = weir_period_next(counter, at);
                assert!(
                    (0..=quota).contains(&left),
                    "weir_period_left {left} of {quota}"
                );
                assert!(next >= 0);
                if at == latest && latest != i64::MIN {
                    let t = at as i128;
                    match open {
                        Some((_, end, events)) if t < end || end >= i64::MAX as i128 => {
                            assert_eq!(left, (quota - events).max(0), "weir_period_left at {at}");
                            if end >= i64::MAX as i128 {
                                assert_eq!(next, i64::MAX, "weir_period_next at {at}");
                            } else {
                                assert_eq!(next as i128, end - t, "weir_period_next at {at}");
                            }
                        }
                        _ => {
                            assert_eq!(left, quota, "weir_period_left at {at}, none open");
                            assert_eq!(next, 0, "weir_period_next at {at}, none open");
                        }
                    }
                }
            }
        }
    }
    assert_eq!(weir_period_take(null(), 0), WEIR_PERIOD_QUOTA_OVER);
    counting.end(|out| weir_period_read_counts(handle, out));
    weir_period_free(handle);
}

/// A period counter's quota, period and alignment, as `weir_period_new`
/// and `weir_period_reconfigure` take them.
fn period_policy(input: &mut Input) -> (i64, i64, bool) {
    let quota = match input.u8() % 4 {
        0 => 1 + input.below(4) as i64,
        1 => 1 + input.below(1000) as i64,
        2 => input.i64().clamp(-5, i64::MAX),
        _ => input.i64(),
    };
    let period_ns = match input.u8() % 4 {
        0 => 1 + input.below(2048) as i64,
        1 => input.span(),
        _ => input.i64(),
    };
    (quota, period_ns, input.bool())
}

/// Counts one event in the open period of the model.
fn period_count(open: &mut Option<(i128, i128, i64)>, quota: i64) -> weir_period_quota {
    let (_, _, events) = open.as_mut().expect("a period is open");
    if *events < quota {
        *events += 1;
        if *events == quota {
            WEIR_PERIOD_QUOTA_HIT
        } else {
            WEIR_PERIOD_QUOTA_UNDER
        }
    } else {
        WEIR_PERIOD_QUOTA_OVER
    }
}

// ---------------------------------------------------------------------------
// The gate: an exact model.

fn gate(input: &mut Input) {
    let mut limit = match input.u8() % 3 {
        0 => input.below(8) as i64,
        1 => input.i64(),
        _ => -(input.below(3) as i64),
    };
    let mut handle = null_mut();
    assert_eq!(weir_gate_new(limit, &mut handle), WEIR_OK);
    assert_eq!(weir_gate_new(limit, null_mut()), WEIR_ERR_NULL);
    let gate = handle as *const weir_gate;
    let mut held = 0i64;
    let mut counting = Counting::begin(input.even(), || weir_gate_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_gate_read_counts(handle, out));
        let count = 1 + input.below(64);
        if input.one_in(8) {
            // A new limit in place: the calls inside stay.
            limit = match input.u8() % 3 {
                0 => input.below(8) as i64,
                1 => input.i64(),
                _ => -(input.below(3) as i64),
            };
            assert_eq!(weir_gate_reconfigure(handle, limit), WEIR_OK);
        } else if input.bool() {
            for _ in 0..count {
                let room = limit <= 0 || held < limit;
                assert_eq!(
                    weir_gate_enter(gate),
                    room,
                    "weir_gate_enter at {held} of {limit}"
                );
                if room {
                    held += 1;
                }
            }
        } else {
            for _ in 0..count {
                weir_gate_leave(gate);
                held = (held - 1).max(0);
            }
        }
        assert_eq!(weir_gate_held(gate), held);
    }
    assert!(!weir_gate_enter(null()));
    assert_eq!(weir_gate_reconfigure(null_mut(), 1), WEIR_ERR_NULL);
    weir_gate_leave(null());
    assert_eq!(weir_gate_held(null()), 0);
    counting.end(|out| weir_gate_read_counts(handle, out));
    weir_gate_free(handle);
    weir_gate_free(null_mut());
}

// ---------------------------------------------------------------------------
// The embeddable limiter.

/// What the model knows of a limiter.
enum Kind {
    /// Consumed in all, and the bound on it: initial + amount per whole
    /// interval since the anchor.
    Bucket {
        amount: u64,
        interval: i64,
        anchor: i64,
        initial: u64,
        taken: u128,
    },
    /// Per window (by index from the anchor): what was consumed in it.
    Window {
        length: i64,
        anchor: i64,
        first: i128,
        initial: u64,
        taken: std::collections::BTreeMap<i128, u128>,
    },
    /// Exact: the gate's deadline if armed, else the units left in the
    /// batch.
    Cooldown {
        length: i64,
        gate: Option<i64>,
        left: u64,
    },
}

fn limiter(input: &mut Input) {
    let mut value = std::mem::MaybeUninit::<weir_limiter>::zeroed();
    let out = value.as_mut_ptr();
    let capacity = match input.u8() % 4 {
        0 => 1 + input.below(8),
        1 => input.u64(),
        2 => u64::MAX,
        _ => input.below(1000),
    };
    let initial = match input.u8() % 3 {
        0 => capacity,
        1 => input.below(capacity.saturating_add(1)),
        _ => input.u64(),
    };
    let mut clock = Clock::new(input);
    let now = clock.now;
    let length = match input.u8() % 3 {
        0 => 1 + input.below(2048) as i64,
        1 => input.span(),
        _ => input.i64(),
    };
    let anchor = match input.u8() % 3 {
        0 => now,
        1 => now.saturating_sub(input.span()),
        _ => input.i64(),
    };
    let (status, mut kind) = match input.u8() % 3 {
        0 => {
            let amount = match input.u8() % 3 {
                0 => 1,
                1 => input.below(100),
                _ => input.u64(),
            };
            let status = weir_limiter_bucket(out, capacity, amount, length, anchor, initial, now);
            let kind = Kind::Bucket {
                amount,
                interval: length,
                anchor,
                initial,
                taken: 0,
            };
            (status, kind)
        }
        1 => {
            let status = weir_limiter_fixed_window(out, capacity, length, anchor, initial, now);
            // The initial units are the anchor's window's: with an anchor
            // more than a window before `now`, the first consume at `now`
            // rolls over to the whole capacity. (The header says "left in
            // the current one"; see the reliability notes.)
            let first = 0;
            let kind = Kind::Window {
                length,
                anchor,
                first,
                initial,
                taken: Default::default(),
            };
            (status, kind)
        }
        _ => {
            let status = weir_limiter_cooldown(out, capacity, length, anchor, initial, now);
            let kind = Kind::Cooldown {
                length,
                gate: (anchor > now).then_some(anchor),
                left: if anchor > now || initial == 0 {
                    capacity
                } else {
                    initial
                },
            };
            (status, kind)
        }
    };
    if status != WEIR_OK {
        // SAFETY: weir_limiter is plain integers; zeroed is a valid value.
        let still = unsafe { value.assume_init() };
        assert_eq!(
            weir_limiter_capacity(&still),
            0,
            "a failed limiter constructor ({status:?}) wrote its output"
        );
        return;
    }
    // SAFETY: the constructor answered WEIR_OK, so it wrote the value.
    let mut limiter = unsafe { value.assume_init() };
    trace!("limiter {limiter:?}");
    let mut scribbled = false;
    // After a refund the model no longer knows the allowance; the header's
    // bounds (never above capacity, an error changes nothing) still hold.
    let mut refunded = false;
    assert_eq!(weir_limiter_capacity(&limiter), capacity);
    // The latest `now` a consume committed at: the value keeps no other
    // (not the constructor's).
    let mut latest = i64::MIN;
    while !input.is_empty() {
        let now = clock.tick(input);
        let available = weir_limiter_available(&limiter, now);
        assert!(available <= weir_limiter_capacity(&limiter) || scribbled);
        match input.u8() % 9 {
            0..=4 => {
                let amount = match input.u8() % 4 {
                    0 => 1,
                    1 => available,
                    2 => available.saturating_add(1),
                    _ => input.u64(),
                };
                let before = limiter;
                trace!("consume({amount}) at {now}, {available} available: {limiter:?}");
                let status = if input.bool() {
                    weir_limiter_consume(&mut limiter, now, amount)
                } else if weir_limiter_try_consume(&mut limiter, now, amount) {
                    WEIR_OK
                } else {
                    // The reason, from the same call on a copy: it must
                    // refuse too.
                    let mut copy = before;
                    let status = weir_limiter_consume(&mut copy, now, amount);
                    assert_ne!(status, WEIR_OK, "try_consume refused what consume took");
                    status
                };
                if status != WEIR_OK {
                    assert_eq!(
                        limiter, before,
                        "a failed consume ({status:?}) changed the value"
                    );
                    assert!(
                        scribbled
                            || amount == 0
                            || amount > available
                            || status == WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW,
                        "consume({amount}) at {now} refused ({status:?}) with {available} available"
                    );
                    continue;
                }
                assert!(
                    scribbled || (amount >= 1 && amount <= available),
                    "consume({amount}) at {now} taken with {available} available"
                );
                latest = latest.max(now);
                if scribbled || refunded {
                    continue;
                }
                limiter_model(&mut kind, now, latest, amount, capacity);
            }
            5 => {
                // The getters: each answers for its own variant only.
                let mut u = 0u64;
                let mut i = 0i64;
                let bucket = weir_limiter_is_bucket(&limiter);
                let window = weir_limiter_is_fixed_window(&limiter);
                let cooldown = weir_limiter_is_cooldown(&limiter);
                let own = |status: weir_status, mine: bool| {
                    if !scribbled {
                        assert_eq!(status == WEIR_OK, mine, "a getter answered {status:?}");
                    }
                };
                own(weir_limiter_refill_amount(&limiter, &mut u), bucket);
                own(weir_limiter_refill_interval_ns(&limiter, &mut i), bucket);
                own(weir_limiter_last_refill(&limiter, now, &mut i), bucket);
                own(weir_limiter_window_ns(&limiter, &mut i), window);
                own(weir_limiter_window_start(&limiter, now, &mut i), window);
                own(weir_limiter_cooldown_ns(&limiter, &mut i), cooldown);
                own(weir_limiter_cooldown_end(&limiter, &mut i), cooldown);
                if !scribbled {
                    let which = match kind {
                        Kind::Bucket { .. } => (true, false, false),
                        Kind::Window { .. } => (false, true, false),
                        Kind::Cooldown { .. } => (false, false, true),
                    };
                    assert_eq!((bucket, window, cooldown), which);
                }
                assert_eq!(weir_limiter_refill_amount(null(), &mut u), WEIR_ERR_NULL);
                assert_eq!(weir_limiter_consume(null_mut(), now, 1), WEIR_ERR_NULL);
            }
            6 => {
                // Scribble a private field: every call must check, none
                // may trust it; the model stops here.
                // SAFETY: weir_limiter is 48 bytes of plain integers,
                // aligned as a u64.
                let words = unsafe { &mut *(&mut limiter as *mut weir_limiter as *mut [u64; 6]) };
                words[input.below(6) as usize] = input.u64();
                scribbled = true;
            }
            8 => {
                // A refund: never above capacity, and an error changes
                // nothing.
                let amount = match input.u8() % 3 {
                    0 => 1,
                    1 => input.below(capacity.saturating_add(1)),
                    _ => input.u64(),
                };
                let taken_at = match input.u8() % 3 {
                    0 => now,
                    1 => latest.max(now.saturating_sub(input.span())),
                    _ => input.i64(),
                };
                let before = limiter;
                let status = weir_limiter_refund(&mut limiter, now, taken_at, amount);
                trace!("refund({amount}, taken at {taken_at}) at {now}: {status:?}");
                if status != WEIR_OK {
                    assert_eq!(
                        limiter, before,
                        "a failed refund ({status:?}) changed the value"
                    );
                    if !scribbled {
                        assert!(
                            amount == 0
                                || taken_at > now
                                || matches!(
                                    status,
                                    WEIR_ERR_REFUND_FULL
                                        | WEIR_ERR_REFUND_EXPIRED
                                        | WEIR_ERR_REFUND_ARMED
                                ),
                            "refund({amount}) at {now} refused with {status:?}"
                        );
                    }
                } else {
                    assert!(
                        amount >= 1 && taken_at <= now,
                        "refund({amount}) taken at {taken_at}"
                    );
                    if !scribbled {
                        let after = weir_limiter_available(&limiter, now);
                        assert!(
                            after <= capacity,
                            "a refund raised {after} above {capacity}"
                        );
                        refunded = true;
                    }
                }
                assert_eq!(weir_limiter_refund(null_mut(), now, now, 1), WEIR_ERR_NULL);
            }
            _ => {
                // A misaligned limiter is never read or written.
                let mut spare = [0u64; 8];
                let odd = (spare.as_mut_ptr() as *mut u8).wrapping_add(1 + input.below(7) as usize)
                    as *mut weir_limiter;
                assert_eq!(weir_limiter_consume(odd, now, 1), WEIR_ERR_MISALIGNED);
                assert!(!weir_limiter_try_consume(odd, now, 1));
                assert_eq!(weir_limiter_available(odd, now), 0);
                assert_eq!(
                    weir_limiter_bucket(odd, 1, 1, 1, 0, 1, 0),
                    WEIR_ERR_MISALIGNED
                );
                assert_eq!(spare, [0; 8]);
            }
        }
    }
}

/// Charges `amount`, consumed at `now` (the latest committed consume being
/// `latest`), to the model and checks the bound.
fn limiter_model(kind: &mut Kind, now: i64, latest: i64, amount: u64, capacity: u64) {
    match kind {
        Kind::Bucket {
            amount: refill,
            interval,
            anchor,
            initial,
            taken,
        } => {
            *taken += amount as u128;
            let whole = (latest as i128 - *anchor as i128).max(0) / *interval as i128;
            let most = *initial as u128 + *refill as u128 * whole as u128;
            assert!(
                *taken <= most,
                "bucket limiter: {taken} consumed by {latest}, at most {most}"
            );
        }
        Kind::Window {
            length,
            anchor,
            first,
            initial,
            taken,
        } => {
            let index = (latest as i128 - *anchor as i128).max(0) / *length as i128;
            let spent = taken.entry(index).or_insert(0);
            *spent += amount as u128;
            let most = if index == *first { *initial } else { capacity } as u128;
            assert!(
                *spent <= most,
                "fixed window: {spent} consumed in window {index}, at most {most}"
            );
        }
        Kind::Cooldown { length, gate, left } => {
            if let Some(end) = *gate {
                assert!(
                    now >= end,
                    "cooldown: consumed at {now} before its gate opens at {end}"
                );
                *gate = None;
                *left = capacity;
            }
            assert!(
                amount <= *left,
                "cooldown: consumed {amount} with {left} in the batch"
            );
            *left -= amount;
            if *left == 0 {
                *gate = Some(now.checked_add(*length).expect("the overflow was refused"));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The bloom array on the heap.

fn bloom(input: &mut Input) {
    let size_log2 = match input.u8() % 4 {
        0 => input.below(3) as u32,
        1 => input.below(13) as u32,
        2 => 33 + input.below(4) as u32,
        _ => input.u32(),
    };
    let hashes = match input.u8() % 3 {
        0 => 1,
        1 => 1 + input.below(8) as u32,
        _ => input.u32() % 12,
    };
    let (per_s, burst) = rate_params(input);
    let mut limit = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    if weir_rate_limit_new(per_s, burst, &mut limit) != WEIR_OK {
        let mut out = null_mut();
        let status = weir_bloom_new(4, 1, &limit, 1, 2, &mut out);
        assert_eq!(status, WEIR_ERR_RATE_LIMIT_INVALID);
        assert!(out.is_null());
        return;
    }
    let window_ns = burst as f64 * 1e9 / per_s;
    // A large array (up to 2^32 words) is real memory: only small ones,
    // and the sizes the constructor refuses.
    let size_log2 = if (13..=WEIR_BLOOM_MAX_SIZE_LOG2).contains(&size_log2) {
        size_log2 % 13
    } else {
        size_log2
    };
    // Either word kind: GCRA words under the same rate and burst (their
    // bound, burst + T × rate, is within the rate word's that RateBound
    // checks), where that limit exists.
    let mut gcra_limit = weir_gcra_limit {
        per_token: 0,
        tolerance: 0,
        shift: 0,
        reserved: 0,
    };
    let gcra = input.one_in(2) && weir_gcra_limit_new(per_s, burst, &mut gcra_limit) == WEIR_OK;
    let (seed0, seed1) = (input.u64(), input.u64());
    let mut handle = null_mut();
    let status = if gcra {
        weir_bloom_new_gcra(size_log2, hashes, &gcra_limit, seed0, seed1, &mut handle)
    } else {
        weir_bloom_new(size_log2, hashes, &limit, seed0, seed1, &mut handle)
    };
    if size_log2 > WEIR_BLOOM_MAX_SIZE_LOG2 {
        assert_eq!(status, WEIR_ERR_BLOOM_SIZE);
    } else if size_log2 < WEIR_BLOOM_MIN_SIZE_LOG2 {
        assert_eq!(status, WEIR_ERR_BLOOM_TOO_FEW_WORDS);
    }
    if hashes == 0 || hashes > WEIR_BLOOM_MAX_HASHES {
        assert_ne!(status, WEIR_OK);
    }
    if status != WEIR_OK {
        assert!(handle.is_null());
        return;
    }
    let bloom = handle as *const weir_bloom;
    let keys: Vec<Vec<u8>> = (0..1 + input.below(6))
        .map(|_| (0..input.below(24)).map(|_| input.u8()).collect())
        .collect();
    let mut bounds: Vec<RateBound> = keys
        .iter()
        .map(|_| RateBound::new(burst as u64, window_ns, hashes as u64))
        .collect();
    let mut alone = Some(RateBound::new(burst as u64, window_ns, 1));
    let mut first_key = None;
    let mut monotone = true;
    let mut clock = Clock::new(input);
    clock.now = clock.now.max(0);
    let mut latest = 0i64;
    let mut counting = Counting::begin(input.even(), || weir_bloom_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_bloom_read_counts(handle, out));
        let at = input.below(keys.len() as u64) as usize;
        let key = &keys[at];
        if first_key.is_some_and(|k| keys[k] != *key) {
            alone = None;
        }
        first_key.get_or_insert(at);
        let now = clock.tick(input);
        let count = match input.u8() % 4 {
            0 => 1 + input.below(FLOOD),
            1 => 0,
            _ => 1,
        };
        if count == 0 {
            let next = weir_bloom_next(bloom, now, key.as_ptr() as *const c_void, key.len());
            assert!(next >= 0);
            if now < 0 {
                assert_eq!(next, i64::MAX);
            } else if now >= latest && (alone.is_some() || monotone) {
                let allowed =
                    weir_bloom_allow(bloom, now, key.as_ptr() as *const c_void, key.len());
                assert_eq!(allowed, next == 0, "weir_bloom_next said {next} at {now}");
                if allowed {
                    latest = now;
                    bloom_admitted(&mut alone, &mut bounds[at], monotone, latest);
                }
            }
            continue;
        }
        for _ in 0..count {
            if weir_bloom_allow(bloom, now, key.as_ptr() as *const c_void, key.len()) {
                assert!(now >= 0);
                if now < latest {
                    monotone = false;
                }
                latest = latest.max(now);
                bloom_admitted(&mut alone, &mut bounds[at], monotone, latest);
            }
        }
    }
    assert!(!weir_bloom_allow(bloom, 0, null(), 0));
    assert_eq!(weir_bloom_next(bloom, 0, null(), 0), i64::MAX);
    assert!(!weir_bloom_allow(
        null(),
        0,
        b"k".as_ptr() as *const c_void,
        1
    ));
    counting.end(|out| weir_bloom_read_counts(handle, out));
    weir_bloom_free(handle);
    weir_bloom_free(null_mut());
}

/// Checks an event admitted for a key: the one-word bound while only one
/// key has been used, `hashes` times it while the clock has only gone
/// forwards (each word then sees the running maximum).
fn bloom_admitted(alone: &mut Option<RateBound>, own: &mut RateBound, monotone: bool, at: i64) {
    if skipped("rate-bound") {
        return;
    }
    if let Some(bound) = alone {
        bound.admitted(at, "weir_bloom_allow, one key");
    }
    if monotone {
        own.admitted(at, "weir_bloom_allow");
    }
}

// ---------------------------------------------------------------------------
// The GCRA word.

fn gcra(input: &mut Input) {
    let rate = match input.u8() % 4 {
        0 => 1.0 + input.below(1000) as f64,
        1 => input.unit() * 16e9,
        2 => 1e9 / (1 + input.below(2048)) as f64,
        _ => input.f64(),
    };
    let burst = match input.u8() % 4 {
        0 => 1,
        1 => 1 + input.below(1024) as i64,
        2 => input.i64(),
        _ => 1 + input.below(10) as i64,
    };
    let mut limit = std::mem::MaybeUninit::<weir_gcra_limit>::zeroed();
    let status = weir_gcra_limit_new(rate, burst, limit.as_mut_ptr());
    // SAFETY: weir_gcra_limit is plain integers; zeroed is a valid value.
    let limit = unsafe { limit.assume_init() };
    if status != WEIR_OK {
        assert_eq!(
            limit.per_token, 0,
            "a failed weir_gcra_limit_new ({status:?}) wrote *out"
        );
        return;
    }
    trace!("gcra limit {limit:?} for {rate}/s, burst {burst}");
    let max_now = (1i64 << 62) >> limit.shift;
    let mut word = weir_gcra { state: 0 };
    let mut clock = Clock::new(input);
    while !input.is_empty() {
        let now = clock.tick(input);
        let count = match input.u8() % 4 {
            0 => 1 + input.below(FLOOD),
            _ => 1,
        };
        let n = match input.u8() % 4 {
            0 => 1 + input.below(burst.min(8) as u64) as i64,
            1 => burst,
            2 => input.i64(),
            _ => 1,
        };
        for _ in 0..count {
            let room = weir_gcra_room(&word, &limit, now);
            let next = weir_gcra_next(&word, &limit, now);
            assert!((0..=burst).contains(&room), "room {room} of burst {burst}");
            let valid = (0..=max_now).contains(&now);
            if valid {
                // The Retry-After and the remaining count agree.
                assert_eq!(next == 0, room > 0, "next {next} with room {room} at {now}");
            }
            let before = word.state;
            let passed = if n == 1 {
                weir_gcra_allow(&mut word, &limit, now)
            } else {
                weir_gcra_allow_n(&mut word, &limit, now, n)
            };
            if !passed {
                assert_eq!(word.state, before, "a refusal wrote the word");
            }
            if valid {
                // Exactly what the room said: n passes while n ≤ room.
                let fits = n >= 1 && n <= room;
                assert_eq!(passed, fits, "{n} at {now} with room {room}");
                if passed {
                    assert_eq!(weir_gcra_room(&word, &limit, now), room - n);
                }
            } else if now < 0 {
                assert!(!passed, "a negative now was admitted");
            }
        }
    }
    assert!(!weir_gcra_allow(null_mut(), &limit, clock.now));
    assert!(!weir_gcra_allow(&mut word, null(), clock.now));
    assert_eq!(weir_gcra_next(null(), &limit, clock.now), i64::MAX);
    assert_eq!(weir_gcra_room(null(), &limit, clock.now), 0);
    assert_eq!(weir_gcra_limit_new(rate, burst, null_mut()), WEIR_ERR_NULL);
}

// ---------------------------------------------------------------------------
// The lease.

/// A lease against a model store that grants what is asked (or less, or
/// nothing) with hostile instants, its policy changed in place now and
/// then: it never admits more units than were granted, never holds more
/// than the largest cap it has had while grants answer its asks, never
/// asks past the cap in force, and a failed call changes nothing.
fn lease(input: &mut Input) {
    let mut policy = weir_lease_policy_preset();
    if input.bool() {
        policy.ttl_ns = if input.bool() {
            1_000_000 + input.below(3_600_000_000_000) as i64
        } else {
            input.i64()
        };
        policy.interval_ns = if input.bool() {
            1_000 + input.below(policy.ttl_ns.max(1_001) as u64 - 1_000) as i64
        } else {
            input.i64()
        };
        policy.burst = if input.bool() {
            1 + input.below(1 << 20) as i64
        } else {
            input.i64()
        };
        policy.share = if input.bool() { input.unit() } else { input.f64() };
    }
    let mut clock = Clock::new(input);
    let mut handle = null_mut();
    let status = weir_lease_new(&policy, clock.now, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null(), "a failed weir_lease_new wrote *out");
        return;
    }
    trace!("lease {policy:?}");
    let lease = handle as *const weir_lease;
    let mut cap = weir_lease_cap(lease);
    assert!(cap >= 1 && cap <= policy.burst);
    // The largest cap the lease has had: units held above a lower one stay.
    let mut most = cap;
    let mut granted = 0u64;
    let mut spent = 0u64;
    let mut asked = 0i64;
    let mut counting = Counting::begin(input.even(), || weir_lease_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_lease_read_counts(handle, out));
        let now = clock.tick(input);
        let unspent = weir_lease_unspent(lease, now);
        assert_eq!(weir_lease_unspent(lease, now), unspent);
        assert!(unspent <= most, "{unspent} held over the cap {most}");
        match input.u8() % 5 {
            0 | 1 => {
                let cost = if input.one_in(8) {
                    input.i64()
                } else {
                    1 + input.below(cap.min(64) as u64) as i64
                };
                let mut answer = weir_lease_answer::default();
                let status = weir_lease_take(lease, now, cost, &mut answer);
                if status != WEIR_OK {
                    assert_eq!(status, WEIR_ERR_LEASE_COST);
                    assert_eq!(weir_lease_unspent(lease, now), unspent);
                    continue;
                }
                match answer.verdict {
                    WEIR_LEASE_GO => {
                        assert!(unspent >= cost, "went with {unspent} held for {cost}");
                        spent += cost as u64;
                    }
                    WEIR_LEASE_ASK => assert!(answer.ask >= 1),
                    _ => assert!(answer.retry_after_ns >= 1),
                }
                if answer.ask > 0 {
                    assert!(
                        weir_lease_unspent(lease, now) + answer.ask <= cap,
                        "asked past the cap"
                    );
                    asked = answer.ask;
                }
            }
            2 => {
                // The store answers the ask: all, part or none of it.
                let n = if asked > 0 { input.below(asked as u64 + 1) as i64 } else { 0 };
                let until = now.saturating_add(input.span());
                assert_eq!(weir_lease_grant(lease, now, n, until, now), WEIR_OK);
                granted += n as u64;
                asked = 0;
            }
            3 => {
                let mut next = policy;
                match input.u8() % 3 {
                    0 => next.share = input.unit(),
                    1 => next.burst = 1 + input.below(1 << 20) as i64,
                    _ => next.share = input.f64(),
                }
                let status = weir_lease_reconfigure(lease, &next);
                assert_eq!(weir_lease_unspent(lease, now), unspent);
                if status == WEIR_OK {
                    cap = weir_lease_cap(lease);
                    most = most.max(cap);
                    assert!(cap >= 1 && cap <= next.burst);
                } else {
                    assert_eq!(status, WEIR_ERR_LEASE_SHARE);
                    assert_eq!(weir_lease_cap(lease), cap);
                }
            }
            _ => {
                let live = weir_lease_release(lease, now);
                assert_eq!(live, unspent.min(live));
            }
        }
        assert!(spent <= granted, "spent {spent} of {granted} granted");
        let mut stats = weir_lease_stats::default();
        assert_eq!(weir_lease_read_stats(lease, now, &mut stats), WEIR_OK);
        assert_eq!(stats.spent, spent);
        assert_eq!(stats.granted, granted);
    }
    assert_eq!(weir_lease_grant(lease, 0, -1, 0, 0), WEIR_ERR_LEASE_GRANT);
    assert_eq!(weir_lease_expires(null(), 0), i64::MAX);
    counting.end(|out| weir_lease_read_counts(handle, out));
    weir_lease_free(handle);
    let _ = weir_lease_policy_preset();
}

// ---------------------------------------------------------------------------
// The retry budget.

fn budget(input: &mut Input) {
    let mut policy = weir_budget_policy_preset();
    if input.bool() {
        policy.form = match input.u8() % 4 {
            0 => WEIR_BUDGET_TOKENS,
            1 => WEIR_BUDGET_PERCENT,
            _ => input.u32() as i32,
        };
        policy.max_tokens = match input.u8() % 3 {
            0 => 1 + input.below(20) as i32,
            1 => input.u32() as i32,
            _ => 0,
        };
        policy.token_ratio = if input.bool() {
            input.unit() * 2.0
        } else {
            input.f64()
        };
        policy.ttl_ns = if input.bool() {
            input.span()
        } else {
            input.i64()
        };
        policy.min_per_s = match input.u8() % 3 {
            0 => input.below(20) as i32,
            1 => input.u32() as i32,
            _ => 0,
        };
        policy.percent = if input.bool() {
            input.unit() * 3.0
        } else {
            input.f64()
        };
        if input.one_in(8) {
            policy.reserved = input.u32() as i32;
        }
    }
    let mut clock = Clock::new(input);
    let mut handle = null_mut();
    let status = weir_budget_new(&policy, clock.now, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null(), "a failed weir_budget_new wrote *out");
        return;
    }
    trace!("budget {policy:?}");
    let budget = handle as *const weir_budget;
    let mut tokens_form = policy.form == WEIR_BUDGET_TOKENS;
    let mut counting = Counting::begin(input.even(), || weir_budget_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_budget_read_counts(handle, out));
        let now = clock.tick(input);
        // A new policy in place now and then: a token count kept up to the
        // new maximum; a refusal changes nothing.
        if input.one_in(16) {
            let mut next = policy;
            match input.u8() % 4 {
                0 => next.form = 1 - next.form.clamp(0, 1),
                1 => next.max_tokens = 1 + input.below(20) as i32,
                2 => next.percent = input.unit() * 3.0,
                _ => next.ttl_ns = input.span(),
            }
            let before = (weir_budget_left(budget, now), weir_budget_tokens(budget, now));
            let status = weir_budget_reconfigure(handle, &next, now);
            trace!("weir_budget_reconfigure({next:?}, {now}) -> {status:?}");
            let after = (weir_budget_left(budget, now), weir_budget_tokens(budget, now));
            if status == WEIR_OK {
                if tokens_form && next.form == WEIR_BUDGET_TOKENS {
                    assert_eq!(after.1, before.1.min(1000 * i64::from(next.max_tokens)));
                }
                tokens_form = next.form == WEIR_BUDGET_TOKENS;
                policy = next;
            } else {
                assert_eq!(after, before, "a refused change wrote");
            }
        }
        let count = match input.u8() % 4 {
            0 => 1 + input.below(FLOOD),
            _ => 1,
        };
        let withdraw = input.bool();
        for _ in 0..count {
            let left = weir_budget_left(budget, now);
            let tokens = weir_budget_tokens(budget, now);
            // Readings change nothing.
            assert_eq!(weir_budget_left(budget, now), left);
            assert_eq!(weir_budget_tokens(budget, now), tokens);
            assert!(left >= 0, "weir_budget_left answered {left}");
            if tokens_form {
                let most = 1000 * i64::from(policy.max_tokens);
                assert!((0..=most).contains(&tokens), "{tokens} tokens of {most}");
            }
            if withdraw {
                // `left` is how many withdrawals in a row would answer true.
                let granted = weir_budget_withdraw(budget, now);
                assert_eq!(granted, left > 0, "withdraw at {now} with {left} left");
                if !granted && !tokens_form {
                    assert_eq!(
                        weir_budget_tokens(budget, now),
                        tokens,
                        "a refusal took credit"
                    );
                }
                if granted {
                    assert_eq!(weir_budget_left(budget, now), left - 1);
                }
            } else {
                weir_budget_deposit(budget, now);
                assert!(
                    weir_budget_left(budget, now) >= left,
                    "a deposit lowered what is left"
                );
            }
        }
    }
    assert!(!weir_budget_withdraw(null(), clock.now));
    weir_budget_deposit(null(), clock.now);
    assert_eq!(weir_budget_left(null(), clock.now), 0);
    assert_eq!(weir_budget_tokens(null(), clock.now), 0);
    assert_eq!(
        weir_budget_new(&policy, clock.now, null_mut()),
        WEIR_ERR_NULL
    );
    counting.end(|out| weir_budget_read_counts(handle, out));
    weir_budget_free(handle);
    weir_budget_free(null_mut());
}

// ---------------------------------------------------------------------------
// The adaptive concurrency limit.

/// A partitioned limit: the calls in flight are the partitions' sum, no
/// call enters with the limit full, and each leaves once.
fn partitioned(input: &mut Input, policy: weir_concurrency_policy) {
    let count = match input.u8() % 8 {
        0 => input.u32() as i32,
        n => i32::from(n % 5),
    };
    let parts: Vec<weir_concurrency_partition> = (0..17)
        .map(|_| weir_concurrency_partition {
            share: if input.bool() { input.unit() / 3.0 } else { input.f64() },
            borrow: if input.bool() { input.below(8) as i64 } else { input.u32() as i64 - (1 << 31) },
        })
        .collect();
    let mut handle = null_mut();
    let status = weir_concurrency_new_partitioned(&policy, parts.as_ptr(), count, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null(), "a failed weir_concurrency_new_partitioned wrote *out");
        return;
    }
    let limit = handle as *const weir_concurrency;
    let mut clock = Clock::new(input);
    let mut flights: Vec<(i32, weir_concurrency_ticket)> = Vec::new();
    while !input.is_empty() {
        let now = clock.tick(input);
        let cap = weir_concurrency_limit(limit);
        let flying = weir_concurrency_flying(limit);
        assert_eq!(flying, flights.len() as i64);
        let sum: i64 = (0..count).map(|p| weir_concurrency_partition_flying(limit, p)).sum();
        assert_eq!(sum, flying);
        let part = i32::from(input.u8() % 6) - 1;
        if input.bool() {
            let mut flight = weir_concurrency_ticket::default();
            let room = weir_concurrency_partition_room(limit, part);
            assert!(room >= 0 && room <= cap);
            let status = weir_concurrency_enter_partition(limit, part, now, &mut flight);
            if !(0..count).contains(&part) {
                assert_eq!(status, WEIR_ERR_CONCURRENCY_PARTITION);
                continue;
            }
            assert_eq!(status, WEIR_OK);
            if flight.flying == 1 {
                assert!(flying < cap, "entered with {flying} in flight of {cap}");
                flights.push((part, flight));
            }
        } else if !flights.is_empty() {
            let (p, mut flight) = flights.swap_remove(input.below(flights.len() as u64) as usize);
            assert_eq!(
                weir_concurrency_leave_partition(limit, p, &mut flight, now, input.bool()),
                WEIR_OK
            );
            assert_eq!(
                weir_concurrency_leave_partition(limit, p, &mut flight, now, false),
                WEIR_ERR_SETTLED
            );
        }
    }
    weir_concurrency_free(handle);
}

fn concurrency(input: &mut Input) {
    let mut policy = weir_concurrency_policy_preset();
    if input.bool() {
        policy.min_limit = 1 + input.below(50) as i32;
        policy.max_limit = policy.min_limit + input.below(200) as i32;
        policy.initial_limit = match input.u8() % 3 {
            0 => policy.min_limit,
            1 => policy.max_limit,
            _ => input.u32() as i32,
        };
        policy.queue_size = input.below(10) as i32;
        policy.smoothing = if input.bool() {
            input.unit()
        } else {
            input.f64()
        };
        policy.tolerance = if input.bool() {
            1.0 + input.unit()
        } else {
            input.f64()
        };
        policy.long_window = match input.u8() % 3 {
            0 => 1 + input.below(1000) as i32,
            1 => input.u32() as i32,
            _ => 0,
        };
        policy.warmup = input.below(20) as i32;
    }
    if input.u8() % 4 == 0 {
        return partitioned(input, policy);
    }
    let mut handle = null_mut();
    let status = weir_concurrency_new(&policy, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null(), "a failed weir_concurrency_new wrote *out");
        return;
    }
    trace!("concurrency {policy:?}");
    let limit = handle as *const weir_concurrency;
    let (mut low, mut high) = (i64::from(policy.min_limit), i64::from(policy.max_limit));
    let mut clock = Clock::new(input);
    let mut flights: Vec<weir_concurrency_ticket> = Vec::new();
    let mut counting = Counting::begin(input.even(), || weir_concurrency_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_concurrency_read_counts(handle, out));
        let now = clock.tick(input);
        // A new policy in place now and then: the limit held to the new
        // bounds, the calls in flight kept; a refusal changes nothing.
        if input.one_in(16) {
            let mut next = policy;
            next.min_limit = input.below(30) as i32;
            next.max_limit = next.min_limit + input.below(300) as i32;
            next.initial_limit = next.min_limit;
            let before = (weir_concurrency_limit(limit), weir_concurrency_flying(limit));
            let status = weir_concurrency_reconfigure(handle, &next);
            trace!("weir_concurrency_reconfigure({next:?}) -> {status:?}");
            let after = (weir_concurrency_limit(limit), weir_concurrency_flying(limit));
            assert_eq!(after.1, before.1, "a change moved the calls in flight");
            if status == WEIR_OK {
                policy = next;
                (low, high) = (i64::from(next.min_limit), i64::from(next.max_limit));
                assert_eq!(after.0, before.0.clamp(low, high));
            } else {
                assert_eq!(after, before, "a refused change wrote");
            }
        }
        let cap = weir_concurrency_limit(limit);
        assert!(
            (low..=high).contains(&cap),
            "limit {cap} outside [{low}, {high}]"
        );
        let flying = weir_concurrency_flying(limit);
        assert_eq!(flying, flights.len() as i64);
        let rtt = weir_concurrency_long_rtt(limit);
        assert!(rtt.is_finite() && rtt >= 0.0, "long rtt {rtt}");
        if input.bool() {
            let mut flight = weir_concurrency_ticket::default();
            let entered = weir_concurrency_enter(limit, now, &mut flight);
            // In at most `limit` at once: entered exactly while there is room.
            assert_eq!(
                entered,
                flying < cap,
                "enter with {flying} in flight of {cap}"
            );
            if entered {
                flights.push(flight);
            } else {
                // A refusal's flight has already left.
                assert_eq!(
                    weir_concurrency_leave(limit, &mut flight, now, false),
                    WEIR_ERR_SETTLED
                );
            }
        } else if !flights.is_empty() {
            let mut flight = flights.swap_remove(input.below(flights.len() as u64) as usize);
            let dropped = input.bool();
            assert_eq!(
                weir_concurrency_leave(limit, &mut flight, now, dropped),
                WEIR_OK
            );
            // It leaves once.
            assert_eq!(
                weir_concurrency_leave(limit, &mut flight, now, dropped),
                WEIR_ERR_SETTLED
            );
        }
    }
    let mut flight = weir_concurrency_ticket::default();
    assert!(!weir_concurrency_enter(null(), clock.now, &mut flight));
    assert!(!weir_concurrency_enter(limit, clock.now, null_mut()));
    assert_eq!(
        weir_concurrency_leave(null(), &mut flight, clock.now, false),
        WEIR_ERR_NULL
    );
    assert_eq!(weir_concurrency_limit(null()), 0);
    assert_eq!(weir_concurrency_flying(null()), 0);
    assert_eq!(weir_concurrency_new(&policy, null_mut()), WEIR_ERR_NULL);
    counting.end(|out| weir_concurrency_read_counts(handle, out));
    weir_concurrency_free(handle);
    weir_concurrency_free(null_mut());
}

// ---------------------------------------------------------------------------
// The plain functions: backoff, deadline, status, version.

fn plain(input: &mut Input) {
    // SAFETY: weir_version and weir_status_str return static C strings.
    let version = unsafe { CStr::from_ptr(weir_version()) };
    assert!(!version.to_bytes().is_empty());
    // The fuzzed host has lock-free 64-bit words: they may be shared.
    assert_eq!(weir_words_shareable(), WEIR_OK);
    while !input.is_empty() {
        match input.u8() % 3 {
            0 => {
                let code = input.u32() as i32;
                // SAFETY: as above.
                let text = unsafe { CStr::from_ptr(weir_status_str(code)) };
                assert!(!text.to_bytes().is_empty());
            }
            1 => {
                let mut policy = if input.bool() {
                    weir_backoff_preset()
                } else {
                    weir_backoff_full_jitter()
                };
                match input.u8() % 7 {
                    0 => policy.base_ns = input.i64(),
                    1 => policy.factor = input.f64(),
                    2 => policy.cap_ns = input.i64(),
                    3 => policy.attempts = input.u32() as i32,
                    4 => policy.jitter = input.u8() as i32 % 6,
                    5 => policy.spread = input.f64(),
                    _ => {}
                }
                let ok = weir_backoff_check(&policy) == WEIR_OK;
                let retry = (input.u16() as i32) - 100;
                let ceiling = weir_backoff_ceiling(&policy, retry);
                let delay = weir_backoff_delay(&policy, retry, input.f64(), input.i64());
                let more = weir_backoff_more(&policy, input.u8() as i32 - 3);
                let draws = [input.f64(), input.unit(), input.unit()];
                let mut out = [0i64; 8];
                let room = input.below(9) as usize;
                let wrote =
                    weir_backoff_schedule(&policy, draws.as_ptr(), 3, out.as_mut_ptr(), room);
                assert!(wrote <= room);
                if ok {
                    assert!(
                        (0..=policy.cap_ns).contains(&ceiling),
                        "ceiling {ceiling}: {policy:?}"
                    );
                    assert!(delay >= 0, "delay {delay}: {policy:?}");
                    if policy.jitter != WEIR_BACKOFF_JITTER_SPREAD {
                        assert!(delay <= policy.cap_ns, "delay {delay}: {policy:?}");
                    }
                    assert!(out[..wrote].iter().all(|&d| d >= 0));
                    assert!(wrote <= (policy.attempts as usize).saturating_sub(1));
                } else {
                    assert_eq!(
                        (ceiling, delay, more, wrote),
                        (-1, -1, false, 0),
                        "{policy:?}"
                    );
                }
            }
            _ => {
                let budget = input.i64();
                let start = input.i64();
                let deadline = weir_deadline_start(budget, start);
                let now = input.i64();
                let expired = weir_deadline_expired(&deadline, now);
                let mut left = -7;
                let has = weir_deadline_remaining(&deadline, now, &mut left);
                if budget <= 0 {
                    assert!(!expired && !has && left == -7);
                } else {
                    assert!(
                        has && (0..=budget).contains(&left),
                        "{deadline:?} at {now}: {left}"
                    );
                    assert_eq!(expired, left == 0);
                }
                assert!(weir_deadline_expired(null(), now));
            }
        }
    }
}
