//! The four properties of the gate over random call sequences.
//! A gate takes no time and has no call that fails, so two of the four
//! are stated for what it has: within its bound (never more than `limit`
//! held, never below zero, exactly the entries not yet left), readings are
//! pure; an error changes nothing holds vacuously (no call returns one),
//! and time going backwards cannot arise (no call takes a `now`).

#[path = "support/runner.rs"]
mod runner;

use proptest::prelude::*;
use weir_core::gate::Gate;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// `enter`, repeated.
    Enter(usize),
    Leave(usize),
    Held,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => prop_oneof![5 => Just(1usize), 1 => 2..64usize].prop_map(Op::Enter),
        3 => prop_oneof![5 => Just(1usize), 1 => 2..64usize].prop_map(Op::Leave),
        1 => Just(Op::Held),
    ]
}

fn limit() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 1..8i64,
        1 => prop_oneof![Just(0i64), Just(-1), Just(i64::MIN), Just(i64::MAX), Just(511), Just(512)],
    ]
}

fn apply(gate: &Gate, op: Op) -> Vec<i64> {
    match op {
        Op::Enter(n) => (0..n).map(|_| gate.enter() as i64).collect(),
        Op::Leave(n) => {
            (0..n).for_each(|_| gate.leave());
            Vec::new()
        }
        Op::Held => vec![gate.held()],
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(512), ..ProptestConfig::default() })]

    /// Across reconfigurations: an enter passes exactly when fewer than the
    /// ceiling in force are inside, so from each change on at most the
    /// larger of the count at the change and the new ceiling are inside,
    /// and the calls inside at the change stay.
    #[test]
    fn a_reconfiguration_admits_within_either_policy_s_bound(
        limit in limit(),
        steps in prop::collection::vec((op(), prop::option::weighted(0.15, limit())), 1..120),
    ) {
        let gate = Gate::new(limit);
        let mut ceiling = if limit <= 0 { i64::MAX } else { limit };
        let mut most = ceiling;
        let mut inside = 0i64;
        for (op, change) in steps {
            if let Some(next) = change {
                gate.reconfigure(next);
                prop_assert_eq!(gate.held(), inside);
                ceiling = if next <= 0 { i64::MAX } else { next };
                most = ceiling.max(inside);
            }
            match op {
                Op::Enter(n) => {
                    for _ in 0..n {
                        let room = inside < ceiling;
                        prop_assert_eq!(gate.enter(), room);
                        inside += i64::from(room);
                    }
                }
                Op::Leave(n) => {
                    for _ in 0..n {
                        gate.leave();
                        inside = (inside - 1).max(0);
                    }
                }
                Op::Held => prop_assert_eq!(gate.held(), inside),
            }
            prop_assert!(gate.held() <= most, "{} inside, at most {}", gate.held(), most);
        }
    }

    /// Within the bound: held is the model's count, in [0, limit] (no
    /// ceiling for a limit of zero or less), and an enter is refused only
    /// at the ceiling.
    #[test]
    fn within_the_bound(limit in limit(), ops in prop::collection::vec(op(), 1..80)) {
        let gate = Gate::new(limit);
        let ceiling = if limit <= 0 { i64::MAX } else { limit };
        let mut inside = 0i64;
        for op in ops {
            match op {
                Op::Enter(n) => {
                    for _ in 0..n {
                        let entered = gate.enter();
                        prop_assert_eq!(entered, inside < ceiling);
                        inside += entered as i64;
                    }
                }
                Op::Leave(n) => {
                    for _ in 0..n {
                        gate.leave();
                        inside = (inside - 1).max(0);
                    }
                }
                Op::Held => {}
            }
            prop_assert_eq!(gate.held(), inside);
            prop_assert!((0..=ceiling).contains(&gate.held()));
            prop_assert_eq!(gate.limit(), limit);
        }
    }

    /// Readings are pure: the trace without its `held` readings answers
    /// every enter alike.
    #[test]
    fn readings_are_pure(limit in limit(), ops in prop::collection::vec(op(), 1..80)) {
        let read = Gate::new(limit);
        let plain = Gate::new(limit);
        for op in ops {
            let answer = apply(&read, op);
            if !matches!(op, Op::Held) {
                prop_assert_eq!(answer, apply(&plain, op));
            }
        }
        prop_assert_eq!(read.held(), plain.held());
    }
}
