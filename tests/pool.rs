//! The pool against scenario 4 of docs/design.md, against a simple model under random
//! operation sequences, and under several threads through the C ABI.

#[path = "../weir-core/tests/support/runner.rs"]
mod runner;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};

use proptest::prelude::*;
use weir::pool::*;
use weir::status::weir_status::*;
use weir_core::pool::{Pool, PoolMisuse, PoolPolicy, PoolTaken};

const SECOND: i64 = 1_000_000_000;

fn pool(size: i64, idle: i64, keep_ns: i64, life_ns: i64) -> Pool {
    Pool::new(PoolPolicy {
        size,
        idle,
        keep_ns,
        life_ns,
        ..PoolPolicy::PRESET
    })
    .unwrap()
}

/// Scenario 4 of docs/design.md, in one pass over the clock.
#[test]
fn scenario_pool() {
    let mut p = pool(3, 3, 60 * SECOND, 600 * SECOND);
    // Reservations up to size, then WAIT; unmade frees the room.
    assert_eq!(p.take(0), PoolTaken::Make);
    assert_eq!(p.take(0), PoolTaken::Make);
    assert_eq!(p.take(0), PoolTaken::Make);
    assert_eq!(p.take(0), PoolTaken::Wait);
    p.unmade().unwrap();
    assert_eq!(p.live(), 2);
    p.made(10, 0).unwrap();
    // An unregistered item given after MAKE takes the reservation.
    assert_eq!(p.give(20, 0), Ok(true));
    assert_eq!(p.take(0), PoolTaken::Ready(20));
    assert_eq!(p.take(0), PoolTaken::Make);
    p.made(30, 5 * SECOND).unwrap();
    // Newest first: give a, b, c; take returns c, b, a.
    for item in [20, 10, 30] {
        assert_eq!(p.give(item, 6 * SECOND), Ok(true));
    }
    assert_eq!(
        [p.take(7 * SECOND), p.take(7 * SECOND), p.take(7 * SECOND)],
        [
            PoolTaken::Ready(30),
            PoolTaken::Ready(10),
            PoolTaken::Ready(20)
        ]
    );
    // Lent and returned every 50 s, so none ever sits idle for keep (60 s);
    // birth survives give, so life (600 s) still retires them.
    let mut now = 7 * SECOND;
    for item in [20, 10, 30] {
        p.give(item, now).unwrap();
    }
    while now + 50 * SECOND < 600 * SECOND {
        now += 50 * SECOND;
        let taken: Vec<PoolTaken> = (0..3).map(|_| p.take(now)).collect();
        assert!(
            taken.iter().all(|t| matches!(t, PoolTaken::Ready(_))),
            "{now}: {taken:?}"
        );
        for t in taken.iter().rev() {
            if let PoolTaken::Ready(item) = t {
                p.give(*item, now).unwrap();
            }
        }
    }
    // At 600 s, evict hands back exactly the two born at 0; the one born at
    // 5 s stays, and next_expiry says when it is due.
    let mut out = [0; 3];
    assert_eq!(p.evict(600 * SECOND, &mut out), 2);
    out[..2].sort();
    assert_eq!(out[..2], [10, 20]);
    assert_eq!(p.live(), 1);
    assert_eq!(p.next_expiry(600 * SECOND), 5 * SECOND);
    assert_eq!(p.take(604 * SECOND), PoolTaken::Ready(30));
    p.give(30, 604 * SECOND).unwrap();
    // A stale idle item comes back from take, out of the count.
    assert_eq!(p.take(605 * SECOND), PoolTaken::Stale(30));
    assert_eq!(p.live(), 0);
    let c = p.stats();
    assert_eq!(
        (c.made, c.evicted_age, c.stale, c.unmade, c.waits),
        (3, 2, 1, 1, 1)
    );
    assert_eq!(c.reused, 1 + 3 + 3 * 11 + 1);
}

#[test]
fn evict_hands_back_exactly_the_due_in_a_small_buffer() {
    let mut p = pool(8, 8, 10 * SECOND, 0);
    for item in 0..8 {
        assert_eq!(p.take(0), PoolTaken::Make);
        p.made(item, 0).unwrap();
    }
    for item in 0..8 {
        p.give(item, item as i64 * SECOND).unwrap();
    }
    // At 15 s, items given at 0..=5 s are due: six of them.
    let now = 15 * SECOND;
    // Each call returns how many it wrote (never more than the buffer); a
    // full buffer means more may be due, and next_expiry says whether.
    let mut buffer = [0usize; 4];
    let mut handed = Vec::new();
    let mut calls = Vec::new();
    loop {
        let written = p.evict(now, &mut buffer);
        assert!(written <= buffer.len());
        calls.push(written);
        handed.extend_from_slice(&buffer[..written]);
        if written < buffer.len() {
            break;
        }
        assert_eq!(p.next_expiry(now), 0);
    }
    assert_eq!(calls, [4, 2]);
    assert_eq!(handed, [0, 1, 2, 3, 4, 5]);
    assert_eq!(p.idle(), 2);
    assert!(p.next_expiry(now) > 0);
    let mut all = [0usize; 8];
    assert_eq!(p.close(&mut all), 2);
    assert_eq!(&all[..2], &[6, 7]);
}

// ---------------------------------------------------------------------
// The model: the same rules written the plainest way, with linear scans.

#[derive(Debug)]
struct Model {
    size: usize,
    idle_cap: usize,
    keep: i64,
    life: i64,
    /// The most a draw takes off a life.
    jitter: i64,
    min_idle: usize,
    max_making: usize,
    /// (item, birth, since, old), newest on top.
    idle: Vec<(usize, i64, i64, bool)>,
    /// (item, birth, old).
    lent: Vec<(usize, i64, bool)>,
    reserved: usize,
    clock: i64,
}

impl Model {
    fn new(l: PoolPolicy) -> Model {
        Model {
            size: l.size as usize,
            idle_cap: l.idle.min(l.size) as usize,
            keep: l.keep_ns,
            life: l.life_ns,
            jitter: ((l.life_ns as f64 * l.life_jitter) as i64)
                .min(l.life_ns - 1)
                .max(0),
            min_idle: l.min_idle.min(l.idle).min(l.size) as usize,
            max_making: if l.max_making == 0 {
                l.size as usize
            } else {
                l.max_making.min(l.size) as usize
            },
            idle: vec![],
            lent: vec![],
            reserved: 0,
            clock: i64::MIN,
        }
    }
    fn tick(&mut self, now: i64) {
        self.clock = self.clock.max(now);
    }
    fn too_old(&self, birth: i64) -> bool {
        self.life > 0 && birth.saturating_add(self.life) <= self.clock
    }
    fn due(&self, (_, birth, since, old): (usize, i64, i64, bool)) -> bool {
        old || (self.keep > 0 && since.saturating_add(self.keep) <= self.clock)
            || self.too_old(birth)
    }
    fn knows(&self, item: usize) -> bool {
        self.idle.iter().any(|e| e.0 == item) || self.lent.iter().any(|e| e.0 == item)
    }
    fn live(&self) -> usize {
        self.idle.len() + self.lent.len() + self.reserved
    }
    fn take(&mut self, now: i64) -> PoolTaken {
        self.tick(now);
        match self.idle.pop() {
            Some(top) if self.due(top) => PoolTaken::Stale(top.0),
            Some((item, birth, _, _)) => {
                self.lent.push((item, birth, false));
                PoolTaken::Ready(item)
            }
            None if self.live() < self.size && self.reserved < self.max_making => {
                self.reserved += 1;
                PoolTaken::Make
            }
            None => PoolTaken::Wait,
        }
    }
    fn made(&mut self, item: usize, now: i64) -> Result<(), PoolMisuse> {
        self.made_jittered(item, now, 0)
    }
    fn made_jittered(&mut self, item: usize, now: i64, draw: u64) -> Result<(), PoolMisuse> {
        // A refused call moves nothing, the clock included.
        if self.knows(item) {
            return Err(PoolMisuse::Known);
        }
        if self.reserved == 0 {
            return Err(PoolMisuse::NoReservation);
        }
        self.tick(now);
        self.reserved -= 1;
        // jitter × draw / 2^64, rounded down.
        let cut = (self.jitter as u128 * draw as u128 / (1u128 << 64)) as i64;
        self.lent
            .push((item, self.clock.saturating_sub(cut), false));
        Ok(())
    }
    fn unmade(&mut self) -> Result<(), PoolMisuse> {
        if self.reserved == 0 {
            return Err(PoolMisuse::NoReservation);
        }
        self.reserved -= 1;
        Ok(())
    }
    /// The birth and mark of a lent item taken out of `lent`, or of an
    /// unknown one filling a reservation.
    fn take_back(&mut self, item: usize) -> Result<(i64, bool), PoolMisuse> {
        if self.idle.iter().any(|e| e.0 == item) {
            return Err(PoolMisuse::Idle);
        }
        if let Some(at) = self.lent.iter().position(|e| e.0 == item) {
            let (_, birth, old) = self.lent.remove(at);
            return Ok((birth, old));
        }
        if self.reserved == 0 {
            return Err(PoolMisuse::NotLent);
        }
        self.reserved -= 1;
        Ok((self.clock, false))
    }
    fn give(&mut self, item: usize, now: i64) -> Result<bool, PoolMisuse> {
        let before = self.clock;
        self.tick(now);
        let (birth, old) = self.take_back(item).inspect_err(|_| self.clock = before)?;
        if old || self.too_old(birth) || self.idle.len() >= self.idle_cap {
            return Ok(false);
        }
        self.idle.push((item, birth, self.clock, false));
        Ok(true)
    }
    fn mark_old(&mut self) -> usize {
        self.idle.iter_mut().for_each(|e| e.3 = true);
        self.lent.iter_mut().for_each(|e| e.2 = true);
        self.idle.len() + self.lent.len()
    }
    fn make_ahead(&mut self) -> usize {
        let ready = self.idle.iter().filter(|e| !e.3).count() + self.reserved;
        let want = self
            .min_idle
            .saturating_sub(ready)
            .min(self.size - self.live())
            .min(self.max_making.saturating_sub(self.reserved));
        self.reserved += want;
        want
    }
    fn drop_item(&mut self, item: usize) -> Result<(), PoolMisuse> {
        self.take_back(item).map(|_| ())
    }
    /// How many were due in all, and the first `cap` of them, removed.
    fn evict(&mut self, now: i64, cap: usize) -> (usize, Vec<usize>) {
        self.tick(now);
        let due: Vec<usize> = (0..self.idle.len())
            .filter(|&at| self.due(self.idle[at]))
            .collect();
        let out: Vec<usize> = due.iter().take(cap).map(|&at| self.idle[at].0).collect();
        self.idle.retain(|e| !out.contains(&e.0));
        (due.len(), out)
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Time moves by this many seconds (negative: backwards) before the op.
    Take(i64),
    /// `made` of a fresh item (misuse when no reservation is open).
    Made(i64),
    /// `made` of an item the caller holds or the pool holds idle.
    MadeKnown(usize),
    Unmade,
    /// Give back one of the caller's lent items.
    Give(usize, i64),
    /// Give an item the pool never saw.
    GiveStranger(i64),
    /// Give an item that is idle in the pool.
    GiveIdle(usize),
    Drop(usize),
    DropStranger,
    DropIdle(usize),
    Evict(i64, usize),
    /// `made_jittered` of a fresh item with this draw.
    MadeJittered(i64, u64),
    MarkOld,
    MakeAhead,
}

fn op() -> impl Strategy<Value = Op> {
    let dt = -3i64..12;
    prop_oneof![
        4 => dt.clone().prop_map(Op::Take),
        3 => dt.clone().prop_map(Op::Made),
        1 => any::<usize>().prop_map(Op::MadeKnown),
        1 => Just(Op::Unmade),
        4 => (any::<usize>(), dt.clone()).prop_map(|(k, t)| Op::Give(k, t)),
        1 => dt.clone().prop_map(Op::GiveStranger),
        1 => any::<usize>().prop_map(Op::GiveIdle),
        1 => any::<usize>().prop_map(Op::Drop),
        1 => Just(Op::DropStranger),
        1 => any::<usize>().prop_map(Op::DropIdle),
        2 => (dt.clone(), 0usize..4).prop_map(|(t, cap)| Op::Evict(t, cap)),
        2 => (dt, any::<u64>()).prop_map(|(t, draw)| Op::MadeJittered(t, draw)),
        1 => Just(Op::MarkOld),
        2 => Just(Op::MakeAhead),
    ]
}

/// The caller's side: what it made and has not closed, and what of that it
/// holds lent. Everything else it made is idle in the pool.
#[derive(Default)]
struct World {
    exists: BTreeSet<usize>,
    lent: BTreeSet<usize>,
    next_id: usize,
}

impl World {
    fn fresh(&mut self) -> usize {
        self.next_id += 1;
        self.next_id * 0x1000 // aligned, like pointers
    }
    fn pick(set: &BTreeSet<usize>, k: usize) -> Option<usize> {
        (!set.is_empty()).then(|| *set.iter().nth(k % set.len()).unwrap())
    }
    fn idle(&self) -> BTreeSet<usize> {
        self.exists.difference(&self.lent).copied().collect()
    }
    /// The caller closes an item the pool handed back.
    fn closes(&mut self, item: usize) {
        assert!(self.exists.remove(&item), "{item} handed back but unknown");
        assert!(!self.lent.contains(&item), "{item} handed back while lent");
    }
}

fn run(limits: PoolPolicy, ops: Vec<Op>) {
    let mut pool = Pool::new(limits).unwrap();
    let mut model = Model::new(limits);
    let mut world = World::default();
    let mut now = 0i64;
    let size = limits.size as usize;
    for op in ops {
        let at = |dt: i64| now + dt * SECOND;
        match op {
            Op::Take(dt) => {
                now = at(dt);
                let got = pool.take(now);
                assert_eq!(got, model.take(now));
                match got {
                    PoolTaken::Ready(item) => {
                        assert!(world.exists.contains(&item));
                        assert!(world.lent.insert(item), "{item} lent twice");
                    }
                    PoolTaken::Stale(item) => world.closes(item),
                    PoolTaken::Make | PoolTaken::Wait => {}
                }
            }
            Op::Made(dt) => {
                now = at(dt);
                let item = world.fresh();
                let got = pool.made(item, now);
                assert_eq!(got, model.made(item, now));
                if got.is_ok() {
                    world.exists.insert(item);
                    world.lent.insert(item);
                }
            }
            Op::MadeJittered(dt, draw) => {
                now = at(dt);
                let item = world.fresh();
                let got = pool.made_jittered(item, now, draw);
                assert_eq!(got, model.made_jittered(item, now, draw));
                if got.is_ok() {
                    world.exists.insert(item);
                    world.lent.insert(item);
                }
            }
            Op::MarkOld => assert_eq!(pool.mark_old(), model.mark_old()),
            Op::MakeAhead => assert_eq!(pool.make_ahead(), model.make_ahead()),
            Op::MadeKnown(k) => {
                if let Some(item) = World::pick(&world.exists, k) {
                    assert_eq!(pool.made(item, now), Err(PoolMisuse::Known));
                    assert_eq!(model.made(item, now), Err(PoolMisuse::Known));
                }
            }
            Op::Unmade => assert_eq!(pool.unmade(), model.unmade()),
            Op::Give(k, dt) => {
                if let Some(item) = World::pick(&world.lent, k) {
                    now = at(dt);
                    let kept = pool.give(item, now);
                    assert_eq!(kept, model.give(item, now));
                    world.lent.remove(&item);
                    if !kept.unwrap() {
                        world.exists.remove(&item);
                    }
                }
            }
            Op::GiveStranger(dt) => {
                now = at(dt);
                let item = world.fresh();
                let kept = pool.give(item, now);
                assert_eq!(kept, model.give(item, now));
                if kept == Ok(true) {
                    world.exists.insert(item);
                }
            }
            Op::GiveIdle(k) => {
                if let Some(item) = World::pick(&world.idle(), k) {
                    assert_eq!(pool.give(item, now), Err(PoolMisuse::Idle));
                    assert_eq!(model.give(item, now), Err(PoolMisuse::Idle));
                }
            }
            Op::Drop(k) => {
                if let Some(item) = World::pick(&world.lent, k) {
                    assert_eq!(pool.drop_item(item), Ok(()));
                    assert_eq!(model.drop_item(item), Ok(()));
                    world.lent.remove(&item);
                    world.exists.remove(&item);
                }
            }
            Op::DropStranger => {
                let item = world.fresh();
                assert_eq!(pool.drop_item(item), model.drop_item(item));
            }
            Op::DropIdle(k) => {
                if let Some(item) = World::pick(&world.idle(), k) {
                    assert_eq!(pool.drop_item(item), Err(PoolMisuse::Idle));
                    assert_eq!(model.drop_item(item), Err(PoolMisuse::Idle));
                }
            }
            Op::Evict(dt, cap) => {
                now = at(dt);
                let next = pool.next_expiry(now);
                let mut out = vec![0; cap];
                let written = pool.evict(now, &mut out);
                let (model_due, model_out) = model.evict(now, cap);
                assert_eq!(written, model_due.min(cap));
                assert_eq!(&out[..written], &model_out[..]);
                // next_expiry agrees: something is due exactly when it says
                // 0, and still is after a call that filled its buffer.
                assert_eq!(
                    next == 0,
                    model_due > 0,
                    "next_expiry {next}, due {model_due}"
                );
                assert_eq!(pool.next_expiry(now) == 0, model_due > cap);
                for item in model_out {
                    world.closes(item);
                }
            }
        }
        // live = idle + lent + reserved, never above size.
        assert_eq!(pool.live(), pool.idle() + pool.busy());
        assert_eq!(pool.busy(), world.lent.len() + model.reserved);
        assert_eq!(pool.live(), model.live());
        assert_eq!(pool.idle(), model.idle.len());
        assert!(pool.live() <= size);
        // No item lost: everything made and not yet handed back is idle in
        // the pool or lent to the caller.
        assert_eq!(world.exists.len(), pool.idle() + world.lent.len());
        let c = pool.stats();
        let gone =
            c.stale + c.evicted_idle + c.evicted_age + c.dropped + c.refused + c.closed + c.retired;
        assert_eq!(c.made, gone + world.exists.len() as u64);
    }
    // Shutdown hands back exactly the idle ones; the lent ones come back
    // unkept.
    let mut out = vec![0; size];
    let idle = pool.idle();
    assert_eq!(pool.close(&mut out), idle);
    let closed: BTreeSet<usize> = out[..idle].iter().copied().collect();
    assert_eq!(closed, world.idle());
    for item in world.lent.clone() {
        assert_eq!(pool.give(item, now), Ok(false));
    }
    assert_eq!(pool.live(), model.reserved);
}

fn limits() -> impl Strategy<Value = PoolPolicy> {
    (
        1i64..6,
        0i64..7,
        prop_oneof![Just(0), 1i64..30],
        prop_oneof![Just(0), 1i64..80],
        (
            prop_oneof![Just(0.0), 0.0..=1.0f64],
            prop_oneof![Just(0), 0i64..7],
            prop_oneof![Just(0), 0i64..4],
        ),
    )
        .prop_map(
            |(size, idle, keep, life, (life_jitter, min_idle, max_making))| PoolPolicy {
                size,
                idle,
                keep_ns: keep * SECOND,
                life_ns: life * SECOND,
                life_jitter,
                min_idle,
                max_making,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(400), ..ProptestConfig::default() })]

    #[test]
    fn pool_matches_the_model(limits in limits(), ops in proptest::collection::vec(op(), 0..120)) {
        run(limits, ops);
    }
}

// ---------------------------------------------------------------------
// Threads, through the C ABI: no item lent twice, counts right at the end.

#[test]
fn threads_share_one_pool() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 5_000;
    let limits = weir_pool_policy {
        size: 6,
        idle: 4,
        keep_ns: 3,
        life_ns: 40,
        ..weir_pool_policy_preset()
    };
    let mut handle = std::ptr::null_mut();
    assert_eq!(weir_pool_new(&limits, &mut handle), WEIR_OK);
    let address = handle as usize;
    let clock = AtomicI64::new(0);
    let next_id = AtomicUsize::new(1);
    // `out[id]`: whether the item is lent to some thread right now.
    let out: Vec<AtomicBool> = (0..THREADS * ROUNDS + 1)
        .map(|_| AtomicBool::new(false))
        .collect();
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (clock, next_id, out) = (&clock, &next_id, &out);
            scope.spawn(move || {
                let pool = address as *const weir_pool;
                for round in 0..ROUNDS {
                    let now = clock.fetch_add(1, Ordering::Relaxed);
                    let taken = weir_pool_take(pool, now);
                    let item = match taken.kind {
                        WEIR_POOL_TAKEN_READY => taken.item,
                        WEIR_POOL_TAKEN_MAKE if round % 17 == thread => {
                            assert_eq!(weir_pool_unmade(pool), WEIR_OK);
                            continue;
                        }
                        WEIR_POOL_TAKEN_MAKE => {
                            let item = next_id.fetch_add(1, Ordering::Relaxed);
                            assert_eq!(weir_pool_made(pool, item, now), WEIR_OK);
                            item
                        }
                        WEIR_POOL_TAKEN_STALE => {
                            assert!(!out[taken.item].load(Ordering::SeqCst));
                            continue;
                        }
                        _ => continue,
                    };
                    assert!(!out[item].swap(true, Ordering::SeqCst), "{item} lent twice");
                    assert!(weir_pool_live(pool) <= limits.size);
                    out[item].store(false, Ordering::SeqCst);
                    if round % 11 == 0 {
                        assert_eq!(weir_pool_drop(pool, item), WEIR_OK);
                    } else {
                        let mut kept = false;
                        let now = clock.load(Ordering::Relaxed);
                        assert_eq!(weir_pool_give(pool, item, now, &mut kept), WEIR_OK);
                    }
                }
            });
        }
    });
    assert_eq!(weir_pool_busy(handle), 0);
    assert_eq!(weir_pool_live(handle), weir_pool_idle(handle));
    let mut c = weir_pool_stats::default();
    assert_eq!(weir_pool_read_stats(handle, &mut c), WEIR_OK);
    let idle = weir_pool_idle(handle) as u64;
    let gone = c.stale + c.evicted_idle + c.evicted_age + c.dropped + c.refused + c.closed;
    assert_eq!(c.made, gone + idle);
    assert!(c.made > 0 && c.reused > 0 && c.dropped > 0 && c.unmade > 0);
    let mut buffer = [0usize; 8];
    assert_eq!(
        weir_pool_close(handle, buffer.as_mut_ptr(), buffer.len()),
        idle as usize
    );
    assert_eq!(weir_pool_live(handle), 0);
    weir_pool_free(handle);
}
