//! `weir_budget`: a deposit with a retry withdrawn (allow) and a withdrawal
//! from a spent budget (refuse), in each form, through the C ABI and the
//! Rust core. Its anchor is the uncontended mutex: each call takes one
//! short lock.

use std::hint::black_box;

use criterion::Criterion;
use weir::budget::{
    weir_budget, weir_budget_deposit, weir_budget_free, weir_budget_new, weir_budget_policy_preset,
    weir_budget_withdraw, WEIR_BUDGET_TOKENS,
};
use weir_core::budget::Budget;

use crate::support::{fresh, id, Owned, NOW};

type Deposit = extern "C" fn(*const weir_budget, i64);
type Withdraw = extern "C" fn(*const weir_budget, i64) -> bool;

/// The preset in the given form; `generous` gives every request a retry
/// (percent 1.0; ratio 1.0), `spent` none at all.
fn handle(tokens: bool, spent: bool) -> Owned<weir_budget> {
    let mut policy = weir_budget_policy_preset();
    if tokens {
        policy.form = WEIR_BUDGET_TOKENS;
        policy.token_ratio = 1.0;
    } else {
        policy.percent = if spent { 0.0 } else { 1.0 };
        policy.min_per_s = 0;
    }
    let budget = Owned::new(|out| weir_budget_new(&policy, NOW, out), weir_budget_free);
    if tokens && spent {
        for _ in 0..10 {
            weir_budget_withdraw(budget.get(), NOW);
        }
    }
    budget
}

pub fn benches(c: &mut Criterion) {
    let deposit: Deposit = black_box(weir_budget_deposit);
    let withdraw: Withdraw = black_box(weir_budget_withdraw);
    for (form, tokens) in [("tokens", true), ("percent", false)] {
        fresh(
            c,
            "weir_budget_deposit+withdraw",
            id("allow", &format!("c_abi_{form}")),
            || handle(tokens, false),
            |b| {
                deposit(b.get(), NOW);
                withdraw(b.get(), NOW)
            },
            |b| {
                deposit(b.get(), NOW);
                assert!(withdraw(b.get(), NOW))
            },
        );
        fresh(
            c,
            "weir_budget_withdraw",
            id("refuse", &format!("c_abi_{form}")),
            || handle(tokens, true),
            |b| withdraw(b.get(), NOW),
            |b| assert!(!withdraw(b.get(), NOW)),
        );
    }
    fresh(
        c,
        "weir_budget_deposit+withdraw",
        id("allow", "rust_percent"),
        || Budget::percent(10_000_000_000, 0, 1.0, NOW).unwrap(),
        |b| {
            b.deposit(NOW);
            b.withdraw(NOW)
        },
        |b| {
            b.deposit(NOW);
            assert!(b.withdraw(NOW))
        },
    );
}
