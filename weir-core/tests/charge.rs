//! All or nothing over several limits ([`weir_core::charge`]), over random
//! hierarchies and costs:
//!
//! - **one call at a time**, every kind of item (GCRA words, rate words,
//!   buckets, bloom keys; a word named twice): a call is admitted exactly
//!   when its items, charged one after another on a copy, all pass; then
//!   each is charged as its own call would charge it, else nothing changes
//!   at all (no slack without a race), and the refusal names the first item
//!   that refused and its wait;
//! - **calls inside calls**: words that run another call the k-th time
//!   they are read, so that other calls' charges and give-backs land
//!   between a call's charges and its give-backs, at other `now`s (ahead
//!   and behind). Every write is logged; the log must be a stack per word
//!   (a give-back pops only the top, and only its own call's charge), a
//!   refused call keeps exactly the charges it says it kept, an admitted
//!   one charges each item once, and over the charges that stay each word
//!   keeps its own bound (GCRA: costs within any T ticks ≤ T + tolerance;
//!   rate: events within any T ns of judged instants ≤ burst + T / I);
//! - (threads racing on a hierarchy are in tests/rate.rs, which
//!   ThreadSanitizer runs too).
//!
//! The properties run on a fixed seed (printed; `WEIR_CHARGE_SEED=N`
//! runs another) and `runner::cases` cases each.

#[path = "support/runner.rs"]
mod runner;

use std::cell::{Cell, OnceCell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use weir_core::bloom::{BloomLine, BloomShape};
use weir_core::bucket::Bucket;
use weir_core::charge::{self, ChargeAnswer, ChargeItem};
use weir_core::gcra::{self, GcraLimit};
use weir_core::rate::{self, RateLimit, Word};

const SECOND: i64 = 1_000_000_000;

/// The properties' seed: `WEIR_CHARGE_SEED`, else a fixed one.
fn seed() -> u64 {
    let seed = std::env::var("WEIR_CHARGE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_c4a1_2b3d_0001);
    eprintln!("charge properties: seed {seed} (WEIR_CHARGE_SEED)");
    seed
}

fn config(cases: u32) -> Config {
    Config {
        cases: runner::cases(cases),
        rng_seed: RngSeed::Fixed(seed()),
        failure_persistence: None,
        ..Config::default()
    }
}

// ---------------------------------------------------------------------------
// The limits.

/// A word's limit: GCRA or rate, small bursts so that refusals are common.
#[derive(Clone, Copy, Debug)]
enum Limit {
    Gcra(GcraLimit),
    Rate(RateLimit),
}

fn limit() -> impl Strategy<Value = Limit> {
    let rate = prop_oneof![Just(1.0f64), Just(3.0), Just(10.0), 0.5f64..50.0];
    prop_oneof![
        (rate.clone(), 1..=4i64).prop_map(|(r, b)| Limit::Gcra(GcraLimit::new(r, b).unwrap())),
        (rate, 1..=4i64).prop_map(|(r, b)| Limit::Rate(RateLimit::new(r, b).unwrap())),
    ]
}

impl Limit {
    fn item<'a, W: Word>(&self, word: &'a W, cost: i64) -> ChargeItem<'a, W> {
        match *self {
            Limit::Gcra(limit) => ChargeItem::Gcra { word, limit, cost },
            Limit::Rate(limit) => ChargeItem::Rate { word, limit, cost },
        }
    }

    /// `cost` as the word's own calls charge it: whether it passed.
    fn charge(&self, word: &AtomicU64, now: i64, cost: i64) -> bool {
        match self {
            Limit::Gcra(limit) => gcra::allow_n(word, limit, now, cost),
            Limit::Rate(limit) => {
                let copy = AtomicU64::new(word.load(Ordering::Relaxed));
                let all = (1..=cost.max(0)).all(|_| rate::allow(&copy, limit, now))
                    && (1..=i64::from(limit.burst())).contains(&cost);
                if all {
                    word.store(copy.load(Ordering::Relaxed), Ordering::Relaxed);
                }
                all
            }
        }
    }
}

/// Instants: a walk that mostly stays or steps ahead by a fraction of a
/// second, sometimes steps back, sometimes jumps.
fn nows(n: usize) -> impl Strategy<Value = Vec<i64>> {
    let step = prop_oneof![
        4 => Just(0i64),
        4 => 0..SECOND / 2,
        2 => -SECOND / 2..0,
        1 => 0..100 * SECOND,
    ];
    (0..10 * SECOND, prop::collection::vec(step, n)).prop_map(|(start, steps)| {
        let mut now = start;
        steps
            .into_iter()
            .map(|s| {
                now = (now + s).max(0);
                now
            })
            .collect()
    })
}

// ---------------------------------------------------------------------------
// One call at a time, every kind of item.

const WORDS: usize = 4;
const BUCKETS: usize = 2;
const KEYS: [&[u8]; 3] = [b"org", b"team", b"user"];

/// An item of a call: which limit and its cost.
#[derive(Clone, Copy, Debug)]
enum Pick {
    Word(usize, i64),
    Bucket(usize, f64),
    Key(usize, i64),
}

fn pick() -> impl Strategy<Value = Pick> {
    let cost = prop_oneof![6 => 1..=2i64, 1 => 3..=5i64, 1 => -1..=0i64];
    prop_oneof![
        4 => (0..WORDS, cost.clone()).prop_map(|(w, c)| Pick::Word(w, c)),
        2 => (0..BUCKETS, prop_oneof![Just(1.0f64), Just(2.0), Just(0.5), Just(9.0)])
            .prop_map(|(b, c)| Pick::Bucket(b, c)),
        2 => (0..KEYS.len(), cost).prop_map(|(k, c)| Pick::Key(k, c)),
    ]
}

/// A call: its items (each bucket at most once: a bucket's copy is not
/// kept, see [`predict`]) and whether it reads first.
fn calls() -> impl Strategy<Value = Vec<(Vec<Pick>, bool)>> {
    let call =
        (prop::collection::vec(pick(), 0..=5), any::<bool>()).prop_map(|(mut picks, all)| {
            let mut seen = [false; BUCKETS];
            picks.retain(|p| match p {
                Pick::Bucket(b, _) => !std::mem::replace(&mut seen[*b], true),
                _ => true,
            });
            (picks, all)
        });
    prop::collection::vec(call, 1..60)
}

/// Everything one call can charge.
struct World {
    limits: Vec<Limit>,
    words: Vec<AtomicU64>,
    buckets: Vec<Bucket>,
    shape: BloomShape,
    lines: Vec<BloomLine>,
}

impl World {
    fn new(limits: &[Limit], bucket_rates: &[(f64, f64)], bloom: Limit) -> World {
        let shape = match bloom {
            Limit::Gcra(l) => BloomShape::new(4, 2, l, 3, 4),
            Limit::Rate(l) => BloomShape::new(4, 2, l, 3, 4),
        }
        .unwrap();
        World {
            limits: limits.to_vec(),
            words: (0..WORDS).map(|_| AtomicU64::new(0)).collect(),
            buckets: bucket_rates
                .iter()
                .map(|&(rate, burst)| Bucket::new(rate, burst, 0).unwrap())
                .collect(),
            lines: (0..shape.lines()).map(|_| BloomLine::fresh()).collect(),
            shape,
        }
    }

    fn items(&self, picks: &[Pick]) -> Vec<ChargeItem<'_>> {
        picks
            .iter()
            .map(|&p| match p {
                Pick::Word(w, cost) => self.limits[w].item(&self.words[w], cost),
                Pick::Bucket(b, cost) => ChargeItem::Bucket {
                    bucket: &self.buckets[b],
                    cost,
                },
                Pick::Key(k, cost) => ChargeItem::Bloom {
                    shape: &self.shape,
                    lines: &self.lines,
                    key: KEYS[k],
                    cost,
                },
            })
            .collect()
    }

    /// The words and the bloom's words, as values.
    fn values(&self) -> Vec<u64> {
        let words = self.words.iter().map(|w| w.load(Ordering::Relaxed));
        let bloom = self
            .lines
            .iter()
            .flat_map(|l| l.0.iter().map(|w| w.load(Ordering::Relaxed)));
        words.chain(bloom).collect()
    }

    /// What the buckets hold, read at a few instants.
    fn buckets_at(&self, now: i64) -> Vec<(f64, i64)> {
        self.buckets
            .iter()
            .flat_map(|b| {
                [now, now + SECOND / 3, now + 5 * SECOND].map(|at| (b.tokens(at), b.next(at, 1.0)))
            })
            .collect()
    }
}

/// The model of one call: the items charged one after another, each by
/// its own call, on a copy of the words and the bloom (buckets asked
/// whether they would take, each at most once a call); the first that
/// refuses and its wait on the copy (the items before it charged), or
/// `None` when all pass, and the copy's values.
fn predict(world: &World, picks: &[Pick], now: i64) -> (Option<(usize, i64)>, Vec<u64>) {
    let values = world.values();
    let words: Vec<AtomicU64> = values[..WORDS].iter().map(|&v| AtomicU64::new(v)).collect();
    let lines: Vec<BloomLine> = values[WORDS..]
        .chunks(8)
        .map(|c| BloomLine(std::array::from_fn(|i| AtomicU64::new(c[i]))))
        .collect();
    for (i, &p) in picks.iter().enumerate() {
        let passed = match p {
            Pick::Word(w, cost) => world.limits[w].charge(&words[w], now, cost),
            Pick::Bucket(b, cost) => world.buckets[b].next(now, cost) == 0,
            Pick::Key(k, cost) => {
                // The key's own n events: each of its words that takes all
                // n is charged them, and the key passes if one does.
                let mut charged = false;
                for slot in world.shape.slots(KEYS[k]) {
                    let word = &lines[slot / 8].0[slot % 8];
                    charged |= match world.shape.limit() {
                        weir_core::bloom::BloomLimit::Gcra(l) => {
                            Limit::Gcra(*l).charge(word, now, cost)
                        }
                        weir_core::bloom::BloomLimit::Window(l) => {
                            Limit::Rate(*l).charge(word, now, cost)
                        }
                    };
                }
                charged
            }
        };
        if !passed {
            let wait = match p {
                Pick::Word(w, cost) => world.limits[w].item(&words[w], cost).wait(now),
                Pick::Bucket(b, cost) => world.buckets[b].next(now, cost),
                Pick::Key(k, cost) => ChargeItem::Bloom {
                    shape: &world.shape,
                    lines: &lines,
                    key: KEYS[k],
                    cost,
                }
                .wait(now),
            };
            return (Some((i, wait)), values);
        }
    }
    let mut out: Vec<u64> = words.iter().map(|w| w.load(Ordering::Relaxed)).collect();
    out.extend(
        lines
            .iter()
            .flat_map(|l| l.0.iter().map(|w| w.load(Ordering::Relaxed))),
    );
    (None, out)
}

proptest! {
    #![proptest_config(config(512))]

    /// One call at a time: admitted exactly when the model admits, then
    /// charged as the model charges; refused with nothing changed at all,
    /// naming the model's first refusal and the item's wait.
    #[test]
    fn one_call_at_a_time_is_the_items_one_after_another_or_nothing(
        limits in prop::collection::vec(limit(), WORDS),
        bloom in limit(),
        bucket_rates in prop::collection::vec(
            (prop_oneof![Just(0.0f64), Just(1.0), 0.5f64..20.0], 1.0f64..4.0), BUCKETS),
        calls in calls(),
        nows in nows(60),
    ) {
        let world = World::new(&limits, &bucket_rates, bloom);
        // The buckets' twin, charged only by admitted calls.
        let twin = World::new(&limits, &bucket_rates, bloom);
        for ((picks, all), &now) in calls.iter().zip(&nows) {
            let (refuses, expected) = predict(&world, picks, now);
            let before = (world.values(), world.buckets_at(now));
            let items = world.items(picks);
            // Each item's wait alone (what charge_all reads first) is 0
            // exactly when the item alone would pass.
            let waits: Vec<i64> = items.iter().map(|item| item.wait(now)).collect();
            prop_assert_eq!(world.values(), before.0.clone(), "a wait wrote");
            for (pick, &wait) in picks.iter().zip(&waits) {
                let alone = predict(&world, std::slice::from_ref(pick), now).0;
                prop_assert_eq!(wait == 0, alone.is_none(), "{:?} at {}", pick, now);
            }
            let answer = if *all {
                charge::charge_all(&items, now)
            } else {
                charge::charge_in_order(&items, now)
            }
            .unwrap();
            // charge_all refuses at the first item that would refuse
            // alone, with nothing charged; else, as charge_in_order, at
            // the first that refuses after the ones before it.
            let first_alone = waits.iter().position(|&w| w > 0).filter(|_| *all);
            let refuses = match first_alone {
                Some(index) => Some((index, waits[index])),
                None => refuses,
            };
            match refuses {
                None => {
                    prop_assert_eq!(answer, ChargeAnswer::Admitted, "{:?} at {}", picks, now);
                    prop_assert_eq!(world.values(), expected);
                    for p in picks {
                        if let Pick::Bucket(b, cost) = *p {
                            prop_assert!(twin.buckets[b].take(now, cost));
                        }
                    }
                }
                Some((index, wait)) => {
                    prop_assert_eq!(
                        answer,
                        ChargeAnswer::Refused { index, wait, kept: 0 },
                        "{:?} at {}", picks, now
                    );
                    prop_assert!(wait > 0);
                    prop_assert_eq!((world.values(), world.buckets_at(now)), before);
                }
            }
            prop_assert_eq!(world.buckets_at(now), twin.buckets_at(now));
        }
    }
}

// ---------------------------------------------------------------------------
// Calls inside calls: other calls' charges and give-backs land between a
// call's own, and every write is logged.

/// One write to a word: which word, from what to what, by which call, at
/// which `now`.
#[derive(Clone, Copy, Debug)]
struct Write {
    word: usize,
    from: u64,
    to: u64,
    call: usize,
    now: i64,
}

/// A call and the call that runs inside it, at its `at`-th read of a word.
#[derive(Clone, Debug)]
struct Nest {
    picks: Vec<(usize, i64)>,
    now: i64,
    all: bool,
    inner: Option<(usize, Box<Nest>)>,
}

fn nest(depth: u32) -> BoxedStrategy<Nest> {
    let picks = prop::collection::vec(
        (0..WORDS, prop_oneof![4 => Just(1i64), 1 => 2..=3i64]),
        1..=4,
    );
    let now = 0..4 * SECOND;
    let own = (picks, now, any::<bool>());
    if depth == 0 {
        own.prop_map(|(picks, now, all)| Nest {
            picks,
            now,
            all,
            inner: None,
        })
        .boxed()
    } else {
        (
            own,
            prop::option::weighted(0.7, (0..10usize, nest(depth - 1))),
        )
            .prop_map(|((picks, now, all), inner)| Nest {
                picks,
                now,
                all,
                inner: inner.map(|(at, n)| (at, Box::new(n))),
            })
            .boxed()
    }
}

/// A call in flight: its id, the reads it has made, and the call to run
/// inside it (at which read).
type Frame<'n> = (usize, usize, Option<&'n (usize, Box<Nest>)>);

/// A call's id, its items (word, cost) and its answer.
type Answered = (usize, Vec<(usize, i64)>, ChargeAnswer);

/// The calls in flight, innermost last: each call's id, the reads it has
/// made, and the call to run inside it.
struct Stack<'n> {
    frames: RefCell<Vec<Frame<'n>>>,
    next_id: Cell<usize>,
    log: RefCell<Vec<Write>>,
    nows: RefCell<Vec<i64>>,
    answers: RefCell<Vec<Answered>>,
}

/// A word that logs its writes and runs the call nested in the current
/// one at that call's chosen read.
struct Logged<'w, 'n> {
    id: usize,
    value: AtomicU64,
    stack: &'w Stack<'n>,
    words: &'w OnceCell<&'w [Logged<'w, 'n>]>,
    limits: &'w [Limit],
}

impl Word for Logged<'_, '_> {
    fn get(&self) -> u64 {
        let inner = {
            let mut frames = self.stack.frames.borrow_mut();
            let top = frames.last_mut().expect("read outside a call");
            top.1 += 1;
            match top.2 {
                Some((at, _)) if *at < top.1 => top.2.take(),
                _ => None,
            }
        };
        if let Some((_, nest)) = inner {
            run(nest, self.words.get().unwrap(), self.limits, self.stack);
        }
        self.value.load(Ordering::Relaxed)
    }

    fn swap_if(&self, current: u64, new: u64) -> Result<u64, u64> {
        let swapped =
            self.value
                .compare_exchange_weak(current, new, Ordering::Relaxed, Ordering::Relaxed);
        if swapped.is_ok() {
            let frames = self.stack.frames.borrow();
            let call = frames.last().expect("write outside a call").0;
            let now = *self.stack.nows.borrow().last().unwrap();
            self.stack.log.borrow_mut().push(Write {
                word: self.id,
                from: current,
                to: new,
                call,
                now,
            });
        }
        swapped
    }
}

/// Runs `nest` (and, inside it, its inner call) on `words`.
fn run<'w, 'n>(nest: &'n Nest, words: &'w [Logged<'w, 'n>], limits: &[Limit], stack: &Stack<'n>) {
    let id = stack.next_id.get();
    stack.next_id.set(id + 1);
    stack.frames.borrow_mut().push((id, 0, nest.inner.as_ref()));
    stack.nows.borrow_mut().push(nest.now);
    let items: Vec<ChargeItem<'_, Logged<'_, '_>>> = nest
        .picks
        .iter()
        .map(|&(w, cost)| limits[w].item(&words[w], cost))
        .collect();
    let answer = if nest.all {
        charge::charge_all(&items, nest.now)
    } else {
        charge::charge_in_order(&items, nest.now)
    }
    .unwrap();
    stack.frames.borrow_mut().pop();
    stack.nows.borrow_mut().pop();
    stack
        .answers
        .borrow_mut()
        .push((id, nest.picks.clone(), answer));
}

/// A charge that stays: its call, its `now`, the word before and after.
type Kept = (usize, i64, u64, u64);

/// Replays `log` as a stack per word: a write down pops the top, which
/// must be the writer's own charge and be undone exactly. The charges
/// that stay, per word, in order.
fn replay(log: &[Write]) -> Result<Vec<Vec<Kept>>, String> {
    let mut stacks: Vec<Vec<Kept>> = vec![Vec::new(); WORDS];
    for w in log {
        let stack = &mut stacks[w.word];
        if w.to > w.from {
            if let Some(top) = stack.last() {
                if top.3 != w.from {
                    return Err(format!(
                        "a charge from {} over a top of {}: {w:?}",
                        w.from, top.3
                    ));
                }
            }
            stack.push((w.call, w.now, w.from, w.to));
        } else {
            let Some(top) = stack.pop() else {
                return Err(format!("a give-back with nothing charged: {w:?}"));
            };
            if (top.0, top.2, top.3) != (w.call, w.to, w.from) {
                return Err(format!("a give-back {w:?} popped {top:?}"));
            }
        }
    }
    Ok(stacks)
}

/// Whether the charges that stay on a word keep its bound.
fn within_bound(limit: &Limit, kept: &[Kept]) -> Result<(), String> {
    match limit {
        Limit::Gcra(limit) => {
            let (_, tolerance, shift) = limit.parts();
            // (tick, cost in ticks): the cost is what the step added over
            // max(TAT, now).
            let mut costs: Vec<(i64, i64)> = kept
                .iter()
                .map(|&(_, now, from, to)| {
                    let tick = now.min(limit.max_now()) << shift;
                    (tick, to as i64 - (from as i64).max(tick))
                })
                .collect();
            costs.sort();
            for lo in 0..costs.len() {
                let mut sum = 0i128;
                for hi in lo..costs.len() {
                    sum += i128::from(costs[hi].1);
                    let span = i128::from(costs[hi].0 - costs[lo].0);
                    if sum > span + i128::from(tolerance) {
                        return Err(format!(
                            "{sum} ticks within {span}, tolerance {tolerance}: {costs:?}"
                        ));
                    }
                }
            }
            Ok(())
        }
        Limit::Rate(limit) => {
            // (judged instant, events): a `now` before the latest one used
            // is judged as that one; the events are the count's step.
            let mut latest = 0i64;
            let mut events: Vec<(i64, u64)> = kept
                .iter()
                .map(|&(_, now, from, to)| {
                    latest = latest.max(now);
                    let same = from >> 10 == to >> 10;
                    let n = if same {
                        (to & 1023) - (from & 1023)
                    } else {
                        to & 1023
                    };
                    (latest, n)
                })
                .collect();
            events.sort();
            let (ns, frac, burst) = limit.parts();
            let fixed = (u128::from(ns) << 32) + u128::from(frac);
            for lo in 0..events.len() {
                let mut sum = 0u64;
                for hi in lo..events.len() {
                    sum += events[hi].1;
                    let span = (events[hi].0 - events[lo].0) as u128;
                    let most = u64::from(burst) + ((span << 32) / fixed) as u64;
                    if sum > most {
                        return Err(format!(
                            "{sum} events within {span} ns, bound {most}: {events:?}"
                        ));
                    }
                }
            }
            Ok(())
        }
    }
}

/// Calls inside calls at other `now`s: the writes form a stack per word;
/// each give-back is its own call's and exact; a refused call keeps
/// exactly what it says; an admitted one charges each item once; and the
/// charges that stay keep every word's bound. The run must have given
/// charges back and kept some (the races it is about happened).
#[test]
fn racing_calls_never_pass_a_bound_and_give_back_only_their_own() {
    let (admitted, refused, given, kept_all) =
        (Cell::new(0), Cell::new(0), Cell::new(0), Cell::new(0));
    let strategy = (
        prop::collection::vec(limit(), WORDS),
        prop::collection::vec(nest(2), 1..24),
    );
    let mut runner = proptest::test_runner::TestRunner::new(config(768));
    let result = runner.run(&strategy, |(limits, calls)| {
        let stack = Stack {
            frames: RefCell::new(Vec::new()),
            next_id: Cell::new(0),
            log: RefCell::new(Vec::new()),
            nows: RefCell::new(Vec::new()),
            answers: RefCell::new(Vec::new()),
        };
        let cell = OnceCell::new();
        let words: Vec<Logged<'_, '_>> = (0..WORDS)
            .map(|id| Logged {
                id,
                value: AtomicU64::new(0),
                stack: &stack,
                words: &cell,
                limits: &limits,
            })
            .collect();
        let _ = cell.set(&words[..]);
        for call in &calls {
            run(call, &words, &limits, &stack);
        }
        let log = stack.log.borrow();
        let stacks = replay(&log).map_err(TestCaseError::fail)?;
        given.set(given.get() + log.iter().filter(|w| w.to < w.from).count());
        for (w, kept) in stacks.iter().enumerate() {
            let last = kept.last().map_or(0, |k| k.3);
            prop_assert_eq!(words[w].value.load(Ordering::Relaxed), last);
            within_bound(&limits[w], kept).map_err(TestCaseError::fail)?;
        }
        for (id, picks, answer) in stack.answers.borrow().iter() {
            let charges = log
                .iter()
                .filter(|w| w.call == *id && w.to > w.from)
                .count();
            let stayed: usize = stacks
                .iter()
                .map(|s| s.iter().filter(|k| k.0 == *id).count())
                .sum();
            match answer {
                ChargeAnswer::Admitted => {
                    admitted.set(admitted.get() + 1);
                    prop_assert_eq!(charges, picks.len());
                    prop_assert_eq!(stayed, picks.len());
                }
                ChargeAnswer::Refused { index, kept, .. } => {
                    refused.set(refused.get() + 1);
                    kept_all.set(kept_all.get() + kept);
                    prop_assert!(*index < picks.len());
                    prop_assert!(charges <= *index);
                    prop_assert_eq!(stayed, *kept, "call {}: {:?}", id, answer);
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    eprintln!(
        "calls inside calls: {} admitted, {} refused, {} charges given back, {} kept",
        admitted.get(),
        refused.get(),
        given.get(),
        kept_all.get()
    );
    assert!(admitted.get() > 0 && refused.get() > 0);
    assert!(
        given.get() > 0 && kept_all.get() > 0,
        "the races never happened"
    );
}

/// At which read, and what to run there.
type Race<'a> = (usize, &'a dyn Fn());

/// A word that runs `race` at its `at`-th read: another call landing
/// between this call's read and its charge.
struct Hooked<'a> {
    value: AtomicU64,
    reads: Cell<usize>,
    race: Cell<Option<Race<'a>>>,
}

impl<'a> Hooked<'a> {
    fn new() -> Self {
        Hooked {
            value: AtomicU64::new(0),
            reads: Cell::new(0),
            race: Cell::new(None),
        }
    }
}

impl Word for Hooked<'_> {
    fn get(&self) -> u64 {
        self.reads.set(self.reads.get() + 1);
        if let Some((at, race)) = self.race.get() {
            if at == self.reads.get() {
                self.race.set(None);
                race();
            }
        }
        self.value.load(Ordering::Relaxed)
    }

    fn swap_if(&self, current: u64, new: u64) -> Result<u64, u64> {
        self.value
            .compare_exchange_weak(current, new, Ordering::Relaxed, Ordering::Relaxed)
    }
}

/// The organisation's last unit and two callers, A and B, each with a user
/// limit of its own. As the nginx module judged several limits (read every
/// one, then charge the last, then the ones read, a lost charge admitting
/// all the same), in the interleaving its comment names (A reads, B reads,
/// A charges, B charges): both admitted, two for one unit. Through
/// [`charge::charge_all`], B's whole call landing between A's read and
/// A's charge: one admitted. Made step by step, not waited for.
#[test]
fn read_then_charge_admits_two_for_one_unit_and_charge_all_one() {
    let limit = GcraLimit::new(1.0, 1).unwrap();
    let now = SECOND;
    // The module's old sequence, in steps.
    let org = AtomicU64::new(0);
    let users = [AtomicU64::new(0), AtomicU64::new(0)];
    let read =
        |user: &AtomicU64| gcra::next(&org, &limit, now) == 0 && gcra::next(user, &limit, now) == 0;
    let charge = |user: &AtomicU64| {
        let last = gcra::allow(user, &limit, now);
        if last {
            let _ = gcra::allow(&org, &limit, now); // lost or not, admitted
        }
        last
    };
    let (a_read, b_read) = (read(&users[0]), read(&users[1]));
    let (a, b) = (a_read && charge(&users[0]), b_read && charge(&users[1]));
    assert!(a && b, "read, read, charge, charge: both admitted");
    assert_eq!(gcra::room(&org, &limit, now), 0);

    // The same two through charge_all, B's call inside A's, between A's
    // read of the organisation and its charge (B's items name the same
    // memory as plain words).
    let org = Hooked::new();
    let (a_user, b_user) = (Hooked::new(), AtomicU64::new(0));
    let b = Cell::new(None);
    let b_call = || {
        let items = [
            ChargeItem::Gcra {
                word: &org.value,
                limit,
                cost: 1,
            },
            ChargeItem::Gcra {
                word: &b_user,
                limit,
                cost: 1,
            },
        ];
        b.set(Some(charge::charge_all(&items, now).unwrap()));
    };
    // A's first read of the organisation is its look; its second, its
    // charge.
    org.race.set(Some((2, &b_call)));
    let items = [
        ChargeItem::Gcra {
            word: &org,
            limit,
            cost: 1,
        },
        ChargeItem::Gcra {
            word: &a_user,
            limit,
            cost: 1,
        },
    ];
    let a = charge::charge_all(&items, now).unwrap();
    assert_eq!(b.get(), Some(ChargeAnswer::Admitted));
    assert!(
        matches!(
            a,
            ChargeAnswer::Refused {
                index: 0,
                kept: 0,
                ..
            }
        ),
        "{a:?}"
    );
    assert_eq!(
        gcra::room(&a_user.value, &limit, now),
        1,
        "A's user was not spent"
    );
}
