//! The C surface: one `extern "C"` module per type, plus the status enum and
//! the guard every call goes through. `include/weir.h` is generated from
//! these files by cbindgen.
//!
//! Every function here is thin: it checks its arguments, calls the type in
//! `src/<type>.rs`, and converts the answer. The only `unsafe` code of the
//! crate lives under this module.

#![allow(non_camel_case_types)]

pub mod bloom;
pub mod gate;
// Helpers not every type uses yet.
#[allow(dead_code)]
pub(crate) mod guard;
pub mod rate;
pub mod status;
pub mod version;
