//! A concurrency ceiling: how many calls may be inside at once.
//!
//! A gate does not depend on time at all. A server past its limit answers
//! at once rather than queueing, which keeps a queue from becoming the
//! outage. The count is one atomic word, so a gate is lock-free.

use crate::atomic::{AtomicI64, Ordering};

/// A count with a ceiling. Safe to share between threads: `enter` and
/// `leave` are compare-and-swap loops on one word.
#[derive(Debug)]
pub struct Gate {
    /// The most that may be inside at once; zero or less means no ceiling.
    /// A word of its own, so that [`Gate::reconfigure`] shares the gate.
    limit: AtomicI64,
    held: AtomicI64,
}

impl Gate {
    /// A gate that nothing has entered. A `limit` of zero or less means no
    /// ceiling.
    pub fn new(limit: i64) -> Gate {
        Gate {
            limit: AtomicI64::new(limit),
            held: AtomicI64::new(0),
        }
    }

    /// Takes room if there is some; whether it did.
    pub fn enter(&self) -> bool {
        let limit = match self.limit.load(Ordering::Relaxed) {
            limit if limit <= 0 => i64::MAX,
            limit => limit,
        };
        self.held
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |held| {
                (held < limit).then_some(held + 1)
            })
            .is_ok()
    }

    /// Gives room back. Leaving more often than entering never takes the
    /// count below zero.
    pub fn leave(&self) {
        // An update that finds the gate empty leaves it so; that is the
        // documented answer, not a failure.
        let _ = self
            .held
            .fetch_update(Ordering::Release, Ordering::Relaxed, |held| {
                (held > 0).then_some(held - 1)
            });
    }

    /// How many are inside now.
    pub fn held(&self) -> i64 {
        self.held.load(Ordering::Relaxed)
    }

    /// The ceiling the gate was made with, or last given by
    /// [`Gate::reconfigure`] (zero or less: none).
    pub fn limit(&self) -> i64 {
        self.limit.load(Ordering::Relaxed)
    }

    /// Takes a new ceiling in place, keeping the calls inside: the next
    /// `enter` is judged by `limit`. Calls inside beyond a lower ceiling
    /// stay (a gate cannot call them back), and no call enters until enough
    /// have left to bring `held` under it: from the change on, `held` never
    /// exceeds the larger of what it was at the change and the new ceiling.
    /// Safe beside other calls: an `enter` racing it is judged by the old
    /// ceiling or the new one.
    pub fn reconfigure(&self, limit: i64) {
        self.limit.store(limit, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_ceiling_keeps_the_calls_inside() {
        let gate = Gate::new(4);
        for _ in 0..4 {
            assert!(gate.enter());
        }
        gate.reconfigure(2);
        assert_eq!(gate.held(), 4);
        assert!(!gate.enter());
        gate.leave();
        gate.leave();
        assert!(!gate.enter());
        gate.leave();
        assert!(gate.enter());
        assert!(!gate.enter());
        gate.reconfigure(0);
        assert!(gate.enter());
        gate.reconfigure(5);
        assert!(gate.enter() && gate.enter());
        assert!(!gate.enter());
    }

    #[test]
    fn enters_up_to_the_limit_then_refuses() {
        let gate = Gate::new(2);
        assert!(gate.enter());
        assert!(gate.enter());
        assert!(!gate.enter());
        assert_eq!(gate.held(), 2);
        gate.leave();
        assert!(gate.enter());
        assert!(!gate.enter());
    }

    #[test]
    fn zero_or_negative_limit_has_no_ceiling() {
        for limit in [0, -5] {
            let gate = Gate::new(limit);
            for _ in 0..crate::rounds(10_000) {
                assert!(gate.enter());
            }
            assert_eq!(gate.held(), crate::rounds(10_000) as i64);
        }
    }

    #[test]
    fn leaving_more_than_entered_stays_at_zero() {
        let gate = Gate::new(1);
        gate.leave();
        gate.leave();
        assert_eq!(gate.held(), 0);
        assert!(gate.enter());
        assert!(!gate.enter());
    }
}
