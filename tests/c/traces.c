/* Replays the conformance traces (traces/README.md) through the C ABI:
 * every file traces/index.txt lists, every call, every answer compared
 * exactly. Fails at the first answer that differs, naming the trace file and
 * line. Runs from the repository's root (cargo test, ctest and its
 * sanitizer preset all start it there). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weir.h"

enum { LINE_MAX_LEN = 8192, MAX_ARGS = 1100 };

/* One call line, split: its op, its argument tokens, the expected answers
 * (the text after " = "), and the answers the library gave. */
typedef struct {
    const char *file;
    int line;
    char *op;
    char *args[MAX_ARGS];
    int nargs;
    int next;
    const char *want;
    char got[LINE_MAX_LEN];
    size_t len;
} call;

static void fail(const call *c, const char *why) {
    fprintf(stderr, "%s:%d: %s\n", c->file, c->line, why);
    exit(1);
}

static const char *arg(call *c) {
    if (c->next >= c->nargs) fail(c, "too few arguments");
    return c->args[c->next++];
}
static int64_t a_i64(call *c) { return (int64_t)strtoll(arg(c), NULL, 10); }
static uint64_t a_u64(call *c) { return (uint64_t)strtoull(arg(c), NULL, 10); }
static double a_f64(call *c) {
    uint64_t bits = (uint64_t)strtoull(arg(c), NULL, 16);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static void put(call *c, const char *text) {
    size_t n = strlen(text);
    if (c->len + n + 2 >= sizeof c->got) fail(c, "answer too long");
    if (c->len > 0) c->got[c->len++] = ' ';
    memcpy(c->got + c->len, text, n + 1);
    c->len += n;
}
static void o_i64(call *c, int64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, v);
    put(c, b);
}
static void o_u64(call *c, uint64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%" PRIu64, v);
    put(c, b);
}
static void o_bool(call *c, bool v) { put(c, v ? "1" : "0"); }
static void o_f64(call *c, double v) {
    uint64_t bits;
    char b[32];
    memcpy(&bits, &v, sizeof bits);
    snprintf(b, sizeof b, "0x%016" PRIx64, bits);
    put(c, b);
}
static void o_status(call *c, weir_status s) { o_i64(c, (int64_t)s); }

/* What a replay holds: one value or handle of each type. */
typedef struct {
    weir_rate rate;
    weir_rate_limit rate_limit;
    weir_gcra gcra;
    weir_gcra_limit gcra_limit;
    weir_limiter limiter;
    weir_backoff backoff;
    weir_deadline deadline;
} held;

static void backoff_fields(call *c, const weir_backoff *p) {
    o_i64(c, p->base_ns);
    o_f64(c, p->factor);
    o_i64(c, p->cap_ns);
    o_i64(c, p->attempts);
    o_i64(c, p->jitter);
    o_f64(c, p->spread);
}

#define OP(name) (strcmp(c->op, name) == 0)

/* Runs one call; false when the op is unknown. */
static bool run(call *c, held *h) {
    /* rate word */
    if (OP("rate_limit_new")) {
        double l = a_f64(c);
        int64_t b = a_i64(c);
        o_status(c, weir_rate_limit_new(l, b, &h->rate_limit));
        o_u64(c, h->rate_limit.interval_ns);
        o_u64(c, h->rate_limit.interval_frac);
        o_u64(c, h->rate_limit.burst);
    } else if (OP("rate_limit_set")) {
        h->rate_limit.interval_ns = a_u64(c);
        h->rate_limit.interval_frac = (uint32_t)a_u64(c);
        h->rate_limit.burst = (uint32_t)a_u64(c);
    } else if (OP("rate_set")) {
        h->rate.state = a_u64(c);
    } else if (OP("rate_allow")) {
        o_bool(c, weir_rate_allow(&h->rate, &h->rate_limit, a_i64(c)));
        o_u64(c, h->rate.state);
    } else if (OP("rate_next")) {
        o_i64(c, weir_rate_next(&h->rate, &h->rate_limit, a_i64(c)));
    }
    /* GCRA word */
    else if (OP("gcra_limit_new")) {
        double l = a_f64(c);
        int64_t b = a_i64(c);
        o_status(c, weir_gcra_limit_new(l, b, &h->gcra_limit));
        o_u64(c, h->gcra_limit.per_token);
        o_i64(c, h->gcra_limit.tolerance);
        o_u64(c, h->gcra_limit.shift);
        o_u64(c, h->gcra_limit.reserved);
    } else if (OP("gcra_limit_set")) {
        h->gcra_limit.per_token = a_u64(c);
        h->gcra_limit.tolerance = a_i64(c);
        h->gcra_limit.shift = (uint32_t)a_u64(c);
        h->gcra_limit.reserved = (uint32_t)a_u64(c);
    } else if (OP("gcra_set")) {
        h->gcra.state = a_u64(c);
    } else if (OP("gcra_allow")) {
        o_bool(c, weir_gcra_allow(&h->gcra, &h->gcra_limit, a_i64(c)));
        o_u64(c, h->gcra.state);
    } else if (OP("gcra_allow_n")) {
        int64_t now = a_i64(c);
        o_bool(c, weir_gcra_allow_n(&h->gcra, &h->gcra_limit, now, a_i64(c)));
        o_u64(c, h->gcra.state);
    } else if (OP("gcra_next")) {
        o_i64(c, weir_gcra_next(&h->gcra, &h->gcra_limit, a_i64(c)));
    } else if (OP("gcra_room")) {
        o_i64(c, weir_gcra_room(&h->gcra, &h->gcra_limit, a_i64(c)));
    }
    /* limiter */
    else if (OP("limiter_bucket")) {
        uint64_t cap = a_u64(c), amount = a_u64(c);
        int64_t interval = a_i64(c), last = a_i64(c);
        uint64_t initial = a_u64(c);
        o_status(c, weir_limiter_bucket(&h->limiter, cap, amount, interval, last, initial,
                                        a_i64(c)));
    } else if (OP("limiter_fixed_window")) {
        uint64_t cap = a_u64(c);
        int64_t window = a_i64(c), start = a_i64(c);
        uint64_t initial = a_u64(c);
        o_status(c,
                 weir_limiter_fixed_window(&h->limiter, cap, window, start, initial, a_i64(c)));
    } else if (OP("limiter_cooldown")) {
        uint64_t cap = a_u64(c);
        int64_t cooldown = a_i64(c), end = a_i64(c);
        uint64_t initial = a_u64(c);
        o_status(c, weir_limiter_cooldown(&h->limiter, cap, cooldown, end, initial, a_i64(c)));
    } else if (OP("limiter_try_consume")) {
        int64_t now = a_i64(c);
        o_bool(c, weir_limiter_try_consume(&h->limiter, now, a_u64(c)));
    } else if (OP("limiter_consume")) {
        int64_t now = a_i64(c);
        o_status(c, weir_limiter_consume(&h->limiter, now, a_u64(c)));
    } else if (OP("limiter_refund")) {
        int64_t now = a_i64(c), at = a_i64(c);
        o_status(c, weir_limiter_refund(&h->limiter, now, at, a_u64(c)));
    } else if (OP("limiter_available")) {
        o_u64(c, weir_limiter_available(&h->limiter, a_i64(c)));
    } else if (OP("limiter_capacity")) {
        o_u64(c, weir_limiter_capacity(&h->limiter));
    } else if (OP("limiter_last_refill")) {
        int64_t v = 0;
        o_status(c, weir_limiter_last_refill(&h->limiter, a_i64(c), &v));
        o_i64(c, v);
    } else if (OP("limiter_window_start")) {
        int64_t v = 0;
        o_status(c, weir_limiter_window_start(&h->limiter, a_i64(c), &v));
        o_i64(c, v);
    } else if (OP("limiter_cooldown_end")) {
        int64_t v = 0;
        o_status(c, weir_limiter_cooldown_end(&h->limiter, &v));
        o_i64(c, v);
    }
    /* backoff */
    else if (OP("backoff_preset")) {
        h->backoff = weir_backoff_preset();
        backoff_fields(c, &h->backoff);
    } else if (OP("backoff_full_jitter")) {
        h->backoff = weir_backoff_full_jitter();
        backoff_fields(c, &h->backoff);
    } else if (OP("backoff_set")) {
        h->backoff.base_ns = a_i64(c);
        h->backoff.factor = a_f64(c);
        h->backoff.cap_ns = a_i64(c);
        h->backoff.attempts = (int32_t)a_i64(c);
        h->backoff.jitter = (int32_t)a_i64(c);
        h->backoff.spread = a_f64(c);
    } else if (OP("backoff_check")) {
        o_status(c, weir_backoff_check(&h->backoff));
    } else if (OP("backoff_more")) {
        o_bool(c, weir_backoff_more(&h->backoff, (int32_t)a_i64(c)));
    } else if (OP("backoff_delay")) {
        int32_t retry = (int32_t)a_i64(c);
        double r = a_f64(c);
        o_i64(c, weir_backoff_delay(&h->backoff, retry, r, a_i64(c)));
    } else if (OP("backoff_ceiling")) {
        o_i64(c, weir_backoff_ceiling(&h->backoff, (int32_t)a_i64(c)));
    } else if (OP("backoff_schedule")) {
        static double randoms[MAX_ARGS];
        static int64_t out[MAX_ARGS];
        size_t cap = (size_t)a_u64(c), n = (size_t)a_u64(c);
        if (cap > MAX_ARGS || n > MAX_ARGS) fail(c, "schedule too long");
        for (size_t i = 0; i < n; i++) randoms[i] = a_f64(c);
        size_t made = weir_backoff_schedule(&h->backoff, n ? randoms : NULL, n,
                                            cap ? out : NULL, cap);
        o_u64(c, made);
        for (size_t i = 0; i < made && i < cap; i++) o_i64(c, out[i]);
    }
    /* deadline */
    else if (OP("deadline_start")) {
        int64_t budget = a_i64(c);
        h->deadline = weir_deadline_start(budget, a_i64(c));
        o_i64(c, h->deadline.start);
        o_i64(c, h->deadline.budget_ns);
    } else if (OP("deadline_set")) {
        h->deadline.start = a_i64(c);
        h->deadline.budget_ns = a_i64(c);
    } else if (OP("deadline_expired")) {
        o_bool(c, weir_deadline_expired(&h->deadline, a_i64(c)));
    } else if (OP("deadline_remaining")) {
        int64_t v = 0;
        o_bool(c, weir_deadline_remaining(&h->deadline, a_i64(c), &v));
        o_i64(c, v);
    } else {
        return false;
    }
    return true;
}

/* Replays one file; returns the number of calls. */
static long replay(const char *path) {
    static char text[LINE_MAX_LEN];
    static call c;
    held h;
    FILE *f = fopen(path, "r");
    long calls = 0;
    memset(&h, 0, sizeof h);
    h.backoff = weir_backoff_preset();
    memset(&c, 0, sizeof c);
    c.file = path;
    if (!f) fail(&c, "cannot open");
    while (fgets(text, sizeof text, f)) {
        char *eol = strchr(text, '\n');
        char *eq, *tok;
        c.line++;
        if (!eol) fail(&c, "line too long or not ended");
        *eol = '\0';
        if (c.line == 1) {
            if (strncmp(text, "weir-trace 1 ", 13) != 0) fail(&c, "not a version 1 trace");
            continue;
        }
        if (text[0] == '\0' || text[0] == '#') continue;
        eq = strstr(text, " =");
        if (!eq) fail(&c, "no ' =' in a call line");
        *eq = '\0';
        c.want = eq[2] == ' ' ? eq + 3 : eq + 2;
        c.nargs = 0;
        c.next = 0;
        c.len = 0;
        c.got[0] = '\0';
        c.op = strtok(text, " ");
        while ((tok = strtok(NULL, " ")) != NULL) {
            if (c.nargs == MAX_ARGS) fail(&c, "too many arguments");
            c.args[c.nargs++] = tok;
        }
        if (!run(&c, &h)) fail(&c, "unknown op");
        if (c.next != c.nargs) fail(&c, "unused arguments");
        if (strcmp(c.got, c.want) != 0) {
            fprintf(stderr, "%s:%d: %s: expected \"%s\", got \"%s\"\n", path, c.line, c.op,
                    c.want, c.got);
            exit(1);
        }
        calls++;
    }
    fclose(f);
    return calls;
}

int main(void) {
    char name[512], path[600];
    FILE *index = fopen("traces/index.txt", "r");
    long files = 0, calls = 0;
    if (!index) {
        fprintf(stderr, "traces/index.txt: cannot open (run from the repository's root)\n");
        return 1;
    }
    while (fgets(name, sizeof name, index)) {
        name[strcspn(name, "\n")] = '\0';
        if (name[0] == '\0' || name[0] == '#') continue;
        snprintf(path, sizeof path, "traces/%s", name);
        calls += replay(path);
        files++;
    }
    fclose(index);
    if (files == 0) {
        fprintf(stderr, "traces/index.txt lists no trace\n");
        return 1;
    }
    printf("traces.c: %ld calls in %ld traces replayed exactly\n", calls, files);
    return 0;
}
