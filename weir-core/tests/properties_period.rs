//! The four properties of the period counter over random call sequences:
//! within its bound (at most `quota` admitted in each period
//! it opens, aligned or not), readings are pure, an error changes nothing
//! (a made counter has no call that can fail; the constructor's refusals
//! make nothing), and time going backwards admits exactly what the latest
//! `now` would have.

#[path = "support/runner.rs"]
mod runner;

#[path = "support/counter_ops.rs"]
mod counter_ops;
#[path = "support/instants.rs"]
mod instants;

use counter_ops::{op, Op};
use instants::span;
use proptest::prelude::*;
use weir_core::period::{Period, PeriodError, PeriodQuota};
use weir_core::time::NEVER;

fn quota() -> impl Strategy<Value = i64> {
    prop_oneof![4 => 1..6i64, 2 => 6..200i64, 1 => Just(i64::MAX)]
}

/// A period as the constructor takes it: under one nanosecond included.
fn period_ns() -> impl Strategy<Value = i64> {
    prop_oneof![6 => span(), 1 => prop_oneof![Just(0i64), Just(-1), Just(i64::MIN)]]
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    Took(Vec<PeriodQuota>),
    Read(i64),
}

fn apply(period: &mut Period, op: Op) -> Answer {
    match op {
        Op::Take(now, n) => Answer::Took((0..n).map(|_| period.take(now)).collect()),
        Op::Left(now) => Answer::Read(period.left(now)),
        Op::Next(now) => Answer::Read(period.next(now)),
    }
}

/// The end of the period that opens at `now`, computed apart from the
/// counter: the next multiple of the period when aligned, `now + period`
/// otherwise, saturating at the end of the clock (which never ends).
fn end_of_period_opened_at(now: i64, period: i64, align: bool) -> i64 {
    let rest = if align {
        period - now.rem_euclid(period)
    } else {
        period
    };
    now.saturating_add(rest)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    /// Within the bound: at most `quota` admitted in each period, where a
    /// period opens with the first take after the last one closed; UNDER,
    /// HIT and OVER say where the count stands; readings agree.
    #[test]
    fn within_the_bound(
        quota in quota(),
        period_ns in period_ns(),
        align in any::<bool>(),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut period = Period::new(quota, period_ns, align).unwrap();
        let length = period_ns.max(1);
        prop_assert_eq!(period.period(), length);
        let mut latest = i64::MIN;
        // The open period's end and its count, as the model keeps them.
        let mut open: Option<(i64, i64)> = None;
        for op in ops {
            match op {
                Op::Take(now, n) => {
                    latest = latest.max(now);
                    for _ in 0..n {
                        let (end, count) = match open {
                            Some((end, count)) if latest < end || end == NEVER => (end, count),
                            _ => (end_of_period_opened_at(latest, length, align), 0),
                        };
                        let answer = period.take(now);
                        let expected = if count >= quota {
                            PeriodQuota::Over
                        } else if count + 1 == quota {
                            PeriodQuota::Hit
                        } else {
                            PeriodQuota::Under
                        };
                        prop_assert_eq!(answer, expected, "take at {} (clock {})", now, latest);
                        open = Some((end, (count + 1).min(quota)));
                    }
                }
                Op::Left(now) => {
                    let left = period.left(now);
                    prop_assert!((0..=quota).contains(&left));
                }
                Op::Next(now) => prop_assert!(period.next(now) >= 0),
            }
        }
    }

    /// Readings are pure: the same trace with its readings removed gives
    /// every take the same answer.
    #[test]
    fn readings_are_pure(
        quota in quota(),
        period_ns in period_ns(),
        align in any::<bool>(),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut read = Period::new(quota, period_ns, align).unwrap();
        let mut plain = Period::new(quota, period_ns, align).unwrap();
        for op in ops {
            let answer = apply(&mut read, op);
            if !op.is_reading() {
                prop_assert_eq!(answer, apply(&mut plain, op), "{:?}", op);
            }
        }
    }

    /// Time going backwards admits exactly what the latest `now` would:
    /// the trace and the same trace with every `now` raised to the latest
    /// take's answer alike, readings included.
    #[test]
    fn time_going_backwards_is_the_latest_now(
        quota in quota(),
        period_ns in period_ns(),
        align in any::<bool>(),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut raw = Period::new(quota, period_ns, align).unwrap();
        let mut clocked = Period::new(quota, period_ns, align).unwrap();
        let mut latest = i64::MIN;
        for op in ops {
            let raised = op.raised(&mut latest);
            prop_assert_eq!(apply(&mut raw, op), apply(&mut clocked, raised), "{:?}", op);
        }
    }

    /// Across a reconfiguration: the counter answers as the model says (the
    /// open period keeps its end and its count, later periods take the new
    /// length and alignment), so every period admits at most its own quota
    /// and the one open at the change at most the larger of the two; a
    /// refused change changes nothing.
    #[test]
    fn a_reconfiguration_admits_within_either_policy_s_bound(
        quota in quota(),
        period_ns in period_ns(),
        align in any::<bool>(),
        quota2 in prop_oneof![4 => quota(), 1 => prop_oneof![Just(0i64), Just(-1)]],
        period2 in period_ns(),
        align2 in any::<bool>(),
        before in prop::collection::vec(op(), 0..60),
        after in prop::collection::vec(op(), 1..60),
    ) {
        let mut period = Period::new(quota, period_ns, align).unwrap();
        let mut latest = i64::MIN;
        // The open period's end and count, and every period's admissions.
        let mut open: Option<(i64, i64)> = None;
        let mut admitted: std::collections::BTreeMap<i64, i64> = Default::default();
        let mut policy = (quota, period_ns.max(1), align);
        let mut at_change = None;
        let mut opened_after = std::collections::BTreeSet::new();
        for (i, op) in before.iter().chain(after.iter()).enumerate() {
            if i == before.len() {
                let was = format!("{period:?}");
                match period.reconfigure(quota2, period2, align2) {
                    Ok(()) => {
                        policy = (quota2, period2.max(1), align2);
                        at_change = open.map(|(end, _)| end);
                    }
                    Err(_) => {
                        prop_assert!(quota2 <= 0);
                        prop_assert_eq!(format!("{period:?}"), was, "a refused change wrote");
                        return Ok(());
                    }
                }
            }
            let (q, length, align) = policy;
            match *op {
                Op::Take(now, n) => {
                    latest = latest.max(now);
                    for _ in 0..n {
                        let (end, count) = match open {
                            Some((end, count)) if latest < end || end == NEVER => (end, count),
                            _ => {
                                let end = end_of_period_opened_at(latest, length, align);
                                if i >= before.len() {
                                    opened_after.insert(end);
                                }
                                (end, 0)
                            }
                        };
                        let answer = period.take(now);
                        let expected = if count >= q {
                            PeriodQuota::Over
                        } else if count + 1 == q {
                            PeriodQuota::Hit
                        } else {
                            PeriodQuota::Under
                        };
                        prop_assert_eq!(answer, expected, "take at {} (clock {})", now, latest);
                        let count = if answer == PeriodQuota::Over { count } else { count + 1 };
                        if answer != PeriodQuota::Over {
                            *admitted.entry(end).or_default() += 1;
                        }
                        open = Some((end, count));
                    }
                }
                Op::Left(now) => {
                    let left = period.left(now);
                    prop_assert!((0..=q).contains(&left), "left {}", left);
                }
                Op::Next(now) => prop_assert!(period.next(now) >= 0),
            }
        }
        for (&end, &n) in &admitted {
            let cap = if Some(end) == at_change {
                quota.max(quota2)
            } else if opened_after.contains(&end) {
                quota2
            } else {
                quota
            };
            prop_assert!(n <= cap, "{} in the period ending {}", n, end);
        }
    }

    /// An error changes nothing: a made counter has no call that fails,
    /// and the constructor refuses a quota of zero or less, making nothing.
    #[test]
    fn constructors_refuse_and_make_nothing(quota in any::<i64>(), period_ns in any::<i64>(), align in any::<bool>()) {
        match Period::new(quota, period_ns, align) {
            Err(PeriodError::Zero) => prop_assert_eq!(quota, 0),
            Err(PeriodError::Negative) => prop_assert!(quota < 0),
            Ok(period) => {
                prop_assert!(quota > 0);
                prop_assert_eq!(period.left(i64::MIN), quota);
                prop_assert_eq!(period.next(i64::MAX), 0);
            }
        }
    }
}
