//! The test clock: `WEIR.TEST.NOW ns` makes every later command of this
//! server decide at `ns` (Unix nanoseconds) instead of the wall clock, and
//! `WEIR.TEST.NOW REAL` gives the wall clock back. It exists only in builds
//! with the cargo feature `test-clock`, which the conformance replays use
//! (`tests/traces.rs`); the module as released (`cargo build -p weir-redis`)
//! has neither this file nor the command, and `tests/traces.rs` checks that
//! such a server answers it as an unknown command.
//!
//! One clock for the whole server (a process-wide atomic), since a test
//! drives one server from one connection at a time. Keys still expire on
//! Redis's own clock: a replay puts its times far enough ahead of the wall
//! clock that no key expires under it.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::api::Ctx;
use crate::parse::Fail;

/// `i64::MIN`: the wall clock.
static NOW: AtomicI64 = AtomicI64::new(i64::MIN);

/// The time set by `WEIR.TEST.NOW`, if one is.
pub fn now() -> Option<i64> {
    let now = NOW.load(Ordering::Relaxed);
    (now != i64::MIN).then_some(now)
}

/// `WEIR.TEST.NOW ns|REAL`: replies the time set, or -1 for the wall clock.
pub fn command(ctx: &Ctx) -> Result<(), Fail> {
    if ctx.argc() != 2 {
        return Err(Fail::Arity);
    }
    let arg = ctx.arg(1);
    if arg.eq_ignore_ascii_case(b"REAL") {
        NOW.store(i64::MIN, Ordering::Relaxed);
        ctx.reply_int(-1);
        return Ok(());
    }
    let ns = std::str::from_utf8(arg)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|&ns| ns >= 0)
        .ok_or_else(|| {
            Fail::Msg("ERR WEIR.TEST.NOW takes nanoseconds (0 or more) or REAL".into())
        })?;
    NOW.store(ns, Ordering::Relaxed);
    ctx.reply_int(ns);
    Ok(())
}
