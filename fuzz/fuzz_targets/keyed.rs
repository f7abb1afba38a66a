//! A keyed table (`weir_keyed_*`), of either word kind, on the heap, placed
//! in caller memory or laid in a region and attached, with a few buckets so
//! that keys replace idle ones and overflow; then a run of calls on a clock
//! that floods one instant and sometimes goes backwards.
//!
//! Checked against a model of one lone word per key (a `weir_gcra` or
//! `weir_rate` of the same limit, no table): while no call has overflowed
//! and the clock has not gone back, every decision is the lone word's
//! (the header's "exact per key"). Throughout: an error writes nothing and
//! changes nothing, `next` is a wait of 0 or more and a key whose wait is
//! 0 is never refused by its own word, an overflow is answered as the
//! policy says and counted, and the reading stays in range.
//!
//! Between decisions, in every form alike (heap, placed, shared), the
//! table now and then takes a new limit in place (`weir_keyed_reconfigure`,
//! `weir_keyed_reconfigure_rate`): of its kind, which the lone words take
//! too (each keeps its state, judged by the new limit from then on), of the
//! other kind or on another tick, refused with its status and changing
//! nothing. The model follows a rate table across a change only while no
//! limit's interval is longer than the shortest one in force so far: a
//! window forgotten at rest stays fresh, where a lone word's read under a
//! slower limit could stand open again (the header's one exception).
#![no_main]

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::c_void;
use std::ptr::null_mut;

use libfuzzer_sys::fuzz_target;
use weir::counts::weir_counts;
use weir::gcra::*;
use weir::keyed::*;
use weir::rate::*;
use weir::status::weir_status::*;
use weir_fuzz::{abort_on_panic, skipped, trace, Clock, Input};

/// The keys a run draws from: more than a few buckets hold.
const KEYS: usize = 48;

/// The bursts and rates a table is made with, or reconfigured to (all on
/// tick 0).
const BURSTS: [i64; 5] = [1, 2, 3, 5, 100];
const RATES: [f64; 4] = [0.5, 1.0, 1000.0, 10000.0];

/// Memory of exactly `len` bytes, 128-aligned, freed on drop.
struct Memory {
    base: *mut u8,
    layout: Layout,
}

impl Memory {
    fn new(len: usize) -> Memory {
        let layout = Layout::from_size_align(len.max(1), 128).unwrap();
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc_zeroed(layout) };
        assert!(!base.is_null());
        Memory { base, layout }
    }
    fn mem(&self) -> *mut c_void {
        self.base.cast()
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base, self.layout) };
    }
}

/// One lone word per key, of the table's kind and its limit in force.
enum Model {
    Gcra(weir_gcra_limit, Vec<weir_gcra>),
    Rate(weir_rate_limit, Vec<weir_rate>),
}

impl Model {
    /// What the key's lone word answers to `n` events at `now`, charging it.
    fn decide(&mut self, key: usize, now: i64, n: i64) -> bool {
        match self {
            Model::Gcra(limit, words) => weir_gcra_allow_n(&mut words[key], limit, now, n),
            Model::Rate(limit, words) => n == 1 && weir_rate_allow(&mut words[key], limit, now),
        }
    }
}

/// The table's counts: `counted` if it counts, else off.
fn check_counts(table: *const weir_keyed, counting: bool, counted: weir_counts) {
    let mut out = weir_counts::default();
    let status = weir_keyed_read_counts(table, &mut out);
    if counting {
        assert_eq!((status, out), (WEIR_OK, counted));
    } else {
        assert_eq!(status, WEIR_ERR_COUNTS_OFF);
    }
}

/// A limit of `per_s` a second and `burst`, of each kind.
fn limits(per_s: f64, burst: i64) -> (weir_gcra_limit, weir_rate_limit) {
    let mut gcra = weir_gcra_limit {
        per_token: 0,
        tolerance: 0,
        shift: 0,
        reserved: 0,
    };
    let mut rate = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    assert_eq!(weir_gcra_limit_new(per_s, burst, &mut gcra), WEIR_OK);
    assert_eq!(weir_rate_limit_new(per_s, burst, &mut rate), WEIR_OK);
    (gcra, rate)
}

/// A rate limit's interval, in 2^-32 ns.
fn interval(limit: &weir_rate_limit) -> u128 {
    (u128::from(limit.interval_ns) << 32) | u128::from(limit.interval_frac)
}

fuzz_target!(|data: &[u8]| {
    abort_on_panic();
    let mut input = Input::new(data);
    if input.one_in(8) {
        sizing(&mut input);
        return;
    }
    let buckets = match input.u8() % 8 {
        0 => 0,
        1 => WEIR_KEYED_MAX_BUCKETS + 1 + input.below(10),
        _ => 1 + input.below(6),
    };
    let overflow = match input.u8() % 8 {
        0 => input.u32(),
        policy => u32::from(policy % 3),
    };
    let mut burst = BURSTS[input.below(5) as usize];
    let per_s = RATES[input.below(4) as usize];
    let gcra = input.even();
    let (gcra_limit, rate_limit) = limits(per_s, burst);
    let (seed0, seed1) = (input.u64(), input.u64());
    let form = input.below(3);
    trace!("{buckets} buckets, overflow {overflow}, burst {burst}, {per_s}/s, gcra {gcra}, form {form}");

    let mut memory = None;
    let mut table = null_mut();
    let status = match form {
        0 if gcra => weir_keyed_new(buckets, &gcra_limit, overflow, seed0, seed1, &mut table),
        0 => weir_keyed_new_rate(buckets, &rate_limit, overflow, seed0, seed1, &mut table),
        1 => {
            let (mut bytes, mut align) = (0, 0);
            let footprint = weir_keyed_footprint(buckets, &mut bytes, &mut align);
            if footprint != WEIR_OK {
                bytes = 4096;
            }
            let len = match input.u8() % 4 {
                0 => bytes.saturating_sub(1 + input.below(200) as usize),
                _ => bytes,
            };
            let region = Memory::new(len);
            let status = if gcra {
                let limit = &gcra_limit;
                weir_keyed_init_in(
                    region.mem(),
                    len,
                    buckets,
                    limit,
                    overflow,
                    seed0,
                    seed1,
                    &mut table,
                )
            } else {
                let limit = &rate_limit;
                weir_keyed_init_rate_in(
                    region.mem(),
                    len,
                    buckets,
                    limit,
                    overflow,
                    seed0,
                    seed1,
                    &mut table,
                )
            };
            if status == WEIR_OK {
                assert!(footprint == WEIR_OK && len >= bytes && align == 128);
            }
            memory = Some(region);
            status
        }
        _ => {
            let (mut bytes, mut align) = (0, 0);
            let footprint = weir_keyed_shared_footprint(buckets, &mut bytes, &mut align);
            if footprint != WEIR_OK {
                if weir_keyed_lock_free() && buckets >= 1 && buckets <= WEIR_KEYED_MAX_BUCKETS {
                    panic!("no shared footprint for {buckets} buckets: {footprint:?}");
                }
                return;
            }
            let region = Memory::new(bytes);
            let status = if gcra {
                let limit = &gcra_limit;
                weir_keyed_init_shared(
                    region.mem(),
                    bytes,
                    buckets,
                    limit,
                    overflow,
                    seed0,
                    seed1,
                    &mut table,
                )
            } else {
                let limit = &rate_limit;
                weir_keyed_init_shared_rate(
                    region.mem(),
                    bytes,
                    buckets,
                    limit,
                    overflow,
                    seed0,
                    seed1,
                    &mut table,
                )
            };
            if status == WEIR_OK {
                let mut again = null_mut();
                assert_eq!(weir_keyed_attach(region.mem(), bytes, &mut again), WEIR_OK);
                assert_eq!(again, table);
                let mut short = null_mut();
                let cut = input.below(bytes as u64) as usize;
                assert_eq!(
                    weir_keyed_attach(region.mem(), cut, &mut short),
                    WEIR_ERR_REGION_SIZE
                );
                assert!(short.is_null());
            }
            memory = Some(region);
            status
        }
    };
    trace!("made: {status:?}");
    if buckets == 0 || buckets > WEIR_KEYED_MAX_BUCKETS {
        assert_ne!(status, WEIR_OK);
    }
    if overflow > WEIR_KEYED_OVERFLOW_SHARED {
        assert_eq!(status, WEIR_ERR_KEYED_OVERFLOW);
    }
    if status != WEIR_OK {
        assert!(table.is_null());
        return;
    }
    let mut model = if gcra {
        Model::Gcra(
            gcra_limit,
            (0..KEYS).map(|_| weir_gcra { state: 0 }).collect(),
        )
    } else {
        Model::Rate(
            rate_limit,
            (0..KEYS).map(|_| weir_rate { state: 0 }).collect(),
        )
    };
    // The model holds while nothing has overflowed and time has not gone
    // back; `shared` counts the calls the shared word admitted.
    let mut exact = true;
    let mut overflows = 0u64;
    let mut clock = Clock::new(&mut input);
    let mut latest = i64::MIN;
    // Counting on for half the tables (read from the low bit of the first
    // hash key, so that the corpus's inputs read as they did): each answer
    // counted as its text in weir.h says, checked with every reading and
    // at the end.
    let counting = seed0 & 1 == 1;
    if counting {
        assert_eq!(weir_keyed_start_counting(table), WEIR_OK);
    }
    let mut counted = weir_counts::default();
    let mut shortest = interval(&rate_limit);
    while !input.is_empty() {
        if input.one_in(12) {
            reconfigure(table, &mut input, &mut model, &mut burst);
            if let Model::Rate(limit, _) = &model {
                if interval(limit) > shortest {
                    exact = false;
                }
                shortest = shortest.min(interval(limit));
            }
        }
        let now = clock.tick(&mut input);
        if now < latest {
            exact = false;
        }
        latest = latest.max(now);
        let key = input.below(KEYS as u64) as usize;
        let bytes = (key as u64).to_le_bytes();
        let n = match input.u8() % 8 {
            0 => input.i64(),
            1 => 1 + input.below(burst as u64 + 1) as i64,
            _ => 1,
        };
        let mut wait = -7;
        let next = weir_keyed_next(table, now, bytes.as_ptr().cast(), 8, &mut wait);
        let mut decision = 99;
        let status = if n == 1 && input.even() {
            // The same call through weir_keyed_allow, which answers only
            // admitted or not: the overflow count tells which decided.
            let before = overflow_count(table);
            let allowed = weir_keyed_allow(table, now, bytes.as_ptr().cast(), 8);
            let overflowed = overflow_count(table) > before;
            if now >= 0 {
                decision = match (overflowed, allowed) {
                    (false, true) => WEIR_KEYED_ALLOWED,
                    (false, false) => WEIR_KEYED_REFUSED,
                    (true, true) => WEIR_KEYED_OVERFLOW_ADMITTED,
                    (true, false) => WEIR_KEYED_OVERFLOW_REFUSED,
                };
                WEIR_OK
            } else {
                assert!(!allowed && !overflowed);
                WEIR_ERR_NEGATIVE
            }
        } else {
            weir_keyed_decide(table, now, bytes.as_ptr().cast(), 8, n, &mut decision)
        };
        trace!("key {key} at {now}, n {n}: next {next:?} {wait}, {status:?} {decision}");
        match (status, decision) {
            (WEIR_OK, WEIR_KEYED_ALLOWED | WEIR_KEYED_OVERFLOW_ADMITTED) => {
                counted.admitted += 1;
                counted.units += n as f64;
            }
            (WEIR_OK, _) => counted.refused += 1,
            _ => counted.errors += 1,
        }
        if now < 0 {
            assert_eq!((next, wait), (WEIR_ERR_NEGATIVE, -7));
            assert_eq!((status, decision), (WEIR_ERR_NEGATIVE, 99));
            continue;
        }
        assert_eq!(next, WEIR_OK);
        assert!(wait >= 0);
        if n < 1 || n > burst {
            assert_eq!((status, decision), (WEIR_ERR_KEYED_COUNT, 99));
            continue;
        }
        assert_eq!(status, WEIR_OK);
        if wait == 0 && n == 1 && !skipped("next") {
            assert_ne!(decision, WEIR_KEYED_REFUSED, "no wait but refused");
        }
        match decision {
            WEIR_KEYED_ALLOWED | WEIR_KEYED_REFUSED => {}
            WEIR_KEYED_OVERFLOW_ADMITTED => {
                assert_ne!(overflow, WEIR_KEYED_OVERFLOW_REFUSE);
                overflows += 1;
                exact = false;
            }
            WEIR_KEYED_OVERFLOW_REFUSED => {
                assert_ne!(overflow, WEIR_KEYED_OVERFLOW_ADMIT);
                overflows += 1;
                exact = false;
            }
            other => panic!("decision {other}"),
        }
        let lone = model.decide(key, now, n);
        let rate_many = !gcra && n > 1;
        if exact && !rate_many && !skipped("model") {
            let admitted = decision == WEIR_KEYED_ALLOWED;
            assert_eq!(
                admitted, lone,
                "key {key} at {now}, n {n}: table {decision}, lone word {lone}"
            );
        }
        if rate_many {
            // The model's rate words take one event a call: it cannot
            // follow a call of several.
            exact = false;
        }
        if input.one_in(16) {
            let mut reading = weir_keyed_reading::default();
            assert_eq!(weir_keyed_read(table, &mut reading), WEIR_OK);
            assert_eq!(reading.buckets, buckets);
            assert_eq!(reading.slots, 8 * buckets);
            assert!(reading.occupied <= reading.slots);
            assert_eq!(reading.overflows, overflows);
            assert_eq!(reading.overflow_policy, overflow);
            let kind = if gcra {
                WEIR_KEYED_KIND_GCRA
            } else {
                WEIR_KEYED_KIND_RATE
            };
            assert_eq!(reading.kind, kind);
            check_counts(table, counting, counted);
        }
    }
    check_counts(table, counting, counted);
    weir_keyed_free(table);
    drop(memory);
});

/// A new limit for `table`, whose lone words are `model`'s: of its kind
/// (taken by the table and the model, `burst` following), of the other
/// kind (`WEIR_ERR_KEYED_KIND_CHANGE`), a GCRA limit on another tick
/// (`WEIR_ERR_KEYED_TICK_CHANGE`), or NULL (`WEIR_ERR_NULL`); an error
/// changes nothing, as the decisions after it check against the model.
fn reconfigure(table: *mut weir_keyed, input: &mut Input, model: &mut Model, burst: &mut i64) {
    let next_burst = BURSTS[input.below(5) as usize];
    let (gcra, rate) = limits(RATES[input.below(4) as usize], next_burst);
    let is_gcra = matches!(model, Model::Gcra(..));
    let status = match input.u8() % 8 {
        0 => {
            // Another kind.
            let status = if is_gcra {
                weir_keyed_reconfigure_rate(table, &rate)
            } else {
                weir_keyed_reconfigure(table, &gcra)
            };
            assert_eq!(status, WEIR_ERR_KEYED_KIND_CHANGE);
            status
        }
        1 => {
            // Another tick: 10^8 a second is past tick 0 (and past the
            // rate word's fastest, so a GCRA limit only).
            let mut fine = gcra;
            assert_eq!(weir_gcra_limit_new(1e8, 3, &mut fine), WEIR_OK);
            assert_ne!(fine.shift, gcra.shift);
            let status = weir_keyed_reconfigure(table, &fine);
            let expect = if is_gcra {
                WEIR_ERR_KEYED_TICK_CHANGE
            } else {
                WEIR_ERR_KEYED_KIND_CHANGE
            };
            assert_eq!(status, expect);
            status
        }
        2 => {
            let status = if is_gcra {
                weir_keyed_reconfigure(table, std::ptr::null())
            } else {
                weir_keyed_reconfigure_rate(table, std::ptr::null())
            };
            assert_eq!(status, WEIR_ERR_NULL);
            status
        }
        _ => {
            match model {
                Model::Gcra(limit, _) => {
                    assert_eq!(weir_keyed_reconfigure(table, &gcra), WEIR_OK);
                    *limit = gcra;
                }
                Model::Rate(limit, _) => {
                    assert_eq!(weir_keyed_reconfigure_rate(table, &rate), WEIR_OK);
                    *limit = rate;
                }
            }
            *burst = next_burst;
            WEIR_OK
        }
    };
    trace!("reconfigured to burst {next_burst}: {status:?}");
}

/// The calls the table has seen overflow.
fn overflow_count(table: *const weir_keyed) -> u64 {
    let mut reading = weir_keyed_reading::default();
    assert_eq!(weir_keyed_read(table, &mut reading), WEIR_OK);
    reading.overflows
}

/// The sizing calls: a chance in [0, 1] (NaN only for a count that is NaN,
/// infinite or negative), and buckets that meet the chance asked.
fn sizing(input: &mut Input) {
    let (keys, slots) = (input.f64(), input.f64());
    let chance = weir_keyed_overflow_chance(keys, slots);
    trace!("overflow chance of {keys} keys in {slots} slots: {chance}");
    let valid = |x: f64| x.is_finite() && x >= 0.0;
    if valid(keys) && valid(slots) {
        assert!((0.0..=1.0).contains(&chance));
    } else {
        assert!(chance.is_nan());
    }
    let keys = input.below(1 << 24);
    let chance = if input.even() {
        input.unit()
    } else {
        input.f64()
    };
    let mut buckets = 0xdead;
    let status = weir_keyed_buckets_for(keys, chance, &mut buckets);
    trace!("buckets for {keys} keys at {chance}: {status:?} {buckets}");
    if status == WEIR_OK {
        assert!((1..=WEIR_KEYED_MAX_BUCKETS).contains(&buckets));
        assert!(weir_keyed_overflow_chance(keys as f64, buckets as f64 * 8.0) <= chance);
    } else {
        assert_eq!(status, WEIR_ERR_KEYED_SIZING);
        assert_eq!(buckets, 0xdead);
    }
}
