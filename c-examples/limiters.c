/* Bursty traffic through three quotas of twenty a second (docs/design.md,
 * scenario 1): a token bucket, a sliding window and a period aligned on the
 * second. Every two seconds forty calls arrive 2.5 ms apart, straddling a
 * second boundary. */
#include <inttypes.h>
#include <stdio.h>

#include "weir.h"

#define MS INT64_C(1000000)
#define SECOND INT64_C(1000000000)

int main(void) {
    weir_bucket *bucket = NULL;
    weir_sliding *sliding = NULL;
    weir_period *period = NULL;
    if (weir_bucket_new(20.0, 0.0, 0, &bucket) != WEIR_OK ||
        weir_sliding_new(20, SECOND, &sliding) != WEIR_OK ||
        weir_period_new(20, SECOND, true, &period) != WEIR_OK) {
        fprintf(stderr, "could not make the limiters\n");
        return 1;
    }
    printf("forty calls 2.5 ms apart from 50 ms before each odd second;\n");
    printf("each limiter allows twenty a second\n\n");
    printf("burst  bucket  sliding  period  next five tokens\n");
    for (int64_t burst = 0; burst < 4; burst++) {
        int64_t start = (2 * burst + 1) * SECOND - 50 * MS, now = start;
        int by_bucket = 0, by_sliding = 0, by_period = 0;
        for (int call = 0; call < 40; call++) {
            now = start + call * 2500000;
            by_bucket += weir_bucket_take(bucket, now, 1.0);
            by_sliding += weir_sliding_take(sliding, now);
            by_period += weir_period_take(period, now) != WEIR_PERIOD_QUOTA_OVER;
        }
        double wait_ms = (double)weir_bucket_next(bucket, now, 5.0) / (double)MS;
        printf("%-5" PRId64 "  %-6d  %-7d  %-6d  in %.1f ms\n", burst, by_bucket, by_sliding,
               by_period, wait_ms);
    }
    printf("\nThe bucket spends its saved twenty, plus the token that refills while\n"
           "the burst runs, then holds the rate. The sliding window refuses the\n"
           "twenty-first call in any one-second stretch. The aligned period starts\n"
           "a fresh twenty when the second turns, so all forty pass.\n");
    weir_bucket_free(bucket);
    weir_sliding_free(sliding);
    weir_period_free(period);
    return 0;
}
