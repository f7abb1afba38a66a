//! weir's behaviour types: should this call go ahead? Circuit breaking,
//! load shedding, rate limits, quotas, concurrency limits, retry backoff,
//! deadlines and resource-pool bookkeeping — with no I/O, no clock and no
//! randomness inside. The caller passes `now` (nanoseconds of its own clock)
//! and, where a decision is a roll, a draw from [0, 1).
//!
//! Each type's behaviour lives in its own module in plain, safe Rust. This
//! crate is `no_std`, and every type builds without an allocator: the ones
//! whose size is chosen at run time (window, breaker, sliding, shedder,
//! pool, bloom) keep their slots in a store the caller chooses (a fixed
//! array, a borrowed slice: see [`store`]). The `alloc` feature (on by
//! default) adds only their `new` constructors over a `Vec`, and `std`
//! nothing but the thread tests. The C library (the `weir` crate at the
//! workspace root) puts its `extern "C"` surface over these types.
#![no_std]
#![forbid(unsafe_code)]
// Every public item is documented: `cargo doc -p weir-core` is the Rust
// reference (.ci/stages/docs.sh builds it with warnings as errors).
#![deny(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod atomic;
pub mod backoff;
pub mod bloom;
pub mod breaker;
pub mod bucket;
pub mod budget;
pub mod charge;
pub mod concurrency;
pub mod deadline;
pub mod draw;
pub mod gate;
pub mod gcra;
pub mod keyed;
pub mod lease;
mod limit_cell;
pub mod limiter;
pub mod partitioned;
pub mod period;
pub mod pool;
pub mod rate;
pub mod shedder;
pub mod sip;
pub mod sliding;
pub mod store;
pub mod tat;
pub mod time;
pub mod window;

/// A small deterministic generator (xorshift64) for the unit tests' random
/// walks: advances `state` and answers it.
#[cfg(test)]
pub(crate) fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// How many rounds a test's long loop makes: `n`, or a hundredth of it
/// (at least one) under Miri, which interprets every step and would take
/// minutes over the full count (see .ci/stages/miri.sh).
#[cfg(test)]
pub(crate) const fn rounds(n: usize) -> usize {
    if cfg!(miri) {
        n / 100 + 1
    } else {
        n
    }
}
