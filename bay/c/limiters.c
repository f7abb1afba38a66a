/* The bay's limiters panel replayed in C: the bucket, the sliding window
 * and the period are made by the page's "copy as C" calls (#included from
 * BAY_POLICY as the start of main), the bursts' calls placed with the same
 * splitmix64 draws in the same order as bay/src/scenarios.rs, `limiters`.
 * Prints one line per call: t and each limiter's passes so far (%.17g),
 * for the test to compare with the native run point by point.
 *
 *   ./a.out CALLS GAP_MS LEAD_MS BURSTS JITTER_MS SEED */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"

static int earlier(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
#include BAY_POLICY
    if (argc != 7) {
        fprintf(stderr, "usage: %s CALLS GAP_MS LEAD_MS BURSTS JITTER_MS SEED\n", argv[0]);
        return 2;
    }
    if (made != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    int64_t calls = (int64_t)atof(argv[1]), bursts = (int64_t)atof(argv[4]);
    double gap_ms = atof(argv[2]), lead_ms = atof(argv[3]), jitter_ms = atof(argv[5]);
    bay_state = strtoull(argv[6], NULL, 10);
    int64_t *times = malloc(sizeof *times * (size_t)(calls * bursts + 1));
    if (!times) return 3;
    size_t n = 0;
    for (int64_t burst = 0; burst < bursts; burst++) {
        double start = (double)(2 * burst + 1) * 1e9 - lead_ms * 1e6;
        for (int64_t call = 0; call < calls; call++) {
            double t = start + (double)call * gap_ms * 1e6 + bay_unit() * jitter_ms * 1e6;
            times[n++] = (int64_t)fmax(t, 0.0);
        }
    }
    qsort(times, n, sizeof *times, earlier);
    double a = 0, b = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t now = times[i];
        a += weir_bucket_take(bucket, now, 1.0);
        b += weir_sliding_take(sliding, now);
        c += weir_period_take(period, now) != WEIR_PERIOD_QUOTA_OVER;
        printf("%.17g %.17g %.17g %.17g\n", (double)now / 1e9, a, b, c);
    }
    free(times);
    weir_bucket_free(bucket);
    weir_sliding_free(sliding);
    weir_period_free(period);
    return 0;
}
