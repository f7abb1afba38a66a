//! C face of [`weir_core::charge`]: all or nothing over several limits.

use core::ffi::c_void;
use core::mem::MaybeUninit;

use static_assertions::const_assert_eq;

use crate::bloom::{bloom_status, key_at, region_at, weir_bloom};
use crate::bucket::weir_bucket;
use crate::gcra::{gcra_limit_in, weir_gcra, weir_gcra_limit};
use crate::guard::{guard_status, slice_in, state_of, usable, write_out};
use crate::rate::{limit_in, weir_rate, weir_rate_limit};
use crate::status::weir_status::{self, *};
use weir_core::bloom::{self, BloomLimit, BloomShape};
use weir_core::charge::{self, ChargeAnswer, ChargeItem, MAX_ITEMS};

/// A `weir_charge_item` that charges a GCRA word: `target` a `weir_gcra *`,
/// `limit` its `const weir_gcra_limit *`, `cost` whole tokens.
pub const WEIR_CHARGE_GCRA: u32 = 1;
/// A `weir_charge_item` that charges a rate word: `target` a `weir_rate *`,
/// `limit` its `const weir_rate_limit *`, `cost` whole events (as that
/// many `weir_rate_allow` calls at the one `now`).
pub const WEIR_CHARGE_RATE: u32 = 2;
/// A `weir_charge_item` that charges a bucket: `target` a `weir_bucket *`,
/// `cost` tokens (fractions allowed, as `weir_bucket_take`).
pub const WEIR_CHARGE_BUCKET: u32 = 3;
/// A `weir_charge_item` that charges a key of a bloom array: `target` a
/// `weir_bloom *`, `key` and `key_len` the key, `cost` whole events on each
/// of its words that takes them (as `weir_bloom_allow` charges one).
pub const WEIR_CHARGE_BLOOM: u32 = 4;
/// A `weir_charge_item` that charges a key of a bloom array laid in caller
/// memory: `target` the region and `target_len` its bytes (as
/// `weir_bloom_allow_in` takes them), `key` and `key_len` the key, `cost`
/// whole events; `limit` NULL to judge by the limit in the region's
/// header, or a limit of the region's kind to judge by instead (see
/// `weir_charge_item.limit`).
pub const WEIR_CHARGE_BLOOM_IN: u32 = 5;
/// The most items one `weir_charge_all` charges.
pub const WEIR_CHARGE_MAX_ITEMS: usize = 16;

const_assert_eq!(WEIR_CHARGE_MAX_ITEMS, MAX_ITEMS);

/// One limit for `weir_charge_all` to charge, and its cost: a plain value
/// the caller fills (zero it first: `weir_charge_item item = {0};`) and
/// keeps for the call only; weir keeps no pointer from it. The pointers
/// follow each limit's own calls: a word or handle aligned and valid for
/// the call, a region laid by `weir_bloom_init_in`. 56 bytes on a 64-bit
/// host, 40 on a 32-bit one.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug)]
pub struct weir_charge_item {
    /// WEIR_CHARGE_GCRA, _RATE, _BUCKET, _BLOOM or _BLOOM_IN.
    pub kind: u32,
    /// Zero.
    pub reserved: u32,
    /// What the call costs this limit: tokens or events, positive, whole
    /// but for a bucket. A cost above what the limit holds (its burst)
    /// refuses, with a wait of INT64_MAX.
    /// (Kept at offset 8 on every host: a double in a struct is only
    /// 4-aligned on i386, so after the pointers it would move.)
    pub cost: f64,
    /// What is charged: a `weir_gcra *`, `weir_rate *`, `weir_bucket *` or
    /// `weir_bloom *`, or a bloom region (WEIR_CHARGE_BLOOM_IN).
    pub target: *mut c_void,
    /// The region's length in bytes (WEIR_CHARGE_BLOOM_IN); ignored
    /// otherwise.
    pub target_len: usize,
    /// The word's limit: a `const weir_gcra_limit *` (WEIR_CHARGE_GCRA) or
    /// `const weir_rate_limit *` (WEIR_CHARGE_RATE). For WEIR_CHARGE_BLOOM_IN,
    /// NULL (the region's header's limit) or a limit of the region's word
    /// kind (a `weir_gcra_limit` for the gcra kind, `weir_rate_limit` for
    /// the window kind) that judges the key's words in place of the header's,
    /// which is left alone: this is how the words of a region outlive a change of
    /// rate or burst (a reload), each process bringing its limit. A word
    /// keeps what it decided under the old limit: a window keeps its start
    /// and its count, which count against the new burst, and ends
    /// count × (1 / new rate) after its start; a GCRA word keeps its TAT,
    /// so a key's debt (TAT − now) carries over as time. A GCRA limit of another tick than the header's (a
    /// `shift` that differs: only rates above 7 812 500 a second have one
    /// above 0) would misread the words and is refused with
    /// `WEIR_ERR_GCRA_LIMIT_INVALID`, as is one whose fields are out of
    /// range; a limit of the window kind out of range is refused with
    /// `WEIR_ERR_RATE_LIMIT_INVALID`. Ignored for the other kinds.
    pub limit: *const c_void,
    /// The bloom key's bytes (WEIR_CHARGE_BLOOM, _BLOOM_IN), hashed during
    /// the call and not kept; ignored otherwise.
    pub key: *const c_void,
    /// The key's length in bytes.
    pub key_len: usize,
}

/// What `weir_charge_all` answered. A plain value the call writes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct weir_charge_result {
    /// 0 when admitted; else nanoseconds from `now` until `items[index]`
    /// would take its cost (what a Retry-After header needs), read at the
    /// refusal with this call's own earlier charges still in place (so a
    /// word named twice counts both), INT64_MAX if it never will.
    pub wait: i64,
    /// The item that refused, or the one at fault when the call answers an
    /// error (n for the array itself); n when admitted.
    pub index: u32,
    /// Items charged before the one that refused whose charge could not be
    /// given back, each still charged as if admitted (see
    /// `weir_charge_all`); 0 when admitted.
    pub kept: u32,
    /// Whether every item was charged.
    pub admitted: bool,
}

#[cfg(target_pointer_width = "64")]
mod layout {
    use super::{weir_charge_item, weir_charge_result};
    use core::mem::{align_of, offset_of, size_of};
    use static_assertions::const_assert_eq;
    const_assert_eq!(size_of::<weir_charge_item>(), 56);
    const_assert_eq!(offset_of!(weir_charge_item, cost), 8);
    const_assert_eq!(offset_of!(weir_charge_item, target), 16);
    const_assert_eq!(offset_of!(weir_charge_item, target_len), 24);
    const_assert_eq!(offset_of!(weir_charge_item, limit), 32);
    const_assert_eq!(offset_of!(weir_charge_item, key), 40);
    const_assert_eq!(offset_of!(weir_charge_item, key_len), 48);
    const_assert_eq!(align_of::<weir_charge_item>(), 8);
    const_assert_eq!(size_of::<weir_charge_result>(), 24);
}
#[cfg(target_pointer_width = "32")]
mod layout {
    use super::weir_charge_item;
    use core::mem::{align_of, offset_of, size_of};
    use static_assertions::const_assert_eq;
    const_assert_eq!(size_of::<weir_charge_item>(), 40);
    const_assert_eq!(offset_of!(weir_charge_item, cost), 8);
    const_assert_eq!(offset_of!(weir_charge_item, target), 16);
    const_assert_eq!(offset_of!(weir_charge_item, key_len), 32);
    const_assert_eq!(align_of::<weir_charge_item>(), 8);
}
const_assert_eq!(core::mem::align_of::<weir_charge_result>(), 8);
const_assert_eq!(core::mem::size_of::<weir_charge_result>(), 24);
const_assert_eq!(core::mem::offset_of!(weir_charge_result, index), 8);
const_assert_eq!(core::mem::offset_of!(weir_charge_result, kept), 12);
const_assert_eq!(core::mem::offset_of!(weir_charge_result, admitted), 16);

/// `cost` as whole tokens or events (`weir_core::charge::whole_cost`), or
/// `WEIR_ERR_CHARGE_COST`.
#[inline]
fn whole(cost: f64) -> Result<i64, weir_status> {
    charge::whole_cost(cost).ok_or(WEIR_ERR_CHARGE_COST)
}

/// The core's item for the caller's `item`, checked; a region's shape is
/// read into `shape`, which the item then borrows.
fn item_in<'a>(
    item: &weir_charge_item,
    shape: &'a mut MaybeUninit<BloomShape>,
) -> Result<ChargeItem<'a>, weir_status> {
    if item.reserved != 0 {
        return Err(WEIR_ERR_RESERVED);
    }
    Ok(match item.kind {
        WEIR_CHARGE_GCRA => ChargeItem::Gcra {
            word: crate::gcra::word_in(item.target.cast::<weir_gcra>())?,
            limit: gcra_limit_in(item.limit.cast::<weir_gcra_limit>())?,
            cost: whole(item.cost)?,
        },
        WEIR_CHARGE_RATE => ChargeItem::Rate {
            word: crate::rate::word_in(item.target.cast::<weir_rate>())?,
            limit: limit_in(item.limit.cast::<weir_rate_limit>())?,
            cost: whole(item.cost)?,
        },
        WEIR_CHARGE_BUCKET => {
            let bucket = state_of(item.target.cast::<weir_bucket>().cast_const())?;
            if !(item.cost > 0.0 && item.cost.is_finite()) {
                return Err(WEIR_ERR_CHARGE_COST);
            }
            ChargeItem::Bucket {
                bucket,
                cost: item.cost,
            }
        }
        WEIR_CHARGE_BLOOM => {
            let bloom = state_of(item.target.cast::<weir_bloom>().cast_const())?;
            ChargeItem::Bloom {
                shape: shape.write(bloom.shape()),
                lines: bloom.lines(),
                key: key_at(item.key, item.key_len).ok_or(WEIR_ERR_NULL)?,
                cost: whole(item.cost)?,
            }
        }
        WEIR_CHARGE_BLOOM_IN => {
            let region = region_at(item.target, item.target_len)?;
            let (found, lines) = bloom::open_in(region).map_err(bloom_status)?;
            let found = if item.limit.is_null() {
                found
            } else {
                match found.limit() {
                    BloomLimit::Gcra(_) => {
                        let limit = gcra_limit_in(item.limit.cast::<weir_gcra_limit>())?;
                        found.with_limit(limit).ok_or(WEIR_ERR_GCRA_LIMIT_INVALID)?
                    }
                    BloomLimit::Window(_) => {
                        let limit = limit_in(item.limit.cast::<weir_rate_limit>())?;
                        found.with_limit(limit).ok_or(WEIR_ERR_RATE_LIMIT_INVALID)?
                    }
                }
            };
            ChargeItem::Bloom {
                shape: shape.write(found),
                lines,
                key: key_at(item.key, item.key_len).ok_or(WEIR_ERR_NULL)?,
                cost: whole(item.cost)?,
            }
        }
        _ => return Err(WEIR_ERR_UNKNOWN_KIND),
    })
}

/// The caller's items judged at `now`, or the item at fault (`n` for the
/// array) and why, with nothing charged.
fn judge(
    items: *const weir_charge_item,
    n: usize,
    now: i64,
) -> Result<ChargeAnswer, (usize, weir_status)> {
    if n > MAX_ITEMS {
        return Err((n, WEIR_ERR_CHARGE_TOO_MANY));
    }
    if n > 0 && items.is_null() {
        return Err((n, WEIR_ERR_NULL));
    }
    let items = slice_in(items, n).map_err(|status| (n, status))?;
    // Filled in order for the first n items only: uninitialised memory
    // costs the call nothing, where a whole array would be written.
    let mut shapes = [MaybeUninit::<BloomShape>::uninit(); MAX_ITEMS];
    let mut judged = [MaybeUninit::<ChargeItem<'_>>::uninit(); MAX_ITEMS];
    for (i, ((item, shape), slot)) in items
        .iter()
        .zip(shapes.iter_mut())
        .zip(judged.iter_mut())
        .enumerate()
    {
        slot.write(item_in(item, shape).map_err(|status| (i, status))?);
    }
    // SAFETY: the loop wrote the first `n` slots (n ≤ MAX_ITEMS, the
    // array's length), or returned; MaybeUninit<T> has T's layout.
    let judged =
        unsafe { core::slice::from_raw_parts(judged.as_ptr().cast::<ChargeItem<'_>>(), n) };
    charge::charge_all(judged, now).map_err(|error| (n, weir_status::of(error.code())))
}

/// Charges every item its cost at `now`, or none: an organisation's quota,
/// a team's and a user's (GCRA and rate words, buckets, bloom keys, in any
/// mix), so that a refusal by one does not spend the others. Writes the
/// answer to `*out`: admitted, or which item refused (`index`) and how long
/// until it would take its cost (`wait`).
///
/// How. Every item is read first (as `weir_gcra_next` and the like read,
/// writing nothing), and if one would refuse the call refuses with nothing
/// charged. Then the items are charged in order, each by its own atomic
/// step (the step its own call takes), noting its word's value before and
/// after; if one refuses (another call spent it in between), the ones
/// charged are given back, last first, each by one compare-and-swap that
/// puts the word back to its value before the charge, and only while the
/// word still holds exactly what the charge wrote. Lock-free; no heap.
///
/// The bound. No limit ever admits beyond its own bound (each word's,
/// bucket's and bloom key's, as its own type states), under any
/// interleaving of threads and processes and any order of their `now`s.
/// Every charge moves its word strictly up, so a word that still holds
/// what a charge wrote has since seen only charges given back the same
/// way: a give-back pops the top of a stack, leaves the word exactly as it
/// was before the charge, and the charges that stay are a sequence of the
/// word's own steps. It never gives back more than was taken, and never to
/// a word that has moved on: subtracting a cost from a word a later charge
/// has moved would over-admit (a GCRA charge at a later `now` on top of
/// ours swallowed part of our cost in its max(TAT, now); a rate word's
/// window shortened under events admitted into it).
///
/// The slack. A refused call leaves the other limits as if not asked,
/// except: (1) a charge given back was visible until then, for the span of
/// this one call, and another call may have been refused for it: a false
/// refusal of at most that item's cost, never an over-admit; (2) a charge
/// that another call charged over, before ours was given back, is kept:
/// the item stays charged as if this call had been admitted by it, at most
/// its cost, coming back as the limit refills (a GCRA word or bucket after
/// cost / rate, a rate word when its window expires); `out->kept` counts
/// these. Since the items are read first, a charge is given back only when
/// a later item was spent between the read and the charge (by another call,
/// or by this one when it names a word twice), and kept only when, in the
/// same instant, another call charged the earlier one too. A
/// process that dies between a charge and its give-back leaves the charge.
/// `weir_bucket_refund` subtracts from a bucket's word, outside the stack
/// above: do not refund a bucket while calls that charge it here may be
/// giving back.
///
/// Put first the item likeliest to refuse (a user's limit before its
/// organisation's): a race on it then costs the others nothing. One `now`
/// serves every item. No items is admitted.
///
/// Errors, with nothing charged and, when `out` is usable, `out->index`
/// naming the item at fault: `WEIR_ERR_NULL` (`out`, `items` with n > 0, an
/// item's target or limit, a bloom item's key), `WEIR_ERR_MISALIGNED`,
/// `WEIR_ERR_CHARGE_TOO_MANY` (n above WEIR_CHARGE_MAX_ITEMS),
/// `WEIR_ERR_UNKNOWN_KIND`, `WEIR_ERR_RESERVED`, `WEIR_ERR_CHARGE_COST`,
/// `WEIR_ERR_GCRA_LIMIT_INVALID`, `WEIR_ERR_RATE_LIMIT_INVALID`,
/// `WEIR_ERR_POISONED` (a bucket or bloom handle), and a region's
/// `weir_bloom_check_in` errors. A refusal is `WEIR_OK` with
/// `out->admitted` false.
#[no_mangle]
pub extern "C" fn weir_charge_all(
    items: *const weir_charge_item,
    n: usize,
    now: i64,
    out: *mut weir_charge_result,
) -> weir_status {
    guard_status(|| {
        usable(out)?;
        let count = n.min(u32::MAX as usize) as u32;
        let (result, status) = match judge(items, n, now) {
            Ok(ChargeAnswer::Admitted) => (
                weir_charge_result {
                    wait: 0,
                    index: count,
                    kept: 0,
                    admitted: true,
                },
                Ok(()),
            ),
            Ok(ChargeAnswer::Refused { index, wait, kept }) => (
                weir_charge_result {
                    wait,
                    index: index as u32,
                    kept: kept as u32,
                    admitted: false,
                },
                Ok(()),
            ),
            Err((index, status)) => (
                weir_charge_result {
                    wait: 0,
                    index: index.min(u32::MAX as usize) as u32,
                    kept: 0,
                    admitted: false,
                },
                Err(status),
            ),
        };
        write_out(out, result)?;
        status
    })
}
