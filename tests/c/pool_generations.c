/* weir_pool's 0.2.0 additions through the header: lifetime jitter from the
 * caller's draw, make-ahead to min_idle, max_making, and generations
 * (mark_old); each new limit refused with its status when bad, NULL and
 * hostile draws everywhere, and the preset (all new fields 0) unchanged. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "weir.h"

#define SEC INT64_C(1000000000)

static weir_pool *new_pool(weir_pool_policy limits) {
    weir_pool *pool = NULL;
    CHECK_STATUS(weir_pool_new(&limits, &pool), WEIR_OK);
    CHECK(pool != NULL);
    return pool;
}

static weir_pool_policy plain(int64_t size, int64_t idle, int64_t life_ns) {
    weir_pool_policy limits = {size, idle, 0, life_ns, 0.0, 0, 0};
    return limits;
}

static bool give(weir_pool *pool, uintptr_t item, int64_t now) {
    bool kept = false;
    CHECK_STATUS(weir_pool_give(pool, item, now, &kept), WEIR_OK);
    return kept;
}

static void test_preset_and_bad_limits(void) {
    weir_pool_policy preset = weir_pool_policy_preset();
    CHECK(preset.life_jitter == 0.0 && preset.min_idle == 0 && preset.max_making == 0);
    double bad_jitter[] = {NAN, -0.0001, 1.0001, INFINITY, -INFINITY, DBL_MAX};
    for (size_t i = 0; i < sizeof bad_jitter / sizeof bad_jitter[0]; i++) {
        weir_pool_policy limits = preset;
        limits.life_jitter = bad_jitter[i];
        weir_pool *pool = NULL;
        CHECK_STATUS(weir_pool_new(&limits, &pool), WEIR_ERR_POOL_JITTER);
        CHECK(pool == NULL);
    }
    weir_pool_policy limits = preset;
    weir_pool *pool = NULL;
    limits.min_idle = -1;
    CHECK_STATUS(weir_pool_new(&limits, &pool), WEIR_ERR_POOL_MIN_IDLE);
    limits.min_idle = INT64_MIN;
    limits.max_making = INT64_MIN;
    CHECK_STATUS(weir_pool_new(&limits, &pool), WEIR_ERR_POOL_MIN_IDLE);
    limits.min_idle = INT64_MAX;
    CHECK_STATUS(weir_pool_new(&limits, &pool), WEIR_ERR_POOL_MAX_MAKING);
    /* The first wrong field in field order. */
    limits.life_jitter = NAN;
    limits.life_ns = -1;
    CHECK_STATUS(weir_pool_new(&limits, &pool), WEIR_ERR_POOL_LIFE);
    limits.life_ns = 0;
    CHECK_STATUS(weir_pool_new(&limits, &pool), WEIR_ERR_POOL_JITTER);
    CHECK(pool == NULL);
    CHECK(WEIR_ERR_POOL_JITTER == 220 && WEIR_ERR_POOL_MIN_IDLE == 221 &&
          WEIR_ERR_POOL_MAX_MAKING == 222);
    CHECK(strcmp(weir_status_str(WEIR_ERR_POOL_MAX_MAKING), "pool max_making is negative") == 0);
    /* The extremes are accepted. */
    limits = preset;
    limits.life_jitter = 1.0;
    limits.min_idle = INT64_MAX;
    limits.max_making = INT64_MAX;
    pool = new_pool(limits);
    weir_pool_free(pool);
}

static void test_jitter(void) {
    weir_pool_policy limits = plain(4, 4, 100 * SEC);
    limits.life_jitter = 0.25;
    weir_pool *pool = new_pool(limits);
    /* A draw of 2^63 takes half of 25 s off: due at 87.5 s. */
    CHECK(weir_pool_take(pool, 0).kind == WEIR_POOL_TAKEN_MAKE);
    CHECK_STATUS(weir_pool_made_jittered(pool, 1, 0, UINT64_C(1) << 63), WEIR_OK);
    CHECK(give(pool, 1, 0));
    CHECK(weir_pool_next_expiry(pool, 0) == 87500000000);
    /* Misuse, any draw: nothing changes. */
    CHECK_STATUS(weir_pool_made_jittered(pool, 1, 0, UINT64_MAX), WEIR_ERR_POOL_ITEM_KNOWN);
    CHECK_STATUS(weir_pool_made_jittered(pool, 2, INT64_MAX, 0), WEIR_ERR_POOL_NO_RESERVATION);
    CHECK(weir_pool_next_expiry(pool, 0) == 87500000000);
    CHECK_STATUS(weir_pool_made_jittered(NULL, 2, 0, 0), WEIR_ERR_NULL);
    /* Extreme times saturate rather than wrap. */
    CHECK(weir_pool_take(pool, INT64_MIN).kind == WEIR_POOL_TAKEN_READY);
    CHECK(weir_pool_take(pool, INT64_MIN).kind == WEIR_POOL_TAKEN_MAKE);
    CHECK_STATUS(weir_pool_made_jittered(pool, 2, INT64_MIN, UINT64_MAX), WEIR_OK);
    CHECK(give(pool, 2, 0));
    weir_pool_free(pool);
    /* No life: the draw changes nothing. */
    limits = plain(1, 1, 0);
    limits.life_jitter = 1.0;
    pool = new_pool(limits);
    CHECK(weir_pool_take(pool, 0).kind == WEIR_POOL_TAKEN_MAKE);
    CHECK_STATUS(weir_pool_made_jittered(pool, 1, 0, UINT64_MAX), WEIR_OK);
    CHECK(give(pool, 1, 0));
    CHECK(weir_pool_next_expiry(pool, 0) == INT64_MAX);
    weir_pool_free(pool);
}

static void test_make_ahead_and_max_making(void) {
    weir_pool_policy limits = plain(5, 5, 0);
    limits.min_idle = 3;
    limits.max_making = 2;
    weir_pool *pool = new_pool(limits);
    /* Three wanted, two may be made at once. */
    CHECK(weir_pool_make_ahead(pool) == 2);
    CHECK(weir_pool_make_ahead(pool) == 0);
    CHECK(weir_pool_take(pool, 0).kind == WEIR_POOL_TAKEN_WAIT);
    CHECK(give(pool, 0x10, 0));
    CHECK_STATUS(weir_pool_unmade(pool), WEIR_OK);
    CHECK(weir_pool_make_ahead(pool) == 2);
    CHECK(give(pool, 0x20, 0));
    CHECK(give(pool, 0x30, 0));
    CHECK(weir_pool_idle(pool) == 3 && weir_pool_busy(pool) == 0);
    CHECK(weir_pool_make_ahead(pool) == 0);
    weir_pool_stats c;
    CHECK_STATUS(weir_pool_read_stats(pool, &c), WEIR_OK);
    CHECK(c.made == 3 && c.waits == 1 && c.unmade == 1);
    uintptr_t out[8];
    CHECK(weir_pool_close(pool, out, 8) == 3);
    CHECK(weir_pool_make_ahead(pool) == 0);
    CHECK(weir_pool_make_ahead(NULL) == 0);
    weir_pool_free(pool);
    /* The preset makes nothing ahead. */
    weir_pool *preset = NULL;
    CHECK_STATUS(weir_pool_new(NULL, &preset), WEIR_OK);
    CHECK(weir_pool_make_ahead(preset) == 0);
    weir_pool_free(preset);
}

static void test_generations(void) {
    weir_pool *pool = new_pool(plain(4, 4, 0));
    for (uintptr_t item = 1; item <= 3; item++) {
        CHECK(weir_pool_take(pool, 0).kind == WEIR_POOL_TAKEN_MAKE);
        CHECK_STATUS(weir_pool_made(pool, item, 0), WEIR_OK);
    }
    CHECK(give(pool, 1, 0));
    CHECK(give(pool, 2, 0));
    /* After a password change, say: all three are old. */
    CHECK(weir_pool_mark_old(pool) == 3);
    CHECK(weir_pool_next_expiry(pool, 0) == 0);
    /* The lent one is not kept; evict hands back the idle ones, oldest
     * first, into the room it is given; take never lends an old one. */
    CHECK(!give(pool, 3, 0));
    uintptr_t out[4] = {0};
    CHECK(weir_pool_evict(pool, 0, out, 1) == 1 && out[0] == 1);
    weir_pool_taken taken = weir_pool_take(pool, 0);
    CHECK(taken.kind == WEIR_POOL_TAKEN_STALE && taken.item == 2);
    CHECK(weir_pool_next_expiry(pool, 0) == INT64_MAX);
    /* New ones are kept. */
    CHECK(weir_pool_take(pool, 0).kind == WEIR_POOL_TAKEN_MAKE);
    CHECK_STATUS(weir_pool_made(pool, 4, 0), WEIR_OK);
    CHECK(give(pool, 4, 0));
    taken = weir_pool_take(pool, 0);
    CHECK(taken.kind == WEIR_POOL_TAKEN_READY && taken.item == 4);
    weir_pool_stats c;
    CHECK_STATUS(weir_pool_read_stats(pool, &c), WEIR_OK);
    CHECK(c.retired == 2 && c.stale == 1);
    CHECK(weir_pool_mark_old(NULL) == 0);
    weir_pool_free(pool);
}

int main(void) {
    test_preset_and_bad_limits();
    test_jitter();
    test_make_ahead_and_max_making();
    test_generations();
    CHECK_DONE();
}
