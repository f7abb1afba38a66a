/* weir_budget through the header: the layout, the preset, gRPC A6's and
 * Finagle's arithmetic worked by hand, and bad input (bad policies, NULL,
 * misaligned policies, INT64 extremes, time going backwards), and many
 * threads sharing one budget. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_budget_policy) == 40, "weir_budget_policy size");
_Static_assert(_Alignof(weir_budget_policy) == 8, "weir_budget_policy align");
_Static_assert(offsetof(weir_budget_policy, form) == 0, "form");
_Static_assert(offsetof(weir_budget_policy, max_tokens) == 4, "max_tokens");
_Static_assert(offsetof(weir_budget_policy, token_ratio) == 8, "token_ratio");
_Static_assert(offsetof(weir_budget_policy, ttl_ns) == 16, "ttl_ns");
_Static_assert(offsetof(weir_budget_policy, min_per_s) == 24, "min_per_s");
_Static_assert(offsetof(weir_budget_policy, reserved) == 28, "reserved");
_Static_assert(offsetof(weir_budget_policy, percent) == 32, "percent");

#define SEC 1000000000LL
#define MS 1000000LL

enum { THREADS = 4, ROUNDS = 5000 };

static void *hammer(void *arg) {
    weir_budget *budget = arg;
    long granted = 0;
    for (int i = 0; i < ROUNDS; i++) {
        weir_budget_deposit(budget, 0);
        if (weir_budget_withdraw(budget, 0)) granted++;
    }
    return (void *)granted;
}

static weir_budget *make(const weir_budget_policy *policy) {
    weir_budget *budget = NULL;
    CHECK_STATUS(weir_budget_new(policy, 0, &budget), WEIR_OK);
    CHECK(budget != NULL);
    return budget;
}

int main(void) {
    /* The preset is Finagle's default: 10 s, 10 a second, 20 %. By hand:
     * cost 1000 / 0.2 = 5000, reserve 10 x 10 x 5000 = 500000: 100 retries
     * before any traffic. */
    weir_budget_policy preset = weir_budget_policy_preset();
    CHECK(preset.form == WEIR_BUDGET_PERCENT);
    CHECK(preset.ttl_ns == 10 * SEC && preset.min_per_s == 10 && preset.percent == (double)0.2);
    CHECK(preset.max_tokens == 10 && preset.token_ratio == (double)0.1 && preset.reserved == 0);
    weir_budget *budget = make(NULL);
    CHECK(weir_budget_tokens(budget, 0) == 500000);
    CHECK(weir_budget_left(budget, 0) == 100);
    for (int i = 0; i < 100; i++) CHECK(weir_budget_withdraw(budget, 0));
    CHECK(!weir_budget_withdraw(budget, 0));
    /* Five requests deposit 5 x 1000: one retry. */
    for (int i = 0; i < 5; i++) weir_budget_deposit(budget, 0);
    CHECK(weir_budget_left(budget, 0) == 1);
    /* The withdrawals of slice 0 expire when slice 10 begins, at 10 s
     * (slices of 1 s); the deposits too. */
    CHECK(weir_budget_left(budget, 9999 * MS) == 1);
    CHECK(weir_budget_left(budget, 10 * SEC) == 100);
    weir_budget_free(budget);

    /* gRPC A6's example: 10 tokens, 0.1 a success. By hand: failures take
     * 10 to 9, 8, 7, 6 (above 5: retry), then 5 (not above 5: no retry). */
    weir_budget_policy grpc = preset;
    grpc.form = WEIR_BUDGET_TOKENS;
    budget = make(&grpc);
    CHECK(weir_budget_tokens(budget, 0) == 10000);
    CHECK(weir_budget_left(budget, 0) == 4);
    for (int i = 0; i < 4; i++) CHECK(weir_budget_withdraw(budget, 0));
    CHECK(weir_budget_tokens(budget, 0) == 6000);
    CHECK(!weir_budget_withdraw(budget, 0));
    CHECK(weir_budget_tokens(budget, 0) == 5000);
    /* Eleven successes: 5 + 1.1 = 6.1; the next failure leaves 5.1: one. */
    for (int i = 0; i < 11; i++) weir_budget_deposit(budget, 0);
    CHECK(weir_budget_tokens(budget, 0) == 6100);
    CHECK(weir_budget_left(budget, 0) == 1);
    CHECK(weir_budget_withdraw(budget, INT64_MIN)); /* time is ignored */
    CHECK(!weir_budget_withdraw(budget, INT64_MAX));
    /* Never below 0, never above 10. */
    for (int i = 0; i < 50; i++) weir_budget_withdraw(budget, 0);
    CHECK(weir_budget_tokens(budget, 0) == 0);
    for (int i = 0; i < 500; i++) weir_budget_deposit(budget, 0);
    CHECK(weir_budget_tokens(budget, 0) == 10000);
    weir_budget_free(budget);

    /* Bad policies: a status each, and *out untouched. */
    weir_budget *untouched = (weir_budget *)&preset;
    weir_budget_policy bad = grpc;
    bad.max_tokens = 0;
    CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_BUDGET_MAX_TOKENS);
    bad.max_tokens = 1001;
    CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_BUDGET_MAX_TOKENS);
    bad.max_tokens = INT32_MIN;
    CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_BUDGET_MAX_TOKENS);
    bad = grpc;
    double ratios[] = {NAN, INFINITY, -INFINITY, -1.0, 0.0, -0.0, 0.0004, 4.9e-324};
    for (size_t i = 0; i < sizeof ratios / sizeof ratios[0]; i++) {
        bad.token_ratio = ratios[i];
        CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_BUDGET_TOKEN_RATIO);
    }
    bad = preset;
    int64_t ttls[] = {0, -1, SEC - 1, 60 * SEC + 1, INT64_MIN, INT64_MAX};
    for (size_t i = 0; i < sizeof ttls / sizeof ttls[0]; i++) {
        bad.ttl_ns = ttls[i];
        CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_BUDGET_TTL);
    }
    bad = preset;
    bad.min_per_s = -1;
    CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_BUDGET_MIN_PER_S);
    bad = preset;
    double percents[] = {NAN, -0.001, 1000.001, INFINITY};
    for (size_t i = 0; i < sizeof percents / sizeof percents[0]; i++) {
        bad.percent = percents[i];
        CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_BUDGET_PERCENT);
    }
    bad = preset;
    bad.form = 2;
    CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_UNKNOWN_KIND);
    bad.form = -1;
    CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_UNKNOWN_KIND);
    bad = preset;
    bad.reserved = 1;
    CHECK_STATUS(weir_budget_new(&bad, 0, &untouched), WEIR_ERR_RESERVED);
    /* The other form's fields are not read. */
    bad = preset;
    bad.max_tokens = -5;
    bad.token_ratio = NAN;
    budget = make(&bad);
    weir_budget_free(budget);
    CHECK(untouched == (weir_budget *)&preset);

    /* A misaligned policy is refused before it is read. */
    uint64_t buffer[8];
    memcpy(buffer, &preset, sizeof preset);
    const weir_budget_policy *odd = (const weir_budget_policy *)((char *)buffer + 4);
    CHECK_STATUS(weir_budget_new(odd, 0, &untouched), WEIR_ERR_MISALIGNED);

    /* NULL: a status, a refusal, zero; never a crash. */
    CHECK_STATUS(weir_budget_new(NULL, 0, NULL), WEIR_ERR_NULL);
    weir_budget_deposit(NULL, 0);
    CHECK(!weir_budget_withdraw(NULL, 0));
    CHECK(weir_budget_left(NULL, 0) == 0);
    CHECK(weir_budget_tokens(NULL, 0) == 0);
    weir_budget_free(NULL);

    /* Extremes of time and of the accepted constants. */
    weir_budget_policy wide = preset;
    wide.ttl_ns = 60 * SEC;
    wide.min_per_s = INT32_MAX;
    wide.percent = 1000.0;
    CHECK_STATUS(weir_budget_new(&wide, INT64_MAX, &budget), WEIR_OK);
    for (int i = 0; i < 100; i++) {
        weir_budget_deposit(budget, i % 2 ? INT64_MIN : INT64_MAX);
        CHECK(weir_budget_withdraw(budget, INT64_MAX));
    }
    CHECK(weir_budget_left(budget, INT64_MIN) > 0);
    weir_budget_free(budget);
    wide.percent = 4.9e-324; /* cost saturates at INT32_MAX */
    wide.min_per_s = 0;
    CHECK_STATUS(weir_budget_new(&wide, INT64_MIN, &budget), WEIR_OK);
    weir_budget_deposit(budget, INT64_MIN);
    CHECK(!weir_budget_withdraw(budget, INT64_MAX));
    CHECK(weir_budget_tokens(budget, INT64_MIN) == 1000);
    weir_budget_free(budget);

    /* Threads: 20 % of 4 x 5000 requests plus no reserve is exactly
     * 4000 retries however the calls interleave (cost 5000, deposit 1000,
     * one instant). */
    weir_budget_policy shared = preset;
    shared.min_per_s = 0;
    budget = make(&shared);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, hammer, budget) == 0);
    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        void *granted;
        CHECK(pthread_join(threads[i], &granted) == 0);
        total += (long)granted;
    }
    CHECK(total == 4000);
    CHECK(weir_budget_left(budget, 0) == 0);
    weir_budget_free(budget);
    CHECK_DONE();
}
