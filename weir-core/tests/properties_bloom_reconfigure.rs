//! The bloom array's reconfiguration ([`Bloom::reconfigure`]) over random
//! traces: a few keys on one word each (hashes 1, so a key's admits are its
//! word's), limits changed between calls, instants mostly rising with
//! repeats and steps back. What the method's documentation states is
//! checked on every word:
//!
//! - GCRA words: over judged instants in [a, b], in any order and across
//!   any number of changes, the admits' tokens (each in ticks of the limit
//!   that judged it) sum to at most (b − a) ticks plus the largest
//!   tolerance among those limits;
//! - rate words: across any number of changes, at most 2 × the largest
//!   burst + floor(T / the shortest interval) admits in any T ns of judged
//!   instants;
//! - one change at c, time rising: the new limit's admits in [c, b] keep
//!   the new limit's own bound (burst' + floor((b − c + 1) × rate'), as
//!   ticks for GCRA), whatever the old limit left in the words;
//! - a refused change (the other kind, another tick) changes nothing.

#[path = "support/limit_changes.rs"]
mod limit_changes;
#[path = "support/runner.rs"]
mod runner;

use limit_changes::{gcra_limit, gcra_parts, gcra_within, rate_limit, rate_parts, rate_within};
use proptest::prelude::*;
use weir_core::bloom::{Bloom, BloomError, BloomLimit, BloomShape};
use weir_core::gcra::GcraLimit;

/// One step of a trace: a call for a key at the next instant, or a change
/// to limit `i` of the trace's limits.
#[derive(Clone, Debug)]
enum Step {
    Call { key: u8, dt: i64 },
    Change(usize),
}

fn steps(limits: usize, back: bool) -> impl Strategy<Value = Vec<Step>> {
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
        12 => (0..3u8, dt).prop_map(|(key, dt)| Step::Call { key, dt }),
        1 => (0..limits).prop_map(Step::Change),
    ];
    prop::collection::vec(step, 1..250)
}

/// Each admit of a trace: its key, its instant, and the limit that judged
/// it.
fn run(bloom: &Bloom, limits: &[BloomLimit], steps: &[Step]) -> Vec<(u8, i64, BloomLimit)> {
    let mut admits = Vec::new();
    let mut now: i64 = 1_000_000_000;
    for step in steps {
        match *step {
            Step::Call { key, dt } => {
                now = (now + dt).max(0);
                let judge = *bloom.shape().limit();
                if bloom.allow(now, &[key]) {
                    admits.push((key, now, judge));
                }
            }
            Step::Change(i) => bloom.reconfigure(limits[i]).unwrap(),
        }
    }
    admits
}

/// The admits of `key`, in call order, with their judged instants: for rate
/// words an earlier `now` than the latest the word saw is judged as that
/// latest (the word cannot expire before it); GCRA words judge `now` as it
/// is.
fn of_key(admits: &[(u8, i64, BloomLimit)], key: u8, latest: bool) -> Vec<(i64, BloomLimit)> {
    let mut seen = i64::MIN;
    admits
        .iter()
        .filter(|(k, _, _)| *k == key)
        .map(|&(_, now, limit)| {
            seen = if latest { seen.max(now) } else { now };
            (seen, limit)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn gcra_words_keep_the_bound_across_any_changes(
        limits in prop::collection::vec(gcra_limit(), 1..4),
        steps in steps(4, true),
    ) {
        let bloom = Bloom::new(BloomShape::new(6, 1, limits[0], 3, 4).unwrap()).unwrap();
        let limits: Vec<BloomLimit> = limits.into_iter().map(BloomLimit::Gcra).collect();
        let steps: Vec<Step> = steps
            .into_iter()
            .map(|s| match s {
                Step::Change(i) => Step::Change(i % limits.len()),
                call => call,
            })
            .collect();
        let admits = run(&bloom, &limits, &steps);
        for key in 0..3 {
            gcra_within(&of_key(&admits, key, false))?;
        }
    }

    #[test]
    fn rate_words_keep_the_bound_across_any_changes(
        limits in prop::collection::vec(rate_limit(), 1..4),
        steps in steps(4, true),
    ) {
        let bloom = Bloom::new(BloomShape::new(6, 1, limits[0], 3, 4).unwrap()).unwrap();
        let limits: Vec<BloomLimit> = limits.into_iter().map(BloomLimit::Window).collect();
        let steps: Vec<Step> = steps
            .into_iter()
            .map(|s| match s {
                Step::Change(i) => Step::Change(i % limits.len()),
                call => call,
            })
            .collect();
        let admits = run(&bloom, &limits, &steps);
        for key in 0..3 {
            rate_within(&of_key(&admits, key, true), &limits)?;
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
        let bloom = Bloom::new(BloomShape::new(6, 1, old, 3, 4).unwrap()).unwrap();
        let calls = |steps: Vec<Step>| -> Vec<Step> {
            steps.into_iter().filter(|s| matches!(s, Step::Call { .. })).collect()
        };
        let mut steps = calls(before);
        steps.push(Step::Change(1));
        steps.extend(calls(after));
        let admits = run(&bloom, &[old, new], &steps);
        // c: the instant of the first call after the change.
        let mut now: i64 = 1_000_000_000;
        let mut changed = false;
        let mut first_after = None;
        for step in &steps {
            match *step {
                Step::Change(_) => changed = true,
                Step::Call { dt, .. } => {
                    now = (now + dt).max(0);
                    if changed && first_after.is_none() {
                        first_after = Some(now);
                    }
                }
            }
        }
        let Some(c) = first_after else {
            return Ok(());
        };
        for key in 0..3u8 {
            let judged: Vec<i64> = of_key(&admits, key, true)
                .into_iter()
                .filter(|&(t, limit)| limit == new && t >= c)
                .map(|(t, _)| t)
                .collect();
            for &b in &judged {
                let n = judged.iter().filter(|&&t| t <= b).count() as u128;
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
    }

    #[test]
    fn a_refused_change_changes_nothing(
        gcra in gcra_limit(),
        rate in rate_limit(),
        steps in steps(1, true),
    ) {
        let gcra_bloom = Bloom::new(BloomShape::new(5, 2, gcra, 1, 2).unwrap()).unwrap();
        let rate_bloom = Bloom::new(BloomShape::new(5, 2, rate, 1, 2).unwrap()).unwrap();
        let twins = (
            Bloom::new(BloomShape::new(5, 2, gcra, 1, 2).unwrap()).unwrap(),
            Bloom::new(BloomShape::new(5, 2, rate, 1, 2).unwrap()).unwrap(),
        );
        let fine = GcraLimit::new(1e9, 3).unwrap();
        let mut now = 0i64;
        for step in &steps {
            if let Step::Call { key, dt } = *step {
                now = (now + dt).max(0);
                prop_assert_eq!(gcra_bloom.reconfigure(rate), Err(BloomError::KindChange));
                prop_assert_eq!(gcra_bloom.reconfigure(fine), Err(BloomError::TickChange));
                prop_assert_eq!(rate_bloom.reconfigure(gcra), Err(BloomError::KindChange));
                prop_assert_eq!(gcra_bloom.allow(now, &[key]), twins.0.allow(now, &[key]));
                prop_assert_eq!(rate_bloom.allow(now, &[key]), twins.1.allow(now, &[key]));
            }
        }
    }
}
