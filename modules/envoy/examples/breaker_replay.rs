//! Replays the weir_breaker filter's decision log (`log_decisions: true`)
//! through weir's breaker (weir-core's `Breaker`, the one behind the C
//! face), and says per breaker what it decided and whether every decision
//! matches the filter's. modules/envoy/test/breaker.py runs it on Envoy's
//! log:
//!
//!   cargo run -q -p weir-envoy --example breaker_replay < envoy.log
//!
//! Each breaker's lines are replayed in their `seq` order (the order the
//! workers took its lock): `new` makes the breaker with the logged policy at
//! the logged `now`; `decide` asks it with the logged `now` and draw;
//! `settle` settles the oldest open ticket of a call let through (tickets
//! are interchangeable to the breaker: only the outcome and `now` count).
//! A settlement marked `counted=no` (a stream destroyed still holding its
//! ticket, where Envoy's counters cannot be reached) changes the breaker
//! like any other but counts in `uncounted`, not in `failed`, so that
//! `failed` compares with Envoy's counter. Prints one line per breaker:
//!
//!   NAME passed=N refused=N failed=N probes=N ratio_ppm=N mismatches=N first_refusal_seq=N last_refusal_seq=N uncounted=N

use std::collections::{BTreeMap, VecDeque};
use std::io::Read;

use weir_core::breaker::{Breaker, BreakerPolicy, BreakerTicket};

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(&format!(" {key}="))? + key.len() + 2;
    let rest = &line[at..];
    if let Some(quoted) = rest.strip_prefix('"') {
        return quoted.split('"').next();
    }
    Some(rest.split(' ').next().unwrap_or(""))
}

fn num(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("policy without {k}"))
}

fn policy(json: &str) -> BreakerPolicy {
    let v: serde_json::Value = serde_json::from_str(json).expect("the logged policy is JSON");
    BreakerPolicy {
        k: num(&v, "k"),
        floor: num(&v, "floor"),
        protection: num(&v, "protection"),
        probe_ns: num(&v, "probe_ns") as i64,
        size: num(&v, "size") as i32,
        window_ns: num(&v, "window_ns") as i64,
        max_rejection_probability: num(&v, "max_rejection_probability"),
        rps_threshold: num(&v, "rps_threshold"),
        aggression: num(&v, "aggression"),
        skip_refusals: v["skip_refusals"].as_bool().expect("skip_refusals"),
    }
}

enum Op {
    New(i64, BreakerPolicy),
    Decide(i64, f64, String),
    /// `now`, a failure, counted in Envoy's `failed`.
    Settle(i64, bool, bool),
}

#[derive(Default)]
struct Tally {
    passed: u64,
    refused: u64,
    failed: u64,
    uncounted: u64,
    probes: u64,
    ratio: f64,
    mismatches: u64,
    first_refusal: Option<u64>,
    last_refusal: Option<u64>,
}

fn main() {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).expect("stdin");
    let mut ops: BTreeMap<String, Vec<(u64, Op)>> = BTreeMap::new();
    for line in text.lines() {
        let Some(at) = line.find("weir_breaker: ") else {
            continue;
        };
        let line = &line[at + "weir_breaker:".len()..];
        let (Some(name), Some(now)) = (field(line, "breaker"), field(line, "now")) else {
            continue;
        };
        let now: i64 = now.parse().expect("now");
        let (seq, op) = if line.starts_with(" new ") {
            let p = &line[line.find("policy=").expect("policy") + 7..];
            (0, Op::New(now, policy(p.trim())))
        } else if line.starts_with(" decide ") {
            let roll: f64 = field(line, "roll").expect("roll").parse().expect("roll");
            let seq = field(line, "seq").expect("seq").parse().expect("seq");
            (
                seq,
                Op::Decide(
                    now,
                    roll,
                    field(line, "verdict").expect("verdict").to_string(),
                ),
            )
        } else if line.starts_with(" settle ") {
            let seq = field(line, "seq").expect("seq").parse().expect("seq");
            (
                seq,
                Op::Settle(
                    now,
                    field(line, "outcome") == Some("failure"),
                    field(line, "counted") != Some("no"),
                ),
            )
        } else {
            continue;
        };
        ops.entry(name.to_string()).or_default().push((seq, op));
    }
    for (name, mut list) in ops {
        list.sort_by_key(|(seq, _)| *seq);
        let mut breaker: Option<Breaker> = None;
        let mut open: VecDeque<BreakerTicket> = VecDeque::new();
        let mut t = Tally::default();
        for (seq, op) in list {
            match op {
                Op::New(now, p) => {
                    breaker = Some(Breaker::new(p, now).expect("a policy the filter took"))
                }
                Op::Decide(now, roll, verdict) => {
                    let b = breaker.as_mut().expect("new before decide");
                    let probes = b.probes();
                    let got = b.allow(now, roll);
                    let probe = b.probes() != probes;
                    let mine = match (got, probe) {
                        (None, _) => "refuse",
                        (Some(_), true) => "probe",
                        (Some(_), false) => "pass",
                    };
                    if mine != verdict {
                        t.mismatches += 1;
                    }
                    match got {
                        Some(ticket) => {
                            t.passed += 1;
                            t.probes += u64::from(probe);
                            open.push_back(ticket);
                        }
                        None => {
                            t.refused += 1;
                            t.first_refusal.get_or_insert(seq);
                            t.last_refusal = Some(seq);
                        }
                    }
                    t.ratio = b.ratio(now);
                }
                Op::Settle(now, failed, counted) => {
                    let b = breaker.as_mut().expect("new before settle");
                    let Some(mut ticket) = open.pop_front() else {
                        t.mismatches += 1;
                        continue;
                    };
                    let r = if failed {
                        b.fail(&mut ticket, now)
                    } else {
                        b.pass(&mut ticket, now)
                    };
                    if r.is_err() {
                        t.mismatches += 1;
                    }
                    if counted {
                        t.failed += u64::from(failed);
                    } else {
                        t.uncounted += 1;
                    }
                    t.ratio = b.ratio(now);
                }
            }
        }
        let ppm = if t.ratio <= 0.0 {
            0
        } else {
            ((t.ratio * 1e6) as u64).clamp(1, 1_000_000)
        };
        println!(
            "{name} passed={} refused={} failed={} probes={} ratio_ppm={ppm} mismatches={} first_refusal_seq={} last_refusal_seq={} uncounted={}",
            t.passed,
            t.refused,
            t.failed,
            t.probes,
            t.mismatches,
            t.first_refusal.unwrap_or(0),
            t.last_refusal.unwrap_or(0),
            t.uncounted
        );
    }
}
