/* A shadow limit beside a real one: the shadow is an ordinary handle with
 * the candidate policy and counting on, asked beside the real one; only the
 * real answer is enforced, so the shadow refuses no one, and its counts'
 * `refused` are the calls it would have refused. Checked here:
 * - a plain limit (a bucket, a keyed table) is asked on every call,
 *   whatever the real one answered, so it decides the traffic it would have
 *   had in charge; a keyed table's overflows count as its policy decided;
 * - a breaker's and a shedder's shadow is asked only for the calls the real
 *   one let through (only those run, so only those have an outcome to
 *   settle), so it sees exactly those, and the real one answers as it does
 *   alone;
 * - the real one then takes the shadow's policy in place, keeping its state. */
#include <stdint.h>

#include "check.h"
#include "weir.h"

#define MS INT64_C(1000000)

static double draw(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (double)(*x >> 11) / 9007199254740992.0;
}

static void bucket_shadow(void) {
    weir_bucket *real = NULL, *shadow = NULL;
    CHECK_STATUS(weir_bucket_new(10.0, 5.0, 0, &real), WEIR_OK);
    CHECK_STATUS(weir_bucket_new(10.0, 2.0, 0, &shadow), WEIR_OK);
    CHECK_STATUS(weir_bucket_start_counting(real), WEIR_OK);
    CHECK_STATUS(weir_bucket_start_counting(shadow), WEIR_OK);
    int served = 0;
    for (int i = 0; i < 6; i++) {
        bool go = weir_bucket_take(real, 0, 1.0);
        (void)weir_bucket_take(shadow, 0, 1.0); /* observed, never enforced */
        served += go;
    }
    weir_counts r, s;
    CHECK_STATUS(weir_bucket_read_counts(real, &r), WEIR_OK);
    CHECK_STATUS(weir_bucket_read_counts(shadow, &s), WEIR_OK);
    CHECK(served == 5 && r.admitted == 5 && r.refused == 1);
    CHECK(s.admitted == 2 && s.refused == 4);
    /* The shadow's policy goes live: the real bucket keeps its state (0
     * tokens) and its counts. */
    CHECK_STATUS(weir_bucket_reconfigure(real, 10.0, 2.0, 0), WEIR_OK);
    CHECK(weir_bucket_tokens(real, 0) == 0.0);
    CHECK(!weir_bucket_take(real, 0, 1.0));
    CHECK(weir_bucket_take(real, 100 * MS, 1.0));
    CHECK_STATUS(weir_bucket_read_counts(real, &r), WEIR_OK);
    CHECK(r.admitted == 6 && r.refused == 2);
    weir_bucket_free(real);
    weir_bucket_free(shadow);
}

/* A keyed table's shadow: a smaller, stricter table (one bucket, a burst of
 * 2, overflows refused) beside the real one (64 buckets, a burst of 5),
 * asked on every call whatever the real one answered, and a lone twin of
 * the real one given the same calls. */
static void keyed_shadow(void) {
    weir_gcra_limit limit, strict;
    CHECK_STATUS(weir_gcra_limit_new(5.0, 5, &limit), WEIR_OK);
    CHECK_STATUS(weir_gcra_limit_new(5.0, 2, &strict), WEIR_OK);
    weir_keyed *real = NULL, *shadow = NULL, *alone = NULL;
    CHECK_STATUS(weir_keyed_new(64, &limit, WEIR_KEYED_OVERFLOW_REFUSE, 7, 8, &real), WEIR_OK);
    CHECK_STATUS(weir_keyed_new(1, &strict, WEIR_KEYED_OVERFLOW_REFUSE, 7, 8, &shadow), WEIR_OK);
    CHECK_STATUS(weir_keyed_new(64, &limit, WEIR_KEYED_OVERFLOW_REFUSE, 7, 8, &alone), WEIR_OK);
    CHECK_STATUS(weir_keyed_start_counting(real), WEIR_OK);
    CHECK_STATUS(weir_keyed_start_counting(shadow), WEIR_OK);
    uint64_t calls = 0, served = 0;
    /* Twelve clients at once, six calls each: the real table serves five
     * of each; the shadow's eight slots hold the first eight clients, two
     * calls each, and the other four overflow, refused and counted. */
    for (uint64_t key = 0; key < 12; key++) {
        for (int call = 0; call < 6; call++) {
            bool go = weir_keyed_allow(real, 0, &key, sizeof key);
            CHECK(go == weir_keyed_allow(alone, 0, &key, sizeof key));
            (void)weir_keyed_allow(shadow, 0, &key, sizeof key); /* never enforced */
            calls++;
            served += go;
        }
    }
    weir_counts r, s;
    CHECK_STATUS(weir_keyed_read_counts(real, &r), WEIR_OK);
    CHECK_STATUS(weir_keyed_read_counts(shadow, &s), WEIR_OK);
    CHECK(served == 60 && r.admitted == 60 && r.refused == 12 && r.units == 60.0);
    CHECK(s.admitted == 16 && s.refused == 56 && s.errors == 0);
    weir_keyed_reading reading;
    CHECK_STATUS(weir_keyed_read(shadow, &reading), WEIR_OK);
    CHECK(reading.overflows == 24);
    /* Then a stream over the twelve, each a call every 120 ms (over the
     * 5 a second both allow), the shadow's slots changing hands as words
     * come to rest. */
    for (int64_t now = 1000 * MS; now < 6000 * MS; now += 10 * MS) {
        uint64_t key = (uint64_t)(now / (10 * MS)) % 12;
        bool go = weir_keyed_allow(real, now, &key, sizeof key);
        CHECK(go == weir_keyed_allow(alone, now, &key, sizeof key));
        (void)weir_keyed_allow(shadow, now, &key, sizeof key);
        calls++;
        served += go;
    }
    CHECK_STATUS(weir_keyed_read_counts(real, &r), WEIR_OK);
    CHECK_STATUS(weir_keyed_read_counts(shadow, &s), WEIR_OK);
    CHECK(r.admitted == served && r.admitted + r.refused == calls);
    /* It was asked every call, and would have refused more of them. */
    CHECK(s.admitted + s.refused == calls && s.errors == 0);
    CHECK(s.refused > r.refused && s.admitted < r.admitted);
    weir_keyed_free(real);
    weir_keyed_free(shadow);
    weir_keyed_free(alone);
}

/* A backend that fails every call, behind a real breaker (the preset), a
 * stricter shadow asked only for what the real one let through, and a lone
 * twin of the real one given the same draws. */
static void breaker_shadow(void) {
    weir_breaker_policy strict = weir_breaker_policy_preset();
    strict.k = 1.1;
    strict.floor = 1.0;
    strict.aggression = 4.0;
    weir_breaker *real = NULL, *shadow = NULL, *alone = NULL;
    CHECK_STATUS(weir_breaker_new(NULL, 0, &real), WEIR_OK);
    CHECK_STATUS(weir_breaker_new(&strict, 0, &shadow), WEIR_OK);
    CHECK_STATUS(weir_breaker_new(NULL, 0, &alone), WEIR_OK);
    CHECK_STATUS(weir_breaker_start_counting(real), WEIR_OK);
    CHECK_STATUS(weir_breaker_start_counting(shadow), WEIR_OK);
    uint64_t x = 36;
    uint64_t let_through = 0;
    for (int64_t now = 0; now < 20000 * MS; now += 10 * MS) {
        double roll = draw(&x);
        weir_breaker_ticket t, ts, ta;
        bool go = weir_breaker_allow(real, now, roll, &t);
        CHECK(go == weir_breaker_allow(alone, now, roll, &ta));
        if (!go) continue; /* refused: no call, no outcome for the shadow */
        let_through++;
        bool shadow_go = weir_breaker_allow(shadow, now, roll, &ts);
        /* The call runs either way, and fails. */
        CHECK_STATUS(weir_breaker_fail(real, &t, now + MS), WEIR_OK);
        CHECK_STATUS(weir_breaker_fail(alone, &ta, now + MS), WEIR_OK);
        if (shadow_go) CHECK_STATUS(weir_breaker_fail(shadow, &ts, now + MS), WEIR_OK);
    }
    weir_counts r, s;
    CHECK_STATUS(weir_breaker_read_counts(real, &r), WEIR_OK);
    CHECK_STATUS(weir_breaker_read_counts(shadow, &s), WEIR_OK);
    CHECK(r.admitted == let_through);
    /* It saw exactly the calls the real one let through, and would have
     * refused more of them. */
    CHECK(s.admitted + s.refused == let_through);
    CHECK(s.refused > 0 && s.admitted < r.admitted);
    weir_breaker_free(real);
    weir_breaker_free(shadow);
    weir_breaker_free(alone);
}

/* A hot server (the CPU at 950 thousandths), calls that take 200 ms: the
 * real shedder (hot at 990) lets everything through; a shadow hot at 900
 * (the preset), asked only for the calls the real one let through and
 * settled with them, would shed. */
static void shedder_shadow(void) {
    weir_shedder_policy real_policy = weir_shedder_policy_preset();
    real_policy.cpu = 990;
    weir_shedder_policy strict = weir_shedder_policy_preset();
    weir_shedder *real = NULL, *shadow = NULL;
    CHECK_STATUS(weir_shedder_new(&real_policy, 0, &real), WEIR_OK);
    CHECK_STATUS(weir_shedder_new(&strict, 0, &shadow), WEIR_OK);
    CHECK_STATUS(weir_shedder_start_counting(real), WEIR_OK);
    CHECK_STATUS(weir_shedder_start_counting(shadow), WEIR_OK);
    static weir_shedder_ticket held[4000], shadow_held[4000];
    uint64_t let_through = 0;
    for (int i = 0; i < 4000; i++) {
        int64_t now = i * MS;
        if (i >= 200 && held[i - 200].flying) {
            CHECK_STATUS(weir_shedder_pass(real, &held[i - 200], now), WEIR_OK);
            if (shadow_held[i - 200].flying) {
                CHECK_STATUS(weir_shedder_pass(shadow, &shadow_held[i - 200], now), WEIR_OK);
            }
        }
        if (!weir_shedder_allow(real, now, 950, &held[i])) continue;
        let_through++;
        (void)weir_shedder_allow(shadow, now, 950, &shadow_held[i]);
    }
    weir_counts r, s;
    CHECK_STATUS(weir_shedder_read_counts(real, &r), WEIR_OK);
    CHECK_STATUS(weir_shedder_read_counts(shadow, &s), WEIR_OK);
    CHECK(r.refused == 0 && r.admitted == let_through);
    CHECK(s.admitted + s.refused == let_through);
    CHECK(s.refused > 0);
    weir_shedder_free(real);
    weir_shedder_free(shadow);
}

int main(void) {
    bucket_shadow();
    keyed_shadow();
    breaker_shadow();
    shedder_shadow();
    CHECK_DONE();
}
