/* weir_keyed through the header: every call and status, both word kinds,
 * the three overflow policies, a model check against lone GCRA words (one
 * per key, no table), threads on one table, and forked processes deciding
 * on one table laid in memory mapped MAP_SHARED: a key's admits across
 * them are a lone word's, and its counts every process's. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "weir.h"
#include "workers.h"

_Static_assert(WEIR_KEYED_SLOTS == 8, "eight slots a bucket");
_Static_assert(WEIR_KEYED_BUCKET_BYTES == 128, "two cache lines");
_Static_assert(WEIR_KEYED_MAX_BUCKETS == UINT64_C(4294967296), "2^32 buckets");
_Static_assert(WEIR_REGION_KEYED == 10, "the next region kind");
_Static_assert(sizeof(weir_keyed_reading) == 40, "the reading is 40 bytes");

#define SEC INT64_C(1000000000)
#define SEED0 UINT64_C(0x243f6a8885a308d3)
#define SEED1 UINT64_C(0x13198a2e03707344)

enum { BURST = 5, THREADS = 4, WORKERS = 4, KEYS = 100 };

static weir_gcra_limit gcra_limit(double per_s, int64_t burst) {
    weir_gcra_limit limit;
    CHECK_STATUS(weir_gcra_limit_new(per_s, burst, &limit), WEIR_OK);
    return limit;
}

static weir_rate_limit rate_limit(double per_s, int64_t burst) {
    weir_rate_limit limit;
    CHECK_STATUS(weir_rate_limit_new(per_s, burst, &limit), WEIR_OK);
    return limit;
}

static weir_keyed *make(uint64_t buckets, const weir_gcra_limit *limit, uint32_t overflow) {
    weir_keyed *table = NULL;
    CHECK_STATUS(weir_keyed_new(buckets, limit, overflow, SEED0, SEED1, &table), WEIR_OK);
    CHECK(table != NULL);
    return table;
}

static uint32_t decide(const weir_keyed *table, int64_t now, uint64_t key, int64_t n) {
    uint32_t decision = 99;
    CHECK_STATUS(weir_keyed_decide(table, now, &key, sizeof key, n, &decision), WEIR_OK);
    return decision;
}

static weir_keyed_reading read_table(const weir_keyed *table) {
    weir_keyed_reading reading;
    CHECK_STATUS(weir_keyed_read(table, &reading), WEIR_OK);
    return reading;
}

static void constructors_check_their_arguments(void) {
    weir_gcra_limit limit = gcra_limit(1.0, BURST);
    weir_rate_limit rate = rate_limit(1.0, BURST);
    weir_keyed *table = (weir_keyed *)&limit; /* a sentinel: never written on error */
    weir_keyed *const sentinel = table;
    CHECK_STATUS(weir_keyed_new(4, &limit, 0, 1, 2, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_new(4, NULL, 0, 1, 2, &table), WEIR_ERR_NULL);
    weir_gcra_limit bad = limit;
    bad.reserved = 1;
    CHECK_STATUS(weir_keyed_new(4, &bad, 0, 1, 2, &table), WEIR_ERR_GCRA_LIMIT_INVALID);
    CHECK_STATUS(weir_keyed_new(4, &limit, 3, 1, 2, &table), WEIR_ERR_KEYED_OVERFLOW);
    CHECK_STATUS(weir_keyed_new(0, &limit, 0, 1, 2, &table), WEIR_ERR_KEYED_BUCKETS);
    CHECK_STATUS(weir_keyed_new(WEIR_KEYED_MAX_BUCKETS + 1, &limit, 0, 1, 2, &table),
                 WEIR_ERR_KEYED_BUCKETS);
    /* The limit is checked before the policy, the policy before the size. */
    CHECK_STATUS(weir_keyed_new(0, &bad, 3, 1, 2, &table), WEIR_ERR_GCRA_LIMIT_INVALID);
    CHECK_STATUS(weir_keyed_new(0, &limit, 3, 1, 2, &table), WEIR_ERR_KEYED_OVERFLOW);
    weir_rate_limit bad_rate = {0, 0, 0};
    CHECK_STATUS(weir_keyed_new_rate(4, &bad_rate, 0, 1, 2, &table), WEIR_ERR_RATE_LIMIT_INVALID);
    CHECK_STATUS(weir_keyed_new_rate(4, NULL, 0, 1, 2, &table), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_new_rate(4, &rate, 7, 1, 2, &table), WEIR_ERR_KEYED_OVERFLOW);
    CHECK_STATUS(weir_keyed_new_rate(0, &rate, 0, 1, 2, &table), WEIR_ERR_KEYED_BUCKETS);
    CHECK(table == sentinel);
    CHECK_STATUS(weir_keyed_new_rate(4, &rate, WEIR_KEYED_OVERFLOW_SHARED, 1, 2, &table), WEIR_OK);
    weir_keyed_reading reading = read_table(table);
    CHECK(reading.buckets == 4 && reading.slots == 32 && reading.occupied == 0);
    CHECK(reading.overflows == 0 && reading.kind == WEIR_KEYED_KIND_RATE);
    CHECK(reading.overflow_policy == WEIR_KEYED_OVERFLOW_SHARED);
    weir_keyed_free(table);
    weir_keyed_free(NULL);
}

/* One bucket: eight slots for every key, so the ninth active key
 * overflows, and each policy answers it. */
static void each_policy_answers_an_overflow(void) {
    weir_gcra_limit limit = gcra_limit(1.0, 2);
    const uint32_t policies[3] = {WEIR_KEYED_OVERFLOW_REFUSE, WEIR_KEYED_OVERFLOW_ADMIT,
                                  WEIR_KEYED_OVERFLOW_SHARED};
    const uint32_t answers[3][3] = {
        {WEIR_KEYED_OVERFLOW_REFUSED, WEIR_KEYED_OVERFLOW_REFUSED, WEIR_KEYED_OVERFLOW_REFUSED},
        {WEIR_KEYED_OVERFLOW_ADMITTED, WEIR_KEYED_OVERFLOW_ADMITTED, WEIR_KEYED_OVERFLOW_ADMITTED},
        /* The shared word has the table's limit: a burst of 2. */
        {WEIR_KEYED_OVERFLOW_ADMITTED, WEIR_KEYED_OVERFLOW_ADMITTED, WEIR_KEYED_OVERFLOW_REFUSED},
    };
    for (int p = 0; p < 3; p++) {
        weir_keyed *table = make(1, &limit, policies[p]);
        for (uint64_t key = 0; key < 8; key++) {
            CHECK(decide(table, SEC, key, 2) == WEIR_KEYED_ALLOWED);
            CHECK(decide(table, SEC, key, 1) == WEIR_KEYED_REFUSED);
        }
        for (int i = 0; i < 3; i++) {
            CHECK(decide(table, SEC, 8, 1) == answers[p][i]);
        }
        uint64_t ninth = 8;
        CHECK(weir_keyed_allow(table, SEC, &ninth, sizeof ninth) == (p == 1));
        weir_keyed_reading reading = read_table(table);
        CHECK(reading.occupied == 8 && reading.overflows == 4);
        CHECK(reading.kind == WEIR_KEYED_KIND_GCRA && reading.overflow_policy == policies[p]);
        /* At 3 s key 0's word is at rest: the ninth key takes its slot,
         * losing nothing, and gets its own whole burst. */
        CHECK(decide(table, 3 * SEC, 8, 2) == WEIR_KEYED_ALLOWED);
        CHECK(read_table(table).occupied == 8);
        weir_keyed_free(table);
    }
}

static void calls_check_their_arguments(void) {
    weir_gcra_limit limit = gcra_limit(1.0, BURST);
    weir_keyed *table = make(4, &limit, WEIR_KEYED_OVERFLOW_REFUSE);
    const char key[] = "client-1";
    uint32_t decision = 99;
    CHECK_STATUS(weir_keyed_decide(NULL, 0, key, 8, 1, &decision), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_decide(table, 0, key, 8, 1, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_decide(table, 0, NULL, 8, 1, &decision), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_decide(table, 0, key, SIZE_MAX, 1, &decision), WEIR_ERR_KEYED_COUNT);
    CHECK_STATUS(weir_keyed_decide(table, -1, key, 8, 1, &decision), WEIR_ERR_NEGATIVE);
    CHECK_STATUS(weir_keyed_decide(table, 0, key, 8, 0, &decision), WEIR_ERR_KEYED_COUNT);
    CHECK_STATUS(weir_keyed_decide(table, 0, key, 8, BURST + 1, &decision), WEIR_ERR_KEYED_COUNT);
    CHECK_STATUS(weir_keyed_decide(table, 0, key, 8, -1, &decision), WEIR_ERR_KEYED_COUNT);
    CHECK(decision == 99);
    CHECK(read_table(table).occupied == 0);
    /* All or nothing: the whole burst at once, then nothing. */
    CHECK_STATUS(weir_keyed_decide(table, 0, key, 8, BURST, &decision), WEIR_OK);
    CHECK(decision == WEIR_KEYED_ALLOWED);
    CHECK_STATUS(weir_keyed_decide(table, 0, key, 8, 1, &decision), WEIR_OK);
    CHECK(decision == WEIR_KEYED_REFUSED);

    CHECK(!weir_keyed_allow(NULL, 0, key, 8));
    CHECK(!weir_keyed_allow(table, 0, NULL, 8));
    CHECK(!weir_keyed_allow(table, -1, "other", 5));
    CHECK(!weir_keyed_allow(table, 0, key, SIZE_MAX));
    /* The empty key is a key, NULL or not, with a word of its own. */
    for (int i = 0; i < BURST; i++) {
        CHECK(weir_keyed_allow(table, 0, NULL, 0));
    }
    CHECK(!weir_keyed_allow(table, 0, "", 0));
    CHECK(read_table(table).occupied == 2);

    int64_t at = -7;
    CHECK_STATUS(weir_keyed_next(NULL, 0, key, 8, &at), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_next(table, 0, key, 8, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_next(table, 0, NULL, 8, &at), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_next(table, -1, key, 8, &at), WEIR_ERR_NEGATIVE);
    CHECK_STATUS(weir_keyed_next(table, 0, key, SIZE_MAX, &at), WEIR_ERR_KEYED_COUNT);
    CHECK(at == -7);
    /* Spent at 0: the next token a second on, asked as often as liked. */
    for (int i = 0; i < 3; i++) {
        CHECK_STATUS(weir_keyed_next(table, SEC / 2, key, 8, &at), WEIR_OK);
        CHECK(at == SEC / 2); /* a wait: SEC / 2 + SEC / 2 */
    }
    CHECK(!weir_keyed_allow(table, SEC - 1, key, 8));
    CHECK(weir_keyed_allow(table, SEC, key, 8));
    /* A key the table does not hold: no wait, and it takes no slot. */
    CHECK_STATUS(weir_keyed_next(table, 5 * SEC, "unknown", 7, &at), WEIR_OK);
    CHECK(at == 0);
    CHECK(read_table(table).occupied == 2);

    weir_keyed_reading reading;
    CHECK_STATUS(weir_keyed_read(NULL, &reading), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_read(table, NULL), WEIR_ERR_NULL);
    weir_keyed_free(table);
}

/* Counting: off until started; the key's word and the overflow policy
 * each count as they decided, `n` units an admitted decide, misuse an
 * error; next and read count nothing. */
static void counts_of_a_table(void) {
    weir_gcra_limit limit = gcra_limit(1.0, BURST);
    weir_keyed *table = make(1, &limit, WEIR_KEYED_OVERFLOW_SHARED);
    weir_counts counts = {.admitted = 77};
    CHECK_STATUS(weir_keyed_read_counts(table, &counts), WEIR_ERR_COUNTS_OFF);
    CHECK(counts.admitted == 77);
    CHECK_STATUS(weir_keyed_start_counting(NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_start_counting(table), WEIR_OK);
    CHECK_STATUS(weir_keyed_start_counting(table), WEIR_OK); /* changes nothing */
    /* Eight keys fill the one bucket: 3 events each, then 3 more refused. */
    for (uint64_t key = 0; key < 8; key++) {
        CHECK(decide(table, 0, key, 3) == WEIR_KEYED_ALLOWED);
        CHECK(decide(table, 0, key, 3) == WEIR_KEYED_REFUSED);
    }
    /* A ninth overflows onto the shared word (a burst of 5): admitted 5
     * events, then refused by the policy. */
    CHECK(decide(table, 0, 8, 5) == WEIR_KEYED_OVERFLOW_ADMITTED);
    CHECK(decide(table, 0, 8, 1) == WEIR_KEYED_OVERFLOW_REFUSED);
    uint64_t key = 9;
    CHECK(!weir_keyed_allow(table, 0, &key, sizeof key)); /* overflow refused */
    key = 0;
    CHECK(weir_keyed_allow(table, 2 * SEC, &key, sizeof key));
    /* Misuse: errors. */
    uint32_t decision = 99;
    CHECK_STATUS(weir_keyed_decide(table, -1, &key, sizeof key, 1, &decision), WEIR_ERR_NEGATIVE);
    CHECK_STATUS(weir_keyed_decide(table, 0, &key, sizeof key, BURST + 1, &decision),
                 WEIR_ERR_KEYED_COUNT);
    CHECK_STATUS(weir_keyed_decide(table, 0, NULL, 8, 1, &decision), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_decide(table, 0, &key, sizeof key, 1, NULL), WEIR_ERR_NULL);
    CHECK(!weir_keyed_allow(table, -1, &key, sizeof key));
    CHECK(!weir_keyed_allow(table, 0, NULL, 8));
    CHECK(!weir_keyed_allow(table, 0, &key, SIZE_MAX));
    /* Readings count nothing. */
    int64_t wait = 0;
    CHECK_STATUS(weir_keyed_next(table, 0, &key, sizeof key, &wait), WEIR_OK);
    CHECK_STATUS(weir_keyed_next(table, -1, &key, sizeof key, &wait), WEIR_ERR_NEGATIVE);
    weir_keyed_reading reading = read_table(table);
    CHECK(reading.overflows == 3);
    CHECK_STATUS(weir_keyed_read_counts(table, &counts), WEIR_OK);
    CHECK(counts.admitted == 10 && counts.refused == 10 && counts.errors == 7);
    CHECK(counts.units == 8 * 3 + 5 + 1);
    weir_counts again;
    CHECK_STATUS(weir_keyed_read_counts(table, &again), WEIR_OK);
    CHECK(again.admitted == counts.admitted && again.errors == counts.errors);
    CHECK_STATUS(weir_keyed_read_counts(table, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_read_counts(NULL, &counts), WEIR_ERR_NULL);
    weir_keyed_free(table);
}

static void sizing(void) {
    uint64_t buckets = 0;
    CHECK_STATUS(weir_keyed_buckets_for(1000000, 1e-9, &buckets), WEIR_OK);
    CHECK(buckets == 203090);
    CHECK(weir_keyed_overflow_chance(1e6, (double)buckets * 8) <= 1e-9);
    CHECK(weir_keyed_overflow_chance(1e6, (double)(buckets - 1) * 8) > 1e-9);
    CHECK_STATUS(weir_keyed_buckets_for(1000000, 1e-9, NULL), WEIR_ERR_NULL);
    buckets = 42;
    CHECK_STATUS(weir_keyed_buckets_for(1000, 0.0, &buckets), WEIR_ERR_KEYED_SIZING);
    CHECK_STATUS(weir_keyed_buckets_for(1000, -1.0, &buckets), WEIR_ERR_KEYED_SIZING);
    CHECK_STATUS(weir_keyed_buckets_for(1000, 1.5, &buckets), WEIR_ERR_KEYED_SIZING);
    CHECK_STATUS(weir_keyed_buckets_for(1000, NAN, &buckets), WEIR_ERR_KEYED_SIZING);
    /* More keys than 2^32 buckets can hold at that chance. */
    CHECK_STATUS(weir_keyed_buckets_for(UINT64_MAX, 1e-9, &buckets), WEIR_ERR_KEYED_SIZING);
    CHECK(buckets == 42);
    /* Half full, 62 % and 80 % full: the header's figures. */
    CHECK(fabs(weir_keyed_overflow_chance(4e6, 8e6) / 2.754e-20 - 1) < 1e-3);
    CHECK(fabs(weir_keyed_overflow_chance(4.96e6, 8e6) / 1.9094e-9 - 1) < 1e-3);
    CHECK(fabs(weir_keyed_overflow_chance(6.4e6, 8e6) / 7.670e-3 - 1) < 1e-3);
    CHECK(weir_keyed_overflow_chance(1, 7) == 1.0);
    CHECK(isnan(weir_keyed_overflow_chance(-1, 8)));
    CHECK(isnan(weir_keyed_overflow_chance(NAN, 8)));
    CHECK(isnan(weir_keyed_overflow_chance(1, INFINITY)));
    CHECK(isnan(weir_keyed_overflow_chance(1, -8)));
}

/* The placed table in a static array: the same answers as a heap one. */
static alignas(128) unsigned char placed_mem[16384];

static void placed_tables(void) {
    size_t bytes = 0, align = 0;
    CHECK_STATUS(weir_keyed_footprint(0, &bytes, &align), WEIR_ERR_KEYED_BUCKETS);
    CHECK_STATUS(weir_keyed_footprint(4, NULL, &align), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_footprint(4, &bytes, NULL), WEIR_ERR_NULL);
    CHECK(bytes == 0 && align == 0);
    CHECK_STATUS(weir_keyed_footprint(64, &bytes, &align), WEIR_OK);
    CHECK(align == 128 && bytes >= 64 * 128 && bytes <= 64 * 128 + 256);
    CHECK(bytes <= sizeof placed_mem);
    weir_gcra_limit limit = gcra_limit(1.0, BURST);
    weir_rate_limit rate = rate_limit(1.0, BURST);
    weir_keyed *table = NULL;
    CHECK_STATUS(weir_keyed_init_in(placed_mem, bytes, 64, &limit, 0, SEED0, SEED1, NULL),
                 WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_init_in(NULL, bytes, 64, &limit, 0, SEED0, SEED1, &table),
                 WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_init_in(placed_mem + 64, bytes, 64, &limit, 0, SEED0, SEED1, &table),
                 WEIR_ERR_PLACED_MISALIGNED);
    CHECK_STATUS(weir_keyed_init_in(placed_mem, bytes - 1, 64, &limit, 0, SEED0, SEED1, &table),
                 WEIR_ERR_PLACED_TOO_SMALL);
    CHECK_STATUS(weir_keyed_init_in(placed_mem, bytes, 64, &limit, 9, SEED0, SEED1, &table),
                 WEIR_ERR_KEYED_OVERFLOW);
    CHECK_STATUS(weir_keyed_init_rate_in(placed_mem, bytes, 0, &rate, 0, SEED0, SEED1, &table),
                 WEIR_ERR_KEYED_BUCKETS);
    CHECK(table == NULL);
    CHECK_STATUS(weir_keyed_init_in(placed_mem, bytes, 64, &limit, 0, SEED0, SEED1, &table),
                 WEIR_OK);
    weir_keyed *heap = make(64, &limit, 0);
    for (uint64_t key = 0; key < 200; key++) {
        for (int call = 0; call < BURST + 1; call++) {
            CHECK(decide(table, SEC, key, 1) == decide(heap, SEC, key, 1));
        }
    }
    weir_keyed_reading a = read_table(table), b = read_table(heap);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    weir_keyed_free(table); /* does nothing: the memory is ours */
    weir_keyed_free(heap);
    CHECK_STATUS(weir_keyed_init_rate_in(placed_mem, bytes, 64, &rate, 0, SEED0, SEED1, &table),
                 WEIR_OK);
    CHECK(read_table(table).kind == WEIR_KEYED_KIND_RATE);
    CHECK(read_table(table).occupied == 0);
}

/* A key's admits are a lone word's at every phase: random calls for 300
 * keys on a table with room for them, each checked against a weir_gcra
 * word of its own, with time moving on unevenly and idle words replaced. */
static void matches_lone_words(void) {
    enum { MODEL_KEYS = 300, CALLS = 60000 };
    weir_gcra_limit limit = gcra_limit(50.0, 3);
    weir_keyed *table = make(128, &limit, WEIR_KEYED_OVERFLOW_REFUSE);
    static weir_gcra words[MODEL_KEYS];
    memset(words, 0, sizeof words);
    uint64_t state = 0x9e3779b97f4a7c15u;
    int64_t now = 0;
    long admitted = 0;
    for (int call = 0; call < CALLS; call++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        uint64_t key = state % MODEL_KEYS;
        now += (int64_t)((state >> 32) % 200000);
        int64_t n = 1 + (int64_t)((state >> 20) % 3);
        uint32_t decision = decide(table, now, key, n);
        bool lone = weir_gcra_allow_n(&words[key], &limit, now, n);
        CHECK(decision == (lone ? WEIR_KEYED_ALLOWED : WEIR_KEYED_REFUSED));
        admitted += lone;
    }
    CHECK(admitted > CALLS / 10 && admitted < CALLS);
    CHECK(read_table(table).overflows == 0);
    weir_keyed_free(table);
}

struct race {
    weir_keyed *table;
    int64_t now;
    long admitted;
};

static void *race_keys(void *arg) {
    struct race *race = arg;
    for (uint64_t key = 0; key < KEYS; key++) {
        for (int call = 0; call < 2 * BURST; call++) {
            race->admitted += weir_keyed_allow(race->table, race->now, &key, sizeof key);
        }
    }
    return NULL;
}

/* Threads racing for the same new keys at one instant: each key gets its
 * burst exactly, never one more (no key is ever given two slots). */
static void threads_on_one_table(void) {
    weir_gcra_limit limit = gcra_limit(1.0, BURST);
    weir_keyed *table = make(64, &limit, WEIR_KEYED_OVERFLOW_REFUSE);
    for (int round = 0; round < 3; round++) {
        struct race races[THREADS];
        pthread_t threads[THREADS];
        for (int t = 0; t < THREADS; t++) {
            races[t] = (struct race){table, (int64_t)round * 100 * SEC, 0};
            CHECK(pthread_create(&threads[t], NULL, race_keys, &races[t]) == 0);
        }
        long admitted = 0;
        for (int t = 0; t < THREADS; t++) {
            CHECK(pthread_join(threads[t], NULL) == 0);
            admitted += races[t].admitted;
        }
        CHECK(admitted == (long)KEYS * BURST);
    }
    weir_keyed_reading reading = read_table(table);
    CHECK(reading.occupied == KEYS && reading.overflows == 0);
    weir_keyed_free(table);
}

/* The shared table of the forked workers, and the instant they decide at. */
static void *region;
static size_t region_bytes;
static int64_t region_now;

static long attach_and_race(void *arg) {
    (void)arg;
    weir_keyed *table = NULL;
    CHECK_STATUS(weir_keyed_attach(region, region_bytes, &table), WEIR_OK);
    long admitted = 0;
    for (uint64_t key = 0; key < KEYS; key++) {
        for (int call = 0; call < 2 * BURST; call++) {
            admitted += weir_keyed_allow(table, region_now, &key, sizeof key);
        }
    }
    weir_keyed_free(table); /* does nothing: the region is the caller's */
    return admitted;
}

static void processes_on_one_table(void) {
    weir_gcra_limit limit = gcra_limit(1.0, BURST);
    size_t bytes = 0, align = 0;
    weir_keyed *table = NULL;
    if (!weir_keyed_lock_free()) {
        /* A lock in this program's memory cannot be shared: say so. */
        CHECK_STATUS(weir_keyed_shared_footprint(64, &bytes, &align),
                     WEIR_ERR_WORDS_NOT_SHAREABLE);
        alignas(128) static unsigned char mem[1 << 14];
        CHECK_STATUS(weir_keyed_init_shared(mem, sizeof mem, 64, &limit, 0, SEED0, SEED1, &table),
                     WEIR_ERR_WORDS_NOT_SHAREABLE);
        CHECK_STATUS(weir_keyed_attach(mem, sizeof mem, &table), WEIR_ERR_WORDS_NOT_SHAREABLE);
        printf("keyed.c: no 16-byte compare-and-swap here: the shared table is refused\n");
        return;
    }
    CHECK_STATUS(weir_keyed_shared_footprint(0, &bytes, &align), WEIR_ERR_KEYED_BUCKETS);
    CHECK_STATUS(weir_keyed_shared_footprint(64, NULL, &align), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_shared_footprint(64, &bytes, &align), WEIR_OK);
    CHECK(align == 128 && bytes >= WEIR_REGION_HANDLE_OFFSET + 64 * 128);
    region_bytes = bytes;
    region = mmap(NULL, bytes + 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(region != MAP_FAILED);
    unsigned char *mem = region;
    CHECK_STATUS(weir_keyed_init_shared(NULL, bytes, 64, &limit, 0, SEED0, SEED1, &table),
                 WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_init_shared(mem + 64, bytes, 64, &limit, 0, SEED0, SEED1, &table),
                 WEIR_ERR_PLACED_MISALIGNED);
    CHECK_STATUS(weir_keyed_init_shared(mem, bytes - 1, 64, &limit, 0, SEED0, SEED1, &table),
                 WEIR_ERR_PLACED_TOO_SMALL);
    CHECK_STATUS(weir_keyed_init_shared(mem, bytes, 64, NULL, 0, SEED0, SEED1, &table),
                 WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_init_shared(mem, bytes, 64, &limit, 5, SEED0, SEED1, &table),
                 WEIR_ERR_KEYED_OVERFLOW);
    CHECK(table == NULL);
    /* Nothing laid yet: no header to attach to. */
    CHECK_STATUS(weir_keyed_attach(mem, bytes, &table), WEIR_ERR_REGION_FOREIGN);
    CHECK_STATUS(weir_keyed_init_shared(mem, bytes, 64, &limit, 0, SEED0, SEED1, &table), WEIR_OK);
    const weir_region_header *header = region;
    CHECK(header->magic == WEIR_REGION_MAGIC && header->kind == WEIR_REGION_KEYED);
    CHECK(header->bytes == bytes && header->slots == 64 && header->policy_bytes == 32);
    weir_keyed *again = NULL;
    CHECK_STATUS(weir_keyed_attach(mem, bytes, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_attach(NULL, bytes, &again), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_attach(mem, 100, &again), WEIR_ERR_REGION_SIZE);
    CHECK_STATUS(weir_keyed_attach(mem, bytes - 1, &again), WEIR_ERR_REGION_SIZE);
    CHECK_STATUS(weir_keyed_attach(mem, bytes, &again), WEIR_OK);
    CHECK(again == table);
    /* Another type's attach refuses it. */
    weir_gate *gate = NULL;
    CHECK_STATUS(weir_gate_attach(mem, bytes, &gate), WEIR_ERR_REGION_KIND);

    /* Each phase, every worker races for the same 100 keys at one
     * instant: across the processes each key gets what a lone word
     * gives, its whole burst at first, then what a second and a half
     * refills. */
    /* Counting turned on here lies in the region: every worker's calls
     * are counted there. */
    CHECK_STATUS(weir_keyed_start_counting(table), WEIR_OK);
    region_now = 10 * SEC;
    CHECK(fork_workers(WORKERS, attach_and_race, NULL) == (long)KEYS * BURST);
    region_now = 10 * SEC + 3 * SEC / 2;
    CHECK(fork_workers(WORKERS, attach_and_race, NULL) == (long)KEYS * 1);
    region_now = 100 * SEC;
    CHECK(fork_workers(WORKERS, attach_and_race, NULL) == (long)KEYS * BURST);
    weir_keyed_reading reading = read_table(table);
    CHECK(reading.occupied == KEYS && reading.overflows == 0);
    /* The parent's handle is the region's: it sees every key spent. */
    uint64_t key = 3;
    CHECK(!weir_keyed_allow(table, 100 * SEC, &key, sizeof key));
    weir_counts counts;
    CHECK_STATUS(weir_keyed_read_counts(table, &counts), WEIR_OK);
    CHECK(counts.admitted == (uint64_t)KEYS * (2 * BURST + 1) && counts.errors == 0);
    CHECK(counts.admitted + counts.refused == 3 * (uint64_t)WORKERS * KEYS * 2 * BURST + 1);

    /* The rate kind, laid again over the same region. */
    weir_rate_limit rate = rate_limit(1.0, BURST);
    CHECK_STATUS(weir_keyed_init_shared_rate(mem, bytes, 64, &rate, 1, SEED0, SEED1, &table),
                 WEIR_OK);
    reading = read_table(table);
    CHECK(reading.kind == WEIR_KEYED_KIND_RATE && reading.occupied == 0);
    CHECK(reading.overflow_policy == WEIR_KEYED_OVERFLOW_ADMIT);
    weir_keyed_free(table);
    CHECK(munmap(region, bytes + 4096) == 0);
}

int main(void) {
    constructors_check_their_arguments();
    each_policy_answers_an_overflow();
    calls_check_their_arguments();
    counts_of_a_table();
    sizing();
    placed_tables();
    matches_lone_words();
    threads_on_one_table();
    processes_on_one_table();
    CHECK_DONE();
}
