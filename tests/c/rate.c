/* weir_rate through the header: the window step by step, accuracy at high
 * rates, bad input, threads hammering one word, and forked processes
 * sharing one word through mmap(MAP_SHARED). */
#define _DEFAULT_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "weir.h"
#include "workers.h"

_Static_assert(sizeof(weir_rate) == 8, "weir_rate is one word");
_Static_assert(_Alignof(weir_rate) == 8, "weir_rate aligns as a uint64_t");
_Static_assert(offsetof(weir_rate, state) == 0, "weir_rate.state");
_Static_assert(sizeof(weir_rate_limit) == 16, "weir_rate_limit size");
_Static_assert(_Alignof(weir_rate_limit) == 8, "weir_rate_limit align");
_Static_assert(offsetof(weir_rate_limit, interval_ns) == 0, "interval_ns");
_Static_assert(offsetof(weir_rate_limit, interval_frac) == 8, "interval_frac");
_Static_assert(offsetof(weir_rate_limit, burst) == 12, "burst");

#define MS INT64_C(1000000)
#define SEC INT64_C(1000000000)

enum { THREADS = 4, CALLS = 20000, WORKERS = 4, BURST = 7 };

static weir_rate_limit make(double per_s, int64_t burst) {
    weir_rate_limit limit;
    CHECK_STATUS(weir_rate_limit_new(per_s, burst, &limit), WEIR_OK);
    return limit;
}

static void window_step_by_step(void) {
    weir_rate_limit limit = make(1.0, 3);
    CHECK(limit.burst == 3);
    CHECK(limit.interval_ns == (uint64_t)SEC);
    weir_rate word = {0};
    int64_t t0 = 7 * SEC; /* a multiple of 512 ns: the window opens exactly at t0 */
    CHECK(weir_rate_allow(&word, &limit, t0));
    CHECK(weir_rate_allow(&word, &limit, t0 + 1 * MS));
    CHECK(weir_rate_allow(&word, &limit, t0 + 2 * MS));
    /* Full: refused, and a refusal writes nothing. */
    uint64_t full = word.state;
    CHECK(!weir_rate_allow(&word, &limit, t0 + 3 * MS));
    CHECK(!weir_rate_allow(&word, &limit, t0 + 2 * SEC));
    CHECK(!weir_rate_allow(&word, &limit, t0 + 3 * SEC - 1));
    CHECK(word.state == full);
    CHECK(weir_rate_next(&word, &limit, t0 + 2 * MS) == 3 * SEC - 2 * MS);
    CHECK(weir_rate_next(&word, &limit, t0 + 3 * SEC - 1) == 1);
    CHECK(weir_rate_next(&word, &limit, t0 + 3 * SEC) == 0);
    /* Expired at 3 s: a new window opens. */
    CHECK(weir_rate_allow(&word, &limit, t0 + 3 * SEC));

    /* Each allowed event pushes the expiry back by one interval. */
    weir_rate pushed = {0};
    CHECK(weir_rate_allow(&pushed, &limit, t0));
    CHECK(weir_rate_allow(&pushed, &limit, t0 + 1 * MS));
    CHECK(weir_rate_next(&pushed, &limit, t0 + 1 * MS) == 0); /* room left */
    CHECK(weir_rate_allow(&pushed, &limit, t0 + 1500 * MS));  /* before 2 s */
    CHECK(!weir_rate_allow(&pushed, &limit, t0 + 2500 * MS)); /* pushed to 3 s */
    CHECK(weir_rate_next(&pushed, &limit, t0 + 2500 * MS) == 500 * MS);
    CHECK(weir_rate_allow(&pushed, &limit, t0 + 3 * SEC));

    /* Time going backwards counts against the open window. */
    weir_rate back = {0};
    CHECK(weir_rate_allow(&back, &limit, 100 * SEC));
    CHECK(weir_rate_allow(&back, &limit, 50 * SEC));
    CHECK(weir_rate_allow(&back, &limit, 0));
    CHECK(!weir_rate_allow(&back, &limit, 0));
    CHECK(!weir_rate_allow(&back, &limit, 103 * SEC - 1));
    CHECK(weir_rate_allow(&back, &limit, 103 * SEC));
}

/* Events every `spacing` ns for `duration` ns: allowed over promised. */
static double admitted_ratio(double per_s, int64_t burst, int64_t start, int64_t spacing,
                             int64_t duration) {
    weir_rate_limit limit = make(per_s, burst);
    weir_rate word = {0};
    long allowed = 0;
    for (int64_t now = start; now < start + duration; now += spacing) {
        allowed += weir_rate_allow(&word, &limit, now);
    }
    return (double)allowed / (per_s * (double)duration / 1e9);
}

static void accuracy(void) {
    double fast = admitted_ratio(1e6, 100, 1234567, 37, SEC / 5);
    double slow = admitted_ratio(1e4, 1, 987654321, 997, SEC);
    printf("admitted / promised: 1e6/s burst 100: %.4f; 1e4/s burst 1: %.4f\n", fast, slow);
    CHECK(fabs(fast - 1.0) < 0.01);
    CHECK(fabs(slow - 1.0) < 0.01);
}

static void bad_limits(void) {
    weir_rate_limit limit = {.interval_ns = 42, .interval_frac = 42, .burst = 42};
    const weir_rate_limit untouched = limit;
    CHECK_STATUS(weir_rate_limit_new(1.0, 0, &limit), WEIR_ERR_RATE_BURST);
    CHECK_STATUS(weir_rate_limit_new(1.0, 1024, &limit), WEIR_ERR_RATE_BURST);
    CHECK_STATUS(weir_rate_limit_new(1.0, -1, &limit), WEIR_ERR_RATE_BURST);
    CHECK_STATUS(weir_rate_limit_new(1.0, INT64_MIN, &limit), WEIR_ERR_RATE_BURST);
    CHECK_STATUS(weir_rate_limit_new(NAN, 1, &limit), WEIR_ERR_NOT_FINITE);
    CHECK_STATUS(weir_rate_limit_new(INFINITY, 1, &limit), WEIR_ERR_NOT_FINITE);
    CHECK_STATUS(weir_rate_limit_new(-INFINITY, 1, &limit), WEIR_ERR_NOT_FINITE);
    CHECK_STATUS(weir_rate_limit_new(-5.0, 1, &limit), WEIR_ERR_NEGATIVE);
    CHECK_STATUS(weir_rate_limit_new(0.0, 1, &limit), WEIR_ERR_RATE_ZERO);
    CHECK_STATUS(weir_rate_limit_new(1e5, 1, &limit), WEIR_ERR_RATE_TOO_FAST);
    CHECK_STATUS(weir_rate_limit_new(2e6, 100, &limit), WEIR_ERR_RATE_TOO_FAST);
    CHECK_STATUS(weir_rate_limit_new(1e-12, 1, &limit), WEIR_ERR_RATE_TOO_SLOW);
    CHECK(memcmp(&limit, &untouched, sizeof limit) == 0);
    CHECK_STATUS(weir_rate_limit_new(1.0, 1, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_rate_limit_new(1e9 / WEIR_RATE_MIN_WINDOW_NS, 1, &limit), WEIR_OK);
    CHECK_STATUS(weir_rate_limit_new(1.0 / 3600.0, WEIR_RATE_MAX_BURST, &limit), WEIR_OK);
    for (int code = 400; code <= 404; code++) {
        CHECK(strcmp(weir_status_str(code), weir_status_str(-1)) != 0);
    }
}

static void bad_input(void) {
    weir_rate_limit limit = make(1.0, 2);
    weir_rate word = {0};
    /* NULL word or limit: refused, and never a crash. */
    CHECK(!weir_rate_allow(NULL, &limit, 0));
    CHECK(!weir_rate_allow(&word, NULL, 0));
    CHECK(weir_rate_next(NULL, &limit, 0) == INT64_MAX);
    CHECK(weir_rate_next(&word, NULL, 0) == INT64_MAX);
    /* A limit weir did not make: zeroed, or edited by hand. */
    weir_rate_limit zero = {0};
    CHECK(!weir_rate_allow(&word, &zero, 0));
    weir_rate_limit edited = limit;
    edited.burst = 5000;
    CHECK(!weir_rate_allow(&word, &edited, 0));
    edited = limit;
    edited.interval_ns = 1;
    CHECK(!weir_rate_allow(&word, &edited, 0));
    CHECK(weir_rate_next(&word, &edited, 0) == INT64_MAX);
    /* A negative now is refused; the extremes of the clock are not a crash. */
    CHECK(!weir_rate_allow(&word, &limit, -1));
    CHECK(!weir_rate_allow(&word, &limit, INT64_MIN));
    CHECK(weir_rate_next(&word, &limit, INT64_MIN) == INT64_MAX);
    CHECK(word.state == 0);
    /* A misaligned word is refused. (The pointer is made from an integer:
     * converting a char pointer to a misaligned weir_rate pointer would
     * itself be undefined in C.) */
    alignas(8) unsigned char bytes[16] = {0};
    weir_rate *crooked = (weir_rate *)((uintptr_t)bytes + 4);
    CHECK(!weir_rate_allow(crooked, &limit, 0));
    CHECK(weir_rate_next(crooked, &limit, 0) == INT64_MAX);
    for (size_t i = 0; i < sizeof bytes; i++) CHECK(bytes[i] == 0);
    /* After all that the word still behaves. */
    CHECK(weir_rate_allow(&word, &limit, INT64_MAX - 3 * SEC));
    CHECK(weir_rate_allow(&word, &limit, INT64_MAX - 3 * SEC));
    CHECK(!weir_rate_allow(&word, &limit, INT64_MAX - 3 * SEC));
    CHECK(weir_rate_allow(&word, &limit, INT64_MAX));
    CHECK(weir_rate_allow(&word, &limit, INT64_MAX));
    /* That window runs past the end of the clock: it never expires. */
    CHECK(!weir_rate_allow(&word, &limit, INT64_MAX));
    CHECK(weir_rate_next(&word, &limit, INT64_MAX) > 0);
}

struct shared {
    weir_rate word;
    weir_rate_limit limit;
};

static void *hammer(void *arg) {
    struct shared *s = arg;
    long allowed = 0;
    for (int i = 0; i < CALLS; i++) allowed += weir_rate_allow(&s->word, &s->limit, SEC);
    return (void *)allowed;
}

static void threads(void) {
    struct shared s = {.word = {0}, .limit = make(10.0, BURST)};
    pthread_t ids[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&ids[i], NULL, hammer, &s) == 0);
    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        void *allowed;
        CHECK(pthread_join(ids[i], &allowed) == 0);
        total += (long)allowed;
    }
    printf("threads: %d x %d calls in one window, %ld allowed (burst %d)\n", THREADS, CALLS, total,
           BURST);
    CHECK(total == BURST);
}

static long hammer_in_process(void *arg) {
    return (long)hammer(arg);
}

static void processes(void) {
    /* One page shared by the parent and its forked workers. */
    size_t size = 4096;
    void *page = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    struct shared *s = page;
    s->word.state = 0;
    s->limit = make(10.0, BURST);
    long total = fork_workers(WORKERS, hammer_in_process, s);
    printf("processes: %d forked workers x %d calls on one shared word, %ld allowed (burst %d)\n",
           WORKERS, CALLS, total, BURST);
    CHECK(total == BURST);
    CHECK(weir_rate_next(&s->word, &s->limit, SEC) == BURST * SEC / 10);
    CHECK(munmap(page, size) == 0);
}

/* Windows opened 511 ns past the 512 ns grid. Each holds exactly
 * its burst, and calls on that phase stay within burst + span / interval. */
static void phase_511(void) {
    weir_rate_limit fast = make(19e6, 1023);
    weir_rate word = {0};
    long admitted = 0;
    for (int i = 0; i < 100000; i++) admitted += weir_rate_allow(&word, &fast, 511);
    CHECK(admitted == 1023);

    weir_rate_limit limit = make(977517.0, 100);
    word.state = 0;
    admitted = 0;
    for (int64_t now = 511; now < 511 + SEC; now += 512) admitted += weir_rate_allow(&word, &limit, now);
    /* interval 1023.000... ns: burst + floor(1e9 / interval) = 100 + 977,516. */
    printf("phase 511: %ld admitted in 1 s at 977517/s, burst 100\n", admitted);
    CHECK(admitted <= 100 + 977516);
    CHECK(admitted >= 977517 * 99 / 100);
}

int main(void) {
    window_step_by_step();
    phase_511();
    accuracy();
    bad_limits();
    bad_input();
    threads();
    processes();
    CHECK_DONE();
}
