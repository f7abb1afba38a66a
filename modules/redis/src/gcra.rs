//! The GCRA arithmetic behind `WEIR.BUCKET`: the one adapter between the
//! module and weir-core's bucket time format ([`weir_core::tat`]).
//!
//! The decision itself is the core's: [`weir_core::tat::take`], `wait`
//! and `room` on a TAT, so a Redis bucket and an in-process `weir_bucket`
//! agree to the tick. What this file adds is the part a Redis key needs:
//! the tick is 1 ns (`shift` 0; the state is a Unix-time TAT in
//! nanoseconds, which needs no origin), and the rate arrives as an exact
//! decimal, so `per_token = ceil(10^9 / rate)` is computed in integers (the
//! same value the core's `Tick` settles on for that rate at shift 0). The
//! burst and a cost are whole tokens, so `tolerance = burst × per_token` and
//! `cost = n × per_token` are the core's `floor(burst × per_token)` and
//! `ceil(n × per_token)` exactly, with no f64 in between (a burst above
//! 2^53 would not survive an f64); a unit test checks that they agree.
//!
//! The rules (the core's): rounding runs against admitting, a full bucket
//! holds exactly `burst` tokens at one instant at any rate, and a bucket is
//! full (its key may go) once `tat <= now`. Time going backwards (`now`
//! before the TAT's window) admits nothing more: the TAT never moves back.

/// The longest span any limit may hold, in nanoseconds (about 73 years):
/// a TAT, `now` and a span then add up without overflow for centuries.
pub const MAX_SPAN_NS: i64 = weir_core::tat::MAX_TOLERANCE;

/// The most tokens per second: one nanosecond per token.
pub const MAX_RATE: u64 = 1_000_000_000;

/// Rates are given in billionths of a token per second, so that a decimal
/// rate such as `0.5` or `1000.25` is exact.
pub const RATE_SCALE: u64 = 1_000_000_000;

use weir_core::tat;

/// Why a bucket's parameters were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcraError {
    /// The rate is zero.
    ZeroRate,
    /// The rate is over [`MAX_RATE`].
    RateTooHigh,
    /// The burst is zero.
    ZeroBurst,
    /// `burst / rate` is longer than [`MAX_SPAN_NS`].
    SpanTooLong,
}

/// A bucket's parameters in the time format: what one token and a full
/// bucket are worth in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gcra {
    /// Nanoseconds of refill per token, at least 1.
    pub interval: i64,
    /// `burst × interval`.
    pub tolerance: i64,
}

/// What a take (or a peek) found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Whether the tokens were (or would be) taken.
    pub allowed: bool,
    /// The TAT to store (the old one, or `now`, when refused).
    pub tat: i64,
    /// Whole tokens left after the step (before it, for a peek).
    pub remaining: u64,
    /// Nanoseconds until the same cost would pass: 0 when allowed.
    pub retry_after: i64,
    /// Nanoseconds until the bucket is full again.
    pub reset_after: i64,
}

impl Gcra {
    /// `rate_scaled / RATE_SCALE` tokens per second, up to `burst`.
    pub fn new(rate_scaled: u64, burst: u64) -> Result<Gcra, GcraError> {
        if rate_scaled == 0 {
            return Err(GcraError::ZeroRate);
        }
        if burst == 0 {
            return Err(GcraError::ZeroBurst);
        }
        if rate_scaled > MAX_RATE * RATE_SCALE {
            return Err(GcraError::RateTooHigh);
        }
        // ceil(1e9 ns × RATE_SCALE / rate_scaled): between 1 and 1e18.
        let numerator = 1_000_000_000u128 * u128::from(RATE_SCALE);
        let interval = numerator.div_ceil(u128::from(rate_scaled));
        let tolerance = interval
            .checked_mul(u128::from(burst))
            .filter(|&t| t <= MAX_SPAN_NS as u128)
            .ok_or(GcraError::SpanTooLong)?;
        Ok(Gcra {
            interval: interval as i64,
            tolerance: tolerance as i64,
        })
    }

    /// The burst these parameters were made with.
    pub fn burst(&self) -> u64 {
        (self.tolerance / self.interval) as u64
    }

    /// The whole tokens a bucket whose TAT is `tat` holds at `now`.
    fn tokens(&self, tat: i64, now: i64) -> u64 {
        (tat::room(tat, now, self.tolerance) / self.interval) as u64
    }

    /// Takes `cost` tokens at `now` from a bucket whose TAT is `tat`
    /// (`None`: a fresh, full bucket). `cost` is between 1 and the burst
    /// (the caller checks).
    pub fn take(&self, tat: Option<i64>, now: i64, cost: u64) -> Step {
        let base = tat.map_or(now, |tat| tat.max(now));
        // cost ≤ burst, so cost × interval ≤ tolerance ≤ MAX_TOLERANCE.
        let spend = self.interval.saturating_mul(cost as i64);
        match tat::take(base, now, spend, self.tolerance) {
            Some(next) => Step {
                allowed: true,
                tat: next,
                remaining: self.tokens(next, now),
                retry_after: 0,
                reset_after: next - now,
            },
            None => Step {
                allowed: false,
                tat: base,
                remaining: self.tokens(base, now),
                retry_after: tat::wait(base, now, spend, self.tolerance),
                reset_after: base - now,
            },
        }
    }

    /// What [`Gcra::take`] would answer, without taking: `remaining` is
    /// what the bucket holds now.
    pub fn peek(&self, tat: Option<i64>, now: i64, cost: u64) -> Step {
        let step = self.take(tat, now, cost);
        let base = tat.map_or(now, |tat| tat.max(now));
        Step {
            tat: base,
            remaining: self.tokens(base, now),
            reset_after: base - now,
            ..step
        }
    }

    /// Gives up to `n` tokens back at `now`: the TAT moves back by `n`
    /// tokens' worth but never before `now` (a bucket never holds more than
    /// its burst). Returns the new TAT and how many tokens came back, which
    /// counts a partly refilled token as one.
    pub fn refund(&self, tat: i64, now: i64, n: u64) -> (i64, u64) {
        let owed = tat.saturating_sub(now).max(0);
        let missing = (owed as u64).div_ceil(self.interval as u64);
        let back = n.min(missing);
        if back == missing {
            return (now, back);
        }
        // back < missing, so back × interval < owed: no overflow, and the
        // TAT stays after `now`.
        (tat - self.interval * back as i64, back)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;
    const NOW: i64 = 1_764_000_000 * S;

    fn rate(tokens_per_second: f64) -> u64 {
        (tokens_per_second * RATE_SCALE as f64).round() as u64
    }

    #[test]
    fn a_full_bucket_admits_exactly_its_burst_at_one_instant() {
        // Rates whose interval is not a whole number of nanoseconds, the
        // fastest and slowest rates, and large bursts.
        for (r, burst) in [
            (3.0, 3),
            (3.0, 1_000_000),
            (7.0, 13),
            (1e9, 1_000_000),
            (0.001, 1),
            (1e-9, 2),
            (999_999_999.0, 5),
        ] {
            let g = Gcra::new(rate(r), burst).unwrap();
            let mut tat = None;
            // One take of the whole burst, then nothing.
            let all = g.take(tat, NOW, burst);
            assert!(all.allowed, "{r} {burst}");
            assert_eq!(all.remaining, 0);
            assert!(!g.take(Some(all.tat), NOW, 1).allowed);
            // One at a time: exactly `burst`.
            let tries = burst.min(10_000) + 2;
            let mut passed = 0;
            for _ in 0..tries {
                let step = g.take(tat, NOW, 1);
                if step.allowed {
                    passed += 1;
                    tat = Some(step.tat);
                }
            }
            assert_eq!(passed, burst.min(tries), "{r} {burst}");
        }
    }

    #[test]
    fn refills_at_the_rate_and_says_when() {
        let g = Gcra::new(rate(10.0), 5).unwrap();
        let mut tat = None;
        for left in (0..5).rev() {
            let step = g.take(tat, NOW, 1);
            assert!(step.allowed);
            assert_eq!(step.remaining, left);
            tat = Some(step.tat);
        }
        let refused = g.take(tat, NOW, 1);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after, S / 10);
        assert_eq!(refused.reset_after, S / 2);
        assert_eq!(refused.tat, tat.unwrap());
        assert!(!g.take(tat, NOW + S / 10 - 1, 1).allowed);
        assert!(g.take(tat, NOW + S / 10, 1).allowed);
        // A peek answers the same and takes nothing.
        let peek = g.peek(tat, NOW + S / 10, 1);
        assert!(peek.allowed);
        assert_eq!(peek.remaining, 1);
        assert_eq!(peek.tat, tat.unwrap());
    }

    #[test]
    fn intervals_round_up_so_rounding_never_admits() {
        // 3 per second: 333_333_334 ns a token, never 333_333_333.
        let g = Gcra::new(rate(3.0), 3).unwrap();
        assert_eq!(g.interval, 333_333_334);
        assert_eq!(g.tolerance, 3 * 333_333_334);
        assert_eq!(g.burst(), 3);
        // Over a long run no more than the rate passes.
        let mut tat = None;
        let mut passed = 0;
        for ms in 0..100_000 {
            let step = g.take(tat, NOW + ms * 1_000_000, 1);
            if step.allowed {
                passed += 1;
                tat = Some(step.tat);
            }
        }
        assert!(passed <= 3 + 300, "{passed}");
        assert!(passed >= 300);
    }

    #[test]
    fn time_going_backwards_admits_nothing_more() {
        let g = Gcra::new(rate(1.0), 2).unwrap();
        let first = g.take(None, NOW, 2);
        assert!(first.allowed);
        assert!(!g.take(Some(first.tat), NOW - 100 * S, 1).allowed);
        assert_eq!(g.take(Some(first.tat), NOW - 100 * S, 1).remaining, 0);
        assert!(g.take(Some(first.tat), NOW + S, 1).allowed);
    }

    #[test]
    fn the_format_is_the_cores() {
        // per_token, tolerance and costs are the core's, for rates it can
        // take as f64 and bursts and costs f64 holds exactly.
        for (r, burst) in [
            (3.0, 3u64),
            (7.0, 13),
            (1e9, 1_000_000),
            (0.001, 1),
            (10.0, 20),
        ] {
            let g = Gcra::new(rate(r), burst).unwrap();
            let tick = tat::Tick::whole(g.interval as u64);
            assert_eq!(tick.tolerance_for(burst as f64), Some(g.tolerance), "{r}");
            for n in [1, burst / 2 + 1, burst] {
                assert_eq!(
                    tat::cost(g.interval as u64, n as f64, g.tolerance),
                    Some(g.interval * n as i64)
                );
            }
            // ceil(1e9 / rate) is the least whole per_token not faster
            // than the rate.
            let per_token = g.interval as f64;
            assert!(per_token * r >= 1e9 * (1.0 - 1e-15));
            assert!((per_token - 1.0) * r < 1e9);
        }
    }

    #[test]
    fn bad_parameters() {
        assert_eq!(Gcra::new(0, 1), Err(GcraError::ZeroRate));
        assert_eq!(Gcra::new(rate(1.0), 0), Err(GcraError::ZeroBurst));
        assert_eq!(
            Gcra::new(MAX_RATE * RATE_SCALE + 1, 1),
            Err(GcraError::RateTooHigh)
        );
        assert_eq!(Gcra::new(1, 3), Err(GcraError::SpanTooLong));
        assert_eq!(Gcra::new(rate(1.0), u64::MAX), Err(GcraError::SpanTooLong));
        assert!(Gcra::new(1, 2).is_ok());
        assert!(Gcra::new(MAX_RATE * RATE_SCALE, 1).is_ok());
    }

    #[test]
    fn refunds_never_fill_past_the_burst() {
        let g = Gcra::new(rate(1.0), 3).unwrap();
        let step = g.take(None, NOW, 3);
        assert_eq!(g.refund(step.tat, NOW, 1), (NOW + 2 * S, 1));
        assert_eq!(g.refund(step.tat, NOW, 3), (NOW, 3));
        assert_eq!(g.refund(step.tat, NOW, 10), (NOW, 3));
        // Half a token refilled: it counts as one missing.
        assert_eq!(g.refund(step.tat, NOW + S / 2, 10), (NOW + S / 2, 3));
        assert_eq!(g.refund(step.tat, NOW + S / 2, 1).1, 1);
        // A full bucket takes nothing back.
        assert_eq!(g.refund(NOW, NOW, 5), (NOW, 0));
    }
}
