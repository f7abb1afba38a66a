//! The GCRA time format: a theoretical arrival time (TAT) in ticks, and the
//! few lines of integer arithmetic that decide on it. The token bucket
//! ([`crate::bucket`]) keeps its one word in this format; anything else that
//! keeps a TAT (a GCRA word in shared memory, an integer fast path) uses
//! the same functions, so that they agree to the tick.
//!
//! # The format
//!
//! - A **tick** is 2^-`shift` ns, `shift` in `0..=`[`MAX_SHIFT`].
//!   [`Tick::for_rate`] picks the coarsest tick in which one token is worth
//!   at least [`FINE`] ticks (so rounding a token up to a whole tick costs
//!   under 1/128 of the rate), and [`MAX_SHIFT`] for rates too fast for
//!   that.
//! - A token is worth `per_token = ceil(2^shift × 10^9 / rate)` ticks,
//!   exactly (not to f64 precision): so `per_token` ticks a token is never
//!   faster than `rate`.
//! - A full bucket holds `tolerance = floor(burst × per_token)` ticks, and a
//!   take of `n` tokens costs `ceil(n × per_token)` ticks, both exact. The
//!   capacity and the costs share the one rounded `per_token`: `burst`
//!   whole-token takes fit a full bucket exactly when `burst` is whole, and
//!   every rounding runs against admitting.
//! - Time is the caller's `now` in ns, as ticks after an `origin` (the
//!   instant the bucket was made): `(now − origin) × 2^shift`, clamped to
//!   `[`[`PAST`]`, `[`HORIZON`]`]` ticks. Past the horizon the clock stands
//!   still. With [`MAX_TOLERANCE`] this keeps every sum below within `i64`.
//!
//! # The decision
//!
//! [`take`]: a take of `cost` ticks at `now` (ticks) passes iff
//! `max(tat, now) + cost ≤ now + tolerance`, and moves the TAT there. Over
//! any trace, the costs passed at instants within any `T` ticks sum to at
//! most `T + tolerance`, whatever the order of the instants; so the tokens
//! passed in any `T` ns are at most `burst + rate × T / 10^9`.

/// The finest tick: 2^-4 ns.
pub const MAX_SHIFT: u32 = 4;

/// The fewest ticks a token is worth before a finer tick is chosen: a token
/// rounded up to a whole tick then costs under 1/128 of the rate.
pub const FINE: u64 = 128;

/// How far after its origin the clock runs, in ticks (about 146 years at
/// a tick of 1 ns, 9.1 years at 2^-4 ns). A later `now` reads as this.
pub const HORIZON: i64 = i64::MAX / 2;

/// How far before its origin a `now` is followed, in ticks. Earlier readings
/// read as this one.
pub const PAST: i64 = -(i64::MAX / 4);

/// The most ticks a tolerance may hold (about 73 years at 1 ns a tick):
/// with it, the TAT, a `now` and a cost always sum within `i64`.
pub const MAX_TOLERANCE: i64 = i64::MAX / 4;

/// Nanoseconds in a second.
const SECOND: u64 = 1_000_000_000;

/// A take of `cost` ticks at `now`, against `tat` and a bucket of
/// `tolerance` ticks: the new TAT if it passes, `None` if not.
///
/// Exact for `tat ≤ HORIZON + 2 × MAX_TOLERANCE`, `PAST ≤ now ≤ HORIZON`
/// and `0 ≤ cost ≤ tolerance ≤ MAX_TOLERANCE`; saturating beyond.
#[inline]
pub fn take(tat: i64, now: i64, cost: i64, tolerance: i64) -> Option<i64> {
    let next = tat.max(now).saturating_add(cost);
    (next <= now.saturating_add(tolerance)).then_some(next)
}

/// Ticks from `now` until a take of `cost` would pass: 0 if it would now.
/// Same ranges as [`take`].
#[inline]
pub fn wait(tat: i64, now: i64, cost: i64, tolerance: i64) -> i64 {
    due(tat, cost, tolerance).saturating_sub(now).max(0)
}

/// The first instant (ticks) from which a take of `cost` passes.
#[inline]
pub fn due(tat: i64, cost: i64, tolerance: i64) -> i64 {
    tat.saturating_add(cost).saturating_sub(tolerance)
}

/// Ticks of refill a bucket holds at `now`, from 0 to `tolerance`.
#[inline]
pub fn room(tat: i64, now: i64, tolerance: i64) -> i64 {
    let owed = tat.saturating_sub(now).max(0);
    tolerance.saturating_sub(owed).max(0)
}

/// A rate in the format: the tick, and the ticks one token is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tick {
    /// A tick is 2^-`shift` ns.
    pub shift: u32,
    /// Ticks one token is worth: `ceil(2^shift × 10^9 / rate)`.
    pub per_token: u64,
}

impl Tick {
    /// The tick for `rate` tokens a second (positive, finite) and the ticks
    /// a token is worth, with the tick as fine as [`FINE`] asks and
    /// `tolerance_for(burst)` within [`MAX_TOLERANCE`]; `None` if no tick
    /// holds the burst.
    pub fn for_rate(rate: f64, burst: f64) -> Option<Tick> {
        let mut shift = 0;
        while shift < MAX_SHIFT && (SECOND << shift) as f64 / rate < FINE as f64 {
            shift += 1;
        }
        // A coarser tick if the burst does not fit this one.
        loop {
            let fits = Tick::exact(rate, shift).filter(|tick| tick.tolerance_for(burst).is_some());
            match fits {
                Some(tick) => return Some(tick),
                None if shift > 0 => shift -= 1,
                None => return None,
            }
        }
    }

    /// `per_token = ceil(2^shift × 10^9 / rate)` exactly, if it is at most
    /// [`MAX_TOLERANCE`].
    fn exact(rate: f64, shift: u32) -> Option<Tick> {
        let target = SECOND << shift;
        let guess = target as f64 / rate;
        // rate is positive and finite: guess is a number, perhaps infinite.
        if guess > MAX_TOLERANCE as f64 {
            return None;
        }
        // The f64 quotient is within an ulp; settle the ceiling exactly:
        // the least whole `per_token` with per_token × rate ≥ target.
        let mut per_token = (guess as u64).max(1);
        while mul_floor(rate, per_token)? < target {
            per_token += 1;
        }
        while per_token > 1 && mul_floor(rate, per_token - 1)? >= target {
            per_token -= 1;
        }
        (per_token <= MAX_TOLERANCE as u64).then_some(Tick { shift, per_token })
    }

    /// A tick of 1 ns where a token is worth `per_token` ticks (for a
    /// bucket that never refills, whose tokens are only a unit of account).
    pub fn whole(per_token: u64) -> Tick {
        Tick {
            shift: 0,
            per_token,
        }
    }

    /// See [`tolerance`].
    pub fn tolerance_for(&self, burst: f64) -> Option<i64> {
        tolerance(self.per_token, burst)
    }
}

/// The ticks a full bucket of `burst` tokens of `per_token` ticks holds,
/// `floor(burst × per_token)`, if positive and within [`MAX_TOLERANCE`].
pub fn tolerance(per_token: u64, burst: f64) -> Option<i64> {
    let ticks = mul_floor(burst, per_token)?;
    (1..=MAX_TOLERANCE as u64)
        .contains(&ticks)
        .then_some(ticks as i64)
}

/// The ticks `n` tokens of `per_token` ticks cost, `ceil(n × per_token)`,
/// if `n` is positive and finite and the cost at most `tolerance`.
#[inline]
pub fn cost(per_token: u64, n: f64, tolerance: i64) -> Option<i64> {
    // A whole number of tokens (the common take): one integer multiply,
    // exactly `ceil(n × per_token)` since the product has no fraction.
    // `whole as f64 == n` holds only for an integral n in 1..=2^63 (the
    // cast saturates, and NaN compares unequal); at 2^63 `whole` is one
    // less, but any cost that large is over every tolerance either way.
    // Signed, because an i64 converts to f64 in one instruction.
    let whole = n as i64;
    if whole as f64 == n && whole > 0 {
        return match per_token.checked_mul(whole as u64) {
            Some(ticks) if ticks <= tolerance as u64 => Some(ticks as i64),
            _ => None,
        };
    }
    // Fractional costs: exact float arithmetic.
    if !(n > 0.0 && n.is_finite()) {
        return None;
    }
    let ticks = mul_ceil(n, per_token)?;
    (ticks <= tolerance as u64).then_some(ticks as i64)
}

/// A clock in ticks after an origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    origin: i64,
    shift: u32,
}

impl Clock {
    /// The clock that reads 0 at `origin` (ns) and counts 2^-`shift` ns
    /// ticks; `shift` is at most [`MAX_SHIFT`].
    #[inline]
    pub fn new(origin: i64, shift: u32) -> Clock {
        Clock {
            origin,
            shift: shift.min(MAX_SHIFT),
        }
    }

    /// The latest tick the clock reads, [`HORIZON`] rounded down to a whole
    /// nanosecond.
    #[inline]
    pub fn last(&self) -> i64 {
        (HORIZON >> self.shift) << self.shift
    }

    /// The clock at `now` (ns): whole nanoseconds since the origin in ticks,
    /// clamped to [`PAST`]..=[`Clock::last`].
    #[inline]
    pub fn ticks(&self, now: i64) -> i64 {
        // In i64: where the difference saturates, the exact one is beyond
        // ±2^63 and so beyond both bounds (within ±2^62), which it clamps
        // to alike.
        let since = now.saturating_sub(self.origin);
        since.clamp(PAST >> self.shift, HORIZON >> self.shift) << self.shift
    }

    /// The first instant (ns) at which the clock reads at least `ticks`, if
    /// the clock gets there and the instant is an `i64`.
    #[inline]
    pub fn instant(&self, ticks: i64) -> Option<i64> {
        if ticks > self.last() {
            return None;
        }
        // Rounded up to a whole nanosecond (an arithmetic shift floors).
        let ns = -(ticks.saturating_neg() >> self.shift);
        i64::try_from(i128::from(self.origin) + i128::from(ns)).ok()
    }
}

/// `x` (finite, non-negative) as `m × 2^e` with a whole `m`.
fn parts(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    if exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, exponent - 1075)
    }
}

/// `x × k` exactly, rounded down (`up` false) or up, if `x` is finite and
/// not negative and the result fits a `u64`.
fn mul(x: f64, k: u64, up: bool) -> Option<u64> {
    if !(x >= 0.0 && x.is_finite()) {
        return None;
    }
    let (m, e) = parts(x);
    // Below 2^53 × 2^64: fits.
    let product = u128::from(m) * u128::from(k);
    let value = if product == 0 {
        0
    } else if e >= 0 {
        if e >= 64 || product.leading_zeros() < e as u32 {
            return None;
        }
        product << e
    } else {
        let shift = e.unsigned_abs();
        if shift >= 128 {
            u128::from(up)
        } else {
            let whole = product >> shift;
            whole + u128::from(up && whole << shift != product)
        }
    };
    u64::try_from(value).ok()
}

/// `floor(x × k)`, exactly, if `x` is finite and not negative and the
/// result fits a `u64`.
pub fn mul_floor(x: f64, k: u64) -> Option<u64> {
    mul(x, k, false)
}

/// `ceil(x × k)`, exactly, if `x` is finite and not negative and the
/// result fits a `u64`.
pub fn mul_ceil(x: f64, k: u64) -> Option<u64> {
    mul(x, k, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The integer path of [`cost`] answers what the exact float path
    /// answers, for whole costs and the floats around them.
    #[test]
    fn whole_costs_cost_what_the_float_path_says() {
        let by_float = |per_token: u64, n: f64, tolerance: i64| {
            if !(n > 0.0 && n.is_finite()) {
                return None;
            }
            let ticks = mul_ceil(n, per_token)?;
            (ticks <= tolerance as u64).then_some(ticks as i64)
        };
        let per_tokens = [1, 2, 3, 128, 1_000_000_007, 1 << 40, MAX_TOLERANCE as u64];
        let tolerances = [1, 127, 1 << 20, 1 << 50, MAX_TOLERANCE];
        let mut costs = [0.0; 40];
        let specials = [
            0.0,
            -0.0,
            -1.0,
            0.5,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
        ];
        costs[..7].copy_from_slice(&specials);
        let mut at = 7;
        for n in [
            1.0f64,
            2.0,
            3.0,
            7.0,
            1e6,
            2f64.powi(52),
            2f64.powi(53),
            2f64.powi(63),
            2f64.powi(64),
            1e30,
        ] {
            for x in [
                n,
                f64::from_bits(n.to_bits() + 1),
                f64::from_bits(n.to_bits() - 1),
            ] {
                costs[at] = x;
                at += 1;
            }
        }
        for &per_token in &per_tokens {
            for &tolerance in &tolerances {
                for &n in &costs[..at] {
                    assert_eq!(
                        cost(per_token, n, tolerance),
                        by_float(per_token, n, tolerance),
                        "per_token {per_token}, n {n}, tolerance {tolerance}"
                    );
                }
            }
        }
    }

    /// The i64 clock reads what an exact (i128) difference reads.
    #[test]
    fn the_clock_reads_the_exact_difference_clamped() {
        for shift in 0..=MAX_SHIFT {
            for origin in [i64::MIN, -1, 0, 1, 12_345, i64::MAX / 2, i64::MAX] {
                let clock = Clock::new(origin, shift);
                for now in [
                    i64::MIN,
                    i64::MIN + 1,
                    -5,
                    0,
                    7,
                    origin,
                    origin.wrapping_add(3),
                    i64::MAX,
                ] {
                    let since = i128::from(now) - i128::from(origin);
                    let exact =
                        since.clamp(i128::from(PAST >> shift), i128::from(HORIZON >> shift)) as i64;
                    assert_eq!(
                        clock.ticks(now),
                        exact << shift,
                        "origin {origin}, now {now}, shift {shift}"
                    );
                }
            }
        }
    }

    #[test]
    fn take_is_the_gcra() {
        // A bucket of 3 tokens of 10 ticks.
        let (cost, tolerance) = (10, 30);
        let mut tat = 0;
        for _ in 0..3 {
            tat = take(tat, 100, cost, tolerance).unwrap();
        }
        assert_eq!(tat, 130);
        assert_eq!(take(tat, 100, cost, tolerance), None);
        assert_eq!(wait(tat, 100, cost, tolerance), 10);
        assert_eq!(room(tat, 100, tolerance), 0);
        assert_eq!(take(tat, 110, cost, tolerance), Some(140));
        assert_eq!(room(tat, 115, tolerance), 15);
        assert_eq!(room(tat, 1000, tolerance), 30);
        assert_eq!(wait(tat, 1000, cost, tolerance), 0);
    }

    #[test]
    fn products_are_exact() {
        assert_eq!(mul_floor(2.5, 3), Some(7));
        assert_eq!(mul_ceil(2.5, 3), Some(8));
        assert_eq!(mul_ceil(7.0, 142_857_143), Some(1_000_000_001));
        assert_eq!(mul_floor(0.1, 10), Some(1)); // 0.1 is a hair above 1/10
        assert_eq!(mul_ceil(0.1, 10), Some(2));
        assert_eq!(mul_floor(f64::MIN_POSITIVE, u64::MAX), Some(0));
        assert_eq!(mul_ceil(f64::MIN_POSITIVE, u64::MAX), Some(1));
        assert_eq!(mul_ceil(0.0, 5), Some(0));
        assert_eq!(mul_floor(1e300, 2), None);
        assert_eq!(mul_floor(-1.0, 2), None);
        assert_eq!(mul_floor(f64::NAN, 2), None);
        assert_eq!(mul_floor(2e19, 1), None);
        assert_eq!(mul_floor(1.8e19, 1), Some(18_000_000_000_000_000_000));
    }

    #[test]
    fn a_token_is_never_worth_less_than_the_rate_allows() {
        for rate in [
            1.0,
            3.0,
            7.0,
            20.0,
            1e6 / 7.0,
            7.8e6,
            1e8,
            3e8,
            7.5e8,
            1e9,
            1e12,
        ] {
            let tick = Tick::for_rate(rate, 1.0).unwrap();
            let target = SECOND << tick.shift;
            // per_token × rate ≥ 2^shift × 10^9, and one tick less is not.
            assert!(mul_floor(rate, tick.per_token).unwrap() >= target, "{rate}");
            if tick.per_token > 1 {
                assert!(
                    mul_floor(rate, tick.per_token - 1).unwrap() < target,
                    "{rate}"
                );
            }
            assert!(tick.per_token >= FINE || tick.shift == MAX_SHIFT, "{rate}");
        }
        assert_eq!(
            Tick::for_rate(20.0, 1.0),
            Some(Tick {
                shift: 0,
                per_token: 50_000_000
            })
        );
        assert_eq!(
            Tick::for_rate(1e9, 1.0),
            Some(Tick {
                shift: 4,
                per_token: 16
            })
        );
        assert_eq!(
            Tick::for_rate(7.5e8, 1.0),
            Some(Tick {
                shift: 4,
                per_token: 22
            })
        );
    }

    #[test]
    fn a_burst_too_large_for_a_fine_tick_gets_a_coarser_one() {
        let tick = Tick::for_rate(1e9, 1e18).unwrap();
        assert_eq!(tick.shift, 1);
        assert_eq!(tick.tolerance_for(1e18), Some(2_000_000_000_000_000_000));
        assert_eq!(Tick::for_rate(1.0, 1e10), None);
    }

    #[test]
    fn the_clock_clamps_and_finds_instants() {
        let clock = Clock::new(1_000, 4);
        assert_eq!(clock.ticks(1_000), 0);
        assert_eq!(clock.ticks(1_003), 48);
        assert_eq!(clock.ticks(i64::MAX), clock.last());
        assert_eq!(clock.ticks(i64::MIN), (PAST >> 4) << 4);
        assert_eq!(clock.instant(48), Some(1_003));
        assert_eq!(clock.instant(49), Some(1_004));
        assert_eq!(clock.instant(-17), Some(999));
        assert_eq!(clock.instant(-16), Some(999));
        assert_eq!(clock.instant(clock.last() + 1), None);
        assert!(clock.ticks(clock.instant(clock.last()).unwrap()) == clock.last());
    }
}
