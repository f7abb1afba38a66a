//! The `weir_breaker` filter's pure parts: its config (a weir breaker
//! policy, the failing statuses, the refusal status, how many breakers at
//! most), the breakers themselves (one per upstream cluster, made on first
//! use and shared by every worker), and the draws.
//!
//! A request the breaker lets through holds a ticket until its response
//! settles it; `ffi` (the cdylib) calls [`Breakers::find`], [`decide`] and
//! [`settle`] from Envoy's hooks.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};

use serde::Deserialize;
use weir_core::breaker::{Breaker, BreakerPolicy, BreakerPolicyError, BreakerTicket};

use crate::config::{bad, log_level, not_json, parse_json, quoted, status, whole, LogLevel};

/// The filter_name of the breaker filter.
pub const BREAKER_FILTER_NAME: &str = "weir_breaker";

/// The most breakers a filter may be configured to hold.
pub const MAX_BREAKERS: u64 = 100_000;

/// A breaker policy as written: `weir_breaker_policy`'s fields, each
/// optional (the preset's value when absent).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    #[serde(default)]
    k: Option<f64>,
    #[serde(default)]
    floor: Option<f64>,
    #[serde(default)]
    protection: Option<f64>,
    #[serde(default)]
    probe_ns: Option<f64>,
    #[serde(default)]
    size: Option<f64>,
    #[serde(default)]
    window_ns: Option<f64>,
    #[serde(default)]
    max_rejection_probability: Option<f64>,
    #[serde(default)]
    rps_threshold: Option<f64>,
    #[serde(default)]
    aggression: Option<f64>,
    #[serde(default)]
    skip_refusals: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBreakerConfig {
    #[serde(default)]
    policy: Option<RawPolicy>,
    #[serde(default)]
    failure_status: Option<Vec<Vec<f64>>>,
    #[serde(default)]
    status: Option<f64>,
    #[serde(default)]
    max_breakers: Option<f64>,
    #[serde(default)]
    log_level: Option<String>,
    #[serde(default)]
    log_decisions: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBreakerRoute {
    #[serde(default)]
    breaker: Option<String>,
    #[serde(default)]
    policy: Option<RawPolicy>,
    #[serde(default)]
    failure_status: Option<Vec<Vec<f64>>>,
    #[serde(default)]
    status: Option<f64>,
}

/// Response statuses that count as failures: inclusive ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failing(pub Vec<(u32, u32)>);

impl Failing {
    /// Whether a response with `status` failed.
    #[inline]
    pub fn fails(&self, status: u32) -> bool {
        self.0.iter().any(|&(lo, hi)| (lo..=hi).contains(&status))
    }
}

impl Default for Failing {
    /// Every 5xx.
    fn default() -> Failing {
        Failing(vec![(500, 599)])
    }
}

/// The breaker filter's config.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakerConfig {
    pub policy: BreakerPolicy,
    pub failing: Failing,
    pub status: u32,
    pub max_breakers: usize,
    pub log_level: LogLevel,
    pub log_decisions: bool,
}

/// A route's breaker config: a breaker of its own (`breaker` names it, and
/// `policy` is its policy), other failing statuses, another refusal status.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakerRoute {
    pub breaker: Option<(String, BreakerPolicy)>,
    pub failing: Option<Failing>,
    pub status: Option<u32>,
}

fn policy_error(at: &str, p: &BreakerPolicy, e: BreakerPolicyError) -> String {
    let (field, value, why): (&str, String, &str) = match e {
        BreakerPolicyError::Floor => (
            "floor",
            p.floor.to_string(),
            "floor must be finite and at least 1",
        ),
        BreakerPolicyError::K => ("k", p.k.to_string(), "k must be finite and at least floor"),
        BreakerPolicyError::Protection => (
            "protection",
            p.protection.to_string(),
            "protection must be finite and not negative",
        ),
        BreakerPolicyError::Probe => (
            "probe_ns",
            p.probe_ns.to_string(),
            "probe_ns must be above 0",
        ),
        BreakerPolicyError::Cap => (
            "max_rejection_probability",
            p.max_rejection_probability.to_string(),
            "max_rejection_probability must be in [0, 1]",
        ),
        BreakerPolicyError::Rps => (
            "rps_threshold",
            p.rps_threshold.to_string(),
            "rps_threshold must be finite and not negative",
        ),
        BreakerPolicyError::Aggression => (
            "aggression",
            p.aggression.to_string(),
            "aggression must be finite and above 0",
        ),
        BreakerPolicyError::Window(_) => (
            "window_ns",
            p.window_ns.to_string(),
            "the window cannot be made of size buckets over window_ns",
        ),
    };
    bad(&format!("{at}.{field}"), &value, why)
}

/// The preset with `raw`'s fields over it, checked.
pub fn policy(at: &str, raw: &RawPolicy) -> Result<BreakerPolicy, String> {
    let mut p = BreakerPolicy::PRESET;
    let ns = |f: &str, v: f64| {
        whole(
            &format!("{at}.{f}"),
            v,
            1,
            i64::MAX as u64 / 2,
            "a whole number of nanoseconds above 0",
        )
        .map(|n| n as i64)
    };
    if let Some(v) = raw.k {
        p.k = v;
    }
    if let Some(v) = raw.floor {
        p.floor = v;
    }
    if let Some(v) = raw.protection {
        p.protection = v;
    }
    if let Some(v) = raw.probe_ns {
        p.probe_ns = ns("probe_ns", v)?;
    }
    if let Some(v) = raw.size {
        p.size = whole(
            &format!("{at}.size"),
            v,
            1,
            1 << 20,
            "size must be a whole number 1..1048576",
        )? as i32;
    }
    if let Some(v) = raw.window_ns {
        p.window_ns = ns("window_ns", v)?;
    }
    if let Some(v) = raw.max_rejection_probability {
        p.max_rejection_probability = v;
    }
    if let Some(v) = raw.rps_threshold {
        p.rps_threshold = v;
    }
    if let Some(v) = raw.aggression {
        p.aggression = v;
    }
    if let Some(v) = raw.skip_refusals {
        p.skip_refusals = v;
    }
    p.check().map_err(|e| policy_error(at, &p, e))?;
    // The window must be makeable too (its span split in `size` buckets).
    Breaker::new(p, 0).map_err(|e| policy_error(at, &p, e))?;
    Ok(p)
}

fn failing(at: &str, raw: Option<Vec<Vec<f64>>>) -> Result<Option<Failing>, String> {
    let Some(list) = raw else { return Ok(None) };
    if list.is_empty() {
        return Err(bad(at, &"[]", "give at least one range [FIRST, LAST]"));
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, r) in list.iter().enumerate() {
        let f = format!("{at}[{i}]");
        let (lo, hi) = match r[..] {
            [one] => (one, one),
            [lo, hi] => (lo, hi),
            _ => {
                return Err(bad(
                    &f,
                    &format!("{r:?}"),
                    "a range is [FIRST, LAST] or [STATUS]",
                ))
            }
        };
        let lo = whole(&f, lo, 100, 599, "statuses are 100..599")? as u32;
        let hi = whole(&f, hi, 100, 599, "statuses are 100..599")? as u32;
        if lo > hi {
            return Err(bad(
                &f,
                &format!("[{lo}, {hi}]"),
                "the first status is above the last",
            ));
        }
        out.push((lo, hi));
    }
    Ok(Some(Failing(out)))
}

/// Reads and checks the breaker filter's config.
pub fn parse(bytes: &[u8]) -> Result<BreakerConfig, String> {
    not_json(bytes)?;
    let raw: RawBreakerConfig = parse_json(bytes)?;
    let policy = policy("policy", &raw.policy.unwrap_or_default())?;
    let max_breakers = match raw.max_breakers {
        None => 64,
        Some(v) => whole(
            "max_breakers",
            v,
            1,
            MAX_BREAKERS,
            "max_breakers must be 1..100000",
        )? as usize,
    };
    Ok(BreakerConfig {
        policy,
        failing: failing("failure_status", raw.failure_status)?.unwrap_or_default(),
        status: raw
            .status
            .map(|s| status("status", s))
            .transpose()?
            .unwrap_or(503),
        max_breakers,
        log_level: log_level(raw.log_level.as_deref())?,
        log_decisions: raw.log_decisions.unwrap_or(false),
    })
}

/// Reads and checks a route's breaker config.
pub fn parse_route(bytes: &[u8]) -> Result<BreakerRoute, String> {
    not_json(bytes)?;
    let raw: RawBreakerRoute = parse_json(bytes)?;
    let breaker = match (raw.breaker, raw.policy) {
        (None, None) => None,
        (None, Some(_)) => {
            return Err(bad(
                "policy",
                &"{...}",
                "a route's policy makes breakers of its own: name them with breaker",
            ))
        }
        (Some(name), p) => {
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                return Err(bad(
                    "breaker",
                    &quoted(&name),
                    "a name is letters, digits, '_' and '-'",
                ));
            }
            Some((name, policy("policy", &p.unwrap_or_default())?))
        }
    };
    Ok(BreakerRoute {
        breaker,
        failing: failing("failure_status", raw.failure_status)?,
        status: raw.status.map(|s| status("status", s)).transpose()?,
    })
}

/// One breaker and its log sequence.
#[derive(Debug)]
pub struct Guarded {
    pub breaker: Breaker,
    /// Operations on this breaker so far (its making is 0): orders the
    /// decision log across workers.
    pub seq: u64,
    /// The refusal ratio last handed to the gauge, in ppm.
    pub ppm: u64,
}

/// A breaker shared by every worker, with its name (the cluster's, or
/// `CLUSTER/NAME` for a route's own).
#[derive(Debug)]
pub struct Slot {
    pub name: String,
    /// The policy it was made with (kept whatever later requests ask).
    pub policy: BreakerPolicy,
    /// Whether a request asking another policy was reported already.
    pub warned: AtomicBool,
    pub state: Mutex<Guarded>,
}

/// Between a cluster's name and a route's breaker name in a route's own
/// breaker's key: a byte neither holds (Envoy's names are text; a route's
/// breaker name is letters, digits, '_' and '-'), so that a cluster named
/// `a/own` and the breaker `own` on cluster `a` stay two breakers. Shown as
/// '/'.
pub const ROUTE_SEPARATOR: u8 = 0;

/// The breakers of one filter config, by key (the cluster's name, or the
/// cluster's and the route breaker's joined by [`ROUTE_SEPARATOR`]), at
/// most `max`.
#[derive(Debug)]
pub struct Breakers {
    map: RwLock<HashMap<Vec<u8>, Arc<Slot>>>,
    max: usize,
}

/// What [`Breakers::find`] found.
pub enum Found {
    /// The breaker, and whether this call made it.
    Slot(Arc<Slot>, bool),
    /// No such breaker, and no room for another.
    Full,
}

impl Breakers {
    pub fn new(max: usize) -> Breakers {
        Breakers {
            map: RwLock::new(HashMap::new()),
            max,
        }
    }

    /// The breaker of `key`, made with `policy` at `now` when it is new
    /// and there is room (an existing breaker keeps the policy it was made
    /// with). Its name is the key with [`ROUTE_SEPARATOR`] shown as '/'.
    pub fn find(&self, key: &[u8], policy: BreakerPolicy, now: i64) -> Found {
        {
            let map = self.map.read().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = map.get(key) {
                return Found::Slot(s.clone(), false);
            }
        }
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = map.get(key) {
            return Found::Slot(s.clone(), false);
        }
        if map.len() >= self.max {
            return Found::Full;
        }
        let Ok(breaker) = Breaker::new(policy, now) else {
            return Found::Full; // checked at config; cannot happen
        };
        let slot = Arc::new(Slot {
            name: String::from_utf8_lossy(key).replace(ROUTE_SEPARATOR as char, "/"),
            policy,
            warned: AtomicBool::new(false),
            state: Mutex::new(Guarded {
                breaker,
                seq: 0,
                ppm: 0,
            }),
        });
        map.insert(key.to_vec(), slot.clone());
        Found::Slot(slot, true)
    }

    /// How many breakers there are.
    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The breaker's answer to one request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// The ticket of a call let through; `None`: refused.
    pub ticket: Option<BreakerTicket>,
    /// Let through by the probe alone.
    pub probe: bool,
    /// This operation's place in the breaker's log.
    pub seq: u64,
}

/// Calls `gauge` with the breaker's refusal ratio in ppm at `now` when it
/// differs from the one last handed over (Envoy's labelled gauge costs
/// thousands of instructions a call; a healthy breaker's stays 0).
/// `gauge` answers whether it set the gauge: the value counts as handed
/// over only then, so a settlement that cannot reach Envoy's gauge leaves
/// it to the breaker's next decision or settlement to set.
fn report(g: &mut Guarded, now: i64, gauge: impl FnOnce(u64) -> bool) {
    let p = ppm(g.breaker.ratio(now));
    if p != g.ppm && gauge(p) {
        g.ppm = p;
    }
}

/// Asks `slot`'s breaker at `now` with the draw `roll`; `gauge` is called
/// under the breaker's lock with the refusal ratio (ppm) after the
/// decision when it changed, so that the last value set is the latest; it
/// answers whether it set the gauge (see [`report`]).
pub fn decide(slot: &Slot, now: i64, roll: f64, gauge: impl FnOnce(u64) -> bool) -> Decision {
    let mut g = slot.state.lock().unwrap_or_else(|e| e.into_inner());
    let probes = g.breaker.probes();
    let ticket = g.breaker.allow(now, roll);
    let probe = g.breaker.probes() != probes;
    g.seq += 1;
    report(&mut g, now, gauge);
    Decision {
        ticket,
        probe,
        seq: g.seq,
    }
}

/// Settles `ticket` at `now`, once: a failure or a success. Returns the
/// operation's place in the log, or `None` when the ticket was settled
/// already (nothing changes). `gauge` as in [`decide`].
pub fn settle(
    slot: &Slot,
    ticket: &mut BreakerTicket,
    now: i64,
    failed: bool,
    gauge: impl FnOnce(u64) -> bool,
) -> Option<u64> {
    let mut g = slot.state.lock().unwrap_or_else(|e| e.into_inner());
    let r = if failed {
        g.breaker.fail(ticket, now)
    } else {
        g.breaker.pass(ticket, now)
    };
    r.ok()?;
    g.seq += 1;
    report(&mut g, now, gauge);
    Some(g.seq)
}

/// The refusal ratio as the gauge holds it: parts per million, rounded
/// down (a ratio above zero reads at least 1).
pub fn ppm(ratio: f64) -> u64 {
    if ratio <= 0.0 {
        0
    } else {
        ((ratio * 1e6) as u64).clamp(1, 1_000_000)
    }
}

/// The policy as the decision log writes it (JSON, the config's field
/// names), so that a replay makes the same breaker.
pub fn policy_json(p: &BreakerPolicy) -> String {
    format!(
        "{{\"k\":{:?},\"floor\":{:?},\"protection\":{:?},\"probe_ns\":{},\"size\":{},\"window_ns\":{},\
         \"max_rejection_probability\":{:?},\"rps_threshold\":{:?},\"aggression\":{:?},\"skip_refusals\":{}}}",
        p.k,
        p.floor,
        p.protection,
        p.probe_ns,
        p.size,
        p.window_ns,
        p.max_rejection_probability,
        p.rps_threshold,
        p.aggression,
        p.skip_refusals
    )
}

thread_local! {
    /// Each worker's SplitMix64 state; 0 until the worker first draws.
    static STATE: Cell<u64> = const { Cell::new(0) };
}

/// 64 bits from /dev/urandom (0 if it cannot be read; the clock then).
fn urandom() -> u64 {
    use std::io::Read;
    let mut b = [0u8; 8];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok();
    if ok {
        u64::from_le_bytes(b)
    } else {
        crate::limit::now() as u64
    }
}

/// One SplitMix64 step.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A draw in [0, 1) from this worker's generator: SplitMix64, seeded from
/// /dev/urandom the first time the worker draws.
pub fn roll() -> f64 {
    STATE.with(|s| {
        let mut st = s.get();
        if st == 0 {
            st = urandom() | 1;
        }
        let x = splitmix(&mut st);
        s.set(st);
        (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_reads_the_policy_fields() {
        let c = parse(br#"{"policy":{"k":2,"floor":1.5,"protection":0,"probe_ns":2e8,"size":20,"window_ns":2e9,"max_rejection_probability":0.9,"rps_threshold":1,"aggression":2,"skip_refusals":true},"failure_status":[[500,504],[429]],"status":502,"max_breakers":3,"log_decisions":true}"#).unwrap();
        assert_eq!(
            c.policy,
            BreakerPolicy {
                k: 2.0,
                floor: 1.5,
                protection: 0.0,
                probe_ns: 200_000_000,
                size: 20,
                window_ns: 2_000_000_000,
                max_rejection_probability: 0.9,
                rps_threshold: 1.0,
                aggression: 2.0,
                skip_refusals: true,
            }
        );
        assert_eq!(c.failing, Failing(vec![(500, 504), (429, 429)]));
        assert!(c.failing.fails(429) && c.failing.fails(503) && !c.failing.fails(505));
        assert_eq!((c.status, c.max_breakers, c.log_decisions), (502, 3, true));
        let d = parse(b"{}").unwrap();
        assert_eq!(d.policy, BreakerPolicy::PRESET);
        assert_eq!(
            (d.status, d.max_breakers, d.failing),
            (503, 64, Failing::default())
        );
    }

    #[test]
    fn errors_name_the_field() {
        let e = |s: &str| parse(s.as_bytes()).unwrap_err();
        assert_eq!(
            e(r#"{"policy":{"k":1}}"#),
            "policy.k: invalid 1: k must be finite and at least floor"
        );
        assert_eq!(
            e(r#"{"policy":{"probe_ns":0}}"#),
            "policy.probe_ns: invalid 0: a whole number of nanoseconds above 0"
        );
        assert_eq!(
            e(r#"{"policy":{"max_rejection_probability":2}}"#),
            "policy.max_rejection_probability: invalid 2: max_rejection_probability must be in [0, 1]"
        );
        assert!(e(r#"{"policy":{"kk":1}}"#).starts_with("policy.kk: unknown field `kk`"));
        assert_eq!(
            e(r#"{"failure_status":[[600]]}"#),
            "failure_status[0]: invalid 600: statuses are 100..599"
        );
        assert_eq!(
            e(r#"{"failure_status":[[504,500]]}"#),
            "failure_status[0]: invalid [504, 500]: the first status is above the last"
        );
        assert_eq!(
            e(r#"{"max_breakers":0}"#),
            "max_breakers: invalid 0: max_breakers must be 1..100000"
        );
        assert_eq!(
            e(r#"{"status":200}"#),
            "status: invalid 200: the status must be 400..599"
        );
    }

    #[test]
    fn a_route_names_its_own_breakers() {
        let r = parse_route(br#"{"breaker":"slow","policy":{"k":3},"status":429}"#).unwrap();
        let (name, p) = r.breaker.unwrap();
        assert_eq!((name.as_str(), p.k, p.floor), ("slow", 3.0, 1.1));
        assert_eq!(r.status, Some(429));
        assert!(parse_route(br#"{"policy":{"k":3}}"#)
            .unwrap_err()
            .starts_with("policy: "));
        assert!(parse_route(br#"{"breaker":"a b"}"#)
            .unwrap_err()
            .starts_with("breaker: "));
        assert_eq!(
            parse_route(b"{}").unwrap(),
            BreakerRoute {
                breaker: None,
                failing: None,
                status: None
            }
        );
    }

    #[test]
    fn breakers_are_made_once_and_at_most_max() {
        let b = Breakers::new(2);
        let p = BreakerPolicy::PRESET;
        assert!(matches!(b.find(b"a", p, 0), Found::Slot(_, true)));
        assert!(matches!(b.find(b"a", p, 0), Found::Slot(_, false)));
        assert!(matches!(b.find(b"b", p, 0), Found::Slot(_, true)));
        assert!(matches!(b.find(b"c", p, 0), Found::Full));
        assert_eq!(b.len(), 2);
    }

    #[test]
    fn a_cluster_named_like_a_route_breaker_is_its_own() {
        let b = Breakers::new(4);
        let p = BreakerPolicy::PRESET;
        let Found::Slot(cluster, true) = b.find(b"a/own", p, 0) else {
            panic!()
        };
        let Found::Slot(route, true) = b.find(b"a\0own", p, 0) else {
            panic!()
        };
        assert!(!Arc::ptr_eq(&cluster, &route));
        assert_eq!(
            (cluster.name.as_str(), route.name.as_str()),
            ("a/own", "a/own")
        );
        assert_eq!(b.len(), 2);
    }

    #[test]
    fn a_value_the_gauge_did_not_take_is_handed_over_next_time() {
        let p = BreakerPolicy {
            protection: 0.0,
            ..BreakerPolicy::PRESET
        };
        let b = Breakers::new(1);
        let Found::Slot(slot, _) = b.find(b"c", p, 0) else {
            panic!()
        };
        // Fail calls, the gauge refusing every value: the cache stays 0.
        let mut now = 0;
        for _ in 0..50 {
            now += 10_000_000;
            if let Some(mut t) = decide(&slot, now, 0.99, |_| false).ticket {
                settle(&slot, &mut t, now, true, |_| false);
            }
        }
        assert_eq!(slot.state.lock().unwrap().ppm, 0);
        // The next operation that can set the gauge sets it.
        let mut got = None;
        decide(&slot, now, 0.99, |r| {
            got = Some(r);
            true
        });
        let want = ppm(slot.state.lock().unwrap().breaker.ratio(now));
        assert!(want > 0);
        assert_eq!(got, Some(want));
        assert_eq!(slot.state.lock().unwrap().ppm, want);
    }

    #[test]
    fn the_shared_breaker_is_weirs_breaker() {
        // Tickets settle once; decisions match a bare Breaker on the same
        // timeline.
        let p = BreakerPolicy {
            protection: 0.0,
            ..BreakerPolicy::PRESET
        };
        let b = Breakers::new(1);
        let Found::Slot(slot, _) = b.find(b"c", p, 0) else {
            panic!()
        };
        let mut bare = Breaker::new(p, 0).unwrap();
        let mut last = 0;
        for i in 0..200i64 {
            let now = i * 10_000_000;
            let roll = ((i * 37) % 100) as f64 / 100.0;
            let d = decide(&slot, now, roll, |r| {
                last = r;
                true
            });
            let want = bare.allow(now, roll);
            assert_eq!(d.ticket, want);
            assert_eq!(last, ppm(bare.ratio(now)));
            if let (Some(mut t), Some(mut u)) = (d.ticket, want) {
                assert!(settle(&slot, &mut t, now, true, |r| {
                    last = r;
                    true
                })
                .is_some());
                assert!(settle(&slot, &mut t, now, true, |_| true).is_none());
                bare.fail(&mut u, now).unwrap();
            }
        }
        assert!(last > 0);
    }

    #[test]
    fn draws_are_in_the_unit_interval_and_ppm_rounds_down() {
        for _ in 0..1000 {
            let r = roll();
            assert!((0.0..1.0).contains(&r));
        }
        assert_eq!(
            (ppm(0.0), ppm(1e-9), ppm(0.5), ppm(1.0)),
            (0, 1, 500_000, 1_000_000)
        );
    }
}
