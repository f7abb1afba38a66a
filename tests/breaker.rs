//! The breaker's scenarios: a healthy backend, the protection, constant
//! failure fractions, a 30 s outage and its recovery, and determinism (also
//! through the C handle from several threads). Time is driven through `now`;
//! the draws come from a fixed-seed generator.

use weir_core::breaker::{Breaker, BreakerPolicy};

#[path = "support/race.rs"]
mod race;

const MS: i64 = 1_000_000;
const SECOND: i64 = 1_000 * MS;

/// splitmix64: a small generator with a fixed seed, so every run draws the
/// same numbers.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A draw from [0, 1).
    fn roll(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One call offered to the breaker.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Call {
    now: i64,
    allowed: bool,
}

/// Offers `rate` calls a second for `seconds` to a preset breaker; a call let
/// through fails when `failing(now, draws)` says so. Returns every call.
fn drive(
    rate: i64,
    seconds: i64,
    seed: u64,
    failing: impl FnMut(i64, &mut Draws) -> bool,
) -> (Breaker, Vec<Call>) {
    drive_with(BreakerPolicy::PRESET, rate, seconds, seed, failing)
}

/// [`drive`] with a breaker of policy `sre`.
fn drive_with(
    sre: BreakerPolicy,
    rate: i64,
    seconds: i64,
    seed: u64,
    mut failing: impl FnMut(i64, &mut Draws) -> bool,
) -> (Breaker, Vec<Call>) {
    let mut breaker = Breaker::new(sre, 0).unwrap();
    let mut draws = Draws(seed);
    let step = SECOND / rate;
    let mut calls = Vec::new();
    for i in 0..rate * seconds {
        let now = i * step;
        let ticket = breaker.allow(now, draws.roll());
        let allowed = ticket.is_some();
        if let Some(mut ticket) = ticket {
            if failing(now, &mut draws) {
                breaker.fail(&mut ticket, now).unwrap();
            } else {
                breaker.pass(&mut ticket, now).unwrap();
            }
        }
        calls.push(Call { now, allowed });
    }
    (breaker, calls)
}

fn refused(calls: &[Call]) -> usize {
    calls.iter().filter(|c| !c.allowed).count()
}

#[test]
fn a_healthy_backend_is_never_refused_at_any_rate() {
    for rate in [1, 10, 100, 1_000, 10_000] {
        let (breaker, calls) = drive(rate, 30, 7, |_, _| false);
        assert_eq!(refused(&calls), 0, "rate {rate}");
        assert_eq!(breaker.ratio(30 * SECOND), 0.0);
    }
}

#[test]
fn the_protection_lets_five_failing_calls_through() {
    let mut breaker = Breaker::new(BreakerPolicy::PRESET, 0).unwrap();
    // Five at once, every one failing, each with the worst draw.
    for _ in 0..5 {
        let mut ticket = breaker.allow(0, 0.0).unwrap();
        breaker.fail(&mut ticket, 0).unwrap();
    }
    // Then one every 2.5 s for a minute: never more than five in the window.
    let mut now = 10 * SECOND + 1;
    while now < 70 * SECOND {
        let mut ticket = breaker.allow(now, 0.0).expect("refused");
        breaker.fail(&mut ticket, now).unwrap();
        assert!(breaker.tally(now).total <= 5);
        now += 2_500 * MS;
    }
}

#[test]
fn constant_failure_fractions() {
    for (percent, seed) in [(10, 11), (20, 12)] {
        let (_, calls) = drive(100, 60, seed, |_, d| d.next() % 100 < percent);
        assert_eq!(refused(&calls), 0, "{percent}% failing");
    }
    let (_, calls) = drive(100, 60, 13, |_, d| d.next() % 100 < 50);
    let late: Vec<Call> = calls.into_iter().filter(|c| c.now >= 20 * SECOND).collect();
    let fraction = refused(&late) as f64 / late.len() as f64;
    assert!(fraction > 0.75, "50% failing: refused {fraction:.3}");
}

/// 10 s healthy, 30 s of total outage, then healthy again, at 100 calls/s.
fn outage(seed: u64) -> (Breaker, Vec<Call>, Vec<f64>) {
    outage_with(BreakerPolicy::PRESET, seed)
}

/// [`outage`] with a breaker of policy `sre`.
fn outage_with(sre: BreakerPolicy, seed: u64) -> (Breaker, Vec<Call>, Vec<f64>) {
    let (start, end) = (10 * SECOND, 40 * SECOND);
    let mut breaker = Breaker::new(sre, 0).unwrap();
    let mut draws = Draws(seed);
    let mut calls = Vec::new();
    let mut ratios = Vec::new();
    for i in 0..100 * 70 {
        let now = i * 10 * MS;
        if now % SECOND == 0 {
            ratios.push(breaker.ratio(now));
        }
        let ticket = breaker.allow(now, draws.roll());
        let allowed = ticket.is_some();
        if let Some(mut ticket) = ticket {
            if (start..end).contains(&now) {
                breaker.fail(&mut ticket, now).unwrap();
            } else {
                breaker.pass(&mut ticket, now).unwrap();
            }
        }
        calls.push(Call { now, allowed });
    }
    (breaker, calls, ratios)
}

#[test]
fn a_thirty_second_outage_and_its_recovery() {
    let (start, end) = (10 * SECOND, 40 * SECOND);
    let (_, calls, ratios) = outage(2024);
    let during = |from: i64, to: i64| calls.iter().filter(move |c| (from..to).contains(&c.now));

    // Nothing refused before the outage, nor in its first 2 s.
    assert_eq!(
        during(0, start + 2 * SECOND).filter(|c| !c.allowed).count(),
        0
    );
    // The ratio passes 0.95 within 15 s of the start and stays there.
    for (second, ratio) in ratios.iter().enumerate().take(40).skip(25) {
        assert!(*ratio > 0.95, "ratio {ratio} at {second} s");
    }
    // From 10 s in to the end the backend still gets a call in every 1.1 s
    // stretch (the probe), and never more than 5 in any second.
    let through: Vec<i64> = during(start + 10 * SECOND, end)
        .filter(|c| c.allowed)
        .map(|c| c.now)
        .collect();
    let mut previous = start + 10 * SECOND;
    for &now in through.iter().chain([end].iter()) {
        assert!(
            now - previous <= 1_100 * MS,
            "a gap from {previous} to {now}"
        );
        previous = now;
    }
    for (i, &now) in through.iter().enumerate() {
        let in_second = through[i..]
            .iter()
            .take_while(|&&t| t < now + SECOND)
            .count();
        assert!(in_second <= 5, "{in_second} calls in the second from {now}");
    }
    // After recovery: refusals stop within 13 s, the ratio is 0 within 15 s.
    assert_eq!(
        during(end + 13 * SECOND, 70 * SECOND)
            .filter(|c| !c.allowed)
            .count(),
        0
    );
    for (second, ratio) in ratios.iter().enumerate().skip(55) {
        assert_eq!(*ratio, 0.0, "ratio at {second} s");
    }
}

#[test]
fn the_same_draws_give_the_same_decisions() {
    let (first, calls, ratios) = outage(99);
    let (second, again, ratios_again) = outage(99);
    assert_eq!(calls, again);
    assert_eq!(ratios, ratios_again);
    assert_eq!(first.tally(70 * SECOND), second.tally(70 * SECOND));
    // And a different seed draws differently.
    let (_, other, _) = outage(100);
    assert_ne!(calls, other);
}

#[test]
fn every_call_is_counted_once() {
    let mut breaker = Breaker::new(BreakerPolicy::PRESET, 0).unwrap();
    let mut draws = Draws(5);
    let (mut allowed, mut calls) = (0, 0);
    // All within one window, so the tally holds every call.
    for i in 0..5_000 {
        let now = i * MS;
        calls += 1;
        if let Some(mut ticket) = breaker.allow(now, draws.roll()) {
            allowed += 1;
            if draws.next() % 100 < 70 {
                breaker.fail(&mut ticket, now).unwrap();
            } else {
                breaker.pass(&mut ticket, now).unwrap();
            }
        }
    }
    let tally = breaker.tally(5 * SECOND);
    assert!(allowed < calls, "70% failing should refuse something");
    assert_eq!(tally.success + tally.failure, allowed);
    assert_eq!(tally.success + tally.failure + tally.drop, calls);
    assert_eq!(tally.total, calls);
}

mod through_c {
    //! The same count through the C handle, from several threads at once.
    use super::*;
    use crate::race;
    use weir::breaker::*;
    use weir::status::weir_status::WEIR_OK;

    struct Shared(*mut weir_breaker);
    // SAFETY: the handle is documented as safe to share between threads.
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}

    impl Shared {
        /// The handle; a closure calling this captures the whole `Shared`
        /// (which is Sync), not the bare pointer inside it.
        fn get(&self) -> *mut weir_breaker {
            self.0
        }
    }

    #[test]
    fn a_ticket_settled_from_two_threads_at_once_settles_once() {
        const TICKETS: usize = 2_000;
        let mut handle = std::ptr::null_mut();
        assert_eq!(weir_breaker_new(std::ptr::null(), 0, &mut handle), WEIR_OK);
        let shared = Shared(handle);
        let settled = race::settle_each_from_two_threads(
            TICKETS,
            |ticket| assert!(weir_breaker_allow(handle, 0, 0.5, ticket)),
            |thread, ticket| {
                race::went_through(if thread == 0 {
                    weir_breaker_pass(shared.get(), ticket, MS)
                } else {
                    weir_breaker_fail(shared.get(), ticket, MS)
                })
            },
        );
        assert_eq!(settled, TICKETS, "some ticket settled twice");
        let mut tally = weir_breaker_tally::default();
        assert_eq!(weir_breaker_read_tally(handle, MS, &mut tally), WEIR_OK);
        assert_eq!(tally.success + tally.failure, TICKETS as i64);
        weir_breaker_free(handle);
    }

    #[test]
    fn threads_count_every_call_once() {
        const THREADS: u64 = 4;
        const CALLS: i64 = 5_000;
        let mut handle = std::ptr::null_mut();
        assert_eq!(weir_breaker_new(std::ptr::null(), 0, &mut handle), WEIR_OK);
        let shared = Shared(handle);
        let allowed: i64 = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let shared = &shared;
                    scope.spawn(move || {
                        let mut draws = Draws(t + 1);
                        let mut allowed = 0;
                        for i in 0..CALLS {
                            // Each thread's clock runs on its own: the
                            // handle sees time jump back and forth.
                            let now = i * MS;
                            let mut ticket = weir_breaker_ticket::default();
                            if weir_breaker_allow(shared.0, now, draws.roll(), &mut ticket) {
                                allowed += 1;
                                let status = if draws.next() % 100 < 70 {
                                    weir_breaker_fail(shared.0, &mut ticket, now)
                                } else {
                                    weir_breaker_pass(shared.0, &mut ticket, now)
                                };
                                assert_eq!(status, WEIR_OK);
                            }
                        }
                        allowed
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        let mut tally = weir_breaker_tally {
            total: 0,
            success: 0,
            failure: 0,
            drop: 0,
        };
        assert_eq!(weir_breaker_read_tally(handle, 0, &mut tally), WEIR_OK);
        let calls = THREADS as i64 * CALLS;
        assert!(allowed < calls);
        assert_eq!(tally.success + tally.failure, allowed);
        assert_eq!(tally.success + tally.failure + tally.drop, calls);
        weir_breaker_free(handle);
    }
}

// Envoy admission_control's limits in the scenarios above: each knob alone,
// each scenario with and without it.

/// The preset with one of Envoy's limits set.
fn capped(cap: f64) -> BreakerPolicy {
    BreakerPolicy {
        max_rejection_probability: cap,
        ..BreakerPolicy::PRESET
    }
}
fn floored(rps: f64) -> BreakerPolicy {
    BreakerPolicy {
        rps_threshold: rps,
        ..BreakerPolicy::PRESET
    }
}
fn aggressive(aggression: f64) -> BreakerPolicy {
    BreakerPolicy {
        aggression,
        ..BreakerPolicy::PRESET
    }
}
fn skipping() -> BreakerPolicy {
    BreakerPolicy {
        skip_refusals: true,
        ..BreakerPolicy::PRESET
    }
}

/// Every knob alone, at a value that bites.
fn knobs() -> [(&'static str, BreakerPolicy); 5] {
    [
        ("cap 0.8", capped(0.8)),
        ("floor 50/s", floored(50.0)),
        ("aggression 2", aggressive(2.0)),
        ("aggression 0.5", aggressive(0.5)),
        ("skip refusals", skipping()),
    ]
}

fn refused_from(calls: &[Call], from: i64, to: i64) -> f64 {
    let late: Vec<&Call> = calls
        .iter()
        .filter(|c| (from..to).contains(&c.now))
        .collect();
    late.iter().filter(|c| !c.allowed).count() as f64 / late.len() as f64
}

/// The last refused call's time, or 0.
fn last_refusal(calls: &[Call]) -> i64 {
    calls
        .iter()
        .filter(|c| !c.allowed)
        .map(|c| c.now)
        .max()
        .unwrap_or(0)
}

#[test]
fn with_any_limit_a_healthy_backend_and_the_protection_are_untouched() {
    for (name, sre) in knobs() {
        for rate in [1, 100, 10_000] {
            let (breaker, calls) = drive_with(sre, rate, 30, 7, |_, _| false);
            assert_eq!(refused(&calls), 0, "{name}, rate {rate}");
            assert_eq!(breaker.ratio(30 * SECOND), 0.0, "{name}");
        }
        // 10 % and 20 % failing: the excess is negative, and no limit turns
        // a healthy window into refusals.
        for (percent, seed) in [(10, 11), (20, 12)] {
            let (_, calls) = drive_with(sre, 100, 60, seed, |_, d| d.next() % 100 < percent);
            assert_eq!(refused(&calls), 0, "{name}, {percent}% failing");
        }
        // The protection: five failing calls, then one every 2.5 s.
        let mut breaker = Breaker::new(sre, 0).unwrap();
        for _ in 0..5 {
            let mut ticket = breaker.allow(0, 0.0).unwrap();
            breaker.fail(&mut ticket, 0).unwrap();
        }
        let mut now = 10 * SECOND + 1;
        while now < 70 * SECOND {
            let mut ticket = breaker.allow(now, 0.0).expect(name);
            breaker.fail(&mut ticket, now).unwrap();
            now += 2_500 * MS;
        }
    }
}

#[test]
fn half_failing_with_and_without_each_limit() {
    let half = |_: i64, d: &mut Draws| d.next() % 100 < 50;
    let share = |sre: BreakerPolicy| {
        let (_, calls) = drive_with(sre, 100, 60, 13, half);
        refused_from(&calls, 20 * SECOND, 60 * SECOND)
    };
    // The preset (Google's formula): refusals feed the traffic, so with half the calls let
    // through failing the fraction p settles where
    // p = 1 - 0.75 (1 - p) - ..., close to 1 (over 0.75).
    let classic = share(BreakerPolicy::PRESET);
    assert!(classic > 0.75, "classic {classic:.3}");
    // The cap holds it at 0.8 (the draws put the share within 0.03).
    let cap = share(capped(0.8));
    assert!((cap - 0.8).abs() < 0.03, "cap {cap:.3}");
    assert!(cap < classic);
    // Skipping refusals: traffic is the L calls let through, half failing,
    // so drop = (L - 5 - 1.5 L / 2) / (L + 1) = 0.25 less the protection:
    // about 0.24 with L near 750 a window.
    let skip = share(skipping());
    assert!((skip - 0.24).abs() < 0.03, "skip {skip:.3}");
    // A floor above the traffic (100 calls/s < 150/s) refuses nothing. One
    // of 50/s (500 calls a window) holds off refusals for the first 5 s,
    // while the window fills, where the preset already refuses.
    let (_, calls) = drive_with(floored(150.0), 100, 60, 13, half);
    assert_eq!(refused(&calls), 0);
    let (_, with) = drive_with(floored(50.0), 100, 60, 13, half);
    let (_, without) = drive(100, 60, 13, half);
    assert_eq!(refused_from(&with, 0, 5 * SECOND), 0.0);
    assert!(refused_from(&without, 0, 5 * SECOND) > 0.3);
    // An aggression of 2 refuses more, 0.5 far less (0.5 ^ 2 = 0.25 for a
    // fraction of 0.5: the feedback through the refusals never takes off).
    let (more, less) = (share(aggressive(2.0)), share(aggressive(0.5)));
    assert!(
        more > classic && less < 0.2,
        "{less:.3} < {classic:.3} < {more:.3}"
    );
}

#[test]
fn the_outage_with_and_without_each_limit() {
    let (start, end) = (10 * SECOND, 40 * SECOND);
    let (_, classic_calls, classic_ratios) = outage(2024);

    // The cap: the standing ratio never passes 0.8, and during the outage
    // about a fifth of the calls still reach the backend (the preset: under
    // 5 %).
    let (_, calls, ratios) = outage_with(capped(0.8), 2024);
    assert!(ratios.iter().all(|&r| r <= 0.8));
    assert!(ratios[25..40].iter().all(|&r| r == 0.8));
    let cap = refused_from(&calls, start + 10 * SECOND, end);
    assert!((cap - 0.8).abs() < 0.03, "cap {cap:.3}");
    assert!(refused_from(&classic_calls, start + 10 * SECOND, end) > 0.95);
    // It recovers as the preset does, within 13 s.
    assert!(last_refusal(&calls) < end + 13 * SECOND);

    // Skipping refusals: only the calls let through are traffic, so the
    // ratio settles where p = (L - 5) / (L + 1) with L = 1000 (1 - p) a
    // window: 1000 q^2 + q - 6 = 0, q = 0.077, p = 0.923, which it nears
    // once the window holds only the outage's last 10 s. It recovers
    // sooner than the preset, whose refusals held its ratio up.
    let (_, calls, ratios) = outage_with(skipping(), 2024);
    for (second, ratio) in ratios.iter().enumerate().take(40).skip(30) {
        assert!((ratio - 0.923).abs() < 0.03, "ratio {ratio} at {second} s");
    }
    let (skip_end, classic_end) = (last_refusal(&calls), last_refusal(&classic_calls));
    assert!(
        skip_end < classic_end,
        "last refusal {skip_end} vs the preset's {classic_end}"
    );

    // A floor of 50 calls/s sits under the 100 offered: the same run, call
    // for call. One of 150/s sits over it: nothing is ever refused.
    let (_, calls, ratios) = outage_with(floored(50.0), 2024);
    assert_eq!(calls, classic_calls);
    assert_eq!(ratios, classic_ratios);
    let (_, calls, ratios) = outage_with(floored(150.0), 2024);
    assert_eq!(refused(&calls), 0);
    assert!(ratios.iter().all(|&r| r == 0.0));

    // Aggression: 2 refuses sooner in the outage's first seconds, 0.5 later.
    let first_over = |ratios: &[f64]| ratios.iter().position(|&r| r > 0.5).unwrap();
    let (_, _, more) = outage_with(aggressive(2.0), 2024);
    let (_, _, less) = outage_with(aggressive(0.5), 2024);
    let (more, base, less) = (
        first_over(&more),
        first_over(&classic_ratios),
        first_over(&less),
    );
    assert!(more < base && base < less, "{more} < {base} < {less}");
    // Every run keeps the probe: the backend still hears about once a
    // second, and the recovery still ends within about a window.
    for (name, sre) in knobs() {
        let (_, calls, _) = outage_with(sre, 2024);
        assert!(last_refusal(&calls) < end + 13 * SECOND, "{name}");
        let through: Vec<i64> = calls
            .iter()
            .filter(|c| c.allowed && (start + 10 * SECOND..end).contains(&c.now))
            .map(|c| c.now)
            .collect();
        assert!(
            through.windows(2).all(|w| w[1] - w[0] <= 1_100 * MS),
            "{name}"
        );
    }
}
