//! C face of [`weir_core::keyed`]: the keyed table on the heap
//! (`weir_keyed_new`), placed in caller memory (`weir_keyed_init_in`) and
//! laid in a region shared between processes (`weir_keyed_init_shared`,
//! `weir_keyed_attach`), every form taken by the same calls.
//!
//! The firmware build (no `std`) has the placed table and the handle's
//! calls; the heap constructors and the shared calls are hosted-only.

use core::ffi::c_void;
use static_assertions::const_assert_eq;

use crate::gcra::{gcra_limit_in, weir_gcra_limit};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{
    free_handle, guard, guard_status, on, place_handle_with, placement, status_on, usable,
    write_footprint, write_out, Guarded, Handle,
};
use crate::rate::{limit_in, weir_rate_limit};
#[cfg(feature = "std")]
use crate::region::{
    attach, lay_shared, plain_bytes, region_footprint, run_fits, Layout, Shareable,
    WEIR_REGION_HANDLE_OFFSET, WEIR_REGION_KEYED,
};
use crate::slots::Slots;
use crate::status::weir_status::{self, *};
use weir_core::bloom::BloomLimit;
use weir_core::keyed::{self, Decision, Keyed, KeyedBucket, KeyedError, KeyedShape, Overflow};

/// A keyed table: one exact limiter word per key, for millions of keys in
/// fixed memory. Where the bloom array (`weir_bloom`) lets keys share
/// words, and so now and then refuses a key for another's traffic, this
/// table gives each key a word of its own, found by the key's
/// fingerprint, and makes room for a new key only by forgetting an idle
/// one (a word at rest decides every later call as a fresh one does).
/// Its words are of one kind, chosen when it is made: GCRA words
/// (`weir_gcra`, token buckets: `weir_keyed_new`, the default) or rate
/// words (`weir_rate`, fixed windows: `weir_keyed_new_rate`).
///
/// Layout. `buckets` buckets of WEIR_KEYED_SLOTS (8) slots; a slot is 16
/// bytes (a 63-bit fingerprint and the key's word, one 128-bit atomic), a
/// bucket 128 bytes, aligned to 128. A key is hashed once with SipHash-1-3
/// under the caller's 128-bit seed: its fingerprint and two candidate
/// buckets, 16 candidate slots. A new key takes a free slot or an idle
/// word in the candidate bucket with more room.
///
/// Bounds. Exact per key while nothing overflows: a key's admits are
/// those of a lone word of the limit given the same calls, at every phase
/// (for `now`s that do not go back across the table's callers; across a
/// change of limit, see `weir_keyed_reconfigure_rate` for one exception of
/// rate words). A new key
/// overflows when all 16 of its candidates hold active keys: then the
/// overflow policy answers (WEIR_KEYED_OVERFLOW_REFUSE, _ADMIT, or _SHARED:
/// one word of the table's limit shared by every overflowing key), counted
/// in `weir_keyed_reading.overflows`. For N keys active at once in M = 8 ×
/// buckets slots, a new key overflows with chance about
/// `weir_keyed_overflow_chance(N, M)`: 2.8e-20 half full, 1.9e-9 at 62 %,
/// 0.77 % at 80 %. Two keys share a word only when their fingerprints are
/// equal (chance about N / 2^63 for a new key among N): a collision can
/// only refuse. Memory: 128 bytes a bucket; 10^6 active keys at an
/// overflow chance of at most 1e-9 need `weir_keyed_buckets_for(1000000,
/// 1e-9)` = 203,090 buckets, 26.0 MB, 26 bytes a key. docs/keyed.md has
/// the derivations.
///
/// Lock-free and safe from many threads where the CPU has a 16-byte
/// compare-and-swap (`weir_keyed_lock_free`: x86_64 with cmpxchg16b,
/// aarch64); elsewhere each slot update takes a lock from a table in this
/// program's memory, and the table cannot be shared between processes.
/// The handle itself is under 256 bytes beside its buckets.
///
/// Reconfigured in place: `weir_keyed_reconfigure` (GCRA words) and
/// `weir_keyed_reconfigure_rate` (rate words) give every key's word a new
/// limit in one publication, each word keeping its arrival time or its
/// window. Heap, placed and shared tables alike: a shared table's limit
/// lives in its region, so every process attached decides by the new one.
/// The kind, buckets, overflow policy and seed never change.
pub struct weir_keyed(Guarded<Keyed<Slots<KeyedBucket>>>);

impl Handle for weir_keyed {
    type State = Keyed<Slots<KeyedBucket>>;
    fn guarded(&self) -> &Guarded<Self::State> {
        &self.0
    }
}

/// `weir_keyed_new`'s overflow policy: refuse a call that overflows.
pub const WEIR_KEYED_OVERFLOW_REFUSE: u32 = 0;
/// `weir_keyed_new`'s overflow policy: admit a call that overflows.
pub const WEIR_KEYED_OVERFLOW_ADMIT: u32 = 1;
/// `weir_keyed_new`'s overflow policy: decide a call that overflows on one
/// word of the table's limit that every overflowing key shares.
pub const WEIR_KEYED_OVERFLOW_SHARED: u32 = 2;

/// `weir_keyed_decide`: the key's own word refused.
pub const WEIR_KEYED_REFUSED: u32 = 0;
/// `weir_keyed_decide`: the key's own word admitted.
pub const WEIR_KEYED_ALLOWED: u32 = 1;
/// `weir_keyed_decide`: the table overflowed and its policy admitted.
pub const WEIR_KEYED_OVERFLOW_ADMITTED: u32 = 2;
/// `weir_keyed_decide`: the table overflowed and its policy refused.
pub const WEIR_KEYED_OVERFLOW_REFUSED: u32 = 3;

/// `weir_keyed_reading.kind` of a table of rate words (`weir_keyed_new_rate`);
/// the bloom region header's number for the window kind.
pub const WEIR_KEYED_KIND_RATE: u32 = 1;
/// `weir_keyed_reading.kind` of a table of GCRA words (`weir_keyed_new`);
/// the bloom region header's number for the gcra kind.
pub const WEIR_KEYED_KIND_GCRA: u32 = 2;

/// The slots of a keyed table's bucket.
pub const WEIR_KEYED_SLOTS: u32 = 8;
/// The bytes of a keyed table's bucket, and its alignment.
pub const WEIR_KEYED_BUCKET_BYTES: usize = 128;
/// The most buckets of a keyed table (2^32, 512 GiB).
// Written out: cbindgen copies `1 << 32` into the header as is, an int
// shift past its width in C.
pub const WEIR_KEYED_MAX_BUCKETS: u64 = 0x1_0000_0000;

const_assert_eq!(WEIR_KEYED_SLOTS as usize, keyed::SLOTS);
const_assert_eq!(WEIR_KEYED_BUCKET_BYTES, keyed::BUCKET_BYTES);
const_assert_eq!(
    WEIR_KEYED_BUCKET_BYTES,
    core::mem::align_of::<KeyedBucket>()
);
const_assert_eq!(WEIR_KEYED_MAX_BUCKETS, keyed::MAX_BUCKETS);

/// What `weir_keyed_read` answers: a keyed table's shape and how full it
/// is. 40 bytes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_keyed_reading {
    /// The table's buckets.
    pub buckets: u64,
    /// Its slots: 8 × buckets.
    pub slots: u64,
    /// The slots holding a key (or a claim in progress); idle words count
    /// until a new key replaces them.
    pub occupied: u64,
    /// Calls that overflowed since the table was made, whatever the policy
    /// answered.
    pub overflows: u64,
    /// WEIR_KEYED_KIND_GCRA or WEIR_KEYED_KIND_RATE.
    pub kind: u32,
    /// WEIR_KEYED_OVERFLOW_REFUSE, _ADMIT or _SHARED.
    pub overflow_policy: u32,
}

const_assert_eq!(core::mem::size_of::<weir_keyed_reading>(), 40);

/// The status for a keyed table's error.
fn keyed_status(error: KeyedError) -> weir_status {
    weir_status::of(error.code())
}

/// The policy a C overflow constant names.
fn overflow_of(overflow: u32) -> Result<Overflow, weir_status> {
    match overflow {
        WEIR_KEYED_OVERFLOW_REFUSE => Ok(Overflow::Refuse),
        WEIR_KEYED_OVERFLOW_ADMIT => Ok(Overflow::Admit),
        WEIR_KEYED_OVERFLOW_SHARED => Ok(Overflow::Shared),
        _ => Err(WEIR_ERR_KEYED_OVERFLOW),
    }
}

/// The C constant of an overflow policy.
fn overflow_code(overflow: Overflow) -> u32 {
    match overflow {
        Overflow::Refuse => WEIR_KEYED_OVERFLOW_REFUSE,
        Overflow::Admit => WEIR_KEYED_OVERFLOW_ADMIT,
        Overflow::Shared => WEIR_KEYED_OVERFLOW_SHARED,
    }
}

/// The shape the arguments describe, checked in this order: the limit
/// (`WEIR_ERR_NULL`, its kind's invalid-limit status), the overflow
/// policy, the bucket count.
fn shape_of(
    buckets: u64,
    limit: Result<BloomLimit, weir_status>,
    overflow: u32,
    seed0: u64,
    seed1: u64,
) -> Result<KeyedShape, weir_status> {
    let limit = limit?;
    let overflow = overflow_of(overflow)?;
    KeyedShape::new(buckets, limit, overflow, seed0, seed1).map_err(keyed_status)
}

fn gcra(limit: *const weir_gcra_limit) -> Result<BloomLimit, weir_status> {
    gcra_limit_in(limit).map(BloomLimit::from)
}

fn rate(limit: *const weir_rate_limit) -> Result<BloomLimit, weir_status> {
    limit_in(limit).map(BloomLimit::from)
}

/// The buckets a table of `buckets` has, or `WEIR_ERR_KEYED_BUCKETS`.
fn bucket_count(buckets: u64) -> Result<usize, weir_status> {
    usize::try_from(buckets)
        .ok()
        .filter(|&n| n > 0 && buckets <= keyed::MAX_BUCKETS)
        .filter(|&n| {
            n.checked_mul(keyed::BUCKET_BYTES)
                .is_some_and(|b| b <= isize::MAX as usize)
        })
        .ok_or(WEIR_ERR_KEYED_BUCKETS)
}

/// The caller's key: `len` bytes at `key`; a zero-length key is the empty
/// key, NULL or not. `WEIR_ERR_NULL` for a NULL key of some length,
/// `WEIR_ERR_KEYED_COUNT` for a length no object can have.
#[inline]
fn key_of<'a>(key: *const c_void, len: usize) -> Result<&'a [u8], weir_status> {
    if len == 0 {
        return Ok(&[]);
    }
    if key.is_null() {
        return Err(WEIR_ERR_NULL);
    }
    if len > isize::MAX as usize || (key as usize).checked_add(len).is_none() {
        return Err(WEIR_ERR_KEYED_COUNT);
    }
    // SAFETY: `key` is non-NULL and, by the header's contract, points to
    // `len` readable bytes that stay valid for this call; `len` fits isize
    // and does not wrap the address space.
    Ok(unsafe { core::slice::from_raw_parts(key.cast::<u8>(), len) })
}

/// The most tokens one call may ask of a word of `limit`.
fn burst_of(limit: &BloomLimit) -> i64 {
    match limit {
        BloomLimit::Gcra(limit) => {
            let (per_token, tolerance, _) = limit.parts();
            tolerance / per_token.max(1) as i64
        }
        BloomLimit::Window(limit) => i64::from(limit.burst()),
    }
}

/// A fresh store of `n` free buckets on the heap.
#[cfg(feature = "std")]
fn heap_buckets(n: usize) -> Result<Slots<KeyedBucket>, weir_status> {
    let mut buckets = Vec::new();
    buckets
        .try_reserve_exact(n)
        .map_err(|_| WEIR_ERR_NO_MEMORY)?;
    buckets.extend((0..n).map(|_| KeyedBucket::fresh()));
    Ok(Slots::heap(buckets))
}

#[cfg(feature = "std")]
fn new_table(
    shape: impl FnOnce() -> Result<KeyedShape, weir_status>,
    out: *mut *mut weir_keyed,
) -> weir_status {
    new_handle(out, || {
        let shape = shape()?;
        let store = heap_buckets(shape.buckets())?;
        let table = Keyed::new_in(shape, store).map_err(keyed_status)?;
        Ok(weir_keyed(Guarded::new(table)))
    })
}

/// Makes a keyed table of `buckets` buckets (8 slots each) of GCRA words,
/// each key's limited by `*limit`, a call that finds no room answered by
/// the `overflow` policy (WEIR_KEYED_OVERFLOW_REFUSE, _ADMIT, _SHARED),
/// keyed by (`seed0`, `seed1`) — pass secret random values — and writes
/// it to `*out`. Size it with `weir_keyed_buckets_for`. `WEIR_ERR_NULL` if
/// `out` or `limit` is NULL; `WEIR_ERR_GCRA_LIMIT_INVALID` for a limit whose
/// fields are out of range; `WEIR_ERR_KEYED_OVERFLOW` for an unknown
/// policy; `WEIR_ERR_KEYED_BUCKETS` for 0 buckets, more than
/// WEIR_KEYED_MAX_BUCKETS, or more than the address space holds;
/// `WEIR_ERR_NO_MEMORY`. `*out` is written only on success. The limit is
/// copied. Free it with `weir_keyed_free`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_keyed_new(
    buckets: u64,
    limit: *const weir_gcra_limit,
    overflow: u32,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_keyed,
) -> weir_status {
    new_table(
        || shape_of(buckets, gcra(limit), overflow, seed0, seed1),
        out,
    )
}

/// `weir_keyed_new` with rate words (fixed windows), each key's limited by
/// `*limit`: `WEIR_ERR_RATE_LIMIT_INVALID` for a limit whose fields are out
/// of range; otherwise checked and answered as `weir_keyed_new`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_keyed_new_rate(
    buckets: u64,
    limit: *const weir_rate_limit,
    overflow: u32,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_keyed,
) -> weir_status {
    new_table(
        || shape_of(buckets, rate(limit), overflow, seed0, seed1),
        out,
    )
}

/// The bytes and the alignment of a keyed table of `buckets` buckets
/// placed with `weir_keyed_init_in` or `weir_keyed_init_rate_in`, written
/// to `*bytes` and `*align`: the handle, then its buckets from the next
/// multiple of 128 bytes (`*align` is WEIR_KEYED_BUCKET_BYTES, 128).
/// `WEIR_ERR_KEYED_BUCKETS` for a count `weir_keyed_new` refuses,
/// `WEIR_ERR_TOO_LARGE` when the footprint does not fit the address space,
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align`
/// pointer; nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_keyed_footprint(
    buckets: u64,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    guard_status(|| {
        let (total, align_of, _) = placement::<weir_keyed, KeyedBucket>(bucket_count(buckets)?)?;
        write_footprint((total, align_of), bytes, align)
    })
}

/// Lays the table `shape` describes in `len` bytes at `mem`: the handle,
/// then its buckets, every slot free.
fn place(
    mem: *mut c_void,
    len: usize,
    out: *mut *mut weir_keyed,
    shape: impl FnOnce() -> Result<KeyedShape, weir_status>,
) -> weir_status {
    place_handle_with(
        mem,
        len,
        out,
        KeyedBucket::fresh,
        || {
            let shape = shape()?;
            Ok((shape.buckets(), shape))
        },
        |shape, buckets| {
            let table = Keyed::new_in(shape, Slots::placed(buckets)).map_err(keyed_status)?;
            Ok(weir_keyed(Guarded::new(table)))
        },
    )
}

/// Lays a keyed table of GCRA words in memory the caller owns, handle and
/// buckets together (`len` bytes at `mem`, at least the footprint
/// `weir_keyed_footprint` answers, at a multiple of its alignment, 128),
/// and writes to `*out` a `weir_keyed *` that every `weir_keyed_*` call
/// takes as it takes a heap table. The arguments are those of
/// `weir_keyed_new`. The table is this program's own; to share one between
/// processes lay it with `weir_keyed_init_shared`. The memory stays the
/// caller's: `weir_keyed_free` on it does nothing, and `mem` must stay in
/// place while the table is used. Checked in this order, and nothing is
/// written on an error: `out` (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), the
/// arguments as `weir_keyed_new` checks them, `WEIR_ERR_TOO_LARGE` for a
/// footprint beyond the address space, `mem` NULL (`WEIR_ERR_NULL`), `mem`
/// misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len` below the footprint
/// (`WEIR_ERR_PLACED_TOO_SMALL`). The limit is copied.
#[no_mangle]
pub extern "C" fn weir_keyed_init_in(
    mem: *mut c_void,
    len: usize,
    buckets: u64,
    limit: *const weir_gcra_limit,
    overflow: u32,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_keyed,
) -> weir_status {
    place(mem, len, out, || {
        shape_of(buckets, gcra(limit), overflow, seed0, seed1)
    })
}

/// `weir_keyed_init_in` with rate words, each key's limited by `*limit`
/// (`WEIR_ERR_RATE_LIMIT_INVALID` for a limit whose fields are out of
/// range); the rest as `weir_keyed_init_in`.
#[no_mangle]
pub extern "C" fn weir_keyed_init_rate_in(
    mem: *mut c_void,
    len: usize,
    buckets: u64,
    limit: *const weir_rate_limit,
    overflow: u32,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_keyed,
) -> weir_status {
    place(mem, len, out, || {
        shape_of(buckets, rate(limit), overflow, seed0, seed1)
    })
}

/// `Ok` where a table's slots are the CPU's own 16-byte compare-and-swap,
/// so that a table may be shared between processes; else
/// `WEIR_ERR_WORDS_NOT_SHAREABLE`.
#[cfg(feature = "std")]
fn shareable() -> Result<(), weir_status> {
    if keyed::lock_free() {
        Ok(())
    } else {
        Err(WEIR_ERR_WORDS_NOT_SHAREABLE)
    }
}

/// Where a shared table's buckets start, in bytes from its handle: the
/// first multiple of 128 bytes from the region's start after the handle.
#[cfg(feature = "std")]
const SHARED_BUCKETS_AT: usize = {
    let end = WEIR_REGION_HANDLE_OFFSET + core::mem::size_of::<weir_keyed>();
    end.div_ceil(WEIR_KEYED_BUCKET_BYTES) * WEIR_KEYED_BUCKET_BYTES - WEIR_REGION_HANDLE_OFFSET
};

#[cfg(feature = "std")]
impl Shareable for weir_keyed {
    const KIND: u32 = WEIR_REGION_KEYED;
    const LOCKED: bool = false;

    /// The handle 320 bytes into the region, its buckets from the next
    /// multiple of 128 bytes of the region (which is 128-aligned).
    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        let buckets = bucket_count(slots as u64)?;
        let bytes = buckets
            .checked_mul(WEIR_KEYED_BUCKET_BYTES)
            .and_then(|b| b.checked_add(SHARED_BUCKETS_AT))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or(WEIR_ERR_TOO_LARGE)?;
        Ok(Layout {
            bytes,
            align: WEIR_KEYED_BUCKET_BYTES,
            runs: [SHARED_BUCKETS_AT, 0],
        })
    }

    fn slots(&self) -> usize {
        self.0.state().shape().buckets()
    }

    /// Its buckets found from the store's own address; lock-free, its
    /// policy the region's.
    fn share(&mut self) {
        self.0.state_mut().store_mut().make_relative();
        self.0.mark_in_region();
    }

    fn fits(&self, layout: &Layout, slots: usize) -> bool {
        let table = self.0.state();
        let store = table.store();
        let first = (self as *const weir_keyed as usize).wrapping_add(layout.runs[0]);
        table.shape().buckets() == slots
            && run_fits(
                store.relative(),
                (store as *const Slots<KeyedBucket>).cast(),
                first,
                slots,
            )
    }
}

/// The bytes and the alignment of a region holding a keyed table of
/// `buckets` buckets shared between processes (`weir_keyed_init_shared`),
/// written to `*bytes` and `*align`: a 256-byte `weir_region_header`, 64
/// bytes the region keeps for its lock (a keyed table takes none), the
/// handle, then the buckets from the next multiple of 128 bytes; `*align`
/// is 128. `WEIR_ERR_KEYED_BUCKETS` for a count `weir_keyed_new` refuses,
/// `WEIR_ERR_TOO_LARGE`, `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad
/// pointer, `WEIR_ERR_WORDS_NOT_SHAREABLE` where `weir_keyed_lock_free` is
/// false. Nothing is written on an error.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_keyed_shared_footprint(
    buckets: u64,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    guard_status(|| {
        let layout = weir_keyed::layout_for(bucket_count(buckets)?)?;
        let footprint = region_footprint(&layout)?;
        shareable()?;
        write_footprint(footprint, bytes, align)
    })
}

/// The policy bytes a shared table's header keeps: its word kind and its
/// overflow policy (two uint32_t), then the limit as the C struct the
/// init call took. The seeds are not kept there.
#[cfg(feature = "std")]
fn policy_bytes(kind: u32, overflow: u32, limit: &[u8]) -> [u8; 32] {
    let mut policy = [0; 32];
    policy[..4].copy_from_slice(&kind.to_le_bytes());
    policy[4..8].copy_from_slice(&overflow.to_le_bytes());
    policy[8..8 + limit.len()].copy_from_slice(limit);
    policy
}

#[cfg(feature = "std")]
const_assert_eq!(core::mem::size_of::<weir_gcra_limit>(), 24);
#[cfg(feature = "std")]
const_assert_eq!(core::mem::size_of::<weir_rate_limit>(), 16);

/// Lays the table `shape` describes after a region's header: the handle at
/// `at` (`WEIR_REGION_HANDLE_OFFSET` into a 128-aligned region), its
/// buckets `SHARED_BUCKETS_AT` bytes on.
#[cfg(feature = "std")]
fn lay_in_region(
    at: *mut c_void,
    room: usize,
    out: *mut *mut weir_keyed,
    shape: Result<KeyedShape, weir_status>,
) -> weir_status {
    guard_status(|| {
        usable(out)?;
        shareable()?;
        let shape = shape?;
        let buckets = shape.buckets();
        let layout = weir_keyed::layout_for(buckets)?;
        if (at as usize) % WEIR_KEYED_BUCKET_BYTES
            != WEIR_REGION_HANDLE_OFFSET % WEIR_KEYED_BUCKET_BYTES
        {
            return Err(WEIR_ERR_PLACED_MISALIGNED);
        }
        if room < layout.bytes {
            return Err(WEIR_ERR_PLACED_TOO_SMALL);
        }
        let base = at.cast::<u8>();
        // SAFETY: `at` lies WEIR_REGION_HANDLE_OFFSET into the caller's
        // region, which is 128-aligned (checked above: `at` is 64 past a
        // multiple of 128), so `base + SHARED_BUCKETS_AT` is 128-aligned;
        // `room >= layout.bytes` bytes from `at` are the caller's to write,
        // and the buckets end there. Each bucket is written before the
        // slice is made.
        let slots = unsafe {
            let first = base.add(SHARED_BUCKETS_AT).cast::<KeyedBucket>();
            for index in 0..buckets {
                first.add(index).write(KeyedBucket::fresh());
            }
            core::slice::from_raw_parts_mut(first, buckets)
        };
        let table = Keyed::new_in(shape, Slots::placed(slots)).map_err(keyed_status)?;
        let handle = base.cast::<weir_keyed>();
        // SAFETY: `at` is 8-aligned (64 past a multiple of 128) and the
        // handle's bytes end before the buckets (SHARED_BUCKETS_AT is past
        // its size), inside the caller's region; nothing that must be
        // dropped is there.
        unsafe { handle.write(weir_keyed(Guarded::new(table))) };
        // SAFETY: just written; no other thread has its address yet.
        unsafe { &*handle }.guarded().mark_placed();
        write_out(out, handle)
    })
}

/// Lays a keyed table of GCRA words that processes share in `mem`, memory
/// the caller maps `MAP_SHARED`, and writes it to `*out` for this process:
/// a `weir_region_header` (its kind WEIR_REGION_KEYED; its policy the word
/// kind and the overflow policy, two uint32_t, then the `weir_gcra_limit`),
/// then the table (`weir_keyed_shared_footprint` bytes in all, at a
/// multiple of 128: page-aligned memory from mmap is). Another process
/// gets its own `weir_keyed *` from `weir_keyed_attach`; every process then
/// decides on the one table, lock-free, exactly as threads of one process
/// do: a key's admits across all of them are a lone word's. Its state is
/// its slots and three counters, each changed by one atomic operation, so
/// a process killed at any point leaves it whole (a claim it left is
/// settled by its key's next call). Its limit changes in place for every
/// process with `weir_keyed_reconfigure`; the header's policy keeps the
/// limit it was laid with. Lay it once, before any process
/// attaches; laying it again resets it. Checked in this order, nothing
/// written on an error: `out`, `mem` NULL (`WEIR_ERR_NULL`), misaligned
/// (`WEIR_ERR_PLACED_MISALIGNED`), `WEIR_ERR_REGION_UNSUPPORTED` off
/// Linux, `len` short (`WEIR_ERR_PLACED_TOO_SMALL`),
/// `WEIR_ERR_WORDS_NOT_SHAREABLE` where `weir_keyed_lock_free` is false,
/// the arguments as `weir_keyed_new` checks them, the region's alignment
/// (128: `WEIR_ERR_PLACED_MISALIGNED`) and length
/// (`WEIR_ERR_PLACED_TOO_SMALL`).
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_keyed_init_shared(
    mem: *mut c_void,
    len: usize,
    buckets: u64,
    limit: *const weir_gcra_limit,
    overflow: u32,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_keyed,
) -> weir_status {
    let copy = crate::guard::read_in(limit).unwrap_or(weir_gcra_limit {
        per_token: 0,
        tolerance: 0,
        shift: 0,
        reserved: 0,
    });
    let policy = policy_bytes(WEIR_KEYED_KIND_GCRA, overflow, plain_bytes(&copy));
    lay_shared(mem, len, out, &policy, |at, room, placed| {
        lay_in_region(
            at,
            room,
            placed,
            shape_of(buckets, gcra(limit), overflow, seed0, seed1),
        )
    })
}

/// `weir_keyed_init_shared` with rate words, each key's limited by
/// `*limit` (the header's policy holds the `weir_rate_limit`); checked as
/// `weir_keyed_init_shared`, the limit as `weir_keyed_new_rate` checks it.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_keyed_init_shared_rate(
    mem: *mut c_void,
    len: usize,
    buckets: u64,
    limit: *const weir_rate_limit,
    overflow: u32,
    seed0: u64,
    seed1: u64,
    out: *mut *mut weir_keyed,
) -> weir_status {
    let copy = crate::guard::read_in(limit).unwrap_or(weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    });
    let policy = policy_bytes(WEIR_KEYED_KIND_RATE, overflow, plain_bytes(&copy));
    lay_shared(mem, len, out, &policy, |at, room, placed| {
        lay_in_region(
            at,
            room,
            placed,
            shape_of(buckets, rate(limit), overflow, seed0, seed1),
        )
    })
}

/// Checks the region at `mem` (`len` bytes) that `weir_keyed_init_shared`
/// or `weir_keyed_init_shared_rate` laid, here or in another process, and
/// writes its table, for this process, to `*out`. Refused with the
/// statuses `weir_breaker_attach` lists (`WEIR_ERR_NULL`,
/// `WEIR_ERR_PLACED_MISALIGNED`, `WEIR_ERR_REGION_SIZE`,
/// `WEIR_ERR_REGION_FOREIGN`, `WEIR_ERR_REGION_LAYOUT`,
/// `WEIR_ERR_REGION_KIND`, `WEIR_ERR_REGION_BUILD`,
/// `WEIR_ERR_REGION_SHAPE`), then `WEIR_ERR_PLACED_MISALIGNED` for a region
/// not at a multiple of 128 bytes, and `WEIR_ERR_WORDS_NOT_SHAREABLE` first
/// where `weir_keyed_lock_free` is false; nothing written on an error.
/// The region must stay mapped while the table is used; `weir_keyed_free`
/// on it does nothing.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_keyed_attach(
    mem: *mut c_void,
    len: usize,
    out: *mut *mut weir_keyed,
) -> weir_status {
    guard_status(|| {
        usable(out)?;
        shareable()?;
        let mut table: *mut weir_keyed = core::ptr::null_mut();
        match attach(mem, len, &mut table) {
            WEIR_OK => {}
            status => return Err(status),
        }
        if mem as usize % WEIR_KEYED_BUCKET_BYTES != 0 {
            return Err(WEIR_ERR_PLACED_MISALIGNED);
        }
        write_out(out, table)
    })
}

/// Frees a keyed table. NULL is accepted and ignored, and so is a placed
/// or shared table (`weir_keyed_init_in`, `weir_keyed_init_shared`,
/// `weir_keyed_attach`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_keyed_free(table: *mut weir_keyed) {
    free_handle(table)
}

/// Whether the key (`key_len` bytes at `key`) may have one event at `now`,
/// charging its word if so: `weir_keyed_decide` with n = 1, admitted by
/// its own word or by the overflow policy. A zero-length key is a key (the
/// empty one; `key` may then be NULL). The key is hashed during the call
/// and not kept. Refuses (false) a NULL table, a NULL key of some length
/// and a negative `now`; a refusal for those changes nothing.
#[no_mangle]
pub extern "C" fn weir_keyed_allow(
    table: *const weir_keyed,
    now: i64,
    key: *const c_void,
    key_len: usize,
) -> bool {
    on(table, false, |table| {
        key_of(key, key_len).is_ok_and(|key| table.allow(now, key))
    })
}

/// Whether the key (`key_len` bytes at `key`) may have `n` events at `now`,
/// all or nothing, charging its word if so; writes to `*decision` what
/// decided: WEIR_KEYED_ALLOWED or WEIR_KEYED_REFUSED (the key's own word),
/// WEIR_KEYED_OVERFLOW_ADMITTED or WEIR_KEYED_OVERFLOW_REFUSED (no room
/// for a new key: the overflow policy). A key without a slot takes one (a
/// free one, or one whose word is at rest); a call its word would refuse
/// whatever it held takes none. `WEIR_ERR_NULL` for a NULL table or
/// `decision`, or a NULL key of some length; `WEIR_ERR_MISALIGNED`;
/// `WEIR_ERR_NEGATIVE` for a negative `now`; `WEIR_ERR_KEYED_COUNT` for an
/// `n` outside 1..=burst or a `key_len` no object can have;
/// `WEIR_ERR_POISONED`. `*decision` is written only on `WEIR_OK`, and an
/// error changes nothing.
#[no_mangle]
pub extern "C" fn weir_keyed_decide(
    table: *const weir_keyed,
    now: i64,
    key: *const c_void,
    key_len: usize,
    n: i64,
    decision: *mut u32,
) -> weir_status {
    status_on(table, |table| {
        usable(decision)?;
        let key = key_of(key, key_len)?;
        if now < 0 {
            return Err(WEIR_ERR_NEGATIVE);
        }
        // One reading of the limit in force judges the whole call, its
        // count's check included.
        let shape = table.shape();
        if n < 1 || n > burst_of(shape.limit()) {
            return Err(WEIR_ERR_KEYED_COUNT);
        }
        let decided = shape.decide(table.store().as_ref(), table.counters(), now, key, n);
        let answer = match decided {
            Decision::Allowed => WEIR_KEYED_ALLOWED,
            Decision::Refused => WEIR_KEYED_REFUSED,
            Decision::Overflowed(true) => WEIR_KEYED_OVERFLOW_ADMITTED,
            Decision::Overflowed(false) => WEIR_KEYED_OVERFLOW_REFUSED,
        };
        write_out(decision, answer)
    })
}

/// Gives every key's word of a table of GCRA words (`weir_keyed_new`,
/// `weir_keyed_init_in`, `weir_keyed_init_shared`) the limit `*limit`, in
/// place and at once: from this publication on, every call reads the old
/// limit or the new one, wholly, and never waits for the change (two
/// slots and a generation); each word keeps its theoretical arrival time
/// (TAT), an instant on the caller's clock. A key's debt (TAT − now)
/// carries over as time: it may take again once the debt is at most the
/// new bucket less a token ((burst' − 1) / rate'), and repays at the new
/// rate; an idle key (TAT at or before now) is a full bucket under either
/// limit. Which words are at rest follows the limit in force: a slot is
/// given to a new key only once its word rests under it (for GCRA words,
/// TAT at or before now, whatever the limit). The overflow policy's shared
/// word (WEIR_KEYED_OVERFLOW_SHARED) is judged by the new limit too, and
/// `weir_keyed_decide` checks its count against the new burst.
///
/// The bound across a change at c, for one key (or the shared word): the
/// old limit's admits in [a, c) keep its bound, burst + floor((c − a) ×
/// rate), the new limit's in [c, b] keep the new one, burst' + floor((b −
/// c) × rate') (the debt carried over only lowers it); a stretch across c
/// admits at most the two together. A call racing the change is judged
/// wholly by the limit it read, and counts under that limit.
///
/// Safe beside decisions on the table from any thread, and, for a shared
/// table, from any process: unlike other shared handles, which answer
/// WEIR_ERR_REGION_UNSUPPORTED because their policy is the region's, laid
/// once, the table's limit is published inside its region, one atomic
/// publication that every process attached reads (the region header's
/// policy keeps the limit the table was laid with). Two reconfigurations
/// run one after the other. The buckets, overflow policy, seed, slots and
/// counters are kept. It counts nothing. The limit is copied.
///
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `table`;
/// `WEIR_ERR_POISONED`; `WEIR_ERR_NULL` for a NULL `limit`,
/// `WEIR_ERR_GCRA_LIMIT_INVALID` for one whose fields are out of range;
/// `WEIR_ERR_KEYED_KIND_CHANGE` for a table of rate words (see
/// `weir_keyed_reconfigure_rate`); `WEIR_ERR_KEYED_TICK_CHANGE` for a
/// limit on another tick (its `shift`) than the table's: the stored arrival
/// times would be misread (every rate up to 7,812,500 a second has tick 0,
/// so two such limits always agree). An error changes nothing.
#[no_mangle]
pub extern "C" fn weir_keyed_reconfigure(
    table: *mut weir_keyed,
    limit: *const weir_gcra_limit,
) -> weir_status {
    status_on(table.cast_const(), |table| {
        let limit = gcra_limit_in(limit)?;
        table.reconfigure(limit).map_err(keyed_status)
    })
}

/// `weir_keyed_reconfigure` for a table of rate words
/// (`weir_keyed_new_rate`, `weir_keyed_init_rate_in`,
/// `weir_keyed_init_shared_rate`): every key's word takes `*limit` in
/// place, in one publication, keeping its window's start and count. The
/// window is read under the new limit: it admits while its count is under
/// the new burst, and ends count × I' after its start (I' = 1 / rate', the
/// new interval), so a quicker rate ends a spent window sooner, a slower
/// one later; a slot is given to a new key once its window has ended under
/// the limit in force. A window that held more than the new burst admits
/// nothing more until it ends.
///
/// The bound across a change at c, for one key (or the shared word): the
/// old limit's admits in [a, c) keep its bound, burst + floor((c − a) /
/// I), the new limit's in [c, b] keep the new one, burst' + floor((b − c)
/// / I') (a window open at the change takes at most burst' − count more);
/// a stretch across c at most the two together. Per key the table stays
/// exact (a lone word's admits given the same calls and limits), except
/// that a window forgotten at rest stays fresh where a lone word's spent
/// window, read under a slower limit, could stand open again: such a key
/// gets a fresh window's admits, within the new limit's bound.
///
/// Checked as `weir_keyed_reconfigure`, with `WEIR_ERR_RATE_LIMIT_INVALID`
/// for a limit whose fields are out of range and
/// `WEIR_ERR_KEYED_KIND_CHANGE` for a table of GCRA words. An error
/// changes nothing.
#[no_mangle]
pub extern "C" fn weir_keyed_reconfigure_rate(
    table: *mut weir_keyed,
    limit: *const weir_rate_limit,
) -> weir_status {
    status_on(table.cast_const(), |table| {
        let limit = limit_in(limit)?;
        table.reconfigure(limit).map_err(keyed_status)
    })
}

/// Writes to `*wait` the nanoseconds from `now` until the key's own word
/// would admit one event, as every `weir_*_next` answers: 0 if it would
/// now (what a Retry-After header needs), INT64_MAX if never (an instant
/// past the word's clock). Charges nothing and takes no slot. A key the
/// table does not hold answers 0, as a fresh word would; whether it would
/// find a slot or overflow is not foreseen. `WEIR_ERR_NULL` for a NULL
/// table or `wait`, or a NULL key of some length; `WEIR_ERR_MISALIGNED`;
/// `WEIR_ERR_NEGATIVE` for a negative `now`; `WEIR_ERR_KEYED_COUNT` for a
/// `key_len` no object can have; `WEIR_ERR_POISONED`. `*wait` is written
/// only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_keyed_next(
    table: *const weir_keyed,
    now: i64,
    key: *const c_void,
    key_len: usize,
    wait: *mut i64,
) -> weir_status {
    status_on(table, |table| {
        usable(wait)?;
        let key = key_of(key, key_len)?;
        if now < 0 {
            return Err(WEIR_ERR_NEGATIVE);
        }
        write_out(wait, table.next(now, key))
    })
}

/// Writes a keyed table's shape and fill to `*out` (a reading: it changes
/// nothing). `occupied` scans every slot: a call costs time in proportion
/// to the table's size (about a millisecond for 26 MB), so read it for a
/// dashboard, not on every request. `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`,
/// `WEIR_ERR_POISONED`; `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_keyed_read(
    table: *const weir_keyed,
    out: *mut weir_keyed_reading,
) -> weir_status {
    status_on(table, |table| {
        usable(out)?;
        let shape = table.shape();
        let buckets = shape.buckets() as u64;
        let kind = match shape.limit() {
            BloomLimit::Gcra(_) => WEIR_KEYED_KIND_GCRA,
            BloomLimit::Window(_) => WEIR_KEYED_KIND_RATE,
        };
        write_out(
            out,
            weir_keyed_reading {
                buckets,
                slots: buckets * keyed::SLOTS as u64,
                occupied: table.occupied() as u64,
                overflows: table.counters().overflows(),
                kind,
                overflow_policy: overflow_code(shape.overflow()),
            },
        )
    })
}

/// Whether a keyed table's slots are the CPU's own 16-byte compare-and-swap
/// on this machine (x86_64 with cmpxchg16b, aarch64): its calls are then
/// lock-free and a table may be shared between processes. False elsewhere
/// (i686, 32-bit Arm, the firmware build): each slot update takes a lock in
/// this program's memory, and the shared calls answer
/// `WEIR_ERR_WORDS_NOT_SHAREABLE`.
#[no_mangle]
pub extern "C" fn weir_keyed_lock_free() -> bool {
    guard(false, keyed::lock_free)
}

/// Writes to `*buckets` the fewest buckets for which a new key overflows a
/// table holding `keys` active keys with chance at most `chance`
/// (`weir_keyed_overflow_chance`): 203,090 for 10^6 keys at 1e-9.
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `buckets`;
/// `WEIR_ERR_KEYED_SIZING` for a `chance` that is NaN, not above 0 or
/// above 1, or for `keys` that would need more than WEIR_KEYED_MAX_BUCKETS.
/// Nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_keyed_buckets_for(keys: u64, chance: f64, buckets: *mut u64) -> weir_status {
    guard_status(|| {
        usable(buckets)?;
        if chance.is_nan() || chance <= 0.0 || chance > 1.0 {
            return Err(WEIR_ERR_KEYED_SIZING);
        }
        let answer = keyed::buckets_for(keys, chance).ok_or(WEIR_ERR_KEYED_SIZING)?;
        write_out(buckets, answer)
    })
}

/// The chance that a new key overflows a table of `slots` slots (8 a
/// bucket) holding `keys` active keys: s_8(keys / B)² with B = slots / 8
/// buckets, s_i the fraction of buckets holding i or more keys under
/// two-choice placement (docs/keyed.md). 1 for fewer than 8 slots or at
/// least as many keys as slots; NaN
/// when `keys` or `slots` is NaN, infinite or negative.
#[no_mangle]
pub extern "C" fn weir_keyed_overflow_chance(keys: f64, slots: f64) -> f64 {
    guard(f64::NAN, || {
        let valid = |x: f64| x.is_finite() && x >= 0.0;
        if !valid(keys) || !valid(slots) {
            return f64::NAN;
        }
        keyed::overflow_chance(keys, slots)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gcra::weir_gcra_limit_new;

    /// The header's figure for the handle itself, beside its buckets: under
    /// 256 bytes (its limit cell included), so that a placed table's
    /// buckets start at most 256 bytes in.
    #[test]
    fn the_handle_is_under_256_bytes() {
        assert!(core::mem::size_of::<weir_keyed>() < 256);
    }

    fn limit() -> weir_gcra_limit {
        let mut limit = core::mem::MaybeUninit::uninit();
        assert_eq!(weir_gcra_limit_new(1.0, 2, limit.as_mut_ptr()), WEIR_OK);
        // SAFETY: written on WEIR_OK.
        unsafe { limit.assume_init() }
    }

    fn decide(table: *const weir_keyed, now: i64, key: &[u8], n: i64) -> (weir_status, u32) {
        let mut decision = 99;
        let status =
            weir_keyed_decide(table, now, key.as_ptr().cast(), key.len(), n, &mut decision);
        (status, decision)
    }

    /// The heap, placed and shared forms answer alike, and a second handle
    /// attached to the region shares the first one's words.
    #[test]
    fn every_form_decides_alike() {
        let limit = limit();
        let mut heap = core::ptr::null_mut();
        assert_eq!(
            weir_keyed_new(4, &limit, WEIR_KEYED_OVERFLOW_REFUSE, 1, 2, &mut heap),
            WEIR_OK
        );
        let (mut bytes, mut align) = (0, 0);
        assert_eq!(weir_keyed_footprint(4, &mut bytes, &mut align), WEIR_OK);
        assert_eq!(align, 128);
        let layout = std::alloc::Layout::from_size_align(bytes, align).unwrap();
        // SAFETY: a non-zero size.
        let mem = unsafe { std::alloc::alloc(layout) };
        let mut placed = core::ptr::null_mut();
        assert_eq!(
            weir_keyed_init_in(mem.cast(), bytes, 4, &limit, 0, 1, 2, &mut placed),
            WEIR_OK
        );
        let mut tables = vec![heap, placed];
        let mut region = None;
        if weir_keyed_lock_free() {
            assert_eq!(
                weir_keyed_shared_footprint(4, &mut bytes, &mut align),
                WEIR_OK
            );
            let layout = std::alloc::Layout::from_size_align(bytes, align).unwrap();
            // SAFETY: a non-zero size.
            let shared_mem = unsafe { std::alloc::alloc_zeroed(layout) };
            let mut shared = core::ptr::null_mut();
            assert_eq!(
                weir_keyed_init_shared(shared_mem.cast(), bytes, 4, &limit, 0, 1, 2, &mut shared),
                WEIR_OK
            );
            let mut attached = core::ptr::null_mut();
            assert_eq!(
                weir_keyed_attach(shared_mem.cast(), bytes, &mut attached),
                WEIR_OK
            );
            assert_eq!(attached, shared);
            tables.push(shared);
            region = Some((shared_mem, layout));
        }
        for &table in &tables {
            assert_eq!(decide(table, 0, b"k", 2), (WEIR_OK, WEIR_KEYED_ALLOWED));
            assert_eq!(decide(table, 0, b"k", 1), (WEIR_OK, WEIR_KEYED_REFUSED));
            assert_eq!(decide(table, 0, b"k", 3), (WEIR_ERR_KEYED_COUNT, 99));
            assert_eq!(decide(table, -1, b"k", 1), (WEIR_ERR_NEGATIVE, 99));
            let mut wait = 0;
            assert_eq!(
                weir_keyed_next(table, 0, b"k".as_ptr().cast(), 1, &mut wait),
                WEIR_OK
            );
            assert_eq!(wait, 1_000_000_000);
            assert!(weir_keyed_allow(table, wait, core::ptr::null(), 0));
            let mut reading = weir_keyed_reading::default();
            assert_eq!(weir_keyed_read(table, &mut reading), WEIR_OK);
            assert_eq!(
                reading,
                weir_keyed_reading {
                    buckets: 4,
                    slots: 32,
                    occupied: 2,
                    overflows: 0,
                    kind: WEIR_KEYED_KIND_GCRA,
                    overflow_policy: WEIR_KEYED_OVERFLOW_REFUSE,
                }
            );
        }
        // Every form takes a new limit in place, the shared one included;
        // the other kind's call, another tick and NULL change nothing.
        let mut faster = core::mem::MaybeUninit::uninit();
        assert_eq!(weir_gcra_limit_new(2.0, 3, faster.as_mut_ptr()), WEIR_OK);
        // SAFETY: written on WEIR_OK.
        let faster = unsafe { faster.assume_init() };
        let mut rate_limit = core::mem::MaybeUninit::uninit();
        assert_eq!(
            crate::rate::weir_rate_limit_new(1.0, 1, rate_limit.as_mut_ptr()),
            WEIR_OK
        );
        // SAFETY: written on WEIR_OK.
        let rate_limit = unsafe { rate_limit.assume_init() };
        let mut fine = core::mem::MaybeUninit::uninit();
        assert_eq!(weir_gcra_limit_new(1e8, 3, fine.as_mut_ptr()), WEIR_OK);
        // SAFETY: written on WEIR_OK.
        let fine = unsafe { fine.assume_init() };
        for &table in &tables {
            assert_eq!(
                weir_keyed_reconfigure_rate(table, &rate_limit),
                WEIR_ERR_KEYED_KIND_CHANGE
            );
            assert_eq!(
                weir_keyed_reconfigure(table, &fine),
                WEIR_ERR_KEYED_TICK_CHANGE
            );
            assert_eq!(
                weir_keyed_reconfigure(table, core::ptr::null()),
                WEIR_ERR_NULL
            );
            assert_eq!(
                weir_keyed_reconfigure(core::ptr::null_mut(), &faster),
                WEIR_ERR_NULL
            );
            assert_eq!(
                decide(table, 2_000_000_000, b"k", 3),
                (WEIR_ERR_KEYED_COUNT, 99)
            );
            assert_eq!(weir_keyed_reconfigure(table, &faster), WEIR_OK);
            // Burst 3 now; "k" was spent at 1 s (TAT 2 s): its debt
            // carries over, so at 2 s it has the whole new bucket.
            assert_eq!(
                decide(table, 2_000_000_000, b"k", 3),
                (WEIR_OK, WEIR_KEYED_ALLOWED)
            );
            assert_eq!(
                decide(table, 2_000_000_000, b"k", 1),
                (WEIR_OK, WEIR_KEYED_REFUSED)
            );
        }
        for table in tables {
            weir_keyed_free(table);
        }
        // SAFETY: allocated above with these layouts; no handle is used after.
        unsafe {
            std::alloc::dealloc(mem, layout);
            if let Some((shared_mem, layout)) = region {
                std::alloc::dealloc(shared_mem, layout);
            }
        }
    }
}
