/* Misaligned caller pointers are a status (WEIR_ERR_MISALIGNED) or a
 * refusal, never undefined behaviour: a by-value limiter, deadline, backoff
 * policy or a shedder or breaker ticket placed one byte off its alignment, a policy or
 * rate limit passed to a constructor or a decision that way, an out-pointer
 * for a handle, a value or a buffer. Each call below gets such a pointer
 * and must neither read nor write through it; the bytes around it are
 * compared before and after.
 *
 * This file never dereferences a misaligned pointer itself: values are put
 * in place with memcpy, and the pointers are made from an integer (an
 * implementation-defined conversion) rather than by casting a char pointer,
 * whose misaligned result C leaves undefined. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "weir.h"

#define MS INT64_C(1000000)

/* Storage aligned for anything, filled with a pattern. */
static union {
    max_align_t align;
    unsigned char bytes[256];
} storage;

static unsigned char before[sizeof storage.bytes];

/* A pointer to `type` one byte past the start of the aligned storage:
 * misaligned for every type aligned to more than one byte. */
#define MISALIGNED(type) ((type *)((uintptr_t)storage.bytes + 1))

/* Fills the storage with a pattern, then copies `size` bytes of `value`
 * one byte in (where MISALIGNED points), and remembers the whole. */
static void place(const void *value, size_t size) {
    memset(storage.bytes, 0x5A, sizeof storage.bytes);
    if (value != NULL) memcpy(storage.bytes + 1, value, size);
    memcpy(before, storage.bytes, sizeof before);
}

static int untouched(void) { return memcmp(before, storage.bytes, sizeof before) == 0; }

static void limiter(void) {
    weir_limiter good;
    CHECK_STATUS(weir_limiter_bucket(&good, 5, 1, 10 * MS, 0, 5, 0), WEIR_OK);

    /* A sound limiter, one byte off: refused for its address, not read. */
    place(&good, sizeof good);
    weir_limiter *odd = MISALIGNED(weir_limiter);
    CHECK_STATUS(weir_limiter_consume(odd, 0, 1), WEIR_ERR_MISALIGNED);
    CHECK(!weir_limiter_try_consume(odd, 0, 1));
    CHECK(weir_limiter_available(odd, 0) == 0);
    CHECK(weir_limiter_capacity(odd) == 0);
    CHECK(!weir_limiter_is_bucket(odd));
    uint64_t amount = 0;
    CHECK_STATUS(weir_limiter_refill_amount(odd, &amount), WEIR_ERR_MISALIGNED);
    CHECK(amount == 0);
    CHECK(untouched());

    /* A constructor writing to a misaligned out: nothing written. */
    place(NULL, 0);
    CHECK_STATUS(weir_limiter_bucket(odd, 5, 1, 10 * MS, 0, 5, 0), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_limiter_fixed_window(odd, 5, 10 * MS, 0, 5, 0), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_limiter_cooldown(odd, 5, 10 * MS, 0, 5, 0), WEIR_ERR_MISALIGNED);
    /* ...even when the arguments are bad too: the pointer is checked first. */
    CHECK_STATUS(weir_limiter_bucket(odd, 0, 1, 10 * MS, 0, 5, 0), WEIR_ERR_MISALIGNED);
    /* A getter with a misaligned out. */
    CHECK_STATUS(weir_limiter_refill_amount(&good, MISALIGNED(uint64_t)), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_limiter_last_refill(&good, 0, MISALIGNED(int64_t)), WEIR_ERR_MISALIGNED);
    CHECK(untouched());

    /* The aligned limiter is as it was and still works. */
    CHECK(weir_limiter_available(&good, 0) == 5);
    CHECK(weir_limiter_try_consume(&good, 0, 5));
    CHECK(!weir_limiter_try_consume(&good, 0, 1));
}

static void deadline(void) {
    weir_deadline d = weir_deadline_start(100 * MS, 0);
    place(&d, sizeof d);
    /* A deadline that cannot be read is expired: the caller must stop. */
    CHECK(weir_deadline_expired(MISALIGNED(weir_deadline), 0));
    int64_t left = -1;
    CHECK(!weir_deadline_remaining(MISALIGNED(weir_deadline), 0, &left));
    CHECK(left == -1);
    CHECK(!weir_deadline_remaining(&d, 0, MISALIGNED(int64_t)));
    CHECK(untouched());
    CHECK(!weir_deadline_expired(&d, 0));
    CHECK(weir_deadline_remaining(&d, 0, &left) && left == 100 * MS);
}

static void backoff(void) {
    /* A valid policy unlike the preset, one byte off: refused, and never
     * replaced by the preset a NULL pointer would mean. */
    weir_backoff p = weir_backoff_preset();
    p.base_ns = 10 * MS;
    p.attempts = 4;
    place(&p, sizeof p);
    const weir_backoff *odd = MISALIGNED(weir_backoff);
    CHECK_STATUS(weir_backoff_check(odd), WEIR_ERR_MISALIGNED);
    CHECK(weir_backoff_ceiling(odd, 1) == -1);
    CHECK(weir_backoff_delay(odd, 1, 0.5, 0) == -1);
    CHECK(!weir_backoff_more(odd, 1));
    int64_t out[3] = {-7, -7, -7};
    const double draws[3] = {0.5, 0.5, 0.5};
    CHECK(weir_backoff_schedule(odd, draws, 3, out, 3) == 0);
    CHECK(out[0] == -7 && out[1] == -7 && out[2] == -7);
    CHECK(untouched());

    /* Misaligned draws or buffer: nothing written, 0. */
    place(NULL, 0);
    CHECK(weir_backoff_schedule(&p, MISALIGNED(const double), 3, out, 3) == 0);
    CHECK(out[0] == -7);
    CHECK(weir_backoff_schedule(&p, draws, 3, MISALIGNED(int64_t), 3) == 0);
    CHECK(untouched());
    CHECK(weir_backoff_schedule(&p, draws, 3, out, 3) == 3);
    CHECK(out[0] == 10 * MS);
}

static void pool(void) {
    weir_pool_policy limits = weir_pool_policy_preset();
    limits.size = 2;
    place(&limits, sizeof limits);
    weir_pool *pool = NULL;
    CHECK_STATUS(weir_pool_new(MISALIGNED(const weir_pool_policy), &pool), WEIR_ERR_MISALIGNED);
    CHECK(pool == NULL);
    place(NULL, 0);
    CHECK_STATUS(weir_pool_new(NULL, MISALIGNED(weir_pool *)), WEIR_ERR_MISALIGNED);
    CHECK(untouched());

    limits.keep_ns = 10 * MS;
    CHECK_STATUS(weir_pool_new(&limits, &pool), WEIR_OK);
    CHECK(weir_pool_take(pool, 0).kind == WEIR_POOL_TAKEN_MAKE);
    CHECK_STATUS(weir_pool_made(pool, 7, 0), WEIR_OK);
    bool kept = false;
    CHECK_STATUS(weir_pool_give(pool, 7, 0, &kept), WEIR_OK);
    CHECK(kept);
    /* Due, but the buffer is misaligned: nothing removed, nothing written. */
    CHECK(weir_pool_evict(pool, 20 * MS, MISALIGNED(uintptr_t), 4) == 0);
    CHECK(weir_pool_idle(pool) == 1);
    /* A misaligned close is refused whole: the pool stays open. */
    CHECK(weir_pool_close(pool, MISALIGNED(uintptr_t), 4) == 0);
    CHECK(weir_pool_idle(pool) == 1);
    CHECK_STATUS(weir_pool_read_stats(pool, MISALIGNED(weir_pool_stats)), WEIR_ERR_MISALIGNED);
    CHECK(untouched());
    uintptr_t out[4];
    CHECK(weir_pool_evict(pool, 20 * MS, out, 4) == 1 && out[0] == 7);
    CHECK(weir_pool_take(pool, 20 * MS).kind == WEIR_POOL_TAKEN_MAKE);
    weir_pool_free(pool);
}

static void shedder(void) {
    weir_shedder *shedder = NULL;
    weir_shedder_policy policy = weir_shedder_policy_preset();
    place(&policy, sizeof policy);
    CHECK_STATUS(weir_shedder_new(MISALIGNED(const weir_shedder_policy), 0, &shedder), WEIR_ERR_MISALIGNED);
    CHECK(shedder == NULL);
    CHECK_STATUS(weir_shedder_new(NULL, 0, &shedder), WEIR_OK);

    /* allow with a misaligned ticket refuses before it lets a call fly:
     * otherwise the call could never be settled. */
    place(NULL, 0);
    CHECK(!weir_shedder_allow(shedder, 0, 0, MISALIGNED(weir_shedder_ticket)));
    CHECK(weir_shedder_flying(shedder) == 0);
    weir_shedder_ticket ticket;
    CHECK(weir_shedder_allow(shedder, 0, 0, &ticket));
    CHECK(weir_shedder_flying(shedder) == 1);
    /* An open ticket, one byte off: settling it is refused. */
    place(&ticket, sizeof ticket);
    CHECK_STATUS(weir_shedder_pass(shedder, MISALIGNED(weir_shedder_ticket), MS), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_shedder_fail(shedder, MISALIGNED(weir_shedder_ticket)), WEIR_ERR_MISALIGNED);
    CHECK(weir_shedder_flying(shedder) == 1);
    CHECK_STATUS(weir_shedder_read_stats(shedder, 0, MISALIGNED(weir_shedder_stats)), WEIR_ERR_MISALIGNED);
    CHECK(untouched());
    CHECK_STATUS(weir_shedder_pass(shedder, &ticket, MS), WEIR_OK);
    CHECK(weir_shedder_flying(shedder) == 0);
    weir_shedder_free(shedder);
}

static void handles(void) {
    /* Every constructor checks its out-pointer before it makes anything. */
    place(NULL, 0);
    CHECK_STATUS(weir_gate_new(1, MISALIGNED(weir_gate *)), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_bucket_new(1.0, 1.0, 0, MISALIGNED(weir_bucket *)), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_sliding_new(1, MS, MISALIGNED(weir_sliding *)), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_period_new(1, MS, false, MISALIGNED(weir_period *)), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_window_new(4, MS, 0, MISALIGNED(weir_window *)), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_breaker_new(NULL, 0, MISALIGNED(weir_breaker *)), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_shedder_new(NULL, 0, MISALIGNED(weir_shedder *)), WEIR_ERR_MISALIGNED);
    CHECK(untouched());

    weir_breaker_policy sre = weir_breaker_policy_preset();
    place(&sre, sizeof sre);
    weir_breaker *breaker = NULL;
    CHECK_STATUS(weir_breaker_new(MISALIGNED(const weir_breaker_policy), 0, &breaker), WEIR_ERR_MISALIGNED);
    CHECK(breaker == NULL);
    CHECK_STATUS(weir_breaker_new(NULL, 0, &breaker), WEIR_OK);
    CHECK_STATUS(weir_breaker_read_tally(breaker, 0, MISALIGNED(weir_breaker_tally)), WEIR_ERR_MISALIGNED);
    CHECK(untouched());
    /* allow with a misaligned ticket refuses and records nothing; settling an
     * open ticket one byte off is refused and counts nothing. */
    place(NULL, 0);
    CHECK(!weir_breaker_allow(breaker, 0, 0.5, MISALIGNED(weir_breaker_ticket)));
    CHECK(untouched());
    weir_breaker_ticket ticket;
    CHECK(weir_breaker_allow(breaker, 0, 0.5, &ticket));
    place(&ticket, sizeof ticket);
    CHECK_STATUS(weir_breaker_pass(breaker, MISALIGNED(weir_breaker_ticket), MS),
                 WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_breaker_fail(breaker, MISALIGNED(weir_breaker_ticket), MS),
                 WEIR_ERR_MISALIGNED);
    CHECK(untouched());
    weir_breaker_tally tally;
    CHECK_STATUS(weir_breaker_read_tally(breaker, MS, &tally), WEIR_OK);
    CHECK(tally.total == 0);
    CHECK_STATUS(weir_breaker_pass(breaker, &ticket, MS), WEIR_OK);
    CHECK_STATUS(weir_breaker_read_tally(breaker, MS, &tally), WEIR_OK);
    CHECK(tally.total == 1 && tally.success == 1);
    weir_breaker_free(breaker);

    weir_window *window = NULL;
    CHECK_STATUS(weir_window_new(4, MS, 0, &window), WEIR_OK);
    CHECK_STATUS(weir_window_add(window, 0, 3), WEIR_OK);
    CHECK(weir_window_read_buckets(window, 0, true, MISALIGNED(weir_window_total), 4) == 0);
    CHECK_STATUS(weir_window_read_total(window, 0, true, MISALIGNED(weir_window_total)), WEIR_ERR_MISALIGNED);
    CHECK(untouched());
    weir_window_total totals[4];
    CHECK(weir_window_read_buckets(window, 0, true, totals, 4) == 4 && totals[3].sum == 3);
    weir_window_free(window);
}

static void rate_and_bloom(void) {
    weir_rate_limit limit;
    CHECK_STATUS(weir_rate_limit_new(1.0, 2, &limit), WEIR_OK);
    weir_rate word = {0};

    /* A sound limit, one byte off: refused, never read. */
    place(&limit, sizeof limit);
    const weir_rate_limit *odd = MISALIGNED(const weir_rate_limit);
    CHECK(!weir_rate_allow(&word, odd, 0));
    CHECK(weir_rate_next(&word, odd, 0) == INT64_MAX);
    CHECK(word.state == 0);
    weir_bloom *bloom = NULL;
    CHECK_STATUS(weir_bloom_new(4, 2, odd, 1, 2, &bloom), WEIR_ERR_MISALIGNED);
    CHECK(bloom == NULL);
    CHECK(untouched());

    /* Misaligned out-pointers: nothing made, nothing written. */
    place(NULL, 0);
    CHECK_STATUS(weir_rate_limit_new(1.0, 2, MISALIGNED(weir_rate_limit)), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_bloom_new(4, 2, &limit, 1, 2, MISALIGNED(weir_bloom *)), WEIR_ERR_MISALIGNED);
    CHECK(untouched());

    /* The aligned ones still work. */
    CHECK(weir_rate_allow(&word, &limit, 0));
    CHECK_STATUS(weir_bloom_new(4, 2, &limit, 1, 2, &bloom), WEIR_OK);
    CHECK(weir_bloom_allow(bloom, 0, "k", 1));
    weir_bloom_free(bloom);
}

int main(void) {
    limiter();
    deadline();
    backoff();
    pool();
    shedder();
    handles();
    rate_and_bloom();
    CHECK_DONE();
}
