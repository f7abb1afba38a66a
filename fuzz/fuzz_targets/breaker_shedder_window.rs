//! The outcome keepers: breaker, shedder and rolling window, each made from
//! the fuzzer's policy and driven by a run of calls on a clock that floods
//! one instant, lands near multiples of 512 ns and goes backwards.
//!
//! Checked: the window against an exact model of its buckets; the breaker's
//! tally counts every refusal and every settle once (total = success +
//! failure + drop), its ratio stays in [0, 1) and a refusal needs a roll
//! under it; the shedder lends and settles each ticket once, counts what
//! flies, and refuses only when hot and once calls have completed.
#![no_main]

use std::collections::BTreeMap;
use std::ptr::{null, null_mut};

use libfuzzer_sys::fuzz_target;
use weir::breaker::*;
use weir::shedder::*;
use weir::status::weir_status::*;
use weir::window::*;
use weir_fuzz::{abort_on_panic, Clock, Counting, Input};

/// The most calls one flood makes at one instant.
const FLOOD: u64 = 2000;

fuzz_target!(|data: &[u8]| {
    abort_on_panic();
    let mut input = Input::new(data);
    match input.u8() % 3 {
        0 => breaker(&mut input),
        1 => shedder(&mut input),
        _ => window(&mut input),
    }
});

/// A bucket count: mostly small, now and then hostile.
fn size(input: &mut Input) -> i32 {
    match input.u8() % 4 {
        0 => 1 + input.below(4) as i32,
        1 => 1 + input.below(64) as i32,
        2 => [0, -1, i32::MIN, 1 << 20, (1 << 20) + 1][input.below(5) as usize],
        _ => input.below(4096) as i32,
    }
}

/// A window length: mostly plausible, now and then hostile.
fn span(input: &mut Input) -> i64 {
    match input.u8() % 4 {
        0 => 1 + input.below(4096) as i64,
        1 | 2 => input.span(),
        _ => input.i64(),
    }
}

// ---------------------------------------------------------------------------
// The breaker.

/// Changes up to four fields of a breaker policy: in range mostly, now and
/// then anything.
fn vary_breaker_policy(policy: &mut weir_breaker_policy, input: &mut Input) {
    for _ in 0..input.below(5) {
        match input.u8() % 12 {
            0 => policy.k = 1.0 + input.unit() * 3.0,
            1 => policy.k = input.f64(),
            2 => {
                policy.floor = if input.bool() {
                    1.0 + input.unit()
                } else {
                    input.f64()
                }
            }
            3 => {
                policy.protection = if input.bool() {
                    input.below(10) as f64
                } else {
                    input.f64()
                }
            }
            4 => policy.probe_ns = span(input),
            5 => policy.size = size(input),
            6 => policy.window_ns = span(input),
            // Envoy's limits: in range mostly, now and then anything.
            7 => {
                policy.max_rejection_probability = if input.bool() {
                    input.unit()
                } else {
                    input.f64()
                }
            }
            8 => {
                policy.rps_threshold = if input.bool() {
                    input.below(200) as f64
                } else {
                    input.f64()
                }
            }
            9 => {
                policy.aggression = if input.bool() {
                    0.25 + input.unit() * 4.0
                } else {
                    input.f64()
                }
            }
            10 => policy.skip_refusals = input.below(2) as i32,
            _ => policy.skip_refusals = input.u32() as i32,
        }
    }
}

fn breaker(input: &mut Input) {
    let mut policy = weir_breaker_policy_preset();
    vary_breaker_policy(&mut policy, input);
    let mut clock = Clock::new(input);
    let mut handle = null_mut();
    let status = weir_breaker_new(&policy, clock.now, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null(), "a failed weir_breaker_new wrote *out");
        return;
    }
    assert!(
        matches!(policy.skip_refusals, 0 | 1) && policy.k >= policy.floor && policy.floor >= 1.0
    );
    assert!((0.0..=1.0).contains(&policy.max_rejection_probability) && policy.aggression > 0.0);
    let breaker = handle as *const weir_breaker;
    // The tickets of calls let through and not yet settled.
    let mut open: Vec<weir_breaker_ticket> = Vec::new();
    let mut latest = clock.now;
    let mut counting = Counting::begin(input.even(), || weir_breaker_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_breaker_read_counts(handle, out));
        let now = clock.tick(input);
        // Every reading at T, the instant the call counts at whether or not
        // readings move the breaker's clock.
        let at = now.max(latest);
        let count = match input.u8() % 8 {
            0 => 1 + input.below(FLOOD),
            _ => 1,
        };
        // A new policy in place now and then: a refusal changes nothing;
        // the tickets in flight still settle (the calls below).
        if input.one_in(16) {
            let mut next = policy;
            vary_breaker_policy(&mut next, input);
            let (ratio, before) = (weir_breaker_ratio(breaker, at), tally(breaker, at));
            let status = weir_breaker_reconfigure(handle, &next);
            if status == WEIR_OK {
                policy = next;
            } else {
                assert_eq!(weir_breaker_ratio(breaker, at).to_bits(), ratio.to_bits());
                assert_eq!(tally(breaker, at), before, "a refused change wrote");
            }
        }
        let op = input.u8() % 8;
        let roll = if input.one_in(4) {
            input.f64()
        } else {
            input.unit()
        };
        for _ in 0..count {
            let before = tally(breaker, at);
            let ratio = weir_breaker_ratio(breaker, at);
            assert!(
                ratio.is_finite() && (0.0..=policy.max_rejection_probability).contains(&ratio),
                "weir_breaker_ratio answered {ratio}"
            );
            let mut want = before;
            match op {
                0..=3 => {
                    let mut ticket = weir_breaker_ticket::default();
                    if weir_breaker_allow(breaker, now, roll, &mut ticket) {
                        open.push(ticket);
                    } else {
                        let clamped = if roll.is_nan() {
                            0.0
                        } else {
                            roll.clamp(0.0, 1.0)
                        };
                        assert!(
                            clamped < ratio,
                            "refused a roll of {roll} at {now} with the ratio at {ratio}"
                        );
                        want.drop += 1;
                        want.total += 1;
                    }
                }
                4 | 5 if !open.is_empty() => {
                    let mut ticket = open.swap_remove(input.below(open.len() as u64) as usize);
                    assert_eq!(weir_breaker_pass(breaker, &mut ticket, now), WEIR_OK);
                    // A second settle is refused and counts nothing.
                    assert_eq!(
                        weir_breaker_fail(breaker, &mut ticket, now),
                        WEIR_ERR_SETTLED
                    );
                    want.success += 1;
                    want.total += 1;
                }
                6 if !open.is_empty() => {
                    let mut ticket = open.swap_remove(input.below(open.len() as u64) as usize);
                    assert_eq!(weir_breaker_fail(breaker, &mut ticket, now), WEIR_OK);
                    assert_eq!(
                        weir_breaker_pass(breaker, &mut ticket, now),
                        WEIR_ERR_SETTLED
                    );
                    want.failure += 1;
                    want.total += 1;
                }
                _ => {
                    // Readings only: NULL out-pointers, a NULL breaker.
                    assert_eq!(weir_breaker_read_tally(breaker, at, null_mut()), WEIR_ERR_NULL);
                    assert_eq!(weir_breaker_read_tally(null(), at, null_mut()), WEIR_ERR_NULL);
                    let mut ticket = weir_breaker_ticket::default();
                    assert!(!weir_breaker_allow(null(), now, roll, &mut ticket));
                    assert!(!weir_breaker_allow(breaker, now, roll, null_mut()));
                    assert_eq!(weir_breaker_pass(null(), &mut ticket, now), WEIR_ERR_NULL);
                    assert_eq!(weir_breaker_fail(null(), &mut ticket, now), WEIR_ERR_NULL);
                    // A ticket this breaker never handed out settles nothing.
                    assert_eq!(
                        weir_breaker_pass(breaker, &mut ticket, now),
                        WEIR_ERR_BREAKER_TICKET
                    );
                    assert_eq!(weir_breaker_ratio(null(), now), 0.0);
                }
            }
            let after = tally(breaker, at);
            assert_eq!(
                after, want,
                "tally at {at} after a call at {now} (before {before:?})"
            );
            latest = at;
        }
    }
    counting.end(|out| weir_breaker_read_counts(handle, out));
    weir_breaker_free(handle);
    weir_breaker_free(null_mut());
}

/// The breaker's tally at `now`, checked for shape.
fn tally(breaker: *const weir_breaker, now: i64) -> weir_breaker_tally {
    let mut out = weir_breaker_tally::default();
    assert_eq!(weir_breaker_read_tally(breaker, now, &mut out), WEIR_OK);
    assert!(
        out.success >= 0 && out.failure >= 0 && out.drop >= 0,
        "{out:?}"
    );
    assert_eq!(out.total, out.success + out.failure + out.drop, "{out:?}");
    out
}

// ---------------------------------------------------------------------------
// The shedder.

fn shedder(input: &mut Input) {
    let mut policy = weir_shedder_policy_preset();
    for _ in 0..input.below(6) {
        match input.u8() % 9 {
            0 => policy.size = size(input),
            1 => policy.cpu = input.below(1000) as i32,
            2 => policy.cpu = input.u32() as i32,
            3 => policy.window_ns = span(input),
            4 => policy.latency_ns = span(input),
            5 => {
                policy.beta = if input.bool() {
                    input.unit()
                } else {
                    input.f64()
                }
            }
            6 => policy.cool_ns = span(input),
            7 => {
                policy.floor = if input.bool() {
                    input.unit()
                } else {
                    input.f64()
                }
            }
            _ => policy.cool_ns = 0,
        }
    }
    let mut clock = Clock::new(input);
    let mut handle = null_mut();
    let status = weir_shedder_new(&policy, clock.now, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null(), "a failed weir_shedder_new wrote *out");
        return;
    }
    let shedder = handle as *const weir_shedder;
    // Tickets in flight, and ones already settled or refused.
    let mut flying: Vec<weir_shedder_ticket> = Vec::new();
    let mut settled: Vec<weir_shedder_ticket> = Vec::new();
    let mut completed = false;
    let mut refused = false;
    let mut latest = clock.now;
    let mut counting = Counting::begin(input.even(), || weir_shedder_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_shedder_read_counts(handle, out));
        let now = clock.tick(input);
        let count = match input.u8() % 8 {
            0 => 1 + input.below(FLOOD),
            _ => 1,
        };
        // A new policy in place now and then: the calls in flight kept; a
        // refusal changes nothing.
        if input.one_in(16) {
            let mut next = policy;
            match input.u8() % 4 {
                0 => next.size = size(input),
                1 => next.cpu = input.below(1000) as i32,
                2 => next.window_ns = span(input),
                _ => next.latency_ns = span(input),
            }
            let at = latest;
            let mut before = weir_shedder_stats::default();
            assert_eq!(weir_shedder_read_stats(shedder, at, &mut before), WEIR_OK);
            let status = weir_shedder_reconfigure(handle, &next);
            let mut after = weir_shedder_stats::default();
            assert_eq!(weir_shedder_read_stats(shedder, at, &mut after), WEIR_OK);
            assert_eq!(after.flying, flying.len() as i64);
            if status == WEIR_OK {
                policy = next;
            } else {
                assert_eq!(format!("{after:?}"), format!("{before:?}"), "a refused change wrote");
            }
        }
        let op = input.u8() % 8;
        let cpu = match input.u8() % 4 {
            0 => input.u32() as i32,
            1 => policy.cpu,
            _ => input.below(1001) as i32,
        };
        for _ in 0..count {
            match op {
                3 => {
                    // A classed call: one of the four classes, or none.
                    let class = match input.u8() % 6 {
                        5 => input.u32() as i32 | 4,
                        c => i32::from(c % 4),
                    };
                    let mut ticket = weir_shedder_ticket {
                        start: 7,
                        flying: 7,
                        reserved: 7,
                    };
                    let before = flying.len();
                    let status = weir_shedder_allow_class(shedder, now, cpu, class, &mut ticket);
                    if !(0..4).contains(&class) {
                        assert_eq!(status, WEIR_ERR_SHEDDER_CLASS);
                        assert_eq!(ticket.flying, 7, "an error wrote the ticket");
                        continue;
                    }
                    assert_eq!(status, WEIR_OK);
                    if ticket.flying == 1 {
                        flying.push(ticket);
                    } else {
                        assert_eq!(ticket.flying, 0, "a refused ticket: {ticket:?}");
                        // Nothing is refused before a call completed, nor
                        // with none in flight; a sheddable class may be
                        // refused from half the threshold.
                        assert!(completed && before >= 1, "classed refusal at {now}");
                        let critical = class == WEIR_SHEDDER_CRITICAL;
                        let plus = class == WEIR_SHEDDER_CRITICAL_PLUS;
                        if critical {
                            let hot = cpu.clamp(0, 1000) >= policy.cpu || refused;
                            assert!(hot, "a CRITICAL call refused cold at {now}");
                        }
                        if plus {
                            assert!(cpu.clamp(0, 1000) >= policy.cpu);
                        }
                        refused |= critical || plus;
                        settled.push(ticket);
                    }
                }
                0..=2 => {
                    let mut ticket = weir_shedder_ticket {
                        start: 7,
                        flying: 7,
                        reserved: 7,
                    };
                    let before = flying.len();
                    let allowed = weir_shedder_allow(shedder, now, cpu, &mut ticket);
                    if allowed {
                        assert_eq!(ticket.flying, 1, "an allowed ticket: {ticket:?}");
                        flying.push(ticket);
                    } else {
                        assert_eq!(ticket.flying, 0, "a refused ticket: {ticket:?}");
                        let hot = cpu.clamp(0, 1000) >= policy.cpu || refused;
                        assert!(
                            hot && completed && before >= 1,
                            "refused at {now}, cpu {cpu}, {before} in flight, \
                             completed {completed}, refused before {refused}"
                        );
                        refused = true;
                        settled.push(ticket);
                    }
                }
                4..=6 if !flying.is_empty() => {
                    let at = input.below(flying.len() as u64) as usize;
                    let mut ticket = flying.swap_remove(at);
                    let status = if op == 6 {
                        weir_shedder_fail(shedder, &mut ticket)
                    } else {
                        weir_shedder_pass(shedder, &mut ticket, now)
                    };
                    assert_eq!(status, WEIR_OK);
                    assert_eq!(ticket.flying, 0);
                    completed = true;
                    settled.push(ticket);
                }
                4..=6 if !settled.is_empty() => {
                    // A second settle changes nothing.
                    let at = input.below(settled.len() as u64) as usize;
                    let ticket = &mut settled[at];
                    let copy = *ticket;
                    let status = if op == 6 {
                        weir_shedder_fail(shedder, ticket)
                    } else {
                        weir_shedder_pass(shedder, ticket, now)
                    };
                    assert_eq!(status, WEIR_ERR_SETTLED);
                    assert_eq!(*ticket, copy);
                }
                _ => {
                    let at = if input.bool() {
                        latest
                    } else {
                        now.min(latest)
                    };
                    let mut stats = weir_shedder_stats::default();
                    assert_eq!(weir_shedder_read_stats(shedder, at, &mut stats), WEIR_OK);
                    assert_eq!(stats.flying, flying.len() as i64, "{stats:?}");
                    assert!(
                        stats.average.is_finite() && stats.average >= 0.0,
                        "{stats:?}"
                    );
                    assert!(
                        stats.capacity.is_finite() && stats.capacity >= 1.0,
                        "{stats:?}"
                    );
                    assert!(
                        stats.limit.is_finite()
                            && stats.limit >= 1.0
                            && stats.limit <= stats.capacity.max(1.0) * (1.0 + 1e-12),
                        "{stats:?}"
                    );
                    assert!((0..=1000).contains(&stats.cpu) && (0..=1).contains(&stats.hot));
                    // A misaligned or NULL ticket changes nothing.
                    let mut spare = [0u64; 4];
                    let odd = (spare.as_mut_ptr() as *mut u8).wrapping_add(4) as *mut weir_shedder_ticket;
                    assert!(!weir_shedder_allow(shedder, now, cpu, odd));
                    assert!(!weir_shedder_allow(shedder, now, cpu, null_mut()));
                    assert_eq!(weir_shedder_pass(shedder, odd, now), WEIR_ERR_MISALIGNED);
                    assert_eq!(weir_shedder_fail(shedder, null_mut()), WEIR_ERR_NULL);
                    assert_eq!(spare, [0; 4]);
                }
            }
            assert_eq!(weir_shedder_flying(shedder), flying.len() as i64);
        }
        latest = latest.max(now);
    }
    assert_eq!(weir_shedder_flying(null()), 0);
    counting.end(|out| weir_shedder_read_counts(handle, out));
    weir_shedder_free(handle);
    weir_shedder_free(null_mut());
}

// ---------------------------------------------------------------------------
// The rolling window: an exact model of its buckets.

fn window(input: &mut Input) {
    let size = size(input);
    let span = span(input);
    let mut clock = Clock::new(input);
    let origin = clock.now;
    let mut handle = null_mut();
    let status = weir_window_new(size, span, origin, &mut handle);
    if status != WEIR_OK {
        assert!(handle.is_null());
        assert!(
            span <= 0 || size > 1 << 20,
            "weir_window_new({size}, {span}) answered {status:?}"
        );
        return;
    }
    let window = handle as *const weir_window;
    let buckets = size.max(1) as i128;
    let width = (span / size.max(1) as i64).max(1);
    assert_eq!(weir_window_size(window) as i128, buckets);
    assert_eq!(weir_window_width(window), width);
    // Bucket number (from the origin) to its sum, its count and whether a
    // value so large that the sum may have saturated went in; and the
    // head's number.
    let mut model: BTreeMap<i128, (i128, i64, bool)> = BTreeMap::new();
    let mut head = 0i128;
    let number = |now: i64, head: i128| {
        let gap = now as i128 - origin as i128;
        if gap < 0 {
            head
        } else {
            (gap / width as i128).max(head)
        }
    };
    let mut counting = Counting::begin(input.even(), || weir_window_start_counting(handle));
    while !input.is_empty() {
        counting.step(|out| weir_window_read_counts(handle, out));
        let now = clock.tick(input);
        match input.u8() % 4 {
            0 | 1 => {
                let value = if input.one_in(16) {
                    input.i64()
                } else {
                    input.u32() as i32 as i64
                };
                let count = if input.one_in(8) {
                    1 + input.below(FLOOD)
                } else {
                    1
                };
                for _ in 0..count {
                    assert_eq!(weir_window_add(window, now, value), WEIR_OK);
                    head = number(now, head);
                    let slot = model.entry(head).or_insert((0, 0, false));
                    slot.0 += value as i128;
                    slot.1 += 1;
                    slot.2 |= value.unsigned_abs() > u32::MAX as u64;
                }
                // Drop what no read can reach any more.
                model.retain(|&n, _| n > head - buckets);
            }
            _ => {
                let current = input.bool();
                let mut total = weir_window_total::default();
                assert_eq!(weir_window_read_total(window, now, current, &mut total), WEIR_OK);
                let last = number(now, head);
                let top = if current { last } else { last - 1 };
                let inside: Vec<(i128, i64, bool)> = (last - buckets + 1..=top)
                    .map(|n| model.get(&n).copied().unwrap_or((0, 0, false)))
                    .collect();
                let sum: i128 = inside.iter().map(|b| b.0).sum();
                let events: i64 = inside.iter().map(|b| b.1).sum();
                assert_eq!(total.count, events, "weir_window_read_total count at {now}");
                let exact = inside.iter().all(|b| !b.2) && sum.abs() < 1 << 62;
                if exact {
                    assert_eq!(total.sum as i128, sum, "weir_window_read_total sum at {now}");
                }
                let cap = input.below(buckets as u64 + 2) as usize;
                let mut out = vec![weir_window_total { sum: 7, count: 7 }; cap + 1];
                let wrote = weir_window_read_buckets(window, now, current, out.as_mut_ptr(), cap);
                assert_eq!(wrote, inside.len().min(cap), "weir_window_read_buckets at {now}");
                assert_eq!(
                    out[wrote],
                    weir_window_total { sum: 7, count: 7 },
                    "wrote past the count"
                );
                let newest = &inside[inside.len() - wrote..];
                for (got, want) in out[..wrote].iter().zip(newest) {
                    assert_eq!(got.count, want.1, "weir_window_read_buckets at {now}");
                    if exact {
                        assert_eq!(got.sum as i128, want.0);
                    }
                }
                assert_eq!(
                    weir_window_read_total(window, now, current, null_mut()),
                    WEIR_ERR_NULL
                );
                assert_eq!(weir_window_read_buckets(window, now, current, null_mut(), 4), 0);
            }
        }
    }
    // A new size and span in place: the total at the change reads the same
    // after it (everything in one bucket when the layout changes), and a
    // refusal changes nothing.
    let (size2, span2) = (self::size(input), self::span(input));
    let read = || {
        let mut total = weir_window_total::default();
        assert_eq!(weir_window_read_total(window, clock.now, true, &mut total), WEIR_OK);
        (total, weir_window_size(window), weir_window_width(window))
    };
    let before = read();
    let status = weir_window_reconfigure(handle, size2, span2, clock.now);
    let after = read();
    if status == WEIR_OK {
        assert_eq!(before.0, after.0, "a change lost values");
    } else {
        assert_eq!(before, after, "a refused change wrote");
    }
    assert_eq!(weir_window_add(null(), 0, 1), WEIR_ERR_NULL);
    assert_eq!(weir_window_size(null()), 0);
    assert_eq!(weir_window_width(null()), 0);
    counting.end(|out| weir_window_read_counts(handle, out));
    weir_window_free(handle);
    weir_window_free(null_mut());
}
