/* weir_bloom through the header, both word kinds (rate words and GCRA
 * words): keys, the blocked layout (a key's words in one 64-byte line), the
 * false-refusal fraction, threads on one key, forked processes sharing one
 * region through mmap(MAP_SHARED), and bad input (NULL, empty keys, small,
 * misaligned and foreign regions, other versions and kinds). */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "weir.h"
#include "workers.h"

_Static_assert(WEIR_BLOOM_HEADER_BYTES == 64, "the header is one cache line");
_Static_assert(WEIR_BLOOM_MAX_SIZE_LOG2 == 32, "the stated maximum");
_Static_assert(WEIR_BLOOM_MIN_SIZE_LOG2 == 3, "one line");
_Static_assert(WEIR_BLOOM_ALIGN == 64, "a cache line");
_Static_assert(WEIR_BLOOM_VERSION == 2, "the blocked layout");

#define SEC INT64_C(1000000000)
#define SEED0 UINT64_C(0x243f6a8885a308d3)
#define SEED1 UINT64_C(0x13198a2e03707344)

enum { THREADS = 4, CALLS = 20000, WORKERS = 4, BURST = 5 };

static weir_rate_limit make(double per_s, int64_t burst) {
    weir_rate_limit limit;
    CHECK_STATUS(weir_rate_limit_new(per_s, burst, &limit), WEIR_OK);
    return limit;
}

static weir_bloom *bloom_of(uint32_t size_log2, uint32_t hashes, int64_t burst) {
    weir_rate_limit limit = make(1.0, burst);
    weir_bloom *bloom = NULL;
    CHECK_STATUS(weir_bloom_new(size_log2, hashes, &limit, SEED0, SEED1, &bloom), WEIR_OK);
    CHECK(bloom != NULL);
    return bloom;
}

static weir_gcra_limit make_gcra(double per_s, int64_t burst) {
    weir_gcra_limit limit;
    CHECK_STATUS(weir_gcra_limit_new(per_s, burst, &limit), WEIR_OK);
    return limit;
}

/* A region of `len` bytes, 64-byte aligned and zeroed. */
static void *region_of(size_t len) {
    size_t rounded = (len + 63) / 64 * 64;
    void *mem = aligned_alloc(64, rounded);
    CHECK(mem != NULL);
    memset(mem, 0, rounded);
    return mem;
}

static void keys(void) {
    weir_bloom *bloom = bloom_of(16, 3, 2);
    CHECK(weir_bloom_allow(bloom, 0, "alice", 5));
    CHECK(weir_bloom_allow(bloom, 1, "alice", 5));
    CHECK(!weir_bloom_allow(bloom, 2, "alice", 5));
    CHECK(weir_bloom_next(bloom, 2, "alice", 5) == 2 * SEC - 2);
    /* Another key is independent of it. */
    CHECK(weir_bloom_next(bloom, 2, "bob", 3) == 0);
    CHECK(weir_bloom_allow(bloom, 2, "bob", 3));
    CHECK(weir_bloom_allow(bloom, 2, "bob", 3));
    CHECK(!weir_bloom_allow(bloom, 2, "bob", 3));
    /* After its window, alice is back. */
    CHECK(weir_bloom_allow(bloom, 2 * SEC, "alice", 5));
    weir_bloom_free(bloom);
}

/* The gcra kind: a token bucket per key, one token back each interval. */
static void gcra_keys(void) {
    weir_gcra_limit limit = make_gcra(1.0, 2);
    weir_bloom *bloom = NULL;
    CHECK_STATUS(weir_bloom_new_gcra(16, 3, &limit, SEED0, SEED1, &bloom), WEIR_OK);
    CHECK(weir_bloom_allow(bloom, 0, "alice", 5));
    CHECK(weir_bloom_allow(bloom, 0, "alice", 5));
    CHECK(!weir_bloom_allow(bloom, 0, "alice", 5));
    CHECK(weir_bloom_next(bloom, 0, "alice", 5) == SEC);
    CHECK(weir_bloom_allow(bloom, 0, "bob", 3));
    CHECK(weir_bloom_allow(bloom, SEC, "alice", 5));
    CHECK(!weir_bloom_allow(bloom, SEC, "alice", 5));
    weir_bloom_free(bloom);

    /* The same in a region, the kind read from its header. */
    size_t len = weir_bloom_footprint(10);
    void *mem = region_of(len);
    CHECK_STATUS(weir_bloom_init_gcra_in(mem, len, 10, 3, &limit, SEED0, SEED1), WEIR_OK);
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_OK);
    const uint64_t *head = mem;
    CHECK(head[1] == 2);
    CHECK(head[2] == (2 | UINT64_C(64) << 32));
    CHECK(head[3] == (10 | 3 << 8 | (uint64_t)limit.shift << 16));
    CHECK(head[4] == limit.per_token && head[5] == (uint64_t)limit.tolerance);
    CHECK(head[6] == SEED0 && head[7] == SEED1);
    CHECK(weir_bloom_allow_in(mem, len, 0, "alice", 5));
    CHECK(weir_bloom_allow_in(mem, len, 0, "alice", 5));
    CHECK(!weir_bloom_allow_in(mem, len, 0, "alice", 5));
    CHECK(weir_bloom_next_in(mem, len, SEC / 2, "alice", 5) == SEC / 2);
    free(mem);
}

/* The words a key charges, read from a region: the indexes of the words
 * that are no longer zero, in order, into `out` (room for `cap`). */
static size_t charged(const uint64_t *region, size_t words, size_t out[], size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < words; i++) {
        if (region[WEIR_BLOOM_HEADER_BYTES / 8 + i] != 0 && n < cap) out[n++] = i;
    }
    return n;
}

/* The same key under two seeds lands on different words, k distinct ones
 * each time. */
static void seeds(void) {
    enum { SIZE_LOG2 = 10, K = 3 };
    const size_t words = (size_t)1 << SIZE_LOG2;
    size_t len = weir_bloom_footprint(SIZE_LOG2);
    weir_rate_limit limit = make(1.0, 1);
    uint64_t *a = region_of(len), *b = region_of(len);
    CHECK_STATUS(weir_bloom_init_in(a, len, SIZE_LOG2, K, &limit, SEED0, SEED1), WEIR_OK);
    CHECK_STATUS(weir_bloom_init_in(b, len, SIZE_LOG2, K, &limit, SEED1, SEED0), WEIR_OK);
    CHECK(weir_bloom_allow_in(a, len, SEC, "key", 3));
    CHECK(weir_bloom_allow_in(b, len, SEC, "key", 3));
    size_t in_a[K + 1], in_b[K + 1];
    CHECK(charged(a, words, in_a, K + 1) == K);
    CHECK(charged(b, words, in_b, K + 1) == K);
    CHECK(memcmp(in_a, in_b, sizeof in_a[0] * K) != 0);
    /* Blocked: each key's K words sit in one line of 8. */
    CHECK(in_a[0] / 8 == in_a[K - 1] / 8);
    CHECK(in_b[0] / 8 == in_b[K - 1] / 8);
    free(a);
    free(b);
}

/* 50,000 keys each making burst + 1 calls in interleaved rounds, inside one
 * window: none passes its burst, and few are refused before it (the
 * header's formula: 1.6 %; weir-core/tests/bloom.rs checks it closely). */
static void false_refusals(int gcra) {
    enum { KEYS = 50000, ROUND_BURST = 4 };
    weir_bloom *bloom = NULL;
    if (gcra) {
        weir_gcra_limit limit = make_gcra(1e-3, ROUND_BURST);
        CHECK_STATUS(weir_bloom_new_gcra(20, 3, &limit, SEED0, SEED1, &bloom), WEIR_OK);
    } else {
        bloom = bloom_of(20, 3, ROUND_BURST);
    }
    unsigned char *allowed = calloc(KEYS, 1);
    CHECK(allowed != NULL);
    int64_t now = 0;
    for (int round = 0; round <= ROUND_BURST; round++) {
        for (uint32_t key = 0; key < KEYS; key++) {
            allowed[key] += weir_bloom_allow(bloom, ++now, &key, sizeof key);
        }
    }
    int early = 0;
    for (int key = 0; key < KEYS; key++) {
        CHECK(allowed[key] <= ROUND_BURST);
        early += allowed[key] < ROUND_BURST;
    }
    double fraction = (double)early / KEYS;
    printf("%s: k=3, 2^20 words, %d keys: %d refused before their burst (%.3f %%; formula 1.64 %%)\n",
           gcra ? "gcra" : "window", KEYS, early, 100 * fraction);
    CHECK(fraction > 0.012 && fraction < 0.0175);
    free(allowed);
    weir_bloom_free(bloom);
}

struct hammered {
    weir_bloom *bloom;
    void *region;
    size_t len;
};

static void *hammer(void *arg) {
    struct hammered *h = arg;
    long allowed = 0;
    for (int i = 0; i < CALLS; i++) {
        allowed += h->bloom ? weir_bloom_allow(h->bloom, SEC, "hot", 3)
                            : weir_bloom_allow_in(h->region, h->len, SEC, "hot", 3);
    }
    return (void *)allowed;
}

static long run_threads(struct hammered *h) {
    pthread_t ids[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&ids[i], NULL, hammer, h) == 0);
    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        void *allowed;
        CHECK(pthread_join(ids[i], &allowed) == 0);
        total += (long)allowed;
    }
    return total;
}

static void threads(void) {
    for (uint32_t k = 1; k <= 3; k += 2) {
        struct hammered h = {.bloom = bloom_of(12, k, BURST)};
        long total = run_threads(&h);
        printf("threads: k=%u, %d x %d calls for one key in one window, %ld allowed (burst %d)\n",
               k, THREADS, CALLS, total, BURST);
        CHECK(total >= BURST);
        CHECK(total <= (long)k * BURST);
        if (k == 1) CHECK(total == BURST);
        weir_bloom_free(h.bloom);
    }
}

static long hammer_region(void *arg) {
    struct hammered *h = arg;
    if (weir_bloom_check_in(h->region, h->len) != WEIR_OK) return -1000000;
    return (long)hammer(h);
}

/* Forked workers hammer one key in one shared region, of either kind. */
static void processes(int gcra) {
    const uint32_t size_log2 = 12;
    size_t len = weir_bloom_footprint(size_log2);
    CHECK(len == WEIR_BLOOM_HEADER_BYTES + 8 * ((size_t)1 << size_log2));
    for (uint32_t k = 1; k <= 3; k += 2) {
        void *region = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        CHECK(region != MAP_FAILED);
        weir_rate_limit limit = make(1.0, BURST);
        weir_gcra_limit gcra_limit = make_gcra(1.0, BURST);
        CHECK_STATUS(gcra ? weir_bloom_init_gcra_in(region, len, size_log2, k, &gcra_limit, SEED0, SEED1)
                          : weir_bloom_init_in(region, len, size_log2, k, &limit, SEED0, SEED1),
                     WEIR_OK);
        CHECK_STATUS(weir_bloom_check_in(region, len), WEIR_OK);
        struct hammered h = {.region = region, .len = len};
        long total = fork_workers(WORKERS, hammer_region, &h);
        printf("processes (%s): k=%u, %d forked workers x %d calls for one key, %ld allowed (burst %d)\n",
               gcra ? "gcra" : "window", k, WORKERS, CALLS, total, BURST);
        CHECK(total >= BURST);
        CHECK(total <= (long)k * BURST);
        if (k == 1) CHECK(total == BURST);
        /* A window opened at 1 s closes after burst intervals; a bucket
         * emptied at 1 s has its next token an interval on. */
        CHECK(weir_bloom_next_in(region, len, SEC, "hot", 3) == (gcra ? SEC : SEC * BURST));
        CHECK(weir_bloom_allow_in(region, len, SEC, "cold", 4));
        CHECK(munmap(region, len) == 0);
    }
}

static void bad_input(void) {
    weir_rate_limit limit = make(1.0, 1);
    weir_bloom *bloom = NULL;
    /* Constructors: each bad argument its own status, *out untouched. */
    CHECK_STATUS(weir_bloom_new(10, 2, &limit, 1, 2, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bloom_new(10, 2, NULL, 1, 2, &bloom), WEIR_ERR_NULL);
    weir_rate_limit zero = {0};
    CHECK_STATUS(weir_bloom_new(10, 2, &zero, 1, 2, &bloom), WEIR_ERR_RATE_LIMIT_INVALID);
    CHECK_STATUS(weir_bloom_new(33, 2, &limit, 1, 2, &bloom), WEIR_ERR_BLOOM_SIZE);
    CHECK_STATUS(weir_bloom_new(UINT32_MAX, 2, &limit, 1, 2, &bloom), WEIR_ERR_BLOOM_SIZE);
    CHECK_STATUS(weir_bloom_new(10, 0, &limit, 1, 2, &bloom), WEIR_ERR_BLOOM_HASHES);
    CHECK_STATUS(weir_bloom_new(10, 9, &limit, 1, 2, &bloom), WEIR_ERR_BLOOM_HASHES);
    CHECK_STATUS(weir_bloom_new(2, 1, &limit, 1, 2, &bloom), WEIR_ERR_BLOOM_TOO_FEW_WORDS);
    CHECK_STATUS(weir_bloom_new(0, 1, &limit, 1, 2, &bloom), WEIR_ERR_BLOOM_TOO_FEW_WORDS);
    weir_gcra_limit gcra_limit = make_gcra(1.0, 1), bad_limit = {0};
    CHECK_STATUS(weir_bloom_new_gcra(10, 2, &gcra_limit, 1, 2, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bloom_new_gcra(10, 2, NULL, 1, 2, &bloom), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bloom_new_gcra(10, 2, &bad_limit, 1, 2, &bloom), WEIR_ERR_GCRA_LIMIT_INVALID);
    CHECK_STATUS(weir_bloom_new_gcra(33, 2, &gcra_limit, 1, 2, &bloom), WEIR_ERR_BLOOM_SIZE);
    CHECK_STATUS(weir_bloom_new_gcra(2, 2, &gcra_limit, 1, 2, &bloom), WEIR_ERR_BLOOM_TOO_FEW_WORDS);
    CHECK_STATUS(weir_bloom_new_gcra(10, 9, &gcra_limit, 1, 2, &bloom), WEIR_ERR_BLOOM_HASHES);
    CHECK(bloom == NULL);
    CHECK(weir_bloom_footprint(33) == 0);
    CHECK(weir_bloom_footprint(2) == 0);
    CHECK(weir_bloom_footprint(0) == 0);
    CHECK(weir_bloom_footprint(3) == WEIR_BLOOM_HEADER_BYTES + 64);
    /* The smallest array is one line; 8 hashes ask all of it. */
    CHECK_STATUS(weir_bloom_new(3, 8, &limit, 1, 2, &bloom), WEIR_OK);
    CHECK(weir_bloom_allow(bloom, 0, "a", 1));
    CHECK(!weir_bloom_allow(bloom, 0, "b", 1));
    weir_bloom_free(bloom);
    bloom = NULL;

    /* Decisions: NULL bloom or key refuses; an empty key is a key. (At
     * 2^12 words "" and "k" do not share their words under this seed; at
     * 2^4 they do.) */
    CHECK_STATUS(weir_bloom_new(12, 2, &limit, 1, 2, &bloom), WEIR_OK);
    CHECK(!weir_bloom_allow(NULL, 0, "k", 1));
    CHECK(!weir_bloom_allow(bloom, 0, NULL, 1));
    CHECK(!weir_bloom_allow(bloom, 0, NULL, 0));
    CHECK(!weir_bloom_allow(bloom, -1, "k", 1));
    CHECK(!weir_bloom_allow(bloom, INT64_MIN, "k", 1));
    CHECK(weir_bloom_next(NULL, 0, "k", 1) == INT64_MAX);
    CHECK(weir_bloom_next(bloom, 0, NULL, 0) == INT64_MAX);
    CHECK(weir_bloom_next(bloom, -1, "k", 1) == INT64_MAX);
    CHECK(weir_bloom_allow(bloom, 0, "", 0));
    CHECK(!weir_bloom_allow(bloom, 0, "ignored", 0));
    /* ...and after all that the handle behaves. */
    CHECK(weir_bloom_allow(bloom, 0, "k", 1));
    CHECK(!weir_bloom_allow(bloom, 0, "k", 1));
    CHECK(weir_bloom_allow(bloom, INT64_MAX, "k", 1));
    weir_bloom_free(bloom);
    weir_bloom_free(NULL);

    /* Regions. */
    const uint32_t size_log2 = 4;
    size_t len = weir_bloom_footprint(size_log2);
    uint64_t *words = region_of(len + 8);
    void *mem = words;
    CHECK_STATUS(weir_bloom_init_in(NULL, len, size_log2, 2, &limit, 1, 2), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bloom_init_in(mem, len, size_log2, 2, NULL, 1, 2), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bloom_init_in(mem, len, size_log2, 2, &zero, 1, 2),
                 WEIR_ERR_RATE_LIMIT_INVALID);
    CHECK_STATUS(weir_bloom_init_in(mem, len, 33, 2, &limit, 1, 2), WEIR_ERR_BLOOM_SIZE);
    CHECK_STATUS(weir_bloom_init_in(mem, len, size_log2, 0, &limit, 1, 2), WEIR_ERR_BLOOM_HASHES);
    CHECK_STATUS(weir_bloom_init_in(mem, len - 1, size_log2, 2, &limit, 1, 2),
                 WEIR_ERR_BLOOM_TOO_SMALL);
    CHECK_STATUS(weir_bloom_init_in(mem, 0, size_log2, 2, &limit, 1, 2), WEIR_ERR_BLOOM_TOO_SMALL);
    void *crooked = (char *)mem + 4;
    CHECK_STATUS(weir_bloom_init_in(crooked, len, size_log2, 2, &limit, 1, 2),
                 WEIR_ERR_MISALIGNED);
    /* 8-byte alignment is not enough: the lines must be cache lines. */
    for (size_t off = 8; off < 64; off += 8) {
        CHECK_STATUS(weir_bloom_init_in((char *)mem + off, len, size_log2, 2, &limit, 1, 2),
                     WEIR_ERR_MISALIGNED);
        CHECK_STATUS(weir_bloom_init_gcra_in((char *)mem + off, len, size_log2, 2, &gcra_limit, 1, 2),
                     WEIR_ERR_MISALIGNED);
    }
    CHECK_STATUS(weir_bloom_init_in(mem, len, 2, 1, &limit, 1, 2), WEIR_ERR_BLOOM_TOO_FEW_WORDS);
    CHECK_STATUS(weir_bloom_init_gcra_in(NULL, len, size_log2, 2, &gcra_limit, 1, 2), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bloom_init_gcra_in(mem, len, size_log2, 2, NULL, 1, 2), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bloom_init_gcra_in(mem, len, size_log2, 2, &bad_limit, 1, 2),
                 WEIR_ERR_GCRA_LIMIT_INVALID);
    CHECK_STATUS(weir_bloom_init_gcra_in(mem, len - 1, size_log2, 2, &gcra_limit, 1, 2),
                 WEIR_ERR_BLOOM_TOO_SMALL);
    CHECK_STATUS(weir_bloom_init_gcra_in(mem, len, 1, 2, &gcra_limit, 1, 2), WEIR_ERR_BLOOM_TOO_FEW_WORDS);
    for (size_t i = 0; i < len / 8 + 1; i++) CHECK(words[i] == 0); /* nothing written */
    /* A region laid at 8 bytes past a line is refused by every call. */

    /* A region no one laid (zeros, then noise) is foreign. */
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_ERR_BLOOM_FOREIGN);
    CHECK(!weir_bloom_allow_in(mem, len, 0, "k", 1));
    memset(mem, 0xa5, len);
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_ERR_BLOOM_FOREIGN);
    CHECK(!weir_bloom_allow_in(mem, len, 0, "k", 1));
    CHECK(weir_bloom_next_in(mem, len, 0, "k", 1) == INT64_MAX);

    /* Seeds under which "" and "k" do not share their words at 2^4. */
    CHECK_STATUS(weir_bloom_init_in(mem, len, size_log2, 2, &limit, 3, 4), WEIR_OK);
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_OK);
    CHECK_STATUS(weir_bloom_check_in(NULL, len), WEIR_ERR_NULL);
    CHECK_STATUS(weir_bloom_check_in(crooked, len), WEIR_ERR_MISALIGNED);
    CHECK_STATUS(weir_bloom_check_in((char *)mem + 8, len), WEIR_ERR_MISALIGNED);
    CHECK(!weir_bloom_allow_in((char *)mem + 32, len, 0, "k", 1));
    CHECK(weir_bloom_next_in((char *)mem + 32, len, 0, "k", 1) == INT64_MAX);
    CHECK_STATUS(weir_bloom_check_in(mem, len - 1), WEIR_ERR_BLOOM_TOO_SMALL);
    CHECK_STATUS(weir_bloom_check_in(mem, WEIR_BLOOM_HEADER_BYTES - 1), WEIR_ERR_BLOOM_TOO_SMALL);
    CHECK(!weir_bloom_allow_in(NULL, len, 0, "k", 1));
    CHECK(!weir_bloom_allow_in(crooked, len, 0, "k", 1));
    CHECK(!weir_bloom_allow_in(mem, len - 1, 0, "k", 1));
    CHECK(!weir_bloom_allow_in(mem, len, 0, NULL, 1));
    CHECK(!weir_bloom_allow_in(mem, len, -1, "k", 1));
    CHECK(weir_bloom_next_in(crooked, len, 0, "k", 1) == INT64_MAX);
    CHECK(weir_bloom_next_in(mem, len, 0, NULL, 0) == INT64_MAX);
    /* A length no object can have (past PTRDIFF_MAX) is a status, never a
     * crash. */
    const size_t absurd[] = {SIZE_MAX, (size_t)PTRDIFF_MAX + 1};
    for (size_t i = 0; i < sizeof absurd / sizeof absurd[0]; i++) {
        CHECK_STATUS(weir_bloom_check_in(mem, absurd[i]), WEIR_ERR_TOO_LARGE);
        CHECK_STATUS(weir_bloom_init_in(mem, absurd[i], size_log2, 2, &limit, 1, 2),
                     WEIR_ERR_TOO_LARGE);
        CHECK(!weir_bloom_allow_in(mem, absurd[i], 0, "k", 1));
        CHECK(weir_bloom_next_in(mem, absurd[i], 0, "k", 1) == INT64_MAX);
    }
    CHECK(weir_bloom_next_in(mem, len, 0, "k", 1) == 0); /* nothing was charged */
    /* Another layout version, and a broken magic. */
    words[1] += 1;
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_ERR_BLOOM_VERSION);
    CHECK(!weir_bloom_allow_in(mem, len, 0, "k", 1));
    words[1] = 1; /* weir 0.1's layout: never read as this one */
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_ERR_BLOOM_VERSION);
    CHECK(!weir_bloom_allow_in(mem, len, 0, "k", 1));
    CHECK(weir_bloom_next_in(mem, len, 0, "k", 1) == INT64_MAX);
    words[1] = 2;
    /* A word kind this library does not know, and another line size. */
    uint64_t kind = words[2];
    words[2] = 3 | UINT64_C(64) << 32;
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_ERR_BLOOM_KIND);
    CHECK(!weir_bloom_allow_in(mem, len, 0, "k", 1));
    words[2] = 1 | UINT64_C(128) << 32;
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_ERR_BLOOM_LINE_SIZE);
    CHECK(!weir_bloom_allow_in(mem, len, 0, "k", 1));
    /* A window region whose limit words are read as a GCRA limit would be
     * a misreading: the kind is part of the header, and a forged one with
     * fields out of the GCRA limit's ranges is foreign. */
    words[2] = 2 | UINT64_C(64) << 32;
    uint64_t limit_b = words[5];
    words[5] = 0;
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_ERR_BLOOM_FOREIGN);
    words[5] = limit_b;
    words[2] = kind;
    words[0] ^= 1;
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_ERR_BLOOM_FOREIGN);
    words[0] ^= 1;
    /* Restored, the region behaves; a zero-length key is a key there too. */
    CHECK_STATUS(weir_bloom_check_in(mem, len), WEIR_OK);
    CHECK(weir_bloom_allow_in(mem, len, 0, "", 0));
    CHECK(!weir_bloom_allow_in(mem, len, 0, "", 0));
    CHECK(weir_bloom_allow_in(mem, len, 0, "k", 1));
    CHECK(!weir_bloom_allow_in(mem, len, 0, "k", 1));
    CHECK(weir_bloom_next_in(mem, len, 0, "k", 1) == SEC);
    free(words);

    for (int code = 410; code <= 418; code++) {
        /* 413 is retired: misaligned regions answer WEIR_ERR_MISALIGNED. */
        CHECK((strcmp(weir_status_str(code), weir_status_str(-1)) != 0) == (code != 413));
    }
}

int main(void) {
    keys();
    gcra_keys();
    seeds();
    false_refusals(0);
    false_refusals(1);
    threads();
    processes(0);
    processes(1);
    bad_input();
    CHECK_DONE();
}
