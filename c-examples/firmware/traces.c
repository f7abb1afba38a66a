/* The conformance traces (traces/README.md) replayed by the firmware build
 * under QEMU: every call of the traces that c-examples/firmware/
 * trace_table.py compiled into the image (from flash, nothing copied to
 * RAM) goes through the firmware library, and each answer is compared with
 * the trace's, word for word. Prints one line per trace, "ok" or the first
 * answer that differs with its file and line, and exits (semihosting) with
 * the number of traces that failed. */
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

static void reset(void) {
    __builtin_memset(&held, 0, sizeof held);
    held.backoff = weir_backoff_preset();
}

static uint32_t put_backoff(uint64_t *got) {
    got[0] = U(held.backoff.base_ns);
    got[1] = of_double(held.backoff.factor);
    got[2] = U(held.backoff.cap_ns);
    got[3] = U(held.backoff.attempts);
    got[4] = U(held.backoff.jitter);
    got[5] = of_double(held.backoff.spread);
    return 6;
}

/* Runs one call; writes its answers to `got` and returns how many. */
static uint32_t run(const trace_call *call, const uint64_t *a, uint64_t *got) {
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
        return UINT32_MAX;
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
        uint32_t n = run(call, args, got);
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
    board_print(" calls)\n");
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
