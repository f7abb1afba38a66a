//! A circuit breaker that refuses a fraction of calls rather than all of
//! them: probability-based client-side throttling, with no open, half-open
//! and closed states.
//!
//! The breaker keeps a rolling window of outcomes and refuses each new call
//! with a probability that grows with the failures in it, so a struggling
//! backend keeps receiving what it can still serve instead of being cut off
//! and then flooded when it recovers. With `accepts` successes among
//! `traffic` calls in the window (refusals included unless `skip_refusals`),
//! `failing` the run of failure-only buckets at the window's head and
//! `working` the run of success-only ones:
//!
//! ```text
//! w     = max(k - (k - floor) * failing / size, floor)
//! drop  = (traffic - protection - w * accepts) / (traffic + 1)
//! drop *= (size - working) / size
//! drop  = min(drop ^ (1 / aggression), max_rejection_probability)
//! drop  = 0 while traffic < rps_threshold * window_ns / 1e9
//! ```
//!
//! The last two lines are Envoy admission_control's limits: the exponent and
//! the cap on the refusal probability, and the traffic floor (the average
//! rate over the window, below which nothing is refused). At their defaults
//! (aggression 1, cap 1, floor 0, refusals counted) they change nothing, to
//! the bit.
//!
//! A drop at or below zero lets everything through. Otherwise a probe lets
//! one call through once `probe_ns` has passed with nothing let through, and
//! the rest are refused when the caller's roll falls under `drop`. A refusal
//! is recorded as a drop, so a breaker that refuses never reads back as idle;
//! with `skip_refusals` the drops are still kept (the tally shows them) but
//! leave `traffic`, so refusals alone cannot hold the breaker shut.
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
#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::store::Slots;
use crate::window::{Window, WindowError};

/// The constants of probability-based client-side throttling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakerPolicy {
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
    /// The most the refusal probability reaches, in [0, 1] (Envoy's
    /// `max_rejection_probability`, 0.8 there by default). 1: no cap.
    pub max_rejection_probability: f64,
    /// A traffic floor in calls a second, averaged over the window
    /// (Envoy's `rps_threshold`): while the window holds fewer than
    /// `rps_threshold * window_ns / 1e9` calls, nothing is refused.
    /// Finite, not negative; 0: no floor.
    pub rps_threshold: f64,
    /// The refusal probability is raised to `1 / aggression` (Envoy's
    /// `aggression`): above 1 the breaker refuses more at a given failure
    /// rate, below 1 less. Finite and positive; 1: the formula unchanged.
    pub aggression: f64,
    /// Whether the breaker's own refusals are left out of the traffic the
    /// formula counts (as Envoy and go-zero since its PR #5551 do). False,
    /// the preset's choice, as in Google's formula: they count.
    pub skip_refusals: bool,
}

impl BreakerPolicy {
    /// The preset: k 1.5 decaying to 1.1, protection 5, a probe after 1 s,
    /// 40 buckets over 10 s; Envoy's limits off (no cap, no floor, an
    /// aggression of 1, refusals counted as traffic).
    pub const PRESET: BreakerPolicy = BreakerPolicy {
        k: 1.5,
        floor: 1.1,
        protection: 5.0,
        probe_ns: 1_000_000_000,
        size: 40,
        window_ns: 10_000_000_000,
        max_rejection_probability: 1.0,
        rps_threshold: 0.0,
        aggression: 1.0,
        skip_refusals: false,
    };

    /// The policy checked: `floor` finite and at least 1, `k` finite and at
    /// least `floor`, `protection` finite and not negative, `probe_ns` and
    /// `window_ns` positive, `max_rejection_probability` in [0, 1],
    /// `rps_threshold` finite and not negative, `aggression` finite and
    /// positive; checked in that order.
    pub fn check(self) -> Result<BreakerPolicy, BreakerPolicyError> {
        if !(self.floor.is_finite() && self.floor >= 1.0) {
            return Err(BreakerPolicyError::Floor);
        }
        if !(self.k.is_finite() && self.k >= self.floor) {
            return Err(BreakerPolicyError::K);
        }
        if !(self.protection.is_finite() && self.protection >= 0.0) {
            return Err(BreakerPolicyError::Protection);
        }
        if self.probe_ns <= 0 {
            return Err(BreakerPolicyError::Probe);
        }
        if self.window_ns <= 0 {
            return Err(BreakerPolicyError::Window(WindowError::Span));
        }
        if !(0.0..=1.0).contains(&self.max_rejection_probability) {
            return Err(BreakerPolicyError::Cap);
        }
        if !(self.rps_threshold.is_finite() && self.rps_threshold >= 0.0) {
            return Err(BreakerPolicyError::Rps);
        }
        if !(self.aggression.is_finite() && self.aggression > 0.0) {
            return Err(BreakerPolicyError::Aggression);
        }
        Ok(self)
    }
}

impl Default for BreakerPolicy {
    fn default() -> BreakerPolicy {
        BreakerPolicy::PRESET
    }
}

/// Why a breaker could not be made from a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerPolicyError {
    /// `k` is not finite or is below `floor`.
    K,
    /// `floor` is not finite or is below 1.
    Floor,
    /// `protection` is not finite or is negative.
    Protection,
    /// `probe_ns` is zero or negative.
    Probe,
    /// `max_rejection_probability` is NaN or outside [0, 1].
    Cap,
    /// `rps_threshold` is not finite or is negative.
    Rps,
    /// `aggression` is not finite or is not positive.
    Aggression,
    /// The window could not be made.
    Window(WindowError),
}

impl BreakerPolicyError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            BreakerPolicyError::K => 301,
            BreakerPolicyError::Floor => 302,
            BreakerPolicyError::Protection => 303,
            BreakerPolicyError::Probe => 304,
            BreakerPolicyError::Cap => 330,
            BreakerPolicyError::Rps => 331,
            BreakerPolicyError::Aggression => 332,
            // The breaker's own codes for its window's errors.
            BreakerPolicyError::Window(WindowError::Span) => 312,
            BreakerPolicyError::Window(WindowError::TooLarge) => 311,
            BreakerPolicyError::Window(WindowError::NoMemory) => 6,
        }
    }
}

/// Outcomes counted in one bucket, or over a window. `total` counts every
/// call including the refused ones, so a throttled backend still reads as
/// busy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BreakerTally {
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
pub enum BreakerOutcome {
    /// Let through, and it worked.
    Success,
    /// Let through, and it failed.
    Failure,
    /// Refused before it ran: traffic, but says nothing about the backend.
    Drop,
}

impl BreakerTally {
    /// Counts one call ending as `outcome`.
    #[inline]
    pub fn add(&mut self, outcome: BreakerOutcome) {
        self.total = self.total.saturating_add(1);
        let count = match outcome {
            BreakerOutcome::Success => &mut self.success,
            BreakerOutcome::Failure => &mut self.failure,
            BreakerOutcome::Drop => &mut self.drop,
        };
        *count = count.saturating_add(1);
    }

    /// Takes a bucket that left the window out of a running sum.
    #[inline]
    fn remove(&mut self, gone: &BreakerTally) {
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
    sum: BreakerTally,
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
    fn expire(&mut self, number: u64, gone: &BreakerTally) {
        self.sum.remove(gone);
        if gone.working() && number > self.last_failure {
            self.working -= 1;
        }
        if gone.failing() && number > self.last_success {
            self.failing -= 1;
        }
    }
}

/// The runs and sums of a window just opened, with `sum` written into its
/// head bucket (a resampled window: see [`Breaker::reconfigure`]).
fn resample<S: Slots<BreakerTally>>(
    window: &mut Window<BreakerTally, S>,
    sum: BreakerTally,
) -> Running {
    let number = window.epoch();
    *window.head_mut() = sum;
    Running {
        sum,
        working: i64::from(sum.working()),
        failing: i64::from(sum.failing()),
        last_success: if sum.success > 0 { number } else { 0 },
        last_failure: if sum.failure > 0 { number } else { 0 },
    }
}

/// A call the breaker let through, kept by the caller until it settles the
/// call with [`Breaker::pass`] or [`Breaker::fail`], exactly once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BreakerTicket {
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
pub enum BreakerTicketError {
    /// The ticket was already settled, or is a refusal's: its call (if it
    /// had one) is counted already.
    Settled,
    /// This breaker never handed the ticket out: another breaker's, or one
    /// made up or overwritten.
    Foreign,
}

impl BreakerTicketError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            BreakerTicketError::Settled => 9,
            BreakerTicketError::Foreign => 310,
        }
    }
}

/// A probability-based circuit breaker over a rolling window of outcomes.
/// Its buckets live in the store `S` (a `Vec<BreakerTally>` by default; see
/// [`crate::store`]). Not synchronised: its owner guards it (the C handle
/// takes a short lock).
#[derive(Clone, Debug)]
pub struct Breaker<
    #[cfg(feature = "alloc")] S = Vec<BreakerTally>,
    #[cfg(not(feature = "alloc"))] S,
> {
    sre: BreakerPolicy,
    /// How much `w` falls per bucket of the failing run: (k - floor) / size.
    decay: f64,
    /// The traffic floor in calls per window: rps_threshold * window_ns / 1e9.
    floor_calls: f64,
    window: Window<BreakerTally, S>,
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

#[cfg(feature = "alloc")]
impl Breaker {
    /// A breaker with an empty window opening at `now`; the probe counts
    /// from `now` too. Its tag is 0.
    pub fn new(sre: BreakerPolicy, now: i64) -> Result<Breaker, BreakerPolicyError> {
        let sre = sre.check()?;
        let window = Window::new(i64::from(sre.size.max(1)), sre.window_ns, now)
            .map_err(BreakerPolicyError::Window)?;
        Breaker::over(sre, window, now)
    }
}

impl<S: Slots<BreakerTally>> Breaker<S> {
    /// A breaker over the caller's store, one bucket per slot (every slot is
    /// cleared): the store's length is the window's size, whatever the
    /// policy's `size` says, and [`Breaker::policy`] reports it. Otherwise as
    /// [`Breaker::new`]: an empty window opening at `now`, the probe
    /// counting from `now`, tag 0. A store with no slot is
    /// `Window(WindowError::NoMemory)`; one of more than
    /// [`crate::window::MAX_SIZE`] slots `Window(WindowError::TooLarge)`.
    pub fn new_in(
        sre: BreakerPolicy,
        store: S,
        now: i64,
    ) -> Result<Breaker<S>, BreakerPolicyError> {
        let sre = sre.check()?;
        let window =
            Window::new_in(store, sre.window_ns, now).map_err(BreakerPolicyError::Window)?;
        Breaker::over(sre, window, now)
    }

    /// The breaker over a checked policy and its fresh window, whose size
    /// becomes the policy's.
    fn over(
        mut sre: BreakerPolicy,
        window: Window<BreakerTally, S>,
        now: i64,
    ) -> Result<Breaker<S>, BreakerPolicyError> {
        // The window holds at most MAX_SIZE buckets, far within an i32.
        sre.size = window.size() as i32;
        Ok(Breaker {
            sre,
            decay: (sre.k - sre.floor) / f64::from(sre.size),
            floor_calls: sre.rps_threshold * (sre.window_ns as f64 / 1e9),
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

    /// The breaker with its buckets moved to another store: `rehome` gets
    /// the store and must answer one holding the same slots, in the same
    /// order. Nothing else changes.
    pub fn map_store<T: Slots<BreakerTally>>(self, rehome: impl FnOnce(S) -> T) -> Breaker<T> {
        Breaker {
            sre: self.sre,
            decay: self.decay,
            floor_calls: self.floor_calls,
            window: self.window.map_store(rehome),
            running: self.running,
            last_pass: self.last_pass,
            latest: self.latest,
            tag: self.tag,
            issued: self.issued,
            unsettled: self.unsettled,
            probes: self.probes,
        }
    }

    /// The store holding the window's buckets (see [`Window::store`]).
    pub fn store(&self) -> &S {
        self.window.store()
    }

    /// The store holding the window's buckets, to say again where its
    /// slots are (see [`Window::store_mut`]).
    pub fn store_mut(&mut self) -> &mut S {
        self.window.store_mut()
    }

    /// Whether the state holds together: the running sums equal the sums
    /// of the buckets, every bucket's total is its success, failure and
    /// drop, no count is negative, the runs are within the window and no
    /// more calls are unsettled than were let through. True after every
    /// completed operation; an operation cut off part-way (its process
    /// killed while it held the lock) may leave it false.
    pub fn consistent(&self) -> bool {
        let buckets = self.window.store().as_ref();
        let size = buckets.len() as i64;
        let mut sum = BreakerTally::default();
        for bucket in buckets {
            let parts = [bucket.success, bucket.failure, bucket.drop];
            if parts.iter().any(|&part| part < 0)
                || parts.iter().map(|&part| i128::from(part)).sum::<i128>()
                    != i128::from(bucket.total)
            {
                return false;
            }
            sum.total = sum.total.saturating_add(bucket.total);
            sum.success = sum.success.saturating_add(bucket.success);
            sum.failure = sum.failure.saturating_add(bucket.failure);
            sum.drop = sum.drop.saturating_add(bucket.drop);
        }
        let running = &self.running;
        sum == running.sum
            && (0..=size).contains(&running.working)
            && (0..=size).contains(&running.failing)
            && self.unsettled <= self.issued
            && self.probes <= self.issued
    }

    /// Starts again from an empty window at the latest `now` seen, keeping
    /// the policy, the tag and the tickets' numbering: what was counted is
    /// gone, no call is in flight (settling a ticket handed out before
    /// answers [`BreakerTicketError::Settled`] while no later call is in
    /// flight), and the probe counts from that `now`.
    pub fn reset(&mut self) {
        self.window.clear(self.latest);
        self.running = Running::default();
        self.last_pass = self.latest;
        self.unsettled = 0;
        self.probes = 0;
    }

    /// The breaker with its tickets tagged `tag`, so that a ticket from
    /// another breaker (with another tag) is refused. The C face gives each
    /// breaker its own.
    pub fn tagged(mut self, tag: u32) -> Breaker<S> {
        self.tag = tag;
        self
    }

    /// The tag written into this breaker's tickets.
    pub fn tag(&self) -> u32 {
        self.tag
    }

    /// The policy in force (its size raised to at least one).
    pub fn policy(&self) -> BreakerPolicy {
        self.sre
    }

    /// Takes a new policy in place, checked as [`Breaker::new`] checks it
    /// (an error changes nothing), in the same store: the window's size
    /// stays the store's whatever `sre.size` says, as [`Breaker::new_in`]
    /// has it (for another size, [`Breaker::reconfigure_into`] a store of
    /// that size). Kept whatever the policy: the tickets in flight (they
    /// settle as before), the probe's clock, the clock, and the counts of
    /// calls let through and probes.
    ///
    /// The window: if its buckets keep their layout (the same size and
    /// `window_ns / size`), it is kept as it is, every bucket and run, and
    /// the new formula reads it from the next call. Otherwise it is
    /// resampled: the new window opens at the latest `now` seen holding the
    /// old window's sums (calls, successes, failures, drops) in its head
    /// bucket, so the formula reads the same outcomes, which then age out
    /// together one new `window_ns` later; the working and failing runs
    /// restart from that one bucket.
    pub fn reconfigure(&mut self, sre: BreakerPolicy) -> Result<(), BreakerPolicyError> {
        let mut sre = sre.check()?;
        sre.size = self.sre.size;
        if (sre.window_ns / i64::from(sre.size)).max(1) != self.window.width() {
            let sum = self.running_at(self.latest).sum;
            self.window
                .restart(sre.window_ns, self.latest)
                .map_err(BreakerPolicyError::Window)?;
            self.running = resample(&mut self.window, sum);
        }
        self.take_policy(sre);
        Ok(())
    }

    /// [`Breaker::reconfigure`] into another store, whose length is the new
    /// window's size: the window always resampled into it (as a change of
    /// layout is), everything else kept. This breaker is left as it was.
    /// Errors as [`Breaker::new_in`]'s.
    pub fn reconfigure_into<T: Slots<BreakerTally>>(
        &self,
        sre: BreakerPolicy,
        store: T,
    ) -> Result<Breaker<T>, BreakerPolicyError> {
        let sre = sre.check()?;
        let mut window = Window::new_in(store, sre.window_ns, self.latest)
            .map_err(BreakerPolicyError::Window)?;
        let running = resample(&mut window, self.running_at(self.latest).sum);
        let mut moved = Breaker::over(sre, window, self.latest)?;
        moved.running = running;
        moved.last_pass = self.last_pass;
        moved.tag = self.tag;
        moved.issued = self.issued;
        moved.unsettled = self.unsettled;
        moved.probes = self.probes;
        Ok(moved)
    }

    /// Puts a checked policy of this breaker's size in force.
    fn take_policy(&mut self, sre: BreakerPolicy) {
        self.decay = (sre.k - sre.floor) / f64::from(sre.size);
        self.floor_calls = sre.rps_threshold * (sre.window_ns as f64 / 1e9);
        self.sre = sre;
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
    fn record(&mut self, outcome: BreakerOutcome) {
        let number = self.window.epoch();
        let bucket = self.window.head_mut();
        let (had_success, had_failure) = (bucket.success > 0, bucket.failure > 0);
        bucket.add(outcome);
        let running = &mut self.running;
        running.sum.add(outcome);
        match outcome {
            BreakerOutcome::Success if !had_success => {
                running.last_success = number;
                running.failing = 0;
                if !had_failure {
                    running.working += 1;
                }
            }
            BreakerOutcome::Failure if !had_failure => {
                running.last_failure = number;
                running.working = 0;
                if !had_success {
                    running.failing += 1;
                }
            }
            _ => {}
        }
    }

    /// The traffic the formula counts: every call, or (with
    /// `skip_refusals`) the calls let through.
    #[inline]
    fn traffic(&self, running: &Running) -> i64 {
        if self.sre.skip_refusals {
            running.sum.total - running.sum.drop
        } else {
            running.sum.total
        }
    }

    /// The refusal probability, or `None` while nothing is refused: the
    /// fraction at or below zero, or the traffic under the floor.
    #[inline]
    fn refusal(&self, running: &Running) -> Option<f64> {
        let BreakerPolicy {
            k,
            floor,
            protection,
            size,
            max_rejection_probability,
            aggression,
            ..
        } = self.sre;
        let traffic = self.traffic(running) as f64;
        if traffic < self.floor_calls {
            return None;
        }
        let w = (k - self.decay * running.failing as f64).max(floor);
        let excess = traffic - protection - w * running.sum.success as f64;
        if excess <= 0.0 {
            return None;
        }
        let size = f64::from(size);
        let mut drop = excess / (traffic + 1.0) * ((size - running.working as f64) / size);
        // Skipped at the default so that it changes nothing, to the bit.
        if aggression != 1.0 {
            drop = libm::pow(drop, 1.0 / aggression);
        }
        Some(drop.min(max_rejection_probability))
    }

    /// Asks to make one call at `now` with the caller's draw `roll` from
    /// [0, 1) (clamped into range; NaN counts as 0). `Some` means go ahead:
    /// the caller keeps the ticket and settles the call with it, once, with
    /// [`Breaker::pass`] or [`Breaker::fail`]. `None` is a refusal, recorded
    /// as a drop.
    #[inline]
    pub fn allow(&mut self, now: i64, roll: f64) -> Option<BreakerTicket> {
        let now = self.advance(now);
        let (pass, probe) = match self.refusal(&self.running) {
            None => (true, false),
            Some(drop) => {
                let rolled = draw::clamp(roll) >= drop;
                let due = elapsed(self.last_pass, now) > self.sre.probe_ns;
                (rolled || due, due && !rolled)
            }
        };
        if !pass {
            self.record(BreakerOutcome::Drop);
            return None;
        }
        self.probes += u64::from(probe);
        self.last_pass = now;
        self.issued += 1;
        self.unsettled += 1;
        Some(BreakerTicket {
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
    fn check(&self, ticket: &BreakerTicket) -> Result<(), BreakerTicketError> {
        if ticket.breaker != self.tag || ticket.serial > self.issued {
            return Err(BreakerTicketError::Foreign);
        }
        if !ticket.open {
            return Err(BreakerTicketError::Settled);
        }
        if ticket.serial == 0 {
            return Err(BreakerTicketError::Foreign);
        }
        if self.unsettled == 0 {
            return Err(BreakerTicketError::Settled);
        }
        Ok(())
    }

    /// Settles `ticket` with `outcome` at `now`, once.
    #[inline]
    fn settle(
        &mut self,
        ticket: &mut BreakerTicket,
        now: i64,
        outcome: BreakerOutcome,
    ) -> Result<(), BreakerTicketError> {
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
    pub fn pass(&mut self, ticket: &mut BreakerTicket, now: i64) -> Result<(), BreakerTicketError> {
        self.settle(ticket, now, BreakerOutcome::Success)
    }

    /// The call behind `ticket` failed, finishing at `now`. Errors as for
    /// [`Breaker::pass`].
    #[inline]
    pub fn fail(&mut self, ticket: &mut BreakerTicket, now: i64) -> Result<(), BreakerTicketError> {
        self.settle(ticket, now, BreakerOutcome::Failure)
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
        self.refusal(&self.running_at(now)).unwrap_or(0.0)
    }

    /// The outcomes in the window at `now`. A reading: it changes nothing.
    pub fn tally(&self, now: i64) -> BreakerTally {
        self.running_at(now).sum
    }

    /// The working and failing runs at `now`, in buckets. A reading: it
    /// changes nothing.
    pub fn runs(&self, now: i64) -> (i64, i64) {
        let running = self.running_at(now);
        (running.working, running.failing)
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    const MS: i64 = 1_000_000;

    fn preset() -> Breaker {
        Breaker::new(BreakerPolicy::PRESET, 0).unwrap()
    }

    /// Records an outcome at `now` as a settled call would, without a
    /// ticket: how these tests fill a window.
    fn put(breaker: &mut Breaker, now: i64, outcome: BreakerOutcome) {
        breaker.advance(now);
        breaker.record(outcome);
    }

    #[test]
    fn it_stays_consistent_and_a_reset_empties_it() {
        let mut breaker = preset();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut now = 0;
        let mut open = Vec::new();
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            now += (seed % 300) as i64 * MS;
            match seed % 5 {
                0 | 1 => {
                    if let Some(ticket) =
                        breaker.allow(now, (seed >> 11) as f64 / (1u64 << 53) as f64)
                    {
                        open.push(ticket);
                    }
                }
                2 => {
                    if let Some(mut ticket) = open.pop() {
                        breaker.pass(&mut ticket, now).unwrap();
                    }
                }
                _ => {
                    if let Some(mut ticket) = open.pop() {
                        breaker.fail(&mut ticket, now).unwrap();
                    }
                }
            }
            assert!(breaker.consistent());
        }
        breaker.running.sum.success += 1;
        assert!(!breaker.consistent());
        breaker.reset();
        assert!(breaker.consistent());
        assert_eq!(breaker.tally(now), BreakerTally::default());
        assert_eq!(breaker.unsettled(), 0);
        if let Some(mut ticket) = open.pop() {
            assert_eq!(
                breaker.pass(&mut ticket, now),
                Err(BreakerTicketError::Settled)
            );
        }
    }

    /// The runs and sums the slow way: every bucket read oldest first.
    fn scan(breaker: &Breaker, now: i64) -> (BreakerTally, i64, i64) {
        let mut buckets = Vec::new();
        breaker.window.each(now, true, |b| buckets.push(*b));
        let (mut sum, mut working, mut failing) = (BreakerTally::default(), 0, 0);
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
        let bad = |sre: BreakerPolicy| Breaker::new(sre, 0).unwrap_err();
        let p = BreakerPolicy::PRESET;
        assert_eq!(
            bad(BreakerPolicy { k: f64::NAN, ..p }),
            BreakerPolicyError::K
        );
        assert_eq!(bad(BreakerPolicy { k: 1.05, ..p }), BreakerPolicyError::K);
        assert_eq!(
            bad(BreakerPolicy {
                floor: 0.5,
                k: 0.9,
                ..p
            }),
            BreakerPolicyError::Floor
        );
        assert_eq!(
            bad(BreakerPolicy {
                floor: f64::INFINITY,
                ..p
            }),
            BreakerPolicyError::Floor
        );
        assert_eq!(
            bad(BreakerPolicy {
                protection: -1.0,
                ..p
            }),
            BreakerPolicyError::Protection
        );
        assert_eq!(
            bad(BreakerPolicy {
                protection: f64::NAN,
                ..p
            }),
            BreakerPolicyError::Protection
        );
        assert_eq!(
            bad(BreakerPolicy { probe_ns: 0, ..p }),
            BreakerPolicyError::Probe
        );
        assert_eq!(
            bad(BreakerPolicy { window_ns: -5, ..p }),
            BreakerPolicyError::Window(WindowError::Span)
        );
        let one = Breaker::new(BreakerPolicy { size: -3, ..p }, 0).unwrap();
        assert_eq!(one.policy().size, 1);
    }

    #[test]
    fn running_runs_and_sums_match_a_full_scan() {
        // A pseudo-random mix of outcomes, gaps and backwards steps.
        let mut breaker = preset();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut now = 0_i64;
        for _ in 0..crate::rounds(20_000) {
            crate::xorshift(&mut state);
            let step = match state % 100 {
                0 => 3_000 * MS,
                1 => -400 * MS,
                2..=30 => 0,
                _ => (state >> 20) as i64 % (120 * MS),
            };
            now = now.saturating_add(step);
            match (state >> 8) % 3 {
                0 => put(&mut breaker, now, BreakerOutcome::Success),
                1 => put(&mut breaker, now, BreakerOutcome::Failure),
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
        put(&mut breaker, 0, BreakerOutcome::Success);
        put(&mut breaker, width, BreakerOutcome::Success);
        breaker.allow(2 * width, 0.0); // nothing to refuse: not recorded
        breaker.record(BreakerOutcome::Drop);
        put(&mut breaker, 4 * width, BreakerOutcome::Success);
        assert_eq!(breaker.runs(4 * width), (3, 0));
        put(&mut breaker, 5 * width, BreakerOutcome::Failure);
        assert_eq!(breaker.runs(5 * width), (0, 1));
        breaker.record(BreakerOutcome::Drop);
        put(&mut breaker, 7 * width, BreakerOutcome::Failure);
        assert_eq!(breaker.runs(7 * width), (0, 2));
        put(&mut breaker, 7 * width, BreakerOutcome::Success); // a mixed bucket resets both
        assert_eq!(breaker.runs(7 * width), (0, 0));
        put(&mut breaker, 8 * width, BreakerOutcome::Success);
        assert_eq!(breaker.runs(8 * width), (1, 0));
    }

    #[test]
    fn the_formula_is_googles() {
        let sre = BreakerPolicy::PRESET;
        let mut breaker = Breaker::new(sre, 0).unwrap();
        // 20 failures then 4 successes, all in the first bucket.
        for _ in 0..20 {
            put(&mut breaker, 0, BreakerOutcome::Failure);
        }
        for _ in 0..4 {
            put(&mut breaker, 0, BreakerOutcome::Success);
        }
        // One bucket, mixed: no runs. w = k.
        let expected = (24.0 - 5.0 - 1.5 * 4.0) / 25.0;
        assert!((breaker.ratio(0) - expected).abs() < 1e-12);
        // Ten failure-only buckets next: failing 10, w = 1.5 - 0.4 * 10 / 40.
        for i in 1..=10 {
            put(&mut breaker, i * 250 * MS, BreakerOutcome::Failure);
        }
        let w: f64 = 1.5 - 0.4 * 10.0 / 40.0;
        let expected = (34.0 - 5.0 - w * 4.0) / 35.0;
        assert!((breaker.ratio(2_500 * MS) - expected).abs() < 1e-12);
        // Two success-only buckets: working 2, failing 0.
        put(&mut breaker, 2_750 * MS, BreakerOutcome::Success);
        put(&mut breaker, 3_000 * MS, BreakerOutcome::Success);
        let expected = (36.0 - 5.0 - 1.5 * 6.0) / 37.0 * 38.0 / 40.0;
        assert!((breaker.ratio(3_000 * MS) - expected).abs() < 1e-12);
    }

    /// A breaker with `sre`, made at 0, its first bucket holding `failures`
    /// failures and `successes` successes.
    fn filled(sre: BreakerPolicy, failures: usize, successes: usize) -> Breaker {
        let mut breaker = Breaker::new(sre, 0).unwrap();
        for _ in 0..failures {
            put(&mut breaker, 0, BreakerOutcome::Failure);
        }
        for _ in 0..successes {
            put(&mut breaker, 0, BreakerOutcome::Success);
        }
        breaker
    }

    #[test]
    fn envoys_limits_are_checked_in_order() {
        let bad = |sre: BreakerPolicy| Breaker::new(sre, 0).unwrap_err();
        let p = BreakerPolicy::PRESET;
        for cap in [f64::NAN, -0.1, 1.000_001, f64::INFINITY] {
            let sre = BreakerPolicy {
                max_rejection_probability: cap,
                ..p
            };
            assert_eq!(bad(sre), BreakerPolicyError::Cap, "cap {cap}");
        }
        for rps in [f64::NAN, -1.0, f64::INFINITY] {
            let sre = BreakerPolicy {
                rps_threshold: rps,
                ..p
            };
            assert_eq!(bad(sre), BreakerPolicyError::Rps, "rps {rps}");
        }
        for aggression in [f64::NAN, 0.0, -2.0, f64::INFINITY] {
            let sre = BreakerPolicy { aggression, ..p };
            assert_eq!(
                bad(sre),
                BreakerPolicyError::Aggression,
                "aggression {aggression}"
            );
        }
        // Several bad: the first in the documented order is named.
        let sre = BreakerPolicy {
            window_ns: 0,
            max_rejection_probability: 2.0,
            aggression: 0.0,
            ..p
        };
        assert_eq!(bad(sre), BreakerPolicyError::Window(WindowError::Span));
        let sre = BreakerPolicy {
            rps_threshold: -1.0,
            aggression: 0.0,
            ..p
        };
        assert_eq!(bad(sre), BreakerPolicyError::Rps);
        // The ends of each range are accepted.
        for (cap, rps, aggression) in [(0.0, 0.0, 1e-300), (1.0, 1e300, 1e300)] {
            let sre = BreakerPolicy {
                max_rejection_probability: cap,
                rps_threshold: rps,
                aggression,
                ..p
            };
            assert!(Breaker::new(sre, 0).is_ok());
        }
    }

    #[test]
    fn the_cap_holds_the_refusal_probability_down() {
        // 100 failures in one bucket: (100 - 5) / 101 = 0.9406 uncapped.
        let classic = filled(BreakerPolicy::PRESET, 100, 0);
        assert!((classic.ratio(0) - 95.0 / 101.0).abs() < 1e-15);
        let capped = BreakerPolicy {
            max_rejection_probability: 0.8,
            ..BreakerPolicy::PRESET
        };
        let mut breaker = filled(capped, 100, 0);
        assert_eq!(breaker.ratio(0), 0.8);
        // A roll of 0.85 passes under the cap and not without it; 0.79 is
        // refused under both.
        let mut classic = classic;
        assert!(classic.allow(0, 0.85).is_none());
        assert!(breaker.allow(0, 0.85).is_some());
        assert!(breaker.allow(0, 0.79).is_none());
        // Below the cap it changes nothing: 20 failures, 4 successes give
        // (24 - 5 - 6) / 25 = 0.52 either way.
        assert_eq!(filled(capped, 20, 4).ratio(0), 0.52);
        // A cap of 0 refuses nothing.
        let never = BreakerPolicy {
            max_rejection_probability: 0.0,
            ..BreakerPolicy::PRESET
        };
        let mut breaker = filled(never, 100, 0);
        assert_eq!(breaker.ratio(0), 0.0);
        assert!(breaker.allow(0, 0.0).is_some());
    }

    #[test]
    fn the_traffic_floor_refuses_nothing_below_it() {
        // 2 calls/s over the preset's 10 s window: a floor of 20 calls.
        let floored = BreakerPolicy {
            rps_threshold: 2.0,
            ..BreakerPolicy::PRESET
        };
        // 19 failures: under the floor; the preset refuses (19 - 5) / 20.
        let mut breaker = filled(floored, 19, 0);
        assert_eq!(breaker.ratio(0), 0.0);
        assert_eq!(filled(BreakerPolicy::PRESET, 19, 0).ratio(0), 0.7);
        assert!(breaker.allow(0, 0.0).is_some());
        // The 20th call reaches the floor: (20 - 5) / 21, as the preset.
        put(&mut breaker, 0, BreakerOutcome::Failure);
        assert!((breaker.ratio(0) - 15.0 / 21.0).abs() < 1e-15);
        assert_eq!(
            breaker.ratio(0),
            filled(BreakerPolicy::PRESET, 20, 0).ratio(0),
            "at or above the floor nothing changes"
        );
        // Refusals count toward the floor unless skipped: 15 failures and
        // 5 refusals reach it, and with skip_refusals they do not.
        let mut counted = filled(floored, 15, 0);
        let mut skipped = filled(
            BreakerPolicy {
                skip_refusals: true,
                ..floored
            },
            15,
            0,
        );
        for breaker in [&mut counted, &mut skipped] {
            for _ in 0..5 {
                breaker.record(BreakerOutcome::Drop);
            }
        }
        assert!((counted.ratio(0) - 15.0 / 21.0).abs() < 1e-15);
        assert_eq!(skipped.ratio(0), 0.0);
    }

    #[test]
    fn the_aggression_bends_the_refusal_probability() {
        // 20 failures, 4 successes: 0.52 at an aggression of 1.
        let at = |aggression: f64| {
            filled(
                BreakerPolicy {
                    aggression,
                    ..BreakerPolicy::PRESET
                },
                20,
                4,
            )
            .ratio(0)
        };
        assert_eq!(at(1.0), 0.52);
        // 0.52 ^ (1 / 2) = sqrt(0.52) = 0.721110255092797...
        assert!((at(2.0) - 0.721_110_255_092_797_9).abs() < 1e-15);
        // 0.52 ^ (1 / 0.5) = 0.52 ^ 2 = 0.2704.
        assert!((at(0.5) - 0.2704).abs() < 1e-15);
        // 0.52 ^ (1 / 4) = 0.849182...: sqrt(0.721110255...).
        assert!((at(4.0) - 0.849_182_109_498_779_9).abs() < 1e-15);
        // A healthy window stays healthy at any aggression.
        for aggression in [0.01, 1.0, 100.0] {
            let sre = BreakerPolicy {
                aggression,
                ..BreakerPolicy::PRESET
            };
            assert_eq!(filled(sre, 4, 20).ratio(0), 0.0);
        }
        // The exponent comes before the cap: 0.7211 capped at 0.6.
        let both = BreakerPolicy {
            aggression: 2.0,
            max_rejection_probability: 0.6,
            ..BreakerPolicy::PRESET
        };
        assert_eq!(filled(both, 20, 4).ratio(0), 0.6);
        // And after the working run's scale: two success-only buckets
        // scale 0.52-like fractions by 38 / 40 first (see
        // the_formula_is_googles), then the root applies.
        let sre = BreakerPolicy {
            aggression: 2.0,
            ..BreakerPolicy::PRESET
        };
        let mut breaker = filled(sre, 20, 4);
        put(&mut breaker, 250 * MS, BreakerOutcome::Success);
        put(&mut breaker, 500 * MS, BreakerOutcome::Success);
        let scaled: f64 = (26.0 - 5.0 - 1.5 * 6.0) / 27.0 * 38.0 / 40.0;
        assert!((breaker.ratio(500 * MS) - libm::sqrt(scaled)).abs() < 1e-15);
    }

    #[test]
    fn skipping_refusals_leaves_them_out_of_the_traffic() {
        // 10 successes and 90 refusals in one bucket (a working bucket:
        // working 1). Counted: (100 - 5 - 15) / 101 * 39 / 40 = 0.7723;
        // skipped: 10 - 5 - 15 < 0, nothing refused.
        let fill = |skip_refusals: bool| {
            let mut breaker = filled(
                BreakerPolicy {
                    skip_refusals,
                    ..BreakerPolicy::PRESET
                },
                0,
                10,
            );
            for _ in 0..90 {
                breaker.record(BreakerOutcome::Drop);
            }
            breaker
        };
        let counted = fill(false);
        let expected = 80.0 / 101.0 * 39.0 / 40.0;
        assert!((counted.ratio(0) - expected).abs() < 1e-15);
        let skipped = fill(true);
        assert_eq!(skipped.ratio(0), 0.0);
        // The tally still shows the refusals either way.
        assert_eq!(skipped.tally(0), counted.tally(0));
        assert_eq!(skipped.tally(0).drop, 90);
        // 10 failures then 10 refusals: counted, (20 - 5) / 21; skipped,
        // the refusals change nothing: (10 - 5) / 11.
        let mut counted = filled(BreakerPolicy::PRESET, 10, 0);
        let sre = BreakerPolicy {
            skip_refusals: true,
            ..BreakerPolicy::PRESET
        };
        let mut skipped = filled(sre, 10, 0);
        assert!((skipped.ratio(0) - 5.0 / 11.0).abs() < 1e-15);
        for _ in 0..10 {
            assert!(counted.allow(0, 0.0).is_none());
            assert!(skipped.allow(0, 0.0).is_none());
        }
        assert!((counted.ratio(0) - 15.0 / 21.0).abs() < 1e-15);
        assert!((skipped.ratio(0) - 5.0 / 11.0).abs() < 1e-15);
    }

    #[test]
    fn the_defaults_change_nothing_to_the_bit() {
        // The preset's limits against a breaker whose limits are written
        // out at their neutral values by hand: every decision and reading
        // alike over a pseudo-random run (the same as the classic formula).
        let neutral = BreakerPolicy {
            max_rejection_probability: 1.0,
            rps_threshold: 0.0,
            aggression: 1.0,
            skip_refusals: false,
            ..BreakerPolicy::PRESET
        };
        assert_eq!(neutral, BreakerPolicy::PRESET);
        let mut breaker = preset();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut now = 0_i64;
        for _ in 0..crate::rounds(5_000) {
            crate::xorshift(&mut state);
            now += (state >> 40) as i64 % (50 * MS);
            let roll = ((state >> 11) as f64) / (1u64 << 53) as f64;
            // The classic formula, written out here independently.
            let running = breaker.running_at(now);
            let (total, success) = (running.sum.total as f64, running.sum.success as f64);
            let w = (1.5 - (1.5 - 1.1) / 40.0 * running.failing as f64).max(1.1);
            let excess = total - 5.0 - w * success;
            let classic = if excess > 0.0 {
                excess / (total + 1.0) * ((40.0 - running.working as f64) / 40.0)
            } else {
                0.0
            };
            assert_eq!(breaker.ratio(now).to_bits(), classic.to_bits());
            if let Some(mut ticket) = breaker.allow(now, roll) {
                if state % 3 == 0 {
                    breaker.pass(&mut ticket, now).unwrap();
                } else {
                    breaker.fail(&mut ticket, now).unwrap();
                }
            }
        }
    }

    #[test]
    fn the_probe_lets_one_call_through_after_a_quiet_second() {
        let mut breaker = preset();
        for _ in 0..100 {
            put(&mut breaker, 0, BreakerOutcome::Failure);
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
            put(&mut breaker, 0, BreakerOutcome::Failure);
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
            put(&mut breaker, 5_000 * MS, BreakerOutcome::Failure);
        }
        assert!(breaker.allow(5_000 * MS, 0.0).is_some()); // the probe
        assert!(breaker.allow(5_000 * MS, f64::NAN).is_none()); // NaN is 0: refused
        assert!(breaker.allow(5_000 * MS, f64::INFINITY).is_some()); // held under 1
        let tally = breaker.tally(0); // earlier: counts as 5 s
        assert_eq!(tally.failure, 100);
        assert_eq!(tally.drop, 1);
        assert!(breaker.allow(i64::MIN, 0.0).is_none());
        assert!(breaker.allow(i64::MAX, 0.0).is_some()); // the window has aged out
        assert_eq!(breaker.tally(i64::MAX), BreakerTally::default());
        put(&mut breaker, i64::MIN, BreakerOutcome::Failure);
        assert_eq!(breaker.tally(i64::MAX).failure, 1);
    }

    #[test]
    fn a_ticket_settles_once_and_only_its_own_breaker() {
        let mut breaker = preset().tagged(7);
        let mut ticket = breaker.allow(0, 0.5).unwrap();
        assert_eq!(
            ticket,
            BreakerTicket {
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
        assert_eq!(
            breaker.pass(&mut ticket, 0),
            Err(BreakerTicketError::Settled)
        );
        assert_eq!(
            breaker.fail(&mut ticket, 0),
            Err(BreakerTicketError::Settled)
        );
        // Another breaker's ticket, a serial never handed out, a refusal's.
        let mut foreign = preset().tagged(8).allow(0, 0.5).unwrap();
        assert_eq!(
            breaker.fail(&mut foreign, 0),
            Err(BreakerTicketError::Foreign)
        );
        let mut future = BreakerTicket {
            serial: 99,
            ..other
        };
        assert_eq!(
            breaker.fail(&mut future, 0),
            Err(BreakerTicketError::Foreign)
        );
        let mut zero = BreakerTicket { serial: 0, ..other };
        assert_eq!(breaker.fail(&mut zero, 0), Err(BreakerTicketError::Foreign));
        assert_eq!(
            breaker.tally(0),
            BreakerTally {
                total: 1,
                success: 1,
                failure: 0,
                drop: 0
            }
        );
        assert_eq!(breaker.fail(&mut other, 0), Ok(()));
        // With nothing in flight, a stale copy is caught too.
        assert_eq!(breaker.unsettled(), 0);
        assert_eq!(breaker.fail(&mut copy, 0), Err(BreakerTicketError::Settled));
        assert!(copy.open, "an error changes nothing, the ticket included");
        assert_eq!(
            breaker.tally(0),
            BreakerTally {
                total: 2,
                success: 1,
                failure: 1,
                drop: 0
            }
        );
    }
}
