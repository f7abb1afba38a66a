//! weir decides whether a call should go ahead: circuit breaking, load
//! shedding, rate limits, quotas, concurrency limits, retry backoff,
//! deadlines and resource-pool bookkeeping — with no I/O, no clock and no
//! randomness inside. The caller passes `now` (nanoseconds of its own clock)
//! and, where a decision is a roll, a draw from [0, 1).
//!
//! Each type's behaviour lives in its own module in plain, safe Rust; the C
//! surface lives in [`ffi`] and is what `include/weir.h` declares.
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod backoff;
pub mod bloom;
pub mod breaker;
pub mod bucket;
pub mod deadline;
pub mod draw;
pub mod gate;
pub mod limiter;
pub mod period;
pub mod pool;
pub mod rate;
pub mod shedder;
pub mod siphash;
pub mod sliding;
pub mod time;
pub mod window;

#[cfg(feature = "std")]
pub mod ffi;
