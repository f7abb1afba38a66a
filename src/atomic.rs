//! C face of [`weir_core::atomic`]: what this build guarantees for the
//! words the caller places (rate words, bloom regions).

use crate::status::weir_status::{self, *};

/// Whether this build may share its words (a `weir_rate`, a bloom region of
/// `weir_bloom_*_in`) with another process or another core's program.
/// `WEIR_OK` where word updates are the target's own lock-free 64-bit
/// atomic instructions (x86_64, aarch64, i686, Armv7-A, riscv64, …): a
/// word in shared memory is exact for every process that maps it.
/// `WEIR_ERR_WORDS_NOT_SHAREABLE` where the target has no 64-bit atomics
/// (Cortex-M, riscv32, 32-bit MIPS and PowerPC): each update takes a lock
/// that lives in this program (a spinlock, or on firmware the critical
/// section the build chose), so a word is exact between this program's
/// threads (and, on firmware, its interrupt handlers) but not between
/// programs. `weir_bloom_init_in` and `weir_bloom_check_in` answer the
/// same status there, and the other `weir_bloom_*_in` calls refuse; a
/// program that keeps a `weir_rate` in shared memory calls this once at
/// start-up. `WEIR_WORDS_LOCK_FREE` says the same at compile time.
#[no_mangle]
pub extern "C" fn weir_words_shareable() -> weir_status {
    shareable().err().unwrap_or(WEIR_OK)
}

/// `Ok` where words may be shared between processes, else
/// `WEIR_ERR_WORDS_NOT_SHAREABLE`.
#[inline]
pub(crate) fn shareable() -> Result<(), weir_status> {
    if weir_core::atomic::LOCK_FREE {
        Ok(())
    } else {
        Err(WEIR_ERR_WORDS_NOT_SHAREABLE)
    }
}
