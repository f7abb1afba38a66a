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

/// The window's sums and the runs at its head, kept up to date as outcomes
/// arrive and buckets expire.
#[derive(Clone, Copy, Debug, Default)]
struct Running {
    /// The sums of every bucket in the window.
    sum: Tally,
    /// The working and failing runs at the window's head.
    working: i64,
    failing: i64,
    /// Numbers of the newest buckets holding a success and a failure
    /// (0: none; buckets are numbered from 1).
    last_success: u64,
    last_failure: u64,
}

impl Running {
    /// Takes the bucket numbered `number`, leaving the window, out of the
    /// sums and runs. A bucket counts in a run only if nothing newer broke
    /// that run, i.e. it is newer than the last bucket that breaks it.
    #[inline]
    fn expire(&mut self, number: u64, gone: &Tally) {
        self.sum.remove(gone);
        if gone.working() && number > self.last_failure {
            self.working -= 1;
        }
        if gone.failing() && number > self.last_success {
            self.failing -= 1;
        }
    }
}

/// A call the breaker let through, kept by the caller until it settles the
/// call with [`Breaker::pass`] or [`Breaker::fail`], exactly once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ticket {
    /// The tag of the breaker that handed it out (see [`Breaker::tagged`]).
    pub breaker: u32,
    /// Which call it is: the breaker numbers the calls it lets through from
    /// 1. Zero for a refusal, which holds no call.
    pub serial: u64,
    /// Whether the call is still in flight (not yet settled).
    pub open: bool,
}

/// Why a ticket could not settle a call; nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TicketError {
    /// The ticket was already settled, or is a refusal's: its call (if it
    /// had one) is counted already.
    Settled,
    /// This breaker never handed the ticket out: another breaker's, or one
    /// made up or overwritten.
    Foreign,
}

/// A probability-based circuit breaker over a rolling window of outcomes.
/// Not synchronised: its owner guards it (the C handle takes a short lock).
#[derive(Clone, Debug)]
pub struct Breaker {
    sre: Sre,
    /// How much `w` falls per bucket of the failing run: (k - floor) / size.
    decay: f64,
    window: Window<Tally>,
    running: Running,
    /// When a call was last let through (at first, when the breaker was
    /// made): the probe counts from here.
    last_pass: i64,
    /// The latest `now` seen; an earlier one counts as this one.
    latest: i64,
    /// This breaker's tag, written into its tickets.
    tag: u32,
    /// How many calls it has let through: the newest ticket's serial.
    issued: u64,
    /// Calls let through and not yet settled.
    unsettled: u64,
    /// Calls let through by the probe alone: see [`Breaker::probes`].
    probes: u64,
}

impl Breaker {
    /// A breaker with an empty window opening at `now`; the probe counts
    /// from `now` too. Its tag is 0.
    pub fn new(sre: Sre, now: i64) -> Result<Breaker, SreError> {
        let mut sre = sre.check()?;
        sre.size = sre.size.max(1);
        let window =
            Window::new(i64::from(sre.size), sre.window_ns, now).map_err(SreError::Window)?;
        Ok(Breaker {
            sre,
            decay: (sre.k - sre.floor) / f64::from(sre.size),
            window,
            running: Running::default(),
            last_pass: now,
            latest: now,
            tag: 0,
            issued: 0,
            unsettled: 0,
            probes: 0,
        })
    }

    /// The breaker with its tickets tagged `tag`, so that a ticket from
    /// another breaker (with another tag) is refused. The C face gives each
    /// breaker its own.
    pub fn tagged(mut self, tag: u32) -> Breaker {
        self.tag = tag;
        self
    }

    /// The tag written into this breaker's tickets.
    pub fn tag(&self) -> u32 {
        self.tag
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
        let running = &mut self.running;
        self.window
            .advance(now, |number, gone| running.expire(number, gone));
        now
    }

    /// The sums and runs as of `now`, as [`Breaker::advance`] would leave
    /// them, without moving anything.
    fn running_at(&self, now: i64) -> Running {
        let mut running = self.running;
        self.window.expiring(now.max(self.latest), |number, gone| {
            running.expire(number, gone)
        });
        running
    }

    /// Records an outcome in the head bucket, keeping the sums and runs.
    #[inline]
    fn record(&mut self, outcome: Outcome) {
        let number = self.window.epoch();
        let bucket = self.window.head_mut();
        let (had_success, had_failure) = (bucket.success > 0, bucket.failure > 0);
        bucket.add(outcome);
        let running = &mut self.running;
        running.sum.add(outcome);
        match outcome {
            Outcome::Success if !had_success => {
                running.last_success = number;
                running.failing = 0;
                if !had_failure {
                    running.working += 1;
                }
            }
            Outcome::Failure if !had_failure => {
                running.last_failure = number;
                running.working = 0;
                if !had_success {
                    running.failing += 1;
                }
            }
            _ => {}
        }
    }

    /// The refusal fraction before the working run scales it, or `None`
    /// while the window is healthy (the fraction at or below zero).
    #[inline]
    fn base_drop(&self, running: &Running) -> Option<f64> {
        let Sre {
            k,
            floor,
            protection,
            ..
        } = self.sre;
        let w = (k - self.decay * running.failing as f64).max(floor);
        let total = running.sum.total as f64;
        let excess = total - protection - w * running.sum.success as f64;
        (excess > 0.0).then(|| excess / (total + 1.0))
    }

    /// How much of the base fraction the working run leaves standing.
    #[inline]
    fn scale(&self, running: &Running) -> f64 {
        let size = f64::from(self.sre.size);
        (size - running.working as f64) / size
    }

    /// Asks to make one call at `now` with the caller's draw `roll` from
    /// [0, 1) (clamped into range; NaN counts as 0). `Some` means go ahead:
    /// the caller keeps the ticket and settles the call with it, once, with
    /// [`Breaker::pass`] or [`Breaker::fail`]. `None` is a refusal, recorded
    /// as a drop.
    #[inline]
    pub fn allow(&mut self, now: i64, roll: f64) -> Option<Ticket> {
        let now = self.advance(now);
        let (pass, probe) = match self.base_drop(&self.running) {
            None => (true, false),
            Some(drop) => {
                let rolled = draw::clamp(roll) >= drop * self.scale(&self.running);
                let due = elapsed(self.last_pass, now) > self.sre.probe_ns;
                (rolled || due, due && !rolled)
            }
        };
        if !pass {
            self.record(Outcome::Drop);
            return None;
        }
        self.probes += u64::from(probe);
        self.last_pass = now;
        self.issued += 1;
        self.unsettled += 1;
        Some(Ticket {
            breaker: self.tag,
            serial: self.issued,
            open: true,
        })
    }

    /// Checks that `ticket` holds a call of this breaker still in flight.
    /// A copy of a ticket already settled is caught while no other call is
    /// in flight; while others are, it settles one of theirs, so settle the
    /// ticket itself, never a copy.
    #[inline]
    fn check(&self, ticket: &Ticket) -> Result<(), TicketError> {
        if ticket.breaker != self.tag || ticket.serial > self.issued {
            return Err(TicketError::Foreign);
        }
        if !ticket.open {
            return Err(TicketError::Settled);
        }
        if ticket.serial == 0 {
            return Err(TicketError::Foreign);
        }
        if self.unsettled == 0 {
            return Err(TicketError::Settled);
        }
        Ok(())
    }

    /// Settles `ticket` with `outcome` at `now`, once.
    #[inline]
    fn settle(
        &mut self,
        ticket: &mut Ticket,
        now: i64,
        outcome: Outcome,
    ) -> Result<(), TicketError> {
        self.check(ticket)?;
        ticket.open = false;
        self.unsettled -= 1;
        self.advance(now);
        self.record(outcome);
        Ok(())
    }

    /// The call behind `ticket` succeeded, finishing at `now`. A ticket
    /// already settled, or not this breaker's, is an error and changes
    /// nothing.
    #[inline]
    pub fn pass(&mut self, ticket: &mut Ticket, now: i64) -> Result<(), TicketError> {
        self.settle(ticket, now, Outcome::Success)
    }

    /// The call behind `ticket` failed, finishing at `now`. Errors as for
    /// [`Breaker::pass`].
    #[inline]
    pub fn fail(&mut self, ticket: &mut Ticket, now: i64) -> Result<(), TicketError> {
        self.settle(ticket, now, Outcome::Failure)
    }

    /// Calls let through and not yet settled.
    pub fn unsettled(&self) -> u64 {
        self.unsettled
    }

    /// How many calls the probe alone has let through since the breaker
    /// was made: calls whose roll fell under the refusal fraction, let
    /// through because `probe_ns` had passed with nothing let through. A
    /// call the roll would have let through anyway is not counted. A
    /// reading (a running count): it changes nothing.
    pub fn probes(&self) -> u64 {
        self.probes
    }

    /// The fraction of calls the breaker would refuse at `now` (an earlier
    /// `now` than one seen counts as the latest), zero while the window is
    /// healthy. The probe is left out: this is the standing throttle a
    /// dashboard or an alert wants. A reading: it changes nothing.
    pub fn ratio(&self, now: i64) -> f64 {
        let running = self.running_at(now);
        self.base_drop(&running)
            .map_or(0.0, |drop| drop * self.scale(&running))
    }

    /// The outcomes in the window at `now`. A reading: it changes nothing.
    pub fn tally(&self, now: i64) -> Tally {
        self.running_at(now).sum
    }

    /// The working and failing runs at `now`, in buckets. A reading: it
    /// changes nothing.
    pub fn runs(&self, now: i64) -> (i64, i64) {
        let running = self.running_at(now);
        (running.working, running.failing)
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

    /// Records an outcome at `now` as a settled call would, without a
    /// ticket: how these tests fill a window.
    fn put(breaker: &mut Breaker, now: i64, outcome: Outcome) {
        breaker.advance(now);
        breaker.record(outcome);
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
                0 => put(&mut breaker, now, Outcome::Success),
                1 => put(&mut breaker, now, Outcome::Failure),
                _ => {
                    breaker.allow(now, ((state >> 11) as f64) / (1u64 << 53) as f64);
                }
            }
            let at = now.max(breaker.latest);
            let (sum, working, failing) = scan(&breaker, at);
            assert_eq!(breaker.running.sum, sum);
            assert_eq!(breaker.runs(at), (working, failing));
            // A reading at a later now agrees with a scan there, and moves
            // nothing.
            let ahead = at.saturating_add((state >> 24) as i64 % (12_000 * MS));
            let (sum, working, failing) = scan(&breaker, ahead);
            assert_eq!(breaker.tally(ahead), sum);
            assert_eq!(breaker.runs(ahead), (working, failing));
            assert_eq!(breaker.latest, at);
        }
    }

    #[test]
    fn drops_and_empty_buckets_neither_extend_nor_break_a_run() {
        let mut breaker = preset();
        let width = 250 * MS;
        put(&mut breaker, 0, Outcome::Success);
        put(&mut breaker, width, Outcome::Success);
        breaker.allow(2 * width, 0.0); // nothing to refuse: not recorded
        breaker.record(Outcome::Drop);
        put(&mut breaker, 4 * width, Outcome::Success);
        assert_eq!(breaker.runs(4 * width), (3, 0));
        put(&mut breaker, 5 * width, Outcome::Failure);
        assert_eq!(breaker.runs(5 * width), (0, 1));
        breaker.record(Outcome::Drop);
        put(&mut breaker, 7 * width, Outcome::Failure);
        assert_eq!(breaker.runs(7 * width), (0, 2));
        put(&mut breaker, 7 * width, Outcome::Success); // a mixed bucket resets both
        assert_eq!(breaker.runs(7 * width), (0, 0));
        put(&mut breaker, 8 * width, Outcome::Success);
        assert_eq!(breaker.runs(8 * width), (1, 0));
    }

    #[test]
    fn the_formula_is_the_seeds() {
        let sre = Sre::PRESET;
        let mut breaker = Breaker::new(sre, 0).unwrap();
        // 20 failures then 4 successes, all in the first bucket.
        for _ in 0..20 {
            put(&mut breaker, 0, Outcome::Failure);
        }
        for _ in 0..4 {
            put(&mut breaker, 0, Outcome::Success);
        }
        // One bucket, mixed: no runs. w = k.
        let expected = (24.0 - 5.0 - 1.5 * 4.0) / 25.0;
        assert!((breaker.ratio(0) - expected).abs() < 1e-12);
        // Ten failure-only buckets next: failing 10, w = 1.5 - 0.4 * 10 / 40.
        for i in 1..=10 {
            put(&mut breaker, i * 250 * MS, Outcome::Failure);
        }
        let w: f64 = 1.5 - 0.4 * 10.0 / 40.0;
        let expected = (34.0 - 5.0 - w * 4.0) / 35.0;
        assert!((breaker.ratio(2_500 * MS) - expected).abs() < 1e-12);
        // Two success-only buckets: working 2, failing 0.
        put(&mut breaker, 2_750 * MS, Outcome::Success);
        put(&mut breaker, 3_000 * MS, Outcome::Success);
        let expected = (36.0 - 5.0 - 1.5 * 6.0) / 37.0 * 38.0 / 40.0;
        assert!((breaker.ratio(3_000 * MS) - expected).abs() < 1e-12);
    }

    #[test]
    fn the_probe_lets_one_call_through_after_a_quiet_second() {
        let mut breaker = preset();
        for _ in 0..100 {
            put(&mut breaker, 0, Outcome::Failure);
        }
        // Made at 0: nothing let through since, but only 0.5 s have passed.
        assert!(breaker.allow(500 * MS, 0.0).is_none());
        // More than a second since the breaker was made: the probe.
        assert!(breaker.allow(1_000 * MS + 1, 0.0).is_some());
        assert!(breaker.allow(1_000 * MS + 2, 0.0).is_none());
        assert!(breaker.allow(2_000 * MS + 1, 0.0).is_none());
        assert!(breaker.allow(2_000 * MS + 2, 0.0).is_some());
        // A pass by roll restarts the probe clock too.
        assert!(breaker.allow(2_500 * MS, 0.999_999).is_some());
        assert!(breaker.allow(3_000 * MS + 2, 0.0).is_none());
        assert!(breaker.allow(3_500 * MS + 1, 0.0).is_some());
    }

    #[test]
    fn probes_counts_the_calls_only_the_probe_let_through() {
        let mut breaker = preset();
        assert_eq!(breaker.probes(), 0);
        // Healthy: everything passes, none of it by the probe.
        assert!(breaker.allow(0, 0.0).is_some());
        for _ in 0..100 {
            put(&mut breaker, 0, Outcome::Failure);
        }
        assert!(breaker.allow(500 * MS, 0.0).is_none());
        assert_eq!(breaker.probes(), 0);
        assert!(breaker.allow(1_000 * MS + 1, 0.0).is_some());
        assert_eq!(breaker.probes(), 1);
        // Due for a probe, but the roll lets it through anyway: not counted.
        assert!(breaker.allow(2_000 * MS + 2, 0.999_999).is_some());
        assert_eq!(breaker.probes(), 1);
        assert!(breaker.allow(3_000 * MS + 3, 0.0).is_some());
        assert_eq!(breaker.probes(), 2);
        // A reading: it changes no later answer.
        let copy = breaker.clone();
        let _ = breaker.probes();
        assert_eq!(breaker.ratio(3_100 * MS), copy.ratio(3_100 * MS));
    }

    #[test]
    fn bad_rolls_and_backwards_time_are_safe() {
        let mut breaker = preset();
        for _ in 0..100 {
            put(&mut breaker, 5_000 * MS, Outcome::Failure);
        }
        assert!(breaker.allow(5_000 * MS, 0.0).is_some()); // the probe
        assert!(breaker.allow(5_000 * MS, f64::NAN).is_none()); // NaN is 0: refused
        assert!(breaker.allow(5_000 * MS, f64::INFINITY).is_some()); // held under 1
        let tally = breaker.tally(0); // earlier: counts as 5 s
        assert_eq!(tally.failure, 100);
        assert_eq!(tally.drop, 1);
        assert!(breaker.allow(i64::MIN, 0.0).is_none());
        assert!(breaker.allow(i64::MAX, 0.0).is_some()); // the window has aged out
        assert_eq!(breaker.tally(i64::MAX), Tally::default());
        put(&mut breaker, i64::MIN, Outcome::Failure);
        assert_eq!(breaker.tally(i64::MAX).failure, 1);
    }

    #[test]
    fn a_ticket_settles_once_and_only_its_own_breaker() {
        let mut breaker = preset().tagged(7);
        let mut ticket = breaker.allow(0, 0.5).unwrap();
        assert_eq!(
            ticket,
            Ticket {
                breaker: 7,
                serial: 1,
                open: true
            }
        );
        let mut copy = ticket;
        let mut other = breaker.allow(0, 0.5).unwrap();
        assert_eq!(breaker.unsettled(), 2);
        assert_eq!(breaker.pass(&mut ticket, 0), Ok(()));
        assert!(!ticket.open);
        assert_eq!(breaker.pass(&mut ticket, 0), Err(TicketError::Settled));
        assert_eq!(breaker.fail(&mut ticket, 0), Err(TicketError::Settled));
        // Another breaker's ticket, a serial never handed out, a refusal's.
        let mut foreign = preset().tagged(8).allow(0, 0.5).unwrap();
        assert_eq!(breaker.fail(&mut foreign, 0), Err(TicketError::Foreign));
        let mut future = Ticket {
            serial: 99,
            ..other
        };
        assert_eq!(breaker.fail(&mut future, 0), Err(TicketError::Foreign));
        let mut zero = Ticket { serial: 0, ..other };
        assert_eq!(breaker.fail(&mut zero, 0), Err(TicketError::Foreign));
        assert_eq!(
            breaker.tally(0),
            Tally {
                total: 1,
                success: 1,
                failure: 0,
                drop: 0
            }
        );
        assert_eq!(breaker.fail(&mut other, 0), Ok(()));
        // With nothing in flight, a stale copy is caught too.
        assert_eq!(breaker.unsettled(), 0);
        assert_eq!(breaker.fail(&mut copy, 0), Err(TicketError::Settled));
        assert!(copy.open, "an error changes nothing, the ticket included");
        assert_eq!(
            breaker.tally(0),
            Tally {
                total: 2,
                success: 1,
                failure: 1,
                drop: 0
            }
        );
    }
}
