//! Placed handles (`weir_X_init_in`) against their heap twins
//! (`weir_X_new`): over the same random traces through the C ABI, every
//! answer is identical. Also: the footprint's size and alignment hold the
//! handle, one byte less or a misaligned start is refused with a status and
//! nothing written, and `weir_X_free` on a placed handle leaves the memory
//! alone (the test reads it after).

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use weir::bloom::*;
use weir::breaker::*;
use weir::bucket::*;
use weir::budget::*;
use weir::concurrency::*;
use weir::counts::weir_counts;
use weir::gate::*;
use weir::gcra::*;
use weir::lease::*;
use weir::period::*;
use weir::pool::*;
use weir::rate::*;
use weir::shedder::*;
use weir::sliding::*;
use weir::status::weir_status::{self, *};
use weir::window::*;

/// xorshift64*: the traces' instants, rolls and choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A step of time: often none, sometimes backwards, sometimes long.
    fn step(&mut self, now: i64) -> i64 {
        match self.below(8) {
            0 | 1 => now,
            2 => now - self.below(200_000_000) as i64,
            3 => now + self.below(30_000_000_000) as i64,
            _ => now + self.below(300_000_000) as i64,
        }
    }
    fn roll(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Memory for placed handles: 64-aligned, filled with a pattern so that a
/// handle relying on zeroed memory would show, and one guard word after
/// the bytes asked for that no call may touch.
struct Arena {
    words: Vec<u64>,
    bytes: usize,
}

const PATTERN: u64 = 0xa5a5_a5a5_a5a5_a5a5;

impl Arena {
    fn new(bytes: usize) -> Arena {
        // One extra 64-byte line to align within, and the guard word.
        let words = vec![PATTERN; bytes / 8 + 8 + 2];
        Arena { words, bytes }
    }
    /// The first 64-aligned address, plus `shift` bytes.
    fn at(&mut self, shift: usize) -> *mut c_void {
        let base = self.words.as_mut_ptr() as usize;
        let aligned = base.div_ceil(64) * 64;
        (aligned + shift) as *mut c_void
    }
    fn guard_intact(&mut self) -> bool {
        let end = self.at(0) as usize + self.bytes;
        let word = end.div_ceil(8) * 8;
        // SAFETY (test): `word` lies inside `words`, which holds 8 spare
        // words past the 64-aligned start plus `bytes`.
        unsafe { ((word) as *const u64).read() == PATTERN }
    }
}

/// Checks the footprint `(bytes, align)` the way a caller relies on it: the
/// alignment is a power of two at least the handle's, and a placed handle
/// needs every byte of it (one fewer is refused) and no other alignment
/// (one byte off is refused). Answers an arena holding a fresh one.
fn check_refusals<H>(
    (bytes, align): (usize, usize),
    init: &mut dyn FnMut(*mut c_void, usize, *mut *mut H) -> weir_status,
) {
    assert!(align.is_power_of_two() && align >= std::mem::align_of::<H>());
    assert!(bytes >= std::mem::size_of::<H>());
    let mut arena = Arena::new(bytes);
    let mut out: *mut H = null_mut();
    let before = arena.words.clone();
    let mem = arena.at(0);
    assert_eq!(init(mem, bytes - 1, &mut out), WEIR_ERR_PLACED_TOO_SMALL);
    assert_eq!(init(mem, 0, &mut out), WEIR_ERR_PLACED_TOO_SMALL);
    if align > 1 {
        let off = arena.at(1);
        assert_eq!(init(off, bytes + 64, &mut out), WEIR_ERR_PLACED_MISALIGNED);
    }
    assert_eq!(init(null_mut(), bytes, &mut out), WEIR_ERR_NULL);
    assert_eq!(init(mem, bytes, null_mut()), WEIR_ERR_NULL);
    assert!(out.is_null(), "out written on an error");
    assert_eq!(arena.words, before, "memory written on an error");
    assert_eq!(init(mem, bytes, &mut out), WEIR_OK);
    assert_eq!(out as *mut c_void, mem);
    assert!(arena.guard_intact());
}

fn footprint(call: impl FnOnce(*mut usize, *mut usize) -> weir_status) -> (usize, usize) {
    let (mut bytes, mut align) = (0usize, 0usize);
    assert_eq!(call(&mut bytes, &mut align), WEIR_OK);
    (bytes, align)
}

#[test]
fn a_placed_breaker_answers_as_its_heap_twin() {
    for size in [1, 7, 40] {
        let policy = weir_breaker_policy {
            size,
            ..weir_breaker_policy_preset()
        };
        let place = footprint(|b, a| weir_breaker_footprint(&policy, b, a));
        check_refusals::<weir_breaker>(place, &mut |mem, len, out| {
            weir_breaker_init_in(mem, len, &policy, 0, out)
        });
        for seed in 1..6u64 {
            let mut heap = null_mut();
            assert_eq!(weir_breaker_new(&policy, 0, &mut heap), WEIR_OK);
            let mut arena = Arena::new(place.0);
            let mut placed = null_mut();
            let mem = arena.at(0);
            assert_eq!(
                weir_breaker_init_in(mem, place.0, &policy, 0, &mut placed),
                WEIR_OK
            );
            let mut rng = Rng((seed * 0x9e37_79b9) | 1);
            let mut now = 0;
            for i in 0..4_000 {
                now = rng.step(now);
                // A new policy of the same size (and window) answers as the
                // heap twin's; a larger size is refused by the placed one,
                // changing nothing, and a smaller one is held to its size.
                if i % 700 == 699 {
                    let protection = rng.below(20) as f64;
                    let same = weir_breaker_policy {
                        protection,
                        ..policy
                    };
                    assert_eq!(weir_breaker_reconfigure(heap, &same), WEIR_OK);
                    assert_eq!(weir_breaker_reconfigure(placed, &same), WEIR_OK);
                    let larger = weir_breaker_policy {
                        size: size + 1,
                        ..same
                    };
                    assert_eq!(
                        weir_breaker_reconfigure(placed, &larger),
                        WEIR_ERR_PLACED_TOO_SMALL
                    );
                    if size > 1 {
                        let mut other = null_mut();
                        assert_eq!(weir_breaker_new(&policy, 0, &mut other), WEIR_OK);
                        let mut arena = Arena::new(place.0);
                        let mut small = null_mut();
                        let mem = arena.at(0);
                        assert_eq!(
                            weir_breaker_init_in(mem, place.0, &policy, 0, &mut small),
                            WEIR_OK
                        );
                        let smaller = weir_breaker_policy { size: 1, ..same };
                        assert_eq!(weir_breaker_reconfigure(small, &smaller), WEIR_OK);
                        assert_eq!(weir_breaker_reconfigure(other, &same), WEIR_OK);
                        assert_eq!(
                            weir_breaker_ratio(small, now).to_bits(),
                            weir_breaker_ratio(other, now).to_bits()
                        );
                        weir_breaker_free(other);
                        weir_breaker_free(small);
                        assert!(arena.guard_intact());
                    }
                }
                let roll = rng.roll();
                let (mut a, mut b) = (
                    weir_breaker_ticket::default(),
                    weir_breaker_ticket::default(),
                );
                let allowed = weir_breaker_allow(heap, now, roll, &mut a);
                assert_eq!(allowed, weir_breaker_allow(placed, now, roll, &mut b));
                assert_eq!((a.serial, a.flying), (b.serial, b.flying));
                if allowed {
                    let later = now + rng.below(1_000_000) as i64;
                    if rng.below(3) == 0 {
                        assert_eq!(
                            weir_breaker_fail(heap, &mut a, later),
                            weir_breaker_fail(placed, &mut b, later)
                        );
                    } else {
                        assert_eq!(
                            weir_breaker_pass(heap, &mut a, later),
                            weir_breaker_pass(placed, &mut b, later)
                        );
                    }
                }
                assert_eq!(
                    weir_breaker_ratio(heap, now).to_bits(),
                    weir_breaker_ratio(placed, now).to_bits()
                );
                let (mut ta, mut tb) =
                    (weir_breaker_tally::default(), weir_breaker_tally::default());
                assert_eq!(weir_breaker_read_tally(heap, now, &mut ta), WEIR_OK);
                assert_eq!(weir_breaker_read_tally(placed, now, &mut tb), WEIR_OK);
                assert_eq!(ta, tb);
            }
            weir_breaker_free(heap);
            weir_breaker_free(placed);
            // Free left the caller's memory alone: the breaker still answers.
            assert_eq!(
                weir_breaker_ratio(placed, now).to_bits(),
                weir_breaker_ratio(placed, now).to_bits()
            );
            assert!(arena.guard_intact());
        }
    }
    // A bad policy is its own status, before the memory is looked at.
    let bad = weir_breaker_policy {
        floor: 0.5,
        ..weir_breaker_policy_preset()
    };
    let mut out = null_mut();
    assert_eq!(
        weir_breaker_init_in(null_mut(), 0, &bad, 0, &mut out),
        WEIR_ERR_BREAKER_FLOOR
    );
    let (mut bytes, mut align) = (0, 0);
    assert_eq!(
        weir_breaker_footprint(&bad, &mut bytes, &mut align),
        WEIR_ERR_BREAKER_FLOOR
    );
    assert_eq!((bytes, align), (0, 0));
}

#[test]
fn a_placed_shedder_answers_as_its_heap_twin() {
    for size in [1, 9, 50] {
        let policy = weir_shedder_policy {
            size,
            ..weir_shedder_policy_preset()
        };
        let place = footprint(|b, a| weir_shedder_footprint(&policy, b, a));
        assert!(place.0 >= std::mem::size_of::<weir_shedder>() + size as usize * 48);
        check_refusals::<weir_shedder>(place, &mut |mem, len, out| {
            weir_shedder_init_in(mem, len, &policy, 0, out)
        });
        let mut heap = null_mut();
        assert_eq!(weir_shedder_new(&policy, 0, &mut heap), WEIR_OK);
        let mut arena = Arena::new(place.0);
        let mut placed = null_mut();
        let mem = arena.at(0);
        assert_eq!(
            weir_shedder_init_in(mem, place.0, &policy, 0, &mut placed),
            WEIR_OK
        );
        let mut rng = Rng(size as u64 * 1_000_003 + 7);
        let (mut open_a, mut open_b) = (Vec::new(), Vec::new());
        let mut now = 0;
        for i in 0..4_000 {
            now = rng.step(now) / 4;
            // A new policy of the same size answers as the heap twin's; a
            // larger size is refused by the placed one, changing nothing,
            // and a smaller one is held to its size (so it answers as the
            // heap twin given its own size).
            if i % 700 == 699 {
                let same = weir_shedder_policy {
                    cpu: 500 + rng.below(500) as i32,
                    window_ns: 1_000_000_000 * (1 + rng.below(5) as i64),
                    latency_ns: 1 + rng.below(1_000_000_000) as i64,
                    ..policy
                };
                assert_eq!(weir_shedder_reconfigure(heap, &same), WEIR_OK);
                let smaller = weir_shedder_policy {
                    size: (size - 1).max(1),
                    ..same
                };
                assert_eq!(weir_shedder_reconfigure(placed, &smaller), WEIR_OK);
                let larger = weir_shedder_policy {
                    size: size + 1,
                    ..same
                };
                let (mut sa, mut sb) =
                    (weir_shedder_stats::default(), weir_shedder_stats::default());
                weir_shedder_read_stats(placed, now, &mut sa);
                assert_eq!(
                    weir_shedder_reconfigure(placed, &larger),
                    WEIR_ERR_PLACED_TOO_SMALL
                );
                weir_shedder_read_stats(placed, now, &mut sb);
                assert_eq!(
                    format!("{sa:?}"),
                    format!("{sb:?}"),
                    "a refused change wrote"
                );
            }
            if rng.below(2) == 0 || open_a.is_empty() {
                let cpu = rng.below(1_100) as i32;
                let (mut a, mut b) = (
                    weir_shedder_ticket::default(),
                    weir_shedder_ticket::default(),
                );
                let allowed = weir_shedder_allow(heap, now, cpu, &mut a);
                assert_eq!(allowed, weir_shedder_allow(placed, now, cpu, &mut b));
                if allowed {
                    open_a.push(a);
                    open_b.push(b);
                }
            } else {
                let at = rng.below(open_a.len() as u64) as usize;
                let (mut a, mut b) = (open_a.swap_remove(at), open_b.swap_remove(at));
                if rng.below(4) == 0 {
                    assert_eq!(
                        weir_shedder_fail(heap, &mut a),
                        weir_shedder_fail(placed, &mut b)
                    );
                } else {
                    assert_eq!(
                        weir_shedder_pass(heap, &mut a, now),
                        weir_shedder_pass(placed, &mut b, now)
                    );
                }
            }
            let (mut sa, mut sb) = (weir_shedder_stats::default(), weir_shedder_stats::default());
            assert_eq!(weir_shedder_read_stats(heap, now, &mut sa), WEIR_OK);
            assert_eq!(weir_shedder_read_stats(placed, now, &mut sb), WEIR_OK);
            assert_eq!(format!("{sa:?}"), format!("{sb:?}"));
        }
        weir_shedder_free(heap);
        weir_shedder_free(placed);
        assert!(arena.guard_intact());
    }
    let bad = weir_shedder_policy {
        cpu: -1,
        ..weir_shedder_policy_preset()
    };
    let mut out = null_mut();
    assert_eq!(
        weir_shedder_init_in(null_mut(), 0, &bad, 0, &mut out),
        WEIR_ERR_SHEDDER_CPU
    );
}

#[test]
fn the_preset_breakers_footprint_is_the_documented_one() {
    let (bytes, align) = footprint(|b, a| weir_breaker_footprint(null(), b, a));
    assert_eq!(align, 8);
    // The handle and 40 buckets of 32 bytes.
    assert_eq!(
        bytes,
        std::mem::size_of::<weir_breaker>().div_ceil(8) * 8 + 40 * 32
    );
    if cfg!(target_pointer_width = "64") && cfg!(target_os = "linux") {
        assert_eq!(bytes, 1592);
    }
}

#[test]
fn a_placed_window_and_sliding_window_answer_as_their_heap_twins() {
    for size in [1, 5, 60] {
        let place = footprint(|b, a| weir_window_footprint(size, 1_000_000_000, b, a));
        check_refusals::<weir_window>(place, &mut |mem, len, out| {
            weir_window_init_in(mem, len, size, 1_000_000_000, 0, out)
        });
        let mut heap = null_mut();
        assert_eq!(weir_window_new(size, 1_000_000_000, 0, &mut heap), WEIR_OK);
        let mut arena = Arena::new(place.0);
        let mut placed = null_mut();
        let mem = arena.at(0);
        assert_eq!(
            weir_window_init_in(mem, place.0, size, 1_000_000_000, 0, &mut placed),
            WEIR_OK
        );
        let mut rng = Rng(u64::from(size as u32) * 77 + 1);
        let mut now = 0;
        for i in 0..4_000 {
            now = rng.step(now);
            // A new span of the same size answers as the heap twin's; a
            // larger size is refused by the placed window, changing nothing.
            if i % 500 == 499 {
                let span = 1_000_000_000 + rng.below(3) as i64 * 500_000_000;
                assert_eq!(weir_window_reconfigure(heap, size, span, now), WEIR_OK);
                assert_eq!(weir_window_reconfigure(placed, size, span, now), WEIR_OK);
                assert_eq!(
                    weir_window_reconfigure(placed, size + 1, span, now),
                    WEIR_ERR_PLACED_TOO_SMALL
                );
            }
            let value = rng.below(1_000) as i64;
            assert_eq!(
                weir_window_add(heap, now, value),
                weir_window_add(placed, now, value)
            );
            let current = rng.below(2) == 0;
            let (mut a, mut b) = (weir_window_total::default(), weir_window_total::default());
            assert_eq!(weir_window_read_total(heap, now, current, &mut a), WEIR_OK);
            assert_eq!(
                weir_window_read_total(placed, now, current, &mut b),
                WEIR_OK
            );
            assert_eq!(a, b);
        }
        weir_window_free(heap);
        weir_window_free(placed);
        assert!(arena.guard_intact());
    }
    for quota in [1, 3, 100] {
        let place = footprint(|b, a| weir_sliding_footprint(quota, 1_000_000_000, b, a));
        check_refusals::<weir_sliding>(place, &mut |mem, len, out| {
            weir_sliding_init_in(mem, len, quota, 1_000_000_000, out)
        });
        let mut heap = null_mut();
        assert_eq!(weir_sliding_new(quota, 1_000_000_000, &mut heap), WEIR_OK);
        let mut arena = Arena::new(place.0);
        let mut placed = null_mut();
        let mem = arena.at(0);
        assert_eq!(
            weir_sliding_init_in(mem, place.0, quota, 1_000_000_000, &mut placed),
            WEIR_OK
        );
        let mut rng = Rng(quota as u64 * 31 + 1);
        let mut now = 0;
        for i in 0..4_000 {
            now = rng.step(now) / 100;
            // A change within the placed memory answers as the heap twin's;
            // one past it is refused, changing nothing, while the heap
            // window grows.
            if i % 500 == 499 {
                let q = 1 + rng.below(quota as u64 + 2) as i64;
                let heap_status = weir_sliding_reconfigure(heap, q, 1_000_000_000);
                let placed_status = weir_sliding_reconfigure(placed, q, 1_000_000_000);
                assert_eq!(heap_status, WEIR_OK);
                if q <= quota {
                    assert_eq!(placed_status, WEIR_OK);
                } else {
                    assert_eq!(placed_status, WEIR_ERR_PLACED_TOO_SMALL);
                    assert_eq!(
                        weir_sliding_reconfigure(heap, quota, 1_000_000_000),
                        WEIR_OK
                    );
                    let last = weir_sliding_reconfigure(placed, quota, 1_000_000_000);
                    assert_eq!(last, WEIR_OK);
                }
            }
            assert_eq!(weir_sliding_take(heap, now), weir_sliding_take(placed, now));
            assert_eq!(weir_sliding_left(heap, now), weir_sliding_left(placed, now));
            assert_eq!(weir_sliding_next(heap, now), weir_sliding_next(placed, now));
        }
        weir_sliding_free(heap);
        weir_sliding_free(placed);
        assert!(arena.guard_intact());
    }
    let mut out = null_mut();
    assert_eq!(
        weir_window_init_in(null_mut(), 0, 4, 0, 0, &mut out),
        WEIR_ERR_WINDOW_SPAN
    );
    assert_eq!(
        weir_window_init_in(null_mut(), 0, 1 << 21, 1, 0, &mut out),
        WEIR_ERR_WINDOW_SIZE
    );
    let mut out = null_mut();
    assert_eq!(
        weir_sliding_init_in(null_mut(), 0, 0, 1, &mut out),
        WEIR_ERR_QUOTA
    );
    assert_eq!(
        weir_sliding_init_in(null_mut(), 0, 1, 0, &mut out),
        WEIR_ERR_SLIDING_WINDOW
    );
    let (mut bytes, mut align) = (0, 0);
    assert_eq!(
        weir_sliding_footprint(i64::MAX, 1, &mut bytes, &mut align),
        WEIR_ERR_TOO_LARGE
    );
}

#[test]
fn placed_plain_handles_answer_as_their_heap_twins() {
    // Bucket.
    let place = footprint(|b, a| weir_bucket_footprint(b, a));
    check_refusals::<weir_bucket>(place, &mut |mem, len, out| {
        weir_bucket_init_in(mem, len, 50.0, 5.0, 0, out)
    });
    let mut heap = null_mut();
    assert_eq!(weir_bucket_new(50.0, 5.0, 0, &mut heap), WEIR_OK);
    let mut arena = Arena::new(place.0);
    let mut placed = null_mut();
    assert_eq!(
        weir_bucket_init_in(arena.at(0), place.0, 50.0, 5.0, 0, &mut placed),
        WEIR_OK
    );
    let mut rng = Rng(11);
    let mut now = 0;
    for _ in 0..4_000 {
        now = rng.step(now) / 50;
        let n = [1.0, 0.5, 2.0, 7.0][rng.below(4) as usize];
        assert_eq!(
            weir_bucket_take(heap, now, n),
            weir_bucket_take(placed, now, n)
        );
        assert_eq!(
            weir_bucket_next(heap, now, n),
            weir_bucket_next(placed, now, n)
        );
        assert_eq!(
            weir_bucket_tokens(heap, now).to_bits(),
            weir_bucket_tokens(placed, now).to_bits()
        );
    }
    weir_bucket_free(heap);
    weir_bucket_free(placed);
    assert_eq!(
        weir_bucket_init_in(null_mut(), 0, f64::NAN, 1.0, 0, &mut placed),
        WEIR_ERR_NOT_FINITE
    );

    // Gate.
    let place = footprint(|b, a| weir_gate_footprint(b, a));
    check_refusals::<weir_gate>(place, &mut |mem, len, out| {
        weir_gate_init_in(mem, len, 3, out)
    });
    let mut heap = null_mut();
    assert_eq!(weir_gate_new(3, &mut heap), WEIR_OK);
    let mut arena = Arena::new(place.0);
    let mut placed = null_mut();
    assert_eq!(
        weir_gate_init_in(arena.at(0), place.0, 3, &mut placed),
        WEIR_OK
    );
    for _ in 0..2_000 {
        if rng.below(2) == 0 {
            assert_eq!(weir_gate_enter(heap), weir_gate_enter(placed));
        } else {
            weir_gate_leave(heap);
            weir_gate_leave(placed);
        }
        assert_eq!(weir_gate_held(heap), weir_gate_held(placed));
    }
    weir_gate_free(heap);
    weir_gate_free(placed);

    // Period.
    let place = footprint(|b, a| weir_period_footprint(b, a));
    check_refusals::<weir_period>(place, &mut |mem, len, out| {
        weir_period_init_in(mem, len, 4, 1_000_000_000, true, out)
    });
    let mut heap = null_mut();
    assert_eq!(weir_period_new(4, 1_000_000_000, true, &mut heap), WEIR_OK);
    let mut arena = Arena::new(place.0);
    let mut placed = null_mut();
    assert_eq!(
        weir_period_init_in(arena.at(0), place.0, 4, 1_000_000_000, true, &mut placed),
        WEIR_OK
    );
    let mut now = 0;
    for _ in 0..4_000 {
        now = rng.step(now) / 10;
        assert_eq!(weir_period_take(heap, now), weir_period_take(placed, now));
        assert_eq!(weir_period_left(heap, now), weir_period_left(placed, now));
        assert_eq!(weir_period_next(heap, now), weir_period_next(placed, now));
    }
    weir_period_free(heap);
    weir_period_free(placed);
    assert_eq!(
        weir_period_init_in(null_mut(), 0, 0, 1, false, &mut placed),
        WEIR_ERR_QUOTA
    );

    // Budget, both forms (the preset, then a percent one).
    let place = footprint(|b, a| weir_budget_footprint(b, a));
    check_refusals::<weir_budget>(place, &mut |mem, len, out| {
        weir_budget_init_in(mem, len, null(), 0, out)
    });
    let percent = weir_budget_policy {
        form: WEIR_BUDGET_PERCENT,
        ..weir_budget_policy_preset()
    };
    for policy in [weir_budget_policy_preset(), percent] {
        let mut heap = null_mut();
        let made = weir_budget_new(&policy, 0, &mut heap);
        let mut arena = Arena::new(place.0);
        let mut placed = null_mut();
        assert_eq!(
            weir_budget_init_in(arena.at(0), place.0, &policy, 0, &mut placed),
            made
        );
        if made != WEIR_OK {
            continue;
        }
        let mut now = 0;
        for i in 0..4_000 {
            now = rng.step(now) / 10;
            // A new policy in place: each form in turn, both twins alike.
            if i % 900 == 899 {
                let to = weir_budget_policy {
                    form: i / 900 % 2,
                    ttl_ns: 1_000_000_000 * (1 + rng.below(20) as i64),
                    percent: rng.below(100) as f64 / 50.0,
                    max_tokens: 1 + rng.below(30) as i32,
                    ..policy
                };
                let status = weir_budget_reconfigure(heap, &to, now);
                assert_eq!(weir_budget_reconfigure(placed, &to, now), status);
                assert_eq!(status, WEIR_OK);
            }
            if rng.below(3) == 0 {
                assert_eq!(
                    weir_budget_withdraw(heap, now),
                    weir_budget_withdraw(placed, now)
                );
            } else {
                weir_budget_deposit(heap, now);
                weir_budget_deposit(placed, now);
            }
            assert_eq!(weir_budget_left(heap, now), weir_budget_left(placed, now));
            assert_eq!(
                weir_budget_tokens(heap, now),
                weir_budget_tokens(placed, now)
            );
        }
        weir_budget_free(heap);
        weir_budget_free(placed);
    }

    // Adaptive limit.
    let place = footprint(|b, a| weir_concurrency_footprint(b, a));
    check_refusals::<weir_concurrency>(place, &mut |mem, len, out| {
        weir_concurrency_init_in(mem, len, null(), out)
    });
    let mut heap = null_mut();
    assert_eq!(weir_concurrency_new(null(), &mut heap), WEIR_OK);
    let mut arena = Arena::new(place.0);
    let mut placed = null_mut();
    assert_eq!(
        weir_concurrency_init_in(arena.at(0), place.0, null(), &mut placed),
        WEIR_OK
    );
    let (mut open_a, mut open_b) = (Vec::new(), Vec::new());
    let mut now = 0;
    for i in 0..4_000 {
        now += rng.below(3_000_000) as i64;
        // A new policy in place, both twins alike.
        if i % 900 == 899 {
            let min_limit = 1 + rng.below(30) as i32;
            let to = weir_concurrency_policy {
                initial_limit: min_limit,
                min_limit,
                max_limit: min_limit + rng.below(200) as i32,
                ..weir_concurrency_policy_preset()
            };
            assert_eq!(weir_concurrency_reconfigure(heap, &to), WEIR_OK);
            assert_eq!(weir_concurrency_reconfigure(placed, &to), WEIR_OK);
        }
        if rng.below(2) == 0 || open_a.is_empty() {
            let (mut a, mut b) = (
                weir_concurrency_ticket::default(),
                weir_concurrency_ticket::default(),
            );
            let entered = weir_concurrency_enter(heap, now, &mut a);
            assert_eq!(entered, weir_concurrency_enter(placed, now, &mut b));
            assert_eq!(a, b);
            if entered {
                open_a.push(a);
                open_b.push(b);
            }
        } else {
            let at = rng.below(open_a.len() as u64) as usize;
            let (mut a, mut b) = (open_a.swap_remove(at), open_b.swap_remove(at));
            let dropped = rng.below(5) == 0;
            assert_eq!(
                weir_concurrency_leave(heap, &mut a, now, dropped),
                weir_concurrency_leave(placed, &mut b, now, dropped)
            );
        }
        assert_eq!(weir_concurrency_limit(heap), weir_concurrency_limit(placed));
        assert_eq!(
            weir_concurrency_flying(heap),
            weir_concurrency_flying(placed)
        );
    }
    weir_concurrency_free(heap);
    weir_concurrency_free(placed);
}

#[test]
fn a_placed_lease_answers_as_its_heap_twin() {
    let place = footprint(|b, a| weir_lease_footprint(b, a));
    assert_eq!(
        place,
        (
            std::mem::size_of::<weir_lease>(),
            std::mem::align_of::<weir_lease>()
        )
    );
    check_refusals::<weir_lease>(place, &mut |mem, len, out| {
        weir_lease_init_in(mem, len, null(), 0, out)
    });
    // A policy the heap constructor refuses is refused the same, before
    // the memory is looked at.
    let bad = weir_lease_policy {
        share: 0.0,
        ..weir_lease_policy_preset()
    };
    let mut placed = null_mut();
    assert_eq!(
        weir_lease_init_in(null_mut(), 0, &bad, 0, &mut placed),
        WEIR_ERR_LEASE_SHARE
    );
    assert!(placed.is_null());
    let small = weir_lease_policy {
        burst: 12,
        share: 0.5,
        ..weir_lease_policy_preset()
    };
    for (seed, policy) in [(3, weir_lease_policy_preset()), (4, small)] {
        let mut rng = Rng(seed);
        let mut heap = null_mut();
        assert_eq!(weir_lease_new(&policy, 0, &mut heap), WEIR_OK);
        let mut arena = Arena::new(place.0);
        assert_eq!(
            weir_lease_init_in(arena.at(0), place.0, &policy, 0, &mut placed),
            WEIR_OK
        );
        assert_eq!(weir_lease_start_counting(heap), WEIR_OK);
        assert_eq!(weir_lease_start_counting(placed), WEIR_OK);
        let cap = weir_lease_cap(heap);
        assert_eq!(cap, weir_lease_cap(placed));
        // Asks in flight: (ask, sent at), answered later in order.
        let mut asks: Vec<(i64, i64)> = Vec::new();
        let mut now = 0;
        for _ in 0..6_000 {
            now = rng.step(now) / 20;
            match rng.below(10) {
                0..=5 => {
                    let cost = 1 + rng.below(cap.min(4) as u64) as i64;
                    let cost = if rng.below(50) == 0 { cap + 1 } else { cost };
                    let (mut a, mut b) =
                        (weir_lease_answer::default(), weir_lease_answer::default());
                    let status = weir_lease_take(heap, now, cost, &mut a);
                    assert_eq!(status, weir_lease_take(placed, now, cost, &mut b));
                    assert_eq!(a, b);
                    if status == WEIR_OK && a.ask > 0 {
                        asks.push((a.ask, now));
                    }
                }
                6..=8 if !asks.is_empty() => {
                    let (ask, sent) = asks.remove(0);
                    let granted = if rng.below(4) == 0 {
                        rng.below(ask as u64 + 1) as i64
                    } else {
                        ask
                    };
                    let until = sent + policy.ttl_ns;
                    let next = now + rng.below(3) as i64 * 50_000_000;
                    assert_eq!(
                        weir_lease_grant(heap, now, granted, until, next),
                        weir_lease_grant(placed, now, granted, until, next)
                    );
                }
                9 if rng.below(8) == 0 => {
                    assert_eq!(
                        weir_lease_release(heap, now),
                        weir_lease_release(placed, now)
                    );
                }
                _ => {}
            }
            assert_eq!(
                weir_lease_unspent(heap, now),
                weir_lease_unspent(placed, now)
            );
            assert_eq!(
                weir_lease_expires(heap, now),
                weir_lease_expires(placed, now)
            );
            let (mut a, mut b) = (weir_lease_stats::default(), weir_lease_stats::default());
            assert_eq!(weir_lease_read_stats(heap, now, &mut a), WEIR_OK);
            assert_eq!(weir_lease_read_stats(placed, now, &mut b), WEIR_OK);
            assert_eq!(a, b);
        }
        let (mut a, mut b) = (weir_counts::default(), weir_counts::default());
        assert_eq!(weir_lease_read_counts(heap, &mut a), WEIR_OK);
        assert_eq!(weir_lease_read_counts(placed, &mut b), WEIR_OK);
        assert_eq!(a, b);
        assert!(a.admitted > 0 && a.refused > 0, "{a:?}");
        weir_lease_free(heap);
        // Free on a placed lease does nothing: the memory is the caller's,
        // and the lease in it still answers.
        weir_lease_free(placed);
        assert_eq!(weir_lease_cap(placed), cap);
        assert!(arena.guard_intact());
    }
}

#[test]
fn a_footprint_needs_usable_out_pointers() {
    let mut align = 0usize;
    assert_eq!(weir_bucket_footprint(null_mut(), &mut align), WEIR_ERR_NULL);
    assert_eq!(align, 0);
    let mut bytes = [0usize; 2];
    let off = (bytes.as_mut_ptr() as usize + 1) as *mut usize;
    assert_eq!(weir_gate_footprint(off, &mut align), WEIR_ERR_MISALIGNED);
    assert_eq!(
        weir_breaker_footprint(null(), &mut bytes[0], null_mut()),
        WEIR_ERR_NULL
    );
    assert_eq!(bytes, [0, 0]);
}

/// Every pool call on both twins with the same arguments: the answers, the
/// readings and the running totals agree. Now and then both take new
/// limits their memory holds (a size up to the first, an idle cap up to
/// its own), and the placed one is refused limits needing a larger table,
/// changing nothing.
fn pool_twins(heap: *mut weir_pool, placed: *mut weir_pool, seed: u64, limits: weir_pool_policy) {
    let mut rng = Rng((seed * 0x2545_f491) | 1);
    let mut now = 0i64;
    let mut lent: Vec<usize> = Vec::new();
    let mut fresh = 1usize;
    for round in 0..4_000 {
        now = rng.step(now) / 64;
        if round % 400 == 399 {
            let within = weir_pool_policy {
                size: 1 + rng.below(limits.size as u64) as i64,
                idle: rng.below(limits.idle.min(limits.size) as u64 + 1) as i64,
                keep_ns: rng.below(6_000_000) as i64,
                ..limits
            };
            assert_eq!(weir_pool_reconfigure(heap, &within), WEIR_OK);
            assert_eq!(weir_pool_reconfigure(placed, &within), WEIR_OK);
            let larger = weir_pool_policy {
                size: 2 * limits.size + 1,
                ..within
            };
            let (mut sa, mut sb) = (weir_pool_stats::default(), weir_pool_stats::default());
            weir_pool_read_stats(placed, &mut sa);
            let (live, idle) = (weir_pool_live(placed), weir_pool_idle(placed));
            assert_eq!(
                weir_pool_reconfigure(placed, &larger),
                WEIR_ERR_PLACED_TOO_SMALL
            );
            weir_pool_read_stats(placed, &mut sb);
            assert_eq!(
                (sa, live, idle),
                (sb, weir_pool_live(placed), weir_pool_idle(placed))
            );
        }
        match rng.below(16) {
            0..=4 if lent.len() < 8 => {
                let (a, b) = (weir_pool_take(heap, now), weir_pool_take(placed, now));
                assert_eq!(a, b);
                match a.kind {
                    WEIR_POOL_TAKEN_READY => lent.push(a.item),
                    WEIR_POOL_TAKEN_MAKE => {
                        let draw = rng.next();
                        let (a, b) = match rng.below(5) {
                            0 => (weir_pool_unmade(heap), weir_pool_unmade(placed)),
                            1 => (
                                weir_pool_made_jittered(heap, fresh, now, draw),
                                weir_pool_made_jittered(placed, fresh, now, draw),
                            ),
                            _ => (
                                weir_pool_made(heap, fresh, now),
                                weir_pool_made(placed, fresh, now),
                            ),
                        };
                        assert_eq!(a, b);
                        lent.push(fresh);
                        fresh += 1;
                    }
                    _ => {}
                }
            }
            0..=9 => {
                // A lent one back, or one the pool never lent (a misuse).
                let item = if lent.is_empty() || rng.below(8) == 0 {
                    1_000_000 + rng.below(4) as usize
                } else {
                    lent.swap_remove(rng.below(lent.len() as u64) as usize)
                };
                let (mut ka, mut kb) = (false, false);
                assert_eq!(
                    weir_pool_give(heap, item, now, &mut ka),
                    weir_pool_give(placed, item, now, &mut kb)
                );
                assert_eq!(ka, kb);
            }
            10 if !lent.is_empty() => {
                let item = lent.swap_remove(rng.below(lent.len() as u64) as usize);
                assert_eq!(weir_pool_drop(heap, item), weir_pool_drop(placed, item));
            }
            11 | 12 => {
                let cap = rng.below(6) as usize;
                let (mut a, mut b) = ([0usize; 6], [0usize; 6]);
                let n = weir_pool_evict(heap, now, a.as_mut_ptr(), cap);
                assert_eq!(n, weir_pool_evict(placed, now, b.as_mut_ptr(), cap));
                assert_eq!(a, b);
            }
            13 => assert_eq!(weir_pool_mark_old(heap), weir_pool_mark_old(placed)),
            14 => {
                let wanted = weir_pool_make_ahead(heap);
                assert_eq!(wanted, weir_pool_make_ahead(placed));
                for _ in 0..wanted {
                    let (mut ka, mut kb) = (false, false);
                    assert_eq!(
                        weir_pool_give(heap, fresh, now, &mut ka),
                        weir_pool_give(placed, fresh, now, &mut kb)
                    );
                    assert_eq!(ka, kb);
                    fresh += 1;
                }
            }
            _ if round > 3_800 => {
                let (mut a, mut b) = ([0usize; 3], [0usize; 3]);
                let n = weir_pool_close(heap, a.as_mut_ptr(), 3);
                assert_eq!(n, weir_pool_close(placed, b.as_mut_ptr(), 3));
                assert_eq!(a, b);
            }
            _ => assert_eq!(
                weir_pool_next_expiry(heap, now),
                weir_pool_next_expiry(placed, now)
            ),
        }
        assert_eq!(weir_pool_live(heap), weir_pool_live(placed));
        assert_eq!(weir_pool_idle(heap), weir_pool_idle(placed));
        assert_eq!(weir_pool_busy(heap), weir_pool_busy(placed));
        let (mut sa, mut sb) = (weir_pool_stats::default(), weir_pool_stats::default());
        assert_eq!(weir_pool_read_stats(heap, &mut sa), WEIR_OK);
        assert_eq!(weir_pool_read_stats(placed, &mut sb), WEIR_OK);
        assert_eq!(sa, sb);
    }
    let (mut ca, mut cb) = (weir_counts::default(), weir_counts::default());
    assert_eq!(weir_pool_read_counts(heap, &mut ca), WEIR_OK);
    assert_eq!(weir_pool_read_counts(placed, &mut cb), WEIR_OK);
    assert_eq!(ca, cb);
    assert!(
        ca.admitted > 100 && ca.refused > 0 && ca.errors > 0,
        "{ca:?}"
    );
}

#[test]
fn a_placed_pool_answers_as_its_heap_twin() {
    for (size, idle) in [(1, 1), (6, 4), (10, 0), (12, 40)] {
        let limits = weir_pool_policy {
            size,
            idle,
            keep_ns: 3_000_000,
            life_ns: 9_000_000,
            life_jitter: 0.5,
            min_idle: 2,
            max_making: 3,
        };
        let place = footprint(|b, a| weir_pool_footprint(&limits, b, a));
        // The handle, then a 2^k ≥ 2 × size table and min(idle, size) idle
        // places, a slot each.
        let slots = (2 * size as usize).next_power_of_two() + idle.min(size) as usize;
        assert_eq!(
            place.0,
            std::mem::size_of::<weir_pool>().div_ceil(8) * 8 + slots * POOL_SLOT
        );
        check_refusals::<weir_pool>(place, &mut |mem, len, out| {
            weir_pool_init_in(mem, len, &limits, out)
        });
        for seed in 1..4u64 {
            let mut heap = null_mut();
            assert_eq!(weir_pool_new(&limits, &mut heap), WEIR_OK);
            let mut arena = Arena::new(place.0);
            let mut placed = null_mut();
            let mem = arena.at(0);
            assert_eq!(
                weir_pool_init_in(mem, place.0, &limits, &mut placed),
                WEIR_OK
            );
            assert_eq!(weir_pool_start_counting(heap), WEIR_OK);
            assert_eq!(weir_pool_start_counting(placed), WEIR_OK);
            pool_twins(heap, placed, seed * 31 + size as u64, limits);
            weir_pool_free(heap);
            weir_pool_free(placed);
            // Free left the caller's memory alone: the pool still answers.
            assert_eq!(weir_pool_live(placed), weir_pool_live(placed));
            assert!(arena.guard_intact());
        }
    }
    // Bad limits are their own status, before the memory is looked at.
    let bad = weir_pool_policy {
        size: 0,
        ..weir_pool_policy_preset()
    };
    let mut out = null_mut();
    assert_eq!(
        weir_pool_init_in(null_mut(), 0, &bad, &mut out),
        WEIR_ERR_POOL_SIZE
    );
    let (mut bytes, mut align) = (0, 0);
    assert_eq!(
        weir_pool_footprint(&bad, &mut bytes, &mut align),
        WEIR_ERR_POOL_SIZE
    );
    assert_eq!((bytes, align), (0, 0));
    // The largest pool's footprint is answered, not refused.
    let largest = weir_pool_policy {
        size: WEIR_POOL_MAX_SIZE,
        ..weir_pool_policy_preset()
    };
    assert_eq!(
        weir_pool_footprint(&largest, &mut bytes, &mut align),
        WEIR_OK
    );
    assert!(bytes > (1 << 25) * POOL_SLOT);
}

/// A pool's slot: its item (a `uintptr_t`) and two 64-bit times, 24 bytes
/// on a 64-bit host and 20 where a 64-bit integer is 4-aligned (i686).
const POOL_SLOT: usize = core::mem::size_of::<weir_core::pool::PoolSlot>();
const _: () = assert!(
    POOL_SLOT
        == 2 * 8 + core::mem::size_of::<usize>().next_multiple_of(core::mem::align_of::<u64>())
);

#[test]
fn the_preset_pools_footprint_is_the_documented_one() {
    let (bytes, align) = footprint(|b, a| weir_pool_footprint(null(), b, a));
    assert_eq!(align, 8);
    // The handle, a table of 32 and 10 idle places, a slot each.
    assert_eq!(
        bytes,
        std::mem::size_of::<weir_pool>().div_ceil(8) * 8 + 42 * POOL_SLOT
    );
    if cfg!(target_pointer_width = "64") && cfg!(target_os = "linux") {
        assert_eq!(bytes, 1288);
    }
}

/// A 64-aligned region laid with `weir_bloom_init_in` (or its gcra form).
struct Region(Arena, usize);

impl Region {
    fn laid(size_log2: u32, gcra: bool, seed: u64) -> Region {
        let len = weir_bloom_footprint(size_log2);
        let mut region = Region(Arena::new(len), len);
        let mem = region.0.at(0);
        let status = if gcra {
            let mut limit = weir_gcra_limit {
                per_token: 0,
                tolerance: 0,
                shift: 0,
                reserved: 0,
            };
            assert_eq!(weir_gcra_limit_new(2_000.0, 3, &mut limit), WEIR_OK);
            weir_bloom_init_gcra_in(mem, len, size_log2, 2, &limit, seed, 9)
        } else {
            let mut limit = weir_rate_limit {
                interval_ns: 0,
                interval_frac: 0,
                burst: 0,
            };
            assert_eq!(weir_rate_limit_new(2_000.0, 3, &mut limit), WEIR_OK);
            weir_bloom_init_in(mem, len, size_log2, 2, &limit, seed, 9)
        };
        assert_eq!(status, WEIR_OK);
        region
    }
    fn mem(&mut self) -> *mut c_void {
        self.0.at(0)
    }
}

#[test]
fn a_bloom_view_answers_as_its_heap_twin_and_shares_the_regions_words() {
    let place = footprint(|b, a| weir_bloom_view_footprint(b, a));
    assert_eq!(place, (std::mem::size_of::<weir_bloom>(), 8));
    for gcra in [false, true] {
        for seed in 1..4u64 {
            let mut region = Region::laid(7, gcra, seed);
            let (rmem, rlen) = (region.mem(), region.1);
            check_refusals::<weir_bloom>(place, &mut |mem, len, out| {
                weir_bloom_view_in(mem, len, rmem, rlen, out)
            });
            // The heap twin of the same shape and key.
            let mut heap = null_mut();
            let status = if gcra {
                let mut limit = weir_gcra_limit {
                    per_token: 0,
                    tolerance: 0,
                    shift: 0,
                    reserved: 0,
                };
                assert_eq!(weir_gcra_limit_new(2_000.0, 3, &mut limit), WEIR_OK);
                weir_bloom_new_gcra(7, 2, &limit, seed, 9, &mut heap)
            } else {
                let mut limit = weir_rate_limit {
                    interval_ns: 0,
                    interval_frac: 0,
                    burst: 0,
                };
                assert_eq!(weir_rate_limit_new(2_000.0, 3, &mut limit), WEIR_OK);
                weir_bloom_new(7, 2, &limit, seed, 9, &mut heap)
            };
            assert_eq!(status, WEIR_OK);
            let mut arena = Arena::new(place.0);
            let mut view = null_mut();
            let mem = arena.at(0);
            assert_eq!(
                weir_bloom_view_in(mem, place.0, rmem, rlen, &mut view),
                WEIR_OK
            );
            assert_eq!(weir_bloom_start_counting(heap), WEIR_OK);
            assert_eq!(weir_bloom_start_counting(view), WEIR_OK);
            let mut rng = Rng(seed * 77 + u64::from(gcra));
            let mut now = 0i64;
            for _ in 0..5_000 {
                now = rng.step(now).max(-10) / 256;
                let key = rng.below(300).to_le_bytes();
                let k = key.as_ptr().cast::<c_void>();
                let allowed = weir_bloom_allow(heap, now, k, 8);
                assert_eq!(allowed, weir_bloom_allow(view, now, k, 8), "at {now}");
                assert_eq!(
                    weir_bloom_next(heap, now, k, 8),
                    weir_bloom_next(view, now, k, 8)
                );
                // The region's own calls read the words the view writes.
                assert_eq!(
                    weir_bloom_next_in(rmem, rlen, now, k, 8),
                    weir_bloom_next(view, now, k, 8)
                );
            }
            let (mut ca, mut cb) = (weir_counts::default(), weir_counts::default());
            assert_eq!(weir_bloom_read_counts(heap, &mut ca), WEIR_OK);
            assert_eq!(weir_bloom_read_counts(view, &mut cb), WEIR_OK);
            assert_eq!(ca, cb);
            assert!(ca.admitted > 100 && ca.refused > 100, "{ca:?}");
            // One limiter: what the region's call takes, the view finds
            // taken (a burst of 3 on each of the key's two words).
            let key = b"shared";
            let k = key.as_ptr().cast::<c_void>();
            let t = now + 1_000_000_000;
            let taken = (0..6)
                .filter(|_| weir_bloom_allow_in(rmem, rlen, t, k, key.len()))
                .count();
            assert!(taken >= 3);
            assert!(!weir_bloom_allow(view, t, k, key.len()));
            weir_bloom_free(heap);
            weir_bloom_free(view);
            // Free left both memories alone: the region still checks out,
            // and the view still answers.
            assert_eq!(weir_bloom_check_in(rmem, rlen), WEIR_OK);
            assert!(!weir_bloom_allow(view, t, k, key.len()));
            assert!(arena.guard_intact() && region.0.guard_intact());
        }
    }
}

#[test]
fn a_bloom_view_refuses_what_check_in_refuses_and_writes_nothing() {
    let place = footprint(|b, a| weir_bloom_view_footprint(b, a));
    let mut arena = Arena::new(place.0);
    let before = arena.words.clone();
    let mem = arena.at(0);
    let mut out: *mut weir_bloom = null_mut();
    let mut region = Region::laid(4, false, 1);
    let (rmem, rlen) = (region.mem(), region.1);
    // Too short for the header's shape, NULL, not 64-aligned.
    assert_eq!(
        weir_bloom_view_in(mem, place.0, rmem, rlen - 1, &mut out),
        WEIR_ERR_BLOOM_TOO_SMALL
    );
    assert_eq!(
        weir_bloom_view_in(mem, place.0, null_mut(), rlen, &mut out),
        WEIR_ERR_NULL
    );
    let off = (rmem as usize + 8) as *mut c_void;
    assert_eq!(
        weir_bloom_view_in(mem, place.0, off, rlen - 8, &mut out),
        WEIR_ERR_MISALIGNED
    );
    // Another version (weir 0.1's), and bytes that are no header at all.
    let head = rmem.cast::<u64>();
    // SAFETY (test): the region's header words, in the arena.
    unsafe { head.add(1).write(1) };
    assert_eq!(
        weir_bloom_view_in(mem, place.0, rmem, rlen, &mut out),
        WEIR_ERR_BLOOM_VERSION
    );
    // SAFETY (test): as above.
    unsafe { head.write(0) };
    assert_eq!(
        weir_bloom_view_in(mem, place.0, rmem, rlen, &mut out),
        WEIR_ERR_BLOOM_FOREIGN
    );
    // The region is checked before the memory: a bad region with no memory
    // is the region's status.
    assert_eq!(
        weir_bloom_view_in(null_mut(), 0, rmem, rlen, &mut out),
        WEIR_ERR_BLOOM_FOREIGN
    );
    assert!(out.is_null());
    assert_eq!(arena.words, before, "memory written on an error");

    // A view laid over its own region would overwrite its words: refused,
    // whether it starts inside the region or runs into it.
    let mut region = Region::laid(4, false, 2);
    let (rmem, rlen) = (region.mem(), region.1);
    let snapshot = region.0.words.clone();
    for start in [rmem as usize, rmem as usize + 64, rmem as usize + rlen - 64] {
        assert_eq!(
            weir_bloom_view_in(start as *mut c_void, place.0, rmem, rlen, &mut out),
            WEIR_ERR_PLACED_OVERLAP
        );
    }
    assert!(out.is_null());
    assert_eq!(
        region.0.words, snapshot,
        "a refused view wrote to its region"
    );
    let mut before_region = Arena::new(place.0 + 64 + rlen);
    let low = before_region.at(0);
    // Memory that ends where a region begins is apart from it.
    let next = (low as usize + place.0.div_ceil(64) * 64) as *mut c_void;
    assert_eq!(weir_bloom_init_in(next, rlen, 4, 1, &rate(), 1, 2), WEIR_OK);
    assert_eq!(
        weir_bloom_view_in(low, place.0, next, rlen, &mut out),
        WEIR_OK
    );
    assert!(weir_bloom_allow(out, 0, b"k".as_ptr().cast(), 1));
}

/// A rate limit of 1 a second, burst 1.
fn rate() -> weir_rate_limit {
    let mut limit = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    assert_eq!(weir_rate_limit_new(1.0, 1, &mut limit), WEIR_OK);
    limit
}

/// A bloom array's limit: (rate words, GCRA words) at 2,000/s, a burst of 3.
fn bloom_limits() -> (weir_rate_limit, weir_gcra_limit) {
    let mut rate = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    let mut gcra = weir_gcra_limit {
        per_token: 0,
        tolerance: 0,
        shift: 0,
        reserved: 0,
    };
    assert_eq!(weir_rate_limit_new(2_000.0, 3, &mut rate), WEIR_OK);
    assert_eq!(weir_gcra_limit_new(2_000.0, 3, &mut gcra), WEIR_OK);
    (rate, gcra)
}

#[test]
fn a_placed_bloom_answers_as_its_heap_twin() {
    let (rate, gcra) = bloom_limits();
    for size_log2 in [3, 7, 10] {
        let place = footprint(|b, a| weir_bloom_place_footprint(size_log2, b, a));
        // The handle, then the lines from the next multiple of 64 bytes.
        let lines = 1usize << (size_log2 - 3);
        assert_eq!(
            place,
            (
                std::mem::size_of::<weir_bloom>().div_ceil(64) * 64 + 64 * lines,
                64
            )
        );
        for gcra_kind in [false, true] {
            let init = |mem, len, hashes, seed, out| {
                if gcra_kind {
                    weir_bloom_place_gcra_in(mem, len, size_log2, hashes, &gcra, seed, 9, out)
                } else {
                    weir_bloom_place_in(mem, len, size_log2, hashes, &rate, seed, 9, out)
                }
            };
            check_refusals::<weir_bloom>(place, &mut |mem, len, out| init(mem, len, 2, 1, out));
            for (seed, hashes) in [(1u64, 1u32), (2, 2), (3, 8)] {
                let mut heap = null_mut();
                let status = if gcra_kind {
                    weir_bloom_new_gcra(size_log2, hashes, &gcra, seed, 9, &mut heap)
                } else {
                    weir_bloom_new(size_log2, hashes, &rate, seed, 9, &mut heap)
                };
                assert_eq!(status, WEIR_OK);
                let mut arena = Arena::new(place.0);
                let mut placed = null_mut();
                let mem = arena.at(0);
                assert_eq!(init(mem, place.0, hashes, seed, &mut placed), WEIR_OK);
                assert_eq!(weir_bloom_start_counting(heap), WEIR_OK);
                assert_eq!(weir_bloom_start_counting(placed), WEIR_OK);
                let mut rng = Rng(seed * 31 + u64::from(gcra_kind) + u64::from(size_log2));
                let (mut clock, mut now) = (0i64, 0i64);
                for _ in 0..5_000 {
                    // The steps scaled to the words' 1.5 ms windows.
                    clock = rng.step(clock);
                    now = clock.max(-10) >> 16;
                    let key = rng.below(12).to_le_bytes();
                    let k = key.as_ptr().cast::<c_void>();
                    let allowed = weir_bloom_allow(heap, now, k, 8);
                    assert_eq!(allowed, weir_bloom_allow(placed, now, k, 8), "at {now}");
                    assert_eq!(
                        weir_bloom_next(heap, now, k, 8),
                        weir_bloom_next(placed, now, k, 8)
                    );
                }
                let (mut ca, mut cb) = (weir_counts::default(), weir_counts::default());
                assert_eq!(weir_bloom_read_counts(heap, &mut ca), WEIR_OK);
                assert_eq!(weir_bloom_read_counts(placed, &mut cb), WEIR_OK);
                assert_eq!(ca, cb);
                assert!(ca.admitted > 100 && ca.refused > 100, "{ca:?}");
                // Not a region: the region calls refuse its memory.
                assert_eq!(weir_bloom_check_in(mem, place.0), WEIR_ERR_BLOOM_FOREIGN);
                weir_bloom_free(heap);
                weir_bloom_free(placed);
                // Free left the memory alone: the array still answers.
                let key = b"after";
                let k = key.as_ptr().cast::<c_void>();
                assert!(weir_bloom_allow(placed, now + 1_000_000_000, k, key.len()));
                assert!(arena.guard_intact());
            }
        }
    }
}

#[test]
fn a_placed_bloom_checks_its_arguments_first_and_writes_nothing() {
    let (rate, gcra) = bloom_limits();
    let (mut bytes, mut align) = (0usize, 0usize);
    assert_eq!(
        weir_bloom_place_footprint(2, &mut bytes, &mut align),
        WEIR_ERR_BLOOM_TOO_FEW_WORDS
    );
    assert_eq!(
        weir_bloom_place_footprint(33, &mut bytes, &mut align),
        WEIR_ERR_BLOOM_SIZE
    );
    assert_eq!(
        weir_bloom_place_footprint(4, null_mut(), &mut align),
        WEIR_ERR_NULL
    );
    assert_eq!((bytes, align), (0, 0), "written on an error");
    let place = footprint(|b, a| weir_bloom_place_footprint(4, b, a));
    let mut arena = Arena::new(place.0);
    let before = arena.words.clone();
    let mem = arena.at(0);
    let mut out: *mut weir_bloom = null_mut();
    // The arguments as weir_bloom_new checks them, before the memory.
    let bad_rate = weir_rate_limit {
        interval_ns: 0,
        ..rate
    };
    assert_eq!(
        weir_bloom_place_in(null_mut(), 0, 4, 2, &bad_rate, 1, 2, &mut out),
        WEIR_ERR_RATE_LIMIT_INVALID
    );
    assert_eq!(
        weir_bloom_place_in(mem, place.0, 4, 2, null(), 1, 2, &mut out),
        WEIR_ERR_NULL
    );
    assert_eq!(
        weir_bloom_place_in(mem, place.0, 4, 0, &rate, 1, 2, &mut out),
        WEIR_ERR_BLOOM_HASHES
    );
    assert_eq!(
        weir_bloom_place_in(mem, place.0, 2, 1, &rate, 1, 2, &mut out),
        WEIR_ERR_BLOOM_TOO_FEW_WORDS
    );
    let bad_gcra = weir_gcra_limit {
        per_token: 0,
        ..gcra
    };
    assert_eq!(
        weir_bloom_place_gcra_in(null_mut(), 0, 4, 2, &bad_gcra, 1, 2, &mut out),
        WEIR_ERR_GCRA_LIMIT_INVALID
    );
    assert_eq!(
        weir_bloom_place_gcra_in(mem, place.0 - 1, 4, 2, &gcra, 1, 2, &mut out),
        WEIR_ERR_PLACED_TOO_SMALL
    );
    assert!(out.is_null());
    assert_eq!(arena.words, before, "memory written on an error");
}
