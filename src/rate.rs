//! C face of [`weir_core::rate`].

use weir_core::atomic::AtomicU64;

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::guard::{guard, guard_status, read_in, usable, write_out};
use crate::status::weir_status;
use weir_core::rate::{self, RateError, RateLimit};
use weir_core::time::NEVER;

/// A rate limiter that is one 64-bit word: up to `burst` events per window,
/// where the first event after a window expired opens a new one and each
/// allowed event pushes the expiry back by one interval (1 / limit). A
/// fixed window, not a token bucket: once `burst` events are in, nothing
/// passes until the window expires.
///
/// The encoding (frozen from weir 0.2 on). Bits 63..10 hold `start`, the
/// window's start in units of 512 ns (54 bits), bits 9..0 hold `count`, the
/// events in the window (0..1023). With a limit's interval
/// I = interval_ns + interval_frac / 2^32 ns and burst B, S = start × 512
/// and span(c) = c × interval_ns + ceil(c × interval_frac / 2^32) (that is,
/// ceil(c × I)), the window expires at E = S + span(count), in uint64_t
/// arithmetic saturating at UINT64_MAX (only a word charged under another
/// limit gets near it). Time is `now` in ns from 0 to WEIR_RATE_MAX_NOW
/// (2^63 − 512); a later `now` counts as WEIR_RATE_MAX_NOW (time stands
/// still there) and a negative one is refused without a write. With
/// t = min(now, WEIR_RATE_MAX_NOW):
/// - allow: if count = 0 or t ≥ E the window has expired, and the word
///   becomes (ceil(t / 512) << 10) | 1; else if count < B it becomes
///   word + 1; else the call is refused and writes nothing. The write is
///   one compare-and-swap of the whole word, retried on the value found.
/// - next: 0 if count = 0, t ≥ E or count < B; else INT64_MAX if
///   E > WEIR_RATE_MAX_NOW; else E − now.
///
/// The zero word is a window that expired long ago: ready to use. The
/// encoding uses all 64 bits, so it carries no version: every later weir
/// reads and writes these bits exactly so, and a future encoding will be a
/// new type, never a new reading of this one.
///
/// What it promises. A window's start is rounded up to the 512 ns grid and
/// its span up to a nanosecond (the interval itself is 1 / limit rounded up
/// to 2^-32 ns), so rounding only ever lengthens a window: none is shorter
/// than count × I, none is 512 ns longer. For a word used with one limit:
/// a window admits exactly `burst` events; a `now` earlier than the latest
/// one a `weir_rate_allow` on the word used is judged as that latest `now`
/// (time going backwards never admits more); over any T ns of judged
/// instants at most burst + floor(T / I) events are admitted, at every
/// phase of the 512 ns grid; and a steady stream of calls gets at least
/// `burst` events per burst × I + 512 ns, which is at least 99 % of the
/// limit at the shortest window `weir_rate_limit_new` accepts
/// (WEIR_RATE_MIN_WINDOW_NS), 99.5 % at twice that.
///
/// Changing the limit. The word holds no limit: each call brings one, and
/// the caller may bring another from any call on (a reload, a new tier).
/// What the word decided under the old limit (I, B) is then read under the
/// new one (I', B'): the window keeps its start S and its count, so the
/// events admitted under the old limit count against the new burst, and
/// the window now expires at S + span'(count), count × I' after its start
/// rather than count × I. If count ≥ B' nothing passes until then (a
/// smaller burst never lets an old window's excess through); otherwise
/// B' − count more may join the window. Nothing is rewritten when the limit
/// changes and no call is needed: the next call simply judges by its limit.
/// The bound across a change at instant c: the events judged in [a, c)
/// keep the old bound, B + floor((c − a) / I), and those judged in [c, b]
/// the new one, B' + floor((b − c) / I'), so over [a, b] at most their sum
/// pass; a stretch wholly after c obeys the new bound alone. Only a caller
/// that goes on passing both limits to one word at once (two processes in
/// the middle of a reload) gets, for that time, each call judged by the
/// limit it brought.
///
/// Zero-initialise it (`weir_rate r = {0};`) and it is ready; never write
/// it yourself. It holds no pointer and no process-local state, so it may
/// live in a struct, an array, or memory shared between processes
/// (mmap(MAP_SHARED)): lock-free, safe from many threads and processes at
/// once (each update is a compare-and-swap loop, exact under contention).
/// That holds where the target has 64-bit atomics; where it has none
/// (Cortex-M, riscv32, 32-bit MIPS) an update takes a lock inside the one
/// program, and `weir_words_shareable` says so.
/// It must be 8-byte aligned; calls on a misaligned word refuse. Memory:
/// 8 bytes, the caller's; no heap.
#[repr(C, align(8))]
pub struct weir_rate {
    /// The word. Zero is a fresh limiter; weir alone writes it.
    pub state: u64,
}

/// The rate word's policy (for `weir_rate_allow`, and for every word of a
/// `weir_bloom`): a rate limit checked once by `weir_rate_limit_new`, so that
/// decisions do integer work only: the interval (1 / limit, rounded up to
/// 2^-32 ns) as a binary fixed-point number, and the burst. A plain value (16 bytes, no heap): copy it, keep it
/// anywhere, share it read-only between threads and processes. Read its
/// fields freely but fill it only with `weir_rate_limit_new`. Every call
/// that takes one checks its ranges again (burst 1..1023, a window
/// burst × interval from WEIR_RATE_MIN_WINDOW_NS to 2^63 ns) and refuses a
/// value outside them: `WEIR_ERR_RATE_LIMIT_INVALID` from a constructor,
/// false or INT64_MAX from a decision.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct weir_rate_limit {
    /// Whole nanoseconds of one interval (1 / limit, rounded up to 2^-32
    /// ns).
    pub interval_ns: u64,
    /// The interval's fraction of a nanosecond, in units of 2^-32 ns.
    pub interval_frac: u32,
    /// Events per window, 1..1023.
    pub burst: u32,
}

assert_eq_size!(weir_rate, u64);
const_assert_eq!(core::mem::align_of::<weir_rate>(), 8);
assert_eq_size!(weir_rate_limit, [u64; 2]);
const_assert_eq!(core::mem::align_of::<weir_rate_limit>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_rate_limit, interval_ns), 0);
const_assert_eq!(core::mem::offset_of!(weir_rate_limit, interval_frac), 8);
const_assert_eq!(core::mem::offset_of!(weir_rate_limit, burst), 12);

/// The rate word's time unit, in nanoseconds.
pub const WEIR_RATE_GRANULARITY_NS: i64 = 512;
/// The largest burst a rate word holds.
pub const WEIR_RATE_MAX_BURST: i64 = 1023;
/// The shortest window (burst × interval) a rate limit may have, in ns.
pub const WEIR_RATE_MIN_WINDOW_NS: i64 = 51200;
/// The latest `now` a rate word tells apart (2^63 − 512 ns, the last
/// instant of its 512 ns grid); a later `now` counts as this one.
pub const WEIR_RATE_MAX_NOW: i64 = 9223372036854775296;

const_assert_eq!(WEIR_RATE_GRANULARITY_NS, rate::GRANULARITY_NS);
const_assert_eq!(WEIR_RATE_MAX_BURST, rate::MAX_BURST);
const_assert_eq!(WEIR_RATE_MIN_WINDOW_NS, rate::MIN_WINDOW_NS);
const_assert_eq!(WEIR_RATE_MAX_NOW, rate::MAX_NOW);

impl From<RateLimit> for weir_rate_limit {
    fn from(limit: RateLimit) -> Self {
        let (interval_ns, interval_frac, burst) = limit.parts();
        weir_rate_limit {
            interval_ns,
            interval_frac,
            burst,
        }
    }
}

/// The status for a rate limit's error.
pub(crate) fn rate_status(error: RateError) -> weir_status {
    weir_status::of(error.code())
}

/// The caller's limit, checked: `WEIR_ERR_NULL` or
/// `WEIR_ERR_RATE_LIMIT_INVALID` when it is not one weir made.
#[inline]
pub(crate) fn limit_in(limit: *const weir_rate_limit) -> Result<RateLimit, weir_status> {
    let limit = read_in(limit)?;
    RateLimit::from_parts(limit.interval_ns, limit.interval_frac, limit.burst).map_err(rate_status)
}

/// `rate` as the atomic word it is: `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED` when it cannot be one.
#[inline]
pub(crate) fn word_in<'a>(rate: *const weir_rate) -> Result<&'a AtomicU64, weir_status> {
    usable(rate.cast::<AtomicU64>())?;
    // SAFETY: `rate` is non-NULL and aligned for an AtomicU64 (checked
    // above), and by the header's contract points to a weir_rate that stays
    // valid for this call and is only ever changed by weir's atomic
    // operations, from whatever thread or process. AtomicU64 has the size
    // and bit validity of u64.
    Ok(unsafe { &*rate.cast::<AtomicU64>() })
}

/// [`word_in`], or `None`.
#[inline]
fn word_at<'a>(rate: *const weir_rate) -> Option<&'a AtomicU64> {
    word_in(rate).ok()
}

/// Checks a rate and a burst once and writes the limit to `*out`.
/// `burst` must be 1..1023 (`WEIR_ERR_RATE_BURST`); `limit_per_s` must be
/// finite (`WEIR_ERR_NOT_FINITE`), not negative (`WEIR_ERR_NEGATIVE`) and
/// not zero (`WEIR_ERR_RATE_ZERO`); the window burst / limit_per_s must be
/// at least WEIR_RATE_MIN_WINDOW_NS (`WEIR_ERR_RATE_TOO_FAST`: the word's
/// 512 ns would cost more than 1 % accuracy; e.g. burst 1 allows up to
/// 19,531.25/s, burst 100 up to 1.95 million/s) and at most 2^63 ns
/// (`WEIR_ERR_RATE_TOO_SLOW`). Checked in that order. `WEIR_ERR_NULL` if
/// `out` is NULL; `*out` is written only on success.
///
/// The interval is 1 / limit_per_s rounded up to 2^-32 ns. For every limit
/// this accepts, a word admits at most burst + floor(T / interval) events
/// in any T ns and exactly `burst` per window, at every phase of the
/// 512 ns grid, and at least 99 % of the limit under a steady stream (see
/// `weir_rate`).
#[no_mangle]
pub extern "C" fn weir_rate_limit_new(
    limit_per_s: f64,
    burst: i64,
    out: *mut weir_rate_limit,
) -> weir_status {
    guard_status(|| {
        let limit = RateLimit::new(limit_per_s, burst).map_err(rate_status)?;
        write_out(out, limit.into())
    })
}

/// Whether one event may happen at `now`, charging `*rate` if so: lock-free
/// and exact under contention, from any number of threads or processes. A
/// refusal writes nothing. A `now` earlier than the latest one an allow on
/// this word used is judged as that latest `now` (time going backwards is
/// no time passing; the window cannot expire before it), and a `now` past
/// WEIR_RATE_MAX_NOW counts as WEIR_RATE_MAX_NOW. Refuses (false) a
/// negative `now`, a NULL or misaligned `rate`, and a NULL or invalid
/// `limit`.
/// Use one limit per word: a word read under another limit is judged by
/// that limit's interval.
#[no_mangle]
pub extern "C" fn weir_rate_allow(
    rate: *mut weir_rate,
    limit: *const weir_rate_limit,
    now: i64,
) -> bool {
    guard(false, || match (word_at(rate), limit_in(limit)) {
        (Some(word), Ok(limit)) => rate::allow(word, &limit, now),
        _ => false,
    })
}

/// Nanoseconds from `now` until `*rate` would allow an event: 0 if it would
/// now, else until its window expires (what a Retry-After header needs).
/// Reads the word only, so it changes no later answer. INT64_MAX for a
/// window that ends past WEIR_RATE_MAX_NOW, a negative `now`, a NULL or
/// misaligned `rate`, or a NULL or invalid `limit`.
#[no_mangle]
pub extern "C" fn weir_rate_next(
    rate: *const weir_rate,
    limit: *const weir_rate_limit,
    now: i64,
) -> i64 {
    guard(NEVER, || match (word_at(rate), limit_in(limit)) {
        (Some(word), Ok(limit)) => rate::next(word, &limit, now),
        _ => NEVER,
    })
}
