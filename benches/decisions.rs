//! Every weir decision path, measured through the C ABI (the `extern "C"`
//! functions, called through function pointers the optimiser cannot see
//! through, exactly as a C caller reaches them) and, where it differs,
//! through the Rust core; beside the anchors each figure is a ratio to,
//! measured in the same run.
//!
//! Names read `path/outcome/via`: `allow` paths run at a fixed `now` with a
//! burst large enough that every call is allowed, `refuse` paths at a fixed
//! `now` with the limiter spent; `via` is `c_abi`, `rust`, or `..._2threads`
//! for two threads on one shared handle (time per decision = wall time ÷
//! all decisions made).
//!
//! `cargo bench` measures everything and prints the table BENCHMARKS.md
//! holds; `cargo bench -- <filter>` measures a part; `cargo bench -- --test`
//! (or `cargo test --benches`) runs each benchmark once, for CI.

use std::time::SystemTime;

use table::{Row, CAS, CAS_2T, GOV_ALLOW, GOV_ALLOW_2T, GOV_KEYED, GOV_REFUSE, MUTEX};

mod anchors;
mod gate;
mod support;
mod table;

/// The table's lines, in order: each benchmark with its anchor and target
/// (DESIGN.md, "Performance targets").
const ROWS: &[Row] = &[
    // The anchors themselves.
    Row {
        bench: CAS,
        anchor: CAS,
        target: None,
    },
    Row {
        bench: "anchor/fetch_add/1thread",
        anchor: CAS,
        target: None,
    },
    Row {
        bench: MUTEX,
        anchor: CAS,
        target: None,
    },
    Row {
        bench: GOV_ALLOW,
        anchor: CAS,
        target: None,
    },
    Row {
        bench: GOV_REFUSE,
        anchor: CAS,
        target: None,
    },
    Row {
        bench: GOV_KEYED,
        anchor: GOV_ALLOW,
        target: None,
    },
    Row {
        bench: table::GOV_KEYED_REFUSE,
        anchor: GOV_KEYED,
        target: None,
    },
    // weir_gate (no target of its own; read against the CAS floor: an
    // enter+leave pair is two compare-and-swap loops).
    Row {
        bench: "weir_gate_enter+leave/allow/c_abi",
        anchor: CAS,
        target: None,
    },
    Row {
        bench: "weir_gate_enter+leave/allow/rust",
        anchor: CAS,
        target: None,
    },
    Row {
        bench: "weir_gate_enter/refuse/c_abi",
        anchor: CAS,
        target: None,
    },
    Row {
        bench: "weir_gate_enter/refuse/rust",
        anchor: CAS,
        target: None,
    },
    // Two threads on one shared state.
    Row {
        bench: CAS_2T,
        anchor: CAS,
        target: None,
    },
    Row {
        bench: table::MUTEX_2T,
        anchor: MUTEX,
        target: None,
    },
    Row {
        bench: GOV_ALLOW_2T,
        anchor: GOV_ALLOW,
        target: None,
    },
    Row {
        bench: table::GOV_REFUSE_2T,
        anchor: GOV_REFUSE,
        target: None,
    },
    Row {
        bench: "weir_gate_enter+leave/allow/c_abi_2threads",
        anchor: CAS_2T,
        target: None,
    },
];

fn main() {
    let started = SystemTime::now();
    let mut c = support::config().configure_from_args();

    anchors::benches(&mut c);
    gate::benches(&mut c);

    c.final_summary();
    // Only a measuring run (cargo bench passes --bench) has fresh estimates.
    let args: Vec<String> = std::env::args().collect();
    let measuring = args.iter().any(|a| a == "--bench")
        && !args
            .iter()
            .any(|a| a == "--test" || a == "--list" || a == "--profile-time");
    if measuring {
        table::write(ROWS, started);
    }
}
