//! The calls a counter with `take`, `left` and `next` answers (the sliding
//! window and the period), drawn for the property tests.

#![allow(dead_code)]

use proptest::prelude::*;

use crate::instants::{now, repeat};

#[derive(Clone, Copy, Debug)]
pub enum Op {
    /// `take` at `now`, repeated at that one instant.
    Take(i64, usize),
    Left(i64),
    Next(i64),
}

impl Op {
    pub fn is_reading(self) -> bool {
        !matches!(self, Op::Take(..))
    }

    /// This call with its `now` raised to the latest take's, which a take
    /// moves first: what the counter's clock makes of it.
    pub fn raised(self, latest: &mut i64) -> Op {
        match self {
            Op::Take(now, n) => {
                *latest = (*latest).max(now);
                Op::Take(*latest, n)
            }
            Op::Left(now) => Op::Left(now.max(*latest)),
            Op::Next(now) => Op::Next(now.max(*latest)),
        }
    }
}

/// Mostly takes (some in bursts at one instant), with readings between.
pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (now(), repeat()).prop_map(|(now, n)| Op::Take(now, n)),
        1 => now().prop_map(Op::Left),
        1 => now().prop_map(Op::Next),
    ]
}
