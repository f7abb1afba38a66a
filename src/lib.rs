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

#![allow(non_camel_case_types)]

pub mod backoff;
pub mod bloom;
pub mod breaker;
pub mod bucket;
pub mod deadline;
pub mod gate;
pub(crate) mod guard;
pub mod limiter;
pub mod period;
pub mod pool;
pub mod rate;
pub mod shedder;
pub mod sliding;
pub mod status;
pub mod version;
pub mod window;
