//! C face of [`weir_core::backoff`].

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::guard::{guard, guard_status, policy_or, slice_in, slice_out};
use crate::status::weir_status::{self, *};
use weir_core::backoff::{Backoff, BackoffError, BackoffJitter};

/// `weir_backoff.jitter`: the delay is the ceiling itself. Reproducible, but
/// clients that failed together retry together.
pub const WEIR_BACKOFF_JITTER_RIGID: i32 = 0;
/// `weir_backoff.jitter`: uniform over [0, ceiling]; spreads clients furthest.
pub const WEIR_BACKOFF_JITTER_FULL: i32 = 1;
/// `weir_backoff.jitter`: uniform over [ceiling − ceiling / 2, ceiling]; half
/// the ceiling stays as a floor under the wait.
pub const WEIR_BACKOFF_JITTER_EQUAL: i32 = 2;
/// `weir_backoff.jitter`: uniform over
/// [base, min(3 × max(previous, base), cap)]; grows from where the previous
/// delay landed. A previous below the base (0 before the first retry,
/// negative too) counts as the base, so the first retry draws from
/// [base, 3 × base]. A `cap_ns` below `base_ns` makes every delay `cap_ns`
/// (the range is [cap, cap]): never inverted, never past the cap.
pub const WEIR_BACKOFF_JITTER_DECORRELATED: i32 = 3;
/// `weir_backoff.jitter`: uniform over
/// [ceiling × (1 − spread), ceiling × (1 + spread)], so the wait may pass the
/// cap by the spread fraction.
pub const WEIR_BACKOFF_JITTER_SPREAD: i32 = 4;

const MS: i64 = 1_000_000;

/// A retry policy: when to try again and how long to wait first. The
/// ceiling before the `retry`-th retry (the first retry is 1) is
/// `min(base_ns × factor^(retry − 1), cap_ns)`; `jitter` (a `WEIR_BACKOFF_JITTER_*`
/// value) says how a delay is drawn from it, and `spread` is the fraction
/// `WEIR_BACKOFF_JITTER_SPREAD` uses. `attempts` counts every call, the first one
/// included. Valid when `base_ns` and `cap_ns` are at least 0, `factor` is
/// finite and at least 1, `attempts` is at least 1, `spread` is in [0, 1]
/// (whatever the jitter) and `jitter` names a known kind; `weir_backoff_check`
/// says which field is wrong, with a status of its own per field. By-value plain data with no heap: the caller
/// guards it (every call only reads it). 40 bytes, 8-byte aligned on 64-bit
/// targets; a pointer to a policy that is not aligned so is refused
/// (`WEIR_ERR_MISALIGNED` from `weir_backoff_check`, the neutral answer from
/// the rest), never read and never replaced by the preset.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct weir_backoff {
    /// The ceiling before the first retry, in nanoseconds.
    pub base_ns: i64,
    /// What each ceiling is multiplied by for the next retry.
    pub factor: f64,
    /// The most a ceiling grows to, in nanoseconds.
    pub cap_ns: i64,
    /// Calls allowed in all, the first one included.
    pub attempts: i32,
    /// How a delay is drawn: one of the `WEIR_BACKOFF_JITTER_*` values.
    pub jitter: i32,
    /// The fraction `WEIR_BACKOFF_JITTER_SPREAD` spreads each ceiling by, either way.
    pub spread: f64,
}

assert_eq_size!(weir_backoff, [u8; 40]);
const_assert_eq!(core::mem::align_of::<weir_backoff>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_backoff, base_ns), 0);
const_assert_eq!(core::mem::offset_of!(weir_backoff, factor), 8);
const_assert_eq!(core::mem::offset_of!(weir_backoff, cap_ns), 16);
const_assert_eq!(core::mem::offset_of!(weir_backoff, attempts), 24);
const_assert_eq!(core::mem::offset_of!(weir_backoff, jitter), 28);
const_assert_eq!(core::mem::offset_of!(weir_backoff, spread), 32);

/// The preset, and the policy a NULL pointer stands for.
const PRESET: weir_backoff = weir_backoff {
    base_ns: 100 * MS,
    factor: 2.0,
    cap_ns: 1000 * MS,
    attempts: 3,
    jitter: WEIR_BACKOFF_JITTER_SPREAD,
    spread: 0.2,
};

/// The preset policy: 3 attempts, 100 ms doubling to a 1 s cap, each delay
/// spread by a fifth either way (`WEIR_BACKOFF_JITTER_SPREAD`, spread 0.2: ×U(0.8,
/// 1.2), the rule gRPC's retry design uses). A NULL policy means this one.
#[no_mangle]
pub extern "C" fn weir_backoff_preset() -> weir_backoff {
    PRESET
}

/// The preset's schedule with full jitter (`WEIR_BACKOFF_JITTER_FULL`: uniform over
/// [0, ceiling(retry)]), the strategy AWS's measurements favour. `spread`
/// keeps the preset's 0.2, which only `WEIR_BACKOFF_JITTER_SPREAD` reads.
#[no_mangle]
pub extern "C" fn weir_backoff_full_jitter() -> weir_backoff {
    weir_backoff {
        jitter: WEIR_BACKOFF_JITTER_FULL,
        ..PRESET
    }
}

/// The jitter a code from C names, if it names one.
fn jitter(code: i32) -> Option<BackoffJitter> {
    match code {
        WEIR_BACKOFF_JITTER_RIGID => Some(BackoffJitter::Rigid),
        WEIR_BACKOFF_JITTER_FULL => Some(BackoffJitter::Full),
        WEIR_BACKOFF_JITTER_EQUAL => Some(BackoffJitter::Equal),
        WEIR_BACKOFF_JITTER_DECORRELATED => Some(BackoffJitter::Decorrelated),
        WEIR_BACKOFF_JITTER_SPREAD => Some(BackoffJitter::Spread),
        _ => None,
    }
}

impl From<BackoffError> for weir_status {
    fn from(error: BackoffError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// The checked policy behind `policy` (NULL: the preset).
fn checked(policy: *const weir_backoff) -> Result<Backoff, weir_status> {
    let p = policy_or(policy, PRESET)?;
    let jitter = jitter(p.jitter).ok_or(WEIR_ERR_UNKNOWN_KIND)?;
    Ok(Backoff::new(
        p.base_ns, p.factor, p.cap_ns, p.attempts, jitter, p.spread,
    )?)
}

/// Checks a policy. `WEIR_OK` when it is valid (a NULL policy is the preset,
/// which is); otherwise the status naming the first wrong field, in this
/// order: `WEIR_ERR_MISALIGNED` (`policy` is not aligned for a
/// `weir_backoff`), `WEIR_ERR_UNKNOWN_KIND` (`jitter` names no
/// `WEIR_BACKOFF_JITTER_*`; the policy's only enumeration field),
/// `WEIR_ERR_BACKOFF_BASE` (`base_ns` negative), `WEIR_ERR_BACKOFF_FACTOR`
/// (`factor` NaN, infinite or below 1), `WEIR_ERR_BACKOFF_CAP` (`cap_ns`
/// negative), `WEIR_ERR_BACKOFF_ATTEMPTS` (`attempts` below 1),
/// `WEIR_ERR_BACKOFF_SPREAD` (`spread` NaN, infinite, below 0 or above 1).
/// The other calls answer an invalid policy with a neutral value, so check
/// a policy once where it is configured.
#[no_mangle]
pub extern "C" fn weir_backoff_check(policy: *const weir_backoff) -> weir_status {
    guard_status(|| checked(policy).map(drop))
}

/// The undelayed ceiling before the `retry`-th retry (the first retry is
/// 1): `min(base_ns × factor^(retry − 1), cap_ns)`, what a client without
/// jitter sleeps. 0 for `retry <= 0`. Costs O(1) for any retry and never
/// overflows: growth past the cap is the cap (retry 10000 at factor 2 is the
/// cap). NULL policy: the preset. An invalid policy answers -1, which no
/// valid policy ever does.
#[no_mangle]
pub extern "C" fn weir_backoff_ceiling(policy: *const weir_backoff, retry: i32) -> i64 {
    guard(-1, || checked(policy).map_or(-1, |p| p.ceiling(retry)))
}

/// How long to wait before the `retry`-th retry (the first retry is 1),
/// drawn from the range the policy's jitter documents (see
/// `WEIR_BACKOFF_JITTER_*`) with the caller's draw `random` in [0, 1) (clamped into
/// range, NaN as 0; the same draw gives the same delay). `previous_ns` is
/// the delay the last retry waited; only `WEIR_BACKOFF_JITTER_DECORRELATED` reads it
/// (pass 0 or `base_ns` before the first retry: anything below the base,
/// negative included, counts as the base, so the first retry draws from
/// [base, min(3 × base, cap)]). 0 for `retry <= 0`; otherwise
/// never negative. NULL policy: the preset. An invalid policy answers -1,
/// which no valid policy ever does.
#[no_mangle]
pub extern "C" fn weir_backoff_delay(
    policy: *const weir_backoff,
    retry: i32,
    random: f64,
    previous_ns: i64,
) -> i64 {
    guard(-1, || {
        checked(policy).map_or(-1, |p| p.delay(retry, random, previous_ns))
    })
}

/// Whether a call that has made `made` attempts (the first attempt is 1)
/// may make another: `0 <= made < attempts`, so 3 attempts allow two
/// retries. A negative `made` cannot be judged and is refused (false), and
/// so is an invalid policy. NULL policy: the preset.
#[no_mangle]
pub extern "C" fn weir_backoff_more(policy: *const weir_backoff, made: i32) -> bool {
    guard(false, || checked(policy).is_ok_and(|p| p.more(made)))
}

/// The delays of a whole run of retries, one per retry in order, as
/// `weir_backoff_delay` draws them: retry `i` uses `randoms[i − 1]`, or 0
/// once the `randoms_len` draws run short, and `WEIR_BACKOFF_JITTER_DECORRELATED`'s
/// previous delay starts at `base_ns` and then follows the delays drawn.
/// Writes the first `min(cap, attempts − 1)` delays to `out` and returns how
/// many it wrote. The whole schedule has `attempts − 1` delays, so size
/// `out` from the policy; a return below that means `cap` cut it short. A
/// NULL `out` or a `cap` of 0 writes nothing and returns 0; NULL `randoms`
/// is no draws. NULL policy: the preset. An invalid policy, or a misaligned
/// `randoms` or `out`, returns 0 and writes nothing.
#[no_mangle]
pub extern "C" fn weir_backoff_schedule(
    policy: *const weir_backoff,
    randoms: *const f64,
    randoms_len: usize,
    out: *mut i64,
    cap: usize,
) -> usize {
    guard(0, || {
        let Ok(p) = checked(policy) else {
            return 0;
        };
        let (Ok(randoms), Ok(out)) = (
            slice_in(randoms, randoms_len.min(p.retries())),
            slice_out(out, cap.min(p.retries())),
        ) else {
            return 0;
        };
        for (slot, delay) in out.iter_mut().zip(p.delays(randoms)) {
            slot.write(delay);
        }
        out.len()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_differ_only_in_jitter() {
        assert_eq!(weir_backoff_check(&weir_backoff_preset()), WEIR_OK);
        assert_eq!(weir_backoff_check(&weir_backoff_full_jitter()), WEIR_OK);
        assert_eq!(weir_backoff_check(core::ptr::null()), WEIR_OK);
        let full = weir_backoff_full_jitter();
        assert_eq!(
            weir_backoff {
                jitter: WEIR_BACKOFF_JITTER_SPREAD,
                ..full
            },
            weir_backoff_preset()
        );
    }

    #[test]
    fn every_jitter_code_maps_and_others_are_unknown() {
        for code in 0..=4 {
            assert!(jitter(code).is_some());
        }
        for code in [-1, 5, i32::MIN, i32::MAX] {
            let bad = weir_backoff {
                jitter: code,
                ..PRESET
            };
            assert_eq!(weir_backoff_check(&bad), WEIR_ERR_UNKNOWN_KIND);
            assert_eq!(weir_backoff_ceiling(&bad, 1), -1);
            assert_eq!(weir_backoff_delay(&bad, 1, 0.5, 0), -1);
            assert!(!weir_backoff_more(&bad, 1));
            let mut out = [7; 2];
            assert_eq!(
                weir_backoff_schedule(&bad, core::ptr::null(), 0, out.as_mut_ptr(), 2),
                0
            );
            assert_eq!(out, [7, 7]);
        }
    }

    #[test]
    fn schedule_through_the_c_face() {
        let randoms = [0.5, 0.5];
        let mut out = [0i64; 3];
        let n = weir_backoff_schedule(core::ptr::null(), randoms.as_ptr(), 2, out.as_mut_ptr(), 3);
        assert_eq!(n, 2);
        assert_eq!(out, [100 * MS, 200 * MS, 0]);
        // Room for one of the two: it says it wrote one, not that two were due.
        let mut one = [0i64; 1];
        let n = weir_backoff_schedule(core::ptr::null(), randoms.as_ptr(), 2, one.as_mut_ptr(), 1);
        assert_eq!((n, one), (1, [100 * MS]));
        // No buffer: nothing written, and it says so.
        let n = weir_backoff_schedule(
            core::ptr::null(),
            core::ptr::null(),
            0,
            core::ptr::null_mut(),
            5,
        );
        assert_eq!(n, 0);
    }
}
