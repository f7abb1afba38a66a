//! C face of [`weir_core::sliding`].

use std::sync::Mutex;

use crate::counts::{weir_counts, Tally};
use crate::guard::{decide, read_counts, start_counting};
use crate::guard::{free_handle, lock, new_handle, on, Guarded, Handle};
use crate::status::weir_status::{self, *};
use weir_core::sliding::{Sliding, SlidingError};
use weir_core::time::NEVER;

/// An exact sliding-window counter: at most `quota` events in any stretch
/// of `window_ns`. Takes a short per-handle lock and is safe to use from
/// many threads at once; 112 bytes of heap per handle plus 8 bytes per unit
/// of quota (one stamp per event it counts), allocated once by
/// `weir_sliding_new`. Freed by `weir_sliding_free`.
pub struct weir_sliding(Guarded<Mutex<Sliding>>);

impl Handle for weir_sliding {
    type State = Mutex<Sliding>;
    fn guarded(&self) -> &Guarded<Mutex<Sliding>> {
        &self.0
    }
}

impl From<SlidingError> for weir_status {
    fn from(error: SlidingError) -> weir_status {
        match error {
            SlidingError::Quota => WEIR_ERR_QUOTA,
            SlidingError::Window => WEIR_ERR_SLIDING_WINDOW,
            SlidingError::TooLarge => WEIR_ERR_TOO_LARGE,
            SlidingError::NoMemory => WEIR_ERR_NO_MEMORY,
        }
    }
}

/// Makes an empty window that counts at most `quota` events in any
/// `window_ns`-long stretch, and writes it to `*out`. An event stamped `t`
/// is counted while `now < t + window_ns` and falls out at exactly
/// `t + window_ns`.
///
/// Returns `WEIR_ERR_NULL` if `out` is NULL, `WEIR_ERR_QUOTA` for a quota
/// of 0 or less, `WEIR_ERR_SLIDING_WINDOW` for a window of 0 or less (the
/// quota is checked first), `WEIR_ERR_TOO_LARGE` when `quota` stamps (8
/// bytes each) cannot be represented, and `WEIR_ERR_NO_MEMORY` when they
/// cannot be allocated.
/// `*out` is written only on success.
#[no_mangle]
pub extern "C" fn weir_sliding_new(
    quota: i64,
    window_ns: i64,
    out: *mut *mut weir_sliding,
) -> weir_status {
    new_handle(out, || {
        let sliding = Sliding::new(quota, window_ns)?;
        Ok(weir_sliding(Guarded::new(Mutex::new(sliding))))
    })
}

/// Frees a sliding window. NULL is accepted and ignored.
#[no_mangle]
pub extern "C" fn weir_sliding_free(sliding: *mut weir_sliding) {
    free_handle(sliding)
}

/// Counts an event at `now` if the window has room; whether it did. O(1)
/// amortised; never allocates. An earlier `now` than one already seen
/// counts as the latest. False for a NULL window.
#[no_mangle]
pub extern "C" fn weir_sliding_take(sliding: *const weir_sliding, now: i64) -> bool {
    let counted = move |_: &_, &taken: &bool| Tally::of(taken);
    decide(sliding, false, counted, move |sliding| {
        lock(sliding).take(now)
    })
}

/// How many more events the window would count at `now` (a `now` earlier
/// than the latest take's counts as that one); 0 for a NULL window. A pure
/// reading: it drops no stamp and changes no later answer. O(log quota).
#[no_mangle]
pub extern "C" fn weir_sliding_left(sliding: *const weir_sliding, now: i64) -> i64 {
    on(sliding, 0, |sliding| lock(sliding).left(now))
}

/// Nanoseconds from `now` until the window has room: 0 when it has room
/// now, otherwise when its oldest counted event falls out. The wait counts
/// from this `now`, even one earlier than the latest take's, so a caller
/// that waits it finds room by its own clock. `INT64_MAX` when that instant
/// is past the end of the clock, and for a NULL window. A pure reading, as
/// `weir_sliding_left` is.
#[no_mangle]
pub extern "C" fn weir_sliding_next(sliding: *const weir_sliding, now: i64) -> i64 {
    on(sliding, NEVER, |sliding| lock(sliding).next(now))
}

/// Turns counting on for a sliding window: from this call on,
/// `weir_sliding_read_counts` reports what it decided. Call it right after
/// `weir_sliding_new` to count everything since the handle was made; a second
/// call changes nothing. Until then the handle costs what it did before
/// counting existed (see `weir_counts` for what counting costs).
/// `WEIR_ERR_NULL` for a NULL handle, `WEIR_ERR_MISALIGNED` for one no handle
/// can be at, `WEIR_ERR_POISONED` for a poisoned one.
#[no_mangle]
pub extern "C" fn weir_sliding_start_counting(sliding: *const weir_sliding) -> weir_status {
    start_counting(sliding)
}

/// Writes to `*out` what a sliding window decided since
/// `weir_sliding_start_counting`. A reading: it changes nothing. `admitted`:
/// takes that counted an event; `refused`: takes refused for want of room;
/// `errors`: 0 (no take has an invalid argument); `units`: equal to `admitted`.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_sliding_read_counts(
    sliding: *const weir_sliding,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(sliding, out)
}

#[cfg(all(test, target_pointer_width = "64", target_os = "linux"))]
mod tests {
    #[test]
    fn the_documented_handle_size_is_right() {
        assert_eq!(core::mem::size_of::<super::weir_sliding>(), 112);
    }
}
