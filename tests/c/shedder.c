/* weir_shedder through the header: the layouts, the preset, a CPU spike
 * with nothing queued, a queue on a cool CPU, the limit at 1000 passes/s and
 * 10 ms, the cool-off, fast failures, the start, tickets settling once, and
 * bad input (bad policies, NULL, CPU readings out of range, INT64 extremes,
 * a scribbled ticket), and many threads. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_shedder_policy) == 48, "weir_shedder_policy size");
_Static_assert(_Alignof(weir_shedder_policy) == 8, "weir_shedder_policy align");
_Static_assert(offsetof(weir_shedder_policy, size) == 0, "weir_shedder_policy.size");
_Static_assert(offsetof(weir_shedder_policy, cpu) == 4, "weir_shedder_policy.cpu");
_Static_assert(offsetof(weir_shedder_policy, window_ns) == 8, "weir_shedder_policy.window_ns");
_Static_assert(offsetof(weir_shedder_policy, latency_ns) == 16, "weir_shedder_policy.latency_ns");
_Static_assert(offsetof(weir_shedder_policy, beta) == 24, "weir_shedder_policy.beta");
_Static_assert(offsetof(weir_shedder_policy, cool_ns) == 32, "weir_shedder_policy.cool_ns");
_Static_assert(offsetof(weir_shedder_policy, floor) == 40, "weir_shedder_policy.floor");
_Static_assert(sizeof(weir_shedder_ticket) == 16, "weir_shedder_ticket size");
_Static_assert(_Alignof(weir_shedder_ticket) == 8, "weir_shedder_ticket align");
_Static_assert(offsetof(weir_shedder_ticket, start) == 0, "weir_shedder_ticket.start");
_Static_assert(offsetof(weir_shedder_ticket, flying) == 8, "weir_shedder_ticket.flying");
_Static_assert(offsetof(weir_shedder_ticket, reserved) == 12, "weir_shedder_ticket.reserved");
_Static_assert(sizeof(weir_shedder_stats) == 40, "weir_shedder_stats size");
_Static_assert(_Alignof(weir_shedder_stats) == 8, "weir_shedder_stats align");
_Static_assert(offsetof(weir_shedder_stats, flying) == 0, "stats.flying");
_Static_assert(offsetof(weir_shedder_stats, average) == 8, "stats.average");
_Static_assert(offsetof(weir_shedder_stats, capacity) == 16, "stats.capacity");
_Static_assert(offsetof(weir_shedder_stats, limit) == 24, "stats.limit");
_Static_assert(offsetof(weir_shedder_stats, cpu) == 32, "stats.cpu");
_Static_assert(offsetof(weir_shedder_stats, hot) == 36, "stats.hot");

#define MS INT64_C(1000000)
#define SEC (1000 * MS)
#define LONG (1000 * SEC)

enum { OPEN_MAX = 256 };

/* A server in front of a preset shedder, one millisecond per tick. */
struct server {
    weir_shedder *shedder;
    int64_t now;
    int open;
    int64_t due[OPEN_MAX];
    weir_shedder_ticket tickets[OPEN_MAX];
    long refused;
};

static void start(struct server *s) {
    memset(s, 0, sizeof *s);
    CHECK_STATUS(weir_shedder_new(NULL, 0, &s->shedder), WEIR_OK);
}

static bool offer(struct server *s, int32_t cpu, int64_t latency) {
    CHECK(s->open < OPEN_MAX);
    if (weir_shedder_allow(s->shedder, s->now, cpu, &s->tickets[s->open])) {
        s->due[s->open++] = s->now + latency;
        return true;
    }
    s->refused++;
    return false;
}

/* Settles the open call at `i` with a pass at `at`. */
static void finish(struct server *s, int i, int64_t at) {
    CHECK_STATUS(weir_shedder_pass(s->shedder, &s->tickets[i], at), WEIR_OK);
    s->open--;
    memmove(&s->due[i], &s->due[i + 1], (size_t)(s->open - i) * sizeof s->due[0]);
    memmove(&s->tickets[i], &s->tickets[i + 1], (size_t)(s->open - i) * sizeof s->tickets[0]);
}

static void tick(struct server *s, int arrivals, int32_t cpu, int64_t latency) {
    for (int i = 0; i < s->open;) {
        if (s->due[i] <= s->now) {
            finish(s, i, s->due[i]);
        } else {
            i++;
        }
    }
    for (int i = 0; i < arrivals; i++) offer(s, cpu, latency);
    s->now += MS;
}

static void run(struct server *s, int ms, int arrivals, int32_t cpu, int64_t latency) {
    for (int i = 0; i < ms; i++) tick(s, arrivals, cpu, latency);
}

static weir_shedder_stats stats(struct server *s) {
    weir_shedder_stats out;
    CHECK_STATUS(weir_shedder_read_stats(s->shedder, s->now, &out), WEIR_OK);
    return out;
}

/* 1000 calls/s of 10 ms each on a cool CPU: a capacity of 10 in flight. */
static void trained(struct server *s) {
    start(s);
    run(s, 2000, 1, 500, 10 * MS);
    CHECK(s->refused == 0);
    CHECK(stats(s).capacity == 10.0);
}

/* Holds n more calls in flight on a cool CPU and churns them for 100 ms
 * (the oldest finishes, one starts) until the average has caught up. */
static void fill(struct server *s, int n) {
    run(s, 20, 0, 500, 0);
    for (int i = 0; i < n; i++) CHECK(offer(s, 500, LONG));
    for (int i = 0; i < 100; i++) {
        tick(s, 0, 500, 0);
        finish(s, 0, s->now);
        CHECK(offer(s, 500, LONG));
    }
    weir_shedder_stats now = stats(s);
    CHECK(now.average > 2 * now.capacity);
}

static void finish_all(struct server *s) {
    while (s->open > 0) finish(s, 0, s->now);
    weir_shedder_free(s->shedder);
}

static void check_scenarios(void) {
    static struct server s;

    /* A cool CPU refuses nothing, even ten times over capacity. */
    trained(&s);
    fill(&s, 100);
    weir_shedder_stats now = stats(&s);
    CHECK(now.capacity == 10.0 && now.flying == 100 && now.average > 90.0 && !now.hot);
    CHECK(s.refused == 0);
    CHECK(!offer(&s, 950, 10 * MS)); /* the same queue on a hot CPU is refused */
    finish_all(&s);

    /* A hot CPU with fewer in flight than the limit refuses nothing. */
    trained(&s);
    for (int ms = 0; ms < 3200; ms++) {
        tick(&s, s.now % (10 * MS) < 4 * MS, ms < 200 ? 500 : 950, 10 * MS);
        CHECK(ms < 20 || weir_shedder_flying(s.shedder) <= 4);
    }
    now = stats(&s);
    CHECK(now.hot && now.limit == 5.0 && s.refused == 0);
    finish_all(&s);

    /* The limit at 1000 passes/s and 10 ms: 10 at 900, 5 at 950, 1 at 990. */
    const int32_t cpus[] = {900, 950, 990};
    const double limits[] = {10.0, 5.0, 1.0};
    for (int c = 0; c < 3; c++) {
        trained(&s);
        offer(&s, cpus[c], 10 * MS);
        CHECK(stats(&s).limit == limits[c]);
        run(&s, 200, 1, cpus[c], 10 * MS);
        int64_t most = 0;
        for (int i = 0; i < 2000; i++) {
            tick(&s, 1, cpus[c], 10 * MS);
            int64_t flying = weir_shedder_flying(s.shedder);
            if (flying > most) most = flying;
        }
        CHECK((double)most <= limits[c] + 1.0 && (double)most >= limits[c]);
        CHECK(cpus[c] == 900 || s.refused > 0);
        finish_all(&s);
    }

    /* The cool-off: refusing for 1 s after the CPU falls, after a refusal. */
    trained(&s);
    fill(&s, 30);
    int64_t spike = s.now;
    CHECK(!offer(&s, 950, MS));
    s.now = spike + MS;
    CHECK(!offer(&s, 500, MS));
    s.now = spike + SEC - 1;
    CHECK(!offer(&s, 500, MS));
    CHECK(stats(&s).hot);
    s.now = spike + SEC;
    CHECK(offer(&s, 500, MS));
    CHECK(!stats(&s).hot);
    finish_all(&s);
    /* ... and none after a spike that refused nothing. */
    trained(&s);
    run(&s, 100, 0, 500, 0);
    spike = s.now;
    CHECK(offer(&s, 950, LONG));
    fill(&s, 30);
    CHECK(s.now < spike + SEC);
    CHECK(offer(&s, 500, MS));
    CHECK(!stats(&s).hot && s.refused == 0);
    finish_all(&s);

    /* A fast failure feeds neither passes nor response times. */
    trained(&s);
    for (int i = 0; i < 1000; i++) {
        weir_shedder_ticket ticket;
        CHECK(weir_shedder_allow(s.shedder, s.now, 500, &ticket));
        CHECK_STATUS(weir_shedder_fail(s.shedder, &ticket), WEIR_OK);
    }
    run(&s, 300, 0, 500, 0);
    now = stats(&s);
    CHECK(now.capacity == 10.0 && now.flying == 0);
    finish_all(&s);

    /* Nothing is refused before a call has completed. */
    start(&s);
    for (int i = 0; i < 200; i++) CHECK(offer(&s, 1000, SEC));
    finish(&s, 0, 0);
    CHECK(stats(&s).average > 19.0);
    CHECK(!offer(&s, 1000, SEC));
    finish_all(&s);
}

static void check_policies(void) {
    weir_shedder_policy shed = weir_shedder_policy_preset();
    CHECK(shed.size == 50 && shed.window_ns == 5 * SEC && shed.cpu == 900);
    /* (double) rounds the constant to the field's type: on i386 (x87,
     * FLT_EVAL_METHOD 2) an inexact constant is otherwise compared in long
     * double precision and differs from the stored double. */
    CHECK(shed.latency_ns == SEC && shed.beta == (double)0.9 && shed.cool_ns == SEC &&
          shed.floor == (double)0.1);
    weir_shedder *shedder = NULL;
    struct {
        weir_shedder_policy shed;
        weir_status status;
    } bad[] = {
        {{50, 1000, 5 * SEC, SEC, 0.9, SEC, 0.1}, WEIR_ERR_SHEDDER_CPU},
        {{50, INT32_MAX, 5 * SEC, SEC, 0.9, SEC, 0.1}, WEIR_ERR_SHEDDER_CPU},
        {{50, -1, 5 * SEC, SEC, 0.9, SEC, 0.1}, WEIR_ERR_SHEDDER_CPU},
        {{50, 900, 0, SEC, 0.9, SEC, 0.1}, WEIR_ERR_SHEDDER_WINDOW},
        {{50, 900, -SEC, SEC, 0.9, SEC, 0.1}, WEIR_ERR_SHEDDER_WINDOW},
        {{50, 900, 5 * SEC, 0, 0.9, SEC, 0.1}, WEIR_ERR_SHEDDER_LATENCY},
        {{50, 900, 5 * SEC, INT64_MIN, 0.9, SEC, 0.1}, WEIR_ERR_SHEDDER_LATENCY},
        {{50, 900, 5 * SEC, SEC, 1.0, SEC, 0.1}, WEIR_ERR_SHEDDER_BETA},
        {{50, 900, 5 * SEC, SEC, -0.1, SEC, 0.1}, WEIR_ERR_SHEDDER_BETA},
        {{50, 900, 5 * SEC, SEC, 0.0 / 0.0, SEC, 0.1}, WEIR_ERR_SHEDDER_BETA},
        {{50, 900, 5 * SEC, SEC, 0.9, -1, 0.1}, WEIR_ERR_SHEDDER_COOL},
        {{50, 900, 5 * SEC, SEC, 0.9, SEC, 0.0}, WEIR_ERR_SHEDDER_FLOOR},
        {{50, 900, 5 * SEC, SEC, 0.9, SEC, 1.5}, WEIR_ERR_SHEDDER_FLOOR},
        {{50, 900, 5 * SEC, SEC, 0.9, SEC, 0.0 / 0.0}, WEIR_ERR_SHEDDER_FLOOR},
        {{INT32_MAX, 900, 5 * SEC, SEC, 0.9, SEC, 0.1}, WEIR_ERR_SHEDDER_SIZE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(weir_shedder_new(&bad[i].shed, 0, &shedder), bad[i].status);
        CHECK(shedder == NULL);
        CHECK(strcmp(weir_status_str(bad[i].status), weir_status_str(-1)) != 0);
    }
    CHECK_STATUS(weir_shedder_new(&shed, 0, NULL), WEIR_ERR_NULL);
    /* Edges that are allowed: threshold 0, beta 0, floor 1, no cooling, size 0. */
    weir_shedder_policy edge = {0, 0, 1, 1, 0.0, 0, 1.0};
    CHECK_STATUS(weir_shedder_new(&edge, 0, &shedder), WEIR_OK);
    weir_shedder_ticket ticket;
    CHECK(weir_shedder_allow(shedder, 0, 0, &ticket));
    weir_shedder_free(shedder);
}

static void check_bad_input(void) {
    weir_shedder *shedder = NULL;
    weir_shedder_ticket ticket = {0, 0, 0};
    weir_shedder_stats out;
    /* NULL handles. */
    CHECK(!weir_shedder_allow(NULL, 0, 500, &ticket));
    CHECK_STATUS(weir_shedder_pass(NULL, &ticket, 0), WEIR_ERR_NULL);
    CHECK_STATUS(weir_shedder_fail(NULL, &ticket), WEIR_ERR_NULL);
    CHECK(weir_shedder_flying(NULL) == 0);
    CHECK_STATUS(weir_shedder_read_stats(NULL, 0, &out), WEIR_ERR_NULL);
    weir_shedder_free(NULL);

    CHECK_STATUS(weir_shedder_new(NULL, 0, &shedder), WEIR_OK);
    /* A NULL ticket: refused, nothing changes. */
    CHECK(!weir_shedder_allow(shedder, 0, 500, NULL));
    CHECK(weir_shedder_flying(shedder) == 0);
    CHECK_STATUS(weir_shedder_pass(shedder, NULL, 0), WEIR_ERR_NULL);
    CHECK_STATUS(weir_shedder_fail(shedder, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_shedder_read_stats(shedder, 0, NULL), WEIR_ERR_NULL);

    /* A ticket settles once. */
    CHECK(weir_shedder_allow(shedder, 0, 500, &ticket));
    CHECK(ticket.flying == 1 && ticket.start == 0);
    CHECK(weir_shedder_flying(shedder) == 1);
    CHECK_STATUS(weir_shedder_pass(shedder, &ticket, 10 * MS), WEIR_OK);
    CHECK(ticket.flying == 0);
    CHECK_STATUS(weir_shedder_read_stats(shedder, 10 * MS, &out), WEIR_OK);
    CHECK_STATUS(weir_shedder_pass(shedder, &ticket, 20 * MS), WEIR_ERR_SETTLED);
    CHECK_STATUS(weir_shedder_fail(shedder, &ticket), WEIR_ERR_SETTLED);
    weir_shedder_stats again;
    CHECK_STATUS(weir_shedder_read_stats(shedder, 10 * MS, &again), WEIR_OK);
    CHECK(memcmp(&out, &again, sizeof out) == 0);
    CHECK(weir_shedder_flying(shedder) == 0);
    /* A zeroed ticket was never issued; a scribbled one is refused. */
    weir_shedder_ticket zero = {0, 0, 0}, scribbled = {0, 7, 0};
    CHECK_STATUS(weir_shedder_fail(shedder, &zero), WEIR_ERR_SETTLED);
    CHECK_STATUS(weir_shedder_fail(shedder, &scribbled), WEIR_ERR_INVALID_ARGUMENT);
    CHECK(scribbled.flying == 7);

    /* CPU readings outside [0, 1000] are clamped. */
    CHECK(weir_shedder_allow(shedder, 20 * MS, -5, &ticket));
    CHECK_STATUS(weir_shedder_read_stats(shedder, 20 * MS, &out), WEIR_OK);
    CHECK(out.cpu == 0 && !out.hot);
    CHECK_STATUS(weir_shedder_fail(shedder, &ticket), WEIR_OK);
    CHECK(weir_shedder_allow(shedder, 20 * MS, INT32_MAX, &ticket));
    CHECK_STATUS(weir_shedder_read_stats(shedder, 20 * MS, &out), WEIR_OK);
    CHECK(out.cpu == 1000 && out.hot);
    CHECK(out.limit == 1.0);
    CHECK_STATUS(weir_shedder_fail(shedder, &ticket), WEIR_OK);
    CHECK(weir_shedder_allow(shedder, 20 * MS, INT32_MIN, &ticket));
    CHECK_STATUS(weir_shedder_fail(shedder, &ticket), WEIR_OK);

    /* INT64 extremes: a refused call writes a settled ticket. */
    CHECK(weir_shedder_allow(shedder, INT64_MAX, 500, &ticket));
    CHECK_STATUS(weir_shedder_pass(shedder, &ticket, INT64_MIN), WEIR_OK); /* counts as INT64_MAX */
    weir_shedder_ticket held[12];
    for (int i = 0; i < 12; i++) CHECK(weir_shedder_allow(shedder, INT64_MIN, 500, &held[i]));
    for (int i = 0; i < 10; i++) CHECK_STATUS(weir_shedder_pass(shedder, &held[i], INT64_MAX), WEIR_OK);
    /* Two in flight, the average above one: at full CPU the limit is 1. */
    CHECK_STATUS(weir_shedder_read_stats(shedder, INT64_MAX, &out), WEIR_OK);
    CHECK(out.flying == 2 && out.average > 1.0);
    CHECK(!weir_shedder_allow(shedder, INT64_MAX, 1000, &ticket));
    CHECK(ticket.flying == 0);
    CHECK_STATUS(weir_shedder_pass(shedder, &ticket, INT64_MAX), WEIR_ERR_SETTLED);
    CHECK(weir_shedder_flying(shedder) == 2);
    CHECK_STATUS(weir_shedder_fail(shedder, &held[10]), WEIR_OK);
    CHECK_STATUS(weir_shedder_fail(shedder, &held[11]), WEIR_OK);
    CHECK(weir_shedder_flying(shedder) == 0);
    weir_shedder_free(shedder);
}

enum { THREADS = 4, ROUNDS = 5000 };

static void *hammer(void *arg) {
    weir_shedder *shedder = arg;
    for (int64_t i = 0; i < ROUNDS; i++) {
        weir_shedder_ticket ticket;
        int64_t now = i * 100000;
        if (weir_shedder_allow(shedder, now, 950, &ticket)) {
            weir_status status = i % 3 == 0 ? weir_shedder_fail(shedder, &ticket)
                                            : weir_shedder_pass(shedder, &ticket, now + MS);
            if (status != WEIR_OK) return (void *)1;
        }
        if (weir_shedder_fail(shedder, &ticket) != WEIR_ERR_SETTLED) return (void *)1;
    }
    return NULL;
}

static void check_threads(void) {
    weir_shedder *shedder = NULL;
    CHECK_STATUS(weir_shedder_new(NULL, 0, &shedder), WEIR_OK);
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) CHECK(pthread_create(&threads[t], NULL, hammer, shedder) == 0);
    for (int t = 0; t < THREADS; t++) {
        void *result;
        CHECK(pthread_join(threads[t], &result) == 0);
        CHECK(result == NULL);
    }
    CHECK(weir_shedder_flying(shedder) == 0);
    weir_shedder_free(shedder);
}

/* Three calls in flight and an average of three against a limit of 4 (the
 * assumed 20 ms over 5 ms buckets): over half the limit, not over three
 * quarters of it. At half the CPU threshold only SHEDDABLE is refused;
 * CRITICAL decides as weir_shedder_allow does; a bad class changes nothing. */
static void check_classes(void) {
    weir_shedder_policy p = weir_shedder_policy_preset();
    p.size = 4;
    p.window_ns = 20 * MS;
    p.cpu = 800;
    p.latency_ns = 20 * MS;
    p.beta = 0.0;
    p.cool_ns = 0;
    p.floor = 1.0;
    weir_shedder *s = NULL;
    CHECK(weir_shedder_new(&p, 0, &s) == WEIR_OK);
    weir_shedder_ticket open[4];
    for (int i = 0; i < 4; i++) CHECK(weir_shedder_allow(s, 0, 0, &open[i]));
    CHECK(weir_shedder_fail(s, &open[0]) == WEIR_OK);
    weir_shedder_ticket t = {7, 7, 7};
    CHECK(weir_shedder_allow_class(s, 0, 400, WEIR_SHEDDER_SHEDDABLE, &t) == WEIR_OK);
    CHECK(t.flying == 0);
    CHECK(weir_shedder_allow_class(s, 0, 399, WEIR_SHEDDER_SHEDDABLE, &t) == WEIR_OK);
    CHECK(t.flying == 1);
    CHECK(weir_shedder_fail(s, &t) == WEIR_OK);
    const int32_t higher[] = {WEIR_SHEDDER_SHEDDABLE_PLUS, WEIR_SHEDDER_CRITICAL, WEIR_SHEDDER_CRITICAL_PLUS};
    for (int i = 0; i < 3; i++) {
        CHECK(weir_shedder_allow_class(s, 0, 999, higher[i], &t) == WEIR_OK);
        CHECK(t.flying == 1);
        CHECK(weir_shedder_fail(s, &t) == WEIR_OK);
    }
    weir_shedder_ticket kept = {7, 7, 7};
    CHECK(weir_shedder_allow_class(s, 0, 0, 4, &kept) == WEIR_ERR_SHEDDER_CLASS);
    CHECK(weir_shedder_allow_class(s, 0, 0, -1, &kept) == WEIR_ERR_SHEDDER_CLASS);
    CHECK(kept.start == 7 && kept.flying == 7 && kept.reserved == 7);
    CHECK(weir_shedder_allow_class(NULL, 0, 0, WEIR_SHEDDER_CRITICAL, &kept) == WEIR_ERR_NULL);
    CHECK(weir_shedder_allow_class(s, 0, 0, WEIR_SHEDDER_CRITICAL, NULL) == WEIR_ERR_NULL);
    CHECK(weir_shedder_flying(s) == 3);
    for (int i = 1; i < 4; i++) CHECK(weir_shedder_fail(s, &open[i]) == WEIR_OK);
    weir_shedder_free(s);
}

int main(void) {
    check_classes();
    check_policies();
    check_bad_input();
    check_scenarios();
    check_threads();
    CHECK_DONE();
}
