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

use table::{
    Row, CAS, CAS_2T, GOV_ALLOW, GOV_ALLOW_2T, GOV_KEYED, GOV_KEYED_REFUSE, GOV_REFUSE,
    GOV_REFUSE_2T, MUTEX, MUTEX_2T,
};

mod adaptive;
mod anchors;
mod backoff;
mod budget;
mod concurrency;
mod gate;
mod limiter;
mod limiters;
mod pool;
mod rate;
mod support;
mod table;

/// The table's lines, in order: each benchmark with its anchor and target
/// (BENCHMARKS.md, "Targets"; the target binds the C ABI rows, the
/// Rust core rows are shown beside them for orientation).
const ROWS: &[Row] = &[
    // The anchors themselves.
    row(CAS, CAS, None),
    row("anchor/fetch_add/1thread", CAS, None),
    row(MUTEX, CAS, None),
    row(GOV_ALLOW, CAS, None),
    row(GOV_REFUSE, CAS, None),
    row(GOV_KEYED, GOV_ALLOW, None),
    row(GOV_KEYED_REFUSE, GOV_KEYED, None),
    // weir_rate: within a quarter of the compare-and-swap floor; weir_bloom
    // within a tenth of governor's keyed limiter.
    row("weir_rate_allow/allow/c_abi_advancing", CAS, Some(1.25)),
    row("weir_rate_allow/allow/rust_advancing", CAS, None),
    row("weir_rate_allow/refuse/c_abi", CAS, Some(1.25)),
    row("weir_rate_allow/refuse/rust", CAS, None),
    row(
        "weir_bloom_allow/allow/c_abi_k3_2pow20_1e6keys",
        GOV_KEYED,
        Some(1.1),
    ),
    row(
        "weir_bloom_allow/allow/rust_k3_2pow20_1e6keys",
        GOV_KEYED,
        None,
    ),
    row(
        "weir_bloom_allow/refuse/c_abi_k3_2pow20_1e6keys",
        GOV_KEYED_REFUSE,
        Some(1.1),
    ),
    // weir_bucket: parity with governor's direct check().
    row("weir_bucket_take/allow/c_abi", GOV_ALLOW, Some(1.1)),
    row("weir_bucket_take/allow/rust", GOV_ALLOW, None),
    row("weir_bucket_take/refuse/c_abi", GOV_REFUSE, Some(1.1)),
    row("weir_bucket_take/refuse/rust", GOV_REFUSE, None),
    // A take and its refund: two compare-and-swap loops, no target.
    row("weir_bucket_take+refund/allow/c_abi", CAS, None),
    // The locked types: each decision, with its settle, within 4 mutexes.
    row("weir_sliding_take/allow/c_abi_advancing", MUTEX, Some(4.0)),
    row("weir_sliding_take/allow/rust_advancing", MUTEX, None),
    row("weir_sliding_take/refuse/c_abi", MUTEX, Some(4.0)),
    row("weir_sliding_take/refuse/rust", MUTEX, None),
    row("weir_period_take/allow/c_abi", MUTEX, Some(4.0)),
    row("weir_period_take/allow/rust", MUTEX, None),
    row("weir_period_take/refuse/c_abi", MUTEX, Some(4.0)),
    row("weir_period_take/refuse/rust", MUTEX, None),
    row("weir_pool_take+give/allow/c_abi", MUTEX, Some(4.0)),
    row("weir_pool_take+give/allow/rust", MUTEX, None),
    row("weir_pool_take/refuse/c_abi", MUTEX, Some(4.0)),
    row("weir_pool_take/refuse/rust", MUTEX, None),
    row("weir_breaker_allow+pass/allow/c_abi", MUTEX, Some(4.0)),
    row("weir_breaker_allow+pass/allow/rust", MUTEX, None),
    row("weir_breaker_allow/refuse/c_abi", MUTEX, Some(4.0)),
    // With Envoy's limits on: the same budget.
    row(
        "weir_breaker_allow+pass/allow/c_abi_limits",
        MUTEX,
        Some(4.0),
    ),
    row("weir_breaker_allow/refuse/c_abi_limits", MUTEX, Some(4.0)),
    row("weir_breaker_allow/refuse/rust", MUTEX, None),
    row("weir_shedder_allow+pass/allow/c_abi", MUTEX, Some(4.0)),
    row("weir_shedder_allow+pass/allow/rust", MUTEX, None),
    row("weir_shedder_allow/refuse/c_abi", MUTEX, Some(4.0)),
    row("weir_shedder_allow/refuse/rust", MUTEX, None),
    // The by-value limiter: no lock at all, held to the same bound.
    row(
        "weir_limiter_try_consume_bucket/allow/c_abi",
        MUTEX,
        Some(4.0),
    ),
    row("weir_limiter_try_consume_bucket/allow/rust", MUTEX, None),
    row(
        "weir_limiter_try_consume_bucket/refuse/c_abi",
        MUTEX,
        Some(4.0),
    ),
    row("weir_limiter_try_consume_bucket/refuse/rust", MUTEX, None),
    row(
        "weir_limiter_try_consume_fixed_window/allow/c_abi",
        MUTEX,
        Some(4.0),
    ),
    row(
        "weir_limiter_try_consume_fixed_window/allow/rust",
        MUTEX,
        None,
    ),
    row(
        "weir_limiter_try_consume_fixed_window/refuse/c_abi",
        MUTEX,
        Some(4.0),
    ),
    row(
        "weir_limiter_try_consume_fixed_window/refuse/rust",
        MUTEX,
        None,
    ),
    row(
        "weir_limiter_try_consume_cooldown/allow/c_abi",
        MUTEX,
        Some(4.0),
    ),
    row("weir_limiter_try_consume_cooldown/allow/rust", MUTEX, None),
    row(
        "weir_limiter_try_consume+refund_bucket/allow/c_abi",
        MUTEX,
        None,
    ),
    row(
        "weir_limiter_try_consume_cooldown/refuse/c_abi",
        MUTEX,
        Some(4.0),
    ),
    row("weir_limiter_try_consume_cooldown/refuse/rust", MUTEX, None),
    // weir_gate (no target of its own; an enter+leave pair is two
    // compare-and-swap loops).
    row("weir_gate_enter+leave/allow/c_abi", CAS, None),
    row("weir_gate_enter+leave/allow/rust", CAS, None),
    row("weir_gate_enter/refuse/c_abi", CAS, None),
    row("weir_gate_enter/refuse/rust", CAS, None),
    // weir_budget (no target of its own; each call takes one short lock).
    row(
        "weir_budget_deposit+withdraw/allow/c_abi_tokens",
        MUTEX,
        None,
    ),
    row("weir_budget_withdraw/refuse/c_abi_tokens", MUTEX, None),
    row(
        "weir_budget_deposit+withdraw/allow/c_abi_percent",
        MUTEX,
        None,
    ),
    row("weir_budget_withdraw/refuse/c_abi_percent", MUTEX, None),
    row(
        "weir_budget_deposit+withdraw/allow/rust_percent",
        MUTEX,
        None,
    ),
    // weir_concurrency (no target of its own; one short lock a call, and
    // Gradient2's update on every leave).
    row("weir_concurrency_enter+leave/allow/c_abi", MUTEX, None),
    row("weir_concurrency_enter+leave/allow/rust", MUTEX, None),
    row("weir_concurrency_enter/refuse/c_abi", MUTEX, None),
    // weir_backoff: arithmetic only (no target; against the mutex floor).
    row("weir_backoff_delay/rigid/c_abi", MUTEX, None),
    row("weir_backoff_delay/rigid/rust", MUTEX, None),
    row("weir_backoff_delay/full/c_abi", MUTEX, None),
    row("weir_backoff_delay/full/rust", MUTEX, None),
    row("weir_backoff_delay/equal/c_abi", MUTEX, None),
    row("weir_backoff_delay/equal/rust", MUTEX, None),
    row("weir_backoff_delay/decorrelated/c_abi", MUTEX, None),
    row("weir_backoff_delay/decorrelated/rust", MUTEX, None),
    row("weir_backoff_delay/spread/c_abi", MUTEX, None),
    row("weir_backoff_delay/spread/rust", MUTEX, None),
    row("weir_backoff_delay/preset_null_policy/c_abi", MUTEX, None),
    // Two threads on one shared state.
    row(CAS_2T, CAS, None),
    row(MUTEX_2T, MUTEX, None),
    row(GOV_ALLOW_2T, GOV_ALLOW, None),
    row(GOV_REFUSE_2T, GOV_REFUSE, None),
    row(
        "weir_bucket_take/allow/c_abi_2threads",
        GOV_ALLOW_2T,
        Some(1.0),
    ),
    row(
        "weir_bucket_take/refuse/c_abi_2threads",
        GOV_REFUSE_2T,
        Some(1.0),
    ),
    row(
        "weir_rate_allow/allow/c_abi_2threads_advancing",
        CAS_2T,
        None,
    ),
    row("weir_rate_allow/refuse/c_abi_2threads", CAS_2T, None),
    row("weir_gate_enter+leave/allow/c_abi_2threads", CAS_2T, None),
    row("weir_pool_take+give/allow/c_abi_2threads", MUTEX_2T, None),
    row(
        "weir_breaker_allow+pass/allow/c_abi_2threads",
        MUTEX_2T,
        None,
    ),
];

const fn row(bench: &'static str, anchor: &'static str, target: Option<f64>) -> Row {
    Row {
        bench,
        anchor,
        target,
    }
}

fn main() {
    let started = SystemTime::now();
    let mut c = support::config().configure_from_args();

    anchors::benches(&mut c);
    rate::benches(&mut c);
    limiters::benches(&mut c);
    pool::benches(&mut c);
    adaptive::benches(&mut c);
    limiter::benches(&mut c);
    gate::benches(&mut c);
    budget::benches(&mut c);
    concurrency::benches(&mut c);
    backoff::benches(&mut c);

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
