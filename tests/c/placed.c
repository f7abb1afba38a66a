/* Placed handles through the header: a breaker, a bucket, a window and a
 * pool laid in static memory and in a field of the caller's struct, the
 * same calls as on heap handles, threads sharing a placed breaker and a
 * placed pool (the handle's own lock), a bloom view and its region's own
 * calls deciding from threads as one limiter, memory that is too short or
 * misaligned refused with nothing written, and free leaving the caller's
 * memory alone. */
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "weir.h"

enum { THREADS = 4, ROUNDS = 20000 };

/* Static memory for a preset breaker: 2 KiB is more than it needs (the
 * test checks), aligned for anything weir asks. */
static alignas(64) unsigned char breaker_memory[2048];

/* A placed bucket inside the caller's own struct. */
struct connection {
    int fd;
    alignas(64) unsigned char bucket_memory[128];
};

/* Static memory for a pool of 8 and for a bloom region of 2^10 words and
 * a view of it. */
static alignas(64) unsigned char pool_memory[1024];
static alignas(64) unsigned char bloom_region[64 + 8 * 1024];
static alignas(64) unsigned char bloom_view[256];

/* Each thread borrows an item, and gives it back: a thread's items are
 * its own (made with its number in the high bits). */
static void *borrow(void *arg) {
    weir_pool *pool = ((void **)arg)[0];
    uintptr_t base = (uintptr_t)((void **)arg)[1];
    uintptr_t next = 1;
    for (int i = 0; i < ROUNDS; i++) {
        weir_pool_taken taken = weir_pool_take(pool, i);
        uintptr_t item = taken.item;
        if (taken.kind == WEIR_POOL_TAKEN_MAKE) {
            item = base | next++;
            if (weir_pool_made(pool, item, i) != WEIR_OK) return (void *)-1;
        } else if (taken.kind != WEIR_POOL_TAKEN_READY) {
            continue;
        }
        bool kept = false;
        if (weir_pool_give(pool, item, i, &kept) != WEIR_OK) return (void *)-1;
    }
    return NULL;
}

/* Half the threads ask through the view, half through the region's own
 * call: every key of a round at one instant, counting what passed. */
struct asker {
    weir_bloom *view;
    int through_region;
    int passed;
};

static void *ask(void *arg) {
    struct asker *asker = arg;
    for (uint32_t key = 0; key < 200; key++) {
        for (int i = 0; i < 4; i++) {
            bool allowed = asker->through_region
                               ? weir_bloom_allow_in(bloom_region, sizeof bloom_region, 0, &key, sizeof key)
                               : weir_bloom_allow(asker->view, 0, &key, sizeof key);
            asker->passed += allowed;
        }
    }
    return NULL;
}

static void *hammer(void *arg) {
    weir_breaker *breaker = arg;
    for (int i = 0; i < ROUNDS; i++) {
        weir_breaker_ticket ticket;
        if (weir_breaker_allow(breaker, i, 0.5, &ticket)) {
            if (weir_breaker_pass(breaker, &ticket, i) != WEIR_OK) return (void *)-1;
        }
    }
    return NULL;
}

int main(void) {
    size_t bytes = 0, align = 0;
    CHECK_STATUS(weir_breaker_footprint(NULL, &bytes, &align), WEIR_OK);
    CHECK(bytes > 0 && bytes <= sizeof breaker_memory);
    CHECK(align > 0 && (align & (align - 1)) == 0 && align <= 64);

    /* Too short, misaligned, NULL: refused, nothing written. */
    weir_breaker *breaker = NULL;
    memset(breaker_memory, 0x5a, sizeof breaker_memory);
    CHECK_STATUS(weir_breaker_init_in(breaker_memory, bytes - 1, NULL, 0, &breaker),
                 WEIR_ERR_PLACED_TOO_SMALL);
    CHECK_STATUS(weir_breaker_init_in(breaker_memory + 1, sizeof breaker_memory - 1, NULL, 0, &breaker),
                 WEIR_ERR_PLACED_MISALIGNED);
    CHECK_STATUS(weir_breaker_init_in(NULL, bytes, NULL, 0, &breaker), WEIR_ERR_NULL);
    CHECK(breaker == NULL);
    for (size_t i = 0; i < sizeof breaker_memory; i++) CHECK(breaker_memory[i] == 0x5a);

    /* Laid, it answers as a heap breaker does. */
    CHECK_STATUS(weir_breaker_init_in(breaker_memory, sizeof breaker_memory, NULL, 0, &breaker), WEIR_OK);
    CHECK((void *)breaker == (void *)breaker_memory);
    for (size_t i = bytes; i < sizeof breaker_memory; i++) CHECK(breaker_memory[i] == 0x5a);
    weir_breaker *heap = NULL;
    CHECK_STATUS(weir_breaker_new(NULL, 0, &heap), WEIR_OK);
    for (int64_t now = 0; now < 2000000000; now += 7000000) {
        weir_breaker_ticket a, b;
        double roll = (double)(now % 1000) / 1000.0;
        bool allowed = weir_breaker_allow(heap, now, roll, &a);
        CHECK(allowed == weir_breaker_allow(breaker, now, roll, &b));
        if (allowed) {
            CHECK(weir_breaker_fail(heap, &a, now) == weir_breaker_fail(breaker, &b, now));
        }
        CHECK(weir_breaker_ratio(heap, now) == weir_breaker_ratio(breaker, now));
    }
    weir_breaker_free(heap);

    /* Threads share a placed breaker as they share a heap one. */
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) CHECK(pthread_create(&threads[t], NULL, hammer, breaker) == 0);
    for (int t = 0; t < THREADS; t++) {
        void *result = NULL;
        CHECK(pthread_join(threads[t], &result) == 0);
        CHECK(result == NULL);
    }

    /* Free does nothing to a placed handle: it still answers after. */
    weir_breaker_free(breaker);
    weir_breaker_tally tally;
    CHECK_STATUS(weir_breaker_read_tally(breaker, 2000000000, &tally), WEIR_OK);

    /* A bucket in a field of the caller's struct. */
    struct connection conn = {.fd = 3};
    CHECK_STATUS(weir_bucket_footprint(&bytes, &align), WEIR_OK);
    CHECK(bytes <= sizeof conn.bucket_memory && align <= 64);
    weir_bucket *bucket = NULL;
    CHECK_STATUS(weir_bucket_init_in(conn.bucket_memory, sizeof conn.bucket_memory, 10.0, 2.0, 0, &bucket),
                 WEIR_OK);
    CHECK(weir_bucket_take(bucket, 0, 1.0));
    CHECK(weir_bucket_take(bucket, 0, 1.0));
    CHECK(!weir_bucket_take(bucket, 0, 1.0));
    CHECK(weir_bucket_next(bucket, 0, 1.0) == 100000000);
    weir_bucket_free(bucket);
    CHECK(conn.fd == 3);

    /* A window whose footprint grows with its size. */
    size_t small = 0, large = 0;
    CHECK_STATUS(weir_window_footprint(4, 1000000000, &small, &align), WEIR_OK);
    CHECK_STATUS(weir_window_footprint(8, 1000000000, &large, &align), WEIR_OK);
    CHECK(large == small + 4 * sizeof(weir_window_total));
    CHECK_STATUS(weir_window_footprint(4, 0, &small, &align), WEIR_ERR_WINDOW_SPAN);

    /* A pool of 8 in static memory, shared by threads. */
    weir_pool_policy limits = weir_pool_policy_preset();
    limits.size = 8;
    limits.idle = 8;
    CHECK_STATUS(weir_pool_footprint(&limits, &bytes, &align), WEIR_OK);
    CHECK(bytes <= sizeof pool_memory && align <= 64);
    weir_pool *pool = NULL;
    CHECK_STATUS(weir_pool_init_in(pool_memory, bytes - 1, &limits, &pool), WEIR_ERR_PLACED_TOO_SMALL);
    CHECK(pool == NULL);
    CHECK_STATUS(weir_pool_init_in(pool_memory, sizeof pool_memory, &limits, &pool), WEIR_OK);
    void *args[THREADS][2];
    for (int t = 0; t < THREADS; t++) {
        args[t][0] = pool;
        args[t][1] = (void *)((uintptr_t)(t + 1) << 20);
        CHECK(pthread_create(&threads[t], NULL, borrow, args[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        void *result = NULL;
        CHECK(pthread_join(threads[t], &result) == 0);
        CHECK(result == NULL);
    }
    CHECK(weir_pool_busy(pool) == 0);
    CHECK(weir_pool_live(pool) == weir_pool_idle(pool) && weir_pool_live(pool) <= 8);
    weir_pool_stats stats;
    CHECK_STATUS(weir_pool_read_stats(pool, &stats), WEIR_OK);
    CHECK(stats.made <= 8 && stats.reused + stats.made >= ROUNDS);
    uintptr_t closing[8];
    CHECK(weir_pool_close(pool, closing, 8) == (size_t)stats.made);
    weir_pool_free(pool);
    CHECK(weir_pool_live(pool) == 0);

    /* A bloom region and a view of it: one limiter. With one word a key
     * (k = 1) and a burst of 2, threads asking through both at one
     * instant pass exactly 2 a key. */
    weir_rate_limit limit;
    CHECK_STATUS(weir_rate_limit_new(1.0, 2, &limit), WEIR_OK);
    CHECK(weir_bloom_footprint(10) == sizeof bloom_region);
    CHECK_STATUS(weir_bloom_init_in(bloom_region, sizeof bloom_region, 10, 1, &limit, 5, 6), WEIR_OK);
    CHECK_STATUS(weir_bloom_view_footprint(&bytes, &align), WEIR_OK);
    CHECK(bytes <= sizeof bloom_view && align <= 64);
    weir_bloom *view = NULL;
    CHECK_STATUS(weir_bloom_view_in(bloom_view, sizeof bloom_view, bloom_region, 63, &view),
                 WEIR_ERR_BLOOM_TOO_SMALL);
    CHECK_STATUS(weir_bloom_view_in(bloom_view, sizeof bloom_view, bloom_region, sizeof bloom_region, &view),
                 WEIR_OK);
    struct asker askers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        askers[t] = (struct asker){.view = view, .through_region = t % 2};
        CHECK(pthread_create(&threads[t], NULL, ask, &askers[t]) == 0);
    }
    int passed = 0;
    for (int t = 0; t < THREADS; t++) {
        CHECK(pthread_join(threads[t], NULL) == 0);
        passed += askers[t].passed;
    }
    /* 200 keys on 1024 words: keys sharing a word share its burst, so at
     * most 2 a key, and exactly 2 a word the keys reach. */
    CHECK(passed <= 2 * 200 && passed > 2 * 150);
    weir_bloom_free(view);
    CHECK_STATUS(weir_bloom_check_in(bloom_region, sizeof bloom_region), WEIR_OK);
    CHECK_DONE();
}
