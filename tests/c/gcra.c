/* weir_gcra through the header: the bucket step by step, every phase, the
 * clock's ends, bad input, threads hammering one word, and forked
 * processes sharing one word through mmap(MAP_SHARED). */
#define _DEFAULT_SOURCE
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "weir.h"
#include "workers.h"

_Static_assert(sizeof(weir_gcra) == 8, "weir_gcra is one word");
_Static_assert(_Alignof(weir_gcra) == 8, "weir_gcra is 8-aligned on every host");
_Static_assert(sizeof(weir_gcra_limit) == 24, "weir_gcra_limit size");
_Static_assert(offsetof(weir_gcra_limit, per_token) == 0, "per_token");
_Static_assert(offsetof(weir_gcra_limit, tolerance) == 8, "tolerance");
_Static_assert(offsetof(weir_gcra_limit, shift) == 16, "shift");
_Static_assert(offsetof(weir_gcra_limit, reserved) == 20, "reserved");

#define SEC INT64_C(1000000000)

enum { THREADS = 4, CALLS = 20000, WORKERS = 4, BURST = 7 };

static weir_gcra_limit make(double per_s, int64_t burst) {
    weir_gcra_limit limit;
    CHECK_STATUS(weir_gcra_limit_new(per_s, burst, &limit), WEIR_OK);
    return limit;
}

static void bucket_step_by_step(void) {
    weir_gcra_limit limit = make(1.0, 3);
    CHECK(limit.shift == 0 && limit.per_token == (uint64_t)SEC && limit.tolerance == 3 * SEC);
    weir_gcra word = {0};
    CHECK(weir_gcra_room(&word, &limit, 10 * SEC) == 3);
    for (int i = 0; i < 3; i++) CHECK(weir_gcra_allow(&word, &limit, 10 * SEC));
    CHECK(!weir_gcra_allow(&word, &limit, 10 * SEC));
    CHECK(weir_gcra_next(&word, &limit, 10 * SEC) == SEC);
    CHECK(weir_gcra_room(&word, &limit, 10 * SEC) == 0);
    CHECK(!weir_gcra_allow(&word, &limit, 11 * SEC - 1));
    /* limit_req's shape: one more every second, not a window's wait. */
    CHECK(weir_gcra_allow(&word, &limit, 11 * SEC));
    CHECK(weir_gcra_allow(&word, &limit, 12 * SEC));
    CHECK(!weir_gcra_allow_n(&word, &limit, 13 * SEC, 2));
    CHECK(weir_gcra_allow_n(&word, &limit, 14 * SEC, 2));
}

static void every_phase(void) {
    const double rates[] = {1.0, 3.0, 1e6, 7.5e8, 1e9};
    const int64_t nows[] = {0, 1, 511, 512, 1023, 5 * SEC + 511, INT64_C(1) << 57};
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        weir_gcra_limit limit = make(rates[r], 100);
        for (size_t n = 0; n < sizeof nows / sizeof nows[0]; n++) {
            weir_gcra word = {0};
            long admitted = 0;
            for (int i = 0; i < 1000; i++) admitted += weir_gcra_allow(&word, &limit, nows[n]);
            CHECK(admitted == 100);
        }
    }
}

static void bad_input(void) {
    weir_gcra_limit out;
    memset(&out, 0xab, sizeof out);
    weir_gcra_limit before = out;
    CHECK_STATUS(weir_gcra_limit_new(1.0, 0, &out), WEIR_ERR_GCRA_BURST);
    CHECK_STATUS(weir_gcra_limit_new(1.0, WEIR_GCRA_MAX_BURST + 1, &out), WEIR_ERR_GCRA_BURST);
    CHECK_STATUS(weir_gcra_limit_new(NAN, 1, &out), WEIR_ERR_NOT_FINITE);
    CHECK_STATUS(weir_gcra_limit_new(INFINITY, 1, &out), WEIR_ERR_NOT_FINITE);
    CHECK_STATUS(weir_gcra_limit_new(-1.0, 1, &out), WEIR_ERR_NEGATIVE);
    CHECK_STATUS(weir_gcra_limit_new(0.0, 1, &out), WEIR_ERR_GCRA_ZERO);
    CHECK_STATUS(weir_gcra_limit_new(1.7e10, 1, &out), WEIR_ERR_GCRA_TOO_FAST);
    CHECK_STATUS(weir_gcra_limit_new(1e-12, 1, &out), WEIR_ERR_GCRA_TOO_SLOW);
    CHECK_STATUS(weir_gcra_limit_new(1.0, 1, NULL), WEIR_ERR_NULL);
    CHECK(memcmp(&out, &before, sizeof out) == 0);

    weir_gcra_limit limit = make(1.0, 2);
    weir_gcra_limit broken = limit;
    broken.reserved = 1;
    weir_gcra word = {0};
    CHECK(!weir_gcra_allow(&word, &broken, 0));
    broken = limit;
    broken.tolerance = 1;
    CHECK(!weir_gcra_allow(&word, &broken, 0));
    CHECK(weir_gcra_next(&word, &broken, 0) == INT64_MAX);
    CHECK(!weir_gcra_allow(&word, NULL, 0));
    CHECK(!weir_gcra_allow(NULL, &limit, 0));
    CHECK(!weir_gcra_allow(&word, &limit, -1));
    CHECK(weir_gcra_next(&word, &limit, -1) == INT64_MAX);
    CHECK(!weir_gcra_allow_n(&word, &limit, 0, 3));
    CHECK(!weir_gcra_allow_n(&word, &limit, 0, 0));
    _Alignas(8) unsigned char bytes[16] = {0};
    weir_gcra *crooked = (weir_gcra *)(void *)(bytes + 1);
    CHECK(!weir_gcra_allow(crooked, &limit, 0));
    CHECK(weir_gcra_next(crooked, &limit, 0) == INT64_MAX);
    for (size_t i = 0; i < sizeof bytes; i++) CHECK(bytes[i] == 0);
    CHECK(word.state == 0);
    /* The clock's far end: time stands still, nothing comes back. */
    CHECK(weir_gcra_allow(&word, &limit, INT64_MAX));
    CHECK(weir_gcra_allow(&word, &limit, INT64_MAX));
    CHECK(!weir_gcra_allow(&word, &limit, INT64_MAX));
    CHECK(weir_gcra_next(&word, &limit, INT64_MAX) == INT64_MAX);
    /* Time going backwards finds less room, never more. */
    word.state = 0;
    CHECK(weir_gcra_allow(&word, &limit, 100 * SEC));
    CHECK(weir_gcra_allow(&word, &limit, 100 * SEC));
    CHECK(!weir_gcra_allow(&word, &limit, 0));
}

struct shared {
    weir_gcra word;
    weir_gcra_limit limit;
};

static void *hammer(void *arg) {
    struct shared *s = arg;
    long allowed = 0;
    for (int i = 0; i < CALLS; i++) allowed += weir_gcra_allow(&s->word, &s->limit, SEC);
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
    printf("threads: %d x %d calls at one instant, %ld allowed (burst %d)\n", THREADS, CALLS, total,
           BURST);
    CHECK(total == BURST);
}

static long hammer_in_process(void *arg) {
    return (long)hammer(arg);
}

static void processes(void) {
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
    CHECK(weir_gcra_next(&s->word, &s->limit, SEC) == SEC / 10);
    CHECK(munmap(page, size) == 0);
}

int main(void) {
    bucket_step_by_step();
    every_phase();
    bad_input();
    if (weir_words_shareable() == WEIR_OK) {
        threads();
        processes();
    }
    CHECK_DONE();
}
