//! The conformance traces: writes `traces/*.trace` from the C ABI's own
//! answers (the contract `include/weir.h` states) and fails when a committed
//! file differs from what the library answers now.
//!
//! Regenerate with: WEIR_BLESS=1 cargo test --test traces
//!
//! The format is described in `traces/README.md`; every face replays these
//! files (`docs/testing.md`, "Conformance traces").

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};

use weir::backoff::*;
use weir::deadline::*;
use weir::gcra::*;
use weir::limiter::*;
use weir::rate::*;
use weir::status::weir_status;

/// One answer or argument, written as `traces/README.md` says.
#[derive(Clone, Debug)]
enum V {
    I(i64),
    U(u64),
    F(f64),
    B(bool),
    S(weir_status),
}

impl std::fmt::Display for V {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            V::I(v) => write!(f, "{v}"),
            V::U(v) => write!(f, "{v}"),
            V::F(v) => write!(f, "0x{:016x}", v.to_bits()),
            V::B(v) => write!(f, "{}", u8::from(*v)),
            V::S(v) => write!(f, "{}", *v as i32),
        }
    }
}

use V::{B, F, I, S, U};

/// One trace file being written.
struct Trace {
    path: String,
    text: String,
    calls: usize,
}

impl Trace {
    fn new(path: &str, ty: &str, about: &str) -> Self {
        let mut text = format!("weir-trace 1 {ty}\n");
        for line in about.lines() {
            let _ = writeln!(text, "# {line}");
        }
        Trace {
            path: path.to_string(),
            text,
            calls: 0,
        }
    }

    fn note(&mut self, about: &str) {
        let _ = writeln!(self.text, "# {about}");
    }

    fn call(&mut self, op: &str, args: &[V], outs: &[V]) {
        self.text.push_str(op);
        for a in args {
            let _ = write!(self.text, " {a}");
        }
        self.text.push_str(" =");
        for o in outs {
            let _ = write!(self.text, " {o}");
        }
        self.text.push('\n');
        self.calls += 1;
    }
}

/// splitmix64 with a fixed seed: every run writes the same random traces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A draw in [0, 1) with 53 random bits.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// The next `now`: mostly forward by a little, sometimes by a lot,
    /// sometimes backwards, now and then the same instant.
    fn step(&mut self, now: i64, scale: i64) -> i64 {
        let r = self.below(100);
        let delta = match r {
            0..=9 => 0,
            10..=69 => self.below(scale as u64) as i64,
            70..=89 => self.below(scale as u64 * 20) as i64,
            90..=95 => -(self.below(scale as u64 * 5) as i64),
            _ => self.below(scale as u64 * 1000) as i64,
        };
        now.saturating_add(delta).max(0)
    }
}

const MAX: i64 = i64::MAX;

// ---------------------------------------------------------------- rate word

struct Rate {
    word: weir_rate,
    limit: weir_rate_limit,
}

impl Rate {
    fn new() -> Self {
        Rate {
            word: weir_rate { state: 0 },
            limit: weir_rate_limit {
                interval_ns: 0,
                interval_frac: 0,
                burst: 0,
            },
        }
    }
    fn limit_new(&mut self, t: &mut Trace, per_s: f64, burst: i64) {
        let s = weir_rate_limit_new(per_s, burst, &mut self.limit);
        let l = self.limit;
        t.call(
            "rate_limit_new",
            &[F(per_s), I(burst)],
            &[
                S(s),
                U(l.interval_ns),
                U(l.interval_frac.into()),
                U(l.burst.into()),
            ],
        );
    }
    fn limit_set(&mut self, t: &mut Trace, interval_ns: u64, frac: u32, burst: u32) {
        self.limit = weir_rate_limit {
            interval_ns,
            interval_frac: frac,
            burst,
        };
        t.call(
            "rate_limit_set",
            &[U(interval_ns), U(frac.into()), U(burst.into())],
            &[],
        );
    }
    fn set(&mut self, t: &mut Trace, state: u64) {
        self.word.state = state;
        t.call("rate_set", &[U(state)], &[]);
    }
    fn allow(&mut self, t: &mut Trace, now: i64) -> bool {
        let ok = weir_rate_allow(&mut self.word, &self.limit, now);
        t.call("rate_allow", &[I(now)], &[B(ok), U(self.word.state)]);
        ok
    }
    fn next(&mut self, t: &mut Trace, now: i64) {
        let n = weir_rate_next(&self.word, &self.limit, now);
        t.call("rate_next", &[I(now)], &[I(n)]);
    }
}

fn rate_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "rate-limits.trace",
        "rate",
        "weir_rate_limit_new: every status, in the order the header checks them,\n\
         and the limits it writes at the edges of its ranges.",
    );
    let mut r = Rate::new();
    for (per_s, burst) in [
        (10.0, 5),
        (f64::NAN, 5),
        (f64::INFINITY, 5),
        (f64::NEG_INFINITY, 5),
        (-1.0, 5),
        (-0.0, 5),
        (0.0, 5),
        (10.0, 0),
        (10.0, -1),
        (10.0, 1023),
        (10.0, 1024),
        (10.0, i64::MAX),
        (f64::NAN, 0),
        (19_531.25, 1),
        (19_531.26, 1),
        (1e9, 1023),
        (1e12, 1023),
        (1e-9, 1),
        (1.0 / 9.223_372_036_854_775e9, 1),
        (1e-10, 1),
        (f64::MIN_POSITIVE, 1),
        (f64::from_bits(1), 1),
        (3.0, 7),
        (1.0 / 3.0, 2),
        (1_000_000.0, 100),
    ] {
        r.limit_new(&mut t, per_s, burst);
    }
    out.push(t);

    let mut t = Trace::new(
        "rate-scenarios.trace",
        "rate",
        "The rate word's documented behaviour: a burst then one per interval,\n\
         many calls at one instant, time going backwards, the clock's end,\n\
         refusals of a negative now and of invalid limits.",
    );
    let mut r = Rate::new();
    r.limit_new(&mut t, 10.0, 5);
    t.note("a fresh word allows the burst at once, then refuses");
    for _ in 0..6 {
        r.allow(&mut t, 1_000_000_000);
    }
    r.next(&mut t, 1_000_000_000);
    t.note("one interval (100 ms) later, one more");
    r.allow(&mut t, 1_100_000_000);
    r.allow(&mut t, 1_100_000_000);
    r.next(&mut t, 1_100_000_000);
    t.note("time going backwards is no time passing");
    r.allow(&mut t, 500_000_000);
    r.next(&mut t, 500_000_000);
    r.allow(&mut t, 0);
    t.note("a negative now is refused");
    r.allow(&mut t, -1);
    r.allow(&mut t, i64::MIN);
    r.next(&mut t, -1);
    t.note("long idle refills to the burst, no more");
    for _ in 0..7 {
        r.allow(&mut t, 100_000_000_000);
    }
    t.note("the clock's end: a now past WEIR_RATE_MAX_NOW counts as it");
    r.set(&mut t, 0);
    for now in [MAX - 1024, MAX - 512, MAX - 511, MAX - 1, MAX] {
        r.allow(&mut t, now);
        r.next(&mut t, now);
    }
    for _ in 0..5 {
        r.allow(&mut t, MAX);
    }
    r.next(&mut t, MAX);
    t.note("the 512 ns grid: calls within one step");
    r.limit_new(&mut t, 19_531.25, 1);
    r.set(&mut t, 0);
    for now in [
        0, 1, 511, 512, 51_199, 51_200, 51_201, 51_712, 102_400, 102_911,
    ] {
        r.allow(&mut t, now);
        r.next(&mut t, now);
    }
    t.note("invalid limits (memory from another program): false and INT64_MAX");
    r.set(&mut t, 0);
    for (i, f, b) in [
        (0, 0, 0),
        (0, 0, 1),
        (100_000_000, 0, 0),
        (100_000_000, 0, 1024),
        (1, 0, 1),
        (u64::MAX, u32::MAX, 1023),
        (1 << 62, 0, 2),
        (1 << 63, 0, 1),
    ] {
        r.limit_set(&mut t, i, f, b);
        r.allow(&mut t, 1_000_000);
        r.next(&mut t, 1_000_000);
    }
    t.note("a word written under another limit is judged by this one");
    r.limit_new(&mut t, 1000.0, 10);
    r.set(&mut t, u64::MAX);
    r.allow(&mut t, 1_000_000);
    r.next(&mut t, 1_000_000);
    r.set(&mut t, 1 << 63);
    r.allow(&mut t, 1_000_000);
    r.next(&mut t, 1_000_000);
    out.push(t);

    for (name, n, seed) in [
        ("rate-random.trace", 4000, 1u64),
        ("small/rate.trace", 300, 2),
    ] {
        let mut t = Trace::new(
            name,
            "rate",
            "Seeded random calls under a few limits: allows and nexts with time\n\
             mostly forward, sometimes backwards or still.",
        );
        let mut rng = Rng(seed);
        let mut r = Rate::new();
        let mut now = 0i64;
        let limits = [
            (10.0, 5),
            (1000.0, 1),
            (250_000.0, 1023),
            (3.7, 3),
            (1e6, 100),
        ];
        for i in 0..n {
            if i % (n / 5) == 0 {
                let (l, b) = limits[(i / (n / 5)) % limits.len()];
                r.limit_new(&mut t, l, b);
                r.set(&mut t, 0);
            }
            let interval = r.limit.interval_ns.max(512) as i64;
            now = rng.step(now, interval);
            if rng.below(4) == 0 {
                r.next(&mut t, now);
            } else {
                r.allow(&mut t, now);
            }
        }
        out.push(t);
    }
}

// ---------------------------------------------------------------- GCRA word

struct Gcra {
    word: weir_gcra,
    limit: weir_gcra_limit,
}

impl Gcra {
    fn new() -> Self {
        Gcra {
            word: weir_gcra { state: 0 },
            limit: weir_gcra_limit {
                per_token: 0,
                tolerance: 0,
                shift: 0,
                reserved: 0,
            },
        }
    }
    fn limit_new(&mut self, t: &mut Trace, per_s: f64, burst: i64) {
        let s = weir_gcra_limit_new(per_s, burst, &mut self.limit);
        let l = self.limit;
        t.call(
            "gcra_limit_new",
            &[F(per_s), I(burst)],
            &[
                S(s),
                U(l.per_token),
                I(l.tolerance),
                U(l.shift.into()),
                U(l.reserved.into()),
            ],
        );
    }
    fn limit_set(
        &mut self,
        t: &mut Trace,
        per_token: u64,
        tolerance: i64,
        shift: u32,
        reserved: u32,
    ) {
        self.limit = weir_gcra_limit {
            per_token,
            tolerance,
            shift,
            reserved,
        };
        t.call(
            "gcra_limit_set",
            &[
                U(per_token),
                I(tolerance),
                U(shift.into()),
                U(reserved.into()),
            ],
            &[],
        );
    }
    fn set(&mut self, t: &mut Trace, state: u64) {
        self.word.state = state;
        t.call("gcra_set", &[U(state)], &[]);
    }
    fn allow(&mut self, t: &mut Trace, now: i64) {
        let ok = weir_gcra_allow(&mut self.word, &self.limit, now);
        t.call("gcra_allow", &[I(now)], &[B(ok), U(self.word.state)]);
    }
    fn allow_n(&mut self, t: &mut Trace, now: i64, n: i64) {
        let ok = weir_gcra_allow_n(&mut self.word, &self.limit, now, n);
        t.call(
            "gcra_allow_n",
            &[I(now), I(n)],
            &[B(ok), U(self.word.state)],
        );
    }
    fn next(&mut self, t: &mut Trace, now: i64) {
        let n = weir_gcra_next(&self.word, &self.limit, now);
        t.call("gcra_next", &[I(now)], &[I(n)]);
    }
    fn room(&mut self, t: &mut Trace, now: i64) {
        let n = weir_gcra_room(&self.word, &self.limit, now);
        t.call("gcra_room", &[I(now)], &[I(n)]);
    }
}

fn gcra_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "gcra-limits.trace",
        "gcra",
        "weir_gcra_limit_new: every status in the header's order, and the limits\n\
         it writes at the edges of its ranges.",
    );
    let mut g = Gcra::new();
    for (per_s, burst) in [
        (10.0, 5),
        (f64::NAN, 5),
        (f64::INFINITY, 5),
        (-1.0, 5),
        (-0.0, 5),
        (0.0, 5),
        (10.0, 0),
        (10.0, -1),
        (10.0, i64::MAX),
        (10.0, 1 << 20),
        (10.0, 1 << 40),
        (1e9, 1),
        (1e9, 1000),
        (1e10, 1),
        (1e12, 1),
        (1e-9, 1),
        (1e-12, 1),
        (f64::from_bits(1), 1),
        (f64::MAX, 1),
        (1.0 / 3.0, 2),
        (1_000_000.0, 100),
        (2.5, 1_000_000),
    ] {
        g.limit_new(&mut t, per_s, burst);
    }
    out.push(t);

    let mut t = Trace::new(
        "gcra-scenarios.trace",
        "gcra",
        "The GCRA word's documented behaviour: the burst, n tokens all or\n\
         nothing, room and next, time going backwards, the clock's end,\n\
         negative nows and invalid limits.",
    );
    let mut g = Gcra::new();
    g.limit_new(&mut t, 10.0, 5);
    g.room(&mut t, 1_000_000_000);
    for _ in 0..6 {
        g.allow(&mut t, 1_000_000_000);
    }
    g.room(&mut t, 1_000_000_000);
    g.next(&mut t, 1_000_000_000);
    g.allow(&mut t, 1_100_000_000);
    g.allow(&mut t, 1_100_000_000);
    t.note("n tokens, all or nothing; n outside 1..burst refused");
    for n in [0, -1, 6, 5, 3, 2, 1, i64::MAX, i64::MIN] {
        g.allow_n(&mut t, 2_000_000_000, n);
        g.room(&mut t, 2_000_000_000);
    }
    t.note("time going backwards");
    g.allow(&mut t, 100);
    g.next(&mut t, 100);
    g.room(&mut t, 100);
    t.note("negative now");
    g.allow(&mut t, -1);
    g.next(&mut t, -1);
    g.room(&mut t, i64::MIN);
    t.note("the clock's end");
    g.set(&mut t, 0);
    for now in [MAX - 1_000_000_000, MAX - 1, MAX] {
        g.allow(&mut t, now);
        g.allow_n(&mut t, now, 2);
        g.next(&mut t, now);
        g.room(&mut t, now);
    }
    t.note("invalid limits: false, INT64_MAX, 0");
    for (p, tol, sh, res) in [
        (0, 0, 0, 0),
        (1, 0, 0, 0),
        (100, 1000, 0, 1),
        (100, -1, 0, 0),
        (100, 1000, 64, 0),
        (u64::MAX, MAX, 63, 0),
    ] {
        g.limit_set(&mut t, p, tol, sh, res);
        g.set(&mut t, 0);
        g.allow(&mut t, 1_000);
        g.allow_n(&mut t, 1_000, 1);
        g.next(&mut t, 1_000);
        g.room(&mut t, 1_000);
    }
    t.note("words of any value under a valid limit");
    g.limit_new(&mut t, 1000.0, 10);
    for s in [u64::MAX, 1 << 63, 1 << 62, 12345] {
        g.set(&mut t, s);
        g.room(&mut t, 1_000_000);
        g.next(&mut t, 1_000_000);
        g.allow(&mut t, 1_000_000);
    }
    out.push(t);

    for (name, n, seed) in [
        ("gcra-random.trace", 4000, 3u64),
        ("small/gcra.trace", 300, 4),
    ] {
        let mut t = Trace::new(name, "gcra", "Seeded random calls under a few limits.");
        let mut rng = Rng(seed);
        let mut g = Gcra::new();
        let mut now = 0i64;
        let limits = [(10.0, 5), (1000.0, 1), (1e8, 1000), (3.7, 3), (0.01, 20)];
        let mut per = 100_000_000i64;
        for i in 0..n {
            if i % (n / 5) == 0 {
                let (l, b) = limits[(i / (n / 5)) % limits.len()];
                g.limit_new(&mut t, l, b);
                g.set(&mut t, 0);
                per = (1e9 / l) as i64;
            }
            now = rng.step(now, per.max(1));
            match rng.below(8) {
                0 => g.next(&mut t, now),
                1 => g.room(&mut t, now),
                2 => {
                    let k = 1 + rng.below(4) as i64;
                    g.allow_n(&mut t, now, k)
                }
                _ => g.allow(&mut t, now),
            }
        }
        out.push(t);
    }
}

// ---------------------------------------------------------------- limiter

struct Limiter(weir_limiter);

impl Limiter {
    fn new() -> Self {
        // SAFETY: weir_limiter is plain integers; all zero is a valid value
        // (a corrupt limiter, which every call refuses).
        Limiter(unsafe { MaybeUninit::<weir_limiter>::zeroed().assume_init() })
    }
    fn bucket(&mut self, t: &mut Trace, a: [i64; 6]) {
        let s = weir_limiter_bucket(
            &mut self.0,
            a[0] as u64,
            a[1] as u64,
            a[2],
            a[3],
            a[4] as u64,
            a[5],
        );
        t.call(
            "limiter_bucket",
            &[
                U(a[0] as u64),
                U(a[1] as u64),
                I(a[2]),
                I(a[3]),
                U(a[4] as u64),
                I(a[5]),
            ],
            &[S(s)],
        );
    }
    fn window(&mut self, t: &mut Trace, a: [i64; 5]) {
        let s = weir_limiter_fixed_window(&mut self.0, a[0] as u64, a[1], a[2], a[3] as u64, a[4]);
        t.call(
            "limiter_fixed_window",
            &[U(a[0] as u64), I(a[1]), I(a[2]), U(a[3] as u64), I(a[4])],
            &[S(s)],
        );
    }
    fn cooldown(&mut self, t: &mut Trace, a: [i64; 5]) {
        let s = weir_limiter_cooldown(&mut self.0, a[0] as u64, a[1], a[2], a[3] as u64, a[4]);
        t.call(
            "limiter_cooldown",
            &[U(a[0] as u64), I(a[1]), I(a[2]), U(a[3] as u64), I(a[4])],
            &[S(s)],
        );
    }
    fn try_consume(&mut self, t: &mut Trace, now: i64, n: u64) {
        let ok = weir_limiter_try_consume(&mut self.0, now, n);
        t.call("limiter_try_consume", &[I(now), U(n)], &[B(ok)]);
    }
    fn consume(&mut self, t: &mut Trace, now: i64, n: u64) {
        let s = weir_limiter_consume(&mut self.0, now, n);
        t.call("limiter_consume", &[I(now), U(n)], &[S(s)]);
    }
    fn refund(&mut self, t: &mut Trace, now: i64, at: i64, n: u64) {
        let s = weir_limiter_refund(&mut self.0, now, at, n);
        t.call("limiter_refund", &[I(now), I(at), U(n)], &[S(s)]);
    }
    fn readings(&mut self, t: &mut Trace, now: i64) {
        let a = weir_limiter_available(&self.0, now);
        t.call("limiter_available", &[I(now)], &[U(a)]);
        let c = weir_limiter_capacity(&self.0);
        t.call("limiter_capacity", &[], &[U(c)]);
        let mut v = 0i64;
        let s = weir_limiter_last_refill(&self.0, now, &mut v);
        t.call("limiter_last_refill", &[I(now)], &[S(s), I(v)]);
        let mut v = 0i64;
        let s = weir_limiter_window_start(&self.0, now, &mut v);
        t.call("limiter_window_start", &[I(now)], &[S(s), I(v)]);
        let mut v = 0i64;
        let s = weir_limiter_cooldown_end(&self.0, &mut v);
        t.call("limiter_cooldown_end", &[], &[S(s), I(v)]);
    }
}

fn limiter_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "limiter-scenarios.trace",
        "limiter",
        "The limiter's three kinds: their constructors' every status in order,\n\
         consumes, refunds and readings, time going backwards and the clock's end.",
    );
    let mut l = Limiter::new();
    t.note("a zero limiter is corrupt: every call refuses");
    l.consume(&mut t, 0, 1);
    l.try_consume(&mut t, 0, 1);
    l.refund(&mut t, 0, 0, 1);
    l.readings(&mut t, 0);
    t.note("bucket constructor statuses, in the header's order");
    for a in [
        [0, 1, 1, 0, 0, 0],
        [10, 0, 1, 0, 0, 0],
        [10, 1, 0, 0, 0, 0],
        [10, 1, -5, 0, 0, 0],
        [10, 1, 1, 0, 11, 0],
        [10, 1, 1, 5, 10, 0],
        [0, 0, 0, 5, 11, 0],
        [10, 2, 1_000, 0, 10, 0],
    ] {
        l.bucket(&mut t, a);
    }
    l.readings(&mut t, 0);
    for _ in 0..11 {
        l.consume(&mut t, 0, 1);
    }
    l.consume(&mut t, 0, 0);
    l.try_consume(&mut t, 0, 0);
    l.consume(&mut t, 1_000, 3);
    l.consume(&mut t, 1_500, 2);
    l.readings(&mut t, 1_500);
    t.note("refunds: capped at capacity");
    l.refund(&mut t, 1_500, 1_500, 1);
    l.refund(&mut t, 1_500, 0, u64::MAX);
    l.readings(&mut t, 1_500);
    t.note("time going backwards");
    l.consume(&mut t, 100, 1);
    l.readings(&mut t, 100);
    l.consume(&mut t, -5, 1);
    l.readings(&mut t, -5);
    t.note("the clock's end");
    l.bucket(&mut t, [u64::MAX as i64, u64::MAX as i64, 1, 0, 0, 0]);
    l.readings(&mut t, MAX);
    l.consume(&mut t, MAX, u64::MAX);
    l.readings(&mut t, MAX);
    l.bucket(&mut t, [100, 7, MAX, MAX - 1, 0, MAX]);
    l.consume(&mut t, MAX, 1);
    l.readings(&mut t, MAX);

    t.note("fixed window constructor statuses");
    for a in [
        [0, 1_000, 0, 0, 0],
        [10, 0, 0, 0, 0],
        [10, -1, 0, 0, 0],
        [10, 1_000, 0, 11, 0],
        [10, 1_000, 5, 10, 0],
        [10, 1_000, 0, 3, 2_500],
    ] {
        l.window(&mut t, a);
    }
    l.readings(&mut t, 2_500);
    for now in [2_500, 2_600, 2_999, 3_000, 3_000, 1_000, 10_000_000] {
        l.consume(&mut t, now, 2);
        l.readings(&mut t, now);
    }
    l.refund(&mut t, 10_000_000, 10_000_000, 2);
    l.refund(&mut t, 10_000_000, 0, 2);
    l.readings(&mut t, 10_000_000);
    l.window(&mut t, [5, MAX, 0, 5, MAX]);
    l.consume(&mut t, MAX, 5);
    l.readings(&mut t, MAX);

    t.note("cooldown constructor statuses");
    for a in [
        [0, 1_000, 0, 0, 0],
        [10, 0, 0, 0, 0],
        [10, -1, 0, 0, 0],
        [10, 1_000, 0, 11, 0],
        [10, 1_000, 500, 3, 0],
        [10, 1_000, 500, 0, 0],
        [3, 1_000, 0, 3, 0],
    ] {
        l.cooldown(&mut t, a);
        l.readings(&mut t, 0);
    }
    for now in [0, 0, 0, 0, 500, 999, 1_000, 1_000, 1_001, 200] {
        l.consume(&mut t, now, 1);
        l.readings(&mut t, now);
    }
    l.refund(&mut t, 1_001, 1_001, 1);
    l.readings(&mut t, 1_001);
    t.note("a cooldown whose deadline would overflow");
    l.cooldown(&mut t, [2, 1_000, 0, 2, MAX - 10]);
    l.consume(&mut t, MAX - 10, 1);
    l.consume(&mut t, MAX - 10, 1);
    l.try_consume(&mut t, MAX - 10, 1);
    l.readings(&mut t, MAX - 10);
    out.push(t);

    for (name, n, seed) in [
        ("limiter-random.trace", 4000, 5u64),
        ("small/limiter.trace", 300, 6),
    ] {
        let mut t = Trace::new(
            name,
            "limiter",
            "Seeded random calls on each kind of limiter.",
        );
        let mut rng = Rng(seed);
        let mut l = Limiter::new();
        let mut now = 0i64;
        let mut last = 0i64;
        for i in 0..n {
            if i % (n / 6) == 0 {
                match (i / (n / 6)) % 3 {
                    0 => l.bucket(&mut t, [20, 3, 1_000_000, now, 20, now]),
                    1 => l.window(&mut t, [15, 10_000_000, now, 15, now]),
                    _ => l.cooldown(&mut t, [8, 5_000_000, 0, 8, now]),
                }
            }
            now = rng.step(now, 1_000_000);
            match rng.below(10) {
                0 => l.refund(&mut t, now, last, 1 + rng.below(3)),
                1 => {
                    let a = weir_limiter_available(&l.0, now);
                    t.call("limiter_available", &[I(now)], &[U(a)]);
                }
                2 => l.try_consume(&mut t, now, 1 + rng.below(4)),
                _ => {
                    l.consume(&mut t, now, 1 + rng.below(4));
                    last = now;
                }
            }
        }
        out.push(t);
    }
}

// ---------------------------------------------------------------- backoff

struct Backoff(weir_backoff);

impl Backoff {
    fn fields(&self) -> [V; 6] {
        let p = self.0;
        [
            I(p.base_ns),
            F(p.factor),
            I(p.cap_ns),
            I(p.attempts.into()),
            I(p.jitter.into()),
            F(p.spread),
        ]
    }
    fn set(&mut self, t: &mut Trace, p: weir_backoff) {
        self.0 = p;
        t.call("backoff_set", &self.fields(), &[]);
    }
    fn check(&mut self, t: &mut Trace) {
        let s = weir_backoff_check(&self.0);
        t.call("backoff_check", &[], &[S(s)]);
    }
    fn more(&mut self, t: &mut Trace, made: i32) {
        let b = weir_backoff_more(&self.0, made);
        t.call("backoff_more", &[I(made.into())], &[B(b)]);
    }
    fn delay(&mut self, t: &mut Trace, retry: i32, random: f64, prev: i64) {
        let d = weir_backoff_delay(&self.0, retry, random, prev);
        t.call(
            "backoff_delay",
            &[I(retry.into()), F(random), I(prev)],
            &[I(d)],
        );
    }
    fn ceiling(&mut self, t: &mut Trace, retry: i32) {
        let d = weir_backoff_ceiling(&self.0, retry);
        t.call("backoff_ceiling", &[I(retry.into())], &[I(d)]);
    }
    fn schedule(&mut self, t: &mut Trace, cap: usize, randoms: &[f64]) {
        let mut buf = vec![0i64; cap];
        let n = weir_backoff_schedule(
            &self.0,
            randoms.as_ptr(),
            randoms.len(),
            buf.as_mut_ptr(),
            cap,
        );
        let mut args = vec![U(cap as u64), U(randoms.len() as u64)];
        args.extend(randoms.iter().map(|&r| F(r)));
        let mut outs = vec![U(n as u64)];
        outs.extend(buf[..n.min(cap)].iter().map(|&d| I(d)));
        t.call("backoff_schedule", &args, &outs);
    }
    fn all(&mut self, t: &mut Trace, rng: &mut Rng) {
        self.check(t);
        for made in [-1, 0, 1, 2, 9, 10, 11, i32::MAX] {
            self.more(t, made);
        }
        for retry in [-1, 0, 1, 2, 3, 10, 62, 63, 64, 1000, i32::MAX] {
            self.ceiling(t, retry);
        }
        for retry in [0, 1, 2, 5, 40, i32::MAX] {
            for r in [0.0, 0.5, 1.0 - f64::EPSILON / 2.0, 1.0, -0.5, f64::NAN] {
                self.delay(t, retry, r, 0);
            }
            let r = rng.unit();
            self.delay(t, retry, r, 123_456_789);
        }
        let randoms: Vec<f64> = (0..12).map(|_| rng.unit()).collect();
        self.schedule(t, 16, &randoms);
        self.schedule(t, 3, &randoms);
        self.schedule(t, 0, &randoms);
        self.schedule(t, 16, &[]);
    }
}

fn backoff_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "backoff-scenarios.trace",
        "backoff",
        "Backoff policies: the presets, every jitter form, every status of\n\
         weir_backoff_check, and ceilings, delays and schedules at the extremes.",
    );
    let mut rng = Rng(7);
    let mut b = Backoff(weir_backoff_preset());
    let p = weir_backoff_preset();
    t.call("backoff_preset", &[], &b.fields());
    b.all(&mut t, &mut rng);
    b.0 = weir_backoff_full_jitter();
    t.call("backoff_full_jitter", &[], &b.fields());
    b.all(&mut t, &mut rng);
    for jitter in 0..=4 {
        b.set(&mut t, weir_backoff { jitter, ..p });
        b.all(&mut t, &mut rng);
    }
    t.note("invalid policies: each status, and what the calls answer");
    for bad in [
        weir_backoff { base_ns: -1, ..p },
        weir_backoff { factor: 0.5, ..p },
        weir_backoff {
            factor: f64::NAN,
            ..p
        },
        weir_backoff {
            factor: f64::INFINITY,
            ..p
        },
        weir_backoff { cap_ns: -1, ..p },
        weir_backoff {
            cap_ns: 1,
            base_ns: 10,
            ..p
        },
        weir_backoff { attempts: 0, ..p },
        weir_backoff { attempts: -3, ..p },
        weir_backoff {
            spread: -0.1,
            jitter: 4,
            ..p
        },
        weir_backoff {
            spread: 1.5,
            jitter: 4,
            ..p
        },
        weir_backoff {
            spread: f64::NAN,
            jitter: 4,
            ..p
        },
        weir_backoff { jitter: 5, ..p },
        weir_backoff { jitter: -1, ..p },
    ] {
        b.set(&mut t, bad);
        b.all(&mut t, &mut rng);
    }
    t.note("extremes: the largest base, cap and attempts");
    for ext in [
        weir_backoff {
            base_ns: MAX,
            cap_ns: MAX,
            ..p
        },
        weir_backoff {
            base_ns: 0,
            cap_ns: 0,
            ..p
        },
        weir_backoff {
            factor: 1.0,
            attempts: i32::MAX,
            ..p
        },
        weir_backoff {
            factor: f64::MAX,
            cap_ns: MAX,
            jitter: 3,
            ..p
        },
        weir_backoff {
            base_ns: 1,
            factor: 2.0,
            cap_ns: MAX,
            attempts: 100,
            jitter: 2,
            ..p
        },
    ] {
        b.set(&mut t, ext);
        b.all(&mut t, &mut rng);
    }
    out.push(t);

    for (name, n, seed) in [
        ("backoff-random.trace", 3000, 8u64),
        ("small/backoff.trace", 300, 9),
    ] {
        let mut t = Trace::new(name, "backoff", "Seeded random policies and draws.");
        let mut rng = Rng(seed);
        let mut b = Backoff(p);
        let mut prev = 0i64;
        for i in 0..n {
            if i % 50 == 0 {
                let pol = weir_backoff {
                    base_ns: rng.below(1_000_000_000) as i64,
                    factor: 1.0 + rng.unit() * 3.0,
                    cap_ns: rng.below(1 << 40) as i64,
                    attempts: 1 + rng.below(20) as i32,
                    jitter: rng.below(5) as i32,
                    spread: rng.unit(),
                };
                b.set(&mut t, pol);
                b.check(&mut t);
            }
            let retry = rng.below(25) as i32;
            match rng.below(4) {
                0 => b.more(&mut t, retry),
                1 => b.ceiling(&mut t, retry),
                _ => {
                    let r = rng.unit();
                    let d = weir_backoff_delay(&b.0, retry, r, prev);
                    t.call("backoff_delay", &[I(retry.into()), F(r), I(prev)], &[I(d)]);
                    prev = d;
                }
            }
        }
        out.push(t);
    }
}

// ---------------------------------------------------------------- deadline

fn deadline_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "deadline-scenarios.trace",
        "deadline",
        "Deadlines: budgets of every sign and size, nows before, at and after\n\
         the end, time going backwards and the clock's end.",
    );
    let nows = [i64::MIN, -1, 0, 1, 999, 1_000, 1_001, 1 << 40, MAX - 1, MAX];
    let check = |t: &mut Trace, d: &weir_deadline| {
        for now in nows {
            let e = weir_deadline_expired(d, now);
            t.call("deadline_expired", &[I(now)], &[B(e)]);
            let mut left = 0i64;
            let ok = weir_deadline_remaining(d, now, &mut left);
            t.call("deadline_remaining", &[I(now)], &[B(ok), I(left)]);
        }
    };
    for (budget, now) in [
        (1_000, 0),
        (0, 0),
        (-1, 0),
        (i64::MIN, 0),
        (MAX, 0),
        (MAX, MAX),
        (1_000, MAX - 10),
        (1_000, -5),
        (5, 1 << 40),
        (i64::MIN, i64::MIN),
    ] {
        let d = weir_deadline_start(budget, now);
        t.call(
            "deadline_start",
            &[I(budget), I(now)],
            &[I(d.start), I(d.budget_ns)],
        );
        check(&mut t, &d);
    }
    t.note("deadlines read from memory: any start and budget");
    for (start, budget) in [(MAX, MAX), (i64::MIN, MAX), (-1, 5), (100, i64::MIN)] {
        let d = weir_deadline {
            start,
            budget_ns: budget,
        };
        t.call("deadline_set", &[I(start), I(budget)], &[]);
        check(&mut t, &d);
    }
    out.push(t);

    for (name, n, seed) in [
        ("deadline-random.trace", 3000, 10u64),
        ("small/deadline.trace", 300, 11),
    ] {
        let mut t = Trace::new(name, "deadline", "Seeded random deadlines and nows.");
        let mut rng = Rng(seed);
        let mut d = weir_deadline_start(0, 0);
        let mut now = 0;
        for i in 0..n {
            if i % 20 == 0 {
                let budget = rng.below(10_000_000) as i64 - 1_000_000;
                d = weir_deadline_start(budget, now);
                t.call(
                    "deadline_start",
                    &[I(budget), I(now)],
                    &[I(d.start), I(d.budget_ns)],
                );
            }
            now = rng.step(now, 1_000_000);
            if rng.below(2) == 0 {
                let e = weir_deadline_expired(&d, now);
                t.call("deadline_expired", &[I(now)], &[B(e)]);
            } else {
                let mut left = 0i64;
                let ok = weir_deadline_remaining(&d, now, &mut left);
                t.call("deadline_remaining", &[I(now)], &[B(ok), I(left)]);
            }
        }
        out.push(t);
    }
}

// ---------------------------------------------------------------- the files

fn all_traces() -> Vec<Trace> {
    let mut out = Vec::new();
    rate_traces(&mut out);
    gcra_traces(&mut out);
    limiter_traces(&mut out);
    backoff_traces(&mut out);
    deadline_traces(&mut out);
    out
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces")
}

/// Every `.trace` file under `traces/`, relative to it, with its text.
fn on_disk() -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "trace") {
                let rel = p
                    .strip_prefix(dir())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                found.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    found
}

/// `traces/index.txt`: every trace, one path a line, so that a replay
/// needs no directory listing.
fn index(traces: &BTreeMap<String, String>) -> String {
    let mut text = String::from("# Every trace under traces/, generated with them.\n");
    for path in traces.keys() {
        text.push_str(path);
        text.push('\n');
    }
    text
}

#[test]
fn traces_are_current() {
    let traces = all_traces();
    let want: BTreeMap<String, String> = traces
        .iter()
        .map(|t| (t.path.clone(), t.text.clone()))
        .collect();
    assert_eq!(want.len(), traces.len(), "two traces share a path");
    if std::env::var_os("WEIR_BLESS").is_some() {
        for old in on_disk().keys() {
            if !want.contains_key(old) {
                std::fs::remove_file(dir().join(old)).unwrap();
            }
        }
        for (path, text) in &want {
            let p = dir().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        std::fs::write(dir().join("index.txt"), index(&want)).unwrap();
        return;
    }
    let have = on_disk();
    let mut stale: Vec<&str> = Vec::new();
    if std::fs::read_to_string(dir().join("index.txt")).ok() != Some(index(&want)) {
        stale.push("index.txt");
    }
    for (path, text) in &want {
        if have.get(path) != Some(text) {
            stale.push(path);
        }
    }
    for path in have.keys() {
        if !want.contains_key(path) {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "traces/ is stale ({stale:?}); regenerate with: WEIR_BLESS=1 cargo test --test traces"
    );
}

/// The small traces fit a 16 KiB-RAM board's image (the firmware replays
/// them from flash), and every trace stays within the format's bounds.
#[test]
fn traces_keep_to_the_format() {
    let mut total = 0;
    for t in all_traces() {
        total += t.text.len();
        assert!(t.text.is_ascii(), "{}", t.path);
        for (i, line) in t.text.lines().enumerate() {
            assert!(line.len() <= 4096, "{}:{} is too long", t.path, i + 1);
        }
        if t.path.starts_with("small/") {
            assert!(t.calls <= 400, "{} has {} calls", t.path, t.calls);
        }
    }
    assert!(total < 2_000_000, "traces/ is {total} bytes");
}
