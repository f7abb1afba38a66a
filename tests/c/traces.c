/* Replays the conformance traces (traces/README.md) through the C ABI:
 * every file traces/index.txt lists, every call, every answer compared
 * exactly. Fails at the first answer that differs, naming the trace file and
 * line. Runs from the repository's root (cargo test, ctest and its
 * sanitizer preset all start it there). */
#include "trace_reader.h"

/* What a replay holds: one value or handle of each type. */
typedef struct {
    weir_rate rate;
    weir_rate_limit rate_limit;
    weir_gcra gcra;
    weir_gcra_limit gcra_limit;
    weir_limiter limiter;
    weir_backoff backoff;
    weir_deadline deadline;
    weir_bucket *bucket;
    weir_window *window;
    weir_sliding *sliding;
    weir_period *period;
    weir_gate *gate;
    weir_budget *budget;
    weir_concurrency *concurrency;
    weir_breaker *breaker;
    weir_shedder *shedder;
    weir_pool *pool;
    weir_bloom *bloom;
    weir_lease *lease;
    weir_keyed *keyed;
    /* Ticket slots: the k-th allow or enter line of a file writes slot k. */
    size_t tickets;
    weir_breaker_ticket breaker_tickets[MAX_TICKETS];
    weir_shedder_ticket shedder_tickets[MAX_TICKETS];
    weir_concurrency_ticket concurrency_tickets[MAX_TICKETS];
} held;

static void drop_all(held *h) {
    weir_bucket_free(h->bucket);
    weir_window_free(h->window);
    weir_sliding_free(h->sliding);
    weir_period_free(h->period);
    weir_gate_free(h->gate);
    weir_budget_free(h->budget);
    weir_concurrency_free(h->concurrency);
    weir_breaker_free(h->breaker);
    weir_shedder_free(h->shedder);
    weir_pool_free(h->pool);
    weir_bloom_free(h->bloom);
    weir_lease_free(h->lease);
    weir_keyed_free(h->keyed);
}

static size_t new_ticket(call *c, held *h) {
    if (h->tickets == MAX_TICKETS) fail(c, "too many tickets");
    return h->tickets++;
}
static size_t a_slot(call *c, const held *h) {
    uint64_t k = a_u64(c);
    if (k >= h->tickets) fail(c, "no such ticket slot");
    return (size_t)k;
}

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
    }
    /* bucket */
    else if (OP("bucket_new")) {
        double rate = a_f64(c), burst = a_f64(c);
        weir_bucket_free(h->bucket);
        h->bucket = NULL;
        o_status(c, weir_bucket_new(rate, burst, a_i64(c), &h->bucket));
    } else if (OP("bucket_take")) {
        int64_t now = a_i64(c);
        o_bool(c, weir_bucket_take(h->bucket, now, a_f64(c)));
    } else if (OP("bucket_refund")) {
        int64_t now = a_i64(c), at = a_i64(c);
        o_status(c, weir_bucket_refund(h->bucket, now, at, a_f64(c)));
    } else if (OP("bucket_next")) {
        int64_t now = a_i64(c);
        o_i64(c, weir_bucket_next(h->bucket, now, a_f64(c)));
    } else if (OP("bucket_tokens")) {
        o_f64(c, weir_bucket_tokens(h->bucket, a_i64(c)));
    } else if (OP("bucket_reconfigure")) {
        double rate = a_f64(c), burst = a_f64(c);
        o_status(c, weir_bucket_reconfigure(h->bucket, rate, burst, a_i64(c)));
    }
    /* window */
    else if (OP("window_new")) {
        int32_t size = (int32_t)a_i64(c);
        int64_t width = a_i64(c);
        weir_window_free(h->window);
        h->window = NULL;
        o_status(c, weir_window_new(size, width, a_i64(c), &h->window));
    } else if (OP("window_add")) {
        int64_t now = a_i64(c);
        o_status(c, weir_window_add(h->window, now, a_i64(c)));
    } else if (OP("window_read_total")) {
        weir_window_total t = {0, 0};
        int64_t now = a_i64(c);
        o_status(c, weir_window_read_total(h->window, now, a_i64(c) != 0, &t));
        o_i64(c, t.sum);
        o_i64(c, t.count);
    } else if (OP("window_read_buckets")) {
        weir_window_total t[MAX_LIST];
        int64_t now = a_i64(c);
        bool current = a_i64(c) != 0;
        size_t cap = (size_t)a_u64(c), n;
        if (cap > MAX_LIST) fail(c, "cap too large");
        memset(t, 0, sizeof t);
        n = weir_window_read_buckets(h->window, now, current, t, cap);
        o_u64(c, n);
        for (size_t i = 0; i < n && i < cap; i++) {
            o_i64(c, t[i].sum);
            o_i64(c, t[i].count);
        }
    } else if (OP("window_size")) {
        o_i64(c, weir_window_size(h->window));
    } else if (OP("window_width")) {
        o_i64(c, weir_window_width(h->window));
    } else if (OP("window_reconfigure")) {
        int32_t size = (int32_t)a_i64(c);
        int64_t width = a_i64(c);
        o_status(c, weir_window_reconfigure(h->window, size, width, a_i64(c)));
    }
    /* sliding */
    else if (OP("sliding_new")) {
        int64_t quota = a_i64(c);
        weir_sliding_free(h->sliding);
        h->sliding = NULL;
        o_status(c, weir_sliding_new(quota, a_i64(c), &h->sliding));
    } else if (OP("sliding_take")) {
        o_bool(c, weir_sliding_take(h->sliding, a_i64(c)));
    } else if (OP("sliding_left")) {
        o_i64(c, weir_sliding_left(h->sliding, a_i64(c)));
    } else if (OP("sliding_next")) {
        o_i64(c, weir_sliding_next(h->sliding, a_i64(c)));
    } else if (OP("sliding_reconfigure")) {
        int64_t quota = a_i64(c);
        o_status(c, weir_sliding_reconfigure(h->sliding, quota, a_i64(c)));
    }
    /* period */
    else if (OP("period_new")) {
        int64_t quota = a_i64(c), len = a_i64(c);
        weir_period_free(h->period);
        h->period = NULL;
        o_status(c, weir_period_new(quota, len, a_i64(c) != 0, &h->period));
    } else if (OP("period_take")) {
        o_i64(c, (int64_t)weir_period_take(h->period, a_i64(c)));
    } else if (OP("period_left")) {
        o_i64(c, weir_period_left(h->period, a_i64(c)));
    } else if (OP("period_next")) {
        o_i64(c, weir_period_next(h->period, a_i64(c)));
    } else if (OP("period_reconfigure")) {
        int64_t quota = a_i64(c), len = a_i64(c);
        o_status(c, weir_period_reconfigure(h->period, quota, len, a_i64(c) != 0));
    }
    /* gate */
    else if (OP("gate_new")) {
        weir_gate_free(h->gate);
        h->gate = NULL;
        o_status(c, weir_gate_new(a_i64(c), &h->gate));
    } else if (OP("gate_enter")) {
        o_bool(c, weir_gate_enter(h->gate));
    } else if (OP("gate_leave")) {
        weir_gate_leave(h->gate);
    } else if (OP("gate_held")) {
        o_i64(c, weir_gate_held(h->gate));
    } else if (OP("gate_reconfigure")) {
        o_status(c, weir_gate_reconfigure(h->gate, a_i64(c)));
    }
    /* lease */
    else if (OP("lease_new")) {
        weir_lease_policy p;
        p.interval_ns = a_i64(c);
        p.ttl_ns = a_i64(c);
        p.burst = a_i64(c);
        p.share = a_f64(c);
        weir_lease_free(h->lease);
        h->lease = NULL;
        o_status(c, weir_lease_new(&p, a_i64(c), &h->lease));
    } else if (OP("lease_take")) {
        weir_lease_answer a;
        int64_t now = a_i64(c);
        memset(&a, 0, sizeof a);
        o_status(c, weir_lease_take(h->lease, now, a_i64(c), &a));
        o_i64(c, a.verdict);
        o_i64(c, a.ask);
        o_i64(c, a.retry_after_ns);
    } else if (OP("lease_reconfigure")) {
        weir_lease_policy p;
        p.interval_ns = a_i64(c);
        p.ttl_ns = a_i64(c);
        p.burst = a_i64(c);
        p.share = a_f64(c);
        o_status(c, weir_lease_reconfigure(h->lease, &p));
    } else if (OP("lease_grant")) {
        int64_t now = a_i64(c);
        int64_t granted = a_i64(c);
        int64_t until = a_i64(c);
        o_status(c, weir_lease_grant(h->lease, now, granted, until, a_i64(c)));
    } else if (OP("lease_release")) {
        o_i64(c, weir_lease_release(h->lease, a_i64(c)));
    } else if (OP("lease_unspent")) {
        o_i64(c, weir_lease_unspent(h->lease, a_i64(c)));
    } else if (OP("lease_expires")) {
        o_i64(c, weir_lease_expires(h->lease, a_i64(c)));
    } else if (OP("lease_cap")) {
        o_i64(c, weir_lease_cap(h->lease));
    } else if (OP("lease_read_stats")) {
        weir_lease_stats t;
        memset(&t, 0, sizeof t);
        o_status(c, weir_lease_read_stats(h->lease, a_i64(c), &t));
        o_u64(c, t.asks);
        o_u64(c, t.granted);
        o_u64(c, t.spent);
        o_u64(c, t.expired);
        o_u64(c, t.released);
        o_u64(c, t.held);
        o_u64(c, t.rate_milli);
        o_i64(c, t.rtt_ns);
    }
    /* budget */
    else if (OP("budget_new")) {
        weir_budget_policy p;
        memset(&p, 0, sizeof p);
        p.form = (int32_t)a_i64(c);
        p.max_tokens = (int32_t)a_i64(c);
        p.token_ratio = a_f64(c);
        p.ttl_ns = a_i64(c);
        p.min_per_s = (int32_t)a_i64(c);
        p.reserved = (int32_t)a_i64(c);
        p.percent = a_f64(c);
        weir_budget_free(h->budget);
        h->budget = NULL;
        o_status(c, weir_budget_new(&p, a_i64(c), &h->budget));
    } else if (OP("budget_reconfigure")) {
        weir_budget_policy p;
        memset(&p, 0, sizeof p);
        p.form = (int32_t)a_i64(c);
        p.max_tokens = (int32_t)a_i64(c);
        p.token_ratio = a_f64(c);
        p.ttl_ns = a_i64(c);
        p.min_per_s = (int32_t)a_i64(c);
        p.reserved = (int32_t)a_i64(c);
        p.percent = a_f64(c);
        o_status(c, weir_budget_reconfigure(h->budget, &p, a_i64(c)));
    } else if (OP("budget_deposit")) {
        weir_budget_deposit(h->budget, a_i64(c));
    } else if (OP("budget_withdraw")) {
        o_bool(c, weir_budget_withdraw(h->budget, a_i64(c)));
    } else if (OP("budget_left")) {
        o_i64(c, weir_budget_left(h->budget, a_i64(c)));
    } else if (OP("budget_tokens")) {
        o_i64(c, weir_budget_tokens(h->budget, a_i64(c)));
    }
    /* concurrency */
    else if (OP("concurrency_new")) {
        weir_concurrency_policy p;
        memset(&p, 0, sizeof p);
        p.initial_limit = (int32_t)a_i64(c);
        p.min_limit = (int32_t)a_i64(c);
        p.max_limit = (int32_t)a_i64(c);
        p.queue_size = (int32_t)a_i64(c);
        p.smoothing = a_f64(c);
        p.tolerance = a_f64(c);
        p.long_window = (int32_t)a_i64(c);
        p.warmup = (int32_t)a_i64(c);
        weir_concurrency_free(h->concurrency);
        h->concurrency = NULL;
        o_status(c, weir_concurrency_new(&p, &h->concurrency));
    } else if (OP("concurrency_reconfigure")) {
        weir_concurrency_policy p;
        memset(&p, 0, sizeof p);
        p.initial_limit = (int32_t)a_i64(c);
        p.min_limit = (int32_t)a_i64(c);
        p.max_limit = (int32_t)a_i64(c);
        p.queue_size = (int32_t)a_i64(c);
        p.smoothing = a_f64(c);
        p.tolerance = a_f64(c);
        p.long_window = (int32_t)a_i64(c);
        p.warmup = (int32_t)a_i64(c);
        o_status(c, weir_concurrency_reconfigure(h->concurrency, &p));
    } else if (OP("concurrency_new_partitioned")) {
        weir_concurrency_policy p;
        memset(&p, 0, sizeof p);
        p.initial_limit = (int32_t)a_i64(c);
        p.min_limit = (int32_t)a_i64(c);
        p.max_limit = (int32_t)a_i64(c);
        p.queue_size = (int32_t)a_i64(c);
        p.smoothing = a_f64(c);
        p.tolerance = a_f64(c);
        p.long_window = (int32_t)a_i64(c);
        p.warmup = (int32_t)a_i64(c);
        int32_t count = (int32_t)a_i64(c);
        weir_concurrency_partition parts[2];
        for (int i = 0; i < 2; i++) {
            parts[i].share = a_f64(c);
            parts[i].borrow = a_i64(c);
        }
        weir_concurrency_free(h->concurrency);
        h->concurrency = NULL;
        o_status(c, weir_concurrency_new_partitioned(&p, parts, count, &h->concurrency));
    } else if (OP("concurrency_enter_partition")) {
        size_t k = new_ticket(c, h);
        int32_t part = (int32_t)a_i64(c);
        o_status(c, weir_concurrency_enter_partition(h->concurrency, part, a_i64(c), &h->concurrency_tickets[k]));
        o_bool(c, h->concurrency_tickets[k].flying == 1);
    } else if (OP("concurrency_leave_partition")) {
        int32_t part = (int32_t)a_i64(c);
        size_t k = a_slot(c, h);
        o_status(c, weir_concurrency_leave_partition(h->concurrency, part, &h->concurrency_tickets[k], a_i64(c), false));
    } else if (OP("concurrency_partition_flying")) {
        o_i64(c, weir_concurrency_partition_flying(h->concurrency, (int32_t)a_i64(c)));
    } else if (OP("concurrency_partition_room")) {
        o_i64(c, weir_concurrency_partition_room(h->concurrency, (int32_t)a_i64(c)));
    } else if (OP("concurrency_enter")) {
        size_t k = new_ticket(c, h);
        o_bool(c, weir_concurrency_enter(h->concurrency, a_i64(c), &h->concurrency_tickets[k]));
    } else if (OP("concurrency_leave")) {
        size_t k = a_slot(c, h);
        int64_t now = a_i64(c);
        o_status(c, weir_concurrency_leave(h->concurrency, &h->concurrency_tickets[k], now,
                                           a_i64(c) != 0));
    } else if (OP("concurrency_limit")) {
        o_i64(c, weir_concurrency_limit(h->concurrency));
    } else if (OP("concurrency_flying")) {
        o_i64(c, weir_concurrency_flying(h->concurrency));
    } else if (OP("concurrency_long_rtt")) {
        o_f64(c, weir_concurrency_long_rtt(h->concurrency));
    }
    /* breaker */
    else if (OP("breaker_new")) {
        weir_breaker_policy p;
        memset(&p, 0, sizeof p);
        p.k = a_f64(c);
        p.floor = a_f64(c);
        p.protection = a_f64(c);
        p.probe_ns = a_i64(c);
        p.size = (int32_t)a_i64(c);
        p.skip_refusals = (int32_t)a_i64(c);
        p.window_ns = a_i64(c);
        p.max_rejection_probability = a_f64(c);
        p.rps_threshold = a_f64(c);
        p.aggression = a_f64(c);
        weir_breaker_free(h->breaker);
        h->breaker = NULL;
        o_status(c, weir_breaker_new(&p, a_i64(c), &h->breaker));
    } else if (OP("breaker_reconfigure")) {
        weir_breaker_policy p;
        memset(&p, 0, sizeof p);
        p.k = a_f64(c);
        p.floor = a_f64(c);
        p.protection = a_f64(c);
        p.probe_ns = a_i64(c);
        p.size = (int32_t)a_i64(c);
        p.skip_refusals = (int32_t)a_i64(c);
        p.window_ns = a_i64(c);
        p.max_rejection_probability = a_f64(c);
        p.rps_threshold = a_f64(c);
        p.aggression = a_f64(c);
        o_status(c, weir_breaker_reconfigure(h->breaker, &p));
    } else if (OP("breaker_allow")) {
        size_t k = new_ticket(c, h);
        int64_t now = a_i64(c);
        o_bool(c, weir_breaker_allow(h->breaker, now, a_f64(c), &h->breaker_tickets[k]));
    } else if (OP("breaker_pass")) {
        size_t k = a_slot(c, h);
        o_status(c, weir_breaker_pass(h->breaker, &h->breaker_tickets[k], a_i64(c)));
    } else if (OP("breaker_fail")) {
        size_t k = a_slot(c, h);
        o_status(c, weir_breaker_fail(h->breaker, &h->breaker_tickets[k], a_i64(c)));
    } else if (OP("breaker_ratio")) {
        o_f64(c, weir_breaker_ratio(h->breaker, a_i64(c)));
    } else if (OP("breaker_read_tally")) {
        weir_breaker_tally t;
        memset(&t, 0, sizeof t);
        o_status(c, weir_breaker_read_tally(h->breaker, a_i64(c), &t));
        o_i64(c, t.total);
        o_i64(c, t.success);
        o_i64(c, t.failure);
        o_i64(c, t.drop);
    }
    /* shedder */
    else if (OP("shedder_new")) {
        weir_shedder_policy p;
        memset(&p, 0, sizeof p);
        p.size = (int32_t)a_i64(c);
        p.cpu = (int32_t)a_i64(c);
        p.window_ns = a_i64(c);
        p.latency_ns = a_i64(c);
        p.beta = a_f64(c);
        p.cool_ns = a_i64(c);
        p.floor = a_f64(c);
        weir_shedder_free(h->shedder);
        h->shedder = NULL;
        o_status(c, weir_shedder_new(&p, a_i64(c), &h->shedder));
    } else if (OP("shedder_reconfigure")) {
        weir_shedder_policy p;
        memset(&p, 0, sizeof p);
        p.size = (int32_t)a_i64(c);
        p.cpu = (int32_t)a_i64(c);
        p.window_ns = a_i64(c);
        p.latency_ns = a_i64(c);
        p.beta = a_f64(c);
        p.cool_ns = a_i64(c);
        p.floor = a_f64(c);
        o_status(c, weir_shedder_reconfigure(h->shedder, &p));
    } else if (OP("shedder_allow")) {
        size_t k = new_ticket(c, h);
        int64_t now = a_i64(c);
        o_bool(c, weir_shedder_allow(h->shedder, now, (int32_t)a_i64(c), &h->shedder_tickets[k]));
    } else if (OP("shedder_allow_class")) {
        size_t k = new_ticket(c, h);
        int64_t now = a_i64(c);
        int32_t cpu = (int32_t)a_i64(c);
        int32_t class = (int32_t)a_i64(c);
        o_status(c, weir_shedder_allow_class(h->shedder, now, cpu, class, &h->shedder_tickets[k]));
        o_bool(c, h->shedder_tickets[k].flying == 1);
    } else if (OP("shedder_pass")) {
        size_t k = a_slot(c, h);
        o_status(c, weir_shedder_pass(h->shedder, &h->shedder_tickets[k], a_i64(c)));
    } else if (OP("shedder_fail")) {
        size_t k = a_slot(c, h);
        o_status(c, weir_shedder_fail(h->shedder, &h->shedder_tickets[k]));
    } else if (OP("shedder_flying")) {
        o_i64(c, weir_shedder_flying(h->shedder));
    } else if (OP("shedder_read_stats")) {
        weir_shedder_stats t;
        memset(&t, 0, sizeof t);
        o_status(c, weir_shedder_read_stats(h->shedder, a_i64(c), &t));
        o_i64(c, t.flying);
        o_f64(c, t.average);
        o_f64(c, t.capacity);
        o_f64(c, t.limit);
        o_i64(c, t.cpu);
        o_i64(c, t.hot);
    }
    /* pool */
    else if (OP("pool_new")) {
        weir_pool_policy p;
        memset(&p, 0, sizeof p);
        p.size = a_i64(c);
        p.idle = a_i64(c);
        p.keep_ns = a_i64(c);
        p.life_ns = a_i64(c);
        p.life_jitter = a_f64(c);
        p.min_idle = a_i64(c);
        p.max_making = a_i64(c);
        weir_pool_free(h->pool);
        h->pool = NULL;
        o_status(c, weir_pool_new(&p, &h->pool));
    } else if (OP("pool_reconfigure")) {
        weir_pool_policy p;
        memset(&p, 0, sizeof p);
        p.size = a_i64(c);
        p.idle = a_i64(c);
        p.keep_ns = a_i64(c);
        p.life_ns = a_i64(c);
        p.life_jitter = a_f64(c);
        p.min_idle = a_i64(c);
        p.max_making = a_i64(c);
        o_status(c, weir_pool_reconfigure(h->pool, &p));
    } else if (OP("pool_take")) {
        weir_pool_taken t = weir_pool_take(h->pool, a_i64(c));
        o_i64(c, t.kind);
        o_u64(c, (uint64_t)t.item);
    } else if (OP("pool_made")) {
        uintptr_t item = (uintptr_t)a_u64(c);
        o_status(c, weir_pool_made(h->pool, item, a_i64(c)));
    } else if (OP("pool_made_jittered")) {
        uintptr_t item = (uintptr_t)a_u64(c);
        int64_t now = a_i64(c);
        o_status(c, weir_pool_made_jittered(h->pool, item, now, a_u64(c)));
    } else if (OP("pool_unmade")) {
        o_status(c, weir_pool_unmade(h->pool));
    } else if (OP("pool_give")) {
        uintptr_t item = (uintptr_t)a_u64(c);
        bool kept = false;
        o_status(c, weir_pool_give(h->pool, item, a_i64(c), &kept));
        o_bool(c, kept);
    } else if (OP("pool_drop")) {
        o_status(c, weir_pool_drop(h->pool, (uintptr_t)a_u64(c)));
    } else if (OP("pool_make_ahead")) {
        o_i64(c, weir_pool_make_ahead(h->pool));
    } else if (OP("pool_evict") || OP("pool_close")) {
        uintptr_t items[MAX_LIST];
        bool evict = OP("pool_evict");
        int64_t now = evict ? a_i64(c) : 0;
        size_t cap = (size_t)a_u64(c), n;
        if (cap > MAX_LIST) fail(c, "cap too large");
        n = evict ? weir_pool_evict(h->pool, now, items, cap) : weir_pool_close(h->pool, items, cap);
        o_u64(c, n);
        for (size_t i = 0; i < n && i < cap; i++) o_u64(c, (uint64_t)items[i]);
    } else if (OP("pool_mark_old")) {
        o_i64(c, weir_pool_mark_old(h->pool));
    } else if (OP("pool_live")) {
        o_i64(c, weir_pool_live(h->pool));
    } else if (OP("pool_idle")) {
        o_i64(c, weir_pool_idle(h->pool));
    } else if (OP("pool_busy")) {
        o_i64(c, weir_pool_busy(h->pool));
    } else if (OP("pool_next_expiry")) {
        o_i64(c, weir_pool_next_expiry(h->pool, a_i64(c)));
    } else if (OP("pool_read_stats")) {
        weir_pool_stats t;
        memset(&t, 0, sizeof t);
        o_status(c, weir_pool_read_stats(h->pool, &t));
        o_u64(c, t.made);
        o_u64(c, t.reused);
        o_u64(c, t.stale);
        o_u64(c, t.evicted_idle);
        o_u64(c, t.evicted_age);
        o_u64(c, t.dropped);
        o_u64(c, t.refused);
        o_u64(c, t.waits);
        o_u64(c, t.unmade);
        o_u64(c, t.closed);
        o_u64(c, t.retired);
    }
    /* bloom */
    else if (OP("bloom_new") || OP("bloom_new_gcra")) {
        uint32_t size_log2 = (uint32_t)a_u64(c), hashes = (uint32_t)a_u64(c);
        uint64_t seed0 = a_u64(c), seed1 = a_u64(c);
        weir_bloom_free(h->bloom);
        h->bloom = NULL;
        o_status(c, OP("bloom_new") ? weir_bloom_new(size_log2, hashes, &h->rate_limit, seed0,
                                                      seed1, &h->bloom)
                                    : weir_bloom_new_gcra(size_log2, hashes, &h->gcra_limit,
                                                          seed0, seed1, &h->bloom));
    } else if (OP("bloom_reconfigure")) {
        o_status(c, weir_bloom_reconfigure(h->bloom, &h->rate_limit));
    } else if (OP("bloom_reconfigure_gcra")) {
        o_status(c, weir_bloom_reconfigure_gcra(h->bloom, &h->gcra_limit));
    } else if (OP("bloom_allow") || OP("bloom_next")) {
        unsigned char key[256];
        int64_t now = a_i64(c);
        size_t n = a_key(c, key, sizeof key);
        if (OP("bloom_allow")) {
            o_bool(c, weir_bloom_allow(h->bloom, now, key, n));
        } else {
            o_i64(c, weir_bloom_next(h->bloom, now, key, n));
        }
    }
    /* keyed table */
    else if (OP("keyed_new") || OP("keyed_new_rate")) {
        uint64_t buckets = a_u64(c);
        uint32_t overflow = (uint32_t)a_u64(c);
        uint64_t seed0 = a_u64(c), seed1 = a_u64(c);
        weir_keyed_free(h->keyed);
        h->keyed = NULL;
        o_status(c, OP("keyed_new") ? weir_keyed_new(buckets, &h->gcra_limit, overflow, seed0,
                                                      seed1, &h->keyed)
                                    : weir_keyed_new_rate(buckets, &h->rate_limit, overflow,
                                                          seed0, seed1, &h->keyed));
    } else if (OP("keyed_allow") || OP("keyed_decide") || OP("keyed_next")) {
        unsigned char key[256];
        int64_t now = a_i64(c);
        size_t n = a_key(c, key, sizeof key);
        if (OP("keyed_allow")) {
            o_bool(c, weir_keyed_allow(h->keyed, now, key, n));
        } else if (OP("keyed_decide")) {
            int64_t tokens = a_i64(c);
            uint32_t d = 0;
            o_status(c, weir_keyed_decide(h->keyed, now, key, n, tokens, &d));
            o_u64(c, d);
        } else {
            int64_t at = 0;
            o_status(c, weir_keyed_next(h->keyed, now, key, n, &at));
            o_i64(c, at);
        }
    } else if (OP("keyed_reconfigure")) {
        o_status(c, weir_keyed_reconfigure(h->keyed, &h->gcra_limit));
    } else if (OP("keyed_reconfigure_rate")) {
        o_status(c, weir_keyed_reconfigure_rate(h->keyed, &h->rate_limit));
    } else if (OP("keyed_read")) {
        weir_keyed_reading r;
        memset(&r, 0, sizeof r);
        o_status(c, weir_keyed_read(h->keyed, &r));
        o_u64(c, r.buckets);
        o_u64(c, r.slots);
        o_u64(c, r.occupied);
        o_u64(c, r.overflows);
        o_u64(c, r.kind);
        o_u64(c, r.overflow_policy);
    } else if (OP("keyed_buckets_for")) {
        uint64_t keys = a_u64(c), b = 0;
        double chance = a_f64(c);
        o_status(c, weir_keyed_buckets_for(keys, chance, &b));
        o_u64(c, b);
    } else if (OP("keyed_overflow_chance")) {
        double keys = a_f64(c);
        o_f64(c, weir_keyed_overflow_chance(keys, a_f64(c)));
    }
    /* charge */
    else if (OP("charge_all")) {
        static unsigned char keys[MAX_CHARGE][256];
        weir_charge_item items[MAX_CHARGE];
        weir_charge_result r;
        int64_t now = a_i64(c);
        size_t n = (size_t)a_u64(c);
        if (n > MAX_CHARGE) fail(c, "too many items");
        memset(items, 0, sizeof items);
        memset(&r, 0, sizeof r);
        for (size_t i = 0; i < n; i++) {
            weir_charge_item *it = &items[i];
            it->kind = (uint32_t)a_u64(c);
            it->reserved = (uint32_t)a_u64(c);
            it->cost = a_f64(c);
            it->key_len = a_key(c, keys[i], sizeof keys[i]);
            it->key = it->key_len ? keys[i] : NULL;
            switch (it->kind) {
            case WEIR_CHARGE_GCRA:
                it->target = &h->gcra;
                it->limit = &h->gcra_limit;
                break;
            case WEIR_CHARGE_BUCKET: it->target = h->bucket; break;
            case WEIR_CHARGE_BLOOM: it->target = h->bloom; break;
            default:
                it->target = &h->rate;
                it->limit = &h->rate_limit;
                break;
            }
        }
        o_status(c, weir_charge_all(items, n, now, &r));
        o_bool(c, r.admitted);
        o_i64(c, r.wait);
        o_u64(c, r.index);
        o_u64(c, r.kept);
        o_u64(c, h->rate.state);
        o_u64(c, h->gcra.state);
    } else {
        return false;
    }
    return true;
}

static void fresh(void *state) {
    held *h = (held *)state;
    memset(h, 0, sizeof *h);
    h->backoff = weir_backoff_preset();
}

static void done(void *state) { drop_all((held *)state); }

static bool run_c(call *c, void *state) { return run(c, (held *)state); }

int main(void) {
    static held h;
    trace_face face = {"c", run_c, fresh, done, &h};
    return trace_replay_all(&face, ".") > 0 ? 0 : 1;
}
