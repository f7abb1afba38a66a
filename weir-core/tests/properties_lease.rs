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
//!
//! Across a reconfiguration of every machine's lease (a new share, so a new
//! cap, interval and ttl) the same bounds hold, with the longer ttl for the
//! window: the units held are kept (above a lower cap too, never more than
//! the larger cap), a refused policy changes nothing, and every ask sent
//! after the change keeps what is held and asked within the new cap.

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
    /// A reconfiguration of every lease before this step: the new share,
    /// interval and ttl (ms).
    change: Option<(usize, f64, i64, i64)>,
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
                change: None,
            })
        })
}

/// A fleet whose leases all take a new share, interval and ttl mid-run.
fn changed_fleet() -> impl Strategy<Value = Fleet> {
    (
        fleet(),
        0..3_000usize,
        prop_oneof![Just(1.0f64), 0.01..1.0f64],
        1..200i64,
        0..2_000i64,
    )
        .prop_map(|(f, at, share, interval_ms, ttl_ms)| Fleet {
            change: Some((at, share, interval_ms, (interval_ms + 1).max(ttl_ms))),
            ..f
        })
}

/// Runs a fleet; the instants of every admitted unit, in order, and the
/// store.
/// What a run leaves: the admits' instants, the store, each machine's
/// answers.
type Run = (Vec<i64>, Store, Vec<Vec<String>>);

fn run(f: &Fleet, read: bool) -> Result<Run, TestCaseError> {
    let mut policy = LeasePolicy {
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
    let mut cap = leases[0].cap();
    // The larger cap: what a machine may still hold after a lower one.
    let mut most = cap;
    // Per machine: the next take, and the asks travelling (sent, want, the
    // ttl its grant gets), oldest first: more than one only where the lease
    // took an earlier one as lost (unanswered for a whole ttl, which a
    // round trip longer than the ttl makes), whose answer still arrives and
    // is recorded.
    let mut next: Vec<i64> = f.machines.iter().map(|m| m.0 * 1_000).collect();
    let mut travelling: Vec<Vec<(i64, i64, i64)>> = vec![Vec::new(); f.machines.len()];
    // Per machine: when the ask the lease counts as outstanding was sent.
    // Any grant answers it, a late one for a lost ask too.
    let mut outstanding: Vec<Option<i64>> = vec![None; f.machines.len()];
    let mut admits = Vec::new();
    let mut answers = vec![Vec::new(); f.machines.len()];
    for step in 0..f.steps {
        if let Some((at, share, interval_ms, ttl_ms)) = f.change {
            if at == step {
                let bad = LeasePolicy {
                    share: 0.0,
                    ..policy
                };
                policy = LeasePolicy {
                    interval_ns: interval_ms * MS,
                    ttl_ns: ttl_ms * MS,
                    share,
                    ..policy
                };
                for lease in &mut leases {
                    let before = format!("{lease:?}");
                    prop_assert_eq!(lease.reconfigure(&bad), Err(LeaseError::Share));
                    prop_assert_eq!(format!("{lease:?}"), before, "a refused change wrote");
                    let held = lease.unspent(i64::MAX / 2);
                    lease.reconfigure(&policy).unwrap();
                    prop_assert_eq!(lease.unspent(i64::MAX / 2), held, "units held are kept");
                }
                cap = leases[0].cap();
                prop_assert_eq!(cap, policy.cap().unwrap());
                most = most.max(cap);
            }
        }
        // The earliest event: a take, or an ask arriving.
        let (k, now) = (0..f.machines.len())
            .map(|k| {
                let arrive = travelling[k]
                    .first()
                    .map_or(i64::MAX, |(sent, _, _)| sent + f.machines[k].2 * 1_000);
                (k, next[k].min(arrive))
            })
            .min_by_key(|&(_, t)| t)
            .unwrap();
        let (gap, cost, rtt) = f.machines[k];
        if let Some(&(sent, want, ttl)) = travelling[k].first() {
            if sent + rtt * 1_000 == now {
                // The store decides halfway along the round trip.
                let (n, at) = store.lease(sent + rtt * 500, want);
                leases[k].grant(now, n, sent + ttl, at).unwrap();
                travelling[k].remove(0);
                outstanding[k] = None;
                continue;
            }
        }
        // A new ask goes only once the outstanding one is answered or lost:
        // sent a whole ttl (the policy's now) ago.
        let may_ask = outstanding[k].map_or(true, |sent| now - sent >= policy.ttl_ns);
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
                    prop_assert!(may_ask, "an ask while one is in flight");
                    prop_assert!(leases[k].unspent(now) + ask <= cap, "an ask past the cap");
                    travelling[k].push((now, ask, policy.ttl_ns));
                    outstanding[k] = Some(now);
                }
            }
            LeaseTake::Ask { ask } => {
                prop_assert!(ask >= 1);
                prop_assert!(may_ask, "an ask while one is in flight");
                prop_assert!(leases[k].unspent(now) + ask <= cap, "an ask past the cap");
                travelling[k].push((now, ask, policy.ttl_ns));
                outstanding[k] = Some(now);
            }
            LeaseTake::Refuse { retry_after } => {
                prop_assert!(retry_after >= 1);
                // The cost the other way: while this machine is refused,
                // the others hold at most (machines - 1) x cap unspent.
                let held_elsewhere: i64 = (0..leases.len())
                    .filter(|&j| j != k)
                    .map(|j| leases[j].unspent(now))
                    .sum();
                prop_assert!(held_elsewhere <= (leases.len() as i64 - 1) * most);
            }
        }
        if let Some(&(_, want, _)) = travelling[k].last() {
            prop_assert!(leases[k].unspent(now) + want <= most);
        }
        prop_assert!(leases[k].unspent(now) <= most);
        next[k] = now + gap * 1_000;
    }
    Ok((admits, store, answers))
}

/// Within the bound: admits ≤ grants ≤ `burst + rate × t`, and in any
/// window of length `w`, admits ≤ `burst + rate × (w + ttl)` (the longer
/// ttl across a change).
fn bounded(f: &Fleet) -> Result<(), TestCaseError> {
    let (admits, store, _) = run(f, false)?;
    prop_assert!(admits.len() as i64 <= store.granted);
    if let Some(&last) = admits.last() {
        let allowed = f.burst as i128 + (last as i128 * f.rate as i128) / S as i128;
        prop_assert!(
            (admits.len() as i128) <= allowed,
            "{} > {}",
            admits.len(),
            allowed
        );
    }
    // Every window that starts at an admit.
    let ttl = f.ttl_ms.max(f.change.map_or(0, |c| c.3)) * MS;
    for (i, &start) in admits.iter().enumerate() {
        for w in [MS, 100 * MS, S] {
            let inside = admits[i..].iter().take_while(|&&t| t < start + w).count() as i128;
            let allowed =
                f.burst as i128 + ((w + ttl) as i128 * f.rate as i128 + S as i128 - 1) / S as i128;
            prop_assert!(inside <= allowed, "{} in {} ns > {}", inside, w, allowed);
        }
    }
    Ok(())
}

/// Readings are pure: the same fleet with `unspent` and `stats` read
/// before every take answers every take alike.
fn pure(f: &Fleet) -> Result<(), TestCaseError> {
    let (_, _, read) = run(f, true)?;
    let (_, _, plain) = run(f, false)?;
    for (r, p) in read.iter().zip(&plain) {
        let answers: Vec<&String> = r.iter().filter(|a| !a.contains("LeaseStats")).collect();
        prop_assert_eq!(answers.len(), p.len());
        for (a, b) in answers.iter().zip(p) {
            prop_assert_eq!(*a, b);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(64), ..ProptestConfig::default() })]

    /// Within the bound: admits ≤ grants ≤ `burst + rate × t`, and in any
    /// window of length `w`, admits ≤ `burst + rate × (w + ttl)`.
    #[test]
    fn the_fleet_never_admits_past_the_bound(f in fleet()) {
        bounded(&f)?;
    }

    /// The same bounds across a reconfiguration, the window's with the
    /// longer ttl; readings stay pure.
    #[test]
    fn a_reconfiguration_keeps_the_units_and_the_bounds(f in changed_fleet()) {
        bounded(&f)?;
        pure(&f)?;
    }

    /// Readings are pure: the same fleet with `unspent` and `stats` read
    /// before every take answers every take alike.
    #[test]
    fn readings_are_pure(f in fleet()) {
        pure(&f)?;
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
