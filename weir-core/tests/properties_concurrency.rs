//! An adaptive concurrency limit reconfigured in place, over random call
//! sequences (`Concurrency::reconfigure`, on a plain limit or through a
//! partitioned one): across each change nothing admits more than the
//! policies allow for their stretches.
//!
//! - A call enters only while fewer than `⌊limit⌋` are in flight, and the
//!   limit stays within the policy in force: so from a change on the calls
//!   in flight never exceed the larger of their count at the change and the
//!   new `max_limit`.
//! - A change keeps the limit reached, held to the new bounds, the calls in
//!   flight (and each partition's), and the latency average.
//! - A refused policy changes nothing.

use proptest::prelude::*;
use weir_core::concurrency::{Concurrency, ConcurrencyPolicy, ConcurrencyTicket};
use weir_core::partitioned::{Partition, Partitioned};

#[derive(Clone, Copy, Debug)]
enum Op {
    /// A call of partition `part % 2` (plain: of the limit) enters.
    Enter(u8),
    /// The call `pick` (mod how many are in flight) leaves after `rtt` ns.
    Leave(usize, u32),
    Reconfigure(ConcurrencyPolicy),
    Refused(ConcurrencyPolicy),
}

fn policy() -> impl Strategy<Value = ConcurrencyPolicy> {
    (1..40i32, 0..80i32, 0..4i32, 0..3usize, 1..30i32).prop_map(
        |(min_limit, span, queue_size, smoothing, warmup)| ConcurrencyPolicy {
            initial_limit: min_limit + span / 2,
            min_limit,
            max_limit: min_limit + span,
            queue_size: queue_size.min(min_limit + span),
            smoothing: [0.2, 0.5, 1.0][smoothing],
            tolerance: 1.5,
            long_window: 1 + warmup * 3,
            warmup,
        },
    )
}

fn refused() -> impl Strategy<Value = ConcurrencyPolicy> {
    policy().prop_flat_map(|p| {
        prop_oneof![
            Just(ConcurrencyPolicy { min_limit: 0, ..p }),
            Just(ConcurrencyPolicy {
                max_limit: p.min_limit - 1,
                ..p
            }),
            Just(ConcurrencyPolicy {
                smoothing: f64::NAN,
                ..p
            }),
            Just(ConcurrencyPolicy {
                tolerance: 0.5,
                ..p
            }),
            Just(ConcurrencyPolicy { warmup: 0, ..p }),
        ]
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any::<u8>().prop_map(Op::Enter),
        5 => (any::<usize>(), 0..50_000_000u32).prop_map(|(pick, rtt)| Op::Leave(pick, rtt)),
        1 => policy().prop_map(Op::Reconfigure),
        1 => refused().prop_map(Op::Refused),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn across_a_change_nothing_admits_more_than_the_policies_allow(
        first in policy(),
        partitioned in any::<bool>(),
        ops in prop::collection::vec(op(), 1..300),
    ) {
        let mut limit = if partitioned {
            let parts = [Partition { share: 0.5, borrow: 3 }, Partition { share: 0.5, borrow: 0 }];
            Partitioned::new(first, &parts).unwrap()
        } else {
            Partitioned::from(Concurrency::new(first).unwrap())
        };
        let mut policy = first;
        let mut now = 0i64;
        let mut flying: Vec<(usize, ConcurrencyTicket)> = Vec::new();
        // The most in flight allowed from the last change on.
        let mut most = i64::from(policy.max_limit);
        for op in ops {
            now += 1_000;
            match op {
                Op::Enter(part) => {
                    let before = (limit.flying(), limit.limit());
                    let part = usize::from(part % 2);
                    let entered = if partitioned {
                        limit.enter_partition(part, now).unwrap()
                    } else {
                        limit.enter(now)
                    };
                    if let Some(ticket) = entered {
                        prop_assert!(before.0 < before.1, "entered at {} of {}", before.0, before.1);
                        flying.push((part, ticket));
                    }
                }
                Op::Leave(pick, rtt) if !flying.is_empty() => {
                    let (part, ticket) = flying.swap_remove(pick % flying.len());
                    let at = ticket.start + i64::from(rtt);
                    if partitioned {
                        limit.leave_partition(part, ticket, at, false).unwrap();
                    } else {
                        limit.leave(ticket, at, false);
                    }
                }
                Op::Leave(..) => {}
                Op::Reconfigure(to) => {
                    let was = *limit;
                    let parts = [limit.flying_in(0), limit.flying_in(1)];
                    limit.reconfigure(to).unwrap();
                    prop_assert_eq!(
                        limit.estimate(),
                        was.estimate().clamp(f64::from(to.min_limit), f64::from(to.max_limit))
                    );
                    prop_assert_eq!(limit.flying(), was.flying());
                    prop_assert_eq!(limit.long_rtt().to_bits(), was.long_rtt().to_bits());
                    prop_assert_eq!([limit.flying_in(0), limit.flying_in(1)], parts);
                    policy = to;
                    most = limit.flying().max(i64::from(to.max_limit));
                }
                Op::Refused(to) => {
                    let was = limit;
                    prop_assert!(limit.reconfigure(to).is_err());
                    prop_assert_eq!(limit, was, "a refused change wrote");
                }
            }
            let cap = limit.limit();
            prop_assert!(
                (i64::from(policy.min_limit)..=i64::from(policy.max_limit)).contains(&cap),
                "limit {} outside {:?}", cap, policy
            );
            prop_assert!(limit.flying() <= most, "{} in flight, {} allowed", limit.flying(), most);
            prop_assert_eq!(limit.flying(), flying.len() as i64);
        }
    }
}
