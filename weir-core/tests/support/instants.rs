//! Instants for the property tests: `now` drawn with its phase mod 512
//! explicit (0, 1, 510 and 511 always among the choices), clustered so that
//! many calls land on one instant and time often goes backwards, with the
//! ends of the clock mixed in.

#![allow(dead_code)]

use proptest::prelude::*;

/// A phase within a 512 ns step: the edges explicitly, then any.
pub fn phase() -> impl Strategy<Value = i64> {
    prop_oneof![
        1 => Just(0i64),
        1 => Just(1i64),
        1 => Just(510i64),
        2 => Just(511i64),
        3 => 0..512i64,
    ]
}

/// One `now`. Most fall in a few 512 ns steps near zero (so instants repeat
/// and a random order goes backwards often); some are far apart, some at
/// the ends of the clock, each still with its phase mod 512 drawn.
pub fn now() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => (0..8i64, phase()).prop_map(|(step, phase)| step * 512 + phase),
        2 => (-4..4i64, phase()).prop_map(|(second, phase)| second * 1_000_000_000 + phase),
        1 => (any::<i64>(), phase()).prop_map(|(t, phase)| (t & !511) | phase),
        1 => prop_oneof![
            Just(i64::MIN),
            Just(i64::MIN + 1),
            Just(i64::MIN + 511),
            Just(-1i64),
            Just(i64::MAX - 511),
            Just(i64::MAX - 1),
            Just(i64::MAX),
        ],
    ]
}

/// A length of time a constructor takes (a window, a period, a keep): the
/// 512 ns edges, small ones, large ones and the extremes.
pub fn span() -> impl Strategy<Value = i64> {
    prop_oneof![
        2 => prop_oneof![Just(1i64), Just(511), Just(512), Just(513), Just(1024)],
        4 => 1..5_000i64,
        1 => 1..=i64::MAX,
        1 => prop_oneof![Just(i64::MAX), Just(i64::MAX - 1), Just(1_000_000_000i64)],
    ]
}

/// How many times one call repeats at one instant: mostly once, sometimes
/// a burst.
pub fn repeat() -> impl Strategy<Value = usize> {
    prop_oneof![6 => Just(1usize), 1 => 2..64usize]
}
