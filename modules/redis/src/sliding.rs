//! The exact sliding window behind `WEIR.WINDOW`: at most `quota` units in
//! any stretch of `window` nanoseconds, with weir-core's `Sliding`
//! semantics (a unit counts while `now < stamp + window`; a `now` earlier
//! than the newest stamp counts as that stamp), extended with costs.
//!
//! weir-core's `Sliding` keeps its ring private and takes one unit per call,
//! so a key's stamps cannot be handed to it; this is the same algorithm over
//! stamps stored in the key, and the unit tests run both side by side on
//! the same calls to keep them in step.
//!
//! Stamps are kept as runs, `(stamp, units)` oldest first: a take of cost
//! `n` at one instant is one run. Every run holds at least one unit and the
//! units add up to at most the quota a take was allowed under, so a key
//! holds at most `quota` runs.

/// One instant's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub stamp: i64,
    pub units: u64,
}

/// What a take (or a peek) found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub allowed: bool,
    /// Units the window has room for after the take (before it, for a
    /// peek or a refusal).
    pub remaining: u64,
    /// Nanoseconds from `now` until the same cost would pass: 0 when
    /// allowed.
    pub retry_after: i64,
    /// Nanoseconds from `now` until the window is empty (the key's expiry).
    pub reset_after: i64,
}

/// A window's counted runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    pub runs: Vec<Run>,
}

impl Window {
    /// The window's clock: `now`, or the newest stamp when that is later.
    fn clock(&self, now: i64) -> i64 {
        self.runs.last().map_or(now, |run| run.stamp.max(now))
    }

    /// Drops the runs that have fallen out by `at`.
    fn expire(&mut self, window: i64, at: i64) {
        let fallen = self
            .runs
            .iter()
            .take_while(|run| run.stamp.saturating_add(window) <= at)
            .count();
        self.runs.drain(..fallen);
    }

    /// The units counted.
    pub fn live(&self) -> u64 {
        self.runs
            .iter()
            .fold(0u64, |sum, run| sum.saturating_add(run.units))
    }

    /// When the newest unit falls out: the instant the key reads as fresh.
    pub fn empty_at(&self, window: i64) -> Option<i64> {
        self.runs.last().map(|run| run.stamp.saturating_add(window))
    }

    /// Takes `cost` units at `now` (1 ≤ cost ≤ quota, checked by the caller)
    /// if the window has room, dropping the runs that fell out either way.
    /// `apply` false makes it a peek: the runs are left as they are.
    pub fn take(&mut self, quota: u64, window: i64, now: i64, cost: u64, apply: bool) -> Verdict {
        let at = self.clock(now);
        let mut runs = std::mem::take(&mut self.runs);
        let mut view = Window { runs: runs.clone() };
        view.expire(window, at);
        let live = view.live();
        let allowed = live.saturating_add(cost) <= quota;
        let retry_after = if allowed {
            0
        } else {
            // The oldest runs must fall out until `cost` fits: the instant
            // the last of them does.
            let mut need = live.saturating_add(cost) - quota;
            let mut due = i64::MAX;
            for run in &view.runs {
                need = need.saturating_sub(run.units);
                if need == 0 {
                    due = run.stamp.saturating_add(window);
                    break;
                }
            }
            // A cost over the quota never fits; the caller refuses those.
            due.saturating_sub(now)
        };
        if allowed && apply {
            match view.runs.last_mut() {
                Some(run) if run.stamp == at => run.units += cost,
                _ => view.runs.push(Run {
                    stamp: at,
                    units: cost,
                }),
            }
        }
        let remaining = quota.saturating_sub(view.live());
        let reset_after = view
            .empty_at(window)
            .map_or(0, |end| end.saturating_sub(now).max(0));
        if apply {
            runs = view.runs;
        }
        self.runs = runs;
        Verdict {
            allowed,
            remaining,
            retry_after,
            reset_after,
        }
    }

    /// Gives back up to `n` of the newest units still counted at `now`;
    /// how many came back.
    pub fn refund(&mut self, window: i64, now: i64, n: u64) -> u64 {
        let at = self.clock(now);
        self.expire(window, at);
        let mut left = n;
        while left > 0 {
            let Some(run) = self.runs.last_mut() else {
                break;
            };
            let back = left.min(run.units);
            run.units -= back;
            left -= back;
            if run.units == 0 {
                self.runs.pop();
            }
        }
        n - left
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weir_core::sliding::Sliding;

    #[test]
    fn counts_exactly_and_frees_at_stamp_plus_window() {
        let mut w = Window::default();
        for _ in 0..3 {
            assert!(w.take(3, 100, 10, 1, true).allowed);
        }
        let refused = w.take(3, 100, 50, 1, true);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after, 60);
        assert_eq!(refused.reset_after, 60);
        assert_eq!(w.runs.len(), 1);
        assert!(!w.take(3, 100, 109, 1, true).allowed);
        let at_end = w.take(3, 100, 110, 2, true);
        assert!(at_end.allowed);
        assert_eq!(at_end.remaining, 1);
    }

    #[test]
    fn costs_are_all_or_nothing_and_retry_waits_for_enough_room() {
        let mut w = Window::default();
        assert!(w.take(5, 100, 0, 2, true).allowed);
        assert!(w.take(5, 100, 10, 2, true).allowed);
        let refused = w.take(5, 100, 20, 3, true);
        assert!(!refused.allowed);
        assert_eq!(refused.remaining, 1);
        // Two must fall out: the run at 0 does at 100.
        assert_eq!(refused.retry_after, 80);
        assert_eq!(w.live(), 4);
        let peek = w.take(5, 100, 100, 3, false);
        assert!(peek.allowed);
        assert_eq!(w.live(), 4);
    }

    #[test]
    fn refunds_take_back_the_newest_units() {
        let mut w = Window::default();
        w.take(5, 100, 0, 2, true);
        w.take(5, 100, 10, 2, true);
        assert_eq!(w.refund(100, 20, 3), 3);
        assert_eq!(w.runs, vec![Run { stamp: 0, units: 1 }]);
        assert_eq!(w.refund(100, 20, 3), 1);
        assert!(w.runs.is_empty());
    }

    #[test]
    fn time_going_backwards_counts_as_the_newest_stamp() {
        let mut w = Window::default();
        assert!(w.take(1, 100, 1_000, 1, true).allowed);
        assert!(!w.take(1, 100, 0, 1, true).allowed);
        assert!(!w.take(1, 100, 1_099, 1, true).allowed);
        assert!(w.take(1, 100, 1_100, 1, true).allowed);
    }

    #[test]
    fn agrees_with_the_core_window_on_unit_takes() {
        // A fixed pseudo-random walk of instants, some going backwards.
        for (quota, window) in [(1, 7), (3, 50), (10, 1_000), (64, 333)] {
            let mut core = Sliding::new(quota as i64, window).unwrap();
            let mut mine = Window::default();
            let mut now: i64 = 0;
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                now += (x % 40) as i64 - 5;
                let a = core.take(now);
                let b = mine.take(quota, window, now, 1, true);
                assert_eq!(a, b.allowed, "quota {quota} window {window} at {now}");
                assert_eq!(core.left(now) as u64, b.remaining);
                assert!(mine.runs.len() as u64 <= quota);
            }
        }
    }
}
