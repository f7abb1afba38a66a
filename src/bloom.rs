//! C face of [`weir_core::bloom`]: the heap array (`weir_bloom`) and the same
//! structure laid into caller memory (`weir_bloom_*_in`).

use core::ffi::c_void;
use weir_core::atomic::AtomicU64;

use static_assertions::const_assert_eq;

use crate::guard::{free_handle, guard, guard_status, new_handle, on, usable, Guarded, Handle};
use crate::rate::{limit_in, weir_rate_limit};
use crate::status::weir_status::{self, *};
use weir_core::bloom::{self, Bloom, BloomError, Shape};
use weir_core::time::NEVER;

/// An array of 2^size_log2 rate words (see `weir_rate`) for limiting a
/// key space too large to give each key its own: per client address, API
/// key or object name, in fixed memory. A key maps to `hashes` (k) words;
/// it is allowed when any of them allows, and each word that allows is
/// charged. Keys are hashed with SipHash-1-3 (128-bit output, one pass per
/// key; the k indexes follow by double hashing) under the caller's 128-bit
/// seed: the keyed hash Rust's and Python's hash tables use against
/// flooding, so without the seed nobody can aim keys at the same words.
///
/// Bounds: a key alone gets exactly `burst` per window, at every phase of
/// the words' 512 ns grid. With k = 1 a key is one word and gets at most
/// the word's bound, burst + floor(T / interval) in any T ns, under any
/// contention (less if other keys share the word). With k ≥ 2 concurrent
/// calls for one key can each find a different word open, and words shared
/// with other keys fall out of step, so up to k × burst may pass in a
/// window and k times the word's bound in any T ns. Keys that share all k words with others are limited together
/// (rarely: about (1 − e^(−kN/M))^k of N keys in M words).
///
/// Lock-free and safe to use from many threads at once. Memory per handle:
/// 8 × 2^size_log2 bytes of heap plus under 100 bytes. size_log2 is at most
/// WEIR_BLOOM_MAX_SIZE_LOG2 (32: 32 GiB; 27, 1 GiB, on a 32-bit host),
/// hashes 1..WEIR_BLOOM_MAX_HASHES.
/// Made by `weir_bloom_new`, freed by `weir_bloom_free`; for memory shared
/// between processes see `weir_bloom_init_in`.
pub struct weir_bloom(Guarded<Bloom>);

impl Handle for weir_bloom {
    type State = Bloom;
    fn guarded(&self) -> &Guarded<Bloom> {
        &self.0
    }
}

/// The largest size_log2 of a bloom array (2^32 words, 32 GiB).
pub const WEIR_BLOOM_MAX_SIZE_LOG2: u32 = 32;
/// The most hashes (words per key) of a bloom array.
pub const WEIR_BLOOM_MAX_HASHES: u32 = 8;
/// The bytes of the header before the words of a bloom array laid into
/// caller memory.
pub const WEIR_BLOOM_HEADER_BYTES: usize = 64;

const_assert_eq!(WEIR_BLOOM_MAX_SIZE_LOG2, bloom::MAX_SIZE_LOG2);
const_assert_eq!(WEIR_BLOOM_MAX_HASHES, bloom::MAX_HASHES);
const_assert_eq!(WEIR_BLOOM_HEADER_BYTES, bloom::HEADER_WORDS * 8);

/// The status for a bloom array's error.
fn bloom_status(error: BloomError) -> weir_status {
    match error {
        BloomError::Size => WEIR_ERR_BLOOM_SIZE,
        BloomError::Hashes => WEIR_ERR_BLOOM_HASHES,
        BloomError::NoMemory => WEIR_ERR_NO_MEMORY,
        BloomError::TooSmall => WEIR_ERR_BLOOM_TOO_SMALL,
        BloomError::Foreign => WEIR_ERR_BLOOM_FOREIGN,
        BloomError::Version => WEIR_ERR_BLOOM_VERSION,
    }
}

/// The shape the arguments of `weir_bloom_new` and `weir_bloom_init_in`
/// describe.
fn shape_of(
    size_log2: u32,
    hashes: u32,
    limit: *const weir_rate_limit,
    seed0: u64,
    seed1: u64,
) -> Result<Shape, weir_status> {
    let limit = limit_in(limit)?;
    Shape::new(size_log2, hashes, limit, seed0, seed1).map_err(bloom_status)
}

/// The caller's key as bytes, unless `key` is NULL (or `len` is larger
/// than any object can be).
#[inline]
fn key_at<'a>(key: *const c_void, len: usize) -> Option<&'a [u8]> {
    if key.is_null() || len > isize::MAX as usize {
        return None;
    }
    // SAFETY: `key` is non-NULL and, by the header's contract, points to
    // `len` readable bytes that stay valid for this call; `len` fits isize.
    Some(unsafe { std::slice::from_raw_parts(key.cast::<u8>(), len) })
}

/// The caller's region as words: `WEIR_ERR_NULL` when NULL,
/// `WEIR_ERR_MISALIGNED` when not 8-byte aligned, `WEIR_ERR_TOO_LARGE`
/// when `len` is more than any object can be (above `isize::MAX`, or running
/// past the end of the address space). A trailing part shorter than a word
/// is left out.
#[inline]
fn region_at<'a>(mem: *const c_void, len: usize) -> Result<&'a [AtomicU64], weir_status> {
    crate::atomic::shareable()?;
    usable(mem.cast::<AtomicU64>())?;
    if len > isize::MAX as usize || (mem as usize).checked_add(len).is_none() {
        return Err(WEIR_ERR_TOO_LARGE);
    }
    let words = len / core::mem::size_of::<AtomicU64>();
    // SAFETY: `mem` is non-NULL and aligned for AtomicU64, and `len` bytes
    // from it neither exceed isize::MAX nor wrap the address space (all
    // checked above); by the header's contract they stay readable and
    // writable for this call. weir touches the region only through atomic
    // operations, so other threads and processes may use it at the same
    // time; AtomicU64 has the size and bit validity of u64.
    Ok(unsafe { std::slice::from_raw_parts(mem.cast::<AtomicU64>(), words) })
}

/// `body` on the array laid at `mem` (`len` bytes) and the caller's key, or
/// `neutral` when the region does not hold a valid array or the key is
/// NULL.
fn on_region<R: Copy>(
    mem: *const c_void,
    len: usize,
    key: *const c_void,
    key_len: usize,
    neutral: R,
    body: impl FnOnce(&Shape, &[AtomicU64], &[u8]) -> R,
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

/// Makes a bloom array of 2^`size_log2` fresh words, `hashes` words per
/// key, each limited by `*limit`, keyed by (`seed0`, `seed1`) — pass
/// secret random values — and writes it to `*out`. `WEIR_ERR_NULL` if `out`
/// or `limit` is NULL; `WEIR_ERR_RATE_LIMIT_INVALID` for a limit whose
/// fields are out of range; `WEIR_ERR_BLOOM_SIZE` for size_log2
/// above WEIR_BLOOM_MAX_SIZE_LOG2 (above 27 on a 32-bit host, where a
/// larger array does not fit the address space); `WEIR_ERR_BLOOM_HASHES` for hashes 0,
/// above WEIR_BLOOM_MAX_HASHES or above 2^size_log2; `WEIR_ERR_NO_MEMORY`.
/// `*out` is written only on success. The limit is copied: the caller may
/// change or free it after.
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
        Ok(weir_bloom(Guarded::new(bloom)))
    })
}

/// Frees a bloom array. NULL is accepted and ignored.
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
    on(bloom, false, |bloom| {
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

/// The bytes a region for a bloom array of 2^`size_log2` words needs:
/// WEIR_BLOOM_HEADER_BYTES + 8 × 2^size_log2. 0 when size_log2 is above
/// WEIR_BLOOM_MAX_SIZE_LOG2 or the region does not fit the address space
/// (size_log2 above 27 on a 32-bit host).
#[no_mangle]
pub extern "C" fn weir_bloom_footprint(size_log2: u32) -> usize {
    guard(0, || {
        bloom::footprint_words(size_log2)
            .and_then(|words| words.checked_mul(8))
            .unwrap_or(0)
    })
}

/// Lays a bloom array into the caller's memory: `len` bytes at `mem`,
/// 8-byte aligned (page-aligned memory from mmap is), at least
/// `weir_bloom_footprint(size_log2)` long. Writes a 64-byte header (a magic,
/// the layout version, the shape, the limit and the seed) then zeroes the
/// words; bytes past the footprint are left alone. The region holds no
/// pointer: map it MAP_SHARED and every process that maps it (forked or
/// not, at any address) shares one limiter through `weir_bloom_allow_in`,
/// lock-free. Lay it once, before anyone uses it; laying it again resets it.
/// The arguments are checked as `weir_bloom_new` checks them; then
/// `WEIR_ERR_NULL` for a NULL `mem`, `WEIR_ERR_MISALIGNED`,
/// `WEIR_ERR_TOO_LARGE` for a `len` no object can have (above PTRDIFF_MAX),
/// `WEIR_ERR_BLOOM_TOO_SMALL`; `WEIR_ERR_WORDS_NOT_SHAREABLE` on a target
/// whose words take a lock (see `weir_words_shareable`). Nothing is written unless it returns
/// `WEIR_OK`.
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

/// Whether `len` bytes at `mem` hold a bloom array laid by
/// `weir_bloom_init_in`: `WEIR_OK`, or `WEIR_ERR_NULL`,
/// `WEIR_ERR_MISALIGNED`, `WEIR_ERR_BLOOM_FOREIGN` (no valid header),
/// `WEIR_ERR_BLOOM_VERSION` (another layout version),
/// `WEIR_ERR_BLOOM_TOO_SMALL` (shorter than the header or its shape),
/// `WEIR_ERR_TOO_LARGE` (a `len` above PTRDIFF_MAX, which no region has). A
/// process that attaches to an existing region checks it once here.
#[no_mangle]
pub extern "C" fn weir_bloom_check_in(mem: *const c_void, len: usize) -> weir_status {
    guard_status(|| {
        bloom::open_in(region_at(mem, len)?).map_err(bloom_status)?;
        Ok(())
    })
}

/// `weir_bloom_allow` on the array laid at `mem` (`len` bytes): safe from
/// many threads and processes at once. Refuses (false) whatever
/// `weir_bloom_check_in` would not accept, a NULL key and a negative `now`.
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
