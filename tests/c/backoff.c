/* weir_backoff through the header: the presets, ceilings, each jitter's
 * range, more, the schedule (and what it writes into a short buffer), and
 * bad input: NULL policies and buffers, invalid policies, NaN and
 * out-of-range draws, negative previous delays, INT32/INT64 extremes. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_backoff) == 40, "weir_backoff size");
_Static_assert(_Alignof(weir_backoff) == 8, "weir_backoff alignment");
_Static_assert(offsetof(weir_backoff, base_ns) == 0, "base_ns offset");
_Static_assert(offsetof(weir_backoff, factor) == 8, "factor offset");
_Static_assert(offsetof(weir_backoff, cap_ns) == 16, "cap_ns offset");
_Static_assert(offsetof(weir_backoff, attempts) == 24, "attempts offset");
_Static_assert(offsetof(weir_backoff, jitter) == 28, "jitter offset");
_Static_assert(offsetof(weir_backoff, spread) == 32, "spread offset");

#define MS INT64_C(1000000)

static const double draws[] = {0.0, 0.25, 0.5, 0.999999999999, 1.0, 2.0, -1.0, NAN, INFINITY, -INFINITY};
enum { DRAWS = sizeof draws / sizeof draws[0] };

static weir_backoff with_jitter(int32_t jitter) {
    weir_backoff p = weir_backoff_preset();
    p.jitter = jitter;
    return p;
}

static void presets(void) {
    weir_backoff p = weir_backoff_preset();
    CHECK(p.base_ns == 100 * MS && p.factor == 2.0 && p.cap_ns == 1000 * MS);
    /* (double) rounds the constant to the field's type: on i386 (x87,
     * FLT_EVAL_METHOD 2) an inexact constant is otherwise compared in long
     * double precision and differs from the stored double. */
    CHECK(p.attempts == 3 && p.jitter == WEIR_BACKOFF_JITTER_SPREAD && p.spread == (double)0.2);
    CHECK_STATUS(weir_backoff_check(&p), WEIR_OK);
    CHECK_STATUS(weir_backoff_check(NULL), WEIR_OK);
    weir_backoff f = weir_backoff_full_jitter();
    CHECK(f.jitter == WEIR_BACKOFF_JITTER_FULL && f.base_ns == p.base_ns && f.cap_ns == p.cap_ns);
    CHECK(f.attempts == 3 && f.factor == 2.0);
    CHECK_STATUS(weir_backoff_check(&f), WEIR_OK);

    /* Scenario 5 (docs/design.md): the preset's schedule for draws of 0.5. */
    const double half[] = {0.5, 0.5};
    int64_t out[4] = {-7, -7, -7, -7};
    CHECK(weir_backoff_schedule(NULL, half, 2, out, 4) == 2);
    CHECK(out[0] == 100 * MS && out[1] == 200 * MS && out[2] == -7);
}

static void check_each_field(void) {
    /* Each field has its own status: the one that names it. */
    weir_backoff p;
    p = with_jitter(-1);
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_UNKNOWN_KIND);
    p = with_jitter(5);
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_UNKNOWN_KIND);
    p = with_jitter(INT32_MIN);
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_UNKNOWN_KIND);
    p = weir_backoff_preset(); p.base_ns = -1;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_BASE);
    p = weir_backoff_preset(); p.base_ns = INT64_MIN;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_BASE);
    p = weir_backoff_preset(); p.factor = NAN;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_FACTOR);
    p = weir_backoff_preset(); p.factor = INFINITY;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_FACTOR);
    p = weir_backoff_preset(); p.factor = 0.5;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_FACTOR);
    p = weir_backoff_preset(); p.cap_ns = -5;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_CAP);
    p = weir_backoff_preset(); p.attempts = 0;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_ATTEMPTS);
    p = weir_backoff_preset(); p.attempts = INT32_MIN;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_ATTEMPTS);
    p = weir_backoff_preset(); p.spread = NAN;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_SPREAD);
    p = weir_backoff_preset(); p.spread = -0.1;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_SPREAD);
    p = weir_backoff_preset(); p.spread = 1.5;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_SPREAD);
    /* The spread is checked whatever the jitter. */
    p = weir_backoff_full_jitter(); p.spread = 2.0;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_ERR_BACKOFF_SPREAD);
    /* The edges are valid. */
    p = weir_backoff_preset();
    p.base_ns = 0; p.factor = 1.0; p.cap_ns = 0; p.attempts = 1; p.spread = 0.0;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_OK);
    p.base_ns = INT64_MAX; p.factor = 1e308; p.cap_ns = INT64_MAX; p.attempts = INT32_MAX; p.spread = 1.0;
    CHECK_STATUS(weir_backoff_check(&p), WEIR_OK);
}

/* Every call answers an invalid policy with its documented neutral value. */
static void invalid_policies_get_neutral_answers(void) {
    weir_backoff bad[4];
    bad[0] = with_jitter(99);
    bad[1] = weir_backoff_preset(); bad[1].factor = NAN;
    bad[2] = weir_backoff_preset(); bad[2].cap_ns = -1;
    bad[3] = weir_backoff_preset(); bad[3].attempts = 0;
    for (int i = 0; i < 4; i++) {
        CHECK(weir_backoff_ceiling(&bad[i], 1) == -1);
        CHECK(weir_backoff_delay(&bad[i], 1, 0.5, 0) == -1);
        CHECK(!weir_backoff_more(&bad[i], 0));
        CHECK(!weir_backoff_more(&bad[i], 1));
        int64_t out[3] = {5, 5, 5};
        CHECK(weir_backoff_schedule(&bad[i], draws, DRAWS, out, 3) == 0);
        CHECK(out[0] == 5 && out[1] == 5 && out[2] == 5);
    }
}

static void ceilings(void) {
    weir_backoff p = weir_backoff_preset();
    CHECK(weir_backoff_ceiling(&p, 1) == 100 * MS);
    CHECK(weir_backoff_ceiling(&p, 2) == 200 * MS);
    CHECK(weir_backoff_ceiling(&p, 4) == 800 * MS);
    CHECK(weir_backoff_ceiling(&p, 5) == 1000 * MS);
    CHECK(weir_backoff_ceiling(NULL, 3) == 400 * MS);
    CHECK(weir_backoff_ceiling(&p, 0) == 0);
    CHECK(weir_backoff_ceiling(&p, -1) == 0);
    CHECK(weir_backoff_ceiling(&p, INT32_MIN) == 0);
    CHECK(weir_backoff_ceiling(&p, 10000) == 1000 * MS);
    CHECK(weir_backoff_ceiling(&p, INT32_MAX) == 1000 * MS);
    /* Huge factor and base: the cap, never an overflow. */
    p.factor = 1e308;
    CHECK(weir_backoff_ceiling(&p, 3) == 1000 * MS);
    p.base_ns = INT64_MAX; p.cap_ns = INT64_MAX;
    CHECK(weir_backoff_ceiling(&p, 1) == INT64_MAX);
    CHECK(weir_backoff_ceiling(&p, 10000) == INT64_MAX);
    p.base_ns = 0;
    CHECK(weir_backoff_ceiling(&p, 10000) == 0);
}

static void jitter_ranges(void) {
    const int32_t retries[] = {1, 2, 3, 4, 10000, INT32_MAX};
    const int64_t previous[] = {INT64_MIN, -1, 0, 100 * MS, 400 * MS, INT64_MAX};
    for (int32_t kind = WEIR_BACKOFF_JITTER_RIGID; kind <= WEIR_BACKOFF_JITTER_SPREAD; kind++) {
        weir_backoff p = with_jitter(kind);
        for (size_t r = 0; r < sizeof retries / sizeof retries[0]; r++) {
            int64_t c = weir_backoff_ceiling(&p, retries[r]);
            int64_t low = c, high = c;
            if (kind == WEIR_BACKOFF_JITTER_FULL) low = 0;
            if (kind == WEIR_BACKOFF_JITTER_EQUAL) low = c - c / 2;
            if (kind == WEIR_BACKOFF_JITTER_DECORRELATED) { low = 100 * MS; high = 1000 * MS; }
            if (kind == WEIR_BACKOFF_JITTER_SPREAD) { low = c - c / 5; high = c + c / 5; }
            for (size_t q = 0; q < sizeof previous / sizeof previous[0]; q++) {
                for (int d = 0; d < DRAWS; d++) {
                    int64_t delay = weir_backoff_delay(&p, retries[r], draws[d], previous[q]);
                    CHECK(delay >= low && delay <= high);
                }
            }
        }
        for (int d = 0; d < DRAWS; d++) {
            CHECK(weir_backoff_delay(&p, 0, draws[d], 0) == 0);
            CHECK(weir_backoff_delay(&p, INT32_MIN, draws[d], 0) == 0);
        }
    }
    /* NaN and negative draws count as 0, the low end of each range. */
    weir_backoff full = weir_backoff_full_jitter();
    CHECK(weir_backoff_delay(&full, 2, NAN, 0) == 0);
    CHECK(weir_backoff_delay(&full, 2, -1.0, 0) == 0);
    CHECK(weir_backoff_delay(&full, 2, 0.5, 0) == 100 * MS);
    CHECK(weir_backoff_delay(NULL, 1, NAN, 0) == 80 * MS);
    CHECK(weir_backoff_delay(NULL, 1, 0.5, 0) == 100 * MS);
    /* Decorrelated: a previous below the base (negative too, and 0 before
     * the first retry) counts as the base, so it draws from [base, 3 × base]. */
    weir_backoff dec = with_jitter(WEIR_BACKOFF_JITTER_DECORRELATED);
    CHECK(weir_backoff_delay(&dec, 1, 0.0, 0) == 100 * MS);
    CHECK(weir_backoff_delay(&dec, 1, 0.5, 0) == 200 * MS);
    CHECK(weir_backoff_delay(&dec, 1, 0.5, -5) == 200 * MS);
    CHECK(weir_backoff_delay(&dec, 1, 0.5, INT64_MIN) == 200 * MS);
    CHECK(weir_backoff_delay(&dec, 1, 0.999, 0) > 299 * MS);
    CHECK(weir_backoff_delay(&dec, 1, 0.5, 100 * MS) == 200 * MS);
    CHECK(weir_backoff_delay(&dec, 1, 0.999, INT64_MAX) <= 1000 * MS);
    /* A base above the cap: the range closes at the cap, never inverted. */
    dec.base_ns = 2000 * MS;
    for (int d = 0; d < DRAWS; d++) CHECK(weir_backoff_delay(&dec, 1, draws[d], 0) == 1000 * MS);
}

static void more_counts_the_first_attempt(void) {
    CHECK(weir_backoff_more(NULL, 0));
    CHECK(weir_backoff_more(NULL, 1));
    CHECK(weir_backoff_more(NULL, 2));
    CHECK(!weir_backoff_more(NULL, 3));
    CHECK(!weir_backoff_more(NULL, INT32_MAX));
    CHECK(!weir_backoff_more(NULL, -1));
    CHECK(!weir_backoff_more(NULL, INT32_MIN));
    weir_backoff once = weir_backoff_preset();
    once.attempts = 1;
    CHECK(weir_backoff_more(&once, 0));
    CHECK(!weir_backoff_more(&once, 1));
}

static void schedules(void) {
    /* The caller sizes the buffer from the policy (attempts - 1 delays);
     * with no buffer nothing is written and 0 comes back. The same draws
     * give the same schedule. */
    weir_backoff p = with_jitter(WEIR_BACKOFF_JITTER_DECORRELATED);
    p.attempts = 6;
    CHECK(weir_backoff_schedule(&p, NULL, 0, NULL, 0) == 0);
    CHECK(weir_backoff_schedule(&p, NULL, 0, NULL, 5) == 0);
    const double randoms[] = {0.3, 0.9, 0.1, 0.7, 0.5};
    int64_t a[5], b[5];
    CHECK(weir_backoff_schedule(&p, randoms, 5, a, 5) == 5);
    CHECK(weir_backoff_schedule(&p, randoms, 5, b, 5) == 5);
    int64_t previous = p.base_ns;
    for (int i = 0; i < 5; i++) {
        CHECK(a[i] == b[i]);
        previous = weir_backoff_delay(&p, i + 1, randoms[i], previous);
        CHECK(a[i] == previous);
    }
    /* Draws running short (or NULL) use 0: Full's zero. */
    weir_backoff full = weir_backoff_full_jitter();
    full.attempts = 4;
    int64_t out[3] = {-1, -1, -1};
    CHECK(weir_backoff_schedule(&full, randoms, 1, out, 3) == 3);
    CHECK(out[0] == 30 * MS && out[1] == 0 && out[2] == 0);
    CHECK(weir_backoff_schedule(&full, NULL, 3, out, 3) == 3);
    CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0);
    /* A short buffer gets what fits, and the return says how many that
     * was, so out[0..returned) is always inside the buffer; a NULL one gets
     * nothing and 0. */
    int64_t two[3] = {-1, -1, -1};
    CHECK(weir_backoff_schedule(&full, randoms, 5, two, 2) == 2);
    CHECK(two[0] == 30 * MS && two[1] == 180 * MS && two[2] == -1);
    int64_t one[1] = {-1};
    CHECK(weir_backoff_schedule(&full, randoms, 5, one, 1) == 1);
    CHECK(one[0] == 30 * MS);
    CHECK(weir_backoff_schedule(&full, randoms, 5, one, 0) == 0);
    CHECK(weir_backoff_schedule(&full, randoms, 5, NULL, 99) == 0);
    /* NaN draws in a schedule are zeros. */
    const double nans[] = {NAN, NAN, NAN};
    CHECK(weir_backoff_schedule(&full, nans, 3, out, 3) == 3);
    CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0);
    /* One attempt: no retries, nothing written. */
    full.attempts = 1;
    out[0] = -1;
    CHECK(weir_backoff_schedule(&full, randoms, 5, out, 3) == 0);
    CHECK(out[0] == -1);
    /* The most attempts there can be: only what fits is walked. */
    full.attempts = INT32_MAX;
    CHECK(weir_backoff_schedule(&full, NULL, 0, out, 3) == 3);
    CHECK(out[0] == 0);
}

int main(void) {
    presets();
    check_each_field();
    invalid_policies_get_neutral_answers();
    ceilings();
    jitter_ranges();
    more_counts_the_first_attempt();
    schedules();
    CHECK_DONE();
}
