//! `weir_rate_allow` (the one-word limiter) and `weir_bloom_allow` (k = 3
//! words of 2^20 per key, over 1,000,000 keys), allowing and refusing,
//! through the C ABI and the Rust core; the rate word also with two threads
//! on one word.

use std::hint::black_box;
use std::mem::MaybeUninit;
use std::sync::atomic::AtomicU64;

use criterion::Criterion;
use weir::bloom::{weir_bloom, weir_bloom_allow, weir_bloom_free, weir_bloom_new};
use weir::rate::{weir_rate, weir_rate_allow, weir_rate_limit, weir_rate_limit_new};
use weir::status::weir_status::WEIR_OK;
use weir_core::bloom::{Bloom, BloomShape};
use weir_core::rate::{self, RateLimit};

use crate::support::{fresh, id, keyed, two_threads, Owned, NOW};

/// The rate word's limit for the allow path: a million events a second,
/// bursts of 100 (a 100 µs window).
const RATE_PER_S: f64 = 1e6;
const RATE_BURST: i64 = 100;
/// One interval of that limit: a `now` advancing this much per call finds
/// each window expired and opens a new one, so every call is allowed.
const RATE_STEP_NS: i64 = 1_000;

/// The bloom's shape: 2^20 words, 3 per key, each allowing up to 1,023
/// events in a window of 1,023 s, so that held at [`NOW`] no word runs out
/// while the benchmark runs (each word is charged a few hundred times at
/// most).
const BLOOM_SIZE_LOG2: u32 = 20;
const BLOOM_HASHES: u32 = 3;
const BLOOM_PER_S: f64 = 1.0;
const BLOOM_BURST: i64 = 1_023;
const SEED: [u64; 2] = [0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210];

fn c_limit(per_s: f64, burst: i64) -> weir_rate_limit {
    let mut limit = MaybeUninit::uninit();
    assert_eq!(
        weir_rate_limit_new(per_s, burst, limit.as_mut_ptr()),
        WEIR_OK
    );
    // SAFETY: weir_rate_limit_new reported WEIR_OK, so it wrote the limit.
    unsafe { limit.assume_init() }
}

/// A rate word in caller memory with its limit, and a clock for the
/// advancing allow path.
struct Word {
    rate: weir_rate,
    limit: weir_rate_limit,
    now: i64,
}

/// A word whose whole burst is spent at [`NOW`].
fn spent_word() -> Word {
    let mut word = Word {
        rate: weir_rate { state: 0 },
        limit: c_limit(1.0, 1),
        now: NOW,
    };
    assert!(weir_rate_allow(&mut word.rate, &word.limit, NOW));
    word
}

thread_local! {
    /// Each thread's own clock for the two-thread allow path.
    static CLOCK: std::cell::Cell<i64> = const { std::cell::Cell::new(NOW) };
}

/// The same word shared by two threads: the C call takes `*mut`, and the
/// word is only ever changed atomically.
struct Shared {
    rate: std::cell::UnsafeCell<weir_rate>,
    limit: weir_rate_limit,
}

// SAFETY: weir only touches `rate` through atomic operations (the header
// says the word may be shared between threads and processes).
unsafe impl Sync for Shared {}

fn bloom(per_s: f64, burst: i64) -> Owned<weir_bloom> {
    let limit = c_limit(per_s, burst);
    Owned::new(
        |out| weir_bloom_new(BLOOM_SIZE_LOG2, BLOOM_HASHES, &limit, SEED[0], SEED[1], out),
        weir_bloom_free,
    )
}

pub fn benches(c: &mut Criterion) {
    rate_benches(c);
    bloom_benches(c);
}

fn rate_benches(c: &mut Criterion) {
    let allow: extern "C" fn(*mut weir_rate, *const weir_rate_limit, i64) -> bool =
        black_box(weir_rate_allow);
    let path = "weir_rate_allow";
    fresh(
        c,
        path,
        id("allow", "c_abi_advancing"),
        || Word {
            rate: weir_rate { state: 0 },
            limit: c_limit(RATE_PER_S, RATE_BURST),
            now: NOW,
        },
        |w| {
            w.now += RATE_STEP_NS;
            allow(&mut w.rate, &w.limit, w.now)
        },
        |w| assert!(allow(&mut w.rate, &w.limit, w.now + RATE_STEP_NS)),
    );
    fresh(
        c,
        path,
        id("allow", "rust_advancing"),
        || {
            (
                AtomicU64::new(0),
                RateLimit::new(RATE_PER_S, RATE_BURST).unwrap(),
                NOW,
            )
        },
        |(word, limit, now)| {
            *now += RATE_STEP_NS;
            rate::allow(word, limit, *now)
        },
        |(word, limit, now)| assert!(rate::allow(word, limit, *now + RATE_STEP_NS)),
    );
    fresh(
        c,
        path,
        id("refuse", "c_abi"),
        spent_word,
        |w| allow(&mut w.rate, &w.limit, w.now),
        |w| assert!(!allow(&mut w.rate, &w.limit, w.now)),
    );
    fresh(
        c,
        path,
        id("refuse", "rust"),
        || {
            let (word, limit) = (AtomicU64::new(0), RateLimit::new(1.0, 1).unwrap());
            assert!(rate::allow(&word, &limit, NOW));
            (word, limit)
        },
        |(word, limit)| rate::allow(word, limit, NOW),
        |(word, limit)| assert!(!rate::allow(word, limit, NOW)),
    );
    // Two threads on one word, each with its own clock advancing one
    // window (100 intervals) per call: a call finds the window expired
    // and opens a new one, or, when the other thread's clock is ahead,
    // counts into its window; both are a compare-and-swap on the one
    // shared word. (A thread whose clock falls more than a burst behind the
    // other's, as when it is descheduled on a busy machine, is refused
    // until it catches up: the word doing its job.)
    two_threads(
        c,
        path,
        id("allow", "c_abi_2threads_advancing"),
        || Shared {
            rate: std::cell::UnsafeCell::new(weir_rate { state: 0 }),
            limit: c_limit(RATE_PER_S, RATE_BURST),
        },
        |s| {
            let now = CLOCK.with(|clock| {
                let now = clock.get() + RATE_BURST * RATE_STEP_NS;
                clock.set(now);
                now
            });
            allow(s.rate.get(), &s.limit, now)
        },
        |s| assert!(allow(s.rate.get(), &s.limit, i64::MAX / 2)),
    );
    // Two threads at one fixed instant on a spent word: the refusal path,
    // which only reads, from two CPUs at once.
    two_threads(
        c,
        path,
        id("refuse", "c_abi_2threads"),
        || {
            let word = spent_word();
            Shared {
                rate: std::cell::UnsafeCell::new(weir_rate {
                    state: word.rate.state,
                }),
                limit: word.limit,
            }
        },
        |s| allow(s.rate.get(), &s.limit, NOW),
        |s| assert!(!allow(s.rate.get(), &s.limit, NOW)),
    );
}

fn bloom_benches(c: &mut Criterion) {
    let allow: extern "C" fn(*const weir_bloom, i64, *const std::ffi::c_void, usize) -> bool =
        black_box(weir_bloom_allow);
    let call = move |b: &Owned<weir_bloom>, key: &[u8; 16]| {
        allow(b.get(), NOW, key.as_ptr().cast(), key.len())
    };
    let path = "weir_bloom_allow";
    keyed(
        c,
        path,
        id("allow", "c_abi_k3_2pow20_1e6keys"),
        |keys| {
            let b = bloom(BLOOM_PER_S, BLOOM_BURST);
            // Touch every key once, as governor's map is filled before its
            // timing, so neither side pays for first touches.
            for key in keys {
                assert!(call(&b, key));
            }
            b
        },
        call,
        move |b| assert!(call(b, &crate::support::keys()[0])),
    );
    keyed(
        c,
        path,
        id("allow", "rust_k3_2pow20_1e6keys"),
        |keys| {
            let limit = RateLimit::new(BLOOM_PER_S, BLOOM_BURST).unwrap();
            let shape =
                BloomShape::new(BLOOM_SIZE_LOG2, BLOOM_HASHES, limit, SEED[0], SEED[1]).unwrap();
            let b = Bloom::new(shape).unwrap();
            for key in keys {
                assert!(b.allow(NOW, key));
            }
            b
        },
        |b, key| b.allow(NOW, key),
        |b| assert!(b.allow(NOW, &crate::support::keys()[0])),
    );
    keyed(
        c,
        path,
        id("refuse", "c_abi_k3_2pow20_1e6keys"),
        |keys| {
            // A burst of one: pass over the keys until no key finds any of
            // its words free.
            let b = bloom(BLOOM_PER_S, 1);
            while keys.iter().filter(|key| call(&b, key)).count() > 0 {}
            b
        },
        call,
        move |b| assert!(!call(b, &crate::support::keys()[0])),
    );
}
