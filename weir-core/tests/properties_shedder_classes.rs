//! The shedder's criticality classes over random load and class mixes:
//! each decision follows the rule stated in the shedder's documentation,
//! an unclassed call and a CRITICAL one decide and change the same, and at
//! any moment a class is never refused while a lower class is admitted.
//! (Over the heap shedder: the storage tests run the others without alloc.)
#![cfg(feature = "alloc")]

#[path = "support/runner.rs"]
mod runner;

use proptest::prelude::*;
use weir_core::shedder::{Criticality, Shedder, ShedderPolicy, ShedderTicket};

const MS: i64 = 1_000_000;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// Ask at `now + dt` with this CPU; `None`: unclassed.
    Ask(i64, i32, Option<Criticality>),
    /// Settle the open ticket at this index (mod the count) as a pass
    /// `dt` later, or as a failure.
    Pass(usize, i64),
    Fail(usize),
}

fn class() -> impl Strategy<Value = Option<Criticality>> {
    prop_oneof![
        2 => Just(None),
        1 => Just(Some(Criticality::Sheddable)),
        1 => Just(Some(Criticality::SheddablePlus)),
        1 => Just(Some(Criticality::Critical)),
        1 => Just(Some(Criticality::CriticalPlus)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (
            prop_oneof![4 => Just(0i64), 3 => 0..30 * MS, 1 => -50 * MS..0],
            prop_oneof![1 => -10..0i32, 6 => 0..1000i32, 1 => 1000..1100i32],
            class()
        )
            .prop_map(|(dt, cpu, c)| Op::Ask(dt, cpu, c)),
        3 => (any::<usize>(), 0..80 * MS).prop_map(|(i, dt)| Op::Pass(i, dt)),
        1 => any::<usize>().prop_map(Op::Fail),
    ]
}

fn policy() -> impl Strategy<Value = ShedderPolicy> {
    (
        1..8i32,
        0..1000i32,
        0..3i64,
        prop_oneof![Just(0.1), Just(0.5), Just(1.0)],
    )
        .prop_map(|(size, cpu, cool, floor)| ShedderPolicy {
            size,
            window_ns: i64::from(size) * 50 * MS,
            cpu,
            latency_ns: 20 * MS,
            beta: 0.5,
            cool_ns: cool * 40 * MS,
            floor,
        })
}

/// Whether `class` would be refused, by the stated rule, given the reading
/// after the decision (its `hot`, `limit` and `average` are those the
/// decision used) and the count in flight before it.
fn refused_by_rule(
    class: Criticality,
    threshold: i32,
    cpu: i32,
    hot: bool,
    limit: f64,
    average: f64,
    flying: i64,
) -> bool {
    let cpu = cpu.clamp(0, 1000);
    let (warm, point) = match class {
        Criticality::CriticalPlus => (cpu >= threshold, limit * 1.25),
        Criticality::Critical => (hot, limit),
        Criticality::SheddablePlus => (hot || cpu >= threshold * 3 / 4, limit * 0.75),
        Criticality::Sheddable => (hot || cpu >= threshold / 2, limit * 0.5),
    };
    warm && average > point && flying as f64 > point
}

fn run(policy: ShedderPolicy, ops: Vec<Op>) {
    let mut shedder = Shedder::new(policy, 0).unwrap();
    let mut open: Vec<ShedderTicket> = Vec::new();
    let mut now = 0i64;
    for op in ops {
        match op {
            Op::Ask(dt, cpu, class) => {
                now += dt;
                // Every class asked at this same moment, each on a copy.
                let admitted: Vec<bool> = Criticality::ALL
                    .iter()
                    .map(|&c| shedder.clone().allow_class(now, cpu, c).is_some())
                    .collect();
                for low in 0..4 {
                    for high in low + 1..4 {
                        assert!(
                            admitted[high] || !admitted[low],
                            "{:?} refused while {:?} admitted",
                            Criticality::ALL[high],
                            Criticality::ALL[low]
                        );
                    }
                }
                // CRITICAL is the unclassed decision, and changes the same.
                let mut critical = shedder.clone();
                let a = critical.allow_class(now, cpu, Criticality::Critical);
                let before = shedder.flying();
                let mut unclassed = shedder.clone();
                let b = unclassed.allow(now, cpu);
                assert_eq!(a, b);
                assert_eq!(critical.stats(now), unclassed.stats(now));
                let ticket = match class {
                    None => shedder.allow(now, cpu),
                    Some(c) => shedder.allow_class(now, cpu, c),
                };
                let c = class.unwrap_or_default();
                let after = shedder.stats(now);
                let rule = refused_by_rule(
                    c,
                    policy.cpu,
                    cpu,
                    after.hot,
                    after.limit,
                    after.average,
                    before,
                );
                assert_eq!(ticket.is_none(), rule, "{c:?} at {now} cpu {cpu}");
                assert_eq!(ticket.is_some(), admitted[c as usize]);
                if let Some(t) = ticket {
                    assert_eq!(shedder.flying(), before + 1);
                    open.push(t);
                } else {
                    assert_eq!(shedder.flying(), before);
                }
            }
            Op::Pass(i, dt) if !open.is_empty() => {
                let mut t = open.swap_remove(i % open.len());
                shedder.pass(&mut t, now + dt).unwrap();
            }
            Op::Fail(i) if !open.is_empty() => {
                let mut t = open.swap_remove(i % open.len());
                shedder.fail(&mut t).unwrap();
            }
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(300), ..ProptestConfig::default() })]

    #[test]
    fn classes_follow_the_rule_in_order(policy in policy(), ops in proptest::collection::vec(op(), 0..300)) {
        run(policy, ops);
    }
}

/// Loads the shedder with `n` calls in flight and an average near `n`,
/// at a capacity of 4 calls (the assumed 20 ms over 5 ms buckets).
fn loaded(n: usize) -> (Shedder, Vec<ShedderTicket>) {
    let policy = ShedderPolicy {
        size: 4,
        window_ns: 20 * MS,
        cpu: 800,
        latency_ns: 20 * MS,
        beta: 0.0,
        cool_ns: 0,
        floor: 1.0,
    };
    let mut shedder = Shedder::new(policy, 0).unwrap();
    let mut open: Vec<ShedderTicket> = (0..=n).map(|_| shedder.allow(0, 0).unwrap()).collect();
    // One failure sets the average (beta 0) to the count left: n.
    let mut first = open.remove(0);
    shedder.fail(&mut first).unwrap();
    assert_eq!(shedder.stats(0).average, n as f64);
    assert_eq!(shedder.stats(0).limit, 4.0);
    (shedder, open)
}

#[test]
fn each_class_is_refused_at_its_stated_point() {
    use Criticality::*;
    let ask = |n: usize, cpu: i32, class: Criticality| {
        let (mut shedder, _open) = loaded(n);
        shedder.allow_class(0, cpu, class).is_some()
    };
    // 3 in flight, limit 4: over half of it (2) and three quarters (3)? 3 is
    // not over 3. So only SHEDDABLE goes, once the CPU reaches 400 (half of
    // the 800 threshold).
    assert!(ask(3, 399, Sheddable));
    assert!(!ask(3, 400, Sheddable));
    assert!(ask(3, 600, SheddablePlus));
    assert!(ask(3, 900, Critical));
    // 4 in flight: SHEDDABLE_PLUS from 600 (three quarters of 800).
    assert!(ask(4, 599, SheddablePlus));
    assert!(!ask(4, 600, SheddablePlus));
    assert!(ask(4, 999, Critical));
    // 5 in flight: CRITICAL only once hot (800); CRITICAL_PLUS holds on
    // until over 4 × 5/4 = 5.
    assert!(ask(5, 799, Critical));
    assert!(!ask(5, 800, Critical));
    assert!(ask(5, 800, CriticalPlus));
    // 6 in flight at 800: the limit is 4 × (200 / 200) = 4, so 6 > 5:
    // CRITICAL_PLUS refused too.
    assert!(!ask(6, 800, CriticalPlus));
}
