//! weir's C library: the `extern "C"` surface over the behaviour types of
//! the `weir-core` crate. `include/weir.h` is generated from these files by
//! cbindgen, and this crate builds `libweir.a` and `libweir.so`.
//!
//! One module per C type, plus the status enum and the guard every call
//! goes through. Every function is thin: it checks its arguments, calls the
//! type in `weir-core/src/<type>.rs`, and converts the answer. This crate
//! holds weir's `unsafe` code; the core crate has none.
//!
//! Rust programs that want the behaviour types without a C library depend on
//! `weir-core` instead.

//!
//! Without the default `std` feature this is the firmware build
//! (docs/firmware.md): the faces that need no heap (limiter, backoff,
//! deadline, rate, gcra, status, version, atomic) and the placed form of
//! every handle type (breaker, shedder, bucket, gate, period, budget,
//! concurrency, window, sliding, pool, lease: `weir_X_footprint`, `weir_X_init_in` and
//! the type's calls; the bloom's `weir_bloom_place_footprint` and
//! `weir_bloom_place_in`), each handle's lock being the build's critical
//! section (src/lock.rs; the bloom's words, as the rate word's, take it per
//! update). A panic aborts through the handler in `src/firmware.rs` (a
//! private module, in that build only). Left out: the heap constructors
//! (`weir_X_new`), the bloom's region calls and the charge face. The header
//! declares those under `#if defined(WEIR_HOSTED)` (cbindgen.toml maps the
//! `std` feature to it).

#![allow(non_camel_case_types)]
#![cfg_attr(not(feature = "std"), no_std)]

pub mod atomic;
pub mod backoff;
pub mod bloom;
pub mod breaker;
pub mod bucket;
pub mod budget;
#[cfg(feature = "std")]
pub mod charge;
pub mod concurrency;
pub mod counts;
pub mod deadline;
#[cfg(not(feature = "std"))]
mod firmware;
pub mod gate;
pub mod gcra;
pub(crate) mod guard;
pub mod keyed;
pub mod lease;
pub mod limiter;
mod lock;
pub mod period;
pub mod pool;
pub mod rate;
#[cfg(feature = "std")]
pub mod region;
pub mod shedder;
pub mod sliding;
mod slots;
pub mod status;
pub mod version;
pub mod window;
