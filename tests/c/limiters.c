/* The time-based limiters together: scenario 1 of docs/design.md asserted through
 * the header, and threads sharing one bucket, one sliding window and one
 * gate without ever admitting more than the policy allows. */
#include <pthread.h>

#include "check.h"
#include "weir.h"

#define MS INT64_C(1000000)
#define SECOND INT64_C(1000000000)

enum { THREADS = 4, ROUNDS = 5000, CEILING = 3 };

/* Scenario 1: 20 a second each; forty calls 2.5 ms apart from 50 ms before
 * every odd second pass 21 (bucket), 20 (sliding), 40 (aligned period). */
static void scenario_1(void) {
    weir_bucket *bucket = NULL;
    weir_sliding *sliding = NULL;
    weir_period *period = NULL;
    CHECK_STATUS(weir_bucket_new(20.0, 0.0, 0, &bucket), WEIR_OK);
    CHECK_STATUS(weir_sliding_new(20, SECOND, &sliding), WEIR_OK);
    CHECK_STATUS(weir_period_new(20, SECOND, true, &period), WEIR_OK);
    for (int64_t burst = 0; burst < 4; burst++) {
        int64_t start = (2 * burst + 1) * SECOND - 50 * MS, now = start;
        int by_bucket = 0, by_sliding = 0, by_period = 0, hits = 0;
        for (int call = 0; call < 40; call++) {
            now = start + call * 2500000;
            by_bucket += weir_bucket_take(bucket, now, 1.0);
            by_sliding += weir_sliding_take(sliding, now);
            weir_period_quota quota = weir_period_take(period, now);
            by_period += quota != WEIR_PERIOD_QUOTA_OVER;
            hits += quota == WEIR_PERIOD_QUOTA_HIT;
        }
        CHECK(by_bucket == 21);
        CHECK(by_sliding == 20);
        CHECK(by_period == 40);
        CHECK(hits == 2); /* once each side of the second boundary */
        /* Right after the last call: five tokens in 202.5 ms. */
        CHECK(weir_bucket_next(bucket, now, 5.0) == 202500000);
    }
    weir_bucket_free(bucket);
    weir_sliding_free(sliding);
    weir_period_free(period);
}

/* One handle of each kind, shared by every thread. */
struct shared {
    weir_bucket *bucket;
    weir_sliding *sliding;
    weir_gate *gate;
    int64_t step; /* how far the clock moves each round (0: it stands still) */
};

struct tally {
    long bucket, sliding, gate;
    int ceiling_broken;
};

static void *hammer(void *arg) {
    const struct shared *shared = arg;
    struct tally *tally = calloc(1, sizeof *tally);
    if (tally == NULL) return NULL;
    for (int64_t round = 0; round < ROUNDS; round++) {
        int64_t now = round * shared->step;
        tally->bucket += weir_bucket_take(shared->bucket, now, 1.0);
        tally->sliding += weir_sliding_take(shared->sliding, now);
        if (weir_gate_enter(shared->gate)) {
            tally->gate++;
            if (weir_gate_held(shared->gate) > CEILING) tally->ceiling_broken = 1;
            weir_gate_leave(shared->gate);
        }
    }
    return tally;
}

/* Runs THREADS threads over the shared handles and sums their tallies. */
static struct tally run_threads(struct shared *shared) {
    pthread_t threads[THREADS];
    struct tally total = {0, 0, 0, 0};
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, hammer, shared) == 0);
    for (int i = 0; i < THREADS; i++) {
        void *result = NULL;
        CHECK(pthread_join(threads[i], &result) == 0);
        CHECK(result != NULL);
        struct tally *tally = result;
        total.bucket += tally->bucket;
        total.sliding += tally->sliding;
        total.gate += tally->gate;
        total.ceiling_broken |= tally->ceiling_broken;
        free(tally);
    }
    return total;
}

static void threads(void) {
    struct shared shared;
    CHECK_STATUS(weir_gate_new(CEILING, &shared.gate), WEIR_OK);

    /* The clock stands still: exactly the burst and exactly the quota. */
    CHECK_STATUS(weir_bucket_new(1.0, 1000.0, 0, &shared.bucket), WEIR_OK);
    CHECK_STATUS(weir_sliding_new(100, SECOND, &shared.sliding), WEIR_OK);
    shared.step = 0;
    struct tally total = run_threads(&shared);
    CHECK(total.bucket == 1000);
    CHECK(total.sliding == 100);
    CHECK(total.gate > 0);
    CHECK(!total.ceiling_broken);
    CHECK(weir_gate_held(shared.gate) == 0);
    CHECK(weir_bucket_tokens(shared.bucket, 0) == 0.0);
    CHECK(weir_sliding_left(shared.sliding, 0) == 0);
    weir_bucket_free(shared.bucket);
    weir_sliding_free(shared.sliding);

    /* The clock moves 1 ms a round over 5 s, each thread at its own pace:
     * the bucket (1000/s, burst 10) admits at most 10 + 1 a millisecond, the
     * window (100 a second) at most 100 in each of five seconds. */
    CHECK_STATUS(weir_bucket_new(1000.0, 10.0, 0, &shared.bucket), WEIR_OK);
    CHECK_STATUS(weir_sliding_new(100, SECOND, &shared.sliding), WEIR_OK);
    shared.step = MS;
    total = run_threads(&shared);
    CHECK(total.bucket <= 10 + (ROUNDS - 1));
    CHECK(total.bucket >= ROUNDS / 2);
    CHECK(total.sliding >= 100 && total.sliding <= 500);
    CHECK(!total.ceiling_broken);
    CHECK(weir_gate_held(shared.gate) == 0);
    weir_bucket_free(shared.bucket);
    weir_sliding_free(shared.sliding);
    weir_gate_free(shared.gate);
}

int main(void) {
    scenario_1();
    threads();
    CHECK_DONE();
}
