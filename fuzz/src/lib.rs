//! What the fuzz targets share: a panic hook that aborts, a reader that
//! turns the fuzzer's bytes into the numbers C callers pass, a caller's
//! clock, and the rate bound the limits are checked against.
//!
//! Each target (fuzz_targets/*.rs) reads its input as a short sequence of
//! operations, makes the C-ABI calls they name (the `weir` crate's
//! `extern "C"` functions, called from Rust as C would call them), and
//! checks every answer against a small model or the bound the header
//! documents. A failed check is a panic, and every panic aborts.

use std::sync::Once;

pub use libfuzzer_sys::arbitrary::Unstructured;

/// Makes every panic abort the process, at the point it is raised.
///
/// weir's guard catches a panic inside the library and turns it into a
/// status or a refusal, so a caller never sees it. Here that would hide a
/// bug: the hook runs before any unwinding, so a panic the guard would
/// swallow is a crash for libFuzzer all the same (as is a failed check in
/// the target itself).
pub fn abort_on_panic() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            default(info);
            std::process::abort();
        }));
    });
}

/// Whether the check named `name` is switched off with
/// `WEIR_FUZZ_SKIP=name,...`: for hunting past a bug that is known and
/// not yet fixed, never for CI.
pub fn skipped(name: &str) -> bool {
    std::env::var("WEIR_FUZZ_SKIP")
        .map(|list| list.split(',').any(|n| n.trim() == name))
        .unwrap_or(false)
}

/// Whether `WEIR_FUZZ_TRACE` is set: the targets then print each call they
/// make, to read a crash's input as a sequence of C calls.
pub fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("WEIR_FUZZ_TRACE").is_some())
}

/// Prints a line when tracing (see [`tracing`]).
#[macro_export]
macro_rules! trace {
    ($($arg:tt)*) => {
        if $crate::tracing() {
            eprintln!($($arg)*);
        }
    };
}

/// The fuzzer's bytes, read as the numbers a C caller passes. Every reader
/// answers something (0 once the bytes run out), so a target never needs
/// to handle a short input.
pub struct Input<'a>(Unstructured<'a>);

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input(Unstructured::new(data))
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Whether an even number of bytes is left: a choice that reads none,
    /// so that adding it kept what every corpus entry meant.
    pub fn even(&self) -> bool {
        self.0.len() % 2 == 0
    }
    pub fn u8(&mut self) -> u8 {
        self.0.arbitrary().unwrap_or(0)
    }
    pub fn u16(&mut self) -> u16 {
        self.0.arbitrary().unwrap_or(0)
    }
    pub fn u32(&mut self) -> u32 {
        self.0.arbitrary().unwrap_or(0)
    }
    pub fn u64(&mut self) -> u64 {
        self.0.arbitrary().unwrap_or(0)
    }
    /// True about once in `n` reads.
    pub fn one_in(&mut self, n: u8) -> bool {
        self.u8().is_multiple_of(n.max(1))
    }
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        self.0.int_in_range(0..=n - 1).unwrap_or(0)
    }
    /// An i64 as callers get them wrong: the ends and their neighbours, -1,
    /// 0, 1, small, or any.
    pub fn i64(&mut self) -> i64 {
        match self.u8() % 10 {
            0 => i64::MIN,
            1 => i64::MIN + 1,
            2 => -1,
            3 => 0,
            4 => 1,
            5 => self.u16() as i64 - 32768,
            6 => i64::MAX - 1,
            7 => i64::MAX,
            _ => self.u64() as i64,
        }
    }
    /// NaN, the infinities, ±0, a subnormal, huge values, or a fraction.
    pub fn f64(&mut self) -> f64 {
        match self.u8() % 12 {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => -0.0,
            4 => f64::from_bits(1),
            5 => f64::MAX,
            6 => -1.0,
            7 => f64::from_bits(self.u64()),
            _ => self.unit(),
        }
    }
    /// A draw in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A positive span: from 1 ns to about 1000 s, favouring small ones.
    pub fn span(&mut self) -> i64 {
        match self.u8() % 5 {
            0 => 1 + self.below(1_000) as i64,
            1 => 1 + self.below(100_000) as i64,
            2 => 1 + self.below(10_000_000) as i64,
            3 => 1 + self.below(1_000_000_000) as i64,
            _ => 1 + self.below(1_000_000_000_000) as i64,
        }
    }
}

/// The caller's clock: mostly forwards, sometimes many calls at one
/// instant, sometimes just before or on a multiple of 512 ns (the rate
/// word's unit), sometimes backwards, now and then a hostile reading.
pub struct Clock {
    /// The reading the next call gets.
    pub now: i64,
    /// The latest reading handed out.
    pub latest: i64,
}

impl Clock {
    /// A clock starting at zero, a plausible instant, or near an end.
    pub fn new(input: &mut Input) -> Self {
        let now = match input.u8() % 6 {
            0..=2 => 0,
            3 => input.span(),
            4 => i64::MAX - input.span(),
            _ => input.i64(),
        };
        Clock { now, latest: now }
    }
    /// Moves the clock and returns the reading.
    pub fn tick(&mut self, input: &mut Input) -> i64 {
        self.now = match input.u8() % 16 {
            // The same instant again.
            0..=3 => self.now,
            // A small step forwards.
            4..=7 => self.now.saturating_add(input.below(2048) as i64),
            // Just before, on or just after a multiple of 512 ns ahead.
            8..=10 => near_512(self.now, input),
            // A large step forwards.
            11 => self.now.saturating_add(input.span()),
            // Backwards.
            12 | 13 => self.now.saturating_sub(input.span()),
            // Anywhere.
            14 => input.i64(),
            // Exactly 511 mod 512, a few units ahead.
            _ => {
                let base = self.now.saturating_add(512 * input.below(4) as i64);
                (base & !511).saturating_add(511)
            }
        };
        self.latest = self.latest.max(self.now);
        self.now
    }
}

/// A reading at `k × 512 + d` for `d` in {-1, 0, 1, 510, 511}, with the
/// multiple at or a few units after `now`.
pub fn near_512(now: i64, input: &mut Input) -> i64 {
    let k = now.div_euclid(512).saturating_add(input.below(8) as i64);
    let d = [-1i64, 0, 1, 510, 511][input.below(5) as usize];
    k.saturating_mul(512).saturating_add(d)
}

/// The rate word's bound as the header states it: a window holds at most
/// `burst` events, starts up to 511 ns early and ends less than 512 ns
/// short of `burst × interval` (`window_ns`). So over any stretch of `d`
/// ns it admits at most `2 × burst + d × burst / (window_ns − 512)`: a
/// window at each end, and between them the rate the header allows
/// (512 ÷ (window_ns − 512) above the limit). One instant gets at most
/// `2 × burst`, however many calls it makes.
pub struct RateBound {
    burst: u64,
    /// window_ns − 512: the shortest a full window may last.
    shortest: f64,
    /// When each admitted event happened, on the clock's running maximum
    /// (a `now` earlier than one seen counts against the open window).
    times: Vec<i64>,
    /// How many times the bound is allowed per stretch (`k` for a key
    /// spread over `k` words that each obey it).
    times_bound: u64,
}

impl RateBound {
    pub fn new(burst: u64, window_ns: f64, times_bound: u64) -> Self {
        RateBound {
            burst,
            shortest: (window_ns - 512.0).max(1.0),
            times: Vec::new(),
            times_bound,
        }
    }
    /// Records an event admitted at `at` (the clock's running maximum) and
    /// checks every stretch ending there whose length is a power of two
    /// events back: cheap, and enough to catch both a flood at one instant
    /// and a rate sustained too high.
    pub fn admitted(&mut self, at: i64, what: &str) {
        self.times.push(at);
        let n = self.times.len();
        let mut back = 1usize;
        while back < n {
            let from = self.times[n - 1 - back];
            let events = back as u64 + 1;
            let stretch = (at as f64 - from as f64).max(0.0);
            let allowed = (self.times_bound as f64)
                * (2.0 * self.burst as f64 + stretch * self.burst as f64 / self.shortest);
            assert!(
                events as f64 <= allowed.floor() + 1e-9,
                "{what}: {events} admitted in {stretch} ns (from {from} to {at}), \
                 bound {allowed:.1} (burst {}, window {} ns, x{})",
                self.burst,
                self.shortest + 512.0,
                self.times_bound
            );
            back *= 2;
        }
    }
}

/// A handle's counts in a target: turned on through `start` when `on`
/// (for about half the runs), read at every `step` of the run and at its
/// `end`. On, each reading is `WEIR_OK` and no count goes backwards (a
/// reading changes nothing, and every call only adds); off, every reading
/// is `WEIR_ERR_COUNTS_OFF`; a NULL out is `WEIR_ERR_NULL`.
pub struct Counting {
    on: bool,
    last: weir::counts::weir_counts,
}

impl Counting {
    pub fn begin(on: bool, start: impl FnOnce() -> weir::status::weir_status) -> Self {
        if on {
            assert_eq!(
                start(),
                weir::status::weir_status::WEIR_OK,
                "start_counting"
            );
        }
        Counting {
            on,
            last: weir::counts::weir_counts::default(),
        }
    }

    pub fn step(
        &mut self,
        read: impl Fn(*mut weir::counts::weir_counts) -> weir::status::weir_status,
    ) {
        use weir::status::weir_status::*;
        let mut out = weir::counts::weir_counts::default();
        let status = read(&mut out);
        if self.on {
            assert_eq!(status, WEIR_OK, "read_counts");
            let last = self.last;
            assert!(
                out.admitted >= last.admitted
                    && out.refused >= last.refused
                    && out.errors >= last.errors,
                "counts went backwards: {last:?} then {out:?}"
            );
            assert!(!out.units.is_nan(), "units NaN");
            self.last = out;
        } else {
            assert_eq!(status, WEIR_ERR_COUNTS_OFF, "read_counts with counting off");
        }
    }

    pub fn end(
        &mut self,
        read: impl Fn(*mut weir::counts::weir_counts) -> weir::status::weir_status,
    ) {
        self.step(&read);
        assert_eq!(
            read(std::ptr::null_mut()),
            weir::status::weir_status::WEIR_ERR_NULL
        );
    }
}
