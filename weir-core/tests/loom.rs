//! The rate word's compare-and-swap loop under loom: every interleaving of
//! a few threads (and every value a relaxed load may see) is run, and the
//! bounds must hold in each. The rate and bloom code is generic over
//! [`weir_core::rate::Word`], so the code checked here is the code that ships,
//! with loom's atomic standing in for `AtomicU64`.

#[path = "support/runner.rs"]
mod runner;

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use loom::thread;
use weir_core::bloom::{BloomLine, BloomShape};
use weir_core::rate::{self, RateLimit, Word};

const SECOND: i64 = 1_000_000_000;

/// A loom atomic as a rate word, with the orderings `AtomicU64`'s uses.
struct LoomWord(AtomicU64);

impl LoomWord {
    fn new(value: u64) -> Self {
        LoomWord(AtomicU64::new(value))
    }
}

impl Word for LoomWord {
    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn swap_if(&self, current: u64, new: u64) -> Result<u64, u64> {
        self.0
            .compare_exchange_weak(current, new, Ordering::Relaxed, Ordering::Relaxed)
    }
}

/// Runs `body` under every interleaving of its threads with at most
/// `PREEMPTIONS` forced switches each: loom's usual bound, which finds
/// the bugs of small races while keeping the run to seconds.
///
/// Under an emulator it is skipped: when cargo runs the tests through a
/// runner (any `CARGO_TARGET_<TRIPLE>_RUNNER` is set, as for
/// `qemu-aarch64` in CI) the models take minutes (271 s measured), and
/// loom explores the memory model itself, not the CPU's, so the native run
/// checks the same interleavings.
/// `WEIR_LOOM=1` runs them anyway.
fn model(body: impl Fn() + Sync + Send + 'static) {
    if runner::through_a_runner() && std::env::var("WEIR_LOOM").as_deref() != Ok("1") {
        use std::io::Write;
        // Past the harness's capture, so that the log says so.
        let _ = writeln!(
            std::io::stderr(),
            "loom: model skipped, the tests run through a runner (WEIR_LOOM=1 runs it)"
        );
        return;
    }
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(PREEMPTIONS);
    builder.check(body);
}

const PREEMPTIONS: usize = 3;

fn limit(burst: i64) -> RateLimit {
    RateLimit::new(1.0, burst).unwrap()
}

/// One thread's call on the shared state: whether it was allowed.
type Call<S> = Box<dyn Fn(&S) -> bool + Send>;

/// Runs `calls` (one thread each) against a shared state and returns how
/// many were allowed.
fn race<S: Send + Sync + 'static>(state: Arc<S>, calls: Vec<Call<S>>) -> usize {
    let handles: Vec<_> = calls
        .into_iter()
        .map(|call| {
            let state = state.clone();
            thread::spawn(move || call(&state))
        })
        .collect();
    handles
        .into_iter()
        .map(|handle| handle.join().unwrap())
        .filter(|&allowed| allowed)
        .count()
}

#[test]
fn racing_calls_never_pass_the_burst() {
    model(|| {
        let word = Arc::new(LoomWord::new(0));
        let calls: Vec<Call<LoomWord>> = (0..3)
            .map(|_| Box::new(|w: &LoomWord| rate::allow(w, &limit(2), 0)) as Box<_>)
            .collect();
        assert_eq!(race(word.clone(), calls), 2);
        assert!(!rate::allow(&*word, &limit(2), 0));
    });
}

#[test]
fn a_new_window_opens_once_and_a_stale_clock_cannot_reopen_it() {
    model(|| {
        // A full window of one event opened at 0, expiring at 1 s.
        let word = Arc::new(LoomWord::new(0));
        assert!(rate::allow(&*word, &limit(1), 0));
        // Two calls at 2 s race to open the next window; one at 0 (a
        // clock behind) finds either the old window or the new one full.
        let calls: Vec<Call<LoomWord>> = vec![
            Box::new(|w: &LoomWord| rate::allow(w, &limit(1), 2 * SECOND)),
            Box::new(|w: &LoomWord| rate::allow(w, &limit(1), 2 * SECOND)),
            Box::new(|w: &LoomWord| rate::allow(w, &limit(1), 0)),
        ];
        assert_eq!(race(word.clone(), calls), 1);
        assert_eq!(rate::next(&*word, &limit(1), 2 * SECOND), SECOND);
    });
}

#[test]
fn a_bloom_key_gets_at_most_k_times_the_burst_and_exactly_the_burst_with_k_1() {
    for hashes in [1u32, 2] {
        model(move || {
            // One line of eight words, the smallest array.
            let shape = BloomShape::new(3, hashes, limit(1), 7, 8).unwrap();
            let line = BloomLine(std::array::from_fn(|_| LoomWord::new(0)));
            let words: Arc<Vec<BloomLine<LoomWord>>> = Arc::new(vec![line]);
            let calls: Vec<Call<Vec<BloomLine<LoomWord>>>> = (0..3)
                .map(|_| {
                    Box::new(move |w: &Vec<BloomLine<LoomWord>>| shape.allow(w, 0, b"key"))
                        as Box<_>
                })
                .collect();
            let allowed = race(words.clone(), calls);
            assert!(allowed >= 1);
            assert!(allowed <= hashes as usize);
            // However the race went, every word of the key is now full.
            assert!(!shape.allow(&words[..], 0, b"key"));
        });
    }
}

fn smooth_limit(burst: i64) -> weir_core::gcra::GcraLimit {
    weir_core::gcra::GcraLimit::new(1.0, burst).unwrap()
}

#[test]
fn racing_calls_on_a_smooth_word_never_pass_the_burst() {
    use weir_core::gcra;
    model(|| {
        let word = Arc::new(LoomWord::new(0));
        let calls: Vec<Call<LoomWord>> = (0..3)
            .map(|_| Box::new(|w: &LoomWord| gcra::allow(w, &smooth_limit(2), 0)) as Box<_>)
            .collect();
        assert_eq!(race(word.clone(), calls), 2);
        assert!(!gcra::allow(&*word, &smooth_limit(2), 0));
    });
}

#[test]
fn a_stale_clock_on_a_smooth_word_cannot_take_a_token_twice() {
    use weir_core::gcra;
    model(|| {
        // Burst 1, emptied at 0: one token is back at 1 s.
        let word = Arc::new(LoomWord::new(0));
        assert!(gcra::allow(&*word, &smooth_limit(1), 0));
        let calls: Vec<Call<LoomWord>> = vec![
            Box::new(|w: &LoomWord| gcra::allow(w, &smooth_limit(1), SECOND)),
            Box::new(|w: &LoomWord| gcra::allow(w, &smooth_limit(1), SECOND)),
            Box::new(|w: &LoomWord| gcra::allow(w, &smooth_limit(1), 0)),
        ];
        assert_eq!(race(word.clone(), calls), 1);
        assert_eq!(gcra::next(&*word, &smooth_limit(1), SECOND), SECOND);
    });
}
