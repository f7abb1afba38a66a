/* The bay's keyed panel replayed in C: the table (and the bloom array of
 * the same memory beside it) are made by the page's "copy as C" calls
 * (#included from BAY_POLICY as the start of main), the calls the same
 * splitmix64 draws in the same order as bay/src/scenarios.rs, `keyed`:
 * KEYS keys join one by one over the first half of the run, the watched
 * key (number KEYS) calls from 0 in turns of PAUSE seconds on and off, and
 * each call goes to the table, the bloom and the key's own lone GCRA word.
 * Prints one line a second (%.17g): t, overflows, the table's and the
 * bloom's false refusals, their false admits, keys joined, slots held,
 * slots, and the watched key's admits so far in the table and on its lone
 * word.
 *
 *   ./a.out KEYS CALLS PAUSE SECONDS SEED */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"
#include "due.h"

int main(int argc, char **argv) {
#include BAY_POLICY
    if (argc != 6) {
        fprintf(stderr, "usage: %s KEYS CALLS PAUSE SECONDS SEED\n", argv[0]);
        return 2;
    }
    if (made != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    double calls = atof(argv[2]);
    int64_t keys = (int64_t)atof(argv[1]), watched = keys;
    int64_t end = (int64_t)(atof(argv[4]) * 1e9), half = end / 2, pause = (int64_t)(atof(argv[3]) * 1e9);
    double mean = 1e9 / (calls > 1e-3 ? calls : 1e-3);
    bay_state = strtoull(argv[5], NULL, 10);
    weir_gcra *lone = calloc((size_t)keys + 1, sizeof *lone);
    bool *joined = calloc((size_t)keys + 1, sizeof *joined);
    if (!lone || !joined) return 3;
    for (int64_t i = 0; i < keys; i++) bay_due_push(i * half / (keys > 1 ? keys : 1), i, 0);
    bay_due_push(0, watched, 0);
    weir_keyed_reading reading;
    int64_t step = 1000000000, edge = step;
    uint64_t seen_overflows = 0;
    double active = 0, bin[4] = {0, 0, 0, 0}, in_table = 0, on_lone = 0;
    for (;;) {
        const struct bay_due *next = bay_due_peek();
        int64_t now = next && next->at < end ? next->at : end;
        while (edge <= now) {
            if (weir_keyed_read(table, &reading) != WEIR_OK) return 4;
            printf("%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", (double)edge / 1e9,
                   (double)(reading.overflows - seen_overflows), bin[0], bin[1], bin[2], bin[3], active,
                   (double)reading.occupied, (double)reading.slots, in_table, on_lone);
            seen_overflows = reading.overflows;
            bin[0] = bin[1] = bin[2] = bin[3] = 0;
            edge += step;
        }
        if (!next || next->at >= end) break;
        struct bay_due call = bay_due_pop();
        int64_t key = call.a;
        if (!joined[key]) {
            joined[key] = true;
            if (key != watched) active += 1;
        }
        if (key != watched || pause == 0 || (now / pause) % 2 == 0) {
            /* The key as 8 little-endian bytes. */
            unsigned char bytes[8];
            for (int byte = 0; byte < 8; byte++) bytes[byte] = (unsigned char)((uint64_t)key >> (8 * byte));
            bool alone = weir_gcra_allow(&lone[key], &limit, now);
            bool by_table = weir_keyed_allow(table, now, bytes, sizeof bytes);
            bool by_bloom = weir_bloom_allow(bloom, now, bytes, sizeof bytes);
            bin[0] += alone && !by_table;
            bin[1] += alone && !by_bloom;
            bin[2] += !alone && by_table;
            bin[3] += !alone && by_bloom;
            if (key == watched) {
                in_table += by_table;
                on_lone += alone;
            }
        }
        bay_due_push(now + bay_gap(mean), key, 0);
    }
    weir_keyed_free(table);
    weir_bloom_free(bloom);
    free(lone);
    free(joined);
    return 0;
}
