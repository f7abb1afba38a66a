//! `weir_pool`: take+give of an idle resource (allow: READY, then kept),
//! and take on a pool whose every place is lent (refuse: WAIT); through
//! the C ABI, the Rust core, and two threads on one handle.

use std::hint::black_box;

use criterion::Criterion;
use weir::pool::{
    weir_pool, weir_pool_free, weir_pool_give, weir_pool_made, weir_pool_new, weir_pool_policy,
    weir_pool_policy_preset, weir_pool_take, weir_pool_taken, WEIR_POOL_TAKEN_MAKE,
    WEIR_POOL_TAKEN_READY, WEIR_POOL_TAKEN_WAIT,
};
use weir::status::weir_status::{self, WEIR_OK};
use weir_core::pool::{Pool, PoolPolicy, PoolTaken};

use crate::support::{fresh, id, two_threads, Owned, NOW};

type Take = extern "C" fn(*const weir_pool, i64) -> weir_pool_taken;
type Give = extern "C" fn(*const weir_pool, usize, i64, *mut bool) -> weir_status;

/// A pool of the preset's limits with `size` places, holding the
/// resources 1..=`idle` idle (made and given back at [`NOW`]) and the rest
/// of its places lent.
fn pool(size: i64, idle: usize) -> Owned<weir_pool> {
    let limits = weir_pool_policy {
        size,
        idle: size,
        ..weir_pool_policy_preset()
    };
    let pool = Owned::new(|out| weir_pool_new(&limits, out), weir_pool_free);
    for item in 1..=size as usize {
        assert_eq!(weir_pool_take(pool.get(), NOW).kind, WEIR_POOL_TAKEN_MAKE);
        assert_eq!(weir_pool_made(pool.get(), item, NOW), WEIR_OK);
    }
    let mut kept = false;
    for item in 1..=idle {
        assert_eq!(weir_pool_give(pool.get(), item, NOW, &mut kept), WEIR_OK);
        assert!(kept);
    }
    pool
}

/// The Rust core of a pool of one place, holding the resource 1, idle
/// or lent.
fn core_pool(idle: bool) -> Pool {
    let mut pool = Pool::new(PoolPolicy {
        size: 1,
        idle: 1,
        ..PoolPolicy::PRESET
    })
    .unwrap();
    assert_eq!(pool.take(NOW), PoolTaken::Make);
    pool.made(1, NOW).unwrap();
    if idle {
        assert!(pool.give(1, NOW).unwrap());
    }
    pool
}

/// Takes a resource and gives it back: whether it was lent and kept.
fn take_give(take: Take, give: Give, pool: *const weir_pool) -> bool {
    let taken = take(pool, NOW);
    let mut kept = false;
    let status = give(pool, taken.item, NOW, &mut kept);
    taken.kind == WEIR_POOL_TAKEN_READY && status == WEIR_OK && kept
}

pub fn benches(c: &mut Criterion) {
    let take: Take = black_box(weir_pool_take);
    let give: Give = black_box(weir_pool_give);

    fresh(
        c,
        "weir_pool_take+give",
        id("allow", "c_abi"),
        || pool(1, 1),
        |p| take_give(take, give, p.get()),
        |p| assert!(take_give(take, give, p.get())),
    );
    fresh(
        c,
        "weir_pool_take+give",
        id("allow", "rust"),
        || core_pool(true),
        |p| match p.take(NOW) {
            PoolTaken::Ready(item) => p.give(item, NOW) == Ok(true),
            _ => false,
        },
        |p| {
            assert_eq!(p.take(NOW), PoolTaken::Ready(1));
            assert_eq!(p.give(1, NOW), Ok(true));
        },
    );
    two_threads(
        c,
        "weir_pool_take+give",
        id("allow", "c_abi_2threads"),
        || pool(2, 2),
        |p| take_give(take, give, p.get()),
        |p| assert!(take_give(take, give, p.get())),
    );
    fresh(
        c,
        "weir_pool_take",
        id("refuse", "c_abi"),
        || pool(1, 0),
        |p| take(p.get(), NOW),
        |p| assert_eq!(take(p.get(), NOW).kind, WEIR_POOL_TAKEN_WAIT),
    );
    fresh(
        c,
        "weir_pool_take",
        id("refuse", "rust"),
        || core_pool(false),
        |p| p.take(NOW),
        |p| assert_eq!(p.take(NOW), PoolTaken::Wait),
    );
}
