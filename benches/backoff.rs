//! `weir_backoff_delay` for each jitter kind, through the C ABI (which
//! checks the policy on every call) and the Rust core (checked once).

use std::hint::black_box;

use criterion::Criterion;
use weir::backoff::{
    weir_backoff, weir_backoff_delay, weir_backoff_preset, WEIR_BACKOFF_JITTER_DECORRELATED,
    WEIR_BACKOFF_JITTER_EQUAL, WEIR_BACKOFF_JITTER_FULL, WEIR_BACKOFF_JITTER_RIGID,
    WEIR_BACKOFF_JITTER_SPREAD,
};
use weir_core::backoff::{Backoff, BackoffJitter};

use crate::support::{fresh, id};

/// The retry asked about: the third, past neither the cap nor the base.
const RETRY: i32 = 3;
const DRAW: f64 = 0.5;
const PREVIOUS_NS: i64 = 200_000_000;

pub fn benches(c: &mut Criterion) {
    let delay: extern "C" fn(*const weir_backoff, i32, f64, i64) -> i64 =
        black_box(weir_backoff_delay);
    let kinds = [
        ("rigid", WEIR_BACKOFF_JITTER_RIGID, BackoffJitter::Rigid),
        ("full", WEIR_BACKOFF_JITTER_FULL, BackoffJitter::Full),
        ("equal", WEIR_BACKOFF_JITTER_EQUAL, BackoffJitter::Equal),
        (
            "decorrelated",
            WEIR_BACKOFF_JITTER_DECORRELATED,
            BackoffJitter::Decorrelated,
        ),
        ("spread", WEIR_BACKOFF_JITTER_SPREAD, BackoffJitter::Spread),
    ];
    for (name, c_kind, kind) in kinds {
        let policy = weir_backoff {
            jitter: c_kind,
            ..weir_backoff_preset()
        };
        fresh(
            c,
            "weir_backoff_delay",
            id(name, "c_abi"),
            || policy,
            |p| delay(p, RETRY, DRAW, PREVIOUS_NS),
            |p| assert!(delay(p, RETRY, DRAW, PREVIOUS_NS) >= 0),
        );
        let core = Backoff::new(
            policy.base_ns,
            policy.factor,
            policy.cap_ns,
            policy.attempts,
            kind,
            policy.spread,
        )
        .unwrap();
        fresh(
            c,
            "weir_backoff_delay",
            id(name, "rust"),
            || core,
            |b| b.delay(RETRY, DRAW, PREVIOUS_NS),
            |b| assert!(b.delay(RETRY, DRAW, PREVIOUS_NS) >= 0),
        );
    }
    fresh(
        c,
        "weir_backoff_delay",
        id("preset_null_policy", "c_abi"),
        || (),
        |_| delay(std::ptr::null(), RETRY, DRAW, PREVIOUS_NS),
        |_| assert!(delay(std::ptr::null(), RETRY, DRAW, PREVIOUS_NS) > 0),
    );
}
