//! Loops for callgrind: each `loop_*` function runs one decision per
//! iteration, `n` times; `counts.py` passes its name to callgrind's
//! `--toggle-collect`, runs it at two `n` and subtracts `loop_empty`.
//!
//!   weir-peers CASE N        one run of CASE's loop
//!   weir-peers CASE N time   seven runs; prints the fastest's ns per iteration
//!   weir-peers list          the cases

use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use governor::clock::{Clock, FakeRelativeClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DashMapStateStore;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use weir_core::bucket::Bucket;
use weir_core::pool::{Pool, PoolPolicy, PoolTaken};

type Direct = RateLimiter<NotKeyed, InMemoryState, FakeRelativeClock, NoOp>;
type Keyed = RateLimiter<
    [u8; 16],
    DashMapStateStore<[u8; 16], foldhash::fast::RandomState>,
    FakeRelativeClock,
    NoOp,
>;

type NoOp = NoOpMiddleware<<FakeRelativeClock as Clock>::Instant>;

const KEYS: usize = 1_000_000;

/// What a case's loop works on.
enum State {
    None,
    Atomic(AtomicU64),
    Direct(Direct),
    Keyed(Keyed, Vec<[u8; 16]>),
    Pool(Pool),
    Bucket(Bucket),
}

#[no_mangle]
#[inline(never)]
fn loop_empty(n: u64) -> u64 {
    let mut hits: u64 = 0;
    for _ in 0..n {
        hits += 1;
        // SAFETY: an empty asm block; it only hides `hits` from the
        // optimiser, so the loop stays a loop (black_box would add a store
        // and a load that the other loops do not have).
        unsafe { core::arch::asm!("/* {0} */", inout(reg) hits) };
    }
    hits
}

#[no_mangle]
#[inline(never)]
fn loop_cas_loop(word: &AtomicU64, n: u64) -> u64 {
    let mut hits = 0;
    for _ in 0..n {
        let mut seen = word.load(Ordering::Relaxed);
        while let Err(actual) =
            word.compare_exchange_weak(seen, seen + 1, Ordering::Relaxed, Ordering::Relaxed)
        {
            seen = actual;
        }
        hits += 1;
    }
    hits
}

#[no_mangle]
#[inline(never)]
fn loop_governor_direct(limiter: &Direct, n: u64) -> u64 {
    let mut hits = 0;
    for _ in 0..n {
        hits += u64::from(limiter.check().is_ok());
    }
    hits
}

#[no_mangle]
#[inline(never)]
fn loop_governor_keyed(limiter: &Keyed, keys: &[[u8; 16]], n: u64) -> u64 {
    let mut hits = 0;
    let mut k = 0;
    for _ in 0..n {
        hits += u64::from(limiter.check_key(&keys[k]).is_ok());
        k = if k + 1 == keys.len() { 0 } else { k + 1 };
    }
    hits
}

#[no_mangle]
#[inline(never)]
fn loop_core_pool(pool: &mut Pool, n: u64) -> u64 {
    let mut hits = 0;
    for _ in 0..n {
        hits += u64::from(match pool.take(0) {
            PoolTaken::Ready(item) => pool.give(item, 0) == Ok(true),
            _ => false,
        });
    }
    hits
}

#[no_mangle]
#[inline(never)]
fn loop_core_bucket(bucket: &Bucket, n: u64) -> u64 {
    let mut hits = 0;
    for _ in 0..n {
        hits += u64::from(bucket.take(black_box(0), black_box(1.0)));
    }
    hits
}

fn keys() -> Vec<[u8; 16]> {
    (0..KEYS as u64)
        .map(|i| {
            let mut key = [0; 16];
            key[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
            key[8..].copy_from_slice(&(!i).to_le_bytes());
            key
        })
        .collect()
}

fn keyed(quota: Quota) -> State {
    let limiter = RateLimiter::dashmap_with_clock_and_hasher(
        quota,
        FakeRelativeClock::default(),
        foldhash::fast::RandomState::default(),
    );
    let keys = keys();
    for key in &keys {
        let _ = limiter.check_key(key);
    }
    State::Keyed(limiter, keys)
}

fn pool(size: usize) -> State {
    let mut pool = Pool::new(PoolPolicy {
        size: size as _,
        idle: size as _,
        ..PoolPolicy::PRESET
    })
    .unwrap();
    for item in 1..=size {
        assert_eq!(pool.take(0), PoolTaken::Make);
        pool.made(item, 0).unwrap();
    }
    for item in 1..=size {
        assert_eq!(pool.give(item, 0), Ok(true));
    }
    State::Pool(pool)
}

/// The cases: name, state, and whether every iteration allows (`Some(true)`),
/// refuses (`Some(false)`) or either (`None`).
fn setup(name: &str) -> Option<(State, Option<bool>)> {
    let always = Quota::with_period(Duration::from_nanos(1))
        .unwrap()
        .allow_burst(NonZeroU32::MAX);
    let spent = Quota::per_second(NonZeroU32::MIN);
    Some(match name {
        "empty" => (State::None, None),
        "cas_loop" => (State::Atomic(AtomicU64::new(0)), Some(true)),
        "governor_direct_allow" => (
            State::Direct(RateLimiter::direct_with_clock(
                always,
                FakeRelativeClock::default(),
            )),
            Some(true),
        ),
        "governor_direct_refuse" => {
            let limiter = RateLimiter::direct_with_clock(spent, FakeRelativeClock::default());
            assert!(limiter.check().is_ok());
            (State::Direct(limiter), Some(false))
        }
        "governor_keyed_allow" => (keyed(always), Some(true)),
        "governor_keyed_refuse" => (keyed(spent), Some(false)),
        "core_pool_take_give_10" => (pool(10), Some(true)),
        "core_pool_take_give_1e5" => (pool(100_000), Some(true)),
        "core_bucket_allow" => (State::Bucket(Bucket::new(1.0, 1e9, 0).unwrap()), Some(true)),
        "core_bucket_refuse" => {
            let bucket = Bucket::new(1.0, 1.0, 0).unwrap();
            assert!(bucket.take(0, 1.0));
            (State::Bucket(bucket), Some(false))
        }
        _ => return None,
    })
}

const CASES: &[&str] = &[
    "empty",
    "cas_loop",
    "governor_direct_allow",
    "governor_direct_refuse",
    "governor_keyed_allow",
    "governor_keyed_refuse",
    "core_pool_take_give_10",
    "core_pool_take_give_1e5",
    "core_bucket_allow",
    "core_bucket_refuse",
];

fn run(state: &mut State, n: u64) -> u64 {
    match state {
        State::None => loop_empty(n),
        State::Atomic(word) => loop_cas_loop(word, n),
        State::Direct(limiter) => loop_governor_direct(limiter, n),
        State::Keyed(limiter, keys) => loop_governor_keyed(limiter, keys, n),
        State::Pool(pool) => loop_core_pool(pool, n),
        State::Bucket(bucket) => loop_core_bucket(bucket, n),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("list") {
        for name in CASES {
            println!("{name}");
        }
        return;
    }
    let (name, n) = match args.as_slice() {
        [name, n, ..] => (name.as_str(), n.parse::<u64>().expect("N is a count")),
        _ => panic!("usage: weir-peers CASE N [time] | list"),
    };
    let (mut state, expect) = setup(name).unwrap_or_else(|| panic!("no such case: {name}"));
    let runs = if args.get(2).map(String::as_str) == Some("time") {
        7
    } else {
        1
    };
    let mut ns = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let hits = run(&mut state, n);
        ns.push(start.elapsed().as_secs_f64() * 1e9 / n as f64);
        if let Some(allowing) = expect {
            let wanted = if allowing { n } else { 0 };
            assert_eq!(hits, wanted, "{name} answered the other way");
        }
    }
    if runs > 1 {
        ns.sort_by(f64::total_cmp);
        println!("{:.3}", ns[0]); // the least disturbed run
    }
}
