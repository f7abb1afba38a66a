/* The bay's backoff panel replayed in C: the policy is the page's "copy as
 * C" literal (#included from BAY_POLICY), each of the five jitters drawn
 * DRAWS times per retry from the same splitmix64 draws in the same order as
 * bay/src/scenarios.rs, `backoff`. Prints per retry: the ceiling, each
 * jitter's largest delay, the four random jitters' means (ms, %.17g); then
 * the 40-bin histogram of every delay: the bin's middle (ms) and a count
 * per jitter.
 *
 *   ./a.out DRAWS SEED */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"

#include BAY_POLICY

#define BINS 40
#define MS 1e6

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DRAWS SEED\n", argv[0]);
        return 2;
    }
    long draws = atol(argv[1]);
    bay_state = strtoull(argv[2], NULL, 10);
    weir_backoff p = policy;
    if (weir_backoff_check(&p) != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    int retries = p.attempts - 1;
    int64_t *delays = malloc(sizeof *delays * 5 * (size_t)draws * (size_t)retries + 1);
    double *maxes = calloc(5 * (size_t)retries + 1, sizeof *maxes);
    double *means = calloc(5 * (size_t)retries + 1, sizeof *means);
    if (!delays || !maxes || !means) return 3;
    size_t n = 0;
    int64_t top = 1;
    for (int j = 0; j < 5; j++) {
        weir_backoff b = p;
        b.jitter = j; /* WEIR_BACKOFF_JITTER_RIGID .. WEIR_BACKOFF_JITTER_SPREAD */
        for (long i = 0; i < draws; i++) {
            int64_t previous = 0;
            for (int r = 0; r < retries; r++) {
                int64_t d = weir_backoff_delay(&b, r + 1, bay_unit(), previous);
                previous = d;
                delays[n++] = d;
                double *mx = &maxes[j * retries + r];
                if ((double)d > *mx) *mx = (double)d;
                means[j * retries + r] += (double)d / (double)draws;
                if (d > top) top = d;
            }
        }
    }
    for (int r = 0; r < retries; r++) {
        printf("%.17g", (double)weir_backoff_ceiling(&p, r + 1) / MS);
        for (int j = 0; j < 5; j++) printf(" %.17g", maxes[j * retries + r] / MS);
        for (int j = 1; j < 5; j++) printf(" %.17g", means[j * retries + r] / MS);
        printf("\n");
    }
    double hist[5][BINS] = {{0}};
    size_t per = (size_t)draws * (size_t)retries;
    for (size_t i = 0; i < n; i++) {
        size_t bin = (size_t)((double)delays[i] / (double)top * BINS);
        hist[i / per][bin < BINS ? bin : BINS - 1] += 1;
    }
    for (int b = 0; b < BINS; b++) {
        printf("%.17g", ((double)b + 0.5) * (double)top / BINS / MS);
        for (int j = 0; j < 5; j++) printf(" %.17g", hist[j][b]);
        printf("\n");
    }
    free(delays);
    free(maxes);
    free(means);
    return 0;
}
