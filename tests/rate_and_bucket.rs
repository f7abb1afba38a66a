//! The rate word, the bloom array and the token bucket through the C ABI,
//! over random traces: every call that returns an error (NULL,
//! misaligned or foreign pointers, a limit weir did not make, a negative
//! `now`, a cost refused outright) and every reading, slipped in anywhere,
//! leaves every later answer as it was; the word's bound holds at every
//! phase of the 512 ns grid; and a rate word in shared memory (laid in
//! caller memory, as C does) answers as the one on the stack.

#[path = "../weir-core/tests/grid/mod.rs"]
mod grid;

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use grid::{instants, start, step};
use proptest::prelude::*;
use weir::bloom::*;
use weir::bucket::*;
use weir::rate::*;
use weir::status::weir_status::WEIR_OK;

const NEVER: i64 = i64::MAX;

fn limit() -> impl Strategy<Value = weir_rate_limit> {
    let burst = prop_oneof![Just(1i64), Just(100i64), Just(1023i64), 1..=1023i64];
    let window = prop_oneof![
        2 => Just(WEIR_RATE_MIN_WINDOW_NS),
        2 => WEIR_RATE_MIN_WINDOW_NS..=2_000_000i64,
        1 => WEIR_RATE_MIN_WINDOW_NS..=1i64 << 50,
    ];
    (burst, window).prop_filter_map("accepted", |(burst, window)| {
        let mut limit = weir_rate_limit {
            interval_ns: 0,
            interval_frac: 0,
            burst: 0,
        };
        let per_s = burst as f64 * 1e9 / window as f64;
        (weir_rate_limit_new(per_s, burst, &mut limit) == WEIR_OK).then_some(limit)
    })
}

/// Ways to call the rate word that must fail and change nothing.
#[derive(Clone, Copy, Debug)]
enum Fault {
    NullWord,
    Misaligned,
    NullLimit,
    ForeignLimit(u8),
    NegativeNow(i64),
    /// Not a fault: a reading at this `now`.
    Reading(i64),
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        Just(Fault::NullWord),
        Just(Fault::Misaligned),
        Just(Fault::NullLimit),
        any::<u8>().prop_map(Fault::ForeignLimit),
        (i64::MIN..0).prop_map(Fault::NegativeNow),
        any::<i64>().prop_map(Fault::Reading),
    ]
}

fn foreign(limit: &weir_rate_limit, k: u8) -> weir_rate_limit {
    let mut bad = *limit;
    match k % 4 {
        0 => bad.burst = 0,
        1 => bad.burst = 1024,
        2 => (bad.interval_ns, bad.interval_frac) = (0, 0),
        _ => bad.interval_ns = u64::MAX,
    }
    bad
}

fn rate_trace() -> impl Strategy<Value = (weir_rate_limit, Vec<i64>)> {
    (limit(), start(), prop::collection::vec(step(), 1..200)).prop_map(|(limit, start, steps)| {
        let window = limit.interval_ns.saturating_mul(u64::from(limit.burst));
        let unit = i64::try_from(window).unwrap_or(i64::MAX);
        (limit, instants(unit, start, &steps))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn rate_word_faults_and_readings_change_nothing(
        (limit, nows) in rate_trace(),
        inserted in prop::collection::vec((fault(), any::<prop::sample::Index>()), 0..60),
    ) {
        let mut plain = weir_rate { state: 0 };
        let answers: Vec<bool> = nows.iter().map(|&now| weir_rate_allow(&mut plain, &limit, now)).collect();
        let mut at: Vec<Vec<Fault>> = vec![Vec::new(); nows.len()];
        for (fault, index) in inserted {
            at[index.index(nows.len())].push(fault);
        }
        let mut word = weir_rate { state: 0 };
        // A spare buffer for misaligned pointers, holding a copy of the word.
        let mut spare = [0u64; 3];
        for (i, &now) in nows.iter().enumerate() {
            for &fault in &at[i] {
                let before = word.state;
                let (allowed, next) = match fault {
                    Fault::NullWord => (
                        weir_rate_allow(null_mut(), &limit, now),
                        weir_rate_next(null(), &limit, now),
                    ),
                    Fault::Misaligned => {
                        spare[1] = word.state;
                        let odd = (spare.as_mut_ptr() as *mut u8).wrapping_add(4) as *mut weir_rate;
                        (weir_rate_allow(odd, &limit, now), weir_rate_next(odd, &limit, now))
                    }
                    Fault::NullLimit => (
                        weir_rate_allow(&mut word, null(), now),
                        weir_rate_next(&word, null(), now),
                    ),
                    Fault::ForeignLimit(k) => {
                        let bad = foreign(&limit, k);
                        (weir_rate_allow(&mut word, &bad, now), weir_rate_next(&word, &bad, now))
                    }
                    Fault::NegativeNow(negative) => (
                        weir_rate_allow(&mut word, &limit, negative),
                        weir_rate_next(&word, &limit, negative),
                    ),
                    Fault::Reading(other) => {
                        weir_rate_next(&word, &limit, other);
                        (false, NEVER)
                    }
                };
                prop_assert!(!allowed, "{:?} allowed", fault);
                prop_assert_eq!(next, NEVER, "{:?}", fault);
                prop_assert_eq!(word.state, before, "{:?} wrote", fault);
            }
            prop_assert_eq!(weir_rate_allow(&mut word, &limit, now), answers[i], "call {} at {}", i, now);
        }
        prop_assert_eq!(word.state, plain.state);
    }

    #[test]
    fn a_bloom_in_caller_memory_answers_as_the_word_and_faults_change_nothing(
        (limit, nows) in rate_trace(),
        faults in prop::collection::vec(0..4u8, 200),
    ) {
        // One hash: the key is one word, so it answers exactly as a lone
        // rate word does.
        let size_log2 = 3;
        let bytes = weir_bloom_footprint(size_log2);
        // The region must be 64-byte aligned (the layout's cache lines).
        #[repr(C, align(64))]
        #[derive(Clone, PartialEq, Debug)]
        struct Lines([u64; 16]);
        prop_assert_eq!(bytes, std::mem::size_of::<Lines>());
        let mut region = Lines([0; 16]);
        let mem = region.0.as_mut_ptr() as *mut c_void;
        prop_assert_eq!(weir_bloom_init_in(mem, bytes, size_log2, 1, &limit, 1, 2), WEIR_OK);
        let mut heap = null_mut();
        prop_assert_eq!(weir_bloom_new(size_log2, 1, &limit, 1, 2, &mut heap), WEIR_OK);
        let mut word = weir_rate { state: 0 };
        for (i, &now) in nows.iter().enumerate() {
            let before = region.clone();
            let mem = region.0.as_mut_ptr() as *mut c_void;
            let refused = match faults[i] {
                0 => weir_bloom_allow_in(null_mut(), bytes, now, b"k".as_ptr().cast(), 1),
                1 => weir_bloom_allow_in(mem, bytes - 8, now, b"k".as_ptr().cast(), 1),
                2 => weir_bloom_allow_in(mem, bytes, now, null(), 1),
                _ => weir_bloom_allow(null(), now, b"k".as_ptr().cast(), 1),
            };
            prop_assert!(!refused);
            prop_assert_eq!(&region, &before);
            let expected = weir_rate_allow(&mut word, &limit, now);
            let mem = region.0.as_mut_ptr() as *mut c_void;
            prop_assert_eq!(weir_bloom_allow_in(mem, bytes, now, b"k".as_ptr().cast(), 1), expected);
            prop_assert_eq!(weir_bloom_allow(heap, now, b"k".as_ptr().cast(), 1), expected);
            let wait = weir_rate_next(&word, &limit, now);
            prop_assert_eq!(weir_bloom_next_in(mem, bytes, now, b"k".as_ptr().cast(), 1), wait);
            prop_assert_eq!(weir_bloom_next(heap, now, b"k".as_ptr().cast(), 1), wait);
        }
        weir_bloom_free(heap);
    }

    #[test]
    fn bucket_faults_and_readings_change_nothing(
        rate in prop_oneof![Just(0.0), Just(7.0), Just(20.0), Just(3e8), Just(7.5e8), Just(1e9), (-3.0..9.0f64).prop_map(|e| 10f64.powf(e))],
        burst in prop_oneof![Just(0.0), Just(1.0), Just(2.5), Just(7.0), 1.0..1000.0f64],
        made in start(),
        steps in prop::collection::vec(step(), 1..150),
        inserted in prop::collection::vec((0..8u8, any::<i64>(), any::<prop::sample::Index>()), 0..50),
    ) {
        let interval = if rate > 0.0 { 1e9 / rate } else { 1e9 };
        let nows = instants(interval.clamp(8.0, 1e15) as i64, made, &steps);
        let mut plain = null_mut();
        if weir_bucket_new(rate, burst, made, &mut plain) != WEIR_OK {
            return Ok(());
        }
        let answers: Vec<bool> = nows.iter().map(|&now| weir_bucket_take(plain, now, 1.0)).collect();
        let mut at: Vec<Vec<(u8, i64)>> = vec![Vec::new(); nows.len()];
        for (kind, other, index) in inserted {
            at[index.index(nows.len())].push((kind, other));
        }
        let mut bucket = null_mut();
        prop_assert_eq!(weir_bucket_new(rate, burst, made, &mut bucket), WEIR_OK);
        for (i, &now) in nows.iter().enumerate() {
            for &(kind, other) in &at[i] {
                let bad = [0.0, -1.0, f64::NAN, f64::INFINITY, 1e300][usize::from(kind % 5)];
                match kind {
                    0..=4 => {
                        prop_assert!(!weir_bucket_take(bucket, now, bad));
                        prop_assert_eq!(weir_bucket_next(bucket, now, bad), NEVER);
                    }
                    5 => {
                        prop_assert!(!weir_bucket_take(null(), now, 1.0));
                        prop_assert_eq!(weir_bucket_tokens(null(), now), 0.0);
                    }
                    6 => {
                        weir_bucket_tokens(bucket, other);
                    }
                    _ => {
                        weir_bucket_next(bucket, other, 1.0);
                    }
                }
            }
            prop_assert_eq!(weir_bucket_take(bucket, now, 1.0), answers[i], "take {} at {}", i, now);
        }
        weir_bucket_free(bucket);
        weir_bucket_free(plain);
    }
}

#[test]
fn the_511_ns_phase_and_a_full_bucket_through_the_header() {
    let mut limit = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    assert_eq!(weir_rate_limit_new(19e6, 1023, &mut limit), WEIR_OK);
    let mut word = weir_rate { state: 0 };
    let admitted = (0..100_000)
        .filter(|_| weir_rate_allow(&mut word, &limit, 511))
        .count();
    assert_eq!(admitted, 1023);

    let mut bucket = null_mut();
    assert_eq!(weir_bucket_new(7.0, 7.0, 0, &mut bucket), WEIR_OK);
    assert_eq!(weir_bucket_tokens(bucket, 0), 7.0);
    assert_eq!(
        (0..8).filter(|_| weir_bucket_take(bucket, 0, 1.0)).count(),
        7
    );
    weir_bucket_free(bucket);
}

proptest! {
    /// A GCRA bloom region judged by its header's limit, then by a
    /// caller's (weir_charge_item.limit, a reload's new rate and burst):
    /// the key answers as a lone GCRA word given the old limit and then
    /// the new one, so its state carries over; the tokens admitted before
    /// the change keep the old bound over their stretch and those after
    /// it the new one; a limit of another tick is refused and charges
    /// nothing.
    #[test]
    fn a_bloom_region_judged_by_a_new_limit_keeps_its_words(
        old in (1u32..2000, 1i64..50),
        new in (1u32..2000, 1i64..50),
        gaps in prop::collection::vec(0i64..40_000_000, 1..300),
        change in any::<prop::sample::Index>(),
    ) {
        use weir::charge::*;
        use weir::gcra::*;
        let limit = |(rate, burst): (u32, i64)| {
            let mut l = weir_gcra_limit { per_token: 0, tolerance: 0, shift: 0, reserved: 0 };
            assert_eq!(weir_gcra_limit_new(f64::from(rate), burst, &mut l), WEIR_OK);
            l
        };
        let (a, b) = (limit(old), limit(new));
        prop_assert_eq!((a.shift, b.shift), (0, 0));
        #[repr(C, align(64))]
        #[derive(Clone, PartialEq, Debug)]
        struct Lines([u64; 16]);
        let bytes = weir_bloom_footprint(3);
        let mut region = Lines([0; 16]);
        let mem = region.0.as_mut_ptr() as *mut c_void;
        prop_assert_eq!(weir_bloom_init_gcra_in(mem, bytes, 3, 1, &a, 1, 2), WEIR_OK);
        let mut word = weir_gcra { state: 0 };
        let c = change.index(gaps.len());
        let mut now = 0i64;
        let (mut before, mut after) = (0i64, 0i64);
        let (mut first_after, mut last_before) = (None, 0i64);
        for (i, gap) in gaps.iter().enumerate() {
            now += gap;
            let judged_by = if i < c { &a } else { &b };
            let mut item: weir_charge_item = unsafe { std::mem::zeroed() };
            item.kind = WEIR_CHARGE_BLOOM_IN;
            item.target = region.0.as_mut_ptr() as *mut c_void;
            item.target_len = bytes;
            item.key = b"k".as_ptr().cast();
            item.key_len = 1;
            item.cost = 1.0;
            if i >= c {
                item.limit = (judged_by as *const weir_gcra_limit).cast();
                // A limit of another tick misreads the words: refused.
                let fine = limit((10_000_000, 1));
                prop_assert_eq!(fine.shift, 1);
                let mut wrong = item;
                wrong.limit = (&fine as *const weir_gcra_limit).cast();
                let kept = region.clone();
                let mut out = std::mem::MaybeUninit::<weir_charge_result>::zeroed();
                prop_assert_eq!(weir_charge_all(&wrong, 1, now, out.as_mut_ptr()), weir::status::weir_status::WEIR_ERR_GCRA_LIMIT_INVALID);
                prop_assert_eq!(&region, &kept);
                first_after.get_or_insert(now);
            }
            let mut out = std::mem::MaybeUninit::<weir_charge_result>::zeroed();
            prop_assert_eq!(weir_charge_all(&item, 1, now, out.as_mut_ptr()), WEIR_OK);
            let admitted = unsafe { out.assume_init() }.admitted;
            prop_assert_eq!(admitted, weir_gcra_allow(&mut word, judged_by, now), "call {} at {}", i, now);
            if admitted {
                if i < c { before += 1; last_before = now; } else { after += 1; }
            }
        }
        // Each stretch within its own policy's bound: burst + T × rate.
        let bound = |(rate, burst): (u32, i64), t: i64| burst + (t as i128 * rate as i128 / 1_000_000_000) as i64;
        prop_assert!(before <= bound(old, last_before), "{} before", before);
        if let Some(start) = first_after {
            prop_assert!(after <= bound(new, now - start), "{} after", after);
        }
    }
}
