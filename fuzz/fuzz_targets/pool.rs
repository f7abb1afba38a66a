//! The pool's bookkeeping against a model that holds every identity the
//! pool has: the idle ones newest first, the lent ones, and the open
//! reservations. Every answer is checked against it: live = idle + busy,
//! never more than `size`; take lends the newest idle item or reserves room
//! only when there is some; a give, a drop or a made is accepted only for
//! what the pool lent or reserved, and a refused one changes nothing; evict
//! and close hand back only idle items, each once; nothing is lost or
//! duplicated; the running totals count what happened. Since 0.2.0: WAIT
//! also once `max_making` are being made; `weir_pool_make_ahead` reserves
//! within `size`; `weir_pool_mark_old` marks what the pool holds, and an
//! old item is never lent again nor kept by a give.
#![no_main]

use std::collections::BTreeSet;
use std::ptr::{null, null_mut};

use libfuzzer_sys::fuzz_target;
use weir::pool::*;
use weir::status::weir_status::{self, *};
use weir_fuzz::{abort_on_panic, trace, Clock, Counting, Input};

/// What the pool should hold.
#[derive(Default)]
struct Model {
    /// Idle items, oldest first (the newest is lent first).
    idle: Vec<weir_item>,
    lent: BTreeSet<weir_item>,
    /// Takes answered MAKE whose item is not yet made, unmade or dropped.
    reserved: u64,
    closed: bool,
    size: u64,
    /// min(idle, size): the most kept idle.
    keep: u64,
    /// The most reservations at once (`max_making`, 0 as `size`).
    making: u64,
    /// Items the pool held at the latest `weir_pool_mark_old`, still held.
    old: BTreeSet<weir_item>,
    counters: weir_pool_stats,
}

impl Model {
    fn knows(&self, item: weir_item) -> bool {
        self.lent.contains(&item) || self.idle.contains(&item)
    }
    fn live(&self) -> u64 {
        self.idle.len() as u64 + self.lent.len() as u64 + self.reserved
    }
    /// Checks the pool's counts and totals against the model.
    fn agrees(&self, pool: *const weir_pool) {
        let (idle, busy, live) = (
            weir_pool_idle(pool),
            weir_pool_busy(pool),
            weir_pool_live(pool),
        );
        assert_eq!(idle, self.idle.len() as i64, "weir_pool_idle");
        assert_eq!(
            busy,
            (self.lent.len() as u64 + self.reserved) as i64,
            "weir_pool_busy"
        );
        assert_eq!(live, idle + busy, "live = idle + busy");
        assert!(
            live as u64 <= self.size,
            "{live} live in a pool of {}",
            self.size
        );
        assert!(
            idle as u64 <= self.keep,
            "{idle} idle, at most {}",
            self.keep
        );
        let mut counters = weir_pool_stats::default();
        assert_eq!(weir_pool_read_stats(pool, &mut counters), WEIR_OK);
        let want = self.counters;
        assert_eq!(
            (
                counters.made,
                counters.reused,
                counters.stale,
                counters.dropped
            ),
            (want.made, want.reused, want.stale, want.dropped),
            "weir_pool_read_stats: {counters:?}"
        );
        assert_eq!(
            (counters.waits, counters.unmade),
            (want.waits, want.unmade),
            "weir_pool_read_stats: {counters:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    abort_on_panic();
    let mut input = Input::new(data);
    let mut limits = weir_pool_policy {
        size: 1 + input.below(8) as i64,
        idle: 0,
        keep_ns: 0,
        life_ns: 0,
        life_jitter: 0.0,
        min_idle: 0,
        max_making: 0,
    };
    limits.idle = input.below(limits.size as u64 + 3) as i64;
    if input.bool() {
        limits.life_jitter = input.below(5) as f64 / 4.0;
        limits.min_idle = input.below(limits.size as u64 + 2) as i64;
        limits.max_making = input.below(4) as i64;
    }
    if input.bool() {
        limits.keep_ns = input.span();
    }
    if input.bool() {
        limits.life_ns = input.span();
    }
    if input.one_in(16) {
        // Hostile limits: each is refused with its status.
        match input.u8() % 8 {
            0 => limits.size = 0,
            1 => limits.size = WEIR_POOL_MAX_SIZE + 1 + input.below(1000) as i64,
            2 => limits.idle = -1 - input.below(1000) as i64,
            3 => limits.keep_ns = i64::MIN,
            4 => limits.life_ns = -1,
            5 => limits.life_jitter = [f64::NAN, -0.5, 1.5, f64::INFINITY][input.below(4) as usize],
            6 => limits.min_idle = -1,
            _ => limits.max_making = i64::MIN,
        }
    }
    let preset = input.one_in(32);
    let mut handle = null_mut();
    let status = weir_pool_new(if preset { null() } else { &limits }, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null(), "a failed weir_pool_new wrote *out");
        assert!(!preset);
        return;
    }
    if preset {
        limits = weir_pool_policy_preset();
    }
    assert!(limits.size >= 1 && limits.idle >= 0 && limits.keep_ns >= 0 && limits.life_ns >= 0);
    assert_eq!(weir_pool_new(&limits, null_mut()), WEIR_ERR_NULL);
    let pool = handle as *const weir_pool;
    trace!("weir_pool_new({limits:?})");
    let mut model = Model {
        size: limits.size as u64,
        keep: limits.idle.min(limits.size) as u64,
        making: match limits.max_making {
            0 => limits.size as u64,
            m => m.min(limits.size) as u64,
        },
        ..Model::default()
    };
    let mut clock = Clock::new(&mut input);
    let mut counting = Counting::begin(input.even(), || weir_pool_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_pool_read_counts(handle, out));
        let now = clock.tick(&mut input);
        // Identities from a small set, so that the fuzzer reuses them.
        let item = if input.one_in(32) {
            0
        } else {
            1 + input.below(12) as weir_item
        };
        let count = if input.one_in(16) {
            1 + input.below(64)
        } else {
            1
        };
        let op = input.u8() % 12;
        trace!("op {op} x{count} at {now}, item {item}");
        for _ in 0..count {
            match op {
                0..=2 => take(pool, now, &mut model),
                3 => {
                    let status = if input.bool() {
                        weir_pool_made_jittered(pool, item, now, input.u64())
                    } else {
                        weir_pool_made(pool, item, now)
                    };
                    let known = model.knows(item);
                    let none = model.reserved == 0;
                    check(
                        status,
                        &[
                            (known, WEIR_ERR_POOL_ITEM_KNOWN),
                            (none, WEIR_ERR_POOL_NO_RESERVATION),
                        ],
                    );
                    if status == WEIR_OK {
                        model.reserved -= 1;
                        model.lent.insert(item);
                        model.counters.made += 1;
                    }
                }
                4 => {
                    let status = weir_pool_unmade(pool);
                    check(
                        status,
                        &[(model.reserved == 0, WEIR_ERR_POOL_NO_RESERVATION)],
                    );
                    if status == WEIR_OK {
                        model.reserved -= 1;
                        model.counters.unmade += 1;
                    }
                }
                5 | 6 => {
                    // Mostly give back what was lent.
                    let item = match model
                        .lent
                        .iter()
                        .nth(input.below(model.lent.len() as u64 + 1) as usize)
                    {
                        Some(&lent) if op == 5 => lent,
                        _ => item,
                    };
                    give(pool, item, now, &mut model);
                }
                7 => {
                    let status = weir_pool_drop(pool, item);
                    let idle = model.idle.contains(&item);
                    let lent = model.lent.contains(&item);
                    check(
                        status,
                        &[
                            (idle, WEIR_ERR_POOL_ITEM_IDLE),
                            (
                                !idle && !lent && model.reserved == 0,
                                WEIR_ERR_POOL_NOT_LENT,
                            ),
                        ],
                    );
                    if status == WEIR_OK {
                        if !model.lent.remove(&item) {
                            model.reserved -= 1;
                            model.counters.made += 1;
                        }
                        model.old.remove(&item);
                        model.counters.dropped += 1;
                    }
                }
                8 => {
                    let due = weir_pool_next_expiry(pool, now);
                    assert!(due >= 0, "weir_pool_next_expiry answered {due}");
                    let old_idle = model.idle.iter().any(|item| model.old.contains(item));
                    if old_idle {
                        assert_eq!(due, 0, "weir_pool_next_expiry with an old item idle");
                    } else if model.idle.is_empty()
                        || (limits.keep_ns == 0 && limits.life_ns == 0)
                    {
                        assert_eq!(
                            due,
                            i64::MAX,
                            "weir_pool_next_expiry with nothing to expire"
                        );
                    }
                    let cap = input.below(6) as usize;
                    let got = hand_back(pool, &mut model, cap, |out, cap| {
                        weir_pool_evict(pool, now, out, cap)
                    });
                    if due == 0 && cap > 0 {
                        assert!(
                            got >= 1,
                            "weir_pool_next_expiry said due, evict removed none"
                        );
                    }
                }
                10 => {
                    let marked = weir_pool_mark_old(pool);
                    let held = model.idle.len() + model.lent.len();
                    assert_eq!(marked, held as i64, "weir_pool_mark_old");
                    model.old = model.idle.iter().chain(&model.lent).copied().collect();
                    assert!(
                        model.idle.is_empty() || weir_pool_next_expiry(pool, now) == 0,
                        "old idle items are due at once"
                    );
                }
                11 => {
                    let ahead = weir_pool_make_ahead(pool);
                    trace!("  make_ahead -> {ahead}");
                    assert!(ahead >= 0, "weir_pool_make_ahead answered {ahead}");
                    let ahead = ahead as u64;
                    assert!(model.live() + ahead <= model.size, "made ahead past size");
                    assert!(model.reserved + ahead <= model.making, "made ahead past max_making");
                    assert!(
                        ahead as i64 <= limits.min_idle,
                        "made ahead past min_idle"
                    );
                    assert!(ahead == 0 || !model.closed, "a closed pool made ahead");
                    model.reserved += ahead;
                }
                _ => {
                    let cap = input.below(6) as usize;
                    if input.one_in(8) {
                        // A misaligned `out` is refused whole.
                        let mut spare = [0usize; 8];
                        let odd = (spare.as_mut_ptr() as *mut u8).wrapping_add(1) as *mut weir_item;
                        assert_eq!(weir_pool_close(pool, odd, 4), 0);
                        assert_eq!(weir_pool_evict(pool, now, odd, 4), 0);
                        assert_eq!(spare, [0; 8]);
                    } else {
                        hand_back(pool, &mut model, cap, |out, cap| {
                            weir_pool_close(pool, out, cap)
                        });
                        model.closed = true;
                    }
                }
            }
            model.agrees(pool);
        }
    }
    // Shut down: close hands back every idle item, then each lent one
    // comes back unkept.
    loop {
        let got = hand_back(pool, &mut model, 3, |out, cap| {
            weir_pool_close(pool, out, cap)
        });
        model.closed = true;
        if weir_pool_idle(pool) == 0 {
            break;
        }
        assert_eq!(got, 3, "close left idle items with room to spare");
    }
    for item in model.lent.clone() {
        give(pool, item, clock.now, &mut model);
    }
    assert!(model.idle.is_empty() && model.lent.is_empty());
    model.agrees(pool);
    assert_eq!(weir_pool_take(null(), 0).kind, WEIR_POOL_TAKEN_WAIT);
    assert_eq!(weir_pool_live(null()), 0);
    assert_eq!(weir_pool_next_expiry(null(), 0), i64::MAX);
    counting.end(|out| weir_pool_read_counts(handle, out));
    weir_pool_free(handle);
    weir_pool_free(null_mut());
});

/// A status that is OK unless one of the `faults` (condition, status) holds,
/// and then one of those that hold.
#[track_caller]
fn check(status: weir_status, faults: &[(bool, weir_status)]) {
    let allowed: Vec<weir_status> = faults.iter().filter(|f| f.0).map(|f| f.1).collect();
    if allowed.is_empty() {
        assert_eq!(status, WEIR_OK, "a call the model accepts was refused");
    } else {
        assert!(
            allowed.contains(&status),
            "answered {status:?}, the model wants one of {allowed:?}"
        );
    }
}

fn take(pool: *const weir_pool, now: i64, model: &mut Model) {
    let taken = weir_pool_take(pool, now);
    trace!("  take({now}) -> {taken:?}");
    match taken.kind {
        WEIR_POOL_TAKEN_READY | WEIR_POOL_TAKEN_STALE => {
            assert!(!model.closed, "a closed pool lent {taken:?}");
            let newest = model.idle.pop();
            assert_eq!(
                Some(taken.item),
                newest,
                "take answered {taken:?}, not the newest idle"
            );
            if taken.kind == WEIR_POOL_TAKEN_READY {
                assert!(!model.old.contains(&taken.item), "lent an old item");
                model.lent.insert(taken.item);
                model.counters.reused += 1;
            } else {
                model.old.remove(&taken.item);
                model.counters.stale += 1;
            }
        }
        WEIR_POOL_TAKEN_MAKE => {
            assert_eq!(taken.item, 0);
            assert!(
                !model.closed && model.idle.is_empty(),
                "MAKE with idle items or closed"
            );
            assert!(model.live() < model.size, "MAKE with no room");
            model.reserved += 1;
        }
        WEIR_POOL_TAKEN_WAIT => {
            assert_eq!(taken.item, 0);
            assert!(
                model.closed
                    || (model.idle.is_empty()
                        && (model.live() == model.size || model.reserved >= model.making)),
                "WAIT with room or idle items"
            );
            model.counters.waits += 1;
        }
        kind => panic!("weir_pool_take answered kind {kind}"),
    }
}

fn give(pool: *const weir_pool, item: weir_item, now: i64, model: &mut Model) {
    let mut kept = None::<bool>;
    // Left as it is by an error.
    let mut flag = true;
    let status = weir_pool_give(pool, item, now, &mut flag);
    trace!("  give({item}, {now}) -> {status:?}, kept {flag}");
    let idle = model.idle.contains(&item);
    let lent = model.lent.contains(&item);
    check(
        status,
        &[
            (idle, WEIR_ERR_POOL_ITEM_IDLE),
            (
                !idle && !lent && model.reserved == 0,
                WEIR_ERR_POOL_NOT_LENT,
            ),
        ],
    );
    if status != WEIR_OK {
        assert!(flag, "a give that failed ({status:?}) wrote *kept");
    } else {
        kept = Some(flag);
        if !model.lent.remove(&item) {
            model.reserved -= 1;
            model.counters.made += 1;
        }
    }
    if kept.is_some() && model.old.remove(&item) {
        assert_eq!(kept, Some(false), "kept {item}, which is old");
    }
    if let Some(true) = kept {
        assert!(!model.closed, "a closed pool kept {item}");
        assert!(
            (model.idle.len() as u64) < model.keep,
            "kept {item} past the idle limit"
        );
        model.idle.push(item);
    }
    assert_ne!(weir_pool_give(pool, item, now, null_mut()), WEIR_OK);
}

/// Calls `call` (evict or close) with room for `cap` items and checks that
/// it hands back only idle items, each once, and writes nothing past them.
fn hand_back(
    pool: *const weir_pool,
    model: &mut Model,
    cap: usize,
    call: impl FnOnce(*mut weir_item, usize) -> usize,
) -> usize {
    const MARK: weir_item = usize::MAX - 7;
    let mut out = vec![MARK; cap + 2];
    let got = call(out.as_mut_ptr(), cap);
    trace!("  evict/close(cap {cap}) -> {:?}", &out[..got.min(cap)]);
    assert!(got <= cap, "handed back {got} with room for {cap}");
    assert!(
        out[got..].iter().all(|&w| w == MARK),
        "wrote past the count: {out:?}"
    );
    for &item in &out[..got] {
        let at = model.idle.iter().position(|&i| i == item);
        assert!(
            at.is_some(),
            "handed back {item}, which is not idle ({out:?})"
        );
        model.idle.remove(at.unwrap());
        model.old.remove(&item);
    }
    let _ = pool;
    got
}
