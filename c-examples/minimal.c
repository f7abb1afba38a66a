/* The smallest weir program: a rate limit of two calls a second with a
 * burst of three, asked by a client that calls every 200 ms. */
#include <inttypes.h>
#include <stdio.h>

#include "weir.h"

int main(void) {
    weir_bucket *bucket = NULL;
    if (weir_bucket_new(2.0, 3.0, 0, &bucket) != WEIR_OK) return 1;
    for (int64_t now = 0; now <= INT64_C(1400000000); now += INT64_C(200000000)) {
        if (weir_bucket_take(bucket, now, 1.0)) {
            printf("%5" PRId64 " ms: go ahead\n", now / 1000000);
        } else {
            int64_t wait = weir_bucket_next(bucket, now, 1.0);
            printf("%5" PRId64 " ms: refused, try again in %" PRId64 " ms\n", now / 1000000,
                   wait / 1000000);
        }
    }
    weir_bucket_free(bucket);
    return 0;
}
