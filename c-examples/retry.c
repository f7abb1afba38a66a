/* A retry loop with backoff and a retry budget, against a backend that is
 * healthy, then down for a while, then healthy again.
 *
 * Backoff decides how long one call waits before its next attempt; the
 * budget decides whether any retry is sent at all. Here 20 calls a second
 * each may make 3 attempts (weir_backoff's preset), and a Finagle-style
 * budget lets retries be 20 % of the calls of the last 10 s plus 1 a
 * second. While the backend is down, backoff alone would send 3 attempts
 * per call; with the budget, retries stop once the credit is spent.
 *
 * The program drives time itself (`now`), so it prints the same every
 * run, and it never sleeps: a real client would wait `delay` before the
 * retry. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "weir.h"

#define MS INT64_C(1000000)
#define SECOND (1000 * MS)

/* The backend: down from 5 s to 20 s. */
static bool backend_works(int64_t now) { return now < 5 * SECOND || now >= 20 * SECOND; }

int main(void) {
    weir_backoff backoff = weir_backoff_preset();
    weir_budget_policy policy = weir_budget_policy_preset();
    policy.min_per_s = 1;
    weir_budget *budget = NULL;
    if (weir_budget_new(&policy, 0, &budget) != WEIR_OK) return 1;

    printf("second  backend  calls  attempts  retries  refused-by-budget\n");
    for (int64_t second = 0; second < 30; second++) {
        int attempts = 0, retries = 0, refused = 0;
        for (int call = 0; call < 20; call++) {
            int64_t now = second * SECOND + call * 50 * MS;
            weir_budget_deposit(budget, now); /* a request, not a retry */
            int64_t delay = 0;
            for (int32_t made = 1;; made++) {
                attempts++;
                if (backend_works(now)) break;
                if (!weir_backoff_more(&backoff, made)) break;
                if (!weir_budget_withdraw(budget, now)) {
                    refused++;
                    break;
                }
                retries++;
                /* A fixed draw keeps the output the same every run. */
                delay = weir_backoff_delay(&backoff, made, 0.5, delay);
                now += delay;
            }
        }
        if (second % 3 == 0 || (second >= 4 && second <= 7)) {
            printf("%6" PRId64 "  %-7s  %5d  %8d  %7d  %17d\n", second,
                   backend_works(second * SECOND) ? "up" : "down", 20, attempts, retries,
                   refused);
        }
    }
    printf("\nWhile the backend is down, retries stay near 20 %% of calls plus the\n"
           "reserve instead of doubling the load; once it is back, none are needed.\n");
    weir_budget_free(budget);
    return 0;
}
