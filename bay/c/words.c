/* The bay's words panel replayed in C: the rate word's and the GCRA
 * word's limits are made by the page's "copy as C" calls (#included from
 * BAY_POLICY as the start of main), the calls the same splitmix64 draws in
 * the same order as bay/src/scenarios.rs, `words`. Prints one line per
 * 20 ms: t, calls offered and each word's passes so far (%.17g), for the
 * test to compare with the native run point by point.
 *
 *   ./a.out OFFERED SECONDS SEED */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"

int main(int argc, char **argv) {
#include BAY_POLICY
    if (argc != 4) {
        fprintf(stderr, "usage: %s OFFERED SECONDS SEED\n", argv[0]);
        return 2;
    }
    if (made != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    double offered = atof(argv[1]), seconds = atof(argv[2]);
    bay_state = strtoull(argv[3], NULL, 10);
    int64_t end = (int64_t)(seconds * 1e9), step = (int64_t)(20.0 * 1e6), now = 0, edge = step;
    double mean = 1e9 / (offered > 1e-3 ? offered : 1e-3), o = 0, r = 0, g = 0;
    for (;;) {
        now += bay_gap(mean);
        while (edge <= (now < end ? now : end)) {
            printf("%.17g %.17g %.17g %.17g\n", (double)edge / 1e9, o, r, g);
            edge += step;
        }
        if (now >= end) break;
        o += 1;
        r += weir_rate_allow(&rate, &rate_limit, now);
        g += weir_gcra_allow(&gcra, &gcra_limit, now);
    }
    return 0;
}
