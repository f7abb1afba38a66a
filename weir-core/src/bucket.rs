//! A token bucket kept in one atomic word.
//!
//! `rate` tokens accrue per second up to `burst`, and a call spends the
//! tokens it costs. The bucket allows a burst after a quiet spell, which is
//! what a limit on a human-facing API wants: nobody should be refused for
//! two requests in one second after an hour of none.
//!
//! The state is a single number, the *theoretical arrival time* (TAT) of
//! the generic cell rate algorithm: the instant at which the bucket would be
//! full again if nothing more were taken. It is kept in whole nanoseconds
//! relative to the instant the bucket was made. A token is worth
//! `interval` nanoseconds of refill and the bucket holds at most `tolerance`
//! nanoseconds of them, so the tokens at `now` are
//! `burst - (tat - now) / interval` (all of `burst` once `tat <= now`).
//! Taking `n` tokens moves the TAT to `max(tat, now) + n × interval` if that
//! stays within `now + tolerance`. `take` is a load, integer arithmetic and
//! one compare-and-swap; a refusal writes nothing.

use crate::atomic::{AtomicI64, Ordering};

use crate::time::{NEVER, SECOND};

/// The most refill time a bucket may hold, `burst / rate` in nanoseconds
/// (about 73 years). Keeping the TAT, `now` and a cost each within a
/// quarter or a half of `i64` makes every sum below fit without wrapping.
pub const MAX_TOLERANCE_NS: i64 = i64::MAX / 4;

/// How far after the bucket's start its clock runs (about 146 years): a
/// later `now` counts as that instant, so time saturates there.
const HORIZON: i64 = i64::MAX / 2;

/// How far before the bucket's start a `now` is followed. Earlier readings
/// count as this one; the bucket is already empty there (see
/// [`MAX_TOLERANCE_NS`]), so that never admits more.
const PAST: i64 = -(i64::MAX / 4);

/// Why a bucket could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BucketError {
    /// The rate or the burst is NaN or infinite.
    NotFinite,
    /// The rate is negative.
    Negative,
    /// Refilling the whole burst would take longer than
    /// [`MAX_TOLERANCE_NS`] (with a rate of zero, whose tokens are counted
    /// as seconds of refill: a burst over about 2.3 × 10^9).
    TooLarge,
}

/// A token bucket. Safe to share between threads: every call is lock-free,
/// one atomic word read and, for a `take` that succeeds, swapped.
#[derive(Debug)]
pub struct Bucket {
    /// Tokens per second; zero means the bucket never refills.
    rate: f64,
    /// The most tokens the bucket holds (at least one).
    burst: f64,
    /// Nanoseconds of refill one token is worth. With a rate of zero the
    /// clock stands still and this is only a unit of account.
    interval: f64,
    /// Nanoseconds of refill a full bucket holds: `burst × interval`.
    tolerance: i64,
    /// The caller's clock reading the bucket was made at.
    anchor: i64,
    /// The theoretical arrival time, in nanoseconds after `anchor`.
    tat: AtomicI64,
}

/// `x` (finite, non-negative) rounded to the nearest whole number; `core`
/// has no `f64::round`.
fn round(x: f64) -> i64 {
    (x + 0.5) as i64
}

impl Bucket {
    /// A full bucket at `now`: `rate` tokens per second up to `burst`.
    /// A `burst` of zero or less means the rate, and a burst under one is
    /// raised to one (below one nothing could ever pass). A rate of zero is
    /// a bucket that never refills.
    pub fn new(rate: f64, burst: f64, now: i64) -> Result<Bucket, BucketError> {
        if !rate.is_finite() || !burst.is_finite() {
            return Err(BucketError::NotFinite);
        }
        if rate < 0.0 {
            return Err(BucketError::Negative);
        }
        let rate = rate.max(0.0); // -0.0 is zero
        let burst = if burst <= 0.0 { rate } else { burst }.max(1.0);
        let interval = if rate > 0.0 {
            SECOND as f64 / rate
        } else {
            SECOND as f64
        };
        let tolerance = burst * interval;
        // Infinite when the rate is too slow for one token to be represented.
        if tolerance > MAX_TOLERANCE_NS as f64 {
            return Err(BucketError::TooLarge);
        }
        Ok(Bucket {
            rate,
            burst,
            interval,
            tolerance: round(tolerance).max(1),
            anchor: now,
            tat: AtomicI64::new(0),
        })
    }

    /// Tokens per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The most tokens the bucket holds.
    pub fn burst(&self) -> f64 {
        self.burst
    }

    /// Where `now` falls on the bucket's own clock, and whether that clock
    /// is still running there (it stands still with a rate of zero and past
    /// the horizon).
    fn clock(&self, now: i64) -> (i64, bool) {
        if self.rate == 0.0 {
            return (0, false);
        }
        let since = i128::from(now) - i128::from(self.anchor);
        if since >= i128::from(HORIZON) {
            (HORIZON, false)
        } else {
            // In range: PAST <= since < HORIZON.
            (since.max(i128::from(PAST)) as i64, true)
        }
    }

    /// The refill time `n` tokens are worth, in whole nanoseconds (at least
    /// one), or `None` when `n` is not a positive finite number or is more
    /// than the bucket holds.
    fn cost(&self, n: f64) -> Option<i64> {
        if !(n > 0.0 && n <= self.burst) {
            return None;
        }
        Some(round(n * self.interval).clamp(1, self.tolerance))
    }

    /// Takes `n` tokens at `now` if the bucket holds them; whether it did.
    /// Fractional costs are allowed. A cost that is zero, negative, NaN,
    /// infinite or more than the burst is refused. An earlier `now` than one
    /// a take already used sees the bucket as it stood then, so it never
    /// admits more than that take's `now` would. Readings ([`Bucket::tokens`],
    /// [`Bucket::next`]) write nothing and so set no such time.
    pub fn take(&self, now: i64, n: f64) -> bool {
        let Some(cost) = self.cost(n) else {
            return false;
        };
        let (at, _) = self.clock(now);
        // `at + tolerance` and `max(tat, at) + cost` stay within i64: the
        // TAT never passes HORIZON + MAX_TOLERANCE_NS and a cost never
        // passes the tolerance.
        let limit = at + self.tolerance;
        self.tat
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |tat| {
                let next = tat.max(at) + cost;
                (next <= limit).then_some(next)
            })
            .is_ok()
    }

    /// How many tokens the bucket holds at `now`, between 0 and the burst.
    pub fn tokens(&self, now: i64) -> f64 {
        let (at, _) = self.clock(now);
        let owed = self.tat.load(Ordering::Relaxed) - at;
        if owed <= 0 {
            return self.burst;
        }
        ((self.tolerance - owed) as f64 / self.interval).clamp(0.0, self.burst)
    }

    /// Nanoseconds from `now` until `n` tokens will be there, without
    /// taking them: 0 when they are there now; [`NEVER`] when `n` is more
    /// than the burst, is not a positive finite number, or the bucket will
    /// not refill enough (a rate of zero, or a clock past its horizon).
    pub fn next(&self, now: i64, n: f64) -> i64 {
        let Some(cost) = self.cost(n) else {
            return NEVER;
        };
        let (at, running) = self.clock(now);
        // The instant, on the bucket's clock, from which `take(n)` passes.
        let due = self.tat.load(Ordering::Relaxed) + cost - self.tolerance;
        if due <= at {
            0
        } else if !running || due >= HORIZON {
            NEVER
        } else {
            // The caller's clock must be able to reach that instant.
            let instant = i128::from(self.anchor) + i128::from(due);
            if instant > i128::from(i64::MAX) {
                NEVER
            } else {
                i64::try_from(instant - i128::from(now)).unwrap_or(NEVER)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn starts_full_and_refills_at_the_rate() {
        let bucket = Bucket::new(10.0, 5.0, 0).unwrap();
        assert_eq!(bucket.tokens(0), 5.0);
        for _ in 0..5 {
            assert!(bucket.take(0, 1.0));
        }
        assert!(!bucket.take(0, 1.0));
        assert_eq!(bucket.tokens(0), 0.0);
        assert_eq!(bucket.next(0, 1.0), 100 * MS);
        assert!(!bucket.take(100 * MS - 1, 1.0));
        assert!(bucket.take(100 * MS, 1.0));
        assert_eq!(bucket.tokens(350 * MS), 2.5);
        // Never more than the burst, however long it rests.
        assert_eq!(bucket.tokens(3_600 * SECOND), 5.0);
    }

    #[test]
    fn a_burst_of_zero_or_less_is_the_rate_and_never_under_one() {
        assert_eq!(Bucket::new(20.0, 0.0, 0).unwrap().burst(), 20.0);
        assert_eq!(Bucket::new(20.0, -3.0, 0).unwrap().burst(), 20.0);
        assert_eq!(Bucket::new(0.5, 0.0, 0).unwrap().burst(), 1.0);
        assert_eq!(Bucket::new(0.0, 0.0, 0).unwrap().burst(), 1.0);
    }

    #[test]
    fn a_burst_under_one_is_raised_to_one() {
        let bucket = Bucket::new(1.0, 0.25, 0).unwrap();
        assert_eq!(bucket.burst(), 1.0);
        assert!(bucket.take(0, 1.0));
        assert!(!bucket.take(0, 1.0));
        assert!(bucket.take(SECOND, 1.0));
    }

    #[test]
    fn bad_parameters_are_errors() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(
                Bucket::new(bad, 1.0, 0).unwrap_err(),
                BucketError::NotFinite
            );
            assert_eq!(
                Bucket::new(1.0, bad, 0).unwrap_err(),
                BucketError::NotFinite
            );
        }
        assert_eq!(
            Bucket::new(-1.0, 1.0, 0).unwrap_err(),
            BucketError::Negative
        );
        assert_eq!(
            Bucket::new(-1e-300, 1.0, 0).unwrap_err(),
            BucketError::Negative
        );
        // -0.0 is a rate of zero.
        assert_eq!(Bucket::new(-0.0, 1.0, 0).unwrap().rate(), 0.0);
        // A burst that takes centuries to refill, and rates too slow for
        // even one token to be represented.
        assert_eq!(
            Bucket::new(1.0, 1e10, 0).unwrap_err(),
            BucketError::TooLarge
        );
        assert_eq!(
            Bucket::new(1e-300, 1.0, 0).unwrap_err(),
            BucketError::TooLarge
        );
        assert_eq!(
            Bucket::new(0.0, 1e10, 0).unwrap_err(),
            BucketError::TooLarge
        );
        // The largest accepted spans work.
        assert!(Bucket::new(1.0, 2e9, 0).unwrap().take(0, 2e9));
    }

    #[test]
    fn a_rate_of_zero_never_refills() {
        let bucket = Bucket::new(0.0, 3.0, 0).unwrap();
        assert_eq!(bucket.next(0, 3.0), 0);
        assert!(bucket.take(0, 2.0));
        assert!(bucket.take(10 * SECOND, 1.0));
        assert!(!bucket.take(i64::MAX, 1.0));
        assert_eq!(bucket.tokens(i64::MAX), 0.0);
        assert_eq!(bucket.next(i64::MAX, 1.0), NEVER);
    }

    #[test]
    fn fractional_costs() {
        let bucket = Bucket::new(1.0, 1.0, 0).unwrap();
        assert!(bucket.take(0, 0.25));
        assert!(bucket.take(0, 0.5));
        assert_eq!(bucket.tokens(0), 0.25);
        assert!(!bucket.take(0, 0.5));
        assert_eq!(bucket.next(0, 0.5), 250 * MS);
        assert!(bucket.take(250 * MS, 0.5));
    }

    #[test]
    fn bad_costs_are_refused_and_change_nothing() {
        let bucket = Bucket::new(1.0, 2.0, 0).unwrap();
        for bad in [
            0.0,
            -0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            2.5,
        ] {
            assert!(!bucket.take(0, bad), "{bad}");
            assert_eq!(bucket.next(0, bad), NEVER, "{bad}");
        }
        assert_eq!(bucket.tokens(0), 2.0);
        assert!(bucket.take(0, 2.0));
    }

    #[test]
    fn the_pass_that_lands_on_a_completed_token_is_inclusive() {
        // Twenty a second, full at twenty: calls every 2.5 ms pass while
        // (k + 1) × 50 ms − k × 2.5 ms ≤ 1 s, i.e. k ≤ 20, with k = 20 exact.
        let bucket = Bucket::new(20.0, 0.0, 0).unwrap();
        let passed: [bool; 40] = core::array::from_fn(|k| bucket.take(k as i64 * 2_500_000, 1.0));
        assert!(passed[..21].iter().all(|&p| p));
        assert!(passed[21..].iter().all(|&p| !p));
        assert_eq!(bucket.next(39 * 2_500_000, 5.0), 202_500_000);
    }

    #[test]
    fn rates_with_inexact_intervals_hold_their_burst_and_rate() {
        // A third of a second per token is not a whole number of
        // nanoseconds: the full burst still passes, and rounding never adds
        // up to an extra token over a long run.
        let bucket = Bucket::new(3.0, 3.0, 0).unwrap();
        assert!((0..3).all(|_| bucket.take(0, 1.0)));
        assert!(!bucket.take(0, 1.0));
        let passed = (1..=100_000).filter(|ms| bucket.take(ms * MS, 1.0)).count();
        assert_eq!(passed, 300);
    }

    #[test]
    fn next_is_exactly_when_take_passes() {
        let bucket = Bucket::new(3.0, 2.0, 7).unwrap();
        assert!(bucket.take(7, 2.0));
        let now = 7 + 10 * MS;
        let wait = bucket.next(now, 1.5);
        assert!(wait > 0);
        assert!(!bucket.take(now + wait - 1, 1.5));
        assert!(bucket.take(now + wait, 1.5));
    }

    #[test]
    fn time_going_backwards_never_admits_more() {
        let bucket = Bucket::new(10.0, 2.0, 0).unwrap();
        assert!(bucket.take(SECOND, 2.0));
        // Earlier than the last take: the bucket is as it was then, empty.
        assert_eq!(bucket.tokens(SECOND / 2), 0.0);
        assert!(!bucket.take(SECOND / 2, 1.0));
        assert!(!bucket.take(i64::MIN, 1.0));
        // And the handle carries on normally.
        assert!(bucket.take(SECOND + 100 * MS, 1.0));
        assert!(!bucket.take(SECOND + 100 * MS, 1.0));
    }

    #[test]
    fn only_takes_set_the_time_an_earlier_now_is_measured_against() {
        // Once a take has used a `now`, an earlier one never admits more
        // (here less: at 5 s the bucket stood owed what 10 s spent).
        let bucket = Bucket::new(10.0, 2.0, 0).unwrap();
        assert!(bucket.take(10 * SECOND, 1.0));
        assert!(!bucket.take(5 * SECOND, 1.0));
        assert!(bucket.take(10 * SECOND, 1.0));
        assert!(!bucket.take(10 * SECOND, 1.0));
        // A reading sets nothing (the state is one word, the TAT): after
        // `tokens` at 10 s, takes at 5 s see the bucket as it stood at 5 s,
        // and their cost has refilled by 10 s. The header says so.
        let bucket = Bucket::new(10.0, 2.0, 0).unwrap();
        assert_eq!(bucket.tokens(10 * SECOND), 2.0);
        assert!(bucket.take(5 * SECOND, 2.0));
        assert_eq!(bucket.tokens(10 * SECOND), 2.0);
        assert!(bucket.take(10 * SECOND, 2.0));
    }

    #[test]
    fn extreme_times_saturate() {
        // Made at the far end of the clock: nothing wraps.
        let bucket = Bucket::new(1.0, 2.0, i64::MAX).unwrap();
        assert!(bucket.take(i64::MAX, 1.0));
        assert!(bucket.take(i64::MAX, 1.0));
        assert!(!bucket.take(i64::MAX, 1.0));
        assert_eq!(bucket.next(i64::MAX, 1.0), NEVER);
        assert_eq!(bucket.tokens(i64::MIN), 0.0);
        assert_eq!(bucket.next(i64::MIN, 1.0), NEVER);

        // Made at the near end: the clock runs for about 146 years, then
        // stands still, so the far end admits what is left and no more.
        let bucket = Bucket::new(1.0, 2.0, i64::MIN).unwrap();
        assert_eq!(bucket.tokens(i64::MAX), 2.0);
        assert!(bucket.take(i64::MAX, 2.0));
        assert!(!bucket.take(i64::MAX, 1.0));
        assert_eq!(bucket.next(i64::MAX, 1.0), NEVER);

        // A bucket made at zero, asked at the ends.
        let bucket = Bucket::new(5.0, 5.0, 0).unwrap();
        assert!(!bucket.take(i64::MIN, 1.0));
        // The wait from the start of the clock is long but representable.
        assert_eq!(bucket.next(i64::MIN, 1.0), -800 * MS - i64::MIN);
        assert_eq!(bucket.tokens(i64::MAX), 5.0);
        assert!(bucket.take(0, 5.0));
        assert_eq!(bucket.next(0, 1.0), 200 * MS);
    }
}
