//! The figures the breaker's header section (src/breaker.rs, weir_breaker)
//! states in words, measured on the bay's outage at the preset: 100 calls a
//! second, every call failing from 5 s to 35 s, over eight seeds.

use bay::scenarios::{breaker, BreakerKnobs};

#[test]
fn the_preset_through_an_outage_matches_the_header() {
    let k = BreakerKnobs::default();
    for seed in 1..=8 {
        let s = breaker(&k, seed);
        let note = |name: &str| s.notes.iter().find(|(n, _)| *n == name).unwrap().1;
        // "about 9 in 10 calls of the first 5 s still reach it"
        let early = note("reach dead backend, first 5 s");
        assert!((0.85..0.93).contains(&early), "seed {seed}: {early}");
        // "about a fifth of the calls of a 30 s outage"
        let whole = note("reach dead backend, whole outage");
        assert!((0.19..0.23).contains(&whole), "seed {seed}: {whole}");
        // "refusals start 2 to 3 s into the outage"
        let start = note("first refusal after outage starts (s)");
        assert!((2.0..3.0).contains(&start), "seed {seed}: {start}");
        // "the last refusal comes 8 to 11 s after recovery"
        let stop = note("last refusal after recovery (s)");
        assert!((8.0..11.0).contains(&stop), "seed {seed}: {stop}");
        // "from 10 s into the outage on, one or two calls in a hundred"
        let (through, refused) = (s.column("through"), s.column("refused"));
        let t: f64 = through[15..35].iter().sum();
        let r: f64 = refused[15..35].iter().sum();
        let steady = t / (t + r);
        assert!((0.005..0.02).contains(&steady), "seed {seed}: {steady}");
        // Before the outage, nothing is refused.
        assert!(refused[..5].iter().all(|&r| r == 0.0));
    }
}
