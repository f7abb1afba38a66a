//! The types whose size is set at run time (window, breaker, sliding,
//! shedder, pool, bloom) over
//! each store the caller can choose: a fixed array and a borrowed slice,
//! with no allocator, and (with `alloc`) the `Vec` that `new` makes. Over the
//! same random trace every store gives the same answers, since the code is
//! one path whatever the store; a store with no slot is refused.
//!
//! This file runs without `alloc` too (the core-no-alloc stage): the twin
//! against `new` is its `alloc` half.

use weir_core::bloom::{Bloom, BloomError, BloomLine, BloomShape};
use weir_core::breaker::{Breaker, BreakerPolicy, BreakerPolicyError, BreakerTally};
use weir_core::pool::{
    store_len, Pool, PoolPolicy, PoolPolicyError, PoolSlot, PoolStats, PoolTaken,
};
use weir_core::shedder::{Shedder, ShedderFront, ShedderPolicy, ShedderPolicyError};
use weir_core::sliding::{Sliding, SlidingError};
use weir_core::store::Slots;
use weir_core::window::{Window, WindowError, WindowTotal};

/// xorshift64: the trace's instants, rolls and outcomes.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// A time step: often none (many calls at one instant), sometimes back in
/// time, sometimes a long gap.
fn step(state: &mut u64, now: i64) -> i64 {
    match next(state) % 8 {
        0 | 1 => now,
        2 => now - (next(state) % 300_000_000) as i64,
        3 => now + (next(state) % 20_000_000_000) as i64,
        _ => now + (next(state) % 400_000_000) as i64,
    }
}

/// What the breaker answers over one trace: every decision and reading,
/// folded into a running hash, so two stores compare by one number.
fn breaker_trace<S: Slots<BreakerTally>>(breaker: &mut Breaker<S>, seed: u64) -> u64 {
    let (mut state, mut now, mut seen) = (seed, 1_000_i64, 0u64);
    let mut fold = |x: u64| seen = seen.rotate_left(7) ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3_000 {
        now = step(&mut state, now);
        let roll = (next(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
        match breaker.allow(now, roll) {
            Some(mut ticket) => {
                fold(ticket.serial);
                let settled = if next(&mut state) % 3 == 0 {
                    breaker.fail(&mut ticket, now)
                } else {
                    breaker.pass(&mut ticket, now)
                };
                fold(u64::from(settled.is_ok()));
            }
            None => fold(u64::MAX),
        }
        fold(breaker.ratio(now).to_bits());
        let (working, failing) = breaker.runs(now);
        fold(working as u64 ^ (failing as u64) << 32);
        let tally = breaker.tally(now);
        fold((tally.total ^ tally.success << 16 ^ tally.failure << 32 ^ tally.drop << 48) as u64);
    }
    seen
}

fn shedder_trace<W: Slots<WindowTotal>, F: Slots<ShedderFront>>(
    shedder: &mut Shedder<W, F>,
    seed: u64,
) -> u64 {
    let (mut state, mut now, mut seen) = (seed, 0_i64, 0u64);
    let mut open = [None; 64];
    for _ in 0..3_000 {
        now = step(&mut state, now) / 20;
        let cpu = (next(&mut state) % 1_100) as i32;
        let slot = (next(&mut state) % 64) as usize;
        match open[slot].take() {
            Some(mut ticket) => {
                let settled = if next(&mut state) % 4 == 0 {
                    shedder.fail(&mut ticket)
                } else {
                    shedder.pass(&mut ticket, now)
                };
                seen = seen.rotate_left(3) ^ u64::from(settled.is_ok());
            }
            None => {
                open[slot] = shedder.allow(now, cpu);
                seen = seen.rotate_left(3) ^ u64::from(open[slot].is_some()) << 1;
            }
        }
        let stats = shedder.stats(now);
        seen ^= stats.capacity.to_bits() ^ (shedder.flying() as u64) << 7;
    }
    seen
}

fn sliding_trace<S: Slots<i64>>(sliding: &mut Sliding<S>, seed: u64) -> u64 {
    let (mut state, mut now, mut seen) = (seed, 0_i64, 0u64);
    for _ in 0..3_000 {
        now = step(&mut state, now) / 1_000 * 1_000;
        let took = sliding.take(now);
        seen = seen.rotate_left(5) ^ u64::from(took) ^ (sliding.left(now) as u64) << 1;
        seen ^= sliding.next(now) as u64;
    }
    seen
}

fn window_trace<S: Slots<WindowTotal>>(window: &mut Window<WindowTotal, S>, seed: u64) -> u64 {
    let (mut state, mut now, mut seen) = (seed, 0_i64, 0u64);
    for _ in 0..3_000 {
        now = step(&mut state, now);
        window.add(now, (next(&mut state) % 1_000) as i64);
        let total = window.total(now, next(&mut state) % 2 == 0);
        seen = seen.rotate_left(9) ^ total.sum as u64 ^ (total.count as u64) << 32;
        seen ^= window.epoch();
    }
    seen
}

/// What the pool answers over one trace: takes, makes (some failing,
/// some jittered), gives and drops of lent items, items it never lent,
/// evictions, marks, closes, folded into a running hash with its readings
/// and totals.
fn pool_trace<S: Slots<PoolSlot>>(pool: &mut Pool<S>, seed: u64) -> u64 {
    let (mut state, mut now, mut seen) = (seed, 0_i64, 0u64);
    let mut fold = |x: u64| seen = seen.rotate_left(11) ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // Lent items (0: a free place), and the next identity to make.
    let mut lent = [0usize; 5];
    let mut fresh = 1usize;
    let mut out = [0usize; 8];
    for round in 0..3_000 {
        now = step(&mut state, now).max(0) / 64;
        let at = (next(&mut state) % 5) as usize;
        // A take keeps what it is lent at a free place (the first from
        // `at`); with none free it gives one back instead.
        let free = (0..5).map(|i| (at + i) % 5).find(|&i| lent[i] == 0);
        let roll = next(&mut state) % 16;
        let roll = if roll <= 4 && free.is_none() { 5 } else { roll };
        let at = if roll <= 4 { free.unwrap_or(at) } else { at };
        match roll {
            0..=4 => match pool.take(now) {
                PoolTaken::Ready(item) => {
                    fold(item as u64);
                    lent[at] = item;
                }
                PoolTaken::Stale(item) => fold(!(item as u64)),
                PoolTaken::Make => {
                    fold(3);
                    let made = match next(&mut state) % 5 {
                        0 => pool.unmade().map(|()| 0),
                        1 => pool
                            .made_jittered(fresh, now, next(&mut state))
                            .map(|()| fresh),
                        _ => pool.made(fresh, now).map(|()| fresh),
                    };
                    fresh += 1;
                    fold(made.map_or(u64::MAX, |item| item as u64));
                    if let Ok(item @ 1..) = made {
                        lent[at] = item;
                    }
                }
                PoolTaken::Wait => fold(4),
            },
            5..=9 => {
                // Give back a lent one (or, at an empty place, one the pool
                // never lent: a misuse, unless a reservation takes it).
                let item = if lent[at] != 0 { lent[at] } else { 10_000 + at };
                lent[at] = 0;
                fold(pool.give(item, now).map_or(u64::MAX - 1, u64::from));
            }
            10 => {
                let item = if lent[at] != 0 { lent[at] } else { 20_000 + at };
                lent[at] = 0;
                fold(u64::from(pool.drop_item(item).is_ok()));
            }
            11 | 12 => {
                let cap = (next(&mut state) % 9) as usize;
                let n = pool.evict(now, &mut out[..cap]);
                fold(n as u64 ^ out[..n].iter().map(|&i| i as u64).sum::<u64>() << 8);
            }
            13 if next(&mut state) % 8 == 0 => fold(pool.mark_old() as u64),
            14 => {
                // Made ahead and given, as a caller keeping some ready does.
                let wanted = pool.make_ahead();
                fold(wanted as u64);
                for _ in 0..wanted {
                    fold(pool.give(fresh, now).map_or(u64::MAX - 2, u64::from));
                    fresh += 1;
                }
            }
            _ if round > 2_700 => fold(pool.close(&mut out[..3]) as u64 ^ 0x55),
            _ => fold(pool.next_expiry(now) as u64),
        }
        fold(pool.live() as u64 ^ (pool.idle() as u64) << 20 ^ (pool.busy() as u64) << 40);
        let PoolStats {
            made,
            reused,
            stale,
            evicted_idle,
            evicted_age,
            dropped,
            refused,
            waits,
            unmade,
            closed,
            retired,
        } = pool.stats();
        fold(made ^ reused << 5 ^ stale << 10 ^ evicted_idle << 15 ^ evicted_age << 20);
        fold(dropped ^ refused << 5 ^ waits << 10 ^ unmade << 15 ^ closed << 20 ^ retired << 25);
    }
    seen
}

/// A pool policy with idleness and age limits short enough for a trace to
/// reach them.
fn pool_policy(size: i64, idle: i64) -> PoolPolicy {
    PoolPolicy {
        size,
        idle,
        keep_ns: 3_000_000,
        life_ns: 9_000_000,
        life_jitter: 0.5,
        min_idle: 2,
        max_making: 3,
    }
}

/// `N` fresh lines, as an array.
fn lines<const N: usize>() -> [BloomLine; N] {
    core::array::from_fn(|_| BloomLine::fresh())
}

/// What the bloom answers for keys over one trace, folded.
fn bloom_trace<S: AsRef<[BloomLine]>>(bloom: &Bloom<S>, seed: u64) -> u64 {
    let (mut state, mut now, mut seen) = (seed, 0_i64, 0u64);
    for _ in 0..3_000 {
        now = step(&mut state, now).max(0) / 64;
        let key = (next(&mut state) % 40).to_le_bytes();
        seen = seen.rotate_left(3) ^ u64::from(bloom.allow(now, &key));
        seen ^= (bloom.next(now, &key) as u64).rotate_left(17);
    }
    seen
}

#[test]
fn an_array_and_a_slice_give_the_same_answers() {
    const POOL: usize = store_len(6, 4);
    for seed in 1..20u64 {
        let policy = pool_policy(6, 4);
        let mut array = Pool::new_in(policy, [PoolSlot::default(); POOL]).unwrap();
        // A longer slice: the slots past the pool's are left alone.
        let mut memory = [PoolSlot::default(); POOL + 3];
        let mut slice = Pool::new_in(policy, &mut memory[..]).unwrap();
        assert_eq!(pool_trace(&mut array, seed), pool_trace(&mut slice, seed));
        // The trace reaches every path: reuse, staleness, eviction, waits.
        let stats = array.stats();
        assert!(stats.reused > 100 && stats.waits > 10, "{stats:?}");
        assert!(
            stats.stale + stats.evicted_idle + stats.evicted_age > 10,
            "{stats:?}"
        );
        assert!(stats.retired > 0 && stats.closed > 0, "{stats:?}");
        assert_eq!(memory[POOL..], [PoolSlot::default(); 3]);

        let shape = BloomShape::new(
            6,
            2,
            weir_core::rate::RateLimit::new(1e3, 3).unwrap(),
            seed,
            1,
        )
        .unwrap();
        let array = Bloom::new_in(shape, lines::<8>()).unwrap();
        let memory = lines::<8>();
        let slice = Bloom::new_in(shape, &memory[..]).unwrap();
        assert_eq!(bloom_trace(&array, seed), bloom_trace(&slice, seed));
    }
    let policy = BreakerPolicy::PRESET;
    for seed in 1..20u64 {
        let mut array = Breaker::new_in(policy, [BreakerTally::default(); 40], 1_000).unwrap();
        let mut memory = [BreakerTally::default(); 40];
        let mut slice = Breaker::new_in(policy, &mut memory[..], 1_000).unwrap();
        assert_eq!(
            breaker_trace(&mut array, seed),
            breaker_trace(&mut slice, seed)
        );

        let mut array = Sliding::new_in([0i64; 7], 1_000_000).unwrap();
        let mut memory = [0i64; 7];
        let mut slice = Sliding::new_in(&mut memory[..], 1_000_000).unwrap();
        assert_eq!(
            sliding_trace(&mut array, seed),
            sliding_trace(&mut slice, seed)
        );

        let policy = ShedderPolicy {
            size: 10,
            window_ns: 1_000_000_000,
            ..ShedderPolicy::PRESET
        };
        let mut array = Shedder::new_in(
            policy,
            [WindowTotal::default(); 10],
            [ShedderFront::default(); 10],
            0,
        )
        .unwrap();
        let (mut buckets, mut fronts) =
            ([WindowTotal::default(); 10], [ShedderFront::default(); 12]);
        let mut slice = Shedder::new_in(policy, &mut buckets[..], &mut fronts[..], 0).unwrap();
        assert_eq!(
            shedder_trace(&mut array, seed),
            shedder_trace(&mut slice, seed)
        );

        let mut array = Window::new_in([WindowTotal::default(); 10], 1_000_000_000, 0).unwrap();
        let mut memory = [WindowTotal::default(); 10];
        let mut slice = Window::new_in(&mut memory[..], 1_000_000_000, 0).unwrap();
        assert_eq!(
            window_trace(&mut array, seed),
            window_trace(&mut slice, seed)
        );
    }
}

/// The bloom's shape over the caller's lines (an array, no allocator)
/// answers as the heap `Bloom` over its own, key by key.
#[test]
fn a_bloom_shape_over_an_array_of_lines() {
    let limit = weir_core::rate::RateLimit::new(100.0, 3).unwrap();
    let shape = BloomShape::new(9, 2, weir_core::bloom::BloomLimit::from(limit), 7, 11).unwrap();
    let lines: [BloomLine; 64] = core::array::from_fn(|_| BloomLine::fresh());
    let lines = &lines[..shape.lines()];
    #[cfg(feature = "alloc")]
    let heap = weir_core::bloom::Bloom::new(shape).unwrap();
    let mut state = 5u64;
    let mut now = 0i64;
    let mut admitted = 0;
    for _ in 0..5_000 {
        now = step(&mut state, now).max(0) / 64;
        let key = (next(&mut state) % 40).to_le_bytes();
        let allowed = shape.allow(lines, now, &key);
        #[cfg(feature = "alloc")]
        assert_eq!(allowed, heap.allow(now, &key));
        admitted += usize::from(allowed);
        let wait = shape.next(lines, now, &key);
        #[cfg(feature = "alloc")]
        assert_eq!(wait, heap.next(now, &key));
        assert!(wait >= 0);
    }
    assert!(admitted > 0);
}

#[test]
fn the_store_sets_the_size_and_old_contents_are_cleared() {
    // Leftovers in the caller's memory are cleared, not counted.
    let mut memory = [BreakerTally {
        total: 106,
        success: 0,
        failure: 99,
        drop: 7,
    }; 12];
    let breaker = Breaker::new_in(BreakerPolicy::PRESET, &mut memory[..], 0).unwrap();
    assert_eq!(breaker.policy().size, 12);
    assert_eq!(breaker.tally(0), BreakerTally::default());
    let mut stamps = [i64::MIN; 3];
    let sliding = Sliding::new_in(&mut stamps[..], 10).unwrap();
    assert_eq!((sliding.quota(), sliding.left(0)), (3, 3));
}

#[test]
fn a_store_with_no_slot_is_refused() {
    // The pool needs its table and its idle places: one slot short is
    // refused, and so is a bad policy, before the store is looked at.
    let policy = pool_policy(6, 4);
    assert_eq!(store_len(6, 4), 16 + 4);
    assert_eq!(policy.store_len(), 20);
    let mut memory = [PoolSlot::default(); 20];
    assert_eq!(
        Pool::new_in(policy, &mut memory[..19]).unwrap_err(),
        PoolPolicyError::NoMemory
    );
    assert!(Pool::new_in(policy, &mut memory[..]).is_ok());
    let bad = PoolPolicy { size: 0, ..policy };
    assert_eq!(
        Pool::new_in(bad, [] as [PoolSlot; 0]).unwrap_err(),
        PoolPolicyError::Size
    );
    // The preset's store, for an array: a table of 32, 10 idle places.
    assert_eq!(PoolPolicy::PRESET.store_len(), 42);
    assert_eq!(store_len(i64::MIN, -5), 2);
    // The bloom needs its lines.
    let shape =
        BloomShape::new(6, 2, weir_core::rate::RateLimit::new(1.0, 1).unwrap(), 0, 0).unwrap();
    assert_eq!(
        Bloom::new_in(shape, lines::<7>()).unwrap_err(),
        BloomError::TooSmall
    );

    let none: [BreakerTally; 0] = [];
    assert_eq!(
        Breaker::new_in(BreakerPolicy::PRESET, none, 0).unwrap_err(),
        BreakerPolicyError::Window(WindowError::NoMemory)
    );
    assert_eq!(
        Sliding::new_in([0i64; 0], 10).unwrap_err(),
        SlidingError::Quota
    );
    assert_eq!(
        Sliding::new_in([0i64; 1], 0).unwrap_err(),
        SlidingError::Window
    );
    assert_eq!(
        Window::<WindowTotal, _>::new_in([] as [WindowTotal; 0], 10, 0).unwrap_err(),
        WindowError::NoMemory
    );
    assert_eq!(
        Shedder::new_in(
            ShedderPolicy::PRESET,
            [WindowTotal::default(); 4],
            [ShedderFront::default(); 3],
            0
        )
        .unwrap_err(),
        ShedderPolicyError::Window(WindowError::NoMemory)
    );
    // A bad policy is refused before the store is looked at.
    let bad = BreakerPolicy {
        floor: 0.5,
        ..BreakerPolicy::PRESET
    };
    assert_eq!(
        Breaker::new_in(bad, [BreakerTally::default(); 4], 0).unwrap_err(),
        BreakerPolicyError::Floor
    );
}

/// The heap twin: `new` (a `Vec`) and `new_in` over an array answer alike.
#[cfg(feature = "alloc")]
#[test]
fn the_vec_that_new_makes_gives_the_same_answers() {
    for seed in 1..20u64 {
        for size in [1, 3, 40] {
            let policy = BreakerPolicy {
                size,
                ..BreakerPolicy::PRESET
            };
            let mut heap = Breaker::new(policy, 1_000).unwrap();
            let mut store = std::vec![BreakerTally::default(); size as usize];
            let mut placed = Breaker::new_in(policy, &mut store[..], 1_000).unwrap();
            assert_eq!(heap.policy(), placed.policy());
            assert_eq!(
                breaker_trace(&mut heap, seed),
                breaker_trace(&mut placed, seed)
            );
        }
        for size in [1, 3, 50] {
            let policy = ShedderPolicy {
                size,
                ..ShedderPolicy::PRESET
            };
            let mut heap = Shedder::new(policy, 0).unwrap();
            let mut buckets = std::vec![WindowTotal::default(); size as usize];
            let mut fronts = std::vec![ShedderFront::default(); size as usize];
            let mut placed = Shedder::new_in(policy, &mut buckets[..], &mut fronts[..], 0).unwrap();
            assert_eq!(heap.policy(), placed.policy());
            assert_eq!(
                shedder_trace(&mut heap, seed),
                shedder_trace(&mut placed, seed)
            );
        }
        for (size, idle) in [(1, 1), (6, 4), (10, 0), (12, 30)] {
            let policy = pool_policy(size, idle);
            let mut heap = Pool::new(policy).unwrap();
            let mut store = std::vec![PoolSlot::default(); policy.store_len()];
            let mut placed = Pool::new_in(policy, &mut store[..]).unwrap();
            assert_eq!(heap.heap_bytes(), placed.heap_bytes());
            assert_eq!(pool_trace(&mut heap, seed), pool_trace(&mut placed, seed));
        }
        let shape = BloomShape::new(
            5,
            3,
            weir_core::gcra::GcraLimit::new(1e4, 2).unwrap(),
            3,
            seed,
        )
        .unwrap();
        let heap = Bloom::new(shape).unwrap();
        let placed = Bloom::new_in(shape, lines::<4>()).unwrap();
        assert_eq!(bloom_trace(&heap, seed), bloom_trace(&placed, seed));
        let mut heap = Sliding::new(7, 1_000_000).unwrap();
        let mut placed = Sliding::new_in([0i64; 7], 1_000_000).unwrap();
        assert_eq!(
            sliding_trace(&mut heap, seed),
            sliding_trace(&mut placed, seed)
        );
        let mut heap = Window::new(10, 1_000_000_000, 0).unwrap();
        let mut placed = Window::new_in([WindowTotal::default(); 10], 1_000_000_000, 0).unwrap();
        assert_eq!(
            window_trace(&mut heap, seed),
            window_trace(&mut placed, seed)
        );
    }
}
