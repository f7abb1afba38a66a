/* Changing a bucket's rate and burst while other threads take from it, by
 * the rule weir_bucket_reconfigure states: its takes read the bucket's
 * policy without a lock, so the program holds its takers off during the
 * change with a reader-writer lock of its own (the takes share it, the
 * change takes it alone). Three threads take while a fourth changes the
 * policy back and forth, and the tokens taken must stay within the bound
 * the header states across changes:
 *  - all at one instant: a change adds no token, so exactly the first
 *    burst passes, whatever the changes between a burst of 10 and of 50;
 *  - on a clock the takers move on: at most the larger burst plus the
 *    faster rate times the time run.
 * This tests the caller's side of the rule, not a concurrent change: a
 * change beside unlocked takes is outside the contract. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "weir.h"

#define MS INT64_C(1000000)
enum { TAKERS = 3, ROUNDS = 20, TAKES = 400 };

struct shared {
    weir_bucket *bucket;
    pthread_rwlock_t lock;
    atomic_long taken;
    atomic_long clock_ms; /* the clock, moved on by the takers (or not) */
    atomic_int moving;    /* whether a take moves the clock on */
    atomic_int done;
    atomic_long bad;
};

static void *take(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        int64_t now = (atomic_load(&s->moving) ? atomic_fetch_add(&s->clock_ms, 1) : 0) * MS / 10;
        if (pthread_rwlock_rdlock(&s->lock) != 0) atomic_fetch_add(&s->bad, 1);
        if (weir_bucket_take(s->bucket, now, 1.0)) atomic_fetch_add(&s->taken, 1);
        if (pthread_rwlock_unlock(&s->lock) != 0) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

/* Burst 10 at 1000/s and burst 50 at 100/s in turn. */
static void *change(void *arg) {
    struct shared *s = arg;
    for (int i = 0; !atomic_load(&s->done) || i < 50; i++) {
        int64_t now = atomic_load(&s->clock_ms) * MS / 10;
        if (pthread_rwlock_wrlock(&s->lock) != 0) atomic_fetch_add(&s->bad, 1);
        weir_status status = i % 2 ? weir_bucket_reconfigure(s->bucket, 100.0, 50.0, now)
                                   : weir_bucket_reconfigure(s->bucket, 1000.0, 10.0, now);
        if (status != WEIR_OK) atomic_fetch_add(&s->bad, 1);
        if (pthread_rwlock_unlock(&s->lock) != 0) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static long run(int moving) {
    struct shared s;
    CHECK_STATUS(weir_bucket_new(1000.0, 10.0, 0, &s.bucket), WEIR_OK);
    CHECK(pthread_rwlock_init(&s.lock, NULL) == 0);
    atomic_store(&s.taken, 0);
    atomic_store(&s.clock_ms, 0);
    atomic_store(&s.moving, moving);
    atomic_store(&s.done, 0);
    atomic_store(&s.bad, 0);
    pthread_t takers[TAKERS], changer;
    CHECK(pthread_create(&changer, NULL, change, &s) == 0);
    for (int i = 0; i < TAKERS; i++) CHECK(pthread_create(&takers[i], NULL, take, &s) == 0);
    for (int i = 0; i < TAKERS; i++) CHECK(pthread_join(takers[i], NULL) == 0);
    atomic_store(&s.done, 1);
    CHECK(pthread_join(changer, NULL) == 0);
    CHECK(atomic_load(&s.bad) == 0);
    CHECK(pthread_rwlock_destroy(&s.lock) == 0);
    weir_bucket_free(s.bucket);
    return atomic_load(&s.taken);
}

int main(void) {
    for (int round = 0; round < ROUNDS; round++) {
        /* One instant: the first burst, exactly. */
        CHECK(run(0) == 10);
        /* TAKERS * TAKES takes at instants 0.1 ms apart: at most the larger
         * burst (50) plus the faster rate (1000/s) times the time run. */
        long span_ms = TAKERS * TAKES / 10;
        long taken = run(1);
        CHECK(taken >= 10 && taken <= 50 + span_ms);
    }
    CHECK_DONE();
}
