//! Properties of the rolling window over random call sequences (many adds
//! at one instant, time going backwards, `now` at every 512 ns phase, the
//! ends of the clock) at extreme sizes and spans:
//!
//! - readings are pure: `total` and `each` at any `now`, inserted anywhere,
//!   change no later answer;
//! - an error changes nothing: a window is refused exactly when its span or
//!   size is out of range, and nothing else is made;
//! - time going backwards counts as no time passing: an add at an earlier
//!   `now` reads back as one at the latest;
//! - within the bound: a read visits `size` buckets (`size - 1` without the
//!   current one), their sum is the total, and no total counts more values
//!   than were added;
//! - across a reconfiguration at `now` (in place, or into a store of
//!   another size): a refused span changes nothing, the total at `now`
//!   reads the same, a kept layout (size and width) changes nothing at all,
//!   and another layout is exactly a fresh window opened at `now` plus the
//!   old total in its first bucket, counted while that bucket is inside the
//!   window (and not the current one, for a total without it).
#![cfg(feature = "alloc")]

mod timeline;

use proptest::prelude::*;
use timeline::Step;
use weir_core::window::{Window, WindowError, WindowTotal, MAX_SIZE};

#[derive(Clone, Debug)]
enum Op {
    Add {
        at: Step,
        value: i64,
    },
    /// A reading that one run makes and the other skips.
    Read {
        at: Step,
        current: bool,
    },
    /// A reading both runs make, at the cursor: its answer is compared.
    Probe {
        current: bool,
    },
}

#[derive(Clone, Debug)]
struct Case {
    size: i64,
    span: i64,
    start: i64,
    ops: Vec<Op>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![
            Just(-5i64),
            Just(0),
            Just(1),
            Just(2),
            Just(7),
            Just(64),
            Just(1024)
        ],
        prop_oneof![
            Just(1i64),
            Just(511),
            Just(512),
            Just(513),
            Just(1_000_000),
            Just(i64::MAX),
            1..=i64::MAX
        ],
        timeline::start(),
    )
        .prop_flat_map(|(size, span, start)| {
            let width = (span / size.max(1)).max(1);
            let step = timeline::step(width.saturating_mul(2).min(1 << 40));
            let value = prop_oneof![4 => -10..=10i64, 1 => any::<i64>()];
            let op = prop_oneof![
                6 => (step.clone(), value).prop_map(|(at, value)| Op::Add { at, value }),
                3 => (step, any::<bool>()).prop_map(|(at, current)| Op::Read { at, current }),
                2 => any::<bool>().prop_map(|current| Op::Probe { current }),
            ];
            (
                Just(size),
                Just(span),
                Just(start),
                prop::collection::vec(op, 1..200),
            )
                .prop_map(|(size, span, start, ops)| Case {
                    size,
                    span,
                    start,
                    ops,
                })
        })
}

/// The buckets at `now`, oldest first.
fn buckets(window: &Window<WindowTotal>, now: i64, current: bool) -> Vec<WindowTotal> {
    let mut seen = Vec::new();
    window.each(now, current, |bucket| seen.push(*bucket));
    seen
}

/// Checks a reading's bounds and returns it.
fn read(
    window: &Window<WindowTotal>,
    now: i64,
    current: bool,
    added: i64,
) -> (WindowTotal, Vec<WindowTotal>) {
    let total = window.total(now, current);
    let seen = buckets(window, now, current);
    assert_eq!(seen.len(), window.size() - usize::from(!current));
    let mut sum = WindowTotal::default();
    seen.iter().for_each(|bucket| sum.merge(bucket));
    assert_eq!(sum, total);
    assert!((0..=added).contains(&total.count), "{total:?} of {added}");
    (total, seen)
}

/// Runs `case`'s adds, readings skipped: the window and the latest `now`.
fn replay(case: &Case) -> (Window<WindowTotal>, i64) {
    let mut window = Window::<WindowTotal>::new(case.size, case.span, case.start).unwrap();
    let (mut cursor, mut latest) = (case.start, case.start);
    for op in &case.ops {
        if let Op::Add { at, value } = *op {
            cursor = at.from(cursor);
            window.add(cursor, value);
            latest = latest.max(cursor);
        }
    }
    (window, latest)
}

/// The total a window reconfigured at `at` to another layout reads at
/// `now`: `fresh`'s (a window opened at `at` with the same size and span,
/// given the same adds since), plus `carried` while the first bucket,
/// `[at, at + width)`, is inside the window at `now` (and is not the
/// current one, for a total without it).
fn resampled(
    fresh: &Window<WindowTotal>,
    carried: WindowTotal,
    at: i64,
    now: i64,
    current: bool,
) -> WindowTotal {
    let mut total = fresh.total(now, current);
    let index = (i128::from(now) - i128::from(at)) / i128::from(fresh.width());
    if index < fresh.size() as i128 && (current || index > 0) {
        total.merge(&carried);
    }
    total
}

fn run(case: &Case, skip_reads: bool) -> Vec<(WindowTotal, Vec<WindowTotal>)> {
    let mut window = Window::<WindowTotal>::new(case.size, case.span, case.start).unwrap();
    let mut answers = Vec::new();
    let (mut cursor, mut latest, mut added) = (case.start, case.start, 0i64);
    for op in &case.ops {
        match *op {
            Op::Add { at, value } => {
                let now = at.from(cursor);
                cursor = now;
                if now < latest {
                    // Backwards: no time passing, so the same as at the
                    // latest now.
                    let mut back = window.clone();
                    back.add(now, value);
                    let mut ahead = window.clone();
                    ahead.add(latest, value);
                    assert_eq!(buckets(&back, latest, true), buckets(&ahead, latest, true));
                }
                window.add(now, value);
                latest = latest.max(now);
                added += 1;
            }
            Op::Read { at, current } => {
                if !skip_reads {
                    read(&window, at.from(cursor), current, added);
                }
            }
            Op::Probe { current } => answers.push(read(&window, cursor, current, added)),
        }
    }
    for now in [cursor, latest, latest.saturating_add(1 << 40), i64::MAX] {
        answers.push(read(&window, now, true, added));
    }
    answers
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn readings_are_pure(case in case()) {
        prop_assert_eq!(run(&case, false), run(&case, true), "a reading changed a later answer");
    }

    #[test]
    fn a_window_is_refused_exactly_when_out_of_range(
        size in prop_oneof![any::<i64>(), Just(MAX_SIZE + 1), Just(i64::MAX), -3..=64i64],
        span in prop_oneof![any::<i64>(), Just(0i64), Just(-1), Just(1), Just(i64::MIN)],
        start in any::<i64>(),
    ) {
        let made = Window::<WindowTotal>::new(size, span, start);
        if span <= 0 {
            prop_assert_eq!(made.unwrap_err(), WindowError::Span);
        } else if size > MAX_SIZE {
            prop_assert_eq!(made.unwrap_err(), WindowError::TooLarge);
        } else if size <= 64 {
            let window = made.unwrap();
            prop_assert_eq!(window.size() as i64, size.max(1));
            prop_assert_eq!(window.total(start, true), WindowTotal::default());
        }
    }

    #[test]
    fn a_reconfiguration_keeps_the_total_and_resamples_exactly(
        case in case(),
        span2 in prop_oneof![Just(0i64), Just(-1), Just(1), Just(511), Just(4096), Just(1_000_000), 1..=1i64 << 41, Just(i64::MAX)],
        size2 in prop_oneof![Just(1usize), Just(2), Just(7), Just(64)],
        into in any::<bool>(),
        wait in prop_oneof![Just(0i64), 0..1i64 << 20],
        after in prop::collection::vec((prop_oneof![Just(0i64), 0..1i64 << 22, 0..1i64 << 42], -10..=10i64), 0..40),
    ) {
        let (mut window, latest) = replay(&case);
        let Some(at) = latest.checked_add(wait) else { return Ok(()); };
        let before = format!("{window:?}");
        let carried = window.total(at, true);
        if span2 <= 0 {
            prop_assert_eq!(window.reconfigure(span2, at), Err(WindowError::Span));
            prop_assert!(window.reconfigure_into(vec![WindowTotal::default(); size2], span2, at).is_err());
            prop_assert_eq!(&format!("{window:?}"), &before, "a refused change wrote");
            return Ok(());
        }
        let alone = window.clone();
        let size = if into { size2 } else { window.size() };
        let kept = !into && (span2 / size as i64).max(1) == window.width();
        if into {
            let moved = window.reconfigure_into(vec![WindowTotal::default(); size2], span2, at).unwrap();
            prop_assert_eq!(&format!("{window:?}"), &before, "the original changed");
            window = moved;
        } else {
            window.reconfigure(span2, at).unwrap();
        }
        prop_assert_eq!(window.total(at, true), carried, "the total at the change");
        if kept {
            prop_assert_eq!(format!("{window:?}"), before, "a kept layout changed");
        }
        // The twin: the window left alone (a kept layout) or a fresh one
        // opened at the change (another layout).
        let mut twin = if kept { alone } else { Window::new(size as i64, span2, at).unwrap() };
        let mut now = at;
        for (step, value) in after {
            let Some(next) = now.checked_add(step) else { break; };
            now = next;
            window.add(now, value);
            twin.add(now, value);
            let width = window.width();
            for probe in [0, 1, width - 1, width, width.saturating_mul(size as i64), 1 << 42] {
                let Some(read) = now.checked_add(probe) else { continue; };
                for current in [true, false] {
                    let expected = if kept {
                        twin.total(read, current)
                    } else {
                        resampled(&twin, carried, at, read, current)
                    };
                    let total = window.total(read, current);
                    prop_assert_eq!(total.count, expected.count, "at {} (from {}), current {}", read, at, current);
                    // Sums saturate, in bucket order: compared where none can.
                    if carried.sum.unsigned_abs() < 1 << 62 {
                        prop_assert_eq!(total.sum, expected.sum, "at {} (from {}), current {}", read, at, current);
                    }
                }
            }
        }
    }
}
