/* weir_limiter through the header: the layout, every constructor status
 * with *out untouched, the three variants' rules, the getters, overflow at
 * the extremes, snapshot-and-rebuild over random timelines, a limiter
 * embedded in a struct and copied through a byte buffer, and zeroed or
 * corrupted values refused rather than trusted. */
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_limiter) == 48, "weir_limiter is 48 bytes");
_Static_assert(_Alignof(weir_limiter) == 8, "weir_limiter is 8-aligned");
_Static_assert(offsetof(weir_limiter, tag) == 0, "tag");
_Static_assert(offsetof(weir_limiter, reserved) == 4, "reserved");
_Static_assert(offsetof(weir_limiter, capacity) == 8, "capacity");
_Static_assert(offsetof(weir_limiter, available) == 16, "available");
_Static_assert(offsetof(weir_limiter, amount) == 24, "amount");
_Static_assert(offsetof(weir_limiter, period_ns) == 32, "period_ns");
_Static_assert(offsetof(weir_limiter, anchor) == 40, "anchor");

#define MS INT64_C(1000000)

static weir_limiter made(weir_status status, weir_limiter value) {
    CHECK_STATUS(status, WEIR_OK);
    return value;
}

static weir_limiter bucket(uint64_t capacity, uint64_t amount, int64_t interval, int64_t anchor,
                           uint64_t initial, int64_t now) {
    weir_limiter l;
    weir_status s = weir_limiter_bucket(&l, capacity, amount, interval, anchor, initial, now);
    return made(s, l);
}

static weir_limiter window(uint64_t capacity, int64_t length, int64_t start, uint64_t initial,
                           int64_t now) {
    weir_limiter l;
    weir_status s = weir_limiter_fixed_window(&l, capacity, length, start, initial, now);
    return made(s, l);
}

static weir_limiter cooldown(uint64_t capacity, int64_t length, int64_t end, uint64_t initial,
                             int64_t now) {
    weir_limiter l;
    weir_status s = weir_limiter_cooldown(&l, capacity, length, end, initial, now);
    return made(s, l);
}

static void constructor_statuses(void) {
    weir_limiter out = bucket(3, 1, 10, 0, 3, 0), before = out;
    /* Bucket, in the documented order. */
    CHECK_STATUS(weir_limiter_bucket(NULL, 1, 1, 1, 0, 0, 0), WEIR_ERR_NULL);
    CHECK_STATUS(weir_limiter_bucket(&out, 0, 1, 1, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_CAPACITY);
    CHECK_STATUS(weir_limiter_bucket(&out, 1, 0, 1, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_REFILL_AMOUNT);
    CHECK_STATUS(weir_limiter_bucket(&out, 1, 1, 0, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_REFILL_INTERVAL);
    CHECK_STATUS(weir_limiter_bucket(&out, 1, 1, -1, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_REFILL_INTERVAL);
    CHECK_STATUS(weir_limiter_bucket(&out, 1, 1, 1, 0, 2, 0), WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY);
    CHECK_STATUS(weir_limiter_bucket(&out, 1, 1, 1, 1, 0, 0), WEIR_ERR_LIMITER_BUCKET_ANCHOR_IN_FUTURE);
    CHECK_STATUS(weir_limiter_bucket(&out, 0, 0, 0, 9, 9, 0), WEIR_ERR_LIMITER_ZERO_CAPACITY);
    /* Fixed window. */
    CHECK_STATUS(weir_limiter_fixed_window(NULL, 1, 1, 0, 0, 0), WEIR_ERR_NULL);
    CHECK_STATUS(weir_limiter_fixed_window(&out, 0, 1, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_CAPACITY);
    CHECK_STATUS(weir_limiter_fixed_window(&out, 1, 0, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_WINDOW);
    CHECK_STATUS(weir_limiter_fixed_window(&out, 1, INT64_MIN, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_WINDOW);
    CHECK_STATUS(weir_limiter_fixed_window(&out, 1, 1, 0, 2, 0), WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY);
    CHECK_STATUS(weir_limiter_fixed_window(&out, 1, 1, 1, 0, 0), WEIR_ERR_LIMITER_WINDOW_ANCHOR_IN_FUTURE);
    /* Cooldown. */
    CHECK_STATUS(weir_limiter_cooldown(NULL, 1, 1, 0, 0, 0), WEIR_ERR_NULL);
    CHECK_STATUS(weir_limiter_cooldown(&out, 0, 1, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_CAPACITY);
    CHECK_STATUS(weir_limiter_cooldown(&out, 1, 0, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_COOLDOWN);
    CHECK_STATUS(weir_limiter_cooldown(&out, 1, -5, 0, 0, 0), WEIR_ERR_LIMITER_ZERO_COOLDOWN);
    CHECK_STATUS(weir_limiter_cooldown(&out, 1, 1, 0, 2, 0), WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY);
    CHECK_STATUS(weir_limiter_cooldown(&out, 1, 1, 1, 1, 0), WEIR_ERR_LIMITER_COOLDOWN_ARMED_WITH_TOKENS);
    CHECK(memcmp(&out, &before, sizeof out) == 0);
    /* The valid edge seeds. */
    CHECK_STATUS(weir_limiter_bucket(&out, 1, 1, 1, 0, 1, 0), WEIR_OK);
    CHECK_STATUS(weir_limiter_fixed_window(&out, 1, 1, INT64_MIN, 1, INT64_MIN), WEIR_OK);
    CHECK_STATUS(weir_limiter_cooldown(&out, 1, 1, 0, 1, 0), WEIR_OK);
    CHECK_STATUS(weir_limiter_cooldown(&out, 1, 1, INT64_MAX, 0, 0), WEIR_OK);
}

static void bucket_rules(void) {
    /* Empty, 1 per 10 ms: consumed at 15 ms, the next unit is due at 20. */
    weir_limiter l = bucket(5, 1, 10 * MS, 0, 0, 0);
    CHECK(weir_limiter_available(&l, 9 * MS) == 0);
    CHECK(weir_limiter_try_consume(&l, 15 * MS, 1));
    CHECK(weir_limiter_available(&l, 19 * MS) == 0);
    CHECK(weir_limiter_available(&l, 20 * MS) == 1);
    int64_t anchor = 0;
    CHECK_STATUS(weir_limiter_last_refill(&l, 15 * MS, &anchor), WEIR_OK);
    CHECK(anchor == 10 * MS);
    CHECK_STATUS(weir_limiter_last_refill(&l, 27 * MS, &anchor), WEIR_OK);
    CHECK(anchor == 20 * MS);

    /* Capacity 10, 1 per 100 ms, 8 held: a second of full intervals is not
     * banked. */
    l = bucket(10, 1, 100 * MS, 0, 8, 0);
    CHECK(weir_limiter_try_consume(&l, 1000 * MS, 10));
    CHECK(!weir_limiter_try_consume(&l, 1000 * MS, 1));
    CHECK_STATUS(weir_limiter_consume(&l, 1000 * MS, 1), WEIR_ERR_LIMITER_RATE_LIMITED);
    CHECK(weir_limiter_available(&l, 1099 * MS) == 0);
    CHECK(weir_limiter_available(&l, 1100 * MS) == 1);

    /* A refusal, a zero amount and time going backwards change nothing. */
    weir_limiter before = l;
    CHECK(!weir_limiter_try_consume(&l, 1100 * MS, 2));
    CHECK(!weir_limiter_try_consume(&l, 1100 * MS, 0));
    CHECK_STATUS(weir_limiter_consume(&l, 1100 * MS, 0), WEIR_ERR_LIMITER_INVALID_AMOUNT);
    CHECK(!weir_limiter_try_consume(&l, INT64_MIN, 1));
    CHECK(weir_limiter_available(&l, 0) == 0);
    CHECK(memcmp(&l, &before, sizeof l) == 0);
    CHECK_STATUS(weir_limiter_consume(&l, 1100 * MS, 1), WEIR_OK);
}

static void window_rules(void) {
    /* Built at 99 ms with a 100 ms window: it rolls over at 199, not 100. */
    weir_limiter l = window(3, 100 * MS, 99 * MS, 3, 99 * MS);
    CHECK(weir_limiter_try_consume(&l, 99 * MS, 3));
    CHECK(!weir_limiter_try_consume(&l, 100 * MS, 1));
    CHECK(weir_limiter_available(&l, 198 * MS) == 0);
    CHECK(weir_limiter_available(&l, 199 * MS) == 3);
    int64_t start = 0;
    CHECK_STATUS(weir_limiter_window_start(&l, 450 * MS, &start), WEIR_OK);
    CHECK(start == 399 * MS);
    CHECK(weir_limiter_try_consume(&l, 450 * MS, 2));
    CHECK(weir_limiter_available(&l, 498 * MS) == 1);

    /* A back-dated headroom lasts until the anchor's first window ends. */
    l = window(5, 100, 0, 1, 50);
    CHECK(weir_limiter_available(&l, 99) == 1);
    CHECK(weir_limiter_available(&l, 100) == 5);
}

static void cooldown_rules(void) {
    /* A seeded gate reads 0 until its deadline, full at it. */
    weir_limiter l = cooldown(4, 1000, 500, 0, 100);
    CHECK(weir_limiter_available(&l, 499) == 0);
    CHECK(!weir_limiter_try_consume(&l, 499, 1));
    CHECK(weir_limiter_available(&l, 500) == 4);

    /* Draining arms the gate at now + cooldown. */
    CHECK(weir_limiter_try_consume(&l, 600, 3));
    int64_t end = 0;
    CHECK_STATUS(weir_limiter_cooldown_end(&l, &end), WEIR_OK);
    CHECK(end == 500);
    CHECK(weir_limiter_try_consume(&l, 700, 1));
    CHECK_STATUS(weir_limiter_cooldown_end(&l, &end), WEIR_OK);
    CHECK(end == 1700);
    CHECK(weir_limiter_available(&l, 1699) == 0);
    CHECK(weir_limiter_available(&l, 1700) == 4);

    /* Split consumes at one now end as one consume of their sum. */
    weir_limiter split = cooldown(10, 50, 0, 10, 0), whole = split;
    CHECK(weir_limiter_try_consume(&split, 7, 3));
    CHECK(weir_limiter_try_consume(&split, 7, 3));
    CHECK(weir_limiter_try_consume(&split, 7, 4));
    CHECK(weir_limiter_try_consume(&whole, 7, 10));
    CHECK(memcmp(&split, &whole, sizeof split) == 0);

    /* A granted seed gives only its initial units before the first gate. */
    l = cooldown(10, 100, -50, 3, 0);
    CHECK(weir_limiter_available(&l, 1000) == 3);
    CHECK(!weir_limiter_try_consume(&l, 1000, 4));
}

static void getters(void) {
    weir_limiter b = bucket(3, 2, 7, 0, 1, 0);
    weir_limiter w = window(4, 9, 0, 1, 0);
    weir_limiter c = cooldown(5, 11, 0, 1, 0);
    CHECK(weir_limiter_is_bucket(&b) && !weir_limiter_is_fixed_window(&b) &&
          !weir_limiter_is_cooldown(&b));
    CHECK(weir_limiter_is_fixed_window(&w) && !weir_limiter_is_bucket(&w) &&
          !weir_limiter_is_cooldown(&w));
    CHECK(weir_limiter_is_cooldown(&c) && !weir_limiter_is_bucket(&c) &&
          !weir_limiter_is_fixed_window(&c));
    CHECK(weir_limiter_capacity(&b) == 3 && weir_limiter_capacity(&w) == 4 &&
          weir_limiter_capacity(&c) == 5);

    uint64_t amount = 0;
    int64_t value = 0;
    CHECK_STATUS(weir_limiter_refill_amount(&b, &amount), WEIR_OK);
    CHECK(amount == 2);
    CHECK_STATUS(weir_limiter_refill_interval_ns(&b, &value), WEIR_OK);
    CHECK(value == 7);
    CHECK_STATUS(weir_limiter_window_ns(&w, &value), WEIR_OK);
    CHECK(value == 9);
    CHECK_STATUS(weir_limiter_cooldown_ns(&c, &value), WEIR_OK);
    CHECK(value == 11);

    /* The wrong variant: a status, and *out untouched. */
    const weir_limiter *not_bucket[] = {&w, &c}, *not_window[] = {&b, &c},
                       *not_cooldown[] = {&b, &w};
    amount = 99;
    value = 99;
    for (int i = 0; i < 2; i++) {
        CHECK_STATUS(weir_limiter_refill_amount(not_bucket[i], &amount), WEIR_ERR_LIMITER_WRONG_VARIANT);
        CHECK_STATUS(weir_limiter_refill_interval_ns(not_bucket[i], &value),
                     WEIR_ERR_LIMITER_WRONG_VARIANT);
        CHECK_STATUS(weir_limiter_last_refill(not_bucket[i], 0, &value), WEIR_ERR_LIMITER_WRONG_VARIANT);
        CHECK_STATUS(weir_limiter_window_ns(not_window[i], &value), WEIR_ERR_LIMITER_WRONG_VARIANT);
        CHECK_STATUS(weir_limiter_window_start(not_window[i], 0, &value), WEIR_ERR_LIMITER_WRONG_VARIANT);
        CHECK_STATUS(weir_limiter_cooldown_ns(not_cooldown[i], &value), WEIR_ERR_LIMITER_WRONG_VARIANT);
        CHECK_STATUS(weir_limiter_cooldown_end(not_cooldown[i], &value), WEIR_ERR_LIMITER_WRONG_VARIANT);
    }
    CHECK(amount == 99 && value == 99);

    /* NULL anywhere: a status or a neutral answer. */
    CHECK_STATUS(weir_limiter_refill_amount(NULL, &amount), WEIR_ERR_NULL);
    CHECK_STATUS(weir_limiter_refill_amount(&b, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_limiter_last_refill(&b, 0, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_limiter_window_start(NULL, 0, &value), WEIR_ERR_NULL);
    CHECK_STATUS(weir_limiter_cooldown_end(&c, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_limiter_consume(NULL, 0, 1), WEIR_ERR_NULL);
    CHECK(!weir_limiter_try_consume(NULL, 0, 1));
    CHECK(weir_limiter_available(NULL, 0) == 0);
    CHECK(weir_limiter_capacity(NULL) == 0);
    CHECK(!weir_limiter_is_bucket(NULL) && !weir_limiter_is_fixed_window(NULL) &&
          !weir_limiter_is_cooldown(NULL));
}

static void overflow(void) {
    /* Amounts and capacities at UINT64_MAX, times at both ends. */
    weir_limiter l = bucket(UINT64_MAX, UINT64_MAX, 1, INT64_MIN, 0, INT64_MAX);
    CHECK(weir_limiter_available(&l, INT64_MIN) == 0);
    CHECK(weir_limiter_available(&l, INT64_MIN + 1) == UINT64_MAX);
    CHECK(weir_limiter_available(&l, INT64_MAX) == UINT64_MAX);
    CHECK(weir_limiter_try_consume(&l, INT64_MAX, UINT64_MAX));
    CHECK(!weir_limiter_try_consume(&l, INT64_MAX, 1));

    /* Refill amounts near the top: intervals times amount would wrap. */
    l = bucket(UINT64_MAX, UINT64_MAX - 1, INT64_MAX, INT64_MIN, 1, INT64_MAX);
    CHECK(weir_limiter_available(&l, -2) == 1);
    CHECK(weir_limiter_available(&l, -1) == UINT64_MAX);
    int64_t anchor = 0;
    CHECK_STATUS(weir_limiter_last_refill(&l, INT64_MAX, &anchor), WEIR_OK);
    CHECK(anchor == INT64_MAX - 1);
    l = bucket(UINT64_MAX, UINT64_C(1) << 40, 1, 0, 5, 0);
    CHECK(weir_limiter_available(&l, 3) == 5 + 3 * (UINT64_C(1) << 40));
    CHECK(weir_limiter_available(&l, INT64_C(1) << 30) == UINT64_MAX);

    l = window(UINT64_MAX, INT64_MAX, INT64_MIN, 0, INT64_MIN);
    CHECK(weir_limiter_available(&l, -2) == 0);
    CHECK(weir_limiter_available(&l, INT64_MAX) == UINT64_MAX);

    /* A cooldown whose deadline would overflow: a status, nothing changed. */
    l = cooldown(2, 10, 0, 2, 0);
    weir_limiter before = l;
    CHECK_STATUS(weir_limiter_consume(&l, INT64_MAX - 5, 2), WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW);
    CHECK(!weir_limiter_try_consume(&l, INT64_MAX - 5, 2));
    CHECK(memcmp(&l, &before, sizeof l) == 0);
    CHECK(weir_limiter_try_consume(&l, INT64_MAX - 10, 2));
    CHECK(weir_limiter_available(&l, INT64_MAX) == 2);
    l = cooldown(1, INT64_MAX, INT64_MIN, 1, INT64_MIN);
    CHECK_STATUS(weir_limiter_consume(&l, 1, 1), WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW);
    CHECK_STATUS(weir_limiter_consume(&l, 0, 1), WEIR_OK);
}

/* xorshift64: a reproducible stream for the random timelines. */
static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static uint64_t below(uint64_t n) { return next_random() % n; }

/* The header's recipe: read the units and the projected anchor at the
 * latest now, then call the same constructor with them. */
static weir_limiter rebuild(const weir_limiter *l, int64_t now) {
    uint64_t capacity = weir_limiter_capacity(l), available = weir_limiter_available(l, now);
    uint64_t amount = 0;
    int64_t period = 0, anchor = 0;
    weir_limiter out;
    if (weir_limiter_is_bucket(l)) {
        CHECK_STATUS(weir_limiter_refill_amount(l, &amount), WEIR_OK);
        CHECK_STATUS(weir_limiter_refill_interval_ns(l, &period), WEIR_OK);
        CHECK_STATUS(weir_limiter_last_refill(l, now, &anchor), WEIR_OK);
        CHECK_STATUS(weir_limiter_bucket(&out, capacity, amount, period, anchor, available, now),
                     WEIR_OK);
    } else if (weir_limiter_is_fixed_window(l)) {
        CHECK_STATUS(weir_limiter_window_ns(l, &period), WEIR_OK);
        CHECK_STATUS(weir_limiter_window_start(l, now, &anchor), WEIR_OK);
        CHECK_STATUS(weir_limiter_fixed_window(&out, capacity, period, anchor, available, now),
                     WEIR_OK);
    } else {
        CHECK_STATUS(weir_limiter_cooldown_ns(l, &period), WEIR_OK);
        CHECK_STATUS(weir_limiter_cooldown_end(l, &anchor), WEIR_OK);
        CHECK_STATUS(weir_limiter_cooldown(&out, capacity, period, anchor, available, now),
                     WEIR_OK);
    }
    return out;
}

static void snapshot_and_rebuild(void) {
    for (int round = 0; round < 3000; round++) {
        uint64_t capacity = 1 + below(8), initial = below(capacity + 1);
        int64_t period = 1 + (int64_t)below(30), now = (int64_t)below(2000) - 1000;
        int64_t back = (int64_t)below(60);
        weir_limiter l;
        switch (round % 3) {
        case 0:
            l = bucket(capacity, 1 + below(3), period, now - back, initial, now);
            break;
        case 1:
            l = window(capacity, period, now - back, initial, now);
            break;
        default: {
            int64_t end = now + back - 30;
            l = cooldown(capacity, period, end, end > now ? 0 : initial, now);
        }
        }
        int steps = (int)below(30);
        for (int i = 0; i < steps; i++) {
            now += (int64_t)below(25);
            (void)weir_limiter_try_consume(&l, now, below(capacity + 2));
        }
        weir_limiter copy = rebuild(&l, now);
        for (int i = 0; i < 30; i++) {
            int64_t at = now + (int64_t)below(300);
            uint64_t amount = below(capacity + 2);
            CHECK(weir_limiter_available(&copy, at) == weir_limiter_available(&l, at));
            CHECK(weir_limiter_consume(&copy, at, amount) == weir_limiter_consume(&l, at, amount));
            CHECK(weir_limiter_available(&copy, at) == weir_limiter_available(&l, at));
        }
    }
}

/* A caller's per-user record with the limiter inside. */
struct user {
    uint32_t id;
    weir_limiter quota;
    char name[12];
};

static void embedded_and_copied(void) {
    struct user users[2];
    memset(users, 0, sizeof users);
    users[0].id = 1;
    strcpy(users[0].name, "ada");
    users[0].quota = bucket(5, 1, 10, 0, 5, 0);
    CHECK(weir_limiter_try_consume(&users[0].quota, 3, 4));

    unsigned char buffer[sizeof users];
    memcpy(buffer, users, sizeof users);
    memcpy(&users[1], buffer, sizeof users[0]);
    CHECK(users[1].id == 1 && strcmp(users[1].name, "ada") == 0);
    static const struct {
        int64_t now;
        uint64_t amount;
    } calls[] = {{5, 1}, {12, 3}, {12, 1}, {40, 5}, {41, 1}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        CHECK(weir_limiter_available(&users[1].quota, calls[i].now) ==
              weir_limiter_available(&users[0].quota, calls[i].now));
        CHECK(weir_limiter_consume(&users[1].quota, calls[i].now, calls[i].amount) ==
              weir_limiter_consume(&users[0].quota, calls[i].now, calls[i].amount));
    }
    CHECK(memcmp(&users[0].quota, &users[1].quota, sizeof(weir_limiter)) == 0);
}

static void refused_when_corrupt(weir_limiter *l) {
    weir_limiter before = *l;
    uint64_t amount = 7;
    CHECK(!weir_limiter_try_consume(l, 100, 1));
    CHECK_STATUS(weir_limiter_consume(l, 100, 1), WEIR_ERR_LIMITER_CORRUPT);
    CHECK(weir_limiter_available(l, 100) == 0);
    CHECK(weir_limiter_capacity(l) == 0);
    CHECK(!weir_limiter_is_bucket(l) && !weir_limiter_is_fixed_window(l) &&
          !weir_limiter_is_cooldown(l));
    CHECK_STATUS(weir_limiter_refill_amount(l, &amount), WEIR_ERR_LIMITER_CORRUPT);
    CHECK(amount == 7);
    CHECK(memcmp(l, &before, sizeof *l) == 0);
}

static void corrupt_values(void) {
    weir_limiter l;
    memset(&l, 0, sizeof l);
    refused_when_corrupt(&l);

    weir_limiter good = bucket(4, 1, 10, 0, 2, 0);
    l = good;
    l.tag ^= 0x100;
    refused_when_corrupt(&l);
    l = good;
    l.available = 5;
    refused_when_corrupt(&l);
    l = good;
    l.period_ns = -10;
    refused_when_corrupt(&l);
    l = good;
    l.reserved = 1;
    refused_when_corrupt(&l);

    /* Random bytes: whatever they are, no call misbehaves (the sanitizer
     * preset watches), and a value that does load keeps its promises. */
    for (int round = 0; round < 20000; round++) {
        unsigned char *bytes = (unsigned char *)&l;
        l = round % 2 ? good : cooldown(3, 5, 0, 3, 0);
        int flips = 1 + (int)below(4);
        for (int i = 0; i < flips; i++) bytes[below(sizeof l)] ^= (unsigned char)(1u << below(8));
        int64_t now = (int64_t)next_random();
        uint64_t capacity = weir_limiter_capacity(&l);
        CHECK(weir_limiter_available(&l, now) <= capacity);
        weir_status s = weir_limiter_consume(&l, now, 1 + below(3));
        CHECK(s == WEIR_OK || s == WEIR_ERR_LIMITER_RATE_LIMITED || s == WEIR_ERR_LIMITER_CORRUPT ||
              s == WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW);
        CHECK((s == WEIR_ERR_LIMITER_CORRUPT) == (capacity == 0));
    }
}

int main(void) {
    constructor_statuses();
    bucket_rules();
    window_rules();
    cooldown_rules();
    getters();
    overflow();
    snapshot_and_rebuild();
    embedded_and_copied();
    corrupt_values();
    /* Every limiter status has its own message. */
    for (int code = WEIR_ERR_LIMITER_ZERO_CAPACITY; code <= WEIR_ERR_LIMITER_CORRUPT; code++) {
        CHECK(strcmp(weir_status_str(code), weir_status_str(-1)) != 0);
        for (int other = WEIR_ERR_LIMITER_ZERO_CAPACITY; other < code; other++)
            CHECK(strcmp(weir_status_str(code), weir_status_str(other)) != 0);
    }
    /* Refunds (x/time/rate's Reservation.Cancel), worked by hand. */
    {
        weir_limiter r, before;
        /* Bucket: 10 units, 1 every 100 ns, full at 0; take 4, give 4. */
        CHECK_STATUS(weir_limiter_bucket(&r, 10, 1, 100, 0, 10, 0), WEIR_OK);
        CHECK_STATUS(weir_limiter_consume(&r, 0, 4), WEIR_OK);
        CHECK_STATUS(weir_limiter_refund(&r, 0, 0, 4), WEIR_OK);
        CHECK(weir_limiter_available(&r, 0) == 10);
        /* Take 4, two refill by 250: 8; a refund of 4 is capped at 2. */
        CHECK_STATUS(weir_limiter_consume(&r, 0, 4), WEIR_OK);
        CHECK_STATUS(weir_limiter_refund(&r, 250, 0, 4), WEIR_OK);
        CHECK(weir_limiter_available(&r, 250) == 10);
        before = r;
        CHECK_STATUS(weir_limiter_refund(&r, 250, 0, 1), WEIR_ERR_REFUND_FULL);
        CHECK_STATUS(weir_limiter_refund(&r, 250, 0, 0), WEIR_ERR_LIMITER_INVALID_AMOUNT);
        CHECK_STATUS(weir_limiter_refund(&r, 250, 251, 1), WEIR_ERR_REFUND_FUTURE);
        CHECK_STATUS(weir_limiter_refund(&r, INT64_MIN, INT64_MAX, UINT64_MAX),
                     WEIR_ERR_REFUND_FUTURE);
        CHECK(memcmp(&r, &before, sizeof r) == 0);
        /* Fixed window of 1000 from 0, 5 units: a refund only in the
         * window the units were taken in. */
        CHECK_STATUS(weir_limiter_fixed_window(&r, 5, 1000, 0, 5, 0), WEIR_OK);
        CHECK_STATUS(weir_limiter_consume(&r, 100, 3), WEIR_OK);
        CHECK_STATUS(weir_limiter_refund(&r, 900, 100, 1), WEIR_OK);
        CHECK(weir_limiter_available(&r, 900) == 3);
        before = r;
        CHECK_STATUS(weir_limiter_refund(&r, 1000, 100, 1), WEIR_ERR_REFUND_EXPIRED);
        CHECK(memcmp(&r, &before, sizeof r) == 0);
        /* Cooldown, batches of 3, gate 500: no refund while the gate is
         * armed, none from an earlier batch. */
        CHECK_STATUS(weir_limiter_cooldown(&r, 3, 500, 0, 3, 0), WEIR_OK);
        CHECK_STATUS(weir_limiter_consume(&r, 30, 3), WEIR_OK);
        before = r;
        CHECK_STATUS(weir_limiter_refund(&r, 40, 30, 1), WEIR_ERR_REFUND_ARMED);
        CHECK(memcmp(&r, &before, sizeof r) == 0);
        CHECK_STATUS(weir_limiter_consume(&r, 600, 1), WEIR_OK);
        CHECK_STATUS(weir_limiter_refund(&r, 600, 30, 1), WEIR_ERR_REFUND_EXPIRED);
        CHECK_STATUS(weir_limiter_refund(&r, 600, 600, 1), WEIR_OK);
        CHECK(weir_limiter_available(&r, 600) == 3);
        /* NULL, misaligned and zeroed limiters. */
        CHECK_STATUS(weir_limiter_refund(NULL, 0, 0, 1), WEIR_ERR_NULL);
        uint64_t raw[8] = {0};
        CHECK_STATUS(weir_limiter_refund((weir_limiter *)((char *)raw + 4), 0, 0, 1),
                     WEIR_ERR_MISALIGNED);
        CHECK_STATUS(weir_limiter_refund((weir_limiter *)raw, 0, 0, 1), WEIR_ERR_LIMITER_CORRUPT);
    }
    CHECK_DONE();
}
