//! The four properties of the pool over random call sequences:
//! within its bound (live = idle + busy ≤ size, idle ≤ min(idle, size),
//! every resource made accounted for), readings are pure, a call that
//! returns an error changes nothing (its clock included), and time going
//! backwards answers exactly as the latest `now` would.

#[path = "support/runner.rs"]
mod runner;

#[path = "support/instants.rs"]
mod instants;

use instants::{now, span};
use proptest::prelude::*;
use weir_core::pool::{
    store_len, Pool, PoolMisuse, PoolPolicy, PoolPolicyError, PoolSlot, PoolStats, PoolTaken,
    MAX_SIZE,
};

#[derive(Clone, Copy, Debug)]
enum Op {
    Take(i64),
    Made(usize, i64),
    Unmade,
    Give(usize, i64),
    Drop(usize),
    Evict(i64, usize),
    Close(usize),
    // Readings.
    Live,
    Idle,
    Busy,
    NextExpiry(i64),
    PoolStats,
}

impl Op {
    fn is_reading(self) -> bool {
        matches!(
            self,
            Op::Live | Op::Idle | Op::Busy | Op::NextExpiry(_) | Op::PoolStats
        )
    }

    /// The `now` this call takes, if it takes one and is not a reading.
    fn now(self) -> Option<i64> {
        match self {
            Op::Take(now) | Op::Made(_, now) | Op::Give(_, now) | Op::Evict(now, _) => Some(now),
            _ => None,
        }
    }

    fn at(self, now: i64) -> Op {
        match self {
            Op::Take(_) => Op::Take(now),
            Op::Made(item, _) => Op::Made(item, now),
            Op::Give(item, _) => Op::Give(item, now),
            Op::Evict(_, cap) => Op::Evict(now, cap),
            Op::NextExpiry(_) => Op::NextExpiry(now),
            other => other,
        }
    }
}

/// Items from a small set, so that misuse (an item idle, known, never
/// lent) is common.
fn item() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 1..8usize, 1 => Just(0usize), 1 => Just(usize::MAX)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => now().prop_map(Op::Take),
        4 => (item(), now()).prop_map(|(item, now)| Op::Made(item, now)),
        1 => Just(Op::Unmade),
        5 => (item(), now()).prop_map(|(item, now)| Op::Give(item, now)),
        1 => item().prop_map(Op::Drop),
        2 => (now(), 0..4usize).prop_map(|(now, cap)| Op::Evict(now, cap)),
        1 => (0..2usize, any::<u8>()).prop_map(|(cap, roll)| if roll < 16 { Op::Close(cap) } else { Op::Unmade }),
        1 => Just(Op::Live),
        1 => Just(Op::Idle),
        1 => Just(Op::Busy),
        2 => now().prop_map(Op::NextExpiry),
        1 => Just(Op::PoolStats),
    ]
}

/// A keep or a life: none (0) often, else any span.
fn limit_ns() -> impl Strategy<Value = i64> {
    prop_oneof![2 => Just(0i64), 3 => span()]
}

fn limits() -> impl Strategy<Value = PoolPolicy> {
    (
        prop_oneof![4 => 1..6i64, 1 => 6..64i64],
        prop_oneof![1 => Just(0i64), 3 => 0..6i64, 1 => Just(i64::MAX)],
        limit_ns(),
        limit_ns(),
    )
        .prop_map(|(size, idle, keep_ns, life_ns)| PoolPolicy {
            size,
            idle,
            keep_ns,
            life_ns,
            ..PoolPolicy::PRESET
        })
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    PoolTaken(PoolTaken),
    Status(Result<(), PoolMisuse>),
    Kept(Result<bool, PoolMisuse>),
    Items(Vec<usize>),
    Count(usize),
    Wait(i64),
    PoolStats(PoolStats),
}

impl Answer {
    fn is_error(&self) -> bool {
        matches!(self, Answer::Status(Err(_)) | Answer::Kept(Err(_)))
    }
}

fn apply(pool: &mut Pool, op: Op) -> Answer {
    match op {
        Op::Take(now) => Answer::PoolTaken(pool.take(now)),
        Op::Made(item, now) => Answer::Status(pool.made(item, now)),
        Op::Unmade => Answer::Status(pool.unmade()),
        Op::Give(item, now) => Answer::Kept(pool.give(item, now)),
        Op::Drop(item) => Answer::Status(pool.drop_item(item)),
        Op::Evict(now, cap) => {
            let mut out = vec![0; cap];
            let n = pool.evict(now, &mut out);
            out.truncate(n);
            Answer::Items(out)
        }
        Op::Close(cap) => {
            let mut out = vec![0; cap];
            let n = pool.close(&mut out);
            out.truncate(n);
            Answer::Items(out)
        }
        Op::Live => Answer::Count(pool.live()),
        Op::Idle => Answer::Count(pool.idle()),
        Op::Busy => Answer::Count(pool.busy()),
        Op::NextExpiry(now) => Answer::Wait(pool.next_expiry(now)),
        Op::PoolStats => Answer::PoolStats(pool.stats()),
    }
}

/// Everything a caller can read of a pool, with `next_expiry` at `now`.
fn readings(pool: &Pool, now: i64) -> (usize, usize, usize, i64, PoolStats, bool) {
    (
        pool.live(),
        pool.idle(),
        pool.busy(),
        pool.next_expiry(now),
        pool.stats(),
        pool.is_closed(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    /// Within the bound, after every call: live = idle + busy ≤ size, idle
    /// ≤ min(idle, size), and every resource made is still held or counted
    /// once as stale, evicted, dropped, refused or closed.
    #[test]
    fn within_the_bound(limits in limits(), ops in prop::collection::vec(op(), 1..120)) {
        let mut pool = Pool::new(limits).unwrap();
        let size = limits.size as usize;
        let idle_cap = limits.idle.min(limits.size) as usize;
        for op in ops {
            let answer = apply(&mut pool, op);
            let (live, idle, busy) = (pool.live(), pool.idle(), pool.busy());
            prop_assert_eq!(live, idle + busy, "{:?} -> {:?}", op, answer);
            prop_assert!(live <= size, "{:?}: live {} > size {}", op, live, size);
            prop_assert!(idle <= idle_cap, "{:?}: idle {} > {}", op, idle, idle_cap);
            let c = pool.stats();
            let gone = c.stale + c.evicted_idle + c.evicted_age + c.dropped + c.refused + c.closed;
            prop_assert!(c.made >= gone + idle as u64, "{:?}: {:?}", op, c);
            prop_assert!(c.made <= gone + live as u64, "{:?}: {:?}", op, c);
            if pool.is_closed() {
                prop_assert_eq!(apply(&mut pool, Op::Take(0)), Answer::PoolTaken(PoolTaken::Wait));
            }
        }
    }

    /// Readings are pure: inserting readings anywhere, at any `now`, leaves
    /// every other call's answer as it was.
    #[test]
    fn readings_are_pure(limits in limits(), ops in prop::collection::vec(op(), 1..120)) {
        let mut read = Pool::new(limits).unwrap();
        let mut plain = Pool::new(limits).unwrap();
        for op in ops {
            let answer = apply(&mut read, op);
            if !op.is_reading() {
                prop_assert_eq!(answer, apply(&mut plain, op), "{:?}", op);
            }
        }
    }

    /// An error changes nothing: a pool that is given every call and one
    /// that is given only the calls that succeeded read alike after every
    /// call, and answer every later call alike.
    #[test]
    fn an_error_changes_nothing(limits in limits(), ops in prop::collection::vec(op(), 1..120)) {
        let mut all = Pool::new(limits).unwrap();
        let mut ok_only = Pool::new(limits).unwrap();
        for op in ops {
            let answer = apply(&mut all, op);
            if !answer.is_error() {
                prop_assert_eq!(&answer, &apply(&mut ok_only, op), "{:?}", op);
            }
            for at in [i64::MIN, 0, op.now().unwrap_or(0), i64::MAX] {
                prop_assert_eq!(readings(&all, at), readings(&ok_only, at), "after {:?} -> {:?}", op, answer);
            }
        }
    }

    /// Time going backwards is no time passing: the trace and the same
    /// trace with every `now` raised to the latest the pool's clock has
    /// taken (a take, an evict, a made or give that succeeded) answer
    /// alike, and read alike at every `now`.
    #[test]
    fn time_going_backwards_is_the_latest_now(limits in limits(), ops in prop::collection::vec(op(), 1..120)) {
        let mut raw = Pool::new(limits).unwrap();
        let mut clocked = Pool::new(limits).unwrap();
        let mut latest = i64::MIN;
        for op in ops {
            let raised = match op.now() {
                Some(now) => op.at(now.max(latest)),
                None => op,
            };
            let answer = apply(&mut raw, op);
            prop_assert_eq!(&answer, &apply(&mut clocked, raised), "{:?}", op);
            if let Some(now) = op.now() {
                if !answer.is_error() {
                    latest = latest.max(now);
                }
            }
            for at in [i64::MIN, 0, latest, i64::MAX] {
                prop_assert_eq!(readings(&raw, at), readings(&clocked, at), "after {:?}", op);
            }
        }
    }

    /// The constructor refuses each bad field with its own error, the first
    /// in field order, at every extreme, and makes nothing.
    #[test]
    fn limits_refuse_the_first_bad_field(
        size in prop_oneof![Just(0i64), Just(-1), Just(i64::MIN), Just(MAX_SIZE + 1), Just(i64::MAX), 1..64i64],
        idle in prop_oneof![Just(-1i64), Just(i64::MIN), any::<i64>()],
        keep_ns in prop_oneof![Just(-1i64), any::<i64>()],
        life_ns in prop_oneof![Just(-1i64), any::<i64>()],
    ) {
        let expected = if !(1..=MAX_SIZE).contains(&size) {
            Err(PoolPolicyError::Size)
        } else if idle < 0 {
            Err(PoolPolicyError::Idle)
        } else if keep_ns < 0 {
            Err(PoolPolicyError::Keep)
        } else if life_ns < 0 {
            Err(PoolPolicyError::Life)
        } else {
            Ok(())
        };
        let made = Pool::new(PoolPolicy { size, idle, keep_ns, life_ns, ..PoolPolicy::PRESET });
        prop_assert_eq!(made.map(|pool| pool.live()).map(drop), expected);
    }
}

/// New limits, sometimes wrong (the change is then refused).
fn change() -> impl Strategy<Value = PoolPolicy> {
    prop_oneof![
        6 => limits(),
        1 => limits().prop_map(|l| PoolPolicy { size: 0, ..l }),
        1 => limits().prop_map(|l| PoolPolicy { keep_ns: -1, ..l }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(256), ..ProptestConfig::default() })]

    /// Across a change of limits: the pool changed in its own store (one
    /// with room for any layout) and the pool moved into a new store answer
    /// alike ever after; the live resources are never more than the larger
    /// of those live at the change and the new size, the idle never more
    /// than the larger of those idle at the change and the new idle cap,
    /// and every resource made is held or counted gone. A refused change
    /// changes nothing: the pool answers and reads as its twin that was
    /// never asked.
    #[test]
    fn a_change_keeps_the_items_within_the_larger_bound(
        before in limits(),
        after in change(),
        ops in prop::collection::vec(op(), 0..80),
        later in prop::collection::vec(op(), 1..80),
    ) {
        let room = 2 * store_len(64, 64);
        let mut placed = Pool::new_in(before, vec![PoolSlot::default(); room]).unwrap();
        let mut heap = Pool::new(before).unwrap();
        let mut twin = Pool::new(before).unwrap();
        for op in ops {
            let answer = apply(&mut placed, op);
            prop_assert_eq!(&answer, &apply(&mut heap, op));
            prop_assert_eq!(&answer, &apply(&mut twin, op));
        }
        let (live_at, idle_at) = (heap.live(), heap.idle());
        let changed = placed.reconfigure(after);
        prop_assert_eq!(changed, heap.store_len_for(after).map(drop));
        if changed.is_err() {
            prop_assert_eq!(heap.reconfigure(after), changed);
            for op in later {
                let answer = apply(&mut placed, op);
                prop_assert_eq!(&answer, &apply(&mut heap, op));
                prop_assert_eq!(&answer, &apply(&mut twin, op), "{:?}", op);
                for at in [i64::MIN, 0, op.now().unwrap_or(0), i64::MAX] {
                    prop_assert_eq!(readings(&placed, at), readings(&twin, at));
                }
            }
            return Ok(());
        }
        let need = heap.store_len_for(after).unwrap();
        match heap.reconfigure(after) {
            Ok(()) => {}
            Err(PoolPolicyError::NoMemory) => {
                prop_assert!(need > store_len(before.size, before.idle));
                heap = heap.reconfigure_into(after, vec![PoolSlot::default(); need]).unwrap();
            }
            Err(other) => prop_assert!(false, "{:?}", other),
        }
        let size = after.size as usize;
        let idle_cap = after.idle.min(after.size) as usize;
        for op in later {
            let answer = apply(&mut placed, op);
            prop_assert_eq!(&answer, &apply(&mut heap, op), "{:?}", op);
            prop_assert_eq!(readings(&placed, 0), readings(&heap, 0));
            let (live, idle, busy) = (heap.live(), heap.idle(), heap.busy());
            prop_assert_eq!(live, idle + busy);
            prop_assert!(live <= live_at.max(size), "{:?}: live {} > max({}, {})", op, live, live_at, size);
            prop_assert!(idle <= idle_at.max(idle_cap), "{:?}: idle {}", op, idle);
            let c = heap.stats();
            let gone = c.stale + c.evicted_idle + c.evicted_age + c.dropped + c.refused + c.closed;
            prop_assert!(c.made >= gone + idle as u64, "{:?}: {:?}", op, c);
            prop_assert!(c.made <= gone + live as u64, "{:?}: {:?}", op, c);
        }
    }

    /// Changed to the limits it has, a pool answers as one never changed.
    #[test]
    fn the_same_limits_change_nothing(
        limits in limits(),
        ops in prop::collection::vec(op(), 0..80),
        later in prop::collection::vec(op(), 1..80),
    ) {
        let mut changed = Pool::new(limits).unwrap();
        let mut twin = Pool::new(limits).unwrap();
        for op in ops {
            prop_assert_eq!(apply(&mut changed, op), apply(&mut twin, op));
        }
        prop_assert_eq!(changed.reconfigure(limits), Ok(()));
        for op in later {
            prop_assert_eq!(apply(&mut changed, op), apply(&mut twin, op), "{:?}", op);
            prop_assert_eq!(readings(&changed, 0), readings(&twin, 0));
        }
    }
}

/// Items lent and idle before a change are the pool's after it: smaller,
/// the pool keeps them all and makes none until under the new size; larger,
/// its table moves and finds every one.
#[test]
fn a_change_keeps_every_item_lent_and_idle() {
    let limits = PoolPolicy {
        size: 6,
        idle: 6,
        keep_ns: 0,
        ..PoolPolicy::PRESET
    };
    let mut pool = Pool::new(limits).unwrap();
    for item in 1..=6 {
        assert_eq!(pool.take(0), PoolTaken::Make);
        pool.made(item * 4096, 0).unwrap();
    }
    for item in 1..=3 {
        assert_eq!(pool.give(item * 4096, 1), Ok(true));
    }
    let small = PoolPolicy {
        size: 2,
        idle: 1,
        ..limits
    };
    assert_eq!(pool.reconfigure(small), Ok(()));
    assert_eq!((pool.live(), pool.idle()), (6, 3));
    assert_eq!(pool.take(2), PoolTaken::Ready(3 * 4096));
    assert_eq!(pool.give(3 * 4096, 3), Ok(false), "three idle, the cap one");
    assert_eq!(pool.drop_item(4 * 4096), Ok(()));
    assert_eq!(pool.drop_item(5 * 4096), Ok(()));
    assert_eq!(pool.give(6 * 4096, 4), Ok(false));
    assert_eq!((pool.live(), pool.idle()), (2, 2));
    assert_eq!(pool.take(5), PoolTaken::Ready(2 * 4096));
    assert_eq!(pool.take(5), PoolTaken::Ready(4096));
    assert_eq!(pool.take(5), PoolTaken::Wait, "two live, the size two");
    let large = PoolPolicy {
        size: 40,
        idle: 40,
        ..limits
    };
    let need = pool.store_len_for(large).unwrap();
    assert_eq!(need, store_len(40, 40));
    assert_eq!(pool.reconfigure(large), Err(PoolPolicyError::NoMemory));
    let mut pool = pool
        .reconfigure_into(large, vec![PoolSlot::default(); need])
        .unwrap();
    assert_eq!(pool.give(4096, 6), Ok(true));
    assert_eq!(pool.give(2 * 4096, 6), Ok(true));
    assert_eq!(pool.give(2 * 4096, 6), Err(PoolMisuse::Idle));
    assert_eq!(pool.take(7), PoolTaken::Ready(2 * 4096));
    assert_eq!(pool.take(7), PoolTaken::Ready(4096));
    assert_eq!(pool.take(7), PoolTaken::Make);
}

/// A case once wrong, kept as a plain test beside the property.
#[test]
fn a_refused_made_does_not_age_an_idle_item() {
    const SECOND: i64 = 1_000_000_000;
    let mut pool = Pool::new(PoolPolicy {
        size: 4,
        idle: 4,
        keep_ns: 10 * SECOND,
        life_ns: 0,
        ..PoolPolicy::PRESET
    })
    .unwrap();
    assert_eq!(pool.take(0), PoolTaken::Make);
    pool.made(1, 0).unwrap();
    assert_eq!(pool.give(1, 0), Ok(true));
    assert_eq!(pool.made(99, 20 * SECOND), Err(PoolMisuse::NoReservation));
    assert_eq!(pool.take(5 * SECOND), PoolTaken::Ready(1));
}
