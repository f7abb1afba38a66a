/* The bay's retry panel replayed in C: the budget and the backoff are the
 * page's "copy as C" literals (`policy` and `backoff`, #included from
 * BAY_POLICY), the requests, failures and backoff draws the same splitmix64
 * draws in the same order as bay/src/scenarios.rs, `retry`. Prints one line
 * a second: t requests retries refused attempts-per-request (%.17g), for
 * the test to compare with the native run point by point.
 *
 *   ./a.out RATE FAIL OUTAGE_AT OUTAGE_S SECONDS SEED */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "weir.h"

#include "draws.h"
#include "due.h"

#include BAY_POLICY

#define SECOND INT64_C(1000000000)

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s RATE FAIL OUTAGE_AT OUTAGE_S SECONDS SEED\n", argv[0]);
        return 2;
    }
    double rate = atof(argv[1]), fail = atof(argv[2]), outage_at = atof(argv[3]);
    double outage_s = atof(argv[4]), seconds = atof(argv[5]);
    bay_state = strtoull(argv[6], NULL, 10);
    weir_budget *budget = NULL;
    if (weir_backoff_check(&backoff) != WEIR_OK || weir_budget_new(&policy, 0, &budget) != WEIR_OK) {
        printf("invalid policy\n");
        return 0;
    }
    int64_t end = (int64_t)(seconds * 1e9);
    int64_t down_from = (int64_t)(outage_at * 1e9), down_to = (int64_t)((outage_at + outage_s) * 1e9);
    double mean = 1e9 / (rate > 1e-3 ? rate : 1e-3);
    /* Retries waiting: (when, attempts made so far, the last delay). */
    int64_t next_request = bay_gap(mean), edge = SECOND;
    double requests = 0, retries = 0, refused = 0;
    for (;;) {
        const struct bay_due *first = bay_due_peek();
        int64_t retry_at = first ? first->at : INT64_MAX;
        int64_t now = next_request < retry_at ? next_request : retry_at;
        while (edge <= (now < end ? now : end)) {
            double per = requests > 0 ? (requests + retries) / requests : 0;
            printf("%.17g %.17g %.17g %.17g %.17g\n", (double)(edge - SECOND) / 1e9, requests, retries,
                   refused, per);
            requests = retries = refused = 0;
            edge += SECOND;
        }
        if (now >= end) break;
        int32_t made;
        int64_t previous;
        if (retry_at <= next_request) {
            struct bay_due r = bay_due_pop();
            retries += 1;
            made = (int32_t)r.a + 1;
            previous = r.b;
        } else {
            next_request += bay_gap(mean);
            requests += 1;
            weir_budget_deposit(budget, now);
            made = 1;
            previous = 0;
        }
        int down = now >= down_from && now < down_to;
        int fails = down || bay_unit() < fail;
        if (fails && weir_backoff_more(&backoff, made)) {
            if (weir_budget_withdraw(budget, now)) {
                int64_t delay = weir_backoff_delay(&backoff, made, bay_unit(), previous);
                bay_due_push(now + delay, made, delay);
            } else {
                refused += 1;
            }
        }
    }
    weir_budget_free(budget);
    free(bay_due_heap);
    return 0;
}
