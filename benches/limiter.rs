//! `weir_limiter_try_consume`, each variant (bucket, fixed window,
//! cooldown), allowing and refusing, on a value in the caller's memory
//! through the C ABI and on the Rust core; and a bucket's consume with its
//! refund.

use std::hint::black_box;
use std::mem::MaybeUninit;

use criterion::Criterion;
use weir::limiter::{
    weir_limiter, weir_limiter_bucket, weir_limiter_cooldown, weir_limiter_fixed_window,
    weir_limiter_refund, weir_limiter_try_consume,
};
use weir::status::weir_status::{self, WEIR_OK};
use weir_core::limiter::Limiter;

use crate::support::{fresh, id, NOW};

const SECOND: i64 = 1_000_000_000;
/// Units enough that held at [`NOW`] a limiter never runs out.
const ALL: u64 = u64::MAX;

/// A variant's settings: capacity, its period (refill interval, window or
/// cooldown), its anchor, and the units available at [`NOW`].
struct Variant {
    name: &'static str,
    c_new: fn(*mut weir_limiter, u64, u64) -> weir_status,
    rust_new: fn(u64, u64) -> Limiter,
}

/// The three variants, each made with `capacity` and `available` units:
/// a bucket refilling one unit a second from [`NOW`], a fixed window of a
/// second from [`NOW`], and a cooldown of a second (armed, when nothing is
/// available, until a second after [`NOW`]).
fn variants() -> [Variant; 3] {
    [
        Variant {
            name: "bucket",
            c_new: |out, capacity, available| {
                weir_limiter_bucket(out, capacity, 1, SECOND, NOW, available, NOW)
            },
            rust_new: |capacity, available| {
                Limiter::bucket(capacity, 1, SECOND, NOW, available, NOW).unwrap()
            },
        },
        Variant {
            name: "fixed_window",
            c_new: |out, capacity, available| {
                weir_limiter_fixed_window(out, capacity, SECOND, NOW, available, NOW)
            },
            rust_new: |capacity, available| {
                Limiter::fixed_window(capacity, SECOND, NOW, available, NOW).unwrap()
            },
        },
        Variant {
            name: "cooldown",
            c_new: |out, capacity, available| {
                let end = if available == 0 { NOW + SECOND } else { NOW };
                weir_limiter_cooldown(out, capacity, SECOND, end, available, NOW)
            },
            rust_new: |capacity, available| {
                let end = if available == 0 { NOW + SECOND } else { NOW };
                Limiter::cooldown(capacity, SECOND, end, available, NOW).unwrap()
            },
        },
    ]
}

fn c_value(variant: &Variant, capacity: u64, available: u64) -> weir_limiter {
    let mut value = MaybeUninit::<weir_limiter>::uninit();
    assert_eq!(
        (variant.c_new)(value.as_mut_ptr(), capacity, available),
        WEIR_OK
    );
    // SAFETY: the constructor reported WEIR_OK, so it wrote the value.
    unsafe { value.assume_init() }
}

pub fn benches(c: &mut Criterion) {
    let try_consume: extern "C" fn(*mut weir_limiter, i64, u64) -> bool =
        black_box(weir_limiter_try_consume);
    for variant in variants() {
        let path = format!("weir_limiter_try_consume_{}", variant.name);
        let variant = &variant;
        for (outcome, available) in [("allow", ALL), ("refuse", 0)] {
            let allowing = available != 0;
            fresh(
                c,
                &path,
                id(outcome, "c_abi"),
                || c_value(variant, ALL, available),
                |value| try_consume(value, NOW, 1),
                |value| assert_eq!(try_consume(value, NOW, 1), allowing),
            );
            fresh(
                c,
                &path,
                id(outcome, "rust"),
                || (variant.rust_new)(ALL, available),
                |limiter| limiter.try_consume(NOW, 1),
                |limiter| assert_eq!(limiter.try_consume(NOW, 1), allowing),
            );
        }
    }
    // A consume and its refund: the call let through and never made. The
    // value ends where it started, so every iteration is the same.
    let refund: extern "C" fn(*mut weir_limiter, i64, i64, u64) -> weir_status =
        black_box(weir_limiter_refund);
    let bucket = &variants()[0];
    fresh(
        c,
        "weir_limiter_try_consume+refund_bucket",
        id("allow", "c_abi"),
        || c_value(bucket, 10, 10),
        |value| try_consume(value, NOW, 1) && refund(value, NOW, NOW, 1) == WEIR_OK,
        |value| assert!(try_consume(value, NOW, 1) && refund(value, NOW, NOW, 1) == WEIR_OK),
    );
}
