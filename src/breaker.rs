//! C face of [`weir_core::breaker`].

use std::sync::Mutex;

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::guard::{
    free_handle, lock, new_handle, on, policy_or, status_on, write_out, Guarded, Handle,
};
use crate::status::weir_status::{self, *};
use weir_core::breaker::{Breaker, Sre, SreError, Tally};

/// The constants of the breaker's probability-based throttling. Start from
/// `weir_sre_preset()` and change what you need; every field is checked
/// when a breaker is made from it. 48 bytes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct weir_sre {
    /// How many calls each success pays for while nothing is failing; finite
    /// and at least `floor`. The preset's 1.5 leaves a backend alone until
    /// more than a third of its calls fail.
    pub k: f64,
    /// What `k` decays to as the failing run fills the window; finite and at
    /// least 1.
    pub floor: f64,
    /// Calls in the window that are never refused, however they went; finite
    /// and not negative.
    pub protection: f64,
    /// How long with nothing let through before one call goes anyway (the
    /// probe); positive.
    pub probe_ns: i64,
    /// Buckets in the window; below one is raised to one, above 1048576 is
    /// `WEIR_ERR_TOO_LARGE`.
    pub size: i32,
    /// Must be 0; anything else is `WEIR_ERR_RESERVED`.
    pub reserved: i32,
    /// How far back the window reaches; positive.
    pub window_ns: i64,
}

assert_eq_size!(weir_sre, [u8; 48]);
const_assert_eq!(core::mem::align_of::<weir_sre>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_sre, k), 0);
const_assert_eq!(core::mem::offset_of!(weir_sre, floor), 8);
const_assert_eq!(core::mem::offset_of!(weir_sre, protection), 16);
const_assert_eq!(core::mem::offset_of!(weir_sre, probe_ns), 24);
const_assert_eq!(core::mem::offset_of!(weir_sre, size), 32);
const_assert_eq!(core::mem::offset_of!(weir_sre, reserved), 36);
const_assert_eq!(core::mem::offset_of!(weir_sre, window_ns), 40);

impl From<Sre> for weir_sre {
    fn from(sre: Sre) -> weir_sre {
        weir_sre {
            k: sre.k,
            floor: sre.floor,
            protection: sre.protection,
            probe_ns: sre.probe_ns,
            size: sre.size,
            reserved: 0,
            window_ns: sre.window_ns,
        }
    }
}

impl From<weir_sre> for Sre {
    fn from(sre: weir_sre) -> Sre {
        Sre {
            k: sre.k,
            floor: sre.floor,
            protection: sre.protection,
            probe_ns: sre.probe_ns,
            size: sre.size,
            window_ns: sre.window_ns,
        }
    }
}

impl From<SreError> for weir_status {
    fn from(error: SreError) -> weir_status {
        match error {
            SreError::K => WEIR_ERR_SRE_K,
            SreError::Floor => WEIR_ERR_SRE_FLOOR,
            SreError::Protection => WEIR_ERR_SRE_PROTECTION,
            SreError::Probe => WEIR_ERR_SRE_PROBE,
            SreError::Window(error) => error.into(),
        }
    }
}

/// The preset: k 1.5 decaying to 1.1, protection 5, a probe after 1 s with
/// nothing let through, 40 buckets over 10 s.
#[no_mangle]
pub extern "C" fn weir_sre_preset() -> weir_sre {
    Sre::PRESET.into()
}

/// Outcomes counted over a breaker's window. `total` counts every call,
/// refused ones included; `total = success + failure + drop`. 32 bytes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_tally {
    /// Every call: successes, failures and drops.
    pub total: i64,
    /// Calls let through that succeeded.
    pub success: i64,
    /// Calls let through that failed.
    pub failure: i64,
    /// Calls refused.
    pub drop: i64,
}

assert_eq_size!(weir_tally, [u8; 32]);
const_assert_eq!(core::mem::align_of::<weir_tally>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_tally, total), 0);
const_assert_eq!(core::mem::offset_of!(weir_tally, success), 8);
const_assert_eq!(core::mem::offset_of!(weir_tally, failure), 16);
const_assert_eq!(core::mem::offset_of!(weir_tally, drop), 24);

impl From<Tally> for weir_tally {
    fn from(tally: Tally) -> weir_tally {
        weir_tally {
            total: tally.total,
            success: tally.success,
            failure: tally.failure,
            drop: tally.drop,
        }
    }
}

/// A circuit breaker that refuses a fraction of calls rather than all of
/// them: no open, half-open and closed, but a refusal probability that grows
/// with the failures in a rolling window of outcomes:
/// `w = max(k - (k - floor) * failing / size, floor)`,
/// `drop = (total - protection - w * accepts) / (total + 1)`, and then
/// `drop *= (size - working) / size`, where `total` counts every call in the
/// window (refusals included), `accepts` its successes, and `failing` /
/// `working` are the runs of failure-only / success-only buckets at the
/// window's head (buckets with neither, or only refusals, leave both runs as
/// they are). At or below zero everything goes; otherwise, once `probe_ns`
/// has passed with nothing let through one call goes anyway (the probe),
/// and the rest are refused when the caller's roll falls under `drop`. Safe
/// to share between threads: each call takes a short per-handle lock, and a
/// decision never rescans the window. Heap per handle: 32 bytes per bucket
/// plus about 210 bytes (1.5 KiB at the preset). Made by `weir_breaker_new`, freed by `weir_breaker_free`.
pub struct weir_breaker(Guarded<Mutex<Breaker>>);

impl Handle for weir_breaker {
    type State = Mutex<Breaker>;
    fn guarded(&self) -> &Guarded<Self::State> {
        &self.0
    }
}

/// Makes a breaker with an empty window opening at `now` and writes it to
/// `*out`; the probe counts from `now` too. `policy` NULL means the preset.
/// A bad policy gets its own status: `WEIR_ERR_SRE_K`, `WEIR_ERR_SRE_FLOOR`,
/// `WEIR_ERR_SRE_PROTECTION`, `WEIR_ERR_SRE_PROBE`, `WEIR_ERR_WINDOW_SPAN`,
/// `WEIR_ERR_TOO_LARGE`, or `WEIR_ERR_RESERVED` for a non-zero
/// `reserved`. `WEIR_ERR_NULL` if `out` is NULL; `*out` is written only on
/// success.
#[no_mangle]
pub extern "C" fn weir_breaker_new(
    policy: *const weir_sre,
    now: i64,
    out: *mut *mut weir_breaker,
) -> weir_status {
    new_handle(out, || {
        let sre = policy_or(policy, weir_sre_preset())?;
        if sre.reserved != 0 {
            return Err(WEIR_ERR_RESERVED);
        }
        let breaker = Breaker::new(sre.into(), now)?;
        Ok(weir_breaker(Guarded::new(Mutex::new(breaker))))
    })
}

/// Frees a breaker. NULL is accepted and ignored.
#[no_mangle]
pub extern "C" fn weir_breaker_free(breaker: *mut weir_breaker) {
    free_handle(breaker)
}

/// Asks to make one call at `now`, with `roll` a draw from [0, 1) (clamped
/// into range; NaN counts as 0). True: go ahead, then settle the call with
/// `weir_breaker_pass` or `weir_breaker_fail`. False: refused, and recorded
/// as a drop. False for a NULL breaker.
#[no_mangle]
pub extern "C" fn weir_breaker_allow(breaker: *const weir_breaker, now: i64, roll: f64) -> bool {
    on(breaker, false, |state| lock(state).allow(now, roll))
}

/// Records that a call let through succeeded, finishing at `now`.
/// `WEIR_ERR_NULL` for a NULL breaker.
#[no_mangle]
pub extern "C" fn weir_breaker_pass(breaker: *const weir_breaker, now: i64) -> weir_status {
    status_on(breaker, |state| {
        lock(state).pass(now);
        Ok(())
    })
}

/// Records that a call let through failed, finishing at `now`.
/// `WEIR_ERR_NULL` for a NULL breaker.
#[no_mangle]
pub extern "C" fn weir_breaker_fail(breaker: *const weir_breaker, now: i64) -> weir_status {
    status_on(breaker, |state| {
        lock(state).fail(now);
        Ok(())
    })
}

/// The fraction of calls the breaker would refuse at `now`, in [0, 1): zero
/// while the window is healthy. The probe is left out; this is the standing
/// throttle a dashboard or an alert wants. 0 for a NULL breaker.
#[no_mangle]
pub extern "C" fn weir_breaker_ratio(breaker: *const weir_breaker, now: i64) -> f64 {
    on(breaker, 0.0, |state| lock(state).ratio(now))
}

/// Writes the outcomes in the window at `now` to `*out`. `WEIR_ERR_NULL` if
/// `breaker` or `out` is NULL.
#[no_mangle]
pub extern "C" fn weir_breaker_tally(
    breaker: *const weir_breaker,
    now: i64,
    out: *mut weir_tally,
) -> weir_status {
    status_on(breaker, |state| {
        let tally = lock(state).tally(now);
        write_out(out, tally.into())
    })
}
