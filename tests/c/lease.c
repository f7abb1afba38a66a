/* weir_lease through the header: the layout, the preset, a grant spent to
 * the unit, expiry, asks ahead, a store that says it is empty, bad input
 * (bad policies, NULL, costs and grants out of range, time going
 * backwards) and many threads spending one lease. */
#include <pthread.h>
#include <stddef.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_lease_policy) == 32, "weir_lease_policy size");
_Static_assert(_Alignof(weir_lease_policy) == 8, "weir_lease_policy align");
_Static_assert(offsetof(weir_lease_policy, interval_ns) == 0, "interval_ns");
_Static_assert(offsetof(weir_lease_policy, ttl_ns) == 8, "ttl_ns");
_Static_assert(offsetof(weir_lease_policy, burst) == 16, "burst");
_Static_assert(offsetof(weir_lease_policy, share) == 24, "share");
_Static_assert(sizeof(weir_lease_answer) == 24, "weir_lease_answer size");
_Static_assert(_Alignof(weir_lease_answer) == 8, "weir_lease_answer align");
_Static_assert(offsetof(weir_lease_answer, verdict) == 0, "verdict");
_Static_assert(offsetof(weir_lease_answer, reserved) == 4, "reserved");
_Static_assert(offsetof(weir_lease_answer, ask) == 8, "ask");
_Static_assert(offsetof(weir_lease_answer, retry_after_ns) == 16, "retry_after_ns");
_Static_assert(sizeof(weir_lease_stats) == 64, "weir_lease_stats size");
_Static_assert(_Alignof(weir_lease_stats) == 8, "weir_lease_stats align");
_Static_assert(offsetof(weir_lease_stats, asks) == 0, "asks");
_Static_assert(offsetof(weir_lease_stats, rtt_ns) == 56, "rtt_ns");

#define SEC 1000000000LL
#define MS 1000000LL

enum { THREADS = 4, ROUNDS = 1000 };

static void *spend(void *arg) {
    weir_lease *lease = arg;
    long spent = 0;
    for (int i = 0; i < ROUNDS; i++) {
        weir_lease_answer a;
        CHECK_STATUS(weir_lease_take(lease, 10 * MS, 1, &a), WEIR_OK);
        if (a.verdict == WEIR_LEASE_GO) spent++;
    }
    return (void *)spent;
}

int main(void) {
    weir_lease_policy preset = weir_lease_policy_preset();
    CHECK(preset.interval_ns == 100 * MS);
    CHECK(preset.ttl_ns == SEC);
    CHECK(preset.burst == 100);
    CHECK(preset.share == 0.25);

    weir_lease_policy p = preset;
    p.burst = 1000;
    p.share = 0.5;
    weir_lease *lease = NULL;
    CHECK_STATUS(weir_lease_new(&p, 0, &lease), WEIR_OK);
    CHECK(weir_lease_cap(lease) == 500);

    /* Nothing held: ask for at least the cost. */
    weir_lease_answer a;
    CHECK_STATUS(weir_lease_take(lease, 0, 2, &a), WEIR_OK);
    CHECK(a.verdict == WEIR_LEASE_ASK && a.ask == 2 && a.retry_after_ns == 0);
    /* While the ask travels: refused. */
    CHECK_STATUS(weir_lease_take(lease, MS / 2, 1, &a), WEIR_OK);
    CHECK(a.verdict == WEIR_LEASE_REFUSE && a.retry_after_ns >= 1);
    /* 10 units until 1 s, answered after 1 ms. */
    CHECK_STATUS(weir_lease_grant(lease, MS, 10, SEC, MS), WEIR_OK);
    CHECK(weir_lease_unspent(lease, MS) == 10);
    CHECK(weir_lease_expires(lease, MS) == SEC);
    weir_lease_stats s;
    CHECK_STATUS(weir_lease_read_stats(lease, MS, &s), WEIR_OK);
    CHECK(s.rtt_ns == MS && s.granted == 10 && s.held == 10 && s.asks == 1);
    /* Spent to the unit: 5 takes of 2. */
    int went = 0;
    for (int i = 0; i < 6; i++) {
        CHECK_STATUS(weir_lease_take(lease, 2 * MS, 2, &a), WEIR_OK);
        if (a.verdict == WEIR_LEASE_GO) went++;
        if (a.ask > 0) CHECK_STATUS(weir_lease_grant(lease, 3 * MS, 0, SEC, 3 * MS), WEIR_OK);
    }
    CHECK(went == 5);
    CHECK(weir_lease_unspent(lease, 2 * MS) == 0);

    /* The store says it is empty until 40 ms: refused until then. */
    CHECK_STATUS(weir_lease_take(lease, 5 * MS, 1, &a), WEIR_OK);
    if (a.verdict == WEIR_LEASE_ASK) {
        CHECK_STATUS(weir_lease_grant(lease, 6 * MS, 0, SEC, 40 * MS), WEIR_OK);
        CHECK_STATUS(weir_lease_take(lease, 10 * MS, 1, &a), WEIR_OK);
    }
    CHECK(a.verdict == WEIR_LEASE_REFUSE);

    /* Expiry drops units; release hands back the live ones. */
    CHECK_STATUS(weir_lease_grant(lease, 50 * MS, 7, 100 * MS, 50 * MS), WEIR_OK);
    CHECK(weir_lease_unspent(lease, 99 * MS) == 7);
    CHECK(weir_lease_unspent(lease, 100 * MS) == 0);
    CHECK_STATUS(weir_lease_grant(lease, 100 * MS, 9, SEC, 100 * MS), WEIR_OK);
    /* Time going backwards is no time passing. */
    CHECK(weir_lease_unspent(lease, 0) == 9);
    CHECK(weir_lease_release(lease, 100 * MS) == 9);
    CHECK(weir_lease_unspent(lease, 100 * MS) == 0);
    CHECK_STATUS(weir_lease_read_stats(lease, 100 * MS, &s), WEIR_OK);
    CHECK(s.released == 9 && s.expired == 7 && s.spent == 10);

    /* Bad input: nothing changes. */
    CHECK_STATUS(weir_lease_take(lease, 0, 0, &a), WEIR_ERR_LEASE_COST);
    CHECK_STATUS(weir_lease_take(lease, 0, 501, &a), WEIR_ERR_LEASE_COST);
    CHECK_STATUS(weir_lease_take(lease, 0, 1, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_lease_grant(lease, 0, -1, SEC, 0), WEIR_ERR_LEASE_GRANT);
    CHECK_STATUS(weir_lease_grant(lease, 0, 501, SEC, 0), WEIR_ERR_LEASE_GRANT);
    weir_lease_stats again;
    CHECK_STATUS(weir_lease_read_stats(lease, 100 * MS, &again), WEIR_OK);
    CHECK(again.asks == s.asks && again.granted == s.granted);
    CHECK_STATUS(weir_lease_take(NULL, 0, 1, &a), WEIR_ERR_NULL);
    CHECK_STATUS(weir_lease_grant(NULL, 0, 1, SEC, 0), WEIR_ERR_NULL);
    CHECK_STATUS(weir_lease_read_stats(lease, 0, NULL), WEIR_ERR_NULL);
    CHECK(weir_lease_unspent(NULL, 0) == 0);
    CHECK(weir_lease_release(NULL, 0) == 0);
    CHECK(weir_lease_expires(NULL, 0) == INT64_MAX);
    CHECK(weir_lease_cap(NULL) == 0);
    weir_lease_free(lease);
    weir_lease_free(NULL);

    weir_lease *none = NULL;
    weir_lease_policy bad = preset;
    bad.ttl_ns = MS - 1;
    CHECK_STATUS(weir_lease_new(&bad, 0, &none), WEIR_ERR_LEASE_TTL);
    bad = preset;
    bad.interval_ns = bad.ttl_ns;
    CHECK_STATUS(weir_lease_new(&bad, 0, &none), WEIR_ERR_LEASE_INTERVAL);
    bad = preset;
    bad.burst = 0;
    CHECK_STATUS(weir_lease_new(&bad, 0, &none), WEIR_ERR_LEASE_BURST);
    bad = preset;
    bad.share = 0.0 / 0.0;
    CHECK_STATUS(weir_lease_new(&bad, 0, &none), WEIR_ERR_LEASE_SHARE);
    bad.share = 1.5;
    CHECK_STATUS(weir_lease_new(&bad, 0, &none), WEIR_ERR_LEASE_SHARE);
    CHECK(none == NULL);
    CHECK_STATUS(weir_lease_new(NULL, 0, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_lease_new((const weir_lease_policy *)((char *)&p + 1), 0, &none),
                 WEIR_ERR_MISALIGNED);

    /* Many threads spend one grant: exactly the units granted go. */
    CHECK_STATUS(weir_lease_new(&p, 0, &lease), WEIR_OK);
    CHECK_STATUS(weir_lease_grant(lease, 0, 500, SEC, 0), WEIR_OK);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, spend, lease) == 0);
    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        void *spent;
        CHECK(pthread_join(threads[i], &spent) == 0);
        total += (long)spent;
    }
    CHECK(total == 500);
    weir_lease_free(lease);
    CHECK_DONE();
}
