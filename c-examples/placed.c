/* Handles without a heap: a breaker in static memory and a bucket inside
 * the caller's own struct, laid with weir_X_init_in and used with the
 * same calls as heap handles. */
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>

#include "weir.h"

/* Room for a breaker at the preset (the program checks it fits). */
static alignas(64) unsigned char breaker_memory[2048];

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
    /* Nothing to free: the memory is the program's. (weir_X_free on a
     * placed handle does nothing, so code that frees every handle may.) */
    weir_breaker_free(breaker);
    weir_bucket_free(bucket);
    return 0;
}
