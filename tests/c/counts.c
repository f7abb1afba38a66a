/* weir_counts through the header: its layout, counting off until
 * weir_<type>_start_counting, what each decision counts as, and many
 * threads counting on one bucket at once. */
#include <pthread.h>
#include <stddef.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_counts) == 32, "weir_counts is 32 bytes");
_Static_assert(_Alignof(weir_counts) == 8, "weir_counts is 8-aligned");
_Static_assert(offsetof(weir_counts, admitted) == 0, "admitted at 0");
_Static_assert(offsetof(weir_counts, refused) == 8, "refused at 8");
_Static_assert(offsetof(weir_counts, errors) == 16, "errors at 16");
_Static_assert(offsetof(weir_counts, units) == 24, "units at 24");

enum { THREADS = 4, ROUNDS = 20000 };

static void *hammer(void *arg) {
    weir_bucket *bucket = arg;
    long admitted = 0;
    for (int i = 0; i < ROUNDS; i++) {
        admitted += weir_bucket_take(bucket, i, 1.0);
    }
    return (void *)admitted;
}

int main(void) {
    weir_counts counts;
    /* Off until started: the reading says so and writes nothing. */
    weir_bucket *bucket = NULL;
    CHECK_STATUS(weir_bucket_new(1, 3, 0, &bucket), WEIR_OK);
    CHECK(weir_bucket_take(bucket, 0, 1.0));
    counts.admitted = 77;
    CHECK_STATUS(weir_bucket_read_counts(bucket, &counts), WEIR_ERR_COUNTS_OFF);
    CHECK(counts.admitted == 77);
    CHECK_STATUS(weir_bucket_start_counting(bucket), WEIR_OK);
    CHECK_STATUS(weir_bucket_start_counting(bucket), WEIR_OK);
    CHECK(weir_bucket_take(bucket, 0, 1.5));
    CHECK(!weir_bucket_take(bucket, 0, 1.0));
    CHECK(!weir_bucket_take(bucket, 0, 0.0));
    CHECK(!weir_bucket_take(bucket, 0, 4.0));
    CHECK_STATUS(weir_bucket_refund(bucket, 0, 1, 1.0), WEIR_ERR_REFUND_FUTURE);
    CHECK_STATUS(weir_bucket_read_counts(bucket, &counts), WEIR_OK);
    CHECK(counts.admitted == 1 && counts.refused == 1 && counts.errors == 3 && counts.units == 1.5);
    /* A reading changes nothing. */
    weir_counts again;
    CHECK_STATUS(weir_bucket_read_counts(bucket, &again), WEIR_OK);
    CHECK(again.admitted == counts.admitted && again.refused == counts.refused);
    CHECK_STATUS(weir_bucket_read_counts(bucket, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bucket_read_counts(NULL, &counts), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bucket_start_counting(NULL), WEIR_ERR_NULL);
    weir_bucket_free(bucket);

    /* A period: HIT and UNDER admitted, OVER refused. */
    weir_period *period = NULL;
    CHECK_STATUS(weir_period_new(2, 1000, false, &period), WEIR_OK);
    CHECK_STATUS(weir_period_start_counting(period), WEIR_OK);
    CHECK(weir_period_take(period, 0) == WEIR_PERIOD_QUOTA_UNDER);
    CHECK(weir_period_take(period, 0) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_take(period, 0) == WEIR_PERIOD_QUOTA_OVER);
    CHECK_STATUS(weir_period_read_counts(period, &counts), WEIR_OK);
    CHECK(counts.admitted == 2 && counts.refused == 1 && counts.errors == 0 && counts.units == 2);
    weir_period_free(period);

    /* A pool: MAKE admitted, WAIT refused, an unmade without a MAKE an
     * error. */
    weir_pool_policy policy = weir_pool_policy_preset();
    policy.size = 1;
    weir_pool *pool = NULL;
    CHECK_STATUS(weir_pool_new(&policy, &pool), WEIR_OK);
    CHECK_STATUS(weir_pool_start_counting(pool), WEIR_OK);
    CHECK(weir_pool_take(pool, 0).kind == WEIR_POOL_TAKEN_MAKE);
    CHECK(weir_pool_take(pool, 0).kind == WEIR_POOL_TAKEN_WAIT);
    CHECK_STATUS(weir_pool_unmade(pool), WEIR_OK);
    CHECK_STATUS(weir_pool_unmade(pool), WEIR_ERR_POOL_NO_RESERVATION);
    CHECK_STATUS(weir_pool_read_counts(pool, &counts), WEIR_OK);
    CHECK(counts.admitted == 1 && counts.refused == 1 && counts.errors == 1);
    weir_pool_free(pool);

    /* Many threads on one counting bucket: every answer counted once. */
    CHECK_STATUS(weir_bucket_new(1e6, 100, 0, &bucket), WEIR_OK);
    CHECK_STATUS(weir_bucket_start_counting(bucket), WEIR_OK);
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) CHECK(pthread_create(&threads[t], NULL, hammer, bucket) == 0);
    long admitted = 0;
    for (int t = 0; t < THREADS; t++) {
        void *out;
        CHECK(pthread_join(threads[t], &out) == 0);
        admitted += (long)out;
    }
    CHECK_STATUS(weir_bucket_read_counts(bucket, &counts), WEIR_OK);
    CHECK(counts.admitted == (uint64_t)admitted);
    CHECK(counts.admitted + counts.refused == (uint64_t)THREADS * ROUNDS);
    CHECK(counts.units == (double)admitted);
    weir_bucket_free(bucket);
    CHECK_DONE();
}
