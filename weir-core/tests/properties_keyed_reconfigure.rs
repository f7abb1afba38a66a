//! The keyed table's reconfiguration ([`Keyed::reconfigure`]) over random
//! traces: keys deciding on their own words, limits changed between calls,
//! instants mostly rising with repeats (and, where said, steps back). What
//! the method's documentation states is checked:
//!
//! - one key, across any number of changes: GCRA admits' tokens over
//!   judged instants in [a, b] (each in ticks of the limit that judged it)
//!   at most (b − a) ticks plus the largest tolerance among those limits;
//!   rate admits at most 2 × the largest burst + floor(T / the shortest
//!   interval) in any T ns;
//! - one change at c, time rising: the new limit's admits in [c, b] keep
//!   the new limit's own bound, whatever the old limit left in the word;
//! - several keys with nothing overflowing: every decision is exactly that
//!   of a lone word of the key under the same sequence of limits, whether
//!   the table has free slots to spare (any instants, any changes) or keys
//!   replace each other's idle words (GCRA under any changes; rate while no
//!   limit's interval is longer than the shortest in force so far, the
//!   documented exception);
//! - a refused change (the other kind, another tick) changes nothing.

#[path = "support/limit_changes.rs"]
mod limit_changes;
#[path = "support/runner.rs"]
mod runner;

use limit_changes::{gcra_limit, gcra_parts, gcra_within, rate_limit, rate_parts, rate_within};
use proptest::prelude::*;
use weir_core::atomic::AtomicU64;
use weir_core::bloom::BloomLimit;
use weir_core::gcra::{self, GcraLimit};
use weir_core::keyed::{Decision, Keyed, KeyedError, KeyedShape, Overflow};
use weir_core::rate;

/// Limits of one kind, as the table takes them.
fn limits(gcra: bool) -> BoxedStrategy<Vec<BloomLimit>> {
    if gcra {
        prop::collection::vec(gcra_limit().prop_map(BloomLimit::Gcra), 1..4).boxed()
    } else {
        prop::collection::vec(rate_limit().prop_map(BloomLimit::Window), 1..4).boxed()
    }
}

/// One step of a trace: a call for a key at the next instant, or a change
/// to limit `i` of the trace's limits.
#[derive(Clone, Debug)]
enum Step {
    Call { key: u8, dt: i64 },
    Change(usize),
}

fn steps(keys: u8, back: bool) -> impl Strategy<Value = Vec<Step>> {
    let dt = if back {
        prop_oneof![
            3 => Just(0i64),
            6 => 0..2_000_000i64,
            1 => -1_000_000..0i64,
        ]
        .boxed()
    } else {
        prop_oneof![3 => Just(0i64), 7 => 0..2_000_000i64].boxed()
    };
    let step = prop_oneof![
        12 => (0..keys, dt).prop_map(|(key, dt)| Step::Call { key, dt }),
        1 => (0..4usize).prop_map(Step::Change),
    ];
    prop::collection::vec(step, 1..250)
}

/// A table of `buckets` buckets whose words start under `limit`.
fn table(buckets: u64, limit: BloomLimit) -> Keyed {
    Keyed::new(KeyedShape::new(buckets, limit, Overflow::Refuse, 3, 4).unwrap()).unwrap()
}

/// Each admit of a one-key trace: its instant and the limit that judged it.
fn run(table: &Keyed, limits: &[BloomLimit], steps: &[Step]) -> Vec<(i64, BloomLimit)> {
    let mut admits = Vec::new();
    let mut now: i64 = 1_000_000_000;
    for step in steps {
        match *step {
            Step::Call { dt, .. } => {
                now = (now + dt).max(0);
                let judge = *table.shape().limit();
                if table.allow(now, b"one") {
                    admits.push((now, judge));
                }
            }
            Step::Change(i) => table.reconfigure(limits[i % limits.len()]).unwrap(),
        }
    }
    admits
}

/// The admits with their judged instants: for rate words an earlier `now`
/// than the latest the word saw is judged as that latest (the word cannot
/// expire before it); GCRA words judge `now` as it is.
fn judged(admits: &[(i64, BloomLimit)], latest: bool) -> Vec<(i64, BloomLimit)> {
    let mut seen = i64::MIN;
    admits
        .iter()
        .map(|&(now, limit)| {
            seen = if latest { seen.max(now) } else { now };
            (seen, limit)
        })
        .collect()
}

/// One lone word per key, deciding under the limit it is given.
struct Lone(Vec<AtomicU64>);

impl Lone {
    fn new(keys: usize) -> Lone {
        Lone((0..keys).map(|_| AtomicU64::new(0)).collect())
    }

    fn allow(&self, key: u8, limit: &BloomLimit, now: i64) -> bool {
        let word = &self.0[usize::from(key)];
        match limit {
            BloomLimit::Gcra(limit) => gcra::allow(word, limit, now),
            BloomLimit::Window(limit) => rate::allow(word, limit, now),
        }
    }
}

/// Runs `steps` on `table` beside lone words, asserting that every call
/// that did not overflow is decided as the key's lone word decides it (the
/// lone word sees only those calls). A change to a limit `skip` refuses is
/// not made. Answers how many calls overflowed.
fn exactly_lone(
    table: &Keyed,
    limits: &[BloomLimit],
    steps: &[Step],
    keys: u8,
    mut skip: impl FnMut(&BloomLimit) -> bool,
) -> Result<u64, TestCaseError> {
    let lone = Lone::new(usize::from(keys));
    let mut limit = limits[0];
    let mut now: i64 = 1_000_000_000;
    let mut overflowed = 0;
    for step in steps {
        match *step {
            Step::Call { key, dt } => {
                now = (now + dt).max(0);
                match table.decide(now, &[key], 1) {
                    Decision::Overflowed(_) => overflowed += 1,
                    decided => {
                        let want = lone.allow(key, &limit, now);
                        prop_assert_eq!(
                            decided.allowed(),
                            want,
                            "key {} at {}: table {:?}, lone word {}",
                            key,
                            now,
                            decided,
                            want
                        );
                    }
                }
            }
            Step::Change(i) => {
                let next = limits[i % limits.len()];
                if !skip(&next) {
                    table.reconfigure(next).unwrap();
                    limit = next;
                }
            }
        }
    }
    Ok(overflowed)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn one_key_keeps_the_bound_across_any_changes(
        limits in any::<bool>().prop_flat_map(limits),
        steps in steps(1, true),
    ) {
        let t = table(4, limits[0]);
        let admits = run(&t, &limits, &steps);
        match limits[0] {
            BloomLimit::Gcra(_) => gcra_within(&judged(&admits, false))?,
            BloomLimit::Window(_) => rate_within(&judged(&admits, true), &limits)?,
        }
    }

    #[test]
    fn after_one_change_the_new_limit_keeps_its_own_bound(
        gcra in any::<bool>(),
        old_gcra in gcra_limit(),
        new_gcra in gcra_limit(),
        old_rate in rate_limit(),
        new_rate in rate_limit(),
        before in steps(1, false),
        after in steps(1, false),
    ) {
        let (old, new) = if gcra {
            (BloomLimit::Gcra(old_gcra), BloomLimit::Gcra(new_gcra))
        } else {
            (BloomLimit::Window(old_rate), BloomLimit::Window(new_rate))
        };
        let t = table(4, old);
        let calls = |steps: Vec<Step>| -> Vec<Step> {
            steps.into_iter().filter(|s| matches!(s, Step::Call { .. })).collect()
        };
        let mut steps = calls(before);
        let changed_at = steps.len();
        steps.push(Step::Change(1));
        steps.extend(calls(after));
        let admits = run(&t, &[old, new], &steps);
        // c: the instant of the first call after the change.
        let mut now: i64 = 1_000_000_000;
        let mut first_after = None;
        for (i, step) in steps.iter().enumerate() {
            if let Step::Call { dt, .. } = *step {
                now = (now + dt).max(0);
                if i > changed_at && first_after.is_none() {
                    first_after = Some(now);
                }
            }
        }
        let Some(c) = first_after else {
            return Ok(());
        };
        let after: Vec<i64> = judged(&admits, !gcra)
            .into_iter()
            .filter(|&(t, limit)| limit == new && t >= c)
            .map(|(t, _)| t)
            .collect();
        for &b in &after {
            let n = after.iter().filter(|&&t| t <= b).count() as u128;
            let span = (b - c) as u128 + 1;
            if gcra {
                let (per_token, tolerance) = gcra_parts(&new);
                prop_assert!(n * per_token <= span + tolerance, "{} tokens in [{}, {}]", n, c, b);
            } else {
                let (interval, burst) = rate_parts(&new);
                prop_assert!(n <= burst + (span << 32) / interval, "{} events in [{}, {}]", n, c, b);
            }
        }
    }

    /// Seven keys in 64 buckets: every bucket keeps a free slot, so no word
    /// is ever forgotten and nothing overflows, at any instants (steps back
    /// included) and under any changes, of either kind.
    #[test]
    fn several_keys_with_room_decide_as_lone_words(
        limits in any::<bool>().prop_flat_map(limits),
        steps in steps(7, true),
    ) {
        let t = table(64, limits[0]);
        let overflowed = exactly_lone(&t, &limits, &steps, 7, |_| false)?;
        prop_assert_eq!(overflowed, 0);
        prop_assert_eq!(t.counters().overflows(), 0);
    }

    /// Twelve keys in one bucket of 8 slots, time rising: keys take each
    /// other's idle words, and the calls that find no room overflow; every
    /// other call is its lone word's. GCRA words under any changes; rate
    /// words while no limit's interval is longer than the shortest one in
    /// force so far (a window forgotten at rest stays fresh, where a lone
    /// word's read under a slower limit could stand open again).
    #[test]
    fn keys_replacing_idle_words_decide_as_lone_words(
        limits in any::<bool>().prop_flat_map(limits),
        steps in steps(12, false),
    ) {
        let t = table(1, limits[0]);
        let mut shortest = match limits[0] {
            BloomLimit::Window(_) => rate_parts(&limits[0]).0,
            BloomLimit::Gcra(_) => 0,
        };
        exactly_lone(&t, &limits, &steps, 12, |next| match next {
            BloomLimit::Gcra(_) => false,
            BloomLimit::Window(_) => {
                let interval = rate_parts(next).0;
                if interval > shortest {
                    return true;
                }
                shortest = interval;
                false
            }
        })?;
    }

    #[test]
    fn a_refused_change_changes_nothing(
        gcra in gcra_limit(),
        rate in rate_limit(),
        steps in steps(3, true),
    ) {
        let gcra_table = table(1, BloomLimit::Gcra(gcra));
        let rate_table = table(1, BloomLimit::Window(rate));
        let twins = (table(1, BloomLimit::Gcra(gcra)), table(1, BloomLimit::Window(rate)));
        let fine = GcraLimit::new(1e9, 3).unwrap();
        let mut now = 0i64;
        for step in &steps {
            if let Step::Call { key, dt } = *step {
                now = (now + dt).max(0);
                prop_assert_eq!(gcra_table.reconfigure(rate), Err(KeyedError::KindChange));
                prop_assert_eq!(gcra_table.reconfigure(fine), Err(KeyedError::TickChange));
                prop_assert_eq!(rate_table.reconfigure(gcra), Err(KeyedError::KindChange));
                prop_assert_eq!(gcra_table.shape(), twins.0.shape());
                prop_assert_eq!(gcra_table.decide(now, &[key], 1), twins.0.decide(now, &[key], 1));
                prop_assert_eq!(rate_table.decide(now, &[key], 1), twins.1.decide(now, &[key], 1));
            }
        }
        prop_assert_eq!(gcra_table.occupied(), twins.0.occupied());
    }
}
