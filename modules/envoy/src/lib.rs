//! weir's limits as an Envoy dynamic module (Envoy 1.40, ABI v0.2.0): an
//! HTTP filter, `filter_name: weir_limit`, with the nginx module's
//! semantics. docs/envoy.md has the config; README.md says why Rust.
//!
//! - [`config`]: the filter's JSON config, checked field by field.
//! - [`key`]: a request's key for a limit.
//! - [`limit`]: the words of each limit (kept across updates by name) and
//!   the all-or-nothing decision.
//! - `ffi` and `abi` (the cdylib only): the hooks Envoy calls and the
//!   callbacks they call, declared by hand.

pub mod breaker;
pub mod config;
pub mod key;
pub mod limit;

#[cfg(not(test))]
mod abi;
#[cfg(not(test))]
mod ffi;
