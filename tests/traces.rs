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
use weir::bloom::*;
use weir::breaker::*;
use weir::bucket::*;
use weir::budget::*;
use weir::charge::*;
use weir::concurrency::*;
use weir::deadline::*;
use weir::gate::*;
use weir::gcra::*;
use weir::keyed::*;
use weir::lease::*;
use weir::limiter::*;
use weir::period::*;
use weir::pool::*;
use weir::rate::*;
use weir::shedder::*;
use weir::sliding::*;
use weir::status::weir_status;
use weir::window::*;

/// One answer or argument, written as `traces/README.md` says.
#[derive(Clone, Debug)]
enum V {
    I(i64),
    U(u64),
    F(f64),
    B(bool),
    S(weir_status),
    Key(Vec<u8>),
}

impl std::fmt::Display for V {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            V::I(v) => write!(f, "{v}"),
            V::U(v) => write!(f, "{v}"),
            V::F(v) => write!(f, "0x{:016x}", v.to_bits()),
            V::B(v) => write!(f, "{}", u8::from(*v)),
            V::S(v) => write!(f, "{}", *v as i32),
            V::Key(k) => {
                f.write_str("x")?;
                k.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
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
    out.push(t);

    let mut t = Trace::new(
        "rate-invalid-limits.trace",
        "rate",
        "Invalid limits (memory from another program): every decision refuses,\n\
         false and INT64_MAX.",
    );
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
    t.note("a valid limit again");
    r.limit_new(&mut t, 1000.0, 10);
    r.set(&mut t, u64::MAX);
    r.allow(&mut t, 1_000_000);
    r.next(&mut t, 1_000_000);
    r.set(&mut t, 1 << 63);
    r.allow(&mut t, 1_000_000);
    r.next(&mut t, 1_000_000);
    out.push(t);

    for (name, n, seed) in [
        ("rate-random.trace", 2500, 1u64),
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
    t.note("words of any value under a valid limit");
    g.limit_new(&mut t, 1000.0, 10);
    for s in [u64::MAX, 1 << 63, 1 << 62, 12345] {
        g.set(&mut t, s);
        g.room(&mut t, 1_000_000);
        g.next(&mut t, 1_000_000);
        g.allow(&mut t, 1_000_000);
    }
    out.push(t);

    let mut t = Trace::new(
        "gcra-invalid-limits.trace",
        "gcra",
        "Invalid limits (memory from another program): false, INT64_MAX, 0.",
    );
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
    out.push(t);

    for (name, n, seed) in [
        ("gcra-random.trace", 2500, 3u64),
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
        "limiter-zeroed.trace",
        "limiter",
        "A zero limiter (memory no constructor wrote) is corrupt: every call\n\
         refuses.",
    );
    let mut l = Limiter::new();
    l.consume(&mut t, 0, 1);
    l.try_consume(&mut t, 0, 1);
    l.refund(&mut t, 0, 0, 1);
    l.readings(&mut t, 0);
    out.push(t);

    let mut t = Trace::new(
        "limiter-scenarios.trace",
        "limiter",
        "The limiter's three kinds: their constructors' every status in order,\n\
         consumes, refunds and readings, time going backwards and the clock's end.",
    );
    let mut l = Limiter::new();
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
        ("limiter-random.trace", 2400, 5u64),
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

    // In a file of its own: a face whose schedule returns every delay of
    // the run cannot hold 2^31 − 2 of them.
    let mut t = Trace::new(
        "backoff-long-schedule.trace",
        "backoff",
        "A policy of 2^31 - 1 attempts: its schedule counts every delay of the\n\
         run and writes as many as the caller has room for.",
    );
    let mut b = Backoff(p);
    b.set(
        &mut t,
        weir_backoff {
            factor: 1.0,
            attempts: i32::MAX,
            ..p
        },
    );
    b.all(&mut t, &mut rng);
    out.push(t);

    for (name, n, seed) in [
        ("backoff-random.trace", 2000, 8u64),
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
        ("deadline-random.trace", 2000, 10u64),
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

// ---------------------------------------------------------------- handles

/// A `NaN`, infinities, signs and extremes, for constructors' bad input.
const BAD_F: [f64; 7] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -1.0,
    0.0,
    1e300,
    -0.0,
];
const BAD_I: [i64; 5] = [-1, 0, 1, MAX, i64::MIN];

/// Ticket slots: the k-th allow or enter line of a file writes slot k.
struct Slots<T>(Vec<T>);

impl<T: Default> Slots<T> {
    fn take(&mut self) -> (usize, &mut T) {
        self.0.push(T::default());
        let k = self.0.len() - 1;
        (k, &mut self.0[k])
    }
}

// bucket

struct Bucket(*mut weir_bucket);

impl Bucket {
    fn make(&mut self, t: &mut Trace, rate: f64, burst: f64, now: i64) -> bool {
        weir_bucket_free(self.0);
        self.0 = std::ptr::null_mut();
        let s = weir_bucket_new(rate, burst, now, &mut self.0);
        t.call("bucket_new", &[F(rate), F(burst), I(now)], &[S(s)]);
        s == weir_status::WEIR_OK
    }
    fn take(&mut self, t: &mut Trace, now: i64, n: f64) {
        let ok = weir_bucket_take(self.0, now, n);
        t.call("bucket_take", &[I(now), F(n)], &[B(ok)]);
    }
    fn refund(&mut self, t: &mut Trace, now: i64, at: i64, n: f64) {
        let s = weir_bucket_refund(self.0, now, at, n);
        t.call("bucket_refund", &[I(now), I(at), F(n)], &[S(s)]);
    }
    fn reconfigure(&mut self, t: &mut Trace, rate: f64, burst: f64, now: i64) {
        let s = weir_bucket_reconfigure(self.0, rate, burst, now);
        t.call("bucket_reconfigure", &[F(rate), F(burst), I(now)], &[S(s)]);
    }
    fn read(&mut self, t: &mut Trace, now: i64, n: f64) {
        let x = weir_bucket_next(self.0, now, n);
        t.call("bucket_next", &[I(now), F(n)], &[I(x)]);
        let x = weir_bucket_tokens(self.0, now);
        t.call("bucket_tokens", &[I(now)], &[F(x)]);
    }
}

impl Drop for Bucket {
    fn drop(&mut self) {
        weir_bucket_free(self.0);
    }
}

fn bucket_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "bucket-scenarios.trace",
        "bucket",
        "The token bucket: its constructor's statuses, the burst, fractional\n\
         takes, refunds, readings, time going backwards and the clock's end.",
    );
    let mut b = Bucket(std::ptr::null_mut());
    for r in BAD_F {
        b.make(&mut t, r, 5.0, 0);
        b.make(&mut t, 10.0, r, 0);
    }
    b.make(&mut t, 10.0, 5.0, -1);
    b.make(&mut t, 1e-300, 1e300, 0);
    b.make(&mut t, 10.0, 5.0, 1_000_000_000);
    b.read(&mut t, 1_000_000_000, 1.0);
    for n in [1.0, 1.0, 2.5, 0.5, 0.5, 1.0] {
        b.take(&mut t, 1_000_000_000, n);
        b.read(&mut t, 1_000_000_000, 1.0);
    }
    t.note("bad amounts");
    for n in BAD_F {
        b.take(&mut t, 1_000_000_000, n);
        b.refund(&mut t, 1_000_000_000, 1_000_000_000, n);
        b.read(&mut t, 1_000_000_000, n);
    }
    b.take(&mut t, 1_000_000_000, 6.0);
    b.read(&mut t, 1_000_000_000, 6.0);
    t.note("refill, refunds");
    b.take(&mut t, 1_150_000_000, 1.0);
    b.refund(&mut t, 1_150_000_000, 1_150_000_000, 1.0);
    b.refund(&mut t, 1_150_000_000, 0, 100.0);
    b.refund(&mut t, 1_150_000_000, 2_000_000_000, 1.0);
    b.read(&mut t, 1_150_000_000, 1.0);
    t.note("time going backwards");
    b.take(&mut t, 0, 1.0);
    b.read(&mut t, 0, 1.0);
    b.take(&mut t, -1, 1.0);
    b.read(&mut t, -1, 1.0);
    t.note("the clock's end");
    for now in [MAX - 1, MAX] {
        b.take(&mut t, now, 1.0);
        b.read(&mut t, now, 5.0);
    }
    b.make(&mut t, 1e9, 1e9, MAX);
    b.take(&mut t, MAX, 1e9);
    b.read(&mut t, MAX, 1.0);
    out.push(t);

    let mut t = Trace::new(
        "bucket-reconfigure.trace",
        "bucket",
        "A bucket's rate and burst changed in place: the tokens it holds kept\n\
         up to the new burst, refused changes that change nothing, refunds\n\
         and time going backwards across a change.",
    );
    b.make(&mut t, 10.0, 5.0, 0);
    for now in [0, 0, 0] {
        b.take(&mut t, now, 1.0);
    }
    b.read(&mut t, 0, 1.0);
    t.note("refused changes: nothing changes");
    for r in BAD_F {
        b.reconfigure(&mut t, r, 5.0, 0);
        b.reconfigure(&mut t, 10.0, r, 0);
    }
    b.reconfigure(&mut t, 1e-300, 1e300, 0);
    b.read(&mut t, 0, 1.0);
    t.note("a smaller burst: the tokens kept up to it");
    b.reconfigure(&mut t, 10.0, 1.0, 50_000_000);
    b.read(&mut t, 50_000_000, 1.0);
    b.take(&mut t, 50_000_000, 1.0);
    b.take(&mut t, 50_000_000, 1.0);
    b.read(&mut t, 50_000_000, 1.0);
    t.note("a larger burst and a faster rate: it fills from what was there");
    b.reconfigure(&mut t, 1000.0, 100.0, 60_000_000);
    b.read(&mut t, 60_000_000, 1.0);
    b.read(&mut t, 70_000_000, 50.0);
    b.take(&mut t, 70_000_000, 10.0);
    b.refund(&mut t, 70_000_000, 70_000_000, 10.0);
    b.refund(&mut t, 70_000_000, 50_000_000, 1.0);
    t.note("time going backwards across a change");
    b.take(&mut t, 10_000_000, 1.0);
    b.read(&mut t, 10_000_000, 1.0);
    t.note("to a bucket that never refills, a fine tick, and back");
    b.reconfigure(&mut t, 0.0, 3.0, 80_000_000);
    b.read(&mut t, 80_000_000, 1.0);
    b.reconfigure(&mut t, 1e9, 1e6, 90_000_000);
    b.read(&mut t, 90_000_000, 1.0);
    b.take(&mut t, 90_000_000, 3.0);
    b.reconfigure(&mut t, 3.3, 7.0, MAX);
    b.read(&mut t, MAX, 1.0);
    let mut rng = Rng(36);
    let mut now = 100_000_000;
    for i in 0..400 {
        if i % 40 == 39 {
            let rate = [10.0, 0.5, 1e6, 3.3, 0.0][rng.below(5) as usize];
            b.reconfigure(&mut t, rate, rng.below(20) as f64, now);
        }
        now = rng.step(now, 50_000_000);
        match rng.below(4) {
            0 => b.read(&mut t, now, 1.0 + rng.below(3) as f64),
            _ => b.take(&mut t, now, [1.0, 0.5, 2.0][rng.below(3) as usize]),
        }
    }
    out.push(t);

    let mut t = Trace::new(
        "bucket-random.trace",
        "bucket",
        "Seeded random takes, refunds and readings.",
    );
    let mut rng = Rng(12);
    let mut now = 0;
    for i in 0..2000 {
        if i % 500 == 0 {
            let rate = [10.0, 0.5, 1e6, 3.3][(i / 500) % 4];
            b.make(&mut t, rate, 1.0 + rng.below(20) as f64, now);
        }
        now = rng.step(now, 50_000_000);
        match rng.below(6) {
            0 => b.refund(
                &mut t,
                now,
                now - rng.below(1_000_000) as i64,
                rng.unit() * 3.0,
            ),
            1 => b.read(&mut t, now, 1.0 + rng.below(3) as f64),
            _ => b.take(
                &mut t,
                now,
                [1.0, 0.5, 2.0, rng.unit() * 4.0][rng.below(4) as usize],
            ),
        }
    }
    out.push(t);
}

// window, sliding, period, gate

fn window_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "window-scenarios.trace",
        "window",
        "The rolling window: its constructor's statuses, adds, totals and\n\
         buckets, time going backwards and the clock's end.",
    );
    let mut w: *mut weir_window = std::ptr::null_mut();
    let new = |t: &mut Trace, w: &mut *mut weir_window, size: i32, width: i64, now: i64| {
        weir_window_free(*w);
        *w = std::ptr::null_mut();
        let s = weir_window_new(size, width, now, w);
        t.call("window_new", &[I(size.into()), I(width), I(now)], &[S(s)]);
    };
    let read = |t: &mut Trace, w: *mut weir_window, now: i64| {
        for current in [false, true] {
            let mut tot = weir_window_total::default();
            let s = weir_window_read_total(w, now, current, &mut tot);
            t.call(
                "window_read_total",
                &[I(now), B(current)],
                &[S(s), I(tot.sum), I(tot.count)],
            );
            let mut buf = [weir_window_total::default(); 4];
            let n = weir_window_read_buckets(w, now, current, buf.as_mut_ptr(), 4);
            let mut outs = vec![U(n as u64)];
            for b in &buf[..n.min(4)] {
                outs.push(I(b.sum));
                outs.push(I(b.count));
            }
            t.call("window_read_buckets", &[I(now), B(current), U(4)], &outs);
        }
        t.call("window_size", &[], &[I(weir_window_size(w).into())]);
        t.call("window_width", &[], &[I(weir_window_width(w))]);
    };
    let add = |t: &mut Trace, w: *mut weir_window, now: i64, v: i64| {
        let s = weir_window_add(w, now, v);
        t.call("window_add", &[I(now), I(v)], &[S(s)]);
    };
    for (size, width, now) in [
        (0, 1000, 0),
        (-1, 1000, 0),
        (i32::MAX, 1000, 0),
        (4, 0, 0),
        (4, -1, 0),
        (4, 3, 0),
        (4, MAX, 0),
        (4, 1000, -1),
        (3, 3000, 0),
        (4, 4000, 0),
    ] {
        new(&mut t, &mut w, size, width, now);
    }
    read(&mut t, w, 0);
    for (now, v) in [
        (0, 5),
        (999, 7),
        (1000, 1),
        (2500, -3),
        (2500, MAX),
        (2500, 1),
        (3999, i64::MIN),
        (100, 2),
    ] {
        add(&mut t, w, now, v);
        read(&mut t, w, now);
    }
    read(&mut t, w, 7000);
    read(&mut t, w, 1_000_000);
    add(&mut t, w, -5, 1);
    add(&mut t, w, MAX, 1);
    read(&mut t, w, MAX);
    new(&mut t, &mut w, 4, 4000, MAX - 10);
    add(&mut t, w, MAX, 1);
    read(&mut t, w, MAX);
    let mut rng = Rng(13);
    let mut t2 = Trace::new(
        "window-random.trace",
        "window",
        "Seeded random adds and reads.",
    );
    new(&mut t2, &mut w, 8, 80_000_000, 0);
    let mut now = 0;
    for _ in 0..1500 {
        now = rng.step(now, 2_000_000);
        if rng.below(4) == 0 {
            read(&mut t2, w, now);
        } else {
            add(&mut t2, w, now, rng.below(1000) as i64 - 100);
        }
    }
    out.push(t);
    out.push(t2);

    let mut t = Trace::new(
        "window-reconfigure.trace",
        "window",
        "A rolling window's size and span changed in place: nothing changes\n\
         when the buckets keep their layout; otherwise the total at the\n\
         change in one bucket, leaving together; refused changes that change\n\
         nothing; then seeded random calls.",
    );
    let change = |t: &mut Trace, w: *mut weir_window, size: i32, width: i64, now: i64| {
        let s = weir_window_reconfigure(w, size, width, now);
        t.call(
            "window_reconfigure",
            &[I(size.into()), I(width), I(now)],
            &[S(s)],
        );
    };
    new(&mut t, &mut w, 4, 4000, 0);
    for (now, v) in [(0, 1), (1500, 2), (2500, 4), (3900, 8)] {
        add(&mut t, w, now, v);
    }
    read(&mut t, w, 3900);
    for (size, width) in [(4, 0), (4, -1), (i32::MAX, 4000)] {
        change(&mut t, w, size, width, 3900);
        read(&mut t, w, 3900);
    }
    change(&mut t, w, 4, 4003, 3900);
    read(&mut t, w, 3900);
    change(&mut t, w, 4, 8000, 3900);
    for now in [3900, 5000, 11_899, 11_900] {
        read(&mut t, w, now);
    }
    change(&mut t, w, 2, 1000, 12_000);
    add(&mut t, w, 12_100, 16);
    read(&mut t, w, 12_100);
    change(&mut t, w, 0, 500, 12_200);
    read(&mut t, w, 12_200);
    read(&mut t, w, 100);
    let mut now = 20_000;
    for i in 0..600 {
        if i % 60 == 59 {
            change(
                &mut t,
                w,
                1 + rng.below(8) as i32,
                1_000_000 * (1 + rng.below(100) as i64),
                now,
            );
        }
        now = rng.step(now, 2_000_000);
        if rng.below(4) == 0 {
            read(&mut t, w, now);
        } else {
            add(&mut t, w, now, rng.below(1000) as i64 - 100);
        }
    }
    weir_window_free(w);
    out.push(t);
}

fn sliding_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "sliding-scenarios.trace",
        "sliding",
        "The sliding window: its constructor's statuses, takes, left and next,\n\
         time going backwards and the clock's end; then seeded random calls.",
    );
    let mut h: *mut weir_sliding = std::ptr::null_mut();
    let new = |t: &mut Trace, h: &mut *mut weir_sliding, q: i64, w: i64| {
        weir_sliding_free(*h);
        *h = std::ptr::null_mut();
        let s = weir_sliding_new(q, w, h);
        t.call("sliding_new", &[I(q), I(w)], &[S(s)]);
    };
    let all = |t: &mut Trace, h: *mut weir_sliding, now: i64, take: bool| {
        if take {
            t.call("sliding_take", &[I(now)], &[B(weir_sliding_take(h, now))]);
        }
        t.call("sliding_left", &[I(now)], &[I(weir_sliding_left(h, now))]);
        t.call("sliding_next", &[I(now)], &[I(weir_sliding_next(h, now))]);
    };
    for q in BAD_I {
        for w in BAD_I {
            new(&mut t, &mut h, q, w);
        }
    }
    new(&mut t, &mut h, 3, 1000);
    for now in [
        0, 0, 0, 0, 500, 999, 1000, 1001, 1500, 1999, 2000, 2000, 100, -1, 3500, 10_000,
    ] {
        all(&mut t, h, now, true);
    }
    for now in [MAX - 1000, MAX - 1, MAX, MAX] {
        all(&mut t, h, now, true);
    }
    new(&mut t, &mut h, MAX, MAX);
    new(&mut t, &mut h, 1_000_000, MAX / 2);
    all(&mut t, h, 0, true);
    all(&mut t, h, MAX, true);
    t.note("seeded random calls");
    let mut rng = Rng(14);
    new(&mut t, &mut h, 10, 100_000_000);
    let mut now = 0;
    for _ in 0..1500 {
        now = rng.step(now, 10_000_000);
        all(&mut t, h, now, rng.below(4) != 0);
    }
    out.push(t);

    let mut t = Trace::new(
        "sliding-reconfigure.trace",
        "sliding",
        "A sliding window's quota and window changed in place: the newest\n\
         stamps it counts kept, judged by the new window; refused changes\n\
         that change nothing; a ring that grows; then seeded random calls.",
    );
    let change = |t: &mut Trace, h: *mut weir_sliding, q: i64, w: i64| {
        let s = weir_sliding_reconfigure(h, q, w);
        t.call("sliding_reconfigure", &[I(q), I(w)], &[S(s)]);
    };
    new(&mut t, &mut h, 4, 1000);
    for now in [0, 100, 200, 300] {
        all(&mut t, h, now, true);
    }
    for (q, w) in [(0, 1000), (-1, 1000), (2, 0), (MAX, 1000)] {
        change(&mut t, h, q, w);
        all(&mut t, h, 300, false);
    }
    change(&mut t, h, 2, 1000);
    for now in [300, 1100, 1150, 1200, 1250] {
        all(&mut t, h, now, true);
    }
    t.note("a longer window and a larger quota (the ring grows)");
    change(&mut t, h, 6, 5000);
    for now in [1300, 1300, 1300, 1300, 1300, 1400, 6200, 6250] {
        all(&mut t, h, now, true);
    }
    t.note("events fallen out of the old window stay gone");
    change(&mut t, h, 3, 10);
    all(&mut t, h, 7000, true);
    change(&mut t, h, 3, 100_000);
    for now in [7000, 7001, 7002, 7003, 100] {
        all(&mut t, h, now, true);
    }
    let mut rng = Rng(36);
    for i in 0..600 {
        if i % 60 == 59 {
            change(
                &mut t,
                h,
                1 + rng.below(12) as i64,
                1 + rng.below(200_000_000) as i64,
            );
        }
        now = rng.step(now, 10_000_000);
        all(&mut t, h, now, rng.below(4) != 0);
    }
    weir_sliding_free(h);
    out.push(t);
}

fn period_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "period-scenarios.trace",
        "period",
        "The period quota, aligned and not: its constructor's statuses, takes\n\
         under, at and over the quota, time going backwards, the clock's end;\n\
         then seeded random calls.",
    );
    let mut h: *mut weir_period = std::ptr::null_mut();
    let new = |t: &mut Trace, h: &mut *mut weir_period, q: i64, p: i64, a: bool| {
        weir_period_free(*h);
        *h = std::ptr::null_mut();
        let s = weir_period_new(q, p, a, h);
        t.call("period_new", &[I(q), I(p), B(a)], &[S(s)]);
    };
    let all = |t: &mut Trace, h: *mut weir_period, now: i64, take: bool| {
        if take {
            let q = weir_period_take(h, now);
            t.call("period_take", &[I(now)], &[I(q as i32 as i64)]);
        }
        t.call("period_left", &[I(now)], &[I(weir_period_left(h, now))]);
        t.call("period_next", &[I(now)], &[I(weir_period_next(h, now))]);
    };
    for q in BAD_I {
        for p in BAD_I {
            new(&mut t, &mut h, q, p, q == 1);
        }
    }
    for align in [false, true] {
        new(&mut t, &mut h, 3, 1000, align);
        for now in [
            1500,
            1500,
            1600,
            1700,
            1999,
            2000,
            2400,
            2499,
            2500,
            100,
            -1,
            9000,
            MAX - 1,
            MAX,
            MAX,
        ] {
            all(&mut t, h, now, true);
        }
    }
    t.note("seeded random calls");
    let mut rng = Rng(15);
    for align in [false, true] {
        new(&mut t, &mut h, 7, 60_000_000, align);
        let mut now = 0;
        for _ in 0..800 {
            now = rng.step(now, 5_000_000);
            all(&mut t, h, now, rng.below(4) != 0);
        }
    }
    t.note("reconfigured in place: the open period keeps its end and count");
    for align in [false, true] {
        new(&mut t, &mut h, 3, 1000, align);
        for now in [1500, 1500, 1600] {
            all(&mut t, h, now, true);
        }
        for (q, p, a, now) in [
            (0, 1000, align, 1650),
            (-1, 1000, align, 1650),
            (2, 1000, align, 1700),
            (5, 300, !align, 1800),
        ] {
            let s = weir_period_reconfigure(h, q, p, a);
            t.call("period_reconfigure", &[I(q), I(p), B(a)], &[S(s)]);
            for _ in 0..3 {
                all(&mut t, h, now, true);
            }
        }
        for now in [2400, 2500, 2600, 2700, 100] {
            all(&mut t, h, now, true);
        }
    }
    let mut rng = Rng(36);
    new(&mut t, &mut h, 7, 60_000_000, false);
    let mut now = 0;
    for i in 0..400 {
        if i % 50 == 49 {
            let (q, p, a) = (
                1 + rng.below(9) as i64,
                1 + rng.below(100_000_000) as i64,
                rng.below(2) == 0,
            );
            let s = weir_period_reconfigure(h, q, p, a);
            t.call("period_reconfigure", &[I(q), I(p), B(a)], &[S(s)]);
        }
        now = rng.step(now, 5_000_000);
        all(&mut t, h, now, rng.below(4) != 0);
    }
    weir_period_free(h);
    out.push(t);
}

fn gate_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "gate-scenarios.trace",
        "gate",
        "The gate: its constructor's statuses, enters up to the limit, leaves\n\
         (one more than entered counts nothing), and seeded random calls.",
    );
    let mut h: *mut weir_gate = std::ptr::null_mut();
    let new = |t: &mut Trace, h: &mut *mut weir_gate, l: i64| {
        weir_gate_free(*h);
        *h = std::ptr::null_mut();
        let s = weir_gate_new(l, h);
        t.call("gate_new", &[I(l)], &[S(s)]);
    };
    let enter = |t: &mut Trace, h: *mut weir_gate| {
        t.call("gate_enter", &[], &[B(weir_gate_enter(h))]);
        t.call("gate_held", &[], &[I(weir_gate_held(h))]);
    };
    let leave = |t: &mut Trace, h: *mut weir_gate| {
        weir_gate_leave(h);
        t.call("gate_leave", &[], &[]);
        t.call("gate_held", &[], &[I(weir_gate_held(h))]);
    };
    for l in BAD_I {
        new(&mut t, &mut h, l);
    }
    new(&mut t, &mut h, 3);
    for _ in 0..4 {
        enter(&mut t, h);
    }
    for _ in 0..4 {
        leave(&mut t, h);
    }
    enter(&mut t, h);
    let mut rng = Rng(16);
    new(&mut t, &mut h, 5);
    for _ in 0..600 {
        if rng.below(2) == 0 {
            enter(&mut t, h);
        } else {
            leave(&mut t, h);
        }
    }
    t.note("reconfigured in place: the calls inside kept");
    let change = |t: &mut Trace, h: *mut weir_gate, l: i64| {
        let s = weir_gate_reconfigure(h, l);
        t.call("gate_reconfigure", &[I(l)], &[S(s)]);
    };
    new(&mut t, &mut h, 4);
    for _ in 0..4 {
        enter(&mut t, h);
    }
    change(&mut t, h, 2);
    enter(&mut t, h);
    for _ in 0..2 {
        leave(&mut t, h);
        enter(&mut t, h);
    }
    leave(&mut t, h);
    leave(&mut t, h);
    enter(&mut t, h);
    for l in [0, -1, 6] {
        change(&mut t, h, l);
        for _ in 0..3 {
            enter(&mut t, h);
        }
    }
    for _ in 0..300 {
        match rng.below(9) {
            0 => change(&mut t, h, rng.below(8) as i64 - 1),
            1..=4 => enter(&mut t, h),
            _ => leave(&mut t, h),
        }
    }
    weir_gate_free(h);
    out.push(t);
}

// budget, concurrency, breaker, shedder, pool

fn budget_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "budget-scenarios.trace",
        "budget",
        "The retry budget, both forms: its constructor's statuses, deposits\n\
         and withdrawals, time going backwards, the clock's end; then seeded\n\
         random calls.",
    );
    let mut h: *mut weir_budget = std::ptr::null_mut();
    let new = |t: &mut Trace, h: &mut *mut weir_budget, p: weir_budget_policy, now: i64| {
        weir_budget_free(*h);
        *h = std::ptr::null_mut();
        let s = weir_budget_new(&p, now, h);
        t.call(
            "budget_new",
            &[
                I(p.form.into()),
                I(p.max_tokens.into()),
                F(p.token_ratio),
                I(p.ttl_ns),
                I(p.min_per_s.into()),
                I(p.reserved.into()),
                F(p.percent),
                I(now),
            ],
            &[S(s)],
        );
    };
    let read = |t: &mut Trace, h: *mut weir_budget, now: i64| {
        t.call("budget_left", &[I(now)], &[I(weir_budget_left(h, now))]);
        t.call("budget_tokens", &[I(now)], &[I(weir_budget_tokens(h, now))]);
    };
    let dep = |t: &mut Trace, h: *mut weir_budget, now: i64| {
        weir_budget_deposit(h, now);
        t.call("budget_deposit", &[I(now)], &[]);
    };
    let wd = |t: &mut Trace, h: *mut weir_budget, now: i64| {
        t.call(
            "budget_withdraw",
            &[I(now)],
            &[B(weir_budget_withdraw(h, now))],
        );
    };
    let p = weir_budget_policy_preset();
    let mut bad = Vec::new();
    for v in [-1, 0, 2, 3, 1001, i32::MAX, i32::MIN] {
        bad.push(weir_budget_policy { form: v, ..p });
        bad.push(weir_budget_policy { max_tokens: v, ..p });
        bad.push(weir_budget_policy {
            max_tokens: v,
            form: 1 - p.form,
            ..p
        });
        bad.push(weir_budget_policy { min_per_s: v, ..p });
    }
    for f in [f64::NAN, -1.0, 0.0, 2.0, 1e300] {
        bad.push(weir_budget_policy {
            token_ratio: f,
            form: 1 - p.form,
            ..p
        });
    }
    for f in BAD_F {
        bad.push(weir_budget_policy {
            token_ratio: f,
            ..p
        });
        bad.push(weir_budget_policy { percent: f, ..p });
        bad.push(weir_budget_policy {
            percent: f,
            form: 1,
            ..p
        });
        bad.push(weir_budget_policy {
            token_ratio: f,
            form: 1,
            ..p
        });
    }
    for v in BAD_I {
        bad.push(weir_budget_policy { ttl_ns: v, ..p });
        bad.push(weir_budget_policy {
            ttl_ns: v,
            form: 1,
            ..p
        });
    }
    for b in bad {
        new(&mut t, &mut h, b, 0);
    }
    {
        // In a file of its own: a face whose policy has no reserved field
        // cannot pass one.
        let mut t = Trace::new(
            "budget-reserved.trace",
            "budget",
            "The budget's constructor refuses a nonzero reserved field.",
        );
        let mut h: *mut weir_budget = std::ptr::null_mut();
        for v in [-1, 0, 2, 3, 1001, i32::MAX, i32::MIN] {
            new(&mut t, &mut h, weir_budget_policy { reserved: v, ..p }, 0);
        }
        weir_budget_free(h);
        out.push(t);
    }
    new(&mut t, &mut h, p, -1);
    for form in [0, 1] {
        new(
            &mut t,
            &mut h,
            weir_budget_policy { form, ..p },
            1_000_000_000,
        );
        read(&mut t, h, 1_000_000_000);
        for i in 0..30 {
            let now = 1_000_000_000 + i * 10_000_000;
            if i % 3 == 0 {
                wd(&mut t, h, now);
            } else {
                dep(&mut t, h, now);
            }
            read(&mut t, h, now);
        }
        for now in [0, -1, MAX - 1, MAX] {
            wd(&mut t, h, now);
            dep(&mut t, h, now);
            read(&mut t, h, now);
        }
    }
    t.note("seeded random calls");
    let mut rng = Rng(17);
    for form in [0, 1] {
        new(&mut t, &mut h, weir_budget_policy { form, ..p }, 0);
        let mut now = 0;
        for _ in 0..700 {
            now = rng.step(now, 20_000_000);
            match rng.below(5) {
                0 => read(&mut t, h, now),
                1 | 2 => wd(&mut t, h, now),
                _ => dep(&mut t, h, now),
            }
        }
    }
    weir_budget_free(h);
    out.push(t);

    let mut t = Trace::new(
        "budget-reconfigure.trace",
        "budget",
        "A retry budget's policy changed in place: a token count kept up to\n\
         the new max_tokens, percent credit kept at its own policy's worth\n\
         on the new policy's slices (a deposit aging out no later, a\n\
         withdrawal no sooner), a change of form starting afresh, refused policies changing nothing;\n\
         then seeded random calls.",
    );
    let mut h: *mut weir_budget = std::ptr::null_mut();
    let change = |t: &mut Trace, h: *mut weir_budget, p: weir_budget_policy, now: i64| {
        let s = weir_budget_reconfigure(h, &p, now);
        t.call(
            "budget_reconfigure",
            &[
                I(p.form.into()),
                I(p.max_tokens.into()),
                F(p.token_ratio),
                I(p.ttl_ns),
                I(p.min_per_s.into()),
                I(p.reserved.into()),
                F(p.percent),
                I(now),
            ],
            &[S(s)],
        );
    };
    let tokens = weir_budget_policy {
        form: WEIR_BUDGET_TOKENS,
        ..p
    };
    const SEC: i64 = 1_000_000_000;
    t.note("tokens: failures take the count down, then new maxima");
    new(&mut t, &mut h, tokens, 0);
    for _ in 0..3 {
        wd(&mut t, h, 0);
    }
    read(&mut t, h, 0);
    t.note("refused policies change nothing");
    for q in [
        weir_budget_policy { form: 7, ..tokens },
        weir_budget_policy {
            max_tokens: 0,
            ..tokens
        },
        weir_budget_policy {
            token_ratio: f64::NAN,
            ..tokens
        },
        weir_budget_policy { ttl_ns: 0, ..p },
        weir_budget_policy { percent: -1.0, ..p },
    ] {
        change(&mut t, h, q, 0);
    }
    read(&mut t, h, 0);
    for (max, ratio) in [(4, 0.5), (4, 0.1), (20, 0.25), (1000, 0.001), (1, 1.0)] {
        change(
            &mut t,
            h,
            weir_budget_policy {
                max_tokens: max,
                token_ratio: ratio,
                ..tokens
            },
            0,
        );
        read(&mut t, h, 0);
        dep(&mut t, h, 0);
        wd(&mut t, h, 0);
        read(&mut t, h, 0);
    }
    t.note("percent: deposits and retries, then the same ttl at other shares");
    new(
        &mut t,
        &mut h,
        weir_budget_policy { min_per_s: 1, ..p },
        SEC,
    );
    for i in 0..40 {
        let now = SEC + i * 100_000_000;
        dep(&mut t, h, now);
        if i % 4 == 0 {
            wd(&mut t, h, now);
        }
    }
    read(&mut t, h, 5 * SEC);
    for (percent, min) in [(0.5, 1), (0.3, 0), (0.0, 2), (0.2, 1), (1000.0, 0)] {
        change(
            &mut t,
            h,
            weir_budget_policy {
                percent,
                min_per_s: min,
                ..p
            },
            5 * SEC,
        );
        read(&mut t, h, 5 * SEC);
        wd(&mut t, h, 5 * SEC);
        read(&mut t, h, 5 * SEC);
        read(&mut t, h, 14 * SEC);
    }
    t.note("another ttl: the live credit laid on the new slices");
    for (ttl, now) in [
        (SEC, 6 * SEC),
        (30 * SEC, 6_500_000_000),
        (10 * SEC, 2 * SEC),
    ] {
        change(
            &mut t,
            h,
            weir_budget_policy {
                ttl_ns: ttl,
                percent: 0.2,
                ..p
            },
            now,
        );
        for dt in [0, ttl / 10, ttl - 1, ttl, 2 * ttl] {
            read(&mut t, h, now + dt);
        }
        dep(&mut t, h, now);
        wd(&mut t, h, now);
    }
    t.note("a change of form starts afresh; the clock's ends");
    change(&mut t, h, tokens, 7 * SEC);
    read(&mut t, h, 7 * SEC);
    change(&mut t, h, p, MAX);
    read(&mut t, h, MAX);
    change(&mut t, h, weir_budget_policy { ttl_ns: SEC, ..p }, MAX);
    read(&mut t, h, MAX);
    change(&mut t, h, p, i64::MIN);
    read(&mut t, h, MAX);
    t.note("seeded random calls");
    let mut rng = Rng(36);
    new(&mut t, &mut h, p, 0);
    let mut now = 0;
    for _ in 0..600 {
        now = rng.step(now, 50_000_000);
        match rng.below(12) {
            0 => read(&mut t, h, now),
            1..=4 => wd(&mut t, h, now),
            5 => {
                let form = if rng.below(5) == 0 { 0 } else { 1 };
                let q = weir_budget_policy {
                    form,
                    max_tokens: 1 + rng.below(30) as i32,
                    token_ratio: [0.1, 0.5, 1.0][rng.below(3) as usize],
                    ttl_ns: SEC * (1 + rng.below(3) as i64),
                    min_per_s: rng.below(3) as i32,
                    reserved: 0,
                    percent: [0.0, 0.1, 0.25, 2.0][rng.below(4) as usize],
                };
                change(&mut t, h, q, now);
            }
            _ => dep(&mut t, h, now),
        }
    }
    weir_budget_free(h);
    out.push(t);
}

/// Latency both ways: the baseline steps up and holds, then steps back
/// down. Each round fills the limit at one instant and lets every call
/// leave one latency later. Checked here as it is written: the limit falls
/// at the step up and recovers as the higher latency becomes the baseline,
/// the baseline follows latency back down, and a later rise lowers the
/// limit again (no stale baseline hides it).
fn concurrency_step_trace(out: &mut Vec<Trace>) {
    const MS: i64 = 1_000_000;
    let mut t = Trace::new(
        "concurrency-latency-step.trace",
        "concurrency",
        "Latency both ways: 10 ms for 40 rounds that fill the limit, 40 ms\n\
         until the limit is back at its maximum, 10 ms until the baseline is\n\
         back under 12 ms, then 40 ms again for 3 rounds.",
    );
    let p = weir_concurrency_policy {
        initial_limit: 10,
        min_limit: 2,
        max_limit: 20,
        ..weir_concurrency_policy_preset()
    };
    let mut h: *mut weir_concurrency = std::ptr::null_mut();
    let s = weir_concurrency_new(&p, &mut h);
    t.call(
        "concurrency_new",
        &[
            I(p.initial_limit.into()),
            I(p.min_limit.into()),
            I(p.max_limit.into()),
            I(p.queue_size.into()),
            F(p.smoothing),
            F(p.tolerance),
            I(p.long_window.into()),
            I(p.warmup.into()),
        ],
        &[S(s)],
    );
    assert_eq!(s, weir_status::WEIR_OK);
    let mut slots = Slots::<weir_concurrency_ticket>(Vec::new());
    let mut now = 0;
    // One round: enter until refused (at most the maximum and one more),
    // every call leaving `rtt` later; then the limit and the baseline.
    let mut round = |t: &mut Trace, now: &mut i64, rtt: i64| -> (i64, f64) {
        let mut open = Vec::new();
        for _ in 0..=p.max_limit {
            let (_, tk) = slots.take();
            let ok = weir_concurrency_enter(h, *now, tk);
            t.call("concurrency_enter", &[I(*now)], &[B(ok)]);
            if !ok {
                break;
            }
            open.push(slots.0.len() - 1);
        }
        *now += rtt;
        for k in open {
            let s = weir_concurrency_leave(h, &mut slots.0[k], *now, false);
            t.call(
                "concurrency_leave",
                &[U(k as u64), I(*now), B(false)],
                &[S(s)],
            );
        }
        let limit = weir_concurrency_limit(h);
        let base = weir_concurrency_long_rtt(h);
        t.call("concurrency_limit", &[], &[I(limit)]);
        t.call("concurrency_long_rtt", &[], &[F(base)]);
        (limit, base)
    };
    t.note("10 ms: the limit climbs to its maximum");
    let mut at = (0, 0.0);
    for _ in 0..40 {
        at = round(&mut t, &mut now, 10 * MS);
    }
    assert_eq!(at.0, 20, "{at:?}");
    t.note("40 ms: the limit falls, then recovers as 40 ms becomes the baseline");
    let mut lowest = at.0;
    let mut rounds = 0;
    loop {
        at = round(&mut t, &mut now, 40 * MS);
        lowest = lowest.min(at.0);
        rounds += 1;
        if lowest <= 12 && at.0 == 20 {
            break;
        }
        assert!(
            rounds < 400,
            "the limit never recovered at 40 ms: {at:?}, lowest {lowest}"
        );
    }
    t.note("10 ms again: the baseline follows latency down");
    let mut rounds = 0;
    while at.1 > 12.0 * MS as f64 {
        at = round(&mut t, &mut now, 10 * MS);
        assert_eq!(at.0, 20);
        rounds += 1;
        assert!(rounds < 100, "the baseline stuck at {}", at.1);
    }
    t.note("40 ms once more: the limit falls as it did the first time");
    let mut again = at.0;
    for _ in 0..3 {
        again = again.min(round(&mut t, &mut now, 40 * MS).0);
    }
    assert!(again <= 12, "{again}: a stale baseline hid the rise");
    weir_concurrency_free(h);
    out.push(t);
}

fn concurrency_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "concurrency-scenarios.trace",
        "concurrency",
        "The adaptive concurrency limit: its constructor's statuses, enters and\n\
         leaves (dropped or not, a ticket used twice), the limit moving with\n\
         latency, time going backwards; then seeded random calls.",
    );
    let mut h: *mut weir_concurrency = std::ptr::null_mut();
    let mut slots = Slots::<weir_concurrency_ticket>(Vec::new());
    let new = |t: &mut Trace, h: &mut *mut weir_concurrency, p: weir_concurrency_policy| {
        weir_concurrency_free(*h);
        *h = std::ptr::null_mut();
        let s = weir_concurrency_new(&p, h);
        t.call(
            "concurrency_new",
            &[
                I(p.initial_limit.into()),
                I(p.min_limit.into()),
                I(p.max_limit.into()),
                I(p.queue_size.into()),
                F(p.smoothing),
                F(p.tolerance),
                I(p.long_window.into()),
                I(p.warmup.into()),
            ],
            &[S(s)],
        );
    };
    let read = |t: &mut Trace, h: *mut weir_concurrency| {
        t.call("concurrency_limit", &[], &[I(weir_concurrency_limit(h))]);
        t.call("concurrency_flying", &[], &[I(weir_concurrency_flying(h))]);
        t.call(
            "concurrency_long_rtt",
            &[],
            &[F(weir_concurrency_long_rtt(h))],
        );
    };
    let enter = |t: &mut Trace, slots: &mut Slots<weir_concurrency_ticket>, h, now: i64| {
        let (_, tk) = slots.take();
        let ok = weir_concurrency_enter(h, now, tk);
        t.call("concurrency_enter", &[I(now)], &[B(ok)]);
        ok
    };
    let leave = |t: &mut Trace,
                 slots: &mut Slots<weir_concurrency_ticket>,
                 h,
                 k: usize,
                 now: i64,
                 d: bool| {
        let s = weir_concurrency_leave(h, &mut slots.0[k], now, d);
        t.call("concurrency_leave", &[U(k as u64), I(now), B(d)], &[S(s)]);
    };
    let p = weir_concurrency_policy_preset();
    let mut bad = Vec::new();
    for v in [-1, 0, 1, 1000, i32::MAX, i32::MIN] {
        bad.push(weir_concurrency_policy {
            initial_limit: v,
            ..p
        });
        bad.push(weir_concurrency_policy { min_limit: v, ..p });
        bad.push(weir_concurrency_policy { max_limit: v, ..p });
        bad.push(weir_concurrency_policy { queue_size: v, ..p });
        bad.push(weir_concurrency_policy {
            long_window: v,
            ..p
        });
        bad.push(weir_concurrency_policy { warmup: v, ..p });
    }
    for f in BAD_F {
        bad.push(weir_concurrency_policy { smoothing: f, ..p });
        bad.push(weir_concurrency_policy { tolerance: f, ..p });
    }
    for b in bad {
        new(&mut t, &mut h, b);
    }
    new(&mut t, &mut h, p);
    read(&mut t, h);
    let mut now = 1_000_000;
    let mut open = Vec::new();
    for round in 0..40i64 {
        for _ in 0..3 {
            if enter(&mut t, &mut slots, h, now) {
                open.push(slots.0.len() - 1);
            }
        }
        now += 1_000_000 * (1 + round % 5);
        while let Some(k) = open.pop() {
            leave(&mut t, &mut slots, h, k, now, round % 7 == 0);
        }
        read(&mut t, h);
    }
    t.note("a ticket used twice; time going backwards; the clock's end");
    enter(&mut t, &mut slots, h, now);
    let k = slots.0.len() - 1;
    leave(&mut t, &mut slots, h, k, now + 5, false);
    leave(&mut t, &mut slots, h, k, now + 6, false);
    enter(&mut t, &mut slots, h, now);
    let k = slots.0.len() - 1;
    leave(&mut t, &mut slots, h, k, 0, false);
    enter(&mut t, &mut slots, h, MAX);
    let k = slots.0.len() - 1;
    leave(&mut t, &mut slots, h, k, MAX, false);
    read(&mut t, h);
    t.note("seeded random calls");
    let mut rng = Rng(18);
    new(
        &mut t,
        &mut h,
        weir_concurrency_policy {
            initial_limit: 4,
            min_limit: 1,
            queue_size: 0,
            ..p
        },
    );
    let mut open: Vec<usize> = Vec::new();
    for _ in 0..1500 {
        now = rng.step(now, 2_000_000);
        if rng.below(2) == 0 || open.is_empty() {
            if enter(&mut t, &mut slots, h, now) {
                open.push(slots.0.len() - 1);
            }
        } else {
            let k = open.swap_remove(rng.below(open.len() as u64) as usize);
            leave(&mut t, &mut slots, h, k, now, rng.below(10) == 0);
        }
        if rng.below(8) == 0 {
            read(&mut t, h);
        }
    }
    weir_concurrency_free(h);
    out.push(t);

    let mut t = Trace::new(
        "concurrency-reconfigure.trace",
        "concurrency",
        "An adaptive limit's policy changed in place: the limit reached kept\n\
         within the new bounds, calls in flight past a lower limit leaving\n\
         before any enters, the latency averages carried, refused policies\n\
         changing nothing; then seeded random calls.",
    );
    let mut h: *mut weir_concurrency = std::ptr::null_mut();
    let mut slots = Slots::<weir_concurrency_ticket>(Vec::new());
    let change = |t: &mut Trace, h: *mut weir_concurrency, p: weir_concurrency_policy| {
        let s = weir_concurrency_reconfigure(h, &p);
        t.call(
            "concurrency_reconfigure",
            &[
                I(p.initial_limit.into()),
                I(p.min_limit.into()),
                I(p.max_limit.into()),
                I(p.queue_size.into()),
                F(p.smoothing),
                F(p.tolerance),
                I(p.long_window.into()),
                I(p.warmup.into()),
            ],
            &[S(s)],
        );
    };
    let small = weir_concurrency_policy {
        initial_limit: 8,
        min_limit: 2,
        max_limit: 16,
        queue_size: 2,
        ..p
    };
    new(&mut t, &mut h, small);
    let mut now = 1_000_000;
    let mut open: Vec<usize> = Vec::new();
    t.note("eight calls in flight, then a lower ceiling");
    for _ in 0..8 {
        if enter(&mut t, &mut slots, h, now) {
            open.push(slots.0.len() - 1);
        }
    }
    read(&mut t, h);
    t.note("refused policies change nothing");
    for q in [
        weir_concurrency_policy {
            min_limit: 0,
            ..small
        },
        weir_concurrency_policy {
            max_limit: 1,
            ..small
        },
        weir_concurrency_policy {
            queue_size: -1,
            ..small
        },
        weir_concurrency_policy {
            smoothing: f64::NAN,
            ..small
        },
        weir_concurrency_policy {
            tolerance: 0.5,
            ..small
        },
        weir_concurrency_policy { warmup: 0, ..small },
    ] {
        change(&mut t, h, q);
    }
    read(&mut t, h);
    change(
        &mut t,
        h,
        weir_concurrency_policy {
            initial_limit: 3,
            min_limit: 1,
            max_limit: 3,
            ..small
        },
    );
    read(&mut t, h);
    t.note("none enters until fewer than three are in flight");
    for _ in 0..6 {
        now += 1_000_000;
        enter(&mut t, &mut slots, h, now);
        if let Some(k) = open.pop() {
            leave(&mut t, &mut slots, h, k, now, false);
        }
        read(&mut t, h);
    }
    t.note("a higher floor lifts the limit; a wider one keeps it");
    for q in [
        weir_concurrency_policy {
            initial_limit: 10,
            min_limit: 10,
            max_limit: 40,
            ..small
        },
        weir_concurrency_policy {
            initial_limit: 1,
            min_limit: 1,
            max_limit: 1000,
            warmup: 1,
            long_window: 5,
            ..small
        },
    ] {
        change(&mut t, h, q);
        read(&mut t, h);
        for round in 0..10i64 {
            for _ in 0..4 {
                if enter(&mut t, &mut slots, h, now) {
                    open.push(slots.0.len() - 1);
                }
            }
            now += 1_000_000 * (1 + round % 3);
            while let Some(k) = open.pop() {
                leave(&mut t, &mut slots, h, k, now, false);
            }
            read(&mut t, h);
        }
    }
    t.note("seeded random calls");
    let mut rng = Rng(36);
    new(&mut t, &mut h, small);
    let mut open: Vec<usize> = Vec::new();
    for _ in 0..800 {
        now = rng.step(now, 2_000_000);
        match rng.below(20) {
            0 => {
                let min = 1 + rng.below(6) as i32;
                let max = min + rng.below(20) as i32;
                change(
                    &mut t,
                    h,
                    weir_concurrency_policy {
                        initial_limit: min,
                        min_limit: min,
                        max_limit: max,
                        queue_size: rng.below(3) as i32,
                        warmup: 1 + rng.below(12) as i32,
                        ..small
                    },
                );
            }
            1..=9 => {
                if enter(&mut t, &mut slots, h, now) {
                    open.push(slots.0.len() - 1);
                }
            }
            _ if !open.is_empty() => {
                let k = open.swap_remove(rng.below(open.len() as u64) as usize);
                leave(&mut t, &mut slots, h, k, now, rng.below(10) == 0);
            }
            _ => read(&mut t, h),
        }
    }
    read(&mut t, h);
    weir_concurrency_free(h);
    out.push(t);

    // Partitions: two, with shares and borrow caps.
    let mut t = Trace::new(
        "concurrency-partitions.trace",
        "concurrency",
        "Partitions of the adaptive limit: the constructor's statuses, a\n\
         partition borrowing to its cap, an owner's claim taking room back\n\
         first, the claim lapsing; then seeded random calls.",
    );
    let mut h: *mut weir_concurrency = std::ptr::null_mut();
    let mut slots = Slots::<weir_concurrency_ticket>(Vec::new());
    let split = |t: &mut Trace,
                 h: &mut *mut weir_concurrency,
                 p: weir_concurrency_policy,
                 count: i32,
                 parts: [weir_concurrency_partition; 2]| {
        weir_concurrency_free(*h);
        *h = std::ptr::null_mut();
        let s = weir_concurrency_new_partitioned(&p, parts.as_ptr(), count, h);
        t.call(
            "concurrency_new_partitioned",
            &[
                I(p.initial_limit.into()),
                I(p.min_limit.into()),
                I(p.max_limit.into()),
                I(p.queue_size.into()),
                F(p.smoothing),
                F(p.tolerance),
                I(p.long_window.into()),
                I(p.warmup.into()),
                I(count.into()),
                F(parts[0].share),
                I(parts[0].borrow),
                F(parts[1].share),
                I(parts[1].borrow),
            ],
            &[S(s)],
        );
    };
    let enter_in =
        |t: &mut Trace, slots: &mut Slots<weir_concurrency_ticket>, h, part: i32, now: i64| {
            let (_, tk) = slots.take();
            let s = weir_concurrency_enter_partition(h, part, now, &mut *tk);
            let ok = s == weir_status::WEIR_OK && tk.flying == 1;
            t.call(
                "concurrency_enter_partition",
                &[I(part.into()), I(now)],
                &[S(s), B(ok)],
            );
            ok
        };
    let leave_in = |t: &mut Trace,
                    slots: &mut Slots<weir_concurrency_ticket>,
                    h,
                    part: i32,
                    k: usize,
                    now: i64| {
        let s = weir_concurrency_leave_partition(h, part, &mut slots.0[k], now, false);
        t.call(
            "concurrency_leave_partition",
            &[I(part.into()), U(k as u64), I(now)],
            &[S(s)],
        );
    };
    let look = |t: &mut Trace, h: *mut weir_concurrency| {
        read(t, h);
        for part in 0..2 {
            let n = weir_concurrency_partition_flying(h, part);
            t.call("concurrency_partition_flying", &[I(part.into())], &[I(n)]);
            let r = weir_concurrency_partition_room(h, part);
            t.call("concurrency_partition_room", &[I(part.into())], &[I(r)]);
        }
    };
    let fixed = weir_concurrency_policy {
        initial_limit: 10,
        min_limit: 10,
        max_limit: 10,
        queue_size: 0,
        ..p
    };
    let half = |borrow| weir_concurrency_partition { share: 0.5, borrow };
    t.note("bad partitions");
    for (count, parts) in [
        (0, [half(3), half(5)]),
        (
            2,
            [
                weir_concurrency_partition {
                    share: 0.6,
                    borrow: 0,
                },
                half(0),
            ],
        ),
        (
            2,
            [
                weir_concurrency_partition {
                    share: f64::NAN,
                    borrow: 0,
                },
                half(0),
            ],
        ),
        (
            2,
            [
                weir_concurrency_partition {
                    share: -0.5,
                    borrow: 0,
                },
                half(0),
            ],
        ),
        (2, [half(-1), half(0)]),
        (2, [half(i64::MAX), half(0)]),
    ] {
        split(&mut t, &mut h, fixed, count, parts);
    }
    split(
        &mut t,
        &mut h,
        weir_concurrency_policy {
            min_limit: 0,
            ..fixed
        },
        2,
        [half(0), half(0)],
    );
    t.note("partition 1 borrows to its cap; partition 0 claims its room back");
    split(&mut t, &mut h, fixed, 2, [half(3), half(5)]);
    look(&mut t, h);
    enter_in(&mut t, &mut slots, h, 0, 0);
    leave_in(&mut t, &mut slots, h, 0, 0, 10_000_000);
    let mut held = Vec::new();
    for _ in 0..11 {
        if enter_in(&mut t, &mut slots, h, 1, 20_000_000) {
            held.push(slots.0.len() - 1);
        }
    }
    look(&mut t, h);
    enter_in(&mut t, &mut slots, h, 0, 20_000_000);
    leave_in(&mut t, &mut slots, h, 1, held.pop().unwrap(), 21_000_000);
    enter_in(&mut t, &mut slots, h, 1, 22_000_000);
    enter_in(&mut t, &mut slots, h, 0, 22_000_000);
    look(&mut t, h);
    t.note("the claim lapses after one long round trip");
    leave_in(&mut t, &mut slots, h, 1, held.pop().unwrap(), 40_000_000);
    enter_in(&mut t, &mut slots, h, 0, 40_000_000);
    leave_in(&mut t, &mut slots, h, 1, held.pop().unwrap(), 41_000_000);
    enter_in(&mut t, &mut slots, h, 1, 41_000_000);
    enter_in(&mut t, &mut slots, h, 1, 80_000_000);
    look(&mut t, h);
    t.note("seeded random calls on a moving limit");
    let mut rng = Rng(22);
    let moving = weir_concurrency_policy {
        initial_limit: 8,
        min_limit: 2,
        max_limit: 16,
        queue_size: 2,
        warmup: 1,
        ..p
    };
    split(
        &mut t,
        &mut h,
        moving,
        2,
        [
            weir_concurrency_partition {
                share: 0.7,
                borrow: 4,
            },
            weir_concurrency_partition {
                share: 0.25,
                borrow: 1,
            },
        ],
    );
    let mut now = 0;
    let mut open: Vec<(i32, usize)> = Vec::new();
    for _ in 0..200 {
        now = rng.step(now, 1_000_000);
        if rng.below(2) == 0 || open.is_empty() {
            let part = rng.below(2) as i32;
            if enter_in(&mut t, &mut slots, h, part, now) {
                open.push((part, slots.0.len() - 1));
            }
        } else {
            let (part, k) = open.swap_remove(rng.below(open.len() as u64) as usize);
            let late = now + rng.below(40_000_000) as i64;
            leave_in(&mut t, &mut slots, h, part, k, late);
        }
        if rng.below(25) == 0 {
            look(&mut t, h);
        }
    }
    weir_concurrency_free(h);
    out.push(t);
}

fn breaker_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "breaker-scenarios.trace",
        "breaker",
        "The breaker: its constructor's statuses, opening under failures and\n\
         closing after, tickets used twice, the tally, rolls at the edges,\n\
         time going backwards; then seeded random calls.",
    );
    let mut h: *mut weir_breaker = std::ptr::null_mut();
    let mut slots = Slots::<weir_breaker_ticket>(Vec::new());
    let new = |t: &mut Trace, h: &mut *mut weir_breaker, p: weir_breaker_policy, now: i64| {
        weir_breaker_free(*h);
        *h = std::ptr::null_mut();
        let s = weir_breaker_new(&p, now, h);
        t.call(
            "breaker_new",
            &[
                F(p.k),
                F(p.floor),
                F(p.protection),
                I(p.probe_ns),
                I(p.size.into()),
                I(p.skip_refusals.into()),
                I(p.window_ns),
                F(p.max_rejection_probability),
                F(p.rps_threshold),
                F(p.aggression),
                I(now),
            ],
            &[S(s)],
        );
    };
    let read = |t: &mut Trace, h: *mut weir_breaker, now: i64| {
        t.call("breaker_ratio", &[I(now)], &[F(weir_breaker_ratio(h, now))]);
        let mut x = weir_breaker_tally::default();
        let s = weir_breaker_read_tally(h, now, &mut x);
        t.call(
            "breaker_read_tally",
            &[I(now)],
            &[S(s), I(x.total), I(x.success), I(x.failure), I(x.drop)],
        );
    };
    let allow = |t: &mut Trace, slots: &mut Slots<weir_breaker_ticket>, h, now: i64, roll: f64| {
        let (_, tk) = slots.take();
        let ok = weir_breaker_allow(h, now, roll, tk);
        t.call("breaker_allow", &[I(now), F(roll)], &[B(ok)]);
        ok
    };
    let end = |t: &mut Trace,
               slots: &mut Slots<weir_breaker_ticket>,
               h,
               k: usize,
               now: i64,
               pass: bool| {
        let (op, s) = if pass {
            ("breaker_pass", weir_breaker_pass(h, &mut slots.0[k], now))
        } else {
            ("breaker_fail", weir_breaker_fail(h, &mut slots.0[k], now))
        };
        t.call(op, &[U(k as u64), I(now)], &[S(s)]);
    };
    let p = weir_breaker_policy_preset();
    let mut bad = Vec::new();
    for f in BAD_F {
        bad.push(weir_breaker_policy { k: f, ..p });
        bad.push(weir_breaker_policy { floor: f, ..p });
        bad.push(weir_breaker_policy { protection: f, ..p });
        bad.push(weir_breaker_policy {
            max_rejection_probability: f,
            ..p
        });
        bad.push(weir_breaker_policy {
            rps_threshold: f,
            ..p
        });
        bad.push(weir_breaker_policy { aggression: f, ..p });
    }
    for v in BAD_I {
        bad.push(weir_breaker_policy { probe_ns: v, ..p });
        bad.push(weir_breaker_policy { window_ns: v, ..p });
        bad.push(weir_breaker_policy {
            size: v as i32,
            ..p
        });
    }
    for size in [2, 3, 7, 100, 1 << 20, i32::MAX] {
        bad.push(weir_breaker_policy { size, ..p });
    }
    for b in bad {
        new(&mut t, &mut h, b, 0);
    }
    new(&mut t, &mut h, p, -1);
    {
        // skip_refusals at an int32's edges, in a file of its own: a face
        // whose policy holds it as a bool passes only 0 and 1.
        let mut t = Trace::new(
            "breaker-skip-refusals.trace",
            "breaker",
            "The breaker's constructor takes a skip_refusals of 0 or 1 and refuses\n\
             any other int32.",
        );
        let mut h: *mut weir_breaker = std::ptr::null_mut();
        for v in BAD_I {
            let q = weir_breaker_policy {
                skip_refusals: v as i32,
                ..p
            };
            new(&mut t, &mut h, q, 0);
        }
        weir_breaker_free(h);
        out.push(t);
    }
    new(&mut t, &mut h, p, 1_000_000_000);
    read(&mut t, h, 1_000_000_000);
    let mut now = 1_000_000_000;
    let mut rng = Rng(19);
    t.note("failures open it");
    for _ in 0..200 {
        now += 5_000_000;
        let roll = rng.unit();
        if allow(&mut t, &mut slots, h, now, roll) {
            let k = slots.0.len() - 1;
            end(&mut t, &mut slots, h, k, now + 1_000, false);
        }
    }
    read(&mut t, h, now);
    t.note("rolls at the edges");
    for roll in [
        0.0,
        1.0 - f64::EPSILON / 2.0,
        1.0,
        -0.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
    ] {
        allow(&mut t, &mut slots, h, now, roll);
    }
    t.note("successes close it");
    for _ in 0..300 {
        now += 5_000_000;
        let roll = rng.unit();
        if allow(&mut t, &mut slots, h, now, roll) {
            let k = slots.0.len() - 1;
            end(&mut t, &mut slots, h, k, now + 1_000, true);
        }
    }
    read(&mut t, h, now);
    t.note("a ticket used twice; time going backwards; the clock's end");
    allow(&mut t, &mut slots, h, now, 0.5);
    let k = slots.0.len() - 1;
    end(&mut t, &mut slots, h, k, now, true);
    end(&mut t, &mut slots, h, k, now, true);
    end(&mut t, &mut slots, h, k, now, false);
    allow(&mut t, &mut slots, h, now, 0.5);
    let k = slots.0.len() - 1;
    end(&mut t, &mut slots, h, k, 0, true);
    read(&mut t, h, 0);
    read(&mut t, h, -1);
    allow(&mut t, &mut slots, h, MAX, 0.5);
    let k = slots.0.len() - 1;
    end(&mut t, &mut slots, h, k, MAX, false);
    read(&mut t, h, MAX);
    {
        // In a file of its own: a face whose tickets keep their breaker
        // cannot settle one on another.
        let mut t = Trace::new(
            "breaker-foreign-ticket.trace",
            "breaker",
            "A ticket of the breaker before, settled on a new one, is refused.",
        );
        let mut h: *mut weir_breaker = std::ptr::null_mut();
        let mut slots = Slots::<weir_breaker_ticket>(Vec::new());
        new(&mut t, &mut h, p, now);
        allow(&mut t, &mut slots, h, now, 0.5);
        let old = slots.0.len() - 1;
        new(&mut t, &mut h, p, now);
        end(&mut t, &mut slots, h, old, now, true);
        weir_breaker_free(h);
        out.push(t);
    }
    t.note("seeded random calls");
    new(&mut t, &mut h, p, 0);
    now = 0;
    let mut open: Vec<usize> = Vec::new();
    let mut fail_rate = 0.1;
    for i in 0..2000 {
        if i % 500 == 0 {
            fail_rate = rng.unit();
        }
        now = rng.step(now, 3_000_000);
        if rng.below(3) != 0 || open.is_empty() {
            let roll = rng.unit();
            if allow(&mut t, &mut slots, h, now, roll) {
                open.push(slots.0.len() - 1);
            }
        } else {
            let k = open.swap_remove(rng.below(open.len() as u64) as usize);
            let pass = rng.unit() >= fail_rate;
            end(&mut t, &mut slots, h, k, now, pass);
        }
        if rng.below(10) == 0 {
            read(&mut t, h, now);
        }
    }
    out.push(t);

    let mut t = Trace::new(
        "breaker-reconfigure.trace",
        "breaker",
        "A breaker's policy changed in place: the window kept when its buckets\n\
         keep their layout, resampled into one bucket otherwise, a new size,\n\
         tickets in flight settling across the change, refused policies that\n\
         change nothing; then seeded random calls.",
    );
    let change = |t: &mut Trace, h: *mut weir_breaker, p: weir_breaker_policy| {
        let s = weir_breaker_reconfigure(h, &p);
        t.call(
            "breaker_reconfigure",
            &[
                F(p.k),
                F(p.floor),
                F(p.protection),
                I(p.probe_ns),
                I(p.size.into()),
                I(p.skip_refusals.into()),
                I(p.window_ns),
                F(p.max_rejection_probability),
                F(p.rps_threshold),
                F(p.aggression),
            ],
            &[S(s)],
        );
    };
    let mut slots = Slots::<weir_breaker_ticket>(Vec::new());
    new(&mut t, &mut h, p, 0);
    let mut now = 0;
    let mut rng = Rng(36);
    let mut open: Vec<usize> = Vec::new();
    t.note("failures open it; some tickets stay in flight");
    for i in 0..300 {
        now += 10_000_000;
        if allow(&mut t, &mut slots, h, now, rng.unit()) {
            let k = slots.0.len() - 1;
            if i % 7 == 0 {
                open.push(k);
            } else {
                end(&mut t, &mut slots, h, k, now + 1_000, false);
            }
        }
    }
    read(&mut t, h, now);
    t.note("refused policies change nothing");
    for q in [
        weir_breaker_policy { floor: 0.5, ..p },
        weir_breaker_policy { window_ns: 0, ..p },
        weir_breaker_policy { size: 1 << 21, ..p },
    ] {
        change(&mut t, h, q);
    }
    read(&mut t, h, now);
    t.note("the same layout: the window kept, read by the new formula");
    change(
        &mut t,
        h,
        weir_breaker_policy {
            protection: 200.0,
            ..p
        },
    );
    read(&mut t, h, now);
    change(&mut t, h, p);
    read(&mut t, h, now);
    t.note("another layout: the sums in one bucket, aging out together");
    change(
        &mut t,
        h,
        weir_breaker_policy {
            window_ns: 20_000_000_000,
            ..p
        },
    );
    read(&mut t, h, now);
    read(&mut t, h, now + 19_000_000_000);
    read(&mut t, h, now + 20_000_000_000);
    t.note("another size; the tickets in flight settle");
    change(&mut t, h, weir_breaker_policy { size: 7, ..p });
    read(&mut t, h, now);
    for k in open.drain(..) {
        end(&mut t, &mut slots, h, k, now, true);
    }
    read(&mut t, h, now);
    t.note("seeded random calls and changes");
    let mut fail_rate = 0.3;
    for i in 0..1500 {
        if i % 150 == 149 {
            let q = weir_breaker_policy {
                k: 1.1 + rng.unit(),
                protection: (rng.below(20)) as f64,
                size: 1 + rng.below(60) as i32,
                window_ns: 1_000_000_000 * (1 + rng.below(20) as i64),
                skip_refusals: rng.below(2) as i32,
                aggression: 0.5 + rng.unit() * 2.0,
                ..p
            };
            change(&mut t, h, q);
            fail_rate = rng.unit();
        }
        now = rng.step(now, 3_000_000);
        if rng.below(3) != 0 || open.is_empty() {
            if allow(&mut t, &mut slots, h, now, rng.unit()) {
                open.push(slots.0.len() - 1);
            }
        } else {
            let k = open.swap_remove(rng.below(open.len() as u64) as usize);
            let pass = rng.unit() >= fail_rate;
            end(&mut t, &mut slots, h, k, now, pass);
        }
        if rng.below(10) == 0 {
            read(&mut t, h, now);
        }
    }
    weir_breaker_free(h);
    out.push(t);
}

fn shedder_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "shedder-scenarios.trace",
        "shedder",
        "The load shedder: its constructor's statuses, cool and hot CPU,\n\
         latency building up, tickets used twice, time going backwards, the\n\
         clock's end; then seeded random calls.",
    );
    let mut h: *mut weir_shedder = std::ptr::null_mut();
    let mut slots = Slots::<weir_shedder_ticket>(Vec::new());
    let new = |t: &mut Trace, h: &mut *mut weir_shedder, p: weir_shedder_policy, now: i64| {
        weir_shedder_free(*h);
        *h = std::ptr::null_mut();
        let s = weir_shedder_new(&p, now, h);
        t.call(
            "shedder_new",
            &[
                I(p.size.into()),
                I(p.cpu.into()),
                I(p.window_ns),
                I(p.latency_ns),
                F(p.beta),
                I(p.cool_ns),
                F(p.floor),
                I(now),
            ],
            &[S(s)],
        );
    };
    let read = |t: &mut Trace, h: *mut weir_shedder, now: i64| {
        t.call("shedder_flying", &[], &[I(weir_shedder_flying(h))]);
        let mut x = weir_shedder_stats::default();
        let s = weir_shedder_read_stats(h, now, &mut x);
        t.call(
            "shedder_read_stats",
            &[I(now)],
            &[
                S(s),
                I(x.flying),
                F(x.average),
                F(x.capacity),
                F(x.limit),
                I(x.cpu.into()),
                I(x.hot.into()),
            ],
        );
    };
    let allow = |t: &mut Trace, slots: &mut Slots<weir_shedder_ticket>, h, now: i64, cpu: i32| {
        let (_, tk) = slots.take();
        let ok = weir_shedder_allow(h, now, cpu, tk);
        t.call("shedder_allow", &[I(now), I(cpu.into())], &[B(ok)]);
        ok
    };
    let end = |t: &mut Trace,
               slots: &mut Slots<weir_shedder_ticket>,
               h,
               k: usize,
               now: i64,
               pass: bool| {
        if pass {
            let s = weir_shedder_pass(h, &mut slots.0[k], now);
            t.call("shedder_pass", &[U(k as u64), I(now)], &[S(s)]);
        } else {
            let s = weir_shedder_fail(h, &mut slots.0[k]);
            t.call("shedder_fail", &[U(k as u64)], &[S(s)]);
        }
    };
    let p = weir_shedder_policy_preset();
    let mut bad = Vec::new();
    for v in BAD_I {
        bad.push(weir_shedder_policy {
            size: v as i32,
            ..p
        });
        bad.push(weir_shedder_policy { cpu: v as i32, ..p });
        bad.push(weir_shedder_policy { window_ns: v, ..p });
        bad.push(weir_shedder_policy { latency_ns: v, ..p });
        bad.push(weir_shedder_policy { cool_ns: v, ..p });
    }
    bad.push(weir_shedder_policy { cpu: 1001, ..p });
    for f in BAD_F {
        bad.push(weir_shedder_policy { beta: f, ..p });
        bad.push(weir_shedder_policy { floor: f, ..p });
    }
    for size in [2, 3, 7, 100, 1 << 20, i32::MAX] {
        bad.push(weir_shedder_policy { size, ..p });
    }
    for b in bad {
        new(&mut t, &mut h, b, 0);
    }
    new(&mut t, &mut h, p, -1);
    new(&mut t, &mut h, p, 1_000_000_000);
    read(&mut t, h, 1_000_000_000);
    let mut now = 1_000_000_000i64;
    let mut open: Vec<usize> = Vec::new();
    t.note("cool, then hot with latency building up, then cool again");
    for (cpu, lat) in [
        (100, 1_000_000),
        (950, 50_000_000),
        (950, 200_000_000),
        (200, 1_000_000),
    ] {
        for _ in 0..60 {
            now += 1_000_000;
            if allow(&mut t, &mut slots, h, now, cpu) {
                open.push(slots.0.len() - 1);
            }
            if open.len() > 8 {
                let k = open.remove(0);
                end(&mut t, &mut slots, h, k, now + lat, true);
            }
        }
        read(&mut t, h, now);
    }
    t.note("bad cpu readings");
    for cpu in [-1, 1001, i32::MAX, i32::MIN] {
        allow(&mut t, &mut slots, h, now, cpu);
    }
    t.note("a ticket used twice; time going backwards; the clock's end");
    allow(&mut t, &mut slots, h, now, 0);
    let k = slots.0.len() - 1;
    end(&mut t, &mut slots, h, k, now, true);
    end(&mut t, &mut slots, h, k, now, true);
    end(&mut t, &mut slots, h, k, now, false);
    allow(&mut t, &mut slots, h, now, 0);
    let k = slots.0.len() - 1;
    end(&mut t, &mut slots, h, k, 0, true);
    allow(&mut t, &mut slots, h, MAX, 0);
    let k = slots.0.len() - 1;
    end(&mut t, &mut slots, h, k, MAX, true);
    read(&mut t, h, MAX);
    t.note("seeded random calls");
    let mut rng = Rng(20);
    new(&mut t, &mut h, p, 0);
    now = 0;
    open.clear();
    let mut cpu = 500;
    for _ in 0..2000 {
        now = rng.step(now, 1_000_000);
        cpu = (cpu + rng.below(101) as i32 - 50).clamp(0, 1000);
        if rng.below(2) == 0 || open.is_empty() {
            if allow(&mut t, &mut slots, h, now, cpu) {
                open.push(slots.0.len() - 1);
            }
        } else {
            let k = open.swap_remove(rng.below(open.len() as u64) as usize);
            let pass = rng.below(5) != 0;
            end(&mut t, &mut slots, h, k, now, pass);
        }
        if rng.below(10) == 0 {
            read(&mut t, h, now);
        }
    }
    weir_shedder_free(h);
    out.push(t);

    // The classes: each call's class, its decision and the ticket's state.
    let allow_class =
        |t: &mut Trace, slots: &mut Slots<weir_shedder_ticket>, h, now: i64, cpu: i32, class| {
            let (_, tk) = slots.take();
            let s = weir_shedder_allow_class(h, now, cpu, class, &mut *tk);
            let ok = s == weir_status::WEIR_OK && tk.flying == 1;
            t.call(
                "shedder_allow_class",
                &[I(now), I(cpu.into()), I(class.into())],
                &[S(s), B(ok)],
            );
            ok
        };
    let mut t = Trace::new(
        "shedder-classes.trace",
        "shedder",
        "The shedder's criticality classes: the four classes at the points\n\
         where each is refused (half, three quarters, all and five quarters\n\
         of the limit; half, three quarters and all of the CPU threshold),\n\
         then seeded random calls of mixed classes.",
    );
    let mut h: *mut weir_shedder = std::ptr::null_mut();
    let mut slots = Slots::<weir_shedder_ticket>(Vec::new());
    let small = weir_shedder_policy {
        size: 4,
        window_ns: 20_000_000,
        cpu: 800,
        latency_ns: 20_000_000,
        beta: 0.0,
        cool_ns: 0,
        floor: 1.0,
    };
    for n in 2..=7usize {
        t.note(&format!(
            "{n} in flight and an average of {n} against a limit of 4"
        ));
        new(&mut t, &mut h, small, 0);
        let mut open = Vec::new();
        for _ in 0..=n {
            allow(&mut t, &mut slots, h, 0, 0);
            open.push(slots.0.len() - 1);
        }
        end(&mut t, &mut slots, h, open[0], 0, false);
        read(&mut t, h, 0);
        for class in [
            WEIR_SHEDDER_SHEDDABLE,
            WEIR_SHEDDER_SHEDDABLE_PLUS,
            WEIR_SHEDDER_CRITICAL,
            WEIR_SHEDDER_CRITICAL_PLUS,
        ] {
            for cpu in [0, 399, 400, 599, 600, 799, 800, 999] {
                if allow_class(&mut t, &mut slots, h, 0, cpu, class) {
                    let k = slots.0.len() - 1;
                    end(&mut t, &mut slots, h, k, 0, false);
                }
            }
        }
        read(&mut t, h, 0);
    }
    t.note("seeded random calls of mixed classes, the unclassed among them");
    let mut rng = Rng(21);
    new(
        &mut t,
        &mut h,
        weir_shedder_policy {
            cool_ns: 30_000_000,
            beta: 0.5,
            ..small
        },
        0,
    );
    let mut now = 0;
    let mut open: Vec<usize> = Vec::new();
    let mut cpu = 600;
    for _ in 0..350 {
        now = rng.step(now, 2_000_000);
        cpu = (cpu + rng.below(201) as i32 - 100).clamp(0, 1000);
        if rng.below(2) == 0 || open.is_empty() {
            let class = rng.below(5) as i32;
            let ok = if class == 4 {
                allow(&mut t, &mut slots, h, now, cpu)
            } else {
                allow_class(&mut t, &mut slots, h, now, cpu, class)
            };
            if ok {
                open.push(slots.0.len() - 1);
            }
        } else {
            let k = open.swap_remove(rng.below(open.len() as u64) as usize);
            let pass = rng.below(5) != 0;
            end(
                &mut t,
                &mut slots,
                h,
                k,
                now + rng.below(30_000_000) as i64,
                pass,
            );
        }
        if rng.below(10) == 0 {
            read(&mut t, h, now);
        }
    }
    weir_shedder_free(h);
    out.push(t);

    let mut t = Trace::new(
        "shedder-reconfigure.trace",
        "shedder",
        "A shedder's policy changed in place: calls in flight, their moving\n\
         average and the hot state kept; the window kept when its buckets\n\
         keep their layout and opened empty otherwise; a new size; classed\n\
         calls judged by the new policy; refused policies changing nothing;\n\
         then seeded random calls.",
    );
    let mut h: *mut weir_shedder = std::ptr::null_mut();
    let mut slots = Slots::<weir_shedder_ticket>(Vec::new());
    let change = |t: &mut Trace, h: *mut weir_shedder, p: weir_shedder_policy| {
        let s = weir_shedder_reconfigure(h, &p);
        t.call(
            "shedder_reconfigure",
            &[
                I(p.size.into()),
                I(p.cpu.into()),
                I(p.window_ns),
                I(p.latency_ns),
                F(p.beta),
                I(p.cool_ns),
                F(p.floor),
            ],
            &[S(s)],
        );
    };
    new(&mut t, &mut h, small, 0);
    let mut now = 0;
    let mut open: Vec<usize> = Vec::new();
    t.note("hot and loaded under the first policy");
    for i in 0..120 {
        now += 1_000_000;
        if allow(&mut t, &mut slots, h, now, 900) {
            open.push(slots.0.len() - 1);
        }
        if open.len() > 6 || (i % 3 == 0 && !open.is_empty()) {
            let k = open.remove(0);
            end(&mut t, &mut slots, h, k, now, i % 5 != 0);
        }
    }
    read(&mut t, h, now);
    t.note("refused policies change nothing");
    for q in [
        weir_shedder_policy { cpu: 1000, ..small },
        weir_shedder_policy {
            window_ns: 0,
            ..small
        },
        weir_shedder_policy {
            latency_ns: -1,
            ..small
        },
        weir_shedder_policy { beta: 1.0, ..small },
        weir_shedder_policy {
            floor: f64::NAN,
            ..small
        },
        weir_shedder_policy {
            cool_ns: -1,
            ..small
        },
        weir_shedder_policy {
            size: 1 << 21,
            ..small
        },
    ] {
        change(&mut t, h, q);
    }
    read(&mut t, h, now);
    t.note("the same layout: the window kept, read under the new constants");
    for q in [
        weir_shedder_policy {
            cpu: 950,
            latency_ns: 5_000_000,
            beta: 0.9,
            cool_ns: 10_000_000,
            floor: 0.5,
            ..small
        },
        small,
    ] {
        change(&mut t, h, q);
        read(&mut t, h, now);
        for cpu in [0, 700, 900, 999] {
            for class in [WEIR_SHEDDER_SHEDDABLE, WEIR_SHEDDER_CRITICAL_PLUS] {
                if allow_class(&mut t, &mut slots, h, now, cpu, class) {
                    open.push(slots.0.len() - 1);
                }
            }
        }
        read(&mut t, h, now);
    }
    t.note("another layout: the window opens empty, the rest kept");
    for q in [
        weir_shedder_policy {
            window_ns: 40_000_000,
            ..small
        },
        weir_shedder_policy { size: 2, ..small },
        weir_shedder_policy {
            size: 16,
            window_ns: 16_000_000,
            ..small
        },
        weir_shedder_policy { size: -3, ..small },
    ] {
        change(&mut t, h, q);
        read(&mut t, h, now);
        for i in 0..30 {
            now += 1_000_000;
            if allow(&mut t, &mut slots, h, now, 850) {
                open.push(slots.0.len() - 1);
            }
            if i % 2 == 0 && !open.is_empty() {
                let k = open.remove(0);
                end(&mut t, &mut slots, h, k, now, true);
            }
        }
        read(&mut t, h, now);
    }
    t.note("tickets from before the changes settle");
    while let Some(k) = open.pop() {
        end(&mut t, &mut slots, h, k, now, true);
    }
    read(&mut t, h, now);
    t.note("seeded random calls");
    let mut rng = Rng(36);
    let mut cpu = 700;
    for _ in 0..500 {
        now = rng.step(now, 2_000_000);
        cpu = (cpu + rng.below(201) as i32 - 100).clamp(0, 1000);
        match rng.below(25) {
            0 => {
                let q = weir_shedder_policy {
                    size: [1, 4, 8][rng.below(3) as usize],
                    window_ns: [8_000_000, 20_000_000][rng.below(2) as usize],
                    cpu: [500, 800, 950][rng.below(3) as usize],
                    cool_ns: [0, 30_000_000][rng.below(2) as usize],
                    beta: [0.0, 0.5][rng.below(2) as usize],
                    ..small
                };
                change(&mut t, h, q);
            }
            1..=12 => {
                let class = rng.below(5) as i32;
                let ok = if class == 4 {
                    allow(&mut t, &mut slots, h, now, cpu)
                } else {
                    allow_class(&mut t, &mut slots, h, now, cpu, class)
                };
                if ok {
                    open.push(slots.0.len() - 1);
                }
            }
            _ if !open.is_empty() => {
                let k = open.swap_remove(rng.below(open.len() as u64) as usize);
                let pass = rng.below(5) != 0;
                end(
                    &mut t,
                    &mut slots,
                    h,
                    k,
                    now + rng.below(10_000_000) as i64,
                    pass,
                );
            }
            _ => read(&mut t, h, now),
        }
    }
    read(&mut t, h, now);
    weir_shedder_free(h);
    out.push(t);

    let mut t = Trace::new(
        "shedder-invalid-classes.trace",
        "shedder",
        "The shedder's classed call with a class that is none of the four:\n\
         a status, and nothing changed.",
    );
    let mut h: *mut weir_shedder = std::ptr::null_mut();
    let mut slots = Slots::<weir_shedder_ticket>(Vec::new());
    new(&mut t, &mut h, small, 0);
    for class in [-1, 4, 5, i32::MAX, i32::MIN] {
        allow_class(&mut t, &mut slots, h, 0, 900, class);
        read(&mut t, h, 0);
    }
    weir_shedder_free(h);
    out.push(t);
}

fn pool_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "pool-scenarios.trace",
        "pool",
        "The pool: its constructor's statuses, take, make, give and drop,\n\
         keep and life expiry, eviction, mark_old and close, items it never\n\
         lent, time going backwards; then seeded random calls.",
    );
    let mut h: *mut weir_pool = std::ptr::null_mut();
    let new = |t: &mut Trace, h: &mut *mut weir_pool, p: weir_pool_policy| {
        weir_pool_free(*h);
        *h = std::ptr::null_mut();
        let s = weir_pool_new(&p, h);
        t.call(
            "pool_new",
            &[
                I(p.size),
                I(p.idle),
                I(p.keep_ns),
                I(p.life_ns),
                F(p.life_jitter),
                I(p.min_idle),
                I(p.max_making),
            ],
            &[S(s)],
        );
    };
    let take = |t: &mut Trace, h: *mut weir_pool, now: i64| -> (i32, usize) {
        let x = weir_pool_take(h, now);
        t.call(
            "pool_take",
            &[I(now)],
            &[I(x.kind.into()), U(x.item as u64)],
        );
        (x.kind, x.item)
    };
    let made =
        |t: &mut Trace, h: *mut weir_pool, item: usize, now: i64, draw: Option<u64>| match draw {
            None => {
                let s = weir_pool_made(h, item, now);
                t.call("pool_made", &[U(item as u64), I(now)], &[S(s)]);
            }
            Some(d) => {
                let s = weir_pool_made_jittered(h, item, now, d);
                t.call(
                    "pool_made_jittered",
                    &[U(item as u64), I(now), U(d)],
                    &[S(s)],
                );
            }
        };
    let give = |t: &mut Trace, h: *mut weir_pool, item: usize, now: i64| {
        let mut kept = false;
        let s = weir_pool_give(h, item, now, &mut kept);
        t.call("pool_give", &[U(item as u64), I(now)], &[S(s), B(kept)]);
    };
    let drop_ = |t: &mut Trace, h: *mut weir_pool, item: usize| {
        let s = weir_pool_drop(h, item);
        t.call("pool_drop", &[U(item as u64)], &[S(s)]);
    };
    let unmade = |t: &mut Trace, h: *mut weir_pool| {
        t.call("pool_unmade", &[], &[S(weir_pool_unmade(h))]);
    };
    let list = |t: &mut Trace, op: &str, args: &[V], n: usize, buf: &[usize]| {
        let mut outs = vec![U(n as u64)];
        outs.extend(buf[..n.min(buf.len())].iter().map(|&i| U(i as u64)));
        t.call(op, args, &outs);
    };
    let read = |t: &mut Trace, h: *mut weir_pool, now: i64| {
        t.call("pool_live", &[], &[I(weir_pool_live(h))]);
        t.call("pool_idle", &[], &[I(weir_pool_idle(h))]);
        t.call("pool_busy", &[], &[I(weir_pool_busy(h))]);
        t.call("pool_make_ahead", &[], &[I(weir_pool_make_ahead(h))]);
        t.call(
            "pool_next_expiry",
            &[I(now)],
            &[I(weir_pool_next_expiry(h, now))],
        );
        let mut x = weir_pool_stats::default();
        let s = weir_pool_read_stats(h, &mut x);
        t.call(
            "pool_read_stats",
            &[],
            &[
                S(s),
                U(x.made),
                U(x.reused),
                U(x.stale),
                U(x.evicted_idle),
                U(x.evicted_age),
                U(x.dropped),
                U(x.refused),
                U(x.waits),
                U(x.unmade),
                U(x.closed),
                U(x.retired),
            ],
        );
    };
    let evict = |t: &mut Trace, h: *mut weir_pool, now: i64, cap: usize| {
        let mut buf = vec![0usize; cap];
        let n = weir_pool_evict(h, now, buf.as_mut_ptr(), cap);
        list(t, "pool_evict", &[I(now), U(cap as u64)], n, &buf);
    };
    let p = weir_pool_policy_preset();
    let mut bad = Vec::new();
    for v in BAD_I {
        bad.push(weir_pool_policy { size: v, ..p });
        bad.push(weir_pool_policy { idle: v, ..p });
        bad.push(weir_pool_policy { keep_ns: v, ..p });
        bad.push(weir_pool_policy { life_ns: v, ..p });
        bad.push(weir_pool_policy { min_idle: v, ..p });
        bad.push(weir_pool_policy { max_making: v, ..p });
    }
    for f in BAD_F {
        bad.push(weir_pool_policy {
            life_jitter: f,
            ..p
        });
    }
    for b in bad {
        new(&mut t, &mut h, b);
    }
    let small = weir_pool_policy {
        size: 3,
        idle: 2,
        keep_ns: 1_000_000,
        life_ns: 10_000_000,
        life_jitter: 0.0,
        min_idle: 0,
        max_making: 2,
    };
    new(&mut t, &mut h, small);
    read(&mut t, h, 0);
    let mut next_item = 100usize;
    let mut busy = Vec::new();
    for _ in 0..5 {
        let (kind, item) = take(&mut t, h, 0);
        if kind == 3 {
            made(&mut t, h, next_item, 0, None);
            busy.push(next_item);
            next_item += 1;
        } else if kind == 1 || kind == 2 {
            busy.push(item);
        }
    }
    read(&mut t, h, 0);
    for &item in &busy {
        give(&mut t, h, item, 500_000);
    }
    t.note("an item given twice, and made when it is known");
    if let Some(&item) = busy.first() {
        give(&mut t, h, item, 500_000);
        made(&mut t, h, item, 500_000, None);
    }
    give(&mut t, h, 9999, 500_000);
    drop_(&mut t, h, 9999);
    unmade(&mut t, h);
    read(&mut t, h, 500_000);
    take(&mut t, h, 600_000);
    take(&mut t, h, 2_000_000);
    evict(&mut t, h, 2_000_000, 4);
    read(&mut t, h, 2_000_000);
    t.note("mark_old, close, time going backwards, the clock's end");
    t.call("pool_mark_old", &[], &[I(weir_pool_mark_old(h))]);
    take(&mut t, h, 1);
    evict(&mut t, h, -1, 4);
    evict(&mut t, h, MAX, 4);
    read(&mut t, h, MAX);
    let mut buf = [0usize; 4];
    let n = weir_pool_close(h, buf.as_mut_ptr(), 4);
    list(&mut t, "pool_close", &[U(4)], n, &buf);
    take(&mut t, h, 3_000_000);
    read(&mut t, h, 3_000_000);
    t.note("seeded random calls, with jittered lives");
    let mut rng = Rng(21);
    new(
        &mut t,
        &mut h,
        weir_pool_policy {
            life_jitter: 0.2,
            min_idle: 1,
            ..small
        },
    );
    let mut now = 0;
    let mut busy: Vec<usize> = Vec::new();
    let mut making = 0;
    for _ in 0..2000 {
        now = rng.step(now, 300_000);
        match rng.below(8) {
            0 | 1 => {
                let (kind, item) = take(&mut t, h, now);
                match kind {
                    1 | 2 => busy.push(item),
                    3 => making += 1,
                    _ => {}
                }
            }
            2 if making > 0 => {
                making -= 1;
                if rng.below(6) == 0 {
                    unmade(&mut t, h);
                } else {
                    made(&mut t, h, next_item, now, Some(rng.next()));
                    busy.push(next_item);
                    next_item += 1;
                }
            }
            3 | 4 if !busy.is_empty() => {
                let item = busy.swap_remove(rng.below(busy.len() as u64) as usize);
                if rng.below(5) == 0 {
                    drop_(&mut t, h, item);
                } else {
                    give(&mut t, h, item, now);
                }
            }
            5 => evict(&mut t, h, now, 2),
            _ => read(&mut t, h, now),
        }
    }
    weir_pool_free(h);
    out.push(t);

    let mut t = Trace::new(
        "pool-reconfigure.trace",
        "pool",
        "A pool's limits changed in place: refused limits that change nothing,\n\
         a smaller size and idle cap keeping every item lent and idle (lent\n\
         first, nothing made until under the size, gives not kept above the\n\
         cap), a shorter keep judging the idle ones from the next call, a\n\
         larger size growing the store with every item kept, marks and close\n\
         kept; then seeded random calls with a change of limits among them.",
    );
    let reconfigure = |t: &mut Trace, h: *mut weir_pool, p: weir_pool_policy| {
        let s = weir_pool_reconfigure(h, &p);
        t.call(
            "pool_reconfigure",
            &[
                I(p.size),
                I(p.idle),
                I(p.keep_ns),
                I(p.life_ns),
                F(p.life_jitter),
                I(p.min_idle),
                I(p.max_making),
            ],
            &[S(s)],
        );
    };
    let four = weir_pool_policy {
        size: 4,
        idle: 4,
        keep_ns: 1_000_000,
        life_ns: 0,
        life_jitter: 0.0,
        min_idle: 0,
        max_making: 0,
    };
    let mut h: *mut weir_pool = std::ptr::null_mut();
    new(&mut t, &mut h, four);
    for item in 100..104 {
        take(&mut t, h, 0);
        made(&mut t, h, item, 0, None);
    }
    give(&mut t, h, 100, 1_000);
    give(&mut t, h, 101, 2_000);
    read(&mut t, h, 2_000);
    t.note("refused limits: size, idle, keep, jitter; nothing changes");
    for b in [
        weir_pool_policy { size: 0, ..four },
        weir_pool_policy { idle: -1, ..four },
        weir_pool_policy {
            keep_ns: -1,
            ..four
        },
        weir_pool_policy {
            life_jitter: f64::NAN,
            ..four
        },
    ] {
        reconfigure(&mut t, h, b);
    }
    read(&mut t, h, 2_000);
    t.note("size 2, idle 1: all four kept; the idle ones lent, then wait");
    let two = weir_pool_policy {
        size: 2,
        idle: 1,
        ..four
    };
    reconfigure(&mut t, h, two);
    read(&mut t, h, 3_000);
    take(&mut t, h, 3_000);
    take(&mut t, h, 3_000);
    take(&mut t, h, 3_000);
    give(&mut t, h, 101, 4_000);
    give(&mut t, h, 100, 4_000);
    drop_(&mut t, h, 102);
    drop_(&mut t, h, 103);
    read(&mut t, h, 4_000);
    take(&mut t, h, 5_000);
    take(&mut t, h, 5_000);
    made(&mut t, h, 104, 5_000, None);
    take(&mut t, h, 5_000);
    give(&mut t, h, 104, 6_000);
    t.note("a shorter keep judges the idle one from the next call");
    reconfigure(
        &mut t,
        h,
        weir_pool_policy {
            keep_ns: 100,
            ..two
        },
    );
    read(&mut t, h, 6_050);
    take(&mut t, h, 6_200);
    read(&mut t, h, 6_200);
    t.note("size 40: the store grows, every item kept");
    let forty = weir_pool_policy {
        size: 40,
        idle: 40,
        ..four
    };
    reconfigure(&mut t, h, forty);
    for item in 200..236 {
        take(&mut t, h, 7_000);
        made(&mut t, h, item, 7_000, None);
    }
    read(&mut t, h, 7_000);
    for item in (200..236).step_by(2) {
        give(&mut t, h, item, 8_000);
    }
    give(&mut t, h, 101, 8_000);
    read(&mut t, h, 8_000);
    t.note("the preset's limits: the 37 live kept above its size 10");
    reconfigure(&mut t, h, p);
    read(&mut t, h, 9_000);
    take(&mut t, h, 9_000);
    evict(&mut t, h, MAX, 4);
    read(&mut t, h, MAX);
    t.note("marks and close are kept across a change");
    new(&mut t, &mut h, four);
    take(&mut t, h, 0);
    made(&mut t, h, 300, 0, None);
    take(&mut t, h, 0);
    made(&mut t, h, 301, 0, None);
    give(&mut t, h, 300, 0);
    t.call("pool_mark_old", &[], &[I(weir_pool_mark_old(h))]);
    reconfigure(&mut t, h, two);
    give(&mut t, h, 301, 1);
    take(&mut t, h, 1);
    let mut buf = [0usize; 4];
    let n = weir_pool_close(h, buf.as_mut_ptr(), 4);
    list(&mut t, "pool_close", &[U(4)], n, &buf);
    reconfigure(&mut t, h, four);
    take(&mut t, h, 2);
    read(&mut t, h, 2);
    t.note("seeded random calls, a change of limits among them, each within");
    t.note("the first limits' table and idle places (as a placed pool holds them)");
    let mut rng = Rng(36);
    new(
        &mut t,
        &mut h,
        weir_pool_policy {
            size: 12,
            idle: 8,
            max_making: 2,
            ..four
        },
    );
    let mut now = 0;
    let mut busy: Vec<usize> = Vec::new();
    let mut making = 0;
    let mut next_item = 1000usize;
    for _ in 0..400 {
        now = rng.step(now, 300_000);
        match rng.below(9) {
            0 | 1 => {
                let (kind, item) = take(&mut t, h, now);
                match kind {
                    1 | 2 => busy.push(item),
                    3 => making += 1,
                    _ => {}
                }
            }
            2 if making > 0 => {
                making -= 1;
                if rng.below(6) == 0 {
                    unmade(&mut t, h);
                } else {
                    made(&mut t, h, next_item, now, Some(rng.next()));
                    busy.push(next_item);
                    next_item += 1;
                }
            }
            3 | 4 if !busy.is_empty() => {
                let item = busy.swap_remove(rng.below(busy.len() as u64) as usize);
                if rng.below(5) == 0 {
                    drop_(&mut t, h, item);
                } else {
                    give(&mut t, h, item, now);
                }
            }
            5 => evict(&mut t, h, now, 2),
            6 if rng.below(4) == 0 => reconfigure(
                &mut t,
                h,
                weir_pool_policy {
                    size: 1 + rng.below(12) as i64,
                    idle: rng.below(9) as i64,
                    keep_ns: rng.below(3) as i64 * 1_000_000,
                    life_ns: rng.below(2) as i64 * 5_000_000,
                    life_jitter: 0.2,
                    min_idle: rng.below(3) as i64,
                    max_making: rng.below(3) as i64,
                },
            ),
            _ => read(&mut t, h, now),
        }
    }
    weir_pool_free(h);
    out.push(t);
}

// bloom

fn bloom_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "bloom-scenarios.trace",
        "bloom",
        "The bloom of words, rate and GCRA kinds, on the heap and in a region:\n\
         its constructors' statuses, allows and nexts by key, time going\n\
         backwards, the clock's end; then seeded random keys.",
    );
    let mut r = Rate::new();
    let mut g = Gcra::new();
    let mut h: *mut weir_bloom = std::ptr::null_mut();
    let reset = |h: &mut *mut weir_bloom| {
        weir_bloom_free(*h);
        *h = std::ptr::null_mut();
    };
    let key = |i: u64| format!("client-{i}").into_bytes();
    let both = |t: &mut Trace, h: *mut weir_bloom, now: i64, k: &[u8]| {
        let ok = weir_bloom_allow(h, now, k.as_ptr().cast(), k.len());
        t.call("bloom_allow", &[I(now), V::Key(k.to_vec())], &[B(ok)]);
        let n = weir_bloom_next(h, now, k.as_ptr().cast(), k.len());
        t.call("bloom_next", &[I(now), V::Key(k.to_vec())], &[I(n)]);
    };
    r.limit_new(&mut t, 10.0, 3);
    for (size_log2, hashes) in [(0, 1), (3, 0), (3, 9), (40, 2), (u32::MAX, 2), (6, 2)] {
        reset(&mut h);
        let s = weir_bloom_new(size_log2, hashes, &r.limit, 1, 2, &mut h);
        t.call(
            "bloom_new",
            &[U(size_log2.into()), U(hashes.into()), U(1), U(2)],
            &[S(s)],
        );
    }
    for now in [0, 0, 0, 0, 50_000_000, 100_000_000, 50, -1, MAX, MAX] {
        both(&mut t, h, now, b"alice");
        both(&mut t, h, now, b"bob");
    }
    both(&mut t, h, 0, b"");
    {
        // In a file of its own: a face whose limits are valid by
        // construction cannot hold an invalid one.
        let mut t = Trace::new(
            "bloom-invalid-limits.trace",
            "bloom",
            "A bloom under an invalid rate limit (memory from another program)\n\
             is refused.",
        );
        let mut r = Rate::new();
        let mut h: *mut weir_bloom = std::ptr::null_mut();
        r.limit_set(&mut t, 0, 0, 0);
        let s = weir_bloom_new(6, 2, &r.limit, 1, 2, &mut h);
        t.call("bloom_new", &[U(6), U(2), U(1), U(2)], &[S(s)]);
        weir_bloom_free(h);
        out.push(t);
    }
    t.note("the GCRA kind");
    g.limit_new(&mut t, 10.0, 3);
    for (size_log2, hashes) in [(0, 1), (3, 0), (6, 3)] {
        reset(&mut h);
        let s = weir_bloom_new_gcra(size_log2, hashes, &g.limit, 3, 4, &mut h);
        t.call(
            "bloom_new_gcra",
            &[U(size_log2.into()), U(hashes.into()), U(3), U(4)],
            &[S(s)],
        );
    }
    for now in [0, 0, 0, 0, 50_000_000, 100_000_000, 50, -1, MAX, MAX] {
        both(&mut t, h, now, b"alice");
    }
    t.note("seeded random keys");
    let mut rng = Rng(22);
    reset(&mut h);
    let s = weir_bloom_new(8, 3, &r.limit, 5, 6, &mut h);
    t.call("bloom_new", &[U(8), U(3), U(5), U(6)], &[S(s)]);
    let _ = s;
    r.limit_new(&mut t, 1000.0, 5);
    reset(&mut h);
    let s = weir_bloom_new(8, 3, &r.limit, 5, 6, &mut h);
    t.call("bloom_new", &[U(8), U(3), U(5), U(6)], &[S(s)]);
    let mut now = 0;
    for _ in 0..1500 {
        now = rng.step(now, 200_000);
        let k = key(rng.below(40));
        if rng.below(4) == 0 {
            let n = weir_bloom_next(h, now, k.as_ptr().cast(), k.len());
            t.call("bloom_next", &[I(now), V::Key(k)], &[I(n)]);
        } else {
            let ok = weir_bloom_allow(h, now, k.as_ptr().cast(), k.len());
            t.call("bloom_allow", &[I(now), V::Key(k)], &[B(ok)]);
        }
    }
    reset(&mut h);
    out.push(t);
    bloom_reconfigure_trace(out);
}

/// A bloom's limit changed in place (`weir_bloom_reconfigure`,
/// `weir_bloom_reconfigure_gcra`): the words kept under the new limit, the
/// other kind and another GCRA tick refused; then seeded random keys with
/// the limit changed among three between calls.
fn bloom_reconfigure_trace(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "bloom-reconfigure.trace",
        "bloom",
        "A bloom's limit changed in place: rate words keep their windows\n\
         (start and count, read under the new burst and interval), GCRA words\n\
         their arrival times (a key's debt carries over); the other kind and\n\
         another GCRA tick are refused, changing nothing; then seeded random\n\
         keys with the limit changed between calls.",
    );
    let mut r = Rate::new();
    let mut g = Gcra::new();
    let mut h: *mut weir_bloom = std::ptr::null_mut();
    let both = |t: &mut Trace, h: *mut weir_bloom, now: i64, k: &[u8]| {
        let ok = weir_bloom_allow(h, now, k.as_ptr().cast(), k.len());
        t.call("bloom_allow", &[I(now), V::Key(k.to_vec())], &[B(ok)]);
        let n = weir_bloom_next(h, now, k.as_ptr().cast(), k.len());
        t.call("bloom_next", &[I(now), V::Key(k.to_vec())], &[I(n)]);
    };
    let change = |t: &mut Trace, h: *mut weir_bloom, r: &Rate| {
        let s = weir_bloom_reconfigure(h, &r.limit);
        t.call("bloom_reconfigure", &[], &[S(s)]);
    };
    let change_gcra = |t: &mut Trace, h: *mut weir_bloom, g: &Gcra| {
        let s = weir_bloom_reconfigure_gcra(h, &g.limit);
        t.call("bloom_reconfigure_gcra", &[], &[S(s)]);
    };
    t.note("rate words: 10/s burst 5, four events, then 20/s burst 3");
    r.limit_new(&mut t, 10.0, 5);
    let s = weir_bloom_new(6, 1, &r.limit, 1, 2, &mut h);
    t.call("bloom_new", &[U(6), U(1), U(1), U(2)], &[S(s)]);
    for now in 0..4 {
        both(&mut t, h, now, b"alice");
    }
    r.limit_new(&mut t, 20.0, 3);
    change(&mut t, h, &r);
    t.note("4 events are past the new burst; the window ends 4 x 50 ms after its start");
    for now in [4, 100_000_000, 199_999_999, 200_000_000, 200_000_001] {
        both(&mut t, h, now, b"alice");
    }
    both(&mut t, h, 200_000_001, b"bob");
    t.note("the other kind is refused, and nothing changed");
    g.limit_new(&mut t, 10.0, 5);
    change_gcra(&mut t, h, &g);
    both(&mut t, h, 200_000_002, b"alice");
    weir_bloom_free(h);
    h = std::ptr::null_mut();

    t.note("GCRA words: 10/s burst 5 spent at 0, then 2/s burst 1: 0.5 s owed");
    let s = weir_bloom_new_gcra(6, 2, &g.limit, 3, 4, &mut h);
    t.call("bloom_new_gcra", &[U(6), U(2), U(3), U(4)], &[S(s)]);
    for _ in 0..6 {
        both(&mut t, h, 0, b"alice");
    }
    g.limit_new(&mut t, 2.0, 1);
    change_gcra(&mut t, h, &g);
    for now in [0, 250_000_000, 499_999_999, 500_000_000, 500_000_000] {
        both(&mut t, h, now, b"alice");
    }
    both(&mut t, h, 500_000_000, b"carol");
    t.note("back to 10/s burst 5: the debt is read under the larger bucket");
    g.limit_new(&mut t, 10.0, 5);
    change_gcra(&mut t, h, &g);
    for now in [500_000_000, 500_000_000, 600_000_000] {
        both(&mut t, h, now, b"alice");
    }
    t.note("another tick (1e9/s is on a finer one) and the other kind are refused");
    g.limit_new(&mut t, 1e9, 5);
    change_gcra(&mut t, h, &g);
    change(&mut t, h, &r);
    both(&mut t, h, 600_000_000, b"alice");
    weir_bloom_free(h);
    h = std::ptr::null_mut();

    t.note("seeded random keys, the limit changed among three between calls");
    let mut rng = Rng(36);
    let rates = [(1000.0, 5), (200.0, 20), (5000.0, 2)];
    for gcra in [false, true] {
        let s = if gcra {
            g.limit_new(&mut t, rates[0].0, rates[0].1);
            let s = weir_bloom_new_gcra(7, 2, &g.limit, 5, 6, &mut h);
            t.call("bloom_new_gcra", &[U(7), U(2), U(5), U(6)], &[S(s)]);
            s
        } else {
            r.limit_new(&mut t, rates[0].0, rates[0].1);
            let s = weir_bloom_new(7, 2, &r.limit, 5, 6, &mut h);
            t.call("bloom_new", &[U(7), U(2), U(5), U(6)], &[S(s)]);
            s
        };
        assert_eq!(s, weir_status::WEIR_OK);
        let mut now = 0;
        for _ in 0..120 {
            if rng.below(15) == 0 {
                let (per_s, burst) = rates[rng.below(3) as usize];
                if gcra {
                    g.limit_new(&mut t, per_s, burst);
                    change_gcra(&mut t, h, &g);
                } else {
                    r.limit_new(&mut t, per_s, burst);
                    change(&mut t, h, &r);
                }
            }
            now = rng.step(now, 400_000);
            let k = format!("client-{}", rng.below(12)).into_bytes();
            if rng.below(4) == 0 {
                let n = weir_bloom_next(h, now, k.as_ptr().cast(), k.len());
                t.call("bloom_next", &[I(now), V::Key(k)], &[I(n)]);
            } else {
                let ok = weir_bloom_allow(h, now, k.as_ptr().cast(), k.len());
                t.call("bloom_allow", &[I(now), V::Key(k)], &[B(ok)]);
            }
        }
        weir_bloom_free(h);
        h = std::ptr::null_mut();
    }
    out.push(t);
}

// charge

/// One item of a `charge_all` line: kind, reserved, cost, key.
type Item = (u32, u32, f64, &'static [u8]);

struct Charge {
    rate: Rate,
    gcra: Gcra,
    bucket: Bucket,
    bloom: *mut weir_bloom,
}

impl Charge {
    fn all(&mut self, t: &mut Trace, now: i64, items: &[Item]) {
        let raw: Vec<weir_charge_item> = items
            .iter()
            .map(|&(kind, reserved, cost, key)| {
                let (target, limit): (*mut std::ffi::c_void, *const std::ffi::c_void) = match kind {
                    1 => (
                        (&mut self.gcra.word as *mut weir_gcra).cast(),
                        (&self.gcra.limit as *const weir_gcra_limit).cast(),
                    ),
                    3 => (self.bucket.0.cast(), std::ptr::null()),
                    4 => (self.bloom.cast(), std::ptr::null()),
                    _ => (
                        (&mut self.rate.word as *mut weir_rate).cast(),
                        (&self.rate.limit as *const weir_rate_limit).cast(),
                    ),
                };
                weir_charge_item {
                    kind,
                    reserved,
                    cost,
                    target,
                    target_len: 0,
                    limit,
                    key: if key.is_empty() {
                        std::ptr::null()
                    } else {
                        key.as_ptr().cast()
                    },
                    key_len: key.len(),
                }
            })
            .collect();
        let mut r = weir_charge_result {
            wait: 0,
            index: 0,
            kept: 0,
            admitted: false,
        };
        let s = weir_charge_all(raw.as_ptr(), raw.len(), now, &mut r);
        let mut args = vec![I(now), U(items.len() as u64)];
        for &(kind, reserved, cost, key) in items {
            args.extend([
                U(kind.into()),
                U(reserved.into()),
                F(cost),
                V::Key(key.to_vec()),
            ]);
        }
        t.call(
            "charge_all",
            &args,
            &[
                S(s),
                B(r.admitted),
                I(r.wait),
                U(r.index.into()),
                U(r.kept.into()),
                U(self.rate.word.state),
                U(self.gcra.word.state),
            ],
        );
    }
}

fn charge_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "charge-scenarios.trace",
        "charge",
        "All-or-nothing charging over a GCRA word, a rate word, a bucket and a\n\
         bloom key: admits, refusals that spend nothing, every error status,\n\
         time going backwards and the clock's end; then seeded random charges.",
    );
    let mut c = Charge {
        rate: Rate::new(),
        gcra: Gcra::new(),
        bucket: Bucket(std::ptr::null_mut()),
        bloom: std::ptr::null_mut(),
    };
    c.rate.limit_new(&mut t, 10.0, 5);
    c.gcra.limit_new(&mut t, 5.0, 3);
    c.bucket.make(&mut t, 20.0, 4.0, 0);
    let s = weir_bloom_new(6, 2, &c.rate.limit, 7, 8, &mut c.bloom);
    t.call("bloom_new", &[U(6), U(2), U(7), U(8)], &[S(s)]);
    const K: &[u8] = b"team-a";
    let every: [Item; 4] = [
        (1, 0, 1.0, b""),
        (2, 0, 1.0, b""),
        (3, 0, 1.0, b""),
        (4, 0, 1.0, K),
    ];
    t.note("no items is admitted; then all four until one runs out");
    c.all(&mut t, 0, &[]);
    for _ in 0..5 {
        c.all(&mut t, 0, &every);
        c.rate.next(&mut t, 0);
        c.gcra.room(&mut t, 0);
        c.bucket.read(&mut t, 0, 1.0);
    }
    t.note("costs above one, fractional bucket costs, costs above the burst");
    c.all(&mut t, 1_000_000_000, &[(1, 0, 2.0, b""), (3, 0, 1.5, b"")]);
    c.all(&mut t, 1_000_000_000, &[(2, 0, 6.0, b"")]);
    c.all(&mut t, 1_000_000_000, &[(1, 0, 4.0, b"")]);
    c.all(&mut t, 1_000_000_000, &[(3, 0, 4.5, b"")]);
    let many = [every[1]; 17];
    c.all(&mut t, 2_000_000_000, &many[..16]);
    {
        // In a file of their own: the errors, whose answers include the
        // index of the item at fault, which a face may not return with an
        // error.
        let mut t = Trace::new(
            "charge-errors.trace",
            "charge",
            "Errors: nothing charged, the index names the item at fault.",
        );
        let mut c = Charge {
            rate: Rate::new(),
            gcra: Gcra::new(),
            bucket: Bucket(std::ptr::null_mut()),
            bloom: std::ptr::null_mut(),
        };
        c.rate.limit_new(&mut t, 10.0, 5);
        c.gcra.limit_new(&mut t, 5.0, 3);
        c.bucket.make(&mut t, 20.0, 4.0, 0);
        let s = weir_bloom_new(6, 2, &c.rate.limit, 7, 8, &mut c.bloom);
        t.call("bloom_new", &[U(6), U(2), U(7), U(8)], &[S(s)]);
        for item in [
            (1, 0, 0.0, b"" as &[u8]),
            (1, 0, -1.0, b""),
            (3, 0, f64::INFINITY, b""),
        ] {
            c.all(&mut t, 2_000_000_000, &[every[0], item]);
        }
        c.all(&mut t, 2_000_000_000, &many);
        weir_bloom_free(c.bloom);
        out.push(t);
    }
    {
        // In a file of their own: items a face with typed items cannot
        // make (kinds no constructor names, a reserved field, a fraction
        // or NaN for a whole-token cost) and invalid limits.
        let mut t = Trace::new(
            "charge-bad-items.trace",
            "charge",
            "Items only raw C can hold: unknown kinds, a reserved field, fractional\n\
             and NaN costs where whole tokens are counted, a bloom item with no key\n\
             (NULL), invalid limits. Each charges nothing and names the item at fault.",
        );
        let mut c = Charge {
            rate: Rate::new(),
            gcra: Gcra::new(),
            bucket: Bucket(std::ptr::null_mut()),
            bloom: std::ptr::null_mut(),
        };
        c.rate.limit_new(&mut t, 10.0, 5);
        c.gcra.limit_new(&mut t, 5.0, 3);
        c.bucket.make(&mut t, 20.0, 4.0, 0);
        let s = weir_bloom_new(6, 2, &c.rate.limit, 7, 8, &mut c.bloom);
        t.call("bloom_new", &[U(6), U(2), U(7), U(8)], &[S(s)]);
        for item in [
            (0, 0, 1.0, b"" as &[u8]),
            (6, 0, 1.0, b""),
            (1, 1, 1.0, b""),
            (1, 0, 1.5, b""),
            (2, 0, f64::NAN, b""),
            (4, 0, 1.0, b""),
        ] {
            c.all(&mut t, 2_000_000_000, &[every[0], item]);
        }
        c.rate.limit_set(&mut t, 0, 0, 0);
        c.all(&mut t, 2_000_000_000, &every);
        c.gcra.limit_set(&mut t, 0, 0, 0, 0);
        c.all(&mut t, 2_000_000_000, &[every[0]]);
        weir_bloom_free(c.bloom);
        out.push(t);
    }
    t.note("a word named twice counts both; time going backwards; the clock's end");
    c.all(
        &mut t,
        3_000_000_000,
        &[every[0], every[0], every[0], every[0]],
    );
    for now in [3_000_000_000, 100, -1, MAX - 1, MAX, MAX] {
        c.all(&mut t, now, &every);
    }
    t.note("seeded random charges");
    let mut rng = Rng(23);
    c.rate.set(&mut t, 0);
    c.gcra.set(&mut t, 0);
    c.bucket.make(&mut t, 20.0, 4.0, 0);
    weir_bloom_free(c.bloom);
    c.bloom = std::ptr::null_mut();
    let s = weir_bloom_new(6, 2, &c.rate.limit, 7, 8, &mut c.bloom);
    t.call("bloom_new", &[U(6), U(2), U(7), U(8)], &[S(s)]);
    const KEYS: [&[u8]; 3] = [b"u1", b"u2", b"org"];
    let mut now = 0;
    for _ in 0..700 {
        now = rng.step(now, 30_000_000);
        let n = 1 + rng.below(4) as usize;
        let items: Vec<Item> = (0..n)
            .map(|_| {
                let kind = 1 + rng.below(4) as u32;
                let cost = if kind == 3 {
                    0.5 + rng.below(4) as f64 * 0.5
                } else {
                    1.0 + rng.below(2) as f64
                };
                (
                    kind,
                    0,
                    cost,
                    if kind == 4 {
                        KEYS[rng.below(3) as usize]
                    } else {
                        b"" as &[u8]
                    },
                )
            })
            .collect();
        c.all(&mut t, now, &items);
    }
    weir_bloom_free(c.bloom);
    out.push(t);
}

// ---------------------------------------------------------------- the files

// ------------------------------------------------------ whole milliseconds

/// Seeded random calls whose times are whole milliseconds, under limits a
/// server module is configured with (a whole number of requests a second
/// or a minute): traces a face whose clock counts milliseconds (the nginx
/// module) can replay call for call. Times go backwards now and then, as
/// in the other random traces.
fn millisecond_traces(out: &mut Vec<Trace>) {
    const MS: i64 = 1_000_000;
    let limits = [(10.0, 5), (1.0, 3), (0.5, 2)];
    let about = "Seeded random calls at whole milliseconds, under limits of a whole\n\
                 number a second or a minute (a clock in milliseconds replays them).";

    let mut t = Trace::new("rate-ms.trace", "rate", about);
    let mut rng = Rng(31);
    let mut r = Rate::new();
    for (l, b) in limits {
        r.limit_new(&mut t, l, b);
        r.set(&mut t, 0);
        let (mut now, per_ms) = (0i64, ((1000.0 / l) as i64).max(1));
        for _ in 0..120 {
            now = rng.step(now / MS, per_ms) * MS;
            if rng.below(5) == 0 {
                r.next(&mut t, now);
            } else {
                r.allow(&mut t, now);
            }
        }
    }
    out.push(t);

    let mut t = Trace::new("gcra-ms.trace", "gcra", about);
    let mut rng = Rng(32);
    let mut g = Gcra::new();
    for (l, b) in limits {
        g.limit_new(&mut t, l, b);
        g.set(&mut t, 0);
        let (mut now, per_ms) = (0i64, ((1000.0 / l) as i64).max(1));
        for _ in 0..120 {
            now = rng.step(now / MS, per_ms) * MS;
            if rng.below(5) == 0 {
                g.next(&mut t, now);
            } else {
                g.allow(&mut t, now);
            }
        }
    }
    out.push(t);

    let mut t = Trace::new("bloom-ms.trace", "bloom", about);
    let mut rng = Rng(33);
    let mut r = Rate::new();
    let mut g = Gcra::new();
    let mut h: *mut weir_bloom = std::ptr::null_mut();
    // (GCRA kind, rate, burst, size_log2, hashes, seed): the small blooms
    // hold 40 keys in few words, so keys share words.
    let blooms = [
        (false, 10.0, 5, 8u32, 3u32, [7u64, 8]),
        (true, 1.0, 2, 6, 2, [11, 12]),
        (false, 0.5, 3, 5, 4, [13, 14]),
    ];
    for (gcra, l, b, size_log2, hashes, [k0, k1]) in blooms {
        weir_bloom_free(h);
        h = std::ptr::null_mut();
        let (op, s) = if gcra {
            g.limit_new(&mut t, l, b);
            let s = weir_bloom_new_gcra(size_log2, hashes, &g.limit, k0, k1, &mut h);
            ("bloom_new_gcra", s)
        } else {
            r.limit_new(&mut t, l, b);
            (
                "bloom_new",
                weir_bloom_new(size_log2, hashes, &r.limit, k0, k1, &mut h),
            )
        };
        t.call(
            op,
            &[U(size_log2.into()), U(hashes.into()), U(k0), U(k1)],
            &[S(s)],
        );
        let (mut now, per_ms) = (0i64, ((1000.0 / l) as i64).max(1));
        for _ in 0..150 {
            now = rng.step(now / MS, per_ms) * MS;
            let k = format!("client-{}", rng.below(40)).into_bytes();
            if rng.below(4) == 0 {
                let n = weir_bloom_next(h, now, k.as_ptr().cast(), k.len());
                t.call("bloom_next", &[I(now), V::Key(k)], &[I(n)]);
            } else {
                let ok = weir_bloom_allow(h, now, k.as_ptr().cast(), k.len());
                t.call("bloom_allow", &[I(now), V::Key(k)], &[B(ok)]);
            }
        }
    }
    weir_bloom_free(h);
    out.push(t);

    // Periods of whole milliseconds, aligned and not, each read after
    // every call; a take now and then finds no period open.
    let mut t = Trace::new("period-ms.trace", "period", about);
    let mut rng = Rng(34);
    let mut h: *mut weir_period = std::ptr::null_mut();
    for (quota, period_ms, align) in [
        (5i64, 1000i64, false),
        (3, 1000, true),
        (10, 60_000, true),
        (4, 250, false),
    ] {
        weir_period_free(h);
        h = std::ptr::null_mut();
        let s = weir_period_new(quota, period_ms * MS, align, &mut h);
        t.call(
            "period_new",
            &[I(quota), I(period_ms * MS), B(align)],
            &[S(s)],
        );
        let (mut now, per_ms) = (0i64, (period_ms / quota).max(1));
        for _ in 0..150 {
            now = rng.step(now / MS, per_ms) * MS;
            if rng.below(4) != 0 {
                let q = weir_period_take(h, now);
                t.call("period_take", &[I(now)], &[I(q as i32 as i64)]);
            }
            t.call("period_left", &[I(now)], &[I(weir_period_left(h, now))]);
            t.call("period_next", &[I(now)], &[I(weir_period_next(h, now))]);
        }
    }
    weir_period_free(h);
    out.push(t);
}

// ---------------------------------------------------------------- lease

/// The held lease and the calls on it, each answer written.
struct LeaseHeld(*mut weir_lease);

impl LeaseHeld {
    fn make(&mut self, t: &mut Trace, p: weir_lease_policy, now: i64) -> bool {
        weir_lease_free(self.0);
        self.0 = std::ptr::null_mut();
        let s = weir_lease_new(&p, now, &mut self.0);
        t.call(
            "lease_new",
            &[
                I(p.interval_ns),
                I(p.ttl_ns),
                I(p.burst),
                F(p.share),
                I(now),
            ],
            &[S(s)],
        );
        s == weir_status::WEIR_OK
    }
    /// Takes; answers the verdict and the ask (or the wait).
    fn take(&mut self, t: &mut Trace, now: i64, cost: i64) -> (i32, i64) {
        let mut a = weir_lease_answer::default();
        let s = weir_lease_take(self.0, now, cost, &mut a);
        t.call(
            "lease_take",
            &[I(now), I(cost)],
            &[S(s), I(a.verdict.into()), I(a.ask), I(a.retry_after_ns)],
        );
        (a.verdict, a.ask.max(a.retry_after_ns))
    }
    fn grant(&mut self, t: &mut Trace, now: i64, granted: i64, until: i64, next: i64) {
        let s = weir_lease_grant(self.0, now, granted, until, next);
        t.call(
            "lease_grant",
            &[I(now), I(granted), I(until), I(next)],
            &[S(s)],
        );
    }
    fn reconfigure(&mut self, t: &mut Trace, p: weir_lease_policy) {
        let s = weir_lease_reconfigure(self.0, &p);
        t.call(
            "lease_reconfigure",
            &[I(p.interval_ns), I(p.ttl_ns), I(p.burst), F(p.share)],
            &[S(s)],
        );
    }
    fn release(&mut self, t: &mut Trace, now: i64) {
        let n = weir_lease_release(self.0, now);
        t.call("lease_release", &[I(now)], &[I(n)]);
    }
    fn readings(&mut self, t: &mut Trace, now: i64) {
        let h = self.0;
        t.call("lease_unspent", &[I(now)], &[I(weir_lease_unspent(h, now))]);
        t.call("lease_expires", &[I(now)], &[I(weir_lease_expires(h, now))]);
        t.call("lease_cap", &[], &[I(weir_lease_cap(h))]);
        let mut st = weir_lease_stats::default();
        let s = weir_lease_read_stats(h, now, &mut st);
        t.call(
            "lease_read_stats",
            &[I(now)],
            &[
                S(s),
                U(st.asks),
                U(st.granted),
                U(st.spent),
                U(st.expired),
                U(st.released),
                U(st.held),
                U(st.rate_milli),
                I(st.rtt_ns),
            ],
        );
    }
}

fn lease_traces(out: &mut Vec<Trace>) {
    const MS: i64 = 1_000_000;
    const SECOND: i64 = 1_000 * MS;
    let p = weir_lease_policy_preset();
    let mut h = LeaseHeld(std::ptr::null_mut());

    let mut t = Trace::new(
        "lease-scenarios.trace",
        "lease",
        "The lease: its constructor's statuses (each field out of range), then\n\
         takes that go, ask and are refused, grants (short, empty, late, over the\n\
         cap), units expiring unspent, release, time going backwards and the\n\
         clock's end.",
    );
    t.note("bad policies: ttl, interval, burst, share, in the order checked");
    let mut bad = Vec::new();
    for v in [0, MS - 1, 3_600_000 * MS + 1, -1, i64::MIN, MAX] {
        bad.push(weir_lease_policy { ttl_ns: v, ..p });
    }
    for v in [0, 999, -1, p.ttl_ns, MAX] {
        bad.push(weir_lease_policy {
            interval_ns: v,
            ..p
        });
    }
    for v in [0, -1, i64::MIN, MAX, MAX / 4 + 1] {
        bad.push(weir_lease_policy { burst: v, ..p });
    }
    for v in BAD_F {
        bad.push(weir_lease_policy { share: v, ..p });
    }
    bad.push(weir_lease_policy {
        interval_ns: 0,
        ttl_ns: 0,
        burst: 0,
        share: f64::NAN,
    });
    for b in bad {
        h.make(&mut t, b, 0);
    }
    t.note("the edges that are good");
    for g in [
        weir_lease_policy {
            interval_ns: 1_000,
            ttl_ns: MS,
            burst: 1,
            share: 1.0,
        },
        weir_lease_policy {
            interval_ns: 3_600_000 * MS - 1,
            ttl_ns: 3_600_000 * MS,
            burst: MAX / 4,
            share: f64::MIN_POSITIVE,
        },
        weir_lease_policy {
            burst: MAX / 4,
            share: 1.0,
            ..p
        },
        weir_lease_policy {
            burst: 3,
            share: 0.5,
            ..p
        },
    ] {
        if h.make(&mut t, g, 7) {
            h.readings(&mut t, 7);
        }
    }

    t.note("the preset: bad costs and grants, the first ask, its grant, spending");
    h.make(&mut t, p, 0);
    h.readings(&mut t, 0);
    for c in [0, -1, i64::MIN, 26, MAX] {
        h.take(&mut t, 0, c);
    }
    h.grant(&mut t, 0, -1, SECOND, 0);
    h.grant(&mut t, 0, 26, SECOND, 0);
    let (_, ask) = h.take(&mut t, 10 * MS, 1);
    t.note("refused while the ask travels");
    h.take(&mut t, 11 * MS, 1);
    h.grant(&mut t, 14 * MS, ask, 10 * MS + SECOND, 14 * MS);
    h.readings(&mut t, 14 * MS);
    let mut now = 14 * MS;
    for i in 0..40 {
        now += 5 * MS;
        let (v, n) = h.take(&mut t, now, 1 + i % 3);
        if v != WEIR_LEASE_REFUSE && n > 0 {
            h.grant(&mut t, now + 3 * MS, n, now + SECOND, now + 3 * MS);
        }
    }
    h.readings(&mut t, now);
    t.note("time going backwards is no time passing");
    h.take(&mut t, now - 50 * MS, 1);
    h.take(&mut t, 0, 1);
    h.readings(&mut t, 0);
    t.note("the units expire unspent");
    now += 2 * SECOND;
    h.readings(&mut t, now);
    h.take(&mut t, now, 1);
    t.note("a short grant holds the next ask back; an empty one says when");
    h.grant(&mut t, now + MS, 2, now + SECOND, now + MS);
    h.take(&mut t, now + 2 * MS, 1);
    h.take(&mut t, now + 3 * MS, 2);
    h.take(&mut t, now + 3 * MS, 2);
    h.take(&mut t, now + 40 * MS, 2);
    h.grant(&mut t, now + 41 * MS, 0, now + SECOND, now + 500 * MS);
    h.take(&mut t, now + 42 * MS, 1);
    h.take(&mut t, now + 600 * MS, 3);
    h.grant(
        &mut t,
        now + 601 * MS,
        20,
        now + 600 * MS + SECOND,
        now + 601 * MS,
    );
    t.note("a late grant (its end passed), one answering no ask, release");
    h.grant(&mut t, now + 602 * MS, 5, now + 602 * MS, now + 602 * MS);
    h.grant(&mut t, now + 603 * MS, 4, now + 700 * MS, now + 603 * MS);
    h.readings(&mut t, now + 603 * MS);
    h.release(&mut t, now + 604 * MS);
    h.release(&mut t, now + 605 * MS);
    h.readings(&mut t, now + 605 * MS);
    h.take(&mut t, now + 606 * MS, 1);

    t.note("the clock's end");
    let end = MAX - 10;
    h.make(&mut t, p, end - SECOND);
    let (_, ask) = h.take(&mut t, end - SECOND, 5);
    h.grant(&mut t, end - 100, ask, MAX, end - 100);
    h.take(&mut t, end, 5);
    h.readings(&mut t, MAX);
    h.take(&mut t, MAX, 1);
    h.grant(&mut t, MAX, 1, MAX, MAX);
    h.readings(&mut t, MAX);
    h.release(&mut t, MAX);
    h.make(&mut t, p, i64::MIN);
    h.take(&mut t, i64::MIN, 1);
    h.grant(&mut t, i64::MIN, 3, i64::MIN, i64::MIN);
    h.grant(&mut t, i64::MIN, 3, MAX, MAX);
    h.readings(&mut t, i64::MIN);
    weir_lease_free(h.0);
    h.0 = std::ptr::null_mut();
    out.push(t);

    let mut t = Trace::new(
        "lease-reconfigure.trace",
        "lease",
        "A lease's policy changed in place: refused policies that change\n\
         nothing, a lower cap keeping the units held above it (spent first, no\n\
         ask until under it) and answering in full an ask sent before it, a\n\
         shorter ttl taking a travelling ask as lost sooner, and a higher cap.",
    );
    h.make(&mut t, p, 0);
    let (_, ask) = h.take(&mut t, 0, 20);
    h.grant(&mut t, 2 * MS, ask, SECOND, 2 * MS);
    h.readings(&mut t, 2 * MS);
    t.note("refused policies: ttl, interval, burst, share; nothing changes");
    for b in [
        weir_lease_policy { ttl_ns: 0, ..p },
        weir_lease_policy {
            interval_ns: p.ttl_ns,
            ..p
        },
        weir_lease_policy { burst: 0, ..p },
        weir_lease_policy {
            share: f64::NAN,
            ..p
        },
        weir_lease_policy { share: 1.5, ..p },
    ] {
        h.reconfigure(&mut t, b);
    }
    h.readings(&mut t, 2 * MS);
    t.note("a lower cap (5): the 20 units held stay; a cost over 5 is refused");
    let low = weir_lease_policy { share: 0.05, ..p };
    h.reconfigure(&mut t, low);
    h.readings(&mut t, 3 * MS);
    h.take(&mut t, 3 * MS, 6);
    for i in 0..18 {
        h.take(&mut t, 4 * MS + i * MS, 1);
    }
    h.readings(&mut t, 30 * MS);
    t.note("an ask sent under the preset's cap, answered in full after a lower one");
    h.make(&mut t, p, 0);
    let (_, ask) = h.take(&mut t, 0, 25);
    h.reconfigure(&mut t, low);
    h.grant(&mut t, MS, ask + 1, SECOND, MS);
    h.grant(&mut t, MS, ask, SECOND, MS);
    h.readings(&mut t, MS);
    t.note("a shorter ttl: a travelling ask is taken as lost after it");
    h.make(&mut t, p, 0);
    h.take(&mut t, 0, 3);
    h.reconfigure(
        &mut t,
        weir_lease_policy {
            interval_ns: MS,
            ttl_ns: 10 * MS,
            ..p
        },
    );
    h.take(&mut t, 5 * MS, 1);
    h.take(&mut t, 10 * MS, 1);
    h.readings(&mut t, 10 * MS);
    t.note("a higher cap (100) and the preset again (NULL is not traced)");
    h.reconfigure(
        &mut t,
        weir_lease_policy {
            burst: 400,
            share: 0.25,
            ..p
        },
    );
    h.readings(&mut t, 11 * MS);
    h.take(&mut t, 11 * MS, 100);
    h.reconfigure(&mut t, p);
    h.readings(&mut t, 12 * MS);
    weir_lease_free(h.0);
    h.0 = std::ptr::null_mut();
    out.push(t);

    let mut t = Trace::new(
        "lease-random.trace",
        "lease",
        "The lease: seeded random takes against a store the trace keeps (a\n\
         bucket of burst 40 and 200 a second), its answers arriving after a\n\
         random round trip, now and then late or lost, with releases.",
    );
    let mut rng = Rng(61);
    let q = weir_lease_policy {
        interval_ns: 50 * MS,
        ttl_ns: 400 * MS,
        burst: 40,
        share: 0.5,
    };
    let mut now = 1_000 * MS;
    h.make(&mut t, q, now);
    let mut store = 40i64;
    let mut store_at = now;
    for _ in 0..150 {
        now = rng.step(now, 4 * MS);
        let cost = 1 + rng.below(4) as i64;
        let (v, ask) = h.take(&mut t, now, cost);
        if v == WEIR_LEASE_REFUSE || ask == 0 || rng.below(10) == 0 {
            // refused, nothing to ask, or the ask is lost
        } else {
            store = (store + (now - store_at).max(0) / (5 * MS)).min(40);
            store_at = store_at.max(now);
            let give = ask.min(store);
            store -= give;
            let back = now + rng.below(20 * MS as u64) as i64;
            let next = if store > 0 { back } else { back + 5 * MS };
            h.grant(&mut t, back, give, now + q.ttl_ns, next);
        }
        match rng.below(30) {
            0 => h.release(&mut t, now),
            1 | 2 => h.readings(&mut t, now),
            _ => {}
        }
    }
    h.readings(&mut t, now);
    weir_lease_free(h.0);
    out.push(t);
}

// keyed

/// The held keyed table of a keyed trace, and its calls as trace lines.
struct Table(*mut weir_keyed);

impl Table {
    fn drop_held(&mut self) {
        weir_keyed_free(self.0);
        self.0 = std::ptr::null_mut();
    }
    /// `keyed_new` under the held GCRA limit.
    fn new_gcra(&mut self, t: &mut Trace, g: &Gcra, buckets: u64, overflow: u32, seed: [u64; 2]) {
        self.drop_held();
        let s = weir_keyed_new(buckets, &g.limit, overflow, seed[0], seed[1], &mut self.0);
        t.call(
            "keyed_new",
            &[U(buckets), U(overflow.into()), U(seed[0]), U(seed[1])],
            &[S(s)],
        );
    }
    /// `keyed_new_rate` under the held rate limit.
    fn new_rate(&mut self, t: &mut Trace, r: &Rate, buckets: u64, overflow: u32, seed: [u64; 2]) {
        self.drop_held();
        let s = weir_keyed_new_rate(buckets, &r.limit, overflow, seed[0], seed[1], &mut self.0);
        t.call(
            "keyed_new_rate",
            &[U(buckets), U(overflow.into()), U(seed[0]), U(seed[1])],
            &[S(s)],
        );
    }
    fn allow(&mut self, t: &mut Trace, now: i64, k: &[u8]) -> bool {
        let ok = weir_keyed_allow(self.0, now, k.as_ptr().cast(), k.len());
        t.call("keyed_allow", &[I(now), V::Key(k.to_vec())], &[B(ok)]);
        ok
    }
    fn decide(&mut self, t: &mut Trace, now: i64, k: &[u8], n: i64) -> (weir_status, u32) {
        let mut d = 0;
        let s = weir_keyed_decide(self.0, now, k.as_ptr().cast(), k.len(), n, &mut d);
        t.call(
            "keyed_decide",
            &[I(now), V::Key(k.to_vec()), I(n)],
            &[S(s), U(d.into())],
        );
        (s, d)
    }
    fn next(&mut self, t: &mut Trace, now: i64, k: &[u8]) -> i64 {
        let mut wait = 0;
        let s = weir_keyed_next(self.0, now, k.as_ptr().cast(), k.len(), &mut wait);
        t.call(
            "keyed_next",
            &[I(now), V::Key(k.to_vec())],
            &[S(s), I(wait)],
        );
        wait
    }
    /// `keyed_reconfigure`: the held GCRA limit for every word.
    fn reconfigure(&mut self, t: &mut Trace, g: &Gcra) -> weir_status {
        let s = weir_keyed_reconfigure(self.0, &g.limit);
        t.call("keyed_reconfigure", &[], &[S(s)]);
        s
    }
    /// `keyed_reconfigure_rate`: the held rate limit for every word.
    fn reconfigure_rate(&mut self, t: &mut Trace, r: &Rate) -> weir_status {
        let s = weir_keyed_reconfigure_rate(self.0, &r.limit);
        t.call("keyed_reconfigure_rate", &[], &[S(s)]);
        s
    }
    fn read(&mut self, t: &mut Trace) -> weir_keyed_reading {
        let mut r = weir_keyed_reading::default();
        let s = weir_keyed_read(self.0, &mut r);
        t.call(
            "keyed_read",
            &[],
            &[
                S(s),
                U(r.buckets),
                U(r.slots),
                U(r.occupied),
                U(r.overflows),
                U(r.kind.into()),
                U(r.overflow_policy.into()),
            ],
        );
        r
    }
}

/// Lone words beside a keyed table: what each key's own word answers, for
/// the generator to check that the table is exact while it has room.
#[derive(Default)]
struct Lone(BTreeMap<Vec<u8>, weir_gcra>);

impl Lone {
    fn allow_n(&mut self, limit: &weir_gcra_limit, now: i64, k: &[u8], n: i64) -> bool {
        let w = self.0.entry(k.to_vec()).or_insert(weir_gcra { state: 0 });
        weir_gcra_allow_n(w, limit, now, n)
    }
}

fn keyed_traces(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "keyed-scenarios.trace",
        "keyed",
        "The keyed table, GCRA and rate words: its constructors' statuses in\n\
         the order the header checks them; each key's admits, those of a lone\n\
         word; the statuses of bad arguments; idle keys replaced at several\n\
         phases of their words; each overflow policy on a one-bucket table.",
    );
    let mut g = Gcra::new();
    let mut r = Rate::new();
    let mut h = Table(std::ptr::null_mut());
    // 10 a second, a burst of 3: a key that made one call at t is at rest
    // (idle, replaceable) from t + 100 ms.
    g.limit_new(&mut t, 10.0, 3);
    t.note("constructors: the overflow policy is checked before the buckets");
    for (buckets, overflow) in [
        (0, 0),
        (WEIR_KEYED_MAX_BUCKETS + 1, 0),
        (u64::MAX, 1),
        (4, 3),
        (4, u32::MAX),
        (0, 3),
        (4, 0),
    ] {
        h.new_gcra(&mut t, &g, buckets, overflow, [1, 2]);
    }
    h.read(&mut t);

    t.note("each key's admits are a lone GCRA word's, n at a time");
    let mut lone = Lone::default();
    let keys: [&[u8]; 4] = [b"alice", b"bob", b"carol", b""];
    let mut rng = Rng(38);
    let mut now = 0;
    for i in 0..120 {
        let k = keys[rng.below(keys.len() as u64) as usize];
        now += rng.below(60_000_000) as i64;
        if i % 5 == 4 {
            h.next(&mut t, now, k);
            continue;
        }
        let n = 1 + rng.below(3) as i64;
        let (s, d) = h.decide(&mut t, now, k, n);
        assert_eq!(s, weir_status::WEIR_OK);
        let want = lone.allow_n(&g.limit, now, k, n);
        assert_eq!(d, u32::from(want), "key {k:?} at {now}");
        if !want {
            let wait = h.next(&mut t, now, k);
            assert_eq!(wait, weir_gcra_next(&lone.0[k], &g.limit, now));
        }
    }
    h.read(&mut t);

    t.note("bad arguments: n outside 1..=burst, a negative now (checked first)");
    for (now, n) in [
        (now, 0),
        (now, -1),
        (now, 4),
        (now, i64::MIN),
        (-1, 1),
        (-1, 0),
    ] {
        h.decide(&mut t, now, b"alice", n);
    }
    h.allow(&mut t, -1, b"alice");
    h.next(&mut t, -1, b"alice");
    h.next(&mut t, i64::MIN, b"");
    t.note("the clock's end");
    h.allow(&mut t, MAX, b"dave");
    h.next(&mut t, MAX, b"dave");
    h.decide(&mut t, MAX, b"dave", 3);
    h.next(&mut t, MAX - 1, b"dave");
    h.read(&mut t);

    t.note("idle keys replaced: a one-bucket table (8 candidate slots) filled by");
    t.note("eight keys charged 20 ms apart; new keys come at the phases around");
    t.note("their words' rest (charge + 100 ms): a key at rest is replaced, an");
    t.note("active one never; a replaced key comes back as a fresh one");
    let fill = |i: u64| format!("held-{i}").into_bytes();
    for overflow in [
        WEIR_KEYED_OVERFLOW_REFUSE,
        WEIR_KEYED_OVERFLOW_ADMIT,
        WEIR_KEYED_OVERFLOW_SHARED,
    ] {
        h.new_gcra(&mut t, &g, 1, overflow, [5, 6]);
        let base = 1_000_000_000;
        for i in 0..8 {
            let (_, d) = h.decide(&mut t, base + i as i64 * 20_000_000, &fill(i), 1);
            assert_eq!(d, WEIR_KEYED_ALLOWED);
        }
        h.read(&mut t);
        // Key i is at rest from base + 20 ms × i + 100 ms.
        for (j, at) in [
            99_999_999i64,
            100_000_000,
            100_000_001,
            119_999_999,
            120_000_000,
            150_000_000,
            150_000_000,
            200_000_000,
            239_999_999,
            240_000_000,
            240_000_000,
            240_000_000,
            400_000_000,
        ]
        .into_iter()
        .enumerate()
        {
            let now = base + at;
            h.decide(&mut t, now, format!("new-{j}").as_bytes(), 1);
            h.next(&mut t, now, format!("new-{j}").as_bytes());
        }
        h.read(&mut t);
        for i in 0..8 {
            h.next(&mut t, base + 400_000_000, &fill(i));
            h.decide(&mut t, base + 400_000_000, &fill(i), 3);
        }
        h.read(&mut t);
    }

    t.note("each overflow policy: eight keys spend their bursts, then four new");
    t.note("keys ask while every slot is active; then the slots come to rest");
    for overflow in [
        WEIR_KEYED_OVERFLOW_REFUSE,
        WEIR_KEYED_OVERFLOW_ADMIT,
        WEIR_KEYED_OVERFLOW_SHARED,
    ] {
        h.new_gcra(&mut t, &g, 1, overflow, [7, 8]);
        for i in 0..8 {
            h.decide(&mut t, 0, &fill(i), 3);
        }
        for now in [0, 1, 2, 100_000_000, 150_000_000] {
            for j in 0..4u64 {
                let k = format!("over-{j}").into_bytes();
                h.decide(&mut t, now, &k, 1);
            }
            h.allow(&mut t, now, b"over-0");
            h.next(&mut t, now, b"over-0");
            h.decide(&mut t, now, b"over-1", 2);
        }
        h.read(&mut t);
        // Every held key rests from 300 ms.
        for now in [299_999_999, 300_000_000] {
            h.decide(&mut t, now, b"over-0", 1);
            h.decide(&mut t, now, b"over-1", 3);
        }
        h.read(&mut t);
    }

    t.note("rate words: a key's window ends, its slot is replaced");
    r.limit_new(&mut t, 10.0, 3);
    for (buckets, overflow) in [(0, 0), (1, 3), (1, WEIR_KEYED_OVERFLOW_REFUSE)] {
        h.new_rate(&mut t, &r, buckets, overflow, [9, 10]);
    }
    for i in 0..8 {
        h.decide(
            &mut t,
            5_000_000 + i as i64 * 40_000_000,
            &fill(i),
            1 + (i % 3) as i64,
        );
        h.allow(&mut t, 5_000_000 + i as i64 * 40_000_000, &fill(i));
    }
    h.read(&mut t);
    for at in [
        0i64,
        299_999_999,
        300_000_000,
        300_000_001,
        340_000_000,
        400_000_000,
        599_999_999,
        600_000_000,
        900_000_000,
        1_000_000_000,
    ] {
        h.next(&mut t, at, b"late");
        h.decide(&mut t, at, b"late", 1);
        h.next(&mut t, at, b"held-0");
        h.allow(&mut t, at, b"held-0");
    }
    for n in [0, 3, 4] {
        h.decide(&mut t, 2_000_000_000, b"late", n);
    }
    h.read(&mut t);
    h.new_rate(&mut t, &r, 2, WEIR_KEYED_OVERFLOW_SHARED, [9, 10]);
    for i in 0..24 {
        h.decide(&mut t, 1000 + i, &fill(i as u64), 2);
    }
    h.read(&mut t);
    h.drop_held();
    out.push(t);

    {
        // In a file of its own: a face whose limits are valid by
        // construction cannot hold an invalid one.
        let mut t = Trace::new(
            "keyed-invalid-limits.trace",
            "keyed",
            "A keyed table under an invalid limit (memory from another program)\n\
             is refused, its limit checked before its overflow policy and buckets;\n\
             a table given one in place refuses it and changes nothing.",
        );
        let mut g = Gcra::new();
        let mut r = Rate::new();
        let mut h = Table(std::ptr::null_mut());
        g.limit_set(&mut t, 0, 0, 0, 0);
        h.new_gcra(&mut t, &g, 4, 0, [1, 2]);
        h.new_gcra(&mut t, &g, 0, 3, [1, 2]);
        g.limit_set(&mut t, 100_000_000, 200_000_000, 0, 1);
        h.new_gcra(&mut t, &g, 4, 0, [1, 2]);
        r.limit_set(&mut t, 0, 0, 0);
        h.new_rate(&mut t, &r, 4, 0, [1, 2]);
        h.new_rate(&mut t, &r, 0, 3, [1, 2]);
        // 10/s burst 2, then invalid ones in place: refused, the table's
        // limit kept (the other kind's invalid limit is invalid first).
        g.limit_set(&mut t, 100_000_000, 200_000_000, 0, 0);
        h.new_gcra(&mut t, &g, 4, 0, [1, 2]);
        for (per_token, tolerance, shift, reserved) in [
            (0, 0, 0, 0),
            (100_000_000, 200_000_000, 0, 1),
            (100_000_000, 50_000_000, 0, 0),
        ] {
            g.limit_set(&mut t, per_token, tolerance, shift, reserved);
            h.reconfigure(&mut t, &g);
        }
        h.reconfigure_rate(&mut t, &r);
        for _ in 0..3 {
            h.decide(&mut t, 0, b"k", 1);
        }
        h.decide(&mut t, 0, b"k", 2);
        r.limit_set(&mut t, 100_000_000, 0, 2);
        h.new_rate(&mut t, &r, 4, 0, [1, 2]);
        r.limit_set(&mut t, 0, 0, 3);
        h.reconfigure_rate(&mut t, &r);
        r.limit_set(&mut t, 100_000_000, 0, 0);
        h.reconfigure_rate(&mut t, &r);
        h.reconfigure(&mut t, &g);
        for _ in 0..3 {
            h.decide(&mut t, 0, b"k", 1);
        }
        h.drop_held();
        out.push(t);
    }

    {
        let mut t = Trace::new(
            "keyed-sizing.trace",
            "keyed",
            "The keyed table's sizing: weir_keyed_buckets_for's buckets and\n\
             statuses, weir_keyed_overflow_chance's estimates bit for bit (plain\n\
             IEEE-754 arithmetic, no library function) and its NaNs.",
        );
        for (keys, chance) in [
            (1_000_000u64, 1e-9),
            (1_000_000, 1e-6),
            (1_000_000, 0.01),
            (1_000_000, 1.0),
            (1000, 0.5),
            (1, 1e-12),
            (0, 1e-9),
            (0, 1.0),
            (1000, 0.0),
            (1000, -0.0),
            (1000, -0.5),
            (1000, 1.0000000000000002),
            (1000, f64::NAN),
            (1000, f64::INFINITY),
            (1000, f64::MIN_POSITIVE),
            (u64::MAX, 1e-9),
            (u64::MAX, 1.0),
        ] {
            let mut b = 0;
            let s = weir_keyed_buckets_for(keys, chance, &mut b);
            t.call("keyed_buckets_for", &[U(keys), F(chance)], &[S(s), U(b)]);
        }
        for (keys, slots) in [
            (500_000.0, 8_000_000.0),
            (1_000_000.0, 1_624_720.0),
            (800_000.0, 1_000_000.0),
            (64.0, 64.0),
            (0.0, 64.0),
            (1.0, 8.0),
            (1.0, 7.0),
            (0.0, 0.0),
            (-1.0, 64.0),
            (64.0, -1.0),
            (f64::NAN, 64.0),
            (64.0, f64::NAN),
            (f64::INFINITY, 64.0),
            (64.0, f64::INFINITY),
            (-0.0, 64.0),
        ] {
            let c = weir_keyed_overflow_chance(keys, slots);
            t.call("keyed_overflow_chance", &[F(keys), F(slots)], &[F(c)]);
        }
        out.push(t);
    }

    let mut t = Trace::new(
        "keyed-random.trace",
        "keyed",
        "Seeded random calls over 300 keys on small tables (16 buckets, 128\n\
         slots), so that they fill and overflow: GCRA words under each policy,\n\
         then rate words; allows, decides of 0 to burst + 1 tokens, nexts,\n\
         readings.",
    );
    let mut g = Gcra::new();
    let mut r = Rate::new();
    let mut rng = Rng(3838);
    let key = |i: u64| format!("k{i}").into_bytes();
    g.limit_new(&mut t, 2.0, 4);
    r.limit_new(&mut t, 2.0, 4);
    let mut h = Table(std::ptr::null_mut());
    let mut now = 0i64;
    let mut overflows = 0;
    for part in 0..4u64 {
        let overflow = (part % 3) as u32;
        if part < 3 {
            h.new_gcra(&mut t, &g, 16, overflow, [rng.next(), rng.next()]);
        } else {
            h.new_rate(
                &mut t,
                &r,
                16,
                WEIR_KEYED_OVERFLOW_SHARED,
                [rng.next(), rng.next()],
            );
        }
        for _ in 0..900 {
            now = rng.step(now, 100_000);
            let k = key(rng.below(300));
            match rng.below(20) {
                0..=10 => {
                    h.allow(&mut t, now, &k);
                }
                11..=16 => {
                    h.decide(&mut t, now, &k, rng.below(6) as i64);
                }
                17..=18 => {
                    h.next(&mut t, now, &k);
                }
                _ => {
                    overflows += h.read(&mut t).overflows;
                }
            }
        }
        overflows += h.read(&mut t).overflows;
    }
    assert!(overflows > 100, "the random tables overflow ({overflows})");
    h.drop_held();
    out.push(t);
    keyed_reconfigure_trace(out);
}

/// A keyed table's limit changed in place (`weir_keyed_reconfigure`,
/// `weir_keyed_reconfigure_rate`): every key's word kept under the new
/// limit, which also judges which slots are at rest and the shared
/// overflow word; the other kind and another GCRA tick refused; then
/// seeded random keys with the limit changed between calls, the GCRA
/// table's answers checked against lone words under the same limits.
fn keyed_reconfigure_trace(out: &mut Vec<Trace>) {
    let mut t = Trace::new(
        "keyed-reconfigure.trace",
        "keyed",
        "A keyed table's limit changed in place: GCRA words keep their arrival\n\
         times (a key's debt carries over), rate words their windows (start and\n\
         count, read under the new burst and interval); which slots are at rest\n\
         and the shared overflow word follow the new limit; the other kind and\n\
         another GCRA tick are refused, changing nothing; then seeded random\n\
         keys with the limit changed between calls.",
    );
    let mut g = Gcra::new();
    let mut r = Rate::new();
    let mut h = Table(std::ptr::null_mut());
    let both = |t: &mut Trace, h: &mut Table, now: i64, k: &[u8]| {
        h.allow(t, now, k);
        h.next(t, now, k);
    };
    const OK: weir_status = weir_status::WEIR_OK;

    t.note("GCRA words: 10/s burst 5 spent at 0, then 2/s burst 1: 0.5 s owed");
    g.limit_new(&mut t, 10.0, 5);
    h.new_gcra(&mut t, &g, 8, WEIR_KEYED_OVERFLOW_REFUSE, [1, 2]);
    for _ in 0..6 {
        both(&mut t, &mut h, 0, b"alice");
    }
    both(&mut t, &mut h, 0, b"bob");
    g.limit_new(&mut t, 2.0, 1);
    assert_eq!(h.reconfigure(&mut t, &g), OK);
    for now in [0, 250_000_000, 499_999_999, 500_000_000, 500_000_000] {
        both(&mut t, &mut h, now, b"alice");
    }
    t.note("bob's 0.1 s carried over too; n is bounded by the new burst");
    h.next(&mut t, 0, b"bob");
    h.decide(&mut t, 100_000_000, b"bob", 2);
    h.decide(&mut t, 100_000_000, b"bob", 1);
    both(&mut t, &mut h, 500_000_000, b"carol");
    h.read(&mut t);
    t.note("back to 10/s burst 5: the debt is read under the larger bucket");
    g.limit_new(&mut t, 10.0, 5);
    assert_eq!(h.reconfigure(&mut t, &g), OK);
    for now in [500_000_000, 500_000_000, 600_000_000] {
        both(&mut t, &mut h, now, b"alice");
    }
    h.decide(&mut t, 1_000_000_000, b"bob", 5);
    t.note("another tick (1e9/s is on a finer one) and the other kind are refused,");
    t.note("and nothing changed");
    g.limit_new(&mut t, 1e9, 5);
    assert_eq!(
        h.reconfigure(&mut t, &g),
        weir_status::WEIR_ERR_KEYED_TICK_CHANGE
    );
    r.limit_new(&mut t, 1.0, 1);
    assert_eq!(
        h.reconfigure_rate(&mut t, &r),
        weir_status::WEIR_ERR_KEYED_KIND_CHANGE
    );
    both(&mut t, &mut h, 600_000_000, b"alice");
    h.decide(&mut t, 1_000_000_000, b"carol", 5);
    h.read(&mut t);

    t.note("rate words: 10/s burst 5, four events, then 20/s burst 3");
    r.limit_new(&mut t, 10.0, 5);
    h.new_rate(&mut t, &r, 8, WEIR_KEYED_OVERFLOW_REFUSE, [3, 4]);
    for now in 0..4 {
        both(&mut t, &mut h, now, b"alice");
    }
    r.limit_new(&mut t, 20.0, 3);
    assert_eq!(h.reconfigure_rate(&mut t, &r), OK);
    t.note("4 events are past the new burst; the window ends 4 x 50 ms after its start");
    for now in [4, 100_000_000, 199_999_999, 200_000_000, 200_000_001] {
        both(&mut t, &mut h, now, b"alice");
    }
    h.decide(&mut t, 200_000_001, b"alice", 3);
    h.decide(&mut t, 200_000_001, b"alice", 1);
    both(&mut t, &mut h, 200_000_001, b"bob");
    t.note("the other kind is refused, and nothing changed");
    g.limit_new(&mut t, 10.0, 5);
    assert_eq!(
        h.reconfigure(&mut t, &g),
        weir_status::WEIR_ERR_KEYED_KIND_CHANGE
    );
    both(&mut t, &mut h, 200_000_002, b"alice");
    h.read(&mut t);

    t.note("which slots are at rest follows the limit: a one-bucket table of rate");
    t.note("words, eight keys one event each at 0 under 10/s (at rest from 100 ms),");
    t.note("then 1/s (from 1 s): a new key finds no slot at rest until 1 s; then");
    t.note("100/s (from 10 ms): the spent windows rest at once");
    let fill = |i: u64| format!("held-{i}").into_bytes();
    for overflow in [WEIR_KEYED_OVERFLOW_REFUSE, WEIR_KEYED_OVERFLOW_SHARED] {
        r.limit_new(&mut t, 10.0, 3);
        h.new_rate(&mut t, &r, 1, overflow, [5, 6]);
        for i in 0..8 {
            h.decide(&mut t, 0, &fill(i), 1);
        }
        r.limit_new(&mut t, 1.0, 3);
        assert_eq!(h.reconfigure_rate(&mut t, &r), OK);
        for (j, now) in [
            50_000_000,
            150_000_000,
            150_000_000,
            150_000_000,
            999_999_999,
        ]
        .into_iter()
        .enumerate()
        {
            h.decide(&mut t, now, format!("new-{j}").as_bytes(), 1);
        }
        h.read(&mut t);
        t.note("1/s burst 5: the slots still active, the shared word's window");
        t.note("(three events since 50 ms) takes two more");
        r.limit_new(&mut t, 1.0, 5);
        assert_eq!(h.reconfigure_rate(&mut t, &r), OK);
        for j in 0..3 {
            h.decide(&mut t, 999_999_999, format!("late-{j}").as_bytes(), 1);
        }
        h.read(&mut t);
        r.limit_new(&mut t, 100.0, 3);
        assert_eq!(h.reconfigure_rate(&mut t, &r), OK);
        for now in [999_999_999, 1_000_000_000, 1_000_000_000] {
            h.decide(&mut t, now, b"new-0", 1);
            h.next(&mut t, now, b"held-1");
        }
        h.read(&mut t);
    }

    t.note("GCRA words rest once their arrival time has passed, under any limit:");
    t.note("eight keys one token each at 0 under 10/s (at rest from 100 ms)");
    for overflow in [WEIR_KEYED_OVERFLOW_REFUSE, WEIR_KEYED_OVERFLOW_SHARED] {
        g.limit_new(&mut t, 10.0, 3);
        h.new_gcra(&mut t, &g, 1, overflow, [7, 8]);
        for i in 0..8 {
            h.decide(&mut t, 0, &fill(i), 1);
        }
        g.limit_new(&mut t, 1.0, 2);
        assert_eq!(h.reconfigure(&mut t, &g), OK);
        for (j, now) in [50_000_000, 50_000_000, 99_999_999, 100_000_000]
            .into_iter()
            .enumerate()
        {
            h.decide(&mut t, now, format!("new-{j}").as_bytes(), 2);
            h.next(&mut t, now, format!("new-{j}").as_bytes());
        }
        h.read(&mut t);
    }

    t.note("seeded random keys, the limit changed among three between calls:");
    t.note("roomy tables (each GCRA answer checked against a lone word under the");
    t.note("same limits), then one-bucket tables that overflow");
    let mut rng = Rng(3636);
    // Quick limits for the roomy tables; slower ones keep the one-bucket
    // tables' words active for tens of milliseconds, so that they overflow.
    let quick = [(1000.0, 5), (200.0, 20), (5000.0, 2)];
    let slow = [(20.0, 3), (5.0, 5), (100.0, 2)];
    for (gcra, buckets, overflow, keys, rates) in [
        (true, 32, WEIR_KEYED_OVERFLOW_REFUSE, 40, quick),
        (false, 32, WEIR_KEYED_OVERFLOW_REFUSE, 40, quick),
        (true, 1, WEIR_KEYED_OVERFLOW_SHARED, 24, slow),
        (false, 1, WEIR_KEYED_OVERFLOW_ADMIT, 24, slow),
    ] {
        let (per_s, burst) = rates[0];
        let mut lone = Lone::default();
        let check = gcra && buckets > 1;
        if gcra {
            g.limit_new(&mut t, per_s, burst);
            h.new_gcra(&mut t, &g, buckets, overflow, [rng.next(), rng.next()]);
        } else {
            r.limit_new(&mut t, per_s, burst);
            h.new_rate(&mut t, &r, buckets, overflow, [rng.next(), rng.next()]);
        }
        let mut burst = burst;
        let mut now = 0;
        for _ in 0..220 {
            if rng.below(15) == 0 {
                let (per_s, b) = rates[rng.below(3) as usize];
                burst = b;
                if gcra {
                    g.limit_new(&mut t, per_s, b);
                    assert_eq!(h.reconfigure(&mut t, &g), OK);
                } else {
                    r.limit_new(&mut t, per_s, b);
                    assert_eq!(h.reconfigure_rate(&mut t, &r), OK);
                }
            }
            now = rng.step(now, 400_000);
            let k = format!("client-{}", rng.below(keys)).into_bytes();
            match rng.below(4) {
                0 => {
                    let wait = h.next(&mut t, now, &k);
                    if check {
                        let want = lone
                            .0
                            .get(&k)
                            .map_or(0, |w| weir_gcra_next(w, &g.limit, now));
                        assert_eq!(wait, want, "key {k:?} at {now}");
                    }
                }
                1 => {
                    let n = 1 + rng.below(burst as u64 + 1) as i64;
                    let (s, d) = h.decide(&mut t, now, &k, n);
                    if check && s == OK {
                        let want = lone.allow_n(&g.limit, now, &k, n);
                        assert_eq!(d, u32::from(want), "key {k:?} at {now}");
                    }
                }
                _ => {
                    let ok = h.allow(&mut t, now, &k);
                    if check {
                        assert_eq!(ok, lone.allow_n(&g.limit, now, &k, 1), "key {k:?} at {now}");
                    }
                }
            }
        }
        let reading = h.read(&mut t);
        if buckets > 1 {
            assert_eq!(reading.overflows, 0, "the roomy table overflowed");
        } else {
            assert!(
                reading.overflows > 0,
                "the one-bucket table never overflowed"
            );
        }
    }
    h.drop_held();
    out.push(t);
}

fn all_traces() -> Vec<Trace> {
    let mut out = Vec::new();
    rate_traces(&mut out);
    gcra_traces(&mut out);
    limiter_traces(&mut out);
    backoff_traces(&mut out);
    deadline_traces(&mut out);
    bucket_traces(&mut out);
    window_traces(&mut out);
    sliding_traces(&mut out);
    period_traces(&mut out);
    gate_traces(&mut out);
    budget_traces(&mut out);
    concurrency_traces(&mut out);
    concurrency_step_trace(&mut out);
    breaker_traces(&mut out);
    shedder_traces(&mut out);
    pool_traces(&mut out);
    bloom_traces(&mut out);
    charge_traces(&mut out);
    lease_traces(&mut out);
    keyed_traces(&mut out);
    millisecond_traces(&mut out);
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
    // A bound on the repository's weight, not on any face: each type's
    // random trace is sized so that all of them stay under it.
    assert!(total < 3_000_000, "traces/ is {total} bytes");
}

/// A trace makes no call on a handle type while it holds none (its last
/// constructor failed): faces whose handles are objects (Go, C++) could
/// not make the call at all.
#[test]
fn traces_call_only_live_handles() {
    const HANDLES: [&str; 13] = [
        "bucket",
        "window",
        "sliding",
        "period",
        "gate",
        "budget",
        "concurrency",
        "breaker",
        "shedder",
        "pool",
        "bloom",
        "lease",
        "keyed",
    ];
    for t in all_traces() {
        let mut live = BTreeMap::new();
        for (i, line) in t.text.lines().enumerate().skip(1) {
            let op = line.split(' ').next().unwrap();
            let ty = op.split('_').next().unwrap();
            // The keyed table's sizing calls take no table.
            let pure = op == "keyed_buckets_for" || op == "keyed_overflow_chance";
            if line.starts_with('#') || !HANDLES.contains(&ty) || pure {
                continue;
            }
            if op == format!("{ty}_new")
                || op == "bloom_new_gcra"
                || op == "keyed_new_rate"
                || op == "concurrency_new_partitioned"
            {
                live.insert(ty, line.ends_with(" = 0"));
            } else {
                assert!(
                    live.get(ty) == Some(&true),
                    "{}:{}: {op} with no {ty} held",
                    t.path,
                    i + 1
                );
            }
        }
    }
}
