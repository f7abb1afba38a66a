//! Properties of the smooth (GCRA) word over random call sequences:
//! instants at every phase modulo 512 ns (511 often), many calls at one
//! instant, time going backwards, the clock's far end. What the header
//! states is checked exactly:
//!
//! - a fresh word admits exactly `burst` at one instant;
//! - over the passed calls at judged instants within any T ticks, the
//!   tokens times `per_token` sum to at most T + tolerance (so at most
//!   burst + T × rate / 10^9 tokens in T ns);
//! - `next` is 0 exactly when a take of one passes, is pure, and a
//!   refusal or a negative `now` writes nothing.

mod grid;

use std::sync::atomic::{AtomicU64, Ordering};

use grid::{instants, start, step};
use proptest::prelude::*;
use weir_core::gcra::{self, GcraLimit};
use weir_core::time::NEVER;

fn limit() -> impl Strategy<Value = GcraLimit> {
    let rate = prop_oneof![
        Just(1.0f64),
        Just(3.0f64),
        Just(1e6f64),
        Just(7.5e8f64),
        Just(1e9f64),
        1e-3f64..1e10f64,
    ];
    let burst = prop_oneof![Just(1i64), Just(2i64), Just(1000i64), 1..=1000i64];
    (rate, burst).prop_filter_map("fits", |(rate, burst)| GcraLimit::new(rate, burst).ok())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_fresh_word_admits_exactly_burst_at_one_instant(limit in limit(), now in start()) {
        let (per_token, tolerance, _) = limit.parts();
        let burst = tolerance / per_token as i64;
        let word = AtomicU64::new(0);
        let admitted = (0..=burst + 5).filter(|_| gcra::allow(&word, &limit, now)).count();
        prop_assert_eq!(admitted as i64, if now < 0 { 0 } else { burst });
    }

    #[test]
    fn within_the_bound_and_next_agrees(
        limit in limit(),
        start in start(),
        steps in prop::collection::vec(step(), 1..200),
        sizes in prop::collection::vec(1..=3i64, 200),
    ) {
        let (per_token, tolerance, shift) = limit.parts();
        let unit = (per_token >> shift).max(1) as i64;
        let word = AtomicU64::new(0);
        // (judged tick, tokens) of every passed call.
        let mut passed: Vec<(i64, i64)> = Vec::new();
        for (i, now) in instants(unit, start, &steps).into_iter().enumerate() {
            let n = sizes[i];
            let before = word.load(Ordering::Relaxed);
            let next = gcra::next(&word, &limit, now);
            prop_assert_eq!(word.load(Ordering::Relaxed), before, "next wrote");
            let one = gcra::allow_n(&word, &limit, now, 1);
            prop_assert_eq!(one, next == 0, "next {} at {}", next, now);
            if now < 0 {
                prop_assert_eq!(next, NEVER);
            }
            let many = gcra::allow_n(&word, &limit, now, n);
            if !one && !many {
                prop_assert_eq!(word.load(Ordering::Relaxed), before, "a refusal wrote");
            }
            let tick = if now < 0 { 0 } else { now.min(limit.max_now()) << shift };
            if one { passed.push((tick, 1)); }
            if many { passed.push((tick, n)); }
        }
        passed.sort();
        for lo in 0..passed.len() {
            let mut cost: i128 = 0;
            for hi in lo..passed.len() {
                cost += i128::from(passed[hi].1) * i128::from(per_token);
                let span = i128::from(passed[hi].0) - i128::from(passed[lo].0);
                prop_assert!(cost <= span + i128::from(tolerance),
                    "{} ticks passed in {} ticks, tolerance {}", cost, span, tolerance);
            }
        }
    }
}
