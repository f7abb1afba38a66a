//! C face of [`weir_core::limiter`]: the by-value `weir_limiter` and its calls.
//!
//! Each call reads the caller's value, checks it into a
//! [`weir_core::limiter::Limiter`] (a zeroed or corrupted value is
//! `WEIR_ERR_LIMITER_CORRUPT` or a refusal), runs the core, and writes the
//! value back only when the core committed a change.

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::guard::{guard, guard_status, read_in, usable, value_mut, write_out};
use crate::status::weir_status::{self, *};
use weir_core::limiter::{Limiter, LimiterError, LimiterKind, RefundError};

/// An embeddable integer limiter: a plain 48-byte value (alignment 8) that
/// the caller places inside its own struct — no handle, no heap, no pointer
/// inside. By-value: the caller guards it (one thread at a time per value).
///
/// Build one with `weir_limiter_bucket`, `weir_limiter_fixed_window` or
/// `weir_limiter_cooldown`; a zeroed value is not a limiter (calls on it get
/// `WEIR_ERR_LIMITER_CORRUPT` or refuse). The fields are private: use the
/// functions. Every call checks the value, so a zeroed or overwritten one is
/// refused, not trusted. A value never initialised must not be passed: its
/// bytes are indeterminate, and reading them is undefined in C before weir sees
/// them, so build (or at least zero) a limiter before its first use. Every call
/// checks the pointer too: one that is not 8-byte aligned (the struct's
/// alignment, which a limiter placed inside a packed struct or at an odd offset
/// of a byte buffer may lack) is never read or written; calls answer
/// `WEIR_ERR_MISALIGNED` or refuse. Copying the bytes (assignment, `memcpy`) is
/// allowed, but a copy is a second limiter with its own units, so copying
/// multiplies the configured capacity; the bytes are not a storage format
/// across library versions.
///
/// Three variants, each holding a capacity and the units available now:
/// - bucket: `refill_amount` units every `refill_interval_ns`, up to the
///   capacity. Only whole intervals count; the part of an interval already
///   run is kept toward the next unit, and intervals that pass while the
///   bucket is full are lost, not banked.
/// - fixed window: windows of `window_ns` laid end to end from
///   `window_start` (the grid follows the anchor, not the clock); entering a
///   later window resets the units to the capacity.
/// - cooldown: up to the capacity may be taken in any split; the call that
///   takes the last unit arms a gate until `now + cooldown_ns`, and at that
///   deadline (inclusive) the whole capacity comes back.
///
/// Time: any int64_t is an instant of the caller's clock, negative values
/// included; only differences matter (and a window's grid is laid from its
/// anchor). A `now` earlier than the anchor counts as no time passing. No
/// arithmetic overflows for any uint64_t amount or capacity and any int64_t
/// time. The value keeps no record of the latest `now` it was given (the
/// 48-byte layout is fixed), so pass a monotonic clock. What a `now`
/// earlier than `latest`, the latest `now` of a consume that succeeded,
/// does, exactly (before the first one, a `now` earlier than the
/// constructor's credits fewer intervals or windows, never more):
/// - bucket and fixed window: the call answers, and leaves the value, as
///   the same call at `latest` would (a committed consume has already
///   moved the anchor past any interval or window an earlier `now` could
///   credit);
/// - cooldown, the one exception: a consume at such a `now` that takes the
///   last unit arms the gate until `now + cooldown_ns`, not
///   `latest + cooldown_ns`, so the capacity comes back
///   `latest − now` sooner (and the drain succeeds even where
///   `latest + cooldown_ns` would overflow). A cooldown asked at a `now`
///   before its deadline stays shut even when `latest` is past it, so it
///   may refuse what `latest` would grant, never the reverse.
///
/// Readings (`weir_limiter_available` and the getters) never change the
/// value; a call that returns an error leaves it untouched.
///
/// Snapshot and rebuild (to change a setting, or to move a limiter) keeps
/// the phase: at the latest `now`, read `weir_limiter_available(l, now)` and
/// the projected anchor (`weir_limiter_last_refill` for a bucket,
/// `weir_limiter_window_start` for a window, `weir_limiter_cooldown_end` for
/// a cooldown), then call the same constructor with them and the same `now`.
/// With unchanged settings the new value answers every later call exactly as
/// the old one would. A new capacity at least the available units is safe;
/// a bucket rebuilt with a different rate should start from `now` as its
/// anchor, since an old anchor credits the time already run at the new rate.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct weir_limiter {
    /// Private: which variant, checked on every call.
    tag: u32,
    /// Private: zero.
    reserved: u32,
    /// Private: the most units the limiter holds.
    capacity: u64,
    /// Private: the units left, as last committed.
    available: u64,
    /// Private: a bucket's refill amount; zero otherwise.
    amount: u64,
    /// Private: the refill interval, window or cooldown length.
    period_ns: i64,
    /// Private: the last refill, the window start or the cooldown deadline.
    anchor: i64,
}

assert_eq_size!(weir_limiter, [u8; 48]);
const_assert_eq!(core::mem::align_of::<weir_limiter>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_limiter, tag), 0);
const_assert_eq!(core::mem::offset_of!(weir_limiter, reserved), 4);
const_assert_eq!(core::mem::offset_of!(weir_limiter, capacity), 8);
const_assert_eq!(core::mem::offset_of!(weir_limiter, available), 16);
const_assert_eq!(core::mem::offset_of!(weir_limiter, amount), 24);
const_assert_eq!(core::mem::offset_of!(weir_limiter, period_ns), 32);
const_assert_eq!(core::mem::offset_of!(weir_limiter, anchor), 40);

// The variant tags: far from zero and from each other, so that a zeroed or
// scribbled-over value is not taken for a limiter.
const TAG_BUCKET: u32 = 0x574c_4231;
const TAG_FIXED_WINDOW: u32 = 0x574c_5732;
const TAG_COOLDOWN: u32 = 0x574c_4333;

impl From<LimiterError> for weir_status {
    fn from(error: LimiterError) -> weir_status {
        weir_status::of(error.code())
    }
}

impl weir_limiter {
    /// The core limiter this value holds, if it holds a sound one.
    #[inline]
    fn load(&self) -> Result<Limiter, weir_status> {
        let kind = match self.tag {
            TAG_BUCKET => LimiterKind::Bucket {
                refill_amount: self.amount,
                refill_interval_ns: self.period_ns,
                last_refill: self.anchor,
            },
            TAG_FIXED_WINDOW if self.amount == 0 => LimiterKind::FixedWindow {
                window_ns: self.period_ns,
                window_start: self.anchor,
            },
            TAG_COOLDOWN if self.amount == 0 => LimiterKind::Cooldown {
                cooldown_ns: self.period_ns,
                cooldown_end: self.anchor,
            },
            _ => return Err(WEIR_ERR_LIMITER_CORRUPT),
        };
        if self.reserved != 0 {
            return Err(WEIR_ERR_LIMITER_CORRUPT);
        }
        Limiter::from_parts(self.capacity, self.available, kind).ok_or(WEIR_ERR_LIMITER_CORRUPT)
    }

    /// The value that holds `limiter`.
    #[inline]
    fn store(limiter: &Limiter) -> weir_limiter {
        let (available, kind) = limiter.parts();
        let (tag, amount, period_ns, anchor) = match kind {
            LimiterKind::Bucket {
                refill_amount,
                refill_interval_ns,
                last_refill,
            } => (TAG_BUCKET, refill_amount, refill_interval_ns, last_refill),
            LimiterKind::FixedWindow {
                window_ns,
                window_start,
            } => (TAG_FIXED_WINDOW, 0, window_ns, window_start),
            LimiterKind::Cooldown {
                cooldown_ns,
                cooldown_end,
            } => (TAG_COOLDOWN, 0, cooldown_ns, cooldown_end),
        };
        weir_limiter {
            tag,
            reserved: 0,
            capacity: limiter.capacity(),
            available,
            amount,
            period_ns,
            anchor,
        }
    }
}

/// Writes the limiter `make` builds to `*out`; `*out` is written only on
/// success.
fn build(
    out: *mut weir_limiter,
    make: impl FnOnce() -> Result<Limiter, LimiterError>,
) -> weir_status {
    guard_status(|| {
        usable(out)?;
        write_out(out, weir_limiter::store(&make()?))
    })
}

/// `read` applied to the limiter behind `limiter`, or `neutral` when it is
/// NULL or not a sound value.
fn reading<R: Copy>(
    limiter: *const weir_limiter,
    neutral: R,
    read: impl FnOnce(&Limiter) -> R,
) -> R {
    guard(neutral, || {
        match read_in(limiter).and_then(|value| value.load()) {
            Ok(core) => read(&core),
            Err(_) => neutral,
        }
    })
}

/// Writes what `get` reads from the limiter behind `limiter` to `*out`.
fn getter<T>(
    limiter: *const weir_limiter,
    out: *mut T,
    get: impl FnOnce(&Limiter) -> Result<T, LimiterError>,
) -> weir_status {
    guard_status(|| {
        usable(out)?;
        let value = get(&read_in(limiter)?.load()?)?;
        write_out(out, value)
    })
}

/// Makes a token bucket of `capacity` units holding `initial_available`,
/// crediting `refill_amount` every `refill_interval_ns` counted from
/// `last_refill` (pass `now` for a new limiter; an earlier anchor keeps an
/// old limiter's phase), and writes it to `*out`. Checks, in this order,
/// each failure its own status and `*out` untouched: `WEIR_ERR_NULL` (`out`
/// is NULL), `WEIR_ERR_MISALIGNED` (`out` is not 8-byte aligned),
/// `WEIR_ERR_LIMITER_ZERO_CAPACITY`, `WEIR_ERR_LIMITER_ZERO_REFILL_AMOUNT`,
/// `WEIR_ERR_LIMITER_ZERO_REFILL_INTERVAL` (zero or negative),
/// `WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY`, `WEIR_ERR_LIMITER_BUCKET_ANCHOR_IN_FUTURE`
/// (`last_refill` later than `now`).
#[no_mangle]
pub extern "C" fn weir_limiter_bucket(
    out: *mut weir_limiter,
    capacity: u64,
    refill_amount: u64,
    refill_interval_ns: i64,
    last_refill: i64,
    initial_available: u64,
    now: i64,
) -> weir_status {
    build(out, || {
        Limiter::bucket(
            capacity,
            refill_amount,
            refill_interval_ns,
            last_refill,
            initial_available,
            now,
        )
    })
}

/// Makes a fixed-window limiter: windows of `window_ns` laid from
/// `window_start` (pass `now` for a new limiter), `initial_available` of
/// `capacity` units left in the current one, and writes it to `*out`.
/// Checks, in this order, each failure its own status and `*out` untouched:
/// `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`, `WEIR_ERR_LIMITER_ZERO_CAPACITY`,
/// `WEIR_ERR_LIMITER_ZERO_WINDOW` (zero or
/// negative), `WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY`,
/// `WEIR_ERR_LIMITER_WINDOW_ANCHOR_IN_FUTURE` (`window_start` later than `now`).
#[no_mangle]
pub extern "C" fn weir_limiter_fixed_window(
    out: *mut weir_limiter,
    capacity: u64,
    window_ns: i64,
    window_start: i64,
    initial_available: u64,
    now: i64,
) -> weir_status {
    build(out, || {
        Limiter::fixed_window(capacity, window_ns, window_start, initial_available, now)
    })
}

/// Makes a cooldown limiter: batches of `capacity` units, a gate of
/// `cooldown_ns` after each, and writes it to `*out`. `cooldown_end` at or
/// before `now` means no gate is armed. Valid seeds: units with no gate
/// (only `initial_available` units before the first gate), no units with a
/// gate (throttled until `cooldown_end`), no units and no gate (full at
/// once). Checks, in this order, each failure its own status and `*out`
/// untouched: `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`, `WEIR_ERR_LIMITER_ZERO_CAPACITY`,
/// `WEIR_ERR_LIMITER_ZERO_COOLDOWN` (zero or negative),
/// `WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY`, `WEIR_ERR_LIMITER_COOLDOWN_ARMED_WITH_TOKENS`
/// (units while `cooldown_end` is later than `now`).
#[no_mangle]
pub extern "C" fn weir_limiter_cooldown(
    out: *mut weir_limiter,
    capacity: u64,
    cooldown_ns: i64,
    cooldown_end: i64,
    initial_available: u64,
    now: i64,
) -> weir_status {
    build(out, || {
        Limiter::cooldown(capacity, cooldown_ns, cooldown_end, initial_available, now)
    })
}

/// Brings the limiter forward to `now` (refill, rollover, release) and takes
/// `amount` units, all or nothing. Returns whether it took them. A refusal
/// leaves `*limiter` untouched; so do an `amount` of 0, a NULL, misaligned
/// or corrupted limiter, and a drained cooldown whose deadline would
/// overflow, which all answer false. `weir_limiter_consume` tells these
/// apart.
#[no_mangle]
pub extern "C" fn weir_limiter_try_consume(
    limiter: *mut weir_limiter,
    now: i64,
    amount: u64,
) -> bool {
    weir_limiter_consume(limiter, now, amount) == WEIR_OK
}

/// `weir_limiter_try_consume` with the reason: `WEIR_OK` when the units were
/// taken; otherwise `*limiter` is untouched and the status is
/// `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED` (`limiter` is not 8-byte aligned),
/// `WEIR_ERR_LIMITER_CORRUPT`, `WEIR_ERR_LIMITER_INVALID_AMOUNT` (`amount` is 0),
/// `WEIR_ERR_LIMITER_RATE_LIMITED` (not enough units now) or
/// `WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW` (`now + cooldown_ns` would not fit).
#[no_mangle]
pub extern "C" fn weir_limiter_consume(
    limiter: *mut weir_limiter,
    now: i64,
    amount: u64,
) -> weir_status {
    guard_status(|| {
        let value = value_mut(limiter)?;
        let mut core = value.load()?;
        core.consume(now, amount)?;
        *value = weir_limiter::store(&core);
        Ok(())
    })
}

impl From<RefundError> for weir_status {
    fn from(error: RefundError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// Gives back `amount` units taken at `taken_at` (the `now` of that
/// consume) for a call that was let through but never made, as x/time/rate's
/// `Reservation.Cancel` does. The limiter is brought forward to `now` first,
/// then `min(amount, capacity − available)` units come back: never above
/// capacity, and never more than if the units had not been taken, as long
/// as you give back only units you took (the limiter keeps no record of
/// consumes and cannot check). A partial refund (capped at capacity) is
/// `WEIR_OK`; read `weir_limiter_available` for the result.
///
/// What a refund can undo: a bucket's consume at any time, until refills
/// bring it back to capacity (then `WEIR_ERR_REFUND_FULL`: the refill has
/// already given the units back). A fixed window's consume only while the
/// window it was taken in holds `now`; after it moves on (and so reset),
/// `WEIR_ERR_REFUND_EXPIRED`. A cooldown's consume only in the open batch
/// (`taken_at` at or after the last gate's deadline, units left); while a
/// gate is armed, `WEIR_ERR_REFUND_ARMED` (the batch is spent, its gate
/// stands and is not shortened), and a unit of an earlier batch,
/// `WEIR_ERR_REFUND_EXPIRED`.
///
/// Every error changes nothing: `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`,
/// `WEIR_ERR_LIMITER_CORRUPT`, `WEIR_ERR_LIMITER_INVALID_AMOUNT` (`amount` is 0),
/// `WEIR_ERR_REFUND_FUTURE` (`taken_at` later than `now`), then the
/// variant's statuses above.
#[no_mangle]
pub extern "C" fn weir_limiter_refund(
    limiter: *mut weir_limiter,
    now: i64,
    taken_at: i64,
    amount: u64,
) -> weir_status {
    guard_status(|| {
        let value = value_mut(limiter)?;
        let mut core = value.load()?;
        core.refund(now, taken_at, amount)?;
        *value = weir_limiter::store(&core);
        Ok(())
    })
}

/// The units a consume at `now` could take, projected (refill, rollover,
/// release) without changing `*limiter`. 0 for a NULL, misaligned or
/// corrupted limiter.
#[no_mangle]
pub extern "C" fn weir_limiter_available(limiter: *const weir_limiter, now: i64) -> u64 {
    reading(limiter, 0, |core| core.available(now))
}

/// The limiter's capacity, whatever its variant. 0 (never a valid capacity)
/// for a NULL, misaligned or corrupted limiter.
#[no_mangle]
pub extern "C" fn weir_limiter_capacity(limiter: *const weir_limiter) -> u64 {
    reading(limiter, 0, Limiter::capacity)
}

/// Whether the limiter is a bucket; false for a NULL, misaligned or
/// corrupted one.
#[no_mangle]
pub extern "C" fn weir_limiter_is_bucket(limiter: *const weir_limiter) -> bool {
    reading(limiter, false, Limiter::is_bucket)
}

/// Whether the limiter is a fixed window; false for a NULL, misaligned or
/// corrupted one.
#[no_mangle]
pub extern "C" fn weir_limiter_is_fixed_window(limiter: *const weir_limiter) -> bool {
    reading(limiter, false, Limiter::is_fixed_window)
}

/// Whether the limiter is a cooldown; false for a NULL, misaligned or
/// corrupted one.
#[no_mangle]
pub extern "C" fn weir_limiter_is_cooldown(limiter: *const weir_limiter) -> bool {
    reading(limiter, false, Limiter::is_cooldown)
}

/// Writes a bucket's units per refill interval to `*out`.
/// `WEIR_ERR_LIMITER_WRONG_VARIANT` if it is not a bucket; `WEIR_ERR_NULL`,
/// `WEIR_ERR_LIMITER_CORRUPT`, and `WEIR_ERR_MISALIGNED` if `limiter` or
/// `out` is not aligned for its type. `*out` is written only on success, as
/// by every getter below, and each can answer these three.
#[no_mangle]
pub extern "C" fn weir_limiter_refill_amount(
    limiter: *const weir_limiter,
    out: *mut u64,
) -> weir_status {
    getter(limiter, out, Limiter::refill_amount)
}

/// Writes a bucket's refill interval to `*out`. `WEIR_ERR_LIMITER_WRONG_VARIANT` if
/// it is not a bucket; `WEIR_ERR_NULL`, `WEIR_ERR_LIMITER_CORRUPT`.
#[no_mangle]
pub extern "C" fn weir_limiter_refill_interval_ns(
    limiter: *const weir_limiter,
    out: *mut i64,
) -> weir_status {
    getter(limiter, out, Limiter::refill_interval_ns)
}

/// Writes a bucket's refill anchor projected to `now` (the stored one when
/// `now` is earlier) to `*out`: with `weir_limiter_available` at the same
/// `now`, what a rebuild needs to keep the phase. `WEIR_ERR_LIMITER_WRONG_VARIANT`
/// if it is not a bucket; `WEIR_ERR_NULL`, `WEIR_ERR_LIMITER_CORRUPT`.
#[no_mangle]
pub extern "C" fn weir_limiter_last_refill(
    limiter: *const weir_limiter,
    now: i64,
    out: *mut i64,
) -> weir_status {
    getter(limiter, out, |core| core.last_refill(now))
}

/// Writes a fixed window's length to `*out`. `WEIR_ERR_LIMITER_WRONG_VARIANT` if it
/// is not a fixed window; `WEIR_ERR_NULL`, `WEIR_ERR_LIMITER_CORRUPT`.
#[no_mangle]
pub extern "C" fn weir_limiter_window_ns(
    limiter: *const weir_limiter,
    out: *mut i64,
) -> weir_status {
    getter(limiter, out, Limiter::window_ns)
}

/// Writes the start of the window that holds `now` (the stored one when
/// `now` is earlier) to `*out`: with `weir_limiter_available` at the same
/// `now`, what a rebuild needs. `WEIR_ERR_LIMITER_WRONG_VARIANT` if it is not a
/// fixed window; `WEIR_ERR_NULL`, `WEIR_ERR_LIMITER_CORRUPT`.
#[no_mangle]
pub extern "C" fn weir_limiter_window_start(
    limiter: *const weir_limiter,
    now: i64,
    out: *mut i64,
) -> weir_status {
    getter(limiter, out, |core| core.window_start(now))
}

/// Writes a cooldown's gate length to `*out`. `WEIR_ERR_LIMITER_WRONG_VARIANT` if it
/// is not a cooldown; `WEIR_ERR_NULL`, `WEIR_ERR_LIMITER_CORRUPT`.
#[no_mangle]
pub extern "C" fn weir_limiter_cooldown_ns(
    limiter: *const weir_limiter,
    out: *mut i64,
) -> weir_status {
    getter(limiter, out, Limiter::cooldown_ns)
}

/// Writes a cooldown's stored gate deadline to `*out`, as it is (a deadline
/// does not move with time); it gates only while `weir_limiter_available`
/// is 0. `WEIR_ERR_LIMITER_WRONG_VARIANT` if it is not a cooldown; `WEIR_ERR_NULL`,
/// `WEIR_ERR_LIMITER_CORRUPT`.
#[no_mangle]
pub extern "C" fn weir_limiter_cooldown_end(
    limiter: *const weir_limiter,
    out: *mut i64,
) -> weir_status {
    getter(limiter, out, Limiter::cooldown_end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket() -> weir_limiter {
        let mut out = core::mem::MaybeUninit::<weir_limiter>::zeroed();
        assert_eq!(
            weir_limiter_bucket(out.as_mut_ptr(), 5, 1, 10, 0, 5, 0),
            WEIR_OK
        );
        // SAFETY: the constructor succeeded, so it wrote the value.
        unsafe { out.assume_init() }
    }

    #[test]
    fn a_value_round_trips_through_the_core() {
        let value = bucket();
        assert_eq!(weir_limiter::store(&value.load().unwrap()), value);
    }

    #[test]
    fn corrupted_values_are_refused_not_trusted() {
        let good = bucket();
        let zeroed = weir_limiter {
            tag: 0,
            reserved: 0,
            capacity: 0,
            available: 0,
            amount: 0,
            period_ns: 0,
            anchor: 0,
        };
        let corruptions: [fn(&mut weir_limiter); 9] = [
            |v| v.tag = 0xdead_beef,
            |v| v.tag = TAG_BUCKET ^ 1,
            |v| v.reserved = 1,
            |v| v.capacity = 0,
            |v| v.available = v.capacity + 1,
            |v| v.amount = 0,
            |v| v.period_ns = 0,
            |v| v.period_ns = i64::MIN,
            |v| {
                v.tag = TAG_COOLDOWN;
                v.amount = 7;
            },
        ];
        let mut bad: Vec<weir_limiter> = vec![zeroed];
        for corrupt in corruptions {
            let mut value = good;
            corrupt(&mut value);
            bad.push(value);
        }
        for mut value in bad {
            let before = value;
            assert_eq!(value.load(), Err(WEIR_ERR_LIMITER_CORRUPT), "{value:?}");
            assert!(!weir_limiter_try_consume(&mut value, 100, 1));
            assert_eq!(
                weir_limiter_consume(&mut value, 100, 1),
                WEIR_ERR_LIMITER_CORRUPT
            );
            assert_eq!(weir_limiter_available(&value, 100), 0);
            assert_eq!(weir_limiter_capacity(&value), 0);
            assert!(!weir_limiter_is_bucket(&value));
            assert!(!weir_limiter_is_fixed_window(&value));
            assert!(!weir_limiter_is_cooldown(&value));
            let mut out = 0u64;
            assert_eq!(
                weir_limiter_refill_amount(&value, &mut out),
                WEIR_ERR_LIMITER_CORRUPT
            );
            assert_eq!(value, before);
        }
    }

    #[test]
    fn a_failed_constructor_leaves_out_untouched() {
        let mut out = bucket();
        let before = out;
        let failures = [
            weir_limiter_bucket(&mut out, 0, 1, 1, 0, 0, 0),
            weir_limiter_bucket(&mut out, 1, 1, 1, 5, 0, 0),
            weir_limiter_fixed_window(&mut out, 1, 0, 0, 0, 0),
            weir_limiter_cooldown(&mut out, 1, 1, 9, 1, 0),
        ];
        assert_eq!(
            failures,
            [
                WEIR_ERR_LIMITER_ZERO_CAPACITY,
                WEIR_ERR_LIMITER_BUCKET_ANCHOR_IN_FUTURE,
                WEIR_ERR_LIMITER_ZERO_WINDOW,
                WEIR_ERR_LIMITER_COOLDOWN_ARMED_WITH_TOKENS
            ]
        );
        assert_eq!(out, before);
        assert_eq!(
            weir_limiter_bucket(core::ptr::null_mut(), 1, 1, 1, 0, 0, 0),
            WEIR_ERR_NULL
        );
    }

    #[test]
    fn an_embedded_value_survives_a_byte_copy() {
        /// A caller's record with the limiter inside (no padding, so every
        /// byte copied is initialised).
        #[repr(C)]
        struct User {
            id: u64,
            quota: weir_limiter,
        }
        let mut user = User {
            id: 7,
            quota: bucket(),
        };
        assert!(weir_limiter_try_consume(&mut user.quota, 3, 4));
        let mut bytes = [0u8; core::mem::size_of::<User>()];
        let mut back = core::mem::MaybeUninit::<User>::uninit();
        // SAFETY: both copies are between a fully initialised `User` (plain
        // integers, no padding) and a byte buffer of exactly its size.
        let mut back = unsafe {
            core::ptr::copy_nonoverlapping(
                (&user as *const User).cast::<u8>(),
                bytes.as_mut_ptr(),
                bytes.len(),
            );
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), back.as_mut_ptr().cast(), bytes.len());
            back.assume_init()
        };
        assert_eq!((back.id, back.quota), (7, user.quota));
        for (now, amount) in [(5, 1), (12, 3), (12, 1), (40, 5), (41, 1)] {
            assert_eq!(
                weir_limiter_available(&back.quota, now),
                weir_limiter_available(&user.quota, now)
            );
            assert_eq!(
                weir_limiter_consume(&mut back.quota, now, amount),
                weir_limiter_consume(&mut user.quota, now, amount)
            );
        }
        assert_eq!(back.quota, user.quota);
    }
}
