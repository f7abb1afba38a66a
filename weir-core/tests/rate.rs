//! The rate word and the bloom array under real threads: one word and one
//! bloom key hammered at once, and clocks that run out of step; and a
//! hierarchy of them charged all or nothing (weir_core::charge) by
//! racing threads.

use std::sync::atomic::AtomicU64;
use std::thread;

use weir_core::bloom::{Bloom, BloomShape};
use weir_core::rate::{self, RateLimit};

const SECOND: i64 = 1_000_000_000;
const MS: i64 = 1_000_000;
const THREADS: usize = 4;

fn limit(per_s: f64, burst: i64) -> RateLimit {
    RateLimit::new(per_s, burst).unwrap()
}

/// Runs `call` `calls` times on each of [`THREADS`] threads, with the
/// thread's number and the call's; returns how many it allowed in all.
fn hammer(calls: i64, call: impl Fn(usize, i64) -> bool + Sync) -> i64 {
    thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let call = &call;
                scope.spawn(move || (0..calls).filter(|&i| call(t, i)).count() as i64)
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

#[test]
fn threads_never_pass_the_burst_of_one_word() {
    let limit = limit(10.0, 50);
    let word = AtomicU64::new(0);
    let allowed = hammer(20_000, |_, _| rate::allow(&word, &limit, SECOND));
    assert_eq!(allowed, 50);
    assert_eq!(rate::next(&word, &limit, SECOND), 5 * SECOND);
}

#[test]
fn clocks_out_of_step_get_one_burst_per_window() {
    // Each thread walks 10 s in 1 ms steps on its own, so the threads' clocks
    // run ahead of and behind each other. A window is 1 s of 10 events, and
    // an earlier clock counts against the open window: about ten windows
    // open, each admitting at most ten.
    let limit = limit(10.0, 10);
    let word = AtomicU64::new(0);
    let allowed = hammer(10_000, |_, i| rate::allow(&word, &limit, i * MS));
    assert!(allowed <= 11 * 10, "{allowed} allowed");
    assert!(allowed >= 9 * 10, "{allowed} allowed");
}

#[test]
fn a_bloom_key_under_threads_gets_its_burst_k_times_at_most() {
    for hashes in [1, 3] {
        let bloom = Bloom::new(BloomShape::new(12, hashes, limit(1.0, 5), 1, 2).unwrap()).unwrap();
        let allowed = hammer(20_000, |_, _| bloom.allow(SECOND, b"hot"));
        assert!(allowed >= 5, "k={hashes}: {allowed}");
        assert!(allowed <= 5 * i64::from(hashes), "k={hashes}: {allowed}");
        if hashes == 1 {
            assert_eq!(allowed, 5);
        }
    }
}

#[test]
fn keys_of_different_threads_stay_apart() {
    // Each thread has its own 1000 keys, three calls each, burst 2.
    let bloom = Bloom::new(BloomShape::new(20, 3, limit(1.0, 2), 3, 4).unwrap()).unwrap();
    let allowed = hammer(3000, |t, i| {
        let key = (t as u64) << 32 | (i % 1000) as u64;
        bloom.allow(SECOND, &key.to_le_bytes())
    });
    // 4000 keys × burst 2, less the rare key whose words others filled.
    assert!(allowed <= 8000);
    assert!(allowed >= 7960, "{allowed}");
}

/// Threads charge [organisation, team, user] hierarchies at one instant: a
/// GCRA word for the organisation (5 tokens), rate words for two teams (3
/// each), bloom keys of one word for four users (2 each), half the calls
/// read first (charge_all), half not (charge_in_order). No limit admits
/// more than it holds, and every unit spent is an admitted call's or a
/// charge its call kept.
#[test]
fn racing_hierarchies_never_pass_a_bound() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use weir_core::charge::{self, ChargeAnswer, ChargeItem};
    use weir_core::gcra::{self, GcraLimit};
    let org_limit = GcraLimit::new(1.0, 5).unwrap();
    let team_limit = limit(1.0, 3);
    let shape = BloomShape::new(10, 1, GcraLimit::new(1.0, 2).unwrap(), 3, 4).unwrap();
    let users: [&[u8]; 4] = [b"ann", b"bob", b"cy", b"dee"];
    let slots: Vec<usize> = users.iter().flat_map(|u| shape.slots(u)).collect();
    assert!(
        slots
            .iter()
            .enumerate()
            .all(|(i, s)| !slots[..i].contains(s)),
        "the users share a word"
    );
    let now = 5 * SECOND;
    let rounds = if cfg!(miri) { 2 } else { 200 };
    for round in 0..rounds {
        let org = AtomicU64::new(0);
        let teams = [AtomicU64::new(0), AtomicU64::new(0)];
        let bloom = Bloom::new(shape).unwrap();
        let admitted: [AtomicUsize; 7] = Default::default();
        let kept = AtomicUsize::new(0);
        hammer(8, |t, i| {
            let user = (t + i as usize) % 4;
            let items = [
                ChargeItem::Gcra {
                    word: &org,
                    limit: org_limit,
                    cost: 1,
                },
                ChargeItem::Rate {
                    word: &teams[user / 2],
                    limit: team_limit,
                    cost: 1,
                },
                ChargeItem::Bloom {
                    shape: &bloom.shape(),
                    lines: bloom.lines(),
                    key: users[user],
                    cost: 1,
                },
            ];
            let answer = if i % 2 == 0 {
                charge::charge_all(&items, now)
            } else {
                charge::charge_in_order(&items, now)
            }
            .unwrap();
            match answer {
                ChargeAnswer::Admitted => {
                    for w in [0, 1 + user / 2, 3 + user] {
                        admitted[w].fetch_add(1, Ordering::Relaxed);
                    }
                    true
                }
                ChargeAnswer::Refused { kept: k, .. } => {
                    kept.fetch_add(k, Ordering::Relaxed);
                    false
                }
            }
        });
        // What each limit would still admit, asked of a copy.
        let left_gcra = |word: &AtomicU64, limit: &GcraLimit| {
            let copy = AtomicU64::new(word.load(Ordering::Relaxed));
            (0..10).filter(|_| gcra::allow(&copy, limit, now)).count()
        };
        let left_rate = |word: &AtomicU64| {
            let copy = AtomicU64::new(word.load(Ordering::Relaxed));
            (0..10)
                .filter(|_| rate::allow(&copy, &team_limit, now))
                .count()
        };
        let key_limit = GcraLimit::new(1.0, 2).unwrap();
        let spent: Vec<usize> = [
            5 - left_gcra(&org, &org_limit),
            3 - left_rate(&teams[0]),
            3 - left_rate(&teams[1]),
        ]
        .into_iter()
        .chain(
            slots
                .iter()
                .map(|&s| 2 - left_gcra(&bloom.lines()[s / 8].0[s % 8], &key_limit)),
        )
        .collect();
        let bursts = [5, 3, 3, 2, 2, 2, 2];
        let mut beyond = 0;
        for w in 0..7 {
            let got = admitted[w].load(Ordering::Relaxed);
            assert!(
                got <= bursts[w],
                "round {round}: limit {w} admitted {got} of {}",
                bursts[w]
            );
            assert!(
                spent[w] >= got,
                "round {round}: limit {w}: {} spent, {got} admitted",
                spent[w]
            );
            beyond += spent[w] - got;
        }
        assert_eq!(beyond, kept.load(Ordering::Relaxed), "round {round}");
    }
}
