// The conformance traces (traces/README.md) replayed through weir.hpp: the
// reader is the C replay's (tests/c/trace_reader.h), the calls are the C++
// classes'. Every answer is compared exactly; a failure names the trace
// file and line. The types and files it leaves out are in traces/skips.txt.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "weir.hpp"

#include "../c/trace_reader.h"

namespace {

using std::chrono::nanoseconds;

struct Held {
    weir::Rate rate;
    std::optional<weir::RateLimit> rate_limit;
    weir::Gcra gcra;
    std::optional<weir::GcraLimit> gcra_limit;
    std::optional<weir::Bucket> bucket;
    std::optional<weir::Sliding> sliding;
    std::optional<weir::Period> period;
    std::optional<weir::Gate> gate;
    std::optional<weir::Lease> lease;
    std::optional<weir::Budget> budget;
    std::optional<weir::Window> window;
    std::optional<weir::Concurrency> concurrency;
    weir::Backoff backoff;
    std::optional<weir::Shedder> shedder;
    std::optional<weir::Pool> pool;
    std::optional<weir::Limiter> limiter;
    std::optional<weir::Breaker> breaker;
    std::optional<weir::Bloom> bloom;
    std::optional<weir::Keyed> keyed;
    std::size_t tickets = 0;
    weir_concurrency_ticket concurrency_tickets[MAX_TICKETS] = {};
    weir::ShedderTicket shedder_tickets[MAX_TICKETS];
    weir::BreakerTicket breaker_tickets[MAX_TICKETS];
};

void backoff_fields(call* c, const weir::Backoff& b) {
    o_i64(c, b.base.count());
    o_f64(c, b.factor);
    o_i64(c, b.cap.count());
    o_i64(c, b.attempts);
    o_i64(c, b.jitter);
    o_f64(c, b.spread);
}

void list(call* c, std::size_t n, const std::uintptr_t* items, std::size_t cap) {
    o_u64(c, n);
    for (std::size_t i = 0; i < n && i < cap; i++) o_u64(c, items[i]);
}

void o_code(call* c, std::error_code e) { o_i64(c, e.value()); }

// Makes a handle from a result, as a constructor line does: the status,
// and the handle held only on success.
template <class T>
void make(call* c, std::optional<T>& slot, weir::result<T> r) {
    o_code(c, r.error());
    slot.reset();
    if (r) slot.emplace(std::move(*r));
}

// A limiter constructor's line: the status, and the held limiter replaced
// only on success (a failed constructor leaves the value untouched).
void limiter_made(call* c, Held& h, weir::result<weir::Limiter> r) {
    o_code(c, r.error());
    if (r) h.limiter.emplace(*r);
}

// A limiter reading: the status, then the value (0 when not written).
void reading(call* c, weir::result<weir::instant> r) {
    o_code(c, r.error());
    o_i64(c, r ? r->ns() : 0);
}

bool run(call* c, Held& h) {
    const std::string op = c->op;
    // rate word
    if (op == "rate_limit_new") {
        const double l = a_f64(c);
        const std::int64_t b = a_i64(c);
        auto r = weir::RateLimit::make(l, b);
        o_code(c, r.error());
        if (r) h.rate_limit = *r;
        const weir_rate_limit z{};
        const weir_rate_limit& x = h.rate_limit ? *h.rate_limit->get() : z;
        o_u64(c, x.interval_ns);
        o_u64(c, x.interval_frac);
        o_u64(c, x.burst);
    } else if (op == "rate_set") {
        h.rate.get()->state = a_u64(c);
    } else if (op == "rate_allow") {
        o_bool(c, h.rate.allow(h.rate_limit.value(), a_i64(c)));
        o_u64(c, h.rate.get()->state);
    } else if (op == "rate_next") {
        o_i64(c, h.rate.next(h.rate_limit.value(), a_i64(c)).count());
    }
    // GCRA word
    else if (op == "gcra_limit_new") {
        const double l = a_f64(c);
        const std::int64_t b = a_i64(c);
        auto r = weir::GcraLimit::make(l, b);
        o_code(c, r.error());
        if (r) h.gcra_limit = *r;
        const weir_gcra_limit z{};
        const weir_gcra_limit& x = h.gcra_limit ? *h.gcra_limit->get() : z;
        o_u64(c, x.per_token);
        o_i64(c, x.tolerance);
        o_u64(c, x.shift);
        o_u64(c, x.reserved);
    } else if (op == "gcra_set") {
        h.gcra.get()->state = a_u64(c);
    } else if (op == "gcra_allow") {
        o_bool(c, h.gcra.allow(h.gcra_limit.value(), a_i64(c)));
        o_u64(c, h.gcra.get()->state);
    } else if (op == "gcra_allow_n") {
        const std::int64_t now = a_i64(c);
        o_bool(c, h.gcra.allow_n(h.gcra_limit.value(), now, a_i64(c)));
        o_u64(c, h.gcra.get()->state);
    } else if (op == "gcra_next") {
        o_i64(c, h.gcra.next(h.gcra_limit.value(), a_i64(c)).count());
    } else if (op == "gcra_room") {
        o_i64(c, h.gcra.room(h.gcra_limit.value(), a_i64(c)));
    }
    // backoff
    else if (op == "backoff_preset") {
        h.backoff = weir::Backoff{};
        backoff_fields(c, h.backoff);
    } else if (op == "backoff_full_jitter") {
        h.backoff = weir::Backoff::full_jitter();
        backoff_fields(c, h.backoff);
    } else if (op == "backoff_set") {
        h.backoff.base = nanoseconds(a_i64(c));
        h.backoff.factor = a_f64(c);
        h.backoff.cap = nanoseconds(a_i64(c));
        h.backoff.attempts = static_cast<std::int32_t>(a_i64(c));
        h.backoff.jitter = static_cast<std::int32_t>(a_i64(c));
        h.backoff.spread = a_f64(c);
    } else if (op == "backoff_check") {
        o_code(c, h.backoff.check());
    } else if (op == "backoff_more") {
        o_bool(c, h.backoff.more(static_cast<std::int32_t>(a_i64(c))));
    } else if (op == "backoff_delay") {
        const auto retry = static_cast<std::int32_t>(a_i64(c));
        const double draw = a_f64(c);
        o_i64(c, h.backoff.delay(retry, draw, nanoseconds(a_i64(c))).count());
    } else if (op == "backoff_ceiling") {
        o_i64(c, h.backoff.ceiling(static_cast<std::int32_t>(a_i64(c))).count());
    } else if (op == "backoff_schedule") {
        static double draws[MAX_ARGS];
        static std::int64_t out[MAX_ARGS];
        const auto cap = static_cast<std::size_t>(a_u64(c));
        const auto n = static_cast<std::size_t>(a_u64(c));
        if (cap > MAX_ARGS || n > MAX_ARGS) fail(c, "schedule too long");
        for (std::size_t i = 0; i < n; i++) draws[i] = a_f64(c);
        const std::size_t made = h.backoff.schedule(n ? draws : nullptr, n, cap ? out : nullptr, cap);
        o_u64(c, made);
        for (std::size_t i = 0; i < made && i < cap; i++) o_i64(c, out[i]);
    }
    // bucket
    else if (op == "bucket_new") {
        const double rate = a_f64(c), burst = a_f64(c);
        make(c, h.bucket, weir::Bucket::make(rate, burst, a_i64(c)));
    } else if (op == "bucket_take") {
        const std::int64_t now = a_i64(c);
        o_bool(c, h.bucket->take(now, a_f64(c)));
    } else if (op == "bucket_refund") {
        const std::int64_t now = a_i64(c), at = a_i64(c);
        o_code(c, h.bucket->refund(now, at, a_f64(c)));
    } else if (op == "bucket_next") {
        const std::int64_t now = a_i64(c);
        o_i64(c, h.bucket->next(now, a_f64(c)).count());
    } else if (op == "bucket_tokens") {
        o_f64(c, h.bucket->tokens(a_i64(c)));
    } else if (op == "bucket_reconfigure") {
        const double rate = a_f64(c), burst = a_f64(c);
        o_code(c, h.bucket->reconfigure(rate, burst, a_i64(c)));
    }
    // sliding
    else if (op == "sliding_new") {
        const std::int64_t quota = a_i64(c);
        make(c, h.sliding, weir::Sliding::make(quota, nanoseconds(a_i64(c))));
    } else if (op == "sliding_take") {
        o_bool(c, h.sliding->take(a_i64(c)));
    } else if (op == "sliding_left") {
        o_i64(c, h.sliding->left(a_i64(c)));
    } else if (op == "sliding_next") {
        o_i64(c, h.sliding->next(a_i64(c)).count());
    } else if (op == "sliding_reconfigure") {
        const std::int64_t quota = a_i64(c);
        o_code(c, h.sliding->reconfigure(quota, nanoseconds(a_i64(c))));
    }
    // period
    else if (op == "period_new") {
        const std::int64_t quota = a_i64(c), len = a_i64(c);
        make(c, h.period, weir::Period::make(quota, nanoseconds(len), a_i64(c) != 0));
    } else if (op == "period_take") {
        o_i64(c, static_cast<std::int64_t>(h.period->take(a_i64(c))));
    } else if (op == "period_left") {
        o_i64(c, h.period->left(a_i64(c)));
    } else if (op == "period_next") {
        o_i64(c, h.period->next(a_i64(c)).count());
    } else if (op == "period_reconfigure") {
        const std::int64_t quota = a_i64(c), len = a_i64(c);
        o_code(c, h.period->reconfigure(quota, nanoseconds(len), a_i64(c) != 0));
    }
    // lease
    else if (op == "lease_new") {
        weir_lease_policy p{};
        p.interval_ns = a_i64(c);
        p.ttl_ns = a_i64(c);
        p.burst = a_i64(c);
        p.share = a_f64(c);
        make(c, h.lease, weir::Lease::make(p, a_i64(c)));
    } else if (op == "lease_take") {
        const std::int64_t now = a_i64(c);
        auto r = h.lease->take(now, a_i64(c));
        const weir_lease_answer z{};
        const weir_lease_answer& x = r ? *r : z;
        o_code(c, r.error());
        o_i64(c, x.verdict);
        o_i64(c, x.ask);
        o_i64(c, x.retry_after_ns);
    } else if (op == "lease_reconfigure") {
        weir_lease_policy p{};
        p.interval_ns = a_i64(c);
        p.ttl_ns = a_i64(c);
        p.burst = a_i64(c);
        p.share = a_f64(c);
        o_code(c, h.lease->reconfigure(p));
    } else if (op == "lease_grant") {
        const std::int64_t now = a_i64(c), granted = a_i64(c), until = a_i64(c);
        o_code(c, h.lease->grant(now, granted, until, a_i64(c)));
    } else if (op == "lease_release") {
        o_i64(c, h.lease->release(a_i64(c)));
    } else if (op == "lease_unspent") {
        o_i64(c, h.lease->unspent(a_i64(c)));
    } else if (op == "lease_expires") {
        o_i64(c, h.lease->expires(a_i64(c)));
    } else if (op == "lease_cap") {
        o_i64(c, h.lease->cap());
    } else if (op == "lease_read_stats") {
        auto r = h.lease->stats(a_i64(c));
        const weir_lease_stats z{};
        const weir_lease_stats& x = r ? *r : z;
        o_code(c, r.error());
        for (std::uint64_t v : {x.asks, x.granted, x.spent, x.expired, x.released, x.held, x.rate_milli}) {
            o_u64(c, v);
        }
        o_i64(c, x.rtt_ns);
    }
    // gate
    else if (op == "gate_new") {
        make(c, h.gate, weir::Gate::make(a_i64(c)));
    } else if (op == "gate_enter") {
        o_bool(c, h.gate->enter());
    } else if (op == "gate_leave") {
        h.gate->leave();
    } else if (op == "gate_held") {
        o_i64(c, h.gate->held());
    } else if (op == "gate_reconfigure") {
        o_code(c, h.gate->reconfigure(a_i64(c)));
    }
    // budget
    else if (op == "budget_new") {
        weir_budget_policy p{};
        p.form = static_cast<std::int32_t>(a_i64(c));
        p.max_tokens = static_cast<std::int32_t>(a_i64(c));
        p.token_ratio = a_f64(c);
        p.ttl_ns = a_i64(c);
        p.min_per_s = static_cast<std::int32_t>(a_i64(c));
        p.reserved = static_cast<std::int32_t>(a_i64(c));
        p.percent = a_f64(c);
        make(c, h.budget, weir::Budget::make(p, a_i64(c)));
    } else if (op == "budget_reconfigure") {
        weir_budget_policy p{};
        p.form = static_cast<std::int32_t>(a_i64(c));
        p.max_tokens = static_cast<std::int32_t>(a_i64(c));
        p.token_ratio = a_f64(c);
        p.ttl_ns = a_i64(c);
        p.min_per_s = static_cast<std::int32_t>(a_i64(c));
        p.reserved = static_cast<std::int32_t>(a_i64(c));
        p.percent = a_f64(c);
        const std::int64_t now = a_i64(c);
        o_code(c, h.budget->reconfigure(p, now));
    } else if (op == "budget_deposit") {
        h.budget->deposit(a_i64(c));
    } else if (op == "budget_withdraw") {
        o_bool(c, h.budget->withdraw(a_i64(c)));
    } else if (op == "budget_left") {
        o_i64(c, h.budget->left(a_i64(c)));
    } else if (op == "budget_tokens") {
        o_i64(c, h.budget->tokens(a_i64(c)));
    }
    // window
    else if (op == "window_new") {
        const auto size = static_cast<std::int32_t>(a_i64(c));
        const std::int64_t width = a_i64(c);
        make(c, h.window, weir::Window::make(size, nanoseconds(width), a_i64(c)));
    } else if (op == "window_add") {
        const std::int64_t now = a_i64(c);
        o_code(c, h.window->add(now, a_i64(c)));
    } else if (op == "window_read_total") {
        const std::int64_t now = a_i64(c);
        auto r = h.window->total(now, a_i64(c) != 0);
        o_code(c, r.error());
        o_i64(c, r ? r->sum : 0);
        o_i64(c, r ? r->count : 0);
    } else if (op == "window_read_buckets") {
        weir_window_total t[MAX_LIST] = {};
        const std::int64_t now = a_i64(c);
        const bool current = a_i64(c) != 0;
        const auto cap = static_cast<std::size_t>(a_u64(c));
        if (cap > MAX_LIST) fail(c, "cap too large");
        const std::size_t n = h.window->buckets(now, current, t, cap);
        o_u64(c, n);
        for (std::size_t i = 0; i < n && i < cap; i++) {
            o_i64(c, t[i].sum);
            o_i64(c, t[i].count);
        }
    } else if (op == "window_size") {
        o_i64(c, h.window->size());
    } else if (op == "window_width") {
        o_i64(c, h.window->width().count());
    } else if (op == "window_reconfigure") {
        const auto size = static_cast<std::int32_t>(a_i64(c));
        const std::int64_t width = a_i64(c);
        o_code(c, h.window->reconfigure(size, nanoseconds(width), a_i64(c)));
    }
    // concurrency
    else if (op == "concurrency_new") {
        weir_concurrency_policy p{};
        p.initial_limit = static_cast<std::int32_t>(a_i64(c));
        p.min_limit = static_cast<std::int32_t>(a_i64(c));
        p.max_limit = static_cast<std::int32_t>(a_i64(c));
        p.queue_size = static_cast<std::int32_t>(a_i64(c));
        p.smoothing = a_f64(c);
        p.tolerance = a_f64(c);
        p.long_window = static_cast<std::int32_t>(a_i64(c));
        p.warmup = static_cast<std::int32_t>(a_i64(c));
        make(c, h.concurrency, weir::Concurrency::make(p));
    } else if (op == "concurrency_reconfigure") {
        weir_concurrency_policy p{};
        p.initial_limit = static_cast<std::int32_t>(a_i64(c));
        p.min_limit = static_cast<std::int32_t>(a_i64(c));
        p.max_limit = static_cast<std::int32_t>(a_i64(c));
        p.queue_size = static_cast<std::int32_t>(a_i64(c));
        p.smoothing = a_f64(c);
        p.tolerance = a_f64(c);
        p.long_window = static_cast<std::int32_t>(a_i64(c));
        p.warmup = static_cast<std::int32_t>(a_i64(c));
        o_code(c, h.concurrency->reconfigure(p));
    } else if (op == "concurrency_new_partitioned") {
        weir_concurrency_policy p{};
        p.initial_limit = static_cast<std::int32_t>(a_i64(c));
        p.min_limit = static_cast<std::int32_t>(a_i64(c));
        p.max_limit = static_cast<std::int32_t>(a_i64(c));
        p.queue_size = static_cast<std::int32_t>(a_i64(c));
        p.smoothing = a_f64(c);
        p.tolerance = a_f64(c);
        p.long_window = static_cast<std::int32_t>(a_i64(c));
        p.warmup = static_cast<std::int32_t>(a_i64(c));
        const auto count = static_cast<std::int32_t>(a_i64(c));
        weir_concurrency_partition parts[2] = {};
        for (auto& part : parts) {
            part.share = a_f64(c);
            part.borrow = a_i64(c);
        }
        make(c, h.concurrency, weir::Concurrency::make_partitioned(p, parts, count));
    } else if (op == "concurrency_enter_partition") {
        // The traces enter only partitions that exist: a decision is WEIR_OK.
        if (h.tickets == MAX_TICKETS) fail(c, "too many tickets");
        const auto part = static_cast<std::int32_t>(a_i64(c));
        const bool ok = h.concurrency->enter(part, a_i64(c), h.concurrency_tickets[h.tickets++]);
        o_i64(c, WEIR_OK);
        o_bool(c, ok);
    } else if (op == "concurrency_leave_partition") {
        const auto part = static_cast<std::int32_t>(a_i64(c));
        const std::uint64_t k = a_u64(c);
        if (k >= h.tickets) fail(c, "no such ticket slot");
        o_code(c, h.concurrency->leave(part, h.concurrency_tickets[k], a_i64(c)));
    } else if (op == "concurrency_partition_flying") {
        o_i64(c, h.concurrency->partition_flying(static_cast<std::int32_t>(a_i64(c))));
    } else if (op == "concurrency_partition_room") {
        o_i64(c, h.concurrency->partition_room(static_cast<std::int32_t>(a_i64(c))));
    } else if (op == "concurrency_enter") {
        if (h.tickets == MAX_TICKETS) fail(c, "too many tickets");
        o_bool(c, h.concurrency->enter(a_i64(c), h.concurrency_tickets[h.tickets++]));
    } else if (op == "concurrency_leave") {
        const std::uint64_t k = a_u64(c);
        if (k >= h.tickets) fail(c, "no such ticket slot");
        const std::int64_t now = a_i64(c);
        o_code(c, h.concurrency->leave(h.concurrency_tickets[k], now, a_i64(c) != 0));
    } else if (op == "concurrency_limit") {
        o_i64(c, h.concurrency->limit());
    } else if (op == "concurrency_flying") {
        o_i64(c, h.concurrency->flying());
    } else if (op == "concurrency_long_rtt") {
        o_f64(c, h.concurrency->long_rtt());
    }
    // shedder
    else if (op == "shedder_new") {
        weir::ShedderPolicy p;
        p.size = static_cast<std::int32_t>(a_i64(c));
        p.cpu = static_cast<std::int32_t>(a_i64(c));
        p.window = nanoseconds(a_i64(c));
        p.latency = nanoseconds(a_i64(c));
        p.beta = a_f64(c);
        p.cool = nanoseconds(a_i64(c));
        p.floor = a_f64(c);
        make(c, h.shedder, weir::Shedder::make(p, a_i64(c)));
    } else if (op == "shedder_reconfigure") {
        weir::ShedderPolicy p;
        p.size = static_cast<std::int32_t>(a_i64(c));
        p.cpu = static_cast<std::int32_t>(a_i64(c));
        p.window = nanoseconds(a_i64(c));
        p.latency = nanoseconds(a_i64(c));
        p.beta = a_f64(c);
        p.cool = nanoseconds(a_i64(c));
        p.floor = a_f64(c);
        o_code(c, h.shedder->reconfigure(p));
    } else if (op == "shedder_allow") {
        if (h.tickets == MAX_TICKETS) fail(c, "too many tickets");
        const std::int64_t now = a_i64(c);
        o_bool(c, h.shedder->allow(now, static_cast<std::int32_t>(a_i64(c)), h.shedder_tickets[h.tickets++]));
    } else if (op == "shedder_allow_class") {
        // weir::criticality holds the four classes (shedder-invalid-classes.trace
        // is skipped): a decision is always WEIR_OK.
        if (h.tickets == MAX_TICKETS) fail(c, "too many tickets");
        const std::int64_t now = a_i64(c);
        const auto cpu = static_cast<std::int32_t>(a_i64(c));
        const auto cls = static_cast<weir::criticality>(a_i64(c));
        const bool ok = h.shedder->allow(now, cpu, cls, h.shedder_tickets[h.tickets++]);
        o_i64(c, WEIR_OK);
        o_bool(c, ok);
    } else if (op == "shedder_pass" || op == "shedder_fail") {
        const std::uint64_t k = a_u64(c);
        if (k >= h.tickets) fail(c, "no such ticket slot");
        o_code(c, op == "shedder_pass" ? h.shedder->pass(h.shedder_tickets[k], a_i64(c))
                                       : h.shedder->fail(h.shedder_tickets[k]));
    } else if (op == "shedder_flying") {
        o_i64(c, h.shedder->flying());
    } else if (op == "shedder_read_stats") {
        auto r = h.shedder->stats(a_i64(c));
        const weir_shedder_stats z{};
        const weir_shedder_stats& x = r ? *r : z;
        o_code(c, r.error());
        o_i64(c, x.flying);
        o_f64(c, x.average);
        o_f64(c, x.capacity);
        o_f64(c, x.limit);
        o_i64(c, x.cpu);
        o_i64(c, x.hot);
    }
    // pool
    else if (op == "pool_new") {
        weir::PoolPolicy p;
        p.size = a_i64(c);
        p.idle = a_i64(c);
        p.keep = nanoseconds(a_i64(c));
        p.life = nanoseconds(a_i64(c));
        p.life_jitter = a_f64(c);
        p.min_idle = a_i64(c);
        p.max_making = a_i64(c);
        make(c, h.pool, weir::Pool::make(p));
    } else if (op == "pool_reconfigure") {
        weir::PoolPolicy p;
        p.size = a_i64(c);
        p.idle = a_i64(c);
        p.keep = nanoseconds(a_i64(c));
        p.life = nanoseconds(a_i64(c));
        p.life_jitter = a_f64(c);
        p.min_idle = a_i64(c);
        p.max_making = a_i64(c);
        o_code(c, h.pool->reconfigure(p));
    } else if (op == "pool_take") {
        const weir::PoolTaken t = h.pool->take(a_i64(c));
        o_i64(c, static_cast<std::int64_t>(t.kind));
        o_u64(c, t.item);
    } else if (op == "pool_made") {
        const auto item = static_cast<std::uintptr_t>(a_u64(c));
        o_code(c, h.pool->made(item, a_i64(c)));
    } else if (op == "pool_made_jittered") {
        const auto item = static_cast<std::uintptr_t>(a_u64(c));
        const std::int64_t now = a_i64(c);
        o_code(c, h.pool->made_jittered(item, now, a_u64(c)));
    } else if (op == "pool_unmade") {
        o_code(c, h.pool->unmade());
    } else if (op == "pool_give") {
        const auto item = static_cast<std::uintptr_t>(a_u64(c));
        auto r = h.pool->give(item, a_i64(c));
        o_code(c, r.error());
        o_bool(c, r ? *r : false);
    } else if (op == "pool_drop") {
        o_code(c, h.pool->drop(static_cast<std::uintptr_t>(a_u64(c))));
    } else if (op == "pool_evict") {
        std::uintptr_t items[MAX_LIST] = {};
        const std::int64_t now = a_i64(c);
        const auto cap = static_cast<std::size_t>(a_u64(c));
        if (cap > MAX_LIST) fail(c, "cap too large");
        list(c, h.pool->evict(now, items, cap), items, cap);
    } else if (op == "pool_close") {
        std::uintptr_t items[MAX_LIST] = {};
        const auto cap = static_cast<std::size_t>(a_u64(c));
        if (cap > MAX_LIST) fail(c, "cap too large");
        list(c, h.pool->close(items, cap), items, cap);
    } else if (op == "pool_mark_old") {
        o_i64(c, h.pool->mark_old());
    } else if (op == "pool_make_ahead") {
        o_i64(c, h.pool->make_ahead());
    } else if (op == "pool_live") {
        o_i64(c, h.pool->live());
    } else if (op == "pool_idle") {
        o_i64(c, h.pool->idle());
    } else if (op == "pool_busy") {
        o_i64(c, h.pool->busy());
    } else if (op == "pool_next_expiry") {
        o_i64(c, h.pool->next_expiry(a_i64(c)).count());
    } else if (op == "pool_read_stats") {
        auto r = h.pool->stats();
        const weir_pool_stats z{};
        const weir_pool_stats& x = r ? *r : z;
        o_code(c, r.error());
        for (std::uint64_t v : {x.made, x.reused, x.stale, x.evicted_idle, x.evicted_age, x.dropped, x.refused,
                                x.waits, x.unmade, x.closed, x.retired}) {
            o_u64(c, v);
        }
    }
    // limiter
    else if (op == "limiter_bucket") {
        const std::uint64_t capacity = a_u64(c), amount = a_u64(c);
        const std::int64_t interval = a_i64(c), last = a_i64(c);
        const std::uint64_t initial = a_u64(c);
        limiter_made(c, h, weir::Limiter::bucket(capacity, amount, nanoseconds(interval), last, initial, a_i64(c)));
    } else if (op == "limiter_fixed_window") {
        const std::uint64_t capacity = a_u64(c);
        const std::int64_t window = a_i64(c), start = a_i64(c);
        const std::uint64_t initial = a_u64(c);
        limiter_made(c, h, weir::Limiter::fixed_window(capacity, nanoseconds(window), start, initial, a_i64(c)));
    } else if (op == "limiter_cooldown") {
        const std::uint64_t capacity = a_u64(c);
        const std::int64_t cooldown = a_i64(c), end = a_i64(c);
        const std::uint64_t initial = a_u64(c);
        limiter_made(c, h, weir::Limiter::cooldown(capacity, nanoseconds(cooldown), end, initial, a_i64(c)));
    } else if (op == "limiter_try_consume") {
        const std::int64_t now = a_i64(c);
        o_bool(c, h.limiter.value().try_consume(now, a_u64(c)));
    } else if (op == "limiter_consume") {
        const std::int64_t now = a_i64(c);
        o_code(c, h.limiter.value().consume(now, a_u64(c)));
    } else if (op == "limiter_refund") {
        const std::int64_t now = a_i64(c), taken_at = a_i64(c);
        o_code(c, h.limiter.value().refund(now, taken_at, a_u64(c)));
    } else if (op == "limiter_available") {
        o_u64(c, h.limiter.value().available(a_i64(c)));
    } else if (op == "limiter_capacity") {
        o_u64(c, h.limiter.value().capacity());
    } else if (op == "limiter_last_refill") {
        reading(c, h.limiter.value().last_refill(a_i64(c)));
    } else if (op == "limiter_window_start") {
        reading(c, h.limiter.value().window_start(a_i64(c)));
    } else if (op == "limiter_cooldown_end") {
        reading(c, h.limiter.value().cooldown_end());
    }
    // breaker
    else if (op == "breaker_new") {
        weir::BreakerPolicy p;
        p.k = a_f64(c);
        p.floor = a_f64(c);
        p.protection = a_f64(c);
        p.probe = nanoseconds(a_i64(c));
        p.size = static_cast<std::int32_t>(a_i64(c));
        const std::int64_t skip = a_i64(c);
        if (skip != 0 && skip != 1) fail(c, "skip_refusals is a bool in weir::BreakerPolicy");
        p.skip_refusals = skip == 1;
        p.window = nanoseconds(a_i64(c));
        p.max_rejection_probability = a_f64(c);
        p.rps_threshold = a_f64(c);
        p.aggression = a_f64(c);
        make(c, h.breaker, weir::Breaker::make(p, a_i64(c)));
    } else if (op == "breaker_reconfigure") {
        weir::BreakerPolicy p;
        p.k = a_f64(c);
        p.floor = a_f64(c);
        p.protection = a_f64(c);
        p.probe = nanoseconds(a_i64(c));
        p.size = static_cast<std::int32_t>(a_i64(c));
        const std::int64_t skip = a_i64(c);
        if (skip != 0 && skip != 1) fail(c, "skip_refusals is a bool in weir::BreakerPolicy");
        p.skip_refusals = skip == 1;
        p.window = nanoseconds(a_i64(c));
        p.max_rejection_probability = a_f64(c);
        p.rps_threshold = a_f64(c);
        p.aggression = a_f64(c);
        o_code(c, h.breaker.value().reconfigure(p));
    } else if (op == "breaker_allow") {
        if (h.tickets == MAX_TICKETS) fail(c, "too many tickets");
        const std::int64_t now = a_i64(c);
        o_bool(c, h.breaker.value().allow(now, a_f64(c), h.breaker_tickets[h.tickets++]));
    } else if (op == "breaker_pass" || op == "breaker_fail") {
        const std::uint64_t k = a_u64(c);
        if (k >= h.tickets) fail(c, "no such ticket slot");
        const std::int64_t now = a_i64(c);
        weir::BreakerTicket& t = h.breaker_tickets[k];
        o_code(c, op == "breaker_pass" ? h.breaker.value().pass(t, now) : h.breaker.value().fail(t, now));
    } else if (op == "breaker_ratio") {
        o_f64(c, h.breaker.value().ratio(a_i64(c)));
    } else if (op == "breaker_read_tally") {
        auto r = h.breaker.value().tally(a_i64(c));
        o_code(c, r.error());
        const weir_breaker_tally x = r ? *r : weir_breaker_tally{};
        for (std::int64_t v : {x.total, x.success, x.failure, x.drop}) o_i64(c, v);
    }
    // all-or-nothing charging over the held words, bucket and bloom
    else if (op == "charge_all") {
        const std::int64_t now = a_i64(c);
        const std::uint64_t n = a_u64(c);
        if (n > MAX_CHARGE) fail(c, "too many items");
        std::vector<weir::ChargeItem> items;
        static unsigned char keys[MAX_CHARGE][LINE_MAX_LEN];
        for (std::uint64_t i = 0; i < n; i++) {
            const std::uint64_t kind = a_u64(c), reserved = a_u64(c);
            const double cost = a_f64(c);
            const std::size_t len = a_key(c, keys[i], sizeof keys[i]);
            const auto whole = static_cast<std::int64_t>(cost);
            if (reserved != 0 || (kind != WEIR_CHARGE_BUCKET && static_cast<double>(whole) != cost)) {
                fail(c, "a weir::ChargeItem has no reserved field and counts whole tokens but for a bucket");
            }
            const std::string_view key(reinterpret_cast<const char*>(keys[i]), len);
            switch (kind) {
                case WEIR_CHARGE_GCRA: items.push_back(weir::ChargeItem::gcra(h.gcra, h.gcra_limit.value(), whole)); break;
                case WEIR_CHARGE_RATE: items.push_back(weir::ChargeItem::rate(h.rate, h.rate_limit.value(), whole)); break;
                case WEIR_CHARGE_BUCKET: items.push_back(weir::ChargeItem::bucket(h.bucket.value(), cost)); break;
                case WEIR_CHARGE_BLOOM: items.push_back(weir::ChargeItem::bloom(h.bloom.value(), key, whole)); break;
                default: fail(c, "no weir::ChargeItem of this kind");
            }
        }
        auto r = weir::charge_all(items.data(), items.size(), now);
        // weir::charge_all answers an error as its status alone: the
        // errors' file (charge-errors.trace) is a skip.
        if (!r) fail(c, "weir::charge_all answered an error");
        o_code(c, r.error());
        o_bool(c, r->admitted);
        o_i64(c, r->wait.count());
        o_u64(c, r->index);
        o_u64(c, r->kept);
        o_u64(c, h.rate.get()->state);
        o_u64(c, h.gcra.get()->state);
    }
    // bloom
    else if (op == "bloom_new" || op == "bloom_new_gcra") {
        const auto size_log2 = static_cast<std::uint32_t>(a_u64(c));
        const auto hashes = static_cast<std::uint32_t>(a_u64(c));
        const std::uint64_t seed0 = a_u64(c), seed1 = a_u64(c);
        h.bloom.reset();
        if (op == "bloom_new") {
            make(c, h.bloom, weir::Bloom::make(size_log2, hashes, h.rate_limit.value(), seed0, seed1));
        } else {
            make(c, h.bloom, weir::Bloom::make_gcra(size_log2, hashes, h.gcra_limit.value(), seed0, seed1));
        }
    } else if (op == "bloom_reconfigure") {
        o_code(c, h.bloom.value().reconfigure(h.rate_limit.value()));
    } else if (op == "bloom_reconfigure_gcra") {
        o_code(c, h.bloom.value().reconfigure(h.gcra_limit.value()));
    } else if (op == "bloom_allow" || op == "bloom_next") {
        const std::int64_t now = a_i64(c);
        unsigned char key[LINE_MAX_LEN];
        const std::size_t n = a_key(c, key, sizeof key);
        const std::string_view k(reinterpret_cast<const char*>(key), n);
        if (op == "bloom_allow") {
            o_bool(c, h.bloom.value().allow(now, k));
        } else {
            o_i64(c, h.bloom.value().next(now, k).count());
        }
    }
    // keyed table
    else if (op == "keyed_new" || op == "keyed_new_rate") {
        const std::uint64_t buckets = a_u64(c);
        const auto policy = static_cast<weir::Keyed::overflow>(a_u64(c));
        const std::uint64_t seed0 = a_u64(c), seed1 = a_u64(c);
        h.keyed.reset();
        if (op == "keyed_new") {
            make(c, h.keyed, weir::Keyed::make(buckets, h.gcra_limit.value(), policy, seed0, seed1));
        } else {
            make(c, h.keyed, weir::Keyed::make_rate(buckets, h.rate_limit.value(), policy, seed0, seed1));
        }
    } else if (op == "keyed_allow" || op == "keyed_decide" || op == "keyed_next") {
        const std::int64_t now = a_i64(c);
        unsigned char key[LINE_MAX_LEN];
        const std::size_t n = a_key(c, key, sizeof key);
        const std::string_view k(reinterpret_cast<const char*>(key), n);
        const weir::Keyed& table = h.keyed.value();
        if (op == "keyed_allow") {
            o_bool(c, table.allow(now, k));
        } else if (op == "keyed_decide") {
            const auto r = table.decide(now, k, a_i64(c));
            o_code(c, r.error());
            o_u64(c, r ? static_cast<std::uint64_t>(*r) : 0);
        } else {
            const auto r = table.next(now, k);
            o_code(c, r.error());
            o_i64(c, r ? r->count() : 0);
        }
    } else if (op == "keyed_reconfigure") {
        o_code(c, h.keyed.value().reconfigure(h.gcra_limit.value()));
    } else if (op == "keyed_reconfigure_rate") {
        o_code(c, h.keyed.value().reconfigure(h.rate_limit.value()));
    } else if (op == "keyed_read") {
        const auto r = h.keyed.value().read();
        o_code(c, r.error());
        const weir_keyed_reading x = r ? *r : weir_keyed_reading{};
        for (std::uint64_t v : {x.buckets, x.slots, x.occupied, x.overflows}) o_u64(c, v);
        o_u64(c, x.kind);
        o_u64(c, x.overflow_policy);
    } else if (op == "keyed_buckets_for") {
        const std::uint64_t keys = a_u64(c);
        const auto r = weir::Keyed::buckets_for(keys, a_f64(c));
        o_code(c, r.error());
        o_u64(c, r ? *r : 0);
    } else if (op == "keyed_overflow_chance") {
        const double keys = a_f64(c);
        o_f64(c, weir::Keyed::overflow_chance(keys, a_f64(c)));
    } else {
        return false;
    }
    return true;
}

// The repository's root, from this file's path (ctest runs the suite in
// the build directory).
std::string root() {
    std::string file = __FILE__;
    const std::string tail = "tests/cpp/traces_test.cpp";
    if (file.size() >= tail.size() && file.compare(file.size() - tail.size(), tail.size(), tail) == 0) {
        file.resize(file.size() - tail.size());
    }
    return file.empty() ? "." : file;
}

TEST(Traces, EveryTraceReplaysExactlyThroughWeirHpp) {
    static Held* held = nullptr;
    trace_face face{};
    face.face = "cpp";
    face.run = [](call* c, void*) { return run(c, *held); };
    face.fresh = [](void*) { held = new Held(); };
    face.done = [](void*) {
        delete held;
        held = nullptr;
    };
    EXPECT_GT(trace_replay_all(&face, root().c_str()), 0);
}

}  // namespace
