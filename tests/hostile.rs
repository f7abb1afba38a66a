//! A hostile sweep of the whole C surface: every `extern "C"` function in
//! include/weir.h, called many thousands of times with the numbers C callers
//! get wrong — INT_MIN/INT_MAX and their neighbours, -1, 0, NaN, ±inf, -0.0,
//! subnormals, huge values, `now` jumping both ways, sizes of 0 and huge,
//! scribbled by-value structs — on handles made from valid and hostile
//! policies, interleaving decisions and settles.
//!
//! Every call runs inside the panic guard, which hides a panic from the
//! caller (a refusal, a status, a poisoned handle). So this file installs a
//! panic hook that counts every panic, and each test asserts the count is
//! still zero: under `cargo test` (debug, overflow checks on) an arithmetic
//! overflow anywhere is a failure here. Alongside, invariants that hold
//! whatever the input: gate held ≥ 0, pool live = idle + busy ≤ size,
//! quota left in [0, quota], bucket tokens finite in [0, burst], breaker
//! ratio in [0, 1), limiter available ≤ capacity, backoff delays ≥ 0,
//! waits ≥ 0, every handle's counts equal to what its answers were (off
//! until started), and no status is ever WEIR_ERR_PANIC or WEIR_ERR_POISONED.
//! Every status a function answers here is one its text in weir.h names
//! (or one the header's conventions give every call: WEIR_OK, WEIR_ERR_NULL,
//! WEIR_ERR_MISALIGNED): so a contract that leaves out a status the code
//! answers fails here, naming the function and the status.
//!
//! Deterministic: each test draws from its own fixed-seed xorshift.

#[path = "../weir-core/tests/support/runner.rs"]
mod runner;

use std::collections::BTreeSet;
use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use weir::atomic::*;
use weir::backoff::*;
use weir::bloom::*;
use weir::breaker::*;
use weir::bucket::*;
use weir::budget::*;
use weir::charge::*;
use weir::concurrency::*;
use weir::counts::*;
use weir::deadline::*;
use weir::gate::*;
use weir::gcra::*;
use weir::keyed::*;
use weir::lease::*;
use weir::limiter::*;
use weir::period::*;
use weir::pool::*;
use weir::rate::*;
use weir::region::*;
use weir::shedder::*;
use weir::sliding::*;
use weir::status::weir_status::{self, *};
use weir::status::*;
use weir::version::*;
use weir::window::*;

// ---------------------------------------------------------------------------
// The panic counter.

static PANICS: AtomicUsize = AtomicUsize::new(0);
static WHERE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
static HOOK: Once = Once::new();

/// Installs (once per test binary) a hook that counts every panic raised
/// outside this file (inside weir) and remembers each distinct location and
/// message. The default hook still prints it.
fn count_panics() {
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // This file's own assertions fail as usual; count the rest.
            let ours = info
                .location()
                .is_some_and(|l| l.file().ends_with("hostile.rs"));
            if ours {
                return default(info);
            }
            PANICS.fetch_add(1, Ordering::SeqCst);
            let at = info
                .location()
                .map_or_else(|| "?".to_string(), |l| format!("{}:{}", l.file(), l.line()));
            let what = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            if let Ok(mut seen) = WHERE.lock() {
                seen.insert(format!("{at}: {what}"));
            }
            default(info);
        }));
    });
}

/// Fails if any panic happened anywhere in this binary so far.
fn assert_no_panics(test: &str) {
    let count = PANICS.load(Ordering::SeqCst);
    let seen = WHERE.lock().map(|s| s.clone()).unwrap_or_default();
    assert_eq!(count, 0, "{test}: {count} panic(s) inside weir: {seen:#?}");
}

/// A status a call may answer: anything but a panic or a poisoned handle,
/// and, when `what` names a function of weir.h, a status its text names
/// (see [`documented`]).
#[track_caller]
fn sane(status: weir_status, what: &str) -> weir_status {
    assert!(
        status != WEIR_ERR_PANIC && status != WEIR_ERR_POISONED,
        "{what} answered {status:?}"
    );
    if let Some(name) = documented(what, status) {
        panic!("{what} answered {name}, which its text in include/weir.h does not name");
    }
    status
}

/// weir.h as the sweep reads it: each status's name by its code, and the
/// text that documents each function (its own comment, those of the
/// structs its declaration takes: a policy's field says what it answers,
/// and those of the functions it cites in backticks: "checked as
/// `weir_bloom_new`").
struct HeaderText {
    names: std::collections::BTreeMap<i32, String>,
    docs: std::collections::BTreeMap<String, String>,
}

fn header_text() -> &'static HeaderText {
    static TEXT: std::sync::OnceLock<HeaderText> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let header = include_str!("../include/weir.h");
        let lines: Vec<&str> = header.lines().collect();
        let mut names = std::collections::BTreeMap::new();
        for line in &lines {
            let item = line.trim().trim_end_matches(',');
            if let Some((name, code)) = item.split_once(" = ") {
                if name.starts_with("WEIR_ERR_") || name == "WEIR_OK" {
                    if let Ok(code) = code.parse::<i32>() {
                        names.insert(code, name.to_owned());
                    }
                }
            }
        }
        // The comment right above line `at` (past `#if` lines).
        let comment_above = |at: usize| -> String {
            let mut text = Vec::new();
            for line in lines[..at].iter().rev() {
                if line.starts_with("#if") {
                    continue;
                }
                match line.strip_prefix("///") {
                    Some(rest) => text.push(rest),
                    None => break,
                }
            }
            text.reverse();
            text.join("\n")
        };
        // Each struct's text: its comment and its body's.
        let mut structs = std::collections::BTreeMap::new();
        for (at, line) in lines.iter().enumerate() {
            if let Some(name) = line.strip_prefix("} ").and_then(|l| l.strip_suffix(';')) {
                let start = lines[..at]
                    .iter()
                    .rposition(|l| l.starts_with("typedef struct"))
                    .unwrap_or(at);
                let body = lines[start..at].join("\n");
                structs.insert(name.to_owned(), format!("{}\n{body}", comment_above(start)));
            }
        }
        // Each function's own comment, and its text with its structs'.
        let mut comments = std::collections::BTreeMap::new();
        let mut docs = std::collections::BTreeMap::new();
        for (at, line) in lines.iter().enumerate() {
            if line.starts_with(['/', ' ', '#', '}']) || line.starts_with("typedef") {
                continue;
            }
            let Some(open) = line.find('(') else { continue };
            let name = line[..open].rsplit([' ', '*']).next().unwrap_or("");
            if !name.starts_with("weir_") {
                continue;
            }
            let end = (at..lines.len())
                .find(|&i| lines[i].ends_with(';'))
                .unwrap_or(at);
            let declaration = lines[at..=end].join(" ");
            let mut text = comment_above(at);
            comments
                .entry(name.to_owned())
                .or_insert_with(|| text.clone());
            for word in declaration.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if let Some(doc) = structs.get(word) {
                    text.push('\n');
                    text.push_str(doc);
                }
            }
            docs.entry(name.to_owned()).or_insert(text);
        }
        // A comment that says "answered as `weir_x`" includes weir_x's text:
        // add the texts of the functions it cites in backticks, and of those
        // their own comments cite in turn (never a struct's mentions).
        let own = docs.clone();
        for (name, text) in docs.iter_mut() {
            let mut seen = BTreeSet::from([name.clone()]);
            let mut queue = vec![name.clone()];
            while let Some(next) = queue.pop() {
                for cited in comments[&next].split('`').skip(1).step_by(2) {
                    let cited = cited.trim_end_matches("()");
                    if let Some(more) = own.get(cited) {
                        if seen.insert(cited.to_owned()) {
                            text.push('\n');
                            text.push_str(more);
                            queue.push(cited.to_owned());
                        }
                    }
                }
            }
        }
        HeaderText { names, docs }
    })
}

/// The status's name when `function` is a function of weir.h whose text
/// does not name it; `None` when it does, or when `what` names no function.
/// The header's conventions cover three for every call: `WEIR_OK`,
/// `WEIR_ERR_NULL` and `WEIR_ERR_MISALIGNED`.
fn documented(function: &str, status: weir_status) -> Option<String> {
    let text = header_text();
    let Some(doc) = text.docs.get(function) else {
        assert!(
            !function.starts_with("weir_"),
            "{function} is not a function of include/weir.h: name the function the sweep called"
        );
        return None;
    };
    let name = text.names.get(&(status as i32))?;
    let general = ["WEIR_OK", "WEIR_ERR_NULL", "WEIR_ERR_MISALIGNED"];
    (!general.contains(&name.as_str()) && !doc.contains(name.as_str())).then(|| name.clone())
}

// ---------------------------------------------------------------------------
// The hostile numbers.

/// A test's fixed seed, mixed with `WEIR_HOSTILE_SEED` when that is set, so
/// that a longer hunt can run the same sweep over other sequences:
/// `WEIR_HOSTILE_SEED=7 cargo test --test hostile`.
fn seed(fixed: u64) -> u64 {
    let extra = std::env::var("WEIR_HOSTILE_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    fixed ^ extra.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// How many rounds a sweep runs, out of its `full` count:
/// `WEIR_HOSTILE_PERCENT` percent of it (at least one round). The default is
/// 100, or 10 when cargo runs the tests through a runner
/// (`CARGO_TARGET_<TRIPLE>_RUNNER`, an emulator such as qemu-aarch64, where
/// the full sweep takes minutes); the sequence of inputs is the same, only
/// shorter.
fn rounds(full: usize) -> usize {
    let emulated = runner::through_a_runner();
    let percent = std::env::var("WEIR_HOSTILE_PERCENT")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(if emulated { 10 } else { 100 });
    (full.saturating_mul(percent) / 100).max(1)
}

/// xorshift64*: small, fast, and the same sequence on every run.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len() as u64) as usize]
    }

    /// INT64_MIN, +1, -1, 0, 1, 2, small, large, INT64_MAX-1, INT64_MAX.
    fn i64(&mut self) -> i64 {
        match self.below(10) {
            0 => i64::MIN,
            1 => i64::MIN + 1,
            2 => -1,
            3 => 0,
            4 => 1,
            5 => 2,
            6 => self.below(2001) as i64 - 1000,
            7 => self.next() as i64,
            8 => i64::MAX - 1,
            _ => i64::MAX,
        }
    }
    fn i32(&mut self) -> i32 {
        match self.below(10) {
            0 => i32::MIN,
            1 => i32::MIN + 1,
            2 => -1,
            3 => 0,
            4 => 1,
            5 => 2,
            6 => self.below(2001) as i32 - 1000,
            7 => self.next() as i32,
            8 => i32::MAX - 1,
            _ => i32::MAX,
        }
    }
    fn u64(&mut self) -> u64 {
        match self.below(8) {
            0 => 0,
            1 => 1,
            2 => 2,
            3 => self.below(1000),
            4 => self.next(),
            5 => u64::MAX - 1,
            6 => u64::MAX,
            _ => 1 << self.below(64),
        }
    }
    fn u32(&mut self) -> u32 {
        match self.below(8) {
            0 => 0,
            1 => 1,
            2 => 2,
            3 => self.below(100) as u32,
            4 => self.next() as u32,
            5 => u32::MAX - 1,
            6 => u32::MAX,
            _ => 1 << self.below(32),
        }
    }
    /// NaN, ±inf, ±0, the smallest subnormal and normal, ±huge, [0, 1),
    /// 1, 1e308, and a random magnitude of either sign.
    fn f64(&mut self) -> f64 {
        match self.below(14) {
            0 => f64::NAN,
            1 => f64::NEG_INFINITY,
            2 => f64::INFINITY,
            3 => -0.0,
            4 => 0.0,
            5 => f64::from_bits(1),
            6 => f64::MIN_POSITIVE,
            7 => 1e300,
            8 => -1e300,
            9 => self.unit(),
            10 => 1.0,
            11 => 1e308,
            12 => f64::MAX,
            _ => {
                let m = self.unit() * 10f64.powi(self.below(40) as i32 - 20);
                if self.one_in(2) {
                    -m
                } else {
                    m
                }
            }
        }
    }
    /// A positive duration (1 ns to ~1000 s, or a large fraction of the
    /// clock's range), so that many constructions succeed and the handles
    /// then see hostile calls.
    fn span(&mut self) -> i64 {
        match self.below(5) {
            0 => 1 + self.below(1000) as i64,
            1 => 1 + self.below(1_000_000) as i64,
            2 => 1 + self.below(1_000_000_000) as i64,
            3 => 1 + self.below(1_000_000_000_000) as i64,
            _ => i64::MAX / (2 + self.below(1000) as i64),
        }
    }
    /// A duration: mostly plausible, sometimes hostile.
    fn duration(&mut self) -> i64 {
        if self.one_in(3) {
            self.i64()
        } else {
            self.span()
        }
    }
    /// A double draw: mostly in [0, 1), sometimes hostile.
    fn draw(&mut self) -> f64 {
        if self.one_in(3) {
            self.f64()
        } else {
            self.unit()
        }
    }
    /// Random bytes of a random length: up to 64, now and then up to 4 KiB.
    fn key(&mut self) -> Vec<u8> {
        let len = if self.one_in(50) {
            self.below(4097)
        } else {
            self.below(65)
        } as usize;
        (0..len).map(|_| self.next() as u8).collect()
    }
}

/// A caller's clock that mostly runs forwards, sometimes jumps backwards,
/// and sometimes reads a hostile value outright.
struct Clock {
    now: i64,
}

impl Clock {
    /// Starts anywhere: a hostile value, or a plausible distance from zero
    /// or from either end of the clock.
    fn new(rng: &mut Rng) -> Self {
        let now = match rng.below(5) {
            0 | 1 => rng.i64(),
            2 => i64::MAX - rng.span(),
            3 => i64::MIN + rng.span(),
            _ => rng.span(),
        };
        Clock { now }
    }
    fn tick(&mut self, rng: &mut Rng) -> i64 {
        match rng.below(12) {
            0 => self.now = rng.i64(),
            1 => self.now = self.now.saturating_sub(rng.span()),
            2 => self.now = self.now.saturating_sub(rng.next() as i64 & i64::MAX),
            3 => self.now = self.now.saturating_add(rng.next() as i64 & i64::MAX),
            4 => return rng.i64(),
            5 => {}
            _ => self.now = self.now.saturating_add(rng.span() / 1000),
        }
        self.now
    }
}

/// `value` unless it lies in `(cap, huge)`, where it would make a real but
/// costly allocation; then a small stand-in. Values past `huge` stay, for
/// the constructors to refuse.
fn tame(value: i64, cap: i64, huge: i64, rng: &mut Rng) -> i64 {
    if value > cap && value < huge {
        1 + rng.below(cap as u64) as i64
    } else {
        value
    }
}

/// A pointer one byte past an aligned one: misaligned for anything wider.
fn misaligned<T>(buffer: &mut [u64; 8]) -> *mut T {
    (buffer.as_mut_ptr() as *mut u8).wrapping_add(1) as *mut T
}

fn key_ptr(key: &[u8], rng: &mut Rng) -> *const c_void {
    if rng.one_in(50) {
        null()
    } else {
        key.as_ptr() as *const c_void
    }
}

// ---------------------------------------------------------------------------
// Plain functions and by-value structs.

#[test]
fn status_and_version_answer_every_code() {
    count_panics();
    let mut rng = Rng::new(seed(0x5ea7));
    for _ in 0..rounds(100_000) {
        let code = rng.i32();
        let text = weir_status_str(code);
        assert!(!text.is_null());
        // SAFETY: weir_status_str returns a static NUL-terminated string.
        let text = unsafe { CStr::from_ptr(text) };
        assert!(!text.to_bytes().is_empty());
    }
    for code in -10..1000 {
        let text = weir_status_str(code);
        // SAFETY: as above.
        assert!(!unsafe { CStr::from_ptr(text) }.to_bytes().is_empty());
    }
    // SAFETY: weir_version returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(weir_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    // Every host this suite runs on has lock-free 64-bit words.
    assert_eq!(weir_words_shareable(), WEIR_OK);
    assert_no_panics("status");
}

fn hostile_backoff(rng: &mut Rng) -> weir_backoff {
    let mut policy = if rng.one_in(2) {
        weir_backoff_preset()
    } else {
        weir_backoff_full_jitter()
    };
    if rng.one_in(2) {
        policy.jitter = rng.below(5) as i32;
        policy.attempts = 1 + rng.below(20) as i32;
        policy.base_ns = rng.span();
        policy.cap_ns = rng.span();
        policy.factor = 1.0 + rng.unit() * 4.0;
        policy.spread = rng.unit();
    }
    for _ in 0..rng.below(4) {
        match rng.below(6) {
            0 => policy.base_ns = rng.i64(),
            1 => policy.factor = rng.f64(),
            2 => policy.cap_ns = rng.i64(),
            3 => policy.attempts = rng.i32(),
            4 => policy.jitter = rng.i32(),
            _ => policy.spread = rng.f64(),
        }
    }
    policy
}

#[test]
fn backoff_never_panics_and_never_waits_negative() {
    count_panics();
    let mut rng = Rng::new(seed(0xbac0ff));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..rounds(100_000) {
        let policy = hostile_backoff(&mut rng);
        let ptr: *const weir_backoff = match rng.below(20) {
            0 => null(),
            1 => misaligned(&mut odd),
            _ => &policy,
        };
        let valid = ptr.is_null() || std::ptr::eq(ptr, &policy);
        let status = sane(weir_backoff_check(ptr), "weir_backoff_check");
        let ok = status == WEIR_OK;
        let cap = if ptr.is_null() {
            weir_backoff_preset().cap_ns
        } else {
            policy.cap_ns
        };
        let jitter = if ptr.is_null() {
            weir_backoff_preset().jitter
        } else {
            policy.jitter
        };
        for _ in 0..4 {
            let retry = if rng.one_in(2) {
                rng.i32()
            } else {
                rng.below(80) as i32
            };
            let ceiling = weir_backoff_ceiling(ptr, retry);
            let delay = weir_backoff_delay(ptr, retry, rng.draw(), rng.i64());
            let more = weir_backoff_more(ptr, rng.i32());
            calls += 3;
            if ok {
                assert!(ceiling >= 0, "{policy:?} retry {retry}: ceiling {ceiling}");
                assert!(
                    ceiling <= cap,
                    "{policy:?} retry {retry}: ceiling {ceiling}"
                );
                assert!(delay >= 0, "{policy:?} retry {retry}: delay {delay}");
                if retry <= 0 {
                    assert_eq!((ceiling, delay), (0, 0));
                }
                if jitter != WEIR_BACKOFF_JITTER_SPREAD {
                    assert!(delay <= cap, "{policy:?} retry {retry}: delay {delay}");
                }
            } else if valid {
                assert_eq!((ceiling, delay), (-1, -1), "{policy:?} ({status:?})");
                assert!(!more);
            } else {
                // A misaligned policy: the neutral answers.
                assert!(ceiling <= 0 && delay <= 0 && !more);
            }
        }
        if ok {
            // The ceiling never falls as retries grow.
            let start = if rng.one_in(2) {
                rng.below(100) as i32
            } else {
                rng.i32().max(0)
            };
            let mut last = weir_backoff_ceiling(ptr, start);
            for retry in start.saturating_add(1)..=start.saturating_add(8) {
                let ceiling = weir_backoff_ceiling(ptr, retry);
                assert!(
                    ceiling >= last,
                    "{policy:?}: ceiling({retry}) {ceiling} < {last}"
                );
                last = ceiling;
            }
            calls += 9;
        }
        let randoms: Vec<f64> = (0..rng.below(8)).map(|_| rng.draw()).collect();
        let mut out = [0i64; 32];
        let room = rng.pick(&[0usize, 1, 5, 32]);
        let randoms_ptr = if rng.one_in(10) {
            null()
        } else {
            randoms.as_ptr()
        };
        let randoms_len = if randoms_ptr.is_null() {
            rng.u64() as usize
        } else {
            rng.below(randoms.len() as u64 + 1) as usize
        };
        let out_ptr = if rng.one_in(10) {
            null_mut()
        } else {
            out.as_mut_ptr()
        };
        let wrote = weir_backoff_schedule(ptr, randoms_ptr, randoms_len, out_ptr, room);
        assert_eq!(
            weir_backoff_schedule(ptr, randoms_ptr, randoms_len, null_mut(), usize::MAX),
            0
        );
        calls += 2;
        assert!(wrote <= room);
        if !ok {
            assert_eq!(wrote, 0);
        }
        assert!(out[..wrote].iter().all(|&d| d >= 0), "{policy:?}: {out:?}");
    }
    eprintln!("backoff: {calls} calls");
    assert_no_panics("backoff");
}

#[test]
fn deadline_never_panics_and_remaining_stays_in_the_budget() {
    count_panics();
    let mut rng = Rng::new(seed(0xdead));
    let mut odd = [0u64; 8];
    for _ in 0..rounds(250_000) {
        let mut deadline = weir_deadline_start(rng.i64(), rng.i64());
        if rng.one_in(3) {
            deadline.start = rng.i64();
        }
        let now = rng.i64();
        let ptr: *const weir_deadline = match rng.below(20) {
            0 => null(),
            1 => misaligned(&mut odd),
            _ => &deadline,
        };
        let expired = weir_deadline_expired(ptr, now);
        let mut left = -7;
        let has = weir_deadline_remaining(ptr, now, &mut left);
        if !std::ptr::eq(ptr, &deadline) {
            assert!(expired && !has);
            continue;
        }
        if deadline.budget_ns <= 0 {
            assert!(!expired && !has && left == -7, "{deadline:?} at {now}");
        } else {
            assert!(has, "{deadline:?} at {now}");
            assert!(
                (0..=deadline.budget_ns).contains(&left),
                "{deadline:?} at {now}: {left}"
            );
            assert_eq!(expired, left == 0, "{deadline:?} at {now}");
        }
        let mut spare = [0u64; 8];
        assert!(!weir_deadline_remaining(ptr, now, misaligned(&mut spare)));
        assert!(!weir_deadline_remaining(ptr, now, null_mut()));
    }
    assert_no_panics("deadline");
}

/// Builds a limiter from hostile arguments through one of the three
/// constructors; `None` when the constructor refused.
fn hostile_limiter(rng: &mut Rng) -> Option<weir_limiter> {
    let mut out = weir_limiter_preset_for_tests();
    let now = rng.i64();
    let anchor = if rng.one_in(2) {
        now.saturating_sub(rng.span())
    } else {
        rng.i64()
    };
    let capacity = rng.u64();
    let initial = if rng.one_in(2) {
        rng.u64()
    } else {
        rng.below(capacity.saturating_add(1))
    };
    let period = rng.duration();
    let (status, function) = match rng.below(3) {
        0 => (
            weir_limiter_bucket(&mut out, capacity, rng.u64(), period, anchor, initial, now),
            "weir_limiter_bucket",
        ),
        1 => (
            weir_limiter_fixed_window(&mut out, capacity, period, anchor, initial, now),
            "weir_limiter_fixed_window",
        ),
        _ => (
            weir_limiter_cooldown(&mut out, capacity, period, anchor, initial, now),
            "weir_limiter_cooldown",
        ),
    };
    (sane(status, function) == WEIR_OK).then_some(out)
}

/// A valid limiter to start from (constructors only write on success).
fn weir_limiter_preset_for_tests() -> weir_limiter {
    let mut out = std::mem::MaybeUninit::<weir_limiter>::zeroed();
    assert_eq!(
        weir_limiter_bucket(out.as_mut_ptr(), 10, 1, 1000, 0, 10, 0),
        WEIR_OK
    );
    // SAFETY: the constructor answered WEIR_OK, so it wrote the value.
    unsafe { out.assume_init() }
}

#[test]
fn limiter_never_panics_and_available_stays_under_capacity() {
    count_panics();
    let mut rng = Rng::new(seed(0x11b17e5));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..rounds(30_000) {
        let Some(mut limiter) = hostile_limiter(&mut rng) else {
            calls += 1;
            continue;
        };
        if rng.one_in(4) {
            // Scribble over the private fields (the tag included now and
            // then): every call must check the value, not trust it.
            // SAFETY: weir_limiter is 48 bytes of plain integers, aligned
            // as a u64 (pinned by static assertions in src/limiter.rs).
            let words = unsafe { &mut *(&mut limiter as *mut weir_limiter as *mut [u64; 6]) };
            let at = if rng.one_in(8) { 0 } else { 1 + rng.below(5) } as usize;
            words[at] = rng.u64();
        }
        let mut clock = Clock::new(&mut rng);
        for _ in 0..20 {
            let now = clock.tick(&mut rng);
            let ptr: *mut weir_limiter = match rng.below(40) {
                0 => null_mut(),
                1 => misaligned(&mut odd),
                _ => &mut limiter,
            };
            let before = weir_limiter_available(ptr, now);
            let amount = if rng.one_in(2) {
                rng.u64()
            } else {
                rng.below(before.saturating_add(2))
            };
            let status = if rng.one_in(2) {
                if weir_limiter_try_consume(ptr, now, amount) {
                    WEIR_OK
                } else {
                    WEIR_ERR_LIMITER_RATE_LIMITED
                }
            } else {
                sane(
                    weir_limiter_consume(ptr, now, amount),
                    "weir_limiter_consume",
                )
            };
            let capacity = weir_limiter_capacity(ptr);
            let available = weir_limiter_available(ptr, now);
            assert!(available <= capacity, "{limiter:?} at {now}: {available}");
            let at = format!("{limiter:?} at {now}: {amount} of {before} -> {status:?}");
            if status == WEIR_OK {
                // A grant takes exactly what was asked, from what was there.
                assert!(amount >= 1 && amount <= before, "{at}");
                assert_eq!(available, before - amount, "{at}");
            } else {
                assert_eq!(available, before, "{at}: a refusal changed the units");
                // Only a cooldown may refuse what is there: when the gate
                // its last unit would arm does not fit in an int64_t.
                if amount >= 1 && amount <= before {
                    let cooldown = weir_limiter_is_cooldown(ptr) && amount == before;
                    assert!(cooldown, "{at}: refused what was available");
                    assert!(
                        status == WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW
                            || status == WEIR_ERR_LIMITER_RATE_LIMITED,
                        "{at}"
                    );
                }
            }
            let kinds = [
                weir_limiter_is_bucket(ptr),
                weir_limiter_is_fixed_window(ptr),
                weir_limiter_is_cooldown(ptr),
            ];
            assert!(kinds.iter().filter(|&&k| k).count() <= 1);
            let (mut u, mut i) = (0u64, 0i64);
            let statuses = [
                (
                    weir_limiter_refill_amount(ptr, &mut u),
                    "weir_limiter_refill_amount",
                ),
                (
                    weir_limiter_refill_interval_ns(ptr, &mut i),
                    "weir_limiter_refill_interval_ns",
                ),
                (
                    weir_limiter_last_refill(ptr, now, &mut i),
                    "weir_limiter_last_refill",
                ),
                (
                    weir_limiter_window_ns(ptr, &mut i),
                    "weir_limiter_window_ns",
                ),
                (
                    weir_limiter_window_start(ptr, now, &mut i),
                    "weir_limiter_window_start",
                ),
                (
                    weir_limiter_cooldown_ns(ptr, &mut i),
                    "weir_limiter_cooldown_ns",
                ),
                (
                    weir_limiter_cooldown_end(ptr, &mut i),
                    "weir_limiter_cooldown_end",
                ),
                (
                    weir_limiter_refill_amount(ptr, misaligned(&mut odd)),
                    "weir_limiter_refill_amount",
                ),
                (
                    weir_limiter_last_refill(ptr, now, null_mut()),
                    "weir_limiter_last_refill",
                ),
            ];
            for (status, function) in statuses {
                sane(status, function);
            }
            calls += 16;
        }
    }
    eprintln!("limiter: {calls} calls");
    assert_no_panics("limiter");
}

fn hostile_rate_limit(rng: &mut Rng) -> weir_rate_limit {
    let mut limit = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    let (per_s, burst) = if rng.one_in(2) {
        (rng.unit() * 1e4 + 1e-3, 1 + rng.below(1023) as i64)
    } else {
        (rng.f64(), rng.i64())
    };
    let status = sane(
        weir_rate_limit_new(per_s, burst, &mut limit),
        "weir_rate_limit_new",
    );
    if status != WEIR_OK || rng.one_in(8) {
        match rng.below(3) {
            0 => limit.interval_ns = rng.u64(),
            1 => limit.interval_frac = rng.u32(),
            _ => limit.burst = rng.u32(),
        }
    }
    limit
}

#[test]
fn rate_word_never_panics_and_next_agrees_with_allow() {
    count_panics();
    let mut rng = Rng::new(seed(0x4a7e));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..rounds(20_000) {
        let limit = hostile_rate_limit(&mut rng);
        let mut rate = weir_rate { state: 0 };
        if rng.one_in(4) {
            rate.state = rng.u64();
        }
        let mut clock = Clock::new(&mut rng);
        if rng.one_in(2) {
            clock.now = clock.now.saturating_abs();
        }
        for _ in 0..30 {
            let now = clock.tick(&mut rng);
            let limit_ptr: *const weir_rate_limit = if rng.one_in(40) { null() } else { &limit };
            let rate_ptr: *mut weir_rate = match rng.below(40) {
                0 => null_mut(),
                1 => misaligned(&mut odd),
                _ => &mut rate,
            };
            let next = weir_rate_next(rate_ptr, limit_ptr, now);
            let allowed = weir_rate_allow(rate_ptr, limit_ptr, now);
            calls += 2;
            assert!(
                next >= 0,
                "{limit:?} {:#x} at {now}: next {next}",
                rate.state
            );
            if now < 0 {
                assert!(!allowed && next == i64::MAX);
            }
            if next == 0 {
                assert!(
                    allowed,
                    "{limit:?} {:#x} at {now}: next 0 but refused",
                    rate.state
                );
            }
        }
    }
    eprintln!("rate: {calls} calls");
    assert_no_panics("rate");
}

fn hostile_gcra_limit(rng: &mut Rng) -> weir_gcra_limit {
    let mut limit = weir_gcra_limit {
        per_token: 0,
        tolerance: 0,
        shift: 0,
        reserved: 0,
    };
    let (per_s, burst) = if rng.one_in(2) {
        (rng.unit() * 1e9 + 1e-3, 1 + rng.below(10_000) as i64)
    } else {
        (rng.f64(), rng.i64())
    };
    let status = sane(
        weir_gcra_limit_new(per_s, burst, &mut limit),
        "weir_gcra_limit_new",
    );
    if status != WEIR_OK || rng.one_in(8) {
        match rng.below(4) {
            0 => limit.per_token = rng.u64(),
            1 => limit.tolerance = rng.i64(),
            2 => limit.shift = rng.u32(),
            _ => limit.reserved = rng.u32(),
        }
    }
    limit
}

#[test]
fn gcra_word_never_panics_and_next_agrees_with_allow() {
    count_panics();
    let mut rng = Rng::new(seed(0x6c4a));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..20_000 {
        let limit = hostile_gcra_limit(&mut rng);
        let mut gcra = weir_gcra { state: 0 };
        if rng.one_in(4) {
            gcra.state = rng.u64();
        }
        let mut clock = Clock::new(&mut rng);
        if rng.one_in(2) {
            clock.now = clock.now.saturating_abs();
        }
        for _ in 0..30 {
            let now = clock.tick(&mut rng);
            let limit_ptr: *const weir_gcra_limit = if rng.one_in(40) { null() } else { &limit };
            let gcra_ptr: *mut weir_gcra = match rng.below(40) {
                0 => null_mut(),
                1 => misaligned(&mut odd),
                _ => &mut gcra,
            };
            let next = weir_gcra_next(gcra_ptr, limit_ptr, now);
            let room = weir_gcra_room(gcra_ptr, limit_ptr, now);
            let before = gcra.state;
            let n = if rng.one_in(4) {
                rng.i64()
            } else {
                1 + rng.below(3) as i64
            };
            let many = weir_gcra_allow_n(gcra_ptr, limit_ptr, now, n);
            if !many {
                assert_eq!(gcra.state, before, "a refused allow_n wrote");
            }
            let allowed = !many && weir_gcra_allow(gcra_ptr, limit_ptr, now);
            calls += 4;
            assert!(
                next >= 0 && room >= 0,
                "{limit:?} {:#x} at {now}: next {next}",
                gcra.state
            );
            if now < 0 {
                assert!(!allowed && !many && next == i64::MAX && room == 0);
            }
            if next == 0 && !many {
                assert!(
                    allowed,
                    "{limit:?} {:#x} at {now}: next 0 but refused",
                    gcra.state
                );
            }
        }
    }
    eprintln!("gcra: {calls} calls");
    assert_no_panics("gcra");
}

// ---------------------------------------------------------------------------
// Bloom arrays: on the heap and in caller memory.

/// A 64-byte aligned line, as a bloom region needs.
#[repr(C, align(64))]
struct Line64([u64; 8]);

impl Line64 {
    /// `words` words of `lines`, starting `shift` words past its start.
    fn words(lines: &mut [Line64], shift: usize, words: usize) -> &mut [u64] {
        let len = lines.len() * 8;
        // SAFETY: a Line64 is 8 u64s with no padding, so the lines are
        // `len` contiguous, initialised u64s, borrowed mutably here.
        let all = unsafe { std::slice::from_raw_parts_mut(lines.as_mut_ptr().cast::<u64>(), len) };
        &mut all[shift..shift + words]
    }
}

#[test]
fn bloom_never_panics_on_the_heap() {
    count_panics();
    let mut rng = Rng::new(seed(0xb100));
    let mut calls = 0u64;
    for _ in 0..rounds(15_000) {
        let limit = hostile_rate_limit(&mut rng);
        // size_log2 from 13 to 32 would allocate up to 32 GiB: keep it small,
        // or past the maximum for the constructor to refuse.
        let mut size_log2 = if rng.one_in(3) {
            rng.u32()
        } else {
            rng.below(13) as u32
        };
        if (13..=WEIR_BLOOM_MAX_SIZE_LOG2).contains(&size_log2) {
            size_log2 = rng.below(13) as u32;
        }
        let hashes = if rng.one_in(3) {
            rng.u32()
        } else {
            1 + rng.below(8) as u32
        };
        let limit_ptr: *const weir_rate_limit = if rng.one_in(20) { null() } else { &limit };
        let gcra = hostile_gcra_limit(&mut rng);
        let gcra_ptr: *const weir_gcra_limit = if rng.one_in(20) { null() } else { &gcra };
        let mut bloom = null_mut();
        // Either word kind.
        let status = if rng.one_in(2) {
            sane(
                weir_bloom_new_gcra(
                    size_log2,
                    hashes,
                    gcra_ptr,
                    rng.next(),
                    rng.next(),
                    &mut bloom,
                ),
                "weir_bloom_new_gcra",
            )
        } else {
            sane(
                weir_bloom_new(
                    size_log2,
                    hashes,
                    limit_ptr,
                    rng.next(),
                    rng.next(),
                    &mut bloom,
                ),
                "weir_bloom_new",
            )
        };
        calls += 2;
        weir_bloom_footprint(rng.u32());
        if status != WEIR_OK {
            assert!(bloom.is_null());
            continue;
        }
        let mut clock = Clock::new(&mut rng);
        let keys: Vec<Vec<u8>> = (0..4).map(|_| rng.key()).collect();
        for _ in 0..40 {
            if rng.one_in(8) {
                // A new limit of either kind, hostile or NULL: the array's
                // kind takes it or refuses it with a status, never a panic.
                let status = if rng.one_in(2) {
                    let gcra = hostile_gcra_limit(&mut rng);
                    let ptr: *const weir_gcra_limit = if rng.one_in(20) { null() } else { &gcra };
                    sane(
                        weir_bloom_reconfigure_gcra(bloom, ptr),
                        "weir_bloom_reconfigure_gcra",
                    )
                } else {
                    let limit = hostile_rate_limit(&mut rng);
                    let ptr: *const weir_rate_limit = if rng.one_in(20) { null() } else { &limit };
                    sane(weir_bloom_reconfigure(bloom, ptr), "weir_bloom_reconfigure")
                };
                assert_ne!(status, WEIR_ERR_PANIC);
                calls += 1;
            }
            let now = clock.tick(&mut rng);
            let key = &keys[rng.below(4) as usize];
            let k = key_ptr(key, &mut rng);
            let next = weir_bloom_next(bloom, now, k, key.len());
            let allowed = weir_bloom_allow(bloom, now, k, key.len());
            calls += 2;
            assert!(next >= 0);
            if now < 0 || k.is_null() {
                assert!(!allowed && next == i64::MAX);
            } else if next == 0 {
                assert!(allowed, "bloom: next 0 at {now} but refused");
            }
        }
        weir_bloom_free(bloom);
    }
    assert_eq!(weir_bloom_reconfigure(null_mut(), null()), WEIR_ERR_NULL);
    assert_eq!(
        weir_bloom_reconfigure_gcra(null_mut(), null()),
        WEIR_ERR_NULL
    );
    eprintln!("bloom: {calls} calls");
    assert_no_panics("bloom");
}

#[test]
fn bloom_never_panics_in_caller_memory() {
    count_panics();
    let mut rng = Rng::new(seed(0xb1001));
    let mut calls = 0u64;
    for _ in 0..rounds(7_500) {
        let size_log2 = rng.below(10) as u32;
        let footprint = weir_bloom_footprint(size_log2);
        if size_log2 < WEIR_BLOOM_MIN_SIZE_LOG2 {
            assert_eq!(footprint, 0);
            continue;
        }
        assert_eq!(footprint, WEIR_BLOOM_HEADER_BYTES + (8 << size_log2));
        // 64-byte aligned lines, or (one time in eight) 8 bytes past one.
        let shift = if rng.one_in(8) { 1 } else { 0 };
        let words = footprint / 8 + rng.below(3) as usize;
        let mut lines: Vec<Line64> = (0..words / 8 + 2).map(|_| Line64([0; 8])).collect();
        let region = Line64::words(&mut lines, shift, words);
        let bytes = words * 8;
        // Lengths the region really has, or past PTRDIFF_MAX (refused).
        let len = |rng: &mut Rng| match rng.below(8) {
            0 => 0,
            1 => 1,
            2 => WEIR_BLOOM_HEADER_BYTES - 1,
            3 => WEIR_BLOOM_HEADER_BYTES,
            4 => footprint - 1,
            5 => footprint,
            6 => bytes,
            _ => usize::MAX - rng.below(2) as usize,
        };
        let init_len = len(&mut rng);
        let limit = hostile_rate_limit(&mut rng);
        let hashes = if rng.one_in(3) {
            rng.u32()
        } else {
            1 + rng.below(8) as u32
        };
        let shape = if rng.one_in(4) { rng.u32() } else { size_log2 };
        let gcra = hostile_gcra_limit(&mut rng);
        let mem = region.as_mut_ptr() as *mut c_void;
        let status = if rng.one_in(2) {
            sane(
                weir_bloom_init_gcra_in(
                    mem,
                    init_len,
                    shape,
                    hashes,
                    &gcra,
                    rng.next(),
                    rng.next(),
                ),
                "weir_bloom_init_gcra_in",
            )
        } else {
            sane(
                weir_bloom_init_in(mem, init_len, shape, hashes, &limit, rng.next(), rng.next()),
                "weir_bloom_init_in",
            )
        };
        if shift == 1 {
            assert_ne!(status, WEIR_OK, "a region 8 bytes past a line was laid");
        }
        let mut misaligned_region = [0u64; 8];
        sane(
            weir_bloom_init_in(misaligned(&mut misaligned_region), 63, 0, 1, &limit, 1, 2),
            "weir_bloom_init_in",
        );
        calls += 2;
        if status == WEIR_OK && rng.one_in(3) {
            // Scribble over the header or the words.
            let at = rng.below(words as u64) as usize;
            region[at] = rng.u64();
        }
        let mut clock = Clock::new(&mut rng);
        for _ in 0..20 {
            let now = clock.tick(&mut rng);
            let key = rng.key();
            let k = key_ptr(&key, &mut rng);
            let l = len(&mut rng);
            let mem = region.as_mut_ptr() as *mut c_void;
            let checked = sane(weir_bloom_check_in(mem, l), "weir_bloom_check_in");
            let next = weir_bloom_next_in(mem, l, now, k, key.len());
            let allowed = weir_bloom_allow_in(mem, l, now, k, key.len());
            calls += 3;
            assert!(next >= 0);
            if checked != WEIR_OK || now < 0 || k.is_null() {
                assert!(!allowed && next == i64::MAX, "{checked:?} at {now}");
            } else if next == 0 {
                assert!(allowed, "bloom region: next 0 at {now} but refused");
            }
        }
    }
    eprintln!("bloom region: {calls} calls");
    assert_no_panics("bloom region");
}

// ---------------------------------------------------------------------------
// All or nothing over several limits.

/// A hostile cost: mostly a small whole number, sometimes a fraction, any
/// double now and then.
fn hostile_cost(rng: &mut Rng) -> f64 {
    match rng.below(8) {
        0 => rng.f64(),
        1 => rng.unit() * 4.0,
        2 => rng.i64() as f64,
        _ => 1.0 + rng.below(3) as f64,
    }
}

#[test]
fn charge_never_panics_and_a_refusal_changes_nothing() {
    count_panics();
    let mut rng = Rng::new(seed(0xc4a2e));
    let (mut calls, mut admitted, mut refused, mut errors) = (0u64, 0u64, 0u64, 0u64);
    let mut odd = [0u64; 8];
    for _ in 0..rounds(6_000) {
        let gcra_limits = [hostile_gcra_limit(&mut rng), hostile_gcra_limit(&mut rng)];
        let rate_limits = [hostile_rate_limit(&mut rng), hostile_rate_limit(&mut rng)];
        let mut gcras = [weir_gcra { state: 0 }, weir_gcra { state: 0 }];
        let mut rates = [weir_rate { state: 0 }, weir_rate { state: 0 }];
        for w in &mut gcras {
            if rng.one_in(6) {
                w.state = rng.u64();
            }
        }
        let mut clock = Clock::new(&mut rng);
        let mut bucket = null_mut();
        let _ = weir_bucket_new(
            rng.unit() * 100.0,
            rng.unit() * 10.0,
            clock.now,
            &mut bucket,
        );
        let mut bloom = null_mut();
        let seed0 = rng.next();
        let _ = weir_bloom_new(
            5,
            1 + rng.below(3) as u32,
            &rate_limits[0],
            seed0,
            9,
            &mut bloom,
        );
        // A region laid for the gcra kind (if its limit is valid), or not.
        let mut lines: Vec<Line64> = (0..6).map(|_| Line64([0; 8])).collect();
        let footprint = weir_bloom_footprint(5);
        let region = Line64::words(&mut lines, 0, footprint / 8);
        let mem = region.as_mut_ptr() as *mut c_void;
        let _ = weir_bloom_init_gcra_in(mem, footprint, 5, 2, &gcra_limits[1], 3, 4);
        if rng.one_in(8) {
            let at = rng.below((footprint / 8) as u64) as usize;
            region[at] = rng.u64();
        }
        let keys: Vec<Vec<u8>> = (0..3).map(|_| rng.key()).collect();
        for _ in 0..20 {
            let now = clock.tick(&mut rng);
            let n = if rng.one_in(10) {
                rng.below(WEIR_CHARGE_MAX_ITEMS as u64 + 3) as usize
            } else {
                rng.below(5) as usize
            };
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                let kind = if rng.one_in(20) {
                    rng.u32()
                } else {
                    1 + rng.below(5) as u32
                };
                let which = rng.below(2) as usize;
                let key = &keys[rng.below(3) as usize];
                let mut item = weir_charge_item {
                    kind,
                    reserved: if rng.one_in(30) { rng.u32() } else { 0 },
                    target: null_mut(),
                    target_len: 0,
                    limit: null(),
                    key: key_ptr(key, &mut rng),
                    key_len: key.len(),
                    cost: hostile_cost(&mut rng),
                };
                match kind {
                    WEIR_CHARGE_GCRA => {
                        item.target = (&mut gcras[which] as *mut weir_gcra).cast();
                        item.limit = (&gcra_limits[which] as *const weir_gcra_limit).cast();
                    }
                    WEIR_CHARGE_RATE => {
                        item.target = (&mut rates[which] as *mut weir_rate).cast();
                        item.limit = (&rate_limits[which] as *const weir_rate_limit).cast();
                    }
                    WEIR_CHARGE_BUCKET => item.target = bucket.cast(),
                    WEIR_CHARGE_BLOOM => item.target = bloom.cast(),
                    WEIR_CHARGE_BLOOM_IN => {
                        item.target = mem;
                        item.target_len = match rng.below(6) {
                            0 => 0,
                            1 => usize::MAX,
                            2 => footprint - 1,
                            _ => footprint,
                        };
                        // The caller's limit in place of the header's, at
                        // times (either of the sweep's GCRA limits: the
                        // region's own, or one that may be out of range).
                        if rng.one_in(3) {
                            item.limit = (&gcra_limits[which] as *const weir_gcra_limit).cast();
                        }
                    }
                    _ => item.target = (&mut gcras[which] as *mut weir_gcra).cast(),
                }
                // Words only: a NULL or misaligned target, a NULL limit (a
                // handle's pointer must be one, or NULL).
                match rng.below(40) {
                    0 => item.target = null_mut(),
                    1 if matches!(
                        kind,
                        WEIR_CHARGE_GCRA | WEIR_CHARGE_RATE | WEIR_CHARGE_BLOOM_IN
                    ) =>
                    {
                        item.target = misaligned::<u64>(&mut odd).cast()
                    }
                    2 => item.limit = null(),
                    _ => {}
                }
                items.push(item);
            }
            let items_ptr = match rng.below(30) {
                0 => null(),
                _ => items.as_ptr(),
            };
            let snapshot = |gcras: &[weir_gcra; 2], rates: &[weir_rate; 2], region: &[u64]| {
                let mut all: Vec<u64> = gcras.iter().map(|w| w.state).collect();
                all.extend(rates.iter().map(|w| w.state));
                all.extend_from_slice(region);
                all.push(weir_bucket_tokens(bucket, now).to_bits());
                all.push(
                    weir_bloom_next(bloom, now, keys[0].as_ptr().cast(), keys[0].len()) as u64,
                );
                all
            };
            let before = snapshot(&gcras, &rates, region);
            let mut out = weir_charge_result {
                wait: -7,
                index: 7,
                kept: 7,
                admitted: false,
            };
            let out_ptr: *mut weir_charge_result =
                if rng.one_in(40) { null_mut() } else { &mut out };
            let status = sane(
                weir_charge_all(items_ptr, n, now, out_ptr),
                "weir_charge_all",
            );
            calls += 1;
            let after = snapshot(&gcras, &rates, region);
            if status != WEIR_OK {
                errors += 1;
                assert_eq!(before, after, "an error charged: {status:?}");
                if !out_ptr.is_null() {
                    assert!(!out.admitted && (out.index as usize) <= n);
                }
                continue;
            }
            assert!(!out_ptr.is_null());
            if out.admitted {
                admitted += 1;
                assert_eq!((out.index as usize, out.wait, out.kept), (n, 0, 0));
            } else {
                refused += 1;
                assert!((out.index as usize) < n && out.wait >= 0, "{out:?}");
                // One thread: nothing raced, so a refusal changes nothing.
                assert_eq!(out.kept, 0);
                assert_eq!(before, after, "a refusal charged: {out:?}");
                // Words and bloom keys hold no time before zero (a bucket's
                // clock starts where it was made).
                if now < 0 && items[out.index as usize].kind != WEIR_CHARGE_BUCKET {
                    assert_eq!(out.wait, i64::MAX);
                }
            }
        }
        weir_bucket_free(bucket);
        weir_bloom_free(bloom);
    }
    eprintln!("charge: {calls} calls, {admitted} admitted, {refused} refused, {errors} errors");
    assert!(admitted > 0 && refused > 0 && errors > 0);
    assert_no_panics("charge");
}

// ---------------------------------------------------------------------------
// Handles.

#[test]
fn gate_never_panics_and_held_stays_in_range() {
    count_panics();
    let mut rng = Rng::new(seed(0x6a7e));
    let mut calls = 0u64;
    for _ in 0..rounds(10_000) {
        let mut limit = rng.i64();
        let mut gate = null_mut();
        sane(weir_gate_new(limit, &mut gate), "weir_gate_new");
        assert_eq!(weir_gate_new(limit, null_mut()), WEIR_ERR_NULL);
        let mut inside = 0i64;
        // The most that may be inside: a lower limit keeps those in.
        let mut most = if limit <= 0 { i64::MAX } else { limit };
        for _ in 0..50 {
            match rng.below(4) {
                3 => {
                    limit = if rng.one_in(2) {
                        rng.i64()
                    } else {
                        rng.below(6) as i64
                    };
                    sane(weir_gate_reconfigure(gate, limit), "weir_gate_reconfigure");
                    most = if limit <= 0 {
                        i64::MAX
                    } else {
                        limit.max(inside)
                    };
                    calls += 1;
                }
                0 => inside += weir_gate_enter(gate) as i64,
                1 => {
                    weir_gate_leave(gate);
                    inside = (inside - 1).max(0);
                }
                _ => {
                    weir_gate_leave(null());
                    assert!(!weir_gate_enter(null()));
                }
            }
            let held = weir_gate_held(gate);
            assert_eq!(held, inside);
            assert!(held >= 0 && held <= most);
            calls += 2;
        }
        weir_gate_free(gate);
    }
    weir_gate_free(null_mut());
    assert_eq!(weir_gate_reconfigure(null_mut(), 1), WEIR_ERR_NULL);
    eprintln!("gate: {calls} calls");
    assert_no_panics("gate");
}

#[test]
fn bucket_never_panics_and_tokens_stay_in_the_burst() {
    count_panics();
    let mut rng = Rng::new(seed(0xb0c4e7));
    let mut calls = 0u64;
    for _ in 0..rounds(15_000) {
        let (rate, burst) = if rng.one_in(2) {
            (rng.unit() * 1e6, rng.unit() * 1e3)
        } else {
            (rng.f64(), rng.f64())
        };
        let mut clock = Clock::new(&mut rng);
        let mut bucket = null_mut();
        let status = sane(
            weir_bucket_new(rate, burst, clock.now, &mut bucket),
            "weir_bucket_new",
        );
        calls += 1;
        if status != WEIR_OK {
            assert!(bucket.is_null());
            continue;
        }
        let mut most = if burst <= 0.0 { rate } else { burst }.max(1.0);
        let mut latest = i64::MIN;
        for _ in 0..40 {
            let now = clock.tick(&mut rng);
            // A change of rate and burst in place, to hostile numbers: it
            // keeps at most the tokens there were, up to the new burst, and
            // an error changes nothing.
            if rng.one_in(8) {
                let (rate, burst) = if rng.one_in(2) {
                    (rng.unit() * 1e6, rng.unit() * 1e3)
                } else {
                    (rng.f64(), rng.f64())
                };
                let before = weir_bucket_tokens(bucket, now);
                let status = sane(
                    weir_bucket_reconfigure(bucket, rate, burst, now),
                    "weir_bucket_reconfigure",
                );
                let after = weir_bucket_tokens(bucket, now);
                calls += 1;
                if status == WEIR_OK {
                    most = if burst <= 0.0 { rate } else { burst }.max(1.0);
                    assert!(
                        after <= before.min(most) * (1.0 + 1e-12),
                        "rate {rate} burst {burst}: a change kept {after} of {before}"
                    );
                    latest = latest.max(now);
                } else {
                    assert!(
                        matches!(
                            status,
                            WEIR_ERR_NOT_FINITE | WEIR_ERR_NEGATIVE | WEIR_ERR_TOO_LARGE
                        ),
                        "weir_bucket_reconfigure answered {status:?}"
                    );
                    assert_eq!(before.to_bits(), after.to_bits(), "a refused change wrote");
                }
            }
            let n = if rng.one_in(2) {
                rng.f64()
            } else {
                rng.unit() * most
            };
            let next = weir_bucket_next(bucket, now, n);
            let took = weir_bucket_take(bucket, now, n);
            let tokens = weir_bucket_tokens(bucket, now);
            calls += 3;
            // A refund: of this take (or of hostile numbers) at a now from
            // the hostile clock. It gives back at most what it names and
            // never past the burst; an error changes nothing.
            if rng.one_in(3) {
                let (later, taken_at, back) = if took && rng.one_in(2) {
                    (
                        now.saturating_add(rng.span().max(0) % 1_000_000_000),
                        now,
                        n,
                    )
                } else {
                    (rng.i64(), rng.i64(), rng.f64())
                };
                let before = weir_bucket_tokens(bucket, later);
                let status = sane(
                    weir_bucket_refund(bucket, later, taken_at, back),
                    "weir_bucket_refund",
                );
                let after = weir_bucket_tokens(bucket, later);
                calls += 1;
                if status == WEIR_OK {
                    assert!(back > 0.0 && back <= most * (1.0 + 1e-9) && taken_at <= later);
                    assert!(
                        after <= most * (1.0 + 1e-9)
                            && after - before <= back * (1.0 + 1e-9) + most * 1e-12,
                        "rate {rate} burst {burst}: refund of {back} took {before} to {after}"
                    );
                } else {
                    assert!(
                        matches!(
                            status,
                            WEIR_ERR_LIMITER_INVALID_AMOUNT
                                | WEIR_ERR_REFUND_FUTURE
                                | WEIR_ERR_REFUND_EXPIRED
                                | WEIR_ERR_REFUND_FULL
                        ),
                        "weir_bucket_refund answered {status:?}"
                    );
                    assert_eq!(
                        before.to_bits(),
                        after.to_bits(),
                        "a failed refund changed the bucket"
                    );
                }
            }
            if next == 0 && now >= latest {
                assert!(
                    took,
                    "rate {rate} burst {burst} n {n} at {now}: next 0 but refused"
                );
            }
            if took {
                latest = latest.max(now);
            }
            assert!(
                next >= 0,
                "rate {rate} burst {burst} n {n} at {now}: next {next}"
            );
            assert!(
                tokens.is_finite() && tokens >= 0.0 && tokens <= most * (1.0 + 1e-9),
                "rate {rate} burst {burst} at {now}: tokens {tokens}"
            );
        }
        weir_bucket_free(bucket);
    }
    assert!(!weir_bucket_take(null(), 0, 1.0));
    assert_eq!(weir_bucket_refund(null(), 0, 0, 1.0), WEIR_ERR_NULL);
    assert_eq!(
        weir_bucket_reconfigure(null_mut(), 1.0, 1.0, 0),
        WEIR_ERR_NULL
    );
    eprintln!("bucket: {calls} calls");
    assert_no_panics("bucket");
}

#[test]
fn period_and_sliding_never_panic_and_left_stays_in_the_quota() {
    count_panics();
    let mut rng = Rng::new(seed(0x9e410d));
    let mut calls = 0u64;
    for _ in 0..rounds(15_000) {
        let mut quota = if rng.one_in(2) {
            1 + rng.below(20) as i64
        } else {
            rng.i64()
        };
        let span = rng.duration();
        let mut clock = Clock::new(&mut rng);
        let mut period = null_mut();
        let status = sane(
            weir_period_new(quota, span, rng.one_in(2), &mut period),
            "weir_period_new",
        );
        // A sliding window reserves 8 bytes a unit of quota.
        let mut sliding_quota = tame(quota, 4096, 1 << 60, &mut rng);
        let mut sliding = null_mut();
        let sliding_status = sane(
            weir_sliding_new(sliding_quota, span, &mut sliding),
            "weir_sliding_new",
        );
        calls += 2;
        for _ in 0..40 {
            let now = clock.tick(&mut rng);
            // An earlier `now` counts as the latest seen: it never finds
            // more room than the latest did.
            let earlier = now.saturating_sub(1 + rng.below(1000) as i64);
            if status == WEIR_OK {
                let at = format!("period {quota}/{span} at {now}");
                let before = weir_period_left(period, now);
                let answer = weir_period_take(period, now);
                assert_eq!(
                    answer == weir_period_quota::WEIR_PERIOD_QUOTA_OVER,
                    before == 0,
                    "{at}"
                );
                assert_eq!(
                    answer == weir_period_quota::WEIR_PERIOD_QUOTA_HIT,
                    before == 1,
                    "{at}"
                );
                let left = weir_period_left(period, now);
                let next = weir_period_next(period, now);
                assert!((0..=quota).contains(&left), "{at}: {left}");
                assert_eq!(left, (before - 1).max(0), "{at}");
                assert!(next >= 0, "{at}: next {next}");
                assert!(weir_period_left(period, earlier) <= left, "{at}");
                calls += 5;
                // A new quota in place, to hostile numbers: the open
                // period's count stays, and a refusal changes nothing.
                if rng.one_in(6) {
                    let q = if rng.one_in(2) {
                        1 + rng.below(20) as i64
                    } else {
                        rng.i64()
                    };
                    let before = (weir_period_left(period, now), weir_period_next(period, now));
                    let status = sane(
                        weir_period_reconfigure(period, q, rng.duration(), rng.one_in(2)),
                        "weir_period_reconfigure",
                    );
                    let after = (weir_period_left(period, now), weir_period_next(period, now));
                    calls += 5;
                    if status == WEIR_OK {
                        quota = q;
                        assert!(after.0 <= q, "{at}: {after:?} after a quota of {q}");
                    } else {
                        assert_eq!(status, WEIR_ERR_QUOTA);
                        assert_eq!(before, after, "{at}: a refused change wrote");
                    }
                }
            }
            if sliding_status == WEIR_OK {
                let at = format!("sliding {sliding_quota}/{span} at {now}");
                let before = weir_sliding_left(sliding, now);
                let took = weir_sliding_take(sliding, now);
                assert_eq!(took, before > 0, "{at}");
                let left = weir_sliding_left(sliding, now);
                let next = weir_sliding_next(sliding, now);
                assert!((0..=sliding_quota).contains(&left), "{at}: {left}");
                assert_eq!(left, (before - 1).max(0), "{at}");
                assert!(next >= 0, "{at}: next {next}");
                assert_eq!(next == 0, left > 0, "{at}: next {next}, left {left}");
                assert!(weir_sliding_left(sliding, earlier) <= left, "{at}");
                calls += 5;
                // A new quota and window in place, to hostile numbers: it
                // keeps at most the stamps counted, and a refusal changes
                // nothing.
                if rng.one_in(6) {
                    let q = tame(rng.i64(), 4096, 1 << 60, &mut rng);
                    let w = rng.duration();
                    let before = (
                        weir_sliding_left(sliding, now),
                        weir_sliding_next(sliding, now),
                    );
                    let status = sane(
                        weir_sliding_reconfigure(sliding, q, w),
                        "weir_sliding_reconfigure",
                    );
                    let after = (
                        weir_sliding_left(sliding, now),
                        weir_sliding_next(sliding, now),
                    );
                    calls += 5;
                    if status == WEIR_OK {
                        assert!(
                            q > 0 && w > 0 && (0..=q).contains(&after.0),
                            "{at}: {after:?}"
                        );
                        assert!(
                            q - after.0 <= sliding_quota - before.0,
                            "{at}: a change added stamps"
                        );
                        sliding_quota = q;
                    } else {
                        assert!(
                            matches!(
                                status,
                                WEIR_ERR_QUOTA
                                    | WEIR_ERR_SLIDING_WINDOW
                                    | WEIR_ERR_TOO_LARGE
                                    | WEIR_ERR_NO_MEMORY
                            ),
                            "{at}: weir_sliding_reconfigure answered {status:?}"
                        );
                        assert_eq!(before, after, "{at}: a refused change wrote");
                    }
                }
            }
        }
        weir_period_free(period);
        weir_sliding_free(sliding);
    }
    assert_eq!(weir_period_left(null(), 0), 0);
    assert_eq!(weir_sliding_left(null(), 0), 0);
    assert_eq!(weir_sliding_reconfigure(null_mut(), 1, 1), WEIR_ERR_NULL);
    assert_eq!(
        weir_period_reconfigure(null_mut(), 1, 1, false),
        WEIR_ERR_NULL
    );
    eprintln!("period+sliding: {calls} calls");
    assert_no_panics("period/sliding");
}

#[test]
fn window_never_panics_and_counts_stay_sane() {
    assert_eq!(weir_window_reconfigure(null_mut(), 1, 1, 0), WEIR_ERR_NULL);
    count_panics();
    let mut rng = Rng::new(seed(0x3170));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..rounds(7_500) {
        let size = if rng.one_in(2) {
            rng.below(64) as i32
        } else {
            rng.i32()
        };
        let span = rng.duration();
        let mut clock = Clock::new(&mut rng);
        let mut window = null_mut();
        let status = sane(
            weir_window_new(size, span, clock.now, &mut window),
            "weir_window_new",
        );
        calls += 1;
        if status != WEIR_OK {
            continue;
        }
        let mut buckets = weir_window_size(window);
        assert!(buckets >= 1 && buckets >= size.min(1));
        assert!(weir_window_width(window) >= 1);
        let mut out = vec![weir_window_total::default(); 70];
        for _ in 0..40 {
            let now = clock.tick(&mut rng);
            assert_eq!(weir_window_add(window, now, rng.i64()), WEIR_OK);
            // A new size and span in place, hostile or not: the total at
            // `now` reads the same after it, and a refusal changes nothing.
            if rng.one_in(8) {
                let size = if rng.one_in(2) {
                    rng.below(64) as i32
                } else {
                    rng.i32()
                };
                let span = rng.duration();
                let read = |window| {
                    let mut total = weir_window_total::default();
                    assert_eq!(
                        weir_window_read_total(window, now, true, &mut total),
                        WEIR_OK
                    );
                    (total, weir_window_size(window), weir_window_width(window))
                };
                let before = read(window);
                let status = sane(
                    weir_window_reconfigure(window, size, span, now),
                    "weir_window_reconfigure",
                );
                let after = read(window);
                calls += 1;
                if status == WEIR_OK {
                    assert_eq!(before.0, after.0, "a change at {now} lost values");
                    buckets = after.1;
                } else {
                    assert_eq!(before, after, "a refused change wrote");
                }
            }
            // NULL and misaligned outs, a huge cap with nowhere to write.
            assert_eq!(
                weir_window_read_buckets(window, now, true, null_mut(), usize::MAX),
                0
            );
            assert_eq!(
                weir_window_read_buckets(window, now, true, misaligned(&mut odd), 4),
                0
            );
            assert_eq!(
                weir_window_read_total(window, now, true, misaligned(&mut odd)),
                WEIR_ERR_MISALIGNED
            );
            let mut total = weir_window_total::default();
            sane(
                weir_window_read_total(window, now, rng.one_in(2), &mut total),
                "weir_window_read_total",
            );
            assert!(total.count >= 0, "window at {now}: {total:?}");
            let current = rng.one_in(2);
            let cap = rng.pick(&[0usize, 1, 3, 70]);
            let wrote = weir_window_read_buckets(window, now, current, out.as_mut_ptr(), cap);
            assert!(wrote <= cap && wrote <= buckets as usize);
            assert!(out[..wrote].iter().all(|t| t.count >= 0));
            if buckets <= 70 {
                // The total is the (saturating) sum of the buckets.
                let all = weir_window_read_buckets(window, now, current, out.as_mut_ptr(), 70);
                assert_eq!(all, buckets as usize - usize::from(!current));
                let mut total = weir_window_total::default();
                assert_eq!(
                    weir_window_read_total(window, now, current, &mut total),
                    WEIR_OK
                );
                let count = out[..all]
                    .iter()
                    .fold(0i64, |a, t| a.saturating_add(t.count));
                let sum = out[..all].iter().fold(0i64, |a, t| a.saturating_add(t.sum));
                assert_eq!(total.count, count, "window at {now}");
                // Saturation depends on the order of the adds, so compare
                // only sums that did not saturate.
                if sum.unsigned_abs() < u64::MAX / 4
                    && out[..all]
                        .iter()
                        .all(|t| t.sum.unsigned_abs() < u64::MAX / 256)
                {
                    assert_eq!(total.sum, sum, "window at {now}");
                }
            }
            calls += 3;
        }
        weir_window_free(window);
    }
    eprintln!("window: {calls} calls");
    assert_no_panics("window");
}

fn hostile_breaker_policy(rng: &mut Rng) -> weir_breaker_policy {
    let mut policy = weir_breaker_policy_preset();
    if rng.one_in(2) {
        policy.size = rng.below(50) as i32;
        policy.window_ns = rng.span();
        policy.probe_ns = rng.span();
        policy.protection = rng.unit() * 10.0;
    }
    if rng.one_in(2) {
        // Envoy's limits in range, often at their ends.
        policy.max_rejection_probability = [0.0, 0.8, 1.0, rng.unit()][rng.below(4) as usize];
        policy.rps_threshold = [0.0, 1.0, 100.0, rng.unit() * 1e3][rng.below(4) as usize];
        policy.aggression = [1.0, 2.0, 0.5, 1e-300, 1e300][rng.below(5) as usize];
        policy.skip_refusals = rng.below(2) as i32;
    }
    for _ in 0..rng.below(4) {
        match rng.below(11) {
            0 => policy.k = rng.f64(),
            1 => policy.floor = rng.f64(),
            2 => policy.protection = rng.f64(),
            3 => policy.probe_ns = rng.i64(),
            4 => policy.size = rng.i32(),
            5 => policy.skip_refusals = rng.i32(),
            6 => policy.max_rejection_probability = rng.f64(),
            7 => policy.rps_threshold = rng.f64(),
            8 => policy.aggression = rng.f64(),
            _ => policy.window_ns = rng.i64(),
        }
    }
    policy
}

/// A breaker's tally at `now`, as a tuple to compare.
fn read_tally(breaker: *const weir_breaker, now: i64) -> (i64, i64, i64, i64) {
    let mut t = weir_breaker_tally::default();
    assert_eq!(weir_breaker_read_tally(breaker, now, &mut t), WEIR_OK);
    (t.total, t.success, t.failure, t.drop)
}

#[test]
fn breaker_never_panics_and_ratio_stays_a_fraction() {
    count_panics();
    let mut rng = Rng::new(seed(0xb7ea));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..rounds(10_000) {
        let policy = hostile_breaker_policy(&mut rng);
        let mut clock = Clock::new(&mut rng);
        let mut breaker = null_mut();
        let ptr: *const weir_breaker_policy = if rng.one_in(20) { null() } else { &policy };
        let status = sane(
            weir_breaker_new(ptr, clock.now, &mut breaker),
            "weir_breaker_new",
        );
        calls += 1;
        if status != WEIR_OK {
            continue;
        }
        // Tickets in flight, settled in random order; now and then a
        // forged, misaligned or twice-settled one. Only the breaker's own
        // tickets count, each once.
        let mut tickets: Vec<weir_breaker_ticket> = Vec::new();
        let (mut allowed, mut settled) = (0i64, 0i64);
        let mut cap = if ptr.is_null() {
            1.0
        } else {
            policy.max_rejection_probability
        };
        for _ in 0..50 {
            let now = clock.tick(&mut rng);
            // A new policy in place, hostile or not: the tickets in flight
            // still settle (below), and a refusal changes nothing.
            if rng.one_in(10) {
                let next = hostile_breaker_policy(&mut rng);
                let before = (
                    weir_breaker_ratio(breaker, now).to_bits(),
                    read_tally(breaker, now),
                );
                let status = sane(
                    weir_breaker_reconfigure(breaker, &next),
                    "weir_breaker_reconfigure",
                );
                calls += 1;
                if status == WEIR_OK {
                    cap = next.max_rejection_probability;
                } else {
                    let after = (
                        weir_breaker_ratio(breaker, now).to_bits(),
                        read_tally(breaker, now),
                    );
                    assert_eq!(before, after, "a refused change wrote");
                }
            }
            match rng.below(5) {
                0 | 1 => {
                    let mut ticket = weir_breaker_ticket::default();
                    if weir_breaker_allow(breaker, now, rng.draw(), &mut ticket) {
                        allowed += 1;
                        tickets.push(ticket);
                    } else {
                        assert_eq!(ticket.flying, 0);
                    }
                    let odd_ticket = misaligned(&mut odd);
                    assert!(!weir_breaker_allow(breaker, now, rng.draw(), odd_ticket));
                }
                2 | 3 if !tickets.is_empty() => {
                    let at = rng.below(tickets.len() as u64) as usize;
                    let mut ticket = tickets.swap_remove(at);
                    let s = if rng.one_in(2) {
                        weir_breaker_pass(breaker, &mut ticket, now)
                    } else {
                        weir_breaker_fail(breaker, &mut ticket, now)
                    };
                    assert_eq!(s, WEIR_OK);
                    settled += 1;
                    assert_eq!(
                        weir_breaker_fail(breaker, &mut ticket, now),
                        WEIR_ERR_SETTLED
                    );
                }
                _ => {
                    let mut forged = weir_breaker_ticket {
                        serial: rng.u64(),
                        breaker: rng.u64() as u32,
                        flying: rng.i32(),
                    };
                    let s = sane(
                        weir_breaker_pass(breaker, &mut forged, now),
                        "weir_breaker_pass",
                    );
                    assert_ne!(s, WEIR_OK, "a forged ticket settled: {forged:?}");
                    sane(
                        weir_breaker_fail(breaker, misaligned(&mut odd), now),
                        "weir_breaker_fail",
                    );
                }
            }
            assert!(settled <= allowed);
            let ratio = weir_breaker_ratio(breaker, now);
            assert!(
                (0.0..=cap).contains(&ratio),
                "{policy:?} at {now}: ratio {ratio}"
            );
            let mut tally = weir_breaker_tally::default();
            assert_eq!(weir_breaker_read_tally(breaker, now, &mut tally), WEIR_OK);
            sane(
                weir_breaker_read_tally(breaker, now, misaligned(&mut odd)),
                "weir_breaker_read_tally",
            );
            assert!(tally.success >= 0 && tally.failure >= 0 && tally.drop >= 0);
            assert_eq!(
                tally.total,
                tally
                    .success
                    .saturating_add(tally.failure)
                    .saturating_add(tally.drop),
                "{policy:?} at {now}: {tally:?}"
            );
            calls += 3;
        }
        weir_breaker_free(breaker);
    }
    eprintln!("breaker: {calls} calls");
    assert_no_panics("breaker");
}

fn hostile_shed(rng: &mut Rng) -> weir_shedder_policy {
    let mut policy = weir_shedder_policy_preset();
    if rng.one_in(2) {
        policy.size = rng.below(50) as i32;
        policy.window_ns = rng.span();
        policy.latency_ns = rng.span();
        policy.cool_ns = rng.span();
        policy.cpu = rng.below(1000) as i32;
        policy.beta = rng.unit();
        policy.floor = 1.0 - rng.unit();
    }
    for _ in 0..rng.below(4) {
        match rng.below(7) {
            0 => policy.size = rng.i32(),
            1 => policy.cpu = rng.i32(),
            2 => policy.window_ns = rng.i64(),
            3 => policy.latency_ns = rng.i64(),
            4 => policy.beta = rng.f64(),
            5 => policy.cool_ns = rng.i64(),
            _ => policy.floor = rng.f64(),
        }
    }
    policy
}

#[test]
fn shedder_never_panics_and_stats_stay_sane() {
    count_panics();
    let mut rng = Rng::new(seed(0x5ed));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..rounds(7_500) {
        let policy = hostile_shed(&mut rng);
        let mut clock = Clock::new(&mut rng);
        let mut shedder = null_mut();
        let ptr: *const weir_shedder_policy = if rng.one_in(20) { null() } else { &policy };
        let status = sane(
            weir_shedder_new(ptr, clock.now, &mut shedder),
            "weir_shedder_new",
        );
        calls += 1;
        if status != WEIR_OK {
            continue;
        }
        // Tickets in flight, settled in random order; now and then a forged
        // or twice-settled one.
        let mut tickets: Vec<Box<weir_shedder_ticket>> = Vec::new();
        let mut in_flight = 0i64;
        for _ in 0..60 {
            let now = clock.tick(&mut rng);
            match rng.below(5) {
                0 | 1 => {
                    let mut ticket = Box::new(weir_shedder_ticket::default());
                    let cpu = if rng.one_in(2) {
                        rng.i32()
                    } else {
                        rng.below(1001) as i32
                    };
                    let admitted = if rng.one_in(2) {
                        weir_shedder_allow(shedder, now, cpu, &mut *ticket)
                    } else {
                        // A class: mostly one of the four, now and then none.
                        let class = if rng.one_in(8) {
                            rng.i32()
                        } else {
                            rng.below(4) as i32
                        };
                        let before = *ticket;
                        let s = sane(
                            weir_shedder_allow_class(shedder, now, cpu, class, &mut *ticket),
                            "weir_shedder_allow_class",
                        );
                        assert_eq!(s == WEIR_OK, (0..4).contains(&class), "class {class}");
                        if s != WEIR_OK {
                            assert_eq!(*ticket, before, "an error wrote the ticket");
                        }
                        sane(
                            weir_shedder_allow_class(
                                shedder,
                                now,
                                cpu,
                                class,
                                misaligned(&mut odd),
                            ),
                            "weir_shedder_allow_class",
                        );
                        calls += 2;
                        s == WEIR_OK && ticket.flying == 1
                    };
                    if admitted {
                        in_flight += 1;
                        tickets.push(ticket);
                    } else {
                        assert_eq!(ticket.flying, 0);
                    }
                    assert!(!weir_shedder_allow(shedder, now, cpu, misaligned(&mut odd)));
                }
                2 | 3 if !tickets.is_empty() => {
                    let at = rng.below(tickets.len() as u64) as usize;
                    let mut ticket = tickets.swap_remove(at);
                    if rng.one_in(10) {
                        ticket.start = rng.i64();
                    }
                    let s = if rng.one_in(2) {
                        weir_shedder_pass(shedder, &mut *ticket, now)
                    } else {
                        weir_shedder_fail(shedder, &mut *ticket)
                    };
                    assert_eq!(s, WEIR_OK);
                    in_flight -= 1;
                    // Settling again changes nothing.
                    assert_eq!(
                        weir_shedder_pass(shedder, &mut *ticket, now),
                        WEIR_ERR_SETTLED
                    );
                }
                _ => {
                    let mut forged = weir_shedder_ticket {
                        start: rng.i64(),
                        flying: rng.i32(),
                        reserved: rng.i32(),
                    };
                    sane(
                        weir_shedder_pass(shedder, &mut forged, now),
                        "weir_shedder_pass",
                    );
                    sane(weir_shedder_fail(shedder, &mut forged), "weir_shedder_fail");
                    sane(
                        weir_shedder_fail(shedder, misaligned(&mut odd)),
                        "weir_shedder_fail",
                    );
                    // A forged ticket that claims to fly leaves flight.
                    in_flight = weir_shedder_flying(shedder);
                }
            }
            // A new policy in place, hostile or not: the calls in flight
            // stay, and a refusal changes nothing.
            if rng.one_in(12) {
                let to = hostile_shed(&mut rng);
                let ptr: *const weir_shedder_policy = if rng.one_in(20) { null() } else { &to };
                let mut before = weir_shedder_stats::default();
                weir_shedder_read_stats(shedder, now, &mut before);
                let status = sane(
                    weir_shedder_reconfigure(shedder, ptr),
                    "weir_shedder_reconfigure",
                );
                let mut after = weir_shedder_stats::default();
                weir_shedder_read_stats(shedder, now, &mut after);
                assert_eq!(
                    after.flying, before.flying,
                    "a change moved the calls in flight"
                );
                if status != WEIR_OK {
                    assert_eq!(
                        format!("{after:?}"),
                        format!("{before:?}"),
                        "a refused change wrote"
                    );
                }
                assert_eq!(
                    weir_shedder_reconfigure(shedder, misaligned(&mut odd)),
                    WEIR_ERR_MISALIGNED
                );
                calls += 4;
            }
            let flying = weir_shedder_flying(shedder);
            assert!(flying >= 0, "{policy:?}: flying {flying}");
            assert!(flying <= in_flight.max(0) + tickets.len() as i64);
            let mut stats = weir_shedder_stats::default();
            assert_eq!(weir_shedder_read_stats(shedder, now, &mut stats), WEIR_OK);
            assert_eq!(stats.flying, flying);
            assert!(
                stats.average.is_finite() && stats.average >= 0.0,
                "{stats:?}"
            );
            assert!(
                stats.capacity.is_finite() && stats.capacity >= 1.0,
                "{stats:?}"
            );
            assert!(stats.limit.is_finite() && stats.limit >= 1.0, "{stats:?}");
            assert!(
                stats.limit <= stats.capacity.max(1.0) * (1.0 + 1e-12),
                "{stats:?}"
            );
            assert!((0..=1000).contains(&stats.cpu) && (0..=1).contains(&stats.hot));
            calls += 4;
        }
        for mut ticket in tickets {
            assert_eq!(weir_shedder_fail(shedder, &mut *ticket), WEIR_OK);
        }
        weir_shedder_free(shedder);
    }
    assert_eq!(weir_shedder_reconfigure(null_mut(), null()), WEIR_ERR_NULL);
    eprintln!("shedder: {calls} calls");
    assert_no_panics("shedder");
}

/// Pool limits: the preset, small sane ones, or with a few fields hostile.
fn hostile_pool_policy(rng: &mut Rng) -> weir_pool_policy {
    let mut limits = weir_pool_policy_preset();
    if rng.one_in(2) {
        limits.size = 1 + rng.below(8) as i64;
        limits.idle = rng.below(10) as i64;
        limits.keep_ns = rng.below(3) as i64 * rng.span();
        limits.life_ns = rng.below(3) as i64 * rng.span();
        limits.life_jitter = rng.pick(&[0.0, 0.1, 0.5, 1.0]);
        limits.min_idle = rng.below(10) as i64;
        limits.max_making = rng.below(4) as i64;
    }
    for _ in 0..rng.below(3) {
        match rng.below(7) {
            // A table for 2^24 items is half a gigabyte: stay small or
            // past the maximum.
            0 => limits.size = tame(rng.i64(), 64, WEIR_POOL_MAX_SIZE + 1, rng),
            1 => limits.idle = rng.i64(),
            2 => limits.keep_ns = rng.i64(),
            3 => limits.life_ns = rng.i64(),
            4 => limits.life_jitter = rng.f64(),
            5 => limits.min_idle = rng.i64(),
            _ => limits.max_making = rng.i64(),
        }
    }
    limits
}

#[test]
fn pool_never_panics_and_live_is_idle_plus_busy() {
    count_panics();
    let mut rng = Rng::new(seed(0x9001));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..rounds(7_500) {
        let limits = hostile_pool_policy(&mut rng);
        let mut pool = null_mut();
        let ptr: *const weir_pool_policy = if rng.one_in(20) { null() } else { &limits };
        let status = sane(weir_pool_new(ptr, &mut pool), "weir_pool_new");
        calls += 1;
        if status != WEIR_OK {
            continue;
        }
        let used = if ptr.is_null() {
            weir_pool_policy_preset()
        } else {
            limits
        };
        let (mut size, mut idle_cap) = (used.size, used.idle.min(used.size));
        let mut clock = Clock::new(&mut rng);
        let mut lent: Vec<usize> = Vec::new();
        let mut next_item = 1usize;
        let mut out = [0usize; 8];
        for _ in 0..60 {
            let now = clock.tick(&mut rng);
            if rng.one_in(10) {
                // New limits in place: the items and the totals are kept,
                // and from here on live stays within the larger of those
                // live now and the new size; an error changes nothing.
                let next = hostile_pool_policy(&mut rng);
                let ptr: *const weir_pool_policy = match rng.below(20) {
                    0 => null(),
                    1 => misaligned(&mut odd),
                    _ => &next,
                };
                let (live, idle) = (weir_pool_live(pool), weir_pool_idle(pool));
                let mut before = weir_pool_stats::default();
                assert_eq!(weir_pool_read_stats(pool, &mut before), WEIR_OK);
                let status = sane(weir_pool_reconfigure(pool, ptr), "weir_pool_reconfigure");
                let mut after = weir_pool_stats::default();
                assert_eq!(weir_pool_read_stats(pool, &mut after), WEIR_OK);
                assert_eq!(after, before, "a reconfiguration moved the totals");
                assert_eq!((weir_pool_live(pool), weir_pool_idle(pool)), (live, idle));
                if status == WEIR_OK {
                    let new = if ptr.is_null() {
                        weir_pool_policy_preset()
                    } else {
                        next
                    };
                    size = live.max(new.size);
                    idle_cap = idle.max(new.idle.min(new.size));
                }
                calls += 1;
            }
            match rng.below(9) {
                0 | 1 => {
                    let taken = weir_pool_take(pool, now);
                    match taken.kind {
                        WEIR_POOL_TAKEN_READY => lent.push(taken.item),
                        WEIR_POOL_TAKEN_MAKE => {
                            if rng.one_in(5) {
                                assert_eq!(weir_pool_unmade(pool), WEIR_OK);
                            } else {
                                // The extremes of uintptr_t first, then 2, 3, ...
                                next_item += 1;
                                let item = match next_item {
                                    2 => 0,
                                    3 => usize::MAX,
                                    4 => usize::MAX - 1,
                                    n => n,
                                };
                                let made = if rng.one_in(2) {
                                    weir_pool_made_jittered(pool, item, now, rng.u64())
                                } else {
                                    weir_pool_made(pool, item, now)
                                };
                                assert_eq!(made, WEIR_OK);
                                lent.push(item);
                            }
                        }
                        WEIR_POOL_TAKEN_STALE | WEIR_POOL_TAKEN_WAIT => {}
                        kind => panic!("take answered kind {kind}"),
                    }
                }
                2 | 3 if !lent.is_empty() => {
                    let at = rng.below(lent.len() as u64) as usize;
                    let item = lent.swap_remove(at);
                    let mut kept = false;
                    assert_eq!(weir_pool_give(pool, item, now, &mut kept), WEIR_OK);
                }
                4 if !lent.is_empty() => {
                    let at = rng.below(lent.len() as u64) as usize;
                    let item = lent.swap_remove(at);
                    assert_eq!(weir_pool_drop(pool, item), WEIR_OK);
                }
                5 => {
                    // PoolMisuse: items the pool never lent, made and unmade
                    // without a reservation, NULL and misaligned outs.
                    // A high bit no lent item has: 2^40, or 2^24 on 32-bit.
                    let bogus = rng.u64() as usize | (1 << (usize::BITS / 2 + 8));
                    let mut kept = false;
                    sane(
                        weir_pool_give(pool, bogus, now, &mut kept),
                        "weir_pool_give",
                    );
                    sane(weir_pool_drop(pool, bogus), "weir_pool_drop");
                    sane(weir_pool_made(pool, bogus, rng.i64()), "weir_pool_made");
                    sane(
                        weir_pool_made_jittered(pool, bogus, rng.i64(), rng.u64()),
                        "weir_pool_made_jittered",
                    );
                    sane(weir_pool_unmade(pool), "weir_pool_unmade");
                    sane(weir_pool_give(pool, 1, now, null_mut()), "weir_pool_give");
                    sane(
                        weir_pool_read_stats(pool, misaligned(&mut odd)),
                        "weir_pool_read_stats",
                    );
                    // Reservations the misuse may have opened or filled are
                    // not tracked here; resync from the pool.
                    lent.retain(|&i| i != bogus);
                }
                6 => {
                    let cap = rng.pick(&[0usize, 1, 8]);
                    let wrote = weir_pool_evict(pool, now, out.as_mut_ptr(), cap);
                    assert!(wrote <= cap);
                    assert_eq!(weir_pool_evict(pool, now, null_mut(), usize::MAX), 0);
                    weir_pool_evict(pool, now, misaligned(&mut odd), 8);
                }
                7 if rng.one_in(8) => {
                    let cap = rng.pick(&[0usize, 1, 8]);
                    let wrote = weir_pool_close(pool, out.as_mut_ptr(), cap);
                    assert!(wrote <= cap);
                }
                7 if rng.one_in(3) => {
                    let marked = weir_pool_mark_old(pool);
                    assert!(marked >= 0 && marked <= size, "{limits:?}: marked {marked}");
                }
                7 => {
                    // Reservations for what to make ahead: filled by gives
                    // of fresh items, or released.
                    let ahead = weir_pool_make_ahead(pool);
                    assert!((0..=size).contains(&ahead), "{limits:?}: ahead {ahead}");
                    for _ in 0..ahead {
                        if rng.one_in(3) {
                            assert_eq!(weir_pool_unmade(pool), WEIR_OK);
                        } else {
                            next_item += 1;
                            let mut kept = false;
                            assert_eq!(weir_pool_give(pool, next_item, now, &mut kept), WEIR_OK);
                        }
                    }
                }
                _ => {
                    let expiry = weir_pool_next_expiry(pool, now);
                    assert!(expiry >= 0, "pool {limits:?} at {now}: expiry {expiry}");
                }
            }
            let (live, idle, busy) = (
                weir_pool_live(pool),
                weir_pool_idle(pool),
                weir_pool_busy(pool),
            );
            assert!(idle >= 0 && busy >= 0, "{limits:?}: {live} {idle} {busy}");
            assert_eq!(live, idle + busy, "{limits:?}");
            assert!(live <= size, "{limits:?}: live {live}");
            assert!(idle <= idle_cap, "{limits:?}: idle {idle}");
            let mut stats = weir_pool_stats::default();
            assert_eq!(weir_pool_read_stats(pool, &mut stats), WEIR_OK);
            calls += 5;
        }
        weir_pool_free(pool);
    }
    assert_eq!(weir_pool_take(null(), 0).kind, WEIR_POOL_TAKEN_WAIT);
    assert_eq!(weir_pool_make_ahead(null()), 0);
    assert_eq!(weir_pool_mark_old(null()), 0);
    assert_eq!(weir_pool_made_jittered(null(), 1, 0, 1), WEIR_ERR_NULL);
    assert_eq!(weir_pool_reconfigure(null_mut(), null()), WEIR_ERR_NULL);
    eprintln!("pool: {calls} calls");
    assert_no_panics("pool");
}

fn hostile_budget_policy(rng: &mut Rng) -> weir_budget_policy {
    let mut policy = weir_budget_policy_preset();
    if rng.one_in(2) {
        policy.form = rng.below(2) as i32;
        policy.max_tokens = 1 + rng.below(1000) as i32;
        policy.token_ratio = rng.unit() * 10.0;
        policy.ttl_ns = 1_000_000_000 + rng.below(60_000_000_000) as i64;
        policy.min_per_s = rng.below(100) as i32;
        policy.percent = rng.unit() * 3.0;
    }
    for _ in 0..rng.below(4) {
        match rng.below(7) {
            0 => policy.form = rng.i32(),
            1 => policy.max_tokens = rng.i32(),
            2 => policy.token_ratio = rng.f64(),
            3 => policy.ttl_ns = rng.i64(),
            4 => policy.min_per_s = rng.i32(),
            5 => policy.reserved = rng.i32(),
            _ => policy.percent = rng.f64(),
        }
    }
    policy
}

#[test]
fn budget_never_panics_and_left_agrees_with_withdraw() {
    count_panics();
    let mut rng = Rng::new(seed(0xb0d6e7));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..7_500 {
        let policy = hostile_budget_policy(&mut rng);
        let mut clock = Clock::new(&mut rng);
        let mut budget = null_mut();
        assert!(matches!(
            weir_budget_new(misaligned(&mut odd), clock.now, &mut budget),
            WEIR_ERR_MISALIGNED
        ));
        assert!(budget.is_null());
        let ptr: *const weir_budget_policy = if rng.one_in(20) { null() } else { &policy };
        let status = sane(
            weir_budget_new(ptr, clock.now, &mut budget),
            "weir_budget_new",
        );
        calls += 2;
        if status != WEIR_OK {
            assert!(budget.is_null());
            continue;
        }
        let mut tokens_form = !ptr.is_null() && policy.form == WEIR_BUDGET_TOKENS;
        let mut max_tokens = policy.max_tokens;
        for _ in 0..60 {
            let now = clock.tick(&mut rng);
            // A new policy in place, hostile or not: a kept token count
            // within the new maximum, and a refusal changes nothing.
            if rng.one_in(8) {
                let to = hostile_budget_policy(&mut rng);
                let ptr: *const weir_budget_policy = if rng.one_in(20) { null() } else { &to };
                let before = (
                    weir_budget_left(budget, now),
                    weir_budget_tokens(budget, now),
                );
                let status = sane(
                    weir_budget_reconfigure(budget, ptr, now),
                    "weir_budget_reconfigure",
                );
                let after = (
                    weir_budget_left(budget, now),
                    weir_budget_tokens(budget, now),
                );
                if status == WEIR_OK {
                    let kept = tokens_form && !ptr.is_null() && to.form == WEIR_BUDGET_TOKENS;
                    if kept {
                        assert_eq!(after.1, before.1.min(1000 * i64::from(to.max_tokens)));
                    }
                    tokens_form = !ptr.is_null() && to.form == WEIR_BUDGET_TOKENS;
                    max_tokens = to.max_tokens;
                } else {
                    assert_eq!(after, before, "{to:?}: a refused change wrote");
                }
                assert_eq!(
                    weir_budget_reconfigure(budget, misaligned(&mut odd), now),
                    WEIR_ERR_MISALIGNED
                );
                assert_eq!(weir_budget_reconfigure(null_mut(), ptr, now), WEIR_ERR_NULL);
                calls += 7;
            }
            let left = weir_budget_left(budget, now);
            let tokens = weir_budget_tokens(budget, now);
            assert!(left >= 0, "{policy:?}: left {left}");
            // A reading changes nothing.
            assert_eq!(weir_budget_left(budget, now), left);
            if tokens_form {
                assert!((0..=1000 * i64::from(max_tokens)).contains(&tokens));
            }
            match rng.below(3) {
                0 => weir_budget_deposit(budget, now),
                _ => {
                    // `left` in a row are granted at this instant, then no
                    // more (capped so that a huge reserve stays cheap).
                    let granted = weir_budget_withdraw(budget, now);
                    assert_eq!(granted, left > 0, "{policy:?}: left {left}");
                }
            }
            weir_budget_deposit(null(), now);
            assert!(!weir_budget_withdraw(null(), now));
            assert_eq!(weir_budget_left(null(), now), 0);
            assert_eq!(weir_budget_tokens(null(), now), 0);
            calls += 8;
        }
        weir_budget_free(budget);
    }
    weir_budget_free(null_mut());
    eprintln!("budget: {calls} calls");
    assert_no_panics("budget");
}

fn hostile_lease_policy(rng: &mut Rng) -> weir_lease_policy {
    let mut policy = weir_lease_policy_preset();
    if rng.one_in(2) {
        policy.ttl_ns = 1_000_000 + rng.below(3_600_000_000_000) as i64;
        policy.interval_ns = 1_000 + rng.below(policy.ttl_ns as u64 - 1_000) as i64;
        policy.burst = 1 + rng.below(1 << 40) as i64;
        policy.share = 1.0 - rng.unit();
    }
    for _ in 0..rng.below(4) {
        match rng.below(4) {
            0 => policy.interval_ns = rng.i64(),
            1 => policy.ttl_ns = rng.i64(),
            2 => policy.burst = rng.i64(),
            _ => policy.share = rng.f64(),
        }
    }
    policy
}

#[test]
fn lease_never_panics_and_never_spends_more_than_it_was_granted() {
    count_panics();
    let mut rng = Rng::new(seed(0x1ea5e));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..5_000 {
        let policy = hostile_lease_policy(&mut rng);
        let mut clock = Clock::new(&mut rng);
        let mut lease = null_mut();
        assert!(matches!(
            weir_lease_new(misaligned(&mut odd), clock.now, &mut lease),
            WEIR_ERR_MISALIGNED
        ));
        let ptr: *const weir_lease_policy = if rng.one_in(20) { null() } else { &policy };
        let status = sane(weir_lease_new(ptr, clock.now, &mut lease), "weir_lease_new");
        calls += 2;
        if status != WEIR_OK {
            assert!(lease.is_null());
            continue;
        }
        let mut cap = weir_lease_cap(lease);
        assert!(cap >= 1);
        let mut granted = 0u64;
        let mut want = Expected::new();
        for _ in 0..60 {
            let now = clock.tick(&mut rng);
            let unspent = weir_lease_unspent(lease, now);
            let expires = weir_lease_expires(lease, now);
            let mut before = weir_lease_stats::default();
            assert_eq!(weir_lease_read_stats(lease, now, &mut before), WEIR_OK);
            // Readings change nothing.
            assert_eq!(weir_lease_unspent(lease, now), unspent);
            assert_eq!(weir_lease_expires(lease, now), expires);
            // Grants here answer no ask, so only the total bounds them.
            assert!(
                (0..=granted as i64).contains(&unspent),
                "{policy:?}: {unspent}"
            );
            let cost = match rng.below(4) {
                0 => rng.i64(),
                _ => 1 + rng.below(cap.min(1 << 20) as u64) as i64,
            };
            match rng.below(5) {
                0 | 1 => {
                    let mut answer = weir_lease_answer::default();
                    let out: *mut weir_lease_answer = if rng.one_in(30) {
                        misaligned(&mut odd)
                    } else {
                        &mut answer
                    };
                    let status = sane(weir_lease_take(lease, now, cost, out), "weir_lease_take");
                    want.saw(match (status, answer.verdict) {
                        (WEIR_OK, WEIR_LEASE_GO) => Answer::Admitted(cost as f64),
                        (WEIR_OK, WEIR_LEASE_REFUSE) => Answer::Refused,
                        (WEIR_OK, _) => Answer::Uncounted,
                        _ => Answer::Error,
                    });
                    if status == WEIR_OK {
                        assert!((0..=2).contains(&answer.verdict));
                        assert!(answer.ask >= 0 && answer.ask <= cap);
                        if answer.verdict == WEIR_LEASE_REFUSE {
                            assert!(answer.retry_after_ns >= 1);
                        }
                    } else {
                        // An error changes nothing.
                        let mut after = weir_lease_stats::default();
                        weir_lease_read_stats(lease, now, &mut after);
                        assert_eq!(after, before);
                    }
                }
                2 => {
                    let n = match rng.below(3) {
                        0 => rng.i64(),
                        _ => rng.below(cap as u64 + 1) as i64,
                    };
                    let status = sane(
                        weir_lease_grant(lease, now, n, rng.i64(), rng.i64()),
                        "weir_lease_grant",
                    );
                    if status == WEIR_OK {
                        granted += n as u64;
                    }
                }
                3 => {
                    // A new policy in place: an error changes nothing, and
                    // the units held stay whatever the new cap.
                    let next = hostile_lease_policy(&mut rng);
                    let ptr: *const weir_lease_policy = match rng.below(20) {
                        0 => null(),
                        1 => misaligned(&mut odd),
                        _ => &next,
                    };
                    let status = sane(weir_lease_reconfigure(lease, ptr), "weir_lease_reconfigure");
                    let mut after = weir_lease_stats::default();
                    assert_eq!(weir_lease_read_stats(lease, now, &mut after), WEIR_OK);
                    assert_eq!(after, before, "a reconfiguration spent or dropped units");
                    if status == WEIR_OK {
                        cap = weir_lease_cap(lease);
                        assert!(cap >= 1);
                    } else {
                        assert_eq!(weir_lease_cap(lease), cap);
                    }
                }
                _ => {
                    assert!(weir_lease_release(lease, now) >= 0);
                }
            }
            let mut stats = weir_lease_stats::default();
            assert_eq!(weir_lease_read_stats(lease, now, &mut stats), WEIR_OK);
            assert_eq!(stats.granted, granted);
            assert!(stats.spent + stats.expired + stats.released + stats.held <= granted);
            assert_eq!(weir_lease_read_stats(lease, now, null_mut()), WEIR_ERR_NULL);
            want.check(
                &mut rng,
                "weir_lease_start_counting",
                "weir_lease_read_counts",
                || weir_lease_start_counting(lease),
                |out| weir_lease_read_counts(lease, out),
            );
            calls += 11;
        }
        weir_lease_free(lease);
    }
    let mut answer = weir_lease_answer::default();
    assert_eq!(weir_lease_take(null(), 0, 1, &mut answer), WEIR_ERR_NULL);
    assert_eq!(weir_lease_grant(null(), 0, 1, 0, 0), WEIR_ERR_NULL);
    assert_eq!(weir_lease_unspent(null(), 0), 0);
    assert_eq!(weir_lease_release(null(), 0), 0);
    assert_eq!(weir_lease_expires(null(), 0), i64::MAX);
    assert_eq!(weir_lease_cap(null()), 0);
    weir_lease_free(null_mut());
    eprintln!("lease: {calls} calls");
    assert_no_panics("lease");
}

fn hostile_concurrency_policy(rng: &mut Rng) -> weir_concurrency_policy {
    let mut policy = weir_concurrency_policy_preset();
    if rng.one_in(2) {
        policy.min_limit = 1 + rng.below(10) as i32;
        policy.initial_limit = policy.min_limit + rng.below(10) as i32;
        policy.max_limit = policy.initial_limit + rng.below(100) as i32;
        policy.queue_size = rng.below(policy.max_limit as u64 + 1) as i32;
        policy.smoothing = 1.0 - rng.unit();
        policy.tolerance = 1.0 + rng.unit() * 3.0;
        policy.long_window = 1 + rng.below(1000) as i32;
        policy.warmup = 1 + rng.below(20) as i32;
    }
    for _ in 0..rng.below(4) {
        match rng.below(8) {
            0 => policy.initial_limit = rng.i32(),
            1 => policy.min_limit = rng.i32(),
            2 => policy.max_limit = rng.i32(),
            3 => policy.queue_size = rng.i32(),
            4 => policy.smoothing = rng.f64(),
            5 => policy.tolerance = rng.f64(),
            6 => policy.long_window = rng.i32(),
            _ => policy.warmup = rng.i32(),
        }
    }
    policy
}

#[test]
fn concurrency_never_panics_and_flying_stays_under_the_limit() {
    count_panics();
    let mut rng = Rng::new(seed(0xc0c0));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..5_000 {
        let policy = hostile_concurrency_policy(&mut rng);
        let mut clock = Clock::new(&mut rng);
        let mut limit = null_mut();
        assert_eq!(
            weir_concurrency_new(misaligned(&mut odd), &mut limit),
            WEIR_ERR_MISALIGNED
        );
        let ptr: *const weir_concurrency_policy = if rng.one_in(20) { null() } else { &policy };
        let status = sane(
            weir_concurrency_new(ptr, &mut limit),
            "weir_concurrency_new",
        );
        calls += 2;
        if status != WEIR_OK {
            assert!(limit.is_null());
            continue;
        }
        let (mut low, mut high) = if ptr.is_null() {
            (20, 200)
        } else {
            (i64::from(policy.min_limit), i64::from(policy.max_limit))
        };
        let mut flights: Vec<Box<weir_concurrency_ticket>> = Vec::new();
        for _ in 0..80 {
            let now = clock.tick(&mut rng);
            // A new policy in place, hostile or not: the limit held to the
            // new bounds, the calls in flight kept, a refusal changing
            // nothing.
            if rng.one_in(10) {
                let to = hostile_concurrency_policy(&mut rng);
                let ptr: *const weir_concurrency_policy = if rng.one_in(20) { null() } else { &to };
                let before = (
                    weir_concurrency_limit(limit),
                    weir_concurrency_flying(limit),
                    weir_concurrency_long_rtt(limit).to_bits(),
                );
                let status = sane(
                    weir_concurrency_reconfigure(limit, ptr),
                    "weir_concurrency_reconfigure",
                );
                let after = (
                    weir_concurrency_limit(limit),
                    weir_concurrency_flying(limit),
                    weir_concurrency_long_rtt(limit).to_bits(),
                );
                if status == WEIR_OK {
                    (low, high) = if ptr.is_null() {
                        (20, 200)
                    } else {
                        (i64::from(to.min_limit), i64::from(to.max_limit))
                    };
                    assert_eq!((after.1, after.2), (before.1, before.2));
                    assert_eq!(after.0, before.0.clamp(low, high), "{to:?}");
                } else {
                    assert_eq!(after, before, "{to:?}: a refused change wrote");
                }
                assert_eq!(
                    weir_concurrency_reconfigure(limit, misaligned(&mut odd)),
                    WEIR_ERR_MISALIGNED
                );
                assert_eq!(weir_concurrency_reconfigure(null_mut(), ptr), WEIR_ERR_NULL);
                calls += 8;
            }
            match rng.below(5) {
                0 | 1 => {
                    let mut flight = Box::new(weir_concurrency_ticket::default());
                    let cap = weir_concurrency_limit(limit);
                    let before = weir_concurrency_flying(limit);
                    if weir_concurrency_enter(limit, now, &mut *flight) {
                        assert!(before < cap, "{policy:?}: {before} of {cap}");
                        assert_eq!(i64::from(flight.inflight), before + 1);
                        flights.push(flight);
                    } else {
                        assert_eq!(flight.flying, 0);
                    }
                    assert!(!weir_concurrency_enter(limit, now, misaligned(&mut odd)));
                }
                2 | 3 if !flights.is_empty() => {
                    let at = rng.below(flights.len() as u64) as usize;
                    let mut flight = flights.swap_remove(at);
                    if rng.one_in(10) {
                        flight.start = rng.i64();
                    }
                    let dropped = rng.one_in(3);
                    assert_eq!(
                        weir_concurrency_leave(limit, &mut *flight, now, dropped),
                        WEIR_OK
                    );
                    assert_eq!(
                        weir_concurrency_leave(limit, &mut *flight, now, dropped),
                        WEIR_ERR_SETTLED
                    );
                }
                _ => {
                    let mut forged = weir_concurrency_ticket {
                        start: rng.i64(),
                        inflight: rng.i32(),
                        flying: rng.i32(),
                    };
                    sane(
                        weir_concurrency_leave(limit, &mut forged, now, rng.one_in(2)),
                        "weir_concurrency_leave",
                    );
                    sane(
                        weir_concurrency_leave(limit, misaligned(&mut odd), now, false),
                        "weir_concurrency_leave",
                    );
                }
            }
            let cap = weir_concurrency_limit(limit);
            assert!((low..=high).contains(&cap), "{policy:?}: limit {cap}");
            let flying = weir_concurrency_flying(limit);
            assert!(flying >= 0 && flying <= flights.len() as i64);
            let rtt = weir_concurrency_long_rtt(limit);
            assert!(rtt.is_finite() && rtt >= 0.0, "{rtt}");
            assert!(!weir_concurrency_enter(null(), now, null_mut()));
            assert_eq!(weir_concurrency_limit(null()), 0);
            calls += 6;
        }
        for mut flight in flights {
            assert_eq!(
                weir_concurrency_leave(limit, &mut *flight, 0, false),
                WEIR_OK
            );
        }
        weir_concurrency_free(limit);
    }
    weir_concurrency_free(null_mut());
    eprintln!("concurrency: {calls} calls");
    assert_no_panics("concurrency");
}

#[test]
fn concurrency_partitions_never_panic_and_stay_under_the_limit() {
    count_panics();
    let mut rng = Rng::new(seed(0xc0c1));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..rounds(3_000) {
        let policy = hostile_concurrency_policy(&mut rng);
        let mut clock = Clock::new(&mut rng);
        let count = match rng.below(6) {
            0 => rng.i32(),
            _ => 1 + rng.below(5) as i32,
        };
        let mut parts: Vec<weir_concurrency_partition> = (0..count.clamp(0, 20))
            .map(|_| weir_concurrency_partition {
                share: if rng.one_in(6) {
                    rng.f64()
                } else {
                    rng.unit() / 4.0
                },
                borrow: if rng.one_in(6) {
                    rng.i64()
                } else {
                    rng.below(8) as i64
                },
            })
            .collect();
        parts.push(weir_concurrency_partition::default());
        let mut limit = null_mut();
        let ptr = if rng.one_in(20) {
            null()
        } else {
            parts.as_ptr()
        };
        let status = sane(
            weir_concurrency_new_partitioned(&policy, ptr, count, &mut limit),
            "weir_concurrency_new_partitioned",
        );
        sane(
            weir_concurrency_new_partitioned(&policy, misaligned(&mut odd), count, &mut limit),
            "weir_concurrency_new_partitioned",
        );
        calls += 2;
        if status != WEIR_OK {
            assert!(limit.is_null());
            continue;
        }
        let mut flights: Vec<(i32, Box<weir_concurrency_ticket>)> = Vec::new();
        for _ in 0..80 {
            let now = clock.tick(&mut rng);
            let part = if rng.one_in(10) {
                rng.i32()
            } else {
                rng.below(count as u64 + 1) as i32
            };
            match rng.below(5) {
                0 | 1 => {
                    let mut flight = Box::new(weir_concurrency_ticket::default());
                    let cap = weir_concurrency_limit(limit);
                    let before = weir_concurrency_flying(limit);
                    let s = sane(
                        weir_concurrency_enter_partition(limit, part, now, &mut *flight),
                        "weir_concurrency_enter_partition",
                    );
                    assert_eq!(
                        s == WEIR_OK,
                        (0..count).contains(&part),
                        "{part} of {count}"
                    );
                    if s == WEIR_OK && flight.flying == 1 {
                        assert!(before < cap, "{policy:?}: {before} of {cap}");
                        flights.push((part, flight));
                    } else {
                        assert_eq!(flight.flying, 0);
                    }
                    sane(
                        weir_concurrency_enter_partition(limit, part, now, misaligned(&mut odd)),
                        "weir_concurrency_enter_partition",
                    );
                }
                2 | 3 if !flights.is_empty() => {
                    let at = rng.below(flights.len() as u64) as usize;
                    let (p, mut flight) = flights.swap_remove(at);
                    let dropped = rng.one_in(3);
                    assert_eq!(
                        weir_concurrency_leave_partition(limit, p, &mut *flight, now, dropped),
                        WEIR_OK
                    );
                    assert_eq!(
                        weir_concurrency_leave_partition(limit, p, &mut *flight, now, dropped),
                        WEIR_ERR_SETTLED
                    );
                }
                _ => {
                    let mut forged = weir_concurrency_ticket {
                        start: rng.i64(),
                        inflight: rng.i32(),
                        flying: rng.i32() & 1,
                    };
                    let s = sane(
                        weir_concurrency_leave_partition(limit, part, &mut forged, now, false),
                        "weir_concurrency_leave_partition",
                    );
                    if s == WEIR_OK {
                        // A forged ticket left a call of the partition: one
                        // of ours from it no longer counts.
                        if let Some(at) = flights.iter().position(|(p, _)| *p == part) {
                            let (_, mut gone) = flights.swap_remove(at);
                            gone.flying = 0;
                        }
                    }
                }
            }
            let total = weir_concurrency_flying(limit);
            let mut sum = 0;
            for p in -1..=count {
                let n = weir_concurrency_partition_flying(limit, p);
                let room = weir_concurrency_partition_room(limit, p);
                assert!(n >= 0 && room >= 0 && room <= weir_concurrency_limit(limit));
                sum += n;
            }
            assert_eq!(sum, total);
            assert_eq!(total, flights.len() as i64);
            assert_eq!(weir_concurrency_partition_flying(null(), 0), 0);
            calls += 4 + 2 * (count as u64 + 2);
        }
        weir_concurrency_free(limit);
    }
    eprintln!("concurrency partitions: {calls} calls");
    assert_no_panics("concurrency partitions");
}

#[test]
fn limiter_refund_never_panics_and_never_passes_capacity() {
    count_panics();
    let mut rng = Rng::new(seed(0x7ef0d));
    let mut calls = 0u64;
    let mut odd = [0u64; 8];
    for _ in 0..20_000 {
        let Some(mut limiter) = hostile_limiter(&mut rng) else {
            continue;
        };
        let mut clock = Clock::new(&mut rng);
        let capacity = weir_limiter_capacity(&limiter);
        for _ in 0..20 {
            let now = clock.tick(&mut rng);
            let taken_at = if rng.one_in(2) {
                now.saturating_sub(rng.span())
            } else {
                rng.i64()
            };
            let amount = rng.u64();
            let took = rng.one_in(2) && weir_limiter_try_consume(&mut limiter, now, amount);
            let before = limiter;
            let left = weir_limiter_available(&limiter, now);
            let status = sane(
                weir_limiter_refund(&mut limiter, now, taken_at, amount),
                "weir_limiter_refund",
            );
            let after = weir_limiter_available(&limiter, now);
            assert!(after <= capacity, "{after} > {capacity}");
            if status == WEIR_OK {
                assert!(after > left && after - left <= amount);
            } else {
                // An error changes nothing, byte for byte.
                assert_eq!(limiter, before, "{status:?}");
            }
            if took && status == WEIR_OK && amount <= capacity {
                assert!(after >= left);
            }
            assert_eq!(
                weir_limiter_refund(misaligned(&mut odd), now, taken_at, amount),
                WEIR_ERR_MISALIGNED
            );
            assert_eq!(
                weir_limiter_refund(null_mut(), now, taken_at, amount),
                WEIR_ERR_NULL
            );
            calls += 6;
        }
    }
    eprintln!("limiter refund: {calls} calls");
    assert_no_panics("limiter refund");
}

// ---------------------------------------------------------------------------
// Counts: every handle's, against the answers its calls gave.

/// What the sweep expects a handle's counts to be: off until
/// `weir_<type>_start_counting`, then each answer counted as its text in
/// weir.h says.
struct Expected {
    on: bool,
    counts: weir_counts,
}

/// What one answer counts as, from the answer alone.
enum Answer {
    Admitted(f64),
    Refused,
    Error,
    Uncounted,
}

impl Expected {
    fn new() -> Self {
        Expected {
            on: false,
            counts: weir_counts::default(),
        }
    }

    fn saw(&mut self, answer: Answer) {
        if !self.on {
            return;
        }
        match answer {
            Answer::Admitted(units) => {
                self.counts.admitted += 1;
                self.counts.units += units;
            }
            Answer::Refused => self.counts.refused += 1,
            Answer::Error => self.counts.errors += 1,
            Answer::Uncounted => {}
        }
    }

    /// Turns counting on now and then (through `start`), reads the counts
    /// through `read` into a NULL, misaligned or good `out`, and checks
    /// them.
    fn check(
        &mut self,
        rng: &mut Rng,
        start: &str,
        read: &str,
        start_fn: impl Fn() -> weir_status,
        read_fn: impl Fn(*mut weir_counts) -> weir_status,
    ) {
        if rng.one_in(8) {
            assert_eq!(sane(start_fn(), start), WEIR_OK);
            self.on = true;
        }
        let mut odd = [0u64; 8];
        match rng.below(6) {
            0 => assert_eq!(sane(read_fn(null_mut()), read), WEIR_ERR_NULL),
            1 => assert_eq!(
                sane(read_fn(misaligned(&mut odd)), read),
                WEIR_ERR_MISALIGNED
            ),
            _ => {
                let mut out = weir_counts::default();
                let status = sane(read_fn(&mut out), read);
                if self.on {
                    assert_eq!(status, WEIR_OK, "{read}");
                    assert_eq!(out, self.counts, "{read}");
                } else {
                    assert_eq!(status, WEIR_ERR_COUNTS_OFF, "{read}");
                }
            }
        }
    }
}

fn hostile_now(rng: &mut Rng) -> i64 {
    if rng.one_in(10) {
        rng.i64()
    } else {
        rng.below(10_000_000_000) as i64
    }
}

#[test]
fn counts_agree_with_every_answer_and_are_off_until_started() {
    count_panics();
    let mut rng = Rng::new(seed(0xc0c0));
    let mut calls = 0u64;
    for _ in 0..rounds(200) {
        // The bucket: a take counts its cost, a cost no take could pass is
        // an error, a refund's error status an error.
        let mut bucket = null_mut();
        assert_eq!(weir_bucket_new(10.0, 5.0, 0, &mut bucket), WEIR_OK);
        let mut want = Expected::new();
        for _ in 0..100 {
            let now = hostile_now(&mut rng);
            let n = rng.pick(&[1.0, 2.5, 5.0, 0.0, -1.0, 6.0, f64::NAN, f64::INFINITY]);
            if rng.one_in(4) {
                let status = sane(
                    weir_bucket_refund(bucket, now, hostile_now(&mut rng), n),
                    "weir_bucket_refund",
                );
                want.saw(if status == WEIR_OK {
                    Answer::Uncounted
                } else {
                    Answer::Error
                });
            } else if weir_bucket_take(bucket, now, n) {
                want.saw(Answer::Admitted(n));
            } else if n > 0.0 && n <= 5.0 {
                want.saw(Answer::Refused);
            } else {
                want.saw(Answer::Error);
            }
            want.check(
                &mut rng,
                "weir_bucket_start_counting",
                "weir_bucket_read_counts",
                || weir_bucket_start_counting(bucket),
                |out| weir_bucket_read_counts(bucket, out),
            );
            calls += 2;
        }
        weir_bucket_free(bucket);

        // The gate, the sliding window, the period and the budget: one
        // decision each, a unit admitted or refused.
        let mut gate = null_mut();
        assert_eq!(weir_gate_new(3, &mut gate), WEIR_OK);
        let mut sliding = null_mut();
        assert_eq!(weir_sliding_new(3, 1_000_000_000, &mut sliding), WEIR_OK);
        let mut period = null_mut();
        assert_eq!(
            weir_period_new(3, 1_000_000_000, false, &mut period),
            WEIR_OK
        );
        let mut budget = null_mut();
        assert_eq!(weir_budget_new(null(), 0, &mut budget), WEIR_OK);
        let (mut g, mut sl, mut pe, mut bu) = (
            Expected::new(),
            Expected::new(),
            Expected::new(),
            Expected::new(),
        );
        for _ in 0..100 {
            let now = hostile_now(&mut rng);
            if rng.one_in(3) {
                weir_gate_leave(gate);
            } else {
                g.saw(Answer::from(weir_gate_enter(gate)));
            }
            sl.saw(Answer::from(weir_sliding_take(sliding, now)));
            let quota = weir_period_take(period, now);
            pe.saw(Answer::from(
                quota != weir_period_quota::WEIR_PERIOD_QUOTA_OVER,
            ));
            if rng.one_in(2) {
                weir_budget_deposit(budget, now);
            } else {
                bu.saw(Answer::from(weir_budget_withdraw(budget, now)));
            }
            g.check(
                &mut rng,
                "weir_gate_start_counting",
                "weir_gate_read_counts",
                || weir_gate_start_counting(gate),
                |out| weir_gate_read_counts(gate, out),
            );
            sl.check(
                &mut rng,
                "weir_sliding_start_counting",
                "weir_sliding_read_counts",
                || weir_sliding_start_counting(sliding),
                |out| weir_sliding_read_counts(sliding, out),
            );
            pe.check(
                &mut rng,
                "weir_period_start_counting",
                "weir_period_read_counts",
                || weir_period_start_counting(period),
                |out| weir_period_read_counts(period, out),
            );
            bu.check(
                &mut rng,
                "weir_budget_start_counting",
                "weir_budget_read_counts",
                || weir_budget_start_counting(budget),
                |out| weir_budget_read_counts(budget, out),
            );
            calls += 8;
        }
        weir_gate_free(gate);
        weir_sliding_free(sliding);
        weir_period_free(period);
        weir_budget_free(budget);

        // The window: every add admitted, its value the units.
        let mut window = null_mut();
        assert_eq!(weir_window_new(4, 1_000_000_000, 0, &mut window), WEIR_OK);
        let mut w = Expected::new();
        for _ in 0..100 {
            let value = rng.below(2001) as i64 - 1000;
            let status = sane(
                weir_window_add(window, hostile_now(&mut rng), value),
                "weir_window_add",
            );
            assert_eq!(status, WEIR_OK);
            w.saw(Answer::Admitted(value as f64));
            w.check(
                &mut rng,
                "weir_window_start_counting",
                "weir_window_read_counts",
                || weir_window_start_counting(window),
                |out| weir_window_read_counts(window, out),
            );
            calls += 2;
        }
        weir_window_free(window);

        // The breaker, the shedder and the adaptive limit: a NULL or
        // misaligned ticket is an error, a settle's error status an error.
        let mut breaker = null_mut();
        assert_eq!(weir_breaker_new(null(), 0, &mut breaker), WEIR_OK);
        let mut shedder = null_mut();
        assert_eq!(weir_shedder_new(null(), 0, &mut shedder), WEIR_OK);
        let mut limit = null_mut();
        assert_eq!(weir_concurrency_new(null(), &mut limit), WEIR_OK);
        let (mut br, mut sh, mut co) = (Expected::new(), Expected::new(), Expected::new());
        let mut tickets = Vec::new();
        let mut flights = Vec::new();
        let mut leases = Vec::new();
        for _ in 0..100 {
            let now = hostile_now(&mut rng);
            let mut odd = [0u64; 8];
            let bad = rng.one_in(8);
            let mut ticket = weir_breaker_ticket::default();
            let at: *mut weir_breaker_ticket = if bad {
                misaligned(&mut odd)
            } else {
                &mut ticket
            };
            let allowed = weir_breaker_allow(breaker, now, rng.unit(), at);
            br.saw(if bad {
                Answer::Error
            } else {
                Answer::from(allowed)
            });
            if allowed {
                tickets.push(ticket);
            }
            if let Some(mut held) = tickets.pop().filter(|_| rng.one_in(2)) {
                let status = if rng.one_in(2) {
                    sane(
                        weir_breaker_pass(breaker, &mut held, now),
                        "weir_breaker_pass",
                    )
                } else {
                    sane(
                        weir_breaker_fail(breaker, &mut held, now),
                        "weir_breaker_fail",
                    )
                };
                br.saw(if status == WEIR_OK {
                    Answer::Uncounted
                } else {
                    Answer::Error
                });
                if rng.one_in(3) {
                    let again = sane(
                        weir_breaker_pass(breaker, &mut held, now),
                        "weir_breaker_pass",
                    );
                    assert_eq!(again, WEIR_ERR_SETTLED);
                    br.saw(Answer::Error);
                }
            }
            let mut flight = weir_shedder_ticket::default();
            let at: *mut weir_shedder_ticket = if bad { null_mut() } else { &mut flight };
            let allowed = if rng.one_in(2) {
                let allowed = weir_shedder_allow(shedder, now, rng.below(1100) as i32, at);
                sh.saw(if bad {
                    Answer::Error
                } else {
                    Answer::from(allowed)
                });
                allowed
            } else {
                // The classed form counts alike; a class outside the four
                // is an error.
                let class = rng.below(6) as i32 - 1;
                let status = sane(
                    weir_shedder_allow_class(shedder, now, rng.below(1100) as i32, class, at),
                    "weir_shedder_allow_class",
                );
                let allowed = status == WEIR_OK && flight.flying == 1;
                sh.saw(if status == WEIR_OK {
                    Answer::from(allowed)
                } else {
                    Answer::Error
                });
                allowed
            };
            if allowed {
                flights.push(flight);
            }
            if let Some(mut held) = flights.pop().filter(|_| rng.one_in(2)) {
                let status = if rng.one_in(2) {
                    sane(
                        weir_shedder_pass(shedder, &mut held, now),
                        "weir_shedder_pass",
                    )
                } else {
                    sane(weir_shedder_fail(shedder, &mut held), "weir_shedder_fail")
                };
                sh.saw(if status == WEIR_OK {
                    Answer::Uncounted
                } else {
                    Answer::Error
                });
            }
            let mut lease = weir_concurrency_ticket::default();
            let at: *mut weir_concurrency_ticket = if bad {
                misaligned(&mut odd)
            } else {
                &mut lease
            };
            let entered = weir_concurrency_enter(limit, now, at);
            co.saw(if bad {
                Answer::Error
            } else {
                Answer::from(entered)
            });
            if entered {
                leases.push(lease);
            }
            if let Some(mut held) = leases.pop().filter(|_| rng.one_in(2)) {
                let status = sane(
                    weir_concurrency_leave(limit, &mut held, now, rng.one_in(2)),
                    "weir_concurrency_leave",
                );
                co.saw(if status == WEIR_OK {
                    Answer::Uncounted
                } else {
                    Answer::Error
                });
            }
            br.check(
                &mut rng,
                "weir_breaker_start_counting",
                "weir_breaker_read_counts",
                || weir_breaker_start_counting(breaker),
                |out| weir_breaker_read_counts(breaker, out),
            );
            sh.check(
                &mut rng,
                "weir_shedder_start_counting",
                "weir_shedder_read_counts",
                || weir_shedder_start_counting(shedder),
                |out| weir_shedder_read_counts(shedder, out),
            );
            co.check(
                &mut rng,
                "weir_concurrency_start_counting",
                "weir_concurrency_read_counts",
                || weir_concurrency_start_counting(limit),
                |out| weir_concurrency_read_counts(limit, out),
            );
            calls += 12;
        }
        weir_breaker_free(breaker);
        weir_shedder_free(shedder);
        weir_concurrency_free(limit);

        // The pool: READY and MAKE admitted, WAIT refused, STALE uncounted;
        // the error statuses of made, give, drop and unmade errors.
        let mut pool = null_mut();
        assert_eq!(weir_pool_new(null(), &mut pool), WEIR_OK);
        let mut po = Expected::new();
        for _ in 0..100 {
            let now = hostile_now(&mut rng);
            let item = rng.below(6) as usize + 1;
            let status = match rng.below(5) {
                0 => {
                    let taken = weir_pool_take(pool, now);
                    po.saw(match taken.kind {
                        WEIR_POOL_TAKEN_READY | WEIR_POOL_TAKEN_MAKE => Answer::Admitted(1.0),
                        WEIR_POOL_TAKEN_WAIT => Answer::Refused,
                        _ => Answer::Uncounted,
                    });
                    None
                }
                1 => Some(sane(weir_pool_made(pool, item, now), "weir_pool_made")),
                2 => {
                    let mut kept = false;
                    Some(sane(
                        weir_pool_give(pool, item, now, &mut kept),
                        "weir_pool_give",
                    ))
                }
                3 => Some(sane(weir_pool_drop(pool, item), "weir_pool_drop")),
                _ => Some(sane(weir_pool_unmade(pool), "weir_pool_unmade")),
            };
            if let Some(status) = status {
                po.saw(if status == WEIR_OK {
                    Answer::Uncounted
                } else {
                    Answer::Error
                });
            }
            po.check(
                &mut rng,
                "weir_pool_start_counting",
                "weir_pool_read_counts",
                || weir_pool_start_counting(pool),
                |out| weir_pool_read_counts(pool, out),
            );
            calls += 2;
        }
        let mut out = [0usize; 64];
        weir_pool_close(pool, out.as_mut_ptr(), out.len());
        weir_pool_free(pool);

        // The bloom: a NULL key or a negative `now` is an error.
        let mut limit = weir_rate_limit {
            interval_ns: 0,
            interval_frac: 0,
            burst: 0,
        };
        assert_eq!(weir_rate_limit_new(1.0, 2, &mut limit), WEIR_OK);
        let mut bloom = null_mut();
        assert_eq!(weir_bloom_new(10, 3, &limit, 1, 2, &mut bloom), WEIR_OK);
        let mut bl = Expected::new();
        for _ in 0..100 {
            let now = hostile_now(&mut rng);
            let key = [rng.below(4) as u8; 16];
            let ptr = key_ptr(&key, &mut rng);
            let allowed = weir_bloom_allow(bloom, now, ptr, key.len());
            bl.saw(if ptr.is_null() || now < 0 {
                assert!(!allowed);
                Answer::Error
            } else {
                Answer::from(allowed)
            });
            bl.check(
                &mut rng,
                "weir_bloom_start_counting",
                "weir_bloom_read_counts",
                || weir_bloom_start_counting(bloom),
                |out| weir_bloom_read_counts(bloom, out),
            );
            calls += 2;
        }
        weir_bloom_free(bloom);
    }
    // NULL handles answer NULL to both.
    let mut out = weir_counts::default();
    assert_eq!(weir_bucket_start_counting(null()), WEIR_ERR_NULL);
    assert_eq!(weir_bucket_read_counts(null(), &mut out), WEIR_ERR_NULL);
    assert_eq!(weir_bloom_read_counts(null(), &mut out), WEIR_ERR_NULL);
    eprintln!("counts: {calls} calls");
    assert_no_panics("counts");
}

impl From<bool> for Answer {
    fn from(admitted: bool) -> Answer {
        if admitted {
            Answer::Admitted(1.0)
        } else {
            Answer::Refused
        }
    }
}

// ---------------------------------------------------------------------------
// Keyed tables: on the heap, placed, shared, and their sizing.

/// Memory aligned as a keyed table's buckets (128 bytes).
#[repr(C, align(128))]
#[derive(Clone, Copy)]
struct Line128([u64; 16]);

/// `bytes` bytes of zeros, 128-aligned, then `shift` bytes further on.
fn keyed_memory(lines: &mut Vec<Line128>, bytes: usize, shift: usize) -> *mut c_void {
    *lines = vec![Line128([0; 16]); bytes / 128 + 3];
    (lines.as_mut_ptr() as usize + shift) as *mut c_void
}

/// A bucket count: mostly a few, sometimes 0 or past the maximum (refused),
/// never a real but costly allocation.
fn hostile_buckets(rng: &mut Rng) -> u64 {
    let buckets = rng.u64();
    if buckets > 64 && buckets <= WEIR_KEYED_MAX_BUCKETS {
        rng.below(65)
    } else {
        buckets
    }
}

/// Hostile calls on a table made with `overflow`: every status sane, the
/// out-values written only on `WEIR_OK`, `next` at or after `now`, a key
/// whose `next` is `now` never refused by its own word, and the reading in
/// range. Between decisions, now and then, a new limit of either kind,
/// hostile or NULL: the table's kind takes it or refuses it with a status,
/// and its kind and policy stay.
fn hostile_keyed_calls(table: *mut weir_keyed, overflow: u32, rng: &mut Rng) -> u64 {
    let mut calls = 0;
    let mut clock = Clock::new(rng);
    if rng.one_in(2) {
        clock.now = clock.now.saturating_abs();
    }
    let keys: Vec<Vec<u8>> = (0..6).map(|_| rng.key()).collect();
    let mut before = weir_keyed_reading::default();
    assert_eq!(weir_keyed_read(table, &mut before), WEIR_OK);
    for _ in 0..40 {
        if rng.one_in(8) {
            let status = if rng.one_in(2) {
                let gcra = hostile_gcra_limit(rng);
                let ptr: *const weir_gcra_limit = if rng.one_in(20) { null() } else { &gcra };
                sane(weir_keyed_reconfigure(table, ptr), "weir_keyed_reconfigure")
            } else {
                let rate = hostile_rate_limit(rng);
                let ptr: *const weir_rate_limit = if rng.one_in(20) { null() } else { &rate };
                sane(
                    weir_keyed_reconfigure_rate(table, ptr),
                    "weir_keyed_reconfigure_rate",
                )
            };
            calls += 1;
            let mut after = weir_keyed_reading::default();
            assert_eq!(weir_keyed_read(table, &mut after), WEIR_OK);
            assert_eq!(
                (after.kind, after.overflow_policy, after.buckets),
                (before.kind, before.overflow_policy, before.buckets),
                "a reconfiguration ({status:?}) changed the table's kind or shape"
            );
        }
        let now = clock.tick(rng);
        let key = &keys[rng.below(6) as usize];
        let k = key_ptr(key, rng);
        let len = if rng.one_in(60) {
            usize::MAX - rng.below(2) as usize
        } else {
            key.len()
        };
        let n = if rng.one_in(3) {
            rng.i64()
        } else {
            1 + rng.below(4) as i64
        };
        let mut wait = -7i64;
        let next = sane(
            weir_keyed_next(table, now, k, len, &mut wait),
            "weir_keyed_next",
        );
        let mut decision = 99u32;
        let decided = sane(
            weir_keyed_decide(table, now, k, len, 1, &mut decision),
            "weir_keyed_decide",
        );
        let mut many = 99u32;
        let decided_n = sane(
            weir_keyed_decide(table, now, k, len, n, &mut many),
            "weir_keyed_decide",
        );
        let allowed = weir_keyed_allow(table, now, k, len);
        calls += 4;
        if next == WEIR_OK {
            assert!(wait >= 0, "a wait of {wait}");
            if wait == 0 {
                assert_eq!(decided, WEIR_OK);
                assert_ne!(decision, WEIR_KEYED_REFUSED, "no wait but refused at {now}");
            }
        } else {
            assert_eq!(wait, -7);
        }
        for (status, answer) in [(decided, decision), (decided_n, many)] {
            if status == WEIR_OK {
                assert!(answer <= WEIR_KEYED_OVERFLOW_REFUSED);
            } else {
                assert_eq!(answer, 99);
            }
        }
        if now < 0 || (k.is_null() && len > 0) {
            assert!(!allowed && next != WEIR_OK && decided != WEIR_OK);
        }
        if rng.one_in(8) {
            let mut reading = weir_keyed_reading::default();
            assert_eq!(
                sane(weir_keyed_read(table, &mut reading), "weir_keyed_read"),
                WEIR_OK
            );
            calls += 1;
            assert_eq!(reading.slots, reading.buckets * 8);
            assert!(reading.occupied <= reading.slots);
            assert_eq!(reading.overflow_policy, overflow);
            assert!([WEIR_KEYED_KIND_RATE, WEIR_KEYED_KIND_GCRA].contains(&reading.kind));
        }
    }
    calls
}

#[test]
fn keyed_never_panics_in_any_form() {
    count_panics();
    let mut rng = Rng::new(seed(0x6e1ed));
    let mut lines = Vec::new();
    let mut odd = [0u64; 8];
    let mut calls = 0u64;
    let mut made = [0u64; 3];
    for _ in 0..rounds(3_000) {
        let buckets = hostile_buckets(&mut rng);
        let overflow = if rng.one_in(4) {
            rng.u32()
        } else {
            rng.below(3) as u32
        };
        let gcra = hostile_gcra_limit(&mut rng);
        let rate = hostile_rate_limit(&mut rng);
        let gcra_ptr: *const weir_gcra_limit = if rng.one_in(20) { null() } else { &gcra };
        let rate_ptr: *const weir_rate_limit = if rng.one_in(20) { null() } else { &rate };
        let (seed0, seed1, kind) = (rng.next(), rng.next(), rng.one_in(2));
        let mut table = null_mut();
        let form = rng.below(3) as usize;
        let status = match form {
            // The heap.
            0 => {
                let status = if kind {
                    sane(
                        weir_keyed_new(buckets, gcra_ptr, overflow, seed0, seed1, &mut table),
                        "weir_keyed_new",
                    )
                } else {
                    sane(
                        weir_keyed_new_rate(buckets, rate_ptr, overflow, seed0, seed1, &mut table),
                        "weir_keyed_new_rate",
                    )
                };
                if rng.one_in(30) {
                    sane(
                        weir_keyed_new(4, gcra_ptr, 0, 1, 2, null_mut()),
                        "weir_keyed_new",
                    );
                }
                status
            }
            // Placed: memory of any length and alignment.
            1 => {
                let (mut bytes, mut align) = (0usize, 0usize);
                let footprint = sane(
                    weir_keyed_footprint(buckets, &mut bytes, &mut align),
                    "weir_keyed_footprint",
                );
                sane(
                    weir_keyed_footprint(buckets, misaligned(&mut odd), &mut align),
                    "weir_keyed_footprint",
                );
                let bytes = if footprint == WEIR_OK {
                    assert_eq!(align, 128);
                    bytes
                } else {
                    rng.below(1 << 14) as usize
                };
                let shift = if rng.one_in(5) {
                    rng.pick(&[1, 8, 64])
                } else {
                    0
                };
                let mem = if rng.one_in(30) {
                    null_mut()
                } else {
                    keyed_memory(&mut lines, bytes, shift)
                };
                let len = placed_len(bytes, &mut rng).min(bytes + 128);
                let status = if kind {
                    sane(
                        weir_keyed_init_in(
                            mem, len, buckets, gcra_ptr, overflow, seed0, seed1, &mut table,
                        ),
                        "weir_keyed_init_in",
                    )
                } else {
                    sane(
                        weir_keyed_init_rate_in(
                            mem, len, buckets, rate_ptr, overflow, seed0, seed1, &mut table,
                        ),
                        "weir_keyed_init_rate_in",
                    )
                };
                if status == WEIR_OK {
                    assert!(footprint == WEIR_OK && shift == 0 && len >= bytes);
                }
                status
            }
            // Shared: laid, attached, then its header spoiled.
            _ => {
                let (mut bytes, mut align) = (0usize, 0usize);
                let footprint = sane(
                    weir_keyed_shared_footprint(buckets, &mut bytes, &mut align),
                    "weir_keyed_shared_footprint",
                );
                if footprint != WEIR_OK {
                    calls += 1;
                    continue;
                }
                assert_eq!(align, 128);
                let shift = if rng.one_in(5) {
                    rng.pick(&[1, 8, 64])
                } else {
                    0
                };
                let mem = keyed_memory(&mut lines, bytes, shift);
                let len = placed_len(bytes, &mut rng).min(bytes + 128);
                let status = if kind {
                    sane(
                        weir_keyed_init_shared(
                            mem, len, buckets, gcra_ptr, overflow, seed0, seed1, &mut table,
                        ),
                        "weir_keyed_init_shared",
                    )
                } else {
                    sane(
                        weir_keyed_init_shared_rate(
                            mem, len, buckets, rate_ptr, overflow, seed0, seed1, &mut table,
                        ),
                        "weir_keyed_init_shared_rate",
                    )
                };
                calls += 2;
                if status == WEIR_OK {
                    assert!(shift == 0 && len >= bytes);
                    let mut again = null_mut();
                    assert_eq!(
                        sane(
                            weir_keyed_attach(mem, bytes, &mut again),
                            "weir_keyed_attach"
                        ),
                        WEIR_OK
                    );
                    assert_eq!(again, table);
                    calls += hostile_keyed_calls(again, overflow, &mut rng);
                    made[2] += 1;
                    // Does nothing: the region is the caller's. (Before the
                    // bytes below are spoiled: a handle is not to be used
                    // once its memory has been written over.)
                    weir_keyed_free(table);
                    // One header byte changed, then the region cut short,
                    // then random bytes: each refused, nothing written.
                    let header = mem.cast::<u8>();
                    let at = rng.below(WEIR_REGION_HEADER_BYTES as u64) as usize;
                    let flip = 1 + rng.below(255) as u8;
                    // SAFETY (test): `at` is inside the region's header.
                    unsafe { *header.add(at) ^= flip };
                    let mut refused = null_mut();
                    assert_ne!(
                        sane(
                            weir_keyed_attach(mem, bytes, &mut refused),
                            "weir_keyed_attach"
                        ),
                        WEIR_OK
                    );
                    // SAFETY (test): as above, put back.
                    unsafe { *header.add(at) ^= flip };
                    let short = rng.below(bytes as u64) as usize;
                    assert_eq!(
                        sane(
                            weir_keyed_attach(mem, short, &mut refused),
                            "weir_keyed_attach"
                        ),
                        WEIR_ERR_REGION_SIZE
                    );
                    for word in 0..bytes / 8 {
                        // SAFETY (test): inside the region's `bytes`.
                        unsafe { *mem.cast::<u64>().add(word) = rng.next() };
                    }
                    assert_ne!(
                        sane(
                            weir_keyed_attach(mem, bytes, &mut refused),
                            "weir_keyed_attach"
                        ),
                        WEIR_OK
                    );
                    assert!(refused.is_null());
                    calls += 4;
                    continue;
                }
                assert!(table.is_null());
                continue;
            }
        };
        calls += 2;
        if status != WEIR_OK {
            assert!(table.is_null(), "*out written on {status:?}");
            continue;
        }
        made[form] += 1;
        calls += hostile_keyed_calls(table, overflow, &mut rng);
        weir_keyed_free(table);
    }
    weir_keyed_free(null_mut());
    let gcra = hostile_gcra_limit(&mut rng);
    let rate = hostile_rate_limit(&mut rng);
    assert_eq!(weir_keyed_reconfigure(null_mut(), &gcra), WEIR_ERR_NULL);
    assert_eq!(
        weir_keyed_reconfigure_rate(null_mut(), &rate),
        WEIR_ERR_NULL
    );
    eprintln!("keyed: {calls} calls, made by form {made:?}");
    if rounds(3_000) >= 1_000 {
        assert!(made[0] > 0 && made[1] > 0, "a form never made: {made:?}");
        if weir_keyed_lock_free() {
            assert!(made[2] > 0, "never laid a shared table: {made:?}");
        }
    }
    assert_no_panics("keyed");
}

#[test]
fn keyed_sizing_never_panics_and_answers_a_chance() {
    count_panics();
    let mut rng = Rng::new(seed(0x512e));
    // Each weir_keyed_buckets_for solves the formula some 33 times: a
    // few dozen rounds, a second or two unoptimised.
    for _ in 0..rounds(60) {
        let (keys, slots) = (rng.f64(), rng.f64());
        let chance = weir_keyed_overflow_chance(keys, slots);
        let valid = |x: f64| x.is_finite() && x >= 0.0;
        if valid(keys) && valid(slots) {
            assert!(
                (0.0..=1.0).contains(&chance),
                "{keys} keys, {slots} slots: {chance}"
            );
        } else {
            assert!(chance.is_nan());
        }
        let mut buckets = 0xdead;
        let keys = if rng.one_in(2) {
            rng.below(1 << 20)
        } else {
            rng.u64()
        };
        let chance = if rng.one_in(2) { rng.unit() } else { rng.f64() };
        let status = sane(
            weir_keyed_buckets_for(keys, chance, &mut buckets),
            "weir_keyed_buckets_for",
        );
        if status == WEIR_OK {
            assert!((1..=WEIR_KEYED_MAX_BUCKETS).contains(&buckets));
            let fill = weir_keyed_overflow_chance(keys as f64, buckets as f64 * 8.0);
            assert!(
                fill <= chance,
                "{keys} keys in {buckets}: {fill} > {chance}"
            );
        } else {
            assert_eq!(buckets, 0xdead);
        }
        sane(
            weir_keyed_buckets_for(keys, chance, misaligned(&mut [0; 8])),
            "weir_keyed_buckets_for",
        );
    }
    let _ = weir_keyed_lock_free();
    assert_no_panics("keyed sizing");
}

// ---------------------------------------------------------------------------
// Placed handles: every type's weir_X_init_in in memory of any length and
// alignment, with hostile arguments.

/// Memory for a placed handle: `bytes` bytes at a 64-aligned start plus
/// `shift`, inside a buffer of zeros with room to spare.
fn placed_memory(lines: &mut Vec<Line64>, bytes: usize, shift: usize) -> *mut c_void {
    *lines = (0..bytes / 64 + 3).map(|_| Line64([0; 8])).collect();
    (lines.as_mut_ptr() as usize + shift) as *mut c_void
}

/// A length near the footprint, or far from it.
fn placed_len(footprint: usize, rng: &mut Rng) -> usize {
    match rng.below(6) {
        0 => 0,
        1 => footprint.saturating_sub(1),
        2 | 3 => footprint,
        4 => footprint + rng.below(64) as usize,
        _ => usize::MAX - rng.below(2) as usize,
    }
}

/// A bloom region of 8 to 64 words laid in `lines`, then as often as not
/// spoiled: cut short, moved off its 64-byte alignment, NULL, or a header
/// word overwritten. Answers its start and length.
fn hostile_bloom_region(lines: &mut Vec<Line64>, rng: &mut Rng) -> (*mut c_void, usize) {
    let size_log2 = 3 + rng.below(4) as u32;
    let footprint = weir_bloom_footprint(size_log2);
    *lines = (0..footprint / 64 + 2).map(|_| Line64([0; 8])).collect();
    let mem = lines.as_mut_ptr().cast::<c_void>();
    let mut limit = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    let (per_s, burst) = (1.0 + rng.unit() * 1e4, 1 + rng.below(5) as i64);
    assert_eq!(weir_rate_limit_new(per_s, burst, &mut limit), WEIR_OK);
    let hashes = 1 + rng.below(8) as u32;
    let _ = weir_bloom_init_in(mem, footprint, size_log2, hashes, &limit, rng.next(), 7);
    match rng.below(8) {
        0 => (mem, footprint - 1 - rng.below(64) as usize),
        1 => ((mem as usize + 8) as *mut c_void, footprint),
        2 => (null_mut(), footprint),
        3 => {
            let at = rng.below(8) as usize;
            Line64::words(lines, 0, 8)[at] = rng.next();
            (mem, footprint)
        }
        _ => (mem, footprint + rng.below(2) as usize * 64),
    }
}

#[test]
fn placed_handles_never_panic_and_refuse_short_or_misaligned_memory() {
    count_panics();
    let mut rng = Rng::new(seed(0x91ace));
    let mut lines = Vec::new();
    let mut region = Vec::new();
    let mut calls = 0u64;
    // How many of each kind were laid: every kind is, in a full run.
    let mut laid = [0u32; 14];
    for _ in 0..rounds(4_000) {
        let kind = rng.below(14);
        let (mut bytes, mut align) = (0usize, 0usize);
        // Each arm: the footprint's status, then a closure laying the handle
        // at (mem, len) and answering the status, and one running a few
        // calls on it and freeing it.
        let breaker_policy = hostile_breaker_policy(&mut rng);
        let budget_policy = hostile_budget_policy(&mut rng);
        let lease_policy = hostile_lease_policy(&mut rng);
        let lease_ptr: *const weir_lease_policy = if rng.one_in(20) {
            null()
        } else {
            &lease_policy
        };
        let concurrency_policy = hostile_concurrency_policy(&mut rng);
        let shed_policy = hostile_shed(&mut rng);
        let (size, span) = (
            if rng.one_in(4) {
                rng.i32()
            } else {
                rng.below(100) as i32
            },
            rng.span(),
        );
        let quota = if rng.one_in(4) {
            rng.i64()
        } else {
            rng.below(100) as i64
        };
        let (rate, burst) = (rng.unit() * 1e3, rng.unit() * 100.0);
        let now = rng.i64();
        let pool_policy = hostile_pool_policy(&mut rng);
        let pool_ptr: *const weir_pool_policy = if rng.one_in(20) { null() } else { &pool_policy };
        // A bloom region for a view: laid, then sometimes cut short, moved
        // off its alignment, NULL or with a header word overwritten.
        let (rmem, rlen) = hostile_bloom_region(&mut region, &mut rng);
        // A placed bloom's own words: a shape mostly in range, a limit
        // of either kind mostly valid, sometimes NULL.
        let bloom_size = match rng.below(8) {
            0 => rng.u32(),
            1 => rng.below(3) as u32,
            _ => 3 + rng.below(5) as u32,
        };
        let bloom_hashes = rng.below(10) as u32;
        let (rate_limit, gcra_limit) = (hostile_rate_limit(&mut rng), hostile_gcra_limit(&mut rng));
        let rate_ptr: *const weir_rate_limit = if rng.one_in(20) { null() } else { &rate_limit };
        let gcra_ptr: *const weir_gcra_limit = if rng.one_in(20) { null() } else { &gcra_limit };
        let (seed0, seed1) = (rng.next(), rng.next());
        let footprint = match kind {
            0 => weir_breaker_footprint(&breaker_policy, &mut bytes, &mut align),
            1 => weir_window_footprint(size, span, &mut bytes, &mut align),
            2 => weir_sliding_footprint(quota, span, &mut bytes, &mut align),
            3 => weir_bucket_footprint(&mut bytes, &mut align),
            4 => weir_gate_footprint(&mut bytes, &mut align),
            5 => weir_period_footprint(&mut bytes, &mut align),
            6 => weir_budget_footprint(&mut bytes, &mut align),
            7 => weir_concurrency_footprint(&mut bytes, &mut align),
            8 => weir_shedder_footprint(&shed_policy, &mut bytes, &mut align),
            9 => weir_pool_footprint(pool_ptr, &mut bytes, &mut align),
            10 => weir_bloom_view_footprint(&mut bytes, &mut align),
            12 | 13 => weir_bloom_place_footprint(bloom_size, &mut bytes, &mut align),
            _ => weir_lease_footprint(&mut bytes, &mut align),
        };
        let names = [
            "weir_breaker_footprint",
            "weir_window_footprint",
            "weir_sliding_footprint",
            "weir_bucket_footprint",
            "weir_gate_footprint",
            "weir_period_footprint",
            "weir_budget_footprint",
            "weir_concurrency_footprint",
            "weir_shedder_footprint",
            "weir_pool_footprint",
            "weir_bloom_view_footprint",
            "weir_lease_footprint",
            "weir_bloom_place_footprint",
            "weir_bloom_place_footprint",
        ];
        sane(footprint, names[kind as usize]);
        calls += 1;
        if footprint != WEIR_OK {
            assert_eq!((bytes, align), (0, 0), "a footprint wrote on an error");
            continue;
        }
        // A footprint past any memory this test can give is not laid.
        if bytes > 1 << 24 {
            continue;
        }
        assert!(align.is_power_of_two() && align <= 64);
        let shift = if rng.one_in(5) {
            [1, 4, 8, 32][rng.below(4) as usize]
        } else {
            0
        };
        let mem = placed_memory(&mut lines, bytes, shift);
        let len = placed_len(bytes, &mut rng);
        let mem = if rng.one_in(20) { null_mut() } else { mem };
        let fits = !mem.is_null() && (mem as usize) % align == 0 && len >= bytes;
        macro_rules! lay {
            ($name:literal, $init:expr, $calls:expr, $free:expr) => {{
                let mut out = null_mut();
                let status = sane($init(&mut out), $name);
                calls += 1;
                if status == WEIR_OK {
                    laid[kind as usize] += 1;
                    assert!(fits, "{} laid a handle in memory that does not fit", $name);
                    assert_eq!(out as *mut c_void, mem);
                    $calls(out);
                    $free(out);
                    $free(out);
                } else {
                    assert!(out.is_null(), "{} wrote *out on {status:?}", $name);
                    if fits {
                        assert!(
                            status != WEIR_ERR_PLACED_TOO_SMALL
                                && status != WEIR_ERR_PLACED_MISALIGNED,
                            "{} refused memory that fits",
                            $name
                        );
                    }
                }
            }};
        }
        let mut clock = Clock::new(&mut rng);
        let times: Vec<i64> = (0..10).map(|_| clock.tick(&mut rng)).collect();
        match kind {
            0 => lay!(
                "weir_breaker_init_in",
                |out| weir_breaker_init_in(mem, len, &breaker_policy, now, out),
                |b| for &t in &times {
                    let mut ticket = weir_breaker_ticket::default();
                    if weir_breaker_allow(b, t, 0.5, &mut ticket) {
                        sane(weir_breaker_pass(b, &mut ticket, t), "weir_breaker_pass");
                    }
                    let ratio = weir_breaker_ratio(b, t);
                    assert!((0.0..=1.0).contains(&ratio), "ratio {ratio}");
                },
                weir_breaker_free
            ),
            1 => lay!(
                "weir_window_init_in",
                |out| weir_window_init_in(mem, len, size, span, now, out),
                |w| for &t in &times {
                    sane(weir_window_add(w, t, 1), "weir_window_add");
                    let mut total = weir_window_total::default();
                    sane(
                        weir_window_read_total(w, t, true, &mut total),
                        "weir_window_read_total",
                    );
                    assert!(total.count >= 0 && total.count <= 10);
                },
                weir_window_free
            ),
            2 => lay!(
                "weir_sliding_init_in",
                |out| weir_sliding_init_in(mem, len, quota, span, out),
                |s| for &t in &times {
                    weir_sliding_take(s, t);
                    let left = weir_sliding_left(s, t);
                    assert!((0..=quota).contains(&left));
                },
                weir_sliding_free
            ),
            3 => lay!(
                "weir_bucket_init_in",
                |out| weir_bucket_init_in(mem, len, rate, burst, now, out),
                |b| for &t in &times {
                    weir_bucket_take(b, t, 1.0);
                    assert!(weir_bucket_tokens(b, t) <= burst.max(1.0));
                },
                weir_bucket_free
            ),
            4 => lay!(
                "weir_gate_init_in",
                |out| weir_gate_init_in(mem, len, quota, out),
                |g| for _ in &times {
                    weir_gate_enter(g);
                    let held = weir_gate_held(g);
                    assert!(held >= 0 && (quota <= 0 || held <= quota));
                },
                weir_gate_free
            ),
            5 => lay!(
                "weir_period_init_in",
                |out| weir_period_init_in(mem, len, quota, span, rng.one_in(2), out),
                |p| for &t in &times {
                    weir_period_take(p, t);
                    assert!((0..=quota).contains(&weir_period_left(p, t)));
                },
                weir_period_free
            ),
            6 => lay!(
                "weir_budget_init_in",
                |out| weir_budget_init_in(mem, len, &budget_policy, now, out),
                |b| for &t in &times {
                    weir_budget_deposit(b, t);
                    weir_budget_withdraw(b, t);
                    assert!(weir_budget_left(b, t) >= 0);
                },
                weir_budget_free
            ),
            8 => lay!(
                "weir_shedder_init_in",
                |out| weir_shedder_init_in(mem, len, &shed_policy, now, out),
                |s| for &t in &times {
                    let mut ticket = weir_shedder_ticket::default();
                    if weir_shedder_allow(s, t, 500, &mut ticket) {
                        sane(weir_shedder_pass(s, &mut ticket, t), "weir_shedder_pass");
                    }
                    assert!(weir_shedder_flying(s) == 0);
                },
                weir_shedder_free
            ),
            9 => lay!(
                "weir_pool_init_in",
                |out| weir_pool_init_in(mem, len, pool_ptr, out),
                |p| {
                    let mut item = 1;
                    for &t in &times {
                        let taken = weir_pool_take(p, t);
                        if taken.kind == WEIR_POOL_TAKEN_MAKE {
                            sane(weir_pool_made(p, item, t), "weir_pool_made");
                            item += 1;
                        }
                        let mut kept = false;
                        let back = if taken.kind == WEIR_POOL_TAKEN_READY {
                            taken.item
                        } else {
                            item - 1
                        };
                        sane(weir_pool_give(p, back, t, &mut kept), "weir_pool_give");
                        let mut out = [0usize; 4];
                        weir_pool_evict(p, t, out.as_mut_ptr(), 4);
                        assert_eq!(weir_pool_live(p), weir_pool_idle(p) + weir_pool_busy(p));
                    }
                },
                weir_pool_free
            ),
            10 if rng.one_in(8) => {
                // The view's memory inside its own region: refused, and
                // the region's words stay as they were.
                let lines_in = (rlen / 64).max(1) as u64;
                let inside = (rmem as usize).wrapping_add(64 * rng.below(lines_in) as usize);
                let mut out = null_mut();
                let status = sane(
                    weir_bloom_view_in(inside as *mut c_void, bytes, rmem, rlen, &mut out),
                    "weir_bloom_view_in",
                );
                calls += 1;
                assert!(
                    out.is_null() && status != WEIR_OK,
                    "a view laid over its region"
                );
            }
            10 => lay!(
                "weir_bloom_view_in",
                |out| weir_bloom_view_in(mem, len, rmem, rlen, out),
                |b| for &t in &times {
                    let key = t.to_le_bytes();
                    let k = key.as_ptr().cast::<c_void>();
                    let allowed = weir_bloom_allow(b, t, k, 8);
                    let next = weir_bloom_next(b, t, k, 8);
                    assert!(next >= 0);
                    assert!(!allowed || t >= 0, "a negative now allowed");
                    // The view and the region decide over the same words.
                    assert_eq!(next, weir_bloom_next_in(rmem, rlen, t, k, 8));
                },
                weir_bloom_free
            ),
            12 | 13 => {
                // Both kinds run the same calls; a key allowed never has to
                // wait, and a negative `now` is never allowed.
                let decide = |b: *mut weir_bloom| {
                    for &t in &times {
                        let key = (t % 5).to_le_bytes();
                        let k = key.as_ptr().cast::<c_void>();
                        let next = weir_bloom_next(b, t, k, 8);
                        let allowed = weir_bloom_allow(b, t, k, 8);
                        assert!(next >= 0);
                        assert!(!allowed || t >= 0, "a negative now allowed");
                        if next == 0 {
                            assert!(allowed, "next 0 but refused at {t}");
                        }
                    }
                };
                if kind == 12 {
                    lay!(
                        "weir_bloom_place_in",
                        |out| weir_bloom_place_in(
                            mem,
                            len,
                            bloom_size,
                            bloom_hashes,
                            rate_ptr,
                            seed0,
                            seed1,
                            out
                        ),
                        decide,
                        weir_bloom_free
                    )
                } else {
                    lay!(
                        "weir_bloom_place_gcra_in",
                        |out| weir_bloom_place_gcra_in(
                            mem,
                            len,
                            bloom_size,
                            bloom_hashes,
                            gcra_ptr,
                            seed0,
                            seed1,
                            out
                        ),
                        decide,
                        weir_bloom_free
                    )
                }
            }
            11 => lay!(
                "weir_lease_init_in",
                |out| weir_lease_init_in(mem, len, lease_ptr, now, out),
                |l| {
                    let cap = weir_lease_cap(l);
                    assert!(cap >= 1);
                    for &t in &times {
                        let mut answer = weir_lease_answer::default();
                        let status = sane(weir_lease_take(l, t, 1, &mut answer), "weir_lease_take");
                        if status == WEIR_OK && answer.ask > 0 {
                            sane(
                                weir_lease_grant(l, t, answer.ask, t.saturating_add(1_000_000), t),
                                "weir_lease_grant",
                            );
                        }
                        let unspent = weir_lease_unspent(l, t);
                        assert!((0..=cap).contains(&unspent), "unspent {unspent} cap {cap}");
                    }
                    weir_lease_release(l, now);
                },
                weir_lease_free
            ),
            _ => lay!(
                "weir_concurrency_init_in",
                |out| weir_concurrency_init_in(mem, len, &concurrency_policy, out),
                |c| for &t in &times {
                    let mut ticket = weir_concurrency_ticket::default();
                    if weir_concurrency_enter(c, t, &mut ticket) {
                        sane(
                            weir_concurrency_leave(c, &mut ticket, t, false),
                            "weir_concurrency_leave",
                        );
                    }
                    assert!(weir_concurrency_flying(c) == 0);
                },
                weir_concurrency_free
            ),
        }
    }
    eprintln!("placed handles: {calls} calls, laid by kind {laid:?}");
    if rounds(4_000) >= 2_000 {
        assert!(laid.iter().all(|&n| n > 0), "a kind never laid: {laid:?}");
    }
    assert_no_panics("placed handles");
}

// Shared regions: weir_X_init_shared in memory of any length and
// alignment with hostile arguments, then weir_X_attach on the region as
// laid, with one byte of its header changed, shortened, and over random
// bytes.

#[test]
fn shared_regions_never_panic_and_refuse_changed_headers() {
    count_panics();
    let mut rng = Rng::new(seed(0x5a4ed));
    let mut lines = Vec::new();
    let mut calls = 0u64;
    for _ in 0..rounds(1_500) {
        let kind = rng.below(9) as usize;
        let breaker_policy = hostile_breaker_policy(&mut rng);
        let budget_policy = hostile_budget_policy(&mut rng);
        let concurrency_policy = hostile_concurrency_policy(&mut rng);
        let size = if rng.one_in(4) {
            rng.i32()
        } else {
            rng.below(100) as i32
        };
        let (limit, quota, span, align_to) = (rng.i64(), rng.i64(), rng.span(), rng.one_in(2));
        let shed_policy = hostile_shed(&mut rng);
        let (rate, burst) = (rng.unit() * 1e3, rng.unit() * 100.0);
        let now = rng.i64();
        let (mut bytes, mut align) = (0usize, 0usize);
        let names = [
            "weir_breaker_shared_footprint",
            "weir_shedder_shared_footprint",
            "weir_bucket_shared_footprint",
            "weir_gate_shared_footprint",
            "weir_period_shared_footprint",
            "weir_budget_shared_footprint",
            "weir_concurrency_shared_footprint",
            "weir_window_shared_footprint",
            "weir_sliding_shared_footprint",
        ];
        let footprint = match kind {
            0 => weir_breaker_shared_footprint(&breaker_policy, &mut bytes, &mut align),
            1 => weir_shedder_shared_footprint(&shed_policy, &mut bytes, &mut align),
            2 => weir_bucket_shared_footprint(&mut bytes, &mut align),
            3 => weir_gate_shared_footprint(&mut bytes, &mut align),
            4 => weir_period_shared_footprint(&mut bytes, &mut align),
            5 => weir_budget_shared_footprint(&mut bytes, &mut align),
            6 => weir_concurrency_shared_footprint(&mut bytes, &mut align),
            7 => weir_window_shared_footprint(size, span, &mut bytes, &mut align),
            _ => weir_sliding_shared_footprint(quota % 1000, span, &mut bytes, &mut align),
        };
        sane(footprint, names[kind]);
        calls += 1;
        if footprint != WEIR_OK || bytes > 1 << 22 {
            continue;
        }
        assert_eq!(align, 64);
        let shift = if rng.one_in(5) {
            [1, 8, 32][rng.below(3) as usize]
        } else {
            0
        };
        let mem = placed_memory(&mut lines, bytes, shift);
        let len = placed_len(bytes, &mut rng).min(bytes + 64);
        let fits = shift == 0 && len >= bytes;
        macro_rules! shared {
            ($init:literal, $attach:literal, $lay:expr, $attach_fn:expr, $use:expr) => {{
                let mut out = null_mut();
                let status = sane($lay(mem, len, &mut out), $init);
                calls += 1;
                if status != WEIR_OK {
                    assert!(out.is_null(), "{} wrote *out on {status:?}", $init);
                    if fits {
                        assert!(
                            status != WEIR_ERR_PLACED_TOO_SMALL
                                && status != WEIR_ERR_PLACED_MISALIGNED,
                            "{} refused memory that fits",
                            $init
                        );
                    }
                    continue;
                }
                assert!(fits, "{} laid a region in memory that does not fit", $init);
                let handle = (mem as usize + WEIR_REGION_HANDLE_OFFSET) as *mut c_void;
                assert_eq!(out as *mut c_void, handle);
                let mut again = null_mut();
                assert_eq!(sane($attach_fn(mem, bytes, &mut again), $attach), WEIR_OK);
                assert_eq!(again, out);
                $use(again);
                // One header byte changed: refused, nothing written.
                let header = mem.cast::<u8>();
                let at = rng.below(WEIR_REGION_HEADER_BYTES as u64) as usize;
                let flip = 1 + rng.below(255) as u8;
                // SAFETY (test): `at` is inside the region's header.
                unsafe { *header.add(at) ^= flip };
                let mut refused = null_mut();
                let status = sane($attach_fn(mem, bytes, &mut refused), $attach);
                calls += 1;
                assert_ne!(
                    status, WEIR_OK,
                    "{} took a header changed at byte {at}",
                    $attach
                );
                assert!(refused.is_null());
                // SAFETY (test): as above, put back.
                unsafe { *header.add(at) ^= flip };
                let short = rng.below(bytes as u64) as usize;
                assert_eq!(
                    sane($attach_fn(mem, short, &mut refused), $attach),
                    WEIR_ERR_REGION_SIZE
                );
                assert_eq!(sane($attach_fn(mem, bytes, &mut refused), $attach), WEIR_OK);
                // Random bytes over the whole region.
                for word in 0..bytes / 8 {
                    // SAFETY (test): inside the region's `bytes`.
                    unsafe { *mem.cast::<u64>().add(word) = rng.next() };
                }
                let mut random = null_mut();
                let status = sane($attach_fn(mem, bytes, &mut random), $attach);
                calls += 1;
                assert_ne!(status, WEIR_OK);
                assert!(random.is_null());
            }};
        }
        // A pool has no shared form: its attach refuses whatever the bytes.
        let mut pool_out: *mut weir_pool = null_mut();
        assert_eq!(
            sane(
                weir_pool_attach(mem, len, &mut pool_out),
                "weir_pool_attach"
            ),
            WEIR_ERR_REGION_POOL
        );
        assert!(pool_out.is_null());
        calls += 1;
        match kind {
            0 => shared!(
                "weir_breaker_init_shared",
                "weir_breaker_attach",
                |m, l, o| weir_breaker_init_shared(m, l, &breaker_policy, now, o),
                |m, l, o| weir_breaker_attach(m, l, o),
                |b: *mut weir_breaker| {
                    let mut ticket = weir_breaker_ticket::default();
                    if weir_breaker_allow(b, now, 0.5, &mut ticket) {
                        sane(weir_breaker_pass(b, &mut ticket, now), "weir_breaker_pass");
                    }
                    let mut recoveries = weir_recoveries::default();
                    assert_eq!(
                        sane(
                            weir_breaker_recoveries(b, &mut recoveries),
                            "weir_breaker_recoveries"
                        ),
                        WEIR_OK
                    );
                    assert_eq!(recoveries, weir_recoveries::default());
                    weir_breaker_free(b);
                }
            ),
            1 => shared!(
                "weir_shedder_init_shared",
                "weir_shedder_attach",
                |m, l, o| weir_shedder_init_shared(m, l, &shed_policy, now, o),
                |m, l, o| weir_shedder_attach(m, l, o),
                |s: *mut weir_shedder| {
                    let mut ticket = weir_shedder_ticket::default();
                    if weir_shedder_allow(s, now, 500, &mut ticket) {
                        sane(weir_shedder_fail(s, &mut ticket), "weir_shedder_fail");
                    }
                    // Its policy is its region's, laid once for every process.
                    assert_eq!(
                        weir_shedder_reconfigure(s, null()),
                        WEIR_ERR_REGION_UNSUPPORTED
                    );
                    let mut recoveries = weir_recoveries::default();
                    assert_eq!(
                        sane(
                            weir_shedder_recoveries(s, &mut recoveries),
                            "weir_shedder_recoveries"
                        ),
                        WEIR_OK
                    );
                    weir_shedder_free(s);
                }
            ),
            3 => shared!(
                "weir_gate_init_shared",
                "weir_gate_attach",
                |m, l, o| weir_gate_init_shared(m, l, limit, o),
                |m, l, o| weir_gate_attach(m, l, o),
                |g: *mut weir_gate| {
                    if weir_gate_enter(g) {
                        weir_gate_leave(g);
                    }
                    weir_gate_free(g);
                }
            ),
            4 => shared!(
                "weir_period_init_shared",
                "weir_period_attach",
                |m, l, o| weir_period_init_shared(m, l, quota, span, align_to, o),
                |m, l, o| weir_period_attach(m, l, o),
                |p: *mut weir_period| {
                    weir_period_take(p, now);
                    let mut recoveries = weir_recoveries::default();
                    assert_eq!(
                        sane(
                            weir_period_recoveries(p, &mut recoveries),
                            "weir_period_recoveries"
                        ),
                        WEIR_OK
                    );
                    weir_period_free(p);
                }
            ),
            5 => shared!(
                "weir_budget_init_shared",
                "weir_budget_attach",
                |m, l, o| weir_budget_init_shared(m, l, &budget_policy, now, o),
                |m, l, o| weir_budget_attach(m, l, o),
                |b: *mut weir_budget| {
                    weir_budget_withdraw(b, now);
                    assert_eq!(
                        weir_budget_reconfigure(b, null(), now),
                        WEIR_ERR_REGION_UNSUPPORTED
                    );
                    let mut recoveries = weir_recoveries::default();
                    assert_eq!(
                        sane(
                            weir_budget_recoveries(b, &mut recoveries),
                            "weir_budget_recoveries"
                        ),
                        WEIR_OK
                    );
                    weir_budget_free(b);
                }
            ),
            6 => shared!(
                "weir_concurrency_init_shared",
                "weir_concurrency_attach",
                |m, l, o| weir_concurrency_init_shared(m, l, &concurrency_policy, o),
                |m, l, o| weir_concurrency_attach(m, l, o),
                |c: *mut weir_concurrency| {
                    assert_eq!(
                        weir_concurrency_reconfigure(c, null()),
                        WEIR_ERR_REGION_UNSUPPORTED
                    );
                    let mut recoveries = weir_recoveries::default();
                    assert_eq!(
                        sane(
                            weir_concurrency_recoveries(c, &mut recoveries),
                            "weir_concurrency_recoveries"
                        ),
                        WEIR_OK
                    );
                    weir_concurrency_free(c);
                }
            ),
            7 => shared!(
                "weir_window_init_shared",
                "weir_window_attach",
                |m, l, o| weir_window_init_shared(m, l, size, span, now, o),
                |m, l, o| weir_window_attach(m, l, o),
                |w: *mut weir_window| {
                    sane(weir_window_add(w, now, 1), "weir_window_add");
                    let mut recoveries = weir_recoveries::default();
                    assert_eq!(
                        sane(
                            weir_window_recoveries(w, &mut recoveries),
                            "weir_window_recoveries"
                        ),
                        WEIR_OK
                    );
                    weir_window_free(w);
                }
            ),
            8 => shared!(
                "weir_sliding_init_shared",
                "weir_sliding_attach",
                |m, l, o| weir_sliding_init_shared(m, l, quota % 1000, span, o),
                |m, l, o| weir_sliding_attach(m, l, o),
                |w: *mut weir_sliding| {
                    weir_sliding_take(w, now);
                    let mut recoveries = weir_recoveries::default();
                    assert_eq!(
                        sane(
                            weir_sliding_recoveries(w, &mut recoveries),
                            "weir_sliding_recoveries"
                        ),
                        WEIR_OK
                    );
                    weir_sliding_free(w);
                }
            ),
            _ => shared!(
                "weir_bucket_init_shared",
                "weir_bucket_attach",
                |m, l, o| weir_bucket_init_shared(m, l, rate, burst, now, o),
                |m, l, o| weir_bucket_attach(m, l, o),
                |b: *mut weir_bucket| {
                    weir_bucket_take(b, now, 1.0);
                    weir_bucket_free(b);
                }
            ),
        }
    }
    assert!(calls > 0);
    assert_no_panics("shared_regions_never_panic_and_refuse_changed_headers");
}
