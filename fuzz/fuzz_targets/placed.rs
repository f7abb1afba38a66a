//! Placed handles (`weir_X_init_in`) beside their heap twins: the fuzzer's
//! parameters go to `weir_X_footprint`, `weir_X_init_in` (in memory of the
//! fuzzer's length and alignment) and `weir_X_new`, and then the same calls
//! on the same clock go to both. Checked: init_in answers what new answers
//! whenever the memory fits or the arguments are bad, and otherwise
//! refuses memory that does not fit with WEIR_ERR_PLACED_TOO_SMALL or
//! WEIR_ERR_PLACED_MISALIGNED; a placed handle
//! answers every call exactly as its twin; free on a placed handle leaves
//! its memory alone (the guard bytes after it stay as they were). The
//! bloom's placed form is a view of a region laid by `weir_bloom_init_in`
//! (`weir_bloom_view_in`), twinned with `weir_bloom_new` of the same shape
//! and key, and checked against the region's own `weir_bloom_next_in`;
//! a bloom placed with its own words (`weir_bloom_place_in`,
//! `weir_bloom_place_gcra_in`) is twinned with `weir_bloom_new` or
//! `weir_bloom_new_gcra` of the same arguments.
//! The lease's twins take, grant and release on the same clock.
#![no_main]

use std::ffi::c_void;
use std::ptr::null_mut;

use libfuzzer_sys::fuzz_target;
use weir::bloom::*;
use weir::breaker::*;
use weir::bucket::*;
use weir::gcra::*;
use weir::budget::*;
use weir::concurrency::*;
use weir::gate::*;
use weir::lease::*;
use weir::period::*;
use weir::pool::*;
use weir::rate::*;
use weir::shedder::*;
use weir::sliding::*;
use weir::status::weir_status::{self, *};
use weir::window::*;
use weir_fuzz::{abort_on_panic, Clock, Input};

/// 64-byte lines, so that any alignment weir asks for can be met.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

/// The guard byte written past the memory handed over.
const GUARD: u8 = 0x5a;

fuzz_target!(|data: &[u8]| {
    abort_on_panic();
    let mut input = Input::new(data);
    match input.u8() % 12 {
        0 => breaker(&mut input),
        1 => window(&mut input),
        2 => sliding(&mut input),
        3 => bucket(&mut input),
        4 => gate(&mut input),
        5 => period(&mut input),
        6 => budget(&mut input),
        7 => shedder(&mut input),
        8 => pool(&mut input),
        9 if input.bool() => bloom_view(&mut input),
        9 => bloom_placed(&mut input),
        10 => lease(&mut input),
        _ => concurrency(&mut input),
    }
});

/// Lays a handle whose footprint answered `(bytes, align)` in memory of the
/// fuzzer's choosing and checks the answer against the heap twin's
/// `made`. Answers the placed handle (NULL when not laid) and the memory,
/// which must outlive it.
fn lay<H>(
    input: &mut Input,
    (bytes, align): (usize, usize),
    made: weir_status,
    init: impl FnOnce(*mut c_void, usize, *mut *mut H) -> weir_status,
) -> (*mut H, Vec<Line>, usize) {
    let mut lines = vec![Line([GUARD; 64]); bytes / 64 + 3];
    let shift = if input.one_in(6) {
        1 + input.below(63) as usize
    } else {
        0
    };
    let len = match input.u8() % 4 {
        0 => bytes.saturating_sub(1 + input.below(16) as usize),
        _ => bytes,
    };
    let mem = (lines.as_mut_ptr() as usize + shift) as *mut c_void;
    let mut out = null_mut();
    let status = init(mem, len, &mut out);
    let fits = (mem as usize) % align == 0 && len >= bytes;
    // The arguments are checked first, as new checks them; then the memory.
    if fits || made != WEIR_OK {
        assert_eq!(status, made, "init_in and new disagree");
    } else {
        assert!(
            status == WEIR_ERR_PLACED_TOO_SMALL || status == WEIR_ERR_PLACED_MISALIGNED,
            "memory that does not fit answered {status:?}"
        );
    }
    if status == WEIR_OK {
        assert_eq!(out as *mut c_void, mem);
    } else {
        assert!(out.is_null());
    }
    (out, lines, shift + bytes)
}

/// Whether every byte from `end` on is still the guard.
fn guard_intact(lines: &[Line], end: usize) -> bool {
    let all: Vec<u8> = lines.iter().flat_map(|l| l.0).collect();
    all[end..].iter().all(|&b| b == GUARD)
}

fn footprint(call: impl FnOnce(*mut usize, *mut usize) -> weir_status) -> Option<(usize, usize)> {
    let (mut bytes, mut align) = (0, 0);
    (call(&mut bytes, &mut align) == WEIR_OK && bytes <= 1 << 22).then_some((bytes, align))
}

/// Runs the same `calls` on both handles `rounds` times, then frees both.
macro_rules! twins {
    ($input:ident, $heap:ident, $placed:ident, $lines:ident, $end:ident, $free:ident, |$clock:ident, $now:ident| $body:block) => {{
        let mut $clock = Clock::new($input);
        for _ in 0..$input.below(200) {
            let $now = $clock.tick($input);
            $body
        }
        $free($heap);
        $free($placed);
        $free($placed);
        assert!(
            guard_intact(&$lines, $end),
            "a placed handle wrote past its footprint"
        );
    }};
}

fn breaker(input: &mut Input) {
    let mut policy = weir_breaker_policy_preset();
    policy.size = (input.below(64) as i32) - 2;
    policy.window_ns = input.span();
    if input.one_in(4) {
        policy.k = input.f64();
        policy.floor = input.f64();
    }
    let Some(place) = footprint(|b, a| weir_breaker_footprint(&policy, b, a)) else {
        return;
    };
    let now = input.i64();
    let mut heap = null_mut();
    let made = weir_breaker_new(&policy, now, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_breaker_init_in(m, l, &policy, now, o)
    });
    if placed.is_null() {
        weir_breaker_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_breaker_free,
        |clock, now| {
            let roll = input.unit();
            let (mut a, mut b) = (
                weir_breaker_ticket::default(),
                weir_breaker_ticket::default(),
            );
            let allowed = weir_breaker_allow(heap, now, roll, &mut a);
            assert_eq!(allowed, weir_breaker_allow(placed, now, roll, &mut b));
            if allowed {
                if input.bool() {
                    assert_eq!(
                        weir_breaker_pass(heap, &mut a, now),
                        weir_breaker_pass(placed, &mut b, now)
                    );
                } else {
                    assert_eq!(
                        weir_breaker_fail(heap, &mut a, now),
                        weir_breaker_fail(placed, &mut b, now)
                    );
                }
            }
            assert_eq!(
                weir_breaker_ratio(heap, now).to_bits(),
                weir_breaker_ratio(placed, now).to_bits()
            );
        }
    );
}

fn window(input: &mut Input) {
    let size = (input.below(80) as i32) - 2;
    let span = input.span();
    let Some(place) = footprint(|b, a| weir_window_footprint(size, span, b, a)) else {
        return;
    };
    let now = input.i64();
    let mut heap = null_mut();
    let made = weir_window_new(size, span, now, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_window_init_in(m, l, size, span, now, o)
    });
    if placed.is_null() {
        weir_window_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_window_free,
        |clock, now| {
            let value = input.i64();
            assert_eq!(
                weir_window_add(heap, now, value),
                weir_window_add(placed, now, value)
            );
            let (mut a, mut b) = (weir_window_total::default(), weir_window_total::default());
            let current = input.bool();
            weir_window_read_total(heap, now, current, &mut a);
            weir_window_read_total(placed, now, current, &mut b);
            assert_eq!(a, b);
        }
    );
}

fn sliding(input: &mut Input) {
    let quota = (input.below(80) as i64) - 2;
    let span = input.span();
    let Some(place) = footprint(|b, a| weir_sliding_footprint(quota, span, b, a)) else {
        return;
    };
    let mut heap = null_mut();
    let made = weir_sliding_new(quota, span, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_sliding_init_in(m, l, quota, span, o)
    });
    if placed.is_null() {
        weir_sliding_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_sliding_free,
        |clock, now| {
            assert_eq!(weir_sliding_take(heap, now), weir_sliding_take(placed, now));
            assert_eq!(weir_sliding_left(heap, now), weir_sliding_left(placed, now));
            assert_eq!(weir_sliding_next(heap, now), weir_sliding_next(placed, now));
        }
    );
}

fn bucket(input: &mut Input) {
    let (rate, burst, now) = (input.f64(), input.f64(), input.i64());
    let Some(place) = footprint(|b, a| weir_bucket_footprint(b, a)) else {
        return;
    };
    let mut heap = null_mut();
    let made = weir_bucket_new(rate, burst, now, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_bucket_init_in(m, l, rate, burst, now, o)
    });
    if placed.is_null() {
        weir_bucket_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_bucket_free,
        |clock, now| {
            let n = if input.bool() { 1.0 } else { input.f64() };
            assert_eq!(
                weir_bucket_take(heap, now, n),
                weir_bucket_take(placed, now, n)
            );
            assert_eq!(
                weir_bucket_next(heap, now, n),
                weir_bucket_next(placed, now, n)
            );
        }
    );
}

fn gate(input: &mut Input) {
    let limit = input.i64();
    let Some(place) = footprint(|b, a| weir_gate_footprint(b, a)) else {
        return;
    };
    let mut heap = null_mut();
    let made = weir_gate_new(limit, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_gate_init_in(m, l, limit, o)
    });
    if placed.is_null() {
        weir_gate_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_gate_free,
        |clock, now| {
            let _ = now;
            if input.bool() {
                assert_eq!(weir_gate_enter(heap), weir_gate_enter(placed));
            } else {
                weir_gate_leave(heap);
                weir_gate_leave(placed);
            }
            assert_eq!(weir_gate_held(heap), weir_gate_held(placed));
        }
    );
}

fn period(input: &mut Input) {
    let (quota, span, align) = (input.i64(), input.span(), input.bool());
    let Some(place) = footprint(|b, a| weir_period_footprint(b, a)) else {
        return;
    };
    let mut heap = null_mut();
    let made = weir_period_new(quota, span, align, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_period_init_in(m, l, quota, span, align, o)
    });
    if placed.is_null() {
        weir_period_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_period_free,
        |clock, now| {
            assert_eq!(weir_period_take(heap, now), weir_period_take(placed, now));
            assert_eq!(weir_period_left(heap, now), weir_period_left(placed, now));
            assert_eq!(weir_period_next(heap, now), weir_period_next(placed, now));
        }
    );
}

fn budget(input: &mut Input) {
    let mut policy = weir_budget_policy_preset();
    policy.form = input.below(3) as i32;
    policy.max_tokens = input.below(1000) as i32;
    policy.percent = input.unit() * 2.0;
    let now = input.i64();
    let Some(place) = footprint(|b, a| weir_budget_footprint(b, a)) else {
        return;
    };
    let mut heap = null_mut();
    let made = weir_budget_new(&policy, now, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_budget_init_in(m, l, &policy, now, o)
    });
    if placed.is_null() {
        weir_budget_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_budget_free,
        |clock, now| {
            if input.bool() {
                weir_budget_deposit(heap, now);
                weir_budget_deposit(placed, now);
            } else {
                assert_eq!(
                    weir_budget_withdraw(heap, now),
                    weir_budget_withdraw(placed, now)
                );
            }
            assert_eq!(weir_budget_left(heap, now), weir_budget_left(placed, now));
        }
    );
}

fn lease(input: &mut Input) {
    let mut policy = weir_lease_policy_preset();
    if input.one_in(3) {
        policy.burst = input.i64();
    } else {
        policy.burst = 1 + input.below(64) as i64;
    }
    policy.share = input.unit() * 1.2;
    if input.one_in(8) {
        policy.ttl_ns = input.i64();
    }
    let now = input.i64();
    let Some(place) = footprint(|b, a| weir_lease_footprint(b, a)) else {
        return;
    };
    let mut heap = null_mut();
    let made = weir_lease_new(&policy, now, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_lease_init_in(m, l, &policy, now, o)
    });
    if placed.is_null() {
        weir_lease_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_lease_free,
        |clock, now| {
            match input.u8() % 4 {
                0 | 1 => {
                    let cost = 1 + input.below(8) as i64;
                    let (mut a, mut b) = (weir_lease_answer::default(), weir_lease_answer::default());
                    assert_eq!(
                        weir_lease_take(heap, now, cost, &mut a),
                        weir_lease_take(placed, now, cost, &mut b)
                    );
                    assert_eq!(a, b);
                }
                2 => {
                    let granted = input.below(16) as i64;
                    let until = now.saturating_add(input.below(2_000_000_000) as i64);
                    let next = now.saturating_add(input.below(1_000_000_000) as i64);
                    assert_eq!(
                        weir_lease_grant(heap, now, granted, until, next),
                        weir_lease_grant(placed, now, granted, until, next)
                    );
                }
                _ => assert_eq!(weir_lease_release(heap, now), weir_lease_release(placed, now)),
            }
            assert_eq!(weir_lease_unspent(heap, now), weir_lease_unspent(placed, now));
            assert_eq!(weir_lease_expires(heap, now), weir_lease_expires(placed, now));
            let (mut a, mut b) = (weir_lease_stats::default(), weir_lease_stats::default());
            assert_eq!(
                weir_lease_read_stats(heap, now, &mut a),
                weir_lease_read_stats(placed, now, &mut b)
            );
            assert_eq!(a, b);
        }
    );
}

fn concurrency(input: &mut Input) {
    let mut policy = weir_concurrency_policy_preset();
    if input.one_in(3) {
        policy.initial_limit = input.below(50) as i32;
        policy.queue_size = input.below(10) as i32;
    }
    let Some(place) = footprint(|b, a| weir_concurrency_footprint(b, a)) else {
        return;
    };
    let mut heap = null_mut();
    let made = weir_concurrency_new(&policy, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_concurrency_init_in(m, l, &policy, o)
    });
    if placed.is_null() {
        weir_concurrency_free(heap);
        return;
    }
    let mut open = Vec::new();
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_concurrency_free,
        |clock, now| {
            if input.bool() || open.is_empty() {
                let (mut a, mut b) = (
                    weir_concurrency_ticket::default(),
                    weir_concurrency_ticket::default(),
                );
                let entered = weir_concurrency_enter(heap, now, &mut a);
                assert_eq!(entered, weir_concurrency_enter(placed, now, &mut b));
                if entered {
                    open.push((a, b));
                }
            } else {
                let (mut a, mut b) = open.swap_remove(input.below(open.len() as u64) as usize);
                let dropped = input.bool();
                assert_eq!(
                    weir_concurrency_leave(heap, &mut a, now, dropped),
                    weir_concurrency_leave(placed, &mut b, now, dropped)
                );
            }
            assert_eq!(weir_concurrency_limit(heap), weir_concurrency_limit(placed));
        }
    );
}

fn shedder(input: &mut Input) {
    let mut policy = weir_shedder_policy_preset();
    policy.size = (input.below(64) as i32) - 2;
    policy.window_ns = input.span();
    if input.one_in(4) {
        policy.cpu = input.u16() as i32 - 100;
    }
    let Some(place) = footprint(|b, a| weir_shedder_footprint(&policy, b, a)) else {
        return;
    };
    let now = input.i64();
    let mut heap = null_mut();
    let made = weir_shedder_new(&policy, now, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_shedder_init_in(m, l, &policy, now, o)
    });
    if placed.is_null() {
        weir_shedder_free(heap);
        return;
    }
    let mut open = Vec::new();
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_shedder_free,
        |clock, now| {
            if input.bool() || open.is_empty() {
                let cpu = input.u16() as i32 % 1_200;
                let (mut a, mut b) = (
                    weir_shedder_ticket::default(),
                    weir_shedder_ticket::default(),
                );
                let allowed = weir_shedder_allow(heap, now, cpu, &mut a);
                assert_eq!(allowed, weir_shedder_allow(placed, now, cpu, &mut b));
                if allowed {
                    open.push((a, b));
                }
            } else {
                let (mut a, mut b) = open.swap_remove(input.below(open.len() as u64) as usize);
                assert_eq!(
                    weir_shedder_pass(heap, &mut a, now),
                    weir_shedder_pass(placed, &mut b, now)
                );
            }
            assert_eq!(weir_shedder_flying(heap), weir_shedder_flying(placed));
        }
    );
}

fn pool(input: &mut Input) {
    let mut limits = weir_pool_policy_preset();
    limits.size = input.below(40) as i64 - 2;
    limits.idle = input.below(50) as i64 - 2;
    limits.keep_ns = input.span();
    limits.life_ns = input.span();
    limits.min_idle = input.below(8) as i64;
    limits.max_making = input.below(5) as i64;
    if input.one_in(4) {
        limits.life_jitter = input.f64();
    }
    let Some(place) = footprint(|b, a| weir_pool_footprint(&limits, b, a)) else {
        return;
    };
    let mut heap = null_mut();
    let made = weir_pool_new(&limits, &mut heap);
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_pool_init_in(m, l, &limits, o)
    });
    if placed.is_null() {
        weir_pool_free(heap);
        return;
    }
    let mut lent: Vec<usize> = Vec::new();
    let mut fresh = 1usize;
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_pool_free,
        |clock, now| {
            match input.u8() % 8 {
                0..=2 => {
                    let taken = weir_pool_take(heap, now);
                    assert_eq!(taken, weir_pool_take(placed, now));
                    if taken.kind == WEIR_POOL_TAKEN_READY {
                        lent.push(taken.item);
                    } else if taken.kind == WEIR_POOL_TAKEN_MAKE {
                        let draw = input.u64();
                        assert_eq!(
                            weir_pool_made_jittered(heap, fresh, now, draw),
                            weir_pool_made_jittered(placed, fresh, now, draw)
                        );
                        lent.push(fresh);
                        fresh += 1;
                    }
                }
                3 | 4 => {
                    let item = if lent.is_empty() || input.one_in(6) {
                        input.below(8) as usize
                    } else {
                        lent.swap_remove(input.below(lent.len() as u64) as usize)
                    };
                    let (mut a, mut b) = (false, false);
                    assert_eq!(
                        weir_pool_give(heap, item, now, &mut a),
                        weir_pool_give(placed, item, now, &mut b)
                    );
                    assert_eq!(a, b);
                }
                5 => {
                    let item = lent.pop().unwrap_or(0);
                    assert_eq!(weir_pool_drop(heap, item), weir_pool_drop(placed, item));
                }
                6 => {
                    let cap = input.below(5) as usize;
                    let (mut a, mut b) = ([0usize; 4], [0usize; 4]);
                    let n = weir_pool_evict(heap, now, a.as_mut_ptr(), cap);
                    assert_eq!(n, weir_pool_evict(placed, now, b.as_mut_ptr(), cap));
                    assert_eq!(a, b);
                }
                _ => match input.u8() % 5 {
                    0 => assert_eq!(weir_pool_mark_old(heap), weir_pool_mark_old(placed)),
                    1 => assert_eq!(weir_pool_make_ahead(heap), weir_pool_make_ahead(placed)),
                    2 => assert_eq!(weir_pool_unmade(heap), weir_pool_unmade(placed)),
                    3 => {
                        // New limits: the placed twin takes them when its
                        // memory holds them, and then the heap one answers
                        // alike; refused, it changed nothing, and the heap
                        // twin is not asked (it would grow its store).
                        let next = weir_pool_policy {
                            size: input.below(80) as i64 - 2,
                            idle: input.below(50) as i64 - 2,
                            keep_ns: input.span(),
                            ..limits
                        };
                        let status = weir_pool_reconfigure(placed, &next);
                        if status != WEIR_ERR_PLACED_TOO_SMALL {
                            assert_eq!(status, weir_pool_reconfigure(heap, &next));
                        }
                    }
                    _ => {
                        let (mut a, mut b) = ([0usize; 2], [0usize; 2]);
                        let n = weir_pool_close(heap, a.as_mut_ptr(), 2);
                        assert_eq!(n, weir_pool_close(placed, b.as_mut_ptr(), 2));
                        assert_eq!(a, b);
                    }
                },
            }
            assert_eq!(weir_pool_live(heap), weir_pool_live(placed));
            assert_eq!(weir_pool_idle(heap), weir_pool_idle(placed));
            assert_eq!(
                weir_pool_next_expiry(heap, now),
                weir_pool_next_expiry(placed, now)
            );
        }
    );
}

fn bloom_view(input: &mut Input) {
    let size_log2 = input.below(9) as u32 + 1;
    let hashes = input.below(10) as u32;
    let mut limit = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    let (per_s, burst) = (input.f64(), input.below(6) as i64);
    let (seed0, seed1) = (input.u64(), input.u64());
    if weir_rate_limit_new(per_s, burst, &mut limit) != WEIR_OK {
        return;
    }
    let mut heap = null_mut();
    let made = weir_bloom_new(size_log2, hashes, &limit, seed0, seed1, &mut heap);
    // The region, laid from the same arguments: its status is new's.
    let region_len = weir_bloom_footprint(size_log2).max(64);
    let mut region = vec![Line([0; 64]); region_len / 64];
    let rmem = region.as_mut_ptr().cast::<c_void>();
    let laid = weir_bloom_init_in(rmem, region_len, size_log2, hashes, &limit, seed0, seed1);
    assert_eq!(laid, made, "weir_bloom_init_in and weir_bloom_new disagree");
    if made != WEIR_OK {
        return;
    }
    let Some(place) = footprint(|b, a| weir_bloom_view_footprint(b, a)) else {
        return;
    };
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        weir_bloom_view_in(m, l, rmem, region_len, o)
    });
    if placed.is_null() {
        weir_bloom_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_bloom_free,
        |clock, now| {
            let key = input.u8().to_le_bytes();
            let k = key.as_ptr().cast::<c_void>();
            assert_eq!(
                weir_bloom_allow(heap, now, k, 1),
                weir_bloom_allow(placed, now, k, 1)
            );
            let next = weir_bloom_next(placed, now, k, 1);
            assert_eq!(weir_bloom_next(heap, now, k, 1), next);
            assert_eq!(weir_bloom_next_in(rmem, region_len, now, k, 1), next);
            if key[0] == 0 {
                // A view's limit is its region's: refused, nothing changed.
                assert_eq!(
                    weir_bloom_reconfigure(placed, &limit),
                    WEIR_ERR_REGION_UNSUPPORTED
                );
            }
        }
    );
    assert_eq!(weir_bloom_check_in(rmem, region_len), WEIR_OK);
}

fn bloom_placed(input: &mut Input) {
    let size_log2 = input.below(12) as u32;
    let hashes = input.below(10) as u32;
    let (per_s, burst) = (input.f64(), input.below(6) as i64);
    let (seed0, seed1) = (input.u64(), input.u64());
    let gcra = input.bool();
    let mut rate_limit = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    let mut gcra_limit = weir_gcra_limit {
        per_token: 0,
        tolerance: 0,
        shift: 0,
        reserved: 0,
    };
    let valid = if gcra {
        weir_gcra_limit_new(per_s, burst, &mut gcra_limit)
    } else {
        weir_rate_limit_new(per_s, burst, &mut rate_limit)
    };
    if valid != WEIR_OK {
        return;
    }
    let Some(place) = footprint(|b, a| weir_bloom_place_footprint(size_log2, b, a)) else {
        return;
    };
    let mut heap = null_mut();
    let made = if gcra {
        weir_bloom_new_gcra(size_log2, hashes, &gcra_limit, seed0, seed1, &mut heap)
    } else {
        weir_bloom_new(size_log2, hashes, &rate_limit, seed0, seed1, &mut heap)
    };
    let (placed, lines, end) = lay(input, place, made, |m, l, o| {
        if gcra {
            weir_bloom_place_gcra_in(m, l, size_log2, hashes, &gcra_limit, seed0, seed1, o)
        } else {
            weir_bloom_place_in(m, l, size_log2, hashes, &rate_limit, seed0, seed1, o)
        }
    });
    if placed.is_null() {
        weir_bloom_free(heap);
        return;
    }
    twins!(
        input,
        heap,
        placed,
        lines,
        end,
        weir_bloom_free,
        |clock, now| {
            let key = input.u8().to_le_bytes();
            let k = key.as_ptr().cast::<c_void>();
            assert_eq!(
                weir_bloom_next(heap, now, k, 1),
                weir_bloom_next(placed, now, k, 1)
            );
            assert_eq!(
                weir_bloom_allow(heap, now, k, 1),
                weir_bloom_allow(placed, now, k, 1)
            );
            if key[0] < 16 {
                // A new limit of either kind: the twins take it, or refuse
                // it, alike.
                let (per_s, burst) = (input.f64(), input.below(6) as i64);
                if input.bool() {
                    let mut next = gcra_limit;
                    if weir_gcra_limit_new(per_s, burst, &mut next) == WEIR_OK {
                        assert_eq!(
                            weir_bloom_reconfigure_gcra(heap, &next),
                            weir_bloom_reconfigure_gcra(placed, &next)
                        );
                    }
                } else {
                    let mut next = rate_limit;
                    if weir_rate_limit_new(per_s, burst, &mut next) == WEIR_OK {
                        assert_eq!(
                            weir_bloom_reconfigure(heap, &next),
                            weir_bloom_reconfigure(placed, &next)
                        );
                    }
                }
            }
        }
    );
}
