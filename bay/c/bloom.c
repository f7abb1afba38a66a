/* The bay's bloom panel replayed in C: the bloom is made by the page's
 * "copy as C" calls (#included from BAY_POLICY as the start of main), its
 * keys the same splitmix64 draws in the same order as
 * bay/src/scenarios.rs, `bloom`. Prints one line per step: keys so far,
 * the fraction of the step's fresh keys refused, and the header's
 * (1 - e^(-kN/M))^k at the step's middle (%.17g); SIZE_LOG2 and HASHES
 * are the knobs the calls were written from, for the formula.
 *
 *   ./a.out SIZE_LOG2 HASHES KEYS STEPS SEED */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"

int main(int argc, char **argv) {
#include BAY_POLICY
    if (argc != 6) {
        fprintf(stderr, "usage: %s SIZE_LOG2 HASHES KEYS STEPS SEED\n", argv[0]);
        return 2;
    }
    if (made != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    double m = (double)(UINT64_C(1) << (unsigned)atof(argv[1])), k = (double)(unsigned)atof(argv[2]);
    uint64_t keys = (uint64_t)atof(argv[3]), steps = (uint64_t)fmax(atof(argv[4]), 1.0);
    bay_state = strtoull(argv[5], NULL, 10);
    uint64_t done = 0;
    for (uint64_t step = 1; step <= steps; step++) {
        uint64_t upto = keys * step / steps, n = upto - done;
        double refused = 0;
        for (uint64_t i = done; i < upto; i++) {
            /* Two draws, each as 8 little-endian bytes. */
            unsigned char key[16];
            for (int half = 0; half < 2; half++) {
                uint64_t v = bay_next_u64();
                for (int byte = 0; byte < 8; byte++) key[8 * half + byte] = (unsigned char)(v >> (8 * byte));
            }
            refused += !weir_bloom_allow(bloom, 1, key, sizeof key);
        }
        double mid = (double)(done + upto) / 2.0;
        printf("%.17g %.17g %.17g\n", (double)upto, refused / (double)(n > 1 ? n : 1),
               pow(1.0 - exp(-k * mid / m), k));
        done = upto;
    }
    weir_bloom_free(bloom);
    return 0;
}
