/* The bay's partitions panel replayed in C: the limit is made by the page's
 * "copy as C" calls (#included from BAY_POLICY as the start of main), the
 * two partitions' calls and their latencies the same splitmix64 draws in
 * the same order as bay/src/scenarios.rs, `partitions`. Prints one line
 * per 100 ms: t limit flying A-flying B-flying A-refused B-refused
 * (%.17g), for the test to compare with the native run point by point.
 *
 *   ./a.out A_RATE B_RATE B_FROM B_FOR LATENCY_MS SECONDS SEED */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"
#include "due.h"

/* Calls in flight as (finish, start, inflight × 2 + partition): the
 * order of the Rust run's (finish, start, inflight, partition). */
static void leave(const weir_concurrency *limit, int64_t now) {
    for (const struct bay_due *d; (d = bay_due_peek()) && d->at <= now;) {
        struct bay_due call = bay_due_pop();
        weir_concurrency_ticket flight = {.start = call.a, .inflight = (int32_t)(call.b / 2), .flying = 1};
        if (weir_concurrency_leave_partition(limit, (int32_t)(call.b % 2), &flight, call.at, false) != WEIR_OK) exit(4);
    }
}

int main(int argc, char **argv) {
#include BAY_POLICY
    if (argc != 8) {
        fprintf(stderr, "usage: %s A_RATE B_RATE B_FROM B_FOR LATENCY_MS SECONDS SEED\n", argv[0]);
        return 2;
    }
    if (made != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    double rates[2] = {atof(argv[1]), atof(argv[2])};
    int64_t b_from = (int64_t)(atof(argv[3]) * 1e9);
    int64_t b_for = (int64_t)(atof(argv[4]) * 1e9);
    double latency_ms = atof(argv[5]);
    int64_t end = (int64_t)(atof(argv[6]) * 1e9);
    bay_state = strtoull(argv[7], NULL, 10);
    int64_t b_until = b_from + b_for < end ? b_from + b_for : end;
    int64_t step = (int64_t)(100.0 * 1e6), edge = step;
    double refused[2] = {0, 0};
    int64_t next[2];
    next[0] = bay_gap(1e9 / (rates[0] > 1e-3 ? rates[0] : 1e-3));
    next[1] = b_from + bay_gap(1e9 / (rates[1] > 1e-3 ? rates[1] : 1e-3));
    for (;;) {
        int b_live = next[1] < b_until;
        int part = b_live && next[1] < next[0];
        int64_t now = part ? next[1] : next[0];
        while (edge <= (now < end ? now : end)) {
            leave(limit, edge);
            printf("%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", (double)edge / 1e9,
                   (double)weir_concurrency_limit(limit), (double)weir_concurrency_flying(limit),
                   (double)weir_concurrency_partition_flying(limit, 0),
                   (double)weir_concurrency_partition_flying(limit, 1), refused[0], refused[1]);
            refused[0] = refused[1] = 0;
            edge += step;
        }
        if (now >= end) break;
        leave(limit, now);
        double spread = 0.9 + 0.2 * bay_unit();
        weir_concurrency_ticket flight;
        if (weir_concurrency_enter_partition(limit, part, now, &flight) != WEIR_OK) exit(4);
        if (flight.flying) {
            bay_due_push(now + (int64_t)(latency_ms * 1e6 * spread), flight.start, 2 * (int64_t)flight.inflight + part);
        } else {
            refused[part] += 1;
        }
        next[part] = now + bay_gap(1e9 / (rates[part] > 1e-3 ? rates[part] : 1e-3));
    }
    weir_concurrency_free(limit);
    free(bay_due_heap);
    return 0;
}
