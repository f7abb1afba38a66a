//! The one-word rate limiter: up to `burst` events per window, the whole
//! state in one 64-bit word that may live anywhere (a struct field, an
//! array, memory shared between processes).
//!
//! It is a fixed window, not a token bucket. The first event after a window
//! has expired opens a new one; each allowed event pushes the window's
//! expiry back by one interval (1 / limit); up to `burst` events are
//! allowed while it is open, and then nothing until it expires.
//!
//! # The word (frozen)
//!
//! ```text
//!  63                                          10 9          0
//! +----------------------------------------------+------------+
//! | start: the window's start / 512 ns (54 bits) | count (10) |
//! +----------------------------------------------+------------+
//! ```
//!
//! A limit is an interval `I = interval_ns + interval_frac / 2^32` ns (1 /
//! limit, rounded *up* to 2^-32 ns) and a burst `B` (1..=1023). With
//! `S = start × 512` ns and `span(c) = c × interval_ns + ceil(c ×
//! interval_frac / 2^32)` (that is, `ceil(c × I)`), the window expires at
//! `E = S + span(count)` (u64 arithmetic, saturating at `u64::MAX`). The time axis is the
//! caller's `now` in nanoseconds, from 0 to [`MAX_NOW`] (= 2^63 − 512); a
//! later `now` is judged as [`MAX_NOW`] (time stands still there), and a
//! negative one is refused without a write. With `t = min(now, MAX_NOW)`:
//!
//! - [`allow`]: if `t − S ≥ span(count)` (reading `t < S` as no time
//!   passing: so `t ≥ E`, or `count = 0`), the window has expired and the
//!   word becomes `(ceil(t / 512) << 10) | 1`; otherwise, if `count < B`,
//!   it becomes `word + 1`; otherwise the call is refused and writes
//!   nothing. The write is one compare-and-swap of the whole word, retried
//!   against the value it found.
//! - [`next`]: 0 if `count = 0`, `t ≥ E` or `count < B`; else
//!   [`NEVER`] if `E > MAX_NOW`; else `E − now`.
//!
//! The zero word is a window that expired long ago: ready to use. The
//! encoding uses all 64 bits, so it carries no version: it is frozen from
//! weir 0.2 on, and a future encoding will be a new type, never a new
//! reading of these bits.
//!
//! # What it promises
//!
//! A window's start is rounded *up* to the 512 ns grid and its span up to a
//! nanosecond, so every rounding lengthens a window: no window is shorter
//! than `count × I`, and none is more than 512 ns longer. For a word used
//! with one limit:
//!
//! - a window admits exactly `B` events;
//! - a `now` earlier than the latest one an [`allow`] on the word used is
//!   judged as that latest `now` (the word cannot expire before it), so
//!   time going backwards never admits more;
//! - over any `T` ns of judged instants, at most `B + floor(T / I)` events
//!   are admitted, however the calls fall on the 512 ns grid;
//! - a steady stream of calls gets at least `B` events per `B × I + 512`
//!   ns: at least 99 % of the limit at the shortest window
//!   ([`MIN_WINDOW_NS`]) [`RateLimit::new`] accepts.
//!
//! Updates are a compare-and-swap loop over the word, so the count never
//! passes the burst however many threads (or processes) race; a refusal
//! writes nothing.

use crate::atomic::{AtomicU64, Ordering};

use crate::time::NEVER;

/// The word's time unit in nanoseconds.
pub const GRANULARITY_NS: i64 = 1 << TIME_SHIFT;
/// The largest burst the 10-bit count holds.
pub const MAX_BURST: i64 = COUNT_MASK as i64;
/// The shortest window (burst × interval) a limit may have: below it the
/// word's granularity would cost more than 1 % accuracy.
pub const MIN_WINDOW_NS: i64 = 100 * GRANULARITY_NS;
/// The latest `now` the word tells apart: 2^63 − 512 ns, the last instant
/// on its 512 ns grid. A later `now` counts as this one.
pub const MAX_NOW: i64 = i64::MAX - (GRANULARITY_NS - 1);

const TIME_SHIFT: u32 = 9;
const COUNT_BITS: u32 = 10;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
/// Fractional bits of the interval.
const FRAC_BITS: u32 = 32;

/// A rate and a burst, checked once so that a decision does integer work
/// only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// Whole nanoseconds of one interval (1 / limit, rounded up to 2^-32
    /// ns).
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

impl RateError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            RateError::NotFinite => 3,
            RateError::Negative => 4,
            RateError::Burst => 400,
            RateError::Zero => 401,
            RateError::TooSlow => 402,
            RateError::TooFast => 403,
            RateError::Invalid => 404,
        }
    }
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
        // The interval in units of 2^-32 ns, rounded up: a longer interval
        // never admits more.
        let fixed = up(1e9 / limit_per_s * (1u64 << FRAC_BITS) as f64);
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
        // The common limit, without computing its window: with an interval
        // under 2^53 ns the window ceil(burst × interval) is under 2^63 ns,
        // and at least burst × interval_ns. Any other is checked in full.
        if interval_ns < 1 << 53 && u64::from(burst) * interval_ns >= MIN_WINDOW_NS as u64 {
            return Ok(RateLimit {
                interval_ns,
                interval_frac,
                burst,
            });
        }
        Self::checked(interval_ns, interval_frac, burst).map_err(|_| RateError::Invalid)
    }

    /// The limit, if its window ceil(burst × interval) is within
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

    /// A limit from parts that [`RateLimit::parts`] answered, unchecked:
    /// for a copy of a checked limit kept as plain words (a bloom array's
    /// reconfigured limit, [`crate::bloom::Bloom::reconfigure`]).
    #[inline]
    pub(crate) const fn from_checked_parts(
        interval_ns: u64,
        interval_frac: u32,
        burst: u32,
    ) -> RateLimit {
        RateLimit {
            interval_ns,
            interval_frac,
            burst,
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
    /// events: `ceil(count × interval)`, saturating. Rounded up, so that a
    /// window is never shorter than its events' intervals.
    #[inline]
    fn span(&self, count: u64) -> u64 {
        // count < 2^10 and the fraction < 2^32: the product fits.
        let fraction = (count * u64::from(self.interval_frac)).div_ceil(1 << FRAC_BITS);
        count
            .saturating_mul(self.interval_ns)
            .saturating_add(fraction)
    }

    /// Whether every span of this limit is under 2^63 ns without
    /// saturating: an interval under 2^53 ns, as almost every limit has.
    #[inline]
    pub(crate) fn is_short(&self) -> bool {
        self.interval_ns >> 53 == 0
    }

    /// The interval [`charge_open`] reckons with: the whole nanoseconds of
    /// a [`RateLimit::is_short`] limit, whose count × interval never
    /// overflows, and 0 for any other (then it charges only words whose
    /// window starts after `now`, which are open whatever the interval).
    #[inline]
    pub(crate) fn open_interval(&self) -> u64 {
        if self.is_short() {
            self.interval_ns
        } else {
            0
        }
    }

    /// [`RateLimit::span`] for a [`RateLimit::is_short`] limit: count × interval
    /// is under 2^63 and the rounded fraction under 2^10, so nothing
    /// saturates and the sum is the same.
    #[inline]
    fn short_span(&self, count: u64) -> u64 {
        count * self.interval_ns
            + ((count * u64::from(self.interval_frac) + 0xffff_ffff) >> FRAC_BITS)
    }

    /// The word after one more event at `now` (0..=[`MAX_NOW`]), or `None`
    /// when the window is open and full.
    #[inline(always)]
    fn step<const SHORT: bool>(&self, word: u64, now: u64) -> Option<u64> {
        self.step_at::<SHORT>(word, At::on_axis(now))
    }

    /// [`RateLimit::step`] at a prepared instant.
    #[inline(always)]
    fn step_at<const SHORT: bool>(&self, word: u64, at: At) -> Option<u64> {
        let now = at.now;
        let count = word & COUNT_MASK;
        let start = (word >> COUNT_BITS) << TIME_SHIFT;
        // An earlier `now` than the start is no time passing: expired is a
        // count of 0 (never opened) or `now` at least the span after the
        // start. For a short limit, the start (< 2^63) plus the span
        // (< 2^63) cannot overflow, and with a count of 1 or more (a span
        // of 1 ns or more) that is `now` at or past their sum.
        let expired = if SHORT {
            count == 0 || now >= start + self.short_span(count)
        } else {
            now.saturating_sub(start) >= self.span(count)
        };
        if expired {
            // Expired (or never opened): this event opens a new window
            // ([`At`]).
            Some(at.opened)
        } else if count < u64::from(self.burst) {
            Some(word + 1)
        } else {
            None
        }
    }

    /// Whether `word` is at rest at `now`: its window expired (or never
    /// opened), so that the next event opens a new window exactly as on
    /// the zero word. False for a negative `now`. The keyed table
    /// ([`crate::keyed`]) forgets such words.
    #[inline]
    pub(crate) fn at_rest(&self, word: u64, now: i64) -> bool {
        let Some(now) = on_axis(now) else {
            return false;
        };
        let count = word & COUNT_MASK;
        let start = (word >> COUNT_BITS) << TIME_SHIFT;
        now.saturating_sub(start) >= self.span(count)
    }

    /// The word after `n` more events (1..=burst) at `now`
    /// (0..=[`MAX_NOW`]), all or nothing, or `None` when the window is open
    /// without room for them: what `n` calls of [`RateLimit::step`] at the
    /// one `now` would write, one after another, or `None` when the last
    /// of them would be refused (an expired window opens with all `n`; an
    /// open one takes them iff count + n ≤ burst). The saturating form
    /// ([`RateLimit::step_at`] with `SHORT` false): it serves
    /// [`take_n`], which is not on any single-word fast path.
    #[inline]
    fn step_n(&self, word: u64, now: u64, n: u64) -> Option<u64> {
        let count = word & COUNT_MASK;
        let start = (word >> COUNT_BITS) << TIME_SHIFT;
        if now.saturating_sub(start) >= self.span(count) {
            // The window [`At`] opens, holding `n` events in place of one.
            Some(At::on_axis(now).opened - 1 + n)
        } else if count + n <= u64::from(self.burst) {
            Some(word + n)
        } else {
            None
        }
    }

    /// Nanoseconds until `word` allows an event, seen at `now`
    /// (0..=[`MAX_NOW`]).
    #[inline]
    fn wait(&self, word: u64, now: u64) -> i64 {
        self.wait_n(word, now, 1)
    }

    /// Nanoseconds until `word` allows `n` events (1..=burst) at once,
    /// seen at `now` (0..=[`MAX_NOW`]).
    #[inline]
    fn wait_n(&self, word: u64, now: u64, n: u64) -> i64 {
        let count = word & COUNT_MASK;
        let start = (word >> COUNT_BITS) << TIME_SHIFT;
        // Measured to the expiry itself, so that an earlier `now` than the
        // start (no time passing for `step`) is told the whole wait.
        let expiry = start.saturating_add(self.span(count));
        if now >= expiry || count + n <= u64::from(self.burst) {
            0
        } else if expiry > MAX_NOW as u64 {
            // The clock stands still at MAX_NOW: this window never expires.
            NEVER
        } else {
            (expiry - now) as i64
        }
    }
}

/// `now` on the word's time axis: [`MAX_NOW`] for anything later, `None`
/// for a negative `now` (the word holds no time before zero).
#[inline]
fn on_axis(now: i64) -> Option<u64> {
    (now >= 0).then(|| now.min(MAX_NOW) as u64)
}

/// `x` (positive, perhaps infinite) rounded up to an integer: `f64::ceil`
/// without std (this module is core-only). The cast saturates, so anything
/// past `u128::MAX` is `u128::MAX`.
fn up(x: f64) -> u128 {
    let whole = x as u128;
    // Exact: below 2^53 `whole` is a float and `x - whole` its fraction;
    // above it `x` has no fraction and the difference is 0 (or, past
    // u128::MAX, positive, and the add saturates).
    if x - whole as f64 > 0.0 {
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

/// An instant on the word's axis (0..=[`MAX_NOW`]) and the word that opens
/// a window there, worked out once for a caller that asks several words at
/// one `now` (the bloom array's k words of a key).
#[derive(Clone, Copy, Debug)]
pub(crate) struct At {
    now: u64,
    opened: u64,
}

impl At {
    /// `now`, if it is not negative; one past [`MAX_NOW`] counts as it.
    #[inline(always)]
    pub(crate) fn new(now: i64) -> Option<At> {
        on_axis(now).map(At::on_axis)
    }

    /// A `now` already on the axis (at most [`MAX_NOW`]).
    #[inline(always)]
    fn on_axis(now: u64) -> At {
        // A new window's start is rounded up to the grid so that the
        // window can never read as expired before `now + span`. `now` is
        // at most MAX_NOW, so the rounded start fits the 54 bits.
        let start = now.div_ceil(GRANULARITY_NS as u64);
        At {
            now,
            opened: (start << COUNT_BITS) | 1,
        }
    }
}

/// [`allow`] at a prepared instant, for a limit that is
/// [`RateLimit::is_short`] (`SHORT`) or any. One compare-and-swap inline;
/// a lost race retries out of line.
#[inline(always)]
pub(crate) fn allow_at<W: Word, const SHORT: bool>(word: &W, limit: &RateLimit, at: At) -> bool {
    let seen = word.get();
    let Some(new) = limit.step_at::<SHORT>(seen, at) else {
        return false;
    };
    match word.swap_if(seen, new) {
        Ok(_) => true,
        Err(actual) => retry_at::<W, SHORT>(word, actual, *limit, at),
    }
}

/// One event charged to `word` if its window is open with room, at `now`
/// (not negative, perhaps past [`MAX_NOW`]), in a handful of
/// instructions; false, with nothing written, for any other word
/// (expired, full, fresh) or a compare-and-swap that lost, which the
/// caller then asks [`allow_at`]. `interval` is the limit's
/// [`RateLimit::open_interval`]. A word whose count is 1..burst and whose
/// start plus count × `interval` is still ahead of `now` is inside its
/// span (count × interval is at most the span, and a count of 0 is never
/// open), and so is it at min(`now`, [`MAX_NOW`]): [`RateLimit::step_at`]
/// would add one event, and this writes what [`allow_at`] would.
#[inline(always)]
pub(crate) fn charge_open<W: Word>(word: &W, limit: &RateLimit, interval: u64, now: u64) -> bool {
    let seen = word.get();
    let count = seen & COUNT_MASK;
    let start = (seen >> COUNT_BITS) << TIME_SHIFT;
    // start < 2^63 and count × interval < 2^63: the sum fits.
    count.wrapping_sub(1) < u64::from(limit.burst) - 1
        && now < start + count * interval
        && word.swap_if(seen, seen + 1).is_ok()
}

/// [`allow_at`] after a compare-and-swap that lost (or failed spuriously).
/// The limit comes by value, in registers: a caller that made it need not
/// store it to memory for this call it rarely makes.
#[cold]
#[inline(never)]
fn retry_at<W: Word, const SHORT: bool>(word: &W, seen: u64, limit: RateLimit, at: At) -> bool {
    swap_in::<W, SHORT>(word, seen, &limit, at.now)
}

/// Whether `word` allows one event at `now`, charging it if so. A negative
/// `now` is refused (the word holds no time before zero), and one past
/// [`MAX_NOW`] counts as [`MAX_NOW`]. A refusal writes nothing.
#[inline]
pub fn allow<W: Word>(word: &W, limit: &RateLimit, now: i64) -> bool {
    let Some(at) = At::new(now) else {
        return false;
    };
    if limit.is_short() {
        allow_at::<W, true>(word, limit, at)
    } else {
        allow_at::<W, false>(word, limit, at)
    }
}

/// The compare-and-swap loop of [`retry_at`], from a value of the word
/// already read (perhaps stale; the loop corrects it); `SHORT` when the
/// limit is [`RateLimit::is_short`], so that its spans need no saturating
/// arithmetic.
#[inline(always)]
fn swap_in<W: Word, const SHORT: bool>(word: &W, seen: u64, limit: &RateLimit, now: u64) -> bool {
    let mut current = seen;
    loop {
        let Some(new) = limit.step::<SHORT>(current, now) else {
            return false;
        };
        match word.swap_if(current, new) {
            Ok(_) => return true,
            Err(actual) => current = actual,
        }
    }
}

/// Nanoseconds from `now` until `word` would allow an event: 0 when it
/// would now, [`NEVER`] for a negative `now` or a window that outlasts
/// [`MAX_NOW`]. Reads the word only.
#[inline]
pub fn next<W: Word>(word: &W, limit: &RateLimit, now: i64) -> i64 {
    match on_axis(now) {
        Some(now) => limit.wait(word.get(), now),
        None => NEVER,
    }
}

/// `n`, if it is a count of events a window of `limit` can hold at all:
/// 1..=burst.
#[inline]
fn events(limit: &RateLimit, n: i64) -> Option<u64> {
    u64::try_from(n)
        .ok()
        .filter(|n| (1..=u64::from(limit.burst)).contains(n))
}

/// `n` events (1..=burst) charged to `word` at `now`, all or nothing, as
/// `n` calls of [`allow`] at the one `now` would charge them: the word's
/// value before the charge and after it, for [`crate::charge`] to give
/// back exactly. `None`, writing nothing, for a refusal, a negative `now`
/// and an `n` outside 1..=burst. One compare-and-swap loop, like
/// [`allow`]; every charge moves a word weir wrote (a count of 1 or more)
/// strictly up, the count within the window or a later window's start.
#[inline]
pub(crate) fn take_n<W: Word>(word: &W, limit: &RateLimit, now: i64, n: i64) -> Option<(u64, u64)> {
    let (now, n) = (on_axis(now)?, events(limit, n)?);
    let mut current = word.get();
    loop {
        let new = limit.step_n(current, now, n)?;
        match word.swap_if(current, new) {
            Ok(_) => return Some((current, new)),
            Err(actual) => current = actual,
        }
    }
}

/// Nanoseconds from `now` until `word` would take `n` events at once: 0
/// when [`take_n`] would now, [`NEVER`] for a negative `now`, an `n`
/// outside 1..=burst or a window that outlasts [`MAX_NOW`]. Reads the word
/// only.
#[inline]
pub(crate) fn next_n<W: Word>(word: &W, limit: &RateLimit, now: i64, n: i64) -> i64 {
    match (on_axis(now), events(limit, n)) {
        (Some(now), Some(n)) => limit.wait_n(word.get(), now, n),
        _ => NEVER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;

    const MS: i64 = 1_000_000;

    /// `n` events at once write what `n` calls at the one `now` write, one
    /// after another, and refuse (writing nothing) exactly when the last of
    /// those would be refused; `next_n` is 0 exactly when they pass. For
    /// every kind of word: fresh, foreign (a count of 0 with a start ahead),
    /// open with room, open and full, expired, and past MAX_NOW.
    #[test]
    fn n_events_at_once_are_n_calls_at_one_instant() {
        let mut state = 0x9e37_79b9_7f4a_7c15;
        let mut draw = |n: u64| crate::xorshift(&mut state) % n;
        let limits = [
            limit(1.0, 3),
            limit(1000.0, 1023),
            limit(30_000.0, 2),
            RateLimit::from_parts(1 << 53, 0, 5).unwrap(),
        ];
        for _ in 0..crate::rounds(50_000) {
            let limit = &limits[draw(limits.len() as u64) as usize];
            let burst = i64::from(limit.burst);
            let count = draw(COUNT_MASK + 1).min(draw(u64::from(limit.burst) + 2));
            let units = draw(1 << 30);
            let word = units << COUNT_BITS | count;
            let start = (units << TIME_SHIFT) as i64;
            let now = match draw(4) {
                0 => start - draw(1 << 20) as i64,
                1 => start + draw(4 * limit.span(u64::from(limit.burst)).min(1 << 40)) as i64,
                2 => i64::MAX - draw(1024) as i64,
                _ => -(draw(3) as i64),
            };
            let n = match draw(3) {
                0 => 1 + draw(burst as u64) as i64,
                1 => burst + draw(3) as i64,
                _ => draw(3) as i64 - 1,
            };
            let (once, calls) = (AtomicU64::new(word), AtomicU64::new(word));
            let taken = take_n(&once, limit, now, n);
            let wait = next_n(&AtomicU64::new(word), limit, now, n);
            if !(1..=burst).contains(&n) || now < 0 {
                assert_eq!(taken, None);
                assert_eq!(wait, NEVER);
                continue;
            }
            let whole = (0..n).all(|_| allow(&calls, limit, now));
            assert_eq!(taken.is_some(), whole, "word {word:#x} now {now} n {n}");
            assert_eq!(wait == 0, whole, "word {word:#x} now {now} n {n}");
            match taken {
                Some((before, after)) => {
                    assert_eq!((before, after), (word, calls.get()));
                    assert_eq!(once.get(), after);
                    assert!(count == 0 || after > before, "a charge moved the word down");
                }
                None => assert_eq!(once.get(), word, "a refusal wrote"),
            }
        }
    }

    /// The unsaturated span of a short limit is the saturating one, at the
    /// ends of its range and between.
    #[test]
    fn short_spans_are_the_spans() {
        let intervals = [0, 1, 51_200, 1 << 32, (1 << 53) - 1, 123_456_789_012_345];
        let fracs = [0, 1, u32::MAX / 3, u32::MAX - 1, u32::MAX];
        for &interval_ns in &intervals {
            for &interval_frac in &fracs {
                let limit = RateLimit {
                    interval_ns,
                    interval_frac,
                    burst: 1,
                };
                assert!(limit.is_short());
                for count in 0..=COUNT_MASK {
                    assert_eq!(limit.short_span(count), limit.span(count));
                }
            }
        }
        let long = RateLimit {
            interval_ns: 1 << 53,
            interval_frac: 0,
            burst: 1,
        };
        assert!(!long.is_short());
    }

    fn limit(per_s: f64, burst: i64) -> RateLimit {
        RateLimit::new(per_s, burst).unwrap()
    }

    /// The short step (no saturating arithmetic) is the saturating one for
    /// every word of a short limit, those weir never writes included (a
    /// count of 0 with a start after `now`, from memory another program
    /// shares, is expired).
    #[test]
    fn the_short_step_is_the_saturating_step() {
        let mut state = 0x6a09_e667_f3bc_c908;
        let mut draw = |n: u64| crate::xorshift(&mut state) % n;
        let limits = [limit(1000.0, 3), limit(1.0, 1023), limit(30_000.0, 2)];
        for _ in 0..crate::rounds(200_000) {
            let limit = &limits[draw(limits.len() as u64) as usize];
            let count = if draw(4) == 0 {
                0
            } else {
                draw(COUNT_MASK + 1)
            };
            let units = draw(1 << 40);
            let word = units << COUNT_BITS | count;
            let start = units << TIME_SHIFT;
            let now = match draw(3) {
                0 => start.saturating_sub(draw(1 << 20)),
                1 => start
                    .saturating_add(limit.span(count))
                    .saturating_sub(draw(1024)),
                _ => draw(MAX_NOW as u64 + 1),
            };
            let at = At::on_axis(now);
            assert_eq!(
                limit.step_at::<true>(word, at),
                limit.step_at::<false>(word, at),
                "word {word:#x}, now {now}, {limit:?}"
            );
        }
        let fresh_ahead = 1000 << COUNT_BITS;
        assert_eq!(
            limit(1000.0, 3).step_at::<true>(fresh_ahead, At::on_axis(0)),
            Some(1)
        );
    }

    /// [`charge_open`] writes what [`allow_at`] writes whenever it charges
    /// a word, and nothing when it does not, for any word, any limit
    /// (short and long) and any `now`: counts around 0 and the burst,
    /// `now` around the word's start and its expiry, and past MAX_NOW. It
    /// charges often enough that the comparison is not empty.
    #[cfg(feature = "alloc")]
    #[test]
    fn charging_an_open_word_is_the_full_step() {
        let mut state = 0x2545_f491_4f6c_dd1d;
        let mut draw = |n: u64| crate::xorshift(&mut state) % n;
        let limits = [
            limit(1.0, 1023),
            limit(10_000.0, 1),
            limit(3.0, 7),
            limit(1e9 / 30_000.0, 2),
            RateLimit::from_parts(1 << 53, 0, 5).unwrap(),
            RateLimit::from_parts(i64::MAX as u64 / 2, u32::MAX, 1).unwrap(),
        ];
        let (mut charged, mut tried) = (0, 0);
        for _ in 0..crate::rounds(200_000) {
            let limit = &limits[draw(limits.len() as u64) as usize];
            let burst = u64::from(limit.burst);
            let count = match draw(4) {
                0 => draw(3),
                1 => (burst + draw(3)).saturating_sub(1).min(COUNT_MASK),
                2 => 1 + draw(burst),
                _ => draw(COUNT_MASK + 1),
            };
            let units = match draw(3) {
                0 => draw(4),
                1 => (MAX_NOW as u64 >> TIME_SHIFT) - draw(4),
                _ => draw(1 << 40),
            };
            let word = units << COUNT_BITS | count;
            let start = units << TIME_SHIFT;
            let expiry = start.saturating_add(limit.span(count));
            let now = match draw(6) {
                0 => start.saturating_add(draw(1024)).saturating_sub(512),
                1 => expiry.saturating_add(draw(1024)).saturating_sub(512),
                2 => MAX_NOW as u64 + draw(1024),
                3 => draw(i64::MAX as u64),
                _ => start + draw(expiry.saturating_sub(start).max(1)),
            }
            .min(i64::MAX as u64);
            let (fast, full) = (AtomicU64::new(word), AtomicU64::new(word));
            let at = At::new(now as i64).unwrap();
            tried += 1;
            if charge_open(&fast, limit, limit.open_interval(), now) {
                charged += 1;
                let allowed = if limit.is_short() {
                    allow_at::<_, true>(&full, limit, at)
                } else {
                    allow_at::<_, false>(&full, limit, at)
                };
                assert!(allowed, "word {word:#x}, now {now}, {limit:?}");
                assert_eq!(
                    fast.get(),
                    full.get(),
                    "word {word:#x}, now {now}, {limit:?}"
                );
            } else {
                assert_eq!(fast.get(), word, "a word not charged was written");
            }
        }
        // Miri fails most weak compare-and-swaps on purpose, and each of
        // those is a word not charged here (and asked in full by the
        // caller).
        let share = if cfg!(miri) { 50 } else { 10 };
        assert!(charged * share > tried, "{charged} of {tried} charged");
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
    fn a_window_opened_off_the_grid_is_never_short_and_at_most_511_ns_long() {
        let limit = limit(1000.0, 1); // 1 ms windows
        for open in [
            5 * SECOND,
            5 * SECOND + 1,
            5 * SECOND + 700,
            5 * SECOND + 511,
        ] {
            let word = AtomicU64::new(0);
            assert!(allow(&word, &limit, open));
            // The start rounds up to the 512 ns grid: the window runs from
            // there for the full millisecond.
            let late = (GRANULARITY_NS - open % GRANULARITY_NS) % GRANULARITY_NS;
            assert!(!allow(&word, &limit, open + MS + late - 1), "open {open}");
            assert_eq!(next(&word, &limit, open), MS + late);
            assert!(allow(&word, &limit, open + MS + late), "open {open}");
        }
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
        // ceil(332,999,999,999.67) ns out; an interval cut to whole ns would
        // lose 333 ns, one cut to 512 ns would lose 85 µs.
        let limit = limit(3.0, 999);
        let word = AtomicU64::new(0);
        for _ in 0..999 {
            assert!(allow(&word, &limit, 0));
        }
        assert_eq!(next(&word, &limit, 0), 333 * SECOND);
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
                let step = (crate::xorshift(&mut seed) % 8) as i64 - 1;
                now =
                    (now + step * interval / 8 + (crate::xorshift(&mut seed) % 1000) as i64).max(0);
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

    /// The most events the header lets through in `span` ns:
    /// burst + floor(span / interval), with the interval exactly as kept.
    fn bound(limit: &RateLimit, span: u64) -> u64 {
        let (ns, frac, burst) = limit.parts();
        let fixed = (u128::from(ns) << FRAC_BITS) + u128::from(frac);
        u64::from(burst) + ((u128::from(span) << FRAC_BITS) / fixed) as u64
    }

    #[test]
    fn a_window_opened_at_511_ns_holds_exactly_its_burst() {
        // An interval under 512 ns. A window opened at 511 used
        // to read as expired on the next call, and every call opened a new
        // window of one.
        let limit = limit(19e6, 1023);
        for now in [0, 1, 511, 512, 1023, 5 * SECOND + 511] {
            let word = AtomicU64::new(0);
            let admitted = (0..100_000).filter(|_| allow(&word, &limit, now)).count();
            assert_eq!(admitted, 1023, "at {now}");
        }
    }

    #[test]
    fn calls_511_ns_past_the_grid_stay_within_the_bound() {
        // An interval of 512..1023 ns, calls at 511 + 512 i for
        // one second. It used to admit 1,953,125, twice the limit.
        let limit = limit(977_517.0, 100);
        let word = AtomicU64::new(0);
        let mut admitted = 0;
        let mut now = 511;
        while now < 511 + SECOND {
            admitted += u64::from(allow(&word, &limit, now));
            now += 512;
        }
        let most = bound(&limit, SECOND as u64);
        assert!(admitted <= most, "{admitted} admitted, bound {most}");
        // And the rounding costs less than 1 % the other way.
        assert!(admitted as f64 >= 0.99 * 977_517.0, "{admitted} admitted");
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
    fn up_rounds_as_f64_ceil_does() {
        let xs = [
            0.0,
            0.5,
            1.0,
            1.0 + f64::EPSILON,
            2.5,
            4_503_599_627_370_495.5,
            9_007_199_254_740_994.0,
            1e9 * 4_294_967_296.0 / 3.0,
            1e30,
        ];
        for x in xs {
            assert_eq!(up(x), x.ceil() as u128, "{x}");
        }
        assert_eq!(up(f64::MAX), u128::MAX);
        assert_eq!(up(f64::INFINITY), u128::MAX);
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
    fn time_stands_still_past_max_now() {
        let limit = limit(1.0, 2);
        let word = AtomicU64::new(0);
        // Opened at the last instant of the grid: the start fits, and
        // later instants are that one.
        assert!(allow(&word, &limit, MAX_NOW));
        assert!(allow(&word, &limit, i64::MAX));
        assert!(!allow(&word, &limit, i64::MAX));
        assert_eq!(next(&word, &limit, MAX_NOW), NEVER);
        assert_eq!(next(&word, &limit, i64::MAX), NEVER);
        // A window that ends past MAX_NOW never comes, even seen earlier.
        let word = AtomicU64::new(0);
        assert!(allow(&word, &limit, MAX_NOW - SECOND));
        assert!(allow(&word, &limit, MAX_NOW - SECOND));
        assert_eq!(next(&word, &limit, MAX_NOW - SECOND), NEVER);
        assert!(!allow(&word, &limit, i64::MAX));
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
