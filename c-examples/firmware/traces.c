/* The conformance traces (traces/README.md) replayed by the firmware build
 * under QEMU: every call of the traces that c-examples/firmware/
 * trace_table.py compiled into the image (from flash, nothing copied to
 * RAM) goes through the firmware library, and each answer is compared with
 * the trace's, word for word. Prints one line per trace, "ok" or the first
 * answer that differs with its file and line, and exits (semihosting) with
 * the number of traces that failed.
 *
 * The handle types are placed: a `<type>_new` line lays the handle in a
 * static arena with `weir_<type>_init_in` (the firmware build has no heap),
 * replacing the handle the trace held. A handle the trace makes but the
 * arena cannot hold (a breaker of 2^20 buckets: 32 MiB) answers
 * WEIR_ERR_PLACED_TOO_SMALL where the heap said 0; the runner then skips
 * that handle's calls up to the trace's next constructor and prints how
 * many it skipped; so too after a reconfiguration that would grow a placed
 * handle beyond its memory (WEIR_ERR_PLACED_TOO_SMALL where the heap handle
 * grew). Ticket slots live in a ring (trace_table.py checks that
 * no trace settles a ticket whose entry was reused). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "trace_table.h"
#include "weir.h"

void board_tick(void) {
}

static void print_u64(uint64_t n) {
    char digits[21];
    int i = (int)sizeof digits - 1;
    digits[i] = '\0';
    do {
        digits[--i] = (char)('0' + n % 10);
        n /= 10;
    } while (n != 0);
    board_print(&digits[i]);
}

static void print_i64(uint64_t word) {
    if (word >> 63) {
        board_print("-");
        print_u64(~word + 1);
    } else {
        print_u64(word);
    }
}

static double as_double(uint64_t word) {
    double d;
    __builtin_memcpy(&d, &word, sizeof d);
    return d;
}

static uint64_t of_double(double d) {
    uint64_t word;
    __builtin_memcpy(&word, &d, sizeof word);
    return word;
}

#define I64(w) ((int64_t)(w))
#define U(x) ((uint64_t)(x))

/* What a trace replays on: the values of the five types, reset for each
 * trace as the format says (zero; the preset backoff). */
static struct {
    weir_rate rate;
    weir_rate_limit rate_limit;
    weir_gcra gcra;
    weir_gcra_limit gcra_limit;
    weir_limiter limiter;
    weir_backoff backoff;
    weir_deadline deadline;
} held;

/* The arena every placed handle of a trace lives in, one handle at a time
 * (a trace drives one handle type; a constructor of another type drops the
 * handle before), and the ticket ring. */
enum kind { NONE, BUCKET, WINDOW, SLIDING, PERIOD, GATE, BUDGET, CONCURRENCY, BREAKER, SHEDDER, POOL, LEASE, BLOOM,
            KEYED };

static struct {
    enum kind kind;      /* the type whose handle the arena holds */
    enum kind unplaced;  /* a type made too large for the arena, skipped */
    uint32_t skipped;    /* calls skipped for it in this trace */
    uint32_t issued;     /* tickets issued in this trace */
    void *handle;
} placed;


static void reset(void) {
    __builtin_memset(&held, 0, sizeof held);
    held.backoff = weir_backoff_preset();
    __builtin_memset(&placed, 0, sizeof placed);
}

/* The answer run() gives for a call it skipped (the unplaceable handle's). */
#define SKIPPED (UINT32_MAX - 1)

#if TRACE_HANDLES
/* 128-aligned: a placed bloom's lines are 64-aligned, a placed keyed
 * table's buckets 128. */
static uint64_t arena[TRACE_ARENA_BYTES / 8] __attribute__((aligned(128)));
static weir_breaker_ticket breaker_tickets[TRACE_TICKETS];
static weir_shedder_ticket shedder_tickets[TRACE_TICKETS];
static weir_concurrency_ticket concurrency_tickets[TRACE_TICKETS];

/* The held handle of `kind`, or NULL when the arena holds another. */
static void *handle(enum kind kind) {
    return placed.kind == kind ? placed.handle : NULL;
}

/* After a constructor of `kind` answered `status` (its handle written to
 * `made` on WEIR_OK): the arena now holds it, or nothing. True when the
 * constructor is to be skipped: the heap made a handle (`want` is 0) that
 * the arena is too small for. */
static bool laid(enum kind kind, weir_status status, void *made, uint64_t want) {
    placed.kind = status == WEIR_OK ? kind : NONE;
    placed.handle = status == WEIR_OK ? made : NULL;
    placed.unplaced = NONE;
    if (status == WEIR_ERR_PLACED_TOO_SMALL && want == 0) {
        placed.unplaced = kind;
        placed.skipped++;
        return true;
    }
    return false;
}

/* After a reconfiguration of the held `kind` answered `status`: true when
 * it is to be skipped, the heap handle having grown (`want` is 0) where the
 * placed one cannot. */
static bool grew(enum kind kind, weir_status status, uint64_t want) {
    if (status == WEIR_ERR_PLACED_TOO_SMALL && want == 0) {
        placed.unplaced = kind;
        placed.skipped++;
        return true;
    }
    return false;
}

/* The ring entry for the next ticket issued, zeroed (as a fresh slot is:
 * a call that refuses to write its ticket leaves it so). */
static uint32_t issue(void) {
    uint32_t k = placed.issued++ % TRACE_TICKETS;
    __builtin_memset(&breaker_tickets[k], 0, sizeof breaker_tickets[k]);
    __builtin_memset(&shedder_tickets[k], 0, sizeof shedder_tickets[k]);
    __builtin_memset(&concurrency_tickets[k], 0, sizeof concurrency_tickets[k]);
    return k;
}

#define H(kind, type) ((type *)handle(kind))
#define SKIP_UNPLACED(kind)          \
    if (placed.unplaced == (kind)) { \
        placed.skipped++;            \
        return SKIPPED;              \
    }
#endif

static uint32_t put_backoff(uint64_t *got) {
    got[0] = U(held.backoff.base_ns);
    got[1] = of_double(held.backoff.factor);
    got[2] = U(held.backoff.cap_ns);
    got[3] = U(held.backoff.attempts);
    got[4] = U(held.backoff.jitter);
    got[5] = of_double(held.backoff.spread);
    return 6;
}

/* Runs one call on a handle type; writes its answers to `got` and returns
 * how many (SKIPPED for a call on a handle the arena could not hold). */
static uint32_t run_handle(const trace_call *call, const uint64_t *a, const uint64_t *want,
                           uint64_t *got) {
#if !TRACE_HANDLES
    (void)call, (void)a, (void)want, (void)got;
    return UINT32_MAX;
#else
    void *mem = arena;
    size_t len = sizeof arena;
    weir_status st;
    switch (call->op) {
    case OP_bucket_new: {
        weir_bucket *made = NULL;
        st = weir_bucket_init_in(mem, len, as_double(a[0]), as_double(a[1]), I64(a[2]), &made);
        if (laid(BUCKET, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_bucket_take:
        SKIP_UNPLACED(BUCKET);
        got[0] = weir_bucket_take(H(BUCKET, weir_bucket), I64(a[0]), as_double(a[1]));
        return 1;
    case OP_bucket_refund:
        SKIP_UNPLACED(BUCKET);
        got[0] = U(weir_bucket_refund(H(BUCKET, weir_bucket), I64(a[0]), I64(a[1]), as_double(a[2])));
        return 1;
    case OP_bucket_next:
        SKIP_UNPLACED(BUCKET);
        got[0] = U(weir_bucket_next(H(BUCKET, weir_bucket), I64(a[0]), as_double(a[1])));
        return 1;
    case OP_bucket_tokens:
        SKIP_UNPLACED(BUCKET);
        got[0] = of_double(weir_bucket_tokens(H(BUCKET, weir_bucket), I64(a[0])));
        return 1;
    case OP_window_new: {
        weir_window *made = NULL;
        st = weir_window_init_in(mem, len, (int32_t)I64(a[0]), I64(a[1]), I64(a[2]), &made);
        if (laid(WINDOW, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_window_add:
        SKIP_UNPLACED(WINDOW);
        got[0] = U(weir_window_add(H(WINDOW, weir_window), I64(a[0]), I64(a[1])));
        return 1;
    case OP_window_read_total: {
        SKIP_UNPLACED(WINDOW);
        weir_window_total t = {0, 0};
        got[0] = U(weir_window_read_total(H(WINDOW, weir_window), I64(a[0]), a[1] != 0, &t));
        got[1] = U(t.sum);
        got[2] = U(t.count);
        return 3;
    }
    case OP_window_read_buckets: {
        SKIP_UNPLACED(WINDOW);
        weir_window_total t[(TRACE_MAX_OUTS - 1) / 2];
        size_t cap = (size_t)a[2];
        if (cap > sizeof t / sizeof t[0]) return UINT32_MAX;
        __builtin_memset(t, 0, sizeof t);
        size_t n = weir_window_read_buckets(H(WINDOW, weir_window), I64(a[0]), a[1] != 0, t, cap);
        got[0] = U(n);
        size_t wrote = n < cap ? n : cap;
        for (size_t i = 0; i < wrote; i++) {
            got[1 + 2 * i] = U(t[i].sum);
            got[2 + 2 * i] = U(t[i].count);
        }
        return (uint32_t)(1 + 2 * wrote);
    }
    case OP_window_size:
        SKIP_UNPLACED(WINDOW);
        got[0] = U((int64_t)weir_window_size(H(WINDOW, weir_window)));
        return 1;
    case OP_window_width:
        SKIP_UNPLACED(WINDOW);
        got[0] = U(weir_window_width(H(WINDOW, weir_window)));
        return 1;
    case OP_sliding_new: {
        weir_sliding *made = NULL;
        st = weir_sliding_init_in(mem, len, I64(a[0]), I64(a[1]), &made);
        if (laid(SLIDING, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_sliding_take:
        SKIP_UNPLACED(SLIDING);
        got[0] = weir_sliding_take(H(SLIDING, weir_sliding), I64(a[0]));
        return 1;
    case OP_sliding_left:
        SKIP_UNPLACED(SLIDING);
        got[0] = U(weir_sliding_left(H(SLIDING, weir_sliding), I64(a[0])));
        return 1;
    case OP_sliding_next:
        SKIP_UNPLACED(SLIDING);
        got[0] = U(weir_sliding_next(H(SLIDING, weir_sliding), I64(a[0])));
        return 1;
    case OP_period_new: {
        weir_period *made = NULL;
        st = weir_period_init_in(mem, len, I64(a[0]), I64(a[1]), a[2] != 0, &made);
        if (laid(PERIOD, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_period_take:
        SKIP_UNPLACED(PERIOD);
        got[0] = U((int64_t)weir_period_take(H(PERIOD, weir_period), I64(a[0])));
        return 1;
    case OP_period_left:
        SKIP_UNPLACED(PERIOD);
        got[0] = U(weir_period_left(H(PERIOD, weir_period), I64(a[0])));
        return 1;
    case OP_period_next:
        SKIP_UNPLACED(PERIOD);
        got[0] = U(weir_period_next(H(PERIOD, weir_period), I64(a[0])));
        return 1;
    case OP_gate_new: {
        weir_gate *made = NULL;
        st = weir_gate_init_in(mem, len, I64(a[0]), &made);
        if (laid(GATE, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_gate_enter:
        SKIP_UNPLACED(GATE);
        got[0] = weir_gate_enter(H(GATE, weir_gate));
        return 1;
    case OP_gate_leave:
        SKIP_UNPLACED(GATE);
        weir_gate_leave(H(GATE, weir_gate));
        return 0;
    case OP_gate_held:
        SKIP_UNPLACED(GATE);
        got[0] = U(weir_gate_held(H(GATE, weir_gate)));
        return 1;
    case OP_budget_new: {
        weir_budget_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.form = (int32_t)I64(a[0]);
        p.max_tokens = (int32_t)I64(a[1]);
        p.token_ratio = as_double(a[2]);
        p.ttl_ns = I64(a[3]);
        p.min_per_s = (int32_t)I64(a[4]);
        p.reserved = (int32_t)I64(a[5]);
        p.percent = as_double(a[6]);
        weir_budget *made = NULL;
        st = weir_budget_init_in(mem, len, &p, I64(a[7]), &made);
        if (laid(BUDGET, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_budget_deposit:
        SKIP_UNPLACED(BUDGET);
        weir_budget_deposit(H(BUDGET, weir_budget), I64(a[0]));
        return 0;
    case OP_budget_withdraw:
        SKIP_UNPLACED(BUDGET);
        got[0] = weir_budget_withdraw(H(BUDGET, weir_budget), I64(a[0]));
        return 1;
    case OP_budget_left:
        SKIP_UNPLACED(BUDGET);
        got[0] = U(weir_budget_left(H(BUDGET, weir_budget), I64(a[0])));
        return 1;
    case OP_budget_tokens:
        SKIP_UNPLACED(BUDGET);
        got[0] = U(weir_budget_tokens(H(BUDGET, weir_budget), I64(a[0])));
        return 1;
    case OP_concurrency_new: {
        weir_concurrency_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.initial_limit = (int32_t)I64(a[0]);
        p.min_limit = (int32_t)I64(a[1]);
        p.max_limit = (int32_t)I64(a[2]);
        p.queue_size = (int32_t)I64(a[3]);
        p.smoothing = as_double(a[4]);
        p.tolerance = as_double(a[5]);
        p.long_window = (int32_t)I64(a[6]);
        p.warmup = (int32_t)I64(a[7]);
        weir_concurrency *made = NULL;
        st = weir_concurrency_init_in(mem, len, &p, &made);
        if (laid(CONCURRENCY, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_concurrency_enter: {
        SKIP_UNPLACED(CONCURRENCY);
        uint32_t k = issue();
        got[0] = weir_concurrency_enter(H(CONCURRENCY, weir_concurrency), I64(a[0]),
                                        &concurrency_tickets[k]);
        return 1;
    }
    case OP_concurrency_leave:
        SKIP_UNPLACED(CONCURRENCY);
        got[0] = U(weir_concurrency_leave(H(CONCURRENCY, weir_concurrency),
                                          &concurrency_tickets[a[0] % TRACE_TICKETS], I64(a[1]),
                                          a[2] != 0));
        return 1;
    case OP_concurrency_limit:
        SKIP_UNPLACED(CONCURRENCY);
        got[0] = U(weir_concurrency_limit(H(CONCURRENCY, weir_concurrency)));
        return 1;
    case OP_concurrency_flying:
        SKIP_UNPLACED(CONCURRENCY);
        got[0] = U(weir_concurrency_flying(H(CONCURRENCY, weir_concurrency)));
        return 1;
    case OP_concurrency_long_rtt:
        SKIP_UNPLACED(CONCURRENCY);
        got[0] = of_double(weir_concurrency_long_rtt(H(CONCURRENCY, weir_concurrency)));
        return 1;
    case OP_breaker_new: {
        weir_breaker_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.k = as_double(a[0]);
        p.floor = as_double(a[1]);
        p.protection = as_double(a[2]);
        p.probe_ns = I64(a[3]);
        p.size = (int32_t)I64(a[4]);
        p.skip_refusals = (int32_t)I64(a[5]);
        p.window_ns = I64(a[6]);
        p.max_rejection_probability = as_double(a[7]);
        p.rps_threshold = as_double(a[8]);
        p.aggression = as_double(a[9]);
        weir_breaker *made = NULL;
        st = weir_breaker_init_in(mem, len, &p, I64(a[10]), &made);
        if (laid(BREAKER, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_breaker_allow: {
        SKIP_UNPLACED(BREAKER);
        uint32_t k = issue();
        got[0] = weir_breaker_allow(H(BREAKER, weir_breaker), I64(a[0]), as_double(a[1]),
                                    &breaker_tickets[k]);
        return 1;
    }
    case OP_breaker_pass:
        SKIP_UNPLACED(BREAKER);
        got[0] = U(weir_breaker_pass(H(BREAKER, weir_breaker), &breaker_tickets[a[0] % TRACE_TICKETS],
                                     I64(a[1])));
        return 1;
    case OP_breaker_fail:
        SKIP_UNPLACED(BREAKER);
        got[0] = U(weir_breaker_fail(H(BREAKER, weir_breaker), &breaker_tickets[a[0] % TRACE_TICKETS],
                                     I64(a[1])));
        return 1;
    case OP_breaker_ratio:
        SKIP_UNPLACED(BREAKER);
        got[0] = of_double(weir_breaker_ratio(H(BREAKER, weir_breaker), I64(a[0])));
        return 1;
    case OP_breaker_read_tally: {
        SKIP_UNPLACED(BREAKER);
        weir_breaker_tally t;
        __builtin_memset(&t, 0, sizeof t);
        got[0] = U(weir_breaker_read_tally(H(BREAKER, weir_breaker), I64(a[0]), &t));
        got[1] = U(t.total);
        got[2] = U(t.success);
        got[3] = U(t.failure);
        got[4] = U(t.drop);
        return 5;
    }
    case OP_shedder_new: {
        weir_shedder_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.size = (int32_t)I64(a[0]);
        p.cpu = (int32_t)I64(a[1]);
        p.window_ns = I64(a[2]);
        p.latency_ns = I64(a[3]);
        p.beta = as_double(a[4]);
        p.cool_ns = I64(a[5]);
        p.floor = as_double(a[6]);
        weir_shedder *made = NULL;
        st = weir_shedder_init_in(mem, len, &p, I64(a[7]), &made);
        if (laid(SHEDDER, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_shedder_allow: {
        SKIP_UNPLACED(SHEDDER);
        uint32_t k = issue();
        got[0] = weir_shedder_allow(H(SHEDDER, weir_shedder), I64(a[0]), (int32_t)I64(a[1]),
                                    &shedder_tickets[k]);
        return 1;
    }
    case OP_shedder_allow_class: {
        SKIP_UNPLACED(SHEDDER);
        uint32_t k = issue();
        got[0] = U(weir_shedder_allow_class(H(SHEDDER, weir_shedder), I64(a[0]), (int32_t)I64(a[1]),
                                            (int32_t)I64(a[2]), &shedder_tickets[k]));
        got[1] = shedder_tickets[k].flying == 1;
        return 2;
    }
    case OP_shedder_pass:
        SKIP_UNPLACED(SHEDDER);
        got[0] = U(weir_shedder_pass(H(SHEDDER, weir_shedder), &shedder_tickets[a[0] % TRACE_TICKETS],
                                     I64(a[1])));
        return 1;
    case OP_shedder_fail:
        SKIP_UNPLACED(SHEDDER);
        got[0] = U(weir_shedder_fail(H(SHEDDER, weir_shedder), &shedder_tickets[a[0] % TRACE_TICKETS]));
        return 1;
    case OP_shedder_flying:
        SKIP_UNPLACED(SHEDDER);
        got[0] = U(weir_shedder_flying(H(SHEDDER, weir_shedder)));
        return 1;
    case OP_shedder_read_stats: {
        SKIP_UNPLACED(SHEDDER);
        weir_shedder_stats t;
        __builtin_memset(&t, 0, sizeof t);
        got[0] = U(weir_shedder_read_stats(H(SHEDDER, weir_shedder), I64(a[0]), &t));
        got[1] = U(t.flying);
        got[2] = of_double(t.average);
        got[3] = of_double(t.capacity);
        got[4] = of_double(t.limit);
        got[5] = U((int64_t)t.cpu);
        got[6] = U((int64_t)t.hot);
        return 7;
    }
    case OP_bucket_reconfigure:
        SKIP_UNPLACED(BUCKET);
        st = weir_bucket_reconfigure(H(BUCKET, weir_bucket), as_double(a[0]), as_double(a[1]), I64(a[2]));
        goto reconfigured;
    case OP_window_reconfigure:
        SKIP_UNPLACED(WINDOW);
        st = weir_window_reconfigure(H(WINDOW, weir_window), (int32_t)I64(a[0]), I64(a[1]), I64(a[2]));
        if (grew(WINDOW, st, want[0])) return SKIPPED;
        goto reconfigured;
    case OP_sliding_reconfigure:
        SKIP_UNPLACED(SLIDING);
        st = weir_sliding_reconfigure(H(SLIDING, weir_sliding), I64(a[0]), I64(a[1]));
        if (grew(SLIDING, st, want[0])) return SKIPPED;
        goto reconfigured;
    case OP_period_reconfigure:
        SKIP_UNPLACED(PERIOD);
        st = weir_period_reconfigure(H(PERIOD, weir_period), I64(a[0]), I64(a[1]), a[2] != 0);
        goto reconfigured;
    case OP_gate_reconfigure:
        SKIP_UNPLACED(GATE);
        st = weir_gate_reconfigure(H(GATE, weir_gate), I64(a[0]));
        goto reconfigured;
    case OP_breaker_reconfigure: {
        SKIP_UNPLACED(BREAKER);
        weir_breaker_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.k = as_double(a[0]);
        p.floor = as_double(a[1]);
        p.protection = as_double(a[2]);
        p.probe_ns = I64(a[3]);
        p.size = (int32_t)I64(a[4]);
        p.skip_refusals = (int32_t)I64(a[5]);
        p.window_ns = I64(a[6]);
        p.max_rejection_probability = as_double(a[7]);
        p.rps_threshold = as_double(a[8]);
        p.aggression = as_double(a[9]);
        st = weir_breaker_reconfigure(H(BREAKER, weir_breaker), &p);
        if (grew(BREAKER, st, want[0])) return SKIPPED;
        goto reconfigured;
    }
    case OP_budget_reconfigure: {
        SKIP_UNPLACED(BUDGET);
        weir_budget_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.form = (int32_t)I64(a[0]);
        p.max_tokens = (int32_t)I64(a[1]);
        p.token_ratio = as_double(a[2]);
        p.ttl_ns = I64(a[3]);
        p.min_per_s = (int32_t)I64(a[4]);
        p.reserved = (int32_t)I64(a[5]);
        p.percent = as_double(a[6]);
        st = weir_budget_reconfigure(H(BUDGET, weir_budget), &p, I64(a[7]));
        goto reconfigured;
    }
    case OP_concurrency_reconfigure: {
        SKIP_UNPLACED(CONCURRENCY);
        weir_concurrency_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.initial_limit = (int32_t)I64(a[0]);
        p.min_limit = (int32_t)I64(a[1]);
        p.max_limit = (int32_t)I64(a[2]);
        p.queue_size = (int32_t)I64(a[3]);
        p.smoothing = as_double(a[4]);
        p.tolerance = as_double(a[5]);
        p.long_window = (int32_t)I64(a[6]);
        p.warmup = (int32_t)I64(a[7]);
        st = weir_concurrency_reconfigure(H(CONCURRENCY, weir_concurrency), &p);
        goto reconfigured;
    }
    case OP_shedder_reconfigure: {
        SKIP_UNPLACED(SHEDDER);
        weir_shedder_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.size = (int32_t)I64(a[0]);
        p.cpu = (int32_t)I64(a[1]);
        p.window_ns = I64(a[2]);
        p.latency_ns = I64(a[3]);
        p.beta = as_double(a[4]);
        p.cool_ns = I64(a[5]);
        p.floor = as_double(a[6]);
        st = weir_shedder_reconfigure(H(SHEDDER, weir_shedder), &p);
        if (grew(SHEDDER, st, want[0])) return SKIPPED;
    }
    reconfigured:
        got[0] = U(st);
        return 1;
    case OP_pool_new: {
        weir_pool_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.size = I64(a[0]);
        p.idle = I64(a[1]);
        p.keep_ns = I64(a[2]);
        p.life_ns = I64(a[3]);
        p.life_jitter = as_double(a[4]);
        p.min_idle = I64(a[5]);
        p.max_making = I64(a[6]);
        weir_pool *made = NULL;
        st = weir_pool_init_in(mem, len, &p, &made);
        if (laid(POOL, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
#if TRACE_POOL_RECONFIGURE
    case OP_pool_reconfigure: {
        SKIP_UNPLACED(POOL);
        weir_pool_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.size = I64(a[0]);
        p.idle = I64(a[1]);
        p.keep_ns = I64(a[2]);
        p.life_ns = I64(a[3]);
        p.life_jitter = as_double(a[4]);
        p.min_idle = I64(a[5]);
        p.max_making = I64(a[6]);
        st = weir_pool_reconfigure(H(POOL, weir_pool), &p);
        if (grew(POOL, st, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
#endif
    case OP_pool_take: {
        SKIP_UNPLACED(POOL);
        weir_pool_taken t = weir_pool_take(H(POOL, weir_pool), I64(a[0]));
        got[0] = U((int64_t)t.kind);
        got[1] = U(t.item);
        return 2;
    }
    case OP_pool_made:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_made(H(POOL, weir_pool), (uintptr_t)a[0], I64(a[1])));
        return 1;
    case OP_pool_made_jittered:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_made_jittered(H(POOL, weir_pool), (uintptr_t)a[0], I64(a[1]), a[2]));
        return 1;
    case OP_pool_unmade:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_unmade(H(POOL, weir_pool)));
        return 1;
    case OP_pool_give: {
        SKIP_UNPLACED(POOL);
        bool kept = false;
        got[0] = U(weir_pool_give(H(POOL, weir_pool), (uintptr_t)a[0], I64(a[1]), &kept));
        got[1] = kept;
        return 2;
    }
    case OP_pool_drop:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_drop(H(POOL, weir_pool), (uintptr_t)a[0]));
        return 1;
    case OP_pool_evict:
    case OP_pool_close: {
        SKIP_UNPLACED(POOL);
        uintptr_t items[TRACE_MAX_OUTS - 1];
        bool evict = call->op == OP_pool_evict;
        size_t cap = (size_t)a[evict ? 1 : 0];
        if (cap > sizeof items / sizeof items[0]) return UINT32_MAX;
        size_t n = evict ? weir_pool_evict(H(POOL, weir_pool), I64(a[0]), items, cap)
                         : weir_pool_close(H(POOL, weir_pool), items, cap);
        got[0] = U(n);
        size_t wrote = n < cap ? n : cap;
        for (size_t i = 0; i < wrote; i++) got[1 + i] = U(items[i]);
        return (uint32_t)(1 + wrote);
    }
    case OP_pool_mark_old:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_mark_old(H(POOL, weir_pool)));
        return 1;
    case OP_pool_make_ahead:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_make_ahead(H(POOL, weir_pool)));
        return 1;
    case OP_pool_live:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_live(H(POOL, weir_pool)));
        return 1;
    case OP_pool_idle:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_idle(H(POOL, weir_pool)));
        return 1;
    case OP_pool_busy:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_busy(H(POOL, weir_pool)));
        return 1;
    case OP_pool_next_expiry:
        SKIP_UNPLACED(POOL);
        got[0] = U(weir_pool_next_expiry(H(POOL, weir_pool), I64(a[0])));
        return 1;
    case OP_pool_read_stats: {
        SKIP_UNPLACED(POOL);
        weir_pool_stats t;
        __builtin_memset(&t, 0, sizeof t);
        got[0] = U(weir_pool_read_stats(H(POOL, weir_pool), &t));
        got[1] = t.made;
        got[2] = t.reused;
        got[3] = t.stale;
        got[4] = t.evicted_idle;
        got[5] = t.evicted_age;
        got[6] = t.dropped;
        got[7] = t.refused;
        got[8] = t.waits;
        got[9] = t.unmade;
        got[10] = t.closed;
        got[11] = t.retired;
        return 12;
    }
    case OP_lease_new: {
        weir_lease_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.interval_ns = I64(a[0]);
        p.ttl_ns = I64(a[1]);
        p.burst = I64(a[2]);
        p.share = as_double(a[3]);
        weir_lease *made = NULL;
        st = weir_lease_init_in(mem, len, &p, I64(a[4]), &made);
        if (laid(LEASE, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_lease_take: {
        SKIP_UNPLACED(LEASE);
        weir_lease_answer t;
        __builtin_memset(&t, 0, sizeof t);
        got[0] = U(weir_lease_take(H(LEASE, weir_lease), I64(a[0]), I64(a[1]), &t));
        got[1] = U(t.verdict);
        got[2] = U(t.ask);
        got[3] = U(t.retry_after_ns);
        return 4;
    }
    case OP_lease_reconfigure: {
        SKIP_UNPLACED(LEASE);
        weir_lease_policy p;
        __builtin_memset(&p, 0, sizeof p);
        p.interval_ns = I64(a[0]);
        p.ttl_ns = I64(a[1]);
        p.burst = I64(a[2]);
        p.share = as_double(a[3]);
        got[0] = U(weir_lease_reconfigure(H(LEASE, weir_lease), &p));
        return 1;
    }
    case OP_lease_grant:
        SKIP_UNPLACED(LEASE);
        got[0] = U(weir_lease_grant(H(LEASE, weir_lease), I64(a[0]), I64(a[1]), I64(a[2]), I64(a[3])));
        return 1;
    case OP_lease_release:
        SKIP_UNPLACED(LEASE);
        got[0] = U(weir_lease_release(H(LEASE, weir_lease), I64(a[0])));
        return 1;
    case OP_lease_unspent:
        SKIP_UNPLACED(LEASE);
        got[0] = U(weir_lease_unspent(H(LEASE, weir_lease), I64(a[0])));
        return 1;
    case OP_lease_expires:
        SKIP_UNPLACED(LEASE);
        got[0] = U(weir_lease_expires(H(LEASE, weir_lease), I64(a[0])));
        return 1;
    case OP_lease_cap:
        SKIP_UNPLACED(LEASE);
        got[0] = U(weir_lease_cap(H(LEASE, weir_lease)));
        return 1;
    case OP_lease_read_stats: {
        SKIP_UNPLACED(LEASE);
        weir_lease_stats t;
        __builtin_memset(&t, 0, sizeof t);
        got[0] = U(weir_lease_read_stats(H(LEASE, weir_lease), I64(a[0]), &t));
        got[1] = t.asks;
        got[2] = t.granted;
        got[3] = t.spent;
        got[4] = t.expired;
        got[5] = t.released;
        got[6] = t.held;
        got[7] = t.rate_milli;
        got[8] = U(t.rtt_ns);
        return 9;
    }
#if TRACE_BLOOM
    /* The bloom: `_new` places one with its own words under the held
     * limit; a key's arguments are its length, then its bytes packed in
     * the table's words (trace_table.py). */
    case OP_bloom_new:
    case OP_bloom_new_gcra: {
        weir_bloom *made = NULL;
        if (call->op == OP_bloom_new) {
            st = weir_bloom_place_in(mem, len, (uint32_t)a[0], (uint32_t)a[1], &held.rate_limit, a[2],
                                     a[3], &made);
        } else {
            st = weir_bloom_place_gcra_in(mem, len, (uint32_t)a[0], (uint32_t)a[1], &held.gcra_limit,
                                          a[2], a[3], &made);
        }
        if (laid(BLOOM, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_bloom_reconfigure:
        SKIP_UNPLACED(BLOOM);
        got[0] = U(weir_bloom_reconfigure(H(BLOOM, weir_bloom), &held.rate_limit));
        return 1;
    case OP_bloom_reconfigure_gcra:
        SKIP_UNPLACED(BLOOM);
        got[0] = U(weir_bloom_reconfigure_gcra(H(BLOOM, weir_bloom), &held.gcra_limit));
        return 1;
    case OP_bloom_allow:
        SKIP_UNPLACED(BLOOM);
        got[0] = weir_bloom_allow(H(BLOOM, weir_bloom), I64(a[0]), &a[2], (size_t)a[1]);
        return 1;
    case OP_bloom_next:
        SKIP_UNPLACED(BLOOM);
        got[0] = U(weir_bloom_next(H(BLOOM, weir_bloom), I64(a[0]), &a[2], (size_t)a[1]));
        return 1;
#endif
#if TRACE_KEYED
    /* The keyed table: `_new` places one with its buckets under the held
     * limit (on thumb, with no 16-byte compare-and-swap, its slots are
     * updated under the build's lock); a key is passed as the bloom's,
     * and decide's n follows the key's words. */
    case OP_keyed_new:
    case OP_keyed_new_rate: {
        weir_keyed *made = NULL;
        if (call->op == OP_keyed_new) {
            st = weir_keyed_init_in(mem, len, a[0], &held.gcra_limit, (uint32_t)a[1], a[2], a[3], &made);
        } else {
            st = weir_keyed_init_rate_in(mem, len, a[0], &held.rate_limit, (uint32_t)a[1], a[2], a[3],
                                         &made);
        }
        if (laid(KEYED, st, made, want[0])) return SKIPPED;
        got[0] = U(st);
        return 1;
    }
    case OP_keyed_allow:
        SKIP_UNPLACED(KEYED);
        got[0] = weir_keyed_allow(H(KEYED, weir_keyed), I64(a[0]), &a[2], (size_t)a[1]);
        return 1;
    case OP_keyed_decide: {
        SKIP_UNPLACED(KEYED);
        uint32_t decision = 0;
        int64_t n = I64(a[2 + (a[1] + 7) / 8]);
        got[0] = U(weir_keyed_decide(H(KEYED, weir_keyed), I64(a[0]), &a[2], (size_t)a[1], n, &decision));
        got[1] = decision;
        return 2;
    }
    case OP_keyed_next: {
        SKIP_UNPLACED(KEYED);
        int64_t at = 0;
        got[0] = U(weir_keyed_next(H(KEYED, weir_keyed), I64(a[0]), &a[2], (size_t)a[1], &at));
        got[1] = U(at);
        return 2;
    }
    case OP_keyed_reconfigure:
        SKIP_UNPLACED(KEYED);
        got[0] = U(weir_keyed_reconfigure(H(KEYED, weir_keyed), &held.gcra_limit));
        return 1;
    case OP_keyed_reconfigure_rate:
        SKIP_UNPLACED(KEYED);
        got[0] = U(weir_keyed_reconfigure_rate(H(KEYED, weir_keyed), &held.rate_limit));
        return 1;
    case OP_keyed_read: {
        SKIP_UNPLACED(KEYED);
        weir_keyed_reading r;
        __builtin_memset(&r, 0, sizeof r);
        got[0] = U(weir_keyed_read(H(KEYED, weir_keyed), &r));
        got[1] = r.buckets;
        got[2] = r.slots;
        got[3] = r.occupied;
        got[4] = r.overflows;
        got[5] = r.kind;
        got[6] = r.overflow_policy;
        return 7;
    }
    case OP_keyed_buckets_for: {
        uint64_t buckets = 0;
        got[0] = U(weir_keyed_buckets_for(a[0], as_double(a[1]), &buckets));
        got[1] = buckets;
        return 2;
    }
    case OP_keyed_overflow_chance:
        got[0] = of_double(weir_keyed_overflow_chance(as_double(a[0]), as_double(a[1])));
        return 1;
#endif
    default:
        return UINT32_MAX;
    }
#endif
}

/* Runs one call; writes its answers to `got` and returns how many. */
static uint32_t run(const trace_call *call, const uint64_t *a, const uint64_t *want, uint64_t *got) {
    int64_t out = 0;
    weir_status st;
    switch (call->op) {
    case OP_rate_limit_new:
        got[0] = U(weir_rate_limit_new(as_double(a[0]), I64(a[1]), &held.rate_limit));
        got[1] = held.rate_limit.interval_ns;
        got[2] = held.rate_limit.interval_frac;
        got[3] = held.rate_limit.burst;
        return 4;
    case OP_rate_limit_set:
        held.rate_limit.interval_ns = a[0];
        held.rate_limit.interval_frac = (uint32_t)a[1];
        held.rate_limit.burst = (uint32_t)a[2];
        return 0;
    case OP_rate_set:
        held.rate.state = a[0];
        return 0;
    case OP_rate_allow:
        got[0] = weir_rate_allow(&held.rate, &held.rate_limit, I64(a[0]));
        got[1] = held.rate.state;
        return 2;
    case OP_rate_next:
        got[0] = U(weir_rate_next(&held.rate, &held.rate_limit, I64(a[0])));
        return 1;
    case OP_gcra_limit_new:
        got[0] = U(weir_gcra_limit_new(as_double(a[0]), I64(a[1]), &held.gcra_limit));
        got[1] = held.gcra_limit.per_token;
        got[2] = U(held.gcra_limit.tolerance);
        got[3] = held.gcra_limit.shift;
        got[4] = held.gcra_limit.reserved;
        return 5;
    case OP_gcra_limit_set:
        held.gcra_limit.per_token = a[0];
        held.gcra_limit.tolerance = I64(a[1]);
        held.gcra_limit.shift = (uint32_t)a[2];
        held.gcra_limit.reserved = (uint32_t)a[3];
        return 0;
    case OP_gcra_set:
        held.gcra.state = a[0];
        return 0;
    case OP_gcra_allow:
        got[0] = weir_gcra_allow(&held.gcra, &held.gcra_limit, I64(a[0]));
        got[1] = held.gcra.state;
        return 2;
    case OP_gcra_allow_n:
        got[0] = weir_gcra_allow_n(&held.gcra, &held.gcra_limit, I64(a[0]), I64(a[1]));
        got[1] = held.gcra.state;
        return 2;
    case OP_gcra_next:
        got[0] = U(weir_gcra_next(&held.gcra, &held.gcra_limit, I64(a[0])));
        return 1;
    case OP_gcra_room:
        got[0] = U(weir_gcra_room(&held.gcra, &held.gcra_limit, I64(a[0])));
        return 1;
    case OP_limiter_bucket:
        got[0] = U(weir_limiter_bucket(&held.limiter, a[0], a[1], I64(a[2]), I64(a[3]), a[4], I64(a[5])));
        return 1;
    case OP_limiter_fixed_window:
        got[0] = U(weir_limiter_fixed_window(&held.limiter, a[0], I64(a[1]), I64(a[2]), a[3], I64(a[4])));
        return 1;
    case OP_limiter_cooldown:
        got[0] = U(weir_limiter_cooldown(&held.limiter, a[0], I64(a[1]), I64(a[2]), a[3], I64(a[4])));
        return 1;
    case OP_limiter_try_consume:
        got[0] = weir_limiter_try_consume(&held.limiter, I64(a[0]), a[1]);
        return 1;
    case OP_limiter_consume:
        got[0] = U(weir_limiter_consume(&held.limiter, I64(a[0]), a[1]));
        return 1;
    case OP_limiter_refund:
        got[0] = U(weir_limiter_refund(&held.limiter, I64(a[0]), I64(a[1]), a[2]));
        return 1;
    case OP_limiter_available:
        got[0] = weir_limiter_available(&held.limiter, I64(a[0]));
        return 1;
    case OP_limiter_capacity:
        got[0] = weir_limiter_capacity(&held.limiter);
        return 1;
    case OP_limiter_last_refill:
        st = weir_limiter_last_refill(&held.limiter, I64(a[0]), &out);
        goto status_and_out;
    case OP_limiter_window_start:
        st = weir_limiter_window_start(&held.limiter, I64(a[0]), &out);
        goto status_and_out;
    case OP_limiter_cooldown_end:
        st = weir_limiter_cooldown_end(&held.limiter, &out);
    status_and_out:
        got[0] = U(st);
        got[1] = U(out);
        return 2;
    case OP_backoff_preset:
        held.backoff = weir_backoff_preset();
        return put_backoff(got);
    case OP_backoff_full_jitter:
        held.backoff = weir_backoff_full_jitter();
        return put_backoff(got);
    case OP_backoff_set:
        held.backoff.base_ns = I64(a[0]);
        held.backoff.factor = as_double(a[1]);
        held.backoff.cap_ns = I64(a[2]);
        held.backoff.attempts = (int32_t)I64(a[3]);
        held.backoff.jitter = (int32_t)I64(a[4]);
        held.backoff.spread = as_double(a[5]);
        return 0;
    case OP_backoff_check:
        got[0] = U(weir_backoff_check(&held.backoff));
        return 1;
    case OP_backoff_more:
        got[0] = weir_backoff_more(&held.backoff, (int32_t)I64(a[0]));
        return 1;
    case OP_backoff_delay:
        got[0] = U(weir_backoff_delay(&held.backoff, (int32_t)I64(a[0]), as_double(a[1]), I64(a[2])));
        return 1;
    case OP_backoff_ceiling:
        got[0] = U(weir_backoff_ceiling(&held.backoff, (int32_t)I64(a[0])));
        return 1;
    case OP_backoff_schedule: {
        /* The draws from the table, as doubles (aligned copies on the
         * stack), and up to `cap` delays out (the generator bounds both). */
        double draws[TRACE_MAX_OUTS];
        int64_t delays[TRACE_MAX_OUTS];
        size_t cap = (size_t)a[0], n = (size_t)a[1];
        if (n > TRACE_MAX_OUTS) n = TRACE_MAX_OUTS;
        for (size_t i = 0; i < n; i++) draws[i] = as_double(a[2 + i]);
        size_t count = weir_backoff_schedule(&held.backoff, draws, n, delays, cap);
        got[0] = U(count);
        size_t wrote = count < cap ? count : cap;
        for (size_t i = 0; i < wrote; i++) got[1 + i] = U(delays[i]);
        return (uint32_t)(1 + wrote);
    }
    case OP_deadline_start:
        held.deadline = weir_deadline_start(I64(a[0]), I64(a[1]));
        got[0] = U(held.deadline.start);
        got[1] = U(held.deadline.budget_ns);
        return 2;
    case OP_deadline_set:
        held.deadline.start = I64(a[0]);
        held.deadline.budget_ns = I64(a[1]);
        return 0;
    case OP_deadline_expired:
        got[0] = weir_deadline_expired(&held.deadline, I64(a[0]));
        return 1;
    case OP_deadline_remaining:
        got[0] = weir_deadline_remaining(&held.deadline, I64(a[0]), &out);
        got[1] = U(out);
        return 2;
    default:
        return run_handle(call, a, want, got);
    }
}

/* Replays one trace; true when every answer matched. */
static bool replay(const trace_file *file) {
    reset();
    for (uint32_t i = 0; i < file->count; i++) {
        const trace_call *call = &trace_calls[file->first + i];
        const uint64_t *args = &trace_words[call->word];
        const uint64_t *want = args + call->nargs;
        uint64_t got[TRACE_MAX_OUTS];
        uint32_t n = run(call, args, want, got);
        if (n == SKIPPED) continue;
        uint32_t differs = n != call->nouts ? 0 : UINT32_MAX;
        for (uint32_t k = 0; differs == UINT32_MAX && k < n; k++) {
            if (got[k] != want[k]) differs = k;
        }
        if (differs != UINT32_MAX) {
            board_print("FAIL ");
            board_print(file->name);
            board_print(":");
            print_u64(call->line);
            board_print(": expected");
            for (uint32_t k = 0; k < call->nouts; k++) {
                board_print(" ");
                print_i64(want[k]);
            }
            board_print(", got");
            for (uint32_t k = 0; k < n && n != UINT32_MAX; k++) {
                board_print(" ");
                print_i64(got[k]);
            }
            board_print("\n");
            return false;
        }
    }
    board_print("ok   ");
    board_print(file->name);
    board_print(" (");
    print_u64(file->count);
    board_print(" calls");
    if (placed.skipped != 0) {
        board_print(", ");
        print_u64(placed.skipped);
        board_print(" skipped: a handle larger than its memory (this board's arena of ");
        print_u64(TRACE_ARENA_BYTES);
        board_print(" bytes, or a placed handle's own)");
    }
    board_print(")\n");
    return true;
}

int main(void) {
    board_print("weir ");
    board_print(weir_version());
    board_print(" on " WEIR_EXAMPLE_MACHINE "\n");
    uint32_t failed = 0;
    for (uint32_t f = 0; f < trace_file_count; f++) {
        failed += replay(&trace_files[f]) ? 0u : 1u;
    }
    board_print(WEIR_EXAMPLE_MACHINE ": ");
    print_u64(trace_file_count - failed);
    board_print(" passed, ");
    print_u64(failed);
    board_print(" failed\n");
    return (int)failed;
}
