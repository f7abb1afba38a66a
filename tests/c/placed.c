/* Placed handles through the header: a breaker, a bucket and a window laid
 * in static memory and in a field of the caller's struct, the same calls
 * as on heap handles, threads sharing a placed breaker (the handle's own
 * lock), memory that is too short or misaligned refused with nothing
 * written, and free leaving the caller's memory alone. */
#include <pthread.h>
#include <stdalign.h>
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
    CHECK_DONE();
}
