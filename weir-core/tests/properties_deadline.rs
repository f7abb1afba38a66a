//! The four properties of the deadline. A deadline is a plain
//! value no call changes, so readings are pure by construction (checked
//! anyway) and no call returns an error; within its bound and time going
//! backwards are checked over random budgets and `now`s, the ends of the
//! clock and phases mod 512 included.

#[path = "support/runner.rs"]
mod runner;

#[path = "support/instants.rs"]
mod instants;

use instants::{now, span};
use proptest::prelude::*;
use weir_core::deadline::Deadline;

fn budget() -> impl Strategy<Value = i64> {
    prop_oneof![4 => span(), 1 => prop_oneof![Just(0i64), Just(-1), Just(i64::MIN)]]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(1024), ..ProptestConfig::default() })]

    /// Within the bound: what remains is in [0, budget], is the budget less
    /// the time since the start (none before it), and expired is exactly
    /// "nothing remains"; no budget never expires.
    #[test]
    fn within_the_bound(budget in budget(), start in now(), at in now()) {
        let deadline = Deadline::start(budget, start);
        match deadline.remaining(at) {
            None => {
                prop_assert!(budget <= 0);
                prop_assert!(!deadline.expired(at));
            }
            Some(left) => {
                prop_assert!(budget > 0);
                prop_assert!((0..=budget).contains(&left));
                let spent = (at as i128 - start as i128).max(0);
                prop_assert_eq!(left as i128, (budget as i128 - spent).max(0));
                prop_assert_eq!(deadline.expired(at), left == 0);
            }
        }
    }

    /// Readings are pure, and time going backwards never gives more time
    /// away: at an earlier `now` as much or more remains, and it is expired
    /// only if the later `now` is too.
    #[test]
    fn readings_are_pure_and_earlier_is_never_later(budget in budget(), start in now(), times in prop::collection::vec(now(), 1..16)) {
        let deadline = Deadline::start(budget, start);
        let copy = deadline;
        let answers: Vec<_> = times.iter().map(|&t| (deadline.remaining(t), deadline.expired(t))).collect();
        prop_assert_eq!(deadline, copy);
        let again: Vec<_> = times.iter().map(|&t| (deadline.remaining(t), deadline.expired(t))).collect();
        prop_assert_eq!(&answers, &again);
        let mut sorted = times.clone();
        sorted.sort_unstable();
        for pair in sorted.windows(2) {
            let (early, late) = (pair[0], pair[1]);
            prop_assert!(deadline.remaining(early) >= deadline.remaining(late));
            prop_assert!(!deadline.expired(early) || deadline.expired(late));
        }
    }
}
