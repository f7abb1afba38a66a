//! Properties of the shedder over random call sequences (many calls at one
//! instant, time going backwards, `now` at every 512 ns phase, the ends of
//! the clock) at extreme policies:
//!
//! - readings are pure: `stats` at any `now`, inserted anywhere, changes no
//!   later answer (it used to forget a refusal once cooled);
//! - an error changes nothing: a second settle is refused, and every later
//!   answer is as if it had not been made;
//! - time going backwards admits no more than the latest `now` would;
//! - within the bound: capacity and limit are at least 1 and the limit at
//!   most the capacity; a refusal comes only while hot (the CPU at or over
//!   the threshold now, or within `cool_ns` of when it was) and with both
//!   the calls in flight and their moving average over the limit, and a
//!   call is admitted only if it is not both hot now and over the limit;
//! - across a change of policy in place (`Shedder::reconfigure`, or
//!   `reconfigure_into` stores of another size) both hold for the policy in
//!   force at each call, so nothing admits more than either policy allows
//!   for its stretch; the calls in flight are kept, and a refused policy
//!   changes nothing.
#![cfg(feature = "alloc")]

#[path = "support/runner.rs"]
mod runner;
mod timeline;

use proptest::prelude::*;
use timeline::Step;
use weir_core::shedder::{
    Settled, Shedder, ShedderFront, ShedderPolicy, ShedderStats, ShedderTicket, CPU_MAX,
};
use weir_core::window::WindowTotal;

#[derive(Clone, Debug)]
enum Op {
    Allow {
        at: Step,
        cpu: i32,
    },
    /// Settle the open ticket `pick` (mod how many are open).
    Pass {
        at: Step,
        pick: usize,
    },
    Fail {
        pick: usize,
    },
    /// Settle again a ticket already settled: an error.
    Again {
        at: Step,
        pick: usize,
    },
    /// A reading.
    Read {
        at: Step,
    },
    /// A new policy in place.
    Reconfigure {
        shed: ShedderPolicy,
    },
    /// A policy the shedder refuses: an error.
    Refused {
        cpu: i32,
    },
}

#[derive(Clone, Debug)]
struct Case {
    shed: ShedderPolicy,
    start: i64,
    ops: Vec<Op>,
}

fn shedder_policy() -> impl Strategy<Value = ShedderPolicy> {
    (
        prop_oneof![Just(-1i32), Just(1), Just(2), Just(50), Just(1024)],
        prop_oneof![
            Just(1i64),
            Just(511),
            Just(512),
            Just(5_000_000),
            Just(5_000_000_000),
            Just(i64::MAX)
        ],
        prop_oneof![Just(0i32), Just(900), Just(999)],
        prop_oneof![Just(1i64), Just(1_000), Just(1_000_000_000), Just(i64::MAX)],
        prop_oneof![Just(0.0), Just(0.5), Just(0.9), Just(0.999_999)],
        prop_oneof![Just(0i64), Just(1), Just(1_000_000), Just(i64::MAX)],
        prop_oneof![Just(1e-300), Just(0.1), Just(1.0)],
    )
        .prop_map(
            |(size, window_ns, cpu, latency_ns, beta, cool_ns, floor)| ShedderPolicy {
                size,
                window_ns,
                cpu,
                latency_ns,
                beta,
                cool_ns,
                floor,
            },
        )
}

fn case() -> impl Strategy<Value = Case> {
    (shedder_policy(), timeline::start()).prop_flat_map(|(shed, start)| {
        let width = (shed.window_ns / i64::from(shed.size.max(1))).max(1);
        let scale = width.saturating_mul(2).min(1 << 40);
        let step = timeline::step(scale);
        let threshold = shed.cpu;
        let cpu = prop_oneof![
            Just(-5i32),
            Just(0),
            Just((threshold - 1).max(0)),
            Just(threshold),
            Just(CPU_MAX),
            Just(5_000),
            any::<i32>()
        ];
        let op = prop_oneof![
            8 => (step.clone(), cpu).prop_map(|(at, cpu)| Op::Allow { at, cpu }),
            3 => (step.clone(), any::<usize>()).prop_map(|(at, pick)| Op::Pass { at, pick }),
            2 => any::<usize>().prop_map(|pick| Op::Fail { pick }),
            1 => (step.clone(), any::<usize>()).prop_map(|(at, pick)| Op::Again { at, pick }),
            3 => step.prop_map(|at| Op::Read { at }),
            1 => shedder_policy().prop_map(|shed| Op::Reconfigure { shed }),
            1 => prop_oneof![Just(-1i32), Just(1000), Just(i32::MAX)].prop_map(|cpu| Op::Refused { cpu }),
        ];
        (Just(shed), Just(start), prop::collection::vec(op, 1..200))
            .prop_map(|(shed, start, ops)| Case { shed, start, ops })
    })
}

/// What a call answered, for comparing two runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    Allowed(Option<i64>),
    Settled(Result<(), Settled>),
    Read(ShedderStats),
}

/// The limit for a decision at `cpu` from the capacity, as the header states
/// it: scaled by `(1000 - cpu) / (1000 - threshold)` held to [floor, 1],
/// and at least 1.
fn limit(shed: &ShedderPolicy, capacity: f64, cpu: i32) -> f64 {
    let factor = f64::from(CPU_MAX - cpu) / f64::from(CPU_MAX - shed.cpu);
    (capacity * factor.clamp(shed.floor, 1.0)).max(1.0)
}

fn check_stats(stats: &ShedderStats) {
    assert!(
        stats.capacity.is_finite() && stats.capacity >= 1.0,
        "{stats:?}"
    );
    assert!(
        stats.limit >= 1.0 && stats.limit <= stats.capacity,
        "{stats:?}"
    );
    assert!(
        stats.average.is_finite() && stats.average >= 0.0,
        "{stats:?}"
    );
    assert!(
        stats.flying >= 0 && (0..=CPU_MAX).contains(&stats.cpu),
        "{stats:?}"
    );
}

/// Runs `case`, skipping the readings and/or the calls meant to fail, and
/// checks the bounds along the way. Returns every call's answer by its
/// index, skipped ones left out, then readings at the end.
fn run(case: &Case, skip_reads: bool, skip_errors: bool) -> Vec<(usize, Answer)> {
    let mut shedder = Shedder::new(case.shed, case.start).unwrap();
    let mut shed = shedder.policy();
    let mut answers = Vec::new();
    let mut open: Vec<ShedderTicket> = Vec::new();
    let mut settled: Vec<ShedderTicket> = Vec::new();
    // The timeline's cursor moves with decisions and settles only, so that
    // skipping a reading or an error leaves every other call's now as it was.
    let mut cursor = case.start;
    let mut latest = case.start;
    // When the CPU was last at or over the threshold, as the shedder saw it.
    let mut hot_at: Option<i64> = None;
    for (index, op) in case.ops.iter().enumerate() {
        match *op {
            Op::Allow { at, cpu } => {
                let now = at.from(cursor);
                cursor = now;
                let effective = now.max(latest);
                timeline::no_more_than_at_latest(now, latest, |at| {
                    shedder.clone().allow(at, cpu).is_some()
                });
                let before = shedder.stats(now);
                let clamped = cpu.clamp(0, CPU_MAX);
                if clamped >= shed.cpu {
                    hot_at = Some(effective);
                }
                let ticket = shedder.allow(now, cpu);
                latest = effective;
                let limit_now = limit(&shed, before.capacity, clamped);
                if clamped >= shed.cpu
                    && before.flying as f64 > limit_now * (1.0 + 1e-9)
                    && before.average > limit_now * (1.0 + 1e-9)
                {
                    assert!(
                        ticket.is_none(),
                        "admitted over the limit {limit_now}: {before:?}"
                    );
                }
                if ticket.is_none() {
                    let warm = clamped >= shed.cpu
                        || hot_at.is_some_and(|at| effective.saturating_sub(at) < shed.cool_ns);
                    assert!(warm, "refused while cool at {now}");
                    let limit = limit(&shed, before.capacity, clamped);
                    assert!(
                        before.flying as f64 > limit && before.average > limit,
                        "refused under the limit {limit}: {before:?}"
                    );
                }
                if let Some(ticket) = ticket {
                    assert!(ticket.open && ticket.start == effective);
                    open.push(ticket);
                }
                answers.push((index, Answer::Allowed(ticket.map(|t| t.start))));
            }
            Op::Pass { at, pick } => {
                if open.is_empty() {
                    continue;
                }
                let now = at.from(cursor);
                cursor = now;
                latest = latest.max(now);
                let mut ticket = open.swap_remove(pick % open.len());
                let result = shedder.pass(&mut ticket, now);
                assert_eq!(result, Ok(()));
                settled.push(ticket);
                answers.push((index, Answer::Settled(result)));
            }
            Op::Fail { pick } => {
                if open.is_empty() {
                    continue;
                }
                let mut ticket = open.swap_remove(pick % open.len());
                let result = shedder.fail(&mut ticket);
                assert_eq!(result, Ok(()));
                settled.push(ticket);
                answers.push((index, Answer::Settled(result)));
            }
            Op::Again { at, pick } => {
                if skip_errors || settled.is_empty() {
                    continue;
                }
                let mut ticket = settled[pick % settled.len()];
                let result = if pick % 2 == 0 {
                    shedder.pass(&mut ticket, at.from(cursor))
                } else {
                    shedder.fail(&mut ticket)
                };
                assert_eq!(result, Err(Settled));
            }
            Op::Read { at } => {
                if skip_reads {
                    continue;
                }
                check_stats(&shedder.stats(at.from(cursor)));
            }
            Op::Reconfigure { shed: to } => {
                let flying = shedder.flying();
                let size = to.size.max(1) as usize;
                if size == shedder.policy().size as usize {
                    shedder.reconfigure(to).unwrap();
                } else {
                    let buckets = vec![WindowTotal::default(); size];
                    let fronts = vec![ShedderFront::default(); size];
                    shedder = shedder.reconfigure_into(to, buckets, fronts).unwrap();
                }
                shed = shedder.policy();
                assert_eq!(shed.size as usize, size);
                assert_eq!(
                    shedder.flying(),
                    flying,
                    "a change moved the calls in flight"
                );
                answers.push((index, Answer::Settled(Ok(()))));
            }
            Op::Refused { cpu } => {
                if skip_errors {
                    continue;
                }
                let was = format!("{shedder:?}");
                let to = ShedderPolicy { cpu, ..shed };
                assert!(shedder.reconfigure(to).is_err());
                assert!(shedder
                    .reconfigure_into(
                        to,
                        vec![WindowTotal::default(); 3],
                        vec![ShedderFront::default(); 3]
                    )
                    .is_err());
                assert_eq!(format!("{shedder:?}"), was, "a refused change wrote");
            }
        }
        assert_eq!(shedder.flying(), open.len() as i64);
    }
    for now in [cursor, latest, cursor.saturating_add(1 << 40), i64::MAX] {
        let stats = shedder.stats(now);
        check_stats(&stats);
        answers.push((usize::MAX, Answer::Read(stats)));
    }
    answers
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(runner::cases(256)))]

    #[test]
    fn readings_are_pure_and_errors_change_nothing(case in case()) {
        let all = run(&case, false, false);
        prop_assert_eq!(&all, &run(&case, true, false), "a reading changed a later answer");
        prop_assert_eq!(&all, &run(&case, false, true), "an error changed a later answer");
    }
}
