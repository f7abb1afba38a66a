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
