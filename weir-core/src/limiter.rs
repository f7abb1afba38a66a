//! An embeddable integer limiter: one small value with three variants.
//!
//! - **Bucket**: `refill_amount` units are credited every
//!   `refill_interval_ns`, up to the capacity. Only whole intervals count;
//!   the anchor moves forward by whole intervals, so the part of an interval
//!   already run is kept, and intervals that arrive while the bucket is full
//!   are lost rather than banked.
//! - **Fixed window**: windows of `window_ns` laid on a grid that starts at
//!   the anchor (not at multiples of the window on the clock); crossing into
//!   a later window resets the headroom to the capacity.
//! - **Cooldown**: up to the capacity may be used, in any split; the call
//!   that uses the last unit arms a gate of `cooldown_ns`, and at the gate's
//!   deadline (inclusive) the whole capacity comes back.
//!
//! Every call projects the state forward to `now` first (refill, rollover,
//! release). A consume is all or nothing: a refusal leaves the stored state
//! as it was. Reads project without committing.
//!
//! Time is `i64` nanoseconds; any value, negative ones included, is an
//! instant of the caller's clock, and only differences matter (a window's
//! grid is laid from its anchor). A `now` earlier than the anchor counts as
//! no time passing. Amounts are `u64` and no arithmetic here can overflow:
//! the span from anchor to `now` is taken exactly as a `u64`, accrual is a
//! count of whole intervals and is never multiplied past the capacity, and
//! arming a gate whose deadline does not fit in an `i64` is an error.
//!
//! A limiter is snapshotted by reading `available(now)` with the projected
//! anchor (or, for a cooldown, the stored deadline) and rebuilt by passing
//! them to the same constructor with the same `now`: the rebuilt value then
//! answers every later call (any `now` at or after the snapshot's) exactly as
//! the original would.

/// Why a limiter could not be built, or a call on it could not go ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimiterError {
    /// A constructor was given a capacity of zero.
    ZeroCapacity,
    /// A bucket was given a refill amount of zero.
    ZeroRefillAmount,
    /// A bucket was given a refill interval of zero or less.
    ZeroRefillInterval,
    /// A fixed window was given a window length of zero or less.
    ZeroWindow,
    /// A cooldown was given a cooldown length of zero or less.
    ZeroCooldown,
    /// A constructor was given more initial units than the capacity.
    InitialAboveCapacity,
    /// A bucket's refill anchor is later than `now`.
    BucketAnchorInFuture,
    /// A fixed window's anchor is later than `now`.
    WindowAnchorInFuture,
    /// A cooldown was given units while its gate is still armed at `now`.
    CooldownArmedWithTokens,
    /// Draining a cooldown would arm a gate whose deadline overflows `i64`.
    CooldownDeadlineOverflow,
    /// The limiter cannot grant the amount now.
    RateLimited,
    /// A consume asked for zero units.
    InvalidAmount,
    /// A getter for one variant was asked of another.
    WrongVariant,
}

impl LimiterError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            LimiterError::ZeroCapacity => 100,
            LimiterError::ZeroRefillAmount => 101,
            LimiterError::ZeroRefillInterval => 102,
            LimiterError::ZeroWindow => 103,
            LimiterError::ZeroCooldown => 104,
            LimiterError::InitialAboveCapacity => 105,
            LimiterError::BucketAnchorInFuture => 106,
            LimiterError::WindowAnchorInFuture => 107,
            LimiterError::CooldownArmedWithTokens => 108,
            LimiterError::CooldownDeadlineOverflow => 109,
            LimiterError::RateLimited => 110,
            LimiterError::InvalidAmount => 111,
            LimiterError::WrongVariant => 112,
        }
    }
}

/// Why a refund gave nothing back (see [`Limiter::refund`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefundError {
    /// The refund asked to give back zero units.
    Amount,
    /// `taken_at` is later than `now`.
    Future,
    /// The window, or the cooldown's batch, the units came from has ended.
    Expired,
    /// A cooldown's gate is armed: the batch is spent and the gate stands.
    Armed,
    /// The limiter is at capacity at `now`: nothing to give back.
    Full,
}

impl RefundError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            // A refund of zero units is the limiter's invalid amount.
            RefundError::Amount => 111,
            RefundError::Expired => 40,
            RefundError::Armed => 41,
            RefundError::Full => 42,
            RefundError::Future => 43,
        }
    }
}

use LimiterError::*;

/// The part of a limiter that differs by variant: its setting and its
/// anchor. Periods are positive nanoseconds in any value a [`Limiter`]
/// holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimiterKind {
    /// `refill_amount` units every `refill_interval_ns`, counted from
    /// `last_refill`.
    Bucket {
        /// The units each whole interval adds, up to the capacity.
        refill_amount: u64,
        /// The length of an interval, in nanoseconds.
        refill_interval_ns: i64,
        /// The end of the last interval credited (or the anchor the limiter
        /// was built with): each whole interval after it adds
        /// `refill_amount`.
        last_refill: i64,
    },
    /// Windows of `window_ns` on the grid that starts at `window_start`.
    FixedWindow {
        /// The length of a window, in nanoseconds.
        window_ns: i64,
        /// The start of the window the units left belong to (or the anchor
        /// the limiter was built with); later windows start whole multiples
        /// of `window_ns` after it.
        window_start: i64,
    },
    /// A gate of `cooldown_ns` after the last unit goes; `cooldown_end` is
    /// the deadline of the gate armed most recently (or the one it was built
    /// with).
    Cooldown {
        /// How long the gate stays armed after the last unit goes, in
        /// nanoseconds.
        cooldown_ns: i64,
        /// The deadline of the gate armed most recently (or the one the
        /// limiter was built with); it gates only while no unit is left.
        cooldown_end: i64,
    },
}

/// An integer limiter: a capacity, the units left, and a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limiter {
    capacity: u64,
    available: u64,
    kind: LimiterKind,
}

/// Whole periods from `anchor` to `now`, and the anchor moved forward by
/// that many periods (still at or before `now`). `period` must be positive.
///
/// The span is taken exactly as a `u64` (`crate::time::elapsed` would
/// saturate it at `i64::MAX`, which would shift the phase when the anchor is
/// far below zero), and the new anchor is `now` minus the part of a period
/// already run, which lies between `anchor` and `now` and so cannot
/// overflow.
#[inline]
fn whole_periods(anchor: i64, period: i64, now: i64) -> (u64, i64) {
    let span = if now > anchor {
        now.abs_diff(anchor)
    } else {
        0
    };
    let period = period as u64;
    if span < period {
        return (0, anchor);
    }
    let run = span % period;
    (span / period, now - run as i64)
}

impl Limiter {
    /// A token bucket holding `initial_available` of `capacity` units, with
    /// `refill_amount` credited every `refill_interval_ns` counted from
    /// `last_refill`. Checks, in this order: capacity, refill amount,
    /// refill interval (zero or less), initial above capacity, anchor later
    /// than `now`.
    pub fn bucket(
        capacity: u64,
        refill_amount: u64,
        refill_interval_ns: i64,
        last_refill: i64,
        initial_available: u64,
        now: i64,
    ) -> Result<Limiter, LimiterError> {
        if capacity == 0 {
            return Err(ZeroCapacity);
        }
        if refill_amount == 0 {
            return Err(ZeroRefillAmount);
        }
        if refill_interval_ns <= 0 {
            return Err(ZeroRefillInterval);
        }
        if initial_available > capacity {
            return Err(InitialAboveCapacity);
        }
        if last_refill > now {
            return Err(BucketAnchorInFuture);
        }
        Ok(Limiter {
            capacity,
            available: initial_available,
            kind: LimiterKind::Bucket {
                refill_amount,
                refill_interval_ns,
                last_refill,
            },
        })
    }

    /// A fixed window of `window_ns` on the grid that starts at
    /// `window_start`, with `initial_available` of `capacity` units left in
    /// the window that holds `now`. Checks, in this order: capacity, window
    /// (zero or less), initial above capacity, anchor later than `now`.
    pub fn fixed_window(
        capacity: u64,
        window_ns: i64,
        window_start: i64,
        initial_available: u64,
        now: i64,
    ) -> Result<Limiter, LimiterError> {
        if capacity == 0 {
            return Err(ZeroCapacity);
        }
        if window_ns <= 0 {
            return Err(ZeroWindow);
        }
        if initial_available > capacity {
            return Err(InitialAboveCapacity);
        }
        if window_start > now {
            return Err(WindowAnchorInFuture);
        }
        Ok(Limiter {
            capacity,
            available: initial_available,
            kind: LimiterKind::FixedWindow {
                window_ns,
                window_start,
            },
        })
    }

    /// A cooldown of `capacity` units per batch and a gate of `cooldown_ns`
    /// after each batch, holding `initial_available` units, with a gate
    /// armed until `cooldown_end` when that is later than `now`. Checks, in
    /// this order: capacity, cooldown (zero or less), initial above
    /// capacity, units given while the gate is armed.
    pub fn cooldown(
        capacity: u64,
        cooldown_ns: i64,
        cooldown_end: i64,
        initial_available: u64,
        now: i64,
    ) -> Result<Limiter, LimiterError> {
        if capacity == 0 {
            return Err(ZeroCapacity);
        }
        if cooldown_ns <= 0 {
            return Err(ZeroCooldown);
        }
        if initial_available > capacity {
            return Err(InitialAboveCapacity);
        }
        if initial_available > 0 && cooldown_end > now {
            return Err(CooldownArmedWithTokens);
        }
        Ok(Limiter {
            capacity,
            available: initial_available,
            kind: LimiterKind::Cooldown {
                cooldown_ns,
                cooldown_end,
            },
        })
    }

    /// A limiter from stored parts, when they are ones a limiter can hold:
    /// a positive capacity, no more units than the capacity, a positive
    /// refill amount and positive periods. Used to take a value back from
    /// memory the library does not own; time-dependent checks (anchors in
    /// the future) are the constructors' and are not repeated here.
    pub fn from_parts(capacity: u64, available: u64, kind: LimiterKind) -> Option<Limiter> {
        let sound = match kind {
            LimiterKind::Bucket {
                refill_amount,
                refill_interval_ns,
                ..
            } => refill_amount > 0 && refill_interval_ns > 0,
            LimiterKind::FixedWindow { window_ns, .. } => window_ns > 0,
            LimiterKind::Cooldown { cooldown_ns, .. } => cooldown_ns > 0,
        };
        (sound && capacity > 0 && available <= capacity).then_some(Limiter {
            capacity,
            available,
            kind,
        })
    }

    /// The stored units and variant, as they are (not projected): the
    /// inverse of [`Limiter::from_parts`].
    pub fn parts(&self) -> (u64, LimiterKind) {
        (self.available, self.kind)
    }

    /// The state as it would be at `now`: refill, rollover or release
    /// applied, nothing committed.
    #[inline]
    fn projected(&self, now: i64) -> Limiter {
        let mut next = *self;
        match &mut next.kind {
            LimiterKind::Bucket {
                refill_amount,
                refill_interval_ns,
                last_refill,
            } => {
                let (intervals, anchor) = whole_periods(*last_refill, *refill_interval_ns, now);
                if intervals > 0 {
                    let room = self.capacity - self.available;
                    next.available = match intervals.checked_mul(*refill_amount) {
                        Some(credit) if credit < room => self.available + credit,
                        _ => self.capacity,
                    };
                    *last_refill = anchor;
                }
            }
            LimiterKind::FixedWindow {
                window_ns,
                window_start,
            } => {
                let (windows, anchor) = whole_periods(*window_start, *window_ns, now);
                if windows > 0 {
                    next.available = self.capacity;
                    *window_start = anchor;
                }
            }
            LimiterKind::Cooldown { cooldown_end, .. } => {
                if self.available == 0 && now >= *cooldown_end {
                    next.available = self.capacity;
                }
            }
        }
        next
    }

    /// Takes `amount` units at `now`, all or nothing. Zero is
    /// [`LimiterError::InvalidAmount`], too many is
    /// [`LimiterError::RateLimited`], and a drained cooldown whose deadline
    /// would overflow is [`LimiterError::CooldownDeadlineOverflow`]; on any
    /// error the limiter is unchanged.
    #[inline]
    pub fn consume(&mut self, now: i64, amount: u64) -> Result<(), LimiterError> {
        if amount == 0 {
            return Err(InvalidAmount);
        }
        let mut next = self.projected(now);
        if amount > next.available {
            return Err(RateLimited);
        }
        next.available -= amount;
        if let LimiterKind::Cooldown {
            cooldown_ns,
            cooldown_end,
        } = &mut next.kind
        {
            if next.available == 0 {
                *cooldown_end = now
                    .checked_add(*cooldown_ns)
                    .ok_or(CooldownDeadlineOverflow)?;
            }
        }
        *self = next;
        Ok(())
    }

    /// Whether `amount` units were taken at `now` (see [`Limiter::consume`]);
    /// false, with nothing changed, for zero or on any error.
    #[inline]
    pub fn try_consume(&mut self, now: i64, amount: u64) -> bool {
        self.consume(now, amount).is_ok()
    }

    /// Gives back `amount` units taken at `taken_at` for a call that was
    /// let through but never made (x/time/rate's `Reservation.Cancel`).
    /// Brings the limiter forward to `now` first, as a consume does, then
    /// adds back `min(amount, capacity − available)`: never above capacity,
    /// and never more than if the units had not been taken, provided the
    /// caller gives back only units it took (the limiter keeps no record of
    /// consumes, so it cannot check that). Returns the units given back.
    ///
    /// What a refund can undo, by variant:
    /// - bucket: any consume, whenever; once refills have brought the
    ///   bucket back to capacity there is nothing to give back
    ///   ([`RefundError::Full`]);
    /// - fixed window: only a consume in the window that holds `now`
    ///   (`taken_at` at or after its start); after the window has moved on,
    ///   [`RefundError::Expired`];
    /// - cooldown: only a consume in the open batch (`taken_at` at or after
    ///   the last gate's deadline, with units left); while the gate is
    ///   armed the batch is spent and its gate stands,
    ///   [`RefundError::Armed`], and a unit of an earlier batch is
    ///   [`RefundError::Expired`].
    ///
    /// Checks, in this order: `amount` zero ([`RefundError::Amount`]),
    /// `taken_at` later than `now` ([`RefundError::Future`]), then the
    /// variant's. On any error the limiter is unchanged.
    pub fn refund(&mut self, now: i64, taken_at: i64, amount: u64) -> Result<u64, RefundError> {
        if amount == 0 {
            return Err(RefundError::Amount);
        }
        if taken_at > now {
            return Err(RefundError::Future);
        }
        let mut next = self.projected(now);
        match next.kind {
            LimiterKind::Bucket { .. } => {}
            LimiterKind::FixedWindow { window_start, .. } => {
                if taken_at < window_start {
                    return Err(RefundError::Expired);
                }
            }
            LimiterKind::Cooldown { cooldown_end, .. } => {
                if next.available == 0 {
                    return Err(RefundError::Armed);
                }
                if taken_at < cooldown_end {
                    return Err(RefundError::Expired);
                }
            }
        }
        let room = next.capacity - next.available;
        if room == 0 {
            return Err(RefundError::Full);
        }
        let back = amount.min(room);
        next.available += back;
        *self = next;
        Ok(back)
    }

    /// The units a consume at `now` could take, without committing the
    /// projection.
    pub fn available(&self, now: i64) -> u64 {
        self.projected(now).available
    }

    /// The capacity, whatever the variant.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Whether this is a bucket.
    pub fn is_bucket(&self) -> bool {
        matches!(self.kind, LimiterKind::Bucket { .. })
    }

    /// Whether this is a fixed window.
    pub fn is_fixed_window(&self) -> bool {
        matches!(self.kind, LimiterKind::FixedWindow { .. })
    }

    /// Whether this is a cooldown.
    pub fn is_cooldown(&self) -> bool {
        matches!(self.kind, LimiterKind::Cooldown { .. })
    }

    /// A bucket's units per interval.
    pub fn refill_amount(&self) -> Result<u64, LimiterError> {
        match self.kind {
            LimiterKind::Bucket { refill_amount, .. } => Ok(refill_amount),
            _ => Err(WrongVariant),
        }
    }

    /// A bucket's refill interval.
    pub fn refill_interval_ns(&self) -> Result<i64, LimiterError> {
        match self.kind {
            LimiterKind::Bucket {
                refill_interval_ns, ..
            } => Ok(refill_interval_ns),
            _ => Err(WrongVariant),
        }
    }

    /// A bucket's refill anchor projected to `now`: with `available(now)`,
    /// what a rebuild needs to keep the phase.
    pub fn last_refill(&self, now: i64) -> Result<i64, LimiterError> {
        match self.projected(now).kind {
            LimiterKind::Bucket { last_refill, .. } => Ok(last_refill),
            _ => Err(WrongVariant),
        }
    }

    /// A fixed window's length.
    pub fn window_ns(&self) -> Result<i64, LimiterError> {
        match self.kind {
            LimiterKind::FixedWindow { window_ns, .. } => Ok(window_ns),
            _ => Err(WrongVariant),
        }
    }

    /// The start of the window that holds `now` (the stored one when `now`
    /// is earlier): with `available(now)`, what a rebuild needs.
    pub fn window_start(&self, now: i64) -> Result<i64, LimiterError> {
        match self.projected(now).kind {
            LimiterKind::FixedWindow { window_start, .. } => Ok(window_start),
            _ => Err(WrongVariant),
        }
    }

    /// A cooldown's gate length.
    pub fn cooldown_ns(&self) -> Result<i64, LimiterError> {
        match self.kind {
            LimiterKind::Cooldown { cooldown_ns, .. } => Ok(cooldown_ns),
            _ => Err(WrongVariant),
        }
    }

    /// A cooldown's stored deadline, as it is: a deadline does not move with
    /// time. It gates only while `available(now)` is 0.
    pub fn cooldown_end(&self) -> Result<i64, LimiterError> {
        match self.kind {
            LimiterKind::Cooldown { cooldown_end, .. } => Ok(cooldown_end),
            _ => Err(WrongVariant),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Refunds, worked by hand.
    #[test]
    fn a_bucket_refund_gives_back_up_to_capacity() {
        // 10 units, 1 every 100 ns, full at 0. Take 4 at 0: 6 left.
        let mut l = Limiter::bucket(10, 1, 100, 0, 10, 0).unwrap();
        l.consume(0, 4).unwrap();
        assert_eq!(l.refund(0, 0, 4), Ok(4));
        assert_eq!(l.available(0), 10);
        // Take 4 at 0, 2 refill by 250 (intervals at 100 and 200): 8. A
        // refund of 4 is capped at the 2 of room left.
        l.consume(0, 4).unwrap();
        assert_eq!(l.refund(250, 0, 4), Ok(2));
        assert_eq!(l.available(250), 10);
        // Full already: nothing to give back, nothing changed.
        let before = l;
        assert_eq!(l.refund(250, 0, 1), Err(RefundError::Full));
        assert_eq!(l, before);
        // The anchor is kept: the part of an interval run is not lost.
        l.consume(250, 1).unwrap();
        assert_eq!(l.available(299), 9);
        assert_eq!(l.available(300), 10);
    }

    #[test]
    fn a_window_refund_applies_only_in_the_window_it_was_taken_in() {
        // Windows of 1000 from 0, capacity 5.
        let mut l = Limiter::fixed_window(5, 1000, 0, 5, 0).unwrap();
        l.consume(100, 3).unwrap();
        assert_eq!(l.refund(900, 100, 1), Ok(1));
        assert_eq!(l.available(900), 3);
        // At 1000 the window has moved on: the window reset already.
        let before = l;
        assert_eq!(l.refund(1000, 100, 1), Err(RefundError::Expired));
        assert_eq!(l, before);
        // A consume at 1500 refunded at 1999 is in the same window.
        l.consume(1500, 5).unwrap();
        assert_eq!(l.refund(1999, 1500, 2), Ok(2));
        assert_eq!(l.available(1999), 2);
    }

    #[test]
    fn a_cooldown_refund_applies_only_in_the_open_batch() {
        // Batches of 3, a gate of 500.
        let mut l = Limiter::cooldown(3, 500, 0, 3, 0).unwrap();
        l.consume(10, 2).unwrap();
        assert_eq!(l.refund(20, 10, 2), Ok(2));
        assert_eq!(l.available(20), 3);
        // Drain at 30: the gate stands until 530; no refund while armed.
        l.consume(30, 3).unwrap();
        let before = l;
        assert_eq!(l.refund(40, 30, 1), Err(RefundError::Armed));
        assert_eq!(l, before);
        // At 530 the batch is new: units of the old one are expired.
        l.consume(600, 1).unwrap();
        assert_eq!(l.refund(600, 30, 1), Err(RefundError::Expired));
        assert_eq!(l.refund(600, 600, 1), Ok(1));
        assert_eq!(l.available(600), 3);
    }

    #[test]
    fn a_bad_refund_changes_nothing() {
        let mut l = Limiter::bucket(10, 1, 100, 0, 5, 0).unwrap();
        let before = l;
        assert_eq!(l.refund(0, 0, 0), Err(RefundError::Amount));
        assert_eq!(l.refund(0, 1, 1), Err(RefundError::Future));
        assert_eq!(
            l.refund(i64::MIN, i64::MAX, u64::MAX),
            Err(RefundError::Future)
        );
        assert_eq!(l, before);
        assert_eq!(
            l.refund(i64::MAX, i64::MIN, u64::MAX),
            Err(RefundError::Full)
        );
        assert_eq!(l.refund(0, i64::MIN, u64::MAX), Ok(5));
        assert_eq!(l.available(0), 10);
    }

    const MS: i64 = 1_000_000;

    fn bucket(capacity: u64, amount: u64, interval: i64, initial: u64) -> Limiter {
        Limiter::bucket(capacity, amount, interval, 0, initial, 0).unwrap()
    }

    #[test]
    fn every_constructor_error_is_reachable() {
        assert_eq!(Limiter::bucket(0, 1, 1, 0, 0, 0), Err(ZeroCapacity));
        assert_eq!(Limiter::bucket(1, 0, 1, 0, 0, 0), Err(ZeroRefillAmount));
        assert_eq!(Limiter::bucket(1, 1, 0, 0, 0, 0), Err(ZeroRefillInterval));
        assert_eq!(
            Limiter::bucket(1, 1, i64::MIN, 0, 0, 0),
            Err(ZeroRefillInterval)
        );
        assert_eq!(Limiter::bucket(1, 1, 1, 0, 2, 0), Err(InitialAboveCapacity));
        assert_eq!(Limiter::bucket(1, 1, 1, 1, 0, 0), Err(BucketAnchorInFuture));
        assert_eq!(Limiter::fixed_window(0, 1, 0, 0, 0), Err(ZeroCapacity));
        assert_eq!(Limiter::fixed_window(1, 0, 0, 0, 0), Err(ZeroWindow));
        assert_eq!(Limiter::fixed_window(1, -1, 0, 0, 0), Err(ZeroWindow));
        assert_eq!(
            Limiter::fixed_window(1, 1, 0, 2, 0),
            Err(InitialAboveCapacity)
        );
        assert_eq!(
            Limiter::fixed_window(1, 1, 1, 0, 0),
            Err(WindowAnchorInFuture)
        );
        assert_eq!(Limiter::cooldown(0, 1, 0, 0, 0), Err(ZeroCapacity));
        assert_eq!(Limiter::cooldown(1, 0, 0, 0, 0), Err(ZeroCooldown));
        assert_eq!(Limiter::cooldown(1, -1, 0, 0, 0), Err(ZeroCooldown));
        assert_eq!(Limiter::cooldown(1, 1, 0, 2, 0), Err(InitialAboveCapacity));
        assert_eq!(
            Limiter::cooldown(1, 1, 1, 1, 0),
            Err(CooldownArmedWithTokens)
        );
        let mut lim = Limiter::cooldown(1, i64::MAX, 0, 1, 0).unwrap();
        assert_eq!(lim.consume(1, 1), Err(CooldownDeadlineOverflow));
        assert_eq!(lim.consume(0, 0), Err(InvalidAmount));
        assert_eq!(lim.consume(0, 2), Err(RateLimited));
        assert_eq!(lim.window_ns(), Err(WrongVariant));
    }

    #[test]
    fn checks_run_in_the_documented_order() {
        // Several faults at once report the first in the documented order.
        assert_eq!(Limiter::bucket(0, 0, 0, 9, 9, 0), Err(ZeroCapacity));
        assert_eq!(Limiter::bucket(1, 0, 0, 9, 9, 0), Err(ZeroRefillAmount));
        assert_eq!(Limiter::bucket(1, 1, 1, 9, 9, 0), Err(InitialAboveCapacity));
        assert_eq!(
            Limiter::fixed_window(1, 1, 9, 9, 0),
            Err(InitialAboveCapacity)
        );
        assert_eq!(Limiter::cooldown(1, 1, 9, 9, 0), Err(InitialAboveCapacity));
    }

    #[test]
    fn bucket_refills_whole_intervals_and_keeps_the_rest() {
        // Empty, 1 per 10 ms: a consume at 15 ms leaves the 5 ms already run
        // counting toward the next unit, due at 20 ms.
        let mut lim = bucket(5, 1, 10 * MS, 0);
        assert_eq!(lim.available(9 * MS), 0);
        assert!(lim.try_consume(15 * MS, 1));
        assert_eq!(lim.last_refill(15 * MS), Ok(10 * MS));
        assert_eq!(lim.available(19 * MS), 0);
        assert_eq!(lim.available(20 * MS), 1);
        assert!(!lim.try_consume(19 * MS, 1));
        assert!(lim.try_consume(20 * MS, 1));
    }

    #[test]
    fn bucket_discards_intervals_that_arrive_while_full() {
        let mut lim = bucket(10, 1, 100 * MS, 8);
        assert!(lim.try_consume(1000 * MS, 10));
        assert!(!lim.try_consume(1000 * MS, 1));
        assert_eq!(lim.available(1099 * MS), 0);
        assert_eq!(lim.available(1100 * MS), 1);
    }

    #[test]
    fn bucket_reads_do_not_commit() {
        let lim = bucket(10, 2, 10, 0);
        assert_eq!(lim.available(35), 6);
        assert_eq!(lim.last_refill(35), Ok(30));
        assert_eq!(lim.parts().0, 0);
        assert_eq!(lim.last_refill(-5), Ok(0));
    }

    #[test]
    fn refusal_leaves_the_state_untouched() {
        let mut lim = bucket(10, 1, 10, 3);
        let before = lim;
        assert!(!lim.try_consume(25, 6));
        assert_eq!(lim, before);
        assert!(!lim.try_consume(25, 0));
        assert_eq!(lim, before);
    }

    #[test]
    fn time_going_backwards_counts_as_none_passing() {
        let mut lim = bucket(10, 1, 10, 0);
        assert!(lim.try_consume(50, 5));
        assert_eq!(lim.available(10), 0);
        assert!(!lim.try_consume(i64::MIN, 1));
        let mut window = Limiter::fixed_window(3, 100, 0, 0, 0).unwrap();
        assert!(window.try_consume(250, 3));
        assert_eq!(window.available(120), 0);
        assert_eq!(window.window_start(120), Ok(200));
    }

    #[test]
    fn an_earlier_now_than_a_committed_consume() {
        // Bucket and window: never more than at the consume's `now`.
        let mut lim = bucket(4, 1, 10, 0);
        assert!(lim.try_consume(95, 3));
        assert_eq!(lim.available(60), lim.available(95));
        assert!(lim.try_consume(60, 1));
        assert!(!lim.try_consume(60, 1) && !lim.try_consume(95, 1));
        let mut window = Limiter::fixed_window(2, 100, 0, 2, 0).unwrap();
        assert!(window.try_consume(250, 2));
        assert!(!window.try_consume(150, 1));
        assert_eq!(window.available(299), 0);
        // Cooldown: the value does not know the latest `now`, so a drain at
        // an earlier one arms the gate from it (the header says so): here
        // the gate opens at 600, not at the 1 100 a drain at 1 000 gives.
        let mut lim = Limiter::cooldown(2, 100, 0, 2, 0).unwrap();
        assert!(lim.try_consume(1_000, 1));
        assert!(lim.try_consume(500, 1));
        assert_eq!(lim.cooldown_end(), Ok(600));
        assert_eq!(lim.available(1_050), 2);
    }

    #[test]
    fn window_grid_follows_the_anchor() {
        let mut lim = Limiter::fixed_window(3, 100 * MS, 99 * MS, 3, 99 * MS).unwrap();
        assert!(lim.try_consume(99 * MS, 3));
        assert_eq!(lim.available(100 * MS), 0);
        assert_eq!(lim.available(198 * MS), 0);
        assert_eq!(lim.available(199 * MS), 3);
        assert_eq!(lim.window_start(250 * MS), Ok(199 * MS));
        assert_eq!(lim.window_start(1000 * MS), Ok(999 * MS));
    }

    #[test]
    fn back_dated_window_headroom_is_replaced_after_one_window() {
        let lim = Limiter::fixed_window(5, 100, 0, 1, 50).unwrap();
        assert_eq!(lim.available(99), 1);
        assert_eq!(lim.available(100), 5);
    }

    #[test]
    fn cooldown_seeded_gate_releases_at_its_deadline() {
        let lim = Limiter::cooldown(4, 1000, 500, 0, 100).unwrap();
        assert_eq!(lim.available(100), 0);
        assert_eq!(lim.available(499), 0);
        assert_eq!(lim.available(500), 4);
        assert_eq!(lim.cooldown_end(), Ok(500));
    }

    #[test]
    fn cooldown_draining_arms_the_gate() {
        let mut lim = Limiter::cooldown(3, 1000, 0, 3, 0).unwrap();
        assert!(lim.try_consume(10, 2));
        assert_eq!(lim.cooldown_end(), Ok(0));
        assert!(lim.try_consume(20, 1));
        assert_eq!(lim.cooldown_end(), Ok(1020));
        assert!(!lim.try_consume(1019, 1));
        assert!(lim.try_consume(1020, 3));
        assert_eq!(lim.cooldown_end(), Ok(2020));
    }

    #[test]
    fn cooldown_granted_gives_only_its_initial_units() {
        let mut lim = Limiter::cooldown(10, 100, -50, 3, 0).unwrap();
        assert_eq!(lim.available(1000), 3);
        assert!(!lim.try_consume(1000, 4));
        assert!(lim.try_consume(1000, 3));
        assert_eq!(lim.available(1099), 0);
        assert_eq!(lim.available(1100), 10);
    }

    #[test]
    fn cooldown_released_seed_is_full_at_once() {
        let lim = Limiter::cooldown(7, 100, 0, 0, 0).unwrap();
        assert_eq!(lim.available(0), 7);
    }

    #[test]
    fn cooldown_split_consumes_match_one_consume_of_their_sum() {
        let start = Limiter::cooldown(10, 50, 0, 10, 0).unwrap();
        let mut split = start;
        let mut whole = start;
        for part in [3, 3, 4] {
            assert!(split.try_consume(7, part));
        }
        assert!(whole.try_consume(7, 10));
        assert_eq!(split, whole);
        assert_eq!(split.cooldown_end(), Ok(57));
    }

    #[test]
    fn cooldown_overflowing_deadline_changes_nothing() {
        let mut lim = Limiter::cooldown(2, 10, 0, 2, 0).unwrap();
        let before = lim;
        assert_eq!(lim.consume(i64::MAX - 5, 2), Err(CooldownDeadlineOverflow));
        assert_eq!(lim, before);
        assert!(lim.try_consume(i64::MAX - 10, 2));
        assert_eq!(lim.cooldown_end(), Ok(i64::MAX));
        assert_eq!(lim.available(i64::MAX), 2);
    }

    #[test]
    fn huge_amounts_and_times_never_overflow() {
        let max = u64::MAX;
        let mut lim = Limiter::bucket(max, max, 1, i64::MIN, 0, i64::MAX).unwrap();
        assert_eq!(lim.available(i64::MIN), 0);
        assert_eq!(lim.available(i64::MIN + 1), max);
        assert_eq!(lim.available(i64::MAX), max);
        assert_eq!(lim.last_refill(i64::MAX), Ok(i64::MAX));
        assert!(lim.try_consume(i64::MAX, max));
        assert!(!lim.try_consume(i64::MAX, 1));

        // The longest span with the longest interval: two whole intervals,
        // and the product of intervals and amount would overflow.
        let lim = Limiter::bucket(max, max - 1, i64::MAX, i64::MIN, 1, i64::MAX).unwrap();
        assert_eq!(lim.available(-2), 1);
        assert_eq!(lim.available(-1), max);
        assert_eq!(lim.last_refill(-1), Ok(-1));
        assert_eq!(lim.available(i64::MAX), max);
        assert_eq!(lim.last_refill(i64::MAX), Ok(i64::MAX - 1));

        // Many intervals of a large amount: the product would overflow.
        let lim = Limiter::bucket(max, 1 << 40, 1, 0, 5, 0).unwrap();
        assert_eq!(lim.available(1 << 30), max);
        assert_eq!(lim.available(3), 5 + 3 * (1 << 40));

        let lim = Limiter::fixed_window(max, i64::MAX, i64::MIN, 0, i64::MIN).unwrap();
        assert_eq!(lim.available(-2), 0);
        assert_eq!(lim.available(-1), max);
        assert_eq!(lim.window_start(i64::MAX), Ok(i64::MAX - 1));

        let mut lim = Limiter::cooldown(max, i64::MAX, i64::MIN, max, i64::MIN).unwrap();
        assert!(lim.try_consume(-1, max - 1));
        assert!(lim.try_consume(-1, 1));
        assert_eq!(lim.cooldown_end(), Ok(i64::MAX - 1));
    }

    #[test]
    fn from_parts_accepts_only_sound_values() {
        let bucket = LimiterKind::Bucket {
            refill_amount: 1,
            refill_interval_ns: 1,
            last_refill: 0,
        };
        assert!(Limiter::from_parts(1, 1, bucket).is_some());
        assert!(Limiter::from_parts(0, 0, bucket).is_none());
        assert!(Limiter::from_parts(1, 2, bucket).is_none());
        let no_amount = LimiterKind::Bucket {
            refill_amount: 0,
            refill_interval_ns: 1,
            last_refill: 0,
        };
        assert!(Limiter::from_parts(1, 0, no_amount).is_none());
        let window = LimiterKind::FixedWindow {
            window_ns: 0,
            window_start: 0,
        };
        assert!(Limiter::from_parts(1, 0, window).is_none());
        let cooldown = LimiterKind::Cooldown {
            cooldown_ns: -3,
            cooldown_end: 0,
        };
        assert!(Limiter::from_parts(1, 0, cooldown).is_none());
        let lim = Limiter::cooldown(4, 9, 2, 0, 1).unwrap();
        let (available, kind) = lim.parts();
        assert_eq!(Limiter::from_parts(4, available, kind), Some(lim));
    }

    #[test]
    fn getters_answer_only_their_variant() {
        let b = bucket(3, 2, 7, 1);
        let w = Limiter::fixed_window(3, 7, 0, 1, 0).unwrap();
        let c = Limiter::cooldown(3, 7, 0, 1, 0).unwrap();
        assert!(b.is_bucket() && !b.is_fixed_window() && !b.is_cooldown());
        assert!(w.is_fixed_window() && !w.is_bucket() && !w.is_cooldown());
        assert!(c.is_cooldown() && !c.is_bucket() && !c.is_fixed_window());
        assert_eq!((b.refill_amount(), b.refill_interval_ns()), (Ok(2), Ok(7)));
        assert_eq!(w.window_ns(), Ok(7));
        assert_eq!(c.cooldown_ns(), Ok(7));
        for other in [w, c] {
            assert_eq!(other.refill_amount(), Err(WrongVariant));
            assert_eq!(other.refill_interval_ns(), Err(WrongVariant));
            assert_eq!(other.last_refill(0), Err(WrongVariant));
        }
        for other in [b, c] {
            assert_eq!(other.window_ns(), Err(WrongVariant));
            assert_eq!(other.window_start(0), Err(WrongVariant));
        }
        for other in [b, w] {
            assert_eq!(other.cooldown_ns(), Err(WrongVariant));
            assert_eq!(other.cooldown_end(), Err(WrongVariant));
        }
        assert_eq!([b, w, c].map(|l| l.capacity()), [3, 3, 3]);
    }
}
