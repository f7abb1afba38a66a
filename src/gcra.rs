//! C face of [`weir_core::gcra`]: the GCRA word.

use weir_core::atomic::AtomicU64;

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::guard::{guard, guard_status, read_in, usable, write_out};
use crate::status::weir_status::{self, *};
use weir_core::gcra::{self, GcraError, GcraLimit};
use weir_core::time::NEVER;

/// A token bucket that is one 64-bit word (GCRA): a full word admits
/// `burst` at once, then one more every 1 / rate s; limit_req's shape,
/// where `weir_rate` is a fixed window. Never delays: it admits or refuses.
///
/// The encoding (frozen from weir 0.2 on). The word is the theoretical
/// arrival time TAT as an unsigned count of ticks of 2^-shift ns on the
/// caller's clock, tick 0 at now = 0 (absolute, so every process that maps
/// the word reads it alike). The limit gives shift, per_token (ticks a
/// token is worth) and tolerance (ticks a full word holds); a stored value
/// above INT64_MAX (never written by weir) reads as INT64_MAX, a word that
/// never admits. Time is `now` in ns from 0 to max_now = 2^62 >> shift
/// (2^62 ns, 146 years, at shift 0, which every rate up to 7.8 million a
/// second gets, so a CLOCK_REALTIME reading works there; at least 2^58 ns,
/// 9.1 years, at the finest tick, shift 4: use CLOCK_MONOTONIC); a later
/// `now` counts as max_now (time stands still) and a negative one is
/// refused without a write. With t = now × 2^shift and a take of n tokens
/// costing c = n × per_token ticks:
/// - allow_n: passes iff max(TAT, t) + c ≤ t + tolerance, and then the
///   word becomes max(TAT, t) + c: one compare-and-swap of the whole word,
///   retried on the value found. A refusal writes nothing.
/// - next: 0 if a take of one token passes at `now`; else
///   ceil((TAT + per_token − tolerance) / 2^shift) − now ns, or INT64_MAX if
///   that instant is past max_now.
///
/// The zero word is a full bucket at every now ≥ 0: ready to use. The
/// encoding uses all 64 bits and carries no version; a future encoding
/// will be a new type.
///
/// What it promises. per_token = ceil(2^shift × 10^9 / rate) and
/// tolerance = burst × per_token, both exact, so a full word admits exactly
/// `burst` at one instant, and over any T ns of judged instants at most
/// burst + floor(T × rate / 10^9) tokens pass, whatever the order of the
/// instants (a `now` earlier than an earlier call's only finds less room:
/// time going backwards never admits more). Rounding runs against
/// admitting: a steady stream gets 2^shift × 10^9 / per_token tokens a
/// second, under `rate` by less than 1/128 of it (less than 1 / per_token
/// of it above 1.25e8 a second).
///
/// Changing the limit. The word holds no limit: each call brings one, and
/// the caller may bring another from any call on. The word is a TAT, an
/// instant, not a count of tokens: under a new limit of the same tick
/// (equal `shift`) it keeps its meaning as time already spent, so the
/// debt TAT − t carries over and the tokens left become
/// floor((tolerance' − debt) / per_token'), the old tokens used rescaled
/// by rate' / rate (a word that was full stays full; one emptied under a
/// slow rate refills at the new rate from where its debt stands). If the
/// debt exceeds the new tolerance (a smaller burst), nothing passes until
/// it has run down to tolerance' − per_token'. The bound across a change at
/// instant c: the tokens judged in [a, c) keep the old bound,
/// burst + floor((c − a) × rate / 10^9), and those judged in [c, b] the new
/// one, so over [a, b] at most their sum pass; a stretch wholly after c
/// obeys the new bound alone. Nothing is rewritten and no call is needed.
/// A limit of another tick (another `shift`) reads the same bits as ticks
/// of another size, 2^(shift' − shift) times the instant they meant: a
/// word charged at shift 4 and read at shift 0 stands 16 times further
/// out, refusing for years; the other way round it reads as long past, a
/// full word. So never pass one word limits of two ticks: every rate up to
/// 7 812 500 a second (10^9 / 128) has shift 0, and a caller changing
/// across that line compares the limits' `shift` and starts its words
/// afresh (zero) or keeps the old limit.
///
/// Zero-initialise it (`weir_gcra g = {0};`) and never write it yourself.
/// It holds no pointer and no process-local state: it may live in a struct,
/// an array or memory shared between processes (mmap(MAP_SHARED)) that
/// read one clock, lock-free where the target has 64-bit atomics
/// (`weir_words_shareable`). It must be 8-byte aligned; calls on a
/// misaligned word refuse. Use one limit per word. Memory: 8 bytes.
#[repr(C, align(8))]
pub struct weir_gcra {
    /// The TAT in ticks. Zero is a full bucket; weir alone writes it.
    pub state: u64,
}

/// A GCRA limit checked once by `weir_gcra_limit_new`, so that decisions do
/// integer work only. A plain value (24 bytes, no heap): copy it, keep it
/// anywhere, share it read-only between processes. Read its fields freely
/// but fill it only with `weir_gcra_limit_new`; every call that takes one
/// checks its ranges again (shift 0..4, per_token ≥ 1, tolerance from
/// per_token to 2^61 − 1, reserved 0) and refuses one outside them.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct weir_gcra_limit {
    /// Ticks one token is worth: ceil(2^shift × 10^9 / rate).
    pub per_token: u64,
    /// Ticks a full word holds: burst × per_token.
    pub tolerance: i64,
    /// A tick is 2^-shift ns.
    pub shift: u32,
    /// Zero.
    pub reserved: u32,
}

assert_eq_size!(weir_gcra, u64);
const_assert_eq!(core::mem::align_of::<weir_gcra>(), 8);
const_assert_eq!(core::mem::align_of::<weir_gcra_limit>(), 8);
assert_eq_size!(weir_gcra_limit, [u64; 3]);
const_assert_eq!(core::mem::offset_of!(weir_gcra_limit, tolerance), 8);
const_assert_eq!(core::mem::offset_of!(weir_gcra_limit, shift), 16);

/// The largest burst of a GCRA limit (2^53: every integer up to it is exact
/// as a double).
pub const WEIR_GCRA_MAX_BURST: i64 = 9007199254740992;
/// The fastest rate of a GCRA limit, a second: a token a tick at the
/// finest tick (2^-4 ns).
pub const WEIR_GCRA_MAX_RATE: f64 = 16e9;

const_assert_eq!(WEIR_GCRA_MAX_BURST, gcra::MAX_BURST);

impl From<GcraLimit> for weir_gcra_limit {
    fn from(limit: GcraLimit) -> Self {
        let (per_token, tolerance, shift) = limit.parts();
        weir_gcra_limit {
            per_token,
            tolerance,
            shift,
            reserved: 0,
        }
    }
}

fn gcra_status(error: GcraError) -> weir_status {
    weir_status::of(error.code())
}

/// The caller's limit, checked.
#[inline]
pub(crate) fn gcra_limit_in(limit: *const weir_gcra_limit) -> Result<GcraLimit, weir_status> {
    let limit = read_in(limit)?;
    if limit.reserved != 0 {
        return Err(WEIR_ERR_GCRA_LIMIT_INVALID);
    }
    GcraLimit::from_parts(limit.per_token, limit.tolerance, limit.shift).map_err(gcra_status)
}

/// `gcra` as the atomic word it is: `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED` when it cannot be one.
#[inline]
pub(crate) fn word_in<'a>(gcra: *const weir_gcra) -> Result<&'a AtomicU64, weir_status> {
    usable(gcra.cast::<AtomicU64>())?;
    // SAFETY: `gcra` is non-NULL and aligned for an AtomicU64 (checked
    // above), and by the header's contract points to a weir_gcra that stays
    // valid for this call and is only changed by weir's atomic operations,
    // from any thread or process. AtomicU64 has u64's size and validity.
    Ok(unsafe { &*gcra.cast::<AtomicU64>() })
}

/// [`word_in`], or `None`.
#[inline]
fn word_at<'a>(gcra: *const weir_gcra) -> Option<&'a AtomicU64> {
    word_in(gcra).ok()
}

/// Checks a rate and a burst once and writes the limit to `*out`. `burst`
/// must be 1..WEIR_GCRA_MAX_BURST (`WEIR_ERR_GCRA_BURST`); `rate_per_s`
/// finite (`WEIR_ERR_NOT_FINITE`), not negative (`WEIR_ERR_NEGATIVE`), not
/// zero (`WEIR_ERR_GCRA_ZERO`), at most WEIR_GCRA_MAX_RATE
/// (`WEIR_ERR_GCRA_TOO_FAST`); and burst / rate_per_s must fit the word's
/// clock, about 73 years at 1 ns a tick (`WEIR_ERR_GCRA_TOO_SLOW`). Checked
/// in that order. `WEIR_ERR_NULL` if `out` is NULL; `*out` is written only
/// on success. The tick is the coarsest in which a token is worth at least
/// 128 ticks (see `weir_gcra`).
#[no_mangle]
pub extern "C" fn weir_gcra_limit_new(
    rate_per_s: f64,
    burst: i64,
    out: *mut weir_gcra_limit,
) -> weir_status {
    guard_status(|| {
        let limit = GcraLimit::new(rate_per_s, burst).map_err(gcra_status)?;
        write_out(out, limit.into())
    })
}

/// Whether one token may be taken at `now`, charging `*gcra` if so:
/// lock-free and exact under contention from any number of threads or
/// processes. A refusal writes nothing. Refuses (false) a negative `now`, a
/// NULL or misaligned `gcra`, and a NULL or invalid `limit`.
#[no_mangle]
pub extern "C" fn weir_gcra_allow(
    gcra: *mut weir_gcra,
    limit: *const weir_gcra_limit,
    now: i64,
) -> bool {
    weir_gcra_allow_n(gcra, limit, now, 1)
}

/// Whether `n` tokens may be taken at `now`, all or nothing, charging
/// `*gcra` if so. Refuses (false, writing nothing) an `n` outside 1..burst
/// and whatever `weir_gcra_allow` refuses.
#[no_mangle]
pub extern "C" fn weir_gcra_allow_n(
    gcra: *mut weir_gcra,
    limit: *const weir_gcra_limit,
    now: i64,
    n: i64,
) -> bool {
    guard(false, || match (word_at(gcra), gcra_limit_in(limit)) {
        (Some(word), Ok(limit)) => gcra::allow_n(word, &limit, now, n),
        _ => false,
    })
}

/// Nanoseconds from `now` until `*gcra` would admit one token: 0 if it
/// would now (what a Retry-After header needs). Reads the word only, so it
/// changes no later answer. INT64_MAX for an instant past max_now, a
/// negative `now`, a NULL or misaligned `gcra`, or a NULL or invalid
/// `limit`.
#[no_mangle]
pub extern "C" fn weir_gcra_next(
    gcra: *const weir_gcra,
    limit: *const weir_gcra_limit,
    now: i64,
) -> i64 {
    guard(NEVER, || match (word_at(gcra), gcra_limit_in(limit)) {
        (Some(word), Ok(limit)) => gcra::next(word, &limit, now),
        _ => NEVER,
    })
}

/// Whole tokens `*gcra` would admit at `now`, from 0 to burst (what a
/// RateLimit header's remaining needs). Reads the word only. 0 for a
/// negative `now`, a NULL or misaligned `gcra`, or a NULL or invalid
/// `limit`.
#[no_mangle]
pub extern "C" fn weir_gcra_room(
    gcra: *const weir_gcra,
    limit: *const weir_gcra_limit,
    now: i64,
) -> i64 {
    guard(0, || match (word_at(gcra), gcra_limit_in(limit)) {
        (Some(word), Ok(limit)) => gcra::room(word, &limit, now),
        _ => 0,
    })
}
