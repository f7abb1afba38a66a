/* The bay's breaker panel replayed in C: the policy is the page's "copy as
 * C" literal (#included from BAY_POLICY, a file the browser test writes),
 * the traffic the same splitmix64 draws in the same order as
 * bay/src/scenarios.rs, `breaker`. Prints one line a second:
 * t through refused probes ratio down (ratio as %.17g), so the test can
 * compare it with the native run point by point.
 *
 *   cc -std=c11 -Iinclude -DBAY_POLICY='"policy.h"' bay/c/breaker.c \
 *      target/release/libweir.a -lpthread -ldl -lm
 *   ./a.out RATE FAIL DOWN_FAIL OUTAGE_AT OUTAGE_S LATENCY_MS SECONDS SEED */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"

#include BAY_POLICY

#define SECOND INT64_C(1000000000)

/* Calls let through and not settled yet, oldest first: with one latency
 * they finish in the order they started. */
#define RING 65536
static struct call {
    int64_t at;
    weir_breaker_ticket ticket;
    int fails;
} ring[RING];
static size_t head, tail;

static void settle(const weir_breaker *b, int64_t now) {
    while (head != tail && ring[head % RING].at <= now) {
        struct call *c = &ring[head % RING];
        if (c->fails) {
            weir_breaker_fail(b, &c->ticket, c->at);
        } else {
            weir_breaker_pass(b, &c->ticket, c->at);
        }
        head++;
    }
}

int main(int argc, char **argv) {
    if (argc != 9) {
        fprintf(stderr, "usage: %s RATE FAIL DOWN_FAIL OUTAGE_AT OUTAGE_S LATENCY_MS SECONDS SEED\n",
                argv[0]);
        return 2;
    }
    double rate = atof(argv[1]), fail = atof(argv[2]), down_fail = atof(argv[3]);
    double outage_at = atof(argv[4]), outage_s = atof(argv[5]), latency_ms = atof(argv[6]);
    int64_t seconds = (int64_t)round(atof(argv[7]));
    bay_state = strtoull(argv[8], NULL, 10);

    weir_breaker *b = NULL;
    if (weir_breaker_new(&policy, 0, &b) != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    int64_t end = seconds * SECOND;
    int64_t down_from = (int64_t)(outage_at * 1e9), down_to = (int64_t)((outage_at + outage_s) * 1e9);
    int64_t latency = (int64_t)(latency_ms * 1e6);
    double mean = 1e9 / (rate > 1e-3 ? rate : 1e-3);
    int through = 0, refused = 0, probes = 0;
    int64_t second = 0, now = 0;
    for (;;) {
        now += bay_gap(mean);
        while (second < seconds && (second + 1) * SECOND <= (now < end ? now : end)) {
            int64_t edge = (second + 1) * SECOND;
            settle(b, edge);
            int down = edge > down_from && edge - SECOND < down_to;
            printf("%" PRId64 " %d %d %d %.17g %d\n", second, through, refused, probes,
                   weir_breaker_ratio(b, edge), down);
            through = refused = probes = 0;
            second++;
        }
        if (now >= end) break;
        settle(b, now);
        int down = now >= down_from && now < down_to;
        int fails = bay_unit() < (down ? down_fail : fail);
        double roll = bay_unit();
        /* A pass is the probe's when the roll alone would have refused it:
         * the roll fell under the standing ratio (Breaker::probes in Rust). */
        double ratio = weir_breaker_ratio(b, now);
        weir_breaker_ticket ticket;
        if (weir_breaker_allow(b, now, roll, &ticket)) {
            through++;
            if (roll < ratio) probes++;
            if (tail - head == RING) return 3;
            ring[tail % RING] = (struct call){now + latency, ticket, fails};
            tail++;
        } else {
            refused++;
        }
    }
    weir_breaker_free(b);
    return 0;
}
