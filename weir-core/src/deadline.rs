//! A time budget measured from the moment it started.
//!
//! A budget of zero or less never expires: that is how most configurations
//! spell "no timeout", and leaving the timeout unset should not time every
//! call out at once. Only the time since `start` matters, so a deadline
//! never computes `start + budget` and cannot overflow.

use crate::time;

/// A budget of `budget_ns` starting at `start`. Plain data: copy it freely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    /// The caller's clock reading when the budget started.
    pub start: i64,
    /// The budget in nanoseconds; zero or less means none (never expires).
    pub budget_ns: i64,
}

impl Deadline {
    /// A budget of `budget_ns` starting at `now`.
    pub fn start(budget_ns: i64, now: i64) -> Deadline {
        Deadline {
            start: now,
            budget_ns,
        }
    }

    /// Whether there is a budget at all.
    pub fn has_budget(&self) -> bool {
        self.budget_ns > 0
    }

    /// Whether the budget is spent at `now`: true once the time since the
    /// start reaches the budget (inclusive). Never true without a budget.
    /// A `now` before the start is no time passing.
    pub fn expired(&self, now: i64) -> bool {
        self.remaining(now) == Some(0)
    }

    /// What is left of the budget at `now`, never negative; `None` when
    /// there is no budget, which has no finite remainder. A `now` before the
    /// start is no time passing: the whole budget is left.
    pub fn remaining(&self, now: i64) -> Option<i64> {
        self.has_budget()
            .then(|| (self.budget_ns - time::elapsed(self.start, now)).max(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spends_the_budget_and_expires_at_its_end() {
        let deadline = Deadline::start(100, 1_000);
        assert_eq!(deadline.remaining(1_000), Some(100));
        assert_eq!(deadline.remaining(1_040), Some(60));
        assert!(!deadline.expired(1_099));
        assert_eq!(deadline.remaining(1_100), Some(0));
        assert!(deadline.expired(1_100));
        assert_eq!(deadline.remaining(5_000), Some(0));
        assert!(deadline.expired(5_000));
    }

    #[test]
    fn no_budget_never_expires_and_has_no_remainder() {
        for budget in [0, -1, i64::MIN] {
            let deadline = Deadline::start(budget, 0);
            for now in [i64::MIN, -1, 0, 1, 1_000_000_000, i64::MAX] {
                assert!(!deadline.expired(now));
                assert_eq!(deadline.remaining(now), None);
            }
        }
    }

    #[test]
    fn time_going_backwards_is_no_time_passing() {
        let deadline = Deadline::start(100, 1_000);
        assert_eq!(deadline.remaining(10), Some(100));
        assert!(!deadline.expired(i64::MIN));
        assert_eq!(deadline.remaining(i64::MIN), Some(100));
    }

    #[test]
    fn clock_extremes_saturate() {
        let early = Deadline::start(i64::MAX, i64::MIN);
        assert_eq!(early.remaining(i64::MIN), Some(i64::MAX));
        assert_eq!(early.remaining(i64::MAX), Some(0));
        assert!(early.expired(i64::MAX));
        assert!(!early.expired(-2));
        let late = Deadline::start(i64::MAX, i64::MAX);
        assert_eq!(late.remaining(i64::MAX), Some(i64::MAX));
        assert!(!late.expired(i64::MAX));
        let one = Deadline::start(1, i64::MAX);
        assert_eq!(one.remaining(i64::MAX), Some(1));
        let tiny = Deadline::start(1, i64::MIN);
        assert!(tiny.expired(i64::MIN + 1));
        assert!(tiny.expired(i64::MAX));
    }
}
