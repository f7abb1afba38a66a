/* weir_window through the header: the layout of weir_window_total, clearing on
 * write, skipping on read, two reads at one now agreeing, time going
 * backwards, a small buffer, bad input, INT64 extremes, and threads. */
#include <pthread.h>
#include <stddef.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_window_total) == 16, "weir_window_total size");
_Static_assert(_Alignof(weir_window_total) == 8, "weir_window_total align");
_Static_assert(offsetof(weir_window_total, sum) == 0, "weir_window_total.sum");
_Static_assert(offsetof(weir_window_total, count) == 8, "weir_window_total.count");

#define MS INT64_C(1000000)

/* The buckets at `now` (with the current one) equal `sums`, counts 0 or 1. */
static int buckets_are(const weir_window *window, int64_t now, const int64_t sums[4]) {
    weir_window_total got[4];
    if (weir_window_read_buckets(window, now, true, got, 4) != 4) return 0;
    for (int i = 0; i < 4; i++) {
        if (got[i].sum != sums[i] || got[i].count != (sums[i] != 0)) return 0;
    }
    return 1;
}

enum { THREADS = 4, ROUNDS = 10000 };

static void *adder(void *arg) {
    weir_window *window = arg;
    for (int i = 0; i < ROUNDS; i++) {
        if (weir_window_add(window, 0, 2) != WEIR_OK) return (void *)1;
    }
    return NULL;
}

int main(void) {
    weir_window *window = NULL;
    weir_window_total total;
    CHECK_STATUS(weir_window_new(4, 400 * MS, 0, &window), WEIR_OK);
    CHECK(weir_window_size(window) == 4);
    CHECK(weir_window_width(window) == 100 * MS);
    for (int64_t i = 0; i < 4; i++) CHECK_STATUS(weir_window_add(window, i * 100 * MS, i + 1), WEIR_OK);
    CHECK(buckets_are(window, 300 * MS, (const int64_t[]){1, 2, 3, 4}));
    CHECK_STATUS(weir_window_read_total(window, 300 * MS, true, &total), WEIR_OK);
    CHECK(total.sum == 10 && total.count == 4);
    CHECK_STATUS(weir_window_read_total(window, 300 * MS, false, &total), WEIR_OK);
    CHECK(total.sum == 6 && total.count == 3);

    /* Reading later skips without clearing; two reads at one now agree. */
    CHECK(buckets_are(window, 550 * MS, (const int64_t[]){3, 4, 0, 0}));
    CHECK(buckets_are(window, 550 * MS, (const int64_t[]){3, 4, 0, 0}));
    CHECK(buckets_are(window, 300 * MS, (const int64_t[]){1, 2, 3, 4}));
    weir_window_total three[3];
    CHECK(weir_window_read_buckets(window, 550 * MS, false, three, 3) == 3);
    CHECK(three[0].sum == 3 && three[1].sum == 4 && three[2].count == 0);

    /* Writing later clears what the gap swept and snaps the head. */
    CHECK_STATUS(weir_window_add(window, 550 * MS, 10), WEIR_OK);
    CHECK(buckets_are(window, 550 * MS, (const int64_t[]){3, 4, 0, 10}));
    CHECK(buckets_are(window, 300 * MS, (const int64_t[]){3, 4, 0, 10})); /* gone for good */
    CHECK_STATUS(weir_window_add(window, 599 * MS, 5), WEIR_OK);           /* same bucket */
    CHECK_STATUS(weir_window_read_total(window, 599 * MS, true, &total), WEIR_OK);
    CHECK(total.sum == 22 && total.count == 4);

    /* Time going backwards: into the head, nothing cleared. */
    CHECK_STATUS(weir_window_add(window, 0, 1), WEIR_OK);
    CHECK_STATUS(weir_window_add(window, INT64_MIN, 1), WEIR_OK);
    CHECK_STATUS(weir_window_read_total(window, 599 * MS, true, &total), WEIR_OK);
    CHECK(total.sum == 24 && total.count == 6);
    weir_window_total before[4], after[4];
    CHECK(weir_window_read_buckets(window, 599 * MS, true, before, 4) == 4);
    CHECK(weir_window_read_buckets(window, INT64_MIN, true, after, 4) == 4);
    for (int i = 0; i < 4; i++) CHECK(before[i].sum == after[i].sum && before[i].count == after[i].count);

    /* A small buffer gets the newest buckets, oldest first. */
    weir_window_total two[2];
    CHECK(weir_window_read_buckets(window, 599 * MS, true, two, 2) == 2);
    CHECK(two[0].sum == 0 && two[1].sum == 17);
    CHECK(weir_window_read_buckets(window, 599 * MS, true, two, 0) == 0);
    CHECK(weir_window_read_buckets(window, 599 * MS, true, NULL, 4) == 0);

    /* INT64 extremes and saturating sums. */
    CHECK_STATUS(weir_window_add(window, INT64_MAX, INT64_MAX), WEIR_OK);
    CHECK_STATUS(weir_window_add(window, INT64_MAX, 1), WEIR_OK);
    CHECK_STATUS(weir_window_read_total(window, INT64_MAX, true, &total), WEIR_OK);
    CHECK(total.sum == INT64_MAX && total.count == 2);
    CHECK_STATUS(weir_window_add(window, INT64_MAX, INT64_MIN), WEIR_OK);
    CHECK_STATUS(weir_window_add(window, INT64_MAX, INT64_MIN), WEIR_OK);
    CHECK_STATUS(weir_window_read_total(window, INT64_MAX, true, &total), WEIR_OK);
    CHECK(total.sum == INT64_MIN && total.count == 4); /* MAX + MIN = -1, then held at MIN */
    weir_window_free(window);

    /* Bad input: statuses, sizes raised to one, NULL everywhere. */
    window = NULL;
    CHECK_STATUS(weir_window_new(4, 0, 0, &window), WEIR_ERR_WINDOW_SPAN);
    CHECK_STATUS(weir_window_new(4, INT64_MIN, 0, &window), WEIR_ERR_WINDOW_SPAN);
    CHECK_STATUS(weir_window_new(INT32_MAX, 1000, 0, &window), WEIR_ERR_WINDOW_SIZE);
    CHECK(window == NULL);
    CHECK_STATUS(weir_window_new(4, 1000, 0, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_window_new(INT32_MIN, 1000, INT64_MIN, &window), WEIR_OK);
    CHECK(weir_window_size(window) == 1 && weir_window_width(window) == 1000);
    CHECK_STATUS(weir_window_read_total(window, 0, true, NULL), WEIR_ERR_NULL);
    CHECK(weir_window_read_buckets(window, 0, false, two, 2) == 0); /* one bucket, current left out */
    weir_window_free(window);
    CHECK_STATUS(weir_window_new(100, 10, 0, &window), WEIR_OK);
    CHECK(weir_window_width(window) == 1); /* never narrower than 1 ns */
    weir_window_free(window);

    CHECK_STATUS(weir_window_add(NULL, 0, 1), WEIR_ERR_NULL);
    CHECK_STATUS(weir_window_read_total(NULL, 0, true, &total), WEIR_ERR_NULL);
    CHECK(weir_window_read_buckets(NULL, 0, true, two, 2) == 0);
    CHECK(weir_window_size(NULL) == 0);
    CHECK(weir_window_width(NULL) == 0);
    weir_window_free(NULL);

    /* Threads: every add lands. */
    CHECK_STATUS(weir_window_new(10, 1000 * MS, 0, &window), WEIR_OK);
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) CHECK(pthread_create(&threads[t], NULL, adder, window) == 0);
    for (int t = 0; t < THREADS; t++) {
        void *result;
        CHECK(pthread_join(threads[t], &result) == 0);
        CHECK(result == NULL);
    }
    CHECK_STATUS(weir_window_read_total(window, 0, true, &total), WEIR_OK);
    CHECK(total.count == THREADS * ROUNDS && total.sum == 2 * THREADS * ROUNDS);
    weir_window_free(window);
    CHECK_DONE();
}
