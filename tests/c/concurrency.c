/* weir_concurrency through the header: the layouts, the preset, Gradient2's
 * arithmetic worked by hand, the limit rising under steady latency, falling
 * under queueing and growing back, flights leaving once, bad input (bad
 * policies, NULL, misaligned and scribbled flights, INT64 extremes), and one
 * thread per core hammering one limit. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_concurrency_policy) == 40, "weir_concurrency_policy size");
_Static_assert(_Alignof(weir_concurrency_policy) == 8, "weir_concurrency_policy align");
_Static_assert(offsetof(weir_concurrency_policy, initial_limit) == 0, "initial_limit");
_Static_assert(offsetof(weir_concurrency_policy, min_limit) == 4, "min_limit");
_Static_assert(offsetof(weir_concurrency_policy, max_limit) == 8, "max_limit");
_Static_assert(offsetof(weir_concurrency_policy, queue_size) == 12, "queue_size");
_Static_assert(offsetof(weir_concurrency_policy, smoothing) == 16, "smoothing");
_Static_assert(offsetof(weir_concurrency_policy, tolerance) == 24, "tolerance");
_Static_assert(offsetof(weir_concurrency_policy, long_window) == 32, "long_window");
_Static_assert(offsetof(weir_concurrency_policy, warmup) == 36, "warmup");
_Static_assert(sizeof(weir_concurrency_ticket) == 16, "weir_concurrency_ticket size");
_Static_assert(_Alignof(weir_concurrency_ticket) == 8, "weir_concurrency_ticket align");
_Static_assert(offsetof(weir_concurrency_ticket, start) == 0, "flight.start");
_Static_assert(offsetof(weir_concurrency_ticket, inflight) == 8, "flight.inflight");
_Static_assert(offsetof(weir_concurrency_ticket, flying) == 12, "flight.flying");
_Static_assert(sizeof(weir_concurrency_partition) == 16, "weir_concurrency_partition size");
_Static_assert(_Alignof(weir_concurrency_partition) == 8, "weir_concurrency_partition align");
_Static_assert(offsetof(weir_concurrency_partition, share) == 0, "partition.share");
_Static_assert(offsetof(weir_concurrency_partition, borrow) == 8, "partition.borrow");

#define MS 1000000LL

enum { THREADS = 4, ROUNDS = 20000, MAX = 3 };

/* Fills the limit at `now`, then every call leaves `rtt` later. */
static int64_t round_of(weir_concurrency *c, int64_t now, int64_t rtt) {
    weir_concurrency_ticket flights[64];
    int n = 0;
    while (n < 64 && weir_concurrency_enter(c, now, &flights[n])) n++;
    CHECK(n == weir_concurrency_limit(c));
    CHECK(n == 64 || flights[n].flying == 0);
    for (int i = 0; i < n; i++) CHECK_STATUS(weir_concurrency_leave(c, &flights[i], now + rtt, false), WEIR_OK);
    return now + rtt;
}

static atomic_int inside;
static atomic_int worst;

static void *hammer(void *arg) {
    weir_concurrency *c = arg;
    for (int i = 0; i < ROUNDS; i++) {
        weir_concurrency_ticket flight;
        if (!weir_concurrency_enter(c, i, &flight)) continue;
        int now_inside = atomic_fetch_add(&inside, 1) + 1;
        int seen = atomic_load(&worst);
        while (now_inside > seen && !atomic_compare_exchange_weak(&worst, &seen, now_inside)) {
        }
        if (flight.inflight > MAX) return (void *)1;
        atomic_fetch_sub(&inside, 1);
        /* Latency varies with i, so the limit moves while threads race. */
        if (weir_concurrency_leave(c, &flight, i + (i % 7) * 1000, i % 11 == 0) != WEIR_OK) {
            return (void *)1;
        }
    }
    return NULL;
}

/* Two halves of a fixed limit of 10: partition 1 takes its own 5 and
 * borrows 5 more while partition 0 is idle; partition 0, refused in its own
 * room, claims it, and the first call given back goes to it. */
static void check_partitions(void) {
    weir_concurrency_policy p = weir_concurrency_policy_preset();
    p.initial_limit = p.min_limit = p.max_limit = 10;
    p.queue_size = 0;
    weir_concurrency_partition parts[2] = {{0.5, 3}, {0.5, 5}};
    weir_concurrency *c = NULL;
    CHECK(weir_concurrency_new_partitioned(&p, parts, 0, &c) == WEIR_ERR_CONCURRENCY_PARTITIONS);
    CHECK(weir_concurrency_new_partitioned(&p, NULL, 2, &c) == WEIR_ERR_CONCURRENCY_PARTITIONS);
    parts[0].share = 0.6;
    CHECK(weir_concurrency_new_partitioned(&p, parts, 2, &c) == WEIR_ERR_CONCURRENCY_SHARE);
    parts[0].share = 0.5;
    parts[0].borrow = -1;
    CHECK(weir_concurrency_new_partitioned(&p, parts, 2, &c) == WEIR_ERR_CONCURRENCY_BORROW);
    parts[0].borrow = 3;
    CHECK(c == NULL);
    CHECK(weir_concurrency_new_partitioned(&p, parts, 2, &c) == WEIR_OK);
    CHECK(weir_concurrency_partition_room(c, 0) == 5 && weir_concurrency_partition_room(c, 1) == 5);
    weir_concurrency_ticket t;
    CHECK(weir_concurrency_enter_partition(c, 0, 0, &t) == WEIR_OK && t.flying == 1);
    CHECK(weir_concurrency_leave_partition(c, 0, &t, 10 * 1000000, false) == WEIR_OK);
    weir_concurrency_ticket held[10];
    for (int i = 0; i < 10; i++) {
        CHECK(weir_concurrency_enter_partition(c, 1, 20000000, &held[i]) == WEIR_OK);
        CHECK(held[i].flying == 1);
    }
    CHECK(weir_concurrency_flying(c) == 10 && weir_concurrency_partition_flying(c, 1) == 10);
    CHECK(weir_concurrency_enter_partition(c, 0, 20000000, &t) == WEIR_OK && t.flying == 0);
    CHECK(weir_concurrency_leave_partition(c, 1, &held[9], 21000000, false) == WEIR_OK);
    CHECK(weir_concurrency_enter_partition(c, 1, 22000000, &t) == WEIR_OK && t.flying == 0);
    CHECK(weir_concurrency_enter_partition(c, 0, 22000000, &t) == WEIR_OK && t.flying == 1);
    CHECK(weir_concurrency_partition_flying(c, 0) == 1 && weir_concurrency_partition_flying(c, 1) == 9);
    CHECK(weir_concurrency_leave_partition(c, 0, &t, 23000000, false) == WEIR_OK);
    weir_concurrency_ticket bad = {0, 1, 1};
    CHECK(weir_concurrency_enter_partition(c, 2, 0, &bad) == WEIR_ERR_CONCURRENCY_PARTITION);
    CHECK(weir_concurrency_leave_partition(c, 2, &bad, 0, false) == WEIR_ERR_CONCURRENCY_PARTITION);
    CHECK(weir_concurrency_leave_partition(c, 0, &bad, 0, false) == WEIR_ERR_CONCURRENCY_PARTITION_EMPTY);
    CHECK(bad.flying == 1);
    for (int i = 0; i < 9; i++) CHECK(weir_concurrency_leave_partition(c, 1, &held[i], 30000000, false) == WEIR_OK);
    CHECK(weir_concurrency_leave_partition(c, 1, &held[8], 30000000, false) == WEIR_ERR_SETTLED);
    CHECK(weir_concurrency_flying(c) == 0);
    weir_concurrency_free(c);
}

int main(void) {
    check_partitions();
    weir_concurrency_policy preset = weir_concurrency_policy_preset();
    CHECK(preset.initial_limit == 20 && preset.min_limit == 20 && preset.max_limit == 200);
    CHECK(preset.queue_size == 4 && preset.smoothing == (double)0.2 && preset.tolerance == (double)1.5);
    CHECK(preset.long_window == 600 && preset.warmup == 10);

    weir_concurrency_policy policy = preset;
    policy.initial_limit = 10;
    policy.min_limit = 2;
    policy.max_limit = 50;
    weir_concurrency *c = NULL;
    CHECK_STATUS(weir_concurrency_new(&policy, &c), WEIR_OK);

    /* By hand: ten enter, the tenth leaves 10 ms later: longRtt = 10 ms,
     * gradient = min(1, 1.5 x 10/10) = 1, new = 10 + 4 = 14, limit =
     * 10 x 0.8 + 14 x 0.2 = 10.8 (admits 10). Then the ninth, at 20 ms:
     * longRtt = (10 + 20) / 2 = 15 ms, gradient = min(1, 1.5 x 15/20) = 1,
     * limit = 10.8 x 0.8 + 14.8 x 0.2 = 11.6 (admits 11). */
    weir_concurrency_ticket flights[12];
    for (int i = 0; i < 10; i++) CHECK(weir_concurrency_enter(c, 0, &flights[i]));
    CHECK(!weir_concurrency_enter(c, 0, &flights[10]));
    CHECK(flights[10].flying == 0);
    CHECK(flights[9].inflight == 10 && flights[9].flying == 1);
    CHECK_STATUS(weir_concurrency_leave(c, &flights[9], 10 * MS, false), WEIR_OK);
    CHECK(weir_concurrency_limit(c) == 10);
    CHECK(weir_concurrency_long_rtt(c) == 10.0 * MS);
    CHECK_STATUS(weir_concurrency_leave(c, &flights[8], 20 * MS, false), WEIR_OK);
    CHECK(weir_concurrency_limit(c) == 11);
    CHECK(weir_concurrency_long_rtt(c) == 15.0 * MS);
    /* Leaving twice changes nothing. */
    CHECK_STATUS(weir_concurrency_leave(c, &flights[8], 30 * MS, false), WEIR_ERR_SETTLED);
    CHECK(weir_concurrency_long_rtt(c) == 15.0 * MS);
    CHECK(weir_concurrency_flying(c) == 8);
    for (int i = 0; i < 8; i++) CHECK_STATUS(weir_concurrency_leave(c, &flights[i], 20 * MS, false), WEIR_OK);
    CHECK(weir_concurrency_flying(c) == 0);

    /* Steady latency: the limit grows to its maximum. */
    int64_t now = 20 * MS;
    for (int i = 0; i < 200; i++) now = round_of(c, now, 10 * MS);
    CHECK(weir_concurrency_limit(c) == 50);
    /* Queueing: latency five times as long, and the limit falls. */
    int64_t lowest = 50;
    for (int i = 0; i < 3; i++) {
        now = round_of(c, now, 50 * MS);
        if (weir_concurrency_limit(c) < lowest) lowest = weir_concurrency_limit(c);
    }
    CHECK(lowest <= 12 && lowest >= 2);
    /* The load ends, latency recovers: it grows back. */
    for (int i = 0; i < 200; i++) now = round_of(c, now, 10 * MS);
    CHECK(weir_concurrency_limit(c) == 50);

    /* Bad flights: misaligned, scribbled, forged. */
    uint64_t buffer[4];
    weir_concurrency_ticket *odd = (weir_concurrency_ticket *)((char *)buffer + 4);
    CHECK(!weir_concurrency_enter(c, now, odd));
    CHECK_STATUS(weir_concurrency_leave(c, odd, now, false), WEIR_ERR_MISALIGNED);
    weir_concurrency_ticket forged = {.start = INT64_MIN, .inflight = 1, .flying = 7};
    CHECK_STATUS(weir_concurrency_leave(c, &forged, INT64_MAX, false), WEIR_ERR_INVALID_ARGUMENT);
    forged.flying = 1;
    forged.inflight = -5;
    CHECK_STATUS(weir_concurrency_leave(c, &forged, INT64_MAX, false), WEIR_ERR_INVALID_ARGUMENT);
    forged.inflight = INT32_MAX; /* claims to fly: it leaves, the count stays >= 0 */
    CHECK_STATUS(weir_concurrency_leave(c, &forged, INT64_MAX, true), WEIR_OK);
    CHECK(weir_concurrency_flying(c) == 0);
    CHECK(weir_concurrency_limit(c) >= 2 && weir_concurrency_limit(c) <= 50);
    CHECK(isfinite(weir_concurrency_long_rtt(c)));
    /* Time going backwards: a 1 ns sample. */
    CHECK(weir_concurrency_enter(c, INT64_MAX, &flights[0]));
    CHECK_STATUS(weir_concurrency_leave(c, &flights[0], INT64_MIN, false), WEIR_OK);
    weir_concurrency_free(c);

    /* Bad policies: a status each, *out untouched. */
    weir_concurrency *untouched = (weir_concurrency *)&preset;
    weir_concurrency_policy bad = policy;
    bad.min_limit = 0;
    CHECK_STATUS(weir_concurrency_new(&bad, &untouched), WEIR_ERR_CONCURRENCY_LIMITS);
    bad = policy;
    bad.initial_limit = 51;
    CHECK_STATUS(weir_concurrency_new(&bad, &untouched), WEIR_ERR_CONCURRENCY_LIMITS);
    bad = policy;
    bad.max_limit = WEIR_CONCURRENCY_MAX_LIMIT + 1;
    CHECK_STATUS(weir_concurrency_new(&bad, &untouched), WEIR_ERR_CONCURRENCY_LIMITS);
    bad = policy;
    bad.queue_size = -1;
    CHECK_STATUS(weir_concurrency_new(&bad, &untouched), WEIR_ERR_CONCURRENCY_QUEUE);
    bad = policy;
    double smooth[] = {NAN, 0.0, -0.0, 1.0000001, INFINITY};
    for (size_t i = 0; i < sizeof smooth / sizeof smooth[0]; i++) {
        bad.smoothing = smooth[i];
        CHECK_STATUS(weir_concurrency_new(&bad, &untouched), WEIR_ERR_CONCURRENCY_SMOOTHING);
    }
    bad = policy;
    double tol[] = {NAN, 0.999, -1.0, INFINITY};
    for (size_t i = 0; i < sizeof tol / sizeof tol[0]; i++) {
        bad.tolerance = tol[i];
        CHECK_STATUS(weir_concurrency_new(&bad, &untouched), WEIR_ERR_CONCURRENCY_TOLERANCE);
    }
    bad = policy;
    bad.long_window = INT32_MIN;
    CHECK_STATUS(weir_concurrency_new(&bad, &untouched), WEIR_ERR_CONCURRENCY_WINDOW);
    bad = policy;
    bad.warmup = 0;
    CHECK_STATUS(weir_concurrency_new(&bad, &untouched), WEIR_ERR_CONCURRENCY_WINDOW);
    CHECK(untouched == (weir_concurrency *)&preset);
    CHECK_STATUS(weir_concurrency_new((const weir_concurrency_policy *)((char *)buffer + 4), &untouched),
                 WEIR_ERR_MISALIGNED);

    /* NULL: a status, a refusal, zero; never a crash. */
    CHECK_STATUS(weir_concurrency_new(NULL, NULL), WEIR_ERR_NULL);
    CHECK(!weir_concurrency_enter(NULL, 0, &flights[0]));
    CHECK_STATUS(weir_concurrency_leave(NULL, &flights[0], 0, false), WEIR_ERR_NULL);
    CHECK(weir_concurrency_limit(NULL) == 0);
    CHECK(weir_concurrency_flying(NULL) == 0);
    CHECK(weir_concurrency_long_rtt(NULL) == 0.0);
    weir_concurrency_free(NULL);
    CHECK_STATUS(weir_concurrency_new(NULL, &c), WEIR_OK);
    CHECK(!weir_concurrency_enter(c, 0, NULL));
    CHECK_STATUS(weir_concurrency_leave(c, NULL, 0, false), WEIR_ERR_NULL);
    CHECK(weir_concurrency_limit(c) == 20);
    weir_concurrency_free(c);

    /* Threads: never more in flight than the limit allows. */
    weir_concurrency_policy small = policy;
    small.initial_limit = 2;
    small.min_limit = 1;
    small.max_limit = MAX;
    small.queue_size = 1;
    CHECK_STATUS(weir_concurrency_new(&small, &c), WEIR_OK);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, hammer, c) == 0);
    for (int i = 0; i < THREADS; i++) {
        void *failed;
        CHECK(pthread_join(threads[i], &failed) == 0);
        CHECK(failed == NULL);
    }
    CHECK(atomic_load(&worst) <= MAX);
    CHECK(weir_concurrency_flying(c) == 0);
    weir_concurrency_free(c);
    CHECK_DONE();
}
