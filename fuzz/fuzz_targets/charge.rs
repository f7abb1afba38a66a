//! All or nothing over several limits (`weir_charge_all`): two GCRA words,
//! two rate words, a bucket and a bloom region, with the fuzzer's limits,
//! then a run of calls each naming some of them (a word twice, now and
//! then) with the fuzzer's costs, on a clock that floods one instant and
//! goes backwards. One thread, so nothing races and the answer is exact:
//!
//! - an error or a refusal changes nothing at all (every word, the region's
//!   bytes, the bucket's tokens), and a refusal keeps nothing;
//! - a call of words alone is admitted exactly when a model admits it (each
//!   word asked alone first, then all charged one after another on a copy,
//!   each as its own call would), and then leaves the words as the model
//!   does; refused, it names the model's item and wait;
//! - the answer is sane: an admitted call names n, a refused one an item
//!   before n, and a wait that is not negative.
#![no_main]

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use libfuzzer_sys::fuzz_target;
use weir::bloom::*;
use weir::bucket::*;
use weir::charge::*;
use weir::gcra::*;
use weir::rate::*;
use weir::status::weir_status::*;
use weir_fuzz::{abort_on_panic, trace, Clock, Input};

/// A 64-byte aligned line, as a bloom region needs.
#[repr(C, align(64))]
struct Line([u64; 8]);

/// The limits a call can name.
struct Limits {
    gcra: [weir_gcra_limit; 2],
    rate: [weir_rate_limit; 2],
    gcras: [weir_gcra; 2],
    rates: [weir_rate; 2],
    bucket: *mut weir_bucket,
    region: Vec<Line>,
    region_len: usize,
}

fn gcra_limit(input: &mut Input) -> weir_gcra_limit {
    let mut limit = weir_gcra_limit {
        per_token: 0,
        tolerance: 0,
        shift: 0,
        reserved: 0,
    };
    let (rate, burst) = match input.u8() % 4 {
        0 => (input.f64(), input.i64()),
        _ => (1.0 + input.below(1000) as f64, 1 + input.below(5) as i64),
    };
    if weir_gcra_limit_new(rate, burst, &mut limit) != WEIR_OK {
        // A limit no constructor made: every item naming it is refused.
        limit.per_token = input.u64();
    }
    limit
}

fn rate_limit(input: &mut Input) -> weir_rate_limit {
    let mut limit = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    let (rate, burst) = match input.u8() % 4 {
        0 => (input.f64(), input.i64()),
        _ => (1.0 + input.below(1000) as f64, 1 + input.below(5) as i64),
    };
    if weir_rate_limit_new(rate, burst, &mut limit) != WEIR_OK {
        limit.burst = input.u32();
    }
    limit
}

impl Limits {
    fn new(input: &mut Input, now: i64) -> Limits {
        let gcra = [gcra_limit(input), gcra_limit(input)];
        let rate = [rate_limit(input), rate_limit(input)];
        let mut bucket = null_mut();
        let (rate_s, burst) = (input.below(100) as f64, 1.0 + input.below(5) as f64);
        assert_eq!(weir_bucket_new(rate_s, burst, now, &mut bucket), WEIR_OK);
        let region_len = weir_bloom_footprint(5);
        let mut region: Vec<Line> = (0..region_len / 64).map(|_| Line([0; 8])).collect();
        let mem = region.as_mut_ptr().cast::<c_void>();
        let key_limit = gcra_limit(input);
        let _ = weir_bloom_init_gcra_in(mem, region_len, 5, 1 + input.below(3) as u32, &key_limit, 1, 2);
        Limits {
            gcra,
            rate,
            gcras: [weir_gcra { state: 0 }, weir_gcra { state: 0 }],
            rates: [weir_rate { state: 0 }, weir_rate { state: 0 }],
            bucket,
            region,
            region_len,
        }
    }

    /// Everything a call can change, as values.
    fn state(&self, now: i64) -> Vec<u64> {
        let mut all = vec![
            self.gcras[0].state,
            self.gcras[1].state,
            self.rates[0].state,
            self.rates[1].state,
            weir_bucket_tokens(self.bucket, now).to_bits(),
            weir_bucket_next(self.bucket, now, 1.0) as u64,
        ];
        all.extend(self.region.iter().flat_map(|l| l.0));
        all
    }
}

/// An item: which limit (0, 1 GCRA words, 2, 3 rate words, 4 the bucket,
/// 5 a key of the region, 6 a kind that is none) and its cost.
fn item(limits: &mut Limits, which: u8, cost: f64, key: &[u8]) -> weir_charge_item {
    let mut item = weir_charge_item {
        kind: 0,
        reserved: 0,
        target: null_mut(),
        target_len: 0,
        limit: null(),
        key: key.as_ptr().cast(),
        key_len: key.len(),
        cost,
    };
    match which {
        0 | 1 => {
            let w = usize::from(which);
            item.kind = WEIR_CHARGE_GCRA;
            item.target = (&mut limits.gcras[w] as *mut weir_gcra).cast();
            item.limit = (&limits.gcra[w] as *const weir_gcra_limit).cast();
        }
        2 | 3 => {
            let w = usize::from(which - 2);
            item.kind = WEIR_CHARGE_RATE;
            item.target = (&mut limits.rates[w] as *mut weir_rate).cast();
            item.limit = (&limits.rate[w] as *const weir_rate_limit).cast();
        }
        4 => {
            item.kind = WEIR_CHARGE_BUCKET;
            item.target = limits.bucket.cast();
        }
        5 => {
            item.kind = WEIR_CHARGE_BLOOM_IN;
            item.target = limits.region.as_mut_ptr().cast();
            item.target_len = limits.region_len;
        }
        _ => item.kind = 77,
    }
    item
}

/// The model of a call of words alone: (the refusing item and its wait,
/// or `None`) and the words after. Each word asked alone first (as
/// weir_charge_all reads), then all charged one after another on a copy,
/// each by its own call (`n` rate events as `n` calls at one instant).
fn model(
    limits: &Limits,
    picks: &[(u8, f64)],
    now: i64,
) -> (Option<(usize, i64)>, [u64; 4]) {
    let mut words = [
        limits.gcras[0].state,
        limits.gcras[1].state,
        limits.rates[0].state,
        limits.rates[1].state,
    ];
    let wait = |words: &[u64; 4], which: u8, cost: f64| -> i64 {
        let n = cost as i64;
        let w = usize::from(which);
        if which < 2 {
            let word = weir_gcra { state: words[w] };
            let limit = &limits.gcra[w];
            let copy = &mut weir_gcra { state: word.state };
            if weir_gcra_allow_n(copy, limit, now, n) {
                0
            } else if n == 1 || weir_gcra_next(&word, limit, now) == i64::MAX {
                weir_gcra_next(&word, limit, now)
            } else {
                -1 // a wait for n > 1 is not read by the model
            }
        } else {
            let limit = &limits.rate[w - 2];
            let mut copy = weir_rate { state: words[w] };
            let fits = (1..=i64::from(limit.burst)).contains(&n)
                && (0..n).all(|_| weir_rate_allow(&mut copy, limit, now));
            if fits {
                0
            } else if n == 1 {
                weir_rate_next(&weir_rate { state: words[w] }, limit, now)
            } else {
                -1
            }
        }
    };
    let charge = |words: &mut [u64; 4], which: u8, cost: f64| -> bool {
        let n = cost as i64;
        let w = usize::from(which);
        if which < 2 {
            let mut word = weir_gcra { state: words[w] };
            let passed = weir_gcra_allow_n(&mut word, &limits.gcra[w], now, n);
            words[w] = word.state;
            passed
        } else {
            let limit = &limits.rate[w - 2];
            let mut copy = weir_rate { state: words[w] };
            let passed = (1..=i64::from(limit.burst)).contains(&n)
                && (0..n).all(|_| weir_rate_allow(&mut copy, limit, now));
            if passed {
                words[w] = copy.state;
            }
            passed
        }
    };
    let start = words;
    for (i, &(which, cost)) in picks.iter().enumerate() {
        let w = wait(&start, which, cost);
        if w != 0 {
            return (Some((i, w)), start);
        }
    }
    for (i, &(which, cost)) in picks.iter().enumerate() {
        let before = words;
        if !charge(&mut words, which, cost) {
            return (Some((i, wait(&before, which, cost))), start);
        }
    }
    (None, words)
}

fuzz_target!(|data: &[u8]| {
    abort_on_panic();
    let mut input = Input::new(data);
    let mut clock = Clock::new(&mut input);
    let mut limits = Limits::new(&mut input, clock.now);
    let keys: [&[u8]; 3] = [b"org", b"team", b"user"];
    while !input.is_empty() {
        let now = clock.tick(&mut input);
        let n = if input.one_in(16) {
            input.below(WEIR_CHARGE_MAX_ITEMS as u64 + 2) as usize
        } else {
            input.below(5) as usize
        };
        let picks: Vec<(u8, f64)> = (0..n)
            .map(|_| {
                let which = (input.u8() % 8).min(6);
                let cost = match input.u8() % 8 {
                    0 => input.f64(),
                    1 => input.unit() * 3.0,
                    _ => 1.0 + input.below(3) as f64,
                };
                (which, cost)
            })
            .collect();
        let key = keys[input.below(3) as usize];
        let items: Vec<weir_charge_item> = picks
            .iter()
            .map(|&(which, cost)| item(&mut limits, which, cost, key))
            .collect();
        let before = limits.state(now);
        let words_alone = picks.iter().all(|&(which, _)| which < 4);
        let (expected, words_after) = if words_alone {
            model(&limits, &picks, now)
        } else {
            (None, [0; 4])
        };
        let mut out = weir_charge_result {
            wait: -1,
            index: u32::MAX,
            kept: u32::MAX,
            admitted: false,
        };
        let status = weir_charge_all(items.as_ptr(), n, now, &mut out);
        trace!("charge {picks:?} at {now}: {status:?} {out:?}");
        let after = limits.state(now);
        if status != WEIR_OK {
            assert_eq!(before, after, "an error ({status:?}) charged");
            assert!(!out.admitted && out.index as usize <= n);
            continue;
        }
        if out.admitted {
            assert_eq!((out.index as usize, out.wait, out.kept), (n, 0, 0));
        } else {
            assert!((out.index as usize) < n && out.wait >= 0 && out.kept == 0, "{out:?}");
            assert_eq!(before, after, "a refusal charged: {out:?}");
        }
        // Words alone, with valid limits and whole costs (else an error):
        // the model's answer exactly.
        if words_alone {
            match expected {
                None => {
                    assert!(out.admitted, "{picks:?} at {now}: {out:?}");
                    assert_eq!(after[..4], words_after[..], "{picks:?} at {now}");
                }
                Some((index, wait)) => {
                    assert!(!out.admitted, "{picks:?} at {now}: admitted");
                    assert_eq!(out.index as usize, index, "{picks:?} at {now}: {out:?}");
                    if wait > 0 {
                        assert_eq!(out.wait, wait, "{picks:?} at {now}: {out:?}");
                    }
                }
            }
        }
    }
    weir_bucket_free(limits.bucket);
});
