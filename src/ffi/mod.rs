//! The C surface: one `extern "C"` module per type, plus the status enum and
//! the guard every call goes through. `include/weir.h` is generated from
//! these files by cbindgen.
//!
//! Every function here is thin: it checks its arguments, calls the type in
//! `src/<type>.rs`, and converts the answer. The only `unsafe` code of the
//! crate lives under this module.

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
