//! Time arithmetic shared by every type.
//!
//! Time is `i64` nanoseconds of the caller's clock. Arithmetic saturates and
//! never wraps, and time going backwards counts as no time passing.

/// A duration or instant that never comes: what `next`-style answers return
/// when waiting cannot help.
pub const NEVER: i64 = i64::MAX;

/// Nanoseconds in one second.
pub const SECOND: i64 = 1_000_000_000;

/// How long from `since` to `now`: never negative (a `now` earlier than
/// `since` is no time passing) and saturating at [`NEVER`].
#[inline]
pub fn elapsed(since: i64, now: i64) -> i64 {
    now.saturating_sub(since).max(0)
}

/// The instant `span` after `at`, saturating instead of wrapping.
#[inline]
pub fn after(at: i64, span: i64) -> i64 {
    at.saturating_add(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_is_never_negative_and_saturates() {
        assert_eq!(elapsed(10, 25), 15);
        assert_eq!(elapsed(25, 10), 0);
        assert_eq!(elapsed(i64::MIN, i64::MAX), NEVER);
        assert_eq!(elapsed(i64::MAX, i64::MIN), 0);
    }

    #[test]
    fn after_saturates() {
        assert_eq!(after(5, 7), 12);
        assert_eq!(after(i64::MAX - 1, 10), i64::MAX);
        assert_eq!(after(i64::MIN + 1, -10), i64::MIN);
    }
}
