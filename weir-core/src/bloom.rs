//! The bloom array: one-word rate limiters for a key space too large to
//! give each key its own, in a fixed amount of memory and without a lock.
//!
//! There are 2^`size_log2` words and `hashes` (k) indexes per key. A key's
//! k words come from one keyed SipHash-1-3 pass over it, whose 128-bit
//! output (h1, h2) gives the indexes `h1 + i × (h2 | 1)` modulo the word
//! count (double hashing): distinct for every key, since the step is odd
//! and k is at most the word count. A key is allowed when any of its k
//! words allows, and every word that allows is charged, so a key shares a
//! word with another only if they collide on all k to be limited together.
//! Without the caller's 128-bit seed nobody can aim two keys at the same
//! words.
//!
//! Each word is a [`crate::rate`] word, exact on its own at every phase of
//! its 512 ns grid. With k = 1 a key is one word and keeps the word's bound
//! (`burst + floor(T / interval)` in any `T` ns). With k ≥ 2, a key
//! hammered from several threads can be allowed up to k × burst in a
//! window (racing calls can each find a different word still open), and
//! k times the word's bound in any `T` ns.
//!
//! The same structure can be laid into caller memory ([`init_in`],
//! [`open_in`]): a 64-byte header (magic, layout version, shape) then the
//! words, nothing else — no pointer — so processes share one array through
//! shared memory.

use crate::atomic::{AtomicU64, Ordering};
use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::rate::{self, RateLimit, Word};
use crate::siphash::sip13_128;
use crate::time::NEVER;

/// The largest `size_log2`: 2^32 words, 32 GiB.
pub const MAX_SIZE_LOG2: u32 = 32;
/// The most indexes per key.
pub const MAX_HASHES: u32 = 8;
/// The header's length in words (64 bytes).
pub const HEADER_WORDS: usize = 8;
/// The header's first word: "weir:blm" in little-endian bytes.
pub const MAGIC: u64 = u64::from_le_bytes(*b"weir:blm");
/// The layout version the header's second word holds.
pub const VERSION: u64 = 1;

/// Why a bloom array could not be made or opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BloomError {
    /// `size_log2` is above [`MAX_SIZE_LOG2`] or the words do not fit the
    /// address space.
    Size,
    /// `hashes` is 0, above [`MAX_HASHES`], or above the word count.
    Hashes,
    /// The words could not be allocated.
    NoMemory,
    /// The region is shorter than its header or than the header's shape.
    TooSmall,
    /// The region holds no valid header.
    Foreign,
    /// The header is weir's but of another layout version.
    Version,
}

/// How a bloom array is laid out and keyed: everything but its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    size_log2: u32,
    hashes: u32,
    limit: RateLimit,
    seed: [u64; 2],
}

/// The number of words for `size_log2`, if it is allowed and fits: the
/// whole region, header included, must fit `isize::MAX` bytes, the most any
/// Rust object or slice spans. Every allowed size fits on 64-bit hosts; on
/// 32-bit ones the largest is 2^27 words (1 GiB).
fn word_count(size_log2: u32) -> Option<usize> {
    if size_log2 > MAX_SIZE_LOG2 {
        return None;
    }
    let words = 1usize.checked_shl(size_log2)?;
    let bytes = words.checked_add(HEADER_WORDS)?.checked_mul(8)?;
    (bytes <= isize::MAX as usize).then_some(words)
}

/// The words a region for `size_log2` needs, header included, if allowed.
pub fn footprint_words(size_log2: u32) -> Option<usize> {
    word_count(size_log2)?.checked_add(HEADER_WORDS)
}

impl Shape {
    /// A shape of 2^`size_log2` words, `hashes` indexes per key, each word
    /// limited by `limit`, keyed by (`seed0`, `seed1`).
    pub fn new(
        size_log2: u32,
        hashes: u32,
        limit: RateLimit,
        seed0: u64,
        seed1: u64,
    ) -> Result<Shape, BloomError> {
        let words = footprint_words(size_log2).ok_or(BloomError::Size)? - HEADER_WORDS;
        if hashes == 0 || hashes > MAX_HASHES || hashes as usize > words {
            return Err(BloomError::Hashes);
        }
        Ok(Shape {
            size_log2,
            hashes,
            limit,
            seed: [seed0, seed1],
        })
    }

    /// How many words the array has.
    pub fn words(&self) -> usize {
        1 << self.size_log2
    }

    /// The limit every word applies.
    pub fn limit(&self) -> &RateLimit {
        &self.limit
    }

    /// The first index and the step of `key`'s indexes.
    #[inline]
    fn probe(&self, key: &[u8]) -> (u64, u64) {
        let (h1, h2) = sip13_128(self.seed[0], self.seed[1], key);
        (h1, h2 | 1)
    }

    #[inline]
    fn slot(&self, first: u64, step: u64, i: u64) -> usize {
        let mask = (1u64 << self.size_log2) - 1;
        (first.wrapping_add(i.wrapping_mul(step)) & mask) as usize
    }

    /// The indexes of `key`'s words, in the order they are asked.
    pub fn slots(&self, key: &[u8]) -> impl Iterator<Item = usize> + '_ {
        let (first, step) = self.probe(key);
        (0..u64::from(self.hashes)).map(move |i| self.slot(first, step, i))
    }

    /// Whether `key` may have one event at `now` under `words` (of length
    /// [`Shape::words`]): true when any of its words allows, and each word
    /// that allows is charged. A negative `now` is refused; a refusal
    /// writes nothing.
    #[inline]
    pub fn allow<W: Word>(&self, words: &[W], now: i64, key: &[u8]) -> bool {
        if now < 0 {
            return false;
        }
        let (first, step) = self.probe(key);
        let k = self.hashes as usize;
        // Read every word first so that their cache misses overlap, then
        // settle each from what was read.
        let mut seen = [0u64; MAX_HASHES as usize];
        for (i, value) in seen.iter_mut().enumerate().take(k) {
            *value = words[self.slot(first, step, i as u64)].get();
        }
        let mut allowed = false;
        for (i, value) in seen.iter().enumerate().take(k) {
            let word = &words[self.slot(first, step, i as u64)];
            allowed |= rate::allow_seen(word, *value, &self.limit, now as u64);
        }
        allowed
    }

    /// Nanoseconds from `now` until `key` would be allowed: the soonest any
    /// of its words frees up (0 if one is free now), [`NEVER`] for a
    /// negative `now`. Reads the words only.
    #[inline]
    pub fn next<W: Word>(&self, words: &[W], now: i64, key: &[u8]) -> i64 {
        self.slots(key)
            .map(|slot| rate::next(&words[slot], &self.limit, now))
            .min()
            .unwrap_or(NEVER)
    }
}

/// A bloom array on the heap.
#[derive(Debug)]
pub struct Bloom {
    shape: Shape,
    words: Box<[AtomicU64]>,
}

impl Bloom {
    /// An array of `shape` whose words are all fresh (zero).
    pub fn new(shape: Shape) -> Result<Bloom, BloomError> {
        let n = shape.words();
        let mut words = Vec::new();
        words
            .try_reserve_exact(n)
            .map_err(|_| BloomError::NoMemory)?;
        words.extend((0..n).map(|_| AtomicU64::new(0)));
        Ok(Bloom {
            shape,
            words: words.into_boxed_slice(),
        })
    }

    /// The array's shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// See [`Shape::allow`].
    #[inline]
    pub fn allow(&self, now: i64, key: &[u8]) -> bool {
        self.shape.allow(&self.words, now, key)
    }

    /// See [`Shape::next`].
    #[inline]
    pub fn next(&self, now: i64, key: &[u8]) -> i64 {
        self.shape.next(&self.words, now, key)
    }
}

/// Lays an array of `shape` into `region`: the header, then zeroed words.
/// The region must hold [`footprint_words`] words; anything past them is
/// left alone. The magic is written last, so a reader never takes a
/// half-written header for a valid one; but the region must not be in use
/// while it is laid.
pub fn init_in(region: &[AtomicU64], shape: &Shape) -> Result<(), BloomError> {
    let needed = HEADER_WORDS + shape.words();
    if region.len() < needed {
        return Err(BloomError::TooSmall);
    }
    region[0].store(0, Ordering::Relaxed);
    for word in &region[HEADER_WORDS..needed] {
        word.store(0, Ordering::Relaxed);
    }
    let (interval_ns, interval_frac, burst) = shape.limit.parts();
    let fields = [
        VERSION,
        u64::from(shape.size_log2) | u64::from(shape.hashes) << 32,
        interval_ns,
        u64::from(interval_frac) | u64::from(burst) << 32,
        shape.seed[0],
        shape.seed[1],
        0,
    ];
    for (word, value) in region[1..HEADER_WORDS].iter().zip(fields) {
        word.store(value, Ordering::Relaxed);
    }
    region[0].store(MAGIC, Ordering::Release);
    Ok(())
}

/// The shape in `region`'s header and the words after it.
pub fn open_in(region: &[AtomicU64]) -> Result<(Shape, &[AtomicU64]), BloomError> {
    if region.len() < HEADER_WORDS {
        return Err(BloomError::TooSmall);
    }
    if region[0].load(Ordering::Acquire) != MAGIC {
        return Err(BloomError::Foreign);
    }
    let field = |i: usize| region[i].load(Ordering::Relaxed);
    if field(1) != VERSION {
        return Err(BloomError::Version);
    }
    if field(7) != 0 {
        return Err(BloomError::Foreign);
    }
    let (sizes, limit) = (field(2), field(4));
    let limit = RateLimit::from_parts(field(3), limit as u32, (limit >> 32) as u32)
        .map_err(|_| BloomError::Foreign)?;
    let shape = Shape::new(
        sizes as u32,
        (sizes >> 32) as u32,
        limit,
        field(5),
        field(6),
    )
    .map_err(|_| BloomError::Foreign)?;
    let words = region
        .get(HEADER_WORDS..HEADER_WORDS + shape.words())
        .ok_or(BloomError::TooSmall)?;
    Ok((shape, words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;

    fn limit(per_s: f64, burst: i64) -> RateLimit {
        RateLimit::new(per_s, burst).unwrap()
    }

    fn shape(size_log2: u32, hashes: u32, burst: i64, seed: u64) -> Shape {
        Shape::new(size_log2, hashes, limit(1.0, burst), seed, !seed).unwrap()
    }

    #[test]
    fn a_key_gets_its_burst_then_waits_for_its_window() {
        let bloom = Bloom::new(shape(10, 3, 2, 7)).unwrap();
        assert!(bloom.allow(0, b"alice"));
        assert!(bloom.allow(1, b"alice"));
        assert!(!bloom.allow(2, b"alice"));
        assert_eq!(bloom.next(2, b"alice"), 2 * SECOND - 2);
        assert!(bloom.allow(2 * SECOND, b"alice"));
    }

    #[test]
    fn a_key_alone_gets_exactly_its_burst_at_511_ns() {
        // Issue 11: with one hash a key is one rate word, and a word whose
        // window opened at 511 ns used to admit every call.
        let shape = Shape::new(4, 1, limit(19e6, 1023), 5, 6).unwrap();
        let bloom = Bloom::new(shape).unwrap();
        let admitted = (0..100_000).filter(|_| bloom.allow(511, b"key")).count();
        assert_eq!(admitted, 1023);
    }

    #[test]
    fn two_keys_are_independent() {
        let bloom = Bloom::new(shape(16, 3, 1, 1)).unwrap();
        let alice: Vec<usize> = bloom.shape().slots(b"alice").collect();
        let bob: Vec<usize> = bloom.shape().slots(b"bob").collect();
        assert!(alice.iter().all(|slot| !bob.contains(slot)));
        assert!(bloom.allow(0, b"alice"));
        assert!(!bloom.allow(0, b"alice"));
        assert!(bloom.allow(0, b"bob"));
        assert_eq!(bloom.next(0, b"bob"), SECOND);
    }

    #[test]
    fn indexes_are_distinct_and_the_seed_moves_them() {
        let a = shape(20, 8, 1, 1);
        let b = shape(20, 8, 1, 2);
        for key in [&b""[..], b"k", b"198.51.100.7", &[0u8; 16]] {
            let mut slots: Vec<usize> = a.slots(key).collect();
            let other: Vec<usize> = b.slots(key).collect();
            assert_ne!(slots, other);
            slots.sort_unstable();
            slots.dedup();
            assert_eq!(slots.len(), 8, "indexes repeat");
        }
        // Every word of a one-hash array of two words is reachable, and a
        // two-hash one asks both.
        let tiny = shape(1, 2, 1, 3);
        let mut slots: Vec<usize> = tiny.slots(b"x").collect();
        slots.sort_unstable();
        assert_eq!(slots, [0, 1]);
    }

    #[test]
    fn a_key_spent_under_one_seed_is_fresh_under_another() {
        let a = shape(16, 2, 1, 11);
        let b = shape(16, 2, 1, 12);
        let words: Vec<AtomicU64> = (0..a.words()).map(|_| AtomicU64::new(0)).collect();
        assert!(a.allow(&words, 0, b"key"));
        assert!(!a.allow(&words, 0, b"key"));
        assert!(b.allow(&words, 0, b"key"));
    }

    #[test]
    fn a_key_is_allowed_while_any_of_its_words_allows() {
        let s = shape(8, 2, 1, 5);
        let words: Vec<AtomicU64> = (0..s.words()).map(|_| AtomicU64::new(0)).collect();
        let slots: Vec<usize> = s.slots(b"key").collect();
        // Another key filled the first word.
        words[slots[0]].store(1, Ordering::Relaxed);
        assert!(s.allow(&words, 0, b"key"));
        assert!(!s.allow(&words, 0, b"key"));
    }

    #[test]
    fn the_empty_key_is_a_key() {
        let bloom = Bloom::new(shape(10, 2, 1, 9)).unwrap();
        assert!(bloom.allow(0, b""));
        assert!(!bloom.allow(0, b""));
        assert!(bloom.allow(0, b"\0"));
    }

    #[test]
    fn negative_now_is_refused_and_writes_nothing() {
        let bloom = Bloom::new(shape(4, 2, 1, 9)).unwrap();
        assert!(!bloom.allow(-1, b"k"));
        assert_eq!(bloom.next(-1, b"k"), NEVER);
        assert!(bloom.allow(0, b"k"));
    }

    #[test]
    fn shapes_are_checked() {
        let l = limit(1.0, 1);
        assert_eq!(Shape::new(33, 1, l, 0, 0), Err(BloomError::Size));
        assert_eq!(Shape::new(u32::MAX, 1, l, 0, 0), Err(BloomError::Size));
        assert_eq!(Shape::new(10, 0, l, 0, 0), Err(BloomError::Hashes));
        assert_eq!(Shape::new(10, 9, l, 0, 0), Err(BloomError::Hashes));
        assert_eq!(Shape::new(1, 3, l, 0, 0), Err(BloomError::Hashes));
        assert!(Shape::new(0, 1, l, 0, 0).is_ok());
        // The largest size this host can address: 2^32 words on 64-bit
        // hosts, 2^27 (1 GiB) on 32-bit ones.
        let largest = if usize::BITS == 64 { MAX_SIZE_LOG2 } else { 27 };
        assert!(Shape::new(largest, MAX_HASHES, l, 0, 0).is_ok());
        assert_eq!(Shape::new(largest + 1, 1, l, 0, 0), Err(BloomError::Size));
        assert_eq!(footprint_words(0), Some(9));
        assert_eq!(footprint_words(33), None);
        assert_eq!(footprint_words(largest + 1), None);
    }

    /// The false-refusal check: k = 3, 2^20 words, 50,000 keys,
    /// each making burst + 1 calls in interleaved rounds inside one window.
    #[test]
    fn few_keys_are_refused_before_their_burst() {
        const KEYS: u32 = 50_000;
        const BURST: u32 = 4;
        let bloom = Bloom::new(shape(20, 3, i64::from(BURST), 0x5eed)).unwrap();
        let mut allowed = alloc::vec![0u32; KEYS as usize];
        let mut now = 0;
        for _round in 0..=BURST {
            for key in 0..KEYS {
                now += 1;
                if bloom.allow(now, &key.to_le_bytes()) {
                    allowed[key as usize] += 1;
                }
            }
        }
        assert!(
            allowed.iter().all(|&n| n <= BURST),
            "a key passed its burst"
        );
        let early = allowed.iter().filter(|&&n| n < BURST).count();
        let fraction = early as f64 / f64::from(KEYS);
        assert!(
            fraction < 0.01,
            "refused before their burst: {early} of {KEYS} ({:.3} %)",
            fraction * 100.0
        );
    }

    fn region(words: usize) -> Vec<AtomicU64> {
        (0..words).map(|_| AtomicU64::new(u64::MAX)).collect()
    }

    #[test]
    fn in_place_round_trips_and_behaves_as_the_heap_array() {
        let s = shape(6, 3, 2, 42);
        let mem = region(footprint_words(6).unwrap() + 3);
        init_in(&mem, &s).unwrap();
        assert_eq!(
            mem[footprint_words(6).unwrap()].load(Ordering::Relaxed),
            u64::MAX
        );
        let (opened, words) = open_in(&mem).unwrap();
        assert_eq!(opened, s);
        assert_eq!(words.len(), 64);
        let heap = Bloom::new(s).unwrap();
        for (i, key) in [&b"a"[..], b"b", b"a", b"a", b"c"].iter().enumerate() {
            assert_eq!(
                opened.allow(words, i as i64, key),
                heap.allow(i as i64, key)
            );
            assert_eq!(opened.next(words, i as i64, key), heap.next(i as i64, key));
        }
    }

    #[test]
    fn bad_regions_are_named() {
        let s = shape(4, 2, 1, 1);
        let small = region(footprint_words(4).unwrap() - 1);
        assert_eq!(init_in(&small, &s), Err(BloomError::TooSmall));
        assert_eq!(
            open_in(&small[..HEADER_WORDS - 1]).map(|_| ()),
            Err(BloomError::TooSmall)
        );
        let zeros: Vec<AtomicU64> = (0..64).map(|_| AtomicU64::new(0)).collect();
        assert_eq!(open_in(&zeros).map(|_| ()), Err(BloomError::Foreign));

        let mem = region(footprint_words(4).unwrap());
        init_in(&mem, &s).unwrap();
        // The header names more words than the region has.
        assert_eq!(
            open_in(&mem[..mem.len() - 1]).map(|_| ()),
            Err(BloomError::TooSmall)
        );
        let tamper = |i: usize, value: u64, expected: BloomError| {
            let old = mem[i].swap(value, Ordering::Relaxed);
            assert_eq!(open_in(&mem).map(|_| ()), Err(expected), "word {i}");
            mem[i].store(old, Ordering::Relaxed);
        };
        tamper(0, MAGIC ^ 1, BloomError::Foreign);
        tamper(1, VERSION + 1, BloomError::Version);
        tamper(2, 40, BloomError::Foreign); // size_log2 40
        tamper(2, 4 | 9 << 32, BloomError::Foreign); // 9 hashes
        tamper(3, 0, BloomError::Foreign); // interval 0
        tamper(4, 1, BloomError::Foreign); // burst 0
        tamper(7, 1, BloomError::Foreign);
        assert!(open_in(&mem).is_ok());
    }
}
