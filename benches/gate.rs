//! `weir_gate`: enter+leave with room (allow), enter on a full gate
//! (refuse); through the C ABI, through the Rust core, and two threads on
//! one handle.

use std::hint::black_box;

use criterion::Criterion;
use weir::gate::{weir_gate, weir_gate_enter, weir_gate_free, weir_gate_leave, weir_gate_new};
use weir_core::gate::Gate;

use crate::support::{fresh, id, two_threads, Owned};

type Handle = Owned<weir_gate>;

fn handle(limit: i64) -> Handle {
    Owned::new(|out| weir_gate_new(limit, out), weir_gate_free)
}

/// A gate with one place, already taken.
fn full() -> Handle {
    let gate = handle(1);
    assert!(weir_gate_enter(gate.get()));
    gate
}

type Enter = extern "C" fn(*const weir_gate) -> bool;
type Leave = extern "C" fn(*const weir_gate);

/// Enters and leaves through the C ABI; whether it entered.
fn enter_leave(enter: Enter, leave: Leave, gate: &Handle) -> bool {
    let entered = enter(gate.get());
    leave(gate.get());
    entered
}

pub fn benches(c: &mut Criterion) {
    // The entry points as plain function pointers the optimiser cannot see
    // through: each call below is a real call, as it is from C.
    let enter: Enter = black_box(weir_gate_enter);
    let leave: Leave = black_box(weir_gate_leave);

    fresh(
        c,
        "weir_gate_enter+leave",
        id("allow", "c_abi"),
        || handle(2),
        |gate| enter_leave(enter, leave, gate),
        |gate| assert!(enter(gate.get())),
    );
    fresh(
        c,
        "weir_gate_enter+leave",
        id("allow", "rust"),
        || Gate::new(2),
        |gate| {
            let entered = gate.enter();
            gate.leave();
            entered
        },
        |gate| assert!(gate.enter()),
    );
    two_threads(
        c,
        "weir_gate_enter+leave",
        id("allow", "c_abi_2threads"),
        || handle(2),
        |gate| enter_leave(enter, leave, gate),
        |gate| assert!(enter(gate.get())),
    );
    fresh(
        c,
        "weir_gate_enter",
        id("refuse", "c_abi"),
        full,
        |gate| enter(gate.get()),
        |gate| assert!(!enter(gate.get())),
    );
    fresh(
        c,
        "weir_gate_enter",
        id("refuse", "rust"),
        || {
            let gate = Gate::new(1);
            assert!(gate.enter());
            gate
        },
        |gate| gate.enter(),
        |gate| assert!(!gate.enter()),
    );
}
