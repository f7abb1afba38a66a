/* weir_breaker through the header: the layouts, the preset, a healthy
 * backend, the protection, constant failure fractions, the 30 s outage and
 * its recovery, determinism, many threads, the settle-once ticket, and bad
 * input (bad policies, each named, NULL, NaN and out-of-range rolls, forged
 * and misaligned tickets, INT64 extremes, time going backwards); Envoy's
 * limits each alone against its formula, and the outage with each. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_breaker_policy) == 72, "weir_breaker_policy size");
_Static_assert(_Alignof(weir_breaker_policy) == 8, "weir_breaker_policy align");
_Static_assert(offsetof(weir_breaker_policy, k) == 0, "weir_breaker_policy.k");
_Static_assert(offsetof(weir_breaker_policy, floor) == 8, "weir_breaker_policy.floor");
_Static_assert(offsetof(weir_breaker_policy, protection) == 16, "weir_breaker_policy.protection");
_Static_assert(offsetof(weir_breaker_policy, probe_ns) == 24, "weir_breaker_policy.probe_ns");
_Static_assert(offsetof(weir_breaker_policy, size) == 32, "weir_breaker_policy.size");
_Static_assert(offsetof(weir_breaker_policy, skip_refusals) == 36, "weir_breaker_policy.skip_refusals");
_Static_assert(offsetof(weir_breaker_policy, window_ns) == 40, "weir_breaker_policy.window_ns");
_Static_assert(offsetof(weir_breaker_policy, max_rejection_probability) == 48,
               "weir_breaker_policy.max_rejection_probability");
_Static_assert(offsetof(weir_breaker_policy, rps_threshold) == 56, "weir_breaker_policy.rps_threshold");
_Static_assert(offsetof(weir_breaker_policy, aggression) == 64, "weir_breaker_policy.aggression");
_Static_assert(sizeof(weir_breaker_ticket) == 16, "weir_breaker_ticket size");
_Static_assert(_Alignof(weir_breaker_ticket) == 8, "weir_breaker_ticket align");
_Static_assert(offsetof(weir_breaker_ticket, serial) == 0, "weir_breaker_ticket.serial");
_Static_assert(offsetof(weir_breaker_ticket, breaker) == 8, "weir_breaker_ticket.breaker");
_Static_assert(offsetof(weir_breaker_ticket, flying) == 12, "weir_breaker_ticket.flying");
_Static_assert(sizeof(weir_breaker_tally) == 32, "weir_breaker_tally size");
_Static_assert(_Alignof(weir_breaker_tally) == 8, "weir_breaker_tally align");
_Static_assert(offsetof(weir_breaker_tally, total) == 0, "weir_breaker_tally.total");
_Static_assert(offsetof(weir_breaker_tally, success) == 8, "weir_breaker_tally.success");
_Static_assert(offsetof(weir_breaker_tally, failure) == 16, "weir_breaker_tally.failure");
_Static_assert(offsetof(weir_breaker_tally, drop) == 24, "weir_breaker_tally.drop");

#define MS INT64_C(1000000)
#define SEC (1000 * MS)

/* splitmix64 with a fixed seed: the same draws every run. */
static uint64_t next(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static double roll(uint64_t *state) { return (double)(next(state) >> 11) / 9007199254740992.0; }

static weir_breaker *preset(int64_t now) {
    weir_breaker *breaker = NULL;
    CHECK_STATUS(weir_breaker_new(NULL, now, &breaker), WEIR_OK);
    CHECK(breaker != NULL);
    return breaker;
}

/* Asks at `now` with the best roll and fails the call: `n` failures, as
 * long as the throttle stays under 0.999999. */
static void fail_calls(weir_breaker *breaker, int64_t now, int n) {
    for (int i = 0; i < n; i++) {
        weir_breaker_ticket ticket;
        CHECK(weir_breaker_allow(breaker, now, 0.999999, &ticket));
        CHECK_STATUS(weir_breaker_fail(breaker, &ticket, now), WEIR_OK);
    }
}

static bool same_tally(const weir_breaker_tally *a, const weir_breaker_tally *b) {
    return a->total == b->total && a->success == b->success && a->failure == b->failure &&
           a->drop == b->drop;
}

/* Offers `rate` calls a second for `seconds`; a call let through fails with
 * probability percent/100. Returns the refusals from `from` on and counts
 * the calls from then in *offered. */
static long drive(int64_t rate, int64_t seconds, unsigned percent, uint64_t seed, int64_t from,
                  long *offered) {
    weir_breaker *breaker = preset(0);
    long refused = 0;
    *offered = 0;
    for (int64_t i = 0; i < rate * seconds; i++) {
        int64_t now = i * (SEC / rate);
        weir_breaker_ticket ticket;
        bool allowed = weir_breaker_allow(breaker, now, roll(&seed), &ticket);
        if (allowed) {
            bool fails = next(&seed) % 100 < percent;
            CHECK_STATUS(fails ? weir_breaker_fail(breaker, &ticket, now)
                               : weir_breaker_pass(breaker, &ticket, now),
                         WEIR_OK);
        }
        if (now >= from) {
            (*offered)++;
            refused += !allowed;
        }
    }
    weir_breaker_free(breaker);
    return refused;
}

enum { OUTAGE_CALLS = 7000 };

/* 10 s healthy, 30 s of total outage, then healthy, at 100 calls/s. Fills
 * `allowed` per call and `ratios` per second. */
static void outage_with(const weir_breaker_policy *policy, uint64_t seed, bool allowed[OUTAGE_CALLS],
                        double ratios[70]) {
    weir_breaker *breaker = NULL;
    CHECK_STATUS(weir_breaker_new(policy, 0, &breaker), WEIR_OK);
    for (int64_t i = 0; i < OUTAGE_CALLS; i++) {
        int64_t now = i * 10 * MS;
        if (i % 100 == 0) ratios[i / 100] = weir_breaker_ratio(breaker, now);
        weir_breaker_ticket ticket;
        allowed[i] = weir_breaker_allow(breaker, now, roll(&seed), &ticket);
        if (allowed[i]) {
            bool down = now >= 10 * SEC && now < 40 * SEC;
            CHECK_STATUS(down ? weir_breaker_fail(breaker, &ticket, now)
                              : weir_breaker_pass(breaker, &ticket, now),
                         WEIR_OK);
        }
    }
    weir_breaker_free(breaker);
}

static void outage(uint64_t seed, bool allowed[OUTAGE_CALLS], double ratios[70]) {
    outage_with(NULL, seed, allowed, ratios);
}

/* The last refused call's index, or -1. */
static int last_refusal(const bool allowed[OUTAGE_CALLS]) {
    int last = -1;
    for (int i = 0; i < OUTAGE_CALLS; i++) {
        if (!allowed[i]) last = i;
    }
    return last;
}

static weir_breaker *made(const weir_breaker_policy *policy) {
    weir_breaker *breaker = NULL;
    CHECK_STATUS(weir_breaker_new(policy, 0, &breaker), WEIR_OK);
    return breaker;
}

static void pass_calls(weir_breaker *breaker, int64_t now, int n) {
    for (int i = 0; i < n; i++) {
        weir_breaker_ticket ticket;
        CHECK(weir_breaker_allow(breaker, now, 0.999999, &ticket));
        CHECK_STATUS(weir_breaker_pass(breaker, &ticket, now), WEIR_OK);
    }
}

static bool near(double a, double b) { return fabs(a - b) < 1e-12; }

/* Envoy's limits, each alone, against its formula worked by hand. */
static void check_limits(void) {
    const weir_breaker_policy classic = weir_breaker_policy_preset();
    weir_breaker_ticket ticket;

    /* The cap: 100 failures give (100 - 5) / 101 = 0.9406 uncapped. */
    weir_breaker_policy sre = classic;
    sre.max_rejection_probability = 0.8;
    weir_breaker *with = made(&sre), *without = made(&classic);
    fail_calls(with, 0, 100);
    fail_calls(without, 0, 100);
    CHECK(weir_breaker_ratio(with, 0) == (double)0.8);
    CHECK(near(weir_breaker_ratio(without, 0), 95.0 / 101.0));
    CHECK(weir_breaker_allow(with, 0, 0.85, &ticket));
    CHECK_STATUS(weir_breaker_fail(with, &ticket, 0), WEIR_OK);
    CHECK(!weir_breaker_allow(without, 0, 0.85, &ticket));
    weir_breaker_free(with);
    weir_breaker_free(without);

    /* The floor: 2 calls/s over 10 s is 20 calls. 19 failures are under
     * it; the 20th reaches it: (20 - 5) / 21. */
    sre = classic;
    sre.rps_threshold = 2.0;
    with = made(&sre);
    fail_calls(with, 0, 19);
    CHECK(weir_breaker_ratio(with, 0) == 0.0);
    CHECK(weir_breaker_allow(with, 0, 0.0, &ticket)); /* the worst roll passes */
    CHECK_STATUS(weir_breaker_fail(with, &ticket, 0), WEIR_OK);
    CHECK(near(weir_breaker_ratio(with, 0), 15.0 / 21.0));
    weir_breaker_free(with);

    /* The aggression: 20 failures and 4 successes give (24 - 5 - 6) / 25 =
     * 0.52; ^ (1 / 2) = 0.7211102550927979, ^ (1 / 0.5) = 0.2704. */
    const double aggressions[] = {1.0, 2.0, 0.5};
    const double expected[] = {0.52, 0.7211102550927979, 0.2704};
    for (int i = 0; i < 3; i++) {
        sre = classic;
        sre.aggression = aggressions[i];
        with = made(&sre);
        fail_calls(with, 0, 20);
        pass_calls(with, 0, 4);
        CHECK(near(weir_breaker_ratio(with, 0), expected[i]));
        weir_breaker_free(with);
    }

    /* Skipping refusals: 10 failures, then 10 refusals. Counted:
     * (20 - 5) / 21; skipped: (10 - 5) / 11 still. The tally shows the
     * refusals either way. */
    sre = classic;
    sre.skip_refusals = 1;
    with = made(&sre);
    without = made(&classic);
    fail_calls(with, 0, 10);
    fail_calls(without, 0, 10);
    for (int i = 0; i < 10; i++) {
        CHECK(!weir_breaker_allow(with, 0, 0.0, &ticket));
        CHECK(!weir_breaker_allow(without, 0, 0.0, &ticket));
    }
    CHECK(near(weir_breaker_ratio(with, 0), 5.0 / 11.0));
    CHECK(near(weir_breaker_ratio(without, 0), 15.0 / 21.0));
    weir_breaker_tally a, b;
    CHECK_STATUS(weir_breaker_read_tally(with, 0, &a), WEIR_OK);
    CHECK_STATUS(weir_breaker_read_tally(without, 0, &b), WEIR_OK);
    CHECK(same_tally(&a, &b) && a.drop == 10 && a.total == 20);
    weir_breaker_free(with);
    weir_breaker_free(without);
}

/* The 30 s outage with each limit (the preset's run is check_outage). */
static void check_outage_limits(void) {
    static bool classic_allowed[OUTAGE_CALLS], allowed[OUTAGE_CALLS];
    double classic_ratios[70], ratios[70];
    outage(2024, classic_allowed, classic_ratios);
    const weir_breaker_policy classic = weir_breaker_policy_preset();

    /* The cap: the ratio stays at 0.8 through the outage's second half,
     * and refusals still stop within 13 s of its end. */
    weir_breaker_policy sre = classic;
    sre.max_rejection_probability = 0.8;
    outage_with(&sre, 2024, allowed, ratios);
    for (int s = 0; s < 70; s++) CHECK(ratios[s] <= (double)0.8);
    for (int s = 25; s < 40; s++) CHECK(ratios[s] == (double)0.8);
    CHECK(last_refusal(allowed) < 5300);

    /* Skipping refusals: it settles near 0.923 (1000 q^2 + q - 6 = 0,
     * p = 1 - q) and recovers sooner than the preset. */
    sre = classic;
    sre.skip_refusals = 1;
    outage_with(&sre, 2024, allowed, ratios);
    for (int s = 30; s < 40; s++) CHECK(fabs(ratios[s] - 0.923) < 0.03);
    CHECK(last_refusal(allowed) < last_refusal(classic_allowed));

    /* A floor under the offered 100 calls/s: the same run, call for call;
     * one over it: nothing refused. */
    sre = classic;
    sre.rps_threshold = 50.0;
    outage_with(&sre, 2024, allowed, ratios);
    CHECK(memcmp(allowed, classic_allowed, sizeof allowed) == 0);
    sre.rps_threshold = 150.0;
    outage_with(&sre, 2024, allowed, ratios);
    CHECK(last_refusal(allowed) == -1);

    /* The aggression: 2 passes a ratio of 0.5 sooner than the preset. */
    sre = classic;
    sre.aggression = 2.0;
    outage_with(&sre, 2024, allowed, ratios);
    int first = 0, classic_first = 0;
    while (ratios[first] <= 0.5) first++;
    while (classic_ratios[classic_first] <= 0.5) classic_first++;
    CHECK(first < classic_first);
}

static void check_outage(void) {
    static bool allowed[OUTAGE_CALLS], again[OUTAGE_CALLS];
    double ratios[70], ratios_again[70];
    outage(2024, allowed, ratios);
    /* Nothing refused before the outage or in its first 2 s. */
    for (int i = 0; i < 1200; i++) CHECK(allowed[i]);
    /* The ratio passes 0.95 within 15 s and stays there to the end. */
    for (int s = 25; s < 40; s++) CHECK(ratios[s] > 0.95);
    /* From 10 s in to the end: a call in every 1.1 s, at most 5 a second. */
    int last = 2000;
    for (int i = 2000; i < 4000; i++) {
        if (!allowed[i]) continue;
        CHECK(i - last <= 110);
        last = i;
        int in_second = 0;
        for (int j = i; j < i + 100 && j < 4000; j++) in_second += allowed[j];
        CHECK(in_second <= 5);
    }
    CHECK(4000 - last <= 110);
    /* Recovery: refusals stop within 13 s, the ratio is 0 within 15 s. */
    for (int i = 5300; i < OUTAGE_CALLS; i++) CHECK(allowed[i]);
    for (int s = 55; s < 70; s++) CHECK(ratios[s] == 0.0);
    /* The same draws give the same decisions. */
    outage(2024, again, ratios_again);
    CHECK(memcmp(allowed, again, sizeof allowed) == 0);
    CHECK(memcmp(ratios, ratios_again, sizeof ratios) == 0);
}

enum { THREADS = 4, ROUNDS = 5000 };

struct worker {
    weir_breaker *breaker;
    uint64_t seed;
    long allowed;
};

static void *hammer(void *arg) {
    struct worker *w = arg;
    for (int64_t i = 0; i < ROUNDS; i++) {
        int64_t now = i * MS; /* each thread's clock: the handle sees it jump back */
        weir_breaker_ticket ticket;
        if (weir_breaker_allow(w->breaker, now, roll(&w->seed), &ticket)) {
            w->allowed++;
            if (next(&w->seed) % 100 < 70) {
                if (weir_breaker_fail(w->breaker, &ticket, now) != WEIR_OK) return (void *)1;
            } else if (weir_breaker_pass(w->breaker, &ticket, now) != WEIR_OK) {
                return (void *)1;
            }
        }
    }
    return NULL;
}

static void check_threads(void) {
    weir_breaker *breaker = preset(0);
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (struct worker){breaker, (uint64_t)t + 1, 0};
        CHECK(pthread_create(&threads[t], NULL, hammer, &workers[t]) == 0);
    }
    long allowed = 0;
    for (int t = 0; t < THREADS; t++) {
        void *result;
        CHECK(pthread_join(threads[t], &result) == 0);
        CHECK(result == NULL);
        allowed += workers[t].allowed;
    }
    weir_breaker_tally tally;
    CHECK_STATUS(weir_breaker_read_tally(breaker, 0, &tally), WEIR_OK);
    CHECK(allowed < THREADS * ROUNDS);
    CHECK(tally.success + tally.failure == allowed);
    CHECK(tally.success + tally.failure + tally.drop == THREADS * ROUNDS);
    CHECK(tally.total == THREADS * ROUNDS);
    weir_breaker_free(breaker);
}

/* A policy with the formula's fields given and Envoy's limits neutral. */
#define SRE(k, floor, protection, probe, size, skip, window) \
    {k, floor, protection, probe, size, skip, window, 1.0, 0.0, 1.0}
/* The preset with Envoy's limits given. */
#define LIMITS(cap, rps, aggression) {1.5, 1.1, 5, SEC, 40, 0, 10 * SEC, cap, rps, aggression}

static void check_policies(void) {
    weir_breaker_policy sre = weir_breaker_policy_preset();
    /* (double) rounds the constant to the field's type: on i386 (x87,
     * FLT_EVAL_METHOD 2) an inexact constant is otherwise compared in long
     * double precision and differs from the stored double. */
    CHECK(sre.k == 1.5 && sre.floor == (double)1.1 && sre.protection == 5.0);
    CHECK(sre.probe_ns == SEC && sre.size == 40 && sre.window_ns == 10 * SEC);
    CHECK(sre.skip_refusals == 0 && sre.max_rejection_probability == 1.0 && sre.rps_threshold == 0.0 &&
          sre.aggression == 1.0);

    weir_breaker *breaker = NULL;
    struct {
        weir_breaker_policy sre;
        weir_status status;
    } bad[] = {
        {SRE(NAN, 1.1, 5, SEC, 40, 0, 10 * SEC), WEIR_ERR_BREAKER_K},
        {SRE(1.0, 1.1, 5, SEC, 40, 0, 10 * SEC), WEIR_ERR_BREAKER_K},
        {SRE(INFINITY, 1.1, 5, SEC, 40, 0, 10 * SEC), WEIR_ERR_BREAKER_K},
        {SRE(1.5, 0.5, 5, SEC, 40, 0, 10 * SEC), WEIR_ERR_BREAKER_FLOOR},
        {SRE(1.5, NAN, 5, SEC, 40, 0, 10 * SEC), WEIR_ERR_BREAKER_FLOOR},
        {SRE(1.5, 1.1, -1, SEC, 40, 0, 10 * SEC), WEIR_ERR_BREAKER_PROTECTION},
        {SRE(1.5, 1.1, NAN, SEC, 40, 0, 10 * SEC), WEIR_ERR_BREAKER_PROTECTION},
        {SRE(1.5, 1.1, 5, 0, 40, 0, 10 * SEC), WEIR_ERR_BREAKER_PROBE},
        {SRE(1.5, 1.1, 5, INT64_MIN, 40, 0, 10 * SEC), WEIR_ERR_BREAKER_PROBE},
        {SRE(1.5, 1.1, 5, SEC, 40, 0, 0), WEIR_ERR_BREAKER_WINDOW},
        {SRE(1.5, 1.1, 5, SEC, 40, 0, INT64_MIN), WEIR_ERR_BREAKER_WINDOW},
        {SRE(1.5, 1.1, 5, SEC, INT32_MAX, 0, 10 * SEC), WEIR_ERR_BREAKER_SIZE},
        {SRE(1.5, 1.1, 5, SEC, 2000000, 0, 10 * SEC), WEIR_ERR_BREAKER_SIZE},
        {SRE(1.5, 1.1, 5, SEC, 1048577, 0, 10 * SEC), WEIR_ERR_BREAKER_SIZE},
        {SRE(1.5, 1.1, 5, SEC, 40, 7, 10 * SEC), WEIR_ERR_BREAKER_REFUSALS},
        {SRE(1.5, 1.1, 5, SEC, 40, -1, 10 * SEC), WEIR_ERR_BREAKER_REFUSALS},
        {SRE(1.5, 1.1, 5, SEC, 40, 2, 10 * SEC), WEIR_ERR_BREAKER_REFUSALS},
        {LIMITS(NAN, 0, 1), WEIR_ERR_BREAKER_CAP},
        {LIMITS(-0.01, 0, 1), WEIR_ERR_BREAKER_CAP},
        {LIMITS(1.01, 0, 1), WEIR_ERR_BREAKER_CAP},
        {LIMITS(INFINITY, 0, 1), WEIR_ERR_BREAKER_CAP},
        {LIMITS(1, -1, 1), WEIR_ERR_BREAKER_RPS},
        {LIMITS(1, NAN, 1), WEIR_ERR_BREAKER_RPS},
        {LIMITS(1, INFINITY, 1), WEIR_ERR_BREAKER_RPS},
        {LIMITS(1, 0, 0), WEIR_ERR_BREAKER_AGGRESSION},
        {LIMITS(1, 0, -1), WEIR_ERR_BREAKER_AGGRESSION},
        {LIMITS(1, 0, NAN), WEIR_ERR_BREAKER_AGGRESSION},
        {LIMITS(1, 0, INFINITY), WEIR_ERR_BREAKER_AGGRESSION},
        /* Several bad: the first in the documented order is named. */
        {{1.5, 1.1, 5, SEC, 40, 9, 0, 2.0, -1, 0}, WEIR_ERR_BREAKER_WINDOW},
        {{1.5, 1.1, 5, SEC, INT32_MAX, 9, 10 * SEC, 1, 0, 0}, WEIR_ERR_BREAKER_AGGRESSION},
        {{1.5, 1.1, 5, SEC, INT32_MAX, 9, 10 * SEC, 1, 0, 1}, WEIR_ERR_BREAKER_SIZE},
        /* A 0.1-style policy (the new fields zero) fails on aggression. */
        {{1.5, 1.1, 5, SEC, 40, 0, 10 * SEC, 0, 0, 0}, WEIR_ERR_BREAKER_AGGRESSION},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(weir_breaker_new(&bad[i].sre, 0, &breaker), bad[i].status);
        CHECK(breaker == NULL); /* not written on failure */
        CHECK(strcmp(weir_status_str(bad[i].status), weir_status_str(-1)) != 0);
    }
    CHECK_STATUS(weir_breaker_new(&sre, 0, NULL), WEIR_ERR_NULL);
    /* Each refusal names its field. */
    struct {
        weir_status status;
        const char *field;
    } named[] = {
        {WEIR_ERR_BREAKER_K, "k"},           {WEIR_ERR_BREAKER_FLOOR, "floor"},
        {WEIR_ERR_BREAKER_PROTECTION, "protection"}, {WEIR_ERR_BREAKER_PROBE, "probe_ns"},
        {WEIR_ERR_BREAKER_SIZE, "size"},     {WEIR_ERR_BREAKER_WINDOW, "window_ns"},
        {WEIR_ERR_BREAKER_CAP, "max_rejection_probability"}, {WEIR_ERR_BREAKER_RPS, "rps_threshold"},
        {WEIR_ERR_BREAKER_AGGRESSION, "aggression"}, {WEIR_ERR_BREAKER_REFUSALS, "skip_refusals"},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        CHECK(strstr(weir_status_str(named[i].status), "sre ") != NULL);
        CHECK(strstr(weir_status_str(named[i].status), named[i].field) != NULL);
    }
    /* The largest size accepted. */
    sre.size = 1048576;
    CHECK_STATUS(weir_breaker_new(&sre, 0, &breaker), WEIR_OK);
    weir_breaker_free(breaker);

    /* A size below one is raised to one: a one-bucket breaker works. */
    sre.size = -4;
    CHECK_STATUS(weir_breaker_new(&sre, 0, &breaker), WEIR_OK);
    fail_calls(breaker, 0, 100);
    CHECK(weir_breaker_ratio(breaker, 0) > 0.9);
    weir_breaker_free(breaker);
}

static void check_tickets(void) {
    weir_breaker *breaker = preset(0), *other = preset(0);
    weir_breaker_tally before, after;
    weir_breaker_ticket ticket, copy, foreign, refused;
    CHECK(weir_breaker_allow(breaker, 0, 0.5, &ticket));
    CHECK(ticket.serial == 1 && ticket.breaker != 0 && ticket.flying == 1);
    copy = ticket;
    CHECK(weir_breaker_allow(other, 0, 0.5, &foreign));
    CHECK(foreign.breaker != ticket.breaker);
    CHECK_STATUS(weir_breaker_pass(breaker, &ticket, 0), WEIR_OK);
    CHECK(ticket.flying == 0);
    CHECK_STATUS(weir_breaker_read_tally(breaker, 0, &before), WEIR_OK);
    CHECK(before.success == 1 && before.total == 1);

    /* A second settle, a copy with nothing in flight, another breaker's
     * ticket, a zeroed one, a scribbled one, a serial never handed out:
     * each refused, and nothing counted. */
    CHECK_STATUS(weir_breaker_pass(breaker, &ticket, 0), WEIR_ERR_SETTLED);
    CHECK_STATUS(weir_breaker_fail(breaker, &ticket, 0), WEIR_ERR_SETTLED);
    CHECK_STATUS(weir_breaker_fail(breaker, &copy, 0), WEIR_ERR_SETTLED);
    CHECK(copy.flying == 1); /* an error writes nothing */
    CHECK_STATUS(weir_breaker_fail(breaker, &foreign, 0), WEIR_ERR_BREAKER_TICKET);
    CHECK(foreign.flying == 1);
    weir_breaker_ticket zeroed = {0, 0, 0};
    CHECK_STATUS(weir_breaker_pass(breaker, &zeroed, 0), WEIR_ERR_BREAKER_TICKET);
    weir_breaker_ticket scribbled = copy;
    scribbled.flying = 2;
    CHECK_STATUS(weir_breaker_pass(breaker, &scribbled, 0), WEIR_ERR_BREAKER_TICKET);
    scribbled = copy;
    scribbled.serial = 1000;
    CHECK_STATUS(weir_breaker_pass(breaker, &scribbled, 0), WEIR_ERR_BREAKER_TICKET);
    scribbled.serial = 0;
    CHECK_STATUS(weir_breaker_pass(breaker, &scribbled, 0), WEIR_ERR_BREAKER_TICKET);
    CHECK_STATUS(weir_breaker_read_tally(breaker, 0, &after), WEIR_OK);
    CHECK(same_tally(&before, &after));
    CHECK(strstr(weir_status_str(WEIR_ERR_BREAKER_TICKET), "ticket") != NULL);

    /* NULL and misaligned tickets: refused, nothing read, written or counted. */
    CHECK(!weir_breaker_allow(breaker, 0, 0.5, NULL));
    CHECK_STATUS(weir_breaker_pass(breaker, NULL, 0), WEIR_ERR_NULL);
    CHECK_STATUS(weir_breaker_fail(breaker, NULL, 0), WEIR_ERR_NULL);
    _Alignas(8) unsigned char bytes[sizeof(weir_breaker_ticket) + 8];
    memset(bytes, 0xa5, sizeof bytes);
    weir_breaker_ticket *odd = (weir_breaker_ticket *)(void *)(bytes + 4);
    CHECK(!weir_breaker_allow(breaker, 0, 0.5, odd));
    CHECK_STATUS(weir_breaker_pass(breaker, odd, 0), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_breaker_fail(breaker, odd, 0), WEIR_ERR_MISALIGNED);
    for (size_t i = 0; i < sizeof bytes; i++) CHECK(bytes[i] == 0xa5);
    CHECK_STATUS(weir_breaker_read_tally(breaker, 0, &after), WEIR_OK);
    CHECK(same_tally(&before, &after));

    /* A refusal's ticket is written as settled. */
    for (int i = 0; i < 100; i++) {
        weir_breaker_ticket t;
        if (weir_breaker_allow(breaker, 0, 0.999999, &t)) {
            CHECK_STATUS(weir_breaker_fail(breaker, &t, 0), WEIR_OK);
        }
    }
    CHECK(!weir_breaker_allow(breaker, 0, 0.0, &refused));
    CHECK(refused.flying == 0 && refused.serial == 0);
    CHECK_STATUS(weir_breaker_pass(breaker, &refused, 0), WEIR_ERR_SETTLED);
    CHECK_STATUS(weir_breaker_pass(other, &foreign, 0), WEIR_OK);
    weir_breaker_free(breaker);
    weir_breaker_free(other);
}

static void check_bad_input(void) {
    /* NULL handles: refusals, statuses, neutral answers. */
    weir_breaker_tally tally;
    weir_breaker_ticket ticket = {0, 0, 0};
    CHECK(!weir_breaker_allow(NULL, 0, 0.5, &ticket));
    CHECK_STATUS(weir_breaker_pass(NULL, &ticket, 0), WEIR_ERR_NULL);
    CHECK_STATUS(weir_breaker_fail(NULL, &ticket, 0), WEIR_ERR_NULL);
    CHECK(weir_breaker_ratio(NULL, 0) == 0.0);
    CHECK_STATUS(weir_breaker_read_tally(NULL, 0, &tally), WEIR_ERR_NULL);
    weir_breaker_free(NULL);

    weir_breaker *breaker = preset(5 * SEC);
    CHECK_STATUS(weir_breaker_read_tally(breaker, 5 * SEC, NULL), WEIR_ERR_NULL);
    fail_calls(breaker, 5 * SEC, 100);
    /* NaN counts as 0 (refused); +inf and 7 are held under 1 (let through). */
    CHECK(!weir_breaker_allow(breaker, 5 * SEC, NAN, &ticket));
    CHECK(!weir_breaker_allow(breaker, 5 * SEC, -INFINITY, &ticket));
    CHECK(weir_breaker_allow(breaker, 5 * SEC, INFINITY, &ticket));
    CHECK(weir_breaker_allow(breaker, 5 * SEC, 7.0, &ticket));
    /* Earlier times count as the latest: nothing ages out, no probe. */
    CHECK(!weir_breaker_allow(breaker, INT64_MIN, 0.0, &ticket));
    CHECK(!weir_breaker_allow(breaker, 0, 0.0, &ticket));
    CHECK_STATUS(weir_breaker_read_tally(breaker, INT64_MIN, &tally), WEIR_OK);
    CHECK(tally.failure == 100 && tally.drop == 4 && tally.total == 104);
    /* INT64_MAX: the window has aged out; everything goes again. A reading
     * there moves nothing: the window at 5 s still reads as it did. */
    CHECK(weir_breaker_ratio(breaker, INT64_MAX) == 0.0);
    CHECK_STATUS(weir_breaker_read_tally(breaker, INT64_MAX, &tally), WEIR_OK);
    CHECK(tally.total == 0);
    CHECK_STATUS(weir_breaker_read_tally(breaker, 5 * SEC, &tally), WEIR_OK);
    CHECK(tally.total == 104);
    CHECK(weir_breaker_allow(breaker, INT64_MAX, 0.0, &ticket));
    CHECK_STATUS(weir_breaker_read_tally(breaker, INT64_MAX, &tally), WEIR_OK);
    CHECK(tally.total == 0);
    CHECK_STATUS(weir_breaker_fail(breaker, &ticket, INT64_MIN), WEIR_OK); /* lands at INT64_MAX */
    CHECK_STATUS(weir_breaker_read_tally(breaker, INT64_MAX, &tally), WEIR_OK);
    CHECK(tally.failure == 1);
    weir_breaker_free(breaker);

    /* A breaker made at INT64_MIN ages across the whole clock. */
    breaker = preset(INT64_MIN);
    CHECK(weir_breaker_allow(breaker, INT64_MIN, 0.0, &ticket));
    CHECK_STATUS(weir_breaker_fail(breaker, &ticket, INT64_MIN), WEIR_OK);
    CHECK(weir_breaker_allow(breaker, INT64_MAX, 0.0, &ticket));
    weir_breaker_free(breaker);
}

int main(void) {
    check_policies();
    check_bad_input();
    check_tickets();

    /* A healthy backend is never refused, at any rate. */
    long offered;
    const int64_t rates[] = {1, 10, 100, 1000, 10000};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        CHECK(drive(rates[i], 30, 0, 7, 0, &offered) == 0);
    }

    /* The protection: five failing calls at once, then one every 2.5 s. */
    weir_breaker *breaker = preset(0);
    weir_breaker_ticket ticket;
    for (int i = 0; i < 5; i++) {
        CHECK(weir_breaker_allow(breaker, 0, 0.0, &ticket));
        CHECK_STATUS(weir_breaker_fail(breaker, &ticket, 0), WEIR_OK);
    }
    for (int64_t now = 10 * SEC + 1; now < 70 * SEC; now += 2500 * MS) {
        CHECK(weir_breaker_allow(breaker, now, 0.0, &ticket));
        CHECK_STATUS(weir_breaker_fail(breaker, &ticket, now), WEIR_OK);
    }
    weir_breaker_free(breaker);

    /* Constant failure fractions at 100 calls/s for 60 s. */
    CHECK(drive(100, 60, 10, 11, 0, &offered) == 0);
    CHECK(drive(100, 60, 20, 12, 0, &offered) == 0);
    long refused = drive(100, 60, 50, 13, 20 * SEC, &offered);
    CHECK(refused > offered * 3 / 4);

    check_outage();
    check_limits();
    check_outage_limits();
    check_threads();
    CHECK_DONE();
}
