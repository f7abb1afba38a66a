/* weir on a microcontroller: every function of the firmware build, run under
 * QEMU on a Cortex-M4 (mps2-an386) and a Cortex-M0 (microbit). It checks
 * scenario 6 of docs/design.md, the limiter (whole-interval refill, the window grid, the
 * cooldown's release at its deadline, every constructor error), a backoff
 * schedule, deadlines, and the rate word's burst, alone and shared with an
 * interrupt handler, prints each failure and a
 * closing "N passed, N failed" line, and exits with the failure count.
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

void board_tick(void) {
    tick_calls++;
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
