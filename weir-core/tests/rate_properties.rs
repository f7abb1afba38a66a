//! Properties of the rate word and the bloom array over random call
//! sequences: instants drawn at every phase of the 512 ns grid
//! (511 often), many calls at one instant, time going backwards, limits at
//! the constructor's extremes. What the header states is checked exactly:
//!
//! - within the bound: over any T ns of judged instants, at most
//!   burst + floor(T / interval) events, and a fresh window admits exactly
//!   burst;
//! - readings are pure: `next` inserted anywhere changes no later answer;
//! - an error (a negative `now`) changes nothing;
//! - time going backwards: a `now` earlier than the latest an allow used is
//!   judged exactly as that latest `now`.

mod grid;
#[path = "support/runner.rs"]
mod runner;

use std::sync::atomic::{AtomicU64, Ordering};

use grid::{instants, phase, start, step, Step};
use proptest::prelude::*;
use weir_core::bloom::{BloomLine, BloomShape};
use weir_core::rate::{self, RateLimit, MAX_NOW, MIN_WINDOW_NS};
use weir_core::time::NEVER;

/// A limit at the extremes the constructor accepts, the two that once went wrong among
/// them.
fn limit() -> impl Strategy<Value = RateLimit> {
    let burst = prop_oneof![
        Just(1i64),
        Just(2i64),
        Just(100i64),
        Just(101i64),
        Just(1023i64),
        1..=1023i64,
    ];
    let window = prop_oneof![
        3 => Just(MIN_WINDOW_NS),
        1 => Just(MIN_WINDOW_NS + 1),
        1 => Just(MIN_WINDOW_NS + 511),
        3 => MIN_WINDOW_NS..=2_000_000i64,
        1 => MIN_WINDOW_NS..=1i64 << 50,
    ];
    let made = (burst, window).prop_filter_map("accepted", |(burst, window)| {
        RateLimit::new(burst as f64 * 1e9 / window as f64, burst).ok()
    });
    prop_oneof![
        1 => Just(RateLimit::new(19e6, 1023).unwrap()),
        1 => Just(RateLimit::new(977_517.0, 100).unwrap()),
        6 => made,
    ]
}

/// The interval in units of 2^-32 ns.
fn interval(limit: &RateLimit) -> u128 {
    let (ns, frac, _) = limit.parts();
    (u128::from(ns) << 32) + u128::from(frac)
}

/// A limit, and the instants of a trace moving by eighths of its interval
/// or of its window.
fn trace() -> impl Strategy<Value = (RateLimit, Vec<i64>)> {
    (
        limit(),
        any::<bool>(),
        start(),
        prop::collection::vec(step(), 1..300),
    )
        .prop_map(|(limit, by_window, start, steps)| {
            let one = (interval(&limit) >> 32) as i64;
            let unit = if by_window {
                one.saturating_mul(i64::from(limit.burst()))
            } else {
                one
            };
            (limit, instants(unit.max(1), start, &steps))
        })
}

/// `now` on the word's axis (negative: none).
fn axis(now: i64) -> Option<i64> {
    (now >= 0).then(|| now.min(MAX_NOW))
}

/// Checks that admitted events at `judged` instants (non-decreasing) keep
/// to burst + floor(T / interval) in every span of T ns.
fn within_bound(limit: &RateLimit, judged: &[i64]) -> Result<(), TestCaseError> {
    let interval = interval(limit);
    let burst = u128::from(limit.burst());
    for j in 0..judged.len() {
        for i in 0..=j {
            // Events i..=j lie in a span of T = judged[j] − judged[i] + 1 ns.
            let span = (judged[j] - judged[i]) as u128 + 1;
            let most = burst + (span << 32) / interval;
            prop_assert!(
                (j - i + 1) as u128 <= most,
                "{} events in {span} ns, bound {most}",
                j - i + 1
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn within_the_bound_and_backwards_is_judged_as_the_latest((limit, nows) in trace()) {
        let word = AtomicU64::new(0);
        let mut latest: Option<i64> = None;
        let mut judged = Vec::new();
        for &now in &nows {
            let before = word.load(Ordering::Relaxed);
            let wait = rate::next(&word, &limit, now);
            let allowed = rate::allow(&word, &limit, now);
            let Some(at) = axis(now) else {
                prop_assert!(!allowed);
                prop_assert_eq!(wait, NEVER);
                prop_assert_eq!(word.load(Ordering::Relaxed), before);
                continue;
            };
            let at = latest.map_or(at, |latest| latest.max(at));
            // Judged as the latest `now`: the same answer and the same word.
            let copy = AtomicU64::new(before);
            prop_assert_eq!(rate::allow(&copy, &limit, at), allowed, "at {}", now);
            prop_assert_eq!(copy.load(Ordering::Relaxed), word.load(Ordering::Relaxed));
            // `next` names the first instant allow succeeds.
            prop_assert_eq!(wait == 0, allowed);
            if wait > 0 && wait < NEVER {
                let copy = AtomicU64::new(before);
                prop_assert!(!rate::allow(&copy, &limit, now + wait - 1));
                prop_assert!(rate::allow(&copy, &limit, now + wait));
            }
            if !allowed {
                prop_assert_eq!(word.load(Ordering::Relaxed), before, "a refusal wrote");
            }
            latest = Some(at);
            if allowed {
                judged.push(at);
            }
        }
        within_bound(&limit, &judged)?;
    }

    #[test]
    fn a_fresh_window_admits_exactly_its_burst(
        limit in limit(),
        at in start(),
        phase in phase(),
        extra in 1..2000usize,
    ) {
        let now = at - at.rem_euclid(512) + phase;
        prop_assume!(now >= 0);
        let word = AtomicU64::new(0);
        let burst = limit.burst() as usize;
        let admitted = (0..burst + extra).filter(|_| rate::allow(&word, &limit, now)).count();
        prop_assert_eq!(admitted, burst);
    }

    #[test]
    fn readings_and_errors_change_no_later_answer(
        (limit, nows) in trace(),
        inserted in prop::collection::vec((any::<bool>(), any::<i64>(), any::<prop::sample::Index>()), 0..40),
    ) {
        let plain = AtomicU64::new(0);
        let answers: Vec<bool> = nows.iter().map(|&now| rate::allow(&plain, &limit, now)).collect();
        // The same trace with readings at any `now` and failing calls (a
        // negative `now`) slipped in.
        let mut at: Vec<Vec<(bool, i64)>> = vec![Vec::new(); nows.len()];
        for (reading, now, index) in inserted {
            at[index.index(nows.len())].push((reading, now));
        }
        let word = AtomicU64::new(0);
        for (i, &now) in nows.iter().enumerate() {
            for &(reading, other) in &at[i] {
                if reading {
                    rate::next(&word, &limit, other);
                } else {
                    let negative = other.min(-1) | i64::MIN;
                    prop_assert!(!rate::allow(&word, &limit, negative));
                    prop_assert_eq!(rate::next(&word, &limit, negative), NEVER);
                }
            }
            prop_assert_eq!(rate::allow(&word, &limit, now), answers[i], "call {} at {}", i, now);
        }
        prop_assert_eq!(word.load(Ordering::Relaxed), plain.load(Ordering::Relaxed));
    }

    #[test]
    fn bloom_words_keep_the_bound_and_time_backwards_never_admits_more(
        (limit, nows) in trace(),
        size_log2 in 3..=6u32,
        hashes in 1..=8u32,
        keys in prop::collection::vec(0..6u8, 300),
        readings in prop::collection::vec(any::<i64>(), 300),
    ) {
        let Ok(shape) = BloomShape::new(size_log2, hashes, limit, 7, 11) else {
            return Ok(());
        };
        let words: Vec<BloomLine> = (0..shape.lines()).map(|_| BloomLine::fresh()).collect();
        let load = |lines: &[BloomLine]| -> Vec<u64> {
            lines.iter().flat_map(|line| &line.0).map(|w| w.load(Ordering::Relaxed)).collect()
        };
        let mut latest: Vec<Option<i64>> = vec![None; shape.words()];
        let mut judged: Vec<Vec<i64>> = vec![Vec::new(); shape.words()];
        let mut global: Option<i64> = None;
        for (i, &now) in nows.iter().enumerate() {
            let key = [keys[i]];
            let before = load(&words);
            // A reading at any `now` first: it must change nothing.
            shape.next(&words, readings[i], &key);
            prop_assert_eq!(&load(&words), &before);
            let allowed = shape.allow(&words, now, &key);
            let Some(at) = axis(now) else {
                prop_assert!(!allowed);
                prop_assert_eq!(&load(&words), &before);
                continue;
            };
            // Never more than the latest `now` would have admitted.
            if let Some(g) = global.filter(|&g| g > at) {
                let copy: Vec<BloomLine> = before
                    .chunks(8)
                    .map(|c| BloomLine(std::array::from_fn(|i| AtomicU64::new(c[i]))))
                    .collect();
                prop_assert!(!allowed || shape.allow(&copy, g, &key));
            }
            global = Some(global.map_or(at, |g| g.max(at)));
            // Each word keeps its own bound over its judged instants.
            let after = load(&words);
            for slot in shape.slots(&key) {
                let seen = latest[slot].map_or(at, |l| l.max(at));
                latest[slot] = Some(seen);
                if after[slot] != before[slot] {
                    judged[slot].push(seen);
                }
            }
            if hashes == 1 {
                prop_assert_eq!(allowed, after != before);
            }
        }
        for slot_judged in &judged {
            within_bound(&limit, slot_judged)?;
        }
    }

    #[test]
    fn a_bloom_key_alone_gets_exactly_burst_per_window(
        limit in limit(),
        hashes in 1..=8u32,
        at in start(),
        phase in phase(),
    ) {
        let now = at - at.rem_euclid(512) + phase;
        prop_assume!(now >= 0);
        let shape = BloomShape::new(4, hashes, limit, 3, 5).unwrap();
        let words: Vec<BloomLine> = (0..shape.lines()).map(|_| BloomLine::fresh()).collect();
        let burst = limit.burst() as usize;
        let admitted = (0..burst + 50).filter(|_| shape.allow(&words, now, b"alone")).count();
        prop_assert_eq!(admitted, burst);
    }
}

#[test]
fn the_constructor_refuses_what_the_word_cannot_hold() {
    // Rates up to 1e9/s: refused once the window is under 100 × 512 ns.
    for per_s in [1e9, 2e8, 2.1e7] {
        assert!(RateLimit::new(per_s, 1023).is_err(), "{per_s}");
    }
    assert!(RateLimit::new(1023.0 * 1e9 / MIN_WINDOW_NS as f64, 1023).is_ok());
}

#[test]
fn the_grid_generator_lands_on_its_phases() {
    let nows = instants(
        4096,
        1000,
        &[(Step::Ahead(3), 511), (Step::Stay, 0), (Step::Back(1), 1)],
    );
    assert_eq!(
        nows.iter().map(|n| n.rem_euclid(512)).collect::<Vec<_>>(),
        [511, 511, 1]
    );
}
