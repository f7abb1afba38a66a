//! A fixed-window counter: at most `quota` events per period, the count
//! starting again when a period ends.
//!
//! Cheaper than a sliding window, which keeps every stamp, and coarser: a
//! client can spend a quota at the end of one period and another at the
//! start of the next, so twice the quota can pass within one period's
//! length. That is the trade a fixed window makes.
//!
//! A period opens with the first event after the previous one has closed.
//! With `align`, periods instead open on multiples of the period on the
//! caller's clock (floor division, so negative readings align too): with a
//! Unix clock a daily quota then resets at midnight UTC rather than a day
//! after first use.

use crate::time::NEVER;

/// `Period::end` before any event: no `now` is below it, so no period is
/// open, and no period ever ends there (an end is at least `now + 1`).
const CLOSED: i64 = i64::MIN;

/// Where the quota stands after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeriodQuota {
    /// Admitted, and more may follow in this period.
    Under,
    /// Admitted, and it was the last one this period allows.
    Hit,
    /// Refused: the period's quota was already spent.
    Over,
}

/// Why a period counter could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeriodError {
    /// The quota is zero.
    Zero,
    /// The quota is negative.
    Negative,
}

impl PeriodError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            PeriodError::Zero | PeriodError::Negative => 18,
        }
    }
}

/// A fixed-window counter. Not synchronised: the C handle wraps it in a
/// mutex.
#[derive(Debug)]
pub struct Period {
    quota: i64,
    /// The length of a period, in nanoseconds (at least one).
    period: i64,
    align: bool,
    /// When the open period ends (exclusive); [`CLOSED`] before any event.
    /// Saturates at `i64::MAX`, which means never: the clock cannot pass it.
    /// A plain `i64` rather than an `Option<i64>`: the compiled code of an
    /// `Option` compared its unused payload, which valgrind's memcheck
    /// rightly reports as a jump on an uninitialised value.
    end: i64,
    /// Events admitted in the open period, at most `quota`.
    count: i64,
    /// The latest `now` a take was given; an earlier one counts as this.
    /// Readings do not move it: they answer as of `max(now, latest)`.
    latest: i64,
}

impl Period {
    /// A counter no event has touched: `quota` events per `period_ns`. A
    /// period under one nanosecond is raised to one.
    pub fn new(quota: i64, period_ns: i64, align: bool) -> Result<Period, PeriodError> {
        match quota {
            q if q < 0 => Err(PeriodError::Negative),
            0 => Err(PeriodError::Zero),
            _ => Ok(Period {
                quota,
                period: period_ns.max(1),
                align,
                end: CLOSED,
                count: 0,
                latest: i64::MIN,
            }),
        }
    }

    /// Takes a new quota, period and alignment in place, checked as
    /// [`Period::new`] checks them (an error changes nothing). The open
    /// period keeps its end and its count: the events it admitted count
    /// against the new quota, so it admits `quota' − count` more if that is
    /// positive and none otherwise, and it closes when it would have. The
    /// periods that open after it have the new length and alignment. The
    /// clock (the latest take's `now`) is kept. So each period admits at
    /// most its own quota: the open one at the change at most the larger
    /// of the two, and every later one at most `quota'`.
    pub fn reconfigure(
        &mut self,
        quota: i64,
        period_ns: i64,
        align: bool,
    ) -> Result<(), PeriodError> {
        let next = Period::new(quota, period_ns, align)?;
        *self = Period {
            end: self.end,
            count: self.count,
            latest: self.latest,
            ..next
        };
        Ok(())
    }

    /// The period's length after the clamp.
    pub fn period(&self) -> i64 {
        self.period
    }

    /// The open period's end, if one is open at `now`. [`CLOSED`] is
    /// below every `now`, so it is never open.
    fn open_at(&self, now: i64) -> Option<i64> {
        let end = self.end;
        (now < end || end == NEVER).then_some(end)
    }

    /// When a period opened at `now` ends.
    fn end_of_period_from(&self, now: i64) -> i64 {
        let rest = if self.align {
            self.period - now.rem_euclid(self.period)
        } else {
            self.period
        };
        now.saturating_add(rest)
    }

    /// The counter's clock at `now`: `now`, or the latest take's when that
    /// is later. Only reads.
    fn clock(&self, now: i64) -> i64 {
        self.latest.max(now)
    }

    /// Counts one event at `now` and says where the quota stands. `Under`
    /// and `Hit` are admitted; `Over` is refused.
    pub fn take(&mut self, now: i64) -> PeriodQuota {
        let now = self.clock(now);
        self.latest = now;
        if self.open_at(now).is_none() {
            self.end = self.end_of_period_from(now);
            self.count = 0;
        }
        if self.count >= self.quota {
            return PeriodQuota::Over;
        }
        self.count += 1;
        if self.count == self.quota {
            PeriodQuota::Hit
        } else {
            PeriodQuota::Under
        }
    }

    /// How many more events the open period admits at `now` (an earlier
    /// `now` than the latest take's counts as that one); the whole quota
    /// when no period is open. Pure: it changes no later answer.
    pub fn left(&self, now: i64) -> i64 {
        let now = self.clock(now);
        match self.open_at(now) {
            // A period open at a reconfiguration may hold more than a
            // smaller new quota: none left, never a negative count.
            Some(_) => (self.quota - self.count).max(0),
            None => self.quota,
        }
    }

    /// Nanoseconds from `now` until the open period ends; 0 when no period
    /// is open (the next event opens one); [`NEVER`] when the open period
    /// reaches the end of the clock. Pure, and reads time as
    /// [`Period::left`] does.
    pub fn next(&self, now: i64) -> i64 {
        let now = self.clock(now);
        match self.open_at(now) {
            None => 0,
            Some(NEVER) => NEVER,
            Some(end) => end - now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;

    #[test]
    fn counts_to_the_quota_then_refuses_until_the_period_ends() {
        let mut period = Period::new(3, 100, false).unwrap();
        assert_eq!(period.left(0), 3);
        assert_eq!(period.next(0), 0);
        // The first event opens the period at 30: it runs to 130.
        assert_eq!(period.take(30), PeriodQuota::Under);
        assert_eq!(period.take(40), PeriodQuota::Under);
        assert_eq!(period.left(40), 1);
        assert_eq!(period.take(50), PeriodQuota::Hit);
        assert_eq!(period.take(60), PeriodQuota::Over);
        assert_eq!(period.take(129), PeriodQuota::Over);
        assert_eq!(period.left(129), 0);
        assert_eq!(period.next(129), 1);
        // Closed at 130; nothing opens until the next event.
        assert_eq!(period.left(130), 3);
        assert_eq!(period.next(200), 0);
        assert_eq!(period.take(200), PeriodQuota::Under);
        assert_eq!(period.next(200), 100);
    }

    #[test]
    fn a_quota_of_one_hits_at_once() {
        let mut period = Period::new(1, 10, false).unwrap();
        assert_eq!(period.take(0), PeriodQuota::Hit);
        assert_eq!(period.take(1), PeriodQuota::Over);
        assert_eq!(period.take(10), PeriodQuota::Hit);
    }

    #[test]
    fn aligned_periods_open_on_multiples_of_the_period() {
        let mut period = Period::new(2, 100, true).unwrap();
        assert_eq!(period.take(150), PeriodQuota::Under);
        assert_eq!(period.next(150), 50);
        assert_eq!(period.take(199), PeriodQuota::Hit);
        assert_eq!(period.take(199), PeriodQuota::Over);
        assert_eq!(period.take(200), PeriodQuota::Under);
        assert_eq!(period.next(250), 50);
    }

    #[test]
    fn alignment_uses_floor_division_for_negative_readings() {
        let mut period = Period::new(1, 100, true).unwrap();
        // -150 lies in [-200, -100), not in (-200, -100] or [-100, 0).
        assert_eq!(period.take(-150), PeriodQuota::Hit);
        assert_eq!(period.next(-150), 50);
        assert_eq!(period.take(-101), PeriodQuota::Over);
        assert_eq!(period.take(-100), PeriodQuota::Hit);
        assert_eq!(period.next(-100), 100);
        assert_eq!(period.take(-1), PeriodQuota::Over);
        assert_eq!(period.take(0), PeriodQuota::Hit);
    }

    #[test]
    fn a_period_under_a_nanosecond_is_raised_to_one() {
        for raw in [0, -5, i64::MIN] {
            let mut period = Period::new(1, raw, true).unwrap();
            assert_eq!(period.period(), 1);
            assert_eq!(period.take(7), PeriodQuota::Hit);
            assert_eq!(period.take(7), PeriodQuota::Over);
            assert_eq!(period.take(8), PeriodQuota::Hit);
        }
    }

    #[test]
    fn bad_quotas_are_errors() {
        assert_eq!(
            Period::new(0, SECOND, false).unwrap_err(),
            PeriodError::Zero
        );
        assert_eq!(
            Period::new(-1, SECOND, true).unwrap_err(),
            PeriodError::Negative
        );
        assert_eq!(
            Period::new(i64::MIN, SECOND, true).unwrap_err(),
            PeriodError::Negative
        );
    }

    #[test]
    fn time_going_backwards_counts_as_no_time_passing() {
        for align in [false, true] {
            let mut period = Period::new(1, 100, align).unwrap();
            assert_eq!(period.take(1_000), PeriodQuota::Hit);
            // Earlier than the open period's start: still the same period.
            assert_eq!(period.take(900), PeriodQuota::Over);
            assert_eq!(period.take(i64::MIN), PeriodQuota::Over);
            assert_eq!(period.left(0), 0);
            assert_eq!(period.next(0), 100);
            assert_eq!(period.take(1_100), PeriodQuota::Hit);
        }
    }

    #[test]
    fn readings_are_pure() {
        // A reading used to move the clock, so `left(1 000)` made
        // a later take at 500 count as 1 000. A reading now changes no
        // later answer: the takes below answer as they would without it.
        for align in [false, true] {
            let mut read = Period::new(1, 100, align).unwrap();
            let mut plain = Period::new(1, 100, align).unwrap();
            assert_eq!(read.left(1_000), 1);
            assert_eq!(read.next(2_000), 0);
            for p in [&mut read, &mut plain] {
                assert_eq!(p.take(500), PeriodQuota::Hit);
                assert_eq!(p.take(550), PeriodQuota::Over);
                assert_eq!(p.take(1_000), PeriodQuota::Hit);
            }
            // A reading at an earlier `now` answers as of the latest take.
            assert_eq!(read.left(0), 0);
            assert_eq!(read.next(0), 100);
            assert_eq!(read.take(1_099), PeriodQuota::Over);
        }
    }

    #[test]
    fn extreme_times_saturate() {
        for align in [false, true] {
            let mut period = Period::new(2, SECOND, align).unwrap();
            assert_eq!(period.take(i64::MIN), PeriodQuota::Under);
            assert!(period.next(i64::MIN) > 0);
            let mut period = Period::new(2, SECOND, align).unwrap();
            assert_eq!(period.take(i64::MAX), PeriodQuota::Under);
            assert_eq!(period.take(i64::MAX), PeriodQuota::Hit);
            // The last period never ends: the clock cannot pass its end.
            assert_eq!(period.take(i64::MAX), PeriodQuota::Over);
            assert_eq!(period.left(i64::MAX), 0);
            assert_eq!(period.next(i64::MAX), NEVER);
        }
        // The longest period.
        let mut period = Period::new(1, i64::MAX, true).unwrap();
        assert_eq!(period.take(-1), PeriodQuota::Hit);
        assert_eq!(period.next(-1), 1);
        assert_eq!(period.take(0), PeriodQuota::Hit);
        assert_eq!(period.next(0), NEVER);
        assert_eq!(period.take(1), PeriodQuota::Over);
    }

    #[test]
    fn counting_past_the_quota_never_overflows() {
        let mut period = Period::new(i64::MAX, 10, false).unwrap();
        period.count = i64::MAX - 1;
        period.end = 10;
        period.latest = 0;
        assert_eq!(period.take(0), PeriodQuota::Hit);
        assert_eq!(period.take(0), PeriodQuota::Over);
        assert_eq!(period.take(0), PeriodQuota::Over);
        assert_eq!(period.left(0), 0);
    }
}
