//! Scenario 5 of docs/design.md, through the crate's public API and its C face: the
//! same draws give the same schedule, each jitter stays within its
//! documented range, and the preset's schedule for draws of 0.5 is exactly
//! 100 ms, 200 ms.

use weir::backoff::*;
use weir_core::backoff::{Backoff, BackoffJitter};

const MS: i64 = 1_000_000;

#[test]
fn the_preset_schedule_for_draws_of_one_half() {
    let mut out = [0i64; 2];
    let n = weir_backoff_schedule(
        &weir_backoff_preset(),
        [0.5, 0.5].as_ptr(),
        2,
        out.as_mut_ptr(),
        2,
    );
    assert_eq!(n, 2);
    assert_eq!(out, [100 * MS, 200 * MS]);
}

#[test]
fn same_draws_same_schedule_and_every_delay_in_range() {
    // A fixed pseudo-random sequence (a 64-bit LCG), so the test is repeatable.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let randoms: Vec<f64> = (0..64)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect();
    for jitter in [
        BackoffJitter::Rigid,
        BackoffJitter::Full,
        BackoffJitter::Equal,
        BackoffJitter::Decorrelated,
        BackoffJitter::Spread,
    ] {
        let policy = Backoff::new(20 * MS, 1.5, 2_000 * MS, 65, jitter, 0.25).unwrap();
        let first: Vec<i64> = policy.delays(&randoms).collect();
        let second: Vec<i64> = policy.delays(&randoms).collect();
        assert_eq!(first.len(), 64);
        assert_eq!(first, second, "{jitter:?}");
        let mut previous = 20 * MS;
        for (index, &delay) in first.iter().enumerate() {
            let c = policy.ceiling(index as i32 + 1);
            let (low, high) = match jitter {
                BackoffJitter::Rigid => (c, c),
                BackoffJitter::Full => (0, c),
                BackoffJitter::Equal => (c / 2, c),
                BackoffJitter::Decorrelated => (20 * MS, (3 * previous).min(2_000 * MS)),
                BackoffJitter::Spread => (c - c / 4 - 1, c + c / 4 + 1),
            };
            assert!(
                (low..=high).contains(&delay),
                "{jitter:?} retry {}",
                index + 1
            );
            previous = delay;
        }
    }
}
