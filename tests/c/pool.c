/* weir_pool through the header: newest first, stale items handed back,
 * birth kept across loans, reservations, give beyond idle, evict into a
 * small buffer, close, next_expiry against evict, misuse statuses with the
 * counts after each, bad limits, NULL everywhere, and many threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "weir.h"

/* 0.2.0 grew both structs: the layout pins follow. */
_Static_assert(sizeof(weir_pool_policy) == 56, "weir_pool_policy size");
_Static_assert(_Alignof(weir_pool_policy) == 8, "weir_pool_policy align");
_Static_assert(offsetof(weir_pool_policy, size) == 0, "weir_pool_policy.size");
_Static_assert(offsetof(weir_pool_policy, idle) == 8, "weir_pool_policy.idle");
_Static_assert(offsetof(weir_pool_policy, keep_ns) == 16, "weir_pool_policy.keep_ns");
_Static_assert(offsetof(weir_pool_policy, life_ns) == 24, "weir_pool_policy.life_ns");
_Static_assert(offsetof(weir_pool_policy, life_jitter) == 32, "weir_pool_policy.life_jitter");
_Static_assert(offsetof(weir_pool_policy, min_idle) == 40, "weir_pool_policy.min_idle");
_Static_assert(offsetof(weir_pool_policy, max_making) == 48, "weir_pool_policy.max_making");
_Static_assert(sizeof(weir_pool_taken) == 2 * sizeof(uintptr_t), "weir_pool_taken size");
_Static_assert(_Alignof(weir_pool_taken) == _Alignof(uintptr_t), "weir_pool_taken align");
_Static_assert(offsetof(weir_pool_taken, kind) == 0, "weir_pool_taken.kind");
_Static_assert(offsetof(weir_pool_taken, item) == sizeof(uintptr_t), "weir_pool_taken.item");
_Static_assert(sizeof(weir_pool_stats) == 88, "weir_pool_stats size");
_Static_assert(_Alignof(weir_pool_stats) == 8, "weir_pool_stats align");
_Static_assert(offsetof(weir_pool_stats, made) == 0, "counters.made");
_Static_assert(offsetof(weir_pool_stats, waits) == 56, "counters.waits");
_Static_assert(offsetof(weir_pool_stats, closed) == 72, "counters.closed");
_Static_assert(offsetof(weir_pool_stats, retired) == 80, "counters.retired");

#define SEC INT64_C(1000000000)

static weir_pool *make_pool(int64_t size, int64_t idle, int64_t keep_ns, int64_t life_ns) {
    weir_pool_policy limits = {.size = size, .idle = idle, .keep_ns = keep_ns, .life_ns = life_ns};
    weir_pool *pool = NULL;
    CHECK_STATUS(weir_pool_new(&limits, &pool), WEIR_OK);
    CHECK(pool != NULL);
    return pool;
}

/* Takes MAKE at `now` and registers `item`. */
static void make(weir_pool *pool, uintptr_t item, int64_t now) {
    weir_pool_taken taken = weir_pool_take(pool, now);
    CHECK(taken.kind == WEIR_POOL_TAKEN_MAKE && taken.item == 0);
    CHECK_STATUS(weir_pool_made(pool, item, now), WEIR_OK);
}

static bool give(weir_pool *pool, uintptr_t item, int64_t now) {
    bool kept = false;
    CHECK_STATUS(weir_pool_give(pool, item, now, &kept), WEIR_OK);
    return kept;
}

static void check_taken(weir_pool *pool, int64_t now, int32_t kind, uintptr_t item) {
    weir_pool_taken taken = weir_pool_take(pool, now);
    CHECK(taken.kind == kind);
    CHECK(taken.item == item);
}

static void check_counts(weir_pool *pool, int64_t live, int64_t idle, int64_t busy) {
    CHECK(weir_pool_live(pool) == live);
    CHECK(weir_pool_idle(pool) == idle);
    CHECK(weir_pool_busy(pool) == busy);
}

static weir_pool_stats counters(weir_pool *pool) {
    weir_pool_stats c;
    CHECK_STATUS(weir_pool_read_stats(pool, &c), WEIR_OK);
    return c;
}

static void test_preset_and_bad_limits(void) {
    weir_pool_policy preset = weir_pool_policy_preset();
    CHECK(preset.size == 10 && preset.idle == 10);
    CHECK(preset.keep_ns == 30 * 60 * SEC && preset.life_ns == 0);

    weir_pool *pool = NULL;
    CHECK_STATUS(weir_pool_new(NULL, &pool), WEIR_OK); /* NULL: the preset */
    for (uintptr_t item = 1; item <= 10; item++) make(pool, item, 0);
    check_taken(pool, 0, WEIR_POOL_TAKEN_WAIT, 0);
    weir_pool_free(pool);

    /* Each field of weir_pool_policy has its own status; the first wrong field,
     * in field order, is the one reported. */
    struct {
        weir_pool_policy limits;
        weir_status status;
    } bad[] = {
        {{-1, 1, 0, 0, 0, 0, 0}, WEIR_ERR_POOL_SIZE},
        {{0, 0, 0, 0, 0, 0, 0}, WEIR_ERR_POOL_SIZE},
        {{WEIR_POOL_MAX_SIZE + 1, 0, 0, 0, 0, 0, 0}, WEIR_ERR_POOL_SIZE},
        {{INT64_MAX, 0, 0, 0, 0, 0, 0}, WEIR_ERR_POOL_SIZE},
        {{0, -1, -1, -1, 0, 0, 0}, WEIR_ERR_POOL_SIZE},
        {{1, -1, 0, 0, 0, 0, 0}, WEIR_ERR_POOL_IDLE},
        {{1, INT64_MIN, -1, -1, 0, 0, 0}, WEIR_ERR_POOL_IDLE},
        {{1, 1, -1, 0, 0, 0, 0}, WEIR_ERR_POOL_KEEP},
        {{1, 1, INT64_MIN, -1, 0, 0, 0}, WEIR_ERR_POOL_KEEP},
        {{1, 1, 0, INT64_MIN, 0, 0, 0}, WEIR_ERR_POOL_LIFE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pool = NULL;
        CHECK_STATUS(weir_pool_new(&bad[i].limits, &pool), bad[i].status);
        CHECK(pool == NULL);
    }
    CHECK(strcmp(weir_status_str(WEIR_ERR_POOL_SIZE), "pool size is outside 1..WEIR_POOL_MAX_SIZE") == 0);
    CHECK_STATUS(weir_pool_new(NULL, NULL), WEIR_ERR_NULL);

    /* idle above size counts as size. */
    pool = make_pool(1, 100, 0, 0);
    make(pool, 1, 0);
    CHECK(give(pool, 1, 0));
    weir_pool_free(pool);
}

static void test_newest_first(void) {
    weir_pool *pool = make_pool(3, 3, 0, 0);
    uintptr_t a = 0xa0, b = 0xb0, c = 0xc0;
    make(pool, a, 0);
    make(pool, b, 0);
    make(pool, c, 0);
    CHECK(give(pool, a, 1));
    CHECK(give(pool, b, 1));
    CHECK(give(pool, c, 1));
    check_taken(pool, 2, WEIR_POOL_TAKEN_READY, c);
    check_taken(pool, 2, WEIR_POOL_TAKEN_READY, b);
    check_taken(pool, 2, WEIR_POOL_TAKEN_READY, a);
    check_taken(pool, 2, WEIR_POOL_TAKEN_WAIT, 0);
    CHECK(counters(pool).reused == 3);
    weir_pool_free(pool);
}

static void test_stale(void) {
    /* Past keep: STALE, and live drops by one. */
    weir_pool *pool = make_pool(2, 2, 60 * SEC, 0);
    make(pool, 7, 0);
    make(pool, 8, 0);
    CHECK(give(pool, 7, 0));
    CHECK(give(pool, 8, 30 * SEC));
    check_counts(pool, 2, 2, 0);
    check_taken(pool, 90 * SEC - 1, WEIR_POOL_TAKEN_READY, 8);
    CHECK(give(pool, 8, 90 * SEC - 1));
    /* 8 is on top and fresh; 7 has sat 60 s. */
    check_taken(pool, 90 * SEC, WEIR_POOL_TAKEN_READY, 8);
    check_taken(pool, 90 * SEC, WEIR_POOL_TAKEN_STALE, 7);
    check_counts(pool, 1, 0, 1);
    CHECK(counters(pool).stale == 1);
    weir_pool_free(pool);

    /* Past life, measured from birth, across many loans. */
    pool = make_pool(1, 1, 0, 10 * SEC);
    make(pool, 9, 0);
    for (int64_t t = 1; t < 10; t++) {
        CHECK(give(pool, 9, t * SEC));
        check_taken(pool, t * SEC, WEIR_POOL_TAKEN_READY, 9);
    }
    CHECK(give(pool, 9, 9 * SEC));
    check_counts(pool, 1, 1, 0);
    check_taken(pool, 10 * SEC, WEIR_POOL_TAKEN_STALE, 9);
    check_counts(pool, 0, 0, 0);
    /* A lent item that comes back past its life is not kept. */
    make(pool, 10, 10 * SEC);
    CHECK(!give(pool, 10, 20 * SEC));
    check_counts(pool, 0, 0, 0);
    CHECK(counters(pool).evicted_age == 1);
    weir_pool_free(pool);
}

static void test_reservations(void) {
    weir_pool *pool = make_pool(2, 2, 0, 10 * SEC);
    check_taken(pool, 0, WEIR_POOL_TAKEN_MAKE, 0);
    check_taken(pool, 0, WEIR_POOL_TAKEN_MAKE, 0);
    check_taken(pool, 0, WEIR_POOL_TAKEN_WAIT, 0);
    check_counts(pool, 2, 0, 2);
    CHECK_STATUS(weir_pool_unmade(pool), WEIR_OK);
    check_counts(pool, 1, 0, 1);
    check_taken(pool, 0, WEIR_POOL_TAKEN_MAKE, 0);
    CHECK_STATUS(weir_pool_unmade(pool), WEIR_OK);
    /* An unregistered item given after MAKE takes the reservation, born now. */
    CHECK(give(pool, 5, 4 * SEC));
    check_counts(pool, 1, 1, 0);
    check_taken(pool, 14 * SEC - 1, WEIR_POOL_TAKEN_READY, 5);
    CHECK(give(pool, 5, 14 * SEC - 1));
    check_taken(pool, 14 * SEC, WEIR_POOL_TAKEN_STALE, 5);
    weir_pool_stats c = counters(pool);
    CHECK(c.made == 1 && c.unmade == 2 && c.waits == 1 && c.stale == 1);
    check_counts(pool, 0, 0, 0);
    weir_pool_free(pool);
}

static void test_give_beyond_idle(void) {
    weir_pool *pool = make_pool(3, 1, 0, 0);
    make(pool, 1, 0);
    make(pool, 2, 0);
    make(pool, 3, 0);
    CHECK(give(pool, 1, 0));
    CHECK(!give(pool, 2, 0)); /* enough idle: the caller closes 2 */
    check_counts(pool, 2, 1, 1);
    CHECK(!give(pool, 3, 0));
    check_counts(pool, 1, 1, 0);
    CHECK(counters(pool).refused == 2);
    /* Not kept means gone: giving it again is misuse. */
    bool kept = true;
    CHECK_STATUS(weir_pool_give(pool, 2, 0, &kept), WEIR_ERR_POOL_NOT_LENT);
    CHECK(kept); /* untouched */
    weir_pool_free(pool);
}

static void test_evict_and_close(void) {
    weir_pool *pool = make_pool(8, 8, 10 * SEC, 0);
    for (uintptr_t item = 1; item <= 8; item++) make(pool, item, 0);
    for (uintptr_t item = 1; item <= 8; item++) CHECK(give(pool, item, (int64_t)item * SEC));
    /* At 16 s, items given at 1..6 s are due: six, into a buffer of four.
     * The return is how many were written, never more than cap, so
     * out[0..returned) is always inside the buffer; a return of cap means
     * more may wait, and next_expiry says so (0). */
    uintptr_t out[5];
    memset(out, 0, sizeof out);
    CHECK(weir_pool_evict(pool, 16 * SEC, NULL, 4) == 0); /* no buffer: nothing */
    CHECK(weir_pool_evict(pool, 16 * SEC, out, 0) == 0);
    CHECK(weir_pool_idle(pool) == 8);
    CHECK(weir_pool_evict(pool, 16 * SEC, out, 4) == 4);
    for (uintptr_t i = 0; i < 4; i++) CHECK(out[i] == i + 1);
    CHECK(out[4] == 0); /* the fifth slot is past cap: untouched */
    CHECK(weir_pool_idle(pool) == 4);
    CHECK(weir_pool_next_expiry(pool, 16 * SEC) == 0); /* the rest are still due */
    CHECK(weir_pool_evict(pool, 16 * SEC, out, 4) == 2);
    CHECK(out[0] == 5 && out[1] == 6);
    CHECK(weir_pool_next_expiry(pool, 16 * SEC) > 0);
    CHECK(weir_pool_evict(pool, 16 * SEC, out, 4) == 0);
    check_counts(pool, 2, 2, 0);
    CHECK(counters(pool).evicted_idle == 6);

    /* close hands back every idle item; a lent one comes back unkept. */
    check_taken(pool, 16 * SEC, WEIR_POOL_TAKEN_READY, 8);
    CHECK(weir_pool_close(pool, out, 4) == 1);
    CHECK(out[0] == 7);
    check_taken(pool, 16 * SEC, WEIR_POOL_TAKEN_WAIT, 0);
    CHECK(!give(pool, 8, 16 * SEC));
    check_counts(pool, 0, 0, 0);
    CHECK(counters(pool).closed == 2);
    weir_pool_free(pool);

    /* close with a small buffer: it returns what it wrote, and the rest
     * stay for the next call (idle says how many). */
    pool = make_pool(3, 3, 0, 0);
    for (uintptr_t item = 1; item <= 3; item++) make(pool, item, 0);
    for (uintptr_t item = 1; item <= 3; item++) CHECK(give(pool, item, 0));
    out[2] = 0;
    CHECK(weir_pool_close(pool, out, 2) == 2);
    CHECK(out[0] == 1 && out[1] == 2 && out[2] == 0);
    CHECK(weir_pool_idle(pool) == 1);
    CHECK(weir_pool_close(pool, out, 2) == 1);
    CHECK(out[0] == 3);
    CHECK(weir_pool_idle(pool) == 0);
    CHECK(weir_pool_live(pool) == 0);
    weir_pool_free(pool);
}

static void test_next_expiry(void) {
    weir_pool *pool = make_pool(3, 3, 10 * SEC, 25 * SEC);
    CHECK(weir_pool_next_expiry(pool, 0) == INT64_MAX);
    make(pool, 1, 0);
    make(pool, 2, 0);
    CHECK(give(pool, 1, 3 * SEC));
    CHECK(give(pool, 2, 4 * SEC));
    int64_t now = 5 * SEC;
    int64_t wait = weir_pool_next_expiry(pool, now);
    CHECK(wait == 8 * SEC);
    uintptr_t out[3];
    CHECK(weir_pool_evict(pool, now + wait - 1, out, 3) == 0);
    CHECK(weir_pool_evict(pool, now + wait, out, 3) == 1 && out[0] == 1);
    CHECK(weir_pool_next_expiry(pool, now + wait) == SEC);
    check_taken(pool, now + wait, WEIR_POOL_TAKEN_READY, 2);
    /* Given at 20 s: idle until 30 s, but its life ends at 25 s. */
    CHECK(give(pool, 2, 20 * SEC));
    now = 21 * SEC;
    wait = weir_pool_next_expiry(pool, now);
    CHECK(wait == 4 * SEC);
    CHECK(weir_pool_evict(pool, now + wait - 1, out, 3) == 0);
    CHECK(weir_pool_next_expiry(pool, now + wait) == 0);
    CHECK(weir_pool_evict(pool, now + wait, out, 3) == 1 && out[0] == 2);
    CHECK(weir_pool_next_expiry(pool, now + wait) == INT64_MAX);
    CHECK(counters(pool).evicted_idle == 1 && counters(pool).evicted_age == 1);
    weir_pool_free(pool);

    /* No keep, no life: never. Extreme times saturate. */
    pool = make_pool(1, 1, 0, 0);
    make(pool, 1, INT64_MIN);
    CHECK(give(pool, 1, INT64_MIN));
    CHECK(weir_pool_next_expiry(pool, INT64_MAX) == INT64_MAX);
    CHECK(weir_pool_evict(pool, INT64_MAX, out, 1) == 0);
    check_taken(pool, INT64_MAX, WEIR_POOL_TAKEN_READY, 1);
    weir_pool_free(pool);
}

static void test_time_backwards(void) {
    weir_pool *pool = make_pool(1, 1, 10 * SEC, 0);
    make(pool, 1, 100 * SEC);
    CHECK(give(pool, 1, 100 * SEC));
    /* An earlier now counts as the latest: no time passes... */
    check_taken(pool, 0, WEIR_POOL_TAKEN_READY, 1);
    CHECK(give(pool, 1, 0));
    /* ...and the idle clock started at 100 s. */
    CHECK(weir_pool_next_expiry(pool, 100 * SEC) == 10 * SEC);
    check_taken(pool, 110 * SEC - 1, WEIR_POOL_TAKEN_READY, 1);
    CHECK(give(pool, 1, 50 * SEC)); /* idle since 110 s - 1, not 50 s */
    check_taken(pool, 120 * SEC - 2, WEIR_POOL_TAKEN_READY, 1);
    weir_pool_free(pool);
}

static void test_misuse(void) {
    weir_pool *pool = make_pool(3, 3, 0, 0);
    bool kept = true;
    /* Nothing lent, nothing reserved. */
    CHECK_STATUS(weir_pool_made(pool, 1, 0), WEIR_ERR_POOL_NO_RESERVATION);
    CHECK_STATUS(weir_pool_unmade(pool), WEIR_ERR_POOL_NO_RESERVATION);
    CHECK_STATUS(weir_pool_give(pool, 1, 0, &kept), WEIR_ERR_POOL_NOT_LENT);
    CHECK_STATUS(weir_pool_drop(pool, 1), WEIR_ERR_POOL_NOT_LENT);
    CHECK(kept);
    check_counts(pool, 0, 0, 0);

    make(pool, 1, 0);
    make(pool, 2, 0);
    /* made with an item the pool holds lent, then idle. */
    check_taken(pool, 0, WEIR_POOL_TAKEN_MAKE, 0);
    CHECK_STATUS(weir_pool_made(pool, 1, 0), WEIR_ERR_POOL_ITEM_KNOWN);
    check_counts(pool, 3, 0, 3);
    CHECK(give(pool, 1, 0));
    CHECK_STATUS(weir_pool_made(pool, 1, 0), WEIR_ERR_POOL_ITEM_KNOWN);
    /* give or drop of an idle item. */
    CHECK_STATUS(weir_pool_give(pool, 1, 0, &kept), WEIR_ERR_POOL_ITEM_IDLE);
    CHECK_STATUS(weir_pool_drop(pool, 1), WEIR_ERR_POOL_ITEM_IDLE);
    check_counts(pool, 3, 1, 2);
    /* The reservation is still open and still works. */
    CHECK_STATUS(weir_pool_made(pool, 3, 0), WEIR_OK);
    /* drop: room is free; dropping again is misuse. */
    CHECK_STATUS(weir_pool_drop(pool, 2), WEIR_OK);
    CHECK_STATUS(weir_pool_drop(pool, 2), WEIR_ERR_POOL_NOT_LENT);
    check_counts(pool, 2, 1, 1);
    /* An unknown item dropped while a MAKE is open ends the reservation. */
    check_taken(pool, 0, WEIR_POOL_TAKEN_READY, 1);
    check_taken(pool, 0, WEIR_POOL_TAKEN_MAKE, 0);
    check_counts(pool, 3, 0, 3);
    CHECK_STATUS(weir_pool_drop(pool, 99), WEIR_OK);
    check_counts(pool, 2, 0, 2);
    weir_pool_stats c = counters(pool);
    CHECK(c.made == 4 && c.dropped == 2 && c.reused == 1);
    /* Everything made is live or was handed back. */
    CHECK(c.made == c.dropped + (uint64_t)weir_pool_live(pool));

    /* NULL kept: a status, and nothing changes. */
    CHECK_STATUS(weir_pool_give(pool, 3, 0, NULL), WEIR_ERR_NULL);
    check_counts(pool, 2, 0, 2);
    CHECK(give(pool, 3, 0));
    check_counts(pool, 2, 1, 1);

    /* Status texts. */
    CHECK(strstr(weir_status_str(WEIR_ERR_POOL_ITEM_IDLE), "idle") != NULL);
    CHECK(strstr(weir_status_str(WEIR_ERR_POOL_NOT_LENT), "lend") != NULL);
    CHECK(strstr(weir_status_str(WEIR_ERR_POOL_NO_RESERVATION), "reservation") != NULL);
    CHECK(strstr(weir_status_str(WEIR_ERR_POOL_ITEM_KNOWN), "already") != NULL);
    weir_pool_free(pool);
}

static void test_null(void) {
    weir_pool_taken taken = weir_pool_take(NULL, 0);
    CHECK(taken.kind == WEIR_POOL_TAKEN_WAIT && taken.item == 0);
    bool kept = true;
    uintptr_t out[1] = {42};
    weir_pool_stats c;
    CHECK_STATUS(weir_pool_made(NULL, 1, 0), WEIR_ERR_NULL);
    CHECK_STATUS(weir_pool_unmade(NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_pool_give(NULL, 1, 0, &kept), WEIR_ERR_NULL);
    CHECK(kept);
    CHECK_STATUS(weir_pool_drop(NULL, 1), WEIR_ERR_NULL);
    CHECK(weir_pool_evict(NULL, 0, out, 1) == 0);
    CHECK(weir_pool_close(NULL, out, 1) == 0);
    CHECK(out[0] == 42);
    CHECK(weir_pool_live(NULL) == 0 && weir_pool_idle(NULL) == 0 && weir_pool_busy(NULL) == 0);
    CHECK(weir_pool_next_expiry(NULL, 0) == INT64_MAX);
    CHECK_STATUS(weir_pool_read_stats(NULL, &c), WEIR_ERR_NULL);
    weir_pool_free(NULL);

    weir_pool *pool = make_pool(1, 1, SEC, 0);
    CHECK_STATUS(weir_pool_read_stats(pool, NULL), WEIR_ERR_NULL);
    make(pool, 1, 0);
    CHECK(give(pool, 1, 0));
    /* out NULL with a cap: writes nothing, removes nothing, returns 0
     * (close still closes the pool). */
    CHECK(weir_pool_evict(pool, 5 * SEC, NULL, 8) == 0);
    CHECK(weir_pool_close(pool, NULL, 8) == 0);
    CHECK(weir_pool_idle(pool) == 1);
    CHECK(weir_pool_take(pool, 5 * SEC).kind == WEIR_POOL_TAKEN_WAIT);
    CHECK(weir_pool_close(pool, out, 1) == 1 && out[0] == 1);
    weir_pool_free(pool);
}

/* ---- threads ---- */

enum { THREADS = 4, ROUNDS = 5000, SIZE = 6 };

static weir_pool *shared;
static _Atomic int64_t clock_ns;
static _Atomic uintptr_t next_item = 1;
static atomic_bool lent[THREADS * ROUNDS + 2]; /* lent to some thread now */

static void *worker(void *arg) {
    long id = (long)(intptr_t)arg;
    for (long round = 0; round < ROUNDS; round++) {
        int64_t now = atomic_fetch_add(&clock_ns, 1);
        weir_pool_taken taken = weir_pool_take(shared, now);
        uintptr_t item;
        if (taken.kind == WEIR_POOL_TAKEN_READY) {
            item = taken.item;
        } else if (taken.kind == WEIR_POOL_TAKEN_MAKE) {
            if (round % 13 == id) {
                if (weir_pool_unmade(shared) != WEIR_OK) return (void *)1;
                continue;
            }
            item = atomic_fetch_add(&next_item, 1);
            if (weir_pool_made(shared, item, now) != WEIR_OK) return (void *)2;
        } else {
            continue; /* STALE: closed; WAIT: try again */
        }
        if (atomic_exchange(&lent[item], true)) return (void *)3;
        if (weir_pool_live(shared) > SIZE) return (void *)4;
        atomic_store(&lent[item], false);
        if (round % 11 == 0) {
            if (weir_pool_drop(shared, item) != WEIR_OK) return (void *)5;
        } else {
            bool kept;
            now = atomic_load(&clock_ns);
            if (weir_pool_give(shared, item, now, &kept) != WEIR_OK) return (void *)6;
        }
    }
    return NULL;
}

static void test_threads(void) {
    shared = make_pool(SIZE, 4, 3, 40);
    pthread_t threads[THREADS];
    for (long i = 0; i < THREADS; i++) {
        CHECK(pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        void *result;
        CHECK(pthread_join(threads[i], &result) == 0);
        CHECK(result == NULL);
    }
    CHECK(weir_pool_busy(shared) == 0);
    CHECK(weir_pool_live(shared) == weir_pool_idle(shared));
    weir_pool_stats c = counters(shared);
    uint64_t gone = c.stale + c.evicted_idle + c.evicted_age + c.dropped + c.refused + c.closed;
    CHECK(c.made == gone + (uint64_t)weir_pool_idle(shared));
    CHECK(c.made > 0 && c.reused > 0 && c.dropped > 0 && c.unmade > 0);
    uintptr_t out[SIZE];
    CHECK(weir_pool_close(shared, out, SIZE) == (size_t)c.made - gone);
    CHECK(weir_pool_live(shared) == 0);
    weir_pool_free(shared);
}

int main(void) {
    test_preset_and_bad_limits();
    test_newest_first();
    test_stale();
    test_reservations();
    test_give_beyond_idle();
    test_evict_and_close();
    test_next_expiry();
    test_time_backwards();
    test_misuse();
    test_null();
    test_threads();
    CHECK_DONE();
}
