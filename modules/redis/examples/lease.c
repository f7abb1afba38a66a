/* One client of a fleet that shares a limit in Redis, with hiredis: a
 * steady stream of requests, each admitted from units leased with
 * WEIR.LEASE (weir_lease says when to ask and how many) or, to compare,
 * with one WEIR.BUCKET command per request. On exit it gives its unspent
 * units back with WEIR.REFUND and prints one line of counts.
 *
 *   lease PORT MODE KEYS RATE BURST PER_SECOND SECONDS [SEED]
 *
 * MODE is "lease" or "each"; KEYS the number of keys (k:0 ... k:KEYS-1)
 * the requests spread over, each request's key drawn at random (SEED
 * seeds the draws); RATE and BURST the key's limit (RATE
 * a decimal, per second); PER_SECOND the requests this client makes a
 * second, paced on an absolute schedule (open loop: a refused request is
 * not retried). modules/redis/examples/lease.sh builds and runs it. */
#define _POSIX_C_SOURCE 200809L
#include <hiredis/hiredis.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weir.h"

#define SEC 1000000000LL
#define MS 1000000LL

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * SEC + t.tv_nsec;
}

static redisContext *redis;
static const char *rate;
static long long burst;
static long long commands, granted_total, refunded;
static const long long TTL_MS = 1000;

static void die(const char *what) {
    fprintf(stderr, "lease: %s: %s\n", what, redis && redis->err ? redis->errstr : "bad reply");
    exit(1);
}

/* Sends WEIR.LEASE for `n` units of `key` and records the answer. */
static void ask(weir_lease *lease, const char *key, int64_t n) {
    int64_t sent = now_ns();
    redisReply *r = redisCommand(redis, "WEIR.LEASE %s %s %lld %lld %lld", key, rate, burst,
                                 (long long)n, TTL_MS);
    commands++;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 3) die("WEIR.LEASE");
    long long granted = r->element[0]->integer;
    long long ttl_ms = r->element[1]->integer;
    long long next_ms = r->element[2]->integer;
    freeReplyObject(r);
    int64_t at = now_ns();
    granted_total += granted;
    /* The lease ends ttl after the ask was sent: no later than Redis's. */
    if (weir_lease_grant(lease, at, granted, sent + ttl_ms * MS, at + next_ms * MS) != WEIR_OK)
        die("weir_lease_grant");
}

/* One request on `key`: whether it was admitted. */
static int admit_leased(weir_lease *lease, const char *key) {
    for (int tries = 0; tries < 2; tries++) {
        weir_lease_answer a;
        if (weir_lease_take(lease, now_ns(), 1, &a) != WEIR_OK) die("weir_lease_take");
        if (a.verdict == WEIR_LEASE_GO) {
            /* Units run low: ask ahead (here on this thread, after the
             * request was admitted). */
            if (a.ask > 0) ask(lease, key, a.ask);
            return 1;
        }
        if (a.verdict == WEIR_LEASE_REFUSE) return 0;
        ask(lease, key, a.ask);
    }
    return 0;
}

static int admit_each(const char *key) {
    redisReply *r = redisCommand(redis, "WEIR.BUCKET %s %s %lld", key, rate, burst);
    commands++;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 5) die("WEIR.BUCKET");
    int allowed = r->element[0]->integer == 0;
    freeReplyObject(r);
    return allowed;
}

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: lease PORT lease|each KEYS RATE BURST PER_SECOND SECONDS [SEED]\n");
        return 2;
    }
    int port = atoi(argv[1]);
    int leased = strcmp(argv[2], "lease") == 0;
    long keys = atol(argv[3]);
    rate = argv[4];
    burst = atoll(argv[5]);
    double per_second = atof(argv[6]);
    double seconds = atof(argv[7]);
    uint64_t draw = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(argc > 8 ? atoll(argv[8]) : 0);
    if (keys < 1 || burst < 1 || per_second <= 0 || seconds <= 0) return 2;

    redis = redisConnect("127.0.0.1", port);
    if (!redis || redis->err) die("connect");

    /* One lease per key: a share of a quarter of the burst at most, asks
     * about every 100 ms, leases of TTL_MS. */
    weir_lease_policy policy = weir_lease_policy_preset();
    policy.burst = burst;
    policy.ttl_ns = TTL_MS * MS;
    weir_lease **leases = calloc((size_t)keys, sizeof *leases);
    if (!leases) return 1;
    int64_t start = now_ns();
    if (leased)
        for (long k = 0; k < keys; k++)
            if (weir_lease_new(&policy, start, &leases[k]) != WEIR_OK) die("weir_lease_new");

    long long total = (long long)(per_second * seconds);
    double gap = (double)SEC / per_second;
    long long admitted = 0;
    char key[32];
    for (long long i = 0; i < total; i++) {
        /* An absolute schedule: a late request does not push the rest. */
        int64_t due = start + (int64_t)((double)i * gap);
        struct timespec t = {(time_t)(due / SEC), (long)(due % SEC)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
        /* xorshift64: each request's key, uniform over the keys. */
        draw ^= draw << 13;
        draw ^= draw >> 7;
        draw ^= draw << 17;
        long k = (long)(draw % (uint64_t)keys);
        snprintf(key, sizeof key, "k:%ld", k);
        admitted += leased ? admit_leased(leases[k], key) : admit_each(key);
    }
    double elapsed = (double)(now_ns() - start) / SEC;

    long long expired = 0, asks = 0;
    if (leased) {
        int64_t end = now_ns();
        for (long k = 0; k < keys; k++) {
            weir_lease_stats s;
            weir_lease_read_stats(leases[k], end, &s);
            expired += (long long)s.expired;
            asks += (long long)s.asks;
            /* Give back what is live, then forget it. */
            int64_t back = weir_lease_release(leases[k], end);
            if (back > 0) {
                snprintf(key, sizeof key, "k:%ld", k);
                redisReply *r = redisCommand(redis, "WEIR.REFUND %s %lld", key, (long long)back);
                commands++;
                if (!r || r->type != REDIS_REPLY_INTEGER) die("WEIR.REFUND");
                refunded += back;
                freeReplyObject(r);
            }
            weir_lease_free(leases[k]);
        }
    }
    free(leases);
    redisFree(redis);
    printf("requests %lld admitted %lld commands %lld granted %lld expired %lld refunded %lld "
           "seconds %.3f\n",
           total, admitted, commands, granted_total, expired, refunded, elapsed);
    (void)asks;
    return 0;
}
