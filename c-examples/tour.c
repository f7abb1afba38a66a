/* The weir tour: what each type answers, shown on traffic you can read.
 *
 *   1. a breaker in front of a backend that fails every call for 30 s and
 *      then recovers, one line a second, and the same outage under Envoy
 *      admission_control's limits (a cap, a traffic floor, an exponent,
 *      refusals left out of the traffic);
 *   2. a shedder under load that rises and falls while the CPU climbs and
 *      cools, one line per half second;
 *   3. one step through every other type (a retry budget beside backoff).
 *
 * weir reads no clock and draws no random numbers: the tour drives time
 * itself (`now`, in nanoseconds) and takes its draws from a small generator
 * with a fixed seed, so it prints the same thing every run. */
#include <inttypes.h>
#include <stdio.h>

#include "weir.h"

#define MS INT64_C(1000000)
#define SECOND (1000 * MS)

/* splitmix64 with a fixed seed: the tour's only source of chance. */
static uint64_t seed = 42;

static uint64_t next_draw(void) {
    uint64_t z = (seed += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A draw from [0, 1). */
static double roll(void) { return (double)(next_draw() >> 11) / 9007199254740992.0; }

static int breaker_tour(void) {
    weir_breaker *breaker = NULL;
    if (weir_breaker_new(NULL, 0, &breaker) != WEIR_OK) return 1;
    printf("1. A breaker in front of a backend, 100 calls a second (weir_breaker)\n"
           "   The backend works for 5 s, fails every call for 30 s, then recovers.\n\n"
           "   second  backend  through  refused  ratio\n");
    for (int64_t second = 0; second < 50; second++) {
        bool down = second >= 5 && second < 35;
        int through = 0, refused = 0;
        for (int64_t call = 0; call < 100; call++) {
            int64_t now = second * SECOND + call * 10 * MS;
            /* The ticket holds the call until it is settled, exactly once. */
            weir_breaker_ticket ticket;
            if (!weir_breaker_allow(breaker, now, roll(), &ticket)) {
                refused++;
                continue;
            }
            through++;
            if (down) {
                weir_breaker_fail(breaker, &ticket, now);
            } else {
                weir_breaker_pass(breaker, &ticket, now);
            }
        }
        double ratio = weir_breaker_ratio(breaker, (second + 1) * SECOND);
        printf("   %6" PRId64 "  %-7s  %7d  %7d  %5.3f\n", second, down ? "down" : "up", through,
               refused, ratio);
    }
    weir_breaker_tally tally;
    weir_breaker_read_tally(breaker, 50 * SECOND, &tally);
    printf("\n   The breaker never opens outright: while the backend is down it lets\n"
           "   through a call or two a second (the probe, and the draws that land\n"
           "   above the ratio), so it sees the recovery and backs off within about\n"
           "   one window. Last 10 s: %" PRId64 " calls, %" PRId64 " passed, %" PRId64
           " failed, %" PRId64 " refused.\n\n",
           tally.total, tally.success, tally.failure, tally.drop);
    weir_breaker_free(breaker);
    return 0;
}

/* The outage of breaker_tour under `policy`, with draws of its own (so the
 * rest of the tour draws as before): the share refused in seconds 20-35,
 * the ratio at 30 s, and the first second from which nothing is refused. */
static int limits_run(const weir_breaker_policy *policy, double *refused_share, double *ratio_at_30,
                      int64_t *clear_from) {
    weir_breaker *breaker = NULL;
    if (weir_breaker_new(policy, 0, &breaker) != WEIR_OK) return 1;
    uint64_t state = seed;
    int refused = 0, offered = 0;
    *clear_from = 0;
    for (int64_t call = 0; call < 50 * 100; call++) {
        int64_t now = call * 10 * MS, second = call / 100;
        uint64_t z = (state += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        double draw = (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
        if (call == 30 * 100) *ratio_at_30 = weir_breaker_ratio(breaker, now);
        weir_breaker_ticket ticket;
        bool through = weir_breaker_allow(breaker, now, draw, &ticket);
        if (second >= 20 && second < 35) {
            offered++;
            refused += !through;
        }
        if (!through) {
            *clear_from = second + 1;
            continue;
        }
        if (second >= 5 && second < 35) {
            weir_breaker_fail(breaker, &ticket, now);
        } else {
            weir_breaker_pass(breaker, &ticket, now);
        }
    }
    *refused_share = (double)refused / offered;
    weir_breaker_free(breaker);
    return 0;
}

static int limits_tour(void) {
    printf("   The same outage under Envoy admission_control's limits (weir_breaker_policy fields,\n"
           "   off in the preset), each run on the same fresh draws:\n\n"
           "   policy                                refused 20-35 s  ratio at 30 s  clear from\n");
    struct {
        const char *name;
        double cap, rps, aggression;
        int32_t skip;
    } rows[] = {
        {"preset (Google's formula)", 1.0, 0.0, 1.0, 0},
        {"max_rejection_probability 0.8", 0.8, 0.0, 1.0, 0},
        {"skip_refusals 1 (Envoy, go-zero)", 1.0, 0.0, 1.0, 1},
        {"aggression 2", 1.0, 0.0, 2.0, 0},
        {"rps_threshold 150 (over 100/s)", 1.0, 150.0, 1.0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        weir_breaker_policy policy = weir_breaker_policy_preset();
        policy.max_rejection_probability = rows[i].cap;
        policy.rps_threshold = rows[i].rps;
        policy.aggression = rows[i].aggression;
        policy.skip_refusals = rows[i].skip;
        double share = 0, ratio = 0;
        int64_t clear = 0;
        if (limits_run(&policy, &share, &ratio, &clear) != 0) return 1;
        printf("   %-36s  %14.1f%%  %13.3f  %8" PRId64 " s\n", rows[i].name, 100 * share, ratio, clear);
    }
    printf("\n   The cap keeps a fifth of the calls reaching the backend; leaving the\n"
           "   breaker's own refusals out of its traffic lowers the ratio a little and\n"
           "   ends the refusals sooner after the recovery; an aggression of 2 refuses\n"
           "   sooner; a traffic floor above the offered rate refuses nothing.\n\n");
    return 0;
}

/* One half-second step of the shedder tour: calls offered a second and
 * the CPU reading, in thousandths. */
struct step {
    int rate;
    int32_t cpu;
    const char *note;
};

enum { OPEN_MAX = 1024 };

static int shedder_tour(void) {
    static const struct step steps[] = {
        {200, 300, "quiet"},
        {200, 300, ""},
        {50, 970, "a CPU spike with nothing queued"},
        {50, 970, ""},
        {1200, 500, "a long queue on a cool CPU"},
        {1200, 600, ""},
        {1400, 800, ""},
        {1400, 920, "hot and full"},
        {1400, 960, ""},
        {1400, 990, ""},
        {1000, 950, ""},
        {1400, 850, "the CPU falls: hot for one more second"},
        {1400, 800, ""},
        {1400, 700, "cooled: the queue alone is let through"},
        {600, 500, ""},
        {200, 400, "quiet again"},
    };
    weir_shedder *shedder = NULL;
    if (weir_shedder_new(NULL, 0, &shedder) != WEIR_OK) return 1;
    static weir_shedder_ticket open[OPEN_MAX];
    static int64_t due[OPEN_MAX];
    int held = 0;
    int64_t now = 0;
    printf("2. A shedder under rising load (weir_shedder)\n"
           "   A call takes 10 ms plus 0.5 ms for every call in flight beside it,\n"
           "   so a queue slows everything down. The CPU is read by the server.\n\n"
           "   time   calls/s  cpu   through  refused  flying  limit  hot (at the step's end)\n");
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        int through = 0, refused = 0, owed = 0;
        for (int ms = 0; ms < 500; ms++, now += MS) {
            for (int i = 0; i < held;) { /* the calls due finish */
                if (due[i] > now) {
                    i++;
                    continue;
                }
                weir_shedder_pass(shedder, &open[i], due[i]);
                held--;
                open[i] = open[held];
                due[i] = due[held];
            }
            owed += steps[s].rate;
            for (; owed >= 1000; owed -= 1000) { /* the calls that arrive */
                if (held == OPEN_MAX ||
                    !weir_shedder_allow(shedder, now, steps[s].cpu, &open[held])) {
                    refused++;
                    continue;
                }
                int64_t took = 10 * MS + held * MS / 2 + (int64_t)(roll() * 2 * MS);
                due[held++] = now + took;
                through++;
            }
        }
        weir_shedder_stats stats;
        weir_shedder_read_stats(shedder, now, &stats);
        const char *gap = !*steps[s].note ? "" : stats.hot ? "  " : "   ";
        printf("   %4.1fs  %7d  %4d  %7d  %7d  %6" PRId64 "  %5.1f  %s%s%s\n",
               (double)(now - 500 * MS) / SECOND, steps[s].rate, steps[s].cpu, through, refused,
               stats.flying, stats.limit, stats.hot ? "yes" : "no", gap, steps[s].note);
    }
    printf("\n   Refusals need both: a hot CPU alone, or a queue alone, is let through.\n"
           "   The limit is what the server has shown it can hold (busiest passes\n"
           "   per ms times fastest response), shrunk as the CPU nears 100%%.\n\n");
    for (int i = 0; i < held; i++) weir_shedder_fail(shedder, &open[i]);
    weir_shedder_free(shedder);
    return 0;
}

static int limiters_tour(void) {
    printf("3. One step through each of the others\n");

    weir_bucket *bucket = NULL;
    if (weir_bucket_new(2.0, 3.0, 0, &bucket) != WEIR_OK) return 1;
    printf("   weir_bucket, 2 a second, burst 3, four calls at once:");
    for (int i = 0; i < 4; i++) printf(" %s", weir_bucket_take(bucket, 0, 1.0) ? "yes" : "no");
    printf("; the next token in %" PRId64 " ms\n", weir_bucket_next(bucket, 0, 1.0) / MS);
    weir_bucket_free(bucket);
    if (weir_bucket_new(2.0, 3.0, 0, &bucket) != WEIR_OK) return 1;
    weir_bucket_take(bucket, 0, 3.0);
    weir_status back = weir_bucket_refund(bucket, 0, 0, 1.0);
    weir_status later = weir_bucket_refund(bucket, 600 * MS, 0, 1.0);
    printf("   weir_bucket_refund, the burst taken, one call never made: refund %s, %.1f "
           "tokens;\n     600 ms on (the refill has made a token good), one more: %s\n",
           weir_status_str(back), weir_bucket_tokens(bucket, 0), weir_status_str(later));
    weir_bucket_free(bucket);

    weir_sliding *sliding = NULL;
    if (weir_sliding_new(3, SECOND, &sliding) != WEIR_OK) return 1;
    printf("   weir_sliding, 3 in any second, calls 100 ms apart:");
    for (int64_t i = 0; i < 4; i++) {
        printf(" %s", weir_sliding_take(sliding, i * 100 * MS) ? "yes" : "no");
    }
    printf("; room again in %" PRId64 " ms\n", weir_sliding_next(sliding, 300 * MS) / MS);
    weir_sliding_free(sliding);

    weir_period *period = NULL;
    if (weir_period_new(3, SECOND, true, &period) != WEIR_OK) return 1;
    static const char *const quota[] = {"under", "hit", "over"};
    printf("   weir_period, 3 a second on the second, four calls at 0.9 s:");
    for (int i = 0; i < 4; i++) printf(" %s", quota[weir_period_take(period, 900 * MS)]);
    printf("; at 1.0 s: %s\n", quota[weir_period_take(period, SECOND)]);
    weir_period_free(period);

    weir_gate *gate = NULL;
    if (weir_gate_new(2, &gate) != WEIR_OK) return 1;
    printf("   weir_gate, 2 at once: enter");
    for (int i = 0; i < 3; i++) printf(" %s", weir_gate_enter(gate) ? "yes" : "no");
    weir_gate_leave(gate);
    printf("; one leaves, enter %s\n", weir_gate_enter(gate) ? "yes" : "no");
    weir_gate_free(gate);

    /* An adaptive gate: its limit follows latency (Gradient2). Each round
     * fills the limit and every call takes `rtt`. */
    weir_concurrency_policy gradient = weir_concurrency_policy_preset();
    gradient.initial_limit = 4;
    gradient.min_limit = 1;
    gradient.max_limit = 16;
    weir_concurrency *adaptive = NULL;
    if (weir_concurrency_new(&gradient, &adaptive) != WEIR_OK) return 1;
    static const struct {
        int64_t rtt_ms;
        int rounds;
    } phases[] = {{10, 60}, {50, 2}, {10, 60}};
    int64_t clock = 0;
    printf("   weir_concurrency, limit 4 in [1, 16]:");
    for (size_t p = 0; p < sizeof phases / sizeof phases[0]; p++) {
        for (int r = 0; r < phases[p].rounds; r++) {
            weir_concurrency_ticket flights[16];
            int in = 0;
            while (in < 16 && weir_concurrency_enter(adaptive, clock, &flights[in])) in++;
            clock += phases[p].rtt_ms * MS;
            for (int i = 0; i < in; i++) weir_concurrency_leave(adaptive, &flights[i], clock, false);
        }
        printf("%s%" PRId64 " ms calls -> limit %" PRId64, p ? ", then " : " ", phases[p].rtt_ms,
               weir_concurrency_limit(adaptive));
    }
    printf("\n");
    weir_concurrency_free(adaptive);

    weir_window *window = NULL;
    if (weir_window_new(10, SECOND, 0, &window) != WEIR_OK) return 1;
    for (int64_t i = 0; i < 4; i++) weir_window_add(window, i * 300 * MS, 10 * (i + 1));
    weir_window_total total;
    weir_window_read_total(window, 1200 * MS, true, &total);
    printf("   weir_window, the last second in 10 buckets, 10 20 30 40 added 300 ms apart: "
           "at 1.2 s the first is out, %" PRId64 " values, sum %" PRId64 "\n",
           total.count, total.sum);
    weir_window_free(window);

    weir_backoff backoff = weir_backoff_preset();
    const double draws[] = {0.5, 0.5};
    int64_t delays[2];
    size_t retries = weir_backoff_schedule(&backoff, draws, 2, delays, 2);
    printf("   weir_backoff, the preset with draws of 0.5: %zu retries, after", retries);
    for (size_t i = 0; i < retries; i++) printf(" %" PRId64 " ms", delays[i] / MS);
    printf("\n");

    /* Backoff spaces one caller's retries; a budget caps everyone's. Five
     * calls to a backend that is down, each allowed the two retries above,
     * with gRPC's throttling (10 tokens, each failure takes one, retries
     * only while above 5) in front. */
    weir_budget_policy throttle = weir_budget_policy_preset();
    throttle.form = WEIR_BUDGET_TOKENS;
    weir_budget *budget = NULL;
    if (weir_budget_new(&throttle, 0, &budget) != WEIR_OK) return 1;
    int sent = 0;
    for (int call = 0; call < 5; call++) {
        for (size_t attempt = 0;; attempt++) {
            sent++; /* it fails: every failure is reported to the budget */
            if (!weir_budget_withdraw(budget, 0) || attempt >= retries) break;
        }
    }
    printf("   weir_budget next to it, five calls to a dead backend with those retries: "
           "%d attempts sent of %d (%" PRId64 " tokens in thousandths left)\n",
           sent, 5 * (int)(retries + 1), weir_budget_tokens(budget, 0));
    weir_budget_free(budget);

    weir_deadline deadline = weir_deadline_start(250 * MS, 0);
    int64_t left = 0;
    weir_deadline_remaining(&deadline, 100 * MS, &left);
    printf("   weir_deadline, 250 ms from 0: at 100 ms %" PRId64 " ms left; expired at 300 ms: %s\n",
           left / MS, weir_deadline_expired(&deadline, 300 * MS) ? "yes" : "no");

    weir_rate_limit limit;
    if (weir_rate_limit_new(10.0, 3, &limit) != WEIR_OK) return 1;
    weir_rate word = {0};
    printf("   weir_rate, one 8-byte word, 3 per window at 10 a second, four calls at once:");
    for (int i = 0; i < 4; i++) printf(" %s", weir_rate_allow(&word, &limit, SECOND) ? "yes" : "no");
    printf("; open again in %" PRId64 " ms\n", weir_rate_next(&word, &limit, SECOND) / MS);

    weir_bloom *bloom = NULL;
    if (weir_bloom_new(10, 3, &limit, UINT64_C(0x243f6a8885a308d3), UINT64_C(0x13198a2e03707344),
                       &bloom) != WEIR_OK) {
        return 1;
    }
    printf("   weir_bloom, 1024 such words shared by every key, the same limit, four calls from "
           "10.0.0.1:");
    for (int i = 0; i < 4; i++) {
        printf(" %s", weir_bloom_allow(bloom, SECOND, "10.0.0.1", 8) ? "yes" : "no");
    }
    printf("; 10.0.0.2: %s\n", weir_bloom_allow(bloom, SECOND, "10.0.0.2", 8) ? "yes" : "no");
    weir_bloom_free(bloom);

    weir_limiter cooldown;
    if (weir_limiter_cooldown(&cooldown, 2, 500 * MS, 0, 2, 0) != WEIR_OK) return 1;
    printf("   weir_limiter, 2 units then a 500 ms cooldown, three calls at once:");
    for (int i = 0; i < 3; i++) printf(" %s", weir_limiter_try_consume(&cooldown, 0, 1) ? "yes" : "no");
    printf("; at 500 ms: %s\n", weir_limiter_try_consume(&cooldown, 500 * MS, 1) ? "yes" : "no");

    weir_limiter window_quota;
    if (weir_limiter_fixed_window(&window_quota, 2, SECOND, 0, 2, 0) != WEIR_OK) return 1;
    weir_limiter_try_consume(&window_quota, 0, 2);
    weir_status refunded = weir_limiter_refund(&window_quota, 10 * MS, 0, 1);
    bool again = weir_limiter_try_consume(&window_quota, 10 * MS, 1);
    weir_status late = weir_limiter_refund(&window_quota, SECOND, 10 * MS, 1);
    printf("   weir_limiter_refund, 2 a window, both taken, one call never made: refund %s, "
           "take again %s; after the window moved on: %s\n",
           weir_status_str(refunded), again ? "yes" : "no", weir_status_str(late));

    weir_pool *pool = NULL;
    if (weir_pool_new(NULL, &pool) != WEIR_OK) return 1;
    static const char *const taken[] = {"?", "ready", "stale", "make", "wait"};
    weir_pool_taken first = weir_pool_take(pool, 0);
    bool kept = false;
    weir_pool_made(pool, 42, 0);
    weir_pool_give(pool, 42, 0, &kept);
    weir_pool_taken second = weir_pool_take(pool, MS);
    printf("   weir_pool: take says %s; item 42 made and given back (kept: %s); take says %s, %zu\n",
           taken[first.kind], kept ? "yes" : "no", taken[second.kind], (size_t)second.item);
    weir_pool_give(pool, second.item, MS, &kept);
    weir_pool_free(pool);

    /* Generations: after a password change, every connection made with the
     * old one is marked old. The idle one comes back from evict to be
     * closed, the lent one is not kept when it comes back, and what is made
     * next belongs to the new generation. */
    weir_pool_policy generations = weir_pool_policy_preset();
    generations.min_idle = 1;
    if (weir_pool_new(&generations, &pool) != WEIR_OK) return 1;
    int64_t ahead = weir_pool_make_ahead(pool);
    weir_pool_give(pool, 7, 0, &kept); /* made ahead: idle */
    weir_pool_take(pool, 0);           /* 7 lent */
    weir_pool_make_ahead(pool);
    weir_pool_give(pool, 8, 0, &kept); /* made ahead: idle */
    int64_t marked = weir_pool_mark_old(pool);
    uintptr_t closing[4];
    size_t evicted = weir_pool_evict(pool, MS, closing, 4);
    bool kept_old = true;
    weir_pool_give(pool, 7, MS, &kept_old);
    int64_t ahead_again = weir_pool_make_ahead(pool);
    weir_pool_give(pool, 9, MS, &kept);
    weir_pool_taken fresh = weir_pool_take(pool, MS);
    printf("   weir_pool generations: %" PRId64 " made ahead; %" PRId64 " marked old; evict hands "
           "back %zu (item %zu); old item 7 kept on give: %s; %" PRId64 " made ahead again, "
           "take says %s, %zu\n",
           ahead, marked, evicted, evicted ? (size_t)closing[0] : (size_t)0,
           kept_old ? "yes" : "no", ahead_again, taken[fresh.kind], (size_t)fresh.item);
    weir_pool_give(pool, fresh.item, MS, &kept);
    weir_pool_close(pool, closing, 4);
    weir_pool_free(pool);
    return 0;
}

int main(void) {
    printf("weir: should this call go ahead?\n\n");
    if (breaker_tour() != 0 || limits_tour() != 0 || shedder_tour() != 0 || limiters_tour() != 0) {
        fprintf(stderr, "tour: could not make a handle\n");
        return 1;
    }
    return 0;
}
