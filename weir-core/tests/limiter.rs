//! Properties of the embeddable limiter over random timelines: a snapshot
//! rebuilt through the constructors answers every later call as the
//! original; an earlier `now` never offers more than a later one; and no
//! timeline lets more through than the variant allows. Values range from
//! small (where refusals are common) to the extremes of `u64` and `i64`.

#[path = "support/runner.rs"]
mod runner;

use proptest::prelude::*;
use weir_core::limiter::{Limiter, LimiterError};

/// Which variant, and the settings a constructor takes besides `now`.
#[derive(Clone, Copy, Debug)]
enum Setup {
    Bucket { refill_amount: u64, interval: i64 },
    Window { window: i64 },
    Cooldown { cooldown: i64 },
}

/// A limiter built at `start`, then a timeline of `(step, amount)` calls.
#[derive(Clone, Debug)]
struct Case {
    setup: Setup,
    capacity: u64,
    initial: u64,
    /// How far before `start` the anchor lies (a cooldown's deadline may
    /// also lie after it).
    anchor_offset: i64,
    start: i64,
    calls: Vec<(i64, u64)>,
}

fn amount() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0..=12u64, 1 => any::<u64>()]
}

fn period() -> impl Strategy<Value = i64> {
    prop_oneof![4 => 1..=40i64, 1 => 1..=i64::MAX]
}

fn setup() -> impl Strategy<Value = Setup> {
    prop_oneof![
        (prop_oneof![4 => 1..=4u64, 1 => 1..=u64::MAX], period()).prop_map(
            |(refill_amount, interval)| Setup::Bucket {
                refill_amount,
                interval
            }
        ),
        period().prop_map(|window| Setup::Window { window }),
        period().prop_map(|cooldown| Setup::Cooldown { cooldown }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    let time = prop_oneof![4 => -1000..=1000i64, 1 => any::<i64>()];
    let step = prop_oneof![4 => 0..=30i64, 1 => any::<i64>()];
    (
        setup(),
        prop_oneof![4 => 1..=10u64, 1 => 1..=u64::MAX],
        any::<u64>(),
        prop_oneof![4 => -100..=100i64, 1 => any::<i64>()],
        time,
        prop::collection::vec((step, amount()), 1..40),
    )
        .prop_map(
            |(setup, capacity, initial, anchor_offset, start, calls)| Case {
                setup,
                capacity,
                initial: capacity.checked_add(1).map_or(initial, |n| initial % n),
                anchor_offset,
                start,
                calls,
            },
        )
}

/// The limiter a case describes, made valid where the raw draw was not (an
/// anchor after `start`, units while a gate is armed).
fn build(case: &Case) -> Limiter {
    let now = case.start;
    let built = match case.setup {
        Setup::Bucket {
            refill_amount,
            interval,
        } => Limiter::bucket(
            case.capacity,
            refill_amount,
            interval,
            now.saturating_sub(case.anchor_offset.saturating_abs()),
            case.initial,
            now,
        ),
        Setup::Window { window } => Limiter::fixed_window(
            case.capacity,
            window,
            now.saturating_sub(case.anchor_offset.saturating_abs()),
            case.initial,
            now,
        ),
        Setup::Cooldown { cooldown } => {
            let end = now.saturating_add(case.anchor_offset);
            let initial = if end > now { 0 } else { case.initial };
            Limiter::cooldown(case.capacity, cooldown, end, initial, now)
        }
    };
    built.expect("a case builds a valid limiter")
}

/// A new limiter made from what `limiter` answers at `now`, by the recipe
/// the header gives: the same constructor, the projected anchor, the
/// projected units.
fn rebuild(limiter: &Limiter, now: i64) -> Result<Limiter, LimiterError> {
    let capacity = limiter.capacity();
    let available = limiter.available(now);
    if limiter.is_bucket() {
        Limiter::bucket(
            capacity,
            limiter.refill_amount()?,
            limiter.refill_interval_ns()?,
            limiter.last_refill(now)?,
            available,
            now,
        )
    } else if limiter.is_fixed_window() {
        Limiter::fixed_window(
            capacity,
            limiter.window_ns()?,
            limiter.window_start(now)?,
            available,
            now,
        )
    } else {
        Limiter::cooldown(
            capacity,
            limiter.cooldown_ns()?,
            limiter.cooldown_end()?,
            available,
            now,
        )
    }
}

/// Everything a caller can read of a limiter at `now`.
fn answers(limiter: &Limiter, now: i64) -> (u64, Option<i64>, Option<i64>) {
    (
        limiter.available(now),
        limiter.last_refill(now).or(limiter.window_start(now)).ok(),
        limiter.cooldown_end().ok(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: runner::cases(2000), ..ProptestConfig::default() })]

    /// Run a monotonic timeline, snapshot at its latest `now`, rebuild, and
    /// drive both with the same later calls (at any `now` from the snapshot
    /// on, in any order): every answer matches.
    #[test]
    fn a_rebuilt_snapshot_answers_like_the_original(
        case in case(),
        split in any::<prop::sample::Index>(),
        later in prop::collection::vec((0..=200i64, amount()), 1..40),
    ) {
        let mut original = build(&case);
        let cut = split.index(case.calls.len() + 1);
        let mut now = case.start;
        for &(step, amount) in &case.calls[..cut] {
            now = now.saturating_add(step.saturating_abs());
            let _ = original.consume(now, amount);
        }
        let mut rebuilt = rebuild(&original, now).expect("a snapshot rebuilds");
        prop_assert_eq!(answers(&rebuilt, now), answers(&original, now));
        for &(offset, amount) in &later {
            let at = now.saturating_add(offset);
            prop_assert_eq!(answers(&rebuilt, at), answers(&original, at));
            prop_assert_eq!(rebuilt.consume(at, amount), original.consume(at, amount));
            prop_assert_eq!(answers(&rebuilt, at), answers(&original, at));
        }
    }

    /// Whatever the timeline (time may jump back), the units offered at an
    /// earlier `now` never exceed those at a later one, never exceed the
    /// capacity, and a refusal changes nothing.
    #[test]
    fn an_earlier_now_never_offers_more(case in case(), probes in prop::collection::vec(any::<i64>(), 1..8)) {
        let mut limiter = build(&case);
        let mut now = case.start;
        for &(step, amount) in &case.calls {
            now = now.saturating_add(step);
            let before = limiter;
            if limiter.consume(now, amount).is_err() {
                prop_assert_eq!(limiter, before);
            }
            let mut times = probes.clone();
            times.push(now);
            times.sort_unstable();
            let offered: Vec<u64> = times.iter().map(|&t| limiter.available(t)).collect();
            prop_assert!(offered.windows(2).all(|pair| pair[0] <= pair[1]));
            prop_assert!(offered.iter().all(|&units| units <= limiter.capacity()));
        }
    }

    /// Over a forward timeline a bucket lets through at most its initial
    /// units plus one refill per whole interval run, and a window at most
    /// its initial units in the first window and its capacity in each later
    /// one.
    #[test]
    fn nothing_gets_through_beyond_the_allowance(
        capacity in 1..=10u64,
        period in 1..=20i64,
        refill_amount in 1..=3u64,
        initial in 0..=10u64,
        calls in prop::collection::vec((0..=15i64, 1..=4u64), 1..60),
    ) {
        let initial = initial.min(capacity);
        let mut bucket = Limiter::bucket(capacity, refill_amount, period, 0, initial, 0).unwrap();
        let mut window = Limiter::fixed_window(capacity, period, 0, initial, 0).unwrap();
        let (mut now, mut through_bucket) = (0i64, 0u64);
        let mut through_window = std::collections::BTreeMap::<i64, u64>::new();
        for (step, amount) in calls {
            now += step;
            if bucket.try_consume(now, amount) {
                through_bucket += amount;
            }
            if window.try_consume(now, amount) {
                *through_window.entry(now / period).or_default() += amount;
            }
            let intervals = (now / period) as u64;
            prop_assert!(through_bucket <= initial + intervals * refill_amount);
        }
        for (index, through) in through_window {
            let allowance = if index == 0 { initial } else { capacity };
            prop_assert!(through <= allowance);
        }
    }
}
