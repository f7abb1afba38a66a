/* The bay's classes panel replayed in C: the policy is the page's "copy as
 * C" literal (#included from BAY_POLICY), the load, the server model and
 * each call's class those of bay/src/scenarios.rs, `classes`, with the
 * same splitmix64 draws, each call asked with weir_shedder_allow_class.
 * Prints one line per 100 ms: t cpu flying limit, then each class's calls
 * let through and refused, SHEDDABLE first (%.17g), for the test to
 * compare with the native run point by point.
 *
 *   ./a.out SHEDDABLE SHEDDABLE_PLUS CRITICAL_PLUS CAPACITY SERVICE_MS START_RATE PEAK_RATE SECONDS SEED */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"
#include "due.h"

#include BAY_POLICY

/* Calls in flight as (finish, serial) in due.h's queue, their tickets by
 * serial, as the Rust run's BinaryHeap and HashMap keep them. */
static weir_shedder_ticket *tickets;
static size_t tickets_cap;

static void hold(uint64_t serial, weir_shedder_ticket ticket) {
    if (serial >= tickets_cap) {
        tickets_cap = tickets_cap ? 2 * tickets_cap : 1024;
        tickets = realloc(tickets, tickets_cap * sizeof *tickets);
        if (!tickets) exit(3);
    }
    tickets[serial] = ticket;
}

static void finish(const weir_shedder *s, int64_t now) {
    for (const struct bay_due *d; (d = bay_due_peek()) && d->at <= now;) {
        struct bay_due call = bay_due_pop();
        weir_shedder_pass(s, &tickets[call.a], call.at);
    }
}

int main(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: %s SHEDDABLE SHEDDABLE_PLUS CRITICAL_PLUS CAPACITY SERVICE_MS START_RATE PEAK_RATE SECONDS SEED\n",
                argv[0]);
        return 2;
    }
    /* A draw under a is SHEDDABLE, under b SHEDDABLE_PLUS, under c
     * CRITICAL_PLUS, the rest CRITICAL; the columns' order, least
     * important first, and each class's weir.h value. */
    double a = atof(argv[1]);
    double b = a + atof(argv[2]);
    double c = b + atof(argv[3]);
    static const int32_t classes[4] = {WEIR_SHEDDER_SHEDDABLE, WEIR_SHEDDER_SHEDDABLE_PLUS, WEIR_SHEDDER_CRITICAL,
                                       WEIR_SHEDDER_CRITICAL_PLUS};
    double capacity = atof(argv[4]), service_ms = atof(argv[5]);
    double start_rate = atof(argv[6]), peak_rate = atof(argv[7]), seconds = atof(argv[8]);
    bay_state = strtoull(argv[9], NULL, 10);
    weir_shedder *sh = NULL;
    if (weir_shedder_new(&policy, 0, &sh) != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    int64_t end = (int64_t)(seconds * 1e9);
    double ramp = (double)end * 2.0 / 3.0;
    double slots = fmax(capacity * service_ms / 1e3, 1e-3);
    int64_t step = (int64_t)(100.0 * 1e6);
    uint64_t serial = 0;
    int64_t now = 0, edge = step;
    double through[4] = {0}, refused[4] = {0}, cpu = 0;
    for (;;) {
        double rate = (double)now < ramp ? start_rate + (peak_rate - start_rate) * (double)now / ramp
                                         : start_rate;
        now += bay_gap(1e9 / fmax(rate, 1e-3));
        while (edge <= (now < end ? now : end)) {
            finish(sh, edge);
            weir_shedder_stats st;
            weir_shedder_read_stats(sh, edge, &st);
            printf("%.17g %.17g %.17g %.17g", (double)edge / 1e9, floor(cpu), (double)st.flying, st.limit);
            for (int i = 0; i < 4; i++) printf(" %.17g", through[i]);
            for (int i = 0; i < 4; i++) printf(" %.17g", refused[i]);
            printf("\n");
            for (int i = 0; i < 4; i++) through[i] = refused[i] = 0;
            edge += step;
        }
        if (now >= end) break;
        finish(sh, now);
        int64_t flying = weir_shedder_flying(sh);
        double busy = fmin((double)flying / slots, 1.0) * 1000.0;
        cpu += (busy - cpu) * 0.02;
        double u = bay_unit();
        int at = u < a ? 0 : u < b ? 1 : u < c ? 3 : 2;
        weir_shedder_ticket ticket;
        if (weir_shedder_allow_class(sh, now, (int32_t)cpu, classes[at], &ticket) != WEIR_OK) exit(4);
        if (ticket.flying) {
            through[at] += 1;
            double slow = fmax((double)flying / slots, 1.0);
            hold(++serial, ticket);
            bay_due_push(now + (int64_t)(service_ms * 1e6 * slow), (int64_t)serial, 0);
        } else {
            refused[at] += 1;
        }
    }
    weir_shedder_free(sh);
    free(bay_due_heap);
    free(tickets);
    return 0;
}
