//! Random time for the property tests of the breaker, the shedder and the
//! window: steps that stay at one instant (many calls at once), go back,
//! go forward by whole 512 ns blocks to a phase drawn explicitly (0 and
//! 511 included), or jump to the ends of the clock.

use proptest::prelude::*;

/// How one call's `now` follows from the timeline's cursor.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// The same instant as the call before.
    Same,
    /// This much earlier.
    Back(i64),
    /// `blocks` whole 512 ns blocks on, at `phase` (0..=511) into the block.
    On { blocks: i64, phase: i64 },
    /// An end of the clock (or near one).
    Far(i64),
}

impl Step {
    /// The `now` this step gives from `cursor`.
    pub fn from(self, cursor: i64) -> i64 {
        match self {
            Step::Same => cursor,
            Step::Back(by) => cursor.saturating_sub(by),
            Step::On { blocks, phase } => cursor
                .div_euclid(512)
                .saturating_add(blocks)
                .saturating_mul(512)
                .saturating_add(phase),
            Step::Far(at) => at,
        }
    }
}

/// A phase within a 512 ns block: 0 and 511 often, anything else too.
pub fn phase() -> impl Strategy<Value = i64> {
    prop_oneof![Just(0i64), Just(511i64), 0..512i64]
}

/// Steps for a timeline whose interesting widths are around `scale` ns.
pub fn step(scale: i64) -> impl Strategy<Value = Step> + Clone {
    let blocks = (scale / 512).max(1);
    prop_oneof![
        6 => Just(Step::Same),
        2 => (1..=scale.max(1)).prop_map(Step::Back),
        8 => (0..=blocks, phase()).prop_map(|(blocks, phase)| Step::On { blocks, phase }),
        2 => (0..=blocks * 64, phase()).prop_map(|(blocks, phase)| Step::On { blocks, phase }),
        1 => (0..=i64::MAX / 512, phase()).prop_map(|(blocks, phase)| Step::On { blocks, phase }),
        1 => prop_oneof![
            Just(i64::MAX),
            Just(i64::MIN),
            Just(i64::MAX - 511),
            any::<i64>()
        ]
        .prop_map(Step::Far),
    ]
}

/// A start time: near zero, at a 512 ns phase, or anywhere.
pub fn start() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => (-4i64..4, phase()).prop_map(|(block, phase)| block * 512 + phase),
        1 => any::<i64>(),
        1 => Just(i64::MIN),
        1 => Just(i64::MAX - 1_000),
    ]
}

/// Checks that a decision at `now` admits no more than one at `latest`
/// would, when `now` is the earlier: `admits` answers for a copy of the
/// state, so neither try changes it.
#[allow(dead_code)] // the window has no decision to check
pub fn no_more_than_at_latest(now: i64, latest: i64, admits: impl Fn(i64) -> bool) {
    if now < latest {
        assert!(
            admits(latest) || !admits(now),
            "admitted at {now}, not at the latest {latest}"
        );
    }
}
