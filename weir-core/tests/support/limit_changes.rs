//! What the bloom array's and the keyed table's reconfiguration
//! properties share: the limits they change between, and the bounds across
//! any number of changes that both types' documentation states for one
//! word (a GCRA word's ticks, a rate word's admits).
#![allow(dead_code)]

use proptest::prelude::*;
use weir_core::bloom::BloomLimit;
use weir_core::gcra::GcraLimit;
use weir_core::rate::{RateLimit, MIN_WINDOW_NS};

/// A GCRA limit on tick 0 (every rate up to 7,812,500 a second).
pub fn gcra_limit() -> impl Strategy<Value = GcraLimit> {
    (prop_oneof![1.0..1e3f64, 1e3..1e6f64], 1..=20i64)
        .prop_map(|(rate, burst)| GcraLimit::new(rate, burst).unwrap())
        .prop_filter("tick 0", |limit| limit.parts().2 == 0)
}

/// A rate limit with windows from the shortest to 20 ms.
pub fn rate_limit() -> impl Strategy<Value = RateLimit> {
    (1..=20i64, MIN_WINDOW_NS..=20_000_000i64).prop_filter_map("accepted", |(burst, window)| {
        RateLimit::new(burst as f64 * 1e9 / window as f64, burst).ok()
    })
}

/// A GCRA limit's ticks a token and its tolerance.
pub fn gcra_parts(limit: &BloomLimit) -> (u128, u128) {
    let BloomLimit::Gcra(limit) = limit else {
        unreachable!()
    };
    let (per_token, tolerance, _) = limit.parts();
    (u128::from(per_token), tolerance as u128)
}

/// A rate limit's interval in 2^-32 ns and its burst.
pub fn rate_parts(limit: &BloomLimit) -> (u128, u128) {
    let BloomLimit::Window(limit) = limit else {
        unreachable!()
    };
    let (ns, frac, burst) = limit.parts();
    ((u128::from(ns) << 32) + u128::from(frac), u128::from(burst))
}

/// The GCRA bound across any number of changes, on every stretch of
/// judged instants [a, b] (a and b among them, in any order).
pub fn gcra_within(admits: &[(i64, BloomLimit)]) -> Result<(), TestCaseError> {
    let mut instants: Vec<i64> = admits.iter().map(|a| a.0).collect();
    instants.sort_unstable();
    instants.dedup();
    for (i, &a) in instants.iter().enumerate() {
        for &b in &instants[i..] {
            let inside = admits.iter().filter(|(t, _)| (a..=b).contains(t));
            let (mut ticks, mut tolerance) = (0u128, 0u128);
            for (_, limit) in inside {
                let (per_token, tol) = gcra_parts(limit);
                ticks += per_token;
                tolerance = tolerance.max(tol);
            }
            let most = (b - a) as u128 + tolerance;
            prop_assert!(ticks <= most, "{ticks} ticks in [{a}, {b}], bound {most}");
        }
    }
    Ok(())
}

/// The rate bound across any number of changes: 2 × the largest burst +
/// floor(T / the shortest interval), over the limits of the whole trace.
pub fn rate_within(
    admits: &[(i64, BloomLimit)],
    limits: &[BloomLimit],
) -> Result<(), TestCaseError> {
    let burst = limits.iter().map(|l| rate_parts(l).1).max().unwrap();
    let interval = limits.iter().map(|l| rate_parts(l).0).min().unwrap();
    let mut judged: Vec<i64> = admits.iter().map(|a| a.0).collect();
    judged.sort_unstable();
    for j in 0..judged.len() {
        for i in 0..=j {
            let span = (judged[j] - judged[i]) as u128 + 1;
            let most = 2 * burst + (span << 32) / interval;
            prop_assert!(
                (j - i + 1) as u128 <= most,
                "{} in {span} ns, bound {most}",
                j - i + 1
            );
        }
    }
    Ok(())
}
