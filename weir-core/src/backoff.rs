//! Retry backoff: whether to try again, and how long to wait first.
//!
//! A policy is plain data: a base wait, a growth factor, a cap, how many
//! attempts in all (the first one included) and a jitter. The ceiling before
//! the `retry`-th retry is `min(base × factor^(retry − 1), cap)`; each jitter
//! draws its delay from a range built on that ceiling, using a draw in
//! [0, 1) the caller supplies, so the same draws always give the same
//! schedule. Nothing here allocates, reads a clock or draws a number.

use crate::draw;

/// How much randomness goes into a delay. Every range below is built on
/// `ceiling(retry)`, this retry's ceiling, not on the policy's cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackoffJitter {
    /// The ceiling itself. Reproducible, but clients that failed together
    /// retry together.
    Rigid,
    /// Uniform over [0, ceiling]: spreads clients furthest apart.
    Full,
    /// Uniform over [ceiling − ceiling / 2, ceiling]: keeps half the ceiling
    /// as a floor under the wait.
    Equal,
    /// Uniform over [base, min(3 × max(previous, base), cap)]: each delay
    /// grows from where the last one landed, not from the retry number. A
    /// previous below the base (0 before the first retry, negative too)
    /// counts as the base, so the first retry draws from [base, 3 × base].
    /// A cap below the base makes every delay the cap (the range is
    /// [cap, cap], as every other jitter's ceiling is `min(base, cap)`), so
    /// the range is never inverted and never passes the cap.
    Decorrelated,
    /// Uniform over [ceiling × (1 − spread), ceiling × (1 + spread)], so the
    /// wait may pass the cap by the spread fraction.
    Spread,
}

/// Why a policy was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackoffError {
    /// The base wait is negative.
    NegativeBase,
    /// The factor is NaN or infinite.
    FactorNotFinite,
    /// The factor is below one: waits would shrink.
    FactorBelowOne,
    /// The cap is negative.
    NegativeCap,
    /// Fewer than one attempt: not even the first call could be made.
    NoAttempts,
    /// The spread is NaN or infinite.
    SpreadNotFinite,
    /// The spread is negative.
    NegativeSpread,
    /// The spread is above one.
    SpreadAboveOne,
}

impl BackoffError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        use BackoffError::*;
        // One status per field, so a caller knows which to fix; the finer
        // reasons (NaN, below one, ...) are in each status's text.
        match self {
            NegativeBase => 13,
            FactorNotFinite | FactorBelowOne => 14,
            NegativeCap => 15,
            NoAttempts => 16,
            SpreadNotFinite | NegativeSpread | SpreadAboveOne => 17,
        }
    }
}

/// A checked retry policy. Only [`Backoff::new`] makes one, so every
/// `Backoff` is valid and every answer it gives is total.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    base_ns: i64,
    factor: f64,
    cap_ns: i64,
    attempts: i32,
    jitter: BackoffJitter,
    spread: f64,
}

impl Backoff {
    /// Checks a policy: `base_ns` and `cap_ns` at least zero, `factor`
    /// finite and at least one, `attempts` at least one, `spread` finite and
    /// in [0, 1] (checked whatever the jitter, so switching a valid policy
    /// to [`BackoffJitter::Spread`] keeps it valid). The first field that fails, in
    /// that order, is the error.
    pub fn new(
        base_ns: i64,
        factor: f64,
        cap_ns: i64,
        attempts: i32,
        jitter: BackoffJitter,
        spread: f64,
    ) -> Result<Backoff, BackoffError> {
        use BackoffError::*;
        let faults = [
            (base_ns < 0, NegativeBase),
            (!factor.is_finite(), FactorNotFinite),
            (factor < 1.0, FactorBelowOne),
            (cap_ns < 0, NegativeCap),
            (attempts < 1, NoAttempts),
            (!spread.is_finite(), SpreadNotFinite),
            (spread < 0.0, NegativeSpread),
            (spread > 1.0, SpreadAboveOne),
        ];
        if let Some(&(_, fault)) = faults.iter().find(|(failed, _)| *failed) {
            return Err(fault);
        }
        Ok(Backoff {
            base_ns,
            factor,
            cap_ns,
            attempts,
            jitter,
            spread,
        })
    }

    /// The wait before the first retry.
    pub fn base_ns(&self) -> i64 {
        self.base_ns
    }

    /// How many attempts in all, the first one included.
    pub fn attempts(&self) -> i32 {
        self.attempts
    }

    /// The undelayed ceiling before the `retry`-th retry (the first retry
    /// is 1): `min(base × factor^(retry − 1), cap)`. Zero for `retry <= 0`.
    /// O(1) for any retry (at most 31 squarings) and never overflows: a
    /// growth past the cap, or past what a float holds, is the cap.
    pub fn ceiling(&self, retry: i32) -> i64 {
        if retry <= 0 {
            return 0;
        }
        let exact = self.base_ns.min(self.cap_ns);
        if retry == 1 || self.factor == 1.0 || exact == 0 {
            return exact;
        }
        let grown = self.base_ns as f64 * power(self.factor, (retry - 1) as u32);
        // `cap as f64` may round up; a float below it still converts (with
        // saturation) and the `min` keeps the answer within the cap.
        if grown < self.cap_ns as f64 {
            (grown as i64).min(self.cap_ns)
        } else {
            self.cap_ns
        }
    }

    /// How long to wait before the `retry`-th retry, given the caller's
    /// draw `random` (clamped into [0, 1), NaN as 0) and, for
    /// [`BackoffJitter::Decorrelated`] only, the delay the previous retry waited
    /// (`previous_ns`; anything below the base, 0 and negatives included,
    /// counts as the base, so the first retry draws from [base, 3 × base]). Zero for `retry <= 0`. Never negative. The same
    /// arguments always give the same delay.
    pub fn delay(&self, retry: i32, random: f64, previous_ns: i64) -> i64 {
        if retry <= 0 {
            return 0;
        }
        let (low, high) = self.range(retry, previous_ns);
        between(low, high, draw::clamp(random))
    }

    /// The range [low, high] the delay before the `retry`-th retry is drawn
    /// from (`retry >= 1`); `low <= high` always.
    pub fn range(&self, retry: i32, previous_ns: i64) -> (i64, i64) {
        let ceiling = self.ceiling(retry);
        match self.jitter {
            BackoffJitter::Rigid => (ceiling, ceiling),
            BackoffJitter::Full => (0, ceiling),
            BackoffJitter::Equal => (ceiling - ceiling / 2, ceiling),
            BackoffJitter::Decorrelated => {
                // [base, min(3 × max(previous, base), cap)]; with cap < base
                // both ends are the cap, so the range never inverts.
                let low = self.base_ns.min(self.cap_ns);
                let grown = previous_ns.max(self.base_ns).saturating_mul(3);
                (low, grown.min(self.cap_ns))
            }
            BackoffJitter::Spread => {
                // spread is in [0, 1], so the offset is in [0, ceiling].
                let offset = ((ceiling as f64 * self.spread) as i64).min(ceiling);
                (ceiling - offset, ceiling.saturating_add(offset))
            }
        }
    }

    /// Whether a call that has made `made` attempts (the first attempt
    /// being 1) may make another: a policy of three attempts allows two
    /// retries. `made == 0` (nothing tried yet) is true; a negative count
    /// cannot be judged and is false.
    pub fn more(&self, made: i32) -> bool {
        (0..self.attempts).contains(&made)
    }

    /// How many delays a whole run of retries waits: `attempts − 1`.
    pub fn retries(&self) -> usize {
        // attempts >= 1, so this is never negative.
        (self.attempts - 1) as usize
    }

    /// The delays of a whole run of retries, one per retry in order
    /// ([`Backoff::retries`] of them). Retry `i` uses `randoms[i − 1]`, or 0
    /// once `randoms` runs short; Decorrelated's previous delay starts at
    /// the base and then follows the delays drawn. Lazy: only the delays
    /// taken are computed.
    pub fn delays<'a>(&'a self, randoms: &'a [f64]) -> impl Iterator<Item = i64> + 'a {
        let mut previous = self.base_ns;
        // retries < i32::MAX, so every retry number fits in an i32.
        (1..=self.retries() as i32).map(move |retry| {
            let random = randoms.get(retry as usize - 1).copied().unwrap_or(0.0);
            previous = self.delay(retry, random, previous);
            previous
        })
    }

    /// Writes [`Backoff::delays`] into `out`, as many as fit, and returns
    /// how many it wrote: `min(out.len(), retries())`. The whole schedule
    /// has [`Backoff::retries`] delays, so a caller sizes `out` from that.
    pub fn schedule(&self, randoms: &[f64], out: &mut [i64]) -> usize {
        let mut written = 0;
        for (slot, delay) in out.iter_mut().zip(self.delays(randoms)) {
            *slot = delay;
            written += 1;
        }
        written
    }
}

/// `x` to the power `n` by repeated squaring: at most 32 multiplications,
/// and `core` has no `powi`.
fn power(mut x: f64, mut n: u32) -> f64 {
    let mut result = 1.0;
    while n > 0 {
        if n & 1 == 1 {
            result *= x;
        }
        n >>= 1;
        if n > 0 {
            x *= x;
        }
    }
    result
}

/// The point a fraction `random` in [0, 1) of the way from `low` to `high`
/// (`0 <= low <= high`), truncated, and held within [low, high] whatever
/// the float rounding does.
fn between(low: i64, high: i64, random: f64) -> i64 {
    let span = (high - low) as f64;
    low.saturating_add((span * random) as i64).min(high)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;
    const JITTERS: [BackoffJitter; 5] = [
        BackoffJitter::Rigid,
        BackoffJitter::Full,
        BackoffJitter::Equal,
        BackoffJitter::Decorrelated,
        BackoffJitter::Spread,
    ];
    /// Draws in range, at its edges, and outside it.
    const DRAWS: [f64; 12] = [
        0.0,
        0.25,
        0.5,
        0.75,
        0.999_999_999_999,
        1.0 - f64::EPSILON / 2.0,
        1.0,
        2.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];

    fn preset(jitter: BackoffJitter) -> Backoff {
        Backoff::new(100 * MS, 2.0, 1000 * MS, 3, jitter, 0.2).unwrap()
    }

    #[test]
    fn refuses_each_bad_field() {
        use BackoffError::*;
        let new = |base, factor, cap, attempts, spread| {
            Backoff::new(base, factor, cap, attempts, BackoffJitter::Rigid, spread)
        };
        assert_eq!(new(-1, 2.0, 1, 1, 0.0), Err(NegativeBase));
        assert_eq!(new(i64::MIN, 2.0, 1, 1, 0.0), Err(NegativeBase));
        assert_eq!(new(1, f64::NAN, 1, 1, 0.0), Err(FactorNotFinite));
        assert_eq!(new(1, f64::INFINITY, 1, 1, 0.0), Err(FactorNotFinite));
        assert_eq!(new(1, 0.999, 1, 1, 0.0), Err(FactorBelowOne));
        assert_eq!(new(1, -2.0, 1, 1, 0.0), Err(FactorBelowOne));
        assert_eq!(new(1, 2.0, -1, 1, 0.0), Err(NegativeCap));
        assert_eq!(new(1, 2.0, 1, 0, 0.0), Err(NoAttempts));
        assert_eq!(new(1, 2.0, 1, i32::MIN, 0.0), Err(NoAttempts));
        assert_eq!(new(1, 2.0, 1, 1, f64::NAN), Err(SpreadNotFinite));
        assert_eq!(new(1, 2.0, 1, 1, -0.1), Err(NegativeSpread));
        assert_eq!(new(1, 2.0, 1, 1, 1.01), Err(SpreadAboveOne));
        // The edges are allowed.
        assert!(new(0, 1.0, 0, 1, 0.0).is_ok());
        assert!(new(i64::MAX, f64::MAX, i64::MAX, i32::MAX, 1.0).is_ok());
    }

    #[test]
    fn ceilings_double_to_the_cap() {
        let policy = preset(BackoffJitter::Rigid);
        let ceilings: [i64; 7] = core::array::from_fn(|i| policy.ceiling(i as i32));
        assert_eq!(
            ceilings,
            [
                0,
                100 * MS,
                200 * MS,
                400 * MS,
                800 * MS,
                1000 * MS,
                1000 * MS
            ]
        );
        assert_eq!(policy.ceiling(-5), 0);
        assert_eq!(policy.ceiling(i32::MIN), 0);
    }

    #[test]
    fn ceilings_saturate_at_the_cap_without_overflow() {
        let policy = preset(BackoffJitter::Rigid);
        assert_eq!(policy.ceiling(10_000), 1000 * MS);
        assert_eq!(policy.ceiling(i32::MAX), 1000 * MS);
        // A huge factor, a huge base, no cap to speak of.
        let huge = |base, factor, cap| {
            Backoff::new(base, factor, cap, 1, BackoffJitter::Rigid, 0.0).unwrap()
        };
        assert_eq!(huge(1, f64::MAX, 5 * MS).ceiling(2), 5 * MS);
        assert_eq!(huge(1, f64::MAX, 5 * MS).ceiling(10_000), 5 * MS);
        assert_eq!(huge(i64::MAX, 2.0, i64::MAX).ceiling(1), i64::MAX);
        assert_eq!(huge(i64::MAX, 2.0, i64::MAX).ceiling(10_000), i64::MAX);
        assert_eq!(huge(i64::MAX, 2.0, 7).ceiling(3), 7);
        assert_eq!(huge(i64::MAX - 1, 1.0, i64::MAX).ceiling(9), i64::MAX - 1);
        assert_eq!(huge(3, 1e300, i64::MAX).ceiling(i32::MAX), i64::MAX);
        // A base of zero stays zero however large the factor (no 0 × inf).
        assert_eq!(huge(0, f64::MAX, i64::MAX).ceiling(10_000), 0);
        // A factor barely above one grows slowly but still reaches the cap.
        let slow = huge(MS, 1.000_001, 2 * MS);
        assert!(slow.ceiling(10_000) > MS && slow.ceiling(10_000) < 2 * MS);
        assert_eq!(slow.ceiling(i32::MAX), 2 * MS);
    }

    #[test]
    fn power_matches_repeated_multiplication() {
        for n in 0..64u32 {
            let mut expected = 1.0;
            for _ in 0..n {
                expected *= 2.0;
            }
            assert_eq!(power(2.0, n), expected);
        }
        assert_eq!(power(1.5, 0), 1.0);
        assert_eq!(power(10.0, 3), 1000.0);
        assert_eq!(power(f64::MAX, 2), f64::INFINITY);
    }

    #[test]
    fn each_jitter_stays_within_its_documented_range() {
        let previous = [i64::MIN, -1, 0, 50 * MS, 100 * MS, 300 * MS, i64::MAX];
        for jitter in JITTERS {
            let policy = preset(jitter);
            for retry in [1, 2, 3, 4, 5, 10_000, i32::MAX] {
                let c = policy.ceiling(retry);
                for prev in previous {
                    let (low, high) = match jitter {
                        BackoffJitter::Rigid => (c, c),
                        BackoffJitter::Full => (0, c),
                        BackoffJitter::Equal => (c - c / 2, c),
                        BackoffJitter::Decorrelated => (100 * MS, 1000 * MS),
                        BackoffJitter::Spread => (c - c / 5, c + c / 5),
                    };
                    for random in DRAWS {
                        let delay = policy.delay(retry, random, prev);
                        assert!(
                            (low..=high).contains(&delay),
                            "{jitter:?} retry {retry} prev {prev} draw {random}: {delay}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn draws_outside_the_unit_interval_are_clamped() {
        let policy = preset(BackoffJitter::Full);
        assert_eq!(policy.delay(1, f64::NAN, 0), 0);
        assert_eq!(policy.delay(1, -1.0, 0), 0);
        assert_eq!(policy.delay(1, 0.0, 0), 0);
        assert_eq!(policy.delay(1, 0.5, 0), 50 * MS);
        // Draws at or above one land just under the ceiling, never over it.
        for random in [1.0, 2.0, f64::INFINITY] {
            let delay = policy.delay(2, random, 0);
            assert!(delay > 199 * MS && delay <= 200 * MS, "{random}: {delay}");
        }
    }

    #[test]
    fn jitter_ranges_at_their_ends() {
        let policy = preset(BackoffJitter::Equal);
        assert_eq!(policy.delay(2, 0.0, 0), 100 * MS);
        assert_eq!(policy.delay(2, 0.5, 0), 150 * MS);
        let policy = preset(BackoffJitter::Spread);
        assert_eq!(policy.delay(5, 0.0, 0), 800 * MS);
        assert_eq!(policy.delay(5, 0.5, 0), 1000 * MS);
        // The top of Spread passes the cap by the spread fraction.
        assert!(policy.delay(5, 1.0, 0) > 1199 * MS);
        let rigid = preset(BackoffJitter::Rigid);
        for random in DRAWS {
            assert_eq!(rigid.delay(3, random, 0), 400 * MS);
        }
        assert_eq!(rigid.delay(0, 0.5, 0), 0);
        assert_eq!(rigid.delay(-1, 0.5, 0), 0);
    }

    #[test]
    fn spread_of_zero_and_one() {
        let flat = Backoff::new(100 * MS, 2.0, 1000 * MS, 3, BackoffJitter::Spread, 0.0).unwrap();
        for random in DRAWS {
            assert_eq!(flat.delay(2, random, 0), 200 * MS);
        }
        let wide = Backoff::new(100 * MS, 2.0, 1000 * MS, 3, BackoffJitter::Spread, 1.0).unwrap();
        assert_eq!(wide.delay(2, 0.0, 0), 0);
        assert!(wide.delay(2, 1.0, 0) <= 400 * MS);
        // A spread past i64::MAX saturates.
        let top = Backoff::new(i64::MAX, 2.0, i64::MAX, 3, BackoffJitter::Spread, 0.5).unwrap();
        assert_eq!(top.range(1, 0), (i64::MAX - i64::MAX / 2 - 1, i64::MAX));
        assert!(top.delay(1, 1.0, 0) > i64::MAX - (1 << 12));
    }

    #[test]
    fn decorrelated_never_inverts_its_range() {
        // Base above the cap, previous below the base, negative or huge.
        for (base, cap) in [
            (100 * MS, 1000 * MS),
            (500 * MS, 200 * MS),
            (0, 0),
            (5, i64::MAX),
        ] {
            let policy = Backoff::new(base, 2.0, cap, 3, BackoffJitter::Decorrelated, 0.2).unwrap();
            for previous in [i64::MIN, -1, 0, 1, base, base * 3, i64::MAX / 2, i64::MAX] {
                let (low, high) = policy.range(1, previous);
                assert!(low <= high, "base {base} cap {cap} previous {previous}");
                assert!(low >= 0 && high <= cap);
                for random in DRAWS {
                    let delay = policy.delay(1, random, previous);
                    assert!((low..=high).contains(&delay));
                }
            }
        }
        let policy = preset(BackoffJitter::Decorrelated);
        // Below the base counts as the base: [base, 3 × base].
        assert_eq!(policy.range(1, -5), (100 * MS, 300 * MS));
        assert_eq!(policy.range(1, 10 * MS), (100 * MS, 300 * MS));
        assert_eq!(policy.range(1, 100 * MS), (100 * MS, 300 * MS));
        assert_eq!(policy.range(7, 200 * MS), (100 * MS, 600 * MS));
        assert_eq!(policy.range(1, i64::MAX), (100 * MS, 1000 * MS));
        assert_eq!(policy.delay(1, 0.5, 100 * MS), 200 * MS);
    }

    #[test]
    fn decorrelated_first_retry_draws_from_base_to_three_bases() {
        // A fixed bug: uniform over [base, min(3 × max(previous, base),
        // cap)], so previous = 0 (no retry yet) still jitters.
        let policy = preset(BackoffJitter::Decorrelated);
        assert_eq!(policy.range(1, 0), (100 * MS, 300 * MS));
        assert_eq!(policy.delay(1, 0.0, 0), 100 * MS);
        assert_eq!(policy.delay(1, 0.5, 0), 200 * MS);
        assert!(policy.delay(1, 1.0, 0) > 299 * MS);
        assert_eq!(policy.range(1, i64::MIN), (100 * MS, 300 * MS));
        assert_eq!(policy.range(1, 250 * MS), (100 * MS, 750 * MS));
        // A cap below the base: every delay is the cap (the ceiling every
        // other jitter uses too), and the range never inverts.
        let low_cap =
            Backoff::new(500 * MS, 2.0, 200 * MS, 3, BackoffJitter::Decorrelated, 0.0).unwrap();
        for previous in [i64::MIN, 0, 100 * MS, 500 * MS, i64::MAX] {
            assert_eq!(low_cap.range(1, previous), (200 * MS, 200 * MS));
        }
        // A cap between base and 3 × base cuts the top only.
        let mid_cap =
            Backoff::new(100 * MS, 2.0, 250 * MS, 3, BackoffJitter::Decorrelated, 0.0).unwrap();
        assert_eq!(mid_cap.range(1, 0), (100 * MS, 250 * MS));
    }

    #[test]
    fn more_counts_the_first_attempt() {
        let policy = preset(BackoffJitter::Full);
        assert!(policy.more(0));
        assert!(policy.more(1));
        assert!(policy.more(2));
        assert!(!policy.more(3));
        assert!(!policy.more(4));
        assert!(!policy.more(i32::MAX));
        assert!(!policy.more(-1));
        assert!(!policy.more(i32::MIN));
        let once = Backoff::new(MS, 2.0, MS, 1, BackoffJitter::Full, 0.0).unwrap();
        assert!(!once.more(1));
        assert_eq!(once.retries(), 0);
    }

    #[test]
    fn the_preset_schedule_for_draws_of_one_half() {
        let policy = preset(BackoffJitter::Spread);
        let mut out = [0; 4];
        assert_eq!(policy.schedule(&[0.5, 0.5], &mut out), 2);
        assert_eq!(out, [100 * MS, 200 * MS, 0, 0]);
    }

    #[test]
    fn the_same_draws_give_the_same_schedule() {
        let randoms = [0.13, 0.92, 0.5, 0.01, 0.77, 0.4, 0.66];
        for jitter in JITTERS {
            let policy = Backoff::new(10 * MS, 1.7, 900 * MS, 8, jitter, 0.3).unwrap();
            let mut first = [0; 7];
            let mut second = [0; 7];
            assert_eq!(policy.schedule(&randoms, &mut first), 7);
            assert_eq!(policy.schedule(&randoms, &mut second), 7);
            assert_eq!(first, second, "{jitter:?}");
            // And step by step, delay gives the same values.
            let mut previous = 10 * MS;
            for (index, expected) in first.iter().enumerate() {
                previous = policy.delay(index as i32 + 1, randoms[index], previous);
                assert_eq!(previous, *expected);
            }
        }
    }

    #[test]
    fn schedule_runs_short_of_draws_with_zero_and_of_room_quietly() {
        let policy = Backoff::new(10 * MS, 2.0, 1000 * MS, 5, BackoffJitter::Full, 0.0).unwrap();
        let mut out = [-1; 6];
        assert_eq!(policy.schedule(&[0.5], &mut out), 4);
        assert_eq!(out, [5 * MS, 0, 0, 0, -1, -1]);
        let mut small = [-1; 2];
        assert_eq!(policy.schedule(&[0.5, 0.5, 0.5, 0.5], &mut small), 2);
        assert_eq!(small, [5 * MS, 10 * MS]);
        assert_eq!(policy.schedule(&[], &mut []), 0);
        assert_eq!(policy.retries(), 4);
    }

    #[test]
    fn decorrelated_schedule_follows_its_own_delays() {
        let policy = Backoff::new(
            100 * MS,
            2.0,
            1000 * MS,
            5,
            BackoffJitter::Decorrelated,
            0.0,
        )
        .unwrap();
        let mut out = [0; 4];
        assert_eq!(policy.schedule(&[0.5, 0.5, 0.5, 0.5], &mut out), 4);
        // From base 100: [100, 300] → 200; [100, 600] → 350; [100, 1000 capped] → 550 ...
        assert_eq!(out, [200 * MS, 350 * MS, 550 * MS, 550 * MS]);
    }

    #[test]
    fn a_huge_attempt_count_is_counted_not_walked() {
        let policy = Backoff::new(MS, 2.0, MS, i32::MAX, BackoffJitter::Rigid, 0.0).unwrap();
        let mut out = [0; 3];
        assert_eq!(policy.schedule(&[], &mut out), 3);
        assert_eq!(out, [MS; 3]);
        assert_eq!(policy.retries(), (i32::MAX - 1) as usize);
    }
}
