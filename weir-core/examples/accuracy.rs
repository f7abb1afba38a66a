//! Measures the cases that once went wrong: the rate word at the 511 ns phase, the
//! one-hash bloom, and the token bucket's burst and high-rate accuracy.
//! `cargo run -p weir-core --release --example accuracy`

use std::sync::atomic::AtomicU64;

use weir_core::bloom::{Bloom, BloomShape};
use weir_core::bucket::Bucket;
use weir_core::rate::{self, RateLimit};

const SECOND: i64 = 1_000_000_000;

fn main() {
    let fast = RateLimit::new(19e6, 1023).unwrap();
    for at in [0, 511] {
        let word = AtomicU64::new(0);
        let admitted = (0..100_000)
            .filter(|_| rate::allow(&word, &fast, at))
            .count();
        println!("rate 19e6/s burst 1023, 100000 calls at now = {at}: {admitted} admitted");
    }
    let limit = RateLimit::new(977_517.0, 100).unwrap();
    for phase in [0, 511] {
        let word = AtomicU64::new(0);
        let admitted = (0..)
            .map(|i| phase + 512 * i)
            .take_while(|&now| now < phase + SECOND)
            .filter(|&now| rate::allow(&word, &limit, now))
            .count();
        let ratio = admitted as f64 / 977_517.0;
        println!("rate 977517/s burst 100, calls at {phase} + 512 i for 1 s: {admitted} admitted ({ratio:.4} x the limit)");
    }
    let shape = BloomShape::new(4, 1, fast, 5, 6).unwrap();
    let bloom = Bloom::new(shape).unwrap();
    let admitted = (0..100_000).filter(|_| bloom.allow(511, b"key")).count();
    println!("bloom k = 1, 19e6/s burst 1023, 100000 calls at now = 511: {admitted} admitted");

    let bucket = Bucket::new(7.0, 7.0, 0).unwrap();
    let tokens = bucket.tokens(0);
    let at_once = (0..10).filter(|_| bucket.take(0, 1.0)).count();
    println!("bucket (7, 7, 0): {tokens:.9} tokens, {at_once} unit takes at once");
    let short = (1..=200)
        .filter(|&r| {
            let bucket = Bucket::new(f64::from(r), f64::from(r), 0).unwrap();
            (0..r + 3).filter(|_| bucket.take(0, 1.0)).count() != r as usize
        })
        .count();
    println!("bucket rate = burst = r, r = 1..200: {short} settings admit other than r at once");
    for burst in [1.0, 2.0, 1000.0] {
        for rate in [1e9, 7.5e8, 3e8, 1.3e8, 1.25e8, 1e8, 9.5e7, 1e7] {
            let bucket = Bucket::new(rate, burst, 0).unwrap();
            let span = 10_000_000; // 10 ms, a unit take every ns
            let passed = (0..span).filter(|&now| bucket.take(now, 1.0)).count() as f64;
            let refilled = rate * span as f64 / SECOND as f64;
            println!(
                "bucket {rate:e}/s burst {burst}: {passed} passed in 10 ms, bound {:.0}, {:.5} x the rate",
                burst + refilled,
                (passed - burst) / refilled
            );
        }
    }
}
