/* The bay's shedder panel replayed in C: the policy is the page's "copy as
 * C" literal (#included from BAY_POLICY), the load and the server model
 * those of bay/src/scenarios.rs, `shedder`, with the same splitmix64 draws.
 * Prints one line per 100 ms: t offered cpu flying limit refused passed
 * (%.17g), for the test to compare with the native run point by point.
 *
 *   ./a.out CAPACITY SERVICE_MS START_RATE PEAK_RATE SECONDS SEED */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"

#include BAY_POLICY

/* Calls in flight, a min-heap by (finish, serial): the order the Rust
 * run's BinaryHeap gives them back. */
struct call {
    int64_t at;
    uint64_t serial;
    weir_ticket ticket;
};
static struct call *heap;
static size_t len, cap;

static int before(const struct call *a, const struct call *b) {
    return a->at < b->at || (a->at == b->at && a->serial < b->serial);
}

static void push(struct call c) {
    if (len == cap) {
        cap = cap ? 2 * cap : 1024;
        heap = realloc(heap, cap * sizeof *heap);
        if (!heap) exit(3);
    }
    size_t i = len++;
    heap[i] = c;
    while (i > 0 && before(&heap[i], &heap[(i - 1) / 2])) {
        struct call t = heap[i];
        heap[i] = heap[(i - 1) / 2];
        heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static struct call pop(void) {
    struct call top = heap[0];
    heap[0] = heap[--len];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < len && before(&heap[l], &heap[m])) m = l;
        if (r < len && before(&heap[r], &heap[m])) m = r;
        if (m == i) break;
        struct call t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
    return top;
}

static void finish(const weir_shedder *s, int64_t now) {
    while (len > 0 && heap[0].at <= now) {
        struct call c = pop();
        weir_shedder_pass(s, &c.ticket, c.at);
    }
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s CAPACITY SERVICE_MS START_RATE PEAK_RATE SECONDS SEED\n", argv[0]);
        return 2;
    }
    double capacity = atof(argv[1]), service_ms = atof(argv[2]);
    double start_rate = atof(argv[3]), peak_rate = atof(argv[4]), seconds = atof(argv[5]);
    bay_state = strtoull(argv[6], NULL, 10);
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
    double offered = 0, refused = 0, passed = 0, cpu = 0;
    for (;;) {
        double rate = (double)now < ramp ? start_rate + (peak_rate - start_rate) * (double)now / ramp
                                         : start_rate;
        now += bay_gap(1e9 / fmax(rate, 1e-3));
        while (edge <= (now < end ? now : end)) {
            finish(sh, edge);
            weir_shed_stats st;
            weir_shedder_stats(sh, edge, &st);
            printf("%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", (double)edge / 1e9, offered * 10.0,
                   floor(cpu), (double)st.flying, st.limit, refused, passed);
            offered = refused = passed = 0;
            edge += step;
        }
        if (now >= end) break;
        finish(sh, now);
        offered += 1;
        int64_t flying = weir_shedder_flying(sh);
        double busy = fmin((double)flying / slots, 1.0) * 1000.0;
        cpu += (busy - cpu) * 0.02;
        weir_ticket ticket;
        if (weir_shedder_allow(sh, now, (int32_t)cpu, &ticket)) {
            passed += 1;
            double slow = fmax((double)flying / slots, 1.0);
            push((struct call){now + (int64_t)(service_ms * 1e6 * slow), ++serial, ticket});
        } else {
            refused += 1;
        }
    }
    weir_shedder_free(sh);
    free(heap);
    return 0;
}
