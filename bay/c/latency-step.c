/* The bay's latency-step panel replayed in C: the policy is the page's
 * "copy as C" literal (#included from BAY_POLICY), the calls and their
 * latencies the same splitmix64 draws in the same order as
 * bay/src/scenarios.rs, `latency_step`. Prints one line per 100 ms:
 * t limit flying refused latency-ms baseline-ms (%.17g), for the test to
 * compare with the native run point by point.
 *
 *   ./a.out RATE LOW_MS HIGH_MS UP_S DOWN_S SECONDS SEED */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"
#include "due.h"

#include BAY_POLICY

static double low_ms, high_ms;
static int64_t up, down;

/* The latency of a call starting at t (ns): high_ms in [up, down). */
static double latency_at(int64_t t) { return (t >= up && t < down ? high_ms : low_ms) * 1e6; }

/* Calls in flight as (finish, start, inflight): the flight given back. */
static void leave(const weir_concurrency *cc, int64_t now) {
    for (const struct bay_due *d; (d = bay_due_peek()) && d->at <= now;) {
        struct bay_due call = bay_due_pop();
        weir_concurrency_ticket flight = {.start = call.a, .inflight = (int32_t)call.b, .flying = 1};
        if (weir_concurrency_leave(cc, &flight, call.at, false) != WEIR_OK) exit(4);
    }
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s RATE LOW_MS HIGH_MS UP_S DOWN_S SECONDS SEED\n", argv[0]);
        return 2;
    }
    double rate = atof(argv[1]);
    low_ms = atof(argv[2]);
    high_ms = atof(argv[3]);
    up = (int64_t)(atof(argv[4]) * 1e9);
    down = (int64_t)(atof(argv[5]) * 1e9);
    double seconds = atof(argv[6]);
    bay_state = strtoull(argv[7], NULL, 10);
    weir_concurrency *cc = NULL;
    if (weir_concurrency_new(&policy, &cc) != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    int64_t end = (int64_t)(seconds * 1e9);
    int64_t step = (int64_t)(100.0 * 1e6), now = 0, edge = step;
    double mean = 1e9 / (rate > 1e-3 ? rate : 1e-3), refused = 0;
    for (;;) {
        now += bay_gap(mean);
        while (edge <= (now < end ? now : end)) {
            leave(cc, edge);
            printf("%.17g %.17g %.17g %.17g %.17g %.17g\n", (double)edge / 1e9, (double)weir_concurrency_limit(cc),
                   (double)weir_concurrency_flying(cc), refused, latency_at(edge) / 1e6,
                   weir_concurrency_long_rtt(cc) / 1e6);
            refused = 0;
            edge += step;
        }
        if (now >= end) break;
        leave(cc, now);
        double spread = 0.9 + 0.2 * bay_unit();
        weir_concurrency_ticket flight;
        if (weir_concurrency_enter(cc, now, &flight)) {
            bay_due_push(now + (int64_t)(latency_at(now) * spread), flight.start, flight.inflight);
        } else {
            refused += 1;
        }
    }
    weir_concurrency_free(cc);
    free(bay_due_heap);
    return 0;
}
