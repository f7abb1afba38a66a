//! The rate word's compare-and-swap loop under loom: every interleaving of
//! a few threads (and every value a relaxed load may see) is run, and the
//! bounds must hold in each. So is charging several words all or nothing
//! (weir_core::charge): a charge given back or kept, and the last token of
//! an organisation raced for by two callers. The rate and bloom code is generic over
//! [`weir_core::rate::Word`], so the code checked here is the code that ships,
//! with loom's atomic standing in for `AtomicU64`. So are the keyed table's
//! claims and replacements (weir_core::keyed, generic over its
//! `SlotCell`), with a loom mutex over the pair standing in for the 128-bit
//! atomic.

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
    model_bounded(PREEMPTIONS, body)
}

/// [`model`] with at most `preemptions` forced switches per thread.
fn model_bounded(preemptions: usize, body: impl Fn() + Sync + Send + 'static) {
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
    builder.preemption_bound = Some(preemptions);
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

// ---------------------------------------------------------------------------
// All or nothing over several words (weir_core::charge).

use weir_core::charge::{self, ChargeAnswer, ChargeItem};
use weir_core::gcra::{self, GcraLimit};

fn gcra_limit(burst: i64) -> GcraLimit {
    GcraLimit::new(1.0, burst).unwrap()
}

/// Whether the models run here (see [`model`]).
fn models_run() -> bool {
    !runner::through_a_runner() || std::env::var("WEIR_LOOM").as_deref() == Ok("1")
}

/// A call refused by a spent user charges the organisation and gives it
/// back, while two plain calls take the organisation's two tokens: never
/// more than two pass, at most one of them is refused for the charge seen
/// in between, and every token spent is a plain call's or the one kept.
/// Loom must find both slacks: a charge kept, and a plain call refused for
/// one given back.
#[test]
fn a_charge_given_back_or_kept_never_passes_the_bound() {
    use std::sync::atomic::{AtomicUsize, Ordering as StdOrdering};
    static KEPT: AtomicUsize = AtomicUsize::new(0);
    static FALSELY_REFUSED: AtomicUsize = AtomicUsize::new(0);
    for gcra_kind in [true, false] {
        model(move || {
            let org = Arc::new(LoomWord::new(0));
            let user = Arc::new(LoomWord::new(0));
            let charge_org = move |w: &LoomWord| {
                if gcra_kind {
                    gcra::allow(w, &gcra_limit(2), 0)
                } else {
                    rate::allow(w, &limit(2), 0)
                }
            };
            // The user's one unit is spent.
            assert!(charge_org(&user) && charge_org(&user));
            let refused = {
                let (org, user) = (org.clone(), user.clone());
                thread::spawn(move || {
                    let items: [ChargeItem<'_, LoomWord>; 2] = if gcra_kind {
                        [
                            ChargeItem::Gcra {
                                word: &*org,
                                limit: gcra_limit(2),
                                cost: 1,
                            },
                            ChargeItem::Gcra {
                                word: &*user,
                                limit: gcra_limit(2),
                                cost: 1,
                            },
                        ]
                    } else {
                        [
                            ChargeItem::Rate {
                                word: &*org,
                                limit: limit(2),
                                cost: 1,
                            },
                            ChargeItem::Rate {
                                word: &*user,
                                limit: limit(2),
                                cost: 1,
                            },
                        ]
                    };
                    charge::charge_in_order(&items, 0).unwrap()
                })
            };
            let plain: Vec<_> = (0..2)
                .map(|_| {
                    let org = org.clone();
                    thread::spawn(move || charge_org(&org))
                })
                .collect();
            // Refused by the user, or by the organisation if the plain
            // calls took it first.
            let ChargeAnswer::Refused { kept, .. } = refused.join().unwrap() else {
                panic!("the spent user admitted");
            };
            let passed = plain
                .into_iter()
                .map(|t| t.join().unwrap())
                .filter(|&p| p)
                .count();
            assert!(
                passed >= 1 && passed + kept <= 2,
                "{passed} passed, {kept} kept"
            );
            // Exactly the tokens the plain calls took and the kept one are
            // spent.
            let left = (0..3).filter(|_| charge_org(&org)).count();
            assert_eq!(
                left + passed + kept,
                2,
                "{passed} passed, {kept} kept, {left} left"
            );
            KEPT.fetch_add(kept, StdOrdering::Relaxed);
            if passed + kept < 2 {
                FALSELY_REFUSED.fetch_add(1, StdOrdering::Relaxed);
            }
        });
    }
    if models_run() {
        assert!(KEPT.load(StdOrdering::Relaxed) > 0, "no charge was kept");
        assert!(
            FALSELY_REFUSED.load(StdOrdering::Relaxed) > 0,
            "no false refusal"
        );
    }
}

/// Two callers, each with a user limit of its own, and an organisation
/// with one token left, through charge_all: exactly one is admitted and
/// only its user is spent, whatever the interleaving. The nginx module's
/// old way (read every limit, then charge them, a lost charge admitting
/// all the same) admits both in some interleaving, which loom finds.
#[test]
fn two_callers_for_the_last_token_admit_one_where_read_then_charge_admitted_two() {
    use std::sync::atomic::{AtomicUsize, Ordering as StdOrdering};
    static TWO_ADMITTED: AtomicUsize = AtomicUsize::new(0);
    let one = || gcra_limit(1);
    // The old way.
    model(move || {
        let org = Arc::new(LoomWord::new(0));
        let callers: Vec<_> = (0..2)
            .map(|_| {
                let org = org.clone();
                thread::spawn(move || {
                    let user = LoomWord::new(0);
                    let read =
                        gcra::next(&*org, &one(), 0) == 0 && gcra::next(&user, &one(), 0) == 0;
                    if !read || !gcra::allow(&user, &one(), 0) {
                        return false;
                    }
                    let _ = gcra::allow(&*org, &one(), 0); // lost or not, admitted
                    true
                })
            })
            .collect();
        let admitted = callers
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&a| a)
            .count();
        if admitted == 2 {
            TWO_ADMITTED.fetch_add(1, StdOrdering::Relaxed);
        }
    });
    if models_run() {
        assert!(
            TWO_ADMITTED.load(StdOrdering::Relaxed) > 0,
            "read then charge never admitted two"
        );
    }
    // charge_all.
    model(move || {
        let org = Arc::new(LoomWord::new(0));
        let users = Arc::new([LoomWord::new(0), LoomWord::new(0)]);
        let callers: Vec<_> = (0..2)
            .map(|i| {
                let (org, users) = (org.clone(), users.clone());
                thread::spawn(move || {
                    let items = [
                        ChargeItem::Gcra {
                            word: &*org,
                            limit: one(),
                            cost: 1,
                        },
                        ChargeItem::Gcra {
                            word: &users[i],
                            limit: one(),
                            cost: 1,
                        },
                    ];
                    charge::charge_all(&items, 0).unwrap()
                })
            })
            .collect();
        let answers: Vec<ChargeAnswer> = callers.into_iter().map(|t| t.join().unwrap()).collect();
        let admitted: Vec<usize> = (0..2).filter(|&i| answers[i].admitted()).collect();
        assert_eq!(admitted.len(), 1, "{answers:?}");
        for (i, answer) in answers.iter().enumerate() {
            let spent = !gcra::allow(&users[i], &one(), 0);
            assert_eq!(spent, answer.admitted(), "user {i}: {answers:?}");
            if let ChargeAnswer::Refused { kept, .. } = answer {
                assert_eq!(*kept, 0);
            }
        }
        assert!(!gcra::allow(&*org, &one(), 0));
    });
}

use weir_core::keyed;

/// A keyed table's 16-byte slot under loom: a mutex over the pair (tag,
/// word), every read and compare-and-swap of the pair one critical section,
/// as the 128-bit atomic's sequentially consistent operations are.
struct LoomSlot(loom::sync::Mutex<(u64, u64)>);

impl keyed::SlotCell for LoomSlot {
    fn get(&self) -> (u64, u64) {
        *self.0.lock().unwrap()
    }

    fn swap_if(&self, current: (u64, u64), new: (u64, u64)) -> Result<(), (u64, u64)> {
        let mut slot = self.0.lock().unwrap();
        if *slot == current {
            *slot = new;
            Ok(())
        } else {
            Err(*slot)
        }
    }
}

/// One bucket (the smallest table: every key's candidates are its 8
/// slots) and fresh counters.
struct LoomTable {
    shape: keyed::KeyedShape,
    buckets: Vec<keyed::KeyedBucket<LoomSlot>>,
    counters: keyed::KeyedCounters,
}

impl LoomTable {
    fn new() -> LoomTable {
        let one_a_second = GcraLimit::new(1.0, 1).unwrap();
        LoomTable {
            shape: keyed::KeyedShape::new(1, one_a_second, keyed::Overflow::Refuse, 3, 4).unwrap(),
            buckets: vec![keyed::KeyedBucket(std::array::from_fn(|_| {
                LoomSlot(loom::sync::Mutex::new((0, 0)))
            }))],
            counters: keyed::KeyedCounters::new(),
        }
    }

    fn decide(&self, now: i64, key: &[u8]) -> keyed::Decision {
        self.shape
            .decide(&self.buckets, &self.counters, now, key, 1)
    }

    /// The slots that hold a key, after checking that no claim is left
    /// and that no key is held twice.
    fn settled(&self) -> usize {
        use keyed::SlotCell;
        let mut tags: Vec<u64> = self.buckets[0].0.iter().map(|s| s.get().0).collect();
        tags.retain(|&tag| tag != 0);
        assert!(
            tags.iter().all(|tag| tag & 1 == 0),
            "a claim left: {tags:x?}"
        );
        let held = tags.len();
        tags.sort_unstable();
        tags.dedup();
        assert_eq!(tags.len(), held, "a key held twice");
        held
    }
}

/// Two calls for one new key race to claim it a slot (each may claim a
/// different one): the key ends with one slot, and its burst of 1 is
/// admitted once.
#[test]
fn a_new_key_raced_for_takes_one_slot() {
    model(|| {
        let table = Arc::new(LoomTable::new());
        let calls: Vec<Call<LoomTable>> = (0..2)
            .map(|_| Box::new(|t: &LoomTable| t.decide(SECOND, b"new").allowed()) as Box<_>)
            .collect();
        assert_eq!(race(table.clone(), calls), 1);
        assert_eq!(table.settled(), 1);
        assert_eq!(table.decide(SECOND, b"new"), keyed::Decision::Refused);
        assert_eq!(table.counters.overflows(), 0);
    });
}

/// A full bucket of keys at rest: a call for one of them races a new key
/// that replaces an idle word (perhaps that one). Both are admitted, as
/// fresh words would admit them; neither key ends with two slots or none.
#[test]
fn a_replacement_races_the_replaced_keys_charge() {
    model(|| {
        let table = Arc::new(LoomTable::new());
        for k in 0u8..8 {
            assert!(table.decide(0, &[k]).allowed());
        }
        // At 1 s every word is at rest (its TAT is 1 s).
        let calls: Vec<Call<LoomTable>> = vec![
            Box::new(|t: &LoomTable| t.decide(SECOND, &[0]).allowed()),
            Box::new(|t: &LoomTable| t.decide(SECOND, b"new").allowed()),
        ];
        assert_eq!(race(table.clone(), calls), 2);
        assert_eq!(table.settled(), 8);
        assert_eq!(table.decide(SECOND, &[0]), keyed::Decision::Refused);
        assert_eq!(table.decide(SECOND, b"new"), keyed::Decision::Refused);
    });
}

/// Three calls: two for one new key and one for another, on a bucket with
/// one free slot and keys at rest, so that claims, frees and replacements
/// interleave. Each new key is admitted exactly once, no claim is left and
/// no key is held twice. Three threads scanning eight slots each take
/// long under loom: at most one forced switch per thread in the default
/// run (1 s), two under `WEIR_LONG=1` (97 s measured on a busy 2-core
/// machine); the two-thread models above keep the usual three.
#[test]
fn claims_and_replacements_interleaved() {
    let bound = if std::env::var("WEIR_LONG").as_deref() == Ok("1") {
        2
    } else {
        1
    };
    model_bounded(bound, || {
        let table = Arc::new(LoomTable::new());
        for k in 0u8..7 {
            assert!(table.decide(0, &[k]).allowed());
        }
        let calls: Vec<Call<LoomTable>> = vec![
            Box::new(|t: &LoomTable| t.decide(SECOND, b"a").allowed()),
            Box::new(|t: &LoomTable| t.decide(SECOND, b"a").allowed()),
            Box::new(|t: &LoomTable| t.decide(SECOND, b"b").allowed()),
        ];
        assert_eq!(race(table.clone(), calls), 2);
        assert!(table.settled() <= 8);
        assert_eq!(table.decide(SECOND, b"a"), keyed::Decision::Refused);
        assert_eq!(table.decide(SECOND, b"b"), keyed::Decision::Refused);
        assert_eq!(table.counters.overflows(), 0);
    });
}
