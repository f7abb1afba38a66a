/* weir_keyed_reconfigure and weir_keyed_reconfigure_rate through the
 * header: what each word keeps across a change (a GCRA word its arrival
 * time, a rate word its window's start and count), the statuses (NULL,
 * invalid limits, the other kind, another tick) changing nothing, every
 * form (heap, placed, shared) taking a new limit, and a table shared
 * between processes reconfigured in one forked process and seen by the
 * parent and by another forked process. */
#define _DEFAULT_SOURCE
#include <stdalign.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "weir.h"
#include "workers.h"

#define SEC INT64_C(1000000000)
#define MS INT64_C(1000000)
#define SEED0 UINT64_C(0x452821e638d01377)
#define SEED1 UINT64_C(0xbe5466cf34e90c6c)

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

static uint32_t decide(const weir_keyed *table, int64_t now, const char *key, int64_t n) {
    uint32_t decision = 99;
    CHECK_STATUS(weir_keyed_decide(table, now, key, strlen(key), n, &decision), WEIR_OK);
    return decision;
}

static int64_t next(const weir_keyed *table, int64_t now, const char *key) {
    int64_t wait = -1;
    CHECK_STATUS(weir_keyed_next(table, now, key, strlen(key), &wait), WEIR_OK);
    return wait;
}

/* Admits of one event each at `now` until the first refusal. */
static int take_all(const weir_keyed *table, int64_t now, const char *key) {
    int admitted = 0;
    while (decide(table, now, key, 1) == WEIR_KEYED_ALLOWED) admitted++;
    return admitted;
}

/* A GCRA table: the debt carries over as time, judged by the new bucket. */
static void gcra_words_keep_their_arrival_time(weir_keyed *table) {
    /* 1/s, burst 5: spent at 10 s, its arrival time is 15 s. */
    CHECK(take_all(table, 10 * SEC, "a") == 5);
    /* 2/s, burst 2 (a bucket of 1 s): a debt of 5 s must fall to half a
     * second before the next token, at 14.5 s. */
    weir_gcra_limit slower = gcra_limit(2.0, 2);
    CHECK_STATUS(weir_keyed_reconfigure(table, &slower), WEIR_OK);
    CHECK(next(table, 10 * SEC, "a") == 4500 * MS);
    CHECK(decide(table, 14500 * MS - 1, "a", 1) == WEIR_KEYED_REFUSED);
    CHECK(decide(table, 14500 * MS, "a", 1) == WEIR_KEYED_ALLOWED);
    /* The count's check follows the new burst. */
    uint32_t decision = 99;
    CHECK_STATUS(weir_keyed_decide(table, 20 * SEC, "b", 1, 3, &decision), WEIR_ERR_KEYED_COUNT);
    CHECK(decision == 99);
    /* A fresh key gets the new bucket whole. */
    CHECK(take_all(table, 20 * SEC, "b") == 2);
    /* Refused changes change nothing: the other kind, another tick (10^8 a
     * second is past tick 0), NULL, a limit out of range. */
    weir_rate_limit rate = rate_limit(1.0, 1);
    weir_gcra_limit fine = gcra_limit(1e8, 3);
    CHECK(fine.shift != slower.shift);
    weir_gcra_limit broken = slower;
    broken.per_token = 0;
    CHECK_STATUS(weir_keyed_reconfigure_rate(table, &rate), WEIR_ERR_KEYED_KIND_CHANGE);
    CHECK_STATUS(weir_keyed_reconfigure(table, &fine), WEIR_ERR_KEYED_TICK_CHANGE);
    CHECK_STATUS(weir_keyed_reconfigure(table, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_reconfigure(table, &broken), WEIR_ERR_GCRA_LIMIT_INVALID);
    CHECK(take_all(table, 30 * SEC, "c") == 2);
    /* And back: 1/s, burst 5, the words as they are: "c" owes a second
     * (two half-second tokens), so four of five are left. */
    weir_gcra_limit back = gcra_limit(1.0, 5);
    CHECK_STATUS(weir_keyed_reconfigure(table, &back), WEIR_OK);
    CHECK(take_all(table, 30 * SEC, "c") == 4);
    weir_keyed_reading reading;
    CHECK_STATUS(weir_keyed_read(table, &reading), WEIR_OK);
    CHECK(reading.kind == WEIR_KEYED_KIND_GCRA && reading.overflows == 0);
}

/* A rate table: a window keeps its start and count, counted against the
 * new burst, ending count × I' after its start. */
static void rate_words_keep_their_window(weir_keyed *table) {
    /* 1/s, burst 5: five at 10 s, the window ends at 15 s. */
    CHECK(take_all(table, 10 * SEC, "a") == 5);
    /* 10/s, burst 10: the window holds 5 of 10, so 5 more; then it ends
     * 10 × 100 ms after its start. */
    weir_rate_limit quicker = rate_limit(10.0, 10);
    CHECK_STATUS(weir_keyed_reconfigure_rate(table, &quicker), WEIR_OK);
    CHECK(take_all(table, 10 * SEC, "a") == 5);
    int64_t wait = next(table, 10 * SEC, "a");
    CHECK(wait > 0 && wait <= 1 * SEC + 512);
    CHECK(decide(table, 10 * SEC + wait, "a", 1) == WEIR_KEYED_ALLOWED);
    weir_gcra_limit gcra = gcra_limit(1.0, 1);
    weir_rate_limit broken = quicker;
    broken.burst = 0;
    CHECK_STATUS(weir_keyed_reconfigure(table, &gcra), WEIR_ERR_KEYED_KIND_CHANGE);
    CHECK_STATUS(weir_keyed_reconfigure_rate(table, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_reconfigure_rate(table, &broken), WEIR_ERR_RATE_LIMIT_INVALID);
    CHECK(take_all(table, 20 * SEC, "b") == 10);
    weir_keyed_reading reading;
    CHECK_STATUS(weir_keyed_read(table, &reading), WEIR_OK);
    CHECK(reading.kind == WEIR_KEYED_KIND_RATE);
}

static void heap_and_placed(void) {
    CHECK_STATUS(weir_keyed_reconfigure(NULL, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_keyed_reconfigure_rate(NULL, NULL), WEIR_ERR_NULL);
    weir_gcra_limit gcra = gcra_limit(1.0, 5);
    weir_rate_limit rate = rate_limit(1.0, 5);
    weir_keyed *table = NULL;
    CHECK_STATUS(weir_keyed_new(16, &gcra, WEIR_KEYED_OVERFLOW_REFUSE, SEED0, SEED1, &table), WEIR_OK);
    gcra_words_keep_their_arrival_time(table);
    weir_keyed_free(table);
    CHECK_STATUS(weir_keyed_new_rate(16, &rate, WEIR_KEYED_OVERFLOW_REFUSE, SEED0, SEED1, &table),
                 WEIR_OK);
    rate_words_keep_their_window(table);
    weir_keyed_free(table);

    alignas(128) static unsigned char placed[16 * 128 + 512];
    size_t bytes = 0, align = 0;
    CHECK_STATUS(weir_keyed_footprint(16, &bytes, &align), WEIR_OK);
    CHECK(bytes <= sizeof placed && align == 128);
    CHECK_STATUS(weir_keyed_init_in(placed, bytes, 16, &gcra, WEIR_KEYED_OVERFLOW_REFUSE, SEED0, SEED1,
                                    &table),
                 WEIR_OK);
    gcra_words_keep_their_arrival_time(table);
    weir_keyed_free(table);
    CHECK_STATUS(weir_keyed_init_rate_in(placed, bytes, 16, &rate, WEIR_KEYED_OVERFLOW_REFUSE, SEED0,
                                         SEED1, &table),
                 WEIR_OK);
    rate_words_keep_their_window(table);
    weir_keyed_free(table);
}

/* The shared region the forked processes map, its size, and the instant
 * the children take at. */
static void *region;
static size_t region_bytes;
static int64_t take_at;

/* In a child: attach, and give the table 10/s with bursts of 2. */
static long attach_and_reconfigure(void *arg) {
    (void)arg;
    weir_keyed *table = NULL;
    CHECK_STATUS(weir_keyed_attach(region, region_bytes, &table), WEIR_OK);
    weir_gcra_limit faster = gcra_limit(10.0, 2);
    CHECK_STATUS(weir_keyed_reconfigure(table, &faster), WEIR_OK);
    /* Of the other kind: refused here too. */
    weir_rate_limit rate = rate_limit(1.0, 1);
    CHECK_STATUS(weir_keyed_reconfigure_rate(table, &rate), WEIR_ERR_KEYED_KIND_CHANGE);
    return 1;
}

/* In a child: attach, and count what the child's key gets at `take_at`. */
static long attach_and_take(void *arg) {
    (void)arg;
    weir_keyed *table = NULL;
    CHECK_STATUS(weir_keyed_attach(region, region_bytes, &table), WEIR_OK);
    return take_all(table, take_at, "child");
}

static void shared_between_processes(void) {
    if (!weir_keyed_lock_free()) {
        printf("keyed_reconfigure.c: no 16-byte compare-and-swap here: no shared table\n");
        return;
    }
    size_t align = 0;
    CHECK_STATUS(weir_keyed_shared_footprint(16, &region_bytes, &align), WEIR_OK);
    region = mmap(NULL, region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(region != MAP_FAILED);
    weir_gcra_limit gcra = gcra_limit(1.0, 5);
    weir_keyed *table = NULL;
    CHECK_STATUS(weir_keyed_init_shared(region, region_bytes, 16, &gcra, WEIR_KEYED_OVERFLOW_REFUSE,
                                        SEED0, SEED1, &table),
                 WEIR_OK);
    /* Before: a fresh key's burst is 5, in the parent and in a child. */
    CHECK(take_all(table, 10 * SEC, "parent") == 5);
    take_at = 10 * SEC;
    CHECK(fork_workers(1, attach_and_take, NULL) == 5);
    /* One child reconfigures; the parent's handle, in the region, sees
     * it, and so does another child attached afterwards. */
    CHECK(fork_workers(1, attach_and_reconfigure, NULL) == 1);
    CHECK(take_all(table, 50 * SEC, "parent again") == 2);
    /* Two children race for one key the first spent at 10 s (at rest by
     * 100 s): between them, the new burst exactly. */
    take_at = 100 * SEC;
    CHECK(fork_workers(2, attach_and_take, NULL) == 2);
    /* The parent's own key, spent at 10 s with a TAT of 15 s, is at rest by
     * 50 s: the new burst. */
    CHECK(take_all(table, 60 * SEC, "parent") == 2);
    /* The header's policy keeps the limit the table was laid with: an
     * attach still checks it as laid. */
    weir_keyed *again = NULL;
    CHECK_STATUS(weir_keyed_attach(region, region_bytes, &again), WEIR_OK);
    CHECK(again == table);
    weir_keyed_free(table);
    CHECK(munmap(region, region_bytes) == 0);
}

int main(void) {
    heap_and_placed();
    shared_between_processes();
    CHECK_DONE();
}
