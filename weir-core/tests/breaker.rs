//! Properties of the breaker over random call sequences (many calls at one
//! instant, time going backwards, `now` at every 512 ns phase, the ends of
//! the clock) at extreme policies:
//!
//! - readings are pure: `ratio`, `tally` and `runs` at any `now`, inserted
//!   anywhere, change no later answer;
//! - an error changes nothing: a second settle and a forged ticket are
//!   refused, and every later answer is as if they had not been made;
//! - time going backwards admits no more than the latest `now` would;
//! - within the bound: the ratio stays in [0, 1), a refusal comes only with
//!   a positive standing throttle and within `probe_ns` of the last call let
//!   through, and only calls let through are counted, each once;
//! - across a reconfiguration in place (or into a store of another size):
//!   the tickets in flight settle as before, the tally at the change reads
//!   the same, a kept layout keeps every bucket and run (the readings are
//!   those of the breaker left alone), another layout holds the old sums in
//!   one bucket that ages out exactly one new window later, and every bound
//!   above holds after it under the new policy (its `probe_ns`).
#![cfg(feature = "alloc")]

mod timeline;

use proptest::prelude::*;
use timeline::Step;
use weir_core::breaker::{Breaker, BreakerPolicy, BreakerTally, BreakerTicket, BreakerTicketError};

const TAG: u32 = 7;

#[derive(Clone, Debug)]
enum Op {
    Allow {
        at: Step,
        roll: f64,
    },
    /// Settle the open ticket `pick` (mod how many are open).
    Pass {
        at: Step,
        pick: usize,
    },
    Fail {
        at: Step,
        pick: usize,
    },
    /// Settle again a ticket already settled: an error.
    Again {
        at: Step,
        pick: usize,
    },
    /// A ticket this breaker never handed out: an error.
    Forge {
        at: Step,
        serial: u64,
        other: bool,
    },
    /// A reading.
    Read {
        at: Step,
    },
}

#[derive(Clone, Debug)]
struct Case {
    sre: BreakerPolicy,
    start: i64,
    ops: Vec<Op>,
    /// A reconfiguration before the op at this index (mod the ops' count),
    /// to this policy, and into a store of its own size or in place.
    change: Option<(usize, BreakerPolicy, bool)>,
}

fn breaker_policy() -> impl Strategy<Value = BreakerPolicy> {
    (
        prop_oneof![Just(1.0), Just(1.1), Just(2.0), Just(1e300)],
        prop_oneof![Just(0.0), Just(0.4), Just(1e3)],
        prop_oneof![Just(0.0), Just(5.0), Just(1e300)],
        prop_oneof![Just(1i64), Just(1_000), Just(1_000_000_000), Just(i64::MAX)],
        prop_oneof![Just(-3i32), Just(1), Just(2), Just(40), Just(1024)],
        prop_oneof![
            Just(1i64),
            Just(511),
            Just(512),
            Just(1_000_000),
            Just(10_000_000_000),
            Just(i64::MAX)
        ],
    )
        .prop_map(
            |(floor, extra, protection, probe_ns, size, window_ns)| BreakerPolicy {
                k: floor + extra,
                floor,
                protection,
                probe_ns,
                size,
                window_ns,
                ..BreakerPolicy::PRESET
            },
        )
}

fn roll() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(0.999_999),
        0.0..1.0f64,
        Just(f64::NAN),
        Just(7.0)
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (breaker_policy(), timeline::start()).prop_flat_map(|(sre, start)| {
        let width = (sre.window_ns / i64::from(sre.size.max(1))).max(1);
        let scale = width.saturating_mul(2).min(1 << 40);
        let step = timeline::step(scale);
        let op = prop_oneof![
            6 => (step.clone(), roll()).prop_map(|(at, roll)| Op::Allow { at, roll }),
            2 => (step.clone(), any::<usize>()).prop_map(|(at, pick)| Op::Pass { at, pick }),
            4 => (step.clone(), any::<usize>()).prop_map(|(at, pick)| Op::Fail { at, pick }),
            1 => (step.clone(), any::<usize>()).prop_map(|(at, pick)| Op::Again { at, pick }),
            1 => (step.clone(), any::<u64>(), any::<bool>())
                .prop_map(|(at, serial, other)| Op::Forge { at, serial, other }),
            3 => step.prop_map(|at| Op::Read { at }),
        ];
        (Just(sre), Just(start), prop::collection::vec(op, 1..160)).prop_map(|(sre, start, ops)| {
            Case {
                sre,
                start,
                ops,
                change: None,
            }
        })
    })
}

/// A case with a reconfiguration at a random op.
fn changed_case() -> impl Strategy<Value = Case> {
    (case(), any::<usize>(), breaker_policy(), any::<bool>()).prop_map(|(case, at, sre, into)| {
        Case {
            change: Some((at % case.ops.len(), sre, into)),
            ..case
        }
    })
}

/// The buckets' layout a policy gives a window of `size` buckets.
fn width(sre: &BreakerPolicy, size: i32) -> i64 {
    (sre.window_ns / i64::from(size)).max(1)
}

/// Reconfigures `breaker` to `sre` at the latest `now` it has seen
/// (`latest`), in place or into a store of the new size, and checks what
/// the change keeps (see the file's header).
fn reconfigure(breaker: &mut Breaker, sre: BreakerPolicy, into: bool, latest: i64) {
    let was = breaker.clone();
    let before = format!("{breaker:?}");
    let tally = breaker.tally(latest);
    let unsettled = breaker.unsettled();
    // A refused policy changes nothing.
    let bad = BreakerPolicy {
        k: sre.floor / 2.0 - 1.0,
        ..sre
    };
    assert!(breaker.reconfigure(bad).is_err());
    assert!(breaker.reconfigure_into(bad, Vec::new()).is_err());
    assert_eq!(format!("{breaker:?}"), before, "a refused change wrote");
    let size = if into {
        sre.size.max(1)
    } else {
        breaker.policy().size
    };
    let kept = !into && width(&sre, size) == width(&breaker.policy(), size);
    if into {
        let moved = breaker
            .reconfigure_into(sre, vec![BreakerTally::default(); size as usize])
            .unwrap()
            .tagged(TAG);
        assert_eq!(format!("{breaker:?}"), before, "the original changed");
        *breaker = moved;
    } else {
        breaker.reconfigure(sre).unwrap();
    }
    assert_eq!(breaker.policy().size, size);
    assert_eq!(breaker.policy().window_ns, sre.window_ns);
    assert_eq!(breaker.unsettled(), unsettled);
    assert_eq!(breaker.tally(latest), tally, "the tally at the change");
    let span = width(&sre, size).saturating_mul(i64::from(size));
    for by in [1, span / 2, span - 1, span, span.saturating_add(1), 1 << 40] {
        let by = by.max(1);
        let Some(at) = latest.checked_add(by) else {
            continue;
        };
        if kept {
            assert_eq!(breaker.tally(at), was.tally(at), "kept window at {at}");
            assert_eq!(breaker.runs(at), was.runs(at), "kept runs at {at}");
        } else {
            // The old sums in the head bucket, opened at `latest`, aging
            // out together one new window later.
            let expected = if by < span {
                tally
            } else {
                BreakerTally::default()
            };
            assert_eq!(breaker.tally(at), expected, "resampled, {by} ns on");
        }
    }
}

/// What a call answered, for comparing two runs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    Allowed(Option<u64>),
    Settled(Result<(), BreakerTicketError>),
    /// A reading, compared bit for bit.
    Read(u64, BreakerTally, (i64, i64)),
}

fn read(breaker: &mut Breaker, now: i64) -> Answer {
    Answer::Read(
        breaker.ratio(now).to_bits(),
        breaker.tally(now),
        breaker.runs(now),
    )
}

/// Runs `case`, skipping the readings and/or the calls meant to fail, and
/// checks the bounds along the way. Returns every call's answer by its
/// index, skipped ones left out, then readings at the end.
fn run(case: &Case, skip_reads: bool, skip_errors: bool) -> Vec<(usize, Answer)> {
    let mut breaker = Breaker::new(case.sre, case.start).unwrap().tagged(TAG);
    let mut probe_ns = breaker.policy().probe_ns;
    let mut answers = Vec::new();
    let mut open: Vec<BreakerTicket> = Vec::new();
    let mut settled: Vec<BreakerTicket> = Vec::new();
    // The timeline's cursor moves with decisions and settles only, so that
    // skipping a reading or an error leaves every other call's now as it was.
    let mut cursor = case.start;
    // The latest now the breaker has seen, and when it last let one through.
    let mut latest = case.start;
    let mut last_through = case.start;
    let (mut through, mut counted) = (0i64, 0i64);
    for (index, op) in case.ops.iter().enumerate() {
        if let Some((at, sre, into)) = case.change {
            if at == index {
                reconfigure(&mut breaker, sre, into, latest);
                probe_ns = breaker.policy().probe_ns;
            }
        }
        match *op {
            Op::Allow { at, roll } => {
                let now = at.from(cursor);
                cursor = now;
                let effective = now.max(latest);
                timeline::no_more_than_at_latest(now, latest, |at| {
                    breaker.clone().allow(at, roll).is_some()
                });
                let standing = breaker.ratio(now);
                let ticket = breaker.allow(now, roll);
                latest = effective;
                match ticket {
                    Some(ticket) => {
                        assert_eq!((ticket.breaker, ticket.open), (TAG, true));
                        through += 1;
                        last_through = effective;
                        open.push(ticket);
                    }
                    None => {
                        assert!(standing > 0.0, "refused with a ratio of 0 at {now}");
                        // Time saturates: a gap across the whole clock
                        // reads as i64::MAX.
                        let quiet = effective.saturating_sub(last_through);
                        assert!(
                            quiet <= probe_ns,
                            "refused {quiet} ns after the last call let through"
                        );
                    }
                }
                answers.push((index, Answer::Allowed(ticket.map(|t| t.serial))));
            }
            Op::Pass { at, pick } | Op::Fail { at, pick } => {
                if open.is_empty() {
                    continue;
                }
                let now = at.from(cursor);
                cursor = now;
                latest = latest.max(now);
                let mut ticket = open.swap_remove(pick % open.len());
                let result = if matches!(op, Op::Pass { .. }) {
                    breaker.pass(&mut ticket, now)
                } else {
                    breaker.fail(&mut ticket, now)
                };
                assert_eq!(result, Ok(()));
                assert!(!ticket.open);
                counted += 1;
                settled.push(ticket);
                answers.push((index, Answer::Settled(result)));
            }
            Op::Again { at, pick } => {
                if skip_errors || settled.is_empty() {
                    continue;
                }
                let at = at.from(cursor);
                let mut ticket = settled[pick % settled.len()];
                let result = if pick % 2 == 0 {
                    breaker.pass(&mut ticket, at)
                } else {
                    breaker.fail(&mut ticket, at)
                };
                assert_eq!(result, Err(BreakerTicketError::Settled));
            }
            Op::Forge { at, serial, other } => {
                if skip_errors {
                    continue;
                }
                let at = at.from(cursor);
                // Another breaker's tag, or this one's with a serial never
                // handed out.
                let mut ticket = if other {
                    BreakerTicket {
                        breaker: TAG + 1,
                        serial,
                        open: true,
                    }
                } else {
                    BreakerTicket {
                        breaker: TAG,
                        serial: serial.max(through as u64 + 1),
                        open: true,
                    }
                };
                assert_eq!(
                    breaker.fail(&mut ticket, at),
                    Err(BreakerTicketError::Foreign)
                );
                assert!(ticket.open, "an error changes nothing, the ticket included");
            }
            Op::Read { at } => {
                if skip_reads {
                    continue;
                }
                let at = at.from(cursor);
                let ratio = breaker.ratio(at);
                assert!((0.0..1.0).contains(&ratio), "ratio {ratio} at {at}");
                let tally = breaker.tally(at);
                assert_eq!(tally.total, tally.success + tally.failure + tally.drop);
                assert!(tally.success + tally.failure <= counted);
            }
        }
        assert_eq!(breaker.unsettled(), open.len() as u64);
    }
    for now in [cursor, latest, cursor.saturating_add(1 << 40), i64::MAX] {
        answers.push((usize::MAX, read(&mut breaker, now)));
    }
    answers
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn readings_are_pure_and_errors_change_nothing(case in case()) {
        let all = run(&case, false, false);
        prop_assert_eq!(&all, &run(&case, true, false), "a reading changed a later answer");
        prop_assert_eq!(&all, &run(&case, false, true), "an error changed a later answer");
    }

    #[test]
    fn a_reconfiguration_keeps_what_it_says_and_every_bound_holds_after_it(case in changed_case()) {
        let all = run(&case, false, false);
        prop_assert_eq!(&all, &run(&case, true, false), "a reading changed a later answer");
        prop_assert_eq!(&all, &run(&case, false, true), "an error changed a later answer");
    }
}

/// A failing backend behind a breaker: `calls` calls 10 ms apart from
/// `from`, each let-through call failing 1 ms later; the tickets still open
/// at the end are left open.
fn failing(breaker: &mut Breaker, from: i64, calls: i64, open: &mut Vec<BreakerTicket>) {
    for i in 0..calls {
        let now = from + i * 10_000_000;
        if let Some(mut ticket) = breaker.allow(now, (i % 97) as f64 / 97.0) {
            if i % 5 == 0 {
                open.push(ticket);
            } else {
                breaker.fail(&mut ticket, now + 1_000_000).unwrap();
            }
        }
    }
}

#[test]
fn a_reconfiguration_keeps_the_window_when_the_layout_allows_and_resamples_it_otherwise() {
    let mut breaker = Breaker::new(BreakerPolicy::PRESET, 0).unwrap();
    let mut open = Vec::new();
    failing(&mut breaker, 0, 300, &mut open);
    let now = 3_000_000_000;
    let tally = breaker.tally(now);
    let ratio = breaker.ratio(now);
    assert!(ratio > 0.0 && !open.is_empty());

    // The same policy changes nothing; a refused one changes nothing.
    let before = format!("{breaker:?}");
    breaker.reconfigure(BreakerPolicy::PRESET).unwrap();
    assert_eq!(format!("{breaker:?}"), before);
    let bad = BreakerPolicy {
        floor: 0.5,
        ..BreakerPolicy::PRESET
    };
    assert!(breaker.reconfigure(bad).is_err());
    assert_eq!(format!("{breaker:?}"), before);

    // The same layout: the window kept bucket for bucket, read by the new
    // formula (more protection refuses less), and back again.
    let lenient = BreakerPolicy {
        protection: 200.0,
        ..BreakerPolicy::PRESET
    };
    breaker.reconfigure(lenient).unwrap();
    assert_eq!(breaker.tally(now), tally);
    assert!(breaker.ratio(now) < ratio);
    breaker.reconfigure(BreakerPolicy::PRESET).unwrap();
    assert_eq!(format!("{breaker:?}"), before);

    // Another layout: the sums carried in one bucket, aging out together
    // one new window later; the tickets in flight still settle.
    let wider = BreakerPolicy {
        window_ns: 20_000_000_000,
        ..BreakerPolicy::PRESET
    };
    breaker.reconfigure(wider).unwrap();
    assert_eq!(breaker.tally(now), tally);
    assert!(breaker.ratio(now) > 0.0);
    let latest = 2_990_000_000;
    assert_eq!(breaker.tally(latest + 19_000_000_000), tally);
    assert_eq!(
        breaker.tally(latest + 20_000_000_000),
        BreakerTally::default()
    );
    for ticket in &mut open {
        breaker.pass(ticket, now).unwrap();
    }
    assert_eq!(breaker.unsettled(), 0);

    // Into a store of another size: the same, and the original untouched.
    let mut again = Breaker::new(BreakerPolicy::PRESET, 0).unwrap();
    let mut open = Vec::new();
    failing(&mut again, 0, 300, &mut open);
    let kept = format!("{again:?}");
    let finer = BreakerPolicy {
        size: 100,
        ..BreakerPolicy::PRESET
    };
    let mut moved = again
        .reconfigure_into(finer, vec![BreakerTally::default(); 100])
        .unwrap();
    assert_eq!(format!("{again:?}"), kept);
    assert_eq!(moved.policy().size, 100);
    assert_eq!(moved.tally(now), tally);
    for ticket in &mut open {
        moved.fail(ticket, now).unwrap();
    }
    assert_eq!(moved.unsettled(), 0);
}
