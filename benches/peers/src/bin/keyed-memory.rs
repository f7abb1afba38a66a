//! Memory and false refusals at 10^6 keys, for BENCHMARKS.md's keyed table
//! section (benches/counts/keyed.py runs it):
//!
//!   keyed-memory CASE      the bytes CASE holds once 10^6 keys have each
//!                          been decided once: live heap bytes (counted by
//!                          this program's allocator) and resident growth
//!   keyed-memory refusals  10^6 keys each sending half their burst (5 of
//!                          10) at one instant, to weir's keyed table in
//!                          its footprint for 10^6 keys and to weir's bloom
//!                          (k = 3) at 2^21 and 2^22 words: the refusals
//!                          (every one false) and the table's overflows;
//!                          exits 1 if the table refused or overflowed
//!
//! Cases: governor_default, governor_fast, weir_keyed, weir_bloom_2pow22.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};

use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};
use weir_core::bloom::{Bloom, BloomShape};
use weir_core::gcra::GcraLimit;
use weir_core::keyed::{buckets_for, Decision, Keyed, KeyedShape, Overflow};

/// System's allocator, counting the bytes it has live.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to System unchanged; the count is a side
// effect that changes nothing System is given or answers.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: ptr came from System.alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const KEYS: u64 = 1_000_000;

/// The same keys as weir-peers' keyed rows.
fn key_of(i: u64) -> [u8; 16] {
    let mut key = [0; 16];
    key[..8].copy_from_slice(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
    key[8..].copy_from_slice(&(!i).to_le_bytes());
    key
}

/// Resident bytes, from /proc/self/statm.
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn table(limit: GcraLimit) -> Keyed {
    let buckets = buckets_for(KEYS, 1e-9).unwrap();
    let shape = KeyedShape::new(buckets, limit, Overflow::Refuse, 0x5eed, 0xfeed).unwrap();
    Keyed::new(shape).unwrap()
}

fn memory(case: &str) {
    let quota = Quota::per_second(NonZeroU32::new(100).unwrap());
    let limit = GcraLimit::new(100.0, 100).unwrap();
    let (live, rss) = (LIVE.load(Ordering::Relaxed), resident());
    let held: Box<dyn std::any::Any> = match case {
        "governor_default" => {
            let limiter = RateLimiter::dashmap_with_clock(quota, FakeRelativeClock::default());
            for i in 0..KEYS {
                let _ = limiter.check_key(&key_of(i));
            }
            Box::new(limiter)
        }
        "governor_fast" => {
            let limiter = RateLimiter::dashmap_with_clock_and_hasher(
                quota,
                FakeRelativeClock::default(),
                foldhash::fast::RandomState::default(),
            );
            for i in 0..KEYS {
                let _ = limiter.check_key(&key_of(i));
            }
            Box::new(limiter)
        }
        "weir_keyed" => {
            let table = table(limit);
            for i in 0..KEYS {
                table.allow(0, &key_of(i));
            }
            assert_eq!(table.counters().overflows(), 0);
            Box::new(table)
        }
        "weir_bloom_2pow22" => {
            let bloom = Bloom::new(BloomShape::new(22, 3, limit, 1, 2).unwrap()).unwrap();
            for i in 0..KEYS {
                bloom.allow(0, &key_of(i));
            }
            Box::new(bloom)
        }
        _ => panic!("no such case: {case}"),
    };
    let live = LIVE.load(Ordering::Relaxed) - live;
    let rss = resident().saturating_sub(rss);
    black_box(&held);
    println!(
        "{case}: {live} bytes live ({:.1} a key), resident +{rss} bytes ({:.1} a key)",
        live as f64 / KEYS as f64,
        rss as f64 / KEYS as f64
    );
}

/// Each key sends 5 of its burst of 10 at 0, one call at a time.
fn refusals() {
    let limit = GcraLimit::new(1.0, 10).unwrap();
    let table = table(limit);
    let mut refused = 0u64;
    let mut overflowed = 0u64;
    for i in 0..KEYS {
        let key = key_of(i);
        for _ in 0..5 {
            match table.decide(0, &key, 1) {
                Decision::Allowed => {}
                Decision::Refused => refused += 1,
                Decision::Overflowed(_) => overflowed += 1,
            }
        }
    }
    println!(
        "weir_keyed, {} buckets ({} bytes): {refused} refused, {overflowed} overflowed of {} calls; {} slots held",
        table.shape().buckets(),
        table.shape().buckets() * weir_core::keyed::BUCKET_BYTES,
        5 * KEYS,
        table.occupied()
    );
    // The table's promise at this load: no key refused for another's
    // traffic. The CI's counts stage runs this and fails on an exit of 1.
    let table_failed = refused + overflowed > 0;
    for size_log2 in [21, 22] {
        let bloom = Bloom::new(BloomShape::new(size_log2, 3, limit, 1, 2).unwrap()).unwrap();
        let mut refused = 0u64;
        let mut keys = 0u64;
        for i in 0..KEYS {
            let key = key_of(i);
            let before = refused;
            for _ in 0..5 {
                refused += u64::from(!bloom.allow(0, &key));
            }
            keys += u64::from(refused > before);
        }
        println!(
            "weir_bloom 2^{size_log2} words ({} bytes): {refused} refused of {} calls ({:.2} %), {keys} keys refused at least once",
            8usize << size_log2,
            5 * KEYS,
            100.0 * refused as f64 / (5 * KEYS) as f64
        );
    }
    if table_failed {
        println!("keyed table: 0 passed, 1 failed (a key sending half its burst was refused)");
        std::process::exit(1);
    }
    println!("keyed table: 1 passed, 0 failed");
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("refusals") => refusals(),
        Some(case) => memory(case),
        None => panic!("usage: keyed-memory CASE | refusals"),
    }
}
