//! The anchors every weir figure is a ratio to, measured in the same run:
//! the physical floors (one compare-and-swap loop, one `fetch_add`, one
//! mutex lock+unlock, all uncontended) and governor, the common Rust rate
//! limiter, with its fake clock held still.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use criterion::Criterion;
use governor::clock::{Clock, FakeRelativeClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DashMapStateStore;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};

use crate::support::{fresh, id, keyed, two_threads};

/// governor's direct limiter on the fake clock.
pub type Direct = RateLimiter<NotKeyed, InMemoryState, FakeRelativeClock, NoOp>;
/// governor's keyed limiter (its default store, a `DashMap`) with a fast
/// hasher, on the fake clock.
type Keyed = RateLimiter<
    [u8; 16],
    DashMapStateStore<[u8; 16], foldhash::fast::RandomState>,
    FakeRelativeClock,
    NoOp,
>;
/// No middleware: a decision answers only allowed or not.
type NoOp = NoOpMiddleware<<FakeRelativeClock as Clock>::Instant>;

/// One update as a rate word makes it: read the word, compute, and
/// compare-and-swap, again until the swap lands.
fn cas_loop(word: &AtomicU64) -> u64 {
    let mut seen = word.load(Ordering::Relaxed);
    loop {
        match word.compare_exchange_weak(seen, seen + 1, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(was) => return was,
            Err(now) => seen = now,
        }
    }
}

fn fetch_add(word: &AtomicU64) -> u64 {
    word.fetch_add(1, Ordering::AcqRel)
}

fn mutex_lock_unlock(count: &Mutex<u64>) -> u64 {
    let mut held = count.lock().unwrap();
    *held += 1;
    *held
}

/// A quota that allows every call at a fixed instant for as long as any
/// benchmark runs: one cell per nanosecond with a burst of 2^32 − 1 (so the
/// bucket, held still, admits about four billion calls).
fn quota_always() -> Quota {
    Quota::with_period(Duration::from_nanos(1))
        .unwrap()
        .allow_burst(NonZeroU32::MAX)
}

/// A quota that one call spends at a fixed instant: a burst of one, one
/// cell a second.
fn quota_spent() -> Quota {
    Quota::per_second(NonZeroU32::MIN)
}

/// A governor direct limiter that allows every call at its fixed instant.
pub fn governor_allowing() -> Direct {
    RateLimiter::direct_with_clock(quota_always(), FakeRelativeClock::default())
}

/// A governor direct limiter already spent at its fixed instant.
pub fn governor_spent() -> Direct {
    let limiter = RateLimiter::direct_with_clock(quota_spent(), FakeRelativeClock::default());
    assert!(limiter.check().is_ok());
    limiter
}

fn keyed_limiter(quota: Quota, keys: &[[u8; 16]]) -> Keyed {
    let limiter = RateLimiter::dashmap_with_clock_and_hasher(
        quota,
        FakeRelativeClock::default(),
        foldhash::fast::RandomState::default(),
    );
    for key in keys {
        let _ = limiter.check_key(key);
    }
    assert_eq!(limiter.len(), keys.len());
    limiter
}

pub fn benches(c: &mut Criterion) {
    fresh(
        c,
        "anchor",
        id("cas_loop", "1thread"),
        || AtomicU64::new(0),
        |word| cas_loop(word),
        |_| {},
    );
    fresh(
        c,
        "anchor",
        id("fetch_add", "1thread"),
        || AtomicU64::new(0),
        |word| fetch_add(word),
        |_| {},
    );
    fresh(
        c,
        "anchor",
        id("mutex_lock_unlock", "1thread"),
        || Mutex::new(0),
        |count| mutex_lock_unlock(count),
        |_| {},
    );
    two_threads(
        c,
        "anchor",
        id("cas_loop", "2threads"),
        || AtomicU64::new(0),
        cas_loop,
        |_| {},
    );
    two_threads(
        c,
        "anchor",
        id("mutex_lock_unlock", "2threads"),
        || Mutex::new(0),
        mutex_lock_unlock,
        |_| {},
    );

    fresh(
        c,
        "governor_check",
        id("allow", "direct"),
        governor_allowing,
        |limiter| limiter.check(),
        |limiter| assert!(limiter.check().is_ok()),
    );
    fresh(
        c,
        "governor_check",
        id("refuse", "direct"),
        governor_spent,
        |limiter| limiter.check(),
        |limiter| assert!(limiter.check().is_err()),
    );
    two_threads(
        c,
        "governor_check",
        id("allow", "direct_2threads"),
        governor_allowing,
        Direct::check,
        |limiter| assert!(limiter.check().is_ok()),
    );
    two_threads(
        c,
        "governor_check",
        id("refuse", "direct_2threads"),
        governor_spent,
        Direct::check,
        |limiter| assert!(limiter.check().is_err()),
    );
    keyed(
        c,
        "governor_check_key",
        id("allow", "keyed_1e6"),
        |keys| keyed_limiter(quota_always(), keys),
        Keyed::check_key,
        |limiter| assert!(limiter.check_key(&crate::support::keys()[0]).is_ok()),
    );
    keyed(
        c,
        "governor_check_key",
        id("refuse", "keyed_1e6"),
        |keys| keyed_limiter(quota_spent(), keys),
        Keyed::check_key,
        |limiter| assert!(limiter.check_key(&crate::support::keys()[0]).is_err()),
    );
}
