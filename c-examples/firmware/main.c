/* weir on a microcontroller: every function of the firmware build, run under
 * QEMU on a Cortex-M4 (mps2-an386) and a Cortex-M0 (microbit). It checks
 * scenario 6 of docs/design.md, the limiter (whole-interval refill, the window grid, the
 * cooldown's release at its deadline, every constructor error), a backoff
 * schedule, deadlines, the rate word's burst, alone and shared with an
 * interrupt handler, and every handle type laid in static memory (breaker,
 * shedder, bucket, gate, window, sliding window, period, budget, adaptive
 * limit, pool, lease: footprint, init_in, its calls, too-small and misaligned memory
 * refused; a bloom of rate words and one of GCRA words: place_footprint,
 * place_in, keys decided), with a breaker and a bloom shared with the SysTick
 * handler. It prints each
 * failure, each handle's footprint, and a closing "N passed, N failed"
 * line, and exits with the failure count.
 *
 * Time is whatever the firmware's clock says, in nanoseconds; here it is
 * just numbers, which is all weir ever sees. Build and run:
 * .ci/stages/firmware.sh (docs/firmware.md). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "weir.h"

#define MS INT64_C(1000000)
#define SEC (1000 * MS)

static uint32_t passed, failed;

/* Decimal text of `value` (no C library here). */
static const char *decimal(int64_t value, char buf[24]) {
    char *p = buf + 23;
    uint64_t magnitude = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    *p = '\0';
    do {
        *--p = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    if (value < 0) {
        *--p = '-';
    }
    return p;
}

static void print_number(int64_t value) {
    char buf[24];
    board_print(decimal(value, buf));
}

static void check(bool ok, const char *what, int line) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    board_print("FAIL line ");
    print_number(line);
    board_print(": ");
    board_print(what);
    board_print("\n");
}

#define CHECK(expr) check((expr), #expr, __LINE__)

static bool same_text(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* ---- The SDK's critical section (only in the sdk-critical-section build).
 * A real SDK would mask interrupts or take a hardware spinlock; this one
 * masks interrupts and counts, so the test can see that weir used it and
 * that every enter was matched by an exit. */
#if defined(WEIR_EXAMPLE_SDK_CRITICAL_SECTION)
static uint32_t critical_entered, critical_depth;

uint32_t weir_critical_enter(void) {
    uint32_t primask;
    __asm__ volatile("mrs %0, PRIMASK\n\tcpsid i" : "=r"(primask)::"memory");
    critical_entered++;
    critical_depth++;
    return primask;
}

void weir_critical_exit(uint32_t primask) {
    critical_depth--;
    if ((primask & 1) == 0) {
        __asm__ volatile("cpsie i" ::: "memory");
    }
}
#endif

/* ---- Library facts: version, status texts, what words guarantee here. */
static void library(void) {
    CHECK(same_text(weir_version(), WEIR_VERSION));
    CHECK(same_text(weir_status_str(WEIR_OK), "ok"));
    const char *unknown = weir_status_str(-1);
    CHECK(unknown != NULL && !same_text(unknown, "ok"));
    CHECK(!same_text(weir_status_str(WEIR_ERR_WORDS_NOT_SHAREABLE), unknown));
    /* Cortex-M has no 64-bit atomics: words take the build's critical
     * section, so they are not shareable, and the header knew it too. */
    CHECK(weir_words_shareable() == WEIR_ERR_WORDS_NOT_SHAREABLE);
    CHECK(WEIR_WORDS_LOCK_FREE == 0);
}

/* ---- Scenario 6 (docs/design.md): the embeddable limiter. */
static weir_limiter made(weir_status status, weir_limiter value, int line) {
    check(status == WEIR_OK, "limiter constructor answered WEIR_OK", line);
    return value;
}

static weir_limiter bucket(uint64_t capacity, uint64_t amount, int64_t interval, int64_t anchor,
                           uint64_t initial, int64_t now, int line) {
    weir_limiter l;
    weir_status s = weir_limiter_bucket(&l, capacity, amount, interval, anchor, initial, now);
    return made(s, l, line);
}

static weir_limiter window(uint64_t capacity, int64_t length, int64_t start, uint64_t initial,
                           int64_t now, int line) {
    weir_limiter l;
    weir_status s = weir_limiter_fixed_window(&l, capacity, length, start, initial, now);
    return made(s, l, line);
}

static weir_limiter cooldown(uint64_t capacity, int64_t length, int64_t end, uint64_t initial,
                             int64_t now, int line) {
    weir_limiter l;
    weir_status s = weir_limiter_cooldown(&l, capacity, length, end, initial, now);
    return made(s, l, line);
}

static void limiter_refill(void) {
    /* One unit per 10 ms, starting empty at 0. Refill comes in whole
     * intervals only, and the part of an interval already run is kept: at
     * 15 ms one unit has come (at 10 ms) and the next is due at 20 ms. */
    weir_limiter l = bucket(5, 1, 10 * MS, 0, 0, 0, __LINE__);
    CHECK(weir_limiter_is_bucket(&l));
    CHECK(!weir_limiter_is_fixed_window(&l) && !weir_limiter_is_cooldown(&l));
    CHECK(weir_limiter_capacity(&l) == 5);
    CHECK(weir_limiter_available(&l, 9 * MS) == 0);
    CHECK(weir_limiter_try_consume(&l, 15 * MS, 1));
    CHECK(weir_limiter_available(&l, 19 * MS) == 0);
    CHECK(weir_limiter_available(&l, 20 * MS) == 1);
    int64_t anchor = -1;
    CHECK(weir_limiter_last_refill(&l, 15 * MS, &anchor) == WEIR_OK && anchor == 10 * MS);
    uint64_t amount = 0;
    int64_t interval = 0;
    CHECK(weir_limiter_refill_amount(&l, &amount) == WEIR_OK && amount == 1);
    CHECK(weir_limiter_refill_interval_ns(&l, &interval) == WEIR_OK && interval == 10 * MS);

    /* Capacity 10 and 8 held: a second of intervals fills it to 10 and the
     * rest is discarded, not banked. */
    l = bucket(10, 1, 100 * MS, 0, 8, 0, __LINE__);
    CHECK(weir_limiter_available(&l, 1000 * MS) == 10);
    CHECK(weir_limiter_try_consume(&l, 1000 * MS, 10));
    CHECK(!weir_limiter_try_consume(&l, 1000 * MS, 1));
    CHECK(weir_limiter_consume(&l, 1000 * MS, 1) == WEIR_ERR_LIMITER_RATE_LIMITED);
    CHECK(weir_limiter_available(&l, 1099 * MS) == 0);
    CHECK(weir_limiter_available(&l, 1100 * MS) == 1);
    CHECK(weir_limiter_consume(&l, 1100 * MS, 1) == WEIR_OK);
    /* All or nothing, and zero is not an amount. */
    CHECK(!weir_limiter_try_consume(&l, 1300 * MS, 3));
    CHECK(weir_limiter_available(&l, 1300 * MS) == 2);
    CHECK(!weir_limiter_try_consume(&l, 1300 * MS, 0));
    CHECK(weir_limiter_consume(&l, 1300 * MS, 0) == WEIR_ERR_LIMITER_INVALID_AMOUNT);
}

static void limiter_window_grid(void) {
    /* A 100 ms window anchored at 99 ms rolls over at 199, 299, ... : the
     * grid follows the anchor, not multiples of the window. */
    weir_limiter l = window(3, 100 * MS, 99 * MS, 3, 99 * MS, __LINE__);
    CHECK(weir_limiter_is_fixed_window(&l));
    CHECK(weir_limiter_try_consume(&l, 99 * MS, 3));
    CHECK(!weir_limiter_try_consume(&l, 100 * MS, 1));
    CHECK(weir_limiter_available(&l, 198 * MS) == 0);
    CHECK(weir_limiter_available(&l, 199 * MS) == 3);
    int64_t start = 0, length = 0;
    CHECK(weir_limiter_window_start(&l, 450 * MS, &start) == WEIR_OK && start == 399 * MS);
    CHECK(weir_limiter_window_ns(&l, &length) == WEIR_OK && length == 100 * MS);
    CHECK(weir_limiter_try_consume(&l, 450 * MS, 2));
    CHECK(weir_limiter_available(&l, 498 * MS) == 1);
    CHECK(weir_limiter_available(&l, 499 * MS) == 3);
}

static void limiter_cooldown_release(void) {
    /* A gate armed until 500: nothing before, everything at 500 itself. */
    weir_limiter l = cooldown(4, 1000, 500, 0, 100, __LINE__);
    CHECK(weir_limiter_is_cooldown(&l));
    CHECK(weir_limiter_available(&l, 499) == 0);
    CHECK(!weir_limiter_try_consume(&l, 499, 1));
    CHECK(weir_limiter_available(&l, 500) == 4);
    /* Draining the last unit arms the gate at now + cooldown. */
    int64_t end = 0, length = 0;
    CHECK(weir_limiter_try_consume(&l, 600, 3));
    CHECK(weir_limiter_cooldown_end(&l, &end) == WEIR_OK && end == 500);
    CHECK(weir_limiter_try_consume(&l, 700, 1));
    CHECK(weir_limiter_cooldown_end(&l, &end) == WEIR_OK && end == 1700);
    CHECK(weir_limiter_cooldown_ns(&l, &length) == WEIR_OK && length == 1000);
    CHECK(weir_limiter_available(&l, 1699) == 0);
    CHECK(weir_limiter_available(&l, 1700) == 4);
    CHECK(weir_limiter_try_consume(&l, 1700, 4));
}

static void limiter_errors(void) {
    weir_limiter out = bucket(3, 1, 10, 0, 3, 0, __LINE__);
    CHECK(weir_limiter_bucket(NULL, 1, 1, 1, 0, 0, 0) == WEIR_ERR_NULL);
    CHECK(weir_limiter_bucket(&out, 0, 1, 1, 0, 0, 0) == WEIR_ERR_LIMITER_ZERO_CAPACITY);
    CHECK(weir_limiter_bucket(&out, 1, 0, 1, 0, 0, 0) == WEIR_ERR_LIMITER_ZERO_REFILL_AMOUNT);
    CHECK(weir_limiter_bucket(&out, 1, 1, 0, 0, 0, 0) == WEIR_ERR_LIMITER_ZERO_REFILL_INTERVAL);
    CHECK(weir_limiter_bucket(&out, 1, 1, 1, 0, 2, 0) == WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY);
    CHECK(weir_limiter_bucket(&out, 1, 1, 1, 1, 0, 0) == WEIR_ERR_LIMITER_BUCKET_ANCHOR_IN_FUTURE);
    CHECK(weir_limiter_fixed_window(&out, 1, 0, 0, 0, 0) == WEIR_ERR_LIMITER_ZERO_WINDOW);
    CHECK(weir_limiter_fixed_window(&out, 1, 1, 1, 0, 0) == WEIR_ERR_LIMITER_WINDOW_ANCHOR_IN_FUTURE);
    CHECK(weir_limiter_cooldown(&out, 1, 0, 0, 0, 0) == WEIR_ERR_LIMITER_ZERO_COOLDOWN);
    CHECK(weir_limiter_cooldown(&out, 1, 1, 1, 1, 0) == WEIR_ERR_LIMITER_COOLDOWN_ARMED_WITH_TOKENS);
    /* A failed constructor left `out` alone: still the bucket made above. */
    CHECK(weir_limiter_is_bucket(&out) && weir_limiter_capacity(&out) == 3);
    /* Draining a cooldown where now + cooldown passes INT64_MAX. */
    weir_limiter gate = cooldown(1, 10, 0, 1, 0, __LINE__);
    CHECK(weir_limiter_consume(&gate, INT64_MAX - 5, 1) == WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW);
    CHECK(weir_limiter_available(&gate, INT64_MAX - 5) == 1);
    int64_t unused = 0;
    CHECK(weir_limiter_window_ns(&out, &unused) == WEIR_ERR_LIMITER_WRONG_VARIANT);
    CHECK(weir_limiter_cooldown_end(&out, &unused) == WEIR_ERR_LIMITER_WRONG_VARIANT);
    /* A zeroed value is not a limiter a constructor made. */
    weir_limiter zeroed = {0};
    CHECK(weir_limiter_consume(&zeroed, 0, 1) == WEIR_ERR_LIMITER_CORRUPT);
    CHECK(!weir_limiter_try_consume(&zeroed, 0, 1));
}

/* ---- Backoff (docs/design.md, scenario 5) and deadlines. */
static void backoff(void) {
    weir_backoff preset = weir_backoff_preset();
    CHECK(weir_backoff_check(&preset) == WEIR_OK);
    CHECK(weir_backoff_ceiling(&preset, 1) == 100 * MS);
    CHECK(weir_backoff_ceiling(&preset, 2) == 200 * MS);
    CHECK(weir_backoff_ceiling(&preset, 40) == 1000 * MS);
    /* Three calls in all: after the first and second, one more. */
    CHECK(weir_backoff_more(&preset, 1) && weir_backoff_more(&preset, 2));
    CHECK(!weir_backoff_more(&preset, 3));
    /* The preset's schedule for draws of 0.5: 100 ms, then 200 ms. */
    const double halves[] = {0.5, 0.5, 0.5};
    int64_t schedule[4] = {-1, -1, -1, -1};
    CHECK(weir_backoff_schedule(&preset, halves, 3, schedule, 4) == 2);
    CHECK(schedule[0] == 100 * MS && schedule[1] == 200 * MS && schedule[2] == -1);
    /* Full jitter draws over [0, ceiling]. */
    weir_backoff full = weir_backoff_full_jitter();
    CHECK(weir_backoff_delay(&full, 1, 0.0, 0) == 0);
    int64_t high = weir_backoff_delay(&full, 2, 0.999, 0);
    CHECK(high > 150 * MS && high <= 200 * MS);
    /* A shrinking factor is refused. */
    weir_backoff bad = preset;
    bad.factor = 0.5;
    CHECK(weir_backoff_check(&bad) != WEIR_OK);
}

static void deadline(void) {
    weir_deadline d = weir_deadline_start(100 * MS, 1 * SEC);
    int64_t left = 0;
    CHECK(!weir_deadline_expired(&d, 1 * SEC + 99 * MS));
    CHECK(weir_deadline_expired(&d, 1 * SEC + 100 * MS));
    CHECK(weir_deadline_remaining(&d, 1 * SEC + 40 * MS, &left) && left == 60 * MS);
    CHECK(weir_deadline_remaining(&d, 5 * SEC, &left) && left == 0);
    weir_deadline none = weir_deadline_start(0, 0);
    CHECK(!weir_deadline_expired(&none, INT64_MAX));
    CHECK(!weir_deadline_remaining(&none, 0, &left));
    CHECK(weir_deadline_expired(NULL, 0));
}

/* ---- The rate word: a burst per window, in 8 bytes of the caller's. */
static void rate(void) {
    weir_rate_limit limit;
    CHECK(weir_rate_limit_new(10.0, 5, &limit) == WEIR_OK);
    CHECK(limit.burst == 5);
    weir_rate_limit unused;
    CHECK(weir_rate_limit_new(10.0, 0, &unused) == WEIR_ERR_RATE_BURST);
    CHECK(weir_rate_limit_new(0.0, 5, &unused) == WEIR_ERR_RATE_ZERO);
    CHECK(weir_rate_limit_new(-1.0, 5, &unused) == WEIR_ERR_NEGATIVE);
    CHECK(weir_rate_limit_new(1e12, 1, &unused) == WEIR_ERR_RATE_TOO_FAST);

    /* Five at once, then nothing until the window (5 x 100 ms) expires. */
    static weir_rate word; /* zero: ready */
    const int64_t t0 = 3 * SEC;
    uint32_t allowed = 0;
    for (int i = 0; i < 8; i++) {
        allowed += weir_rate_allow(&word, &limit, t0) ? 1u : 0u;
    }
    CHECK(allowed == 5);
    CHECK(!weir_rate_allow(&word, &limit, t0 + 100 * MS));
    int64_t wait = weir_rate_next(&word, &limit, t0);
    CHECK(wait > 0 && wait <= 500 * MS);
    CHECK(weir_rate_allow(&word, &limit, t0 + wait));
    /* Two words are two limiters. */
    weir_rate other = {0};
    CHECK(weir_rate_allow(&other, &limit, t0));
    CHECK(weir_rate_next(&other, &limit, t0) == 0);
    /* Bad input refuses: NULL, a negative now, a misaligned word. */
    CHECK(!weir_rate_allow(NULL, &limit, t0));
    CHECK(!weir_rate_allow(&other, NULL, t0));
    CHECK(!weir_rate_allow(&other, &limit, -1));
    static uint64_t storage[2];
    weir_rate *odd = (weir_rate *)(void *)((char *)storage + 4);
    CHECK(!weir_rate_allow(odd, &limit, t0));
    CHECK(weir_rate_next(odd, &limit, t0) == INT64_MAX);
    CHECK(storage[0] == 0 && storage[1] == 0);
}

/* ---- The rate word shared with an interrupt handler. SysTick fires every
 * few hundred cycles and takes from the same word as the main loop. Each
 * round opens a fresh window (a `now` 10 s after the last) with a burst of
 * 4; the main loop takes until the word refuses, the handler takes whenever
 * it lands inside a round, both at the round's `now`, so together they must
 * get exactly 4, however they interleave. A lost update (a read-modify-
 * write cut by the interrupt) would grant more; a lock the handler cannot
 * take while the main loop holds it would hang, and the run time out. */
#define SHARED_BURST 4
static weir_rate shared_word;
static weir_rate_limit shared_limit;
static volatile int64_t round_now;
static volatile bool round_open;
static volatile uint32_t tick_calls, tick_allowed;

static void breaker_tick(void);
static void bloom_tick(void);

void board_tick(void) {
    tick_calls++;
    breaker_tick();
    bloom_tick();
    /* round_now is two words on these cores; it is only read while the main
     * loop, which writes it before opening the round, is not writing it. */
    if (round_open && weir_rate_allow(&shared_word, &shared_limit, round_now)) {
        tick_allowed++;
    }
}

static void rate_with_an_interrupt_handler(void) {
    CHECK(weir_rate_limit_new(1.0, SHARED_BURST, &shared_limit) == WEIR_OK);
    uint32_t rounds = 0, wrong = 0, shared = 0, handler_total = 0;
    board_ticks_start(300);
    /* Bounded, so a timer that never fires fails the check below instead
     * of spinning here. */
    while (shared < 10 && rounds < 200000) {
        rounds++;
        round_now = (int64_t)rounds * 10 * SEC;
        tick_allowed = 0;
        round_open = true;
        uint32_t main_allowed = 0;
        while (weir_rate_allow(&shared_word, &shared_limit, round_now)) {
            main_allowed++;
        }
        round_open = false;
        uint32_t handler_allowed = tick_allowed;
        wrong += main_allowed + handler_allowed != SHARED_BURST ? 1u : 0u;
        shared += main_allowed > 0 && handler_allowed > 0 ? 1u : 0u;
        handler_total += handler_allowed;
    }
    board_ticks_stop();
    CHECK(wrong == 0);
    CHECK(shared >= 10);
    board_print("rate word shared with SysTick: ");
    print_number(rounds);
    board_print(" rounds of burst 4, ");
    print_number(shared);
    board_print(" split between main loop and handler (");
    print_number(handler_total);
    board_print(" events to the handler, ");
    print_number(tick_calls);
    board_print(" ticks), ");
    print_number(wrong);
    board_print(" rounds not exactly 4\n");
}

/* ---- Handles laid in static memory: each type's footprint, its init_in
 * in a static array, its calls; no heap anywhere. Each handle's lock is the
 * build's critical section. */

/* Static storage for the handles, 8-aligned (every footprint's alignment is
 * at most 8 here; checked). Sizes cover the 32-bit footprints with room. */
#define STORE(name, bytes) static uint64_t name[((bytes) + 7) / 8]
STORE(breaker_mem, 1600);
STORE(shared_breaker_mem, 1600);
STORE(shedder_mem, 2700);
STORE(bucket_mem, 128);
STORE(gate_mem, 64);
STORE(window_mem, 256);
STORE(sliding_mem, 128);
STORE(period_mem, 128);
STORE(budget_mem, 320);
STORE(concurrency_mem, 1024);
STORE(pool_mem, 1280);
STORE(lease_mem, 320);
/* A placed bloom's lines are 64-byte aligned (its footprint's alignment). */
#define STORE64(name, bytes) static uint64_t name[((bytes) + 63) / 64 * 8] __attribute__((aligned(64)))
STORE64(bloom_mem, 768);
STORE64(gcra_bloom_mem, 256);

/* The footprint answered for a handle fits its static array and the
 * alignment is one the array has; prints the bytes (the RAM the handle
 * takes) and answers whether all is well. */
static bool fits_aligned(const char *name, weir_status status, size_t bytes, size_t align,
                         size_t room, size_t room_align, int line) {
    bool ok = status == WEIR_OK && bytes <= room && align != 0 && align <= room_align &&
              (align & (align - 1)) == 0;
    check(ok, "footprint answered and fits its static array", line);
    board_print("  footprint ");
    board_print(name);
    board_print(": ");
    print_number((int64_t)bytes);
    board_print(" bytes, align ");
    print_number((int64_t)align);
    board_print("\n");
    return ok;
}

#define FITS(name, status, bytes, align, mem) \
    fits_aligned(name, status, bytes, align, sizeof(mem), 8, __LINE__)
#define FITS64(name, status, bytes, align, mem) \
    fits_aligned(name, status, bytes, align, sizeof(mem), 64, __LINE__)

/* One byte past an 8-aligned array: never a multiple of an alignment above
 * one. */
static void *misaligned(uint64_t *mem) {
    return (char *)mem + 1;
}

static weir_breaker *lay_breaker(uint64_t *mem, size_t room, int64_t now) {
    size_t bytes = 0, align = 0;
    weir_breaker *out = NULL;
    CHECK(weir_breaker_footprint(NULL, &bytes, &align) == WEIR_OK);
    CHECK(bytes <= room);
    /* Too small and misaligned memory are refused, and nothing written. */
    CHECK(weir_breaker_init_in(mem, bytes - 1, NULL, now, &out) == WEIR_ERR_PLACED_TOO_SMALL);
    CHECK(weir_breaker_init_in(misaligned(mem), room - 1, NULL, now, &out) ==
          WEIR_ERR_PLACED_MISALIGNED);
    CHECK(weir_breaker_init_in(NULL, room, NULL, now, &out) == WEIR_ERR_NULL);
    CHECK(out == NULL);
    CHECK(weir_breaker_init_in(mem, room, NULL, now, &out) == WEIR_OK);
    CHECK(out == (weir_breaker *)(void *)mem);
    return out;
}

static void placed_breaker(void) {
    size_t bytes = 0, align = 0;
    FITS("breaker (preset: 40 buckets)", weir_breaker_footprint(NULL, &bytes, &align), bytes, align,
         breaker_mem);
    weir_breaker *b = lay_breaker(breaker_mem, sizeof breaker_mem, 0);
    /* A healthy window lets everything through. */
    weir_breaker_ticket t;
    CHECK(weir_breaker_allow(b, 1 * MS, 0.0, &t) && t.flying == 1);
    CHECK(weir_breaker_pass(b, &t, 2 * MS) == WEIR_OK);
    CHECK(weir_breaker_pass(b, &t, 2 * MS) == WEIR_ERR_SETTLED);
    CHECK(weir_breaker_ratio(b, 2 * MS) == 0.0);
    /* 100 failures over a second (rolls of 0.99 get through while the
     * ratio stays under them): the ratio climbs to (101 - 5 - 1.5) / 102. */
    uint32_t admitted = 0;
    for (int i = 0; i < 100; i++) {
        int64_t now = 10 * MS + i * 10 * MS;
        if (weir_breaker_allow(b, now, 0.99, &t)) {
            admitted++;
            CHECK(weir_breaker_fail(b, &t, now) == WEIR_OK);
        }
    }
    CHECK(admitted == 100);
    double ratio = weir_breaker_ratio(b, 1 * SEC);
    CHECK(ratio > 0.92 && ratio < 0.93);
    /* A roll under the ratio is refused, and its ticket comes back settled. */
    CHECK(!weir_breaker_allow(b, 1 * SEC, 0.5, &t) && t.flying == 0);
    CHECK(weir_breaker_fail(b, &t, 1 * SEC) == WEIR_ERR_SETTLED);
    weir_breaker_tally tally;
    CHECK(weir_breaker_read_tally(b, 1 * SEC, &tally) == WEIR_OK);
    CHECK(tally.total == 102 && tally.success == 1 && tally.failure == 100 && tally.drop == 1);
    /* Counting, then free: a placed breaker's free does nothing, and the
     * breaker goes on deciding. */
    CHECK(weir_breaker_start_counting(b) == WEIR_OK);
    CHECK(weir_breaker_allow(b, 1 * SEC, 0.999, &t));
    weir_breaker_free(b);
    CHECK(weir_breaker_pass(b, &t, 1 * SEC) == WEIR_OK);
    weir_counts counts;
    CHECK(weir_breaker_read_counts(b, &counts) == WEIR_OK && counts.admitted == 1);
}

/* ---- The breaker shared with SysTick: the handler asks and fails at the
 * same `now` the main loop asks and passes at, on one placed breaker. Every
 * call takes the breaker's lock, the build's critical section, so the
 * handler never lands inside the main loop's update: the window's tally
 * must equal what the two sides counted. A lost update would break an
 * equality below; a lock the handler could not take would hang the run. */
static weir_breaker *shared_breaker;
static volatile bool breaker_ticks;
static volatile uint32_t tick_breaker_admitted, tick_breaker_refused, tick_breaker_errors;
#define SHARED_NOW (5 * SEC)

static void breaker_tick(void) {
    if (!breaker_ticks) {
        return;
    }
    weir_breaker_ticket t;
    if (weir_breaker_allow(shared_breaker, SHARED_NOW, 0.999, &t)) {
        tick_breaker_admitted++;
        if (weir_breaker_fail(shared_breaker, &t, SHARED_NOW) != WEIR_OK) {
            tick_breaker_errors++;
        }
    } else {
        tick_breaker_refused++;
    }
}

static void breaker_with_an_interrupt_handler(void) {
    shared_breaker = lay_breaker(shared_breaker_mem, sizeof shared_breaker_mem, 0);
    uint32_t admitted = 0, refused = 0, errors = 0;
    breaker_ticks = true;
    board_ticks_start(700);
    /* Bounded, so a timer that never fires fails the check below instead
     * of spinning here. */
    for (uint32_t i = 0; tick_breaker_admitted < 20 && i < 200000; i++) {
        weir_breaker_ticket t;
        if (weir_breaker_allow(shared_breaker, SHARED_NOW, 0.999, &t)) {
            admitted++;
            errors += weir_breaker_pass(shared_breaker, &t, SHARED_NOW) == WEIR_OK ? 0u : 1u;
        } else {
            refused++;
        }
    }
    board_ticks_stop();
    breaker_ticks = false;
    weir_breaker_tally tally;
    CHECK(weir_breaker_read_tally(shared_breaker, SHARED_NOW, &tally) == WEIR_OK);
    CHECK(errors == 0 && tick_breaker_errors == 0);
    CHECK(tick_breaker_admitted >= 20);
    CHECK(tally.success == (int64_t)admitted);
    CHECK(tally.failure == (int64_t)tick_breaker_admitted);
    CHECK(tally.drop == (int64_t)(refused + tick_breaker_refused));
    CHECK(tally.total ==
          (int64_t)(admitted + refused + tick_breaker_admitted + tick_breaker_refused));
    board_print("breaker shared with SysTick: main loop ");
    print_number(admitted);
    board_print(" passed, handler ");
    print_number(tick_breaker_admitted);
    board_print(" failed, ");
    print_number(refused + tick_breaker_refused);
    board_print(" refused; window tally ");
    print_number(tally.total);
    board_print("\n");
}

static void placed_shedder(void) {
    size_t bytes = 0, align = 0;
    FITS("shedder (preset: 50 buckets)", weir_shedder_footprint(NULL, &bytes, &align), bytes,
         align, shedder_mem);
    weir_shedder *s = NULL;
    CHECK(weir_shedder_init_in(shedder_mem, bytes - 1, NULL, 0, &s) == WEIR_ERR_PLACED_TOO_SMALL);
    CHECK(weir_shedder_init_in(shedder_mem, sizeof shedder_mem, NULL, 0, &s) == WEIR_OK);
    /* Hot but not full: nothing is refused before a call has completed. */
    weir_shedder_ticket t[3];
    for (int i = 0; i < 3; i++) {
        CHECK(weir_shedder_allow(s, 1 * MS, 990, &t[i]));
    }
    CHECK(weir_shedder_flying(s) == 3);
    CHECK(weir_shedder_pass(s, &t[0], 5 * MS) == WEIR_OK);
    CHECK(weir_shedder_fail(s, &t[1]) == WEIR_OK);
    CHECK(weir_shedder_pass(s, &t[2], 6 * MS) == WEIR_OK);
    CHECK(weir_shedder_pass(s, &t[2], 6 * MS) == WEIR_ERR_SETTLED);
    CHECK(weir_shedder_flying(s) == 0);
    weir_shedder_free(s);
    CHECK(weir_shedder_flying(s) == 0);
}

static void placed_bucket(void) {
    size_t bytes = 0, align = 0;
    FITS("bucket", weir_bucket_footprint(&bytes, &align), bytes, align, bucket_mem);
    weir_bucket *b = NULL;
    CHECK(weir_bucket_init_in(bucket_mem, bytes, 10.0, 5.0, 0, &b) == WEIR_OK);
    uint32_t taken = 0;
    for (int i = 0; i < 8; i++) {
        taken += weir_bucket_take(b, 0, 1.0) ? 1u : 0u;
    }
    CHECK(taken == 5);
    CHECK(weir_bucket_next(b, 0, 1.0) == 100 * MS);
    CHECK(!weir_bucket_take(b, 99 * MS, 1.0));
    CHECK(weir_bucket_take(b, 100 * MS, 1.0));
    CHECK(weir_bucket_tokens(b, 300 * MS) == 2.0);
}

static void placed_gate(void) {
    size_t bytes = 0, align = 0;
    FITS("gate", weir_gate_footprint(&bytes, &align), bytes, align, gate_mem);
    weir_gate *g = NULL;
    CHECK(weir_gate_init_in(gate_mem, bytes, 2, &g) == WEIR_OK);
    CHECK(weir_gate_enter(g) && weir_gate_enter(g));
    CHECK(!weir_gate_enter(g));
    CHECK(weir_gate_held(g) == 2);
    weir_gate_leave(g);
    CHECK(weir_gate_enter(g));
    CHECK(weir_gate_held(g) == 2);
}

static void placed_window(void) {
    size_t bytes = 0, align = 0;
    FITS("window (4 buckets)", weir_window_footprint(4, 4 * SEC, &bytes, &align), bytes, align,
         window_mem);
    weir_window *w = NULL;
    CHECK(weir_window_init_in(window_mem, bytes, 4, 4 * SEC, 0, &w) == WEIR_OK);
    CHECK(weir_window_add(w, 0, 5) == WEIR_OK);
    CHECK(weir_window_add(w, 500 * MS, 7) == WEIR_OK);
    CHECK(weir_window_add(w, 1500 * MS, 1) == WEIR_OK);
    weir_window_total total;
    CHECK(weir_window_read_total(w, 1500 * MS, true, &total) == WEIR_OK);
    CHECK(total.sum == 13 && total.count == 3);
    CHECK(weir_window_read_total(w, 1500 * MS, false, &total) == WEIR_OK);
    CHECK(total.sum == 12 && total.count == 2);
    /* Four seconds on, the first bucket has left the window. */
    CHECK(weir_window_read_total(w, 4 * SEC + 500 * MS, true, &total) == WEIR_OK);
    CHECK(total.sum == 1 && total.count == 1);
    CHECK(weir_window_size(w) == 4 && weir_window_width(w) == 1 * SEC);
}

static void placed_sliding(void) {
    size_t bytes = 0, align = 0;
    FITS("sliding (quota 3)", weir_sliding_footprint(3, 1 * SEC, &bytes, &align), bytes, align,
         sliding_mem);
    weir_sliding *s = NULL;
    CHECK(weir_sliding_init_in(sliding_mem, bytes, 3, 1 * SEC, &s) == WEIR_OK);
    CHECK(weir_sliding_take(s, 0) && weir_sliding_take(s, 1 * MS) && weir_sliding_take(s, 2 * MS));
    CHECK(!weir_sliding_take(s, 3 * MS));
    CHECK(weir_sliding_left(s, 3 * MS) == 0);
    CHECK(weir_sliding_next(s, 3 * MS) == 997 * MS);
    CHECK(weir_sliding_take(s, 1 * SEC));
    CHECK(weir_sliding_left(s, 1 * SEC + 1 * MS) == 1);
}

static void period_budget_concurrency(void) {
    size_t bytes = 0, align = 0;
    FITS("period", weir_period_footprint(&bytes, &align), bytes, align, period_mem);
    weir_period *p = NULL;
    CHECK(weir_period_init_in(period_mem, bytes, 2, 1 * SEC, false, &p) == WEIR_OK);
    CHECK(weir_period_take(p, 0) == WEIR_PERIOD_QUOTA_UNDER);
    CHECK(weir_period_take(p, 1) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_take(p, 2) == WEIR_PERIOD_QUOTA_OVER);
    CHECK(weir_period_left(p, 1 * SEC) == 2);

    FITS("budget", weir_budget_footprint(&bytes, &align), bytes, align, budget_mem);
    weir_budget *b = NULL;
    CHECK(weir_budget_init_in(budget_mem, bytes, NULL, 0, &b) == WEIR_OK);
    int64_t left = weir_budget_left(b, 0);
    CHECK(left > 0);
    for (int64_t i = 0; i < left; i++) {
        CHECK(weir_budget_withdraw(b, 0));
    }
    CHECK(!weir_budget_withdraw(b, 0));

    FITS("concurrency", weir_concurrency_footprint(&bytes, &align), bytes, align, concurrency_mem);
    weir_concurrency *c = NULL;
    CHECK(weir_concurrency_init_in(concurrency_mem, bytes, NULL, &c) == WEIR_OK);
    weir_concurrency_ticket t;
    CHECK(weir_concurrency_enter(c, 0, &t));
    CHECK(weir_concurrency_flying(c) == 1);
    CHECK(weir_concurrency_leave(c, &t, 10 * MS, false) == WEIR_OK);
    CHECK(weir_concurrency_flying(c) == 0 && weir_concurrency_long_rtt(c) > 0.0);
}

static void placed_pool(void) {
    size_t bytes = 0, align = 0;
    FITS("pool (preset: 10 resources)", weir_pool_footprint(NULL, &bytes, &align), bytes, align,
         pool_mem);
    weir_pool *p = NULL;
    CHECK(weir_pool_init_in(pool_mem, bytes - 1, NULL, &p) == WEIR_ERR_PLACED_TOO_SMALL);
    CHECK(weir_pool_init_in(misaligned(pool_mem), sizeof pool_mem - 1, NULL, &p) ==
          WEIR_ERR_PLACED_MISALIGNED);
    CHECK(p == NULL);
    CHECK(weir_pool_init_in(pool_mem, sizeof pool_mem, NULL, &p) == WEIR_OK);
    /* Empty: the first take asks the caller to make a resource. */
    weir_pool_taken t = weir_pool_take(p, 0);
    CHECK(t.kind == WEIR_POOL_TAKEN_MAKE && t.item == 0);
    CHECK(weir_pool_made(p, 7, 0) == WEIR_OK);
    CHECK(weir_pool_busy(p) == 1 && weir_pool_idle(p) == 0);
    bool kept = false;
    CHECK(weir_pool_give(p, 7, 1 * MS, &kept) == WEIR_OK && kept);
    CHECK(weir_pool_idle(p) == 1 && weir_pool_live(p) == 1);
    /* The next take lends it again. */
    t = weir_pool_take(p, 2 * MS);
    CHECK(t.kind == WEIR_POOL_TAKEN_READY && t.item == 7);
    CHECK(weir_pool_give(p, 7, 3 * MS, &kept) == WEIR_OK && kept);
    /* Closing hands back what is idle. */
    uintptr_t items[4] = {0, 0, 0, 0};
    CHECK(weir_pool_close(p, items, 4) == 1 && items[0] == 7);
    CHECK(weir_pool_live(p) == 0);
    weir_pool_free(p);
    CHECK(weir_pool_live(p) == 0);
}

/* ---- A bloom placed in static memory: handle and words in one array of
 * the program's, keyed by device name. 64 rate words (size_log2 6, 8 lines)
 * at 10/s with a burst of 3 (a window of 300 ms), 2 words per key. Under
 * these seeds sensor-1's words are 43 and 45, sensor-4's 41 and 45 (the
 * same line, one word shared), sensor-2's 35 and 38: a key alone gets its
 * burst, and a key that shares one of its words still gets its burst from
 * the other. */
#define BLOOM_SEED0 UINT64_C(0x5eed0001)
#define BLOOM_SEED1 UINT64_C(0x5eed0002)

static uint32_t bloom_asks(weir_bloom *b, int64_t now, const char *key, uint32_t times) {
    size_t len = 0;
    while (key[len] != '\0') {
        len++;
    }
    uint32_t allowed = 0;
    for (uint32_t i = 0; i < times; i++) {
        allowed += weir_bloom_allow(b, now, key, len) ? 1u : 0u;
    }
    return allowed;
}

static void placed_bloom(void) {
    size_t bytes = 0, align = 0;
    weir_rate_limit limit;
    CHECK(weir_rate_limit_new(10.0, 3, &limit) == WEIR_OK);
    FITS64("bloom (64 rate words, 2 per key)", weir_bloom_place_footprint(6, &bytes, &align), bytes,
           align, bloom_mem);
    CHECK(align == 64);
    CHECK(weir_bloom_place_footprint(2, &bytes, &align) == WEIR_ERR_BLOOM_TOO_FEW_WORDS);
    CHECK(weir_bloom_place_footprint(6, &bytes, &align) == WEIR_OK);
    weir_bloom *b = NULL;
    /* The arguments first, then the memory; nothing written on an error. */
    CHECK(weir_bloom_place_in(bloom_mem, bytes, 6, 0, &limit, BLOOM_SEED0, BLOOM_SEED1, &b) ==
          WEIR_ERR_BLOOM_HASHES);
    CHECK(weir_bloom_place_in(bloom_mem, bytes, 2, 1, &limit, BLOOM_SEED0, BLOOM_SEED1, &b) ==
          WEIR_ERR_BLOOM_TOO_FEW_WORDS);
    CHECK(weir_bloom_place_in(bloom_mem, bytes - 1, 6, 2, &limit, BLOOM_SEED0, BLOOM_SEED1, &b) ==
          WEIR_ERR_PLACED_TOO_SMALL);
    CHECK(weir_bloom_place_in((char *)bloom_mem + 8, bytes, 6, 2, &limit, BLOOM_SEED0, BLOOM_SEED1,
                              &b) == WEIR_ERR_PLACED_MISALIGNED);
    CHECK(weir_bloom_place_in(NULL, bytes, 6, 2, &limit, BLOOM_SEED0, BLOOM_SEED1, &b) ==
          WEIR_ERR_NULL);
    CHECK(b == NULL);
    CHECK(weir_bloom_place_in(bloom_mem, sizeof bloom_mem, 6, 2, &limit, BLOOM_SEED0, BLOOM_SEED1,
                              &b) == WEIR_OK);
    CHECK(b == (weir_bloom *)(void *)bloom_mem);
    CHECK(weir_bloom_start_counting(b) == WEIR_OK);
    /* A key alone: its burst at once, then nothing until its window ends. */
    const int64_t t0 = 2 * SEC;
    CHECK(bloom_asks(b, t0, "sensor-1", 5) == 3);
    int64_t wait = weir_bloom_next(b, t0, "sensor-1", 8);
    CHECK(wait >= 300 * MS && wait < 300 * MS + 1024);
    /* sensor-4 shares word 45 with sensor-1 (spent) but has word 41. */
    CHECK(bloom_asks(b, t0, "sensor-4", 5) == 3);
    CHECK(bloom_asks(b, t0, "sensor-2", 4) == 3);
    CHECK(bloom_asks(b, t0 + 299 * MS, "sensor-1", 1) == 0);
    CHECK(bloom_asks(b, t0 + wait, "sensor-1", 4) == 3);
    /* Bad input refuses and counts as an error. */
    CHECK(!weir_bloom_allow(b, -1, "sensor-1", 8));
    CHECK(!weir_bloom_allow(b, t0, NULL, 8));
    weir_counts counts;
    CHECK(weir_bloom_read_counts(b, &counts) == WEIR_OK);
    CHECK(counts.admitted == 12 && counts.refused == 7 && counts.errors == 2);
    /* Free does nothing: the memory is the program's, the array still there. */
    weir_bloom_free(b);
    CHECK(weir_bloom_next(b, t0 + wait, "sensor-1", 8) > 0);
}

/* The same with GCRA words, one line, one word per key: a token bucket of 3
 * refilling one every 100 ms. Also shared with the SysTick handler: each
 * round a `now` 10 s on (a full bucket), the main loop takes until refused
 * and the handler takes whenever it lands inside a round; with one word per
 * key, together they get exactly 3, however they interleave. */
static weir_bloom *shared_bloom;
static volatile bool bloom_round_open;
static volatile int64_t bloom_round_now;
static volatile uint32_t tick_bloom_allowed;

static void bloom_tick(void) {
    if (bloom_round_open && weir_bloom_allow(shared_bloom, bloom_round_now, "uplink", 6)) {
        tick_bloom_allowed++;
    }
}

static void placed_gcra_bloom(void) {
    size_t bytes = 0, align = 0;
    weir_gcra_limit limit;
    CHECK(weir_gcra_limit_new(10.0, 3, &limit) == WEIR_OK);
    FITS64("bloom (8 GCRA words, 1 per key)", weir_bloom_place_footprint(3, &bytes, &align), bytes,
           align, gcra_bloom_mem);
    weir_bloom *b = NULL;
    CHECK(weir_bloom_place_gcra_in(gcra_bloom_mem, bytes - 1, 3, 1, &limit, 1, 2, &b) ==
          WEIR_ERR_PLACED_TOO_SMALL);
    CHECK(weir_bloom_place_gcra_in(gcra_bloom_mem, bytes, 3, 1, &limit, 1, 2, &b) == WEIR_OK);
    CHECK(bloom_asks(b, 0, "uplink", 5) == 3);
    CHECK(weir_bloom_next(b, 0, "uplink", 6) == 100 * MS);
    CHECK(bloom_asks(b, 100 * MS - 1, "uplink", 1) == 0);
    CHECK(bloom_asks(b, 100 * MS, "uplink", 3) == 1);
    shared_bloom = b;
    uint32_t rounds = 0, wrong = 0, shared = 0;
    board_ticks_start(300);
    /* Bounded, so a timer that never fires fails the check below. */
    while (shared < 10 && rounds < 200000) {
        rounds++;
        bloom_round_now = (int64_t)rounds * 10 * SEC;
        tick_bloom_allowed = 0;
        bloom_round_open = true;
        uint32_t main_allowed = 0;
        while (weir_bloom_allow(b, bloom_round_now, "uplink", 6)) {
            main_allowed++;
        }
        bloom_round_open = false;
        uint32_t handler_allowed = tick_bloom_allowed;
        wrong += main_allowed + handler_allowed != 3 ? 1u : 0u;
        shared += main_allowed > 0 && handler_allowed > 0 ? 1u : 0u;
    }
    board_ticks_stop();
    CHECK(wrong == 0);
    CHECK(shared >= 10);
    board_print("bloom shared with SysTick: ");
    print_number(rounds);
    board_print(" rounds of burst 3, ");
    print_number(shared);
    board_print(" split between main loop and handler, ");
    print_number(wrong);
    board_print(" rounds not exactly 3\n");
}

/* A device's share of a limit its fleet keeps in a store: it asks, the
 * store grants (made up here; a real device sends WEIR.LEASE over its
 * uplink), and it spends what it holds without asking again. */
static void placed_lease(void) {
    size_t bytes = 0, align = 0;
    FITS("lease", weir_lease_footprint(&bytes, &align), bytes, align, lease_mem);
    weir_lease_policy policy = weir_lease_policy_preset();
    policy.burst = 40;
    policy.share = 0.25; /* a cap of 10 */
    weir_lease *l = NULL;
    CHECK(weir_lease_init_in(lease_mem, bytes - 1, &policy, 0, &l) == WEIR_ERR_PLACED_TOO_SMALL);
    CHECK(weir_lease_init_in(misaligned(lease_mem), sizeof lease_mem - 1, &policy, 0, &l) ==
          WEIR_ERR_PLACED_MISALIGNED);
    policy.share = 0.0;
    CHECK(weir_lease_init_in(lease_mem, bytes, &policy, 0, &l) == WEIR_ERR_LEASE_SHARE);
    policy.share = 0.25;
    CHECK(l == NULL);
    CHECK(weir_lease_init_in(lease_mem, bytes, &policy, 0, &l) == WEIR_OK);
    CHECK(weir_lease_cap(l) == 10);
    /* Holding nothing, a take asks. */
    weir_lease_answer a;
    CHECK(weir_lease_take(l, 0, 2, &a) == WEIR_OK);
    CHECK(a.verdict == WEIR_LEASE_ASK && a.ask >= 2 && a.ask <= 10);
    int64_t asked = a.ask;
    /* The store grants it all 20 ms later, for a second from the ask. */
    CHECK(weir_lease_grant(l, 20 * MS, asked, 1 * SEC, 20 * MS) == WEIR_OK);
    CHECK(weir_lease_unspent(l, 20 * MS) == asked);
    CHECK(weir_lease_expires(l, 20 * MS) == 1 * SEC);
    CHECK(weir_lease_take(l, 20 * MS, 2, &a) == WEIR_OK && a.verdict == WEIR_LEASE_GO);
    CHECK(weir_lease_unspent(l, 20 * MS) == asked - 2);
    /* A cost over the cap could never go: refused, nothing changed. */
    CHECK(weir_lease_take(l, 20 * MS, 11, &a) == WEIR_ERR_LEASE_COST);
    weir_lease_stats st;
    CHECK(weir_lease_read_stats(l, 20 * MS, &st) == WEIR_OK);
    CHECK(st.granted == (uint64_t)asked && st.spent == 2 && st.rtt_ns == 20 * MS);
    /* Past the lease's end the units are gone; release hands back none. */
    CHECK(weir_lease_unspent(l, 1 * SEC) == 0);
    CHECK(weir_lease_release(l, 1 * SEC) == 0);
    weir_lease_free(l);
    CHECK(weir_lease_cap(l) == 10);
}

int main(void) {
    board_print("weir ");
    board_print(weir_version());
    board_print(" on " WEIR_EXAMPLE_MACHINE "\n");
    library();
    limiter_refill();
    limiter_window_grid();
    limiter_cooldown_release();
    limiter_errors();
    backoff();
    deadline();
    rate();
    rate_with_an_interrupt_handler();
    placed_breaker();
    breaker_with_an_interrupt_handler();
    placed_shedder();
    placed_bucket();
    placed_gate();
    placed_window();
    placed_sliding();
    period_budget_concurrency();
    placed_pool();
    placed_lease();
    placed_bloom();
    placed_gcra_bloom();
#if defined(WEIR_EXAMPLE_SDK_CRITICAL_SECTION)
    /* Every word update went through the SDK's critical section. */
    CHECK(critical_entered > 0);
    CHECK(critical_depth == 0);
#endif
    board_print(WEIR_EXAMPLE_MACHINE ": ");
    print_number(passed);
    board_print(" passed, ");
    print_number(failed);
    board_print(" failed\n");
    return (int)failed;
}
