//! The time-based limiters end to end: scenario 1 of docs/design.md (bursts that
//! straddle a second boundary) through the Rust types and through the C
//! surface, and many threads sharing one handle of each.

use weir::bucket::*;
use weir::gate::*;
use weir::period::*;
use weir::sliding::*;
use weir::status::weir_status::WEIR_OK;
use weir_core::bucket::Bucket;
use weir_core::period::{Period, PeriodQuota};
use weir_core::sliding::Sliding;
use weir_core::time::SECOND;

const MS: i64 = 1_000_000;

/// One burst of scenario 1: forty calls 2.5 ms apart from 50 ms before
/// second `2b + 1`.
fn burst_times(burst: i64) -> impl Iterator<Item = i64> {
    let start = (2 * burst + 1) * SECOND - 50 * MS;
    (0..40).map(move |k| start + k * 2_500_000)
}

#[test]
fn scenario_1_through_the_rust_types() {
    let bucket = Bucket::new(20.0, 0.0, 0).unwrap();
    let mut sliding = Sliding::new(20, SECOND).unwrap();
    let mut period = Period::new(20, SECOND, true).unwrap();
    for burst in 0..4 {
        let (mut by_bucket, mut by_sliding, mut by_period) = (0, 0, 0);
        let mut hits = 0;
        for now in burst_times(burst) {
            by_bucket += i32::from(bucket.take(now, 1.0));
            by_sliding += i32::from(sliding.take(now));
            match period.take(now) {
                PeriodQuota::Under => by_period += 1,
                PeriodQuota::Hit => {
                    by_period += 1;
                    hits += 1;
                }
                PeriodQuota::Over => {}
            }
        }
        assert_eq!(
            (by_bucket, by_sliding, by_period),
            (21, 20, 40),
            "burst {burst}"
        );
        // The period is hit once on each side of the second boundary.
        assert_eq!(hits, 2, "burst {burst}");
        let last = burst_times(burst).last().unwrap();
        assert_eq!(bucket.next(last, 5.0), 202_500_000, "burst {burst}");
    }
}

#[test]
fn scenario_1_through_the_c_surface() {
    let mut bucket = std::ptr::null_mut();
    let mut sliding = std::ptr::null_mut();
    let mut period = std::ptr::null_mut();
    assert_eq!(weir_bucket_new(20.0, 0.0, 0, &mut bucket), WEIR_OK);
    assert_eq!(weir_sliding_new(20, SECOND, &mut sliding), WEIR_OK);
    assert_eq!(weir_period_new(20, SECOND, true, &mut period), WEIR_OK);
    for burst in 0..4 {
        let mut passed = (0, 0, 0);
        for now in burst_times(burst) {
            passed.0 += i32::from(weir_bucket_take(bucket, now, 1.0));
            passed.1 += i32::from(weir_sliding_take(sliding, now));
            passed.2 += i32::from(
                weir_period_take(period, now) != weir_period_quota::WEIR_PERIOD_QUOTA_OVER,
            );
        }
        assert_eq!(passed, (21, 20, 40), "burst {burst}");
        let last = burst_times(burst).last().unwrap();
        assert_eq!(weir_bucket_next(bucket, last, 5.0), 202_500_000);
    }
    weir_bucket_free(bucket);
    weir_sliding_free(sliding);
    weir_period_free(period);
}

const THREADS: usize = 4;
const ROUNDS: i64 = 5_000;

/// Runs `work(thread)` on [`THREADS`] threads at once and sums what they
/// return.
fn on_threads(work: impl Fn(usize) -> i64 + Sync) -> i64 {
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let work = &work;
                scope.spawn(move || work(thread))
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    })
}

/// How many of the calls `take` admits when every thread walks the same
/// clock, `step` a round, each at its own pace. The handle crosses threads
/// as an address: the C surface's pointers are not `Send`, though every
/// handle may be used from many threads at once.
fn admitted<H>(handle: *mut H, step: i64, take: impl Fn(*const H, i64) -> bool + Sync) -> i64 {
    let address = handle as usize;
    on_threads(|_| {
        (0..ROUNDS)
            .map(|round| i64::from(take(address as *const H, round * step)))
            .sum()
    })
}

#[test]
fn threads_sharing_one_bucket_never_take_more_than_it_allows() {
    let take = |bucket, now| weir_bucket_take(bucket, now, 1.0);
    // All at one instant: exactly the burst passes, no more and no less.
    let mut bucket = std::ptr::null_mut();
    assert_eq!(weir_bucket_new(1.0, 1_000.0, 0, &mut bucket), WEIR_OK);
    assert_eq!(admitted(bucket, 0, take), 1_000);
    assert_eq!(weir_bucket_tokens(bucket, 0), 0.0);
    weir_bucket_free(bucket);

    // With the clock moving 1 ms a round: at most the burst of 10 plus one
    // token a millisecond.
    let mut bucket = std::ptr::null_mut();
    assert_eq!(weir_bucket_new(1_000.0, 10.0, 0, &mut bucket), WEIR_OK);
    let total = admitted(bucket, MS, take);
    assert!(total <= 10 + (ROUNDS - 1), "{total}");
    assert!(total >= ROUNDS / 2, "{total}");
    weir_bucket_free(bucket);
}

#[test]
fn threads_sharing_one_sliding_window_never_exceed_its_quota() {
    let take = |sliding, now| weir_sliding_take(sliding, now);
    let mut sliding = std::ptr::null_mut();
    assert_eq!(weir_sliding_new(100, SECOND, &mut sliding), WEIR_OK);
    assert_eq!(admitted(sliding, 0, take), 100);
    assert_eq!(weir_sliding_left(sliding, 0), 0);
    weir_sliding_free(sliding);

    // 1 ms a round over 5 s: no more than 100 in each of the five seconds.
    let mut sliding = std::ptr::null_mut();
    assert_eq!(weir_sliding_new(100, SECOND, &mut sliding), WEIR_OK);
    let total = admitted(sliding, MS, take);
    assert!((100..=500).contains(&total), "{total}");
    weir_sliding_free(sliding);
}

#[test]
fn threads_sharing_one_gate_never_pass_its_ceiling_and_leave_it_empty() {
    let mut gate = std::ptr::null_mut();
    assert_eq!(weir_gate_new(3, &mut gate), WEIR_OK);
    let address = gate as usize;
    let admitted = on_threads(|_| {
        let gate = address as *const weir_gate;
        let mut admitted = 0;
        for _ in 0..ROUNDS {
            if weir_gate_enter(gate) {
                admitted += 1;
                assert!(weir_gate_held(gate) <= 3);
                weir_gate_leave(gate);
            }
        }
        admitted
    });
    assert!(admitted > 0);
    assert_eq!(weir_gate_held(gate), 0);
    weir_gate_free(gate);
}
