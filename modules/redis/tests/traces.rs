//! The conformance traces (`traces/`, format in `traces/README.md`)
//! replayed against a real redis-server through the module's commands.
//!
//! The module decides on its server's clock, so the replay uses a test
//! build of it (cargo feature `test-clock`, built here into a target
//! directory of its own) whose `WEIR.TEST.NOW ns` sets the time the next
//! commands decide at. A trace's `now` is replayed as `BASE + now`: keys
//! expire on Redis's own wall clock, and `BASE` (a midnight in 2033) keeps
//! every expiry a trace writes in the future while the test runs. The GCRA
//! word and the sliding window decide on differences of times only, and an
//! aligned period that divides a day lies alike on both clocks, so the shift
//! changes no answer.
//!
//! What the module can replay, and how each call maps:
//!
//! - `gcra` traces: `WEIR.BUCKET key rate burst [COST n] MS` is the GCRA
//!   word at a 1 ns tick (`shift` 0) for a rate written as a decimal. A
//!   trace replays when every limit it makes is one the module makes the
//!   same (the same `per_token` and `tolerance`, checked per limit), its
//!   times are 0 or more and within what a Redis key may hold, and it
//!   writes no word or limit raw but the zero word (a full bucket: the key
//!   deleted). `gcra_allow`/`gcra_allow_n` are takes:
//!   the answer, then the key's stored TAT is the word's state (an absent
//!   key is a full word); a cost the module refuses as an error (0, or more
//!   than the burst) must be a refusal in the trace. `gcra_next` is a peek:
//!   its retry in whole milliseconds, rounded up, is the wait's (-1 for 0).
//!   `gcra_room` is the peek's remaining tokens.
//! - `sliding` traces: each window is a fresh key taken with `WEIR.WINDOW
//!   key quota window_ms` (the same exact sliding window) when its length
//!   is a whole number of milliseconds; `sliding_left` is the peek's
//!   remaining units, `sliding_next` its retry in milliseconds.
//! - `period` traces: each counter is a fresh key taken with `WEIR.PERIOD
//!   key quota period_ms [ALIGN]` when its period is a whole number of
//!   milliseconds (aligned: one that divides a day). A take's five integers
//!   give the handle's under, hit or over exactly; `period_left` is the
//!   peek's units left, `period_next` its milliseconds until the period ends
//!   (rounded up). Two kinds of `period_next` differ in behaviour and are
//!   passed over, counted, with the reasons `traces/skips.txt` gives (see
//!   [`replay_period`]).
//! - Every other trace is skipped with its reason, which must be in
//!   `traces/skips.txt` under the face `redis` (and nothing listed there
//!   may be a trace this replays).
//!
//! The module as released has no test clock: the first test checks that a
//! server loading the plain build answers `WEIR.TEST.NOW` as an unknown
//! command.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use support::{module_path, Conn, Server, Value};
use weir_redis::gcra::Gcra;

/// Where trace time 0 sits on the module's clock: 2033-05-18 00:00 UTC,
/// later than any wall clock this runs on, so no key a replay writes
/// expires under it. A whole number of days, so an aligned period that
/// divides a day lies on the module's Unix clock where the handle's lies
/// on the trace's.
const BASE: i64 = 23_148 * 86_400 * 1_000_000_000;
/// The latest trace time (times plus a limit's whole tolerance) whose TAT
/// a Redis key can hold: the module stores TATs up to `i64::MAX / 2`.
const LATEST: i64 = i64::MAX / 2 - BASE;
const MS: i64 = 1_000_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The module built with `test-clock`, once per run, in its own target
/// directory (the plain build's .so is never overwritten by it), or
/// `WEIR_REDIS_TEST_MODULE` when set.
fn test_module() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if let Ok(path) = std::env::var("WEIR_REDIS_TEST_MODULE") {
                return PathBuf::from(path);
            }
            let target = std::env::var("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|_| root().join("target"))
                .join("redis-test-clock");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .args([
                    "build",
                    "--locked",
                    "--lib",
                    "--features",
                    "test-clock",
                    "--manifest-path",
                ])
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
                .arg("--target-dir")
                .arg(&target)
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building the test-clock module failed");
            let path = target.join("debug").join("libweir_redis.so");
            assert!(path.exists(), "{} was not built", path.display());
            path
        })
        .clone()
}

struct Call {
    line: usize,
    op: String,
    args: Vec<String>,
    outs: Vec<String>,
}

struct Trace {
    file: String,
    kind: String,
    calls: Vec<Call>,
}

/// Every trace under `traces/`, by its path relative to that folder.
fn traces() -> Vec<Trace> {
    let dir = root().join("traces");
    let mut paths = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("traces/ is readable") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "trace") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let file = path
                .strip_prefix(&dir)
                .expect("under traces/")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(path).expect("a trace reads");
            let mut lines = text.split('\n');
            let head: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
            assert!(
                head.len() == 3 && head[0] == "weir-trace" && head[1] == "1",
                "{file}:1: not a version 1 trace"
            );
            let mut calls = Vec::new();
            for (i, line) in lines.enumerate() {
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let tokens: Vec<&str> = line.split(' ').collect();
                let eq = tokens
                    .iter()
                    .position(|&t| t == "=")
                    .unwrap_or_else(|| panic!("{file}:{}: no '='", i + 2));
                calls.push(Call {
                    line: i + 2,
                    op: tokens[0].to_string(),
                    args: tokens[1..eq].iter().map(|s| s.to_string()).collect(),
                    outs: tokens[eq + 1..].iter().map(|s| s.to_string()).collect(),
                });
            }
            Trace {
                file,
                kind: head[2].to_string(),
                calls,
            }
        })
        .collect()
}

fn int(token: &str) -> i64 {
    if let Some(hex) = token.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).expect("hex") as i64;
    }
    token
        .parse::<i64>()
        .or_else(|_| token.parse::<u64>().map(|u| u as i64))
        .expect("a number")
}

fn double(token: &str) -> f64 {
    f64::from_bits(int(token) as u64)
}

/// A held GCRA limit as the module takes it: the rate as it is written in
/// the command, the burst, and the module's own parameters for them.
#[derive(Clone)]
struct Limit {
    rate: String,
    burst: i64,
    gcra: Gcra,
}

/// The module's limit for the word's `gcra_limit_new rate burst`, if the
/// module makes exactly the same one (`shift` 0, the same `per_token` and
/// `tolerance`).
fn module_limit(rate: f64, burst: i64, outs: &[String]) -> Option<Limit> {
    let (per_token, tolerance, shift) = (int(&outs[1]), int(&outs[2]), int(&outs[3]));
    if shift != 0 || !rate.is_finite() || rate <= 0.0 || burst <= 0 {
        return None;
    }
    // The shortest decimal that reads back as the same double; the module
    // reads at most nine decimals.
    let text = format!("{rate}");
    let scaled = weir_redis::parse::rate(text.as_bytes()).ok()?;
    let gcra = Gcra::new(scaled, burst as u64).ok()?;
    (gcra.interval == per_token && gcra.tolerance == tolerance).then_some(Limit {
        rate: text,
        burst,
        gcra,
    })
}

fn set_now(c: &mut Conn, now: i64) {
    let at = (BASE + now).to_string();
    let reply = c.call(&[b"WEIR.TEST.NOW", at.as_bytes()]);
    assert_eq!(reply, Value::Int(BASE + now), "WEIR.TEST.NOW");
}

/// What a replay did with a trace's calls.
#[derive(Default)]
struct Tally {
    /// Calls sent to the module and their answers compared.
    replayed: usize,
    /// Calls the module cannot be asked, by reason.
    passed_over: BTreeMap<&'static str, usize>,
}

/// Replays a `gcra` trace on `key`, every call the module can be asked.
///
/// The key and the trace's word stay in step as long as every call that
/// changes the word is sent. A call the module cannot be asked (a limit it
/// does not make the same, a negative time, one past what a key holds) is
/// passed over: harmless when it is a reading or a refusal (the word is
/// unchanged), and otherwise the replay is out of step and passes over
/// everything until the trace resets the word to zero (`gcra_set 0`, a
/// key deleted). Returns the first answer that differs.
fn replay_gcra(c: &mut Conn, trace: &Trace, key: &str) -> Result<Tally, String> {
    c.call(&[b"DEL", key.as_bytes()]);
    let mut tally = Tally::default();
    let mut limit: Option<Limit> = None;
    let mut in_step = true;
    for call in &trace.calls {
        let fail = |got: String| {
            Err(format!(
                "{}:{}: {} {}: expected {}, got {got}",
                trace.file,
                call.line,
                call.op,
                call.args.join(" "),
                call.outs.join(" ")
            ))
        };
        match call.op.as_str() {
            "gcra_limit_new" => {
                // A refused constructor leaves the held limit alone.
                if int(&call.outs[0]) == 0 {
                    limit = module_limit(double(&call.args[0]), int(&call.args[1]), &call.outs);
                }
                continue;
            }
            "gcra_limit_set" => {
                limit = None;
                continue;
            }
            "gcra_set" => {
                c.call(&[b"DEL", key.as_bytes()]);
                // A zero word is a full bucket, as a deleted key; any other
                // raw word the module cannot be given.
                in_step = int(&call.args[0]) == 0;
                if !in_step {
                    *tally.passed_over.entry("a word written raw").or_default() += 1;
                }
                continue;
            }
            _ => {}
        }
        let now = int(&call.args[0]);
        let changes = call.op.starts_with("gcra_allow") && int(&call.outs[0]) == 1;
        let why = if !in_step {
            Some("out of step after a call the module cannot be asked")
        } else if limit.is_none() {
            Some("a limit the module does not make the same (a tick finer than 1 ns, or raw)")
        } else if now < 0 {
            Some("a negative time (a server's clock never is)")
        } else if now > LATEST - limit.as_ref().map_or(0, |l| l.gcra.tolerance) {
            Some("a time past what a Redis key holds")
        } else {
            None
        };
        if let Some(why) = why {
            *tally.passed_over.entry(why).or_default() += 1;
            if changes {
                in_step = false;
            }
            continue;
        }
        let l = limit.clone().expect("checked above");
        set_now(c, now);
        tally.replayed += 1;
        let burst = l.burst.to_string();
        match call.op.as_str() {
            "gcra_allow" | "gcra_allow_n" => {
                let n = if call.op == "gcra_allow" {
                    1
                } else {
                    int(&call.args[1])
                };
                let n_text = n.to_string();
                let mut words: Vec<&[u8]> = vec![
                    b"WEIR.BUCKET",
                    key.as_bytes(),
                    l.rate.as_bytes(),
                    burst.as_bytes(),
                ];
                if call.op == "gcra_allow_n" {
                    words.extend([b"COST".as_slice(), n_text.as_bytes()]);
                }
                words.push(b"MS");
                let reply = c.call(&words);
                let (want, state) = (int(&call.outs[0]) == 1, int(&call.outs[1]));
                let got = match &reply {
                    // The module refuses a cost it could never pass (0,
                    // or past the burst) as an error; the word as a
                    // refusal. Either way nothing is written.
                    Value::Error(_) if n <= 0 || n > l.burst => false,
                    Value::Array(_) => reply.ints()[0] == 0,
                    other => return fail(format!("{other:?}")),
                };
                if got != want {
                    return fail(format!("{} ({reply:?})", u8::from(got)));
                }
                match c.call(&[b"GET", key.as_bytes()]) {
                    Value::Bulk(bytes) => {
                        let tat = weir_redis::state::decode_bucket(&bytes)
                            .map_err(|_| format!("{}:{}: a corrupt key", trace.file, call.line))?
                            .tat;
                        if tat - BASE != state {
                            return fail(format!("stored TAT {}", tat - BASE));
                        }
                    }
                    // No key: a full bucket, as a word whose TAT is not
                    // after now.
                    Value::Nil if state <= now => {}
                    other => return fail(format!("key {other:?}")),
                }
            }
            "gcra_next" | "gcra_room" => {
                let reply = c.call(&[
                    b"WEIR.BUCKET.PEEK",
                    key.as_bytes(),
                    l.rate.as_bytes(),
                    burst.as_bytes(),
                    b"MS",
                ]);
                let five = reply.ints();
                let want = int(&call.outs[0]);
                let ok = if call.op == "gcra_next" {
                    let retry = if want == 0 { -1 } else { (want - 1) / MS + 1 };
                    five[3] == retry && (five[0] == 0) == (want == 0)
                } else {
                    five[2] == want
                };
                if !ok {
                    return fail(format!("{five:?}"));
                }
            }
            other => return fail(format!("unknown operation {other}")),
        }
    }
    Ok(tally)
}

/// Replays a `sliding` trace: each window a fresh key, taken with
/// `WEIR.WINDOW key quota window_ms` and read with its peek (the
/// remaining units for `sliding_left`, the retry in milliseconds, rounded
/// up, for `sliding_next`). A window that is not a whole number of
/// milliseconds, or past the module's quota, cannot be asked; the same
/// rules as [`replay_gcra`] pass its calls over.
fn replay_sliding(c: &mut Conn, trace: &Trace, key_base: &str) -> Result<Tally, String> {
    let mut tally = Tally::default();
    let mut window: Option<(String, String)> = None; // quota, window_ms
    let mut in_step = false;
    let mut fresh = 0;
    let mut key = String::new();
    for call in &trace.calls {
        let fail = |got: String| {
            Err(format!(
                "{}:{}: {} {}: expected {}, got {got}",
                trace.file,
                call.line,
                call.op,
                call.args.join(" "),
                call.outs.join(" ")
            ))
        };
        if call.op == "sliding_new" {
            // A refused constructor leaves no current window.
            let (quota, ns) = (int(&call.args[0]), int(&call.args[1]));
            in_step = int(&call.outs[0]) == 0;
            window = (in_step
                && quota as u64 <= weir_redis::parse::MAX_WINDOW_QUOTA
                && ns % MS == 0
                && ns / MS <= weir_redis::gcra::MAX_SPAN_NS / MS)
                .then(|| (quota.to_string(), (ns / MS).to_string()));
            fresh += 1;
            key = format!("{key_base}.{fresh}");
            continue;
        }
        let now = int(&call.args[0]);
        let changes = call.op == "sliding_take" && int(&call.outs[0]) == 1;
        let why = if !in_step {
            Some("out of step after a call the module cannot be asked")
        } else if window.is_none() {
            Some("a window not in whole milliseconds, or a quota past the module's")
        } else if now < 0 {
            Some("a negative time (a server's clock never is)")
        } else if now > LATEST - weir_redis::gcra::MAX_SPAN_NS {
            Some("a time past what a Redis key holds")
        } else {
            None
        };
        if let Some(why) = why {
            *tally.passed_over.entry(why).or_default() += 1;
            if changes {
                in_step = false;
            }
            continue;
        }
        let (quota, ms) = window.clone().expect("checked above");
        set_now(c, now);
        tally.replayed += 1;
        let command: &[u8] = if call.op == "sliding_take" {
            b"WEIR.WINDOW"
        } else {
            b"WEIR.WINDOW.PEEK"
        };
        let five = c
            .call(&[command, key.as_bytes(), quota.as_bytes(), ms.as_bytes()])
            .ints();
        let want = int(&call.outs[0]);
        let ok = match call.op.as_str() {
            "sliding_take" => (five[0] == 0) == (want == 1),
            "sliding_left" => five[2] == want,
            "sliding_next" => {
                let retry = if want == 0 { -1 } else { (want - 1) / MS + 1 };
                five[3] == retry
            }
            other => return fail(format!("unknown operation {other}")),
        };
        if !ok {
            return fail(format!("{five:?}"));
        }
    }
    Ok(tally)
}

/// Why a `period_next` reading of 0 is not asked: the handle's next reads 0
/// when no period is open, where the module's peek answers for the period a
/// take at that time would open (its length, or what is left of the aligned
/// one). The same words are in `traces/skips.txt`.
const NO_PERIOD_OPEN: &str =
    "period_next with no period open (the handle reads 0; WEIR.PERIOD.PEEK reads the period a take would open)";
/// Why a `period_next` earlier than the latest take is not asked: the
/// handle answers as of that take's time, the module's reset counts from
/// the command's own time (it keeps no latest time). The end both name is
/// the same instant. The same words are in `traces/skips.txt`.
const BEFORE_LATEST_TAKE: &str =
    "period_next earlier than the latest take (the handle counts from that take, the module from the command's time)";
/// Why a `period_reconfigure` is not asked, and the counter's later calls
/// pass over as out of step: the handle keeps its open period's end and
/// count under the new quota and period, while `WEIR.PERIOD` takes both
/// with each command and has no call that changes them in place. The same
/// words are in `traces/skips.txt`.
const RECONFIGURED: &str =
    "period_reconfigure (the handle keeps its open period under the new quota and period; WEIR.PERIOD takes both with each command and has no change in place)";

/// Replays a `period` trace: each counter a fresh key taken with
/// `WEIR.PERIOD key quota period_ms [ALIGN]` when its period is a whole
/// number of milliseconds (and, aligned, one that divides `BASE`, so the
/// module's periods on the Unix clock lie where the handle's lie on the
/// trace's; every quota the handle takes, the module takes). A take's five
/// integers give the handle's answer exactly: item 1 set is over; clear
/// with no units left (item 3) is hit, the take that used the last unit;
/// clear with units left is under. `period_left` is
/// the peek's units left (the whole quota when no period is open, as the
/// handle's), `period_next` the peek's milliseconds until the period ends
/// (item 5, rounded up), except when no period is open ([`NO_PERIOD_OPEN`])
/// or at a time before the latest take ([`BEFORE_LATEST_TAKE`]). The test
/// clock takes nanoseconds, so times need not be whole milliseconds. Negative
/// times and times past what a key holds pass over, as in [`replay_gcra`].
fn replay_period(c: &mut Conn, trace: &Trace, key_base: &str) -> Result<Tally, String> {
    let mut tally = Tally::default();
    let mut counter: Option<(String, String, bool)> = None; // quota, period_ms, align
    let mut in_step = false;
    let mut fresh = 0;
    let mut key = String::new();
    // The handle's clock: the latest time a take was given (every take,
    // refusals included, moves it).
    let mut latest = i64::MIN;
    for call in &trace.calls {
        let fail = |got: String| {
            Err(format!(
                "{}:{}: {} {}: expected {}, got {got}",
                trace.file,
                call.line,
                call.op,
                call.args.join(" "),
                call.outs.join(" ")
            ))
        };
        if call.op == "period_new" {
            latest = i64::MIN;
            // A refused constructor leaves no current counter.
            let (quota, ns, align) = (int(&call.args[0]), int(&call.args[1]), int(&call.args[2]));
            in_step = int(&call.outs[0]) == 0;
            counter = (in_step
                && ns > 0
                && ns % MS == 0
                && ns / MS <= weir_redis::gcra::MAX_SPAN_NS / MS
                && (align == 0 || BASE % ns == 0))
                .then(|| (quota.to_string(), (ns / MS).to_string(), align != 0));
            fresh += 1;
            key = format!("{key_base}.{fresh}");
            continue;
        }
        if call.op == "period_reconfigure" {
            *tally.passed_over.entry(RECONFIGURED).or_default() += 1;
            in_step = false;
            continue;
        }
        let now = int(&call.args[0]);
        let want = int(&call.outs[0]);
        let before_latest = now < latest;
        if call.op == "period_take" {
            latest = latest.max(now);
        }
        // A take that is not over counts a unit: missing it puts the key
        // out of step with the handle.
        let changes = call.op == "period_take" && want != 2;
        let why = if !in_step {
            Some("out of step after a call the module cannot be asked")
        } else if counter.is_none() {
            Some("a period the module does not take (not positive, not whole milliseconds, or past its longest) or aligns elsewhere")
        } else if now < 0 {
            Some("a negative time (a server's clock never is)")
        } else if now > LATEST - weir_redis::gcra::MAX_SPAN_NS {
            Some("a time past what a Redis key holds")
        } else if call.op == "period_next" && want == 0 {
            Some(NO_PERIOD_OPEN)
        } else if call.op == "period_next" && before_latest {
            Some(BEFORE_LATEST_TAKE)
        } else {
            None
        };
        if let Some(why) = why {
            *tally.passed_over.entry(why).or_default() += 1;
            if changes {
                in_step = false;
            }
            continue;
        }
        let (quota, ms, align) = counter.clone().expect("checked above");
        set_now(c, now);
        tally.replayed += 1;
        let command: &[u8] = if call.op == "period_take" {
            b"WEIR.PERIOD"
        } else {
            b"WEIR.PERIOD.PEEK"
        };
        let mut words: Vec<&[u8]> = vec![command, key.as_bytes(), quota.as_bytes(), ms.as_bytes()];
        if align {
            words.push(b"ALIGN");
        }
        let five = c.call(&words).ints();
        let got = match call.op.as_str() {
            // Over, hit (the last unit taken), under.
            "period_take" => match (five[0], five[2]) {
                (1, _) => 2,
                (_, 0) => 1,
                _ => 0,
            },
            "period_left" => five[2],
            "period_next" => five[4],
            other => return fail(format!("unknown operation {other}")),
        };
        let want = if call.op == "period_next" {
            (want - 1) / MS + 1
        } else {
            want
        };
        if got != want {
            return fail(format!("{got} ({five:?})"));
        }
    }
    Ok(tally)
}

/// The skips listed for the face `redis`: file or type, and reason.
fn listed_skips() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join("traces/skips.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut parts = l.splitn(3, ' ');
            let (face, what, why) = (parts.next()?, parts.next()?, parts.next().unwrap_or(""));
            (face == "redis").then(|| (what.to_string(), why.to_string()))
        })
        .collect()
}

#[test]
fn the_release_build_has_no_test_clock() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    let reply = c.cmd("WEIR.TEST.NOW 5");
    assert!(
        reply.is_error() && reply.error().to_lowercase().contains("unknown command"),
        "{reply:?}"
    );
    // Its commands decide on the wall clock: a bucket of one token a
    // thousand seconds, taken twice, refuses the second.
    assert_eq!(c.cmd("WEIR.BUCKET r 0.001 1").ints()[0], 0);
    assert_eq!(c.cmd("WEIR.BUCKET r 0.001 1").ints()[0], 1);
    let _ = module_path();
}

#[test]
fn the_traces_replay_through_the_test_clock() {
    let all = traces();
    assert!(!all.is_empty(), "no traces under traces/");
    let server = Server::start_loading(test_module(), &[]);
    let mut c = server.conn();
    let listed = listed_skips();
    let (mut replayed, mut calls) = (0, 0);
    let mut failures = Vec::new();
    for (i, trace) in all.iter().enumerate() {
        let stem = trace.file.trim_end_matches(".trace");
        let listed_here = listed.contains_key(&trace.file)
            || listed.contains_key(stem)
            || listed.contains_key(&trace.kind);
        if !["gcra", "sliding", "period"].contains(&trace.kind.as_str()) {
            if !listed_here {
                failures.push(format!(
                    "{}: type {} is not replayed, and traces/skips.txt does not list it for redis",
                    trace.file, trace.kind
                ));
            }
            continue;
        }
        let key = format!("t{i}");
        let replay = match trace.kind.as_str() {
            "gcra" => replay_gcra(&mut c, trace, &key),
            "sliding" => replay_sliding(&mut c, trace, &key),
            _ => replay_period(&mut c, trace, &key),
        };
        match replay {
            Err(e) => failures.push(e),
            Ok(tally) => {
                let over: usize = tally.passed_over.values().sum();
                eprintln!(
                    "redis: {}: {} calls replayed, {over} passed over {:?}",
                    trace.file, tally.replayed, tally.passed_over
                );
                if tally.replayed == 0 && !listed_here {
                    failures.push(format!(
                        "{}: no call replays, and traces/skips.txt does not list it for redis",
                        trace.file
                    ));
                }
                if tally.replayed > 0 && listed_here {
                    failures.push(format!("{}: listed as skipped, but replays", trace.file));
                }
                if tally.replayed > 0 {
                    replayed += 1;
                    calls += tally.replayed;
                }
            }
        }
    }
    // The calls passed over for a difference in behaviour are named in
    // traces/skips.txt, word for word.
    let skips = std::fs::read_to_string(root().join("traces/skips.txt")).unwrap_or_default();
    for why in [NO_PERIOD_OPEN, BEFORE_LATEST_TAKE, RECONFIGURED] {
        if !skips.contains(&format!("# redis period: {why}")) {
            failures.push(format!(
                "traces/skips.txt does not name the calls passed over: \"# redis period: {why}\""
            ));
        }
    }
    c.cmd("WEIR.TEST.NOW REAL");
    eprintln!("redis: {replayed} traces replayed ({calls} calls)");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(replayed > 0, "no trace replayed");
}
