//! The scenarios: each a function from its knobs and a seed to a series.
//! Times in a series are seconds; a step's counts are calls in that step.
//!
//! The policies are built as `Policy { knobs.., ..Policy::PRESET }`, so
//! that a field added to a policy keeps its preset here until the bay has
//! a knob for it; today every field has one, which clippy calls needless.
#![allow(clippy::needless_update)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use weir_core::backoff::{Backoff, BackoffJitter};
use weir_core::bloom::{Bloom, BloomShape};
use weir_core::breaker::{Breaker, BreakerPolicy};
use weir_core::bucket::Bucket;
use weir_core::budget::Budget;
use weir_core::concurrency::{Concurrency, ConcurrencyPolicy, ConcurrencyTicket};
use weir_core::gcra::{self, GcraLimit};
use weir_core::keyed::{Decision, Keyed, KeyedShape, Overflow, BUCKET_BYTES, SLOTS};
use weir_core::partitioned::{Partition, Partitioned};
use weir_core::period::{Period, PeriodQuota};
use weir_core::pool::{Pool, PoolPolicy, PoolTaken};
use weir_core::rate::{self, RateLimit};
use weir_core::shedder::{Criticality, Shedder, ShedderPolicy};
use weir_core::sliding::Sliding;

use crate::{c, knobs, Column, Plot, Rng, Scenario, Series};

const MS: f64 = 1e6;
const S: f64 = 1e9;

/// A series saying the knobs make no valid policy (the page shows why).
fn invalid(why: &'static str) -> Series {
    let mut s = Series::default();
    s.notes.push((why, 1.0));
    s
}

knobs! {
    /// The breaker in front of a backend that goes down and comes back.
    BreakerKnobs {
        k: "k" ["calls per success"] = 1.5, [1.0, 4.0, 0.05], c!("k");
        floor: "floor" ["calls per success"] = 1.1, [1.0, 4.0, 0.05], c!("floor");
        protection: "protection" ["calls"] = 5.0, [0.0, 50.0, 1.0], c!("protection");
        probe_ms: "probe after" ["ms"] = 1000.0, [50.0, 5000.0, 50.0], c!(int "probe_ns", MS);
        size: "size" ["buckets"] = 40.0, [1.0, 200.0, 1.0], c!(int "size");
        window_s: "window" ["s"] = 10.0, [1.0, 60.0, 1.0], c!(int "window_ns", S);
        max_rejection_probability: "refusal probability at most" ["fraction"] = 1.0, [0.0, 1.0, 0.01], c!("max_rejection_probability");
        rps_threshold: "no refusals under" ["calls/s"] = 0.0, [0.0, 1000.0, 1.0], c!("rps_threshold");
        aggression: "aggression" ["exponent"] = 1.0, [0.1, 5.0, 0.1], c!("aggression");
        skip_refusals: "its own refusals" {"counted as traffic", "left out of the traffic"} = 0.0, [0.0, 1.0, 1.0], c!(int "skip_refusals"), "Whether the breaker's own refusals count as traffic in its formula.";
        rate: "traffic: rate" ["calls/s"] = 100.0, [1.0, 1000.0, 1.0], None, "Calls arrive about this many a second, each gap drawn at random.";
        fail: "traffic: failing while up" ["fraction"] = 0.0, [0.0, 1.0, 0.01], None, "The chance that a call fails while the backend is up.";
        down_fail: "traffic: failing while down" ["fraction"] = 1.0, [0.0, 1.0, 0.01], None, "The chance that a call fails during the outage.";
        outage_at: "traffic: outage starts" ["s"] = 5.0, [0.0, 60.0, 1.0], None;
        outage_s: "traffic: outage lasts" ["s"] = 30.0, [0.0, 120.0, 1.0], None;
        latency_ms: "traffic: latency" ["ms"] = 10.0, [0.0, 2000.0, 1.0], None, "How long after it is let through a call settles.";
        seconds: "traffic: shown" ["s"] = 60.0, [5.0, 300.0, 1.0], None;
    }
}

/// The breaker's policy from the knobs.
pub fn breaker_policy(k: &BreakerKnobs) -> BreakerPolicy {
    BreakerPolicy {
        k: k.k,
        floor: k.floor,
        protection: k.protection,
        probe_ns: (k.probe_ms * MS).round() as i64,
        size: k.size.round() as i32,
        window_ns: (k.window_s * S).round() as i64,
        max_rejection_probability: k.max_rejection_probability,
        rps_threshold: k.rps_threshold,
        aggression: k.aggression,
        skip_refusals: k.skip_refusals >= 0.5,
        // Fields the bay has no knob for keep the preset.
        ..BreakerPolicy::PRESET
    }
}

/// Calls arrive about `rate` a second; while the backend is down each fails
/// with `down_fail`, else with `fail`; each settles `latency_ms` after it
/// was let through. One point a second: calls let through, refused, let
/// through by the probe alone, the breaker's ratio at the second's end.
/// Draws per call, in order: the gap, the failure, the breaker's roll
/// (bay/c/breaker.c replays them).
pub fn breaker(k: &BreakerKnobs, seed: u64) -> Series {
    let Ok(mut b) = Breaker::new(breaker_policy(k), 0) else {
        return invalid("invalid policy");
    };
    let mut rng = Rng::new(seed);
    let mut s = Series::with(&["t", "through", "refused", "probes", "ratio", "down"]);
    let seconds = k.seconds.round() as i64;
    let end = seconds * S as i64;
    let (down_from, down_to) = (
        (k.outage_at * S) as i64,
        ((k.outage_at + k.outage_s) * S) as i64,
    );
    let latency = (k.latency_ms * MS) as i64;
    let mean = S / k.rate.max(1e-3);
    let mut pending = VecDeque::new();
    let (mut through, mut refused, mut probes) = (0.0, 0.0, 0.0);
    let (mut first_refusal, mut last_refusal) = (None, None);
    let (mut offered_early, mut through_early) = (0.0, 0.0);
    let (mut offered_down, mut through_down) = (0.0, 0.0);
    let mut second = 0;
    let mut now = 0;
    loop {
        now += rng.gap(mean);
        // Close the seconds that ended before this call, settling the calls
        // that finished within each.
        while second < seconds && (second + 1) * S as i64 <= now.min(end) {
            let edge = (second + 1) * S as i64;
            settle(&mut b, &mut pending, edge);
            let down = edge > down_from && edge - (S as i64) < down_to;
            s.push(&[
                second as f64,
                through,
                refused,
                probes,
                b.ratio(edge),
                f64::from(u8::from(down)),
            ]);
            (through, refused, probes) = (0.0, 0.0, 0.0);
            second += 1;
        }
        if now >= end {
            break;
        }
        settle(&mut b, &mut pending, now);
        let down = now >= down_from && now < down_to;
        let fails = rng.unit() < if down { k.down_fail } else { k.fail };
        let roll = rng.unit();
        let probes_before = b.probes();
        let early = down && now < down_from + 5 * S as i64;
        offered_early += f64::from(u8::from(early));
        offered_down += f64::from(u8::from(down));
        match b.allow(now, roll) {
            Some(ticket) => {
                through += 1.0;
                through_early += f64::from(u8::from(early));
                through_down += f64::from(u8::from(down));
                if b.probes() > probes_before {
                    probes += 1.0;
                }
                pending.push_back((now + latency, ticket, fails));
            }
            None => {
                refused += 1.0;
                first_refusal.get_or_insert(now);
                last_refusal = Some(now);
            }
        }
    }
    let secs = |t: Option<i64>, from: i64| t.map_or(f64::NAN, |t| (t - from) as f64 / S);
    s.notes = vec![
        (
            "reach dead backend, first 5 s",
            through_early / offered_early,
        ),
        (
            "reach dead backend, whole outage",
            through_down / offered_down,
        ),
        (
            "first refusal after outage starts (s)",
            secs(first_refusal, down_from),
        ),
        (
            "last refusal after recovery (s)",
            secs(last_refusal, down_to),
        ),
    ];
    s
}

/// Settles, in order, the calls that finished by `now`.
fn settle(
    b: &mut Breaker,
    pending: &mut VecDeque<(i64, weir_core::breaker::BreakerTicket, bool)>,
    now: i64,
) {
    while let Some(&(at, _, _)) = pending.front() {
        if at > now {
            break;
        }
        let (at, mut ticket, fails) = pending.pop_front().unwrap();
        let _ = if fails {
            b.fail(&mut ticket, at)
        } else {
            b.pass(&mut ticket, at)
        };
    }
}

knobs! {
    /// The shedder in front of a server whose load rises past its capacity.
    ShedderKnobs {
        size: "size" ["buckets"] = 50.0, [1.0, 200.0, 1.0], c!(int "size");
        window_s: "window" ["s"] = 5.0, [1.0, 60.0, 1.0], c!(int "window_ns", S);
        cpu: "hot at CPU" ["‰"] = 900.0, [0.0, 999.0, 1.0], c!(int "cpu");
        latency_ms: "assumed response time" ["ms"] = 1000.0, [1.0, 5000.0, 1.0], c!(int "latency_ns", MS);
        beta: "average weight" ["fraction"] = 0.9, [0.0, 0.99, 0.01], c!("beta");
        cool_ms: "time to cool" ["ms"] = 1000.0, [0.0, 10000.0, 100.0], c!(int "cool_ns", MS);
        floor: "never under" ["fraction of capacity"] = 0.1, [0.01, 1.0, 0.01], c!("floor");
        capacity: "traffic: server capacity" ["calls/s"] = 200.0, [10.0, 2000.0, 10.0], None, "What the server finishes a second at full speed.";
        service_ms: "traffic: service time" ["ms"] = 50.0, [1.0, 1000.0, 1.0], None, "How long a call takes while the server is not overloaded; beyond its capacity each call slows in proportion.";
        start_rate: "traffic: starting load" ["calls/s"] = 100.0, [1.0, 2000.0, 1.0], None;
        peak_rate: "traffic: peak load" ["calls/s"] = 400.0, [1.0, 4000.0, 1.0], None, "Reached two thirds of the way through, after which the load drops back.";
        seconds: "traffic: shown" ["s"] = 30.0, [5.0, 120.0, 1.0], None;
    }
}

/// The shedder's policy from the knobs.
pub fn shedder_policy(k: &ShedderKnobs) -> ShedderPolicy {
    ShedderPolicy {
        size: k.size.round() as i32,
        window_ns: (k.window_s * S).round() as i64,
        cpu: k.cpu.round() as i32,
        latency_ns: (k.latency_ms * MS).round() as i64,
        beta: k.beta,
        cool_ns: (k.cool_ms * MS).round() as i64,
        floor: k.floor,
        ..ShedderPolicy::PRESET
    }
}

/// Load rises from `start_rate` to `peak_rate` over two thirds of the run,
/// then drops back. The server runs `capacity × service` calls at once at
/// full speed; beyond that each call slows in proportion. Its CPU reads the
/// busy fraction, smoothed. One point per 100 ms.
pub fn shedder(k: &ShedderKnobs, seed: u64) -> Series {
    let Ok(mut sh) = Shedder::new(shedder_policy(k), 0) else {
        return invalid("invalid policy");
    };
    let mut rng = Rng::new(seed);
    let mut s = Series::with(&[
        "t", "offered", "cpu", "flying", "limit", "refused", "passed",
    ]);
    let end = (k.seconds * S) as i64;
    let ramp = end as f64 * 2.0 / 3.0;
    let slots = (k.capacity * k.service_ms / 1e3).max(1e-3);
    let step = (100.0 * MS) as i64;
    let mut pending: BinaryHeap<Reverse<(i64, u64)>> = BinaryHeap::new();
    let mut tickets = std::collections::HashMap::new();
    let (mut serial, mut now, mut edge) = (0u64, 0i64, step);
    let (mut offered, mut refused, mut passed) = (0.0, 0.0, 0.0);
    // The CPU reading: the server's busy fraction (in flight over what it
    // runs at full speed, at most all of it), smoothed over the last few
    // dozen calls as a CPU gauge is.
    let mut cpu = 0.0f64;
    let busy = |flying: i64| (flying as f64 / slots).min(1.0) * 1000.0;
    loop {
        let rate = if (now as f64) < ramp {
            k.start_rate + (k.peak_rate - k.start_rate) * now as f64 / ramp
        } else {
            k.start_rate
        };
        now += rng.gap(S / rate.max(1e-3));
        while edge <= now.min(end) {
            finish(&mut sh, &mut pending, &mut tickets, edge);
            let st = sh.stats(edge);
            s.push(&[
                edge as f64 / S,
                offered * 10.0,
                cpu.floor(),
                st.flying as f64,
                st.limit,
                refused,
                passed,
            ]);
            (offered, refused, passed) = (0.0, 0.0, 0.0);
            edge += step;
        }
        if now >= end {
            break;
        }
        finish(&mut sh, &mut pending, &mut tickets, now);
        offered += 1.0;
        let flying = sh.flying();
        cpu += (busy(flying) - cpu) * 0.02;
        match sh.allow(now, cpu as i32) {
            Some(ticket) => {
                passed += 1.0;
                let slow = (flying as f64 / slots).max(1.0);
                let done = now + (k.service_ms * MS * slow) as i64;
                serial += 1;
                tickets.insert(serial, ticket);
                pending.push(Reverse((done, serial)));
            }
            None => refused += 1.0,
        }
    }
    s
}

fn finish(
    sh: &mut Shedder,
    pending: &mut BinaryHeap<Reverse<(i64, u64)>>,
    tickets: &mut std::collections::HashMap<u64, weir_core::shedder::ShedderTicket>,
    now: i64,
) {
    while let Some(&Reverse((at, serial))) = pending.peek() {
        if at > now {
            break;
        }
        pending.pop();
        if let Some(mut t) = tickets.remove(&serial) {
            let _ = sh.pass(&mut t, at);
        }
    }
}

knobs! {
    /// Scenario 1 of docs/design.md: bursts just before each odd second.
    LimitersKnobs {
        bucket_rate: "bucket: rate" ["tokens/s"] = 20.0, [1.0, 200.0, 1.0], None, "weir_bucket_new's rate: tokens per second; 0 is a bucket that never refills.";
        bucket_burst: "bucket: burst" ["tokens"] = 20.0, [1.0, 200.0, 1.0], None, "weir_bucket_new's burst: the most it holds; it starts full.";
        sliding_quota: "sliding: quota" ["calls"] = 20.0, [1.0, 200.0, 1.0], None, "weir_sliding_new's quota: at most this many events in any window-long stretch.";
        sliding_ms: "sliding: window" ["ms"] = 1000.0, [10.0, 5000.0, 10.0], None, "weir_sliding_new's window_ns: an event is counted for this long after it.";
        period_quota: "period: quota" ["calls"] = 20.0, [1.0, 200.0, 1.0], None, "weir_period_new's quota: events allowed per period.";
        period_ms: "period: length" ["ms"] = 1000.0, [10.0, 5000.0, 10.0], None, "weir_period_new's period_ns; with align (as here) periods open on multiples of it.";
        calls: "traffic: calls a burst" ["calls"] = 40.0, [1.0, 400.0, 1.0], None;
        gap_ms: "traffic: between calls" ["ms"] = 2.5, [0.1, 100.0, 0.1], None;
        lead_ms: "traffic: burst starts before the odd second" ["ms"] = 50.0, [0.0, 1000.0, 1.0], None;
        bursts: "traffic: bursts" ["bursts"] = 4.0, [1.0, 20.0, 1.0], None;
        jitter_ms: "traffic: random delay per call" ["ms"] = 0.0, [0.0, 100.0, 0.1], None;
    }
}

/// Each limiter sees the same calls; one point per call: the passes so far.
pub fn limiters(k: &LimitersKnobs, seed: u64) -> Series {
    let mut rng = Rng::new(seed);
    let (Ok(bucket), Ok(mut sliding), Ok(mut period)) = (
        Bucket::new(k.bucket_rate, k.bucket_burst, 0),
        Sliding::new(k.sliding_quota as i64, (k.sliding_ms * MS) as i64),
        Period::new(k.period_quota as i64, (k.period_ms * MS) as i64, true),
    ) else {
        return invalid("invalid policy");
    };
    let mut s = Series::with(&["t", "bucket", "sliding", "period"]);
    let mut times = Vec::new();
    for burst in 0..k.bursts as i64 {
        let start = (2 * burst + 1) as f64 * S - k.lead_ms * MS;
        for call in 0..k.calls as i64 {
            let t = start + call as f64 * k.gap_ms * MS + rng.unit() * k.jitter_ms * MS;
            times.push(t.max(0.0) as i64);
        }
    }
    times.sort_unstable();
    let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
    for now in times {
        a += f64::from(u8::from(bucket.take(now, 1.0)));
        b += f64::from(u8::from(sliding.take(now)));
        c += f64::from(u8::from(period.take(now) != PeriodQuota::Over));
        s.push(&[now as f64 / S, a, b, c]);
    }
    s
}

knobs! {
    /// The rate word (fixed windows) beside the GCRA word (a smooth bucket).
    WordsKnobs {
        rate: "rate word: rate" ["calls/s"] = 100.0, [1.0, 1000.0, 1.0], None, "weir_rate_limit_new's limit_per_s: the word admits exactly burst calls per window of burst / rate.";
        rate_burst: "rate word: burst" ["calls"] = 10.0, [1.0, 1000.0, 1.0], None, "weir_rate_limit_new's burst, 1..1023.";
        gcra: "GCRA word: rate" ["calls/s"] = 100.0, [1.0, 1000.0, 1.0], None, "weir_gcra_limit_new's rate_per_s: a smooth bucket refilling at this rate.";
        gcra_burst: "GCRA word: burst" ["calls"] = 10.0, [1.0, 1000.0, 1.0], None, "weir_gcra_limit_new's burst: the most let through at once.";
        offered: "traffic: rate" ["calls/s"] = 300.0, [1.0, 3000.0, 1.0], None;
        seconds: "traffic: shown" ["s"] = 2.0, [0.5, 20.0, 0.5], None;
    }
}

/// Both words see the same calls; one point per 20 ms: passes so far.
pub fn words(k: &WordsKnobs, seed: u64) -> Series {
    let (Ok(rl), Ok(gl)) = (
        RateLimit::new(k.rate, k.rate_burst as i64),
        GcraLimit::new(k.gcra, k.gcra_burst as i64),
    ) else {
        return invalid("invalid policy");
    };
    let (rw, gw) = (
        core::sync::atomic::AtomicU64::new(0),
        core::sync::atomic::AtomicU64::new(0),
    );
    let mut rng = Rng::new(seed);
    let mut s = Series::with(&["t", "offered", "rate word", "GCRA word"]);
    let end = (k.seconds * S) as i64;
    let step = (20.0 * MS) as i64;
    let (mut now, mut edge) = (0i64, step);
    let (mut o, mut r, mut g) = (0.0, 0.0, 0.0);
    loop {
        now += rng.gap(S / k.offered.max(1e-3));
        while edge <= now.min(end) {
            s.push(&[edge as f64 / S, o, r, g]);
            edge += step;
        }
        if now >= end {
            break;
        }
        o += 1.0;
        r += f64::from(u8::from(rate::allow(&rw, &rl, now)));
        g += f64::from(u8::from(gcra::allow(&gw, &gl, now)));
    }
    s
}

knobs! {
    /// Retries of failed calls: the budget caps them, backoff spaces them.
    RetryKnobs {
        form: "budget form" {"tokens", "percent"} = 1.0, [0.0, 1.0, 1.0], c!(int "form"), "Which budget: tokens that each success refills, or a share of the requests seen lately.";
        max_tokens: "tokens: max" ["tokens"] = 10.0, [1.0, 1000.0, 1.0], c!(int "max_tokens");
        token_ratio: "tokens: back per success" ["tokens"] = 0.1, [0.001, 1.0, 0.001], c!("token_ratio");
        ttl_s: "percent: deposits live" ["s"] = 10.0, [1.0, 60.0, 1.0], c!(int "ttl_ns", S);
        min_per_s: "percent: retries always allowed" ["retries/s"] = 10.0, [0.0, 1000.0, 1.0], c!(int "min_per_s");
        percent: "percent: of requests" ["fraction"] = 0.2, [0.0, 2.0, 0.01], c!("percent");
        base_ms: "backoff: first wait" ["ms"] = 100.0, [0.0, 2000.0, 10.0], c!(in "backoff", int "base_ns", MS);
        factor: "backoff: factor" ["×"] = 2.0, [1.0, 5.0, 0.1], c!(in "backoff", "factor");
        cap_ms: "backoff: cap" ["ms"] = 1000.0, [0.0, 10000.0, 10.0], c!(in "backoff", int "cap_ns", MS);
        attempts: "backoff: attempts" ["calls"] = 3.0, [1.0, 10.0, 1.0], c!(in "backoff", int "attempts");
        jitter: "backoff: jitter" {"rigid", "full", "equal", "decorrelated", "spread"} = 4.0, [0.0, 4.0, 1.0], c!(in "backoff", int "jitter");
        spread: "backoff: spread" ["fraction"] = 0.2, [0.0, 1.0, 0.01], c!(in "backoff", "spread");
        rate: "traffic: rate" ["requests/s"] = 50.0, [1.0, 1000.0, 1.0], None;
        fail: "traffic: failing while up" ["fraction"] = 0.05, [0.0, 1.0, 0.01], None, "The chance that an attempt fails outside the outage; during it every attempt fails.";
        outage_at: "traffic: outage starts" ["s"] = 5.0, [0.0, 60.0, 1.0], None;
        outage_s: "traffic: outage lasts" ["s"] = 10.0, [0.0, 60.0, 1.0], None;
        seconds: "traffic: shown" ["s"] = 25.0, [5.0, 120.0, 1.0], None;
    }
}

/// A request fails with `fail` (always during the outage); a failure asks
/// the budget for a retry and, if backoff allows another attempt, retries
/// after backoff's delay. One point a second. Draws, in order: a request's
/// gap when it arrives, then for each attempt its failure, then a retry's
/// backoff draw (bay/c/retry.c replays them).
pub fn retry(k: &RetryKnobs, seed: u64) -> Series {
    // The form as the C struct's int: WEIR_BUDGET_TOKENS (0) or _PERCENT (1).
    let budget = match k.form.round() as i32 {
        0 => Budget::tokens(k.max_tokens.round() as i32, k.token_ratio),
        1 => Budget::percent(
            (k.ttl_s * S).round() as i64,
            k.min_per_s.round() as i32,
            k.percent,
            0,
        ),
        _ => return invalid("invalid policy"),
    };
    // The jitter as the C struct's int: WEIR_BACKOFF_JITTER_RIGID (0) .. SPREAD (4).
    let jitter = k.jitter.round();
    let Some(&(jitter, _)) = JITTERS.get(jitter as usize).filter(|_| jitter >= 0.0) else {
        return invalid("invalid policy");
    };
    let backoff = Backoff::new(
        (k.base_ms * MS).round() as i64,
        k.factor,
        (k.cap_ms * MS).round() as i64,
        k.attempts.round() as i32,
        jitter,
        k.spread,
    );
    let (Ok(mut budget), Ok(backoff)) = (budget, backoff) else {
        return invalid("invalid policy");
    };
    let mut rng = Rng::new(seed);
    let mut s = Series::with(&[
        "t",
        "requests",
        "retries",
        "budget refused",
        "attempts per request",
    ]);
    let end = (k.seconds * S) as i64;
    let (down_from, down_to) = (
        (k.outage_at * S) as i64,
        ((k.outage_at + k.outage_s) * S) as i64,
    );
    // (when, attempt made so far, the last delay): retries waiting.
    let mut waiting: BinaryHeap<Reverse<(i64, i32, i64)>> = BinaryHeap::new();
    let mut next_request = rng.gap(S / k.rate.max(1e-3));
    let mut edge = S as i64;
    let (mut req, mut ret, mut refused) = (0.0, 0.0, 0.0);
    loop {
        let retry_at = waiting.peek().map_or(i64::MAX, |r| r.0 .0);
        let now = next_request.min(retry_at);
        while edge <= now.min(end) {
            let per = if req > 0.0 { (req + ret) / req } else { 0.0 };
            s.push(&[(edge - S as i64) as f64 / S, req, ret, refused, per]);
            (req, ret, refused) = (0.0, 0.0, 0.0);
            edge += S as i64;
        }
        if now >= end {
            break;
        }
        let (made, previous) = if retry_at <= next_request {
            let Reverse((_, made, previous)) = waiting.pop().unwrap();
            ret += 1.0;
            (made + 1, previous)
        } else {
            next_request += rng.gap(S / k.rate.max(1e-3));
            req += 1.0;
            budget.deposit(now);
            (1, 0)
        };
        let down = now >= down_from && now < down_to;
        let fails = down || rng.unit() < k.fail;
        if fails && backoff.more(made) {
            if budget.withdraw(now) {
                let delay = backoff.delay(made, rng.unit(), previous);
                waiting.push(Reverse((now + delay, made, delay)));
            } else {
                refused += 1.0;
            }
        }
    }
    s
}

knobs! {
    /// The adaptive concurrency limit as the backend's latency climbs.
    ConcurrencyKnobs {
        initial_limit: "initial limit" ["calls"] = 20.0, [1.0, 1000.0, 1.0], c!(int "initial_limit");
        min_limit: "min limit" ["calls"] = 20.0, [1.0, 1000.0, 1.0], c!(int "min_limit");
        max_limit: "max limit" ["calls"] = 200.0, [1.0, 5000.0, 1.0], c!(int "max_limit");
        queue_size: "queue size" ["calls"] = 4.0, [0.0, 100.0, 1.0], c!(int "queue_size");
        smoothing: "smoothing" ["fraction"] = 0.2, [0.01, 1.0, 0.01], c!("smoothing");
        tolerance: "tolerance" ["×"] = 1.5, [1.0, 5.0, 0.1], c!("tolerance");
        long_window: "long window" ["samples"] = 600.0, [1.0, 5000.0, 1.0], c!(int "long_window");
        warmup: "warm-up" ["samples"] = 10.0, [0.0, 1000.0, 1.0], c!(int "warmup");
        rate: "traffic: rate" ["calls/s"] = 1000.0, [1.0, 10000.0, 1.0], None;
        latency_ms: "traffic: latency at start" ["ms"] = 20.0, [1.0, 1000.0, 1.0], None;
        latency_end_ms: "traffic: latency at end" ["ms"] = 200.0, [1.0, 5000.0, 1.0], None, "The latency climbs in a straight line to this, each call's spread by ±10 %.";
        seconds: "traffic: shown" ["s"] = 30.0, [5.0, 120.0, 1.0], None;
    }
}

/// The policy from the knobs.
pub fn concurrency_policy(k: &ConcurrencyKnobs) -> ConcurrencyPolicy {
    ConcurrencyPolicy {
        initial_limit: k.initial_limit.round() as i32,
        min_limit: k.min_limit.round() as i32,
        max_limit: k.max_limit.round() as i32,
        queue_size: k.queue_size.round() as i32,
        smoothing: k.smoothing,
        tolerance: k.tolerance,
        long_window: k.long_window.round() as i32,
        warmup: k.warmup.round() as i32,
        ..ConcurrencyPolicy::PRESET
    }
}

/// Calls arrive at `rate`; each takes the latency of the moment, which
/// climbs linearly from start to end, spread by ±10 %. One point per
/// 100 ms: the limit, in flight, refusals.
pub fn concurrency(k: &ConcurrencyKnobs, seed: u64) -> Series {
    let Ok(mut cc) = Concurrency::new(concurrency_policy(k)) else {
        return invalid("invalid policy");
    };
    let mut rng = Rng::new(seed);
    let mut s = Series::with(&["t", "limit", "flying", "refused", "latency ms"]);
    let end = (k.seconds * S) as i64;
    let step = (100.0 * MS) as i64;
    let mut pending: BinaryHeap<Reverse<(i64, i64, i64)>> = BinaryHeap::new();
    let (mut now, mut edge, mut refused) = (0i64, step, 0.0);
    let latency_at =
        |t: i64| (k.latency_ms + (k.latency_end_ms - k.latency_ms) * t as f64 / end as f64) * MS;
    let leave = |cc: &mut Concurrency, p: &mut BinaryHeap<Reverse<(i64, i64, i64)>>, now| {
        while let Some(&Reverse((at, start, inflight))) = p.peek() {
            if at > now {
                break;
            }
            p.pop();
            cc.leave(
                weir_core::concurrency::ConcurrencyTicket { start, inflight },
                at,
                false,
            );
        }
    };
    loop {
        now += rng.gap(S / k.rate.max(1e-3));
        while edge <= now.min(end) {
            leave(&mut cc, &mut pending, edge);
            s.push(&[
                edge as f64 / S,
                cc.limit() as f64,
                cc.flying() as f64,
                refused,
                latency_at(edge) / MS,
            ]);
            refused = 0.0;
            edge += step;
        }
        if now >= end {
            break;
        }
        leave(&mut cc, &mut pending, now);
        let spread = 0.9 + 0.2 * rng.unit();
        match cc.enter(now) {
            Some(e) => pending.push(Reverse((
                now + (latency_at(now) * spread) as i64,
                e.start,
                e.inflight,
            ))),
            None => refused += 1.0,
        }
    }
    s
}

knobs! {
    /// The shedder in front of the same server, each call of one of four
    /// classes.
    ClassesKnobs {
        size: "size" ["buckets"] = 50.0, [1.0, 200.0, 1.0], c!(int "size");
        window_s: "window" ["s"] = 5.0, [1.0, 60.0, 1.0], c!(int "window_ns", S);
        cpu: "hot at CPU" ["‰"] = 900.0, [0.0, 999.0, 1.0], c!(int "cpu");
        latency_ms: "assumed response time" ["ms"] = 1000.0, [1.0, 5000.0, 1.0], c!(int "latency_ns", MS);
        beta: "average weight" ["fraction"] = 0.9, [0.0, 0.99, 0.01], c!("beta");
        cool_ms: "time to cool" ["ms"] = 1000.0, [0.0, 10000.0, 100.0], c!(int "cool_ns", MS);
        floor: "never under" ["fraction of capacity"] = 0.1, [0.01, 1.0, 0.01], c!("floor");
        sheddable: "traffic: SHEDDABLE" ["fraction of calls"] = 0.3, [0.0, 1.0, 0.01], None, "Calls that can wait (prefetch, batch): refused first.";
        sheddable_plus: "traffic: SHEDDABLE_PLUS" ["fraction of calls"] = 0.2, [0.0, 1.0, 0.01], None, "Calls a user waits for but can retry.";
        critical_plus: "traffic: CRITICAL_PLUS" ["fraction of calls"] = 0.1, [0.0, 1.0, 0.01], None, "Calls refused last (health checks, control); the calls no class takes are CRITICAL.";
        capacity: "traffic: server capacity" ["calls/s"] = 200.0, [10.0, 2000.0, 10.0], None, "What the server finishes a second at full speed.";
        service_ms: "traffic: service time" ["ms"] = 50.0, [1.0, 1000.0, 1.0], None, "How long a call takes while the server is not overloaded; beyond its capacity each call slows in proportion.";
        start_rate: "traffic: starting load" ["calls/s"] = 100.0, [1.0, 2000.0, 1.0], None;
        peak_rate: "traffic: peak load" ["calls/s"] = 600.0, [1.0, 4000.0, 1.0], None, "Reached two thirds of the way through, after which the load drops back.";
        seconds: "traffic: shown" ["s"] = 30.0, [5.0, 120.0, 1.0], None;
    }
}

/// The classes' shedder policy: the shedder panel's, from the same knobs.
pub fn classes_policy(k: &ClassesKnobs) -> ShedderPolicy {
    shedder_policy(&ShedderKnobs {
        size: k.size,
        window_s: k.window_s,
        cpu: k.cpu,
        latency_ms: k.latency_ms,
        beta: k.beta,
        cool_ms: k.cool_ms,
        floor: k.floor,
        ..ShedderKnobs::default()
    })
}

/// The shedder panel's server and load, each call drawn a class from the
/// mix (one draw after its arrival) and asked with `allow_class`. One point
/// per 100 ms: each class's calls let through and refused.
pub fn classes(k: &ClassesKnobs, seed: u64) -> Series {
    let Ok(mut sh) = Shedder::new(classes_policy(k), 0) else {
        return invalid("invalid policy");
    };
    let mut rng = Rng::new(seed);
    let mut s = Series::with(&[
        "t",
        "cpu",
        "flying",
        "limit",
        "SHEDDABLE through",
        "SHEDDABLE_PLUS through",
        "CRITICAL through",
        "CRITICAL_PLUS through",
        "SHEDDABLE refused",
        "SHEDDABLE_PLUS refused",
        "CRITICAL refused",
        "CRITICAL_PLUS refused",
    ]);
    let end = (k.seconds * S) as i64;
    let ramp = end as f64 * 2.0 / 3.0;
    let slots = (k.capacity * k.service_ms / 1e3).max(1e-3);
    let step = (100.0 * MS) as i64;
    let mut pending: BinaryHeap<Reverse<(i64, u64)>> = BinaryHeap::new();
    let mut tickets = std::collections::HashMap::new();
    let (mut serial, mut now, mut edge) = (0u64, 0i64, step);
    // Let through and refused this step, by class, least important first.
    let (mut through, mut refused) = ([0.0f64; 4], [0.0f64; 4]);
    let mut cpu = 0.0f64;
    let busy = |flying: i64| (flying as f64 / slots).min(1.0) * 1000.0;
    // A draw under `a` is SHEDDABLE, under `b` SHEDDABLE_PLUS, under `c`
    // CRITICAL_PLUS, and the rest CRITICAL.
    let a = k.sheddable;
    let b = a + k.sheddable_plus;
    let c = b + k.critical_plus;
    loop {
        let rate = if (now as f64) < ramp {
            k.start_rate + (k.peak_rate - k.start_rate) * now as f64 / ramp
        } else {
            k.start_rate
        };
        now += rng.gap(S / rate.max(1e-3));
        while edge <= now.min(end) {
            finish(&mut sh, &mut pending, &mut tickets, edge);
            let st = sh.stats(edge);
            let mut row = vec![edge as f64 / S, cpu.floor(), st.flying as f64, st.limit];
            row.extend(through);
            row.extend(refused);
            s.push(&row);
            (through, refused) = ([0.0; 4], [0.0; 4]);
            edge += step;
        }
        if now >= end {
            break;
        }
        finish(&mut sh, &mut pending, &mut tickets, now);
        let flying = sh.flying();
        cpu += (busy(flying) - cpu) * 0.02;
        let u = rng.unit();
        let class = if u < a {
            Criticality::Sheddable
        } else if u < b {
            Criticality::SheddablePlus
        } else if u < c {
            Criticality::CriticalPlus
        } else {
            Criticality::Critical
        };
        let at = class as usize;
        match sh.allow_class(now, cpu as i32, class) {
            Some(ticket) => {
                through[at] += 1.0;
                let slow = (flying as f64 / slots).max(1.0);
                let done = now + (k.service_ms * MS * slow) as i64;
                serial += 1;
                tickets.insert(serial, ticket);
                pending.push(Reverse((done, serial)));
            }
            None => refused[at] += 1.0,
        }
    }
    s
}

knobs! {
    /// Two partitions of one adaptive limit: one busy throughout, the
    /// other quiet but for a burst.
    PartitionsKnobs {
        initial_limit: "initial limit" ["calls"] = 40.0, [1.0, 1000.0, 1.0], None, "weir_concurrency_policy.initial_limit: the limit before any sample.";
        min_limit: "min limit" ["calls"] = 10.0, [1.0, 1000.0, 1.0], None, "weir_concurrency_policy.min_limit: the floor of the limit.";
        max_limit: "max limit" ["calls"] = 40.0, [1.0, 5000.0, 1.0], None, "weir_concurrency_policy.max_limit: the ceiling of the limit.";
        a_share: "A: share" ["fraction of the limit"] = 0.5, [0.0, 1.0, 0.01], None, "weir_concurrency_partition.share of partition A (number 0): it owns floor(limit × share) calls.";
        a_borrow: "A: borrow" ["calls"] = 10.0, [0.0, 1000.0, 1.0], None, "weir_concurrency_partition.borrow of partition A: how many calls past its own room it may borrow while others leave theirs unused.";
        b_share: "B: share" ["fraction of the limit"] = 0.5, [0.0, 1.0, 0.01], None, "weir_concurrency_partition.share of partition B (number 1); the shares sum to at most 1.";
        b_borrow: "B: borrow" ["calls"] = 10.0, [0.0, 1000.0, 1.0], None, "weir_concurrency_partition.borrow of partition B.";
        a_rate: "traffic: A's rate" ["calls/s"] = 1000.0, [1.0, 10000.0, 1.0], None, "Partition A's calls arrive about this many a second throughout.";
        b_rate: "traffic: B's rate in its burst" ["calls/s"] = 600.0, [1.0, 10000.0, 1.0], None, "Partition B offers nothing but in its burst.";
        b_from: "traffic: B's burst starts" ["s"] = 10.0, [0.0, 120.0, 1.0], None;
        b_for: "traffic: B's burst lasts" ["s"] = 10.0, [0.0, 120.0, 1.0], None;
        latency_ms: "traffic: latency" ["ms"] = 50.0, [1.0, 1000.0, 1.0], None, "Each call's, spread by ±10 %.";
        seconds: "traffic: shown" ["s"] = 30.0, [5.0, 120.0, 1.0], None;
    }
}

/// The partitions' limit: the preset's controller with the knobs' limits.
pub fn partitions_policy(k: &PartitionsKnobs) -> ConcurrencyPolicy {
    ConcurrencyPolicy {
        initial_limit: k.initial_limit.round() as i32,
        min_limit: k.min_limit.round() as i32,
        max_limit: k.max_limit.round() as i32,
        ..ConcurrencyPolicy::PRESET
    }
}

/// The two partitions' terms.
pub fn partitions_terms(k: &PartitionsKnobs) -> [Partition; 2] {
    [
        Partition {
            share: k.a_share,
            borrow: k.a_borrow.round() as i64,
        },
        Partition {
            share: k.b_share,
            borrow: k.b_borrow.round() as i64,
        },
    ]
}

/// Partition A's calls arrive throughout, B's only in its burst, each
/// stream with its own gaps (the earlier arrival goes first, A on a tie;
/// an arrival draws its spread, then its stream's next gap). One point per
/// 100 ms: the limit, calls in flight in all and in each partition, and
/// each partition's refusals. Its note counts the calls let in with the
/// limit already full: none, whatever the knobs.
pub fn partitions(k: &PartitionsKnobs, seed: u64) -> Series {
    let Ok(mut pl) = Partitioned::new(partitions_policy(k), &partitions_terms(k)) else {
        return invalid("invalid policy");
    };
    let mut rng = Rng::new(seed);
    let mut s = Series::with(&[
        "t",
        "limit",
        "flying",
        "A flying",
        "B flying",
        "A refused",
        "B refused",
    ]);
    let end = (k.seconds * S) as i64;
    let step = (100.0 * MS) as i64;
    let b_from = (k.b_from * S) as i64;
    let b_until = b_from.saturating_add((k.b_for * S) as i64).min(end);
    // Calls in flight as (finish, start, inflight, partition).
    let mut pending: BinaryHeap<Reverse<(i64, i64, i64, usize)>> = BinaryHeap::new();
    let mut edge = step;
    let mut refused = [0.0f64; 2];
    let mut over = 0.0;
    let mut next = [
        rng.gap(S / k.a_rate.max(1e-3)),
        b_from + rng.gap(S / k.b_rate.max(1e-3)),
    ];
    let leave = |pl: &mut Partitioned, p: &mut BinaryHeap<Reverse<(i64, i64, i64, usize)>>, now| {
        while let Some(&Reverse((at, start, inflight, part))) = p.peek() {
            if at > now {
                break;
            }
            p.pop();
            let _ = pl.leave_partition(part, ConcurrencyTicket { start, inflight }, at, false);
        }
    };
    loop {
        let b_live = next[1] < b_until;
        let part = usize::from(b_live && next[1] < next[0]);
        let now = if b_live {
            next[0].min(next[1])
        } else {
            next[0]
        };
        while edge <= now.min(end) {
            leave(&mut pl, &mut pending, edge);
            s.push(&[
                edge as f64 / S,
                pl.limit() as f64,
                pl.flying() as f64,
                pl.flying_in(0).unwrap_or(0) as f64,
                pl.flying_in(1).unwrap_or(0) as f64,
                refused[0],
                refused[1],
            ]);
            refused = [0.0; 2];
            edge += step;
        }
        if now >= end {
            break;
        }
        leave(&mut pl, &mut pending, now);
        let full = pl.flying() >= pl.limit();
        let spread = 0.9 + 0.2 * rng.unit();
        match pl.enter_partition(part, now) {
            Ok(Some(e)) => {
                if full {
                    over += 1.0;
                }
                pending.push(Reverse((
                    now + (k.latency_ms * MS * spread) as i64,
                    e.start,
                    e.inflight,
                    part,
                )));
            }
            _ => refused[part] += 1.0,
        }
        let rate = if part == 0 { k.a_rate } else { k.b_rate };
        next[part] = now + rng.gap(S / rate.max(1e-3));
    }
    s.notes.push(("calls let in with the limit full", over));
    s
}

knobs! {
    /// The adaptive concurrency limit as the backend's latency steps up,
    /// holds, and steps back down.
    StepKnobs {
        initial_limit: "initial limit" ["calls"] = 20.0, [1.0, 1000.0, 1.0], c!(int "initial_limit");
        min_limit: "min limit" ["calls"] = 5.0, [1.0, 1000.0, 1.0], c!(int "min_limit");
        max_limit: "max limit" ["calls"] = 100.0, [1.0, 5000.0, 1.0], c!(int "max_limit");
        queue_size: "queue size" ["calls"] = 4.0, [0.0, 100.0, 1.0], c!(int "queue_size");
        smoothing: "smoothing" ["fraction"] = 0.2, [0.01, 1.0, 0.01], c!("smoothing");
        tolerance: "tolerance" ["×"] = 1.5, [1.0, 5.0, 0.1], c!("tolerance");
        long_window: "long window" ["samples"] = 600.0, [1.0, 5000.0, 1.0], c!(int "long_window");
        warmup: "warm-up" ["samples"] = 10.0, [0.0, 1000.0, 1.0], c!(int "warmup");
        rate: "traffic: rate" ["calls/s"] = 3000.0, [1.0, 10000.0, 1.0], None;
        low_ms: "traffic: latency before and after" ["ms"] = 10.0, [1.0, 1000.0, 1.0], None, "The backend's latency outside the step, each call's spread by ±10 %.";
        high_ms: "traffic: latency in the step" ["ms"] = 40.0, [1.0, 5000.0, 1.0], None;
        up_s: "traffic: step up at" ["s"] = 10.0, [0.0, 120.0, 1.0], None;
        down_s: "traffic: step down at" ["s"] = 30.0, [0.0, 120.0, 1.0], None;
        seconds: "traffic: shown" ["s"] = 50.0, [5.0, 120.0, 1.0], None;
    }
}

/// The latency step's policy, as the concurrency panel's.
pub fn step_policy(k: &StepKnobs) -> ConcurrencyPolicy {
    concurrency_policy(&ConcurrencyKnobs {
        initial_limit: k.initial_limit,
        min_limit: k.min_limit,
        max_limit: k.max_limit,
        queue_size: k.queue_size,
        smoothing: k.smoothing,
        tolerance: k.tolerance,
        long_window: k.long_window,
        warmup: k.warmup,
        ..ConcurrencyKnobs::default()
    })
}

/// The concurrency panel's run with the latency of a call starting at `t`
/// `high_ms` from `up_s` until `down_s`, `low_ms` otherwise: the limit falls
/// at the step up, climbs back as the higher latency becomes the baseline,
/// and the baseline (the long-term average) follows the latency back down.
/// One point per 100 ms; its notes: the limit just before the step up, its
/// lowest in the step, and at the end.
pub fn latency_step(k: &StepKnobs, seed: u64) -> Series {
    let Ok(mut cc) = Concurrency::new(step_policy(k)) else {
        return invalid("invalid policy");
    };
    let mut rng = Rng::new(seed);
    let mut s = Series::with(&[
        "t",
        "limit",
        "flying",
        "refused",
        "latency ms",
        "baseline ms",
    ]);
    let end = (k.seconds * S) as i64;
    let (up, down) = ((k.up_s * S) as i64, (k.down_s * S) as i64);
    let step = (100.0 * MS) as i64;
    let mut pending: BinaryHeap<Reverse<(i64, i64, i64)>> = BinaryHeap::new();
    let (mut now, mut edge, mut refused) = (0i64, step, 0.0);
    let latency_at = |t: i64| {
        if t >= up && t < down {
            k.high_ms * MS
        } else {
            k.low_ms * MS
        }
    };
    let (mut before, mut lowest) = (f64::NAN, f64::NAN);
    loop {
        now += rng.gap(S / k.rate.max(1e-3));
        while edge <= now.min(end) {
            concurrency_leave(&mut cc, &mut pending, edge);
            let limit = cc.limit() as f64;
            if edge <= up {
                before = limit;
            } else if edge <= down {
                lowest = if lowest.is_nan() {
                    limit
                } else {
                    lowest.min(limit)
                };
            }
            s.push(&[
                edge as f64 / S,
                limit,
                cc.flying() as f64,
                refused,
                latency_at(edge) / MS,
                cc.long_rtt() / MS,
            ]);
            refused = 0.0;
            edge += step;
        }
        if now >= end {
            break;
        }
        concurrency_leave(&mut cc, &mut pending, now);
        let spread = 0.9 + 0.2 * rng.unit();
        match cc.enter(now) {
            Some(e) => pending.push(Reverse((
                now + (latency_at(now) * spread) as i64,
                e.start,
                e.inflight,
            ))),
            None => refused += 1.0,
        }
    }
    s.notes.push(("limit before the step up", before));
    s.notes.push(("lowest limit in the step", lowest));
    s.notes.push(("limit at the end", cc.limit() as f64));
    s
}

/// Calls due by `now` leave `cc`, each at its own finish.
fn concurrency_leave(cc: &mut Concurrency, p: &mut BinaryHeap<Reverse<(i64, i64, i64)>>, now: i64) {
    while let Some(&Reverse((at, start, inflight))) = p.peek() {
        if at > now {
            break;
        }
        p.pop();
        cc.leave(ConcurrencyTicket { start, inflight }, at, false);
    }
}

knobs! {
    /// A pool under a burst of work, then left idle.
    PoolKnobs {
        size: "size" ["resources"] = 10.0, [1.0, 200.0, 1.0], c!(int "size");
        idle: "idle" ["resources"] = 10.0, [0.0, 200.0, 1.0], c!(int "idle");
        keep_s: "keep idle" ["s"] = 1800.0, [0.0, 7200.0, 1.0], c!(int "keep_ns", S);
        life_s: "life" ["s"] = 0.0, [0.0, 7200.0, 1.0], c!(int "life_ns", S);
        life_jitter: "life jitter" ["fraction"] = 0.0, [0.0, 0.9, 0.01], c!("life_jitter");
        min_idle: "min idle" ["resources"] = 0.0, [0.0, 200.0, 1.0], c!(int "min_idle"), "Here made ahead after each step, each made at once.";
        max_making: "max making" ["resources"] = 0.0, [0.0, 200.0, 1.0], c!(int "max_making"), "Here each resource is made at once, so this caps only the makes within one instant.";
        rate: "traffic: rate in the burst" ["calls/s"] = 50.0, [1.0, 1000.0, 1.0], None;
        work_ms: "traffic: each holds a resource" ["ms"] = 150.0, [1.0, 5000.0, 1.0], None;
        burst_s: "traffic: burst lasts" ["s"] = 60.0, [1.0, 3600.0, 1.0], None;
        seconds: "traffic: shown" ["s"] = 3600.0, [10.0, 14400.0, 10.0], None;
    }
}

/// Calls take a resource (making one when there is room, counting a wait
/// when there is none), hold it, and give it back; every step evicts what
/// is due. 120 points over the burst, 240 after it.
pub fn pool(k: &PoolKnobs, seed: u64) -> Series {
    let limits = PoolPolicy {
        size: k.size.round() as i64,
        idle: k.idle.round() as i64,
        keep_ns: (k.keep_s * S).round() as i64,
        life_ns: (k.life_s * S).round() as i64,
        life_jitter: k.life_jitter,
        min_idle: k.min_idle.round() as i64,
        max_making: k.max_making.round() as i64,
        ..PoolPolicy::PRESET
    };
    let Ok(mut pool) = Pool::new(limits) else {
        return invalid("invalid policy");
    };
    let mut rng = Rng::new(seed);
    let mut s = Series::with(&["t", "live", "idle", "made", "evicted", "waited"]);
    let end = (k.seconds * S) as i64;
    let burst_end = (k.burst_s * S) as i64;
    // 120 points over the burst and 240 over the rest, so both show.
    let burst_shown = burst_end.min(end);
    let mut edges = (1..=120)
        .map(|i| burst_shown * i / 120)
        .chain((1..=240).map(|i| burst_shown + (end - burst_shown) * i / 240))
        .filter(|&e| e > 0)
        .collect::<Vec<i64>>();
    edges.dedup();
    let mut edges = edges.into_iter();
    let mut lent: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    let (mut next_call, mut edge, mut waited, mut ids) =
        (rng.gap(S / k.rate), edges.next(), 0.0, 0usize);
    let back = |pool: &mut Pool, lent: &mut BinaryHeap<Reverse<(i64, usize)>>, now| {
        while let Some(&Reverse((at, item))) = lent.peek() {
            if at > now {
                break;
            }
            lent.pop();
            let _ = pool.give(item, at);
        }
    };
    let mut out = [0usize; 64];
    while let Some(at) = edge {
        if next_call < burst_end && next_call <= at {
            let now = next_call;
            next_call += rng.gap(S / k.rate.max(1e-3));
            back(&mut pool, &mut lent, now);
            let item = loop {
                match pool.take(now) {
                    PoolTaken::Ready(item) => break Some(item),
                    PoolTaken::Stale(_) => continue,
                    PoolTaken::Make => {
                        ids += 1;
                        // A draw only where it cuts a life, so that the
                        // calls' draws stay as they were without jitter.
                        let draw = if k.life_jitter > 0.0 {
                            rng.next_u64()
                        } else {
                            0
                        };
                        let _ = pool.made_jittered(ids, now, draw);
                        break Some(ids);
                    }
                    PoolTaken::Wait => break None,
                }
            };
            match item {
                Some(item) => lent.push(Reverse((now + (k.work_ms * MS) as i64, item))),
                None => waited += 1.0,
            }
            continue;
        }
        back(&mut pool, &mut lent, at);
        while pool.evict(at, &mut out) == out.len() {}
        // Keep min_idle ready: each reservation made and given back idle.
        for _ in 0..pool.make_ahead() {
            ids += 1;
            let _ = pool.give(ids, at);
        }
        let c = pool.stats();
        s.push(&[
            at as f64 / S,
            pool.live() as f64,
            pool.idle() as f64,
            c.made as f64,
            (c.evicted_idle + c.evicted_age + c.stale) as f64,
            waited,
        ]);
        edge = edges.next();
    }
    s
}

knobs! {
    /// Backoff's five jitters, each drawn 10,000 times.
    BackoffKnobs {
        base_ms: "first wait" ["ms"] = 100.0, [0.0, 2000.0, 10.0], c!(int "base_ns", MS);
        factor: "factor" ["×"] = 2.0, [1.0, 5.0, 0.1], c!("factor");
        cap_ms: "cap" ["ms"] = 1000.0, [0.0, 10000.0, 10.0], c!(int "cap_ns", MS);
        attempts: "attempts" ["calls"] = 3.0, [2.0, 10.0, 1.0], c!(int "attempts");
        spread: "spread" ["fraction"] = 0.2, [0.0, 1.0, 0.01], c!("spread");
        jitter: "the C policy's jitter" {"rigid", "full", "equal", "decorrelated", "spread"} = 4.0, [0.0, 4.0, 1.0], c!(int "jitter"), "The plots show all five jitters; the one chosen here is drawn thicker.";
        draws: "traffic: draws per retry" ["draws"] = 10000.0, [100.0, 10000.0, 100.0], None;
    }
}

const JITTERS: [(BackoffJitter, &str); 5] = [
    (BackoffJitter::Rigid, "rigid"),
    (BackoffJitter::Full, "full"),
    (BackoffJitter::Equal, "equal"),
    (BackoffJitter::Decorrelated, "decorrelated"),
    (BackoffJitter::Spread, "spread"),
];

/// For each retry: its ceiling, and each jitter's smallest, mean and
/// largest delay over `draws` retry sequences (decorrelated grows from the
/// previous delay, so each sequence chains). Then a histogram of every
/// delay drawn, 40 bins from 0 to the largest.
pub fn backoff(k: &BackoffKnobs, seed: u64) -> Series {
    let make = |jitter| {
        Backoff::new(
            (k.base_ms * MS) as i64,
            k.factor,
            (k.cap_ms * MS) as i64,
            k.attempts as i32,
            jitter,
            k.spread,
        )
    };
    let Ok(policy) = make(BackoffJitter::Rigid) else {
        return invalid("invalid policy");
    };
    let retries = policy.retries();
    let draws = k.draws as usize;
    let mut rng = Rng::new(seed);
    let mut all: Vec<Vec<i64>> = Vec::new();
    let mut s = Series::with(&[
        "retry",
        "ceiling ms",
        "rigid max",
        "full max",
        "equal max",
        "decorrelated max",
        "spread max",
        "full mean",
        "equal mean",
        "decorrelated mean",
        "spread mean",
        "bin ms",
        "rigid",
        "full",
        "equal",
        "decorrelated",
        "spread",
    ]);
    let mut stats = vec![vec![(f64::MAX, 0.0f64, 0.0f64); retries]; 5];
    for (j, (jitter, _)) in JITTERS.iter().enumerate() {
        let b = make(*jitter).unwrap();
        let mut delays = Vec::with_capacity(draws * retries);
        for _ in 0..draws {
            let mut previous = 0;
            for (r, st) in stats[j].iter_mut().enumerate() {
                let d = b.delay(r as i32 + 1, rng.unit(), previous);
                previous = d;
                delays.push(d);
                st.0 = st.0.min(d as f64);
                st.1 += d as f64 / draws as f64;
                st.2 = st.2.max(d as f64);
            }
        }
        all.push(delays);
    }
    let bins = 40usize;
    let top = all.iter().flatten().copied().max().unwrap_or(0).max(1) as f64;
    let mut hist = vec![vec![0.0; bins]; 5];
    for (j, delays) in all.iter().enumerate() {
        for &d in delays {
            let bin = ((d as f64 / top * bins as f64) as usize).min(bins - 1);
            hist[j][bin] += 1.0;
        }
    }
    let rows = retries.max(bins);
    for i in 0..rows {
        let mut row = vec![f64::NAN; 17];
        if i < retries {
            row[0] = (i + 1) as f64;
            row[1] = policy.ceiling(i as i32 + 1) as f64 / MS;
            for j in 0..5 {
                row[2 + j] = stats[j][i].2 / MS;
            }
            for j in 1..5 {
                row[6 + j] = stats[j][i].1 / MS;
            }
        }
        if i < bins {
            row[11] = (i as f64 + 0.5) * top / bins as f64 / MS;
            for j in 0..5 {
                row[12 + j] = hist[j][i];
            }
        }
        s.push(&row);
    }
    // Columns of unequal length: trim the padding each plot does not use.
    for (at, (_, column)) in s.columns.iter_mut().enumerate() {
        column.truncate(if at < 11 { retries } else { bins });
    }
    s
}

knobs! {
    /// The bloom's false refusals as keys fill it.
    BloomKnobs {
        size_log2: "size" ["log2 words"] = 12.0, [4.0, 20.0, 1.0], None, "weir_bloom_new's size_log2: the bloom holds 2^size_log2 rate words.";
        hashes: "hashes" ["words per key"] = 3.0, [1.0, 8.0, 1.0], None, "weir_bloom_new's hashes: the words each key maps to; a key is refused only when all of them are spent.";
        keys: "traffic: keys" ["keys"] = 8192.0, [16.0, 65536.0, 16.0], None;
        steps: "traffic: points" ["points"] = 32.0, [2.0, 128.0, 1.0], None;
    }
}

/// The bloom's hash seeds: fixed, and the copied C's, so that the C replay
/// hashes as the page does; only the keys come from the page's seed.
const BLOOM_SEEDS: (u64, u64) = (0x5eed0, 0x5eed1);

/// Distinct keys each ask once at one instant, every word allowing one a
/// second: a key is refused only when all its words are spent by other
/// keys. Each point: the refused fraction among the keys of that step,
/// beside the header's (1 − e^(−kN/M))^k at the step's middle key count.
pub fn bloom(k: &BloomKnobs, seed: u64) -> Series {
    let mut rng = Rng::new(seed);
    let (size_log2, hashes) = (k.size_log2 as u32, k.hashes as u32);
    let Ok(limit) = RateLimit::new(1.0, 1) else {
        return invalid("invalid policy");
    };
    let Ok(shape) = BloomShape::new(size_log2, hashes, limit, BLOOM_SEEDS.0, BLOOM_SEEDS.1) else {
        return invalid("invalid shape");
    };
    let Ok(bloom) = Bloom::new(shape) else {
        return invalid("invalid shape");
    };
    let mut s = Series::with(&["keys", "measured", "formula"]);
    let (keys, steps) = (k.keys as u64, k.steps.max(1.0) as u64);
    let m = (1u64 << size_log2) as f64;
    let kk = f64::from(hashes);
    let mut done = 0u64;
    for step in 1..=steps {
        let upto = keys * step / steps;
        let (mut refused, n) = (0.0, upto - done);
        for _ in done..upto {
            let mut key = [0u8; 16];
            key[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
            key[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
            refused += f64::from(u8::from(!bloom.allow(1, &key)));
        }
        let mid = (done + upto) as f64 / 2.0;
        let formula = (1.0 - (-kk * mid / m).exp()).powf(kk);
        s.push(&[upto as f64, refused / n.max(1) as f64, formula]);
        done = upto;
    }
    s
}

knobs! {
    /// The keyed table as active keys crowd it, beside the bloom array of
    /// the same memory and a lone GCRA word per key.
    KeyedKnobs {
        buckets: "buckets" ["buckets"] = 64.0, [1.0, 1024.0, 1.0], None, "weir_keyed_new's buckets: the table holds 8 keys a bucket, in 128 bytes.";
        rate: "limit: rate" ["calls/s"] = 5.0, [0.5, 100.0, 0.5], None, "weir_gcra_limit_new's rate_per_s: each key's own word refills at this rate.";
        burst: "limit: burst" ["calls"] = 5.0, [1.0, 100.0, 1.0], None, "weir_gcra_limit_new's burst: the most one key is let through at once.";
        overflow: "overflow" {"refuse", "admit", "shared"} = 0.0, [0.0, 2.0, 1.0], None, "weir_keyed_new's overflow: what a key without a slot gets when neither of its two buckets has a free slot or a word at rest: refused, admitted, or decided on one word of the limit that every such key shares.";
        hashes: "bloom: hashes" ["words per key"] = 3.0, [1.0, 8.0, 1.0], None, "The bloom array beside the table (weir_bloom_new_gcra, the same limit) has the table's bytes in 2^n words (rounded down) and this many words per key.";
        keys: "traffic: active keys" ["keys"] = 640.0, [16.0, 2048.0, 16.0], None, "Keys join one by one over the first half of the run, then all keep sending.";
        calls: "traffic: calls a key" ["calls/s"] = 6.0, [0.5, 20.0, 0.5], None, "Each key calls about this many times a second, each gap drawn at random.";
        pause_s: "traffic: watched key pauses" ["s"] = 2.0, [0.0, 10.0, 0.5], None, "One more key, watched, sends as the others do for this long, then pauses as long, in turn (0: it never pauses); a pause long enough lets its word come to rest, and the table may give its slot away.";
        seconds: "traffic: shown" ["s"] = 60.0, [10.0, 120.0, 1.0], None;
    }
}

/// The keyed table's hash seeds and the bloom's beside it: fixed, and the
/// copied C's, so that the C replay hashes as the page does.
const KEYED_SEEDS: (u64, u64) = (0x6b_6579_6564, 0x74_6162_6c65);
const KEYED_BLOOM_SEEDS: (u64, u64) = (0x62_6c6f_6f6d, 0x61_7272_6179);

/// The bloom's size_log2 for a table of `buckets`: the most words (8
/// bytes each) that fit the table's bytes.
fn keyed_bloom_log2(buckets: u64) -> u32 {
    (buckets * (BUCKET_BYTES / 8) as u64).max(1).ilog2()
}

/// `keys` keys join one by one over the first half of the run (key `i` at
/// `i × half / keys`), each then calling with gaps drawn at random; the
/// watched key (number `keys`) calls from 0, in turns of `pause_s` on and
/// off. Every call goes to the keyed table, to the bloom array of the same
/// memory and to the key's own lone GCRA word, the exact answer: a
/// refusal the lone word would not have made is a false refusal, an admit
/// it would not have made a false admit. Calls in time order (ties by key),
/// each drawing its next gap as it is made (the watched key's too while it
/// pauses). One point a second: the wrong decisions and overflows in it,
/// the keys joined, the slots held and the watched key's admits so far.
pub fn keyed(k: &KeyedKnobs, seed: u64) -> Series {
    let Ok(limit) = GcraLimit::new(k.rate, k.burst as i64) else {
        return invalid("invalid limit");
    };
    let overflow = match k.overflow.round() as i64 {
        0 => Overflow::Refuse,
        1 => Overflow::Admit,
        2 => Overflow::Shared,
        _ => return invalid("invalid overflow policy"),
    };
    let buckets = k.buckets.max(0.0) as u64;
    let Ok(shape) = KeyedShape::new(buckets, limit, overflow, KEYED_SEEDS.0, KEYED_SEEDS.1) else {
        return invalid("invalid bucket count");
    };
    let Ok(table) = Keyed::new(shape) else {
        return invalid("invalid bucket count");
    };
    let size_log2 = keyed_bloom_log2(buckets);
    let Ok(bloom_shape) = BloomShape::new(
        size_log2,
        k.hashes as u32,
        limit,
        KEYED_BLOOM_SEEDS.0,
        KEYED_BLOOM_SEEDS.1,
    ) else {
        return invalid("invalid bloom hashes");
    };
    let Ok(bloom) = Bloom::new(bloom_shape) else {
        return invalid("invalid bloom hashes");
    };
    let mut rng = Rng::new(seed);
    let keys = k.keys.max(0.0) as i64;
    let watched = keys;
    let end = (k.seconds * S) as i64;
    let half = end / 2;
    let pause = (k.pause_s * S) as i64;
    let mean = S / k.calls.max(1e-3);
    let lone: Vec<core::sync::atomic::AtomicU64> = (0..=keys)
        .map(|_| core::sync::atomic::AtomicU64::new(0))
        .collect();
    let mut joined = vec![false; keys as usize + 1];
    let mut due: BinaryHeap<Reverse<(i64, i64)>> = BinaryHeap::new();
    for i in 0..keys {
        due.push(Reverse((i * half / keys.max(1), i)));
    }
    due.push(Reverse((0, watched)));
    let mut s = Series::with(&[
        "t",
        "overflows",
        "table false refusals",
        "bloom false refusals",
        "table false admits",
        "bloom false admits",
        "active keys",
        "keys held",
        "slots",
        "watched key in the table",
        "watched key on a lone word",
    ]);
    let slots = (buckets as usize * SLOTS) as f64;
    let step = S as i64;
    let mut edge = step;
    let (mut active, mut seen_overflows) = (0.0, 0u64);
    // This second's false refusals and admits (table, bloom); all of them.
    let (mut bin, mut total) = ([0.0; 4], [0.0; 4]);
    let (mut in_table, mut on_lone) = (0.0, 0.0);
    let mut first_overflow = f64::NAN;
    loop {
        let next = due.pop().map(|Reverse(e)| e);
        let now = next.map_or(end, |(at, _)| at.min(end));
        while edge <= now.min(end) {
            let overflows = table.counters().overflows();
            s.push(&[
                edge as f64 / S,
                (overflows - seen_overflows) as f64,
                bin[0],
                bin[1],
                bin[2],
                bin[3],
                active,
                table.occupied() as f64,
                slots,
                in_table,
                on_lone,
            ]);
            seen_overflows = overflows;
            bin = [0.0; 4];
            edge += step;
        }
        let Some((now, key)) = next.filter(|&(at, _)| at < end) else {
            break;
        };
        if !joined[key as usize] {
            joined[key as usize] = true;
            if key != watched {
                active += 1.0;
            }
        }
        let sends = key != watched || pause == 0 || (now / pause) % 2 == 0;
        if sends {
            let bytes = (key as u64).to_le_bytes();
            let alone = gcra::allow(&lone[key as usize], &limit, now);
            let decided = table.decide(now, &bytes, 1);
            let by_table = decided.allowed();
            let by_bloom = bloom.allow(now, &bytes);
            if matches!(decided, Decision::Overflowed(_)) && first_overflow.is_nan() {
                first_overflow = now as f64 / S;
            }
            let wrong = [
                alone && !by_table,
                alone && !by_bloom,
                !alone && by_table,
                !alone && by_bloom,
            ];
            for (at, w) in wrong.into_iter().enumerate() {
                bin[at] += f64::from(u8::from(w));
                total[at] += f64::from(u8::from(w));
            }
            if key == watched {
                in_table += f64::from(u8::from(by_table));
                on_lone += f64::from(u8::from(alone));
            }
        }
        due.push(Reverse((now + rng.gap(mean), key)));
    }
    s.notes = vec![
        ("table bytes", (buckets * BUCKET_BYTES as u64) as f64),
        ("bloom bytes", (8u64 << size_log2) as f64),
        ("first overflow (s)", first_overflow),
        ("table false refusals", total[0]),
        ("bloom false refusals", total[1]),
        ("table false admits", total[2]),
        ("bloom false admits", total[3]),
    ];
    s
}

/// The limiters' constructor calls; `made` is the first status not OK.
fn limiters_c(k: &LimitersKnobs) -> String {
    format!(
        "weir_bucket *bucket = NULL;\nweir_sliding *sliding = NULL;\nweir_period *period = NULL;\n\
         weir_status made = weir_bucket_new({:?}, {:?}, 0, &bucket);\n\
         if (made == WEIR_OK) made = weir_sliding_new({}, {}, &sliding);\n\
         if (made == WEIR_OK) made = weir_period_new({}, {}, true, &period);\n",
        k.bucket_rate,
        k.bucket_burst,
        k.sliding_quota as i64,
        (k.sliding_ms * MS) as i64,
        k.period_quota as i64,
        (k.period_ms * MS) as i64
    )
}

/// The two words' limits; the words themselves start zeroed.
fn words_c(k: &WordsKnobs) -> String {
    format!(
        "weir_rate rate = {{0}};\nweir_rate_limit rate_limit;\nweir_gcra gcra = {{0}};\nweir_gcra_limit gcra_limit;\n\
         weir_status made = weir_rate_limit_new({:?}, {}, &rate_limit);\n\
         if (made == WEIR_OK) made = weir_gcra_limit_new({:?}, {}, &gcra_limit);\n",
        k.rate, k.rate_burst as i64, k.gcra, k.gcra_burst as i64
    )
}

/// The bloom with one event a second per word, as the panel's, keyed by
/// the panel's seeds (choose your own, and keep them secret).
fn bloom_c(k: &BloomKnobs) -> String {
    format!(
        "weir_rate_limit word_limit;\nweir_bloom *bloom = NULL;\n\
         weir_status made = weir_rate_limit_new(1.0, 1, &word_limit);\n\
         if (made == WEIR_OK) made = weir_bloom_new({}, {}, &word_limit, UINT64_C({:#x}), UINT64_C({:#x}), &bloom);\n",
        k.size_log2 as u32, k.hashes as u32, BLOOM_SEEDS.0, BLOOM_SEEDS.1
    )
}

/// The keyed table's calls with the panel's limit and overflow, keyed by
/// the panel's seeds (choose your own, and keep them secret); then the
/// bloom array of the same memory the panel compares it with.
fn keyed_c(k: &KeyedKnobs) -> String {
    let policy = ["REFUSE", "ADMIT", "SHARED"]
        .get(k.overflow.round().max(0.0) as usize)
        .copied()
        .unwrap_or("REFUSE");
    let buckets = k.buckets.max(0.0) as u64;
    format!(
        "weir_gcra_limit limit;\nweir_keyed *table = NULL;\nweir_bloom *bloom = NULL;\n\
         weir_status made = weir_gcra_limit_new({:?}, {}, &limit);\n\
         if (made == WEIR_OK) made = weir_keyed_new({buckets}, &limit, WEIR_KEYED_OVERFLOW_{policy}, UINT64_C({:#x}), UINT64_C({:#x}), &table);\n\
         /* The bloom array in the table's bytes ({} B), for comparison. */\n\
         if (made == WEIR_OK) made = weir_bloom_new_gcra({}, {}, &limit, UINT64_C({:#x}), UINT64_C({:#x}), &bloom);\n",
        k.rate,
        k.burst as i64,
        KEYED_SEEDS.0,
        KEYED_SEEDS.1,
        buckets * BUCKET_BYTES as u64,
        keyed_bloom_log2(buckets),
        k.hashes as u32,
        KEYED_BLOOM_SEEDS.0,
        KEYED_BLOOM_SEEDS.1
    )
}

/// The partitioned limit's calls: the preset policy with the panel's
/// limits, and its two partitions (A is number 0, B number 1).
fn partitions_c(k: &PartitionsKnobs) -> String {
    let p = partitions_policy(k);
    let [a, b] = partitions_terms(k);
    format!(
        "weir_concurrency_policy policy = weir_concurrency_policy_preset();\n\
         policy.initial_limit = {};\npolicy.min_limit = {};\npolicy.max_limit = {};\n\
         const weir_concurrency_partition parts[2] = {{{{{:?}, {}}}, {{{:?}, {}}}}};\n\
         weir_concurrency *limit = NULL;\n\
         weir_status made = weir_concurrency_new_partitioned(&policy, parts, 2, &limit);\n",
        p.initial_limit, p.min_limit, p.max_limit, a.share, a.borrow, b.share, b.borrow
    )
}

// What each panel plots: its columns' units and kinds, then its plots.
// Counts a step are "calls/s" for a one-second step; a count since the
// start says "so far" in its axis title.

const T: Column = Column::new("t", "s", "axis");

const BREAKER_COLUMNS: &[Column] = &[
    T,
    Column::count("through", "calls/s", "admitted"),
    Column::count("refused", "calls/s", "refused"),
    Column::count("probes", "calls/s", "probe"),
    Column::new("ratio", "fraction", "level"),
];
const BREAKER_PLOTS: &[Plot] = &[
    Plot::in_time("calls", &["through", "refused", "probes"]),
    Plot::in_time("refusal ratio", &["ratio"]),
];

const SHEDDER_COLUMNS: &[Column] = &[
    T,
    Column::count("flying", "calls", "held"),
    Column::count("limit", "calls", "limit"),
    Column::count("cpu", "‰", "level"),
    Column::count("passed", "calls/100 ms", "admitted"),
    Column::count("refused", "calls/100 ms", "refused"),
];
const SHEDDER_PLOTS: &[Plot] = &[
    Plot::in_time("in flight", &["flying", "limit"]),
    Plot::in_time("CPU", &["cpu"]),
    Plot::in_time("calls", &["passed", "refused"]),
];

const LIMITERS_COLUMNS: &[Column] = &[
    T,
    Column::count("bucket", "calls", "bucket"),
    Column::count("sliding", "calls", "sliding"),
    Column::count("period", "calls", "period"),
];
const LIMITERS_PLOTS: &[Plot] = &[Plot::in_time(
    "let through so far",
    &["bucket", "sliding", "period"],
)];

const WORDS_COLUMNS: &[Column] = &[
    T,
    Column::count("offered", "calls", "offered"),
    Column::count("rate word", "calls", "rate word"),
    Column::count("GCRA word", "calls", "GCRA word"),
];
const WORDS_PLOTS: &[Plot] = &[Plot::in_time(
    "calls so far",
    &["offered", "rate word", "GCRA word"],
)];

const RETRY_COLUMNS: &[Column] = &[
    T,
    Column::count("requests", "calls/s", "offered"),
    Column::count("retries", "calls/s", "retried"),
    Column::count("budget refused", "calls/s", "refused"),
    Column::new("attempts per request", "calls/request", "level"),
];
const RETRY_PLOTS: &[Plot] = &[
    Plot::in_time("calls", &["requests", "retries", "budget refused"]),
    Plot::in_time("attempts", &["attempts per request"]),
];

const CONCURRENCY_COLUMNS: &[Column] = &[
    T,
    Column::count("flying", "calls", "held"),
    Column::count("limit", "calls", "limit"),
    Column::count("refused", "calls/100 ms", "refused"),
    Column::new("latency ms", "ms", "level"),
];
const CONCURRENCY_PLOTS: &[Plot] = &[
    Plot::in_time("in flight", &["flying", "limit"]),
    Plot::in_time("refused", &["refused"]),
    Plot::in_time("latency", &["latency ms"]),
];

const CLASSES_COLUMNS: &[Column] = &[
    T,
    Column::count("flying", "calls", "held"),
    Column::count("limit", "calls", "limit"),
    Column::count("cpu", "‰", "level"),
    Column::count("SHEDDABLE through", "calls/100 ms", "SHEDDABLE"),
    Column::count("SHEDDABLE_PLUS through", "calls/100 ms", "SHEDDABLE_PLUS"),
    Column::count("CRITICAL through", "calls/100 ms", "CRITICAL"),
    Column::count("CRITICAL_PLUS through", "calls/100 ms", "CRITICAL_PLUS"),
    Column::count("SHEDDABLE refused", "calls/100 ms", "SHEDDABLE"),
    Column::count("SHEDDABLE_PLUS refused", "calls/100 ms", "SHEDDABLE_PLUS"),
    Column::count("CRITICAL refused", "calls/100 ms", "CRITICAL"),
    Column::count("CRITICAL_PLUS refused", "calls/100 ms", "CRITICAL_PLUS"),
];
const CLASSES_PLOTS: &[Plot] = &[
    Plot::in_time("in flight", &["flying", "limit"]),
    Plot::in_time("CPU", &["cpu"]),
    Plot::in_time(
        "let through",
        &[
            "SHEDDABLE through",
            "SHEDDABLE_PLUS through",
            "CRITICAL through",
            "CRITICAL_PLUS through",
        ],
    ),
    Plot::in_time(
        "refused",
        &[
            "SHEDDABLE refused",
            "SHEDDABLE_PLUS refused",
            "CRITICAL refused",
            "CRITICAL_PLUS refused",
        ],
    ),
];

const PARTITIONS_COLUMNS: &[Column] = &[
    T,
    Column::count("limit", "calls", "limit"),
    Column::count("flying", "calls", "held"),
    Column::count("A flying", "calls", "partition A"),
    Column::count("B flying", "calls", "partition B"),
    Column::count("A refused", "calls/100 ms", "partition A"),
    Column::count("B refused", "calls/100 ms", "partition B"),
];
const PARTITIONS_PLOTS: &[Plot] = &[
    Plot::in_time("in flight", &["flying", "A flying", "B flying", "limit"]),
    Plot::in_time("refused", &["A refused", "B refused"]),
];

const STEP_COLUMNS: &[Column] = &[
    T,
    Column::count("flying", "calls", "held"),
    Column::count("limit", "calls", "limit"),
    Column::count("refused", "calls/100 ms", "refused"),
    Column::new("latency ms", "ms", "level"),
    Column::new("baseline ms", "ms", "expected"),
];
const STEP_PLOTS: &[Plot] = &[
    Plot::in_time("in flight", &["flying", "limit"]),
    Plot::in_time("refused", &["refused"]),
    Plot::in_time("latency", &["latency ms", "baseline ms"]),
];

const POOL_COLUMNS: &[Column] = &[
    T,
    Column::count("live", "resources", "held"),
    Column::count("idle", "resources", "idle"),
    Column::count("made", "resources", "made"),
    Column::count("evicted", "resources", "evicted"),
    Column::count("waited", "calls", "refused"),
];
const POOL_PLOTS: &[Plot] = &[
    Plot::in_time("alive", &["live", "idle"]),
    Plot::in_time("so far", &["made", "evicted"]),
    Plot::in_time("waited so far", &["waited"]),
];

const BACKOFF_COLUMNS: &[Column] = &[
    Column::count("retry", "1st, 2nd, …", "axis"),
    Column::new("ceiling ms", "ms", "limit"),
    Column::new("rigid max", "ms", "rigid"),
    Column::new("full max", "ms", "full"),
    Column::new("equal max", "ms", "equal"),
    Column::new("decorrelated max", "ms", "decorrelated"),
    Column::new("spread max", "ms", "spread"),
    Column::new("full mean", "ms", "full"),
    Column::new("equal mean", "ms", "equal"),
    Column::new("decorrelated mean", "ms", "decorrelated"),
    Column::new("spread mean", "ms", "spread"),
    Column::new("bin ms", "ms", "axis"),
    Column::count("rigid", "delays", "rigid"),
    Column::count("full", "delays", "full"),
    Column::count("equal", "delays", "equal"),
    Column::count("decorrelated", "delays", "decorrelated"),
    Column::count("spread", "delays", "spread"),
];
// The rigid jitter's delays are the ceilings: drawn first and wide, with
// the ceiling dashed over them.
const BACKOFF_PLOTS: &[Plot] = &[
    Plot {
        x: "retry",
        x_title: "retry",
        y_title: "largest delay",
        series: &[
            "rigid max",
            "ceiling ms",
            "full max",
            "equal max",
            "decorrelated max",
            "spread max",
        ],
    },
    Plot {
        x: "retry",
        x_title: "retry",
        y_title: "mean delay",
        series: &[
            "ceiling ms",
            "full mean",
            "equal mean",
            "decorrelated mean",
            "spread mean",
        ],
    },
    Plot {
        x: "bin ms",
        x_title: "delay",
        y_title: "drawn",
        series: &["rigid", "full", "equal", "decorrelated", "spread"],
    },
];

const BLOOM_COLUMNS: &[Column] = &[
    Column::count("keys", "keys", "axis"),
    Column::new("measured", "fraction", "refused"),
    Column::new("formula", "fraction", "expected"),
];
const BLOOM_PLOTS: &[Plot] = &[Plot {
    x: "keys",
    x_title: "keys asked",
    y_title: "refused",
    series: &["measured", "formula"],
}];

const KEYED_COLUMNS: &[Column] = &[
    T,
    Column::count("overflows", "calls/s", "overflowed"),
    Column::count("table false refusals", "calls/s", "keyed table"),
    Column::count("bloom false refusals", "calls/s", "bloom array"),
    Column::count("table false admits", "calls/s", "keyed table"),
    Column::count("bloom false admits", "calls/s", "bloom array"),
    Column::count("active keys", "keys", "offered"),
    Column::count("keys held", "keys", "held"),
    Column::count("slots", "keys", "limit"),
    Column::count("watched key in the table", "calls", "keyed table"),
    Column::count("watched key on a lone word", "calls", "GCRA word"),
];
const KEYED_PLOTS: &[Plot] = &[
    Plot::in_time(
        "refused for other keys",
        &["overflows", "table false refusals", "bloom false refusals"],
    ),
    Plot::in_time(
        "let through where a lone word refuses",
        &["table false admits", "bloom false admits"],
    ),
    Plot::in_time("table", &["keys held", "active keys", "slots"]),
    Plot::in_time(
        "watched key let through so far",
        &["watched key in the table", "watched key on a lone word"],
    ),
];

macro_rules! scenario {
    ($id:literal, $title:literal, $about:literal, $ty:literal, $preset:literal, $knobs:ident, $f:ident, $columns:expr, $plots:expr) => {
        Scenario {
            id: $id,
            title: $title,
            about: $about,
            c_type: $ty,
            c_preset: $preset,
            knobs: $knobs::KNOBS,
            columns: $columns,
            plots: $plots,
            run: |v, seed| $f(&$knobs::from_values(v), seed),
            c_calls: None,
            c_more: &[],
        }
    };
    ($id:literal, $title:literal, $about:literal, $knobs:ident, $f:ident, $calls:ident, $columns:expr, $plots:expr) => {
        Scenario {
            c_calls: Some(|v| $calls(&$knobs::from_values(v))),
            ..scenario!($id, $title, $about, "", "", $knobs, $f, $columns, $plots)
        }
    };
}

/// Every panel, in page order.
pub static ALL: &[Scenario] = &[
    scenario!("breaker", "Breaker through an outage", "A backend that fails every call for a stretch, then recovers: calls let through, refused and let through by the probe, each second, and the refusal ratio.", "weir_breaker_policy", "weir_breaker_policy_preset", BreakerKnobs, breaker,
        BREAKER_COLUMNS, BREAKER_PLOTS),
    scenario!("shedder", "Shedder under rising load", "Load climbs past the server's capacity, then drops: the CPU it reports, calls in flight, the shedder's limit, and its refusals per 100 ms.", "weir_shedder_policy", "weir_shedder_policy_preset", ShedderKnobs, shedder,
        SHEDDER_COLUMNS, SHEDDER_PLOTS),
    scenario!("classes", "Shedder by criticality", "The shedder panel's rising load, each call of one of four classes: SHEDDABLE is refused first, then SHEDDABLE_PLUS, then CRITICAL, and CRITICAL_PLUS last, only while the overload holds.", "weir_shedder_policy", "weir_shedder_policy_preset", ClassesKnobs, classes,
        CLASSES_COLUMNS, CLASSES_PLOTS),
    scenario!("limiters", "Three limiters under bursts", "Scenario 1 of docs/design.md: 40 calls 2.5 ms apart just before each odd second, through a bucket, a sliding window and an aligned period; passes so far.", LimitersKnobs, limiters, limiters_c,
        LIMITERS_COLUMNS, LIMITERS_PLOTS),
    scenario!("words", "Rate word against GCRA word", "The same calls through the fixed-window rate word and the smooth GCRA word: passes so far.", WordsKnobs, words, words_c,
        WORDS_COLUMNS, WORDS_PLOTS),
    Scenario {
        c_more: &[("backoff", "weir_backoff", "weir_backoff_preset")],
        ..scenario!("retry", "Retry budget beside backoff", "Failed requests retried with backoff, as far as the budget lets them: requests, retries and retries the budget refused each second.", "weir_budget_policy", "weir_budget_policy_preset", RetryKnobs, retry,
            RETRY_COLUMNS, RETRY_PLOTS)
    },
    scenario!("concurrency", "Adaptive concurrency under rising latency", "The gradient limit as the backend slows: the limit, calls in flight, and refusals per 100 ms.", "weir_concurrency_policy", "weir_concurrency_policy_preset", ConcurrencyKnobs, concurrency,
        CONCURRENCY_COLUMNS, CONCURRENCY_PLOTS),
    scenario!("latency-step", "Adaptive concurrency: latency up, then down", "The backend's latency steps up, holds, and steps back down: the limit falls, recovers as the higher latency becomes its baseline, and the baseline follows latency back down.", "weir_concurrency_policy", "weir_concurrency_policy_preset", StepKnobs, latency_step,
        STEP_COLUMNS, STEP_PLOTS),
    scenario!("partitions", "Partitions of the adaptive limit", "Partition A busy throughout, B quiet but for a burst: A borrows the room B leaves unused, up to its cap, and gives it back as B's burst comes; calls in flight never pass the limit.", PartitionsKnobs, partitions, partitions_c,
        PARTITIONS_COLUMNS, PARTITIONS_PLOTS),
    scenario!("pool", "Pool: a burst, then idle", "A burst of calls taking resources, then nothing: live and idle resources, made, evicted and waits so far.", "weir_pool_policy", "weir_pool_policy_preset", PoolKnobs, pool,
        POOL_COLUMNS, POOL_PLOTS),
    scenario!("backoff", "Backoff's five jitters", "Each jitter's delays over 10,000 draws per retry: largest and mean against the ceiling, and the distribution of every delay.", "weir_backoff", "weir_backoff_preset", BackoffKnobs, backoff,
        BACKOFF_COLUMNS, BACKOFF_PLOTS),
    scenario!("bloom", "Bloom: false refusals", "Fresh keys refused because all their words are spent by others, against the header's (1 − e^(−kN/M))^k.", BloomKnobs, bloom, bloom_c,
        BLOOM_COLUMNS, BLOOM_PLOTS),
    scenario!("keyed", "Keyed table: exact until it overflows", "Active keys crowd a keyed table: each key's calls decided on a word of its own, so nothing is refused for another key's traffic until a new key finds both its buckets full of active keys; beside it the bloom array of the same memory, and each key's lone GCRA word as the exact answer.", KeyedKnobs, keyed, keyed_c,
        KEYED_COLUMNS, KEYED_PLOTS),
];
