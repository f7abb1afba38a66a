//! The four properties of backoff, for a value that holds no
//! state and takes no time: within its bound (every delay inside the range
//! its jitter documents, computed here apart from the code, the ceiling
//! never past the cap, decorrelated's first retry in [base, 3 × base]),
//! readings are pure (the same arguments always give the same delay, in
//! any order), an error changes nothing (a refused policy makes nothing,
//! and the first bad field in order is the one named), and time going
//! backwards cannot arise (no call takes a `now`).

#[path = "support/runner.rs"]
mod runner;

use proptest::prelude::*;
use weir_core::backoff::{Backoff, BackoffError, BackoffJitter};

fn jitter() -> impl Strategy<Value = BackoffJitter> {
    prop_oneof![
        Just(BackoffJitter::Rigid),
        Just(BackoffJitter::Full),
        Just(BackoffJitter::Equal),
        Just(BackoffJitter::Decorrelated),
        Just(BackoffJitter::Spread),
    ]
}

fn nanos() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 0..10_000i64,
        2 => prop_oneof![Just(0i64), Just(1), Just(511), Just(512), Just(i64::MAX), Just(i64::MAX / 3)],
        1 => 0..=i64::MAX,
    ]
}

fn policy() -> impl Strategy<Value = Backoff> {
    (
        nanos(),
        prop_oneof![Just(1.0f64), Just(2.0), 1.0..10.0f64, Just(f64::MAX)],
        nanos(),
        prop_oneof![1..10i32, Just(i32::MAX)],
        jitter(),
        prop_oneof![Just(0.0f64), Just(1.0), 0.0..=1.0f64],
    )
        .prop_map(|(base, factor, cap, attempts, jitter, spread)| {
            Backoff::new(base, factor, cap, attempts, jitter, spread).unwrap()
        })
}

fn draw() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0..1.0f64,
        1 => prop_oneof![Just(0.0f64), Just(0.5), Just(1.0 - f64::EPSILON), Just(1.0), Just(-1.0), Just(f64::NAN), Just(f64::INFINITY)],
    ]
}

fn retry() -> impl Strategy<Value = i32> {
    prop_oneof![4 => 1..12i32, 1 => prop_oneof![Just(0i32), Just(-1), Just(i32::MIN), Just(i32::MAX), Just(10_000)]]
}

fn previous() -> impl Strategy<Value = i64> {
    prop_oneof![3 => nanos(), 1 => prop_oneof![Just(0i64), Just(-1), Just(i64::MIN)]]
}

/// The range a delay is drawn from, from the documented rules: the ceiling
/// `c` as the code gives it (checked separately), and decorrelated's
/// [base, min(3 × max(previous, base), cap)], with a cap below the base
/// giving [cap, cap].
fn documented_range(
    policy: &Backoff,
    base: i64,
    cap: i64,
    spread: f64,
    jitter: BackoffJitter,
    retry: i32,
    previous: i64,
) -> (i64, i64) {
    let c = policy.ceiling(retry);
    match jitter {
        BackoffJitter::Rigid => (c, c),
        BackoffJitter::Full => (0, c),
        BackoffJitter::Equal => (c - c / 2, c),
        BackoffJitter::Decorrelated => {
            let low = base.min(cap);
            let top = (previous.max(base) as i128 * 3).min(cap as i128) as i64;
            (low, top.max(low))
        }
        BackoffJitter::Spread => {
            let offset = (c as f64 * spread) as i64;
            (c.saturating_sub(offset).max(0), c.saturating_add(offset))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(2048), ..ProptestConfig::default() })]

    /// Within the bound: ceilings never pass the cap, never drop below
    /// min(base, cap) and never shrink from one retry to the next; each
    /// delay lies in its jitter's documented range and is never negative.
    #[test]
    fn within_the_bound(
        base in nanos(),
        factor in prop_oneof![Just(1.0f64), Just(2.0), 1.0..10.0f64],
        cap in nanos(),
        jitter in jitter(),
        spread in prop_oneof![Just(0.0f64), Just(1.0), 0.0..=1.0f64],
        retry in retry(),
        draw in draw(),
        previous in previous(),
    ) {
        let policy = Backoff::new(base, factor, cap, 3, jitter, spread).unwrap();
        let delay = policy.delay(retry, draw, previous);
        if retry <= 0 {
            prop_assert_eq!(delay, 0);
            return Ok(());
        }
        let c = policy.ceiling(retry);
        prop_assert!(c <= cap && c >= base.min(cap));
        prop_assert!(policy.ceiling(retry.saturating_add(1)) >= c);
        let (low, high) = documented_range(&policy, base, cap, spread, jitter, retry, previous);
        prop_assert!(low <= high);
        // The range is the documented one, not only inside it (a range that
        // closed to one point would pass a containment check alone).
        if !matches!(jitter, BackoffJitter::Spread) {
            prop_assert_eq!(policy.range(retry, previous), (low, high), "{:?} retry {} previous {}", jitter, retry, previous);
        }
        // Spread's float offset may differ from the code's by one ns.
        let slack = if matches!(jitter, BackoffJitter::Spread) { 1 } else { 0 };
        prop_assert!(delay >= low.saturating_sub(slack) && delay <= high.saturating_add(slack),
            "{:?} retry {} draw {} previous {}: {} not in [{}, {}]", jitter, retry, draw, previous, delay, low, high);
        prop_assert!(delay >= 0);
        prop_assert_eq!(policy.range(retry, previous).0.max(0), policy.range(retry, previous).0);
    }

    /// Readings are pure: a policy's answers depend on their arguments
    /// only, whatever was asked before and in whatever order.
    #[test]
    fn readings_are_pure(policy in policy(), asks in prop::collection::vec((retry(), draw(), previous()), 1..20)) {
        let first: Vec<i64> = asks.iter().map(|&(r, d, p)| policy.delay(r, d, p)).collect();
        let reversed: Vec<i64> = asks.iter().rev().map(|&(r, d, p)| policy.delay(r, d, p)).collect();
        let again: Vec<i64> = reversed.into_iter().rev().collect();
        prop_assert_eq!(&first, &again);
        let randoms: Vec<f64> = asks.iter().map(|&(_, d, _)| d).collect();
        let mut a = [0i64; 8];
        let mut b = [0i64; 8];
        prop_assert_eq!(policy.schedule(&randoms, &mut a), policy.schedule(&randoms, &mut b));
        prop_assert_eq!(a, b);
    }

    /// An error changes nothing: a policy is refused whole, naming the
    /// first bad field in the documented order, and a valid one is made.
    #[test]
    fn refusals_name_the_first_bad_field(
        base in prop_oneof![Just(-1i64), Just(i64::MIN), nanos()],
        factor in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(0.5), Just(-2.0), Just(1.0), 1.0..4.0f64],
        cap in prop_oneof![Just(-1i64), nanos()],
        attempts in prop_oneof![Just(0i32), Just(i32::MIN), 1..5i32],
        spread in prop_oneof![Just(f64::NAN), Just(-0.1), Just(1.01), Just(f64::NEG_INFINITY), 0.0..=1.0f64],
        jitter in jitter(),
    ) {
        use BackoffError::*;
        let expected = if base < 0 {
            Err(NegativeBase)
        } else if !factor.is_finite() {
            Err(FactorNotFinite)
        } else if factor < 1.0 {
            Err(FactorBelowOne)
        } else if cap < 0 {
            Err(NegativeCap)
        } else if attempts < 1 {
            Err(NoAttempts)
        } else if !spread.is_finite() {
            Err(SpreadNotFinite)
        } else if spread < 0.0 {
            Err(NegativeSpread)
        } else if spread > 1.0 {
            Err(SpreadAboveOne)
        } else {
            Ok(())
        };
        prop_assert_eq!(Backoff::new(base, factor, cap, attempts, jitter, spread).map(drop), expected);
    }
}

/// A case once wrong: the first retry (previous 0) draws from [base, 3 × base].
#[test]
fn decorrelated_first_retry_jitters() {
    let policy = Backoff::new(100, 2.0, 1_000, 3, BackoffJitter::Decorrelated, 0.0).unwrap();
    assert_eq!(policy.range(1, 0), (100, 300));
}
