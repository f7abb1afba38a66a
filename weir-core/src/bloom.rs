//! The bloom array: one-word limiters for a key space too large to give
//! each key its own, in a fixed amount of memory and without a lock.
//!
//! # Layout (blocked)
//!
//! There are 2^`size_log2` words (at least [`LINE_WORDS`]), grouped in
//! 64-byte lines of [`LINE_WORDS`] words, and `hashes` (k) words per key,
//! all in one line: a decision touches one cache line, however large the
//! array. A key is hashed once with keyed SipHash-1-3 ([`crate::sip`],
//! 64-bit output `h`): the low bits of `h` give the line (`h`
//! modulo the line count, at most 2^29 lines), its high bits which k
//! distinct words of it (`h × C(8, k) / 2^64` picks one of the C(8, k)
//! subsets of the line, uniformly). A key is allowed when any of its
//! k words allows, and every word that allows is charged, so a key shares a
//! word with another only if they collide on all k to be limited together.
//! Without the caller's 128-bit seed nobody can aim two keys at the same
//! words.
//!
//! # Word kinds
//!
//! Each word is either a [`crate::rate`] word (the window kind: a burst,
//! then nothing until the window expires) or a [`crate::gcra`] GCRA word
//! (the gcra kind: a token bucket), chosen when the array is made
//! ([`BloomLimit`]). With k = 1 a key is one word and keeps the word's
//! bound (`burst + floor(T / interval)` in any `T` ns for the window kind,
//! `burst + floor(T × rate / 10^9)` for the gcra kind). With k ≥ 2, a key
//! hammered from several threads can be allowed up to k × burst at once
//! (racing calls can each find a different word still open), and k times
//! the word's bound in any `T` ns.
//!
//! # False refusals
//!
//! A key is refused early only when every one of its k words is spent by
//! other keys. For a stated traffic, N keys active in one window, each
//! asking a fraction `f` (0 < f ≤ 1) of its burst in interleaved turns, a
//! word overflows when at least `m = floor(1 / f)` other keys share it
//! (then m + 1 keys ask more than one burst of it). A key's line holds a
//! Poisson number `j` (mean λ = N / L, L = M / 8 lines of M words) of
//! other keys, each on a uniform k-subset of the line's 8 words. The
//! fraction of keys refused before they have asked their share is at most
//! about
//!
//! ```text
//! F(N, M, k, f) = Σ_j e^-λ λ^j / j! × P_j
//! P_j = P[j uniform k-subsets of 8 words cover each of the key's k words ≥ m times]
//!     = Σ_{i=0..k} (−1)^i C(k, i) (C(8 − i, k) / C(8, k))^j      when m = 1 (f > 1/2)
//! ```
//!
//! (for m ≥ 2, P_j is a small dynamic program over the words' cover
//! counts: `weir-core/tests/bloom.rs`, which measures both kinds against
//! F). At f = 1 nearly every key at risk is refused and F is the blocked
//! Bloom filter's false-positive rate; below it a key at risk is refused
//! only if it asks after its words fill, so fewer are. Examples, k = 3:
//! 50,000 keys in 2^20 words asking their whole burst, F = 1.6 %; 10^6
//! keys in 2^24 words (128 MiB) asking half their burst, F = 0.03 %, and
//! 2.3 % asking all of it.
//!
//! # Reconfiguration
//!
//! An array's limit can change in place ([`Bloom::reconfigure`]): one
//! publication that every decision sees whole, old or new, over the same
//! words, each keeping what it holds (a window its start and count, a GCRA
//! word its arrival time). Its kind, size, hashes and seed never change.
//! The method says what a word's state means under the new limit and the
//! bound across the change.
//!
//! # In caller memory
//!
//! The same structure can be laid into caller memory ([`init_in`],
//! [`open_in`]): one 64-byte header line, then the words' lines, nothing
//! else — no pointer — so processes share one array through shared memory.
//! The header (version [`VERSION`], little-endian words):
//!
//! ```text
//! word 0  MAGIC "weir:blm"
//! word 1  VERSION (2)
//! word 2  kind (bits 0..32: 1 window, 2 gcra) | line bytes (bits 32..64: 64)
//! word 3  size_log2 (bits 0..8) | hashes (8..16) | gcra shift (16..24); 0 above
//! word 4  window: interval_ns              gcra: per_token
//! word 5  window: interval_frac | burst<<32 gcra: tolerance
//! word 6  seed0
//! word 7  seed1
//! ```
//!
//! Version 1 (weir 0.1's layout: k words scattered over the array, window
//! words only) is refused with [`BloomError::Version`], as is any version
//! but 2: a region is never read under another layout.

use crate::atomic::{AtomicU64, Ordering};
#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::gcra::{self, GcraLimit};
use crate::limit_cell::{self, LimitCell, Refused};
use crate::rate::{self, RateLimit, Word};
use crate::sip::SipKey;
use crate::time::NEVER;

/// The largest `size_log2`: 2^32 words, 32 GiB.
pub const MAX_SIZE_LOG2: u32 = 32;
/// The smallest `size_log2`: one line.
pub const MIN_SIZE_LOG2: u32 = 3;
/// The most indexes per key: a whole line.
pub const MAX_HASHES: u32 = LINE_WORDS as u32;
/// The words in a line (and in the header).
pub const LINE_WORDS: usize = 8;
/// A line's bytes: a cache line on every host weir targets.
pub const LINE_BYTES: usize = LINE_WORDS * 8;
/// The header's length in words (one line).
pub const HEADER_WORDS: usize = LINE_WORDS;
/// The header's first word: "weir:blm" in little-endian bytes.
pub const MAGIC: u64 = u64::from_le_bytes(*b"weir:blm");
/// The layout version the header's second word holds.
pub const VERSION: u64 = 2;

/// One 64-byte line of words, aligned to 64 bytes so that it is one cache
/// line.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct BloomLine<W = AtomicU64>(pub [W; LINE_WORDS]);

impl BloomLine {
    /// A line of fresh (zero) words. A `const fn`, so that a program with
    /// no allocator can hold a bloom's lines in a `static` (`[const {
    /// BloomLine::fresh() }; N]`, Rust 1.79 and later) or build them with
    /// `core::array::from_fn`.
    pub const fn fresh() -> BloomLine {
        BloomLine([
            AtomicU64::new(0),
            AtomicU64::new(0),
            AtomicU64::new(0),
            AtomicU64::new(0),
            AtomicU64::new(0),
            AtomicU64::new(0),
            AtomicU64::new(0),
            AtomicU64::new(0),
        ])
    }
}

/// Why a bloom array could not be made or opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BloomError {
    /// `size_log2` is above [`MAX_SIZE_LOG2`] or the words do not fit the
    /// address space.
    Size,
    /// `size_log2` is below [`MIN_SIZE_LOG2`]: fewer words than a line.
    TooFewWords,
    /// `hashes` is 0 or above [`MAX_HASHES`].
    Hashes,
    /// The words could not be allocated.
    NoMemory,
    /// The region is shorter than its header or than the header's shape.
    TooSmall,
    /// The region holds no valid header.
    Foreign,
    /// The header is weir's but of another layout version.
    Version,
    /// The header names a word kind this version does not know.
    Kind,
    /// The header names a line size other than [`LINE_BYTES`].
    LineSize,
    /// A new limit of the other word kind ([`Bloom::reconfigure`]): a rate
    /// word's bits read as a GCRA word's (or the reverse) mean nothing.
    KindChange,
    /// A new GCRA limit on another tick than the array's
    /// ([`Bloom::reconfigure`]): an arrival time stored in ticks of
    /// 2^-shift ns would be misread by 2^(shift' − shift). Every rate up to
    /// 7,812,500 a second is on tick 0, so two such limits always agree.
    TickChange,
    /// [`Bloom::reconfigure`] on an array attached to a region
    /// ([`Bloom::attach`]): its limit is the region header's, read by every
    /// process that maps it, and is not changed for one of them.
    Region,
}

impl BloomError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            BloomError::Size => 410,
            BloomError::Hashes => 411,
            BloomError::NoMemory => 6,
            BloomError::TooSmall => 412,
            BloomError::Foreign => 414,
            BloomError::Version => 415,
            BloomError::TooFewWords => 416,
            BloomError::Kind => 417,
            BloomError::LineSize => 418,
            BloomError::KindChange => 419,
            BloomError::TickChange => 420,
            BloomError::Region => 68,
        }
    }
}

/// What limits each word: its kind and its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BloomLimit {
    /// Rate words ([`crate::rate`]): fixed windows.
    Window(RateLimit),
    /// GCRA words ([`crate::gcra`]): token buckets.
    Gcra(GcraLimit),
}

impl From<RateLimit> for BloomLimit {
    fn from(limit: RateLimit) -> Self {
        BloomLimit::Window(limit)
    }
}

impl From<GcraLimit> for BloomLimit {
    fn from(limit: GcraLimit) -> Self {
        BloomLimit::Gcra(limit)
    }
}

/// The header's word-kind values.
const KIND_WINDOW: u64 = 1;
const KIND_GCRA: u64 = 2;

/// Every non-empty subset of a line's 8 words as a bit mask, by size, then
/// by value: the C(8, k) masks of k bits start at `SUBSET_START[k]`. A
/// shape keeps the 256 entries from there ([`BloomShape::subsets`]), so that
/// its probe indexes them by a `u8` with no bounds check; the entries past
/// the 255 subsets are never picked, and they are whole lines, so that no
/// entry is empty and the probe's loops need no test before their first
/// word.
static SUBSETS: [u8; 512] = {
    let mut out = [0xffu8; 512];
    let mut n = 0;
    let mut k = 1;
    while k <= 8 {
        let mut mask = 1u32;
        while mask < 256 {
            if mask.count_ones() == k {
                out[n] = mask as u8;
                n += 1;
            }
            mask += 1;
        }
        k += 1;
    }
    out
};

/// C(8, k) for k in 0..=8.
const SUBSET_COUNT: [u16; 9] = [1, 8, 28, 56, 70, 56, 28, 8, 1];

/// Where the masks of k bits start in [`SUBSETS`].
const SUBSET_START: [u8; 9] = [0, 0, 8, 36, 92, 162, 218, 246, 254];

/// How a bloom array is laid out and keyed: everything but its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BloomShape {
    /// At most [`MAX_SIZE_LOG2`] and [`MAX_HASHES`]: a byte each.
    size_log2: u8,
    hashes: u8,
    limit: BloomLimit,
    /// SipHash's state under the secret key, made once (the key is read back
    /// from it: [`SipKey::key`]).
    sip: SipKey,
    /// `lines() − 1` (under 2^29), `C(8, hashes)` and [`SUBSETS`] from
    /// `SUBSET_START[hashes]`: the probe's constants, made once.
    line_mask: u32,
    subset_count: u8,
    subsets: &'static [u8; 256],
    /// The window kind's [`RateLimit::open_interval`] (0 for the gcra
    /// kind), made once.
    open_interval: u64,
}

/// The number of lines for `size_log2`, if it is allowed and fits: the
/// whole region, header included, must fit `isize::MAX` bytes, the most any
/// Rust object or slice spans. Every allowed size fits on 64-bit hosts; on
/// 32-bit ones the largest is 2^27 words (1 GiB).
fn line_count(size_log2: u32) -> Result<usize, BloomError> {
    if size_log2 > MAX_SIZE_LOG2 {
        return Err(BloomError::Size);
    }
    if size_log2 < MIN_SIZE_LOG2 {
        return Err(BloomError::TooFewWords);
    }
    let lines = 1usize
        .checked_shl(size_log2 - MIN_SIZE_LOG2)
        .ok_or(BloomError::Size)?;
    let bytes = lines
        .checked_add(1)
        .and_then(|n| n.checked_mul(LINE_BYTES))
        .ok_or(BloomError::Size)?;
    if bytes > isize::MAX as usize {
        return Err(BloomError::Size);
    }
    Ok(lines)
}

/// The words a region for `size_log2` needs, header included, if allowed.
pub fn footprint_words(size_log2: u32) -> Option<usize> {
    Some((line_count(size_log2).ok()? + 1) * LINE_WORDS)
}

impl BloomShape {
    /// A shape of 2^`size_log2` words, `hashes` indexes per key, each word
    /// limited by `limit` (a [`RateLimit`] for the window kind, a
    /// [`GcraLimit`] for the gcra kind), keyed by (`seed0`, `seed1`).
    pub fn new(
        size_log2: u32,
        hashes: u32,
        limit: impl Into<BloomLimit>,
        seed0: u64,
        seed1: u64,
    ) -> Result<BloomShape, BloomError> {
        let lines = line_count(size_log2)?;
        if hashes == 0 || hashes > MAX_HASHES {
            return Err(BloomError::Hashes);
        }
        let limit = limit.into();
        let open_interval = match &limit {
            BloomLimit::Window(limit) => limit.open_interval(),
            BloomLimit::Gcra(_) => 0,
        };
        Ok(BloomShape {
            size_log2: size_log2 as u8,
            hashes: hashes as u8,
            limit,
            open_interval,
            sip: SipKey::new(seed0, seed1),
            line_mask: (lines - 1) as u32,
            subset_count: SUBSET_COUNT[hashes as usize] as u8,
            subsets: SUBSETS[usize::from(SUBSET_START[hashes as usize])..][..256]
                .try_into()
                .expect("256 entries from any start"),
        })
    }

    /// How many words the array has.
    pub fn words(&self) -> usize {
        1 << self.size_log2
    }

    /// How many lines the array has.
    pub fn lines(&self) -> usize {
        1 << (u32::from(self.size_log2) - MIN_SIZE_LOG2)
    }

    /// The limit every word applies, and so the words' kind.
    pub fn limit(&self) -> &BloomLimit {
        &self.limit
    }

    /// This shape with `limit` in place of its own: the same words, keys
    /// and SipHash key, judged from now on by another rate and burst (a
    /// reload that changes them). A word keeps what it decided and is
    /// read under the new limit: a window keeps its start and its count,
    /// which count against the new burst, and ends `count × I'` after its
    /// start; a TAT keeps its instant, so a key's debt (TAT − now) carries
    /// over as time.
    /// `None` when `limit` is of the other word kind, or a GCRA limit of
    /// another tick (another `shift`): such words would be misread (a TAT
    /// read at another tick stands 2^(shift' − shift) times as far out),
    /// so they need fresh words instead.
    pub fn with_limit(&self, limit: impl Into<BloomLimit>) -> Option<BloomShape> {
        self.try_with_limit(limit).ok()
    }

    /// [`BloomShape::with_limit`], naming why a limit is refused:
    /// [`BloomError::KindChange`] for the other word kind,
    /// [`BloomError::TickChange`] for a GCRA limit of another tick.
    pub fn try_with_limit(&self, limit: impl Into<BloomLimit>) -> Result<BloomShape, BloomError> {
        match limit_cell::check(&self.limit, limit.into()) {
            Ok(limit) => Ok(self.judged_by(limit)),
            Err(Refused::Kind) => Err(BloomError::KindChange),
            Err(Refused::Tick) => Err(BloomError::TickChange),
        }
    }

    /// This shape with `limit` (checked: of its kind and tick) in place of
    /// its own.
    fn judged_by(&self, limit: BloomLimit) -> BloomShape {
        let open_interval = match &limit {
            BloomLimit::Window(limit) => limit.open_interval(),
            BloomLimit::Gcra(_) => 0,
        };
        BloomShape {
            limit,
            open_interval,
            ..*self
        }
    }

    /// `key`'s line and its words in that line, as a bit mask of k bits
    /// (bits 0..8).
    #[inline(always)]
    fn probe(&self, key: &[u8]) -> (usize, u32) {
        let hash = self.sip.hash(key);
        // The low bits (at most 29) pick the line; the high ones the subset.
        let line = (hash & u64::from(self.line_mask)) as usize;
        // hash × C(8, k) / 2^64: a uniform pick of one of the C(8, k)
        // subsets.
        let pick = ((u128::from(hash) * u128::from(self.subset_count)) >> 64) as u8;
        let mask = self.subsets[usize::from(pick)];
        (line, u32::from(mask))
    }

    /// The indexes of `key`'s words in the whole array (line × 8 + word),
    /// lowest first.
    pub fn slots(&self, key: &[u8]) -> impl Iterator<Item = usize> {
        let (line, mask) = self.probe(key);
        (0..LINE_WORDS)
            .filter(move |i| mask & (1 << i) != 0)
            .map(move |i| line * LINE_WORDS + i)
    }

    /// Whether `key` may have one event at `now` under `lines` (of length
    /// [`BloomShape::lines`]): true when any of its words allows, and each word
    /// that allows is charged. A negative `now` is refused; a refusal
    /// writes nothing.
    #[inline(always)]
    pub fn allow<W: Word>(&self, lines: &[BloomLine<W>], now: i64, key: &[u8]) -> bool {
        if now < 0 {
            return false;
        }
        let (line, mask) = self.probe(key);
        let line = &lines[line].0;
        match &self.limit {
            BloomLimit::Window(limit) => self.charge_open_words(line, mask, limit, now),
            BloomLimit::Gcra(limit) => any_of(line, mask, |word| gcra::allow(word, limit, now)),
        }
    }

    /// [`any_of`] for the window kind at `now` (not negative), with every
    /// word of `mask` open: each charged by [`rate::charge_open`], with no
    /// call. At the first word that is not (expired, full, or a lost race),
    /// [`BloomShape::charge_rest`] asks it and the rest in full, out of line.
    #[inline(always)]
    fn charge_open_words<W: Word>(
        &self,
        line: &[W; LINE_WORDS],
        mask: u32,
        limit: &RateLimit,
        now: i64,
    ) -> bool {
        let mut left = mask;
        while left != 0 {
            // `now` as it is, not yet held to MAX_NOW: a later one only
            // finds fewer words open, and those it finds are open at
            // MAX_NOW too.
            let word = &line[left.trailing_zeros() as usize % LINE_WORDS];
            if !rate::charge_open(word, limit, self.open_interval, now as u64) {
                return self.charge_rest(line, left, now);
            }
            left &= left - 1;
        }
        true
    }

    /// The words of `left` asked one by one in full ([`rate::allow_at`]),
    /// after the key's other words (charged: they allowed).
    #[cold]
    #[inline(never)]
    fn charge_rest<W: Word>(&self, line: &[W; LINE_WORDS], left: u32, now: i64) -> bool {
        let (BloomLimit::Window(limit), Some(at)) = (&self.limit, rate::At::new(now)) else {
            return false;
        };
        let allowed = left.count_ones() < u32::from(self.hashes);
        let rest = if limit.is_short() {
            any_of(line, left, |word| {
                rate::allow_at::<W, true>(word, limit, at)
            })
        } else {
            any_of(line, left, |word| {
                rate::allow_at::<W, false>(word, limit, at)
            })
        };
        rest || allowed
    }

    /// Nanoseconds from `now` until `key` would be allowed: the soonest any
    /// of its words frees up (0 if one is free now), [`NEVER`] for a
    /// negative `now`. Reads the words only.
    #[inline]
    pub fn next<W: Word>(&self, lines: &[BloomLine<W>], now: i64, key: &[u8]) -> i64 {
        self.next_n(lines, now, key, 1)
    }

    /// Nanoseconds from `now` until `key` would be allowed `n` events at
    /// once ([`BloomShape::take`]): the soonest any of its words would take
    /// them (0 if one would now), [`NEVER`] for a negative `now` or an `n`
    /// outside 1..=burst. Reads the words only.
    #[inline]
    pub(crate) fn next_n<W: Word>(
        &self,
        lines: &[BloomLine<W>],
        now: i64,
        key: &[u8],
        n: i64,
    ) -> i64 {
        if now < 0 {
            return NEVER;
        }
        let (line, mask) = self.probe(key);
        let line = &lines[line].0;
        let mut soonest = NEVER;
        for (i, word) in line.iter().enumerate() {
            if mask & (1 << i) != 0 {
                let wait = match &self.limit {
                    BloomLimit::Window(limit) => rate::next_n(word, limit, now, n),
                    BloomLimit::Gcra(limit) => gcra::next_n(word, limit, now, n),
                };
                soonest = soonest.min(wait);
            }
        }
        soonest
    }

    /// `n` events (1..=burst) for `key` at `now`, as [`BloomShape::allow`]
    /// charges one: allowed when any of its words takes all `n`, and every
    /// word that takes them is charged. What each charged word held before
    /// and after, for [`crate::charge`] to give back exactly with
    /// [`BloomTaken::restore`]; `None`, writing nothing, when no word takes
    /// them, for a negative `now` and an `n` outside 1..=burst.
    pub(crate) fn take<'a, W: Word>(
        &self,
        lines: &'a [BloomLine<W>],
        now: i64,
        key: &[u8],
        n: i64,
    ) -> Option<BloomTaken<'a, W>> {
        if now < 0 {
            return None;
        }
        let (line, mask) = self.probe(key);
        let mut taken = BloomTaken {
            line: &lines[line].0,
            charged: 0,
            before: [0; LINE_WORDS],
            after: [0; LINE_WORDS],
        };
        for i in 0..LINE_WORDS {
            if mask & (1 << i) == 0 {
                continue;
            }
            let word = &taken.line[i];
            let charged = match &self.limit {
                BloomLimit::Window(limit) => rate::take_n(word, limit, now, n),
                BloomLimit::Gcra(limit) => gcra::take_n(word, limit, now, n),
            };
            if let Some((before, after)) = charged {
                taken.charged |= 1 << i;
                taken.before[i] = before;
                taken.after[i] = after;
            }
        }
        (taken.charged != 0).then_some(taken)
    }
}

/// The words a [`BloomShape::take`] charged, and what each held before
/// and after its charge.
#[derive(Debug)]
pub(crate) struct BloomTaken<'a, W> {
    line: &'a [W; LINE_WORDS],
    /// A bit per charged word of the line.
    charged: u8,
    before: [u64; LINE_WORDS],
    after: [u64; LINE_WORDS],
}

impl<W: Word> BloomTaken<'_, W> {
    /// Puts back every charged word that still holds what its charge wrote
    /// (see [`crate::charge`]); whether every one did.
    pub(crate) fn restore(&self) -> bool {
        let mut all = true;
        for i in 0..LINE_WORDS {
            if self.charged & (1 << i) != 0 {
                all &= crate::charge::restore(&self.line[i], self.before[i], self.after[i]);
            }
        }
        all
    }
}

/// Whether `allow` allows any of the words of `line` that `mask` names,
/// asking every one of them (each that allows is charged).
#[inline(always)]
fn any_of<W>(line: &[W; LINE_WORDS], mut mask: u32, mut allow: impl FnMut(&W) -> bool) -> bool {
    let mut allowed = false;
    while mask != 0 {
        allowed |= allow(&line[mask.trailing_zeros() as usize % LINE_WORDS]);
        mask &= mask - 1;
    }
    allowed
}

/// A bloom array: its shape and its lines, kept in the store `S` (a `Vec`
/// that [`Bloom::new`] allocates, by default; a borrowed slice or an array
/// of [`BloomLine`]s handed to [`Bloom::new_in`], with no allocator at all:
/// see [`crate::store`]). The words are atomics, updated through shared
/// references, so the store need only lend its lines (`AsRef`). The same
/// code runs over each store.
#[derive(Debug)]
pub struct Bloom<#[cfg(feature = "alloc")] S = Vec<BloomLine>, #[cfg(not(feature = "alloc"))] S> {
    /// The shape the array was made with; its limit is the one in force
    /// until the first [`Bloom::reconfigure`].
    shape: BloomShape,
    /// The limit in force after a reconfiguration (fixed for an array
    /// attached to a region, [`Bloom::attach`], whose limit is the
    /// header's): see [`crate::limit_cell`].
    limit: LimitCell,
    lines: S,
}

impl<'a> Bloom<&'a [BloomLine]> {
    /// The array laid in `region` by [`init_in`] (here or by another
    /// process), with the shape its header holds, checked as [`open_in`]
    /// checks it: its words are the region's lines after the header, as
    /// they are, shared with every other user of the region. Nothing is
    /// written. The header is read once: lay the region again and attach
    /// again.
    pub fn attach(region: &'a [BloomLine]) -> Result<Bloom<&'a [BloomLine]>, BloomError> {
        let (shape, lines) = open_in(region)?;
        Ok(Bloom {
            shape,
            limit: LimitCell::fixed(),
            lines,
        })
    }
}

#[cfg(feature = "alloc")]
impl Bloom {
    /// An array of `shape` whose words are all fresh (zero).
    pub fn new(shape: BloomShape) -> Result<Bloom, BloomError> {
        let n = shape.lines();
        let mut lines = Vec::new();
        lines
            .try_reserve_exact(n)
            .map_err(|_| BloomError::NoMemory)?;
        lines.extend((0..n).map(|_| BloomLine::fresh()));
        Ok(Bloom {
            shape,
            limit: LimitCell::new(),
            lines,
        })
    }
}

impl<S: AsRef<[BloomLine]>> Bloom<S> {
    /// An array of `shape` over the caller's lines, every word of the
    /// first [`BloomShape::lines`] set fresh (zero); lines after them are
    /// left alone and never read. [`BloomError::TooSmall`] for a store of
    /// fewer lines. The lines are not a region: no header is written (see
    /// [`init_in`] for memory shared between processes).
    pub fn new_in(shape: BloomShape, lines: S) -> Result<Bloom<S>, BloomError> {
        let words = lines.as_ref();
        if words.len() < shape.lines() {
            return Err(BloomError::TooSmall);
        }
        for line in &words[..shape.lines()] {
            for word in &line.0 {
                word.store(0, Ordering::Relaxed);
            }
        }
        Ok(Bloom {
            shape,
            limit: LimitCell::new(),
            lines,
        })
    }

    /// The array with its lines moved to another store: `rehome` gets the
    /// store and must answer one holding the same lines, in the same order.
    /// Nothing else changes.
    pub fn map_store<T: AsRef<[BloomLine]>>(self, rehome: impl FnOnce(S) -> T) -> Bloom<T> {
        Bloom {
            shape: self.shape,
            limit: self.limit,
            lines: rehome(self.lines),
        }
    }

    /// The array's shape, with the limit in force now (the one it was made
    /// with until a [`Bloom::reconfigure`]).
    pub fn shape(&self) -> BloomShape {
        match self.limit.get(&self.shape.limit) {
            None => self.shape,
            Some(limit) => self.shape.judged_by(limit),
        }
    }

    /// Gives every word a new limit, in place and at once: from the
    /// publication on, each decision reads the old limit or the new one,
    /// wholly (two slots and a generation, so a decision never waits for
    /// the change), and every word keeps what it holds. Safe beside the
    /// array's decisions, from any thread; two reconfigurations run one
    /// after the other. The kind, size, hashes and seed never change.
    ///
    /// What a word decided under the old limit means under the new one:
    ///
    /// - A **rate word** keeps its window's start and count. The window is
    ///   read under the new limit: it expires `ceil(count × I')` after its
    ///   start (I' the new interval), and admits while its count is under
    ///   the new burst B'. A window that held more than B' events admits
    ///   nothing more until it expires; a window already past
    ///   `count × I'` has expired, and the next call opens a fresh one.
    /// - A **GCRA word** keeps its theoretical arrival time (TAT), an
    ///   instant: a key's debt (TAT − now) carries over as time. Under the
    ///   new limit it admits once the debt is at most the new tolerance
    ///   less a token (`burst' × per_token'` ticks less `per_token'`), and
    ///   repays at the new rate; a key that was idle (TAT at or before
    ///   now) is a full bucket under either limit.
    ///
    /// The bound across a change at `c`, for one word (a key with one
    /// hash; with k hashes, k times it), counting each decision under the
    /// limit that judged it:
    ///
    /// - **GCRA**: each admit moves the TAT to `max(TAT, t) + per_token`
    ///   of the limit that judged it, and only to at most
    ///   `t + tolerance`. So over judged instants in `[a, b]`, in any order
    ///   and across any number of changes, the ticks the admits were worth
    ///   sum to at most `(b − a) × 2^shift + ` the largest tolerance among
    ///   the limits that judged them. In particular the old limit's admits
    ///   in `[a, c)` keep its bound, `burst + floor((c − a) × rate)`, the
    ///   new limit's in `[c, b]` keep the new one, `burst' + floor((b − c)
    ///   × rate')` (the debt carried over only lowers it), and together
    ///   `n × per_token + n' × per_token' ≤ (b − a) × 2^shift +
    ///   tolerance'` when the last admit is the new limit's.
    /// - **Rate**: the old limit's admits in `[a, c)` keep its bound,
    ///   `B + floor((c − a) / I)`, and the new limit's in `[c, b]` keep the
    ///   new one, `B' + floor((b − c) / I')`: a window open at the change
    ///   takes at most `B' − count` more, each pushing its end `I'` further
    ///   past `c`. Across any number of changes between limits, a window's
    ///   events are at most the largest burst and it lasts at least
    ///   `count × ` the shortest interval, so over any `T` ns at most
    ///   `2 × max B + floor(T / min I)` are admitted.
    ///
    /// [`BloomError::KindChange`] for a limit of the other word kind,
    /// [`BloomError::TickChange`] for a GCRA limit on another tick,
    /// [`BloomError::Region`] for an array attached to a region; an error
    /// changes nothing.
    pub fn reconfigure(&self, limit: impl Into<BloomLimit>) -> Result<(), BloomError> {
        if self.limit.is_fixed() {
            return Err(BloomError::Region);
        }
        let checked = self.shape.try_with_limit(limit)?;
        self.limit.publish(&checked.limit);
        Ok(())
    }

    /// The array's lines, as [`BloomShape::allow`] takes them.
    #[inline]
    pub fn lines(&self) -> &[BloomLine] {
        self.lines.as_ref()
    }

    /// See [`BloomShape::allow`], by the limit in force.
    #[inline]
    pub fn allow(&self, now: i64, key: &[u8]) -> bool {
        match self.limit.get(&self.shape.limit) {
            None => self.shape.allow(self.lines.as_ref(), now, key),
            Some(limit) => self
                .shape
                .judged_by(limit)
                .allow(self.lines.as_ref(), now, key),
        }
    }

    /// See [`BloomShape::next`], by the limit in force.
    #[inline]
    pub fn next(&self, now: i64, key: &[u8]) -> i64 {
        match self.limit.get(&self.shape.limit) {
            None => self.shape.next(self.lines.as_ref(), now, key),
            Some(limit) => self
                .shape
                .judged_by(limit)
                .next(self.lines.as_ref(), now, key),
        }
    }
}

/// The header's words for `shape`, magic first.
fn header(shape: &BloomShape) -> [u64; HEADER_WORDS] {
    let (kind, shift, a, b) = match shape.limit {
        BloomLimit::Window(limit) => {
            let (interval_ns, interval_frac, burst) = limit.parts();
            let b = u64::from(interval_frac) | u64::from(burst) << 32;
            (KIND_WINDOW, 0, interval_ns, b)
        }
        BloomLimit::Gcra(limit) => {
            let (per_token, tolerance, shift) = limit.parts();
            (KIND_GCRA, shift, per_token, tolerance as u64)
        }
    };
    [
        MAGIC,
        VERSION,
        kind | (LINE_BYTES as u64) << 32,
        u64::from(shape.size_log2) | u64::from(shape.hashes) << 8 | u64::from(shift) << 16,
        a,
        b,
        shape.sip.key().0,
        shape.sip.key().1,
    ]
}

/// Lays an array of `shape` into `region`: the header line, then lines of
/// zeroed words. The region must hold 1 + [`BloomShape::lines`] lines; any past
/// them are left alone. The magic is written last, so a reader never takes
/// a half-written header for a valid one; but the region must not be in
/// use while it is laid.
pub fn init_in(region: &[BloomLine], shape: &BloomShape) -> Result<(), BloomError> {
    let needed = 1 + shape.lines();
    if region.len() < needed {
        return Err(BloomError::TooSmall);
    }
    let head = &region[0].0;
    head[0].store(0, Ordering::Relaxed);
    for line in &region[1..needed] {
        for word in &line.0 {
            word.store(0, Ordering::Relaxed);
        }
    }
    let fields = header(shape);
    for (word, value) in head.iter().zip(fields).skip(1) {
        word.store(value, Ordering::Relaxed);
    }
    head[0].store(MAGIC, Ordering::Release);
    Ok(())
}

/// The shape in `region`'s header and the lines after it.
pub fn open_in(region: &[BloomLine]) -> Result<(BloomShape, &[BloomLine]), BloomError> {
    let head = &region.first().ok_or(BloomError::TooSmall)?.0;
    if head[0].load(Ordering::Acquire) != MAGIC {
        return Err(BloomError::Foreign);
    }
    let field = |i: usize| head[i].load(Ordering::Relaxed);
    if field(1) != VERSION {
        return Err(BloomError::Version);
    }
    let (kind, line_bytes) = (field(2) & 0xffff_ffff, field(2) >> 32);
    if line_bytes != LINE_BYTES as u64 {
        return Err(BloomError::LineSize);
    }
    let sizes = field(3);
    let (size_log2, hashes, shift) = (sizes & 0xff, sizes >> 8 & 0xff, sizes >> 16 & 0xff);
    if sizes >> 24 != 0 {
        return Err(BloomError::Foreign);
    }
    let (a, b) = (field(4), field(5));
    let limit = match kind {
        KIND_WINDOW if shift == 0 => RateLimit::from_parts(a, b as u32, (b >> 32) as u32)
            .map(BloomLimit::Window)
            .map_err(|_| BloomError::Foreign)?,
        KIND_GCRA => GcraLimit::from_parts(a, b as i64, shift as u32)
            .map(BloomLimit::Gcra)
            .map_err(|_| BloomError::Foreign)?,
        KIND_WINDOW => return Err(BloomError::Foreign),
        _ => return Err(BloomError::Kind),
    };
    let shape = BloomShape::new(size_log2 as u32, hashes as u32, limit, field(6), field(7))
        .map_err(|_| BloomError::Foreign)?;
    let lines = region
        .get(1..1 + shape.lines())
        .ok_or(BloomError::TooSmall)?;
    Ok((shape, lines))
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use crate::time::SECOND;

    fn limit(per_s: f64, burst: i64) -> RateLimit {
        RateLimit::new(per_s, burst).unwrap()
    }

    fn gcra(per_s: f64, burst: i64) -> GcraLimit {
        GcraLimit::new(per_s, burst).unwrap()
    }

    fn shape(size_log2: u32, hashes: u32, burst: i64, seed: u64) -> BloomShape {
        BloomShape::new(size_log2, hashes, limit(1.0, burst), seed, !seed).unwrap()
    }

    fn lines(shape: &BloomShape) -> Vec<BloomLine> {
        (0..shape.lines()).map(|_| BloomLine::fresh()).collect()
    }

    #[test]
    fn the_subset_table_holds_every_subset_once_by_size() {
        for k in 1..=8usize {
            let start = usize::from(SUBSET_START[k]);
            let masks = &SUBSETS[start..start + usize::from(SUBSET_COUNT[k])];
            assert!(masks.iter().all(|m| m.count_ones() as usize == k));
            assert!(masks.windows(2).all(|w| w[0] < w[1]));
        }
        assert_eq!(SUBSET_START[8], 254);
    }

    #[test]
    fn a_new_limit_keeps_the_words_and_refuses_another_kind_or_tick() {
        // GCRA, 10/s burst 5, then 2/s burst 1: a key that spent its burst
        // owes 0.5 s, and the new bucket holds 0.5 s: it may take again
        // once its debt is down to 0.5 s − 0.5 s = 0, at 0.5 s.
        let old = BloomShape::new(10, 3, gcra(10.0, 5), 1, 2).unwrap();
        let new = old.with_limit(gcra(2.0, 1)).unwrap();
        let words = lines(&old);
        for _ in 0..5 {
            assert!(old.allow(&words, 0, b"k"));
        }
        assert!(!old.allow(&words, 0, b"k"));
        assert!(!new.allow(&words, 0, b"k"), "the debt carries over");
        assert_eq!(new.next(&words, 0, b"k"), SECOND / 2);
        assert!(new.allow(&words, SECOND / 2, b"k"));
        assert!(new.allow(&words, 0, b"other"), "another key is fresh");
        assert!(!new.allow(&words, 0, b"other"), "the new burst");
        // Window words: the count carries over.
        let old = BloomShape::new(10, 3, limit(10.0, 5), 1, 2).unwrap();
        let new = old.with_limit(limit(20.0, 3)).unwrap();
        let words = lines(&old);
        for i in 0..4 {
            assert!(old.allow(&words, i, b"k"));
        }
        assert!(!new.allow(&words, 4, b"k"), "4 events ≥ the new burst 3");
        // Another kind or another tick is refused.
        assert!(old.with_limit(gcra(10.0, 5)).is_none());
        let fast = BloomShape::new(10, 3, gcra(1e9, 5), 1, 2).unwrap();
        assert!(fast.with_limit(gcra(10.0, 5)).is_none());
        assert_ne!(gcra(1e9, 5).parts().2, gcra(10.0, 5).parts().2);
    }

    #[test]
    fn reconfigure_publishes_a_new_limit_over_the_same_words() {
        // GCRA: the debt carries over, as with_limit reads it.
        let bloom = Bloom::new(BloomShape::new(10, 3, gcra(10.0, 5), 1, 2).unwrap()).unwrap();
        for _ in 0..5 {
            assert!(bloom.allow(0, b"k"));
        }
        bloom.reconfigure(gcra(2.0, 1)).unwrap();
        assert_eq!(bloom.shape().limit(), &BloomLimit::Gcra(gcra(2.0, 1)));
        assert!(!bloom.allow(0, b"k"));
        assert_eq!(bloom.next(0, b"k"), SECOND / 2);
        assert!(bloom.allow(SECOND / 2, b"k"));
        // Back and forth: each generation's limit, whole.
        for round in 0..5 {
            let (old, new) = if round % 2 == 0 {
                (gcra(2.0, 1), gcra(10.0, 5))
            } else {
                (gcra(10.0, 5), gcra(2.0, 1))
            };
            assert_eq!(bloom.shape().limit(), &BloomLimit::Gcra(old));
            bloom.reconfigure(new).unwrap();
            assert_eq!(bloom.shape().limit(), &BloomLimit::Gcra(new));
        }
        // Refusals change nothing.
        let now = *bloom.shape().limit();
        assert_eq!(
            bloom.reconfigure(limit(1.0, 1)),
            Err(BloomError::KindChange)
        );
        assert_eq!(bloom.reconfigure(gcra(1e9, 5)), Err(BloomError::TickChange));
        assert_eq!(bloom.shape().limit(), &now);
        // Rate words: the count carries over against the new burst.
        let bloom = Bloom::new(BloomShape::new(10, 1, limit(10.0, 5), 1, 2).unwrap()).unwrap();
        for i in 0..4 {
            assert!(bloom.allow(i, b"k"));
        }
        bloom.reconfigure(limit(20.0, 3)).unwrap();
        assert!(!bloom.allow(4, b"k"), "4 events ≥ the new burst 3");
        // The window now ends 4 × 50 ms after its start.
        assert_eq!(bloom.next(4, b"k"), 4 * SECOND / 20 - 4);
        assert!(bloom.allow(4 * SECOND / 20, b"k"));
        // A region's array keeps the header's limit.
        let s = BloomShape::new(4, 2, gcra(1.0, 3), 1, 1).unwrap();
        let mem = region(3);
        init_in(&mem, &s).unwrap();
        let attached = Bloom::attach(&mem).unwrap();
        assert_eq!(attached.reconfigure(gcra(2.0, 3)), Err(BloomError::Region));
        assert_eq!(attached.shape(), s);
    }

    #[test]
    fn a_reconfigured_array_moved_to_another_store_keeps_its_limit() {
        let store: [BloomLine; 2] = core::array::from_fn(|_| BloomLine::fresh());
        let bloom = Bloom::new_in(shape(4, 1, 2, 3), store).unwrap();
        bloom.reconfigure(limit(1.0, 1)).unwrap();
        let moved = bloom.map_store(|lines| lines);
        assert_eq!(moved.shape().limit(), &BloomLimit::Window(limit(1.0, 1)));
        assert!(moved.allow(0, b"k"));
        assert!(!moved.allow(0, b"k"));
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
    fn a_gcra_key_gets_its_burst_then_one_per_interval() {
        let s = BloomShape::new(10, 3, gcra(1.0, 2), 7, 8).unwrap();
        let bloom = Bloom::new(s).unwrap();
        assert!(bloom.allow(0, b"alice"));
        assert!(bloom.allow(0, b"alice"));
        assert!(!bloom.allow(0, b"alice"));
        assert_eq!(bloom.next(0, b"alice"), SECOND);
        // One token back after 1 s, not the whole burst (the window kind
        // would give both back at 2 s).
        assert!(bloom.allow(SECOND, b"alice"));
        assert!(!bloom.allow(SECOND, b"alice"));
        assert!(bloom.allow(0, b"bob"));
    }

    #[test]
    fn a_key_alone_gets_exactly_its_burst_at_511_ns() {
        // With one hash a key is one rate word, and a word whose
        // window opened at 511 ns used to admit every call.
        let shape = BloomShape::new(4, 1, limit(19e6, 1023), 5, 6).unwrap();
        let bloom = Bloom::new(shape).unwrap();
        let admitted = (0..100_000).filter(|_| bloom.allow(511, b"key")).count();
        assert_eq!(admitted, 1023);
    }

    #[test]
    fn a_key_s_words_are_k_distinct_words_of_one_line() {
        for hashes in 1..=8 {
            let s = shape(20, hashes, 1, u64::from(hashes));
            for key in 0u32..2000 {
                let slots: Vec<usize> = s.slots(&key.to_le_bytes()).collect();
                assert_eq!(slots.len(), hashes as usize);
                assert!(slots.windows(2).all(|w| w[0] < w[1]), "repeats");
                let line = slots[0] / LINE_WORDS;
                assert!(slots.iter().all(|slot| slot / LINE_WORDS == line));
                assert!(line < s.lines());
            }
        }
    }

    #[test]
    fn lines_and_subsets_are_spread_evenly() {
        // 64 lines, k = 2 (28 subsets): each of the 64 × 28 cells is hit
        // about 100 times by 179,200 keys.
        let s = shape(9, 2, 1, 99);
        let mut hits = alloc::vec![0u32; s.lines() * 28];
        let start = usize::from(SUBSET_START[2]);
        for key in 0u32..179_200 {
            let (line, mask) = s.probe(&key.to_le_bytes());
            let subset = SUBSETS[start..start + 28]
                .iter()
                .position(|&m| u32::from(m) == mask)
                .unwrap();
            hits[line * 28 + subset] += 1;
        }
        // A Poisson(100) cell is outside 50..160 with probability ~1e-7.
        assert!(hits.iter().all(|&n| (50..160).contains(&n)), "{hits:?}");
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
    fn the_seed_moves_the_words() {
        let a = shape(20, 8, 1, 1);
        let b = shape(20, 8, 1, 2);
        for key in [&b""[..], b"k", b"198.51.100.7", &[0u8; 16]] {
            let slots: Vec<usize> = a.slots(key).collect();
            let other: Vec<usize> = b.slots(key).collect();
            assert_ne!(slots, other);
        }
        // The smallest array is one line, and all 8 hashes ask it all.
        let tiny = shape(3, 8, 1, 3);
        let slots: Vec<usize> = tiny.slots(b"x").collect();
        assert_eq!(slots, [0, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn a_key_spent_under_one_seed_is_fresh_under_another() {
        let a = shape(16, 2, 1, 11);
        let b = shape(16, 2, 1, 12);
        let words = lines(&a);
        assert!(a.allow(&words, 0, b"key"));
        assert!(!a.allow(&words, 0, b"key"));
        assert!(b.allow(&words, 0, b"key"));
    }

    #[test]
    fn a_key_is_allowed_while_any_of_its_words_allows() {
        for s in [
            shape(8, 2, 1, 5),
            BloomShape::new(8, 2, gcra(1.0, 1), 5, 6).unwrap(),
        ] {
            let words = lines(&s);
            let slot = s.slots(b"key").next().unwrap();
            // Another key spent the first word.
            words[slot / LINE_WORDS].0[slot % LINE_WORDS].store(u64::MAX >> 2, Ordering::Relaxed);
            assert!(s.allow(&words, 0, b"key"));
            assert!(!s.allow(&words, 0, b"key"));
        }
    }

    /// The array's allow (its fast path for open words, its full step for
    /// the rest) answers and writes what asking each of the key's words in
    /// full does, over random traces: a few keys sharing a few lines, small
    /// bursts that fill and expire, `now` mostly rising with repeats and
    /// steps back, a short limit and a long one.
    #[test]
    fn allow_is_each_word_asked_in_full() {
        let mut state = 0x9e37_79b9_7f4a_7c15;
        let mut draw = |n: u64| crate::xorshift(&mut state) % n;
        let limits = [
            limit(1000.0, 3),
            limit(1e9 / 30_000.0, 2),
            RateLimit::from_parts(1 << 53, 0, 2).unwrap(),
        ];
        for limit in limits {
            for hashes in [1, 3, 8] {
                let shape = BloomShape::new(4, hashes, limit, 7, 8).unwrap();
                let (fast, full) = (lines(&shape), lines(&shape));
                let mut now: i64 = 0;
                for i in 0..crate::rounds(20_000) {
                    now = match draw(8) {
                        0 => now.saturating_sub(draw(2_000) as i64),
                        1 => now,
                        2 => now + draw(10_000_000) as i64,
                        3 if i % 1000 == 0 => rate::MAX_NOW + draw(4) as i64,
                        _ => now + draw(1_000) as i64,
                    }
                    .max(0);
                    let key = draw(12).to_le_bytes();
                    let want = {
                        let (line, mask) = shape.probe(&key);
                        any_of(&full[line].0, mask, |word| rate::allow(word, &limit, now))
                    };
                    assert_eq!(shape.allow(&fast, now, &key), want, "at {now}, key {key:?}");
                    for (a, b) in fast.iter().zip(&full) {
                        for (a, b) in a.0.iter().zip(&b.0) {
                            assert_eq!(a.get(), b.get(), "at {now}");
                        }
                    }
                    if now >= rate::MAX_NOW {
                        now = 0;
                        for line in fast.iter().chain(&full) {
                            line.0
                                .iter()
                                .for_each(|word| word.store(0, Ordering::Relaxed));
                        }
                    }
                }
            }
        }
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
        for s in [
            shape(4, 2, 1, 9),
            BloomShape::new(4, 2, gcra(1.0, 1), 9, 9).unwrap(),
        ] {
            let bloom = Bloom::new(s).unwrap();
            assert!(!bloom.allow(-1, b"k"));
            assert!(!bloom.allow(i64::MIN, b"k"));
            assert_eq!(bloom.next(-1, b"k"), NEVER);
            assert!(bloom.allow(0, b"k"));
        }
    }

    #[test]
    fn shapes_are_checked() {
        let l = limit(1.0, 1);
        assert_eq!(BloomShape::new(33, 1, l, 0, 0), Err(BloomError::Size));
        assert_eq!(BloomShape::new(u32::MAX, 1, l, 0, 0), Err(BloomError::Size));
        assert_eq!(BloomShape::new(2, 1, l, 0, 0), Err(BloomError::TooFewWords));
        assert_eq!(BloomShape::new(0, 1, l, 0, 0), Err(BloomError::TooFewWords));
        assert_eq!(BloomShape::new(10, 0, l, 0, 0), Err(BloomError::Hashes));
        assert_eq!(BloomShape::new(10, 9, l, 0, 0), Err(BloomError::Hashes));
        assert!(BloomShape::new(3, 8, l, 0, 0).is_ok());
        // The largest size this host can address: 2^32 words on 64-bit
        // hosts, 2^27 (1 GiB) on 32-bit ones.
        let largest = if usize::BITS == 64 { MAX_SIZE_LOG2 } else { 27 };
        assert!(BloomShape::new(largest, MAX_HASHES, l, 0, 0).is_ok());
        assert_eq!(
            BloomShape::new(largest + 1, 1, l, 0, 0),
            Err(BloomError::Size)
        );
        assert_eq!(footprint_words(3), Some(16));
        assert_eq!(footprint_words(10), Some(1032));
        assert_eq!(footprint_words(2), None);
        assert_eq!(footprint_words(33), None);
        assert_eq!(footprint_words(largest + 1), None);
        assert_eq!(core::mem::align_of::<BloomLine>(), 64);
        assert_eq!(core::mem::size_of::<BloomLine>(), 64);
    }

    /// k = 3, 2^20 words, 50,000 keys, each making burst + 1 calls in
    /// interleaved rounds inside one window: no key passes its burst, and
    /// few are refused before it (the formula's figure is 1.7 %; the
    /// integration test checks the formula closely).
    #[test]
    fn few_keys_are_refused_before_their_burst() {
        const KEYS: u32 = 50_000;
        const BURST: u32 = 4;
        for s in [
            shape(20, 3, i64::from(BURST), 0x5eed),
            BloomShape::new(20, 3, gcra(1e-3, i64::from(BURST)), 1, 2).unwrap(),
        ] {
            let bloom = Bloom::new(s).unwrap();
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
            // The formula (tests/bloom.rs) gives 1.7 %.
            assert!(early < KEYS as usize / 40, "refused early: {early}");
        }
    }

    fn region(lines: usize) -> Vec<BloomLine> {
        (0..lines)
            .map(|_| BloomLine(core::array::from_fn(|_| AtomicU64::new(u64::MAX))))
            .collect()
    }

    #[test]
    fn in_place_round_trips_and_behaves_as_the_heap_array() {
        for s in [
            shape(6, 3, 2, 42),
            BloomShape::new(6, 3, gcra(3.0, 2), 4, 2).unwrap(),
        ] {
            let mem = region(1 + 8 + 3);
            init_in(&mem, &s).unwrap();
            assert_eq!(mem[9].0[0].load(Ordering::Relaxed), u64::MAX);
            let (opened, words) = open_in(&mem).unwrap();
            assert_eq!(opened, s);
            assert_eq!(words.len(), 8);
            let heap = Bloom::new(s).unwrap();
            for (i, key) in [&b"a"[..], b"b", b"a", b"a", b"c", b"a"].iter().enumerate() {
                let now = i as i64 * 100_000_000;
                assert_eq!(opened.allow(words, now, key), heap.allow(now, key));
                assert_eq!(opened.next(words, now, key), heap.next(now, key));
            }
        }
    }

    #[test]
    fn the_header_is_the_documented_layout() {
        let s = BloomShape::new(5, 3, gcra(2.0, 7), 0x1111, 0x2222).unwrap();
        let mem = region(5);
        init_in(&mem, &s).unwrap();
        let (per_token, tolerance, shift) = gcra(2.0, 7).parts();
        let expected = [
            MAGIC,
            2,
            2 | 64 << 32,
            5 | 3 << 8 | u64::from(shift) << 16,
            per_token,
            tolerance as u64,
            0x1111,
            0x2222,
        ];
        let head: Vec<u64> = mem[0].0.iter().map(|w| w.load(Ordering::Relaxed)).collect();
        assert_eq!(head, expected);
        let s = shape(5, 3, 9, 0x33);
        init_in(&mem, &s).unwrap();
        let (interval_ns, frac, burst) = limit(1.0, 9).parts();
        assert_eq!(mem[0].0[2].load(Ordering::Relaxed), 1 | 64 << 32);
        assert_eq!(mem[0].0[3].load(Ordering::Relaxed), 5 | 3 << 8);
        assert_eq!(mem[0].0[4].load(Ordering::Relaxed), interval_ns);
        assert_eq!(
            mem[0].0[5].load(Ordering::Relaxed),
            u64::from(frac) | u64::from(burst) << 32
        );
    }

    #[test]
    fn bad_regions_are_named() {
        let s = shape(4, 2, 1, 1);
        let small = region(2);
        assert_eq!(init_in(&small, &s), Err(BloomError::TooSmall));
        assert_eq!(open_in(&small[..0]).map(|_| ()), Err(BloomError::TooSmall));
        let zeros: Vec<BloomLine> = (0..4).map(|_| BloomLine::fresh()).collect();
        assert_eq!(open_in(&zeros).map(|_| ()), Err(BloomError::Foreign));

        for s in [s, BloomShape::new(4, 2, gcra(1.0, 3), 1, 1).unwrap()] {
            let mem = region(3);
            init_in(&mem, &s).unwrap();
            // The header names more lines than the region has.
            assert_eq!(open_in(&mem[..2]).map(|_| ()), Err(BloomError::TooSmall));
            let head = &mem[0].0;
            let tamper = |i: usize, value: u64, expected: BloomError| {
                let old = head[i].swap(value, Ordering::Relaxed);
                assert_eq!(open_in(&mem).map(|_| ()), Err(expected), "word {i}");
                head[i].store(old, Ordering::Relaxed);
            };
            let kind = head[2].load(Ordering::Relaxed);
            let sizes = head[3].load(Ordering::Relaxed);
            tamper(0, MAGIC ^ 1, BloomError::Foreign);
            tamper(1, 1, BloomError::Version); // weir 0.1's layout
            tamper(1, VERSION + 1, BloomError::Version);
            tamper(2, 3 | 64 << 32, BloomError::Kind);
            tamper(2, 64 << 32, BloomError::Kind); // kind 0
            tamper(2, (kind & 0xff) | 128 << 32, BloomError::LineSize);
            tamper(3, (sizes & !0xff) | 40, BloomError::Foreign); // size_log2 40
            tamper(3, (sizes & !0xff) | 2, BloomError::Foreign); // 4 words
            tamper(3, (sizes & !0xff00) | 9 << 8, BloomError::Foreign); // 9 hashes
            tamper(3, sizes | 1 << 24, BloomError::Foreign);
            tamper(3, sizes | 5 << 16, BloomError::Foreign); // shift 5
            tamper(4, 0, BloomError::Foreign); // interval 0 / per_token 0
            tamper(5, 1, BloomError::Foreign); // burst 0 / tolerance 1
            assert!(open_in(&mem).is_ok());
        }
        // A window header with a shift is not a window header.
        let mem = region(3);
        init_in(&mem, &shape(4, 2, 1, 1)).unwrap();
        mem[0].0[3].fetch_or(1 << 16, Ordering::Relaxed);
        assert_eq!(open_in(&mem).map(|_| ()), Err(BloomError::Foreign));
    }
}
