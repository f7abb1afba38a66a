//! A circuit breaker that refuses a fraction of calls rather than all of
//! them: probability-based client-side throttling, with no open, half-open
//! and closed states.
//!
//! The breaker keeps a rolling window of outcomes and refuses each new call
//! with a probability that grows with the failures in it, so a struggling
//! backend keeps receiving what it can still serve instead of being cut off
//! and then flooded when it recovers. With `accepts` successes among `total`
//! calls in the window (refusals included), `failing` the run of
//! failure-only buckets at the window's head and `working` the run of
//! success-only ones:
//!
//! ```text
//! w     = max(k - (k - floor) * failing / size, floor)
//! drop  = (total - protection - w * accepts) / (total + 1)
//! drop *= (size - working) / size
//! ```
//!
//! A drop at or below zero lets everything through. Otherwise a probe lets
//! one call through once `probe_ns` has passed with nothing let through, and
//! the rest are refused when the caller's roll falls under `drop`. A refusal
//! is recorded as a drop, so a breaker that refuses never reads back as idle.
//!
//! The runs are counted as go-zero counts them: reading the buckets oldest to
//! newest, the current one included, a bucket with a failure resets
//! `working` and one with successes and no failure extends it; a bucket with
//! a success resets `failing` and one with failures and no success extends
//! it; a bucket with neither (empty, or drops only) leaves both runs as they
//! are. The breaker keeps the window's sums and both runs up to date as
//! outcomes arrive and buckets expire, so a decision never rescans the
//! window.

use crate::draw;
use crate::time::elapsed;
use crate::window::{Window, WindowError};

/// The constants of probability-based client-side throttling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sre {
    /// How many calls each success pays for while nothing is failing.
    pub k: f64,
    /// What `k` decays to as the failing run grows to the whole window.
    pub floor: f64,
    /// Calls in the window that are never refused, however they went.
    pub protection: f64,
    /// How long with nothing let through before one call goes anyway.
    pub probe_ns: i64,
    /// Buckets in the window; below one is raised to one.
    pub size: i32,
    /// How far back the window reaches.
    pub window_ns: i64,
}

impl Sre {
    /// The preset: k 1.5 decaying to 1.1, protection 5, a probe after 1 s,
    /// 40 buckets over 10 s.
    pub const PRESET: Sre = Sre {
        k: 1.5,
        floor: 1.1,
        protection: 5.0,
        probe_ns: 1_000_000_000,
        size: 40,
        window_ns: 10_000_000_000,
    };

    /// The policy checked: `floor` finite and at least 1, `k` finite and at
    /// least `floor`, `protection` finite and not negative, `probe_ns` and
    /// `window_ns` positive.
    pub fn check(self) -> Result<Sre, SreError> {
        if !(self.floor.is_finite() && self.floor >= 1.0) {
            return Err(SreError::Floor);
        }
        if !(self.k.is_finite() && self.k >= self.floor) {
            return Err(SreError::K);
        }
        if !(self.protection.is_finite() && self.protection >= 0.0) {
            return Err(SreError::Protection);
        }
        if self.probe_ns <= 0 {
            return Err(SreError::Probe);
        }
        if self.window_ns <= 0 {
            return Err(SreError::Window(WindowError::Span));
        }
        Ok(self)
    }
}

impl Default for Sre {
    fn default() -> Sre {
        Sre::PRESET
    }
}

/// Why a breaker could not be made from a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SreError {
    /// `k` is not finite or is below `floor`.
    K,
    /// `floor` is not finite or is below 1.
    Floor,
    /// `protection` is not finite or is negative.
    Protection,
    /// `probe_ns` is zero or negative.
    Probe,
    /// The window could not be made.
    Window(WindowError),
}

/// Outcomes counted in one bucket, or over a window. `total` counts every
/// call including the refused ones, so a throttled backend still reads as
/// busy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Every call: successes, failures and drops.
    pub total: i64,
    /// Calls let through that succeeded.
    pub success: i64,
    /// Calls let through that failed.
    pub failure: i64,
    /// Calls refused.
    pub drop: i64,
}

/// How a call ended, as the breaker records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Let through, and it worked.
    Success,
    /// Let through, and it failed.
    Failure,
    /// Refused before it ran: traffic, but says nothing about the backend.
    Drop,
}

impl Tally {
    /// Counts one call ending as `outcome`.
    #[inline]
    pub fn add(&mut self, outcome: Outcome) {
        self.total = self.total.saturating_add(1);
        let count = match outcome {
            Outcome::Success => &mut self.success,
            Outcome::Failure => &mut self.failure,
            Outcome::Drop => &mut self.drop,
        };
        *count = count.saturating_add(1);
    }

    /// Takes a bucket that left the window out of a running sum.
    #[inline]
    fn remove(&mut self, gone: &Tally) {
        self.total -= gone.total;
        self.success -= gone.success;
        self.failure -= gone.failure;
        self.drop -= gone.drop;
    }

    /// Successes and no failure: extends the working run.
    #[inline]
    fn working(&self) -> bool {
        self.success > 0 && self.failure == 0
    }

    /// Failures and no success: extends the failing run.
    #[inline]
    fn failing(&self) -> bool {
        self.failure > 0 && self.success == 0
    }
}

/// A probability-based circuit breaker over a rolling window of outcomes.
/// Not synchronised: its owner guards it (the C handle takes a short lock).
#[derive(Clone, Debug)]
pub struct Breaker {
    sre: Sre,
    /// How much `w` falls per bucket of the failing run: (k - floor) / size.
    decay: f64,
    window: Window<Tally>,
    /// The sums of every bucket in the window.
    sum: Tally,
    /// The working and failing runs at the window's head.
    working: i64,
    failing: i64,
    /// Numbers of the newest buckets holding a success and a failure
    /// (0: none; buckets are numbered from 1).
    last_success: u64,
    last_failure: u64,
    /// When a call was last let through (at first, when the breaker was
    /// made): the probe counts from here.
    last_pass: i64,
    /// The latest `now` seen; an earlier one counts as this one.
    latest: i64,
}

impl Breaker {
    /// A breaker with an empty window opening at `now`; the probe counts
    /// from `now` too.
    pub fn new(sre: Sre, now: i64) -> Result<Breaker, SreError> {
        let mut sre = sre.check()?;
        sre.size = sre.size.max(1);
        let window =
            Window::new(i64::from(sre.size), sre.window_ns, now).map_err(SreError::Window)?;
        Ok(Breaker {
            sre,
            decay: (sre.k - sre.floor) / f64::from(sre.size),
            window,
            sum: Tally::default(),
            working: 0,
            failing: 0,
            last_success: 0,
            last_failure: 0,
            last_pass: now,
            latest: now,
        })
    }

    /// The policy in force (its size raised to at least one).
    pub fn sre(&self) -> Sre {
        self.sre
    }

    /// Brings the window to `now` (an earlier `now` than one seen counts as
    /// the latest), taking expired buckets out of the sums and runs.
    #[inline]
    fn advance(&mut self, now: i64) -> i64 {
        let now = now.max(self.latest);
        self.latest = now;
        let Breaker {
            window,
            sum,
            working,
            failing,
            last_success,
            last_failure,
            ..
        } = self;
        window.advance(now, |number, gone| {
            sum.remove(gone);
            if gone.working() && number > *last_failure {
                *working -= 1;
            }
            if gone.failing() && number > *last_success {
                *failing -= 1;
            }
        });
        now
    }

    /// Records an outcome in the head bucket, keeping the sums and runs.
    #[inline]
    fn record(&mut self, outcome: Outcome) {
        let number = self.window.epoch();
        let bucket = self.window.head_mut();
        let (had_success, had_failure) = (bucket.success > 0, bucket.failure > 0);
        bucket.add(outcome);
        self.sum.add(outcome);
        match outcome {
            Outcome::Success if !had_success => {
                self.last_success = number;
                self.failing = 0;
                if !had_failure {
                    self.working += 1;
                }
            }
            Outcome::Failure if !had_failure => {
                self.last_failure = number;
                self.working = 0;
                if !had_success {
                    self.failing += 1;
                }
            }
            _ => {}
        }
    }

    /// The refusal fraction before the working run scales it, or `None`
    /// while the window is healthy (the fraction at or below zero).
    #[inline]
    fn base_drop(&self) -> Option<f64> {
        let Sre {
            k,
            floor,
            protection,
            ..
        } = self.sre;
        let w = (k - self.decay * self.failing as f64).max(floor);
        let total = self.sum.total as f64;
        let excess = total - protection - w * self.sum.success as f64;
        (excess > 0.0).then(|| excess / (total + 1.0))
    }

    /// How much of the base fraction the working run leaves standing.
    #[inline]
    fn scale(&self) -> f64 {
        let size = f64::from(self.sre.size);
        (size - self.working as f64) / size
    }

    /// Asks to make one call at `now` with the caller's draw `roll` from
    /// [0, 1) (clamped into range; NaN counts as 0). True means go ahead, and
    /// the caller settles the call with [`Breaker::pass`] or
    /// [`Breaker::fail`]; false is a refusal, recorded as a drop.
    #[inline]
    pub fn allow(&mut self, now: i64, roll: f64) -> bool {
        let now = self.advance(now);
        let pass = match self.base_drop() {
            None => true,
            Some(drop) => {
                elapsed(self.last_pass, now) > self.sre.probe_ns
                    || draw::clamp(roll) >= drop * self.scale()
            }
        };
        if pass {
            self.last_pass = now;
        } else {
            self.record(Outcome::Drop);
        }
        pass
    }

    /// A call let through succeeded, finishing at `now`.
    #[inline]
    pub fn pass(&mut self, now: i64) {
        self.advance(now);
        self.record(Outcome::Success);
    }

    /// A call let through failed, finishing at `now`.
    #[inline]
    pub fn fail(&mut self, now: i64) {
        self.advance(now);
        self.record(Outcome::Failure);
    }

    /// The fraction of calls the breaker would refuse at `now`, zero while
    /// the window is healthy. The probe is left out: this is the standing
    /// throttle a dashboard or an alert wants.
    pub fn ratio(&mut self, now: i64) -> f64 {
        self.advance(now);
        self.base_drop().map_or(0.0, |drop| drop * self.scale())
    }

    /// The outcomes in the window at `now`.
    pub fn tally(&mut self, now: i64) -> Tally {
        self.advance(now);
        self.sum
    }

    /// The working and failing runs at `now`, in buckets.
    pub fn runs(&mut self, now: i64) -> (i64, i64) {
        self.advance(now);
        (self.working, self.failing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    const MS: i64 = 1_000_000;

    fn preset() -> Breaker {
        Breaker::new(Sre::PRESET, 0).unwrap()
    }

    /// The runs and sums the slow way: every bucket read oldest first.
    fn scan(breaker: &Breaker, now: i64) -> (Tally, i64, i64) {
        let mut buckets = Vec::new();
        breaker.window.each(now, true, |b| buckets.push(*b));
        let (mut sum, mut working, mut failing) = (Tally::default(), 0, 0);
        for b in buckets {
            sum.total += b.total;
            sum.success += b.success;
            sum.failure += b.failure;
            sum.drop += b.drop;
            if b.failure > 0 {
                working = 0;
            } else if b.success > 0 {
                working += 1;
            }
            if b.success > 0 {
                failing = 0;
            } else if b.failure > 0 {
                failing += 1;
            }
        }
        (sum, working, failing)
    }

    #[test]
    fn the_policy_is_checked() {
        let bad = |sre: Sre| Breaker::new(sre, 0).unwrap_err();
        let p = Sre::PRESET;
        assert_eq!(bad(Sre { k: f64::NAN, ..p }), SreError::K);
        assert_eq!(bad(Sre { k: 1.05, ..p }), SreError::K);
        assert_eq!(
            bad(Sre {
                floor: 0.5,
                k: 0.9,
                ..p
            }),
            SreError::Floor
        );
        assert_eq!(
            bad(Sre {
                floor: f64::INFINITY,
                ..p
            }),
            SreError::Floor
        );
        assert_eq!(
            bad(Sre {
                protection: -1.0,
                ..p
            }),
            SreError::Protection
        );
        assert_eq!(
            bad(Sre {
                protection: f64::NAN,
                ..p
            }),
            SreError::Protection
        );
        assert_eq!(bad(Sre { probe_ns: 0, ..p }), SreError::Probe);
        assert_eq!(
            bad(Sre { window_ns: -5, ..p }),
            SreError::Window(WindowError::Span)
        );
        let one = Breaker::new(Sre { size: -3, ..p }, 0).unwrap();
        assert_eq!(one.sre().size, 1);
    }

    #[test]
    fn running_runs_and_sums_match_a_full_scan() {
        // A pseudo-random mix of outcomes, gaps and backwards steps.
        let mut breaker = preset();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut now = 0_i64;
        for _ in 0..crate::rounds(20_000) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let step = match state % 100 {
                0 => 3_000 * MS,
                1 => -400 * MS,
                2..=30 => 0,
                _ => (state >> 20) as i64 % (120 * MS),
            };
            now = now.saturating_add(step);
            match (state >> 8) % 3 {
                0 => breaker.pass(now),
                1 => breaker.fail(now),
                _ => {
                    breaker.allow(now, ((state >> 11) as f64) / (1u64 << 53) as f64);
                }
            }
            let at = now.max(breaker.latest);
            let (sum, working, failing) = scan(&breaker, at);
            assert_eq!(breaker.sum, sum);
            assert_eq!((breaker.working, breaker.failing), (working, failing));
        }
    }

    #[test]
    fn drops_and_empty_buckets_neither_extend_nor_break_a_run() {
        let mut breaker = preset();
        let width = 250 * MS;
        breaker.pass(0);
        breaker.pass(width);
        breaker.allow(2 * width, 0.0); // nothing to refuse: not recorded
        breaker.record(Outcome::Drop);
        breaker.pass(4 * width);
        assert_eq!(breaker.runs(4 * width), (3, 0));
        breaker.fail(5 * width);
        assert_eq!(breaker.runs(5 * width), (0, 1));
        breaker.record(Outcome::Drop);
        breaker.fail(7 * width);
        assert_eq!(breaker.runs(7 * width), (0, 2));
        breaker.pass(7 * width); // a mixed bucket resets both
        assert_eq!(breaker.runs(7 * width), (0, 0));
        breaker.pass(8 * width);
        assert_eq!(breaker.runs(8 * width), (1, 0));
    }

    #[test]
    fn the_formula_is_the_seeds() {
        let sre = Sre::PRESET;
        let mut breaker = Breaker::new(sre, 0).unwrap();
        // 20 failures then 4 successes, all in the first bucket.
        for _ in 0..20 {
            breaker.fail(0);
        }
        for _ in 0..4 {
            breaker.pass(0);
        }
        // One bucket, mixed: no runs. w = k.
        let expected = (24.0 - 5.0 - 1.5 * 4.0) / 25.0;
        assert!((breaker.ratio(0) - expected).abs() < 1e-12);
        // Ten failure-only buckets next: failing 10, w = 1.5 - 0.4 * 10 / 40.
        for i in 1..=10 {
            breaker.fail(i * 250 * MS);
        }
        let w: f64 = 1.5 - 0.4 * 10.0 / 40.0;
        let expected = (34.0 - 5.0 - w * 4.0) / 35.0;
        assert!((breaker.ratio(2_500 * MS) - expected).abs() < 1e-12);
        // Two success-only buckets: working 2, failing 0.
        breaker.pass(2_750 * MS);
        breaker.pass(3_000 * MS);
        let expected = (36.0 - 5.0 - 1.5 * 6.0) / 37.0 * 38.0 / 40.0;
        assert!((breaker.ratio(3_000 * MS) - expected).abs() < 1e-12);
    }

    #[test]
    fn the_probe_lets_one_call_through_after_a_quiet_second() {
        let mut breaker = preset();
        for _ in 0..100 {
            breaker.fail(0);
        }
        // Made at 0: nothing let through since, but only 0.5 s have passed.
        assert!(!breaker.allow(500 * MS, 0.0));
        // More than a second since the breaker was made: the probe.
        assert!(breaker.allow(1_000 * MS + 1, 0.0));
        assert!(!breaker.allow(1_000 * MS + 2, 0.0));
        assert!(!breaker.allow(2_000 * MS + 1, 0.0));
        assert!(breaker.allow(2_000 * MS + 2, 0.0));
        // A pass by roll restarts the probe clock too.
        assert!(breaker.allow(2_500 * MS, 0.999_999));
        assert!(!breaker.allow(3_000 * MS + 2, 0.0));
        assert!(breaker.allow(3_500 * MS + 1, 0.0));
    }

    #[test]
    fn bad_rolls_and_backwards_time_are_safe() {
        let mut breaker = preset();
        for _ in 0..100 {
            breaker.fail(5_000 * MS);
        }
        assert!(breaker.allow(5_000 * MS, 0.0)); // the probe
        assert!(!breaker.allow(5_000 * MS, f64::NAN)); // NaN is 0: refused
        assert!(breaker.allow(5_000 * MS, f64::INFINITY)); // held under 1
        let tally = breaker.tally(0); // earlier: counts as 5 s
        assert_eq!(tally.failure, 100);
        assert_eq!(tally.drop, 1);
        assert!(!breaker.allow(i64::MIN, 0.0));
        assert!(breaker.allow(i64::MAX, 0.0)); // the window has aged out
        assert_eq!(breaker.tally(i64::MAX), Tally::default());
        breaker.fail(i64::MIN);
        assert_eq!(breaker.tally(i64::MAX).failure, 1);
    }
}
