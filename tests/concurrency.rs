//! `weir_concurrency` through the C ABI from Rust threads: one thread per
//! core hammering one adaptive limit, with latencies that move the limit
//! while they race, never has more calls inside than the limit allowed when
//! each entered, nor more than `max_limit` at any moment.

use std::sync::atomic::{AtomicI64, Ordering};

use weir::concurrency::*;
use weir::status::weir_status::WEIR_OK;

struct Shared(*mut weir_concurrency);
// SAFETY: a weir_concurrency may be used from many threads at once (its
// header says so: each call takes the handle's lock).
unsafe impl Sync for Shared {}

#[test]
fn threads_never_exceed_the_limit_in_flight() {
    let max = 4;
    let policy = weir_concurrency_policy {
        initial_limit: 2,
        min_limit: 1,
        max_limit: max,
        queue_size: 1,
        ..weir_concurrency_policy_preset()
    };
    let mut handle = std::ptr::null_mut();
    assert_eq!(weir_concurrency_new(&policy, &mut handle), WEIR_OK);
    let shared = Shared(handle);
    let inside = AtomicI64::new(0);
    let worst = AtomicI64::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (shared, inside, worst) = (&shared, &inside, &worst);
            scope.spawn(move || {
                for i in 0..20_000i64 {
                    let mut flight = weir_concurrency_ticket::default();
                    if !weir_concurrency_enter(shared.0, i, &mut flight) {
                        continue;
                    }
                    let now_inside = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    worst.fetch_max(now_inside, Ordering::SeqCst);
                    assert!(flight.inflight >= 1 && flight.inflight <= max);
                    inside.fetch_sub(1, Ordering::SeqCst);
                    // Slow calls now and then, so the limit falls and rises.
                    let rtt = if (i + t as i64) % 5 == 0 {
                        50_000
                    } else {
                        1_000
                    };
                    let status = weir_concurrency_leave(shared.0, &mut flight, i + rtt, false);
                    assert_eq!(status, WEIR_OK);
                }
            });
        }
    });
    assert!(worst.load(Ordering::SeqCst) <= i64::from(max));
    assert_eq!(weir_concurrency_flying(handle), 0);
    let limit = weir_concurrency_limit(handle);
    assert!((1..=i64::from(max)).contains(&limit), "{limit}");
    weir_concurrency_free(handle);
}
