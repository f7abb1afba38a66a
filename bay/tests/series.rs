//! The series themselves: reproducible per seed, and each scenario's own
//! figures where docs/design.md states them.

use bay::scenarios::{self, ALL};

#[test]
fn the_same_seed_gives_the_same_series_and_another_seed_another() {
    for sc in ALL {
        let d = sc.defaults();
        assert_eq!((sc.run)(&d, 7), (sc.run)(&d, 7), "{}", sc.id);
    }
    let b = scenarios::BreakerKnobs::default();
    assert_ne!(scenarios::breaker(&b, 1), scenarios::breaker(&b, 2));
}

#[test]
fn the_limiters_pass_21_20_40_each_burst_as_scenario_1_says() {
    let s = scenarios::limiters(&scenarios::LimitersKnobs::default(), 0);
    for burst in 1..=4 {
        let last = burst * 40 - 1;
        assert_eq!(s.column("bucket")[last], 21.0 * burst as f64);
        assert_eq!(s.column("sliding")[last], 20.0 * burst as f64);
        assert_eq!(s.column("period")[last], 40.0 * burst as f64);
    }
}

#[test]
fn every_jitter_stays_under_its_ceiling() {
    let s = scenarios::backoff(&scenarios::BackoffKnobs::default(), 3);
    let ceiling = s.column("ceiling ms");
    assert_eq!(ceiling, [100.0, 200.0]);
    for (i, &c) in ceiling.iter().enumerate() {
        assert_eq!(s.column("rigid max")[i], c);
        assert!(s.column("full max")[i] <= c && s.column("equal max")[i] <= c);
        assert!(s.column("spread max")[i] <= c * 1.2);
    }
    let counted: f64 = ["rigid", "full", "equal", "decorrelated", "spread"]
        .iter()
        .map(|j| s.column(j).iter().sum::<f64>())
        .sum();
    assert_eq!(counted, 5.0 * 2.0 * 10_000.0);
}

#[test]
fn the_bloom_follows_the_headers_formula() {
    let s = scenarios::bloom(&scenarios::BloomKnobs::default(), 5);
    for (m, f) in s.column("measured").iter().zip(s.column("formula")) {
        assert!((m - f).abs() < 0.12, "{m} against {f}");
    }
}

#[test]
fn a_bad_policy_plots_nothing_and_says_so() {
    let b = scenarios::BreakerKnobs {
        floor: 3.0, // above k
        ..Default::default()
    };
    let s = scenarios::breaker(&b, 1);
    assert!(s.columns.is_empty() && !s.notes.is_empty());
}

#[test]
fn the_c_literal_names_each_policy_field_once() {
    let sc = bay::Scenario::find("breaker").unwrap();
    let c = sc.c_literal(&sc.defaults());
    for field in [
        ".k = 1.5,",
        ".floor = 1.1,",
        ".protection = 5.0,",
        ".probe_ns = 1000000000,",
        ".size = 40,",
        ".window_ns = 10000000000,",
    ] {
        assert_eq!(c.matches(field).count(), 1, "{field} in {c}");
    }
}

#[test]
fn the_retry_panels_c_gives_the_budget_and_the_backoff() {
    let sc = bay::Scenario::find("retry").unwrap();
    let c = sc.c_literal(&sc.defaults());
    assert_eq!(
        c.matches("static const weir_budget_policy policy = {")
            .count(),
        1,
        "{c}"
    );
    assert_eq!(
        c.matches("static const weir_backoff backoff = {").count(),
        1,
        "{c}"
    );
    for field in [
        ".form = 1,",
        ".percent = 0.2,",
        ".base_ns = 100000000,",
        ".factor = 2.0,",
        ".cap_ns = 1000000000,",
        ".attempts = 3,",
        ".jitter = 4,",
        ".spread = 0.2,",
    ] {
        assert_eq!(c.matches(field).count(), 1, "{field} in {c}");
    }
}

#[test]
fn the_classes_panel_refuses_the_least_important_first() {
    for seed in [1, 2, 3] {
        let s = scenarios::classes(&scenarios::ClassesKnobs::default(), seed);
        let total = |name: &str| s.column(name).iter().sum::<f64>();
        let first = |name: &str| s.column(name).iter().position(|&v| v > 0.0);
        // Refusals fall on the classes in their order: SHEDDABLE most and
        // first, CRITICAL_PLUS least and last.
        let classes = ["SHEDDABLE", "SHEDDABLE_PLUS", "CRITICAL", "CRITICAL_PLUS"];
        let shares = [0.3, 0.2, 0.4, 0.1];
        let refused: Vec<f64> = classes
            .iter()
            .zip(shares)
            .map(|(c, share)| total(&format!("{c} refused")) / share)
            .collect();
        assert!(
            refused.windows(2).all(|w| w[0] >= w[1]),
            "{seed}: {refused:?}"
        );
        assert!(refused[0] > 0.0, "{seed}: nothing refused");
        let started: Vec<usize> = classes
            .iter()
            .map(|c| first(&format!("{c} refused")).unwrap_or(usize::MAX))
            .collect();
        assert!(
            started.windows(2).all(|w| w[0] <= w[1]),
            "{seed}: {started:?}"
        );
    }
}

#[test]
fn the_partitions_panel_borrows_gives_back_and_never_passes_the_limit() {
    let k = scenarios::PartitionsKnobs::default();
    for seed in [1, 2, 3] {
        let s = scenarios::partitions(&k, seed);
        assert_eq!(s.notes, vec![("calls let in with the limit full", 0.0)]);
        let (limit, flying) = (s.column("limit"), s.column("flying"));
        assert!(flying.iter().zip(limit).all(|(f, l)| f <= l), "{seed}");
        let a = s.column("A flying");
        let b = s.column("B flying");
        // Before B's burst (0 to 10 s) A holds its room, 20, and its
        // borrow cap, 10, at once. In the burst (from 12 s, once A's
        // borrowed calls are back) B averages most of its own room and A
        // little over its own: A borrows again only at the moments B has
        // room to spare and no claim.
        let at = |t: f64| (t * 10.0) as usize - 1;
        let mean =
            |c: &[f64]| c[at(12.0)..at(20.0)].iter().sum::<f64>() / (at(20.0) - at(12.0)) as f64;
        assert!(
            (at(2.0)..at(10.0)).any(|i| a[i] == 30.0),
            "{seed}: A never borrowed"
        );
        assert!(
            (at(2.0)..at(10.0)).all(|i| a[i] <= 30.0 && b[i] == 0.0),
            "{seed}"
        );
        assert!(mean(a) <= 23.0, "{seed}: A kept B's room: {}", mean(a));
        assert!(mean(b) >= 16.0, "{seed}: B never got its room: {}", mean(b));
    }
}

#[test]
fn the_latency_step_panel_shows_the_limit_fall_and_recover_and_the_baseline_follow_down() {
    for seed in [1, 2, 3] {
        let s = scenarios::latency_step(&scenarios::StepKnobs::default(), seed);
        let note = |name: &str| s.notes.iter().find(|n| n.0 == name).unwrap().1;
        let (before, lowest) = (
            note("limit before the step up"),
            note("lowest limit in the step"),
        );
        assert!(lowest < before / 2.0, "{seed}: {lowest} of {before}");
        let limit = s.column("limit");
        let base = s.column("baseline ms");
        // At 29.9 s, still in the step, the limit is back over where it
        // was; the baseline is 40 ms there and back near 10 ms by the end.
        let at = |t: f64| (t * 10.0) as usize - 1;
        assert!(
            limit[at(29.9)] >= before,
            "{seed}: {} of {before}",
            limit[at(29.9)]
        );
        assert!(
            (base[at(29.9)] - 40.0).abs() < 2.0,
            "{seed}: {}",
            base[at(29.9)]
        );
        assert!(
            (base[at(50.0)] - 10.0).abs() < 1.0,
            "{seed}: {}",
            base[at(50.0)]
        );
    }
}
