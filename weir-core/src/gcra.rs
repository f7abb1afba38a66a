//! The GCRA word: a limiter that is one 64-bit word, a theoretical
//! arrival time (TAT) on the caller's own clock, so that it may live in
//! memory shared between processes that read one clock.
//!
//! Where the rate word ([`crate::rate`]) is a fixed window (a burst, then
//! nothing until the window expires), this is a token bucket: a full word
//! admits `burst` at once, and then one more every `1 / rate` s, the shape
//! nginx's `limit_req` users expect.
//!
//! # The word (frozen)
//!
//! The word is the TAT as an unsigned count of ticks of 2^-`shift` ns on
//! the caller's clock, tick 0 at `now = 0`: an absolute encoding, not one
//! relative to an origin, so that every process that maps the word reads
//! it alike. The limit ([`GcraLimit`]) carries the tick (`shift`, chosen
//! by [`crate::tat::Tick::for_rate`]), the ticks a token is worth
//! (`per_token`) and those a full word holds (`tolerance`); a word is read
//! under the one limit it is used with. A stored value above `i64::MAX`
//! (never written by weir) reads as `i64::MAX`: a word that never admits.
//!
//! Time is `now` in ns from 0 to [`GcraLimit::max_now`] =
//! `HORIZON >> shift` ns (2^62 ns, 146 years, at `shift` 0, which every
//! rate up to 7.8 million a second gets; at least 2^58 ns, 9.1 years, at
//! the finest tick). A later `now` counts as that one (time stands still);
//! a negative one is refused without a write. With `t = now × 2^shift`
//! ticks, a take of `n` tokens costs `c = n × per_token` ticks and:
//!
//! - [`allow_n`] passes iff `max(tat, t) + c ≤ t + tolerance`
//!   ([`crate::tat::take`]), and then writes `max(tat, t) + c`, one
//!   compare-and-swap of the whole word retried on the value it found; a
//!   refusal writes nothing.
//! - [`next`] is 0 if a take of one token would pass at `now`, else the
//!   whole ns from `now` to the first instant it would: `ceil((tat +
//!   per_token − tolerance) / 2^shift) − now`, or [`NEVER`] if that instant
//!   is past `max_now`.
//!
//! The zero word is a full bucket at every `now ≥ 0`: ready to use. The
//! encoding uses all 64 bits and carries no version; it is frozen from
//! weir 0.2 on, and a future encoding will be a new type.
//!
//! # What it promises
//!
//! `per_token = ceil(2^shift × 10^9 / rate)` and `tolerance = burst ×
//! per_token`, both exact: so a full word admits exactly `burst` at one
//! instant, and over any `T` ns of judged instants at most `burst +
//! floor(T × rate / 10^9)` tokens pass, whatever the order of the instants
//! (a `now` earlier than the TAT's only finds less room). Rounding runs
//! against admitting: a steady stream gets `2^shift × 10^9 / per_token`
//! tokens a second, under `rate` by less than 1/128 of it (by less than
//! `1 / per_token` of it above 1.25 × 10^8 a second).

use crate::rate::Word;
use crate::tat::{self, Clock, Tick, MAX_SHIFT, MAX_TOLERANCE};
use crate::time::NEVER;

/// The largest burst: every integer up to it is exact as an `f64`.
pub const MAX_BURST: i64 = 1 << 53;

/// The fastest rate a second: one token a tick at the finest tick.
pub const MAX_RATE: f64 = (1_000_000_000u64 << MAX_SHIFT) as f64;

/// A rate and a burst, checked once so that a decision does integer work
/// only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcraLimit {
    per_token: u64,
    tolerance: i64,
    shift: u32,
}

/// Why a smooth limit was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcraError {
    /// The rate is NaN or infinite.
    NotFinite,
    /// The rate is negative.
    Negative,
    /// The rate is zero.
    Zero,
    /// The burst is outside 1..=[`MAX_BURST`].
    Burst,
    /// The rate is above [`MAX_RATE`]: a token would be worth less than
    /// the finest tick.
    TooFast,
    /// burst / rate is longer than the word's clock holds
    /// ([`MAX_TOLERANCE`] ticks, about 73 years at 1 ns a tick).
    TooSlow,
    /// The parts do not form a limit [`GcraLimit::new`] could have made.
    Invalid,
}

impl GcraError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            GcraError::NotFinite => 3,
            GcraError::Negative => 4,
            GcraError::Burst => 430,
            GcraError::Zero => 431,
            GcraError::TooSlow => 432,
            GcraError::TooFast => 433,
            GcraError::Invalid => 434,
        }
    }
}

impl GcraLimit {
    /// A limit of `rate_per_s` tokens a second and a bucket of `burst`
    /// tokens. Checked in order: the burst, then the rate (finite, not
    /// negative, not zero), then that the bucket fits the clock.
    pub fn new(rate_per_s: f64, burst: i64) -> Result<GcraLimit, GcraError> {
        if !(1..=MAX_BURST).contains(&burst) {
            return Err(GcraError::Burst);
        }
        if !rate_per_s.is_finite() {
            return Err(GcraError::NotFinite);
        }
        if rate_per_s < 0.0 {
            return Err(GcraError::Negative);
        }
        if rate_per_s == 0.0 {
            return Err(GcraError::Zero);
        }
        if rate_per_s > MAX_RATE {
            return Err(GcraError::TooFast);
        }
        let tick = Tick::for_rate(rate_per_s, burst as f64).ok_or(GcraError::TooSlow)?;
        let tolerance = tick.tolerance_for(burst as f64).ok_or(GcraError::TooSlow)?;
        Ok(GcraLimit {
            per_token: tick.per_token,
            tolerance,
            shift: tick.shift,
        })
    }

    /// Rebuilds a limit from its parts, checking their ranges: `shift` at
    /// most [`MAX_SHIFT`], `per_token` at least 1 and `tolerance` from
    /// `per_token` to [`MAX_TOLERANCE`]. Integer work only: this runs on
    /// every call that takes a limit from C.
    #[inline]
    pub fn from_parts(per_token: u64, tolerance: i64, shift: u32) -> Result<Self, GcraError> {
        let valid = shift <= MAX_SHIFT
            && per_token >= 1
            && tolerance >= 0
            && per_token <= tolerance as u64
            && tolerance <= MAX_TOLERANCE;
        if valid {
            Ok(GcraLimit {
                per_token,
                tolerance,
                shift,
            })
        } else {
            Err(GcraError::Invalid)
        }
    }

    /// A limit from parts that [`GcraLimit::parts`] answered, unchecked:
    /// for a copy of a checked limit kept as plain words (a bloom array's
    /// reconfigured limit, [`crate::bloom::Bloom::reconfigure`]).
    #[inline]
    pub(crate) const fn from_checked_parts(per_token: u64, tolerance: i64, shift: u32) -> Self {
        GcraLimit {
            per_token,
            tolerance,
            shift,
        }
    }

    /// The parts: ticks a token is worth, ticks a full word holds, and the
    /// tick as a power of two (a tick is 2^-shift ns).
    pub fn parts(&self) -> (u64, i64, u32) {
        (self.per_token, self.tolerance, self.shift)
    }

    /// The latest `now` (ns) the word tells apart; later ones count as it.
    pub fn max_now(&self) -> i64 {
        tat::HORIZON >> self.shift
    }

    #[inline]
    fn clock(&self) -> Clock {
        Clock::new(0, self.shift)
    }

    /// `now` in ticks, `None` if it is negative.
    #[inline]
    fn ticks(&self, now: i64) -> Option<i64> {
        (now >= 0).then(|| self.clock().ticks(now))
    }

    /// The ticks `n` tokens cost, if `n` is 1..=burst.
    #[inline]
    fn cost(&self, n: i64) -> Option<i64> {
        let n = u64::try_from(n).ok().filter(|&n| n >= 1)?;
        let cost = self.per_token.checked_mul(n)?;
        (cost <= self.tolerance as u64).then_some(cost as i64)
    }
}

/// The TAT a word holds: values above `i64::MAX` (never written by weir)
/// read as `i64::MAX`, a word that never admits.
#[inline]
fn tat_of(word: u64) -> i64 {
    word.min(i64::MAX as u64) as i64
}

/// Whether `word` admits one token at `now`, charging it if so.
#[inline]
pub fn allow<W: Word>(word: &W, limit: &GcraLimit, now: i64) -> bool {
    allow_n(word, limit, now, 1)
}

/// Whether `word` admits `n` tokens at `now`, charging them if so: all or
/// nothing. Refuses, writing nothing, a negative `now` and an `n` outside
/// 1..=burst (more than a full word could ever admit).
#[inline]
pub fn allow_n<W: Word>(word: &W, limit: &GcraLimit, now: i64, n: i64) -> bool {
    take_n(word, limit, now, n).is_some()
}

/// [`allow_n`], answering the word's value before the charge and after
/// it, for [`crate::charge`] to give back exactly; `None` for whatever
/// [`allow_n`] refuses. Every charge moves the word strictly up (by at
/// least the cost).
#[inline]
pub(crate) fn take_n<W: Word>(word: &W, limit: &GcraLimit, now: i64, n: i64) -> Option<(u64, u64)> {
    let (now, cost) = (limit.ticks(now)?, limit.cost(n)?);
    let mut current = word.get();
    loop {
        let next = tat::take(tat_of(current), now, cost, limit.tolerance)?;
        // now ≥ 0 and the TAT ≥ 0, so the new TAT is not negative.
        match word.swap_if(current, next as u64) {
            Ok(_) => return Some((current, next as u64)),
            Err(actual) => current = actual,
        }
    }
}

/// Whether `word` (a value read from a word of `limit`) is at rest at
/// `now`: its TAT at or before `now`, so that it decides every call at
/// `now` or later exactly as the zero word does. False for a negative
/// `now`. The keyed table ([`crate::keyed`]) forgets such words.
#[inline]
pub(crate) fn at_rest(word: u64, limit: &GcraLimit, now: i64) -> bool {
    limit.ticks(now).is_some_and(|at| tat_of(word) <= at)
}

/// Nanoseconds from `now` until `word` would admit one token: 0 if it
/// would now, [`NEVER`] for a negative `now` or an instant past
/// [`GcraLimit::max_now`]. Reads the word only.
#[inline]
pub fn next<W: Word>(word: &W, limit: &GcraLimit, now: i64) -> i64 {
    next_n(word, limit, now, 1)
}

/// Nanoseconds from `now` until `word` would admit `n` tokens at once: 0
/// if [`allow_n`] would now, [`NEVER`] for a negative `now`, an `n`
/// outside 1..=burst or an instant past [`GcraLimit::max_now`]. Reads the
/// word only.
#[inline]
pub(crate) fn next_n<W: Word>(word: &W, limit: &GcraLimit, now: i64, n: i64) -> i64 {
    let (Some(at), Some(cost)) = (limit.ticks(now), limit.cost(n)) else {
        return NEVER;
    };
    let tat = tat_of(word.get());
    if tat::wait(tat, at, cost, limit.tolerance) == 0 {
        return 0;
    }
    match limit.clock().instant(tat::due(tat, cost, limit.tolerance)) {
        // `due` is after `at`, so the instant is after `now`.
        Some(instant) => instant - now,
        None => NEVER,
    }
}

/// Whole tokens `word` would admit at `now` (0 for a negative `now`).
/// Reads the word only.
#[inline]
pub fn room<W: Word>(word: &W, limit: &GcraLimit, now: i64) -> i64 {
    match limit.ticks(now) {
        Some(at) => tat::room(tat_of(word.get()), at, limit.tolerance) / limit.per_token as i64,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::{AtomicU64, Ordering};
    use crate::time::SECOND;

    fn limit(rate: f64, burst: i64) -> GcraLimit {
        GcraLimit::new(rate, burst).unwrap()
    }

    fn admitted(word: &AtomicU64, limit: &GcraLimit, now: i64) -> i64 {
        (0..100_000).filter(|_| allow(word, limit, now)).count() as i64
    }

    #[test]
    fn a_full_word_admits_exactly_burst_then_one_a_period() {
        let limit = limit(1.0, 3);
        let word = AtomicU64::new(0);
        assert_eq!(admitted(&word, &limit, 10 * SECOND), 3);
        assert_eq!(next(&word, &limit, 10 * SECOND), SECOND);
        assert!(!allow(&word, &limit, 11 * SECOND - 1));
        assert!(allow(&word, &limit, 11 * SECOND));
        assert!(!allow(&word, &limit, 11 * SECOND));
        assert_eq!(room(&word, &limit, 14 * SECOND), 3);
    }

    #[test]
    fn every_phase_and_the_zero_word() {
        for (rate, burst) in [(1.0, 1), (3.0, 7), (1e6, 100), (1e9, 1000), (7.5e8, 3)] {
            let limit = limit(rate, burst);
            for now in [0, 1, 511, 512, 1023, 5 * SECOND + 511, limit.max_now()] {
                let word = AtomicU64::new(0);
                assert_eq!(admitted(&word, &limit, now), burst, "{rate} {burst} {now}");
            }
        }
    }

    #[test]
    fn allow_n_is_all_or_nothing() {
        let limit = limit(10.0, 5);
        let word = AtomicU64::new(0);
        assert!(!allow_n(&word, &limit, 0, 6));
        assert!(!allow_n(&word, &limit, 0, 0));
        assert!(!allow_n(&word, &limit, 0, -1));
        assert!(allow_n(&word, &limit, 0, 3));
        let before = word.load(Ordering::Relaxed);
        assert!(!allow_n(&word, &limit, 0, 3));
        assert_eq!(word.load(Ordering::Relaxed), before);
        assert!(allow_n(&word, &limit, 0, 2));
    }

    /// `next_n` is 0 exactly when `allow_n` would pass, `take_n` answers
    /// the word before and after (strictly up), and a refusal writes
    /// nothing: on a random walk of instants and sizes.
    #[test]
    fn next_n_names_when_take_n_passes() {
        let mut state = 0x243f_6a88_85a3_08d3;
        let mut draw = |n: u64| crate::xorshift(&mut state) % n;
        for (rate, burst) in [(1.0, 3), (3.0, 7), (1e6, 100), (7.5e8, 3)] {
            let limit = limit(rate, burst);
            let word = AtomicU64::new(0);
            let mut now = 5 * SECOND;
            for _ in 0..crate::rounds(20_000) {
                now += draw(SECOND as u64 / rate as u64 + 1) as i64 - SECOND / rate as i64 / 4;
                let n = draw(burst as u64 + 2) as i64;
                let before = word.load(Ordering::Relaxed);
                let wait = next_n(&word, &limit, now, n);
                match take_n(&word, &limit, now, n) {
                    Some((was, is)) => {
                        assert_eq!(wait, 0, "{rate} {burst} {now} {n}");
                        assert_eq!((was, is), (before, word.load(Ordering::Relaxed)));
                        assert!(is >= was + n as u64 * limit.per_token);
                    }
                    None => {
                        assert!(wait > 0, "{rate} {burst} {now} {n}");
                        assert_eq!(word.load(Ordering::Relaxed), before);
                        if (1..=burst).contains(&n) && now >= 0 && wait < NEVER {
                            let copy = AtomicU64::new(before);
                            assert!(!allow_n(&copy, &limit, now + wait - 1, n));
                            assert!(allow_n(&copy, &limit, now + wait, n));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn time_going_backwards_never_admits_more() {
        let limit = limit(1.0, 2);
        let word = AtomicU64::new(0);
        assert!(allow(&word, &limit, 100 * SECOND));
        assert!(allow(&word, &limit, 100 * SECOND));
        assert!(!allow(&word, &limit, 50 * SECOND));
        assert!(!allow(&word, &limit, 0));
        assert_eq!(next(&word, &limit, 0), 101 * SECOND);
        assert!(allow(&word, &limit, 101 * SECOND));
    }

    #[test]
    fn the_clock_ends() {
        let limit = limit(1.0, 2);
        let word = AtomicU64::new(0);
        assert!(!allow(&word, &limit, -1));
        assert!(!allow(&word, &limit, i64::MIN));
        assert_eq!(next(&word, &limit, -1), NEVER);
        assert_eq!(word.load(Ordering::Relaxed), 0);
        // Past max_now time stands still.
        assert!(allow(&word, &limit, i64::MAX));
        assert!(allow(&word, &limit, limit.max_now()));
        assert!(!allow(&word, &limit, i64::MAX));
        assert_eq!(next(&word, &limit, i64::MAX), NEVER);
        // A value weir never writes never admits.
        let word = AtomicU64::new(u64::MAX);
        assert!(!allow(&word, &limit, i64::MAX));
        assert_eq!(next(&word, &limit, 0), NEVER);
        let fast = self::limit(1e9, 1);
        assert_eq!(fast.max_now(), tat::HORIZON >> 4);
    }

    #[test]
    fn new_rejects_what_the_word_cannot_do() {
        use GcraError::*;
        assert_eq!(GcraLimit::new(1.0, 0), Err(Burst));
        assert_eq!(GcraLimit::new(1.0, MAX_BURST + 1), Err(Burst));
        assert_eq!(GcraLimit::new(f64::NAN, 1), Err(NotFinite));
        assert_eq!(GcraLimit::new(-1.0, 1), Err(Negative));
        assert_eq!(GcraLimit::new(0.0, 1), Err(Zero));
        assert_eq!(GcraLimit::new(1e-12, 1), Err(TooSlow));
        assert_eq!(GcraLimit::new(1.0, 1 << 40), Err(TooSlow));
        assert_eq!(GcraLimit::new(f64::MAX, 1), Err(TooFast));
        assert!(GcraLimit::new(MAX_RATE, 1).is_ok());
        let made = limit(3.0, 7);
        let (p, t, s) = made.parts();
        assert_eq!(GcraLimit::from_parts(p, t, s), Ok(made));
        assert_eq!(GcraLimit::from_parts(0, t, s), Err(Invalid));
        assert_eq!(GcraLimit::from_parts(p, p as i64 - 1, s), Err(Invalid));
        assert_eq!(GcraLimit::from_parts(p, t, 5), Err(Invalid));
        assert_eq!(GcraLimit::from_parts(p, -1, s), Err(Invalid));
    }
}
