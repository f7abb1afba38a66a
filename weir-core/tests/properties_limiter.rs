//! The four properties of the embeddable limiter over random call
//! sequences, beside the snapshot properties in limiter.rs:
//! within its allowance, readings are pure, an error changes nothing, and
//! time going backwards never admits more than the latest `now` would have,
//! with the one documented exception pinned: a cooldown drained at an
//! earlier `now` arms its gate from that `now` (the 48-byte value keeps no
//! record of the latest `now`).

#[path = "support/runner.rs"]
mod runner;

#[path = "support/instants.rs"]
mod instants;

use instants::{now, span};
use proptest::prelude::*;
use weir_core::limiter::{Limiter, LimiterError};

#[derive(Clone, Copy, Debug)]
enum Variant {
    Bucket,
    Window,
    Cooldown,
}

#[derive(Clone, Copy, Debug)]
struct Setup {
    variant: Variant,
    capacity: u64,
    refill_amount: u64,
    period: i64,
    initial: u64,
    start: i64,
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        prop_oneof![
            Just(Variant::Bucket),
            Just(Variant::Window),
            Just(Variant::Cooldown)
        ],
        prop_oneof![4 => 1..8u64, 1 => Just(u64::MAX)],
        prop_oneof![4 => 1..4u64, 1 => Just(u64::MAX)],
        span(),
        any::<u64>(),
        prop_oneof![4 => -2048..2048i64, 1 => Just(i64::MIN)],
    )
        .prop_map(
            |(variant, capacity, refill_amount, period, initial, start)| Setup {
                variant,
                capacity,
                refill_amount,
                period,
                initial: initial % capacity.saturating_add(1).max(1),
                start,
            },
        )
}

/// A fresh limiter anchored at `start` (a cooldown with no gate armed).
fn build(s: Setup) -> Limiter {
    let initial = s.initial.min(s.capacity);
    match s.variant {
        Variant::Bucket => Limiter::bucket(
            s.capacity,
            s.refill_amount,
            s.period,
            s.start,
            initial,
            s.start,
        ),
        Variant::Window => Limiter::fixed_window(s.capacity, s.period, s.start, initial, s.start),
        Variant::Cooldown => Limiter::cooldown(s.capacity, s.period, s.start, initial, s.start),
    }
    .unwrap()
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Consume(i64, u64),
    Available(i64),
    Anchor(i64),
}

fn amount() -> impl Strategy<Value = u64> {
    prop_oneof![1 => Just(0u64), 6 => 1..4u64, 1 => Just(u64::MAX)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (now(), amount()).prop_map(|(now, amount)| Op::Consume(now, amount)),
        1 => now().prop_map(Op::Available),
        1 => now().prop_map(Op::Anchor),
    ]
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    Consumed(Result<(), LimiterError>),
    Units(u64),
    Anchor(Option<i64>),
}

fn apply(limiter: &mut Limiter, op: Op) -> Answer {
    match op {
        Op::Consume(now, amount) => Answer::Consumed(limiter.consume(now, amount)),
        Op::Available(now) => Answer::Units(limiter.available(now)),
        Op::Anchor(now) => Answer::Anchor(
            limiter
                .last_refill(now)
                .or(limiter.window_start(now))
                .or(limiter.cooldown_end())
                .ok(),
        ),
    }
}

/// Whole periods from `from` to `to`, as a count that cannot overflow.
fn periods(from: i64, to: i64, period: i64) -> u128 {
    if to <= from {
        0
    } else {
        (to as i128 - from as i128) as u128 / period as u128
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    /// Within the allowance, over any trace (time going back included): a
    /// bucket lets through at most its initial units plus one refill per
    /// whole interval from its anchor to the latest `now`; a window at most
    /// its initial units plus its capacity per later window; a cooldown at
    /// most its initial units plus its capacity per gate that opened, and
    /// gates open at least `cooldown` after the `now` that drained them.
    #[test]
    fn within_the_allowance(s in setup(), ops in prop::collection::vec(op(), 1..80)) {
        let mut limiter = build(s);
        let initial = s.initial.min(s.capacity) as u128;
        let mut through: u128 = 0;
        let mut latest = s.start;
        let mut drains: Vec<i64> = Vec::new();
        for op in ops {
            if let Op::Consume(now, amount) = op {
                if limiter.consume(now, amount).is_ok() {
                    through += amount as u128;
                    latest = latest.max(now);
                    if limiter.available(now) == 0 && matches!(s.variant, Variant::Cooldown) {
                        drains.push(now);
                    }
                }
            }
            let allowance = match s.variant {
                Variant::Bucket => initial + s.refill_amount as u128 * periods(s.start, latest, s.period),
                Variant::Window => initial + s.capacity as u128 * periods(s.start, latest, s.period),
                // The first batch (a cooldown built with no units and no
                // gate is full at once), then one per gate a drain armed.
                Variant::Cooldown => {
                    let first = if initial == 0 { s.capacity as u128 } else { initial };
                    first + s.capacity as u128 * drains.len() as u128
                }
            };
            prop_assert!(through <= allowance, "{:?}: {} through, allowance {}", op, through, allowance);
            prop_assert!(limiter.available(i64::MAX) <= s.capacity);
        }
    }

    /// Readings are pure: the same trace with its readings removed answers
    /// every consume alike and ends with the same value.
    #[test]
    fn readings_are_pure(s in setup(), ops in prop::collection::vec(op(), 1..80)) {
        let mut read = build(s);
        let mut plain = build(s);
        for op in ops {
            let answer = apply(&mut read, op);
            if matches!(op, Op::Consume(..)) {
                prop_assert_eq!(answer, apply(&mut plain, op), "{:?}", op);
            }
            prop_assert_eq!(read, plain);
        }
    }

    /// An error changes nothing: every refused consume (zero, too many, a
    /// deadline that would overflow) leaves the value as it was, so later
    /// answers are as if it had not been made.
    #[test]
    fn an_error_changes_nothing(s in setup(), ops in prop::collection::vec(op(), 1..80)) {
        let mut all = build(s);
        let mut ok_only = build(s);
        for op in ops {
            let before = all;
            let answer = apply(&mut all, op);
            if matches!(answer, Answer::Consumed(Err(_))) {
                prop_assert_eq!(all, before, "{:?} -> {:?}", op, answer);
            } else {
                prop_assert_eq!(&answer, &apply(&mut ok_only, op));
            }
            prop_assert_eq!(all, ok_only);
        }
    }

    /// Time going backwards never admits more than the latest `now` would
    /// have. Each consume at `now` is compared with the same consume on a
    /// copy at the latest committed `now`: it never succeeds where the copy
    /// fails, and the two values are then equal, with two exceptions only,
    /// both of a cooldown: it refused at the earlier `now` a release the
    /// latest would have granted (admitting less), or it drained at the
    /// earlier `now` and so armed its gate from it, exactly `now +
    /// cooldown_ns` (the documented exception: the gate opens sooner).
    #[test]
    fn time_going_backwards_admits_no_more(s in setup(), ops in prop::collection::vec(op(), 1..80)) {
        let mut limiter = build(s);
        let mut latest = s.start;
        for op in ops {
            let Op::Consume(now, amount) = op else { continue };
            let mut at_latest = limiter;
            let late = at_latest.consume(now.max(latest), amount);
            let early = limiter.consume(now, amount);
            let cooldown = matches!(s.variant, Variant::Cooldown);
            // The documented exception: a cooldown drained at an earlier
            // `now` arms its gate from that `now`, exactly `now + cooldown`
            // (and so may drain where the latest `now`'s deadline would
            // not fit in an i64).
            let drained_early = cooldown && early.is_ok() && now < latest && limiter.available(now) == 0;
            if drained_early {
                prop_assert_eq!(limiter.cooldown_end(), Ok(now + s.period));
                match late {
                    Ok(()) => {
                        prop_assert_eq!(at_latest.cooldown_end(), Ok(latest + s.period));
                        prop_assert_eq!(at_latest.available(i64::MAX), limiter.available(i64::MAX));
                    }
                    Err(error) => prop_assert_eq!(error, LimiterError::CooldownDeadlineOverflow),
                }
            } else {
                prop_assert!(early.is_err() || late.is_ok(), "{:?}: {:?} early, {:?} late", op, early, late);
                // Otherwise the values agree, except a cooldown that refused
                // at the earlier `now` a release the latest would have
                // granted: it admitted less.
                let refused_early = cooldown && early.is_err() && late.is_ok();
                if !refused_early {
                    prop_assert_eq!(limiter, at_latest, "{:?}", op);
                }
            }
            if early.is_ok() {
                latest = latest.max(now);
            }
        }
    }
}
