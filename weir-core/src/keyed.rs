//! The keyed table: one exact limiter word per key, for millions of keys in
//! a fixed amount of memory, without a lock where the CPU has a 16-byte
//! compare-and-swap.
//!
//! Where the bloom array ([`crate::bloom`]) lets keys share words and so
//! refuses a key now and then for another's traffic, this table gives each
//! key a word of its own, found by the key's fingerprint, and makes room
//! for a new key only by forgetting an idle one: a word at rest (a GCRA
//! word whose arrival time is at or before `now`, a rate word whose window
//! has expired) decides every later call exactly as a fresh word does, so
//! forgetting it loses nothing.
//!
//! # Layout
//!
//! The table is `B` buckets ([`KeyedShape::buckets`], any count from 1 to
//! [`MAX_BUCKETS`]) of [`SLOTS`] slots. A slot is 16 bytes, one 128-bit
//! atomic: a tag (the key's fingerprint) and the key's word, a
//! [`crate::gcra`] GCRA word (the default kind) or a [`crate::rate`] rate
//! word, chosen when the table is made ([`BloomLimit`], the bloom's kinds).
//! A bucket is 128 bytes, aligned to 128: two cache lines.
//!
//! A key is hashed once with keyed SipHash-1-3 ([`crate::sip`], the
//! bloom's hash and seed handling), 64 bits `h`. Its fingerprint is `h`
//! with bit 0 cleared (63 bits; 2 if that is 0). Its candidate buckets are
//! `b1 = (h mod 2^32) × B / 2^32` and `b2 = (h div 2^32) × B / 2^32`: two
//! independent uniform picks (one when they coincide), so its [`SLOTS`] ×
//! 2 candidate slots. Without the caller's 128-bit seed nobody can aim keys
//! at one bucket. Bits 1 and 33 of `h` name the key's home line (half) in
//! `b1` and in `b2`: its candidate slots are read home lines first (`b1`'s,
//! then `b2`'s), then the other lines, and a key placed in a bucket takes
//! its first free slot in that order (so its home line's, if it has one),
//! else its first idle one. Most keys are so found in the first 64-byte
//! line read, or the second: 1.35 lines a lookup at 10^6 keys in the
//! footprint below, where reading `b1` whole before `b2` read 1.83 (a
//! simulation of the placement).
//!
//! # Deciding
//!
//! A call for key `K` scans its candidate slots for `K`'s fingerprint and
//! decides on that slot's word: the word's own compare-and-swap loop, with
//! the whole slot (tag and word) compared, so that a word is only ever
//! charged while it still belongs to `K`. If `K` has no slot, it takes one:
//! in the candidate bucket with more room (a free slot or an idle word;
//! ties go to `b1`), a free slot before an idle one. That is the two-choice
//! placement, whose fullest buckets stay far below a one-choice table's.
//! When neither bucket has room (every candidate holds an active key, or a
//! claim in progress), the table **overflows**: [`Overflow`] says what the
//! call answers, and [`KeyedCounters::overflows`] counts it either way.
//!
//! # What it promises
//!
//! - **Exact per key while nothing overflows.** A key's calls are decided
//!   on one word that no other key touches, forgotten only at rest: so its
//!   admits are those of a lone word of the limit given the same calls, at
//!   every phase of the word. (Idleness is judged at the `now` of the call
//!   that replaces the word. A caller whose threads pass `now`s that go
//!   back in time can find a fresh word where the lone word, having seen a
//!   later `now`, had less room: the promise is for `now`s that do not go
//!   back across the table's callers.) Across changes of the limit
//!   ([`Keyed::reconfigure`]) it holds with the same limits given to the
//!   lone word, but for one case of rate words that the method names.
//! - **Overflow.** For `N` keys active at once placed in `M` = 8 × `B`
//!   slots, a new key overflows with chance about [`overflow_chance`]`(N,
//!   M)` = `s_8(N / B)²`, where `s_i(t)` is the fraction of buckets holding
//!   `i` or more keys after `t × B` two-choice placements: the solution of
//!   `s_i' = s_{i−1}² − s_i²`, `s_0 = 1`, `s_i(0) = 0` (Mitzenmacher's
//!   limit for large tables; the chance that both candidates coincide, 1 /
//!   B, is left out). `weir-core/tests/keyed.rs` measures it. Examples:
//!   half full (`N = M / 2`), 2.8 × 10^-20; 62 % full, 1.9 × 10^-9; 80 %
//!   full, 0.77 %.
//! - **Fingerprints.** Two keys collide when their 63-bit fingerprints are
//!   equal: chance 2^-63 per pair, about `N / 2^63` for a new key among
//!   `N` (1.1 × 10^-13 at 10^6). Colliding keys share one word, limited
//!   together: a collision can only refuse, never admit more than one
//!   key's limit for both.
//! - **Memory.** 16 bytes a slot, 128 a bucket. 10^6 active keys at an
//!   overflow chance of at most 10^-9 a new key need 203,090 buckets
//!   ([`buckets_for`]`(10^6, 1e-9)`; 61.5 % full): 26.0 MB, 26.0 bytes a
//!   key.
//!
//! # Claims, without a lock
//!
//! Two calls for one new key must not each take a slot (each would admit a
//! burst). A slot is free (tag 0), claimed (the fingerprint with bit 0
//! set, and the word a number unique to the claim, from
//! [`KeyedCounters`]), or held (the fingerprint, and the key's word).
//! Number a key's candidate slots 0..16 in the order it reads them (home
//! lines first, as above; 0..8 when `b1` = `b2`). A call that
//! finds no held slot for its key `K` claims a free or idle slot (one
//! compare-and-swap of the whole slot from the value it judged), unless it
//! saw a claim of `K` already, and then settles `K`'s claims: it reads
//! every candidate; if one is held by `K`, it frees `K`'s claims and
//! charges that slot; else it frees every claim of `K` above the lowest
//! and turns the lowest into `K`'s held word: a fresh word with the
//! settling call's own events already charged, so that call is decided
//! (admitted: a call a fresh word refuses takes no slot and settles
//! nothing). Each of those writes is a compare-and-swap from the value the
//! one read saw; when one fails, the call starts over.
//! The slot to claim is judged, on a call's first pass, from the values
//! its scan for `K` read (not read again; later passes read afresh). That
//! snapshot may be stale, which is safe: the claim succeeds only if the
//! slot still holds the very value judged free or at rest at `now`, and
//! fails otherwise, the call then starting over; staleness can only make
//! the two-choice count pick another bucket than a fresh read would, never
//! let a claim take a slot that is not free or at rest. Whether the scan
//! saw a claim of `K` was always judged from that first scan.
//! Any call for `K` settles any claim of `K`, its own or another's, so no
//! call waits on another (a claim whose caller stopped is settled by the
//! key's next call).
//!
//! No key is ever held in two slots. Say `X` became held at `t_x`, then
//! `Y` at `t_y`, `X` still held; each was claimed from `c` (`c_x`, `c_y`)
//! to its hold, and each hold was licensed by a settle that read all the
//! candidates in between. `Y`'s settle read `X` before `t_x` (it saw no
//! held slot). If `X`'s settle read `Y` after `c_y`, it saw `Y`'s claim:
//! lower, and it would have settled `Y`, not `X`; higher, and it freed `Y`
//! before `t_x < t_y`, so `Y`'s claim was gone at `t_y`. Otherwise `c_x` <
//! (that read) < `c_y` < (`Y`'s settle's read of `X`) < `t_x`: `Y`'s
//! settle saw `X`'s claim, and the same holds the other way round (if it
//! found `X` already held, its compare-and-swap to free `X` failed and it
//! started over). A claim's unique number keeps a slot freed and claimed
//! again from passing for the claim a settle read. A claim is never
//! charged, so freeing one loses nothing; a held word changes hands only
//! at rest, in one compare-and-swap of the whole slot that a racing charge
//! makes fail. `weir-core/tests/loom.rs` runs the claim and replacement
//! races under every interleaving.
//!
//! # Changing the limit
//!
//! A table's limit can change in place ([`Keyed::reconfigure`]): one
//! publication that every call sees whole, old or new, over the same
//! slots, each word keeping what it holds (a window its start and count, a
//! GCRA word its arrival time), judged from then on by the new limit, as
//! are the at-rest checks that free a slot and the [`Overflow::Shared`]
//! word. The cell is the bloom array's, and it lives in the table: a table
//! shared between processes publishes its new limit to all of them. Its
//! kind, buckets, policy and seed never change. The method says what a
//! word's state means under the new limit and the bound across a change.
//!
//! # Without a 16-byte compare-and-swap
//!
//! The slots are `portable_atomic::AtomicU128`: `cmpxchg16b` on x86_64
//! (found at run time where the build does not assume it), `casp` or
//! `ldxp`/`stxp` on aarch64, and on other targets (i686, 32-bit Arm) a lock
//! from a table in this program's memory. [`LOCK_FREE`] tells. With a lock
//! the table is safe between threads but not lock-free, and could not be
//! shared with another process.
//!
//! # Faces
//!
//! The C library's `weir_keyed` (src/keyed.rs of the C crate) makes a
//! table on the heap, in the caller's memory, or in a region shared
//! between processes; see docs/keyed.md for which other faces have it.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::atomic::{AtomicU64, Ordering};
use crate::bloom::BloomLimit;
use crate::gcra;
use crate::limit_cell::{self, LimitCell, Refused};
use crate::rate::{self, Word};
use crate::sip::SipKey;
use crate::time::NEVER;
use portable_atomic::AtomicU128;

/// Slots in a bucket.
pub const SLOTS: usize = 8;
/// Candidate buckets per key.
pub const CHOICES: usize = 2;
/// A slot's bytes.
pub const SLOT_BYTES: usize = 16;
/// A bucket's bytes (and alignment): two 64-byte cache lines.
pub const BUCKET_BYTES: usize = SLOTS * SLOT_BYTES;
/// Slots in a 64-byte cache line: half a bucket.
const LINE: usize = SLOTS / 2;
/// The most buckets: a candidate is a 32-bit hash scaled to the count.
pub const MAX_BUCKETS: u64 = 1 << 32;

/// Whether a slot's 16-byte compare-and-swap is the CPU's own instruction
/// on this target and machine (not a lock).
pub fn lock_free() -> bool {
    AtomicU128::is_lock_free()
}

/// [`lock_free`] as known when building: true where the target always has
/// the instruction (aarch64, x86_64 built with `cmpxchg16b`). On x86_64
/// without it at build time the instruction is looked for at run time, so
/// ask [`lock_free`].
pub const LOCK_FREE: bool = AtomicU128::is_always_lock_free();

/// What a slot needs of its 16-byte cell: a read of the pair (tag, word)
/// and a compare-and-swap of the pair. [`AtomicU128`] is the one that
/// ships (tag in the high 64 bits); the loom test puts a model in its
/// place.
pub trait SlotCell {
    /// The pair (tag, word).
    fn get(&self) -> (u64, u64);
    /// Replaces `current` with `new` if the cell still holds `current`;
    /// otherwise fails with what it holds.
    fn swap_if(&self, current: (u64, u64), new: (u64, u64)) -> Result<(), (u64, u64)>;
}

#[inline(always)]
fn pack((tag, word): (u64, u64)) -> u128 {
    (u128::from(tag) << 64) | u128::from(word)
}

#[inline(always)]
fn unpack(value: u128) -> (u64, u64) {
    ((value >> 64) as u64, value as u64)
}

/// Sequentially consistent throughout: the claim protocol reasons about the
/// order of operations on different slots, not only on one.
impl SlotCell for AtomicU128 {
    #[inline(always)]
    fn get(&self) -> (u64, u64) {
        unpack(self.load(Ordering::SeqCst))
    }

    #[inline(always)]
    fn swap_if(&self, current: (u64, u64), new: (u64, u64)) -> Result<(), (u64, u64)> {
        self.compare_exchange(pack(current), pack(new), Ordering::SeqCst, Ordering::SeqCst)
            .map(|_| ())
            .map_err(unpack)
    }
}

/// One bucket of [`SLOTS`] slots, aligned to its 128 bytes.
#[repr(C, align(128))]
#[derive(Debug)]
pub struct KeyedBucket<C = AtomicU128>(pub [C; SLOTS]);

impl KeyedBucket {
    /// A bucket of free slots. A `const fn`, so that a program with no
    /// allocator can hold a table's buckets in a `static`.
    pub const fn fresh() -> KeyedBucket {
        KeyedBucket([
            AtomicU128::new(0),
            AtomicU128::new(0),
            AtomicU128::new(0),
            AtomicU128::new(0),
            AtomicU128::new(0),
            AtomicU128::new(0),
            AtomicU128::new(0),
            AtomicU128::new(0),
        ])
    }
}

/// What a call answers when its key has no slot and neither candidate
/// bucket has room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Refuse it.
    Refuse,
    /// Admit it.
    Admit,
    /// Decide it on one word that every overflowing key shares
    /// ([`KeyedCounters`]), of the table's limit: the overflowing keys are
    /// limited together, never more than one key's limit for all of them.
    Shared,
}

/// Why a keyed table could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyedError {
    /// The bucket count is 0, above [`MAX_BUCKETS`], or the buckets do not
    /// fit the address space.
    Buckets,
    /// The buckets could not be allocated.
    NoMemory,
    /// The store holds fewer buckets than the shape.
    TooSmall,
    /// A new limit of the other word kind ([`Keyed::reconfigure`]): a rate
    /// word's bits read as a GCRA word's (or the reverse) mean nothing.
    KindChange,
    /// A new GCRA limit on another tick (`shift`) than the table's
    /// ([`Keyed::reconfigure`]): an arrival time stored in ticks of
    /// 2^-shift ns would be misread by 2^(shift' − shift). Every rate up to
    /// 7,812,500 a second is on tick 0, so two such limits always agree.
    TickChange,
}

impl KeyedError {
    /// The status code (`weir_status`, in include/weir.h) the C library
    /// answers for this error: one mapping, read by every face.
    pub const fn code(self) -> i32 {
        match self {
            KeyedError::Buckets => 450,
            KeyedError::NoMemory => 6,
            KeyedError::TooSmall => 50,
            KeyedError::KindChange => 454,
            KeyedError::TickChange => 455,
        }
    }
}

/// What one call decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The key's own word admitted it.
    Allowed,
    /// The key's own word refused it (or the call was invalid: a negative
    /// `now`, a count outside 1..=burst).
    Refused,
    /// The table overflowed, and the [`Overflow`] policy answered this
    /// (true: admitted).
    Overflowed(bool),
}

impl Decision {
    /// Whether the call was admitted.
    pub fn allowed(self) -> bool {
        matches!(self, Decision::Allowed | Decision::Overflowed(true))
    }
}

/// The words beside a table's slots: the claim numbers, the overflow count
/// and the [`Overflow::Shared`] word. With the slots, they are the table's
/// whole state.
#[derive(Debug, Default)]
pub struct KeyedCounters {
    claims: AtomicU64,
    overflows: AtomicU64,
    shared: AtomicU64,
}

impl KeyedCounters {
    /// Fresh counters: no claims, no overflows, a fresh shared word.
    pub const fn new() -> KeyedCounters {
        KeyedCounters {
            claims: AtomicU64::new(0),
            overflows: AtomicU64::new(0),
            shared: AtomicU64::new(0),
        }
    }

    /// How many calls overflowed, whatever the policy answered.
    pub fn overflows(&self) -> u64 {
        self.overflows.load(Ordering::Relaxed)
    }

    /// A number no other claim on this table has had (until 2^64 claims).
    fn next_claim(&self) -> u64 {
        self.claims.fetch_add(1, Ordering::Relaxed)
    }
}

/// How a keyed table is laid out and keyed: everything but its slots and
/// counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyedShape {
    buckets: u64,
    limit: BloomLimit,
    overflow: Overflow,
    sip: SipKey,
}

/// The tag bit that marks a claim.
const CLAIM: u64 = 1;

/// A key's candidate slots, numbered in the order every call for the key
/// reads them: its home line (half) of `b1`, its home line of `b2`, then
/// the other line of `b1` and of `b2` (when `b1` = `b2`, its home line then
/// the other: 8 slots).
struct Candidates<'a, C> {
    lines: [&'a [C; LINE]; 2 * CHOICES],
    count: usize,
}

impl<'a, C> Candidates<'a, C> {
    #[inline(always)]
    fn new(first: &'a [C; SLOTS], second: Option<&'a [C; SLOTS]>, homes: [usize; CHOICES]) -> Self {
        let line = |bucket: &'a [C; SLOTS], half: usize| -> &'a [C; LINE] {
            match bucket[half * LINE..][..LINE].try_into() {
                Ok(line) => line,
                Err(_) => unreachable!(),
            }
        };
        let (a, b) = (line(first, homes[0]), line(first, homes[0] ^ 1));
        match second {
            Some(second) => Candidates {
                lines: [a, line(second, homes[1]), b, line(second, homes[1] ^ 1)],
                count: 2 * SLOTS,
            },
            None => Candidates {
                lines: [a, b, a, b],
                count: SLOTS,
            },
        }
    }

    /// The candidate slot numbered `at` (below `count`).
    #[inline(always)]
    fn slot(&self, at: usize) -> &'a C {
        &self.lines[at / LINE % (2 * CHOICES)][at % LINE]
    }

    /// The candidate lines in the key's order: slot `at` is
    /// `lines()[at / LINE][at % LINE]`. Read line by line, a scan of every
    /// candidate works out no index.
    #[inline(always)]
    fn lines(&self) -> &[&'a [C; LINE]] {
        &self.lines[..self.count / LINE]
    }

    /// The candidate bucket of the slot numbered `at`: 0 for `b1`, 1 for
    /// `b2`.
    #[inline(always)]
    fn bucket(&self, at: usize) -> usize {
        if self.count == SLOTS {
            0
        } else {
            at / LINE % CHOICES
        }
    }
}

/// A slot the claim protocol may take: where it is and what it held.
#[derive(Clone, Copy)]
struct Room {
    at: usize,
    seen: (u64, u64),
}

/// What a settle did ([`KeyedShape::settle`]).
#[derive(Clone, Copy)]
enum Settled {
    /// It turned the key's lowest claim into the key's word, with the
    /// settling call's events charged: the call is admitted.
    Charged,
    /// A slot held the key already (numbered `.0`, its word `.1` when
    /// read); the key's claims were freed.
    Held(usize, u64),
    /// No claim of the key was left, or a compare-and-swap failed: the
    /// call starts over.
    Again,
}

impl KeyedShape {
    /// A table of `buckets` buckets ([`SLOTS`] slots each), every key's
    /// word limited by `limit` (a [`crate::gcra::GcraLimit`] for the GCRA
    /// kind, a [`crate::rate::RateLimit`] for the rate kind), overflowing
    /// by `overflow`, keyed by (`seed0`, `seed1`).
    pub fn new(
        buckets: u64,
        limit: impl Into<BloomLimit>,
        overflow: Overflow,
        seed0: u64,
        seed1: u64,
    ) -> Result<KeyedShape, KeyedError> {
        let bytes = usize::try_from(buckets)
            .ok()
            .and_then(|n| n.checked_mul(BUCKET_BYTES))
            .ok_or(KeyedError::Buckets)?;
        if buckets == 0 || buckets > MAX_BUCKETS || bytes > isize::MAX as usize {
            return Err(KeyedError::Buckets);
        }
        Ok(KeyedShape {
            buckets,
            limit: limit.into(),
            overflow,
            sip: SipKey::new(seed0, seed1),
        })
    }

    /// How many buckets the table has.
    pub fn buckets(&self) -> usize {
        self.buckets as usize
    }

    /// The limit every key's word applies, and so the words' kind.
    pub fn limit(&self) -> &BloomLimit {
        &self.limit
    }

    /// This shape with `limit` (of its kind and tick) in place of its own:
    /// the same buckets, keys and policy.
    fn judged_by(&self, limit: BloomLimit) -> KeyedShape {
        KeyedShape { limit, ..*self }
    }

    /// What an overflowing call answers.
    pub fn overflow(&self) -> Overflow {
        self.overflow
    }

    /// `key`'s fingerprint, candidate buckets and home line in each.
    #[inline(always)]
    fn probe(&self, key: &[u8]) -> (u64, [usize; CHOICES], [usize; CHOICES]) {
        let hash = self.sip.hash(key);
        let fingerprint = match hash & !CLAIM {
            0 => 2,
            print => print,
        };
        let pick = |half: u64| (((half & 0xffff_ffff) * self.buckets) >> 32) as usize;
        let home = |half: u64| ((half >> 1) & 1) as usize;
        (
            fingerprint,
            [pick(hash), pick(hash >> 32)],
            [home(hash), home(hash >> 32)],
        )
    }

    /// The candidate buckets of `key`, `b1` then `b2` (the same twice when
    /// they coincide).
    pub fn candidates(&self, key: &[u8]) -> [usize; CHOICES] {
        self.probe(key).1
    }

    /// Whether `key` may have `n` events at `now`, charging them if so:
    /// see [`Keyed::decide`]. `buckets` holds at least
    /// [`KeyedShape::buckets`] buckets (the table's panics otherwise).
    pub fn decide<C: SlotCell>(
        &self,
        buckets: &[KeyedBucket<C>],
        counters: &KeyedCounters,
        now: i64,
        key: &[u8],
        n: i64,
    ) -> Decision {
        let (fingerprint, [b1, b2], homes) = self.probe(key);
        let second = (b1 != b2).then(|| &buckets[b2].0);
        let candidates = Candidates::new(&buckets[b1].0, second, homes);
        // The common case, kept short: the key holds a slot. What the scan
        // reads is kept, so that a new key's room is judged without
        // reading its candidates again.
        let mut claimed = false;
        let mut seen = [(0, 0); CHOICES * SLOTS];
        for (line, cells) in candidates.lines().iter().enumerate() {
            for (i, cell) in cells.iter().enumerate() {
                let (tag, word) = cell.get();
                if tag == fingerprint {
                    return match self.charge(cell, fingerprint, word, now, n) {
                        Some(allowed) => answer(allowed),
                        // Forgotten at rest meanwhile: as if never there.
                        None => self.place(&candidates, counters, fingerprint, now, n, None),
                    };
                }
                seen[line * LINE + i] = (tag, word);
                claimed |= tag == fingerprint | CLAIM;
            }
        }
        self.place(
            &candidates,
            counters,
            fingerprint,
            now,
            n,
            Some((claimed, &seen)),
        )
    }

    /// [`KeyedShape::decide`] for a key its candidates did not hold when
    /// last read: `scanned` says whether that read saw a claim of the key
    /// and what it read in each candidate (numbered as
    /// [`Candidates::slot`]), or is `None` to read them again. Out of line,
    /// so that the common case (a key the table holds) stays short.
    #[inline(never)]
    fn place<C: SlotCell>(
        &self,
        candidates: &Candidates<'_, C>,
        counters: &KeyedCounters,
        fingerprint: u64,
        now: i64,
        n: i64,
        mut scanned: Option<(bool, &[(u64, u64); CHOICES * SLOTS])>,
    ) -> Decision {
        // The key's word once held, with this call's events charged. A
        // call a fresh word refuses (a negative `now`, `n` outside
        // 1..=burst) every word refuses: it takes no slot and settles
        // nothing.
        let Some(fresh) = self.fresh_charge(now, n) else {
            return Decision::Refused;
        };
        // This call's claim while a settle that gave up may have left it:
        // freed (unless it became the held slot) once the key is found
        // held, so that it does not keep a slot from other keys.
        let mut mine: Option<(usize, (u64, u64))> = None;
        'over: loop {
            // A slot the key holds, or a claim of it in progress; and, on
            // the first pass only, the values the caller's scan read.
            let (claimed, snapshot) = match scanned.take() {
                Some((claimed, seen)) => (claimed, Some(seen)),
                None => {
                    let mut claimed = false;
                    for cell in candidates.lines().iter().flat_map(|line| line.iter()) {
                        let (tag, word) = cell.get();
                        if tag == fingerprint {
                            if let Some((claimed_at, claim)) = mine.take() {
                                let _ = candidates.slot(claimed_at).swap_if(claim, (0, 0));
                            }
                            match self.charge(cell, fingerprint, word, now, n) {
                                Some(allowed) => return answer(allowed),
                                // Forgotten at rest meanwhile: as if never
                                // there.
                                None => continue 'over,
                            }
                        }
                        claimed |= tag == fingerprint | CLAIM;
                    }
                    (claimed, None)
                }
            };
            if !claimed {
                let Some(room) = self.room(candidates, snapshot, now) else {
                    // No claim of this call is left: it saw none of the
                    // key's, its own included.
                    counters.overflows.fetch_add(1, Ordering::Relaxed);
                    let allowed = match self.overflow {
                        Overflow::Refuse => false,
                        Overflow::Admit => true,
                        Overflow::Shared => self.charge_word(&counters.shared, now, n),
                    };
                    return Decision::Overflowed(allowed);
                };
                let claim = (fingerprint | CLAIM, counters.next_claim());
                if candidates.slot(room.at).swap_if(room.seen, claim).is_err() {
                    continue 'over;
                }
                mine = Some((room.at, claim));
            }
            match self.settle(candidates, fingerprint, fresh) {
                Settled::Charged => return Decision::Allowed,
                Settled::Held(at, word) => {
                    // The settle read every candidate after this call's
                    // claim and freed the key's claims: this call's is
                    // gone.
                    mine = None;
                    if let Some(allowed) =
                        self.charge(candidates.slot(at), fingerprint, word, now, n)
                    {
                        return answer(allowed);
                    }
                }
                Settled::Again => {}
            }
        }
    }

    /// Nanoseconds from `now` until `key` would be admitted one event: see
    /// [`Keyed::next`]. Reads the slots only.
    pub fn next<C: SlotCell>(&self, buckets: &[KeyedBucket<C>], now: i64, key: &[u8]) -> i64 {
        if now < 0 {
            return NEVER;
        }
        let (fingerprint, [b1, b2], _) = self.probe(key);
        let candidates = if b1 == b2 { &[b1][..] } else { &[b1, b2][..] };
        for &b in candidates {
            for cell in &buckets[b].0 {
                let (tag, word) = cell.get();
                if tag == fingerprint {
                    let word = AtomicU64::new(word);
                    return match &self.limit {
                        BloomLimit::Gcra(limit) => gcra::next(&word, limit, now),
                        BloomLimit::Window(limit) => rate::next(&word, limit, now),
                    };
                }
            }
        }
        // No word yet (or only a claim, never charged): a fresh word's.
        if self.fresh_word_allows(now, 1) {
            0
        } else {
            NEVER
        }
    }

    /// Settles the claims of `fingerprint` among its candidates: unless a
    /// slot holds the key already, every claim but the lowest is freed and
    /// the lowest becomes the key's word, `fresh` (a fresh word with the
    /// settling call's events charged). Any call for the key does this,
    /// for its own claim or another's, so none waits on another. The
    /// candidates are all read first, once; each write is then a
    /// compare-and-swap from the value that read saw, and when one fails
    /// the caller starts over.
    #[inline]
    fn settle<C: SlotCell>(
        &self,
        candidates: &Candidates<'_, C>,
        fingerprint: u64,
        fresh: u64,
    ) -> Settled {
        let claim = fingerprint | CLAIM;
        // The claims read: bit `at` set for a claim in slot `at`, its
        // number in `numbers[at]`.
        let mut claims = 0u32;
        let mut numbers = [0u64; CHOICES * SLOTS];
        let mut held = None;
        for (line, cells) in candidates.lines().iter().enumerate() {
            for (i, cell) in cells.iter().enumerate() {
                let (tag, word) = cell.get();
                let at = line * LINE + i;
                if tag == claim {
                    claims |= 1 << at;
                    numbers[at] = word;
                } else if tag == fingerprint && held.is_none() {
                    held = Some((at, word));
                }
            }
        }
        let free = |at: usize| candidates.slot(at).swap_if((claim, numbers[at]), (0, 0));
        let mut rest = claims;
        if let Some((at, word)) = held {
            // Held already: every claim of the key is freed (none was
            // ever charged).
            while rest != 0 {
                let _ = free(rest.trailing_zeros() as usize);
                rest &= rest - 1;
            }
            return Settled::Held(at, word);
        }
        if claims == 0 {
            return Settled::Again;
        }
        let lowest = claims.trailing_zeros() as usize;
        rest &= rest - 1;
        while rest != 0 {
            if free(rest.trailing_zeros() as usize).is_err() {
                return Settled::Again;
            }
            rest &= rest - 1;
        }
        match candidates
            .slot(lowest)
            .swap_if((claim, numbers[lowest]), (fingerprint, fresh))
        {
            Ok(()) => Settled::Charged,
            Err(_) => Settled::Again,
        }
    }

    /// The slot to claim among the key's candidates: in the bucket with
    /// more room (free slots and words at rest at `now`; ties to `b1`), a
    /// free slot before a word at rest, the first in the key's order (its
    /// home line first). `None` when neither has any. Judged on
    /// `snapshot` (what a scan read, numbered as [`Candidates::slot`]) when
    /// given, else on the slots read now. A snapshot may be stale: the
    /// claim is a compare-and-swap from the value judged, which fails if
    /// the slot changed since, and the caller then reads afresh.
    #[inline]
    fn room<C: SlotCell>(
        &self,
        candidates: &Candidates<'_, C>,
        snapshot: Option<&[(u64, u64); CHOICES * SLOTS]>,
        now: i64,
    ) -> Option<Room> {
        let mut best: [(usize, Option<Room>); CHOICES] = [(0, None); CHOICES];
        for (line, cells) in candidates.lines().iter().enumerate() {
            let bucket = &mut best[candidates.bucket(line * LINE)];
            for (i, cell) in cells.iter().enumerate() {
                let seen = match snapshot {
                    Some(snapshot) => snapshot[line * LINE + i],
                    None => cell.get(),
                };
                let free = seen.0 == 0;
                if !free && (seen.0 & CLAIM != 0 || !self.at_rest(seen.1, now)) {
                    continue;
                }
                bucket.0 += 1;
                if bucket.1.is_none() || (free && bucket.1.is_some_and(|r| r.seen.0 != 0)) {
                    bucket.1 = Some(Room {
                        at: line * LINE + i,
                        seen,
                    });
                }
            }
        }
        let [(first, a), (second, b)] = best;
        if second > first {
            b
        } else {
            a
        }
    }

    /// Whether a word holding `word` is at rest at `now`: it decides
    /// every later call as a fresh word does.
    #[inline]
    fn at_rest(&self, word: u64, now: i64) -> bool {
        match &self.limit {
            BloomLimit::Gcra(limit) => gcra::at_rest(word, limit, now),
            BloomLimit::Window(limit) => limit.at_rest(word, now),
        }
    }

    /// Whether a fresh word would admit `n` at `now`: false only for calls
    /// every word refuses (a negative `now`, `n` outside 1..=burst).
    fn fresh_word_allows(&self, now: i64, n: i64) -> bool {
        self.fresh_charge(now, n).is_some()
    }

    /// A fresh word with `n` events at `now` charged, or `None` if a fresh
    /// word refuses them.
    #[inline]
    fn fresh_charge(&self, now: i64, n: i64) -> Option<u64> {
        match &self.limit {
            BloomLimit::Gcra(limit) => gcra::take_n(&Fresh, limit, now, n).map(|(_, new)| new),
            BloomLimit::Window(limit) => rate::take_n(&Fresh, limit, now, n).map(|(_, new)| new),
        }
    }

    /// `n` events at `now` charged to one word, all or nothing.
    #[inline]
    fn charge_word<W: Word>(&self, word: &W, now: i64, n: i64) -> bool {
        match &self.limit {
            BloomLimit::Gcra(limit) => gcra::take_n(word, limit, now, n).is_some(),
            BloomLimit::Window(limit) => rate::take_n(word, limit, now, n).is_some(),
        }
    }

    /// [`KeyedShape::charge_word`] on the word of a slot held by
    /// `fingerprint`, whose word was `seen` when the slot was last read:
    /// `None` if the slot stopped being the key's before anything was
    /// charged.
    #[inline(always)]
    fn charge<C: SlotCell>(
        &self,
        cell: &C,
        fingerprint: u64,
        seen: u64,
        now: i64,
        n: i64,
    ) -> Option<bool> {
        let word = HeldWord {
            cell,
            tag: fingerprint,
            seen: core::cell::Cell::new(Some(seen)),
            lost: core::cell::Cell::new(false),
        };
        let allowed = self.charge_word(&word, now, n);
        (!word.lost.get()).then_some(allowed)
    }
}

fn answer(allowed: bool) -> Decision {
    if allowed {
        Decision::Allowed
    } else {
        Decision::Refused
    }
}

/// A slot's word as a [`Word`] for the words' own compare-and-swap loops,
/// for as long as the slot holds `tag`: each swap compares the whole slot.
/// Its first read answers `seen`, the word the scan that found the slot
/// read (a swap from a value since changed fails with the slot's value, as
/// from any stale read, so the slot is not read twice). Once the tag has
/// changed it reads as `u64::MAX`, a word every kind refuses (writing
/// nothing), and `lost` says so.
struct HeldWord<'a, C> {
    cell: &'a C,
    tag: u64,
    seen: core::cell::Cell<Option<u64>>,
    lost: core::cell::Cell<bool>,
}

impl<C: SlotCell> Word for HeldWord<'_, C> {
    #[inline(always)]
    fn get(&self) -> u64 {
        if let Some(word) = self.seen.take() {
            return word;
        }
        let (tag, word) = self.cell.get();
        if tag == self.tag {
            word
        } else {
            self.lost.set(true);
            u64::MAX
        }
    }

    #[inline(always)]
    fn swap_if(&self, current: u64, new: u64) -> Result<u64, u64> {
        match self.cell.swap_if((self.tag, current), (self.tag, new)) {
            Ok(()) => Ok(current),
            Err((tag, word)) if tag == self.tag => Err(word),
            Err(_) => {
                self.lost.set(true);
                Err(u64::MAX)
            }
        }
    }
}

/// A fresh word (0) that nothing else can charge: its one compare-and-swap
/// succeeds. [`KeyedShape::fresh_charge`] works out on it the word a new
/// key's slot takes.
struct Fresh;

impl Word for Fresh {
    #[inline(always)]
    fn get(&self) -> u64 {
        0
    }

    #[inline(always)]
    fn swap_if(&self, current: u64, _new: u64) -> Result<u64, u64> {
        Ok(current)
    }
}

/// The chance that a new key overflows a table of `slots` slots (in
/// buckets of [`SLOTS`]) holding `keys` active keys, placed two-choice: `s_8(keys
/// / B)²` with `B = slots / 8` buckets and `s_i` the fraction of buckets
/// holding `i` or more keys, from `s_i' = s_{i−1}² − s_i²`, `s_0 = 1`
/// (the limit for large tables, solved by fourth-order Runge–Kutta in 400
/// steps: within 10^-4 of its value, relatively, for every load up to
/// full). 1 when `slots` is under one bucket, or when `keys` fill every
/// slot.
pub fn overflow_chance(keys: f64, slots: f64) -> f64 {
    let buckets = slots / SLOTS as f64;
    // NaN too.
    if buckets.is_nan() || buckets < 1.0 {
        return 1.0;
    }
    // As many keys as slots (or more): no room for another. (It also keeps
    // the integration's steps short: at most 8 / 400 buckets' worth.)
    if keys >= slots {
        return 1.0;
    }
    let load = (keys / buckets).max(0.0);
    type S = [f64; SLOTS + 1];
    let slope = |s: &S| {
        let mut d = [0.0; SLOTS + 1];
        for i in 1..=SLOTS {
            d[i] = s[i - 1] * s[i - 1] - s[i] * s[i];
        }
        d
    };
    let step = |s: &S, d: &S, h: f64| {
        let mut out = *s;
        for i in 1..=SLOTS {
            out[i] += h * d[i];
        }
        out
    };
    const STEPS: usize = 400;
    let h = load / STEPS as f64;
    let mut s: S = [0.0; SLOTS + 1];
    s[0] = 1.0;
    for _ in 0..STEPS {
        let k1 = slope(&s);
        let k2 = slope(&step(&s, &k1, h / 2.0));
        let k3 = slope(&step(&s, &k2, h / 2.0));
        let k4 = slope(&step(&s, &k3, h));
        for i in 1..=SLOTS {
            s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    let full = s[SLOTS].clamp(0.0, 1.0);
    full * full
}

/// The fewest buckets for which [`overflow_chance`] of `keys` active keys
/// is at most `chance`; `None` if more than [`MAX_BUCKETS`] would be needed
/// (or `chance` is not above 0).
pub fn buckets_for(keys: u64, chance: f64) -> Option<u64> {
    let fits = |b: u64| overflow_chance(keys as f64, (b * SLOTS as u64) as f64) <= chance;
    if chance.is_nan() || chance <= 0.0 || !fits(MAX_BUCKETS) {
        return None;
    }
    // The chance falls as buckets are added: the least that fits.
    let (mut lo, mut hi) = (0u64, MAX_BUCKETS);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// A keyed table: its shape, its buckets in a store `S` (a `Vec` with the
/// `alloc` feature, or any `AsRef<[KeyedBucket]>`: a static array, a
/// borrowed slice) and its counters.
#[derive(Debug)]
pub struct Keyed<#[cfg(feature = "alloc")] S = Vec<KeyedBucket>, #[cfg(not(feature = "alloc"))] S> {
    /// The shape the table was made with; its limit is the one in force
    /// until the first [`Keyed::reconfigure`].
    shape: KeyedShape,
    /// The limit in force after a reconfiguration, published whole: two
    /// slots and a generation (see the bloom's [`crate::bloom::Bloom`],
    /// whose cell it is). It lives in the table, so a table laid in memory
    /// shared between processes has it there too.
    limit: LimitCell,
    buckets: S,
    counters: KeyedCounters,
}

#[cfg(feature = "alloc")]
impl Keyed {
    /// A table of `shape` over newly allocated free buckets.
    pub fn new(shape: KeyedShape) -> Result<Keyed, KeyedError> {
        let n = shape.buckets();
        let mut buckets = Vec::new();
        buckets
            .try_reserve_exact(n)
            .map_err(|_| KeyedError::NoMemory)?;
        buckets.extend((0..n).map(|_| KeyedBucket::fresh()));
        Ok(Keyed {
            shape,
            limit: LimitCell::new(),
            buckets,
            counters: KeyedCounters::new(),
        })
    }
}

impl<S: AsRef<[KeyedBucket]>> Keyed<S> {
    /// A table of `shape` over the caller's buckets, the first
    /// [`KeyedShape::buckets`] of them set free; any after them are left
    /// alone and never read. [`KeyedError::TooSmall`] for a store of fewer
    /// buckets.
    pub fn new_in(shape: KeyedShape, buckets: S) -> Result<Keyed<S>, KeyedError> {
        let slots = buckets.as_ref();
        if slots.len() < shape.buckets() {
            return Err(KeyedError::TooSmall);
        }
        for bucket in &slots[..shape.buckets()] {
            for slot in &bucket.0 {
                slot.store(0, Ordering::Relaxed);
            }
        }
        Ok(Keyed {
            shape,
            limit: LimitCell::new(),
            buckets,
            counters: KeyedCounters::new(),
        })
    }

    /// The table's shape, with the limit in force now (the one it was
    /// made with until a [`Keyed::reconfigure`]). A call that reads the
    /// shape and then decides on it ([`KeyedShape::decide`] over
    /// [`Keyed::store`] and [`Keyed::counters`]) is judged wholly by that
    /// limit, as [`Keyed::decide`] is by the one it reads.
    pub fn shape(&self) -> KeyedShape {
        match self.limit.get(&self.shape.limit) {
            None => self.shape,
            Some(limit) => self.shape.judged_by(limit),
        }
    }

    /// Gives every key's word a new limit, in place and at once: from the
    /// publication on, each call reads the old limit or the new one,
    /// wholly (two slots and a generation, so a call never waits for the
    /// change), and every word keeps what it holds. Safe beside the
    /// table's calls, from any thread, and, for a table laid in memory
    /// shared between processes, from any process: the limit lives in the
    /// table, so every process attached reads the one publication. Two
    /// reconfigurations run one after the other. The kind, bucket count,
    /// overflow policy and seed never change; the counters are kept.
    ///
    /// What a word decided under the old limit means under the new one
    /// (the bloom's rules, [`crate::bloom::Bloom::reconfigure`]):
    ///
    /// - A **rate word** keeps its window's start and count. The window is
    ///   read under the new limit: it expires `ceil(count × I')` after its
    ///   start (I' the new interval), and admits while its count is under
    ///   the new burst B'. A window that held more than B' events admits
    ///   nothing more until it expires.
    /// - A **GCRA word** keeps its theoretical arrival time (TAT), an
    ///   instant: a key's debt (TAT − now) carries over as time. Under the
    ///   new limit it admits once the debt is at most the new tolerance
    ///   less a token, and repays at the new rate.
    ///
    /// Which words are at rest, and so whose slots a new key may take: a
    /// slot is replaced only once its word rests under the limit in force
    /// at that call. A GCRA word rests once its TAT is at or before `now`,
    /// under any limit. A rate word rests once its window has expired under
    /// the limit in force (`count × I'` after its start): a quicker limit
    /// frees spent windows sooner, a slower one later. The
    /// [`Overflow::Shared`] word is judged by the limit in force too.
    ///
    /// The bound across a change at `c`, for one key (its word, or the
    /// shared word for the overflowing keys), counting each call under the
    /// limit that judged it: the old limit's admits in `[a, c)` keep its
    /// bound and the new limit's in `[c, b]` keep the new one (GCRA:
    /// `burst + floor(T × rate)` over `T` ns, the debt carried over only
    /// lowering the new one; rate: `B + floor(T / I)`, a window open at the
    /// change taking at most `B' − count` more); a stretch across `c` at
    /// most the two together. Exactness per key holds across changes as
    /// before (a key's admits are a lone word's given the same calls and
    /// the same limits), with one exception: a rate word forgotten at rest
    /// is fresh for good, where a lone word's spent window read under a
    /// slower limit later could stand open again; the key then gets a fresh
    /// window's admits, within the new limit's bound from the change.
    ///
    /// [`KeyedError::KindChange`] for a limit of the other word kind,
    /// [`KeyedError::TickChange`] for a GCRA limit on another tick; an
    /// error changes nothing.
    pub fn reconfigure(&self, limit: impl Into<BloomLimit>) -> Result<(), KeyedError> {
        let limit = match limit_cell::check(&self.shape.limit, limit.into()) {
            Ok(limit) => limit,
            Err(Refused::Kind) => return Err(KeyedError::KindChange),
            Err(Refused::Tick) => return Err(KeyedError::TickChange),
        };
        self.limit.publish(&limit);
        Ok(())
    }

    /// The table's counters.
    pub fn counters(&self) -> &KeyedCounters {
        &self.counters
    }

    /// Whether `key` may have `n` events at `now`, charging them to its
    /// word if so, all or nothing. A key without a slot takes one (a free
    /// one, or one whose word is at rest); when none is to be had the
    /// table overflows and its [`Overflow`] policy answers. A negative
    /// `now` or an `n` outside 1..=burst is refused and changes nothing.
    #[inline]
    pub fn decide(&self, now: i64, key: &[u8], n: i64) -> Decision {
        let reconfigured;
        let shape = match self.limit.get(&self.shape.limit) {
            None => &self.shape,
            Some(limit) => {
                reconfigured = self.shape.judged_by(limit);
                &reconfigured
            }
        };
        shape.decide(self.buckets.as_ref(), &self.counters, now, key, n)
    }

    /// Whether `key` may have one event at `now`: [`Keyed::decide`] with
    /// `n` = 1, admitted or not.
    #[inline]
    pub fn allow(&self, now: i64, key: &[u8]) -> bool {
        self.decide(now, key, 1).allowed()
    }

    /// Nanoseconds from `now` until `key` would be admitted one event by
    /// its own word, without charging anything: 0 if it would be now,
    /// [`NEVER`] for a negative `now`. A key the table does not hold
    /// answers 0, as a fresh word would: whether it would find a slot (or
    /// overflow) is not foreseen. Reads the slots only.
    pub fn next(&self, now: i64, key: &[u8]) -> i64 {
        self.shape().next(self.buckets.as_ref(), now, key)
    }

    /// The store holding the table's buckets.
    pub fn store(&self) -> &S {
        &self.buckets
    }

    /// The store holding the table's buckets, for its one owner (a C
    /// handle being laid in shared memory turns its pointer into an
    /// offset).
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.buckets
    }

    /// How many slots hold a key or a claim (a reading: it changes
    /// nothing). Idle words count until they are replaced.
    pub fn occupied(&self) -> usize {
        self.buckets.as_ref()[..self.shape.buckets()]
            .iter()
            .flat_map(|bucket| bucket.0.iter())
            .filter(|slot| slot.get().0 != 0)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gcra::GcraLimit;
    use crate::rate::RateLimit;
    use crate::time::SECOND;

    /// A table over an array of buckets: no allocator needed.
    fn table(
        buckets: u64,
        limit: impl Into<BloomLimit>,
        overflow: Overflow,
    ) -> Keyed<[KeyedBucket; 4]> {
        let shape = KeyedShape::new(buckets, limit, overflow, 7, 9).unwrap();
        Keyed::new_in(shape, core::array::from_fn(|_| KeyedBucket::fresh())).unwrap()
    }

    #[test]
    fn a_store_too_small_is_refused() {
        let shape = KeyedShape::new(5, GcraLimit::new(1.0, 1).unwrap(), Overflow::Admit, 0, 0);
        let store: [KeyedBucket; 4] = core::array::from_fn(|_| KeyedBucket::fresh());
        assert_eq!(
            Keyed::new_in(shape.unwrap(), store).err(),
            Some(KeyedError::TooSmall)
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(core::mem::size_of::<KeyedBucket>(), BUCKET_BYTES);
        assert_eq!(core::mem::align_of::<KeyedBucket>(), BUCKET_BYTES);
        assert_eq!(core::mem::size_of::<AtomicU128>(), SLOT_BYTES);
        // The CPU's own 16-byte compare-and-swap where promised; a lock on
        // the 32-bit targets CI runs (i686). Miri runs no CPU detection.
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) && !cfg!(miri) {
            assert!(lock_free());
        }
        if cfg!(target_arch = "x86") {
            assert!(!lock_free());
        }
        let limit = GcraLimit::new(1.0, 1).unwrap();
        let shape = |b| KeyedShape::new(b, limit, Overflow::Refuse, 0, 0);
        assert_eq!(shape(0), Err(KeyedError::Buckets));
        assert_eq!(shape(MAX_BUCKETS + 1), Err(KeyedError::Buckets));
        assert!(shape(1).is_ok());
    }

    #[test]
    fn a_key_keeps_its_word_and_overflow_follows_the_policy() {
        let limit = GcraLimit::new(1.0, 2).unwrap();
        for overflow in [Overflow::Refuse, Overflow::Admit, Overflow::Shared] {
            // One bucket: 8 slots for every key.
            let t = table(1, limit, overflow);
            for k in 0u64..8 {
                assert_eq!(t.decide(SECOND, &k.to_le_bytes(), 2), Decision::Allowed);
                assert_eq!(t.decide(SECOND, &k.to_le_bytes(), 1), Decision::Refused);
            }
            assert_eq!(t.occupied(), 8);
            let ninth = 8u64.to_le_bytes();
            let expect = match overflow {
                Overflow::Refuse => [false, false, false],
                Overflow::Admit => [true, true, true],
                Overflow::Shared => [true, true, false],
            };
            for want in expect {
                assert_eq!(t.decide(SECOND, &ninth, 1), Decision::Overflowed(want));
            }
            assert_eq!(t.counters().overflows(), 3);
            // A second on, key 0 is at rest only once its TAT (3 s) is
            // past: at 3 s the ninth key replaces an idle word.
            assert!(!t.allow(2 * SECOND, &ninth) || overflow != Overflow::Refuse);
            assert_eq!(t.decide(3 * SECOND, &ninth, 2), Decision::Allowed);
            assert_eq!(t.occupied(), 8);
            // Invalid calls change nothing and never overflow.
            let before = t.counters().overflows();
            assert_eq!(t.decide(-1, b"new", 1), Decision::Refused);
            assert_eq!(t.decide(SECOND, b"new", 3), Decision::Refused);
            assert_eq!(t.counters().overflows(), before);
        }
    }

    #[test]
    fn next_reads_the_key_s_word_and_changes_nothing() {
        // 2 a second, bursts of 2: spent at 1 s, one more at 1.5 s.
        let t = table(2, GcraLimit::new(2.0, 2).unwrap(), Overflow::Refuse);
        assert_eq!(
            t.next(SECOND, b"k"),
            0,
            "a key without a slot: a fresh word"
        );
        assert_eq!(t.decide(SECOND, b"k", 2), Decision::Allowed);
        assert_eq!(t.next(SECOND, b"k"), SECOND / 2);
        assert_eq!(t.next(SECOND, b"other"), 0);
        assert_eq!(t.next(-1, b"k"), NEVER);
        assert!(!t.allow(SECOND, b"k"), "the reading charged nothing");
        assert!(t.allow(SECOND + SECOND / 2, b"k"));
        let w = table(1, RateLimit::new(1.0, 1).unwrap(), Overflow::Refuse);
        assert!(w.allow(0, b"k"));
        let wait = w.next(0, b"k");
        assert!(wait > 0 && !w.allow(wait - 1, b"k") && w.next(wait, b"k") == 0);
    }

    #[test]
    fn the_rate_kind_replaces_expired_windows() {
        let limit = RateLimit::new(1.0, 1).unwrap();
        let t = table(1, limit, Overflow::Refuse);
        for k in 0u64..8 {
            assert!(t.allow(0, &k.to_le_bytes()));
        }
        assert!(!t.allow(SECOND / 2, b"late"));
        assert!(t.allow(SECOND + 512, b"late"));
        assert!(!t.allow(SECOND + 512, b"late"));
    }

    #[test]
    fn a_new_limit_judges_rest_the_shared_word_and_the_shape() {
        // Rate words, 1 a second, bursts of 1: eight keys fill the one
        // bucket at 0, their windows ending at 1 s.
        let t = table(1, RateLimit::new(1.0, 1).unwrap(), Overflow::Refuse);
        for k in 0u64..8 {
            assert!(t.allow(0, &k.to_le_bytes()));
        }
        assert_eq!(
            t.decide(SECOND / 2, b"ninth", 1),
            Decision::Overflowed(false)
        );
        // 4 a second: each window ends a quarter second after its start,
        // so at half a second every word rests and the ninth key has room.
        t.reconfigure(RateLimit::new(4.0, 1).unwrap()).unwrap();
        assert_eq!(*t.shape().limit(), RateLimit::new(4.0, 1).unwrap().into());
        assert_eq!(t.decide(SECOND / 2, b"ninth", 1), Decision::Allowed);
        assert_eq!(t.counters().overflows(), 1);

        // GCRA words, the shared word: 1 a second, bursts of 2, spent by
        // the overflowing keys at 1 s (its TAT 3 s); bursts of 4 take two
        // more at once, the debt of 2 s carried over.
        let t = table(1, GcraLimit::new(1.0, 2).unwrap(), Overflow::Shared);
        for k in 0u64..8 {
            assert_eq!(t.decide(SECOND, &k.to_le_bytes(), 2), Decision::Allowed);
        }
        assert_eq!(t.decide(SECOND, b"over", 2), Decision::Overflowed(true));
        assert_eq!(t.decide(SECOND, b"over", 1), Decision::Overflowed(false));
        t.reconfigure(GcraLimit::new(1.0, 4).unwrap()).unwrap();
        assert_eq!(t.decide(SECOND, b"over", 2), Decision::Overflowed(true));
        assert_eq!(t.decide(SECOND, b"over", 1), Decision::Overflowed(false));
        // A count above the old burst is the new limit's to take.
        assert_eq!(t.decide(5 * SECOND, b"0", 4), Decision::Allowed);
        assert_eq!(t.next(5 * SECOND, b"0"), SECOND);

        // Refused: the other kind, another tick; nothing changes.
        let before = t.shape();
        assert_eq!(
            t.reconfigure(RateLimit::new(1.0, 1).unwrap()),
            Err(KeyedError::KindChange)
        );
        assert_eq!(
            t.reconfigure(GcraLimit::new(1e9, 2).unwrap()),
            Err(KeyedError::TickChange)
        );
        assert_eq!(t.shape(), before);
        assert_eq!(KeyedError::KindChange.code(), 454);
        assert_eq!(KeyedError::TickChange.code(), 455);
    }

    #[test]
    fn the_formula() {
        let chance = |load: f64| overflow_chance(load * 8e6, 8e6);
        assert!((chance(0.5) / 2.754e-20 - 1.0).abs() < 1e-3);
        assert!((chance(0.62) / 1.9094e-9 - 1.0).abs() < 1e-3);
        assert!((chance(0.8) / 7.670e-3 - 1.0).abs() < 1e-3);
        assert_eq!(overflow_chance(1.0, 7.0), 1.0);
        assert_eq!(overflow_chance(8.0, 8.0), 1.0);
        assert_eq!(overflow_chance(1e300, 1e300), 1.0);
        assert!(chance(0.999) < 1.0);
        let b = buckets_for(1_000_000, 1e-9).unwrap();
        assert!(overflow_chance(1e6, (b * 8) as f64) <= 1e-9);
        assert!(overflow_chance(1e6, ((b - 1) * 8) as f64) > 1e-9);
    }

    #[test]
    fn next_reads_without_charging() {
        let limit = GcraLimit::new(1.0, 2).unwrap();
        let t = table(1, limit, Overflow::Refuse);
        // Unknown: a fresh word's answer, and nothing is taken.
        assert_eq!(t.next(SECOND, b"k"), 0);
        assert_eq!(t.occupied(), 0);
        assert_eq!(t.next(-1, b"k"), NEVER);
        assert_eq!(t.decide(SECOND, b"k", 2), Decision::Allowed);
        // Spent: the next token comes a second later; asking changes
        // nothing, and the word admits exactly then.
        for _ in 0..3 {
            assert_eq!(t.next(SECOND, b"k"), SECOND);
        }
        assert!(!t.allow(2 * SECOND - 1, b"k"));
        assert_eq!(t.next(2 * SECOND - 1, b"k"), 1);
        assert!(t.allow(2 * SECOND, b"k"));
        // The rate kind: the window's end.
        let rate = table(1, RateLimit::new(1.0, 1).unwrap(), Overflow::Refuse);
        assert!(rate.allow(0, b"r"));
        let wait = rate.next(0, b"r");
        assert!(wait > 0 && wait <= SECOND + 512, "{wait}");
        assert!(!rate.allow(wait - 1, b"r"));
        assert!(rate.allow(wait, b"r"));
    }
}
