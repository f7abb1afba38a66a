//! The bloom array's false refusals against the formula in its docs
//! (weir_core::bloom, "False refusals"), for both word kinds.

use weir_core::bloom::{Bloom, BloomLimit, BloomShape, LINE_WORDS};
use weir_core::gcra::GcraLimit;
use weir_core::rate::RateLimit;

fn choose(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// P[j other keys in a line, each on a uniform k-subset of its 8 words,
/// cover each of a key's k words at least m times], for j = 0..jobs: a
/// dynamic program over the (capped) cover count of each of the key's
/// words. For m = 1 it equals the closed form in the docs.
fn covered(k: usize, m: usize, jobs: usize) -> Vec<f64> {
    let states = (m + 1).pow(k as u32);
    let line = LINE_WORDS as u64;
    // The chance that another key's words meet the key's in exactly the
    // words of `meet` (a bit mask over the key's k words).
    let meet_chance: Vec<f64> = (0..1usize << k)
        .map(|meet| {
            let t = meet.count_ones() as u64;
            choose(line - k as u64, k as u64 - t) / choose(line, k as u64)
        })
        .collect();
    let digits = |state: usize| -> Vec<usize> {
        (0..k)
            .map(|i| state / (m + 1).pow(i as u32) % (m + 1))
            .collect()
    };
    let mut p = vec![0.0; states];
    p[0] = 1.0;
    let mut out = Vec::with_capacity(jobs);
    for _ in 0..jobs {
        out.push(
            (0..states)
                .filter(|&s| digits(s).iter().all(|&d| d >= m))
                .map(|s| p[s])
                .sum(),
        );
        let mut next = vec![0.0; states];
        for (s, &chance) in p.iter().enumerate() {
            if chance == 0.0 {
                continue;
            }
            let d = digits(s);
            for (meet, &q) in meet_chance.iter().enumerate() {
                let to: usize = (0..k)
                    .map(|i| {
                        let count = (d[i] + (meet >> i & 1)).min(m);
                        count * (m + 1).pow(i as u32)
                    })
                    .sum();
                next[to] += chance * q;
            }
        }
        p = next;
    }
    out
}

/// The docs' closed form for m = 1: inclusion–exclusion over the key's
/// words that no other key covers.
fn covered_once(k: u64, j: i32) -> f64 {
    (0..=k)
        .map(|i| {
            let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
            sign * choose(k, i) * (choose(8 - i, k) / choose(8, k)).powi(j)
        })
        .sum()
}

/// F(N, M, k, f): the fraction of N keys in M words, each asking a fraction
/// f of its burst in one window, refused before they have asked it.
fn false_refusal(keys: f64, words: f64, k: usize, f: f64) -> f64 {
    let m = (1.0 / f).floor() as usize;
    let lambda = keys / (words / LINE_WORDS as f64);
    let jobs = (lambda * 4.0) as usize + 40;
    let cover = covered(k, m, jobs);
    let mut poisson = (-lambda).exp();
    let mut sum = 0.0;
    for (j, c) in cover.iter().enumerate() {
        sum += poisson * c;
        poisson *= lambda / (j + 1) as f64;
    }
    sum
}

/// Keys 0..keys each ask `asks` events inside one window, in interleaved
/// rounds (every key's first, then every key's second, ...); the count of
/// keys refused before their last ask.
fn refused_early(bloom: &Bloom, keys: u32, asks: u32) -> usize {
    let mut allowed = vec![0u32; keys as usize];
    let mut now = 0;
    for _ in 0..asks {
        for key in 0..keys {
            now += 1;
            if bloom.allow(now, &key.to_le_bytes()) {
                allowed[key as usize] += 1;
            }
        }
    }
    allowed.iter().filter(|&&n| n < asks).count()
}

fn limits(burst: i64) -> [BloomLimit; 2] {
    // Slow enough that nothing refills within the test's nanoseconds.
    [
        RateLimit::new(1.0, burst).unwrap().into(),
        GcraLimit::new(1e-3, burst).unwrap().into(),
    ]
}

#[test]
fn the_closed_form_and_the_program_agree() {
    for k in 1..=8usize {
        let program = covered(k, 1, 12);
        for (j, p) in program.iter().enumerate() {
            let closed = covered_once(k as u64, j as i32);
            assert!((p - closed).abs() < 1e-12, "k {k} j {j}: {p} vs {closed}");
        }
    }
}

#[test]
fn the_docs_examples_hold() {
    let full = false_refusal(50_000.0, 2f64.powi(20), 3, 1.0);
    assert!((full - 0.016).abs() < 0.0005, "{full}");
    let half = false_refusal(1e6, 2f64.powi(24), 3, 0.5);
    assert!((half - 3.0e-4).abs() < 0.05e-4, "{half}");
    let whole = false_refusal(1e6, 2f64.powi(24), 3, 1.0);
    assert!((whole - 0.023).abs() < 0.0005, "{whole}");
}

/// Measured against predicted: the formula counts every key whose words
/// are all shared enough as refused. At the whole burst nearly all are; at
/// half of it only those that ask after a shared word fills (about two in
/// three of them), so the measure stays under F, and above half of it.
fn check(size_log2: u32, keys: u32, burst: i64, asks: u32, floor: f64) {
    let k = 3;
    let f = f64::from(asks) / burst as f64;
    let predicted = false_refusal(f64::from(keys), 2f64.powi(size_log2 as i32), k, f);
    for (seed, limit) in limits(burst).into_iter().enumerate() {
        let shape = BloomShape::new(size_log2, k as u32, limit, seed as u64, 77).unwrap();
        let bloom = Bloom::new(shape).unwrap();
        let early = refused_early(&bloom, keys, asks);
        let expected = predicted * f64::from(keys);
        let sigma = expected.sqrt();
        eprintln!(
            "2^{size_log2} words, {keys} keys, f {f}: {early} refused early, formula {expected:.1}"
        );
        assert!(
            (early as f64) <= expected * 1.05 + 4.0 * sigma,
            "{early} refused early, formula {expected:.1}"
        );
        assert!(
            (early as f64) >= expected * floor - 4.0 * sigma,
            "{early} refused early, formula {expected:.1}"
        );
    }
}

#[test]
fn false_refusals_at_the_whole_burst_follow_the_formula() {
    check(20, 50_000, 4, 4, 0.85);
}

#[test]
fn false_refusals_at_half_the_burst_follow_the_formula() {
    check(18, 60_000, 4, 2, 0.5);
}
