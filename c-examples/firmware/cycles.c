/* How long a firmware update holds the critical section, per handle type:
 * run under QEMU with -icount (one instruction a fixed slice of virtual
 * time), each call is timed with SysTick's counter, interrupts off, and the
 * longest is printed in instructions. A call holds the section for part of
 * its length, so the call's length bounds the section's from above; in the
 * sdk-critical-section build (WEIR_EXAMPLE_SDK_CRITICAL_SECTION) the SDK's
 * two hooks below also time the section itself, from enter to exit.
 * QEMU models no pipeline or wait states: an instruction counts as one
 * cycle, so the numbers are instructions executed, which a Cortex-M4 or M0
 * runs in about as many cycles plus branch and load penalties.
 *
 * Each type's workload mixes its calls at irregular `now`s, with jumps past
 * the whole window so that the slowest update (every bucket rotated out at
 * once) is among them. Also prints each type's footprint at its preset (or
 * at the size named). Built and run by .ci/stages/firmware.sh
 * (bash .ci/run firmware). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "weir.h"

#define MS INT64_C(1000000)
#define SEC (1000 * MS)

#define SYST_CSR (*(volatile uint32_t *)0xE000E010)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018)

void board_tick(void) {}

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

static uint32_t failures;

/* SysTick counts down from 0xFFFFFF at the processor clock, no interrupt. */
static void counter_start(void) {
    SYST_RVR = 0xFFFFFF;
    SYST_CVR = 0;
    SYST_CSR = 5;
}

static inline uint32_t counter(void) {
    return SYST_CVR;
}

static inline uint32_t elapsed(uint32_t from, uint32_t to) {
    return (from - to) & 0xFFFFFF;
}

/* Ticks per 1024 instructions, from a loop of known length. */
static uint32_t ticks_per_1024;

static void calibrate(void) {
    uint32_t n = 4096;
    uint32_t from = counter();
    /* Two instructions an iteration: 8192 in all, and a few around. */
    __asm__ volatile(".syntax unified\n1: subs %0, %0, #1\n\tbne 1b" : "+l"(n)::"cc");
    uint32_t to = counter();
    ticks_per_1024 = elapsed(from, to) / 8;
    if (ticks_per_1024 == 0) {
        ticks_per_1024 = 1;
    }
}

static uint32_t instructions(uint32_t ticks) {
    return (uint32_t)(((uint64_t)ticks * 1024 + ticks_per_1024 / 2) / ticks_per_1024);
}

/* The SDK's critical section, timed: the longest stretch from the
 * outermost enter to its exit, in ticks. */
#if defined(WEIR_EXAMPLE_SDK_CRITICAL_SECTION)
static uint32_t section_depth, section_from, section_longest;

uint32_t weir_critical_enter(void) {
    uint32_t primask;
    __asm__ volatile("mrs %0, PRIMASK\n\tcpsid i" : "=r"(primask)::"memory");
    if (section_depth++ == 0) {
        section_from = counter();
    }
    return primask;
}

void weir_critical_exit(uint32_t primask) {
    if (--section_depth == 0) {
        uint32_t held = elapsed(section_from, counter());
        if (held > section_longest) {
            section_longest = held;
        }
    }
    if ((primask & 1) == 0) {
        __asm__ volatile("cpsie i" ::: "memory");
    }
}
#endif

/* The longest call of the type being measured, in ticks. */
static uint32_t call_longest;

#define TIMED(call)                                   \
    do {                                              \
        uint32_t from_ = counter();                   \
        call;                                         \
        uint32_t took_ = elapsed(from_, counter());   \
        if (took_ > call_longest) {                   \
            call_longest = took_;                     \
        }                                             \
    } while (0)

static void begin(void) {
    call_longest = 0;
#if defined(WEIR_EXAMPLE_SDK_CRITICAL_SECTION)
    section_longest = 0;
#endif
}

static void report(const char *name, weir_status footprint, size_t bytes) {
    if (footprint != WEIR_OK) {
        failures++;
    }
    board_print(name);
    board_print(": longest call ");
    print_number(instructions(call_longest));
#if defined(WEIR_EXAMPLE_SDK_CRITICAL_SECTION)
    board_print(", longest critical section ");
    print_number(instructions(section_longest));
#endif
    board_print(" instructions; footprint ");
    print_number((int64_t)bytes);
    board_print(" bytes\n");
}

/* A small generator for the workloads' irregular steps and draws. */
static uint32_t seed = 12345;
static uint32_t next_random(void) {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

/* The next `now`: mostly a few milliseconds on, one step in 64 a jump past
 * any window here (20 s). */
static int64_t step(int64_t now) {
    uint32_t r = next_random();
    if ((r & 63) == 0) {
        return now + 20 * SEC;
    }
    return now + (int64_t)(r % (50 * 1000)) * 1000;
}

#define ROUNDS 3000
/* 64-aligned for the bloom's lines; every other type needs 8. */
static uint64_t mem[3072 / 8] __attribute__((aligned(64)));

static void breaker(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_breaker_footprint(NULL, &bytes, &align);
    weir_breaker *b = NULL;
    failures += weir_breaker_init_in(mem, sizeof mem, NULL, 0, &b) != WEIR_OK;
    begin();
    int64_t now = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        weir_breaker_ticket t;
        bool go = false;
        double roll = (double)(next_random() & 0xFFFF) / 65536.0;
        TIMED(go = weir_breaker_allow(b, now, roll, &t));
        if (go) {
            if (next_random() % 3 == 0) {
                TIMED(weir_breaker_pass(b, &t, now));
            } else {
                TIMED(weir_breaker_fail(b, &t, now));
            }
        }
    }
    report("breaker (preset)", f, bytes);
}

static void shedder(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_shedder_footprint(NULL, &bytes, &align);
    weir_shedder *s = NULL;
    failures += weir_shedder_init_in(mem, sizeof mem, NULL, 0, &s) != WEIR_OK;
    begin();
    int64_t now = 0;
    weir_shedder_ticket flying[8];
    int held = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        int32_t cpu = (int32_t)(next_random() % 1001);
        bool go = false;
        if (held < 8) {
            TIMED(go = weir_shedder_allow(s, now, cpu, &flying[held]));
            held += go ? 1 : 0;
        }
        if (held > 0 && (next_random() & 1)) {
            held--;
            TIMED(weir_shedder_pass(s, &flying[held], now));
        }
    }
    report("shedder (preset)", f, bytes);
}

static void bucket(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_bucket_footprint(&bytes, &align);
    weir_bucket *b = NULL;
    failures += weir_bucket_init_in(mem, sizeof mem, 100.0, 10.0, 0, &b) != WEIR_OK;
    begin();
    int64_t now = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        TIMED(weir_bucket_take(b, now, 1.0));
    }
    report("bucket", f, bytes);
}

static void gate(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_gate_footprint(&bytes, &align);
    weir_gate *g = NULL;
    failures += weir_gate_init_in(mem, sizeof mem, 4, &g) != WEIR_OK;
    begin();
    for (int i = 0; i < ROUNDS; i++) {
        if (next_random() & 1) {
            TIMED(weir_gate_enter(g));
        } else {
            TIMED(weir_gate_leave(g));
        }
    }
    report("gate", f, bytes);
}

static void window(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_window_footprint(40, 10 * SEC, &bytes, &align);
    weir_window *w = NULL;
    failures += weir_window_init_in(mem, sizeof mem, 40, 10 * SEC, 0, &w) != WEIR_OK;
    begin();
    int64_t now = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        TIMED(weir_window_add(w, now, (int64_t)(next_random() % 100)));
    }
    report("window (40 buckets over 10 s)", f, bytes);
}

static void sliding(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_sliding_footprint(100, 1 * SEC, &bytes, &align);
    weir_sliding *s = NULL;
    failures += weir_sliding_init_in(mem, sizeof mem, 100, 1 * SEC, &s) != WEIR_OK;
    begin();
    int64_t now = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now += (next_random() & 63) == 0 ? 2 * SEC : (int64_t)(next_random() % 20) * MS;
        TIMED(weir_sliding_take(s, now));
    }
    report("sliding (quota 100 over 1 s)", f, bytes);
}

static void period(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_period_footprint(&bytes, &align);
    weir_period *p = NULL;
    failures += weir_period_init_in(mem, sizeof mem, 50, 1 * SEC, true, &p) != WEIR_OK;
    begin();
    int64_t now = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        TIMED(weir_period_take(p, now));
    }
    report("period", f, bytes);
}

static void budget(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_budget_footprint(&bytes, &align);
    weir_budget *b = NULL;
    failures += weir_budget_init_in(mem, sizeof mem, NULL, 0, &b) != WEIR_OK;
    begin();
    int64_t now = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        if (next_random() & 1) {
            TIMED(weir_budget_deposit(b, now));
        } else {
            TIMED(weir_budget_withdraw(b, now));
        }
    }
    report("budget (preset)", f, bytes);
}

static void concurrency(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_concurrency_footprint(&bytes, &align);
    weir_concurrency *c = NULL;
    failures += weir_concurrency_init_in(mem, sizeof mem, NULL, &c) != WEIR_OK;
    begin();
    int64_t now = 0;
    weir_concurrency_ticket flying[8];
    int held = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        bool go = false;
        if (held < 8) {
            TIMED(go = weir_concurrency_enter(c, now, &flying[held]));
            held += go ? 1 : 0;
        }
        if (held > 0 && (next_random() & 1)) {
            held--;
            TIMED(weir_concurrency_leave(c, &flying[held], now, false));
        }
    }
    report("concurrency (preset)", f, bytes);
}

static void pool(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_pool_footprint(NULL, &bytes, &align);
    weir_pool *p = NULL;
    failures += weir_pool_init_in(mem, sizeof mem, NULL, &p) != WEIR_OK;
    begin();
    int64_t now = 0;
    uintptr_t lent[10];
    int held = 0;
    uintptr_t next_item = 1;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        if (held < 10 && (next_random() % 3 != 0)) {
            weir_pool_taken t;
            TIMED(t = weir_pool_take(p, now));
            if (t.kind == WEIR_POOL_TAKEN_MAKE) {
                TIMED(weir_pool_made(p, next_item, now));
                lent[held++] = next_item++;
            } else if (t.kind == WEIR_POOL_TAKEN_READY) {
                lent[held++] = t.item;
            } else if (t.kind == WEIR_POOL_TAKEN_STALE) {
                TIMED(weir_pool_drop(p, t.item));
            }
        } else if (held > 0) {
            bool kept = false;
            held--;
            TIMED(weir_pool_give(p, lent[held], now, &kept));
        }
        if ((i & 15) == 0) {
            uintptr_t out[10];
            TIMED(weir_pool_evict(p, now, out, 10));
            TIMED(weir_pool_make_ahead(p));
        }
    }
    report("pool (preset)", f, bytes);
}

/* A lease at the preset (a cap of 25): takes of 1 to 3 units, each ask
 * granted in full by the next round's `now` (the store's answer), now and
 * then a release, and its stats read. */
static void lease(void) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_lease_footprint(&bytes, &align);
    weir_lease *l = NULL;
    failures += weir_lease_init_in(mem, sizeof mem, NULL, 0, &l) != WEIR_OK;
    begin();
    int64_t now = 0, asked = 0, sent = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        if (asked > 0) {
            TIMED(weir_lease_grant(l, now, asked, sent + SEC, now));
            asked = 0;
        }
        uint32_t r = next_random();
        if ((r & 63) == 0) {
            TIMED(weir_lease_release(l, now));
        } else if ((r & 63) == 1) {
            weir_lease_stats st;
            TIMED(weir_lease_read_stats(l, now, &st));
        } else {
            weir_lease_answer a;
            weir_status st = WEIR_OK;
            TIMED(st = weir_lease_take(l, now, 1 + (int64_t)(r >> 8) % 3, &a));
            failures += st != WEIR_OK;
            if (st == WEIR_OK && a.ask > 0) {
                asked = a.ask;
                sent = now;
            }
        }
    }
    report("lease (preset)", f, bytes);
}

/* A bloom of 256 words (size_log2 8), 3 per key, at 100/s with a burst of
 * 10, of either kind: allows for keys drawn from 50 (words that are
 * full, expired or fresh), now and then a next.
 * Each word update takes the section on its own, as a rate word's does, so
 * a call holds it up to 3 times; the call's length includes hashing the
 * key (SipHash-1-3), outside the section. */
static void bloom(bool gcra) {
    size_t bytes = 0, align = 0;
    weir_status f = weir_bloom_place_footprint(8, &bytes, &align);
    weir_bloom *b = NULL;
    if (gcra) {
        weir_gcra_limit limit;
        failures += weir_gcra_limit_new(100.0, 10, &limit) != WEIR_OK;
        failures += weir_bloom_place_gcra_in(mem, sizeof mem, 8, 3, &limit, 7, 8, &b) != WEIR_OK;
    } else {
        weir_rate_limit limit;
        failures += weir_rate_limit_new(100.0, 10, &limit) != WEIR_OK;
        failures += weir_bloom_place_in(mem, sizeof mem, 8, 3, &limit, 7, 8, &b) != WEIR_OK;
    }
    begin();
    int64_t now = 0;
    for (int i = 0; i < ROUNDS; i++) {
        now = step(now);
        uint32_t key = next_random() % 50;
        if ((next_random() & 7) == 0) {
            TIMED(weir_bloom_next(b, now, &key, sizeof key));
        } else {
            TIMED(weir_bloom_allow(b, now, &key, sizeof key));
        }
    }
    report(gcra ? "bloom (256 GCRA words, 3 per key)" : "bloom (256 rate words, 3 per key)", f,
           bytes);
}

int main(void) {
    counter_start();
    calibrate();
    board_print("critical sections on " WEIR_EXAMPLE_MACHINE " (SysTick ticks per 1024 instructions: ");
    print_number(ticks_per_1024);
    board_print(")\n");
    breaker();
    shedder();
    bucket();
    gate();
    window();
    sliding();
    period();
    budget();
    concurrency();
    pool();
    lease();
    bloom(false);
    bloom(true);
    board_print(WEIR_EXAMPLE_MACHINE ": ");
    print_number(failures == 0 ? 1 : 0);
    board_print(" passed, ");
    print_number(failures);
    board_print(" failed\n");
    return (int)failures;
}
