//! The one-word rate limiter: up to `burst` events per window, the whole
//! state in one 64-bit word that may live anywhere (a struct field, an
//! array, memory shared between processes).
//!
//! It is a fixed window, not a token bucket. The first event after a window
//! has expired opens a new one; each allowed event pushes the window's
//! expiry back by one interval (1 / limit); up to `burst` events are
//! allowed while it is open, and then nothing until it expires.
//!
//! # The word
//!
//! ```text
//!  63                                       10 9          0
//! +-------------------------------------------+------------+
//! | window start, in units of 512 ns (54 bits) | count (10) |
//! +-------------------------------------------+------------+
//! ```
//!
//! The time field holds the window's start, rounded down to 512 ns; the
//! expiry follows as `start + floor(count × interval)`, with the interval
//! kept to 2^-32 ns. Rounding therefore happens once per window (when it
//! opens), never once per event, and a window is always less than 512 ns
//! short: at most 512 ns ÷ (burst × interval − 512 ns) too many events get
//! through, which [`RateLimit::new`] keeps to about 1 %. 54 bits of 512 ns cover every
//! non-negative `i64` nanosecond. The zero word is a window that expired
//! long ago: ready to use.
//!
//! Updates are a compare-and-swap loop over the word, so the count never
//! passes the burst however many threads (or processes) race; a refusal
//! writes nothing.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::time::NEVER;

/// The word's time unit in nanoseconds.
pub const GRANULARITY_NS: i64 = 1 << TIME_SHIFT;
/// The largest burst the 10-bit count holds.
pub const MAX_BURST: i64 = COUNT_MASK as i64;
/// The shortest window (burst × interval) a limit may have: below it the
/// word's granularity would cost more than 1 % accuracy.
pub const MIN_WINDOW_NS: i64 = 100 * GRANULARITY_NS;

const TIME_SHIFT: u32 = 9;
const COUNT_BITS: u32 = 10;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
/// Fractional bits of the interval.
const FRAC_BITS: u32 = 32;

/// A rate and a burst, checked once so that a decision does integer work
/// only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Whole nanoseconds of one interval (1 / limit).
    interval_ns: u64,
    /// The interval's fraction of a nanosecond, in units of 2^-32 ns.
    interval_frac: u32,
    /// Events allowed per window, 1..=[`MAX_BURST`].
    burst: u32,
}

/// Why a rate limit was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateError {
    /// The limit is NaN or infinite.
    NotFinite,
    /// The limit is negative.
    Negative,
    /// The limit is zero.
    Zero,
    /// The burst is outside 1..=[`MAX_BURST`].
    Burst,
    /// burst × interval is longer than the word's time field can hold.
    TooSlow,
    /// burst × interval is under [`MIN_WINDOW_NS`].
    TooFast,
    /// The parts do not form a limit [`RateLimit::new`] could have made.
    Invalid,
}

impl RateLimit {
    /// A limit of `limit_per_s` events a second with windows of `burst`
    /// events. The burst is checked first, then the limit: finite, not
    /// negative, not zero; then the window `burst / limit_per_s`, which
    /// must be at least [`MIN_WINDOW_NS`] and at most `i64::MAX` ns.
    pub fn new(limit_per_s: f64, burst: i64) -> Result<RateLimit, RateError> {
        if !(1..=MAX_BURST).contains(&burst) {
            return Err(RateError::Burst);
        }
        if !limit_per_s.is_finite() {
            return Err(RateError::NotFinite);
        }
        if limit_per_s < 0.0 {
            return Err(RateError::Negative);
        }
        if limit_per_s == 0.0 {
            return Err(RateError::Zero);
        }
        // The interval in units of 2^-32 ns, to the nearest unit.
        let fixed = nearest(1e9 / limit_per_s * (1u64 << FRAC_BITS) as f64);
        let interval_ns = u64::try_from(fixed >> FRAC_BITS).map_err(|_| RateError::TooSlow)?;
        Self::checked(interval_ns, fixed as u32, burst as u32)
    }

    /// Rebuilds a limit from the parts [`RateLimit::parts`] gave, checking
    /// them as [`RateLimit::new`] checks them.
    #[inline]
    pub fn from_parts(interval_ns: u64, interval_frac: u32, burst: u32) -> Result<Self, RateError> {
        if !(1..=MAX_BURST as u32).contains(&burst) {
            return Err(RateError::Invalid);
        }
        Self::checked(interval_ns, interval_frac, burst).map_err(|_| RateError::Invalid)
    }

    /// The limit, if its window floor(burst × interval) is within
    /// [`MIN_WINDOW_NS`]..=`i64::MAX`. Integer work only: this runs on every
    /// call that takes a limit from C.
    #[inline]
    fn checked(interval_ns: u64, interval_frac: u32, burst: u32) -> Result<Self, RateError> {
        let limit = RateLimit {
            interval_ns,
            interval_frac,
            burst,
        };
        match limit.span(u64::from(burst)) {
            window if window > i64::MAX as u64 => Err(RateError::TooSlow),
            window if window < MIN_WINDOW_NS as u64 => Err(RateError::TooFast),
            _ => Ok(limit),
        }
    }

    /// The parts: whole nanoseconds of the interval, its fraction in
    /// units of 2^-32 ns, and the burst.
    pub fn parts(&self) -> (u64, u32, u32) {
        (self.interval_ns, self.interval_frac, self.burst)
    }

    /// Events allowed per window.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// Nanoseconds from a window's start to its expiry after `count`
    /// events: `floor(count × interval)`, saturating.
    #[inline]
    fn span(&self, count: u64) -> u64 {
        let fraction = (count * u64::from(self.interval_frac)) >> FRAC_BITS;
        count
            .saturating_mul(self.interval_ns)
            .saturating_add(fraction)
    }

    /// The word after one more event at `now` (non-negative), or `None`
    /// when the window is open and full.
    #[inline]
    fn step(&self, word: u64, now: u64) -> Option<u64> {
        let count = word & COUNT_MASK;
        let start = (word >> COUNT_BITS) << TIME_SHIFT;
        // An earlier `now` than the start is no time passing.
        if now.saturating_sub(start) >= self.span(count) {
            // Expired (or never opened): this event opens a new window.
            Some(((now >> TIME_SHIFT) << COUNT_BITS) | 1)
        } else if count < u64::from(self.burst) {
            Some(word + 1)
        } else {
            None
        }
    }

    /// Nanoseconds until `word` allows an event, seen at `now`
    /// (non-negative).
    #[inline]
    fn wait(&self, word: u64, now: u64) -> i64 {
        let count = word & COUNT_MASK;
        let start = (word >> COUNT_BITS) << TIME_SHIFT;
        // Measured to the expiry itself, so that an earlier `now` than the
        // start (no time passing for `step`) is told the whole wait.
        let expiry = start.saturating_add(self.span(count));
        if now >= expiry || count < u64::from(self.burst) {
            0
        } else {
            i64::try_from(expiry - now).unwrap_or(NEVER)
        }
    }
}

/// `x` (positive, perhaps infinite) rounded to the nearest integer, halves
/// up: `f64::round` without std (this module is core-only). The cast
/// saturates, so anything past `u128::MAX` is `u128::MAX`.
fn nearest(x: f64) -> u128 {
    let whole = x as u128;
    // Exact: below 2^53 `whole` is a float and `x - whole` its fraction;
    // above it `x` has no fraction and the difference is 0 (or, past
    // u128::MAX, positive, and the add saturates).
    if x - whole as f64 >= 0.5 {
        whole.saturating_add(1)
    } else {
        whole
    }
}

/// What the compare-and-swap loop needs of a word. [`AtomicU64`] is the one
/// weir uses; a model checker's atomic can stand in for it in tests.
pub trait Word {
    /// The word's value.
    fn get(&self) -> u64;
    /// Replaces `current` with `new` if the word still holds `current`;
    /// otherwise fails with what it holds.
    fn swap_if(&self, current: u64, new: u64) -> Result<u64, u64>;
}

/// Relaxed ordering throughout: the word guards no other memory, and every
/// read-modify-write of one location is totally ordered whatever the
/// ordering, which is all the count's exactness needs.
impl Word for AtomicU64 {
    #[inline(always)]
    fn get(&self) -> u64 {
        self.load(Ordering::Relaxed)
    }

    #[inline(always)]
    fn swap_if(&self, current: u64, new: u64) -> Result<u64, u64> {
        self.compare_exchange_weak(current, new, Ordering::Relaxed, Ordering::Relaxed)
    }
}

/// Whether `word` allows one event at `now`, charging it if so. A negative
/// `now` is refused (the word holds no time before zero). A refusal writes
/// nothing.
#[inline]
pub fn allow<W: Word>(word: &W, limit: &RateLimit, now: i64) -> bool {
    if now < 0 {
        return false;
    }
    allow_seen(word, word.get(), limit, now as u64)
}

/// [`allow`] from a value of the word already read (perhaps stale; the loop
/// corrects it), with a non-negative `now`.
#[inline]
pub(crate) fn allow_seen<W: Word>(word: &W, seen: u64, limit: &RateLimit, now: u64) -> bool {
    let mut current = seen;
    loop {
        let Some(new) = limit.step(current, now) else {
            return false;
        };
        match word.swap_if(current, new) {
            Ok(_) => return true,
            Err(actual) => current = actual,
        }
    }
}

/// Nanoseconds from `now` until `word` would allow an event: 0 when it
/// would now, [`NEVER`] for a negative `now`. Reads the word only.
#[inline]
pub fn next<W: Word>(word: &W, limit: &RateLimit, now: i64) -> i64 {
    if now < 0 {
        return NEVER;
    }
    limit.wait(word.get(), now as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;

    const MS: i64 = 1_000_000;

    fn limit(per_s: f64, burst: i64) -> RateLimit {
        RateLimit::new(per_s, burst).unwrap()
    }

    /// Asserts that `word`, fresh or expired at `at`, takes exactly `burst`
    /// events at `at`, `at` + 1 ns, ... and refuses the next.
    fn fills(word: &AtomicU64, limit: &RateLimit, at: i64, burst: i64) {
        for i in 0..burst {
            assert!(allow(word, limit, at + i), "event {i} at {at}");
        }
        assert!(
            !allow(word, limit, at + burst),
            "one past the burst at {at}"
        );
    }

    #[test]
    fn window_semantics_step_by_step() {
        let limit = limit(1.0, 3);
        let word = AtomicU64::new(0);
        // Three events open and fill a window that expires at 3 s.
        for at in [0, MS, 2 * MS] {
            assert!(allow(&word, &limit, at), "event at {at}");
        }
        assert_eq!(next(&word, &limit, 2 * MS), 3 * SECOND - 2 * MS);
        for at in [3 * MS, SECOND, 2 * SECOND, 3 * SECOND - 1] {
            let before = word.load(Ordering::Relaxed);
            assert!(!allow(&word, &limit, at), "refused at {at}");
            assert_eq!(word.load(Ordering::Relaxed), before, "a refusal writes");
        }
        assert_eq!(next(&word, &limit, 3 * SECOND - 1), 1);
        assert_eq!(next(&word, &limit, 3 * SECOND), 0);
        // Expired: a new window of three opens at 3 s.
        fills(&word, &limit, 3 * SECOND, 3);
    }

    #[test]
    fn each_allowed_event_pushes_the_expiry_back() {
        let limit = limit(1.0, 3);
        let word = AtomicU64::new(0);
        assert!(allow(&word, &limit, 0));
        assert!(allow(&word, &limit, MS));
        // Two events: the window runs to 2 s, so 1.5 s is inside it and
        // its event pushes the expiry to 3 s.
        assert!(allow(&word, &limit, 1500 * MS));
        assert!(!allow(&word, &limit, 2500 * MS));
        assert_eq!(next(&word, &limit, 2500 * MS), 500 * MS);
        assert!(allow(&word, &limit, 3 * SECOND));
        // One event alone expires after one interval.
        let word = AtomicU64::new(0);
        assert!(allow(&word, &limit, 10 * SECOND));
        // At 11 s a new window of three opens, not the old one of one.
        fills(&word, &limit, 11 * SECOND, 3);
    }

    #[test]
    fn the_zero_word_is_ready_at_any_time() {
        let limit = limit(10.0, 1);
        for now in [0, 1, 511, 512, SECOND, i64::MAX] {
            let word = AtomicU64::new(0);
            assert_eq!(next(&word, &limit, now), 0);
            assert!(allow(&word, &limit, now), "now {now}");
            assert!(!allow(&word, &limit, now));
        }
    }

    #[test]
    fn a_window_opened_off_the_grid_is_never_more_than_511_ns_short() {
        let limit = limit(1000.0, 1); // 1 ms windows
        let word = AtomicU64::new(0);
        let open = 5 * SECOND + 700; // 188 ns past a multiple of 512
        assert!(allow(&word, &limit, open));
        let shortfall = open % GRANULARITY_NS;
        assert!(!allow(&word, &limit, open + MS - shortfall - 1));
        assert!(allow(&word, &limit, open + MS - shortfall));
    }

    #[test]
    fn time_going_backwards_counts_against_the_open_window() {
        let limit = limit(1.0, 2);
        let word = AtomicU64::new(0);
        assert!(allow(&word, &limit, 100 * SECOND));
        // Far earlier: no time passing, the open window takes it.
        assert!(allow(&word, &limit, 50 * SECOND));
        assert!(!allow(&word, &limit, 0));
        assert_eq!(next(&word, &limit, 0), 102 * SECOND);
        // The word is intact: the window still expires at 102 s.
        assert!(!allow(&word, &limit, 102 * SECOND - 1));
        assert!(allow(&word, &limit, 102 * SECOND));
    }

    #[test]
    fn negative_now_is_refused_and_never_comes() {
        let limit = limit(1.0, 5);
        let word = AtomicU64::new(0);
        assert!(!allow(&word, &limit, -1));
        assert!(!allow(&word, &limit, i64::MIN));
        assert_eq!(next(&word, &limit, -1), NEVER);
        assert_eq!(word.load(Ordering::Relaxed), 0);
        assert!(allow(&word, &limit, 0));
    }

    /// Closely spaced events for `duration` ns starting at `start`: how many
    /// were allowed, over how many the limit promises.
    fn admitted_ratio(per_s: f64, burst: i64, start: i64, spacing: i64, duration: i64) -> f64 {
        let limit = limit(per_s, burst);
        let word = AtomicU64::new(0);
        let mut allowed = 0u64;
        let mut now = start;
        while now < start + duration {
            allowed += u64::from(allow(&word, &limit, now));
            now += spacing;
        }
        allowed as f64 / (per_s * duration as f64 / SECOND as f64)
    }

    #[test]
    fn accuracy_is_within_one_percent_at_a_million_a_second() {
        // The original truncated each bump to 512 ns and let nearly twice
        // this through.
        let ratio = admitted_ratio(1e6, 100, 1_234_567, 37, SECOND / 5);
        assert!((ratio - 1.0).abs() < 0.01, "ratio {ratio}");
    }

    #[test]
    fn accuracy_is_within_one_percent_at_ten_thousand_a_second_burst_one() {
        let ratio = admitted_ratio(1e4, 1, 987_654_321, 101, SECOND);
        assert!((ratio - 1.0).abs() < 0.01, "ratio {ratio}");
    }

    #[test]
    fn fractional_intervals_do_not_drift() {
        // 3/s: an interval of 333,333,333.33 ns. 999 events push the expiry
        // 332,999,999,999.67 ns out; an interval cut to whole ns would lose
        // 333 ns, one cut to 512 ns would lose 85 µs.
        let limit = limit(3.0, 999);
        let word = AtomicU64::new(0);
        for _ in 0..999 {
            assert!(allow(&word, &limit, 0));
        }
        assert_eq!(next(&word, &limit, 0), 333 * SECOND - 1);
    }

    /// A small deterministic generator (xorshift64) for the walk below.
    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn next_names_the_first_instant_allow_succeeds_on_a_wandering_clock() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        for (per_s, burst) in [(1.0, 3), (3.0, 1), (1e6, 100), (7.5, 1023)] {
            let limit = limit(per_s, burst);
            let word = AtomicU64::new(0);
            let mut now: i64 = 1 << 40;
            for _ in 0..crate::rounds(20_000) {
                // Mostly forward, sometimes back: steps of -1/8 to +7/8 of
                // an interval.
                let interval = (1e9 / per_s) as i64;
                let step = (xorshift(&mut seed) % 8) as i64 - 1;
                now = (now + step * interval / 8 + (xorshift(&mut seed) % 1000) as i64).max(0);
                let wait = next(&word, &limit, now);
                let before = word.load(Ordering::Relaxed);
                if wait > 0 {
                    assert!(!allow(&word, &limit, now));
                    assert!(!allow(&word, &limit, now + wait - 1));
                    assert_eq!(word.load(Ordering::Relaxed), before, "a refusal wrote");
                    assert_eq!(next(&word, &limit, now + wait), 0);
                } else {
                    assert!(allow(&word, &limit, now));
                }
            }
        }
    }

    #[test]
    fn new_rejects_what_the_word_cannot_do() {
        use RateError::*;
        assert_eq!(RateLimit::new(1.0, 0), Err(Burst));
        assert_eq!(RateLimit::new(1.0, 1024), Err(Burst));
        assert_eq!(RateLimit::new(1.0, -1), Err(Burst));
        assert_eq!(RateLimit::new(f64::NAN, 1), Err(NotFinite));
        assert_eq!(RateLimit::new(f64::INFINITY, 1), Err(NotFinite));
        assert_eq!(RateLimit::new(f64::NEG_INFINITY, 1), Err(NotFinite));
        assert_eq!(RateLimit::new(-1.0, 1), Err(Negative));
        assert_eq!(RateLimit::new(0.0, 1), Err(Zero));
        assert_eq!(RateLimit::new(-0.0, 1), Err(Zero));
        // Windows under 100 × 512 ns.
        assert_eq!(RateLimit::new(2e6, 100), Err(TooFast));
        assert_eq!(RateLimit::new(1e5, 1), Err(TooFast));
        assert_eq!(RateLimit::new(f64::MAX, 1023), Err(TooFast));
        // Exactly at the edge, and just past it.
        assert!(RateLimit::new(1e9 / MIN_WINDOW_NS as f64, 1).is_ok());
        assert_eq!(RateLimit::new(1e9 / 51_199.0, 1), Err(TooFast));
        // Windows longer than the word's time range.
        assert_eq!(RateLimit::new(1e-12, 1), Err(TooSlow));
        assert_eq!(RateLimit::new(f64::MIN_POSITIVE, 1), Err(TooSlow));
        assert_eq!(RateLimit::new(2e-10, 1023), Err(TooSlow));
        assert!(RateLimit::new(1.0 / 3600.0, 1023).is_ok());
    }

    #[test]
    fn nearest_rounds_as_f64_round_does() {
        let halves = [
            0.5,
            1.5,
            2.5,
            4_503_599_627_370_495.5,
            1e9 * 4_294_967_296.0 / 3.0,
        ];
        let edges = [
            0.0,
            0.5 - f64::EPSILON / 4.0,
            1.0,
            9_007_199_254_740_994.0,
            1e30,
        ];
        for x in halves.into_iter().chain(edges) {
            assert_eq!(nearest(x), x.round() as u128, "{x}");
        }
        assert_eq!(nearest(f64::MAX), u128::MAX);
        assert_eq!(nearest(f64::INFINITY), u128::MAX);
    }

    #[test]
    fn parts_round_trip_and_foreign_parts_are_invalid() {
        let made = limit(3.0, 7);
        let (ns, frac, burst) = made.parts();
        assert_eq!((ns, burst), (333_333_333, 7));
        assert_eq!(RateLimit::from_parts(ns, frac, burst), Ok(made));
        use RateError::Invalid;
        assert_eq!(RateLimit::from_parts(0, 0, 0), Err(Invalid));
        assert_eq!(RateLimit::from_parts(ns, frac, 0), Err(Invalid));
        assert_eq!(RateLimit::from_parts(ns, frac, 1024), Err(Invalid));
        assert_eq!(RateLimit::from_parts(0, 0, 1), Err(Invalid));
        assert_eq!(RateLimit::from_parts(u64::MAX, 0, 1), Err(Invalid));
    }

    #[test]
    fn a_count_above_the_burst_is_refused_until_it_expires() {
        // A word charged under a larger burst, then read under a smaller.
        let big = limit(1.0, 1023);
        let small = limit(1.0, 2);
        let word = AtomicU64::new(0);
        for _ in 0..10 {
            assert!(allow(&word, &big, 0));
        }
        assert!(!allow(&word, &small, SECOND));
        assert_eq!(next(&word, &small, SECOND), 9 * SECOND);
        assert!(allow(&word, &small, 10 * SECOND));
    }

    #[test]
    fn extreme_times_saturate() {
        let slow = limit(1.0 / 3600.0, 1023);
        let word = AtomicU64::new(0);
        assert!(allow(&word, &slow, i64::MAX));
        assert!(allow(&word, &slow, i64::MAX));
        assert!(next(&word, &slow, i64::MAX) == 0);
        let word = AtomicU64::new(u64::MAX);
        assert!(!allow(&word, &slow, 0));
        assert!(next(&word, &slow, 0) > 0);
    }
}
