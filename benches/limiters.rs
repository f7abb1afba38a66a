//! The time-based limiters: `weir_bucket_take`, `weir_sliding_take` and
//! `weir_period_take`, allowing and refusing, through the C ABI and the
//! Rust core; the bucket also with two threads on one handle.

use std::hint::black_box;

use criterion::Criterion;
use weir::bucket::{
    weir_bucket, weir_bucket_free, weir_bucket_new, weir_bucket_refund, weir_bucket_take,
};
use weir::period::{
    weir_period, weir_period_free, weir_period_new, weir_period_quota, weir_period_take,
};
use weir::sliding::{weir_sliding, weir_sliding_free, weir_sliding_new, weir_sliding_take};
use weir::status::weir_status::{self, WEIR_OK};
use weir_core::bucket::Bucket;
use weir_core::period::{Period, PeriodQuota};
use weir_core::sliding::Sliding;

use crate::support::{fresh, id, two_threads, Owned, NOW};

/// One token per nanosecond with a burst of 2^32 − 1: held at [`NOW`] it
/// admits about four billion takes, as governor's allowing quota does.
const ALLOW_RATE: f64 = 1e9;
const ALLOW_BURST: f64 = u32::MAX as f64;

fn bucket(rate: f64, burst: f64) -> Owned<weir_bucket> {
    Owned::new(
        |out| weir_bucket_new(rate, burst, NOW, out),
        weir_bucket_free,
    )
}

/// A bucket of one token a second, its one token taken.
fn spent_bucket() -> Owned<weir_bucket> {
    let bucket = bucket(1.0, 1.0);
    assert!(weir_bucket_take(bucket.get(), NOW, 1.0));
    bucket
}

fn sliding(quota: i64, window_ns: i64) -> Owned<weir_sliding> {
    Owned::new(
        |out| weir_sliding_new(quota, window_ns, out),
        weir_sliding_free,
    )
}

fn period(quota: i64) -> Owned<weir_period> {
    Owned::new(
        |out| weir_period_new(quota, 1_000_000_000, false, out),
        weir_period_free,
    )
}

/// A sliding window whose clock advances 1 ns per take, so that a window
/// of 1 µs holds about 1,000 stamps and every take drops the oldest and
/// adds one: the steady state of a window that is never full. (Held at a
/// fixed instant, a window would need a stamp of memory per call made.)
struct Advancing<S> {
    window: S,
    now: i64,
}

const SLIDING_WINDOW_NS: i64 = 1_000;
const SLIDING_QUOTA: i64 = 2_000;

pub fn benches(c: &mut Criterion) {
    bucket_benches(c);
    sliding_benches(c);
    period_benches(c);
}

fn bucket_benches(c: &mut Criterion) {
    let take: extern "C" fn(*const weir_bucket, i64, f64) -> bool = black_box(weir_bucket_take);
    let path = "weir_bucket_take";
    fresh(
        c,
        path,
        id("allow", "c_abi"),
        || bucket(ALLOW_RATE, ALLOW_BURST),
        |b| take(b.get(), NOW, 1.0),
        |b| assert!(take(b.get(), NOW, 1.0)),
    );
    fresh(
        c,
        path,
        id("allow", "rust"),
        || Bucket::new(ALLOW_RATE, ALLOW_BURST, NOW).unwrap(),
        |b| b.take(NOW, 1.0),
        |b| assert!(b.take(NOW, 1.0)),
    );
    fresh(
        c,
        path,
        id("refuse", "c_abi"),
        spent_bucket,
        |b| take(b.get(), NOW, 1.0),
        |b| assert!(!take(b.get(), NOW, 1.0)),
    );
    fresh(
        c,
        path,
        id("refuse", "rust"),
        || {
            let b = Bucket::new(1.0, 1.0, NOW).unwrap();
            assert!(b.take(NOW, 1.0));
            b
        },
        |b| b.take(NOW, 1.0),
        |b| assert!(!b.take(NOW, 1.0)),
    );
    // A take and its refund at the same instant: the call let through and
    // never made. The bucket ends each pair as it began.
    let refund: extern "C" fn(*const weir_bucket, i64, i64, f64) -> weir_status =
        black_box(weir_bucket_refund);
    fresh(
        c,
        "weir_bucket_take+refund",
        id("allow", "c_abi"),
        || bucket(ALLOW_RATE, ALLOW_BURST),
        |b| take(b.get(), NOW, 1.0) && refund(b.get(), NOW, NOW, 1.0) == WEIR_OK,
        |b| assert!(take(b.get(), NOW, 1.0) && refund(b.get(), NOW, NOW, 1.0) == WEIR_OK),
    );
    two_threads(
        c,
        path,
        id("allow", "c_abi_2threads"),
        || bucket(ALLOW_RATE, ALLOW_BURST),
        |b| take(b.get(), NOW, 1.0),
        |b| assert!(take(b.get(), NOW, 1.0)),
    );
    two_threads(
        c,
        path,
        id("refuse", "c_abi_2threads"),
        spent_bucket,
        |b| take(b.get(), NOW, 1.0),
        |b| assert!(!take(b.get(), NOW, 1.0)),
    );
}

fn sliding_benches(c: &mut Criterion) {
    let take: extern "C" fn(*const weir_sliding, i64) -> bool = black_box(weir_sliding_take);
    let path = "weir_sliding_take";
    fresh(
        c,
        path,
        id("allow", "c_abi_advancing"),
        || Advancing {
            window: sliding(SLIDING_QUOTA, SLIDING_WINDOW_NS),
            now: NOW,
        },
        |s| {
            s.now += 1;
            take(s.window.get(), s.now)
        },
        |s| assert!(take(s.window.get(), s.now + 1)),
    );
    fresh(
        c,
        path,
        id("allow", "rust_advancing"),
        || Advancing {
            window: Sliding::new(SLIDING_QUOTA, SLIDING_WINDOW_NS).unwrap(),
            now: NOW,
        },
        |s| {
            s.now += 1;
            s.window.take(s.now)
        },
        |s| assert!(s.window.take(s.now + 1)),
    );
    fresh(
        c,
        path,
        id("refuse", "c_abi"),
        || {
            let s = sliding(1, 1_000_000_000);
            assert!(take(s.get(), NOW));
            s
        },
        |s| take(s.get(), NOW),
        |s| assert!(!take(s.get(), NOW)),
    );
    fresh(
        c,
        path,
        id("refuse", "rust"),
        || {
            let mut s = Sliding::new(1, 1_000_000_000).unwrap();
            assert!(s.take(NOW));
            s
        },
        |s| s.take(NOW),
        |s| assert!(!s.take(NOW)),
    );
}

fn period_benches(c: &mut Criterion) {
    let take: extern "C" fn(*const weir_period, i64) -> weir_period_quota =
        black_box(weir_period_take);
    let path = "weir_period_take";
    fresh(
        c,
        path,
        id("allow", "c_abi"),
        || period(i64::MAX),
        |p| take(p.get(), NOW),
        |p| {
            assert_eq!(
                take(p.get(), NOW),
                weir_period_quota::WEIR_PERIOD_QUOTA_UNDER
            )
        },
    );
    fresh(
        c,
        path,
        id("allow", "rust"),
        || Period::new(i64::MAX, 1_000_000_000, false).unwrap(),
        |p| p.take(NOW),
        |p| assert_eq!(p.take(NOW), PeriodQuota::Under),
    );
    fresh(
        c,
        path,
        id("refuse", "c_abi"),
        || {
            let p = period(1);
            assert_eq!(take(p.get(), NOW), weir_period_quota::WEIR_PERIOD_QUOTA_HIT);
            p
        },
        |p| take(p.get(), NOW),
        |p| {
            assert_eq!(
                take(p.get(), NOW),
                weir_period_quota::WEIR_PERIOD_QUOTA_OVER
            )
        },
    );
    fresh(
        c,
        path,
        id("refuse", "rust"),
        || {
            let mut p = Period::new(1, 1_000_000_000, false).unwrap();
            assert_eq!(p.take(NOW), PeriodQuota::Hit);
            p
        },
        |p| p.take(NOW),
        |p| assert_eq!(p.take(NOW), PeriodQuota::Over),
    );
}
