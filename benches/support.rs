//! The harness the benchmarks share: criterion's settings, timing loops
//! with the state made outside the timing, two-thread runs on one shared
//! state, owned C handles, and the 1,000,000 keys of the keyed paths.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::ptr;
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use weir::status::weir_status;

/// The fixed instant of the calls on the caller's clock (an arbitrary
/// second after its zero), shared by every module.
pub const NOW: i64 = 1_000_000_000;

/// Settings short enough that the whole suite runs in a few minutes on two
/// cores: each benchmark warms up for 0.5 s and measures for 2 s (50 samples).
pub fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50)
        .nresamples(20_000)
        .without_plots()
}

/// The id of one benchmark: the decision path it measures, the path it
/// takes (`allow`, `refuse`, ...), and how it is reached (`c_abi`, `rust`,
/// `c_abi_2threads`, ...). criterion files it as `path/outcome/via`.
pub fn id(outcome: &str, via: &str) -> Id {
    Id {
        outcome: outcome.to_owned(),
        via: via.to_owned(),
    }
}

/// See [`id`].
pub struct Id {
    outcome: String,
    via: String,
}

impl Id {
    fn bench(&self) -> BenchmarkId {
        BenchmarkId::new(&self.outcome, &self.via)
    }
}

/// Times `iters` calls of `step` on a state that `make` builds afresh for
/// each sample, outside the timing. Afterwards, also outside the timing,
/// `check` asserts that the state still answers the way the benchmark's name
/// says (still allowing, still refusing), so a misnamed path fails even the
/// quick `--test` run.
pub fn fresh<S, R>(
    c: &mut Criterion,
    path: &str,
    id: Id,
    make: impl Fn() -> S,
    mut step: impl FnMut(&mut S) -> R,
    check: impl Fn(&mut S),
) {
    c.benchmark_group(path).bench_function(id.bench(), |b| {
        b.iter_custom(|iters| {
            let mut state = make();
            let start = Instant::now();
            for _ in 0..iters {
                black_box(step(black_box(&mut state)));
            }
            let spent = start.elapsed();
            check(&mut state);
            spent
        })
    });
}

/// Like [`fresh`], but two threads call `step` on the one shared state at
/// once, `iters` times each. The time reported per iteration is the wall
/// time from the common start until both finish, divided by all the
/// decisions made (2 × `iters`): the cost of one decision under that load.
///
/// On a machine shared with other work the two threads may not really run
/// at once; each sample also records the threads' CPU time against the wall
/// time (see [`parallelism`]), which the table shows beside the figure.
pub fn two_threads<S: Sync, R>(
    c: &mut Criterion,
    path: &str,
    id: Id,
    make: impl Fn() -> S,
    step: impl Fn(&S) -> R + Sync,
    check: impl Fn(&S),
) {
    let name = format!("{path}/{}/{}", id.outcome, id.via);
    c.benchmark_group(path).bench_function(id.bench(), |b| {
        b.iter_custom(|iters| {
            let state = make();
            let barrier = Barrier::new(3);
            let run = || {
                barrier.wait();
                let cpu = on_cpu_ns();
                for _ in 0..iters {
                    black_box(step(black_box(&state)));
                }
                on_cpu_ns().zip(cpu).map(|(end, start)| end - start)
            };
            let (start, cpu) = std::thread::scope(|scope| {
                let threads = [scope.spawn(run), scope.spawn(run)];
                barrier.wait();
                let start = Instant::now();
                let cpu: Option<u64> = threads.map(|t| t.join().unwrap()).into_iter().sum();
                (start, cpu)
            });
            let spent = start.elapsed();
            if let Some(cpu) = cpu {
                record_parallelism(&name, cpu, spent);
            }
            check(&state);
            spent / 2
        })
    });
}

/// Nanoseconds the calling thread has spent on a CPU, from Linux's
/// `/proc/thread-self/schedstat`; `None` where that is not available.
fn on_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Per two-thread benchmark: the CPU time and the wall time of its samples.
static PARALLELISM: Mutex<BTreeMap<String, (u128, u128)>> = Mutex::new(BTreeMap::new());

fn record_parallelism(name: &str, cpu_ns: u64, wall: Duration) {
    let mut map = PARALLELISM.lock().unwrap();
    let entry = map.entry(name.to_owned()).or_default();
    entry.0 += u128::from(cpu_ns);
    entry.1 += wall.as_nanos();
}

/// For a two-thread benchmark measured in this run, the two threads' CPU
/// time over the wall time: 2 when both ran all along, 1 when together they
/// had one CPU's worth (on a busy machine they may then have taken turns,
/// and the figure shows little of the contention it is meant to show).
pub fn parallelism(name: &str) -> Option<f64> {
    let map = PARALLELISM.lock().unwrap();
    let &(cpu, wall) = map.get(name)?;
    (wall > 0).then(|| cpu as f64 / wall as f64)
}

/// Times `iters` calls of `step`, each with the next of the 1,000,000
/// [`keys`] in turn (wrapping around), on one state made once for the whole
/// benchmark by `make`, which should leave it holding every key (so that
/// the timing sees lookups, not first insertions). `check` runs after
/// each sample, outside the timing.
pub fn keyed<S, R>(
    c: &mut Criterion,
    path: &str,
    id: Id,
    make: impl FnOnce(&[[u8; 16]]) -> S,
    step: impl Fn(&S, &[u8; 16]) -> R,
    check: impl Fn(&S),
) {
    // Made on first use, so that a run filtered to other benchmarks does not
    // pay for making a million keys and filling a map with them.
    let mut make = Some(make);
    let mut state = None;
    c.benchmark_group(path).bench_function(id.bench(), |b| {
        let keys = keys();
        let state: &S = state.get_or_insert_with(|| (make.take().unwrap())(keys));
        b.iter_custom(|iters| {
            let mut at = 0;
            let start = Instant::now();
            for _ in 0..iters {
                black_box(step(black_box(state), &keys[at]));
                at += 1;
                if at == keys.len() {
                    at = 0;
                }
            }
            let spent = start.elapsed();
            check(state);
            spent
        })
    });
}

/// How many distinct keys the keyed paths spread over.
pub const KEYS: usize = 1_000_000;

/// 1,000,000 distinct 16-byte keys, the same on every side and in every run
/// (a fixed-seed SplitMix64 stream).
pub fn keys() -> &'static [[u8; 16]] {
    static KEYS_16: OnceLock<Vec<[u8; 16]>> = OnceLock::new();
    KEYS_16.get_or_init(|| {
        let mut x: u64 = 0x5EED_F00D_7E1A;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        (0..KEYS)
            .map(|_| {
                let mut key = [0; 16];
                key[..8].copy_from_slice(&next().to_le_bytes());
                key[8..].copy_from_slice(&next().to_le_bytes());
                key
            })
            .collect()
    })
}

/// A C handle made through its `weir_x_new` and freed through its
/// `weir_x_free` on drop, as a C caller holds one.
pub struct Owned<T> {
    ptr: *mut T,
    free: extern "C" fn(*mut T),
}

// SAFETY: every weir handle is documented safe to use from many threads at
// once; the benchmarks share one only between scoped threads that end before
// it is freed.
unsafe impl<T> Send for Owned<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Owned<T> {}

impl<T> Owned<T> {
    /// Calls `new` with an out-pointer and panics unless it reports
    /// `WEIR_OK`.
    pub fn new(new: impl FnOnce(*mut *mut T) -> weir_status, free: extern "C" fn(*mut T)) -> Self {
        let mut ptr = ptr::null_mut();
        let status = new(&mut ptr);
        assert_eq!(status, weir_status::WEIR_OK, "making a handle");
        assert!(!ptr.is_null());
        Owned { ptr, free }
    }

    /// The handle, as the decision calls take it.
    pub fn get(&self) -> *const T {
        self.ptr
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        (self.free)(self.ptr)
    }
}
