//! C face of [`weir_core::bloom`]: the heap array (`weir_bloom`), an array
//! placed in caller memory with its own lines (`weir_bloom_place_in`), and
//! the same structure laid into caller memory as a region
//! (`weir_bloom_*_in`, and views of it).
//!
//! The firmware build (no `std`) has the placed array and the handle's
//! calls; the heap constructors and every region call are hosted-only (a
//! region is made to be shared with other programs, which words locked by
//! one program's critical section cannot be).

use core::ffi::c_void;
use static_assertions::const_assert_eq;

use crate::counts::{weir_counts, Tally};
use crate::gcra::{gcra_limit_in, weir_gcra_limit};
use crate::guard::{decide_counted, decide_or, free_handle, guard_status, on, reconfigure};
#[cfg(feature = "std")]
use crate::guard::{guard, new_handle, place_plain, plain_footprint, usable};
use crate::guard::{place_handle_with, placement, read_counts, start_counting, write_footprint};
use crate::guard::{Guarded, Handle};
use crate::rate::{limit_in, weir_rate_limit};
use crate::slots::Lines;
use crate::status::weir_status::{self, *};
use weir_core::bloom::{self, Bloom, BloomError, BloomLimit, BloomLine, BloomShape};
use weir_core::time::NEVER;

/// An array of 2^size_log2 one-word limiters for a key space too large to
/// give each key its own: per client address, API key or object name, in
/// fixed memory. Its words are of one kind, chosen when it is made: rate
/// words (`weir_rate`, fixed windows: `weir_bloom_new`) or GCRA words
/// (`weir_gcra`, token buckets, limit_req's shape: `weir_bloom_new_gcra`).
///
/// Layout (blocked). The words sit in 64-byte lines of 8. A key is hashed
/// once with SipHash-1-3 (64-bit output) under the caller's 128-bit seed:
/// its low bits pick the key's line, its high bits which `hashes` (k)
/// distinct words of it (one of the C(8, k) subsets, uniformly). So a
/// decision touches one cache line at every size. A key is allowed when
/// any of its k words allows, and each word that allows is charged.
/// SipHash is the keyed hash Rust's and Python's hash tables use against
/// flooding: without the secret key nobody can aim keys at the same words.
///
/// Bounds: a key alone gets exactly `burst` at once, at every phase (for
/// rate words, at every phase of their 512 ns grid). With k = 1 a key is
/// one word and gets at most the word's bound in any T ns, under any
/// contention: burst + floor(T / interval) for rate words, burst + floor(T
/// × rate / 10^9) for GCRA words (less if other keys share the word). With
/// k ≥ 2 concurrent calls for one key can each find a different word open,
/// and words shared with other keys fall out of step, so up to k × burst
/// may pass at once and k times the word's bound in any T ns.
///
/// False refusals. A key is refused early only when all k of its words are
/// spent by other keys. For N keys active in one window, each asking a
/// fraction f (0 < f ≤ 1) of its burst, a word overflows when m =
/// floor(1 / f) other keys share it. With M words, λ = 8N / M other keys
/// share a key's line on average, and the fraction of keys refused before
/// they have asked their share is at most about
///   F = Σ_{j≥0} e^−λ λ^j / j! × P_j,
/// P_j being the chance that j uniform k-subsets of 8 words cover each of
/// the key's k words at least m times; for f > 1/2 (m = 1)
///   P_j = Σ_{i=0..k} (−1)^i C(k, i) (C(8 − i, k) / C(8, k))^j.
/// At f = 1 nearly every such key is refused; below it only those asking
/// after their words fill. With k = 3: 50,000 keys in 2^20 words asking
/// their whole burst, F = 1.6 %; 10^6 keys in 2^24 words (128 MiB) asking
/// half of it, F = 0.03 % (2.3 % asking all of it).
///
/// Lock-free and safe to use from many threads at once (in the firmware
/// build, from the main loop and interrupt handlers: each word update takes
/// the build's critical section). Memory per handle:
/// 8 × 2^size_log2 bytes of heap (64-byte aligned) plus under 200 bytes.
/// size_log2 is WEIR_BLOOM_MIN_SIZE_LOG2 (3, one line) to
/// WEIR_BLOOM_MAX_SIZE_LOG2 (32: 32 GiB; 27, 1 GiB, on a 32-bit host),
/// hashes 1..WEIR_BLOOM_MAX_HASHES (8, a whole line).
/// Made by `weir_bloom_new` or `weir_bloom_new_gcra`, freed by
/// `weir_bloom_free`; for memory shared between processes see
/// `weir_bloom_init_in`.
///
/// Reconfigured in place: `weir_bloom_reconfigure` (rate words) and
/// `weir_bloom_reconfigure_gcra` (GCRA words) give every word a new limit in
/// one publication, each word keeping its window or its arrival time; a
/// heap or placed array can be reconfigured, a view of a region cannot
/// (its limit is the region's). The kind, size, hashes and seed never
/// change.
///
/// Placed with its own words: `weir_bloom_place_in` (or its gcra form) lays
/// the handle and its lines together in memory the caller owns
/// (`weir_bloom_place_footprint` bytes), an array private to the program,
/// as a heap one is: the firmware build's bloom, which has no heap and no
/// regions.
///
/// Placed over a region: a region laid by `weir_bloom_init_in` (or its gcra form) holds
/// an array, header and words, and no pointer; `weir_bloom_view_in` lays a
/// `weir_bloom *` over such a region in memory the caller owns (a view:
/// `weir_bloom_view_footprint` bytes, beside the region or anywhere else),
/// and every `weir_bloom_*` call takes it as it takes a heap array, its
/// counts included. The view's words are the region's: its decisions and
/// those of `weir_bloom_allow_in` on the region, or of other views of it
/// in this process or another, share one limiter. So a program with no
/// heap lays a region in a static array and views it; a process sharing a
/// region views it once and decides without reading the header each call.
pub struct weir_bloom(Guarded<Bloom<Lines>>);

impl Handle for weir_bloom {
    type State = Bloom<Lines>;
    fn guarded(&self) -> &Guarded<Self::State> {
        &self.0
    }
}

/// The largest size_log2 of a bloom array (2^32 words, 32 GiB).
pub const WEIR_BLOOM_MAX_SIZE_LOG2: u32 = 32;
/// The smallest size_log2 of a bloom array (8 words: one 64-byte line).
pub const WEIR_BLOOM_MIN_SIZE_LOG2: u32 = 3;
/// The alignment, in bytes, of a region for `weir_bloom_init_in`: a line.
pub const WEIR_BLOOM_ALIGN: usize = 64;
/// The layout version of a bloom region's header (2: blocked lines, with
/// a word kind). Regions of version 1 (weir 0.1) and any other are
/// refused with `WEIR_ERR_BLOOM_VERSION`.
pub const WEIR_BLOOM_VERSION: u32 = 2;
/// The most hashes (words per key) of a bloom array.
pub const WEIR_BLOOM_MAX_HASHES: u32 = 8;
/// The bytes of the header before the words of a bloom array laid into
/// caller memory.
pub const WEIR_BLOOM_HEADER_BYTES: usize = 64;

const_assert_eq!(WEIR_BLOOM_MAX_SIZE_LOG2, bloom::MAX_SIZE_LOG2);
const_assert_eq!(WEIR_BLOOM_MAX_HASHES, bloom::MAX_HASHES);
const_assert_eq!(WEIR_BLOOM_HEADER_BYTES, bloom::HEADER_WORDS * 8);
const_assert_eq!(WEIR_BLOOM_MIN_SIZE_LOG2, bloom::MIN_SIZE_LOG2);
const_assert_eq!(WEIR_BLOOM_ALIGN, core::mem::align_of::<BloomLine>());
const_assert_eq!(WEIR_BLOOM_ALIGN, bloom::LINE_BYTES);
const_assert_eq!(WEIR_BLOOM_VERSION as u64, bloom::VERSION);

/// The status for a bloom array's error.
pub(crate) fn bloom_status(error: BloomError) -> weir_status {
    weir_status::of(error.code())
}

/// The shape the arguments of `weir_bloom_new` and `weir_bloom_init_in`
/// describe.
fn shape_of(
    size_log2: u32,
    hashes: u32,
    limit: *const weir_rate_limit,
    seed0: u64,
    seed1: u64,
) -> Result<BloomShape, weir_status> {
    let limit = limit_in(limit)?;
    BloomShape::new(size_log2, hashes, limit, seed0, seed1).map_err(bloom_status)
}

/// The shape the arguments of `weir_bloom_new_gcra` and
/// `weir_bloom_init_gcra_in` describe.
fn gcra_shape_of(
    size_log2: u32,
    hashes: u32,
    limit: *const weir_gcra_limit,
    seed0: u64,
    seed1: u64,
) -> Result<BloomShape, weir_status> {
    let limit = gcra_limit_in(limit)?;
    BloomShape::new(size_log2, hashes, limit, seed0, seed1).map_err(bloom_status)
}

/// The caller's key as bytes, unless `key` is NULL (or `len` is larger
/// than any object can be).
#[inline]
pub(crate) fn key_at<'a>(key: *const c_void, len: usize) -> Option<&'a [u8]> {
    if key.is_null() || len > isize::MAX as usize {
        return None;
    }
    // SAFETY: `key` is non-NULL and, by the header's contract, points to
    // `len` readable bytes that stay valid for this call; `len` fits isize.
    Some(unsafe { core::slice::from_raw_parts(key.cast::<u8>(), len) })
}

/// The caller's region as lines: `WEIR_ERR_NULL` when NULL,
/// `WEIR_ERR_MISALIGNED` when not 64-byte aligned, `WEIR_ERR_TOO_LARGE`
/// when `len` is more than any object can be (above `isize::MAX`, or running
/// past the end of the address space). A trailing part shorter than a line
/// is left out.
#[cfg(feature = "std")]
#[inline]
pub(crate) fn region_at<'a>(
    mem: *const c_void,
    len: usize,
) -> Result<&'a [BloomLine], weir_status> {
    crate::atomic::shareable()?;
    usable(mem.cast::<BloomLine>())?;
    if len > isize::MAX as usize || (mem as usize).checked_add(len).is_none() {
        return Err(WEIR_ERR_TOO_LARGE);
    }
    let lines = len / core::mem::size_of::<BloomLine>();
    // SAFETY: `mem` is non-NULL and aligned for a BloomLine (64 bytes), and
    // `len` bytes from it, which the `lines` lines fit in, neither exceed
    // isize::MAX nor wrap the address space (all checked above); by the
    // header's contract they stay readable and writable for this call. weir
    // touches the region only through atomic operations, so other threads
    // and processes may use it at the same time; a BloomLine is 8 AtomicU64s
    // with no padding, and AtomicU64 has the size and bit validity of u64.
    Ok(unsafe { core::slice::from_raw_parts(mem.cast::<BloomLine>(), lines) })
}

/// `body` on the array laid at `mem` (`len` bytes) and the caller's key, or
/// `neutral` when the region does not hold a valid array or the key is
/// NULL.
#[cfg(feature = "std")]
fn on_region<R: Copy>(
    mem: *const c_void,
    len: usize,
    key: *const c_void,
    key_len: usize,
    neutral: R,
    body: impl FnOnce(&BloomShape, &[BloomLine], &[u8]) -> R,
) -> R {
    guard(neutral, || {
        let Some(key) = key_at(key, key_len) else {
            return neutral;
        };
        match region_at(mem, len).map(bloom::open_in) {
            Ok(Ok((shape, words))) => body(&shape, words, key),
            _ => neutral,
        }
    })
}

/// Makes a bloom array of 2^`size_log2` fresh rate words (the window
/// kind), `hashes` words per key, each limited by `*limit`, keyed by
/// (`seed0`, `seed1`) — pass secret random values — and writes it to
/// `*out`. `WEIR_ERR_NULL` if `out` or `limit` is NULL;
/// `WEIR_ERR_RATE_LIMIT_INVALID` for a limit whose fields are out of range;
/// `WEIR_ERR_BLOOM_SIZE` for size_log2 above WEIR_BLOOM_MAX_SIZE_LOG2
/// (above 27 on a 32-bit host, where a larger array does not fit the
/// address space); `WEIR_ERR_BLOOM_TOO_FEW_WORDS` for size_log2 below
/// WEIR_BLOOM_MIN_SIZE_LOG2 (fewer words than a line);
/// `WEIR_ERR_BLOOM_HASHES` for hashes 0 or above WEIR_BLOOM_MAX_HASHES;
/// `WEIR_ERR_NO_MEMORY`. `*out` is written only on success. The limit is
/// copied: the caller may change or free it after.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_new(
    size_log2: u32,
    hashes: u32,
    limit: *const weir_rate_limit,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_bloom,
) -> weir_status {
    new_handle(out, || {
        let shape = shape_of(size_log2, hashes, limit, seed0, seed1)?;
        let bloom = Bloom::new(shape).map_err(bloom_status)?;
        Ok(weir_bloom(Guarded::new(bloom.map_store(Lines::heap))))
    })
}

/// `weir_bloom_new` with GCRA words (`weir_gcra`, the gcra kind): each word
/// a token bucket limited by `*limit`. `WEIR_ERR_GCRA_LIMIT_INVALID` for a
/// limit whose fields are out of range; otherwise checked and answered as
/// `weir_bloom_new`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_new_gcra(
    size_log2: u32,
    hashes: u32,
    limit: *const weir_gcra_limit,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_bloom,
) -> weir_status {
    new_handle(out, || {
        let shape = gcra_shape_of(size_log2, hashes, limit, seed0, seed1)?;
        let bloom = Bloom::new(shape).map_err(bloom_status)?;
        Ok(weir_bloom(Guarded::new(bloom.map_store(Lines::heap))))
    })
}

/// The bytes and the alignment of a bloom array of 2^`size_log2` words
/// placed with `weir_bloom_place_in` or `weir_bloom_place_gcra_in`, of
/// either kind, written to `*bytes` and `*align`: the handle, then its
/// lines of 8 words from the next multiple of 64 bytes (`*align` is
/// WEIR_BLOOM_ALIGN, 64). `WEIR_ERR_BLOOM_SIZE` or
/// `WEIR_ERR_BLOOM_TOO_FEW_WORDS` for a size_log2 `weir_bloom_new` refuses,
/// `WEIR_ERR_TOO_LARGE` when the footprint does not fit the address space,
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align`
/// pointer; nothing is written on an error. The region of
/// `weir_bloom_footprint` is another thing: a header and words, no handle.
#[no_mangle]
pub extern "C" fn weir_bloom_place_footprint(
    size_log2: u32,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    guard_status(|| {
        let words =
            bloom::footprint_words(size_log2).ok_or(if size_log2 < bloom::MIN_SIZE_LOG2 {
                WEIR_ERR_BLOOM_TOO_FEW_WORDS
            } else {
                WEIR_ERR_BLOOM_SIZE
            })?;
        // The region's words less its header line: the array's lines.
        let lines = words / bloom::LINE_WORDS - 1;
        let (total, at, _) = placement::<weir_bloom, BloomLine>(lines)?;
        write_footprint((total, at), bytes, align)
    })
}

/// Lays the array `shape` describes in `len` bytes at `mem`: the handle,
/// then its lines, every word fresh.
fn place(
    mem: *mut c_void,
    len: usize,
    out: *mut *mut weir_bloom,
    shape: impl FnOnce() -> Result<BloomShape, weir_status>,
) -> weir_status {
    place_handle_with(
        mem,
        len,
        out,
        BloomLine::fresh,
        || {
            let shape = shape()?;
            Ok((shape.lines(), shape))
        },
        |shape, lines| {
            let bloom = Bloom::new_in(shape, Lines::placed(lines)).map_err(bloom_status)?;
            Ok(weir_bloom(Guarded::new(bloom)))
        },
    )
}

/// Lays a bloom array of 2^`size_log2` fresh rate words (the window kind)
/// in memory the caller owns, handle and words together (`len` bytes at
/// `mem`, at least the footprint `weir_bloom_place_footprint` answers, at a
/// multiple of its alignment, 64), and writes to `*out` a `weir_bloom *`
/// that every `weir_bloom_*` call takes as it takes a heap array: the same
/// answers to the same calls, counts included. The arguments are those of
/// `weir_bloom_new`. The array is this program's own: its lines hold
/// words and no header, so it is not a region (`weir_bloom_*_in` refuse
/// it) and is not to be shared with another program; for that, lay a
/// region with `weir_bloom_init_in`. On a host its words are lock-free as
/// a heap array's; in the firmware build, where this is how a bloom is
/// made, each word update takes the build's critical section, as a
/// `weir_rate` word's does (docs/firmware.md). The memory stays the
/// caller's: `weir_bloom_free` on it does nothing, and `mem` must stay in
/// place while the array is used. Checked in this order, and nothing is
/// written on an error: `out` (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), the
/// arguments as `weir_bloom_new` checks them (`WEIR_ERR_NULL` for a NULL
/// limit, `WEIR_ERR_RATE_LIMIT_INVALID`, `WEIR_ERR_BLOOM_SIZE`,
/// `WEIR_ERR_BLOOM_TOO_FEW_WORDS`, `WEIR_ERR_BLOOM_HASHES`),
/// `WEIR_ERR_TOO_LARGE` for a footprint beyond the address space, `mem`
/// NULL (`WEIR_ERR_NULL`), `mem` misaligned (`WEIR_ERR_PLACED_MISALIGNED`),
/// `len` below the footprint (`WEIR_ERR_PLACED_TOO_SMALL`). The limit is
/// copied.
#[no_mangle]
pub extern "C" fn weir_bloom_place_in(
    mem: *mut c_void,
    len: usize,
    size_log2: u32,
    hashes: u32,
    limit: *const weir_rate_limit,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_bloom,
) -> weir_status {
    place(mem, len, out, || {
        shape_of(size_log2, hashes, limit, seed0, seed1)
    })
}

/// `weir_bloom_place_in` with GCRA words (the gcra kind), each limited by
/// `*limit`: its arguments checked as `weir_bloom_new_gcra` checks them
/// (`WEIR_ERR_GCRA_LIMIT_INVALID` for a limit whose fields are out of
/// range), the rest as `weir_bloom_place_in`.
#[no_mangle]
pub extern "C" fn weir_bloom_place_gcra_in(
    mem: *mut c_void,
    len: usize,
    size_log2: u32,
    hashes: u32,
    limit: *const weir_gcra_limit,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_bloom,
) -> weir_status {
    place(mem, len, out, || {
        gcra_shape_of(size_log2, hashes, limit, seed0, seed1)
    })
}

/// The bytes and the alignment of a view (`weir_bloom_view_in`), written
/// to `*bytes` and `*align`: the handle alone, whatever the region's shape
/// (its words stay in the region). `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED`
/// for a bad `bytes` or `align` pointer; nothing is written on an error.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_view_footprint(bytes: *mut usize, align: *mut usize) -> weir_status {
    plain_footprint::<weir_bloom>(bytes, align)
}

/// Lays in memory the caller owns (`len` bytes at `mem`, at least the
/// footprint `weir_bloom_view_footprint` answers, at a multiple of its
/// alignment) a `weir_bloom *` over the array laid in the region of
/// `region_len` bytes at `region` by `weir_bloom_init_in` or
/// `weir_bloom_init_gcra_in` (here or in another process), and writes it
/// to `*out`. Every `weir_bloom_*` call takes it: its words are the
/// region's, shared with `weir_bloom_allow_in` and every other view of the
/// region, and its counts (`weir_bloom_start_counting`) are the view's
/// own, kept in `mem`, not in the region, whose layout (version 2) does not
/// change. The header is read once, here: lay the region again and view it
/// again (a view over a region laid again keeps deciding with the shape it
/// read, over the same words, never outside them). Both memories stay the
/// caller's: `weir_bloom_free` on a view does nothing, and the region must
/// stay mapped, and `mem` in place, while the view is used. Checked in this
/// order, and nothing is written on an error: `out` (`WEIR_ERR_NULL`,
/// `WEIR_ERR_MISALIGNED`), the region as `weir_bloom_check_in` checks it
/// (its statuses: `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`,
/// `WEIR_ERR_BLOOM_FOREIGN`, ..., `WEIR_ERR_WORDS_NOT_SHAREABLE`), a `mem`
/// whose footprint overlaps the region (`WEIR_ERR_PLACED_OVERLAP`), then
/// `mem` NULL (`WEIR_ERR_NULL`), `mem` misaligned
/// (`WEIR_ERR_PLACED_MISALIGNED`), `len` below the footprint
/// (`WEIR_ERR_PLACED_TOO_SMALL`).
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_view_in(
    mem: *mut c_void,
    len: usize,
    region: *mut c_void,
    region_len: usize,
    out: *mut *mut weir_bloom,
) -> weir_status {
    place_plain(mem, len, out, || {
        let bloom = Bloom::attach(region_at(region, region_len)?).map_err(bloom_status)?;
        // The view's bytes (at most its footprint from `mem`) must lie
        // outside the region: checked on the addresses alone, before
        // anything is written.
        let (start, end) = (region as usize, region as usize + region_len);
        let view = mem as usize;
        let view_end = view.saturating_add(core::mem::size_of::<weir_bloom>());
        if !mem.is_null() && view < end && start < view_end {
            return Err(WEIR_ERR_PLACED_OVERLAP);
        }
        let view = weir_bloom(Guarded::new(bloom.map_store(Lines::placed)));
        // Its limit is the region's: `weir_bloom_reconfigure` refuses it.
        view.0.mark_in_region();
        Ok(view)
    })
}

/// Frees a bloom array. NULL is accepted and ignored, and so is a view
/// (`weir_bloom_view_in`): its memory, and its region's, are the caller's.
#[no_mangle]
pub extern "C" fn weir_bloom_free(bloom: *mut weir_bloom) {
    free_handle(bloom)
}

/// Whether the key (`len` bytes at `key`) may have one event at `now`,
/// charging each of its words that allows. A zero-length key is a key (the
/// empty one). The key is hashed during the call and not kept: its memory
/// is the caller's again on return. Refuses (false) a NULL bloom or key and
/// a negative `now`; a refusal writes nothing.
#[no_mangle]
pub extern "C" fn weir_bloom_allow(
    bloom: *const weir_bloom,
    now: i64,
    key: *const c_void,
    len: usize,
) -> bool {
    let counted = move || allow_counted(bloom, now, key, len);
    decide_or(bloom, false, counted, move |bloom| {
        key_at(key, len).is_some_and(|key| bloom.allow(now, key))
    })
}

/// `weir_bloom_allow` on an array that counts (or is poisoned): out of
/// line, with the allow's own arguments, so that the allow reaches it by a
/// jump (see `decide_or`). A NULL key or a negative `now` is an error.
#[cold]
#[inline(never)]
extern "C" fn allow_counted(
    bloom: *const weir_bloom,
    now: i64,
    key: *const c_void,
    len: usize,
) -> bool {
    let usable = key_at(key, len).is_some() && now >= 0;
    let counted = move |_: &_, &allowed: &bool| match (allowed, usable) {
        (true, _) => Tally::Admitted(1.0),
        (false, true) => Tally::Refused,
        (false, false) => Tally::Error,
    };
    decide_counted(bloom, false, counted, move |bloom| {
        key_at(key, len).is_some_and(|key| bloom.allow(now, key))
    })
}

/// Nanoseconds from `now` until the key would be allowed: the soonest any
/// of its words frees up, 0 if one would now. Reads only. INT64_MAX for a
/// NULL bloom or key or a negative `now`.
#[no_mangle]
pub extern "C" fn weir_bloom_next(
    bloom: *const weir_bloom,
    now: i64,
    key: *const c_void,
    len: usize,
) -> i64 {
    on(bloom, NEVER, |bloom| {
        key_at(key, len).map_or(NEVER, |key| bloom.next(now, key))
    })
}

/// Gives every word of a bloom array of rate words (`weir_bloom_new`,
/// `weir_bloom_place_in`) the limit `*limit`, in place: the array's next
/// decisions are judged by it. One publication: a decision racing it reads
/// the old limit or the new one, wholly, never a mix of the two; safe beside
/// the array's other calls from any thread (not `weir_bloom_free`), and its
/// decisions stay lock-free (two reconfigurations of one array run one
/// after the other). Nothing is written to the words: each keeps its window,
/// its start and its count, which are read under the new limit. So a window
/// admits while its count is under the new burst (one that already holds
/// more admits nothing more) and expires `count × I'` after its start (I'
/// the new interval, 1 / rate'): a quicker rate ends a spent window sooner,
/// a slower one later. The size, the hashes, the hash keys, the counts
/// (`weir_bloom_read_counts`) and whether it counts are kept.
///
/// The bound across a change at c, for a key with one hash (k times it
/// with k): the decisions judged by the old limit in [a, c) admit at most
/// burst + floor((c − a) / I), those judged by the new one in [c, b] at
/// most burst' + floor((b − c) / I') (a window open at the change takes at
/// most burst' − count more, each pushing its end I' past c); across any
/// number of changes, at most 2 × the largest burst + floor(T / the
/// shortest interval) in any T ns. A decision racing the change is judged
/// wholly by the limit it read, and counts under that limit.
///
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bloom`;
/// `WEIR_ERR_REGION_UNSUPPORTED` for a view of a region
/// (`weir_bloom_view_in`: its limit is the region header's, read by every
/// process that maps it; lay a new region for another limit);
/// `WEIR_ERR_POISONED` for a poisoned array; `WEIR_ERR_NULL` for a NULL
/// `limit`, `WEIR_ERR_RATE_LIMIT_INVALID` for one whose fields are out of
/// range; `WEIR_ERR_BLOOM_KIND_CHANGE` for an array of GCRA words (see
/// `weir_bloom_reconfigure_gcra`). An error changes nothing. It counts
/// nothing. The limit is copied.
#[no_mangle]
pub extern "C" fn weir_bloom_reconfigure(
    bloom: *mut weir_bloom,
    limit: *const weir_rate_limit,
) -> weir_status {
    reconfigure(bloom.cast_const(), |bloom| {
        let limit = limit_in(limit)?;
        bloom
            .reconfigure(BloomLimit::Window(limit))
            .map_err(bloom_status)
    })
}

/// `weir_bloom_reconfigure` for an array of GCRA words
/// (`weir_bloom_new_gcra`, `weir_bloom_place_gcra_in`): every word takes
/// `*limit` in place, in one publication, keeping its theoretical arrival
/// time (TAT), an instant on the caller's clock. A key's debt (TAT − now)
/// carries over as time: it may take again once the debt is at most the
/// new bucket less a token ((burst' − 1) / rate'), and repays at the new
/// rate; an idle key (TAT at or before now) is a full bucket under either
/// limit. The size, hashes, seed and counts are kept.
///
/// The bound across any number of changes, for a key with one hash (k times
/// it with k): each admit moves the TAT to max(TAT, t) plus a token of the
/// limit that judged it, and only to at most t plus that limit's bucket;
/// so over judged instants in [a, b], in any order, the admits' tokens,
/// each worth 1 / rate of the limit that judged it, sum to at most (b − a)
/// plus the largest bucket (burst / rate) among those limits. Across one
/// change at c: the old limit's admits in [a, c) keep its bound, burst +
/// floor((c − a) × rate), the new one's in [c, b] the new one's, burst' +
/// floor((b − c) × rate') (the debt carried over only lowers it).
///
/// Checked as `weir_bloom_reconfigure`, with `WEIR_ERR_GCRA_LIMIT_INVALID`
/// for a limit whose fields are out of range, `WEIR_ERR_BLOOM_KIND_CHANGE`
/// for an array of rate words, and `WEIR_ERR_BLOOM_TICK_CHANGE` for a limit
/// on another tick (its `shift`) than the array's: the stored arrival times
/// would be misread. Every rate up to 7,812,500 a second has tick 0, so
/// two such limits always agree. An error changes nothing.
#[no_mangle]
pub extern "C" fn weir_bloom_reconfigure_gcra(
    bloom: *mut weir_bloom,
    limit: *const weir_gcra_limit,
) -> weir_status {
    reconfigure(bloom.cast_const(), |bloom| {
        let limit = gcra_limit_in(limit)?;
        bloom
            .reconfigure(BloomLimit::Gcra(limit))
            .map_err(bloom_status)
    })
}

/// The bytes a region for a bloom array of 2^`size_log2` words needs, of
/// either kind: WEIR_BLOOM_HEADER_BYTES + 8 × 2^size_log2. 0 when
/// size_log2 is below WEIR_BLOOM_MIN_SIZE_LOG2 or above
/// WEIR_BLOOM_MAX_SIZE_LOG2, or the region does not fit the address space
/// (size_log2 above 27 on a 32-bit host).
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_footprint(size_log2: u32) -> usize {
    guard(0, || {
        bloom::footprint_words(size_log2)
            .and_then(|words| words.checked_mul(8))
            .unwrap_or(0)
    })
}

/// Lays a bloom array of rate words (the window kind) into the caller's
/// memory: `len` bytes at `mem`, 64-byte aligned (WEIR_BLOOM_ALIGN, so
/// that each line of 8 words is one cache line; page-aligned memory from
/// mmap is), at least `weir_bloom_footprint(size_log2)` long. Writes a
/// 64-byte header, then zeroes the words; bytes past the footprint are left
/// alone. The header, version 2 (WEIR_BLOOM_VERSION), is 8 little-endian
/// 64-bit words: the magic "weir:blm"; the version; the word kind (1
/// window, 2 gcra) | the line size in bytes (64) << 32; size_log2 |
/// hashes << 8 | the GCRA limit's shift << 16 (0 for the window kind); the
/// limit's two other fields (window: interval_ns, then interval_frac |
/// burst << 32; gcra: per_token, then tolerance); seed0; seed1. The region
/// holds no pointer: map it MAP_SHARED and every process that maps it
/// (forked or not, at any address) shares one limiter through
/// `weir_bloom_allow_in`, lock-free, or through a `weir_bloom *` laid over
/// it with `weir_bloom_view_in`. Lay it once, before anyone uses it;
/// laying it again resets it. The arguments are checked as `weir_bloom_new`
/// checks them; then `WEIR_ERR_NULL` for a NULL `mem`,
/// `WEIR_ERR_MISALIGNED` for one not 64-byte aligned, `WEIR_ERR_TOO_LARGE`
/// for a `len` no object can have (above PTRDIFF_MAX),
/// `WEIR_ERR_BLOOM_TOO_SMALL`; `WEIR_ERR_WORDS_NOT_SHAREABLE` on a target
/// whose words take a lock (see `weir_words_shareable`). Nothing is written
/// unless it returns `WEIR_OK`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_init_in(
    mem: *mut c_void,
    len: usize,
    size_log2: u32,
    hashes: u32,
    limit: *const weir_rate_limit,
    seed0: u64,
    seed1: u64,
) -> weir_status {
    guard_status(|| {
        let shape = shape_of(size_log2, hashes, limit, seed0, seed1)?;
        bloom::init_in(region_at(mem, len)?, &shape).map_err(bloom_status)
    })
}

/// `weir_bloom_init_in` with GCRA words (the gcra kind), each limited by
/// `*limit`: checked as `weir_bloom_new_gcra` checks its arguments, then as
/// `weir_bloom_init_in` checks the region. `weir_bloom_allow_in` and
/// `weir_bloom_next_in` read the kind from the header.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_init_gcra_in(
    mem: *mut c_void,
    len: usize,
    size_log2: u32,
    hashes: u32,
    limit: *const weir_gcra_limit,
    seed0: u64,
    seed1: u64,
) -> weir_status {
    guard_status(|| {
        let shape = gcra_shape_of(size_log2, hashes, limit, seed0, seed1)?;
        bloom::init_in(region_at(mem, len)?, &shape).map_err(bloom_status)
    })
}

/// Whether `len` bytes at `mem` hold a bloom array laid by
/// `weir_bloom_init_in` or `weir_bloom_init_gcra_in`: `WEIR_OK`, or
/// `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED` (not 64-byte aligned),
/// `WEIR_ERR_BLOOM_FOREIGN` (no valid header),
/// `WEIR_ERR_BLOOM_VERSION` (another layout version, weir 0.1's
/// included), `WEIR_ERR_BLOOM_KIND` (a word kind this library does not
/// know), `WEIR_ERR_BLOOM_LINE_SIZE` (lines of another size),
/// `WEIR_ERR_BLOOM_TOO_SMALL` (shorter than the header or its shape),
/// `WEIR_ERR_TOO_LARGE` (a `len` above PTRDIFF_MAX, which no region has). A
/// process that attaches to an existing region checks it once here.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_check_in(mem: *const c_void, len: usize) -> weir_status {
    guard_status(|| {
        bloom::open_in(region_at(mem, len)?).map_err(bloom_status)?;
        Ok(())
    })
}

/// `weir_bloom_allow` on the array laid at `mem` (`len` bytes), of the word
/// kind its header names: safe from many threads and processes at once. Refuses (false) whatever
/// `weir_bloom_check_in` would not accept, a NULL key and a negative `now`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_allow_in(
    mem: *mut c_void,
    len: usize,
    now: i64,
    key: *const c_void,
    key_len: usize,
) -> bool {
    on_region(mem, len, key, key_len, false, |shape, words, key| {
        shape.allow(words, now, key)
    })
}

/// `weir_bloom_next` on the array laid at `mem` (`len` bytes). Reads only.
/// INT64_MAX for whatever `weir_bloom_check_in` would not accept, a NULL
/// key and a negative `now`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_bloom_next_in(
    mem: *const c_void,
    len: usize,
    now: i64,
    key: *const c_void,
    key_len: usize,
) -> i64 {
    on_region(mem, len, key, key_len, NEVER, |shape, words, key| {
        shape.next(words, now, key)
    })
}

/// Turns counting on for a bloom array: from this call on,
/// `weir_bloom_read_counts` reports what it decided. Call it right after
/// `weir_bloom_new` to count everything since the handle was made; a second
/// call changes nothing. Until then the handle costs what it did before
/// counting existed (see `weir_counts` for what counting costs).
/// `WEIR_ERR_NULL` for a NULL handle, `WEIR_ERR_MISALIGNED` for one no handle
/// can be at, `WEIR_ERR_POISONED` for a poisoned one.
#[no_mangle]
pub extern "C" fn weir_bloom_start_counting(bloom: *const weir_bloom) -> weir_status {
    start_counting(bloom)
}

/// Writes to `*out` what a bloom array decided since
/// `weir_bloom_start_counting`. A reading: it changes nothing. `admitted`:
/// allows answered true; `refused`: allows refused because a key's words had no
/// room; `errors`: allows refused for a NULL key or a negative `now`; `units`:
/// equal to `admitted`. The counts are the handle's, kept beside its array, not
/// in it: the array's layout, and a region laid with `weir_bloom_init_in`, are
/// unchanged, and the `_in` calls on a region count nothing (count them as a
/// word is counted: see `weir_counts`).
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_bloom_read_counts(
    bloom: *const weir_bloom,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(bloom, out)
}

#[cfg(test)]
mod tests {
    use super::weir_bloom;

    /// The header's figure for the handle itself, beside its words (and a
    /// view's whole footprint): under 200 bytes (192 on a 64-bit host, 40
    /// of them the limit a reconfiguration publishes).
    #[test]
    fn the_handle_is_under_200_bytes() {
        let bytes = core::mem::size_of::<weir_bloom>();
        assert!(bytes < 200, "{bytes}");
    }
}
