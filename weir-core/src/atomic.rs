//! The 64-bit atomic integers behind the word-based types (the rate word,
//! the bloom array's words, the bucket, the gate).
//!
//! Where the target has 64-bit atomic instructions (x86_64, aarch64, i686,
//! Armv7-A, riscv64, …) these are `core`'s own types: lock-free, and the
//! words may sit in memory shared between threads, cores and processes.
//! Elsewhere (Cortex-M3/M4/M7/M33, Cortex-M0, riscv32, 32-bit MIPS and
//! PowerPC) they come from `portable-atomic`, which takes a lock for each
//! update: a spinlock from a global table where the target has a 32-bit
//! compare-and-swap, or a critical section where it has none (the final
//! program chooses which, through `portable-atomic`'s or this crate's
//! features). There a word is safe between the threads of one program but
//! neither lock-free nor shareable with another process, because the lock
//! lives in this program's memory, not beside the word.
//!
//! These 64-bit types come from `portable-atomic` only on targets without
//! 64-bit atomics; on the others they are `core`'s. (The crate is a
//! dependency on every target all the same, for the keyed table's 128-bit
//! slots: [`crate::keyed`].)

pub use core::sync::atomic::{fence, Ordering};
#[cfg(target_has_atomic = "64")]
pub use core::sync::atomic::{AtomicI64, AtomicU64};
#[cfg(not(target_has_atomic = "64"))]
pub use portable_atomic::{AtomicI64, AtomicU64};

/// Whether [`AtomicU64`] and [`AtomicI64`] are the target's own lock-free
/// instructions, so that a word in shared memory is updated atomically for
/// every process that maps it.
pub const LOCK_FREE: bool = cfg!(target_has_atomic = "64");
