//! What each command decided since the module was loaded: the `INFO weir`
//! section.
//!
//! Every command registered through the module's command table has its own
//! [`Counts`], so a new command is counted by being registered. A call
//! ends in exactly one of four ways, each one relaxed atomic add: admitted,
//! refused, an error reply, or an answer that decides nothing (a refund, a
//! limiter's peek). `calls` is their sum, so it is exact by construction.
//! Reading the counts changes nothing.

use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;

use crate::api::{InfoCtx, Verdict};

/// One command's counts.
#[derive(Debug, Default)]
pub struct Counts {
    admitted: AtomicU64,
    refused: AtomicU64,
    errors: AtomicU64,
    answered: AtomicU64,
}

/// A reading of one command's counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Reading {
    /// Every call (`admitted + refused + errors` and the calls that decide
    /// nothing).
    pub calls: u64,
    /// Calls that admitted, or, for a peek, would have.
    pub admitted: u64,
    /// Calls that refused, or, for a peek, would have (a `WEIR.LIMITER`
    /// refusal is counted here, though its reply is an error).
    pub refused: u64,
    /// Calls answered with an error: arity, arguments, a key of another
    /// type or kind, an internal error.
    pub errors: u64,
}

impl Counts {
    /// All zero.
    pub const fn new() -> Counts {
        Counts {
            admitted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            answered: AtomicU64::new(0),
        }
    }

    /// Counts one call that ended with `verdict`, as an error reply when
    /// `failed` (a refusal answered by an error stays a refusal).
    pub fn count(&self, verdict: Verdict, failed: bool) {
        let counter = match (verdict, failed) {
            (Verdict::NotACall, _) => return,
            (Verdict::Refused, _) => &self.refused,
            (_, true) => &self.errors,
            (Verdict::Admitted, false) => &self.admitted,
            (Verdict::None, false) => &self.answered,
        };
        counter.fetch_add(1, Relaxed);
    }

    /// The counts now.
    pub fn read(&self) -> Reading {
        let admitted = self.admitted.load(Relaxed);
        let refused = self.refused.load(Relaxed);
        let errors = self.errors.load(Relaxed);
        let answered = self.answered.load(Relaxed);
        Reading {
            calls: admitted
                .wrapping_add(refused)
                .wrapping_add(errors)
                .wrapping_add(answered),
            admitted,
            refused,
            errors,
        }
    }
}

/// The registered commands' names as `INFO` shows them (without `weir.`)
/// and their counts, in registration order.
static TABLE: OnceLock<Vec<(CString, &'static Counts)>> = OnceLock::new();

/// Records the command table at load; `name` is the command's full name
/// (`weir.bucket`). Only the first call takes effect.
pub fn register(commands: &[(&CStr, &'static Counts)]) {
    TABLE.get_or_init(|| {
        commands
            .iter()
            .map(|(name, counts)| (info_name(name), *counts))
            .collect()
    });
}

/// `weir.bucket.peek` as `bucket.peek`: the section already says weir.
fn info_name(name: &CStr) -> CString {
    let bytes = name.to_bytes();
    let short = bytes.strip_prefix(b"weir.").unwrap_or(bytes);
    CString::new(short).expect("a command name holds no NUL")
}

/// Writes the section: `# weir`, then one line per command,
/// `weir_bucket:calls=3,admitted=2,refused=1,errors=0`.
pub fn info(ctx: &InfoCtx) {
    if !ctx.section() {
        return;
    }
    for (name, counts) in TABLE.get().map(Vec::as_slice).unwrap_or(&[]) {
        let r = counts.read();
        ctx.dict(
            name,
            &[
                (c"calls", r.calls),
                (c"admitted", r.admitted),
                (c"refused", r.refused),
                (c"errors", r.errors),
            ],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_counts_once_and_calls_is_the_sum() {
        let c = Counts::new();
        c.count(Verdict::Admitted, false);
        c.count(Verdict::Admitted, false);
        c.count(Verdict::Refused, false);
        c.count(Verdict::Refused, true); // a limiter's refusal, an error reply
        c.count(Verdict::None, true);
        c.count(Verdict::Admitted, true); // decided, then failed to write
        c.count(Verdict::None, false); // a refund
        c.count(Verdict::NotACall, false);
        let r = c.read();
        assert_eq!(
            r,
            Reading {
                calls: 7,
                admitted: 2,
                refused: 2,
                errors: 2,
            }
        );
        assert_eq!(c.read(), r, "a reading changes nothing");
    }

    #[test]
    fn names_drop_the_module_prefix() {
        assert_eq!(
            info_name(c"weir.bucket.ms.peek").as_bytes(),
            b"bucket.ms.peek"
        );
        assert_eq!(info_name(c"weir.all").as_bytes(), b"all");
        assert_eq!(info_name(c"other").as_bytes(), b"other");
    }
}
