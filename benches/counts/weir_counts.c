/* The C side of the instruction-count table (benches/counts/counts.py):
 * weir's decisions called through the C ABI, as a C program calls them
 * (linked against target/release/libweir.a, built with -O2).
 *
 *   weir_counts CASE N        runs CASE's loop N times once (callgrind
 *                             counts the function loop_CASE, whose name
 *                             counts.py passes to --toggle-collect)
 *   weir_counts CASE N time   runs it 7 times and prints the fastest run's ns
 *                             per iteration (the least disturbed by load)
 *   weir_counts list          prints the cases
 *
 * Each case's state is made before its loop and checked after it, so a
 * case cannot quietly measure the other path (a refusing case that
 * allowed, say). Every loop has the same shape as loop_empty, whose cost
 * counts.py subtracts. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weir.h"

#define NOINLINE __attribute__((noinline, used))
/* Makes `x` opaque to the optimiser, so a loop cannot be folded away. */
#define OPAQUE(x) __asm__ volatile("" : "+r"(x))
#define SECOND 1000000000LL

static void fail(const char *what) {
    fprintf(stderr, "weir_counts: %s\n", what);
    exit(1);
}
#define MUST(expr) \
    do {           \
        if (!(expr)) fail(#expr); \
    } while (0)

/* The state a case's loop works on. */
typedef struct {
    weir_rate word;
    weir_rate_limit limit;
    _Atomic uint64_t atomic;
    weir_bucket *bucket;
    weir_bloom *bloom;
    uint8_t (*keys)[16];
    size_t nkeys;
    weir_pool *pool;
    weir_sliding *sliding;
    weir_breaker *breaker;
    weir_shedder *shedder;
    weir_budget *budget;
    weir_concurrency *concurrency;
    weir_limiter limiter;
    weir_gcra words[3]; /* an organisation's, a team's and a user's */
    weir_gcra_limit word_limit;
    weir_charge_item items[3];
    pthread_mutex_t mutex;
    int64_t now, step;
    uint64_t hits;
} ctx;

/* ---- the loops: one decision (or decision and settle) per iteration ---- */

NOINLINE void loop_empty(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        hits += 1;
        OPAQUE(hits); /* no instruction: only keeps the loop */
    }
    c->hits += hits;
}

/* The floor: a load, then compare-and-swap until it lands. */
NOINLINE void loop_cas_loop(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        uint64_t seen = atomic_load_explicit(&c->atomic, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(&c->atomic, &seen, seen + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed)) {
        }
        hits += 1;
    }
    c->hits += hits;
}

NOINLINE void loop_rate_allow(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        hits += weir_rate_allow(&c->word, &c->limit, now);
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

NOINLINE void loop_rate_refuse(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        hits += weir_rate_allow(&c->word, &c->limit, c->now);
    }
    c->hits += hits;
}

#if defined(WEIR_RATE_INLINE)
NOINLINE void loop_rate_inline_allow(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        hits += weir_rate_allow_inline(&c->word, &c->limit, now);
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

NOINLINE void loop_rate_inline_refuse(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        hits += weir_rate_allow_inline(&c->word, &c->limit, c->now);
    }
    c->hits += hits;
}
#endif

NOINLINE void loop_bucket(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        hits += weir_bucket_take(c->bucket, c->now, 1.0);
    }
    c->hits += hits;
}

NOINLINE void loop_bloom(ctx *c, long n) {
    uint64_t hits = 0;
    size_t k = 0;
    for (long i = 0; i < n; i++) {
        hits += weir_bloom_allow(c->bloom, c->now, c->keys[k], 16);
        k = k + 1 == c->nkeys ? 0 : k + 1;
    }
    c->hits += hits;
}

NOINLINE void loop_pool(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        weir_pool_taken taken = weir_pool_take(c->pool, c->now);
        bool kept = false;
        weir_status status = weir_pool_give(c->pool, taken.item, c->now, &kept);
        hits += taken.kind == WEIR_POOL_TAKEN_READY && status == WEIR_OK && kept;
    }
    c->hits += hits;
}

/* A generation turned over each iteration: every resource marked old and
 * evicted, then as many made anew (take MAKE, made_jittered, give). */
NOINLINE void loop_pool_generation(ctx *c, long n) {
    uint64_t hits = 0;
    uintptr_t out[16];
    for (long i = 0; i < n; i++) {
        int64_t marked = weir_pool_mark_old(c->pool);
        size_t evicted = weir_pool_evict(c->pool, c->now, out, 16);
        size_t made = 0;
        for (size_t k = 0; k < evicted; k++) {
            made += weir_pool_take(c->pool, c->now).kind == WEIR_POOL_TAKEN_MAKE &&
                    weir_pool_made_jittered(c->pool, out[k], c->now, (uint64_t)k << 60) == WEIR_OK;
        }
        for (size_t k = 0; k < evicted; k++) {
            bool kept = false;
            made -= weir_pool_give(c->pool, out[k], c->now, &kept) != WEIR_OK || !kept;
        }
        hits += evicted > 0 && made == evicted && (uint64_t)marked == evicted;
    }
    c->hits += hits;
}

NOINLINE void loop_sliding(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        hits += weir_sliding_take(c->sliding, now);
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

NOINLINE void loop_breaker(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        weir_breaker_ticket ticket;
        hits += weir_breaker_allow(c->breaker, now, 0.5, &ticket) &&
                weir_breaker_pass(c->breaker, &ticket, now) == WEIR_OK;
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

NOINLINE void loop_shedder(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        weir_shedder_ticket ticket;
        hits += weir_shedder_allow(c->shedder, now, 100, &ticket) &&
                weir_shedder_pass(c->shedder, &ticket, now) == WEIR_OK;
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

/* The same with a class: SHEDDABLE, the class whose decision does the most
 * (the CPU checked against half the threshold as well as hot). */
NOINLINE void loop_shedder_class(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        weir_shedder_ticket ticket;
        hits += weir_shedder_allow_class(c->shedder, now, 100, WEIR_SHEDDER_SHEDDABLE, &ticket) == WEIR_OK &&
                ticket.flying == 1 && weir_shedder_pass(c->shedder, &ticket, now) == WEIR_OK;
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

/* The locked types' anchor: one uncontended lock and unlock of a
 * pthread mutex (glibc's, a compare-and-swap each way). */
NOINLINE void loop_mutex(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        hits += pthread_mutex_lock(&c->mutex) == 0;
        pthread_mutex_unlock(&c->mutex);
    }
    c->hits += hits;
}

/* The paths 0.2.0 added: a retry budget's deposit and withdrawal, an adaptive
 * limit's enter and leave, the refunds of the limiter and the bucket (a
 * consume or take and its refund at one instant), and the breaker's
 * refusal (its whole formula, with the limits when they are on). */
NOINLINE void loop_budget(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        weir_budget_deposit(c->budget, c->now);
        hits += weir_budget_withdraw(c->budget, c->now);
    }
    c->hits += hits;
}

NOINLINE void loop_concurrency(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        weir_concurrency_ticket flight;
        hits += weir_concurrency_enter(c->concurrency, now, &flight) &&
                weir_concurrency_leave(c->concurrency, &flight, now + c->step, false) == WEIR_OK;
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

NOINLINE void loop_concurrency_partition(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        weir_concurrency_ticket flight;
        hits += weir_concurrency_enter_partition(c->concurrency, 0, now, &flight) == WEIR_OK &&
                flight.flying == 1 &&
                weir_concurrency_leave_partition(c->concurrency, 0, &flight, now + c->step, false) == WEIR_OK;
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

NOINLINE void loop_limiter_refund(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        hits += weir_limiter_try_consume(&c->limiter, c->now, 1) &&
                weir_limiter_refund(&c->limiter, c->now, c->now, 1) == WEIR_OK;
    }
    c->hits += hits;
}

NOINLINE void loop_bucket_refund(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        hits += weir_bucket_take(c->bucket, c->now, 1.0) &&
                weir_bucket_refund(c->bucket, c->now, c->now, 1.0) == WEIR_OK;
    }
    c->hits += hits;
}

NOINLINE void loop_breaker_refuse(ctx *c, long n) {
    uint64_t hits = 0;
    for (long i = 0; i < n; i++) {
        weir_breaker_ticket ticket;
        hits += weir_breaker_allow(c->breaker, c->now, 0.0, &ticket);
    }
    c->hits += hits;
}

/* Three GCRA words, an organisation's, a team's and a user's, charged
 * together by weir_charge_all (read, then charged in order; given back on
 * a refusal), against the same three charged one by one with
 * weir_gcra_allow (no all or nothing), and against the nginx module's old
 * way (read each, then charge each: all or nothing but for races). */
NOINLINE void loop_charge(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        weir_charge_result r;
        hits += weir_charge_all(c->items, 3, now, &r) == WEIR_OK && r.admitted;
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

NOINLINE void loop_charge_separate(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        bool all = true;
        for (int w = 0; w < 3; w++) all &= weir_gcra_allow(&c->words[w], &c->word_limit, now);
        hits += all;
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

NOINLINE void loop_charge_read_then_charge(ctx *c, long n) {
    uint64_t hits = 0;
    int64_t now = c->now;
    for (long i = 0; i < n; i++) {
        bool room = true;
        for (int w = 0; w < 3 && room; w++) room = weir_gcra_next(&c->words[w], &c->word_limit, now) == 0;
        if (room) {
            for (int w = 0; w < 3; w++) (void)weir_gcra_allow(&c->words[w], &c->word_limit, now);
        }
        hits += room;
        now += c->step;
    }
    c->now = now;
    c->hits += hits;
}

/* ---- the cases: a loop, its state, and what every iteration answers ---- */

typedef struct {
    const char *name;
    void (*loop)(ctx *, long);
    void (*setup)(ctx *, long arg);
    long arg;
    int expect; /* 1: every iteration allowed, 0: every one refused */
} case_t;

static void setup_none(ctx *c, long arg) { (void)c; (void)arg; }

/* arg 1: advancing one interval a call (every call opens a window);
 * arg 0: a spent word at a fixed instant. */
static void setup_rate(ctx *c, long advancing) {
    MUST(weir_rate_limit_new(10000.0, 1, &c->limit) == WEIR_OK);
    c->now = SECOND;
    c->step = 100352; /* one interval and the 512 ns grid: every call opens a window */
    if (!advancing) {
        MUST(weir_rate_allow(&c->word, &c->limit, c->now));
    }
}

static void setup_bucket(ctx *c, long allowing) {
    MUST(weir_bucket_new(1.0, allowing ? 1e9 : 1.0, 0, &c->bucket) == WEIR_OK);
    c->now = 0;
    if (!allowing) {
        MUST(weir_bucket_take(c->bucket, c->now, 1.0));
    }
}

/* 1e6 distinct 16-byte keys, every one touched once at 0 before the loop. */
static void touch_keys(ctx *c) {
    c->nkeys = 1000000;
    c->keys = calloc(c->nkeys, 16);
    MUST(c->keys != NULL);
    for (size_t i = 0; i < c->nkeys; i++) {
        uint64_t a = i * 0x9e3779b97f4a7c15ULL, b = ~i;
        memcpy(c->keys[i], &a, 8);
        memcpy(c->keys[i] + 8, &b, 8);
        MUST(weir_bloom_allow(c->bloom, 0, c->keys[i], 16));
    }
    c->now = 0;
}

/* Rate words over 2^size_log2 words, k = 3, a burst no loop length
 * reaches. */
static void setup_bloom(ctx *c, long size_log2) {
    weir_rate_limit limit;
    MUST(weir_rate_limit_new(1.0, 1023, &limit) == WEIR_OK);
    MUST(weir_bloom_new((uint32_t)size_log2, 3, &limit, 1, 2, &c->bloom) == WEIR_OK);
    touch_keys(c);
}

/* The same with GCRA words (nginx's default kind): 1 per second, the same
 * burst. */
static void setup_bloom_gcra(ctx *c, long size_log2) {
    weir_gcra_limit limit;
    MUST(weir_gcra_limit_new(1.0, 1023, &limit) == WEIR_OK);
    MUST(weir_bloom_new_gcra((uint32_t)size_log2, 3, &limit, 1, 2, &c->bloom) == WEIR_OK);
    touch_keys(c);
}

/* Three GCRA words of a million tokens a second (a burst of 100), `now`
 * advancing a token a call: every charge passes. arg 0: the user's word
 * (the last) spent at a fixed `now`, so every call is refused by it. */
static void setup_charge(ctx *c, long allowing) {
    MUST(weir_gcra_limit_new(1e6, 100, &c->word_limit) == WEIR_OK);
    c->now = SECOND;
    c->step = allowing ? 1000 : 0;
    for (int w = 0; w < 3; w++) {
        memset(&c->items[w], 0, sizeof c->items[w]);
        c->items[w].kind = WEIR_CHARGE_GCRA;
        c->items[w].target = &c->words[w];
        c->items[w].limit = &c->word_limit;
        c->items[w].cost = 1;
    }
    if (!allowing) {
        for (int i = 0; i < 100; i++) MUST(weir_gcra_allow(&c->words[2], &c->word_limit, c->now));
    }
}

/* A pool of `size`, every resource idle: take answers the newest. */
static void setup_pool(ctx *c, long size) {
    weir_pool_policy limits = weir_pool_policy_preset();
    limits.size = (int32_t)size;
    limits.idle = (int32_t)size;
    MUST(weir_pool_new(&limits, &c->pool) == WEIR_OK);
    for (long item = 1; item <= size; item++) {
        MUST(weir_pool_take(c->pool, 0).kind == WEIR_POOL_TAKEN_MAKE);
        MUST(weir_pool_made(c->pool, (uintptr_t)item, 0) == WEIR_OK);
    }
    for (long item = 1; item <= size; item++) {
        bool kept = false;
        MUST(weir_pool_give(c->pool, (uintptr_t)item, 0, &kept) == WEIR_OK && kept);
    }
    c->now = 0;
}

/* setup_pool's pool with every 0.2.0 knob on: a life of an hour with 10 %
 * jitter, two kept ready, two made at once. take+give should not notice. */
static void setup_pool_knobs(ctx *c, long size) {
    weir_pool_policy limits = weir_pool_policy_preset();
    limits.size = (int32_t)size;
    limits.idle = (int32_t)size;
    limits.life_ns = 3600 * SECOND;
    limits.life_jitter = 0.1;
    limits.min_idle = 2;
    limits.max_making = 2;
    MUST(weir_pool_new(&limits, &c->pool) == WEIR_OK);
    for (long item = 1; item <= size; item++) {
        /* Each made before the next take, so max_making never bites. */
        MUST(weir_pool_take(c->pool, 0).kind == WEIR_POOL_TAKEN_MAKE);
        MUST(weir_pool_made_jittered(c->pool, (uintptr_t)item, 0, (uint64_t)item << 59) == WEIR_OK);
    }
    for (long item = 1; item <= size; item++) {
        bool kept = false;
        MUST(weir_pool_give(c->pool, (uintptr_t)item, 0, &kept) == WEIR_OK && kept);
    }
    c->now = 0;
}

/* A full quota of `quota` over a window of 1 s, `now` moving on
 * window / quota a call: each take drops the oldest stamp and adds one. */
static void setup_sliding(ctx *c, long quota) {
    MUST(weir_sliding_new(quota, SECOND, &c->sliding) == WEIR_OK);
    c->step = SECOND / quota;
    c->now = 0;
    for (long i = 0; i < quota; i++) {
        MUST(weir_sliding_take(c->sliding, c->now));
        c->now += c->step;
    }
}

/* `size` buckets over 1 s, `now` moving on one bucket a call: every
 * decision opens a bucket. */
static void setup_breaker(ctx *c, long size) {
    weir_breaker_policy policy = weir_breaker_policy_preset();
    policy.size = (int32_t)size;
    policy.window_ns = SECOND;
    MUST(weir_breaker_new(&policy, 0, &c->breaker) == WEIR_OK);
    c->step = SECOND / size;
    c->now = 0;
}

static void setup_shedder(ctx *c, long size) {
    weir_shedder_policy policy = weir_shedder_policy_preset();
    policy.size = (int32_t)size;
    policy.window_ns = SECOND;
    MUST(weir_shedder_new(&policy, 0, &c->shedder) == WEIR_OK);
    c->step = SECOND / size;
    c->now = 0;
}

static void setup_mutex(ctx *c, long arg) {
    (void)arg;
    MUST(pthread_mutex_init(&c->mutex, NULL) == 0);
}

/* Finagle's form at percent 1: every request pays for one retry. */
static void setup_budget(ctx *c, long arg) {
    (void)arg;
    weir_budget_policy policy = weir_budget_policy_preset();
    policy.percent = 1.0;
    policy.min_per_s = 0;
    MUST(weir_budget_new(&policy, 0, &c->budget) == WEIR_OK);
    c->now = 0;
}

/* Gradient2 at its preset, every call 10 ms, `now` moving on 10 ms. */
static void setup_concurrency(ctx *c, long arg) {
    (void)arg;
    MUST(weir_concurrency_new(NULL, &c->concurrency) == WEIR_OK);
    c->now = 0;
    c->step = 10000000;
}

/* The same limit split in two halves, each able to borrow 4. */
static void setup_concurrency_partitioned(ctx *c, long arg) {
    (void)arg;
    const weir_concurrency_partition parts[2] = {{0.5, 4}, {0.5, 4}};
    MUST(weir_concurrency_new_partitioned(NULL, parts, 2, &c->concurrency) == WEIR_OK);
    c->now = 0;
    c->step = 10000000;
}

static void setup_limiter_refund(ctx *c, long arg) {
    (void)arg;
    MUST(weir_limiter_bucket(&c->limiter, 1000, 1, SECOND, 0, 1000, 0) == WEIR_OK);
    c->now = 0;
}

/* A bucket that every take-and-refund leaves full. */
static void setup_bucket_refund(ctx *c, long arg) {
    (void)arg;
    MUST(weir_bucket_new(1.0, 1e9, 0, &c->bucket) == WEIR_OK);
    c->now = 0;
}

/* The breaker's limits: arg 1 all on (a cap of 0.8, a floor of one call a
 * second, an aggression of 2, refusals left out of the traffic), 0 off. */
static weir_breaker_policy limits_policy(long on) {
    weir_breaker_policy policy = weir_breaker_policy_preset();
    if (on) {
        policy.max_rejection_probability = 0.8;
        policy.rps_threshold = 1.0;
        policy.aggression = 2.0;
        policy.skip_refusals = 1;
    }
    return policy;
}

/* As setup_breaker at 10 buckets, with the limits on. */
static void setup_breaker_limits(ctx *c, long arg) {
    (void)arg;
    weir_breaker_policy policy = limits_policy(1);
    policy.size = 10;
    policy.window_ns = SECOND;
    MUST(weir_breaker_new(&policy, 0, &c->breaker) == WEIR_OK);
    c->step = SECOND / 10;
    c->now = 0;
}

/* 100 failures at one instant; every roll of 0 is refused (no probe: the
 * instant never moves). With the limits on, the refusals stay out of the
 * traffic, so every iteration sees the same state. */
static void setup_breaker_refuse(ctx *c, long limits) {
    weir_breaker_policy policy = limits_policy(limits);
    MUST(weir_breaker_new(&policy, 0, &c->breaker) == WEIR_OK);
    c->now = 0;
    for (int i = 0; i < 100; i++) {
        weir_breaker_ticket ticket;
        MUST(weir_breaker_allow(c->breaker, c->now, 0.99, &ticket));
        MUST(weir_breaker_fail(c->breaker, &ticket, c->now) == WEIR_OK);
    }
}

/* The same handles with counting on (weir_<type>_start_counting): what a
 * decision costs when the handle counts it. */
static void setup_bucket_counting(ctx *c, long allowing) {
    setup_bucket(c, allowing);
    MUST(weir_bucket_start_counting(c->bucket) == WEIR_OK);
}

static void setup_bloom_counting(ctx *c, long size_log2) {
    setup_bloom(c, size_log2);
    MUST(weir_bloom_start_counting(c->bloom) == WEIR_OK);
}

static void setup_pool_counting(ctx *c, long size) {
    setup_pool(c, size);
    MUST(weir_pool_start_counting(c->pool) == WEIR_OK);
}

static void setup_sliding_counting(ctx *c, long quota) {
    setup_sliding(c, quota);
    MUST(weir_sliding_start_counting(c->sliding) == WEIR_OK);
}

static void setup_breaker_counting(ctx *c, long size) {
    setup_breaker(c, size);
    MUST(weir_breaker_start_counting(c->breaker) == WEIR_OK);
}

static const case_t cases[] = {
    {"empty", loop_empty, setup_none, 0, -1},
    {"cas_loop", loop_cas_loop, setup_none, 0, 1},
    {"rate_allow_advancing", loop_rate_allow, setup_rate, 1, 1},
    {"rate_refuse", loop_rate_refuse, setup_rate, 0, 0},
#if defined(WEIR_RATE_INLINE)
    {"rate_inline_allow_advancing", loop_rate_inline_allow, setup_rate, 1, 1},
    {"rate_inline_refuse", loop_rate_inline_refuse, setup_rate, 0, 0},
#endif
    {"bucket_allow", loop_bucket, setup_bucket, 1, 1},
    {"bucket_refuse", loop_bucket, setup_bucket, 0, 0},
    {"bloom_allow_2pow16", loop_bloom, setup_bloom, 16, 1},
    {"bloom_allow_2pow20", loop_bloom, setup_bloom, 20, 1},
    {"bloom_allow_2pow24", loop_bloom, setup_bloom, 24, 1},
    {"bloom_gcra_allow_2pow20", loop_bloom, setup_bloom_gcra, 20, 1},
    {"pool_take_give_10", loop_pool, setup_pool, 10, 1},
    {"pool_take_give_1e5", loop_pool, setup_pool, 100000, 1},
    {"pool_take_give_knobs_10", loop_pool, setup_pool_knobs, 10, 1},
    {"pool_generation_10", loop_pool_generation, setup_pool, 10, 1},
    {"sliding_take_10", loop_sliding, setup_sliding, 10, 1},
    {"sliding_take_1e5", loop_sliding, setup_sliding, 100000, 1},
    {"breaker_allow_pass_10", loop_breaker, setup_breaker, 10, 1},
    {"breaker_allow_pass_400", loop_breaker, setup_breaker, 400, 1},
    {"shedder_allow_pass_10", loop_shedder, setup_shedder, 10, 1},
    {"shedder_allow_pass_400", loop_shedder, setup_shedder, 400, 1},
    {"mutex_lock_unlock", loop_mutex, setup_mutex, 0, 1},
    {"budget_deposit_withdraw", loop_budget, setup_budget, 0, 1},
    {"concurrency_enter_leave", loop_concurrency, setup_concurrency, 0, 1},
    {"shedder_class_allow_pass_10", loop_shedder_class, setup_shedder, 10, 1},
    {"concurrency_partition_enter_leave", loop_concurrency_partition, setup_concurrency_partitioned, 0, 1},
    {"limiter_consume_refund", loop_limiter_refund, setup_limiter_refund, 0, 1},
    {"bucket_take_refund", loop_bucket_refund, setup_bucket_refund, 0, 1},
    {"breaker_limits_allow_pass_10", loop_breaker, setup_breaker_limits, 10, 1},
    {"breaker_refuse", loop_breaker_refuse, setup_breaker_refuse, 0, 0},
    {"breaker_limits_refuse", loop_breaker_refuse, setup_breaker_refuse, 1, 0},
    {"charge_3_gcra_allow", loop_charge, setup_charge, 1, 1},
    {"charge_3_gcra_separate", loop_charge_separate, setup_charge, 1, 1},
    {"charge_3_gcra_read_then_charge", loop_charge_read_then_charge, setup_charge, 1, 1},
    {"charge_3_gcra_refuse", loop_charge, setup_charge, 0, 0},
    {"bucket_allow_counting", loop_bucket, setup_bucket_counting, 1, 1},
    {"bucket_refuse_counting", loop_bucket, setup_bucket_counting, 0, 0},
    {"bloom_allow_2pow20_counting", loop_bloom, setup_bloom_counting, 20, 1},
    {"pool_take_give_10_counting", loop_pool, setup_pool_counting, 10, 1},
    {"sliding_take_10_counting", loop_sliding, setup_sliding_counting, 10, 1},
    {"breaker_allow_pass_10_counting", loop_breaker, setup_breaker_counting, 10, 1},
};

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Two threads on one rate word, each `n` calls through the C ABI, `now`
 * advancing as in rate_allow_advancing. Prints wall ns per decision and
 * the process's CPU time over the wall time (2.0: both threads ran all
 * along; near 1.0: they took turns on one CPU). */
static ctx shared;
static long per_thread;
static void *rate_thread(void *arg) {
    int64_t now = SECOND + (int64_t)(intptr_t)arg;
    uint64_t hits = 0;
    for (long i = 0; i < per_thread; i++) {
        hits += weir_rate_allow(&shared.word, &shared.limit, now);
        now += shared.step;
    }
    return (void *)(uintptr_t)hits;
}

/* Two threads refusing on one spent bucket (counting on or off): the
 * refusal reads the bucket's word; counting also writes its counts. */
static void *bucket_thread(void *arg) {
    (void)arg;
    uint64_t hits = 0;
    for (long i = 0; i < per_thread; i++) {
        hits += weir_bucket_take(shared.bucket, shared.now, 1.0);
    }
    return (void *)(uintptr_t)hits;
}

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int two_threads(long n, int bucket) {
    void *(*thread)(void *) = rate_thread;
    if (bucket) {
        setup_bucket(&shared, 0);
        if (bucket == 2) {
            MUST(weir_bucket_start_counting(shared.bucket) == WEIR_OK);
        }
        thread = bucket_thread;
    } else {
        setup_rate(&shared, 1);
    }
    per_thread = n;
    pthread_t threads[2];
    double wall = seconds(), cpu = cpu_seconds();
    for (intptr_t t = 0; t < 2; t++) {
        MUST(pthread_create(&threads[t], NULL, thread, (void *)t) == 0);
    }
    for (int t = 0; t < 2; t++) {
        MUST(pthread_join(threads[t], NULL) == 0);
    }
    wall = seconds() - wall;
    cpu = cpu_seconds() - cpu;
    printf("%.3f %.3f\n", wall * 1e9 / (double)(2 * n), cpu / wall);
    return 0;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            printf("%s\n", cases[i].name);
        }
        return 0;
    }
    if (argc < 3) {
        fail("usage: weir_counts CASE N [time] | list");
    }
    if (strcmp(argv[1], "rate_allow_2threads") == 0) {
        return two_threads(atol(argv[2]), 0);
    }
    if (strcmp(argv[1], "bucket_refuse_2threads") == 0) {
        return two_threads(atol(argv[2]), 1);
    }
    if (strcmp(argv[1], "bucket_refuse_counting_2threads") == 0) {
        return two_threads(atol(argv[2]), 2);
    }
    const case_t *found = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(argv[1], cases[i].name) == 0) {
            found = &cases[i];
        }
    }
    if (found == NULL) {
        fail("no such case");
    }
    long n = atol(argv[2]);
    static ctx c;
    found->setup(&c, found->arg);
    int runs = argc > 3 && strcmp(argv[3], "time") == 0 ? 7 : 1;
    double ns[7];
    for (int r = 0; r < runs; r++) {
        uint64_t before = c.hits;
        double start = seconds();
        found->loop(&c, n);
        ns[r] = (seconds() - start) * 1e9 / (double)n;
        uint64_t hits = c.hits - before;
        if (found->expect >= 0 && hits != (found->expect ? (uint64_t)n : 0)) {
            fprintf(stderr, "weir_counts: %s answered %llu of %ld the other way\n", found->name,
                    (unsigned long long)(found->expect ? (uint64_t)n - hits : hits), n);
            return 1;
        }
    }
    if (runs > 1) {
        qsort(ns, (size_t)runs, sizeof ns[0], by_value);
        printf("%.3f\n", ns[0]); /* the least disturbed run */
    }
    return 0;
}
