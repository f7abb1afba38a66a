//! Partitions of the adaptive limit: the calls in flight never exceed the
//! limit at the moment each entered, under every interleaving of enter and
//! leave (checked exhaustively), and over random mixes (properties); a
//! partition borrows only up to its cap and gives room back to its owner
//! first.
//!
//! Why an exhaustive walk of interleavings stands in for a model checker:
//! [`Partitioned`] is plain data, and every face that shares it between
//! threads (the C handle) holds one lock across each whole `enter` and
//! `leave`, so every execution is equivalent to some order of whole calls.
//! Walking every such order of a few threads' scripts covers every
//! execution of those scripts; there is no finer interleaving to miss.

#[path = "support/runner.rs"]
mod runner;

use proptest::prelude::*;
use weir_core::concurrency::{ConcurrencyPolicy, ConcurrencyTicket};
use weir_core::partitioned::{Partition, PartitionError, Partitioned};

const MS: i64 = 1_000_000;

fn fixed(limit: i32) -> ConcurrencyPolicy {
    ConcurrencyPolicy {
        initial_limit: limit,
        min_limit: limit,
        max_limit: limit,
        queue_size: 0,
        ..ConcurrencyPolicy::PRESET
    }
}

/// One admission checked against the rule's bounds: the calls in flight
/// after it fit the limit it entered under, the partition's fit its room
/// plus its cap, and the partitions' counts add up to the total.
fn check_enter(p: &mut Partitioned, i: usize, borrow: i64, now: i64) -> Option<ConcurrencyTicket> {
    let limit = p.limit();
    let room = p.room(i).unwrap();
    let entered = p.enter_partition(i, now).unwrap();
    if entered.is_some() {
        assert!(p.flying() <= limit, "{} in flight over {limit}", p.flying());
        assert!(p.flying_in(i).unwrap() <= room + borrow);
    }
    let sum: i64 = (0..p.partitions()).map(|j| p.flying_in(j).unwrap()).sum();
    assert_eq!(sum, p.flying());
    entered
}

#[test]
fn a_partition_borrows_to_its_cap_and_gives_room_back_first() {
    let parts = [
        Partition {
            share: 0.5,
            borrow: 3,
        },
        Partition {
            share: 0.5,
            borrow: 5,
        },
    ];
    let mut p = Partitioned::new(fixed(10), &parts).unwrap();
    assert_eq!((p.room(0), p.room(1)), (Ok(5), Ok(5)));
    // A warm-up sample, so the claim below lasts one 10 ms round trip.
    let t = p.enter_partition(0, 0).unwrap().unwrap();
    p.leave_partition(0, t, 10 * MS, false).unwrap();
    // Partition 1 alone: its own 5, then 5 borrowed from 0's idle room.
    let mut held: Vec<ConcurrencyTicket> = (0..10)
        .map(|_| p.enter_partition(1, 20 * MS).unwrap().unwrap())
        .collect();
    assert_eq!(p.flying(), 10);
    // Past its cap of 5: refused even with room left? There is none left
    // anyway; partition 0's owner is refused in its own room and claims.
    assert_eq!(p.enter_partition(1, 20 * MS), Ok(None));
    assert_eq!(p.enter_partition(0, 20 * MS), Ok(None));
    // A borrowed call comes back: the claim keeps partition 1 from
    // borrowing it again, and the owner takes it.
    p.leave_partition(1, held.pop().unwrap(), 21 * MS, false)
        .unwrap();
    assert_eq!(p.enter_partition(1, 22 * MS), Ok(None));
    assert!(p.enter_partition(0, 22 * MS).unwrap().is_some());
    assert_eq!(p.flying_in(0), Ok(1));
    // Partition 0 borrows at most 3 past its 5.
    let mut p = Partitioned::new(fixed(10), &parts).unwrap();
    let admitted = (0..10)
        .filter(|_| p.enter_partition(0, 0).unwrap().is_some())
        .count();
    assert_eq!(admitted, 8);
    // Its partner still has 2 of its own room: the rooms are each owner's.
    assert!(p.enter_partition(1, 0).unwrap().is_some());
    assert!(p.enter_partition(1, 0).unwrap().is_some());
    assert_eq!(p.enter_partition(1, 0), Ok(None));
    assert_eq!(p.flying(), 10);
}

#[test]
fn a_claim_lapses_after_one_round_trip() {
    let parts = [
        Partition {
            share: 0.5,
            borrow: 0,
        },
        Partition {
            share: 0.5,
            borrow: 4,
        },
    ];
    let mut p = Partitioned::new(fixed(4), &parts).unwrap();
    let t = p.enter_partition(1, 0).unwrap().unwrap();
    p.leave_partition(1, t, 10 * MS, false).unwrap();
    let held: Vec<_> = (0..4)
        .map(|_| p.enter_partition(1, 10 * MS).unwrap().unwrap())
        .collect();
    assert_eq!(p.enter_partition(0, 10 * MS), Ok(None)); // claims
    p.leave_partition(1, held[0], 20 * MS, false).unwrap();
    // The owner never comes back: 10 ms later its claim has lapsed.
    assert_eq!(p.enter_partition(1, 20 * MS), Ok(None));
    assert!(p.enter_partition(1, 20 * MS + 1).unwrap().is_some());
}

#[test]
fn bad_terms_and_unknown_partitions_are_errors_that_change_nothing() {
    let ok = Partition {
        share: 0.5,
        borrow: 1,
    };
    let bad = |parts: &[Partition]| Partitioned::new(fixed(4), parts).unwrap_err();
    assert_eq!(bad(&[]), PartitionError::Count);
    assert_eq!(bad(&[ok; 17]), PartitionError::Count);
    assert_eq!(
        bad(&[Partition {
            share: f64::NAN,
            ..ok
        }]),
        PartitionError::Share
    );
    assert_eq!(
        bad(&[Partition { share: -0.1, ..ok }]),
        PartitionError::Share
    );
    assert_eq!(bad(&[ok, ok, ok]), PartitionError::Share);
    assert_eq!(
        bad(&[Partition { borrow: -1, ..ok }]),
        PartitionError::Borrow
    );
    assert!(matches!(
        Partitioned::new(fixed(0), &[ok]),
        Err(PartitionError::Policy(_))
    ));
    // Thirds sum to 1 by rounding and own no more than the limit.
    let third = Partition {
        share: 1.0 / 3.0,
        borrow: 0,
    };
    let p = Partitioned::new(fixed(3), &[third; 3]).unwrap();
    assert_eq!((0..3).map(|i| p.room(i).unwrap()).sum::<i64>(), 3);
    let mut p = Partitioned::new(fixed(4), &[ok]).unwrap();
    let before = p;
    assert_eq!(p.enter_partition(1, 0), Err(PartitionError::Unknown));
    let t = ConcurrencyTicket {
        start: 0,
        inflight: 1,
    };
    assert_eq!(
        p.leave_partition(0, t, 1, false),
        Err(PartitionError::Empty)
    );
    assert_eq!(
        p.leave_partition(9, t, 1, false),
        Err(PartitionError::Unknown)
    );
    assert_eq!(p, before);
}

/// Every order of the threads' scripts, each thread entering its partition
/// and leaving (if it entered) twice, on a limit that moves with the
/// samples (1 to 3, queue 1, latencies that differ by thread).
#[test]
fn every_interleaving_of_enter_and_leave_stays_within_the_limit() {
    #[derive(Clone, Copy)]
    struct Thread {
        part: usize,
        step: usize,
        held: Option<ConcurrencyTicket>,
        rtt: i64,
        borrow: i64,
    }
    fn walk(p: Partitioned, threads: &mut [Thread], clock: i64, orders: &mut u64) {
        let mut moved = false;
        for t in 0..threads.len() {
            if threads[t].step == 4 {
                continue;
            }
            moved = true;
            let saved = threads[t];
            let mut q = p;
            let th = &mut threads[t];
            if th.step % 2 == 0 {
                th.held = check_enter(&mut q, th.part, th.borrow, clock);
            } else if let Some(ticket) = th.held.take() {
                q.leave_partition(th.part, ticket, clock + th.rtt, false)
                    .unwrap();
                assert!(q.limit() >= 1 && q.limit() <= 3);
            }
            th.step += 1;
            walk(q, threads, clock + MS, orders);
            threads[t] = saved;
        }
        if !moved {
            *orders += 1;
            assert_eq!(p.flying(), 0);
        }
    }
    let policy = ConcurrencyPolicy {
        initial_limit: 2,
        min_limit: 1,
        max_limit: 3,
        queue_size: 1,
        smoothing: 1.0,
        warmup: 1,
        ..ConcurrencyPolicy::PRESET
    };
    let shapes: [&[Partition]; 3] = [
        &[
            Partition {
                share: 0.5,
                borrow: 1,
            },
            Partition {
                share: 0.5,
                borrow: 0,
            },
        ],
        &[
            Partition {
                share: 1.0,
                borrow: 0,
            },
            Partition {
                share: 0.0,
                borrow: 3,
            },
        ],
        &[
            Partition {
                share: 0.34,
                borrow: 2,
            },
            Partition {
                share: 0.33,
                borrow: 1,
            },
        ],
    ];
    for parts in shapes {
        for assign in [[0, 0, 1], [0, 1, 1], [1, 0, 0]] {
            let p = Partitioned::new(policy, parts).unwrap();
            let mut threads: Vec<Thread> = (0..3)
                .map(|t| Thread {
                    part: assign[t],
                    step: 0,
                    held: None,
                    rtt: [MS, 7 * MS, 30 * MS][t],
                    borrow: parts[assign[t]].borrow,
                })
                .collect();
            let mut orders = 0;
            walk(p, &mut threads, 0, &mut orders);
            // 12! / (4!)^3 orders of three scripts of four calls each.
            assert_eq!(orders, 34_650);
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Enter(usize, i64),
    Leave(usize, i64, bool),
    /// An enter and a leave of the partition `k` past the last (some
    /// within the arrays, some past them).
    Stranger(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..4usize, 0..5 * MS).prop_map(|(i, dt)| Op::Enter(i, dt)),
        4 => (any::<usize>(), 0..50 * MS, any::<bool>()).prop_map(|(i, rtt, d)| Op::Leave(i, rtt, d)),
        1 => (0..20usize).prop_map(Op::Stranger),
    ]
}

fn terms() -> impl Strategy<Value = Vec<Partition>> {
    proptest::collection::vec((0..=100u32, 0..6i64), 1..5).prop_map(|v| {
        let total: u32 = v.iter().map(|&(s, _)| s).sum::<u32>().max(100);
        v.into_iter()
            .map(|(s, borrow)| Partition {
                share: f64::from(s) / f64::from(total),
                borrow,
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(400), ..ProptestConfig::default() })]

    #[test]
    fn partitions_never_exceed_the_limit_and_owners_come_first(
        parts in terms(),
        ops in proptest::collection::vec(op(), 0..300),
    ) {
        let policy = ConcurrencyPolicy {
            initial_limit: 8,
            min_limit: 2,
            max_limit: 16,
            queue_size: 2,
            warmup: 1,
            ..ConcurrencyPolicy::PRESET
        };
        let mut p = Partitioned::new(policy, &parts).unwrap();
        let mut held: Vec<(usize, ConcurrencyTicket)> = Vec::new();
        let mut now = 0;
        // The partition holding a claim, and when it was made.
        let mut claims: Vec<Option<i64>> = vec![None; parts.len()];
        for op in ops {
            match op {
                Op::Enter(i, dt) => {
                    now += dt;
                    let i = i % parts.len();
                    let room = p.room(i).unwrap();
                    let mine = p.flying_in(i).unwrap();
                    let hold = p.long_rtt() as i64 + 1;
                    let claimed = claims.iter().enumerate().any(|(j, c)| {
                        j != i && matches!(c, Some(at) if now - at < hold)
                    });
                    let limit = p.limit();
                    let total = p.flying();
                    let entered = check_enter(&mut p, i, parts[i].borrow, now);
                    let own = mine < room;
                    let expect = total < limit
                        && (own || (mine - room < parts[i].borrow && !claimed));
                    prop_assert_eq!(entered.is_some(), expect);
                    if let Some(t) = entered {
                        held.push((i, t));
                        claims[i] = None;
                    } else if own {
                        claims[i] = Some(now);
                    }
                }
                Op::Leave(at, rtt, dropped) if !held.is_empty() => {
                    let (i, t) = held.swap_remove(at % held.len());
                    p.leave_partition(i, t, t.start + rtt, dropped).unwrap();
                }
                Op::Stranger(k) => {
                    // In any state, a partition that does not exist is an
                    // error that changes nothing, entering or leaving.
                    let i = parts.len() + k;
                    let before = p;
                    prop_assert_eq!(p.enter_partition(i, now), Err(PartitionError::Unknown));
                    let t = ConcurrencyTicket { start: now, inflight: 1 };
                    prop_assert_eq!(
                        p.leave_partition(i, t, now + MS, false),
                        Err(PartitionError::Unknown)
                    );
                    prop_assert_eq!(p, before);
                }
                _ => {}
            }
        }
    }
}
