//! The rate word and the bloom array under real threads: one word and one
//! bloom key hammered at once, and clocks that run out of step.

use std::sync::atomic::AtomicU64;
use std::thread;

use weir_core::bloom::{Bloom, BloomShape};
use weir_core::rate::{self, RateLimit};

const SECOND: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;
const THREADS: usize = 4;

fn limit(per_s: f64, burst: i64) -> RateLimit {
    RateLimit::new(per_s, burst).unwrap()
}

/// Runs `call` `calls` times on each of [`THREADS`] threads, with the
/// thread's number and the call's; returns how many it allowed in all.
fn hammer(calls: i64, call: impl Fn(usize, i64) -> bool + Sync) -> i64 {
    thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let call = &call;
                scope.spawn(move || (0..calls).filter(|&i| call(t, i)).count() as i64)
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

#[test]
fn threads_never_pass_the_burst_of_one_word() {
    let limit = limit(10.0, 50);
    let word = AtomicU64::new(0);
    let allowed = hammer(20_000, |_, _| rate::allow(&word, &limit, SECOND));
    assert_eq!(allowed, 50);
    assert_eq!(rate::next(&word, &limit, SECOND), 5 * SECOND);
}

#[test]
fn clocks_out_of_step_get_one_burst_per_window() {
    // Each thread walks 10 s in 1 ms steps on its own, so the threads' clocks
    // run ahead of and behind each other. A window is 1 s of 10 events, and
    // an earlier clock counts against the open window: about ten windows
    // open, each admitting at most ten.
    let limit = limit(10.0, 10);
    let word = AtomicU64::new(0);
    let allowed = hammer(10_000, |_, i| rate::allow(&word, &limit, i * MS));
    assert!(allowed <= 11 * 10, "{allowed} allowed");
    assert!(allowed >= 9 * 10, "{allowed} allowed");
}

#[test]
fn a_bloom_key_under_threads_gets_its_burst_k_times_at_most() {
    for hashes in [1, 3] {
        let bloom = Bloom::new(BloomShape::new(12, hashes, limit(1.0, 5), 1, 2).unwrap()).unwrap();
        let allowed = hammer(20_000, |_, _| bloom.allow(SECOND, b"hot"));
        assert!(allowed >= 5, "k={hashes}: {allowed}");
        assert!(allowed <= 5 * i64::from(hashes), "k={hashes}: {allowed}");
        if hashes == 1 {
            assert_eq!(allowed, 5);
        }
    }
}

#[test]
fn keys_of_different_threads_stay_apart() {
    // Each thread has its own 1000 keys, three calls each, burst 2.
    let bloom = Bloom::new(BloomShape::new(20, 3, limit(1.0, 2), 3, 4).unwrap()).unwrap();
    let allowed = hammer(3000, |t, i| {
        let key = (t as u64) << 32 | (i % 1000) as u64;
        bloom.allow(SECOND, &key.to_le_bytes())
    });
    // 4000 keys × burst 2, less the rare key whose words others filled.
    assert!(allowed <= 8000);
    assert!(allowed >= 7960, "{allowed}");
}
