//! A retry budget reconfigured in place, over random call sequences
//! (`Budget::reconfigure`): across each change nothing admits more than the
//! policies' bounds allow for their stretches.
//!
//! - Tokens to tokens: the kept count is the old one held to the new
//!   `max_tokens`, and from the change on every withdrawal it grants is one
//!   a budget made with the new policy at the change (full) would grant on
//!   the same calls: its count never exceeds that budget's.
//! - Percent to percent: at every instant the balance is at most the new
//!   reserve, plus every deposit still alive, at the worth its own policy
//!   gave it, minus every withdrawal still alive, where "alive" is judged by
//!   the policy in force as if it had been in force when each call was made
//!   (a call that had aged out under an earlier policy stays out).
//!   The calls land on multiples of 1.6 s and every `ttl` is 1, 2, 4, 8 or
//!   16 s, so every slice of every grid holding a call holds it at its start
//!   and no slice mixes calls of two instants.
//! - A refused policy changes nothing; a change of form starts afresh.

use proptest::prelude::*;
use weir_core::budget::{Budget, BudgetError};

const SEC: i64 = 1_000_000_000;
const STEP: i64 = 1_600_000_000;

#[derive(Clone, Copy, Debug)]
enum Op {
    Deposit(u8),
    Withdraw(u8),
    /// Time moves on this many steps of 1.6 s.
    Wait(u8),
    /// A new percent policy: ttl index, min_per_s, percent index.
    Percent(u8, u8, u8),
    /// A new tokens policy: max_tokens, token_ratio index.
    Tokens(u16, u8),
    /// A refused policy.
    Refused(u8),
}

const TTLS: [i64; 5] = [SEC, 2 * SEC, 4 * SEC, 8 * SEC, 16 * SEC];
const PERCENTS: [f64; 7] = [0.0, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0];
const RATIOS: [f64; 4] = [0.001, 0.1, 0.5, 1.0];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1..6u8).prop_map(Op::Deposit),
        4 => (1..6u8).prop_map(Op::Withdraw),
        3 => (0..8u8).prop_map(Op::Wait),
        1 => (0..5u8, 0..4u8, 0..7u8).prop_map(|(t, m, p)| Op::Percent(t, m, p)),
        1 => (1..40u16, 0..4u8).prop_map(|(m, r)| Op::Tokens(m, r)),
        1 => (0..4u8).prop_map(Op::Refused),
    ]
}

/// The percent form's constants as the module's documentation gives them.
#[derive(Clone, Copy, Debug)]
struct Terms {
    ttl: i64,
    cost: i64,
    deposit: i64,
    reserve: i64,
}

fn terms(ttl: i64, min_per_s: i32, percent: f64) -> Terms {
    let (deposit, cost) = if percent == 0.0 {
        (0, 1)
    } else {
        (
            1000,
            ((1000.0 / percent) as i64).clamp(1, i64::from(i32::MAX)),
        )
    };
    Terms {
        ttl,
        cost,
        deposit,
        reserve: i64::from(min_per_s) * (ttl / SEC) * cost,
    }
}

/// A call the model remembers: when, and its worth in retries (a deposit:
/// its policy's deposit / cost; a withdrawal: minus one).
struct Call {
    at: i64,
    retries: f64,
    /// Aged out under a policy in force before: it stays out.
    gone: bool,
}

/// Whether the call is alive at `now` under `terms`' slices.
fn alive(call: &Call, terms: &Terms, now: i64) -> bool {
    let width = terms.ttl / 10;
    !call.gone && now / width - call.at / width < 10
}

/// The most the balance may be at `now` under `terms`, in its units.
fn ceiling(calls: &[Call], terms: &Terms, now: i64) -> f64 {
    let live: f64 = calls
        .iter()
        .filter(|c| alive(c, terms, now))
        .map(|c| c.retries)
        .sum();
    terms.reserve as f64 + live * terms.cost as f64
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn across_a_change_nothing_admits_more_than_the_policies_allow(
        ops in prop::collection::vec(op(), 1..160),
        start_tokens in any::<bool>(),
    ) {
        let mut now = 0i64;
        let mut budget = if start_tokens {
            Budget::tokens(10, 0.1).unwrap()
        } else {
            Budget::percent(8 * SEC, 1, 0.2, 0).unwrap()
        };
        // Percent: the terms in force and every call made under them.
        let mut percent = (!start_tokens).then(|| terms(8 * SEC, 1, 0.2));
        let mut calls: Vec<Call> = Vec::new();
        // Tokens: a budget made with the policy in force at the last change.
        let mut twin: Option<Budget> = start_tokens.then(|| Budget::tokens(10, 0.1).unwrap());
        for op in ops {
            match op {
                Op::Wait(n) => now += i64::from(n) * STEP,
                Op::Deposit(n) => {
                    for _ in 0..n {
                        budget.deposit(now);
                        if let Some(twin) = twin.as_mut() {
                            twin.deposit(now);
                        }
                        if let Some(t) = percent {
                            calls.push(Call { at: now, retries: t.deposit as f64 / t.cost as f64, gone: false });
                        }
                    }
                }
                Op::Withdraw(n) => {
                    for _ in 0..n {
                        let granted = budget.withdraw(now);
                        if let Some(twin) = twin.as_mut() {
                            let theirs = twin.withdraw(now);
                            prop_assert!(!granted || theirs, "granted where a new budget refuses");
                        }
                        if let (Some(t), true) = (percent, granted) {
                            prop_assert!(ceiling(&calls, &t, now) >= t.cost as f64 - 1e-6);
                            calls.push(Call { at: now, retries: -1.0, gone: false });
                        }
                    }
                }
                Op::Percent(ttl, min_per_s, p) => {
                    let (ttl, min_per_s, p) =
                        (TTLS[ttl as usize], i32::from(min_per_s), PERCENTS[p as usize]);
                    let to = Budget::percent(ttl, min_per_s, p, now).unwrap();
                    if percent.is_none() {
                        // A change of form starts afresh.
                        budget.reconfigure(to, now);
                        prop_assert_eq!(budget, to);
                        calls.clear();
                    } else {
                        budget.reconfigure(to, now);
                        let old = percent.unwrap();
                        for call in calls.iter_mut() {
                            call.gone = !alive(call, &old, now);
                        }
                    }
                    percent = Some(terms(ttl, min_per_s, p));
                    twin = None;
                }
                Op::Tokens(max, ratio) => {
                    let to = Budget::tokens(i32::from(max), RATIOS[ratio as usize]).unwrap();
                    let before = budget.tokens_at(now);
                    budget.reconfigure(to, now);
                    if percent.is_some() {
                        prop_assert_eq!(budget, to, "a change of form kept something");
                    } else {
                        prop_assert_eq!(budget.tokens_at(now), before.min(1000 * i64::from(max)));
                    }
                    percent = None;
                    calls.clear();
                    twin = Some(to);
                }
                Op::Refused(which) => {
                    // An error makes no budget, so nothing reaches the one in place.
                    let refused = match which {
                        0 => Budget::tokens(0, 0.1).map(|_| ()),
                        1 => Budget::tokens(10, f64::NAN).map(|_| ()),
                        2 => Budget::percent(0, 1, 0.2, now).map(|_| ()),
                        _ => Budget::percent(SEC, 1, -1.0, now).map(|_| ()),
                    };
                    prop_assert!(matches!(
                        refused,
                        Err(BudgetError::MaxTokens | BudgetError::TokenRatio | BudgetError::Ttl
                            | BudgetError::Percent)
                    ));
                }
            }
            if let Some(t) = percent {
                // The bound at this instant and at each later slice edge.
                for later in [now, now + t.ttl / 10, now + t.ttl / 2, now + t.ttl - 1, now + t.ttl] {
                    let balance = budget.tokens_at(later) as f64;
                    let most = ceiling(&calls, &t, later);
                    prop_assert!(
                        balance <= most + 1e-6 * most.abs() + 1e-6,
                        "balance {} over {} at {} (now {})", balance, most, later, now
                    );
                }
            }
            if let Some(twin) = twin.as_ref() {
                prop_assert!(budget.tokens_at(now) <= twin.tokens_at(now));
            }
        }
    }
}
