//! Instants for the property tests: a start, then steps that stay at one
//! instant (many calls at once), move ahead or back by eighths of a unit,
//! or jump anywhere; every step that moves lands on a drawn phase modulo
//! 512 ns (511 drawn often: the rate word's grid is 512 ns).

use proptest::prelude::*;

/// One move of the clock.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    /// The same instant again.
    Stay,
    /// Ahead by this many eighths of the unit.
    Ahead(u32),
    /// Back by this many eighths of the unit.
    Back(u32),
    /// To this instant.
    Jump(i64),
}

/// A phase modulo 512 ns, 511 and the grid's edges drawn often.
pub fn phase() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => Just(511i64),
        1 => Just(0i64),
        1 => Just(1i64),
        1 => Just(510i64),
        2 => 0..512i64,
    ]
}

/// A step and the phase it lands on.
pub fn step() -> impl Strategy<Value = (Step, i64)> {
    let step = prop_oneof![
        5 => Just(Step::Stay),
        5 => (0..=24u32).prop_map(Step::Ahead),
        2 => (0..=24u32).prop_map(Step::Back),
        1 => prop_oneof![any::<i64>(), 0..=1i64 << 40, (i64::MAX - 4096)..=i64::MAX]
            .prop_map(Step::Jump),
    ];
    (step, phase())
}

/// A start: near zero, anywhere, or at the far end of the clock.
pub fn start() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 0..=1i64 << 40,
        1 => any::<i64>(),
        1 => (i64::MAX - (1 << 20))..=i64::MAX,
    ]
}

/// The instants `steps` visit from `start`, moving by eighths of `unit`.
pub fn instants(unit: i64, start: i64, steps: &[(Step, i64)]) -> Vec<i64> {
    let eighth = (unit / 8).max(1);
    let mut now = start;
    steps
        .iter()
        .map(|&(step, phase)| {
            let moved = match step {
                Step::Stay => return now,
                Step::Ahead(k) => now.saturating_add(eighth.saturating_mul(i64::from(k))),
                Step::Back(k) => now.saturating_sub(eighth.saturating_mul(i64::from(k))),
                Step::Jump(at) => at,
            };
            // Onto the phase: i64::MAX is 511 modulo 512, so this never
            // overflows.
            now = moved - moved.rem_euclid(512) + phase;
            now
        })
        .collect()
}
