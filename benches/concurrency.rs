//! `weir_concurrency`: an enter with its leave (allow: the controller's
//! update runs on every leave) and an enter on a full limit (refuse),
//! through the C ABI and the Rust core. Its anchor is the uncontended
//! mutex: each call takes one short lock.

use std::hint::black_box;

use criterion::Criterion;
use weir::concurrency::{
    weir_concurrency, weir_concurrency_enter, weir_concurrency_free, weir_concurrency_leave,
    weir_concurrency_new, weir_concurrency_ticket,
};
use weir::status::weir_status::{self, WEIR_OK};
use weir_core::concurrency::{Concurrency, ConcurrencyPolicy};

use crate::support::{fresh, id, Owned, NOW};

type Enter = extern "C" fn(*const weir_concurrency, i64, *mut weir_concurrency_ticket) -> bool;
type Leave =
    extern "C" fn(*const weir_concurrency, *mut weir_concurrency_ticket, i64, bool) -> weir_status;

/// A latency that keeps the limit where it is.
const RTT: i64 = 1_000_000;

fn handle() -> Owned<weir_concurrency> {
    Owned::new(
        |out| weir_concurrency_new(std::ptr::null(), out),
        weir_concurrency_free,
    )
}

/// The preset's 20 places, all taken.
fn full() -> Owned<weir_concurrency> {
    let limit = handle();
    let mut flight = weir_concurrency_ticket::default();
    while weir_concurrency_enter(limit.get(), NOW, &mut flight) {}
    limit
}

pub fn benches(c: &mut Criterion) {
    let enter: Enter = black_box(weir_concurrency_enter);
    let leave: Leave = black_box(weir_concurrency_leave);
    fresh(
        c,
        "weir_concurrency_enter+leave",
        id("allow", "c_abi"),
        handle,
        |limit| {
            let mut flight = weir_concurrency_ticket::default();
            let entered = enter(limit.get(), NOW, &mut flight);
            entered && leave(limit.get(), &mut flight, NOW + RTT, false) == WEIR_OK
        },
        |limit| {
            let mut flight = weir_concurrency_ticket::default();
            assert!(enter(limit.get(), NOW, &mut flight));
        },
    );
    fresh(
        c,
        "weir_concurrency_enter+leave",
        id("allow", "rust"),
        || Concurrency::new(ConcurrencyPolicy::PRESET).unwrap(),
        |limit| match limit.enter(NOW) {
            Some(entry) => {
                limit.leave(entry, NOW + RTT, false);
                true
            }
            None => false,
        },
        |limit| assert!(limit.enter(NOW).is_some()),
    );
    fresh(
        c,
        "weir_concurrency_enter",
        id("refuse", "c_abi"),
        full,
        |limit| {
            let mut flight = weir_concurrency_ticket::default();
            enter(limit.get(), NOW, &mut flight)
        },
        |limit| {
            let mut flight = weir_concurrency_ticket::default();
            assert!(!enter(limit.get(), NOW, &mut flight));
        },
    );
}
