/* The bay's pool panel replayed in C: the limits are the page's "copy as
 * C" literal (#included from BAY_POLICY), the burst's calls the same
 * splitmix64 draws in the same order as bay/src/scenarios.rs, `pool`.
 * Prints one line per point (120 over the burst, 240 after it):
 * t live idle made evicted waited (%.17g), for the test to compare with
 * the native run point by point.
 *
 *   ./a.out RATE WORK_MS BURST_S SECONDS SEED */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"
#include "due.h"

#include BAY_POLICY

/* Resources lent out, as (due back, item): given back in order. */
static void back(const weir_pool *pool, int64_t now) {
    for (const struct bay_due *d; (d = bay_due_peek()) && d->at <= now;) {
        struct bay_due lent = bay_due_pop();
        bool kept;
        if (weir_pool_give(pool, (uintptr_t)lent.a, lent.at, &kept) != WEIR_OK) exit(4);
    }
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s RATE WORK_MS BURST_S SECONDS SEED\n", argv[0]);
        return 2;
    }
    double rate = atof(argv[1]), work_ms = atof(argv[2]), burst_s = atof(argv[3]);
    double seconds = atof(argv[4]);
    bay_state = strtoull(argv[5], NULL, 10);
    weir_pool *pool = NULL;
    if (weir_pool_new(&policy, &pool) != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    int64_t end = (int64_t)(seconds * 1e9), burst_end = (int64_t)(burst_s * 1e9);
    int64_t shown = burst_end < end ? burst_end : end;
    /* The points: 120 over the burst, 240 over the rest, each once. */
    int64_t edges[360];
    size_t n = 0;
    for (int64_t i = 1; i <= 360; i++) {
        int64_t e = i <= 120 ? shown * i / 120 : shown + (end - shown) * (i - 120) / 240;
        if (e > 0 && (n == 0 || edges[n - 1] != e)) edges[n++] = e;
    }
    int64_t next_call = bay_gap(1e9 / rate);
    double mean = 1e9 / (rate > 1e-3 ? rate : 1e-3), waited = 0;
    uintptr_t ids = 0, out[64];
    for (size_t at_edge = 0; at_edge < n;) {
        int64_t at = edges[at_edge];
        if (next_call < burst_end && next_call <= at) {
            int64_t now = next_call;
            next_call += bay_gap(mean);
            back(pool, now);
            uintptr_t item = 0;
            for (;;) {
                weir_pool_taken taken = weir_pool_take(pool, now);
                if (taken.kind == WEIR_POOL_TAKEN_STALE) continue;
                if (taken.kind == WEIR_POOL_TAKEN_READY) item = taken.item;
                if (taken.kind == WEIR_POOL_TAKEN_MAKE) {
                    item = ++ids;
                    /* A draw only where it cuts a life, as the page does. */
                    uint64_t draw = policy.life_jitter > 0 ? bay_next_u64() : 0;
                    if (weir_pool_made_jittered(pool, item, now, draw) != WEIR_OK) return 4;
                }
                break;
            }
            if (item) {
                bay_due_push(now + (int64_t)(work_ms * 1e6), (int64_t)item, 0);
            } else {
                waited += 1;
            }
            continue;
        }
        back(pool, at);
        while (weir_pool_evict(pool, at, out, 64) == 64) {
        }
        /* Keep min_idle ready: each reservation made and given back idle. */
        for (int64_t ahead = weir_pool_make_ahead(pool); ahead > 0; ahead--) {
            bool kept;
            if (weir_pool_give(pool, ++ids, at, &kept) != WEIR_OK) return 4;
        }
        weir_pool_stats c;
        if (weir_pool_read_stats(pool, &c) != WEIR_OK) return 4;
        printf("%.17g %.17g %.17g %.17g %.17g %.17g\n", (double)at / 1e9, (double)weir_pool_live(pool),
               (double)weir_pool_idle(pool), (double)c.made, (double)(c.evicted_idle + c.evicted_age + c.stale),
               waited);
        at_edge++;
    }
    weir_pool_free(pool);
    free(bay_due_heap);
    return 0;
}
