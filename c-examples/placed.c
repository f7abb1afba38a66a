/* Handles without a heap: a breaker and a pool in static memory and a
 * bucket inside the caller's own struct, laid with weir_X_init_in, and a
 * bloom array viewed in a static region (weir_bloom_view_in), all used
 * with the same calls as heap handles. */
#include <inttypes.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>

#include "weir.h"

/* Room for a breaker at the preset (the program checks it fits). */
static alignas(64) unsigned char breaker_memory[2048];

/* Room for a pool at the preset, and for a bloom of 2^6 words and a view
 * of it. */
static alignas(64) unsigned char pool_memory[2048];
static alignas(64) unsigned char bloom_region[64 + 8 * 64];
static alignas(64) unsigned char bloom_view[256];

struct client {
    const char *name;
    alignas(8) unsigned char bucket[96];
};

int main(void) {
    size_t bytes = 0, align = 0;
    if (weir_breaker_footprint(NULL, &bytes, &align) != WEIR_OK) return 1;
    printf("a preset breaker needs %zu bytes at a multiple of %zu\n", bytes, align);
    weir_breaker *breaker = NULL;
    if (weir_breaker_init_in(breaker_memory, sizeof breaker_memory, NULL, 0, &breaker) != WEIR_OK) {
        return 1;
    }
    if (weir_bucket_footprint(&bytes, &align) != WEIR_OK) return 1;
    printf("a bucket needs %zu bytes at a multiple of %zu\n", bytes, align);
    struct client client = {.name = "alice"};
    weir_bucket *bucket = NULL;
    if (weir_bucket_init_in(client.bucket, sizeof client.bucket, 2.0, 3.0, 0, &bucket) != WEIR_OK) {
        return 1;
    }
    /* Too little memory is a status, not a crash. */
    weir_bucket *none = NULL;
    weir_status short_memory = weir_bucket_init_in(client.bucket, 8, 2.0, 3.0, 0, &none);
    printf("8 bytes for a bucket: %s\n", weir_status_str(short_memory));

    int passed = 0, refused = 0;
    for (int64_t now = 0; now < INT64_C(2000000000); now += INT64_C(100000000)) {
        weir_breaker_ticket ticket;
        if (!weir_bucket_take(bucket, now, 1.0)) {
            refused++;
            continue;
        }
        if (weir_breaker_allow(breaker, now, 0.5, &ticket)) {
            weir_breaker_pass(breaker, &ticket, now);
            passed++;
        }
    }
    printf("%s: %d calls passed, %d refused by the bucket\n", client.name, passed, refused);

    /* A pool of connections known by their descriptors. */
    if (weir_pool_footprint(NULL, &bytes, &align) != WEIR_OK) return 1;
    printf("a preset pool needs %zu bytes at a multiple of %zu\n", bytes, align);
    weir_pool *pool = NULL;
    if (weir_pool_init_in(pool_memory, sizeof pool_memory, NULL, &pool) != WEIR_OK) return 1;
    weir_pool_taken taken = weir_pool_take(pool, 0);
    if (taken.kind == WEIR_POOL_TAKEN_MAKE) weir_pool_made(pool, 7, 0); /* "connected": fd 7 */
    bool kept = false;
    weir_pool_give(pool, 7, 0, &kept);
    taken = weir_pool_take(pool, 1);
    printf("the pool lends fd %" PRIuPTR " again (ready: %d)\n", taken.item,
           taken.kind == WEIR_POOL_TAKEN_READY);

    /* A bloom region, and a weir_bloom * over it: the calls of a heap one. */
    weir_rate_limit limit;
    if (weir_rate_limit_new(1.0, 2, &limit) != WEIR_OK) return 1;
    if (weir_bloom_init_in(bloom_region, sizeof bloom_region, 6, 2, &limit, 0x1234, 0x5678) != WEIR_OK) {
        return 1;
    }
    if (weir_bloom_view_footprint(&bytes, &align) != WEIR_OK || bytes > sizeof bloom_view) return 1;
    weir_bloom *bloom = NULL;
    if (weir_bloom_view_in(bloom_view, sizeof bloom_view, bloom_region, sizeof bloom_region, &bloom) != WEIR_OK) {
        return 1;
    }
    int allowed = 0;
    for (int i = 0; i < 4; i++) allowed += weir_bloom_allow(bloom, 0, "10.0.0.1", 8);
    /* The region's own call decides over the same words. */
    bool again = weir_bloom_allow_in(bloom_region, sizeof bloom_region, 0, "10.0.0.1", 8);
    printf("10.0.0.1: %d of 4 allowed by the view, then %s on the region\n", allowed,
           again ? "allowed" : "refused");
    /* Nothing to free: the memory is the program's. (weir_X_free on a
     * placed handle does nothing, so code that frees every handle may.) */
    weir_breaker_free(breaker);
    weir_bucket_free(bucket);
    weir_pool_free(pool);
    weir_bloom_free(bloom);
    return 0;
}
