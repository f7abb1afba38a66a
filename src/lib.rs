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
//! (docs/firmware.md): only the faces that need no heap compile
//! (limiter, backoff, deadline, rate, gcra, status, version, atomic), a panic
//! aborts through the handler in `src/firmware.rs` (a private module, in
//! that build only), and the handles, which need an allocator and a lock,
//! are left out. The header declares those under `#if defined(WEIR_HOSTED)`
//! (cbindgen.toml maps the `std` feature to it).

#![allow(non_camel_case_types)]
#![cfg_attr(not(feature = "std"), no_std)]

pub mod atomic;
pub mod backoff;
#[cfg(feature = "std")]
pub mod bloom;
#[cfg(feature = "std")]
pub mod breaker;
#[cfg(feature = "std")]
pub mod bucket;
#[cfg(feature = "std")]
pub mod budget;
#[cfg(feature = "std")]
pub mod charge;
#[cfg(feature = "std")]
pub mod concurrency;
#[cfg(feature = "std")]
pub mod counts;
pub mod deadline;
#[cfg(not(feature = "std"))]
mod firmware;
#[cfg(feature = "std")]
pub mod gate;
pub mod gcra;
pub(crate) mod guard;
#[cfg(feature = "std")]
pub mod lease;
pub mod limiter;
#[cfg(feature = "std")]
mod lock;
#[cfg(feature = "std")]
pub mod period;
#[cfg(feature = "std")]
pub mod pool;
pub mod rate;
#[cfg(feature = "std")]
pub mod region;
#[cfg(feature = "std")]
pub mod shedder;
#[cfg(feature = "std")]
pub mod sliding;
#[cfg(feature = "std")]
mod slots;
pub mod status;
pub mod version;
#[cfg(feature = "std")]
pub mod window;
