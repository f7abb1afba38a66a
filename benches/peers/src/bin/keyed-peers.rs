//! The keyed rows of BENCHMARKS.md's "Keyed table" (benches/counts/keyed.py),
//! loops for callgrind as weir-peers' (main.rs): each `loop_*` function
//! runs one decision per iteration, `n` times. A binary of its own, so that
//! its governor instances do not change what the compiler inlines into
//! weir-peers' loops (with them beside it, governor's direct `check()`
//! stopped inlining there: 69 instructions where it counts 30).
//!
//!   keyed-peers CASE N        one run of CASE's loop
//!   keyed-peers CASE N time   seven runs; prints the fastest's ns per iteration
//!   keyed-peers list          the cases

use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use governor::clock::{Clock, FakeRelativeClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::{DashMapStateStore, DefaultKeyedStateStore};
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use weir_core::bloom::{Bloom, BloomShape};
use weir_core::bucket::Bucket;
use weir_core::gcra::GcraLimit;
use weir_core::keyed::{buckets_for, Decision, Keyed as KeyedTable, KeyedShape, Overflow};
use weir_core::pool::{Pool, PoolPolicy, PoolTaken};

type Direct = RateLimiter<NotKeyed, InMemoryState, FakeRelativeClock, NoOp>;
type Keyed = RateLimiter<
    [u8; 16],
    DashMapStateStore<[u8; 16], foldhash::fast::RandomState>,
    FakeRelativeClock,
    NoOp,
>;

/// governor's keyed limiter as its users build it: `RateLimiter::dashmap`'s
/// store, with its default hasher (std's SipHash-1-3 `RandomState`).
type KeyedDefault =
    RateLimiter<[u8; 16], DefaultKeyedStateStore<[u8; 16]>, FakeRelativeClock, NoOp>;

type NoOp = NoOpMiddleware<<FakeRelativeClock as Clock>::Instant>;

const KEYS: usize = 1_000_000;
/// The keyed rows' step from one key to the next: prime to `KEYS`.
const STRIDE: u64 = 618_033;

/// What a case's loop works on.
enum State {
    None,
    Atomic(AtomicU64),
    Direct(Direct),
    Keyed(Keyed, Vec<[u8; 16]>),
    Pool(Pool),
    Bucket(Bucket),
    /// The keyed rows: each iteration makes its 16-byte key from the
    /// iteration's index (`key_of`), so that no key array is read.
    GovernorFast(Keyed),
    GovernorDefault(KeyedDefault),
    Table(KeyedTable),
    Bloom(Bloom),
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

/// The `i`th of the 10^6 keys, made in registers: the keyed rows' loops
/// call it rather than read a key array, so that their cache misses are the
/// limiter's own.
#[inline(always)]
fn key_of(i: u64) -> [u8; 16] {
    let mut key = [0; 16];
    key[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
    key[8..].copy_from_slice(&(!i).to_le_bytes());
    key
}

/// The keyed rows' loop body: key `k` made, decided, `k` advanced by a
/// stride prime to 10^6, so that a run's keys are spread over the whole
/// fill (keys placed into an empty table and into a 61 % full one alike),
/// each key once in 10^6 iterations.
macro_rules! keyed_loop {
    ($n:expr, |$key:ident| $decide:expr) => {{
        let mut hits = 0u64;
        let mut k = 0u64;
        for _ in 0..$n {
            let $key = key_of(k);
            hits += u64::from($decide);
            k += STRIDE;
            if k >= KEYS as u64 {
                k -= KEYS as u64;
            }
        }
        hits
    }};
}

/// The key's making alone: subtracted from nothing, shown beside the keyed
/// rows (each of them makes its key the same way).
#[no_mangle]
#[inline(never)]
fn loop_keys_only(n: u64) -> u64 {
    keyed_loop!(n, |key| black_box(&key)[0] != 1)
}

#[no_mangle]
#[inline(never)]
fn loop_governor_keyed_fast(limiter: &Keyed, n: u64) -> u64 {
    keyed_loop!(n, |key| limiter.check_key(&key).is_ok())
}

#[no_mangle]
#[inline(never)]
fn loop_governor_keyed_default(limiter: &KeyedDefault, n: u64) -> u64 {
    keyed_loop!(n, |key| limiter.check_key(&key).is_ok())
}

#[no_mangle]
#[inline(never)]
fn loop_core_keyed(table: &KeyedTable, now: i64, n: u64) -> u64 {
    keyed_loop!(n, |key| table.allow(now, &key))
}

/// A new key each call (`key_of` past the 10^6 the table holds, never
/// decided before): what placing a key costs. Counted only (`keyed.py
/// --quick`), never timed: a million calls would crowd the table.
#[no_mangle]
#[inline(never)]
fn loop_core_keyed_new(table: &KeyedTable, now: i64, n: u64) -> u64 {
    let mut hits = 0u64;
    for i in 0..n {
        hits += u64::from(table.allow(now, &key_of(KEYS as u64 + i)));
    }
    hits
}

#[no_mangle]
#[inline(never)]
fn loop_core_bloom(bloom: &Bloom, now: i64, n: u64) -> u64 {
    keyed_loop!(n, |key| bloom.allow(now, &key))
}

/// The keyed table in the footprint the header gives for 10^6 active keys
/// at an overflow chance of at most 10^-9 a new key, every key decided once
/// at 0. Panics if any of them overflowed (a false refusal).
fn table(limit: GcraLimit) -> KeyedTable {
    let buckets = buckets_for(KEYS as u64, 1e-9).unwrap();
    let shape = KeyedShape::new(buckets, limit, Overflow::Refuse, 0x5eed, 0xfeed).unwrap();
    let table = KeyedTable::new(shape).unwrap();
    for i in 0..KEYS as u64 {
        let decided = table.decide(0, &key_of(i), 1);
        assert!(
            !matches!(decided, Decision::Overflowed(_)),
            "key {i} overflowed"
        );
    }
    assert_eq!(table.counters().overflows(), 0);
    table
}

/// weir's bloom, k = 3, 2^`size_log2` GCRA words (the keyed table's kind),
/// every key decided once at 0.
fn bloom(size_log2: u32, limit: GcraLimit) -> Bloom {
    let bloom = Bloom::new(BloomShape::new(size_log2, 3, limit, 1, 2).unwrap()).unwrap();
    for i in 0..KEYS as u64 {
        bloom.allow(0, &key_of(i));
    }
    bloom
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

/// governor keyed, fast hasher, every key of `key_of` checked once.
fn fast(quota: Quota) -> State {
    let limiter = RateLimiter::dashmap_with_clock_and_hasher(
        quota,
        FakeRelativeClock::default(),
        foldhash::fast::RandomState::default(),
    );
    for i in 0..KEYS as u64 {
        let _ = limiter.check_key(&key_of(i));
    }
    State::GovernorFast(limiter)
}

/// governor keyed, default hasher, every key of `key_of` checked once.
fn default_hasher(quota: Quota) -> State {
    let limiter: KeyedDefault =
        RateLimiter::dashmap_with_clock(quota, FakeRelativeClock::default());
    for i in 0..KEYS as u64 {
        let _ = limiter.check_key(&key_of(i));
    }
    State::GovernorDefault(limiter)
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
    // weir's GCRA words alike: a burst no loop reaches, and one a second
    // spent by the fill.
    let open = GcraLimit::new(1e9, 1 << 40).unwrap();
    let shut = GcraLimit::new(1.0, 1).unwrap();
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
        "keys_only" => (State::None, None),
        "governor_keyed_fast_allow" => (fast(always), Some(true)),
        "governor_keyed_fast_refuse" => (fast(spent), Some(false)),
        "governor_keyed_default_allow" => (default_hasher(always), Some(true)),
        "governor_keyed_default_refuse" => (default_hasher(spent), Some(false)),
        "core_keyed_allow" => (State::Table(table(open)), Some(true)),
        "core_keyed_refuse" => (State::Table(table(shut)), Some(false)),
        "core_keyed_new" => (State::Table(table(open)), Some(true)),
        "core_bloom_allow_2pow22" => (State::Bloom(bloom(22, open)), Some(true)),
        "core_bloom_allow_2pow20" => (State::Bloom(bloom(20, open)), Some(true)),
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
    "keys_only",
    "governor_keyed_fast_allow",
    "governor_keyed_fast_refuse",
    "governor_keyed_default_allow",
    "governor_keyed_default_refuse",
    "core_keyed_allow",
    "core_keyed_refuse",
    "core_bloom_allow_2pow22",
    "core_bloom_allow_2pow20",
];

fn run(name: &str, state: &mut State, n: u64) -> u64 {
    match state {
        State::None if name == "keys_only" => loop_keys_only(n),
        State::None => loop_empty(n),
        State::Atomic(word) => loop_cas_loop(word, n),
        State::Direct(limiter) => loop_governor_direct(limiter, n),
        State::Keyed(limiter, keys) => loop_governor_keyed(limiter, keys, n),
        State::Pool(pool) => loop_core_pool(pool, n),
        State::Bucket(bucket) => loop_core_bucket(bucket, n),
        State::GovernorFast(limiter) => loop_governor_keyed_fast(limiter, n),
        State::GovernorDefault(limiter) => loop_governor_keyed_default(limiter, n),
        State::Table(table) if name == "core_keyed_new" => {
            loop_core_keyed_new(table, black_box(0), n)
        }
        State::Table(table) => loop_core_keyed(table, black_box(0), n),
        State::Bloom(bloom) => loop_core_bloom(bloom, black_box(0), n),
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
        let hits = run(name, &mut state, n);
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
