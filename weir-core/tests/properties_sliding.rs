//! The four properties of the sliding window over random call sequences:
//! within its bound (at most `quota` admitted in any stretch
//! `window` long, and never a refusal with room), readings are pure, an
//! error changes nothing (a made window has no call that can fail; the
//! constructor's refusals make nothing), and time going backwards admits
//! exactly what the latest `now` would have.

#[path = "support/runner.rs"]
mod runner;

#[path = "support/counter_ops.rs"]
mod counter_ops;
#[path = "support/instants.rs"]
mod instants;

use counter_ops::{op, Op};
use instants::span;
use proptest::prelude::*;
use weir_core::sliding::{Sliding, SlidingError};
use weir_core::time::{elapsed, NEVER};

fn quota() -> impl Strategy<Value = i64> {
    prop_oneof![4 => 1..6i64, 2 => 6..200i64, 1 => Just(1000i64)]
}

/// What one op answered: one bool per repeated take, or the reading.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    Took(Vec<bool>),
    Read(i64),
}

fn apply(sliding: &mut Sliding, op: Op) -> Answer {
    match op {
        Op::Take(now, n) => Answer::Took((0..n).map(|_| sliding.take(now)).collect()),
        Op::Left(now) => Answer::Read(sliding.left(now)),
        Op::Next(now) => Answer::Read(sliding.next(now)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    /// Within the bound: admitted events, stamped with the window's clock
    /// (the latest take's `now`), never number more than `quota` in any
    /// `window`-long stretch; a refusal always had `quota` in the window;
    /// the readings agree with the takes.
    #[test]
    fn within_the_bound(quota in quota(), window in span(), ops in prop::collection::vec(op(), 1..80)) {
        let mut sliding = Sliding::new(quota, window).unwrap();
        let q = quota as usize;
        let mut latest = i64::MIN;
        let mut admitted: Vec<i64> = Vec::new();
        for op in ops {
            match op {
                Op::Take(now, n) => {
                    latest = latest.max(now);
                    for _ in 0..n {
                        let inside = admitted.len() >= q
                            && elapsed(admitted[admitted.len() - q], latest) < window;
                        let took = sliding.take(now);
                        prop_assert_eq!(took, !inside, "take at {} (clock {})", now, latest);
                        if took {
                            admitted.push(latest);
                        }
                    }
                }
                Op::Left(now) => {
                    let left = sliding.left(now);
                    prop_assert!((0..=quota).contains(&left));
                }
                Op::Next(now) => {
                    let next = sliding.next(now);
                    prop_assert!(next >= 0);
                    prop_assert_eq!(next == 0, sliding.left(now) > 0);
                    // Waiting what it was told, from its own clock, a
                    // caller finds room (a clock behind the latest take's
                    // included); one instant less, none.
                    if next > 0 && next != NEVER {
                        prop_assert!(sliding.left(now + next) > 0, "next {} at {}", next, now);
                        prop_assert_eq!(sliding.left(now + next - 1), 0, "next {} at {}", next, now);
                    }
                }
            }
        }
        // No stretch of `window` holds more than `quota` admitted events.
        for (i, &start) in admitted.iter().enumerate() {
            if let Some(&later) = admitted.get(i + q) {
                prop_assert!(elapsed(start, later) >= window, "{} admitted in [{}, {}]", q + 1, start, later);
            }
        }
    }

    /// Across a reconfiguration (in place, within the store, or into a
    /// larger one; both answer alike): every take after it is admitted
    /// exactly when fewer than `quota'` admitted events, those the old
    /// window still counted at the change included, lie in the `window'`
    /// before it, so any stretch of `window'` with an admission after the
    /// change holds at most `quota'` of them. A refused change changes
    /// nothing.
    #[test]
    fn a_reconfiguration_admits_within_either_policy_s_bound(
        quota in quota(),
        window in span(),
        quota2 in prop_oneof![6 => quota(), 1 => Just(0i64), 1 => Just(-3i64)],
        window2 in prop_oneof![6 => span(), 1 => Just(0i64)],
        before in prop::collection::vec(op(), 0..60),
        after in prop::collection::vec(op(), 1..60),
    ) {
        let mut sliding = Sliding::new(quota, window).unwrap();
        let mut latest = i64::MIN;
        let mut admitted: Vec<i64> = Vec::new();
        let mut policy = (quota as usize, window);
        let mut twin: Option<Sliding> = None;
        for (i, op) in before.iter().chain(after.iter()).enumerate() {
            if i == before.len() {
                // Events fallen out of the old window stay gone.
                admitted.retain(|&t| elapsed(t, latest) < window);
                let was = format!("{sliding:?}");
                let into = (quota2 > 0).then(|| vec![0i64; quota2 as usize]);
                let moved = into.map(|stamps| sliding.reconfigure_into(stamps, window2));
                match sliding.reconfigure(quota2, window2) {
                    Ok(()) => {
                        prop_assert!(quota2 <= quota && window2 > 0);
                        policy = (quota2 as usize, window2);
                        twin = moved.map(Result::unwrap);
                    }
                    Err(SlidingError::TooLarge) if quota2 > quota && window2 > 0 => {
                        prop_assert_eq!(format!("{sliding:?}"), was.clone(), "a refused change wrote");
                        sliding = moved.unwrap().unwrap();
                        policy = (quota2 as usize, window2);
                    }
                    Err(_) => {
                        prop_assert!(quota2 <= 0 || window2 <= 0);
                        prop_assert_eq!(format!("{sliding:?}"), was, "a refused change wrote");
                        return Ok(());
                    }
                }
            }
            let (q, w) = policy;
            if let Op::Take(now, n) = *op {
                latest = latest.max(now);
                for _ in 0..n {
                    let inside = admitted.len() >= q
                        && elapsed(admitted[admitted.len() - q], latest) < w;
                    let took = sliding.take(now);
                    prop_assert_eq!(took, !inside, "take at {} (clock {})", now, latest);
                    if let Some(twin) = twin.as_mut() {
                        prop_assert_eq!(twin.take(now), took);
                    }
                    if took {
                        admitted.push(latest);
                    }
                }
            } else {
                let (left, next) = (sliding.left(latest), sliding.next(latest));
                prop_assert!((0..=q as i64).contains(&left), "left {}", left);
                if let Some(twin) = twin.as_ref() {
                    prop_assert_eq!((twin.left(latest), twin.next(latest)), (left, next));
                }
            }
        }
    }

    /// Readings are pure: the same trace with its readings removed gives
    /// every take the same answer.
    #[test]
    fn readings_are_pure(quota in quota(), window in span(), ops in prop::collection::vec(op(), 1..80)) {
        let mut read = Sliding::new(quota, window).unwrap();
        let mut plain = Sliding::new(quota, window).unwrap();
        for op in ops {
            let answer = apply(&mut read, op);
            if !op.is_reading() {
                prop_assert_eq!(answer, apply(&mut plain, op), "{:?}", op);
            }
        }
    }

    /// Time going backwards admits exactly what the latest `now` would:
    /// the trace and the same trace with every `now` raised to the latest
    /// take's answer alike, readings included (a wait names the same
    /// instant, counted from each caller's own `now`).
    #[test]
    fn time_going_backwards_is_the_latest_now(quota in quota(), window in span(), ops in prop::collection::vec(op(), 1..80)) {
        let mut raw = Sliding::new(quota, window).unwrap();
        let mut clocked = Sliding::new(quota, window).unwrap();
        let mut latest = i64::MIN;
        for op in ops {
            let raised = op.raised(&mut latest);
            match (op, raised) {
                (Op::Next(now), Op::Next(at)) => {
                    let (mine, theirs) = (raw.next(now), clocked.next(at));
                    if theirs == 0 || theirs == NEVER {
                        prop_assert_eq!(mine, theirs, "{:?}", op);
                    } else {
                        // The same instant; a wait too long to write is NEVER.
                        let wait = at.checked_add(theirs).and_then(|room| room.checked_sub(now));
                        prop_assert_eq!(mine, wait.unwrap_or(NEVER), "{:?}", op);
                    }
                }
                _ => prop_assert_eq!(apply(&mut raw, op), apply(&mut clocked, raised), "{:?}", op),
            }
        }
    }

    /// An error changes nothing: a made window has no call that fails, and
    /// the constructor refuses bad sizes (making nothing) with the error
    /// naming the argument, at every extreme.
    #[test]
    fn constructors_refuse_and_make_nothing(quota in any::<i64>(), window in any::<i64>()) {
        // Keep the quotas that would really be allocated small; the ones
        // past what a machine holds stay (they answer NoMemory or TooLarge).
        let quota = if (1..1 << 40).contains(&quota) { quota % 100_000 + 1 } else { quota };
        match Sliding::new(quota, window) {
            Err(SlidingError::Quota) => prop_assert!(quota <= 0),
            Err(SlidingError::Window) => prop_assert!(quota > 0 && window <= 0),
            Err(SlidingError::TooLarge | SlidingError::NoMemory) => prop_assert!(quota > 0 && window > 0),
            Ok(sliding) => {
                prop_assert!(quota > 0 && window > 0);
                prop_assert_eq!(sliding.left(0), quota);
                prop_assert_eq!(sliding.next(i64::MIN), 0);
            }
        }
    }
}

#[test]
fn the_end_of_the_clock_never_lets_a_stamp_fall_out() {
    let mut sliding = Sliding::new(1, 1).unwrap();
    assert!(sliding.take(i64::MAX));
    assert!(!sliding.take(i64::MAX));
    assert_eq!(sliding.next(i64::MIN), NEVER);
}
