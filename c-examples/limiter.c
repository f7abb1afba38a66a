/* A per-user quota table: each account embeds a weir_limiter by value (no
 * handle, no heap). Three users on three plans send a burst of requests;
 * then every quota is doubled by snapshot-and-rebuild, which keeps each
 * user's phase (refill anchor, window grid, cooldown gate), and the burst
 * goes on. Time is driven by a loop, not the wall clock. */
#include <inttypes.h>
#include <stdio.h>

#include "weir.h"

#define MS INT64_C(1000000)

struct account {
    const char *name;
    const char *plan;
    weir_limiter quota; /* embedded: the table is one flat array */
    unsigned served[2], refused[2];
};

/* Builds a copy of `quota` with a new capacity, carrying over the units
 * left and the phase read at `now`; the settings other than the capacity
 * stay, so no time is credited at a new rate. Writes *quota only on
 * success. */
static weir_status resize(weir_limiter *quota, uint64_t capacity, int64_t now) {
    uint64_t left = weir_limiter_available(quota, now), amount = 0;
    int64_t period = 0, anchor = 0;
    weir_limiter fresh;
    weir_status status;
    if (weir_limiter_is_bucket(quota)) {
        if ((status = weir_limiter_refill_amount(quota, &amount)) != WEIR_OK) return status;
        if ((status = weir_limiter_refill_interval_ns(quota, &period)) != WEIR_OK) return status;
        if ((status = weir_limiter_last_refill(quota, now, &anchor)) != WEIR_OK) return status;
        status = weir_limiter_bucket(&fresh, capacity, amount, period, anchor, left, now);
    } else if (weir_limiter_is_fixed_window(quota)) {
        if ((status = weir_limiter_window_ns(quota, &period)) != WEIR_OK) return status;
        if ((status = weir_limiter_window_start(quota, now, &anchor)) != WEIR_OK) return status;
        status = weir_limiter_fixed_window(&fresh, capacity, period, anchor, left, now);
    } else {
        if ((status = weir_limiter_cooldown_ns(quota, &period)) != WEIR_OK) return status;
        if ((status = weir_limiter_cooldown_end(quota, &anchor)) != WEIR_OK) return status;
        status = weir_limiter_cooldown(&fresh, capacity, period, anchor, left, now);
    }
    if (status == WEIR_OK) *quota = fresh;
    return status;
}

/* The instant that sets a quota's phase, in ms after `start`. */
static int64_t phase_ms(const weir_limiter *quota, int64_t now, int64_t start) {
    int64_t anchor = 0;
    if (weir_limiter_last_refill(quota, now, &anchor) != WEIR_OK &&
        weir_limiter_window_start(quota, now, &anchor) != WEIR_OK &&
        weir_limiter_cooldown_end(quota, &anchor) != WEIR_OK)
        return -1;
    return (anchor - start) / MS;
}

/* Every 20 ms one user, in turn, asks for one unit. */
static void burst(struct account *accounts, int count, int64_t from, int64_t to, int round) {
    int turn = 0;
    for (int64_t now = from; now < to; now += 20 * MS, turn = (turn + 1) % count) {
        struct account *a = &accounts[turn];
        if (weir_limiter_try_consume(&a->quota, now, 1))
            a->served[round]++;
        else
            a->refused[round]++;
    }
}

int main(void) {
    const int64_t start = 5000 * MS; /* any monotonic clock reading */
    struct account accounts[3] = {
        {"ana", "bucket 4, +1/100ms", {0}, {0, 0}, {0, 0}},
        {"ben", "window 4 per 300ms", {0}, {0, 0}, {0, 0}},
        {"cy", "4, then 250ms cooldown", {0}, {0, 0}, {0, 0}},
    };
    if (weir_limiter_bucket(&accounts[0].quota, 4, 1, 100 * MS, start, 4, start) != WEIR_OK ||
        weir_limiter_fixed_window(&accounts[1].quota, 4, 300 * MS, start, 4, start) != WEIR_OK ||
        weir_limiter_cooldown(&accounts[2].quota, 4, 250 * MS, start, 4, start) != WEIR_OK) {
        fprintf(stderr, "could not build the quotas\n");
        return 1;
    }

    const int64_t change = start + 610 * MS, end = start + 1210 * MS;
    burst(accounts, 3, start, change, 0);

    uint64_t before[3];
    int64_t phase_before[3];
    for (int i = 0; i < 3; i++) {
        weir_limiter *q = &accounts[i].quota;
        before[i] = weir_limiter_available(q, change);
        phase_before[i] = phase_ms(q, change, start);
        weir_status status = resize(q, 2 * weir_limiter_capacity(q), change);
        if (status != WEIR_OK) {
            fprintf(stderr, "%s: %s\n", accounts[i].name, weir_status_str(status));
            return 1;
        }
        /* The phase is the same before and after the rebuild. */
        if (phase_ms(q, change, start) != phase_before[i]) return 1;
    }

    burst(accounts, 3, change, end, 1);

    printf("Quotas doubled at t=%" PRId64 " ms by snapshot-and-rebuild (phase kept).\n\n",
           (change - start) / MS);
    printf("%-4s %-23s | %-14s | %-11s | %-14s\n", "user", "plan", "0-610ms ok/no",
           "left @610ms", "610-1210 ok/no");
    for (int i = 0; i < 3; i++) {
        const struct account *a = &accounts[i];
        char first[24], left[48], second[24];
        snprintf(first, sizeof first, "%u/%u", a->served[0], a->refused[0]);
        snprintf(left, sizeof left, "%" PRIu64 "/%" PRIu64, before[i],
                 weir_limiter_capacity(&a->quota) / 2);
        snprintf(second, sizeof second, "%u/%u", a->served[1], a->refused[1]);
        printf("%-4s %-23s | %-14s | %-11s | %s\n", a->name, a->plan, first, left, second);
    }
    printf("\nphase at the change (ms after start): ");
    for (int i = 0; i < 3; i++)
        printf("%s %" PRId64 "%s", accounts[i].name, phase_before[i], i < 2 ? ", " : "\n");
    printf("(bucket: last whole refill; window: start of the current window;\n"
           " cooldown: the gate's deadline, which only matters while nothing is left)\n");
    return 0;
}
