//! The adaptive pair: `weir_breaker_allow`+`pass` and
//! `weir_shedder_allow`+`pass` (a decision with its settle), and their
//! refusals, through the C ABI and the Rust core; the breaker also with two
//! threads on one handle.

use std::hint::black_box;

use criterion::Criterion;
use weir::breaker::{
    weir_breaker, weir_breaker_allow, weir_breaker_fail, weir_breaker_free, weir_breaker_new,
    weir_breaker_pass, weir_breaker_policy, weir_breaker_policy_preset, weir_breaker_ticket,
};
use weir::shedder::{
    weir_shedder, weir_shedder_allow, weir_shedder_free, weir_shedder_new, weir_shedder_pass,
    weir_shedder_ticket,
};
use weir::status::weir_status::{self, WEIR_OK};
use weir_core::breaker::{Breaker, BreakerPolicy};
use weir_core::shedder::{Shedder, ShedderPolicy};

use crate::support::{fresh, id, two_threads, Owned, NOW};

/// A draw that passes any throttle but a full one.
const ROLL_PASS: f64 = 0.99;
/// A draw that every throttle refuses.
const ROLL_REFUSE: f64 = 0.0;
/// CPU use in thousandths: idle, and fully busy.
const CPU_IDLE: i32 = 0;
const CPU_HOT: i32 = 1000;
/// Calls the refusing setups fail or hold in flight.
const LOAD: usize = 100;

type BreakerAllow = extern "C" fn(*const weir_breaker, i64, f64, *mut weir_breaker_ticket) -> bool;
type BreakerPass = extern "C" fn(*const weir_breaker, *mut weir_breaker_ticket, i64) -> weir_status;
type ShedderAllow = extern "C" fn(*const weir_shedder, i64, i32, *mut weir_shedder_ticket) -> bool;
type ShedderPass = extern "C" fn(*const weir_shedder, *mut weir_shedder_ticket, i64) -> weir_status;

fn breaker() -> Owned<weir_breaker> {
    made(std::ptr::null())
}

fn made(policy: *const weir_breaker_policy) -> Owned<weir_breaker> {
    Owned::new(|out| weir_breaker_new(policy, NOW, out), weir_breaker_free)
}

/// The preset with every one of Envoy's limits on: a cap of 0.8, a floor of
/// one call a second, an aggression of 2 (a `pow` per decision that gets
/// that far) and refusals left out of the traffic.
fn limits() -> weir_breaker_policy {
    let mut policy = weir_breaker_policy_preset();
    policy.max_rejection_probability = 0.8;
    policy.rps_threshold = 1.0;
    policy.aggression = 2.0;
    policy.skip_refusals = 1;
    policy
}

/// A breaker at the preset whose every call so far failed: the throttle
/// refuses about 94 % of draws, and the probe has just let one through.
fn failing_breaker() -> Owned<weir_breaker> {
    fail_all(breaker())
}

/// [`failing_breaker`] with [`limits`]: every decision runs the whole
/// formula, the exponent and the cap (0.8, over [`ROLL_REFUSE`]); its
/// refusals leave the traffic as it is, so the state holds still.
fn failing_limits_breaker() -> Owned<weir_breaker> {
    let policy = limits();
    fail_all(made(&policy))
}

fn fail_all(b: Owned<weir_breaker>) -> Owned<weir_breaker> {
    for _ in 0..LOAD {
        let mut ticket = weir_breaker_ticket::default();
        assert!(weir_breaker_allow(b.get(), NOW, ROLL_PASS, &mut ticket));
        assert_eq!(weir_breaker_fail(b.get(), &mut ticket, NOW), WEIR_OK);
    }
    b
}

fn failing_core() -> Breaker {
    let mut b = Breaker::new(BreakerPolicy::PRESET, NOW).unwrap();
    for _ in 0..LOAD {
        let mut ticket = b.allow(NOW, ROLL_PASS).unwrap();
        b.fail(&mut ticket, NOW).unwrap();
    }
    b
}

fn shedder() -> Owned<weir_shedder> {
    Owned::new(
        |out| weir_shedder_new(std::ptr::null(), NOW, out),
        weir_shedder_free,
    )
}

/// A shedder at the preset with [`LOAD`] calls in flight and a moving
/// average near that: hot and full, it refuses.
fn full_shedder() -> Owned<weir_shedder> {
    let s = shedder();
    let mut tickets = vec![weir_shedder_ticket::default(); LOAD];
    for ticket in &mut tickets {
        assert!(weir_shedder_allow(s.get(), NOW, CPU_IDLE, ticket));
    }
    for ticket in tickets.iter_mut().take(LOAD / 10) {
        assert_eq!(weir_shedder_pass(s.get(), ticket, NOW), WEIR_OK);
    }
    s
}

fn full_core() -> Shedder {
    let mut s = Shedder::new(ShedderPolicy::PRESET, NOW).unwrap();
    let mut tickets: Vec<_> = (0..LOAD).map(|_| s.allow(NOW, CPU_IDLE).unwrap()).collect();
    for ticket in tickets.iter_mut().take(LOAD / 10) {
        s.pass(ticket, NOW).unwrap();
    }
    s
}

fn breaker_allow_pass(allow: BreakerAllow, pass: BreakerPass, b: *const weir_breaker) -> bool {
    let mut ticket = weir_breaker_ticket::default();
    allow(b, NOW, ROLL_PASS, &mut ticket) && pass(b, &mut ticket, NOW) == WEIR_OK
}

fn breaker_refuse(allow: BreakerAllow, b: *const weir_breaker) -> bool {
    let mut ticket = weir_breaker_ticket::default();
    allow(b, NOW, ROLL_REFUSE, &mut ticket)
}

fn shedder_allow_pass(allow: ShedderAllow, pass: ShedderPass, s: *const weir_shedder) -> bool {
    let mut ticket = weir_shedder_ticket::default();
    allow(s, NOW, CPU_IDLE, &mut ticket) && pass(s, &mut ticket, NOW) == WEIR_OK
}

pub fn benches(c: &mut Criterion) {
    let b_allow: BreakerAllow = black_box(weir_breaker_allow);
    let b_pass: BreakerPass = black_box(weir_breaker_pass);
    let s_allow: ShedderAllow = black_box(weir_shedder_allow);
    let s_pass: ShedderPass = black_box(weir_shedder_pass);

    let path = "weir_breaker_allow+pass";
    fresh(
        c,
        path,
        id("allow", "c_abi"),
        breaker,
        |b| breaker_allow_pass(b_allow, b_pass, b.get()),
        |b| assert!(breaker_allow_pass(b_allow, b_pass, b.get())),
    );
    fresh(
        c,
        path,
        id("allow", "rust"),
        || Breaker::new(BreakerPolicy::PRESET, NOW).unwrap(),
        |b| match b.allow(NOW, ROLL_PASS) {
            Some(mut ticket) => b.pass(&mut ticket, NOW).is_ok(),
            None => false,
        },
        |b| assert!(b.allow(NOW, ROLL_PASS).is_some()),
    );
    two_threads(
        c,
        path,
        id("allow", "c_abi_2threads"),
        breaker,
        |b| breaker_allow_pass(b_allow, b_pass, b.get()),
        |b| assert!(breaker_allow_pass(b_allow, b_pass, b.get())),
    );
    fresh(
        c,
        path,
        id("allow", "c_abi_limits"),
        || {
            let policy = limits();
            made(&policy)
        },
        |b| breaker_allow_pass(b_allow, b_pass, b.get()),
        |b| assert!(breaker_allow_pass(b_allow, b_pass, b.get())),
    );
    let path = "weir_breaker_allow";
    fresh(
        c,
        path,
        id("refuse", "c_abi"),
        failing_breaker,
        |b| breaker_refuse(b_allow, b.get()),
        |b| assert!(!breaker_refuse(b_allow, b.get())),
    );
    fresh(
        c,
        path,
        id("refuse", "c_abi_limits"),
        failing_limits_breaker,
        |b| breaker_refuse(b_allow, b.get()),
        |b| assert!(!breaker_refuse(b_allow, b.get())),
    );
    fresh(
        c,
        path,
        id("refuse", "rust"),
        failing_core,
        |b| b.allow(NOW, ROLL_REFUSE).is_some(),
        |b| assert!(b.allow(NOW, ROLL_REFUSE).is_none()),
    );

    let path = "weir_shedder_allow+pass";
    fresh(
        c,
        path,
        id("allow", "c_abi"),
        shedder,
        |s| shedder_allow_pass(s_allow, s_pass, s.get()),
        |s| assert!(shedder_allow_pass(s_allow, s_pass, s.get())),
    );
    fresh(
        c,
        path,
        id("allow", "rust"),
        || Shedder::new(ShedderPolicy::PRESET, NOW).unwrap(),
        |s| match s.allow(NOW, CPU_IDLE) {
            Some(mut ticket) => s.pass(&mut ticket, NOW).is_ok(),
            None => false,
        },
        |s| assert!(s.allow(NOW, CPU_IDLE).is_some()),
    );
    let path = "weir_shedder_allow";
    fresh(
        c,
        path,
        id("refuse", "c_abi"),
        full_shedder,
        |s| {
            let mut ticket = weir_shedder_ticket::default();
            s_allow(s.get(), NOW, CPU_HOT, &mut ticket)
        },
        |s| {
            assert!(!s_allow(
                s.get(),
                NOW,
                CPU_HOT,
                &mut weir_shedder_ticket::default()
            ))
        },
    );
    fresh(
        c,
        path,
        id("refuse", "rust"),
        full_core,
        |s| s.allow(NOW, CPU_HOT).is_some(),
        |s| assert!(s.allow(NOW, CPU_HOT).is_none()),
    );
}
