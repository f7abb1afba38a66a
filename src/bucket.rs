//! C face of [`weir_core::bucket`].

use crate::guard::{free_handle, new_handle, on, Guarded, Handle};
use crate::status::weir_status::{self, *};
use weir_core::bucket::{Bucket, BucketError};
use weir_core::time::NEVER;

/// A token bucket: `rate` tokens a second accrue up to `burst`, and each
/// call spends what it costs. Lock-free (its whole state is one atomic word)
/// and safe to use from many threads at once; 56 bytes of heap per handle.
/// Made by `weir_bucket_new`, freed by `weir_bucket_free`.
pub struct weir_bucket(Guarded<Bucket>);

impl Handle for weir_bucket {
    type State = Bucket;
    fn guarded(&self) -> &Guarded<Bucket> {
        &self.0
    }
}

impl From<BucketError> for weir_status {
    fn from(error: BucketError) -> weir_status {
        match error {
            BucketError::NotFinite => WEIR_ERR_NOT_FINITE,
            BucketError::Negative => WEIR_ERR_NEGATIVE,
            BucketError::TooLarge => WEIR_ERR_TOO_LARGE,
        }
    }
}

/// Makes a full bucket at `now` and writes it to `*out`.
///
/// `rate` is tokens per second; 0 is a bucket that never refills. `burst`
/// is the most it holds: 0 or less means the rate, and a burst under one is
/// raised to one. Returns `WEIR_ERR_NULL` if `out` is NULL,
/// `WEIR_ERR_NOT_FINITE` for a NaN or infinite rate or burst,
/// `WEIR_ERR_NEGATIVE` for a negative rate, and `WEIR_ERR_TOO_LARGE` when
/// refilling the whole burst (burst / rate) would take more than about 73
/// years (with a rate of 0: for a burst over about 2.3 × 10^9). `*out` is
/// written only on success.
///
/// Refill is kept in whole nanoseconds: a take costs at least 1 ns of
/// refill, so one bucket admits at most 10^9 takes a second (express higher
/// rates with larger costs). The bucket's clock runs for about 146 years
/// after `now`; later readings count as that instant.
#[no_mangle]
pub extern "C" fn weir_bucket_new(
    rate: f64,
    burst: f64,
    now: i64,
    out: *mut *mut weir_bucket,
) -> weir_status {
    new_handle(out, || {
        Ok(weir_bucket(Guarded::new(Bucket::new(rate, burst, now)?)))
    })
}

/// Frees a bucket. NULL is accepted and ignored.
#[no_mangle]
pub extern "C" fn weir_bucket_free(bucket: *mut weir_bucket) {
    free_handle(bucket)
}

/// Takes `n` tokens at `now` if the bucket holds them; whether it did.
/// Fractional costs are allowed. Refuses (false, taking nothing) a NULL
/// bucket and an `n` that is 0, negative, NaN, infinite or more than the
/// burst: a cost of zero is refused rather than admitted for free. An
/// earlier `now` than one a take already used sees the bucket as it stood
/// then, so it never admits more than that take's `now` would. The
/// readings `weir_bucket_tokens` and `weir_bucket_next` write nothing (the
/// bucket is one word) and so set no such time: a take at a `now` earlier
/// than a reading's is judged at its own `now`. Pass a monotonic clock.
#[no_mangle]
pub extern "C" fn weir_bucket_take(bucket: *const weir_bucket, now: i64, n: f64) -> bool {
    on(bucket, false, |bucket| bucket.take(now, n))
}

/// Nanoseconds from `now` until `n` tokens will be there, without taking
/// them (what a Retry-After header needs): 0 when they are there now.
/// `INT64_MAX` when `n` is more than the burst, when the bucket will not
/// refill enough (a rate of 0, or the instant lies past the end of the
/// clock), and for a NULL bucket or an `n` that is 0, negative, NaN or
/// infinite.
#[no_mangle]
pub extern "C" fn weir_bucket_next(bucket: *const weir_bucket, now: i64, n: f64) -> i64 {
    on(bucket, NEVER, |bucket| bucket.next(now, n))
}

/// How many tokens the bucket holds at `now`, from 0 up to the burst; 0 for
/// a NULL bucket.
#[no_mangle]
pub extern "C" fn weir_bucket_tokens(bucket: *const weir_bucket, now: i64) -> f64 {
    on(bucket, 0.0, |bucket| bucket.tokens(now))
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    #[test]
    fn the_documented_handle_size_is_right() {
        assert_eq!(core::mem::size_of::<super::weir_bucket>(), 56);
    }
}
