//! Shared handles (`weir_X_init_shared`, `weir_X_attach`) hammered from
//! threads: each of the nine types laid in a `MAP_SHARED` anonymous
//! mapping, attached by four threads (each its own `weir_X_attach`
//! pointer, as four processes would), every thread calling at once, then
//! the totals checked exactly where the type is exact. The forked-process
//! form is tests/c/shared.c; this one is for ThreadSanitizer
//! (.ci/stages/tsan.sh), which follows threads, not processes: every
//! access to the region, the robust lock's and the handle's own included,
//! is seen. Where the kernel keeps no robust-futex list (qemu-user) the
//! seven locked types refuse with `WEIR_ERR_REGION_UNSUPPORTED` and only
//! the bucket and the gate are hammered.

use std::ffi::c_void;
use std::sync::Barrier;

use weir::breaker::*;
use weir::bucket::*;
use weir::budget::*;
use weir::concurrency::*;
use weir::gate::*;
use weir::period::*;
use weir::region::weir_recoveries;
use weir::shedder::*;
use weir::sliding::*;
use weir::status::weir_status::{self, *};
use weir::window::*;

const THREADS: usize = 4;
/// Calls per thread in the loops that run to a bound.
const CALLS: i64 = 1000;
/// Bytes mapped for each region: more than any of the nine needs.
const REGION: usize = 1 << 16;
const HOUR_NS: i64 = 3600 * 1_000_000_000;

/// A `MAP_SHARED` anonymous mapping, unmapped on drop.
struct Mapping(*mut c_void);

impl Mapping {
    fn new() -> Mapping {
        // SAFETY: a fresh anonymous mapping; no memory of ours is touched.
        let mem = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                REGION,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(mem, libc::MAP_FAILED);
        Mapping(mem)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`; every handle into it is gone
        // (the threads are joined).
        assert_eq!(unsafe { libc::munmap(self.0, REGION) }, 0);
    }
}

/// Runs `work(thread, mem)` on `THREADS` threads released together by a
/// barrier, and sums what they return. `mem` is the region's address:
/// each thread attaches its own handle, as a process would.
fn hammer(region: &Mapping, work: impl Fn(usize, *mut c_void) -> i64 + Sync) -> i64 {
    let mem = region.0 as usize;
    let start = Barrier::new(THREADS);
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (start, work) = (&start, &work);
                scope.spawn(move || {
                    start.wait();
                    work(thread, mem as *mut c_void)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    })
}

/// The handle `attach` writes for the region at `mem`, checked.
fn attached<H>(
    mem: *mut c_void,
    attach: extern "C" fn(*mut c_void, usize, *mut *mut H) -> weir_status,
) -> *mut H {
    let mut handle = std::ptr::null_mut();
    assert_eq!(attach(mem, REGION, &mut handle), WEIR_OK);
    assert!(!handle.is_null());
    handle
}

/// A shared handle's recoveries: none, as nothing died.
fn no_recoveries<H>(
    handle: *const H,
    read: extern "C" fn(*const H, *mut weir_recoveries) -> weir_status,
) {
    let mut recoveries = weir_recoveries {
        recovered: 7,
        reset: 7,
    };
    assert_eq!(read(handle, &mut recoveries), WEIR_OK);
    assert_eq!((recoveries.recovered, recoveries.reset), (0, 0));
}

/// Whether the locked types can be shared here: false where the breaker's
/// init answers `WEIR_ERR_REGION_UNSUPPORTED` (no robust-futex list), and
/// then every other locked type must answer it too.
fn locks_shared() -> bool {
    let region = Mapping::new();
    let mem = region.0;
    let mut breaker = std::ptr::null_mut();
    match weir_breaker_init_shared(mem, REGION, std::ptr::null(), 0, &mut breaker) {
        WEIR_OK => return true,
        status => assert_eq!(status, WEIR_ERR_REGION_UNSUPPORTED),
    }
    let unsupported = WEIR_ERR_REGION_UNSUPPORTED;
    let mut shedder = std::ptr::null_mut();
    assert_eq!(
        weir_shedder_init_shared(mem, REGION, std::ptr::null(), 0, &mut shedder),
        unsupported
    );
    let mut window = std::ptr::null_mut();
    assert_eq!(
        weir_window_init_shared(mem, REGION, 10, 1_000_000_000, 0, &mut window),
        unsupported
    );
    let mut sliding = std::ptr::null_mut();
    assert_eq!(
        weir_sliding_init_shared(mem, REGION, 10, HOUR_NS, &mut sliding),
        unsupported
    );
    let mut period = std::ptr::null_mut();
    assert_eq!(
        weir_period_init_shared(mem, REGION, 10, HOUR_NS, false, &mut period),
        unsupported
    );
    let mut budget = std::ptr::null_mut();
    assert_eq!(
        weir_budget_init_shared(mem, REGION, std::ptr::null(), 0, &mut budget),
        unsupported
    );
    let mut limit = std::ptr::null_mut();
    assert_eq!(
        weir_concurrency_init_shared(mem, REGION, std::ptr::null(), &mut limit),
        unsupported
    );
    eprintln!(
        "skipped: the seven locked types (no robust-futex list here: qemu-user?); \
         only the bucket and the gate are shared"
    );
    false
}

#[test]
fn the_bucket_admits_exactly_its_burst() {
    let region = Mapping::new();
    let mut bucket = std::ptr::null_mut();
    // No refill, 1000 tokens: four threads asking 1000 each get 1000 in all.
    assert_eq!(
        weir_bucket_init_shared(region.0, REGION, 1.0, 1000.0, 0, &mut bucket),
        WEIR_OK
    );
    let got = hammer(&region, |_, mem| {
        let bucket = attached(mem, weir_bucket_attach);
        (0..CALLS)
            .map(|_| i64::from(weir_bucket_take(bucket, 5, 1.0)))
            .sum()
    });
    assert_eq!(got, 1000);
    assert!(!weir_bucket_take(bucket, 5, 1.0));
}

#[test]
fn the_gate_never_holds_more_than_its_limit() {
    let region = Mapping::new();
    let mut gate = std::ptr::null_mut();
    assert_eq!(
        weir_gate_init_shared(region.0, REGION, 10, &mut gate),
        WEIR_OK
    );
    // Enter and leave at random: never more than 10 inside at once, and
    // everyone who entered left.
    let entered = hammer(&region, |_, mem| {
        let gate = attached(mem, weir_gate_attach);
        let mut entered = 0;
        for _ in 0..CALLS {
            if weir_gate_enter(gate) {
                entered += 1;
                let held = weir_gate_held(gate);
                assert!((1..=10).contains(&held), "{held} inside");
                weir_gate_leave(gate);
            }
        }
        entered
    });
    assert!(entered >= CALLS, "{entered} entered");
    assert_eq!(weir_gate_held(gate), 0);
    // Then enters without leaves: exactly 10 of 400 get in.
    let held = hammer(&region, |_, mem| {
        let gate = attached(mem, weir_gate_attach);
        (0..100).map(|_| i64::from(weir_gate_enter(gate))).sum()
    });
    assert_eq!(held, 10);
    assert_eq!(weir_gate_held(gate), 10);
    assert!(!weir_gate_enter(gate));
}

#[test]
fn the_locked_types_count_exactly_across_threads() {
    if !locks_shared() {
        return;
    }
    breaker_tally_adds_up();
    shedder_counts_every_call();
    period_and_sliding_admit_exactly_the_quota();
    window_sums_exactly();
    budget_answers_as_its_heap_twin();
    concurrency_lets_in_its_limit();
}

fn breaker_tally_adds_up() {
    let region = Mapping::new();
    let mut breaker = std::ptr::null_mut();
    assert_eq!(
        weir_breaker_init_shared(region.0, REGION, std::ptr::null(), 0, &mut breaker),
        WEIR_OK
    );
    // Every thread lets calls through and settles them, passing all but
    // every tenth, which fails: the tally counts each settle once.
    let passed = hammer(&region, |_, mem| {
        let breaker = attached(mem, weir_breaker_attach);
        let mut passed = 0;
        for i in 0..CALLS {
            let mut ticket = weir_breaker_ticket::default();
            assert!(weir_breaker_allow(breaker, 1000 + i, 0.5, &mut ticket));
            if i % 10 == 9 {
                assert_eq!(weir_breaker_fail(breaker, &mut ticket, 1000 + i), WEIR_OK);
            } else {
                assert_eq!(weir_breaker_pass(breaker, &mut ticket, 1000 + i), WEIR_OK);
                passed += 1;
            }
        }
        passed
    });
    let calls = THREADS as i64 * CALLS;
    assert_eq!(passed, calls - calls / 10);
    let mut tally = weir_breaker_tally::default();
    assert_eq!(
        weir_breaker_read_tally(breaker, 1000 + CALLS, &mut tally),
        WEIR_OK
    );
    assert_eq!(
        (tally.total, tally.success, tally.failure),
        (calls, passed, calls / 10)
    );
    no_recoveries(breaker, weir_breaker_recoveries);
}

fn shedder_counts_every_call() {
    let region = Mapping::new();
    let mut shedder = std::ptr::null_mut();
    assert_eq!(
        weir_shedder_init_shared(region.0, REGION, std::ptr::null(), 0, &mut shedder),
        WEIR_OK
    );
    // Each thread holds 100 calls in flight, then settles them: the shedder
    // sees the other threads' calls too.
    let held = hammer(&region, |_, mem| {
        let shedder = attached(mem, weir_shedder_attach);
        let mut tickets = vec![weir_shedder_ticket::default(); 100];
        for ticket in &mut tickets {
            assert!(weir_shedder_allow(shedder, 1000, 0, ticket));
        }
        for ticket in &mut tickets {
            assert_eq!(weir_shedder_pass(shedder, ticket, 1001), WEIR_OK);
        }
        tickets.len() as i64
    });
    assert_eq!(held, THREADS as i64 * 100);
    assert_eq!(weir_shedder_flying(shedder), 0);
    no_recoveries(shedder, weir_shedder_recoveries);
}

fn period_and_sliding_admit_exactly_the_quota() {
    let region = Mapping::new();
    let mut period = std::ptr::null_mut();
    assert_eq!(
        weir_period_init_shared(region.0, REGION, 1000, HOUR_NS, false, &mut period),
        WEIR_OK
    );
    let over = weir_period_quota::WEIR_PERIOD_QUOTA_OVER;
    let got = hammer(&region, |_, mem| {
        let period = attached(mem, weir_period_attach);
        (0..CALLS)
            .map(|_| i64::from(weir_period_take(period, 7) != over))
            .sum()
    });
    assert_eq!(got, 1000);
    assert_eq!(weir_period_take(period, 7), over);
    no_recoveries(period, weir_period_recoveries);
    drop(region);

    let region = Mapping::new();
    let mut sliding = std::ptr::null_mut();
    assert_eq!(
        weir_sliding_init_shared(region.0, REGION, 1000, HOUR_NS, &mut sliding),
        WEIR_OK
    );
    let got = hammer(&region, |_, mem| {
        let sliding = attached(mem, weir_sliding_attach);
        (0..CALLS)
            .map(|_| i64::from(weir_sliding_take(sliding, 7)))
            .sum()
    });
    assert_eq!(got, 1000);
    assert!(!weir_sliding_take(sliding, 7));
    no_recoveries(sliding, weir_sliding_recoveries);
}

fn window_sums_exactly() {
    let region = Mapping::new();
    let mut window = std::ptr::null_mut();
    assert_eq!(
        weir_window_init_shared(region.0, REGION, 10, 1_000_000_000, 0, &mut window),
        WEIR_OK
    );
    // Thread t adds t + 1 each time: 1000 × (1 + 2 + 3 + 4) in all.
    let added = hammer(&region, |thread, mem| {
        let window = attached(mem, weir_window_attach);
        for _ in 0..CALLS {
            assert_eq!(weir_window_add(window, 7, thread as i64 + 1), WEIR_OK);
        }
        CALLS
    });
    let mut total = weir_window_total { sum: 0, count: 0 };
    assert_eq!(weir_window_read_total(window, 7, true, &mut total), WEIR_OK);
    assert_eq!((total.count, total.sum), (added, CALLS * 10));
    no_recoveries(window, weir_window_recoveries);
}

fn budget_answers_as_its_heap_twin() {
    // Tokens form, 100 tokens, no deposits: the answers to 4 × 100
    // withdrawals at one instant do not depend on their order, so the
    // threads together get what one heap budget gets from 400 in a row.
    let mut policy = weir_budget_policy_preset();
    policy.form = WEIR_BUDGET_TOKENS;
    policy.max_tokens = 100;
    let mut heap = std::ptr::null_mut();
    assert_eq!(weir_budget_new(&policy, 0, &mut heap), WEIR_OK);
    let expected: i64 = (0..THREADS as i64 * 100)
        .map(|_| i64::from(weir_budget_withdraw(heap, 5)))
        .sum();
    assert!(expected > 0);

    let region = Mapping::new();
    let mut budget = std::ptr::null_mut();
    assert_eq!(
        weir_budget_init_shared(region.0, REGION, &policy, 0, &mut budget),
        WEIR_OK
    );
    let sent = hammer(&region, |_, mem| {
        let budget = attached(mem, weir_budget_attach);
        (0..100)
            .map(|_| i64::from(weir_budget_withdraw(budget, 5)))
            .sum()
    });
    assert_eq!(sent, expected);
    assert_eq!(weir_budget_tokens(budget, 5), weir_budget_tokens(heap, 5));
    weir_budget_free(heap);
    no_recoveries(budget, weir_budget_recoveries);
}

fn concurrency_lets_in_its_limit() {
    let region = Mapping::new();
    let mut limit = std::ptr::null_mut();
    assert_eq!(
        weir_concurrency_init_shared(region.0, REGION, std::ptr::null(), &mut limit),
        WEIR_OK
    );
    let initial = weir_concurrency_limit(limit);
    assert!(initial > 0 && initial < THREADS as i64 * 100);
    // Four threads ask 100 entries each at one instant, holding them: the
    // limit lets exactly `initial` in. Once every thread has asked, each
    // leaves what it holds (so no leave makes room for another's enter).
    let asked = Barrier::new(THREADS);
    let entered = hammer(&region, |_, mem| {
        let limit = attached(mem, weir_concurrency_attach);
        let mut tickets = Vec::new();
        for _ in 0..100 {
            let mut ticket = weir_concurrency_ticket::default();
            if weir_concurrency_enter(limit, 1000, &mut ticket) {
                tickets.push(ticket);
            }
        }
        asked.wait();
        for ticket in &mut tickets {
            assert_eq!(weir_concurrency_leave(limit, ticket, 1001, false), WEIR_OK);
        }
        tickets.len() as i64
    });
    assert_eq!(entered, initial);
    assert_eq!(weir_concurrency_flying(limit), 0);
    no_recoveries(limit, weir_concurrency_recoveries);
}
