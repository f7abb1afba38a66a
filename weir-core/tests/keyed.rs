//! The keyed table (weir_core::keyed) against its promises: every call that
//! does not overflow decides as a lone word of the limit would, given the
//! same calls (random traces of up to 10^5 keys, 10^6 under `WEIR_LONG=1`,
//! and a one-bucket table where keys are forgotten at every phase); the
//! overflow rate against `overflow_chance`; threads on one table. Under an
//! emulator (weir-core/tests/support/runner.rs) each runs a tenth of its
//! calls or an eighth of its table: the same algorithm as natively.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use weir_core::bloom::BloomLimit;
use weir_core::gcra::{self, GcraLimit};
use weir_core::keyed::{
    buckets_for, overflow_chance, Decision, Keyed, KeyedShape, Overflow, SLOTS,
};
use weir_core::rate::{self, RateLimit};

#[path = "support/runner.rs"]
mod runner;

const SECOND: i64 = 1_000_000_000;

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn long() -> bool {
    std::env::var("WEIR_LONG").as_deref() == Ok("1")
}

fn table(buckets: u64, limit: impl Into<BloomLimit>, overflow: Overflow) -> Keyed {
    let shape = KeyedShape::new(buckets, limit, overflow, 0x5eed, 0xfeed).unwrap();
    Keyed::new(shape).unwrap()
}

/// `n` at `now` on a lone word of `limit`.
fn lone(word: &AtomicU64, limit: &BloomLimit, now: i64, n: i64) -> bool {
    match limit {
        BloomLimit::Gcra(limit) => gcra::allow_n(word, limit, now, n),
        BloomLimit::Window(limit) => {
            // `rate` has no public call for n > 1: the window kind's
            // traces draw n = 1.
            assert_eq!(n, 1);
            rate::allow(word, limit, now)
        }
    }
}

/// Runs a trace over `keys` distinct keys, each active for a while and then
/// left idle, through a table of `buckets` buckets and a map of lone
/// words, and answers (calls, divergences, overflows, the most slots held).
fn trace(keys: u64, buckets: u64, limit: BloomLimit, seed: u64) -> (u64, u64, u64, usize) {
    let t = table(buckets, limit, Overflow::Refuse);
    let mut model: HashMap<u64, AtomicU64> = HashMap::new();
    let mut state = seed;
    let (burst, period) = match &limit {
        BloomLimit::Gcra(_) => (5, SECOND / 10),
        BloomLimit::Window(limit) => (limit.burst() as i64, SECOND / 10),
    };
    // A window of `live` keys slides over the key space: each key gets
    // calls for a while, then none, and goes to rest.
    let live = 2_000u64;
    let (mut now, mut base, mut calls, mut divergences, mut most) = (SECOND, 0u64, 0, 0, 0);
    while base < keys {
        for _ in 0..live {
            let key = base + xorshift(&mut state) % live.min(keys - base);
            let n = match &limit {
                BloomLimit::Gcra(_) => 1 + (xorshift(&mut state) % (burst as u64 + 1)) as i64,
                BloomLimit::Window(_) => 1,
            };
            let word = model.entry(key).or_insert_with(|| AtomicU64::new(0));
            let expect = lone(word, &limit, now, n);
            let got = t.decide(now, &key.to_le_bytes(), n);
            calls += 1;
            if !matches!(got, Decision::Overflowed(_)) && got.allowed() != expect {
                divergences += 1;
            }
            now += (xorshift(&mut state) % (period as u64 / 500)) as i64;
        }
        base += live / 4;
        // Some calls land on the very instant a word comes to rest.
        if base % (live * 4) == 0 {
            now += period;
        }
        if base % (live * 16) == 0 {
            most = most.max(t.occupied());
            // The model forgets keys no longer drawn, as the table may.
            model.retain(|&k, _| k + live >= base);
        }
    }
    (calls, divergences, t.counters().overflows(), most)
}

#[test]
fn random_traces_decide_as_lone_words() {
    let keys = if long() {
        1_000_000
    } else if runner::through_a_runner() {
        10_000
    } else {
        100_000
    };
    let limits: [BloomLimit; 2] = [
        GcraLimit::new(10.0, 5).unwrap().into(),
        RateLimit::new(10.0, 3).unwrap().into(),
    ];
    for (i, limit) in limits.into_iter().enumerate() {
        // 2,000 live keys, and those that went quiet within a burst's
        // time, in 8 × 1,024 slots.
        let (calls, divergences, overflows, most) = trace(keys, 1024, limit, 0x1234 + i as u64);
        eprintln!(
            "{limit:?}: {keys} keys, {calls} calls, {divergences} divergences, {overflows} overflows, at most {most} slots held"
        );
        assert_eq!(overflows, 0, "sized to hold the live keys");
        assert_eq!(divergences, 0);
        assert!(calls >= 4 * keys);
    }
}

/// One bucket of 8 slots and 12 keys: keys are forgotten and come back all
/// the time, at every phase of their words (instants drawn to the
/// nanosecond around the moments words come to rest), and some calls
/// overflow. Every call that does not overflow decides as the key's lone
/// word given the calls that did not overflow.
#[test]
fn idle_keys_are_replaced_at_every_phase() {
    let limits: Vec<BloomLimit> = vec![
        GcraLimit::new(1.0, 1).unwrap().into(),
        GcraLimit::new(3.0, 7).unwrap().into(),
        GcraLimit::new(1e9, 3).unwrap().into(),
        GcraLimit::new(7.5e8, 2).unwrap().into(),
        RateLimit::new(1.0, 1).unwrap().into(),
        RateLimit::new(1e6, 100).unwrap().into(),
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15;
    for limit in limits {
        let t = table(1, limit, Overflow::Refuse);
        let mut model: HashMap<u64, AtomicU64> = HashMap::new();
        let (burst, period) = match &limit {
            BloomLimit::Gcra(g) => {
                let (per_token, tolerance, shift) = g.parts();
                (
                    tolerance / per_token as i64,
                    (per_token >> shift) as i64 + 1,
                )
            }
            BloomLimit::Window(r) => (r.burst() as i64, r.parts().0 as i64 + 1),
        };
        let mut now = 5 * SECOND;
        let mut divergences = 0;
        let mut taken = [false; 12];
        let calls = if runner::through_a_runner() {
            20_000
        } else {
            200_000
        };
        for _ in 0..calls {
            let key = xorshift(&mut state) % 12;
            let n = match &limit {
                BloomLimit::Gcra(_) => 1 + (xorshift(&mut state) % burst as u64) as i64,
                BloomLimit::Window(_) => 1,
            };
            let word = model.entry(key).or_insert_with(|| AtomicU64::new(0));
            let got = t.decide(now, &key.to_le_bytes(), n);
            if !matches!(got, Decision::Overflowed(_)) {
                if lone(word, &limit, now, n) != got.allowed() {
                    divergences += 1;
                }
                taken[key as usize] = true;
            }
            // Steps of up to an eighth of a full GCRA word's span (a
            // quarter interval for the window kind, whose window lasts as
            // many intervals as it has events), to the nanosecond.
            let most = match &limit {
                BloomLimit::Gcra(_) => period * burst / 8,
                BloomLimit::Window(_) => period / 4,
            };
            now += (xorshift(&mut state) % (most as u64 + 2)) as i64;
        }
        let overflows = t.counters().overflows();
        eprintln!("{limit:?}: {divergences} divergences, {overflows} overflows");
        assert_eq!(divergences, 0, "{limit:?}");
        // 12 keys have had slots in a bucket of 8: keys were replaced.
        assert!(overflows > 0, "{limit:?}: the trace must crowd the bucket");
        assert!(taken.iter().all(|&t| t), "{limit:?}");
        assert!(t.occupied() <= SLOTS);
    }
}

/// Fills a table of 2^15 buckets (2^12 under an emulator) with keys that stay active, then measures
/// how many new keys overflow, against the formula.
#[test]
fn overflow_follows_the_formula() {
    let buckets = if runner::through_a_runner() {
        1u64 << 12
    } else {
        1 << 15
    };
    let slots = buckets * SLOTS as u64;
    // An hour a token: every key placed stays active.
    let limit = GcraLimit::new(1.0 / 3600.0, 1).unwrap();
    for (load, seed) in [(0.8, 1u64), (0.85, 2), (0.9, 3), (0.95, 4)] {
        let t = table(buckets, limit, Overflow::Refuse);
        let keys = (load * slots as f64) as u64;
        for k in 0..keys {
            t.allow(SECOND, &(k ^ (seed << 48)).to_le_bytes());
        }
        let before = t.counters().overflows();
        // A fiftieth of the slots (5,242 natively): few enough that the
        // table's load moves little while they are placed.
        let probes = slots / 50;
        for k in keys..keys + probes {
            t.allow(SECOND, &(k ^ (seed << 48)).to_le_bytes());
        }
        let measured = (t.counters().overflows() - before) as f64 / probes as f64;
        // The probes themselves fill the table as they go: the formula at
        // their middle.
        let formula = overflow_chance((keys + probes / 2) as f64, slots as f64);
        let sigma = (formula * (1.0 - formula) / probes as f64).sqrt();
        eprintln!("load {load}: measured {measured:.5}, formula {formula:.5}");
        assert!(
            (measured - formula).abs() <= 5.0 * sigma + 0.1 * formula,
            "load {load}: measured {measured}, formula {formula}"
        );
    }
}

#[test]
fn the_footprint_for_a_million_keys() {
    let buckets = buckets_for(1_000_000, 1e-9).unwrap();
    let bytes = buckets * 128;
    assert_eq!(buckets, 203_090);
    assert!(bytes as f64 / 1e6 <= 32.0, "{bytes} bytes");
    assert!(overflow_chance(1e6, (buckets * 8) as f64) <= 1e-9);
}

/// Threads hammer one table: at one instant every key gets exactly its
/// burst, however the calls (and the first calls' claims) race; over time,
/// with keys forgotten and retaken, no key passes a lone word's bound.
#[test]
fn threads_on_one_table() {
    let burst = 50;
    let t = table(64, GcraLimit::new(1.0, burst).unwrap(), Overflow::Refuse);
    let keys = 200u64;
    let admitted: Vec<AtomicU64> = (0..keys).map(|_| AtomicU64::new(0)).collect();
    std::thread::scope(|s| {
        for id in 0..4u64 {
            let (t, admitted) = (&t, &admitted);
            s.spawn(move || {
                for round in 0..burst as u64 * 2 {
                    for k in 0..keys {
                        let k = (k + id * 37 + round) % keys;
                        if t.allow(SECOND, &k.to_le_bytes()) {
                            admitted[k as usize].fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    assert_eq!(t.counters().overflows(), 0);
    for (k, n) in admitted.iter().enumerate() {
        assert_eq!(n.load(Ordering::Relaxed), burst as u64, "key {k}");
    }

    // One bucket, 16 keys, rounds at instants that move on (every thread
    // calls at the round's instant, a barrier between rounds): keys are
    // forgotten at rest and retaken by racing threads. Each key's admits
    // over the run stay within burst + floor(T × rate).
    let (rate, burst, step) = (1000.0, 3, 400_000i64);
    let t = table(1, GcraLimit::new(rate, burst).unwrap(), Overflow::Refuse);
    let rounds = 2_000;
    let barrier = std::sync::Barrier::new(4);
    let admitted: Vec<AtomicU64> = (0..16).map(|_| AtomicU64::new(0)).collect();
    std::thread::scope(|s| {
        for id in 0..4u64 {
            let (t, admitted, barrier) = (&t, &admitted, &barrier);
            s.spawn(move || {
                let mut state = id + 1;
                for round in 0..rounds {
                    let now = SECOND + round * step;
                    for _ in 0..4 {
                        let k = xorshift(&mut state) % 16;
                        if t.allow(now, &k.to_le_bytes()) {
                            admitted[k as usize].fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    barrier.wait();
                }
            });
        }
    });
    let span = (rounds - 1) * step;
    let bound = burst as u64 + (span as f64 * rate / 1e9) as u64;
    let total: u64 = admitted.iter().map(|n| n.load(Ordering::Relaxed)).sum();
    for (k, n) in admitted.iter().enumerate() {
        assert!(
            n.load(Ordering::Relaxed) <= bound,
            "key {k}: {n:?} > {bound}"
        );
    }
    assert!(t.counters().overflows() > 0 && total > 1000);
    assert!(t.occupied() <= SLOTS);
}
