//! `weir_backoff_delay` for each jitter kind, through the C ABI (which
//! checks the policy on every call) and the Rust core (checked once).

use std::hint::black_box;

use criterion::Criterion;
use weir::backoff::{
    weir_backoff, weir_backoff_delay, weir_backoff_preset, WEIR_JITTER_DECORRELATED,
    WEIR_JITTER_EQUAL, WEIR_JITTER_FULL, WEIR_JITTER_RIGID, WEIR_JITTER_SPREAD,
};
use weir_core::backoff::{Backoff, Jitter};

use crate::support::{fresh, id};

/// The retry asked about: the third, past neither the cap nor the base.
const RETRY: i32 = 3;
const DRAW: f64 = 0.5;
const PREVIOUS_NS: i64 = 200_000_000;

pub fn benches(c: &mut Criterion) {
    let delay: extern "C" fn(*const weir_backoff, i32, f64, i64) -> i64 =
        black_box(weir_backoff_delay);
    let kinds = [
        ("rigid", WEIR_JITTER_RIGID, Jitter::Rigid),
        ("full", WEIR_JITTER_FULL, Jitter::Full),
        ("equal", WEIR_JITTER_EQUAL, Jitter::Equal),
        (
            "decorrelated",
            WEIR_JITTER_DECORRELATED,
            Jitter::Decorrelated,
        ),
        ("spread", WEIR_JITTER_SPREAD, Jitter::Spread),
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
