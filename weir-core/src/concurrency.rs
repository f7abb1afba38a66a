//! An adaptive concurrency limit: a gate whose ceiling follows latency.
//!
//! The controller is Netflix concurrency-limits' **Gradient2**, kept to its
//! published source (`Gradient2Limit`). Every completed call is a sample of
//! its round-trip time `rtt` and of `inflight`, the calls in flight when it
//! entered (itself included). On each sample:
//!
//! ```text
//! shortRtt = rtt
//! longRtt  = exponential average of rtt: the plain mean of the first
//!            `warmup` samples, then longRtt × (1 − f) + rtt × f with
//!            f = 2 / (long_window + 1)
//! if longRtt / shortRtt > 2:  longRtt = longRtt × 0.9
//! if inflight < limit / 2:    stop here (the caller is not using the limit)
//! gradient = max(0.5, min(1, tolerance × longRtt / shortRtt))
//! newLimit = limit × gradient + queue_size
//! limit    = limit × (1 − smoothing) + newLimit × smoothing,
//!            held to [min_limit, max_limit]
//! ```
//!
//! A call may enter while fewer than `⌊limit⌋` are in flight. `tolerance`
//! is the older Gradient2's `rttTolerance`: latency may grow by that factor
//! before the limit falls; 1 is the current upstream source exactly.
//! Upstream takes a dropped call (a timeout, a refusal downstream) as a
//! sample like any other, and so does this: its long latency is what
//! lowers the limit. A sample of 0 ns counts as 1 ns, so that the ratios
//! stay finite.

use crate::time::elapsed;

/// The constants of the controller. Every field is checked by
/// [`Concurrency::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConcurrencyPolicy {
    /// The limit before any sample; in [`min_limit`, `max_limit`].
    pub initial_limit: i32,
    /// The floor of the limit; at least 1.
    pub min_limit: i32,
    /// The ceiling of the limit; at most [`MAX_LIMIT`].
    pub max_limit: i32,
    /// How much the limit may grow a sample while latency holds; zero or
    /// more, at most `max_limit`.
    pub queue_size: i32,
    /// How far a sample moves the limit toward its new value; in (0, 1].
    pub smoothing: f64,
    /// How much latency may grow before the limit falls; finite, at least 1.
    pub tolerance: f64,
    /// The exponential average's window, in samples; at least 1.
    pub long_window: i32,
    /// Samples averaged plainly before the exponential average starts; at
    /// least 1.
    pub warmup: i32,
}

/// The largest `max_limit` accepted: 2^20 calls in flight.
pub const MAX_LIMIT: i32 = 1 << 20;

impl ConcurrencyPolicy {
    /// Gradient2's builder defaults: limit 20 in [20, 200], queue 4,
    /// smoothing 0.2, a 600-sample window after 10 warm-up samples; with
    /// the older Gradient2's tolerance of 1.5.
    pub const PRESET: ConcurrencyPolicy = ConcurrencyPolicy {
        initial_limit: 20,
        min_limit: 20,
        max_limit: 200,
        queue_size: 4,
        smoothing: 0.2,
        tolerance: 1.5,
        long_window: 600,
        warmup: 10,
    };
}

/// Why a limit could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConcurrencyError {
    /// Not 1 ≤ `min_limit` ≤ `initial_limit` ≤ `max_limit` ≤ [`MAX_LIMIT`].
    Limits,
    /// `queue_size` is negative or above `max_limit`.
    QueueSize,
    /// `smoothing` is NaN or outside (0, 1].
    Smoothing,
    /// `tolerance` is NaN, infinite or below 1.
    Tolerance,
    /// `long_window` or `warmup` is below 1.
    Window,
}

impl ConcurrencyError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            ConcurrencyError::Limits => 550,
            ConcurrencyError::QueueSize => 551,
            ConcurrencyError::Smoothing => 552,
            ConcurrencyError::Tolerance => 553,
            ConcurrencyError::Window => 554,
        }
    }
}

/// A call let in: when it started and how many were in flight then, itself
/// included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConcurrencyTicket {
    /// When the call was let in (the `now` of [`Concurrency::enter`]): its
    /// round-trip time runs from here to the `now` it leaves at.
    pub start: i64,
    /// The calls in flight once this one was let in, itself included: the
    /// load its round-trip time is a sample of.
    pub inflight: i64,
}

/// The limit, its latency averages and the calls in flight. Plain data: the
/// caller (the C face: a short lock) guards it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Concurrency {
    policy: ConcurrencyPolicy,
    limit: f64,
    flying: i64,
    long_rtt: f64,
    samples: i64,
    sum: f64,
    short_rtt: f64,
}

impl Concurrency {
    /// A limit at `initial_limit` with nothing in flight. Checks in the
    /// order of [`ConcurrencyError`].
    pub fn new(policy: ConcurrencyPolicy) -> Result<Concurrency, ConcurrencyError> {
        let p = policy;
        if !(p.min_limit >= 1
            && p.min_limit <= p.initial_limit
            && p.initial_limit <= p.max_limit
            && p.max_limit <= MAX_LIMIT)
        {
            return Err(ConcurrencyError::Limits);
        }
        if !(0..=p.max_limit).contains(&p.queue_size) {
            return Err(ConcurrencyError::QueueSize);
        }
        if !(p.smoothing > 0.0 && p.smoothing <= 1.0) {
            return Err(ConcurrencyError::Smoothing);
        }
        if !(p.tolerance.is_finite() && p.tolerance >= 1.0) {
            return Err(ConcurrencyError::Tolerance);
        }
        if p.long_window < 1 || p.warmup < 1 {
            return Err(ConcurrencyError::Window);
        }
        Ok(Concurrency {
            policy,
            limit: f64::from(p.initial_limit),
            flying: 0,
            long_rtt: 0.0,
            samples: 0,
            sum: 0.0,
            short_rtt: 0.0,
        })
    }

    /// Takes a new policy in place, checked as [`Concurrency::new`] checks
    /// it (an error changes nothing). Kept: the limit the controller has
    /// reached, held to the new `min_limit` to `max_limit` (`initial_limit`
    /// is where a new limit starts, and this one has started), the calls in
    /// flight (their tickets leave as before; calls beyond a lower limit
    /// stay, and none enters until enough have left), the latency averages
    /// and the count of warm-up samples (a longer warm-up goes on averaging
    /// plainly from the samples it has, a shorter one that has them all
    /// moves to the exponential average), which the new constants move from
    /// the next sample. So from the change on a call enters only while
    /// fewer than `⌊limit⌋ ≤ max_limit'` are in flight: the calls in flight
    /// never exceed the larger of the count at the change and the new
    /// `max_limit`.
    pub fn reconfigure(&mut self, policy: ConcurrencyPolicy) -> Result<(), ConcurrencyError> {
        Concurrency::new(policy)?;
        self.policy = policy;
        self.limit = self
            .limit
            .clamp(f64::from(policy.min_limit), f64::from(policy.max_limit));
        Ok(())
    }

    /// Lets a call in at `now` if fewer than `⌊limit⌋` are in flight.
    pub fn enter(&mut self, now: i64) -> Option<ConcurrencyTicket> {
        self.enter_below(self.limit(), now)
    }

    /// [`Concurrency::enter`] with `limit`, this limit's [`Concurrency::limit`]
    /// as the caller just read it (the partitions read it first for their
    /// rooms, and ask it once).
    #[inline]
    pub(crate) fn enter_below(&mut self, limit: i64, now: i64) -> Option<ConcurrencyTicket> {
        if self.flying >= limit {
            return None;
        }
        self.flying += 1;
        Some(ConcurrencyTicket {
            start: now,
            inflight: self.flying,
        })
    }

    /// The call behind `entry` ended at `now` (dropped or not): it leaves
    /// flight and its latency is a sample. An `entry` this limit did not
    /// make still leaves (the count never goes below zero).
    pub fn leave(&mut self, entry: ConcurrencyTicket, now: i64, _dropped: bool) {
        self.flying = (self.flying - 1).max(0);
        let rtt = elapsed(entry.start, now).max(1) as f64;
        self.sample(rtt, entry.inflight);
    }

    /// Gradient2's update, as the module's documentation gives it.
    fn sample(&mut self, rtt: f64, inflight: i64) {
        let p = self.policy;
        self.short_rtt = rtt;
        if self.samples < i64::from(p.warmup) {
            self.samples += 1;
            self.sum += rtt;
            self.long_rtt = self.sum / self.samples as f64;
        } else {
            let f = 2.0 / (f64::from(p.long_window) + 1.0);
            self.long_rtt = self.long_rtt * (1.0 - f) + rtt * f;
        }
        if self.long_rtt / rtt > 2.0 {
            self.long_rtt *= 0.9;
        }
        if (inflight as f64) < self.limit / 2.0 {
            return;
        }
        let gradient = (p.tolerance * self.long_rtt / rtt).clamp(0.5, 1.0);
        let grown = self.limit * gradient + f64::from(p.queue_size);
        let smoothed = self.limit * (1.0 - p.smoothing) + grown * p.smoothing;
        self.limit = smoothed.clamp(f64::from(p.min_limit), f64::from(p.max_limit));
    }

    /// The limit calls are admitted against: `⌊limit⌋`.
    pub fn limit(&self) -> i64 {
        self.limit as i64
    }

    /// The limit as the controller holds it, before rounding down.
    pub fn estimate(&self) -> f64 {
        self.limit
    }

    /// The long-term latency average, in nanoseconds (0 before a sample).
    pub fn long_rtt(&self) -> f64 {
        self.long_rtt
    }

    /// Calls in flight now.
    pub fn flying(&self) -> i64 {
        self.flying
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    fn policy() -> ConcurrencyPolicy {
        ConcurrencyPolicy {
            initial_limit: 10,
            min_limit: 2,
            max_limit: 50,
            ..ConcurrencyPolicy::PRESET
        }
    }

    /// Fills the limit, then lets every call finish `rtt` later: one round
    /// of a caller that uses all the room it gets. Returns the time after.
    fn round(c: &mut Concurrency, now: i64, rtt: i64) -> i64 {
        let mut entries = [None; 64];
        for slot in entries.iter_mut() {
            *slot = c.enter(now);
        }
        assert!(c.flying() <= c.limit());
        for entry in entries.into_iter().flatten() {
            c.leave(entry, now + rtt, false);
        }
        now + rtt
    }

    // By hand from Gradient2's formula, limit 10, queue 4, smoothing 0.2:
    // a first sample of 10 ms with 10 in flight sets longRtt = 10 ms (the
    // warm-up mean of one), gradient = min(1, 1.5 × 10 / 10) = 1, newLimit
    // = 10 × 1 + 4 = 14, limit = 10 × 0.8 + 14 × 0.2 = 10.8.
    #[test]
    fn one_sample_moves_the_limit_as_published() {
        let mut c = Concurrency::new(policy()).unwrap();
        let mut entries = [None; 10];
        for slot in entries.iter_mut() {
            *slot = c.enter(0);
        }
        assert!(c.enter(0).is_none());
        let last = entries[9].unwrap();
        assert_eq!(last.inflight, 10);
        c.leave(last, 10 * MS, false);
        assert!((c.estimate() - 10.8).abs() < 1e-12);
        assert_eq!(c.limit(), 10);
        assert_eq!(c.long_rtt(), 10.0 * MS as f64);
        // A call that entered with 1 in flight is under 10.8 / 2: its
        // sample moves the averages but not the limit.
        c.leave(entries[0].unwrap(), 10 * MS, false);
        assert!((c.estimate() - 10.8).abs() < 1e-12);
        // A sample at twice the latency from a call that entered with 9 in
        // flight: longRtt becomes the mean of 10, 10, 20 = 13.33 ms, so
        // gradient = min(1, 1.5 × 13.33 / 20 = 1.0) = 1: no fall yet. By
        // hand: newLimit = 10.8 + 4 = 14.8, limit = 10.8 × 0.8 + 14.8 × 0.2
        // = 11.6.
        c.leave(entries[9 - 1].unwrap(), 20 * MS, false);
        assert!((c.estimate() - 11.6).abs() < 1e-9, "{}", c.estimate());
    }

    // Latency four times the baseline, after the average settled on 10 ms:
    // gradient = max(0.5, 1.5 × ~10 / 40 = 0.375) = 0.5, newLimit =
    // 50 × 0.5 + 4 = 29, limit = 50 × 0.8 + 29 × 0.2 = 45.8.
    #[test]
    fn a_slow_sample_at_the_maximum_falls_by_the_gradient_floor() {
        let mut c = Concurrency::new(policy()).unwrap();
        let mut now = 0;
        for _ in 0..200 {
            now = round(&mut c, now, 10 * MS);
        }
        assert_eq!(c.limit(), 50);
        let entry = (0..50).map(|_| c.enter(now).unwrap()).last().unwrap();
        c.leave(entry, now + 40 * MS, false);
        assert!((c.estimate() - 45.8).abs() < 1e-9, "{}", c.estimate());
    }

    #[test]
    fn steady_latency_grows_the_limit_to_its_maximum() {
        let mut c = Concurrency::new(policy()).unwrap();
        let mut now = 0;
        let mut last = c.limit();
        for _ in 0..200 {
            now = round(&mut c, now, 10 * MS);
            assert!(c.limit() >= last);
            last = c.limit();
        }
        assert_eq!(c.limit(), 50);
    }

    #[test]
    fn queueing_lowers_the_limit_until_latency_recovers_then_it_grows_back() {
        let mut c = Concurrency::new(policy()).unwrap();
        let mut now = 0;
        for _ in 0..200 {
            now = round(&mut c, now, 10 * MS);
        }
        assert_eq!(c.limit(), 50);
        // Queueing: latency five times the baseline. The long average moves
        // slowly (f = 2 / 601), so for its first ~55 samples the gradient
        // stays at its floor of 0.5 and each sample takes the limit toward
        // the point where limit = 0.9 × limit + 0.8, that is 8. (Held long
        // enough, Gradient2 takes the new latency as the baseline and grows
        // again: that is the published design.)
        let mut lowest = c.limit();
        for _ in 0..3 {
            now = round(&mut c, now, 50 * MS);
            lowest = lowest.min(c.limit());
        }
        assert!(lowest <= 12, "{lowest}");
        assert!(lowest >= 2);
        // Latency recovers: the gradient is 1 again and the limit climbs
        // back, 0.8 a sample at most (queue 4 × smoothing 0.2).
        for _ in 0..200 {
            now = round(&mut c, now, 10 * MS);
        }
        assert_eq!(c.limit(), 50);
    }

    // Latency both ways: the baseline steps up from 10 ms to 40 ms and is
    // held there, then steps back down to 10 ms. The limit falls at the
    // step up; held long enough, 40 ms becomes the baseline and the limit
    // climbs back (Gradient2's design). At the step down the long average
    // follows the latency down (each sample under half of it takes it down
    // by a tenth on top of the average's own move), so it learns no stale
    // floor: a later rise to four times the new baseline lowers the limit
    // again, as it would from a fresh start. A baseline that stayed at
    // 40 ms would see 40 ms as normal and not fall.
    #[test]
    fn latency_steps_up_then_down_and_the_limit_follows_both_ways() {
        let mut c = Concurrency::new(policy()).unwrap();
        let mut now = 0;
        for _ in 0..200 {
            now = round(&mut c, now, 10 * MS);
        }
        assert_eq!(c.limit(), 50);
        let base = c.long_rtt();
        assert!((base - 10.0 * MS as f64).abs() < 1.0, "{base}");
        // Up: the limit falls within a few rounds.
        let mut lowest = c.limit();
        for _ in 0..3 {
            now = round(&mut c, now, 40 * MS);
            lowest = lowest.min(c.limit());
        }
        assert!(lowest <= 15, "{lowest}");
        // Held: 40 ms becomes the baseline and the limit recovers.
        let mut rounds = 0;
        while c.limit() < 50 {
            now = round(&mut c, now, 40 * MS);
            rounds += 1;
            assert!(rounds < 2_000, "the limit never recovered at 40 ms");
        }
        // It grows once tolerance × longRtt reaches 40 ms: longRtt ≥ 26.7 ms.
        assert!(c.long_rtt() > 26.0 * MS as f64, "{}", c.long_rtt());
        // Down: the limit stays at its maximum, and the baseline follows
        // latency down to near 10 ms.
        let mut rounds = 0;
        while c.long_rtt() > 12.0 * MS as f64 {
            now = round(&mut c, now, 10 * MS);
            assert_eq!(c.limit(), 50);
            rounds += 1;
            assert!(rounds < 200, "the baseline stuck at {}", c.long_rtt());
        }
        // Each full round is 50 samples; the 0.9 decay brings 40 ms under
        // 20 ms in a handful of samples, then the average carries it on.
        assert!(rounds <= 20, "{rounds} rounds to follow latency down");
        // And 40 ms is slow again: the limit falls as it did the first time.
        let mut lowest = c.limit();
        for _ in 0..3 {
            now = round(&mut c, now, 40 * MS);
            lowest = lowest.min(c.limit());
        }
        assert!(lowest <= 15, "{lowest}: a stale baseline hid the rise");
    }

    #[test]
    fn an_idle_caller_does_not_grow_the_limit() {
        // One call at a time never reaches limit / 2: no change.
        let mut c = Concurrency::new(policy()).unwrap();
        for i in 0..100 {
            let e = c.enter(i * 20 * MS).unwrap();
            c.leave(e, i * 20 * MS + 10 * MS, false);
        }
        assert_eq!(c.estimate(), 10.0);
    }

    #[test]
    fn bounds_and_odd_input() {
        let ok = policy();
        let bad = |f: fn(&mut ConcurrencyPolicy)| {
            let mut p = ok;
            f(&mut p);
            Concurrency::new(p).unwrap_err()
        };
        assert_eq!(bad(|p| p.min_limit = 0), ConcurrencyError::Limits);
        assert_eq!(bad(|p| p.initial_limit = 1), ConcurrencyError::Limits);
        assert_eq!(bad(|p| p.initial_limit = 51), ConcurrencyError::Limits);
        assert_eq!(bad(|p| p.max_limit = i32::MAX), ConcurrencyError::Limits);
        assert_eq!(bad(|p| p.queue_size = -1), ConcurrencyError::QueueSize);
        assert_eq!(bad(|p| p.queue_size = 51), ConcurrencyError::QueueSize);
        assert_eq!(bad(|p| p.smoothing = 0.0), ConcurrencyError::Smoothing);
        assert_eq!(bad(|p| p.smoothing = f64::NAN), ConcurrencyError::Smoothing);
        assert_eq!(bad(|p| p.smoothing = 1.5), ConcurrencyError::Smoothing);
        assert_eq!(bad(|p| p.tolerance = 0.99), ConcurrencyError::Tolerance);
        assert_eq!(
            bad(|p| p.tolerance = f64::INFINITY),
            ConcurrencyError::Tolerance
        );
        assert_eq!(bad(|p| p.long_window = 0), ConcurrencyError::Window);
        assert_eq!(bad(|p| p.warmup = 0), ConcurrencyError::Window);
        assert!(Concurrency::new(ConcurrencyPolicy::PRESET).is_ok());
        // Zero and backwards latencies, leaving too often, extreme times:
        // the limit stays in its bounds and finite.
        let mut c = Concurrency::new(ok).unwrap();
        for now in [i64::MIN, -1, 0, i64::MAX] {
            let e = c.enter(now).unwrap();
            c.leave(e, i64::MIN, true);
            c.leave(e, i64::MAX, false);
            c.leave(e, now, true);
        }
        assert_eq!(c.flying(), 0);
        assert!(c.estimate().is_finite());
        assert!((2..=50).contains(&c.limit()));
    }
}
