/* Reconfiguring a handle while other threads decide on it: the sliding
 * window, period counter, gate, window, breaker, retry budget, shedder,
 * adaptive limit, lease and pool take their new policy
 * under their own lock (the gate in an atomic word, the bloom array and the
 * keyed table in one publication of their limit), so each decision
 * racing a change is judged by the old policy or the new one, wholly. Here
 * several threads decide in a loop while one more changes the policy in a
 * loop, and the answers must stay within the looser of the policies' bounds
 * (all at one instant, so every bound is a count), every call must answer
 * a status it documents, and under ASan and UBSan (the cmake-sanitize
 * stage) nothing may read freed or torn memory, as a ring replaced under a
 * decision would. */
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "weir.h"

#define SEC INT64_C(1000000000)
enum { DECIDERS = 3, ROUNDS = 20, TAKES = 300 };

/* The handle under test and the tallies the threads keep (no CHECK inside a
 * thread: its count is not atomic). */
struct shared {
    void *handle;
    atomic_long admitted;
    atomic_long inside;
    atomic_long most_inside;
    atomic_long bad;
    atomic_int done;
};

static void reset(struct shared *s, void *handle) {
    s->handle = handle;
    atomic_store(&s->admitted, 0);
    atomic_store(&s->inside, 0);
    atomic_store(&s->most_inside, 0);
    atomic_store(&s->bad, 0);
    atomic_store(&s->done, 0);
}

/* Runs `decide` on DECIDERS threads and `change` on one more, which loops
 * until the deciders are done (and at least `changes` times). */
static void race(struct shared *s, void *(*decide)(void *), void *(*change)(void *)) {
    pthread_t deciders[DECIDERS], changer;
    CHECK(pthread_create(&changer, NULL, change, s) == 0);
    for (int i = 0; i < DECIDERS; i++) CHECK(pthread_create(&deciders[i], NULL, decide, s) == 0);
    for (int i = 0; i < DECIDERS; i++) CHECK(pthread_join(deciders[i], NULL) == 0);
    atomic_store(&s->done, 1);
    CHECK(pthread_join(changer, NULL) == 0);
    CHECK(atomic_load(&s->bad) == 0);
}

/* --- the sliding window: quota 4 grown to 8, 16, 32, 64 (a new ring each
 * time, moved into under the lock), then its window changed back and forth;
 * every take at one instant, so at most 64 pass in all, and since the stamps
 * are all at that instant none is dropped: exactly 64 pass. */
static void *sliding_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        if (weir_sliding_take(s->handle, 0)) atomic_fetch_add(&s->admitted, 1);
        int64_t left = weir_sliding_left(s->handle, 0);
        if (left < 0 || left > 64) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void *sliding_change(void *arg) {
    struct shared *s = arg;
    for (int64_t quota = 8; quota <= 64; quota *= 2) {
        if (weir_sliding_reconfigure(s->handle, quota, SEC) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        if (weir_sliding_reconfigure(s->handle, 64, (1 + i % 2) * SEC) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void sliding_threads(void) {
    struct shared s;
    for (int round = 0; round < ROUNDS; round++) {
        weir_sliding *sliding = NULL;
        CHECK_STATUS(weir_sliding_new(4, SEC, &sliding), WEIR_OK);
        reset(&s, sliding);
        race(&s, sliding_decide, sliding_change);
        long admitted = atomic_load(&s.admitted);
        CHECK(admitted <= 64);
        while (weir_sliding_take(sliding, 0)) admitted++;
        CHECK(admitted == 64);
        weir_sliding_free(sliding);
    }
}

/* --- the period counter: quota 10 and 20 in turn, one period open the
 * whole time (every take at one instant): at most 20 pass. */
static void *period_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        weir_period_quota q = weir_period_take(s->handle, 0);
        if (q == WEIR_PERIOD_QUOTA_UNDER || q == WEIR_PERIOD_QUOTA_HIT) {
            atomic_fetch_add(&s->admitted, 1);
        } else if (q != WEIR_PERIOD_QUOTA_OVER) {
            atomic_fetch_add(&s->bad, 1);
        }
    }
    return NULL;
}

static void *period_change(void *arg) {
    struct shared *s = arg;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        if (weir_period_reconfigure(s->handle, i % 2 ? 20 : 10, SEC, i % 3 == 0) != WEIR_OK) {
            atomic_fetch_add(&s->bad, 1);
        }
    }
    return NULL;
}

static void period_threads(void) {
    struct shared s;
    for (int round = 0; round < ROUNDS; round++) {
        weir_period *period = NULL;
        CHECK_STATUS(weir_period_new(10, SEC, false, &period), WEIR_OK);
        reset(&s, period);
        race(&s, period_decide, period_change);
        CHECK(atomic_load(&s.admitted) <= 20);
        weir_period_free(period);
    }
}

/* --- the gate: limit 2 and 5 in turn; the calls the deciders count inside
 * (counted in after entering, out before leaving) never pass 5. */
static void *gate_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        if (!weir_gate_enter(s->handle)) continue;
        long now_inside = atomic_fetch_add(&s->inside, 1) + 1;
        long most = atomic_load(&s->most_inside);
        while (now_inside > most && !atomic_compare_exchange_weak(&s->most_inside, &most, now_inside)) {
        }
        atomic_fetch_add(&s->admitted, 1);
        atomic_fetch_sub(&s->inside, 1);
        weir_gate_leave(s->handle);
    }
    return NULL;
}

static void *gate_change(void *arg) {
    struct shared *s = arg;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        if (weir_gate_reconfigure(s->handle, i % 2 ? 5 : 2) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void gate_threads(void) {
    struct shared s;
    for (int round = 0; round < ROUNDS; round++) {
        weir_gate *gate = NULL;
        CHECK_STATUS(weir_gate_new(2, &gate), WEIR_OK);
        reset(&s, gate);
        race(&s, gate_decide, gate_change);
        CHECK(atomic_load(&s.most_inside) <= 5);
        CHECK(atomic_load(&s.admitted) > 0);
        CHECK(weir_gate_held(gate) == 0);
        weir_gate_free(gate);
    }
}

/* --- the window: 4 and 8 buckets in turn (a new ring each time, moved into
 * under the lock), over 4 µs and 8 µs; every value added at one instant, so
 * each change keeps the whole total: at the end it holds every add, once. */
static void *window_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        if (weir_window_add(s->handle, 0, 1) == WEIR_OK) {
            atomic_fetch_add(&s->admitted, 1);
        } else {
            atomic_fetch_add(&s->bad, 1);
        }
        weir_window_total total;
        if (weir_window_read_total(s->handle, 0, true, &total) != WEIR_OK || total.sum != total.count ||
            total.count > DECIDERS * TAKES) {
            atomic_fetch_add(&s->bad, 1);
        }
    }
    return NULL;
}

static void *window_change(void *arg) {
    struct shared *s = arg;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        int32_t size = i % 2 ? 8 : 4;
        if (weir_window_reconfigure(s->handle, size, size * INT64_C(1000), 0) != WEIR_OK) {
            atomic_fetch_add(&s->bad, 1);
        }
    }
    return NULL;
}

static void window_threads(void) {
    struct shared s;
    for (int round = 0; round < ROUNDS; round++) {
        weir_window *window = NULL;
        CHECK_STATUS(weir_window_new(4, 4000, 0, &window), WEIR_OK);
        reset(&s, window);
        race(&s, window_decide, window_change);
        weir_window_total total;
        CHECK_STATUS(weir_window_read_total(window, 0, true, &total), WEIR_OK);
        CHECK(total.count == atomic_load(&s.admitted) && total.sum == total.count);
        CHECK(total.count == DECIDERS * TAKES);
        weir_window_free(window);
    }
}

/* --- the breaker: the preset and a stricter policy of twice its buckets in
 * turn (a new ring each time); every call succeeds, so neither policy
 * refuses one, and every ticket settles whatever changed since it was
 * handed out. */
static void *breaker_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        weir_breaker_ticket ticket;
        if (!weir_breaker_allow(s->handle, 0, 0.5, &ticket)) {
            atomic_fetch_add(&s->bad, 1);
            continue;
        }
        atomic_fetch_add(&s->admitted, 1);
        if (weir_breaker_pass(s->handle, &ticket, 0) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void *breaker_change(void *arg) {
    struct shared *s = arg;
    weir_breaker_policy preset = weir_breaker_policy_preset();
    weir_breaker_policy strict = preset;
    strict.k = 1.1;
    strict.size = preset.size * 2;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        if (weir_breaker_reconfigure(s->handle, i % 2 ? &strict : &preset) != WEIR_OK) {
            atomic_fetch_add(&s->bad, 1);
        }
    }
    return NULL;
}

static void breaker_threads(void) {
    struct shared s;
    for (int round = 0; round < ROUNDS; round++) {
        weir_breaker *breaker = NULL;
        CHECK_STATUS(weir_breaker_new(NULL, 0, &breaker), WEIR_OK);
        reset(&s, breaker);
        race(&s, breaker_decide, breaker_change);
        CHECK(atomic_load(&s.admitted) == DECIDERS * TAKES);
        weir_breaker_free(breaker);
    }
}

/* --- the retry budget: tokens form, 10 and 20 tokens in turn, full at
 * 10; every failure at one instant and no success, so the count only falls
 * and is never raised by a change: at most 4 retries pass (10 tokens: the
 * count above 5 after 9, 8, 7 and 6), what 10 allows, 20 fewer. */
static void *budget_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        if (weir_budget_withdraw(s->handle, 0)) atomic_fetch_add(&s->admitted, 1);
        int64_t tokens = weir_budget_tokens(s->handle, 0);
        if (tokens < 0 || tokens > 10000) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void *budget_change(void *arg) {
    struct shared *s = arg;
    weir_budget_policy p = weir_budget_policy_preset();
    p.form = WEIR_BUDGET_TOKENS;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        p.max_tokens = i % 2 ? 20 : 10;
        if (weir_budget_reconfigure(s->handle, &p, 0) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void budget_threads(void) {
    struct shared s;
    weir_budget_policy p = weir_budget_policy_preset();
    p.form = WEIR_BUDGET_TOKENS;
    p.max_tokens = 10;
    for (int round = 0; round < ROUNDS; round++) {
        weir_budget *budget = NULL;
        CHECK_STATUS(weir_budget_new(&p, 0, &budget), WEIR_OK);
        reset(&s, budget);
        race(&s, budget_decide, budget_change);
        CHECK(atomic_load(&s.admitted) <= 4);
        weir_budget_free(budget);
    }
}

/* --- the shedder: 4 and 8 buckets in turn (new buckets and queues each
 * time, moved into under the lock); the CPU reads 0, so neither policy is
 * ever hot and every call passes, and every ticket settles whatever
 * changed since it was handed out. */
static void *shedder_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        weir_shedder_ticket ticket;
        if (!weir_shedder_allow(s->handle, i, 0, &ticket)) {
            atomic_fetch_add(&s->bad, 1);
            continue;
        }
        atomic_fetch_add(&s->admitted, 1);
        if (weir_shedder_pass(s->handle, &ticket, i + 1) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void *shedder_change(void *arg) {
    struct shared *s = arg;
    weir_shedder_policy p = weir_shedder_policy_preset();
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        p.size = i % 2 ? 8 : 4;
        if (weir_shedder_reconfigure(s->handle, &p) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void shedder_threads(void) {
    struct shared s;
    for (int round = 0; round < ROUNDS; round++) {
        weir_shedder *shedder = NULL;
        CHECK_STATUS(weir_shedder_new(NULL, 0, &shedder), WEIR_OK);
        reset(&s, shedder);
        race(&s, shedder_decide, shedder_change);
        CHECK(atomic_load(&s.admitted) == DECIDERS * TAKES);
        CHECK(weir_shedder_flying(shedder) == 0);
        weir_shedder_free(shedder);
    }
}

/* --- the adaptive limit: held at 2 and at 5 in turn (min_limit =
 * max_limit); the calls the deciders count inside never pass 5. */
static void *concurrency_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        weir_concurrency_ticket ticket;
        if (!weir_concurrency_enter(s->handle, i, &ticket)) continue;
        long now_inside = atomic_fetch_add(&s->inside, 1) + 1;
        long most = atomic_load(&s->most_inside);
        while (now_inside > most && !atomic_compare_exchange_weak(&s->most_inside, &most, now_inside)) {
        }
        atomic_fetch_add(&s->admitted, 1);
        atomic_fetch_sub(&s->inside, 1);
        if (weir_concurrency_leave(s->handle, &ticket, i + 1, false) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void *concurrency_change(void *arg) {
    struct shared *s = arg;
    weir_concurrency_policy p = weir_concurrency_policy_preset();
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        int32_t limit = i % 2 ? 5 : 2;
        p.initial_limit = p.min_limit = p.max_limit = limit;
        p.queue_size = 0;
        if (weir_concurrency_reconfigure(s->handle, &p) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void concurrency_threads(void) {
    struct shared s;
    weir_concurrency_policy p = weir_concurrency_policy_preset();
    p.initial_limit = p.min_limit = p.max_limit = 2;
    p.queue_size = 0;
    for (int round = 0; round < ROUNDS; round++) {
        weir_concurrency *limit = NULL;
        CHECK_STATUS(weir_concurrency_new(&p, &limit), WEIR_OK);
        reset(&s, limit);
        race(&s, concurrency_decide, concurrency_change);
        CHECK(atomic_load(&s.most_inside) <= 5);
        CHECK(atomic_load(&s.admitted) > 0);
        CHECK(weir_concurrency_flying(limit) == 0);
        weir_concurrency_free(limit);
    }
}

/* --- the lease: 20 units granted at 0, then its share changed between a
 * cap of 25 and a cap of 5 while the deciders spend one unit at a time at
 * that instant: the units held are kept whatever the cap, so exactly the
 * 20 granted go, each once, and every take answers WEIR_OK. */
static void *lease_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        weir_lease_answer answer;
        if (weir_lease_take(s->handle, 0, 1, &answer) != WEIR_OK) {
            atomic_fetch_add(&s->bad, 1);
        } else if (answer.verdict == WEIR_LEASE_GO) {
            atomic_fetch_add(&s->admitted, 1);
        }
        if (weir_lease_unspent(s->handle, 0) > 20) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void *lease_change(void *arg) {
    struct shared *s = arg;
    weir_lease_policy wide = weir_lease_policy_preset();
    weir_lease_policy narrow = wide;
    narrow.share = 0.05;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        if (weir_lease_reconfigure(s->handle, i % 2 ? &wide : &narrow) != WEIR_OK) {
            atomic_fetch_add(&s->bad, 1);
        }
    }
    return NULL;
}

static void lease_threads(void) {
    struct shared s;
    for (int round = 0; round < ROUNDS; round++) {
        weir_lease *lease = NULL;
        weir_lease_answer answer;
        CHECK_STATUS(weir_lease_new(NULL, 0, &lease), WEIR_OK);
        CHECK_STATUS(weir_lease_take(lease, 0, 20, &answer), WEIR_OK);
        CHECK(answer.verdict == WEIR_LEASE_ASK && answer.ask == 20);
        CHECK_STATUS(weir_lease_grant(lease, 0, 20, SEC, 0), WEIR_OK);
        reset(&s, lease);
        race(&s, lease_decide, lease_change);
        CHECK(atomic_load(&s.admitted) == 20);
        CHECK(weir_lease_unspent(lease, 0) == 0);
        weir_lease_stats stats;
        CHECK_STATUS(weir_lease_read_stats(lease, 0, &stats), WEIR_OK);
        CHECK(stats.spent == 20 && stats.granted == 20);
        weir_lease_free(lease);
    }
}

/* --- the pool: size 2 and size 64 in turn (the first change to 64 moves
 * the heap pool into a larger store, every later one lays its table out
 * again in place) while the deciders take, make, give and drop: every call
 * answers WEIR_OK, no item is lost or found twice, and the pool never holds
 * more than 64. */
static void *pool_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < TAKES; i++) {
        weir_pool_taken t = weir_pool_take(s->handle, i);
        uintptr_t item = t.item;
        if (t.kind == WEIR_POOL_TAKEN_MAKE) {
            item = (uintptr_t)atomic_fetch_add(&s->admitted, 1) + 1;
            if (weir_pool_made(s->handle, item, i) != WEIR_OK) {
                atomic_fetch_add(&s->bad, 1);
                continue;
            }
        } else if (t.kind != WEIR_POOL_TAKEN_READY) {
            continue;
        }
        long now_inside = atomic_fetch_add(&s->inside, 1) + 1;
        long most = atomic_load(&s->most_inside);
        while (now_inside > most && !atomic_compare_exchange_weak(&s->most_inside, &most, now_inside)) {
        }
        atomic_fetch_sub(&s->inside, 1);
        bool kept = false;
        weir_status status = i % 7 == 0 ? weir_pool_drop(s->handle, item) : weir_pool_give(s->handle, item, i, &kept);
        if (status != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void *pool_change(void *arg) {
    struct shared *s = arg;
    weir_pool_policy p = weir_pool_policy_preset();
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        p.size = p.idle = i % 2 ? 2 : 64;
        if (weir_pool_reconfigure(s->handle, &p) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
        if (weir_pool_live(s->handle) > 64) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void pool_threads(void) {
    struct shared s;
    weir_pool_policy p = weir_pool_policy_preset();
    p.size = p.idle = 2;
    for (int round = 0; round < ROUNDS; round++) {
        weir_pool *pool = NULL;
        CHECK_STATUS(weir_pool_new(&p, &pool), WEIR_OK);
        reset(&s, pool);
        race(&s, pool_decide, pool_change);
        CHECK(atomic_load(&s.most_inside) <= 64);
        CHECK(weir_pool_busy(pool) == 0);
        CHECK(weir_pool_live(pool) == weir_pool_idle(pool));
        CHECK(weir_pool_live(pool) <= 64);
        weir_pool_stats stats;
        CHECK_STATUS(weir_pool_read_stats(pool, &stats), WEIR_OK);
        CHECK(stats.made == (uint64_t)atomic_load(&s.admitted));
        CHECK(stats.made == (uint64_t)weir_pool_idle(pool) + stats.dropped + stats.refused);
        weir_pool_free(pool);
    }
}

/* --- the bloom array: one key on one word (hashes 1), its limit changed
 * back and forth between two (GCRA words, then rate words) while the
 * deciders take at instants drawn from one clock, 10 µs apart, arriving in
 * any order. Whatever limit judged each take, the header's bound across any
 * number of changes holds over the whole run of T ns: for GCRA words at
 * most (T + the largest bucket) / the shortest token; for rate words at
 * most 2 × the largest burst + T / the shortest interval. Every
 * reconfiguration answers WEIR_OK, and a decision never sees a torn limit
 * (ASan, UBSan; TSan through the shared handles' thread test). */
enum { BLOOM_TAKES = 2000 };
#define BLOOM_STEP INT64_C(10000)

static atomic_llong bloom_clock;
static atomic_llong bloom_last;

static void *bloom_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < BLOOM_TAKES; i++) {
        long long now = atomic_fetch_add(&bloom_clock, BLOOM_STEP);
        if (weir_bloom_allow(s->handle, now, "key", 3)) atomic_fetch_add(&s->admitted, 1);
        long long last = atomic_load(&bloom_last);
        while (now > last && !atomic_compare_exchange_weak(&bloom_last, &last, now)) {
        }
        if (weir_bloom_next(s->handle, now, "key", 3) < 0) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static weir_gcra_limit bloom_gcra[2];
static weir_rate_limit bloom_rate[2];

static void *bloom_gcra_change(void *arg) {
    struct shared *s = arg;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        if (weir_bloom_reconfigure_gcra(s->handle, &bloom_gcra[i % 2]) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void *bloom_rate_change(void *arg) {
    struct shared *s = arg;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        if (weir_bloom_reconfigure(s->handle, &bloom_rate[i % 2]) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void bloom_threads(void) {
    /* 1000/s burst 5 and 500/s burst 20: tokens of 1 ms and 2 ms, buckets
     * of 5 ms and 40 ms; windows of 5 × 1 ms and 20 × 2 ms. */
    CHECK_STATUS(weir_gcra_limit_new(1000.0, 5, &bloom_gcra[0]), WEIR_OK);
    CHECK_STATUS(weir_gcra_limit_new(500.0, 20, &bloom_gcra[1]), WEIR_OK);
    CHECK_STATUS(weir_rate_limit_new(1000.0, 5, &bloom_rate[0]), WEIR_OK);
    CHECK_STATUS(weir_rate_limit_new(500.0, 20, &bloom_rate[1]), WEIR_OK);
    const long long ms = 1000000;
    struct shared s;
    for (int round = 0; round < ROUNDS; round++) {
        for (int kind = 0; kind < 2; kind++) {
            weir_bloom *bloom = NULL;
            if (kind == 0) {
                CHECK_STATUS(weir_bloom_new_gcra(6, 1, &bloom_gcra[0], 1, 2, &bloom), WEIR_OK);
            } else {
                CHECK_STATUS(weir_bloom_new(6, 1, &bloom_rate[0], 1, 2, &bloom), WEIR_OK);
            }
            /* The other kind is refused, changing nothing. */
            CHECK_STATUS(kind == 0 ? weir_bloom_reconfigure(bloom, &bloom_rate[0])
                                   : weir_bloom_reconfigure_gcra(bloom, &bloom_gcra[0]),
                         WEIR_ERR_BLOOM_KIND_CHANGE);
            atomic_store(&bloom_clock, (long long)round * 1000 * ms);
            atomic_store(&bloom_last, (long long)round * 1000 * ms);
            long long first = atomic_load(&bloom_clock);
            reset(&s, bloom);
            race(&s, bloom_decide, kind == 0 ? bloom_gcra_change : bloom_rate_change);
            long long span = atomic_load(&bloom_last) - first;
            long admitted = atomic_load(&s.admitted);
            long bound = kind == 0 ? (long)((span + 40 * ms) / ms) : (long)(2 * 20 + span / ms);
            CHECK(admitted <= bound);
            /* And the words did admit (a token a 2 ms, halved for slack). */
            CHECK(admitted >= (long)(span / (4 * ms)) - 2);
            weir_bloom_free(bloom);
        }
    }
}

/* --- the keyed table: one key's word, its limit changed back and forth
 * between the bloom's two (GCRA words, then rate words) while the deciders
 * take through weir_keyed_decide at instants drawn from one clock, 10 µs
 * apart, arriving in any order; heap and placed tables in turn, and a
 * second key beside it. The header's bound holds over the whole run, as
 * for the bloom's one word, and every call answers WEIR_OK. */
static void *keyed_decide(void *arg) {
    struct shared *s = arg;
    for (int i = 0; i < BLOOM_TAKES; i++) {
        long long now = atomic_fetch_add(&bloom_clock, BLOOM_STEP);
        uint32_t decision = 99;
        weir_status status = weir_keyed_decide(s->handle, now, "key", 3, 1, &decision);
        if (status != WEIR_OK) atomic_fetch_add(&s->bad, 1);
        if (decision == WEIR_KEYED_ALLOWED) atomic_fetch_add(&s->admitted, 1);
        if (decision != WEIR_KEYED_ALLOWED && decision != WEIR_KEYED_REFUSED) {
            atomic_fetch_add(&s->bad, 1);
        }
        long long last = atomic_load(&bloom_last);
        while (now > last && !atomic_compare_exchange_weak(&bloom_last, &last, now)) {
        }
        int64_t wait = -1;
        if (weir_keyed_next(s->handle, now, "key", 3, &wait) != WEIR_OK || wait < 0) {
            atomic_fetch_add(&s->bad, 1);
        }
        (void)weir_keyed_allow(s->handle, now, "other", 5);
    }
    return NULL;
}

static void *keyed_gcra_change(void *arg) {
    struct shared *s = arg;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        if (weir_keyed_reconfigure(s->handle, &bloom_gcra[i % 2]) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void *keyed_rate_change(void *arg) {
    struct shared *s = arg;
    for (int i = 0; !atomic_load(&s->done) || i < 100; i++) {
        if (weir_keyed_reconfigure_rate(s->handle, &bloom_rate[i % 2]) != WEIR_OK) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void keyed_threads(void) {
    /* The bloom's limits, made again so that this test stands alone. */
    CHECK_STATUS(weir_gcra_limit_new(1000.0, 5, &bloom_gcra[0]), WEIR_OK);
    CHECK_STATUS(weir_gcra_limit_new(500.0, 20, &bloom_gcra[1]), WEIR_OK);
    CHECK_STATUS(weir_rate_limit_new(1000.0, 5, &bloom_rate[0]), WEIR_OK);
    CHECK_STATUS(weir_rate_limit_new(500.0, 20, &bloom_rate[1]), WEIR_OK);
    const long long ms = 1000000;
    alignas(128) static unsigned char placed[4096];
    size_t bytes = 0, align = 0;
    CHECK_STATUS(weir_keyed_footprint(4, &bytes, &align), WEIR_OK);
    CHECK(bytes <= sizeof placed && align == 128);
    struct shared s;
    for (int round = 0; round < ROUNDS; round++) {
        for (int kind = 0; kind < 2; kind++) {
            weir_keyed *table = NULL;
            int heap = round % 2 == 0;
            if (kind == 0) {
                CHECK_STATUS(heap ? weir_keyed_new(4, &bloom_gcra[0], WEIR_KEYED_OVERFLOW_REFUSE, 1, 2, &table)
                                  : weir_keyed_init_in(placed, bytes, 4, &bloom_gcra[0],
                                                       WEIR_KEYED_OVERFLOW_REFUSE, 1, 2, &table),
                             WEIR_OK);
            } else {
                CHECK_STATUS(heap ? weir_keyed_new_rate(4, &bloom_rate[0], WEIR_KEYED_OVERFLOW_REFUSE, 1, 2,
                                                        &table)
                                  : weir_keyed_init_rate_in(placed, bytes, 4, &bloom_rate[0],
                                                            WEIR_KEYED_OVERFLOW_REFUSE, 1, 2, &table),
                             WEIR_OK);
            }
            /* The other kind is refused, changing nothing. */
            CHECK_STATUS(kind == 0 ? weir_keyed_reconfigure_rate(table, &bloom_rate[0])
                                   : weir_keyed_reconfigure(table, &bloom_gcra[0]),
                         WEIR_ERR_KEYED_KIND_CHANGE);
            atomic_store(&bloom_clock, (long long)round * 1000 * ms);
            atomic_store(&bloom_last, (long long)round * 1000 * ms);
            long long first = atomic_load(&bloom_clock);
            reset(&s, table);
            race(&s, keyed_decide, kind == 0 ? keyed_gcra_change : keyed_rate_change);
            long long span = atomic_load(&bloom_last) - first;
            long admitted = atomic_load(&s.admitted);
            long bound = kind == 0 ? (long)((span + 40 * ms) / ms) : (long)(2 * 20 + span / ms);
            CHECK(admitted <= bound);
            /* And the word did admit (a token a 2 ms, halved for slack). */
            CHECK(admitted >= (long)(span / (4 * ms)) - 2);
            weir_keyed_free(table);
        }
    }
}

int main(void) {
    sliding_threads();
    period_threads();
    gate_threads();
    window_threads();
    breaker_threads();
    budget_threads();
    shedder_threads();
    concurrency_threads();
    lease_threads();
    pool_threads();
    bloom_threads();
    keyed_threads();
    CHECK_DONE();
}
