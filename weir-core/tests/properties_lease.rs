//! The lease's properties over random fleets: machines with random
//! demand, costs and round trips, each with its own `Lease`, asking one
//! store that grants from a GCRA bucket (a model of the Redis module's
//! `WEIR.LEASE`: up to `want` whole units, charged when granted).
//!
//! Within the bound: the fleet admits no more than the store granted, no
//! more than `burst + rate × t` since the start, and in any window of
//! length `w` no more than `burst + rate × (w + ttl)`; no machine ever
//! holds or asks for more than its cap, so while one is refused at most
//! `(machines − 1) × cap` units sit unspent elsewhere. Readings are pure.
//! An error changes nothing. Time going backwards is no time passing.

#[path = "support/runner.rs"]
mod runner;

use proptest::prelude::*;
use weir_core::lease::{Lease, LeaseError, LeasePolicy, LeaseTake};

const MS: i64 = 1_000_000;
const S: i64 = 1_000_000_000;

/// A GCRA bucket of `rate` units a second and `burst`, in exact integer ns
/// (the module's arithmetic: interval rounded up).
struct Store {
    interval: i64,
    tolerance: i64,
    tat: i64,
    granted: i64,
}

impl Store {
    fn new(rate: i64, burst: i64) -> Store {
        let interval = (S + rate - 1) / rate;
        Store {
            interval,
            tolerance: interval * burst,
            tat: 0,
            granted: 0,
        }
    }
    fn lease(&mut self, now: i64, want: i64) -> (i64, i64) {
        let base = self.tat.max(now);
        let room = (now + self.tolerance - base).max(0);
        let n = want.min(room / self.interval);
        self.tat = base + n * self.interval;
        self.granted += n;
        // When a unit is there again.
        let next = (self.tat - self.tolerance + self.interval).max(now);
        (n, next)
    }
}

#[derive(Clone, Debug)]
struct Fleet {
    rate: i64,
    burst: i64,
    share: f64,
    interval_ms: i64,
    ttl_ms: i64,
    /// Per machine: a take every `gap` µs, of `cost`, with a round trip
    /// of `rtt` µs.
    machines: Vec<(i64, i64, i64)>,
    steps: usize,
}

fn fleet() -> impl Strategy<Value = Fleet> {
    (
        1..5_000i64,
        1..2_000i64,
        prop_oneof![Just(1.0f64), 0.01..1.0f64],
        1..200i64,
        prop::collection::vec((10..5_000i64, 1..4i64, 1..20_000i64), 1..6),
        500..3_000usize,
    )
        .prop_flat_map(|(rate, burst, share, interval_ms, machines, steps)| {
            ((interval_ms + 1)..2_000i64).prop_map(move |ttl_ms| Fleet {
                rate,
                burst,
                share,
                interval_ms,
                ttl_ms,
                machines: machines.clone(),
                steps,
            })
        })
}

/// Runs a fleet; the instants of every admitted unit, in order, and the
/// store.
/// What a run leaves: the admits' instants, the store, each machine's
/// answers.
type Run = (Vec<i64>, Store, Vec<Vec<String>>);

fn run(f: &Fleet, read: bool) -> Result<Run, TestCaseError> {
    let policy = LeasePolicy {
        interval_ns: f.interval_ms * MS,
        ttl_ns: f.ttl_ms * MS,
        burst: f.burst,
        share: f.share,
    };
    let mut store = Store::new(f.rate, f.burst);
    let mut leases: Vec<Lease> = f
        .machines
        .iter()
        .map(|_| Lease::new(&policy, 0).unwrap())
        .collect();
    let cap = leases[0].cap();
    // Per machine: the next take, and the ask travelling (sent, want).
    let mut next: Vec<i64> = f.machines.iter().map(|m| m.0 * 1_000).collect();
    let mut travelling: Vec<Option<(i64, i64)>> = vec![None; f.machines.len()];
    let mut admits = Vec::new();
    let mut answers = vec![Vec::new(); f.machines.len()];
    for _ in 0..f.steps {
        // The earliest event: a take, or an ask arriving.
        let (k, now) = (0..f.machines.len())
            .map(|k| {
                let arrive =
                    travelling[k].map_or(i64::MAX, |(sent, _)| sent + f.machines[k].2 * 1_000);
                (k, next[k].min(arrive))
            })
            .min_by_key(|&(_, t)| t)
            .unwrap();
        let (gap, cost, rtt) = f.machines[k];
        if let Some((sent, want)) = travelling[k] {
            if sent + rtt * 1_000 == now {
                // The store decides halfway along the round trip.
                let (n, at) = store.lease(sent + rtt * 500, want);
                leases[k].grant(now, n, sent + policy.ttl_ns, at).unwrap();
                travelling[k] = None;
                continue;
            }
        }
        let cost = cost.min(cap);
        if read {
            let l = &leases[k];
            answers[k].push(format!("{} {:?}", l.unspent(now), l.stats(now)));
        }
        let answer = leases[k].take(now, cost).unwrap();
        answers[k].push(format!("{answer:?}"));
        match answer {
            LeaseTake::Go { ask } => {
                admits.extend(std::iter::repeat(now).take(cost as usize));
                if ask > 0 {
                    prop_assert!(travelling[k].is_none());
                    travelling[k] = Some((now, ask));
                }
            }
            LeaseTake::Ask { ask } => {
                prop_assert!(ask >= 1);
                travelling[k] = Some((now, ask));
            }
            LeaseTake::Refuse { retry_after } => {
                prop_assert!(retry_after >= 1);
                // The cost the other way: while this machine is refused,
                // the others hold at most (machines - 1) x cap unspent.
                let held_elsewhere: i64 = (0..leases.len())
                    .filter(|&j| j != k)
                    .map(|j| leases[j].unspent(now))
                    .sum();
                prop_assert!(held_elsewhere <= (leases.len() as i64 - 1) * cap);
            }
        }
        if let Some((_, want)) = travelling[k] {
            prop_assert!(leases[k].unspent(now) + want <= cap);
        }
        prop_assert!(leases[k].unspent(now) <= cap);
        next[k] = now + gap * 1_000;
    }
    Ok((admits, store, answers))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(64), ..ProptestConfig::default() })]

    /// Within the bound: admits ≤ grants ≤ `burst + rate × t`, and in any
    /// window of length `w`, admits ≤ `burst + rate × (w + ttl)`.
    #[test]
    fn the_fleet_never_admits_past_the_bound(f in fleet()) {
        let (admits, store, _) = run(&f, false)?;
        prop_assert!(admits.len() as i64 <= store.granted);
        if let Some(&last) = admits.last() {
            let allowed = f.burst as i128 + (last as i128 * f.rate as i128) / S as i128;
            prop_assert!((admits.len() as i128) <= allowed, "{} > {}", admits.len(), allowed);
        }
        // Every window that starts at an admit.
        let ttl = f.ttl_ms * MS;
        for (i, &start) in admits.iter().enumerate() {
            for w in [MS, 100 * MS, S] {
                let inside = admits[i..].iter().take_while(|&&t| t < start + w).count() as i128;
                let allowed = f.burst as i128 + ((w + ttl) as i128 * f.rate as i128 + S as i128 - 1) / S as i128;
                prop_assert!(inside <= allowed, "{} in {} ns > {}", inside, w, allowed);
            }
        }
    }

    /// Readings are pure: the same fleet with `unspent` and `stats` read
    /// before every take answers every take alike.
    #[test]
    fn readings_are_pure(f in fleet()) {
        let (_, _, read) = run(&f, true)?;
        let (_, _, plain) = run(&f, false)?;
        for (r, p) in read.iter().zip(&plain) {
            let answers: Vec<&String> = r.iter().filter(|a| !a.contains("LeaseStats")).collect();
            prop_assert_eq!(answers.len(), p.len());
            for (a, b) in answers.iter().zip(p) {
                prop_assert_eq!(*a, b);
            }
        }
    }

    /// An error changes nothing, and time going backwards is no time
    /// passing: units live at the latest instant seen stay live.
    #[test]
    fn errors_and_backward_time_change_nothing(
        granted in 1..100i64,
        cost in 1..10i64,
        back in 0..S,
    ) {
        let p = LeasePolicy { interval_ns: 10 * MS, ttl_ns: S, burst: 400, share: 0.25 };
        let mut l = Lease::new(&p, 0).unwrap();
        l.take(0, 1).unwrap();
        l.grant(S, granted, 2 * S, S).unwrap();
        let before = format!("{:?}", l.stats(S));
        prop_assert_eq!(l.take(S, 0), Err(LeaseError::Cost));
        prop_assert_eq!(l.take(S, 101), Err(LeaseError::Cost));
        prop_assert_eq!(l.grant(S, -1, 2 * S, S), Err(LeaseError::Grant));
        prop_assert_eq!(l.grant(S, 101, 2 * S, S), Err(LeaseError::Grant));
        prop_assert_eq!(format!("{:?}", l.stats(S)), before);
        // A take at an earlier instant spends as at the latest one.
        let answer = l.take(S - back, cost).unwrap();
        prop_assert_eq!(matches!(answer, LeaseTake::Go { .. }), cost <= granted);
        prop_assert_eq!(l.unspent(0), l.unspent(S));
        // Release hands back exactly the live units.
        let live = l.unspent(S);
        prop_assert_eq!(l.release(S), live);
        prop_assert_eq!(l.unspent(S), 0);
    }
}
