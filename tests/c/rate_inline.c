/* The rate word's inline fast path (weir_rate_allow_inline,
 * weir_rate_next_inline) against the library's calls (weir_rate_allow,
 * weir_rate_next): two words driven by the same random traces must give the
 * same decision, hold the same bits and tell the same wait after every call.
 * The traces aim at the edges: `now` a few ns either side of multiples of
 * 512 ns, many calls at one instant, time going backwards, negative `now`,
 * `now` past WEIR_RATE_MAX_NOW, limits at both ends of their range, limits
 * that are not weir's, and words charged under another limit. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "weir.h"

#if !defined(WEIR_RATE_INLINE)
#error "the C tests compile as C11 on a host with 64-bit atomics: the inline path must exist"
#endif

/* splitmix64: a seeded PRNG, so that a failure repeats. */
static uint64_t state = 0x5eed0f1a7e5bULL;
static uint64_t next_random(void) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return next_random() % n; }

/* A limit: mostly weir's own, sometimes fields out of range. */
static weir_rate_limit random_limit(void) {
    weir_rate_limit limit;
    memset(&limit, 0, sizeof limit);
    for (;;) {
        int64_t burst = 1 + (int64_t)below(below(4) == 0 ? 1023 : 8);
        double per_s;
        switch (below(4)) {
            case 0: per_s = (double)(1 + below(20)); break;              /* slow */
            case 1: per_s = (double)burst * 1e9 / (51200.0 + (double)below(4096)); break;
            case 2: per_s = 1e9 / (double)(1 + below(1u << 20)) * (double)burst; break;
            default: per_s = (double)(1 + below(1000000)) / 7.0; break;
        }
        if (weir_rate_limit_new(per_s, burst, &limit) == WEIR_OK) {
            break;
        }
    }
    switch (below(16)) {
        case 0: limit.burst = (uint32_t)below(2) ? 0 : 1024 + (uint32_t)below(8); break;
        case 1: limit.interval_ns = below(50); limit.interval_frac = (uint32_t)next_random(); break;
        case 2: limit.interval_ns = UINT64_MAX >> below(12); break;
        default: break;
    }
    return limit;
}

/* A `now` for the next call, from the previous one. */
/* `wait`: what weir_rate_next told at `previous`, so that a trace can aim
 * at the instant a full window expires. */
static int64_t random_now(int64_t previous, int64_t wait) {
    /* Keep the sums below in range (the largest step is a wait under 2^40);
     * cases 8 and 9 still jump to the clock's end. */
    if (previous > INT64_MAX - (1ll << 41)) {
        previous = INT64_MAX - (1ll << 41) - (int64_t)below(1ull << 36);
    }
    int64_t grid = (previous / 512) * 512;
    switch (below(12)) {
        case 0: case 1: case 2: return previous;                      /* one instant */
        case 3: return grid + 512 * (int64_t)below(4) + (int64_t)below(5) - 2;
        case 4: return previous - (int64_t)below(5000);                /* backwards */
        case 5: return previous + (int64_t)below(1u << 20);
        case 6: return previous + (int64_t)below(1ull << 34);
        case 7: return -(int64_t)below(3) - 1;                          /* negative */
        case 8: return WEIR_RATE_MAX_NOW - 512 * (int64_t)below(4) + (int64_t)below(5) - 2;
        case 9: return INT64_MAX - (int64_t)below(3);
        case 10:
            if (wait > 0 && wait < (1ll << 40)) {
                return previous + wait + (int64_t)below(3) - 1; /* at the expiry */
            }
            return previous;
        default: return previous + (int64_t)below(2000);
    }
}

int main(void) {
    long decisions = 0, allowed = 0;
    for (int trace = 0; trace < 3000; trace++) {
        weir_rate_limit limits[2] = {random_limit(), random_limit()};
        _Alignas(8) weir_rate library = {0}, inline_word = {0};
        if (below(8) == 0) {
            library.state = inline_word.state = next_random(); /* any bits at all */
        }
        int64_t now = below(2) ? (int64_t)below(1u << 16) : (int64_t)(next_random() >> 2);
        int64_t wait = 0;
        for (int call = 0; call < 200; call++) {
            now = random_now(now < 0 ? 0 : now, wait);
            /* Mostly one limit per word; sometimes the other one. */
            const weir_rate_limit *limit = &limits[below(10) == 0];
            bool a = weir_rate_allow(&library, limit, now);
            bool b = weir_rate_allow_inline(&inline_word, limit, now);
            CHECK(a == b);
            CHECK(library.state == inline_word.state);
            wait = weir_rate_next(&library, limit, now);
            CHECK(wait == weir_rate_next_inline(&inline_word, limit, now));
            decisions++;
            allowed += a;
        }
    }
    /* The traces must have taken both answers often. */
    CHECK(allowed > decisions / 10 && allowed < decisions * 9 / 10);

    /* A count of 0 is a window never opened, whatever start the word holds
     * (one another program wrote): both open a window at `now`. */
    {
        weir_rate_limit fast;
        CHECK_STATUS(weir_rate_limit_new(1000.0, 3, &fast), WEIR_OK);
        _Alignas(8) weir_rate library = {1000u << 10}, inline_word = {1000u << 10};
        CHECK(weir_rate_allow(&library, &fast, 0) && weir_rate_allow_inline(&inline_word, &fast, 0));
        CHECK(library.state == 1 && inline_word.state == 1);
    }

    /* NULL and misaligned words and limits are refused by both. */
    weir_rate_limit limit;
    CHECK_STATUS(weir_rate_limit_new(1000.0, 10, &limit), WEIR_OK);
    _Alignas(16) unsigned char bytes[32] = {0};
    weir_rate *misaligned = (weir_rate *)(void *)(bytes + 4);
    CHECK(!weir_rate_allow(misaligned, &limit, 1) && !weir_rate_allow_inline(misaligned, &limit, 1));
    CHECK(weir_rate_next_inline(misaligned, &limit, 1) == INT64_MAX);
    CHECK(!weir_rate_allow_inline(NULL, &limit, 1) && weir_rate_next_inline(NULL, &limit, 1) == INT64_MAX);
    weir_rate word = {0};
    CHECK(!weir_rate_allow_inline(&word, NULL, 1) && weir_rate_next_inline(&word, NULL, 1) == INT64_MAX);
    CHECK(word.state == 0);
    for (size_t i = 0; i < sizeof bytes; i++) {
        CHECK(bytes[i] == 0);
    }
    printf("%ld decisions compared, %ld allowed\n", decisions, allowed);
    CHECK_DONE();
}
