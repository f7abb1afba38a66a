/* Drives weir_shedder_allow for callgrind: `shedder SIZE MODE CALLS` makes a
 * shedder of SIZE buckets, 100 ms each, and makes CALLS decisions, each
 * passed at once. MODE "new" puts every decision in a new bucket (the
 * decision that opens a bucket), "same" keeps them all in one bucket.
 * .ci/stages/shedder-callgrind.sh counts the instructions inside
 * weir_shedder_allow and divides by CALLS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weir.h"

#define MS INT64_C(1000000)

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s SIZE new|same CALLS\n", argv[0]);
        return 2;
    }
    int32_t size = (int32_t)atoi(argv[1]);
    int fresh = strcmp(argv[2], "new") == 0;
    long calls = atol(argv[3]);
    weir_shedder_policy shed = weir_shedder_policy_preset();
    shed.size = size;
    shed.window_ns = (int64_t)size * 100 * MS;
    weir_shedder *shedder = NULL;
    if (weir_shedder_new(&shed, 0, &shedder) != WEIR_OK) return 1;
    long admitted = 0;
    for (long i = 0; i < calls; i++) {
        int64_t now = fresh ? i * 100 * MS : (int64_t)i;
        weir_shedder_ticket ticket;
        if (weir_shedder_allow(shedder, now, (int32_t)(i % 1000), &ticket)) {
            admitted++;
            if (weir_shedder_pass(shedder, &ticket, now + (int64_t)(i % 7) * MS) != WEIR_OK) return 1;
        }
    }
    weir_shedder_free(shedder);
    printf("%ld of %ld admitted\n", admitted, calls);
    return 0;
}
