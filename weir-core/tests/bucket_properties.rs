//! Properties of the token bucket over random call sequences:
//! rates from zero to 10^9 a second and bursts from under one to
//! thousands, instants at every phase of the 512 ns grid, many calls at
//! one instant, time going backwards, the ends of the clock. What the
//! header states is checked:
//!
//! - within the bound: the tokens taken at instants within any T seconds
//!   are at most burst + rate × T, whatever their order; a full bucket
//!   admits exactly floor(burst) unit takes at one instant;
//! - readings (`tokens`, `next`) are pure: inserted anywhere, at any `now`,
//!   they change no later answer;
//! - a take that is refused for its cost (zero, negative, NaN, infinite,
//!   more than the bucket holds) changes nothing;
//! - time going backwards: a take at a `now` earlier than one a take
//!   already used passes only if a take at that latest `now` would have,
//!   and then leaves the bucket as that would have. Readings set no such
//!   time (the one documented exception: they write nothing).

mod grid;
#[path = "support/runner.rs"]
mod runner;

use grid::{instants, start, step};
use proptest::prelude::*;
use weir_core::bucket::Bucket;
use weir_core::time::NEVER;

/// A rate at the edges of the time format's ticks, and anywhere.
fn rate() -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => Just(0.0),
        1 => Just(1e-3),
        1 => Just(1.0),
        1 => Just(3.0),
        1 => Just(7.0),
        1 => Just(20.0),
        1 => Just(1e6 / 7.0),
        1 => Just(7.8125e6),
        1 => Just(7.9e6),
        1 => Just(1.25e8),
        1 => Just(1.3e8),
        1 => Just(3e8),
        1 => Just(7.5e8),
        2 => Just(1e9),
        4 => (-3.0..9.0f64).prop_map(|e| 10f64.powf(e)),
    ]
}

/// A burst as the constructor takes it (0 or less is the rate).
fn burst() -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => Just(0.0),
        1 => Just(-1.0),
        1 => Just(0.25),
        3 => Just(1.0),
        1 => Just(1.5),
        1 => Just(2.5),
        2 => Just(7.0),
        1 => Just(1023.0),
        3 => (1..=200u32).prop_map(f64::from),
        2 => 1.0..1e4f64,
    ]
}

/// How many tokens a call asks for, relative to the bucket.
#[derive(Clone, Copy, Debug)]
enum Ask {
    One,
    Half,
    /// This fraction of what the bucket holds.
    Part(f64),
    /// All it holds.
    All,
    /// A cost the bucket refuses: 0, -0, -1, NaN, ±inf, over the burst.
    Bad(u8),
}

impl Ask {
    fn tokens(self, bucket: &Bucket) -> f64 {
        match self {
            Ask::One => 1.0,
            Ask::Half => 0.5,
            Ask::Part(f) => (f * bucket.burst()).max(f64::MIN_POSITIVE),
            Ask::All => bucket.burst(),
            Ask::Bad(k) => [
                0.0,
                -0.0,
                -1.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                bucket.burst() * 1.5 + 1.0,
            ][usize::from(k % 7)],
        }
    }
}

fn ask() -> impl Strategy<Value = Ask> {
    prop_oneof![
        6 => Just(Ask::One),
        1 => Just(Ask::Half),
        2 => (0.0..=1.0f64).prop_map(Ask::Part),
        1 => Just(Ask::All),
        1 => any::<u8>().prop_map(Ask::Bad),
    ]
}

/// What a call does.
#[derive(Clone, Copy, Debug)]
enum Call {
    Take(Ask),
    /// `tokens` at this instant.
    Tokens(i64),
    /// `next` at this instant.
    Next(i64, Ask),
}

fn reading() -> impl Strategy<Value = Call> {
    let at = prop_oneof![any::<i64>(), 0..=1i64 << 40];
    prop_oneof![
        at.clone().prop_map(Call::Tokens),
        (at, ask()).prop_map(|(at, ask)| Call::Next(at, ask)),
    ]
}

/// A bucket's settings, where it was made, and its takes' instants and
/// costs.
#[derive(Clone, Debug)]
struct Case {
    rate: f64,
    burst: f64,
    made: i64,
    takes: Vec<(i64, Ask)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        rate(),
        burst(),
        start(),
        any::<bool>(),
        prop::collection::vec((step(), ask()), 1..160),
    )
        .prop_map(|(rate, burst, made, by_burst, steps)| {
            let interval = if rate > 0.0 { 1e9 / rate } else { 1e9 };
            let tokens = if by_burst { burst.max(1.0) } else { 1.0 };
            let unit = (interval * tokens).clamp(8.0, 1e15) as i64;
            let (moves, asks): (Vec<_>, Vec<_>) = steps.into_iter().unzip();
            let nows = instants(unit, made, &moves);
            Case {
                rate,
                burst,
                made,
                takes: nows.into_iter().zip(asks).collect(),
            }
        })
}

impl Case {
    /// A fresh bucket, or `None` if the constructor refuses the settings.
    fn bucket(&self) -> Option<Bucket> {
        Bucket::new(self.rate, self.burst, self.made).ok()
    }

    /// The bucket after these takes.
    fn replay(&self, takes: &[(i64, f64)]) -> Bucket {
        let bucket = self.bucket().unwrap();
        for &(now, n) in takes {
            bucket.take(now, n);
        }
        bucket
    }
}

/// The bucket's state, to compare two buckets: its word, through `Debug`.
fn state(bucket: &Bucket) -> String {
    format!("{bucket:?}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn within_the_bound_and_backwards_never_admits_more(case in case()) {
        let Some(bucket) = case.bucket() else { return Ok(()) };
        let burst = bucket.burst();
        let mut history: Vec<(i64, f64)> = Vec::new();
        let mut latest: Option<i64> = None;
        let mut passed: Vec<(i64, f64)> = Vec::new();
        for &(now, ask) in &case.takes {
            let n = ask.tokens(&bucket);
            let before = state(&bucket);
            let wait = bucket.next(now, n);
            let took = bucket.take(now, n);
            if !bucket.holds(n) {
                // Refused for its cost: nothing changed, and never comes.
                prop_assert!(!took);
                prop_assert_eq!(wait, NEVER);
                prop_assert_eq!(state(&bucket), before);
                continue;
            }
            // `next` names the first instant the take passes.
            prop_assert_eq!(wait == 0, took, "n {} at {}: next {}", n, now, wait);
            if wait > 0 && wait < NEVER {
                let early = case.replay(&history);
                prop_assert!(!early.take(now + wait - 1, n));
                prop_assert!(early.take(now + wait, n));
            }
            // Backwards: judged no better than at the latest take's `now`,
            // and when it passes the bucket is left as that would leave it.
            if let Some(latest) = latest.filter(|&l| l > now) {
                let there = case.replay(&history);
                let would = there.take(latest, n);
                prop_assert!(!took || would, "n {} at {} passed, at {} refused", n, now, latest);
                if took {
                    prop_assert_eq!(state(&there), state(&bucket));
                }
            }
            if !took {
                prop_assert_eq!(state(&bucket), before, "a refusal wrote");
            }
            history.push((now, n));
            latest = Some(latest.map_or(now, |l| l.max(now)));
            if took {
                passed.push((now, n));
            }
            let tokens = bucket.tokens(now);
            prop_assert!((0.0..=burst).contains(&tokens), "tokens {}", tokens);
        }
        // Tokens at instants within any T seconds: at most burst + rate × T.
        passed.sort_by_key(|&(now, _)| now);
        let passed: Vec<_> = passed.into_iter().map(|(now, n)| (now, n, false)).collect();
        let secs = |from: i64, to: i64| (i128::from(to) - i128::from(from)) as f64 / 1e9;
        within(&passed, |(a, _), (b, _)| burst + case.rate * secs(a, b))?;
    }

    #[test]
    fn a_full_bucket_admits_exactly_floor_burst_unit_takes(
        rate in rate(),
        burst in burst(),
        made in start(),
        later in prop_oneof![Just(0i64), 0..=1000i64, 0..=1i64 << 40],
    ) {
        let Ok(bucket) = Bucket::new(rate, burst, made) else { return Ok(()) };
        let now = made.saturating_add(later);
        let whole = if burst <= 0.0 { rate } else { burst }.max(1.0).floor();
        if whole <= 5000.0 {
            let admitted = (0..whole as usize + 3).filter(|_| bucket.take(now, 1.0)).count();
            prop_assert_eq!(admitted as f64, whole);
        } else {
            prop_assert!(bucket.take(now, whole - 1.0));
            prop_assert!(bucket.take(now, 1.0));
            prop_assert!(!bucket.take(now, 1.0));
        }
        // A whole burst is held exactly: all of it passes at once.
        let fresh = Bucket::new(rate, burst, made).unwrap();
        if fresh.burst() == whole {
            prop_assert!(fresh.take(now, whole));
        }
    }

    #[test]
    fn readings_and_refused_costs_change_no_later_answer(
        case in case(),
        inserted in prop::collection::vec((prop_oneof![reading(), any::<u8>().prop_map(|k| Call::Take(Ask::Bad(k)))], any::<prop::sample::Index>()), 0..40),
    ) {
        let Some(plain) = case.bucket() else { return Ok(()) };
        let answers: Vec<bool> = case
            .takes
            .iter()
            .map(|&(now, ask)| plain.take(now, ask.tokens(&plain)))
            .collect();
        let mut at: Vec<Vec<Call>> = vec![Vec::new(); case.takes.len()];
        for (call, index) in inserted {
            at[index.index(case.takes.len())].push(call);
        }
        let bucket = case.bucket().unwrap();
        for (i, &(now, ask)) in case.takes.iter().enumerate() {
            for &call in &at[i] {
                match call {
                    Call::Tokens(other) => {
                        bucket.tokens(other);
                    }
                    Call::Next(other, ask) => {
                        bucket.next(other, ask.tokens(&bucket));
                    }
                    Call::Take(bad) => {
                        let n = bad.tokens(&bucket);
                        prop_assert!(!bucket.take(now, n));
                        prop_assert_eq!(bucket.next(now, n), NEVER);
                    }
                }
            }
            prop_assert_eq!(bucket.take(now, ask.tokens(&bucket)), answers[i], "take {} at {}", i, now);
        }
        prop_assert_eq!(state(&bucket), state(&plain));
    }
}

#[test]
fn a_reading_sets_no_time_the_documented_exception() {
    // A take earlier than a reading's `now` (but no earlier than any take)
    // is judged at its own `now`, so here it finds the bucket full.
    let bucket = Bucket::new(10.0, 2.0, 0).unwrap();
    assert_eq!(bucket.tokens(10_000_000_000), 2.0);
    assert!(bucket.take(5_000_000_000, 2.0));
    assert!(bucket.take(10_000_000_000, 2.0));
    // After a take, an earlier `now` is judged against it.
    assert!(!bucket.take(9_000_000_000, 1.0));
}

#[test]
fn holds_is_the_header_s_refusal_rule() {
    let bucket = Bucket::new(7.0, 7.0, 0).unwrap();
    assert!(bucket.holds(7.0) && bucket.holds(1e-300));
    for n in [0.0, -0.0, -1.0, 7.000001, f64::NAN, f64::INFINITY] {
        assert!(!bucket.holds(n), "{n}");
    }
    // A fractional burst is held to a tick, rounded down: 2.5 tokens of
    // 142,857,143 ns is not a whole number of ticks.
    let bucket = Bucket::new(7.0, 2.5, 0).unwrap();
    assert!(bucket.holds(2.0) && !bucket.holds(2.5));
    assert_eq!(bucket.next(0, 2.5), NEVER);
}

/// Takes at instants judged in order (each at the latest `now` yet, as a
/// take at an earlier one is judged): the tokens taken within any stretch
/// are at most what `bound(first, last)` allows, each given with whether
/// it came after a change.
fn within(
    passed: &[(i64, f64, bool)],
    bound: impl Fn((i64, bool), (i64, bool)) -> f64,
) -> Result<(), TestCaseError> {
    // Summed from each start rather than as differences of running totals:
    // those lose the small takes of a stretch to the large ones before it.
    for i in 0..passed.len() {
        let mut taken = 0.0f64;
        for j in i..passed.len() {
            taken += passed[j].1;
            let most = bound((passed[i].0, passed[i].2), (passed[j].0, passed[j].2));
            prop_assert!(
                taken <= most * (1.0 + 1e-12) + 1e-9,
                "{} tokens from {} to {}, bound {}",
                taken,
                passed[i].0,
                passed[j].0,
                most
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    /// Across a reconfiguration at `c`: takes judged before it keep the old
    /// bound, takes after it the new one, and a stretch across it at most
    /// `burst + rate × (c − a) + rate' × (b − c)`: the change adds no
    /// tokens. A refused reconfiguration changes nothing.
    #[test]
    fn a_reconfiguration_admits_within_either_policy_s_bound(
        case in case(),
        rate2 in rate(),
        burst2 in burst(),
        pause in prop_oneof![Just(0i64), 0..=1_000_000i64, 0..=1i64 << 36],
        after in prop::collection::vec((step(), ask()), 1..120),
    ) {
        let Some(mut bucket) = case.bucket() else { return Ok(()) };
        let (rate, burst) = (case.rate, bucket.burst());
        let mut judged = i64::MIN;
        let mut passed = Vec::new();
        for &(now, ask) in &case.takes {
            let n = ask.tokens(&bucket);
            if bucket.take(now, n) {
                judged = judged.max(now);
                passed.push((judged, n, false));
            } else if bucket.holds(n) {
                judged = judged.max(now);
            }
        }
        let c = judged.max(case.made).saturating_add(pause);
        let before = state(&bucket);
        let tokens = bucket.tokens(c);
        if bucket.reconfigure(rate2, burst2, c).is_err() {
            prop_assert!(Bucket::new(rate2, burst2, c).is_err());
            prop_assert_eq!(state(&bucket), before, "a refused reconfiguration wrote");
            return Ok(());
        }
        let burst2 = bucket.burst();
        prop_assert!(bucket.tokens(c) <= tokens.min(burst2), "kept {} of {}", bucket.tokens(c), tokens);
        let interval = if rate2 > 0.0 { 1e9 / rate2 } else { 1e9 };
        let unit = interval.clamp(8.0, 1e15) as i64;
        let (moves, asks): (Vec<_>, Vec<_>) = after.into_iter().unzip();
        judged = judged.max(c);
        for (now, ask) in instants(unit, c, &moves).into_iter().zip(asks) {
            let n = ask.tokens(&bucket);
            if bucket.take(now, n) {
                judged = judged.max(now);
                passed.push((judged, n, true));
            } else if bucket.holds(n) {
                judged = judged.max(now);
            }
        }
        let secs = |from: i64, to: i64| (i128::from(to) - i128::from(from)).max(0) as f64 / 1e9;
        within(&passed, |(a, a_after), (b, b_after)| {
            if !b_after {
                burst + rate * secs(a, b)
            } else if a_after {
                burst2 + rate2 * secs(a, b)
            } else {
                burst + rate * secs(a, c) + rate2 * secs(c, b)
            }
        })?;
    }
}
