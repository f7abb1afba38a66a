/* weir_bucket through the header: starts full, refills at the rate, the
 * burst clamp, fractional costs, next and tokens, and bad input of every
 * kind, each followed by proof that the bucket still behaves; refunds, what
 * they give back and what they refuse. */
#include <math.h>

#include "check.h"
#include "weir.h"

#define MS INT64_C(1000000)
#define SECOND INT64_C(1000000000)

int main(void) {
    weir_bucket *bucket = NULL;

    /* Ten a second, five at most: starts full, then one every 100 ms. */
    CHECK_STATUS(weir_bucket_new(10.0, 5.0, 0, &bucket), WEIR_OK);
    CHECK(bucket != NULL);
    CHECK(weir_bucket_tokens(bucket, 0) == 5.0);
    CHECK(weir_bucket_next(bucket, 0, 5.0) == 0);
    for (int i = 0; i < 5; i++) CHECK(weir_bucket_take(bucket, 0, 1.0));
    CHECK(!weir_bucket_take(bucket, 0, 1.0));
    CHECK(weir_bucket_tokens(bucket, 0) == 0.0);
    CHECK(weir_bucket_next(bucket, 0, 1.0) == 100 * MS);
    CHECK(weir_bucket_next(bucket, 0, 2.5) == 250 * MS);
    CHECK(!weir_bucket_take(bucket, 100 * MS - 1, 1.0));
    CHECK(weir_bucket_take(bucket, 100 * MS, 1.0));
    CHECK(weir_bucket_tokens(bucket, 350 * MS) == 2.5);
    CHECK(weir_bucket_take(bucket, 350 * MS, 2.5)); /* a fractional cost */
    CHECK(weir_bucket_tokens(bucket, 3600 * SECOND) == 5.0);

    /* Bad costs: refused, and they take nothing. */
    double bad_costs[] = {0.0, -0.0, -1.0, NAN, INFINITY, -INFINITY, 5.5};
    for (size_t i = 0; i < sizeof bad_costs / sizeof bad_costs[0]; i++) {
        CHECK(!weir_bucket_take(bucket, 3600 * SECOND, bad_costs[i]));
        CHECK(weir_bucket_next(bucket, 3600 * SECOND, bad_costs[i]) == INT64_MAX);
    }
    CHECK(weir_bucket_tokens(bucket, 3600 * SECOND) == 5.0);

    /* Time going backwards: an earlier reading sees the bucket as it was
     * then and admits nothing more. */
    CHECK(weir_bucket_take(bucket, 3600 * SECOND, 5.0));
    CHECK(!weir_bucket_take(bucket, 3599 * SECOND, 1.0));
    CHECK(!weir_bucket_take(bucket, INT64_MIN, 1.0));
    CHECK(weir_bucket_tokens(bucket, 0) == 0.0);
    CHECK(weir_bucket_take(bucket, 3600 * SECOND + 100 * MS, 1.0));
    CHECK(!weir_bucket_take(bucket, 3600 * SECOND + 100 * MS, 1.0));
    weir_bucket_free(bucket);

    /* WEIR_ERR_TOO_LARGE: the full burst must fit 2^61 ns of ticks, a token
     * costing at least 1 ns. A refill of centuries; above 10^9/s a burst over
     * about 2.3e18 that refills in 35 days; a rate of 2^64/s whatever the
     * burst; just inside each bound, a bucket. */
    CHECK_STATUS(weir_bucket_new(1.0, 1e10, 0, &bucket), WEIR_ERR_TOO_LARGE);
    CHECK_STATUS(weir_bucket_new(1e12, 3e18, 0, &bucket), WEIR_ERR_TOO_LARGE);
    CHECK_STATUS(weir_bucket_new(1.8446744073709552e19, 1.0, 0, &bucket), WEIR_ERR_TOO_LARGE);
    CHECK_STATUS(weir_bucket_new(0.0, 3e9, 0, &bucket), WEIR_ERR_TOO_LARGE);
    CHECK_STATUS(weir_bucket_new(1e12, 2e18, 0, &bucket), WEIR_OK);
    weir_bucket_free(bucket);
    CHECK_STATUS(weir_bucket_new(1.8e19, 1.0, 0, &bucket), WEIR_OK);
    weir_bucket_free(bucket);
    CHECK_STATUS(weir_bucket_new(0.0, 2e9, 0, &bucket), WEIR_OK);
    weir_bucket_free(bucket);

    /* The burst: 0 or less means the rate, and never under one. */
    CHECK_STATUS(weir_bucket_new(3.0, 0.0, 0, &bucket), WEIR_OK);
    CHECK(weir_bucket_tokens(bucket, 0) == 3.0);
    weir_bucket_free(bucket);
    CHECK_STATUS(weir_bucket_new(3.0, -7.0, 0, &bucket), WEIR_OK);
    CHECK(weir_bucket_tokens(bucket, 0) == 3.0);
    weir_bucket_free(bucket);
    CHECK_STATUS(weir_bucket_new(0.5, 0.0, 0, &bucket), WEIR_OK);
    CHECK(weir_bucket_tokens(bucket, 0) == 1.0);
    weir_bucket_free(bucket);
    CHECK_STATUS(weir_bucket_new(1.0, 0.25, 0, &bucket), WEIR_OK);
    CHECK(weir_bucket_tokens(bucket, 0) == 1.0);
    CHECK(weir_bucket_take(bucket, 0, 1.0));
    CHECK(!weir_bucket_take(bucket, 0, 0.25));
    CHECK(weir_bucket_next(bucket, 0, 1.0) == SECOND);
    weir_bucket_free(bucket);

    /* A rate of zero: starts full and never refills. */
    CHECK_STATUS(weir_bucket_new(0.0, 2.0, 0, &bucket), WEIR_OK);
    CHECK(weir_bucket_next(bucket, 0, 2.0) == 0);
    CHECK(weir_bucket_take(bucket, 0, 1.5));
    CHECK(!weir_bucket_take(bucket, INT64_MAX, 1.0));
    CHECK(weir_bucket_take(bucket, INT64_MAX, 0.5));
    CHECK(weir_bucket_tokens(bucket, INT64_MAX) == 0.0);
    CHECK(weir_bucket_next(bucket, INT64_MAX, 1.0) == INT64_MAX);
    weir_bucket_free(bucket);

    /* A full bucket admits its whole burst at once, at every
     * rate = burst = r (the capacity and the costs share one rounding). */
    CHECK_STATUS(weir_bucket_new(7.0, 7.0, 0, &bucket), WEIR_OK);
    CHECK(weir_bucket_tokens(bucket, 0) == 7.0);
    for (int i = 0; i < 7; i++) CHECK(weir_bucket_take(bucket, 0, 1.0));
    CHECK(!weir_bucket_take(bucket, 0, 1.0));
    weir_bucket_free(bucket);
    for (int r = 1; r <= 200; r++) {
        CHECK_STATUS(weir_bucket_new(r, r, 0, &bucket), WEIR_OK);
        int admitted = 0;
        for (int i = 0; i < r + 5; i++) admitted += weir_bucket_take(bucket, 0, 1.0);
        CHECK(admitted == r);
        weir_bucket_free(bucket);
    }
    /* And high rates never pass more than burst + rate × span. */
    CHECK_STATUS(weir_bucket_new(7.5e8, 1.0, 0, &bucket), WEIR_OK);
    long passed = 0;
    for (int64_t now = 0; now < MS; now++) passed += weir_bucket_take(bucket, now, 1.0);
    CHECK(passed <= 1 + 750000);
    weir_bucket_free(bucket);

    /* Bad parameters: a status, and *out is left alone. */
    weir_bucket *untouched = (weir_bucket *)&bucket;
    double not_finite[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++) {
        bucket = untouched;
        CHECK_STATUS(weir_bucket_new(not_finite[i], 1.0, 0, &bucket), WEIR_ERR_NOT_FINITE);
        CHECK_STATUS(weir_bucket_new(1.0, not_finite[i], 0, &bucket), WEIR_ERR_NOT_FINITE);
        CHECK(bucket == untouched);
    }
    CHECK_STATUS(weir_bucket_new(-1.0, 1.0, 0, &bucket), WEIR_ERR_NEGATIVE);
    CHECK_STATUS(weir_bucket_new(-1e-300, 0.0, 0, &bucket), WEIR_ERR_NEGATIVE);
    CHECK_STATUS(weir_bucket_new(1.0, 1e12, 0, &bucket), WEIR_ERR_TOO_LARGE);
    CHECK_STATUS(weir_bucket_new(1e-300, 0.0, 0, &bucket), WEIR_ERR_TOO_LARGE);
    CHECK(bucket == untouched);
    CHECK_STATUS(weir_bucket_new(1.0, 1.0, 0, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bucket_new(NAN, 1.0, 0, NULL), WEIR_ERR_NULL);

    /* NULL handles: a refusal or a neutral answer, never a crash. */
    CHECK(!weir_bucket_take(NULL, 0, 1.0));
    CHECK(weir_bucket_next(NULL, 0, 1.0) == INT64_MAX);
    CHECK(weir_bucket_tokens(NULL, 0) == 0.0);
    weir_bucket_free(NULL);

    /* The ends of the clock: made at INT64_MAX, nothing wraps and a wait
     * the clock cannot reach is "never". */
    CHECK_STATUS(weir_bucket_new(1.0, 2.0, INT64_MAX, &bucket), WEIR_OK);
    CHECK(weir_bucket_take(bucket, INT64_MAX, 2.0));
    CHECK(!weir_bucket_take(bucket, INT64_MAX, 1.0));
    CHECK(weir_bucket_next(bucket, INT64_MAX, 1.0) == INT64_MAX);
    CHECK(weir_bucket_tokens(bucket, INT64_MIN) == 0.0);
    weir_bucket_free(bucket);
    /* Made at INT64_MIN: full at INT64_MAX, and then no more. */
    CHECK_STATUS(weir_bucket_new(1.0, 2.0, INT64_MIN, &bucket), WEIR_OK);
    CHECK(weir_bucket_tokens(bucket, INT64_MAX) == 2.0);
    CHECK(weir_bucket_take(bucket, INT64_MAX, 2.0));
    CHECK(!weir_bucket_take(bucket, INT64_MAX, 1.0));
    CHECK(weir_bucket_next(bucket, INT64_MAX, 1.0) == INT64_MAX);
    weir_bucket_free(bucket);
    /* Made at zero, asked at INT64_MIN: empty there, and it still works. */
    CHECK_STATUS(weir_bucket_new(5.0, 5.0, 0, &bucket), WEIR_OK);
    CHECK(!weir_bucket_take(bucket, INT64_MIN, 1.0));
    CHECK(weir_bucket_next(bucket, INT64_MIN, 1.0) > 0);
    CHECK(weir_bucket_take(bucket, 0, 5.0));
    CHECK(weir_bucket_next(bucket, 0, 1.0) == 200 * MS);
    weir_bucket_free(bucket);

    /* Refunds. 10 a second up to 5: a take of 2 refunded at its own now
     * is undone; a second refund finds the bucket full. */
    CHECK_STATUS(weir_bucket_new(10.0, 5.0, 0, &bucket), WEIR_OK);
    CHECK(weir_bucket_take(bucket, 0, 2.0));
    CHECK_STATUS(weir_bucket_refund(bucket, 0, 0, 2.0), WEIR_OK);
    CHECK(weir_bucket_tokens(bucket, 0) == 5.0);
    CHECK_STATUS(weir_bucket_refund(bucket, 0, 0, 1.0), WEIR_ERR_REFUND_FULL);
    /* Emptied at 1 s; a take of 1 at 1.2 s leaves 1. Refunded at 1.25 s it
     * gives back 1 - 10 x 0.05 = 0.5: 1.5 + 0.5 = 2. */
    CHECK(weir_bucket_take(bucket, SECOND, 5.0));
    CHECK(weir_bucket_take(bucket, 1200 * MS, 1.0));
    CHECK_STATUS(weir_bucket_refund(bucket, 1250 * MS, 1200 * MS, 1.0), WEIR_OK);
    CHECK(weir_bucket_tokens(bucket, 1250 * MS) == 2.0);
    /* 100 ms after a take of one the refill has made it good. */
    CHECK_STATUS(weir_bucket_refund(bucket, 1300 * MS, 1200 * MS, 1.0), WEIR_ERR_REFUND_EXPIRED);
    /* Never above the burst: 4 held, a refund of 3 gives back 1. */
    CHECK(weir_bucket_take(bucket, 3600 * SECOND, 1.0));
    CHECK_STATUS(weir_bucket_refund(bucket, 3600 * SECOND, 3600 * SECOND, 3.0), WEIR_OK);
    CHECK(weir_bucket_tokens(bucket, 3600 * SECOND) == 5.0);
    /* Hostile refunds: each an error that changes nothing. */
    CHECK(weir_bucket_take(bucket, 3600 * SECOND, 5.0));
    double bad_refunds[] = {0.0, -0.0, -1.0, NAN, INFINITY, -INFINITY, 5.5, 1e308};
    for (size_t i = 0; i < sizeof bad_refunds / sizeof bad_refunds[0]; i++) {
        CHECK_STATUS(weir_bucket_refund(bucket, 3600 * SECOND, 3600 * SECOND, bad_refunds[i]),
                     WEIR_ERR_LIMITER_INVALID_AMOUNT);
    }
    CHECK_STATUS(weir_bucket_refund(bucket, 3600 * SECOND, 3600 * SECOND + 1, 1.0), WEIR_ERR_REFUND_FUTURE);
    CHECK_STATUS(weir_bucket_refund(bucket, INT64_MIN, INT64_MAX, 1.0), WEIR_ERR_REFUND_FUTURE);
    CHECK_STATUS(weir_bucket_refund(bucket, INT64_MAX, INT64_MIN, 1.0), WEIR_ERR_REFUND_EXPIRED);
    CHECK_STATUS(weir_bucket_refund(NULL, 0, 0, 1.0), WEIR_ERR_NULL);
    CHECK(weir_bucket_tokens(bucket, 3600 * SECOND) == 0.0);
    CHECK(!weir_bucket_take(bucket, 3600 * SECOND, 1.0));
    weir_bucket_free(bucket);
    /* A bucket that never refills takes a refund whenever. */
    CHECK_STATUS(weir_bucket_new(0.0, 4.0, 0, &bucket), WEIR_OK);
    CHECK(weir_bucket_take(bucket, 0, 4.0));
    CHECK_STATUS(weir_bucket_refund(bucket, 1000 * SECOND, 0, 1.0), WEIR_OK);
    CHECK(weir_bucket_take(bucket, 2000 * SECOND, 1.0));
    CHECK(!weir_bucket_take(bucket, 2000 * SECOND, 1.0));
    weir_bucket_free(bucket);
    CHECK_DONE();
}
