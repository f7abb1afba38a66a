/* weir_charge_all through the header: an organisation's, a team's and a
 * user's limits charged all or nothing (every kind of item: GCRA and rate
 * words, a bucket, bloom keys on the heap and in a region), the answer's
 * index, wait and kept, bad input, forked processes racing on shared words
 * (never more admitted than a limit holds, every unit spent an admitted
 * call's or a kept charge), and the nginx module's old read-then-charge
 * sequence: two workers, one unit left, both admitted, step by step; in
 * forked processes the same race is counted. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "weir.h"
#include "workers.h"

_Static_assert(_Alignof(weir_charge_item) == 8, "weir_charge_item is 8-aligned on every host");
_Static_assert(sizeof(weir_charge_item) == (sizeof(void *) == 8 ? 56 : 40), "weir_charge_item size");
_Static_assert(offsetof(weir_charge_item, kind) == 0, "kind");
_Static_assert(offsetof(weir_charge_item, reserved) == 4, "reserved");
_Static_assert(offsetof(weir_charge_item, cost) == 8, "cost, at 8 on every host");
_Static_assert(offsetof(weir_charge_item, target) == 16, "target");
_Static_assert(offsetof(weir_charge_item, target_len) == 16 + sizeof(void *), "target_len");
_Static_assert(offsetof(weir_charge_item, limit) == 16 + 2 * sizeof(void *), "limit");
_Static_assert(offsetof(weir_charge_item, key) == 16 + 3 * sizeof(void *), "key");
_Static_assert(offsetof(weir_charge_item, key_len) == 16 + 4 * sizeof(void *), "key_len");
_Static_assert(_Alignof(weir_charge_result) == 8, "weir_charge_result is 8-aligned on every host");
_Static_assert(sizeof(weir_charge_result) == 24, "weir_charge_result size");
_Static_assert(offsetof(weir_charge_result, wait) == 0, "wait");
_Static_assert(offsetof(weir_charge_result, index) == 8, "index");
_Static_assert(offsetof(weir_charge_result, kept) == 12, "kept");
_Static_assert(offsetof(weir_charge_result, admitted) == 16, "admitted");

#define SEC INT64_C(1000000000)

static weir_gcra_limit gcra_limit(double per_s, int64_t burst) {
    weir_gcra_limit limit;
    CHECK_STATUS(weir_gcra_limit_new(per_s, burst, &limit), WEIR_OK);
    return limit;
}

static weir_rate_limit rate_limit(double per_s, int64_t burst) {
    weir_rate_limit limit;
    CHECK_STATUS(weir_rate_limit_new(per_s, burst, &limit), WEIR_OK);
    return limit;
}

static weir_charge_item gcra_item(weir_gcra *word, const weir_gcra_limit *limit, double cost) {
    weir_charge_item item = {0};
    item.kind = WEIR_CHARGE_GCRA;
    item.target = word;
    item.limit = limit;
    item.cost = cost;
    return item;
}

static weir_charge_item rate_item(weir_rate *word, const weir_rate_limit *limit, double cost) {
    weir_charge_item item = {0};
    item.kind = WEIR_CHARGE_RATE;
    item.target = word;
    item.limit = limit;
    item.cost = cost;
    return item;
}

static weir_charge_item key_item(void *region, size_t len, const char *key, double cost) {
    weir_charge_item item = {0};
    item.kind = WEIR_CHARGE_BLOOM_IN;
    item.target = region;
    item.target_len = len;
    item.key = key;
    item.key_len = strlen(key);
    item.cost = cost;
    return item;
}

/* weir_charge_all's answer, WEIR_OK expected. */
static weir_charge_result charge(const weir_charge_item *items, size_t n, int64_t now) {
    weir_charge_result out;
    memset(&out, 0xAB, sizeof out);
    CHECK_STATUS(weir_charge_all(items, n, now, &out), WEIR_OK);
    return out;
}

static void a_hierarchy(void) {
    /* An organisation of 10 a second, a team of 5 (a window), a user of 2. */
    weir_gcra_limit org_limit = gcra_limit(10.0, 10), user_limit = gcra_limit(2.0, 2);
    weir_rate_limit team_limit = rate_limit(5.0, 5);
    weir_gcra org = {0}, user = {0};
    weir_rate team = {0};
    weir_charge_item items[3] = {gcra_item(&org, &org_limit, 1), rate_item(&team, &team_limit, 1),
                                 gcra_item(&user, &user_limit, 1)};
    for (int i = 0; i < 2; i++) {
        weir_charge_result r = charge(items, 3, SEC);
        CHECK(r.admitted && r.index == 3 && r.wait == 0 && r.kept == 0);
    }
    uint64_t before[2] = {org.state, team.state};
    /* The user's third: refused, the organisation and the team untouched. */
    weir_charge_result r = charge(items, 3, SEC);
    CHECK(!r.admitted && r.index == 2 && r.kept == 0);
    CHECK(r.wait == weir_gcra_next(&user, &user_limit, SEC) && r.wait == SEC / 2);
    CHECK(org.state == before[0] && team.state == before[1]);
    CHECK(weir_gcra_room(&org, &org_limit, SEC) == 8);
    /* Half a second later the user has one again. */
    CHECK(charge(items, 3, SEC + SEC / 2).admitted);
    CHECK(weir_gcra_room(&org, &org_limit, SEC + SEC / 2) == 9); /* full again, less one */
    /* A cost above a burst refuses for ever; nothing is admitted. */
    items[1].cost = 6;
    r = charge(items, 3, 10 * SEC);
    CHECK(!r.admitted && r.index == 1 && r.wait == INT64_MAX);
    items[1].cost = 1;
    for (int i = 0; i < 3; i++) {
        /* 2^63 and beyond: whole, more than any limit holds. */
        items[2].cost = (double[]){9223372036854775808.0, 1e300, 3.0}[i];
        r = charge(items, 3, 10 * SEC);
        CHECK(!r.admitted && r.index == 2 && r.wait == INT64_MAX);
    }
    CHECK(charge(items, 0, 10 * SEC).admitted);
    CHECK(charge(NULL, 0, 10 * SEC).admitted);
    /* Costs of several: the organisation's 10 in twos. */
    weir_gcra fresh = {0};
    weir_charge_item twos = gcra_item(&fresh, &org_limit, 2);
    for (int i = 0; i < 5; i++) CHECK(charge(&twos, 1, 0).admitted);
    CHECK(!charge(&twos, 1, 0).admitted);
}

static void every_kind(void) {
    weir_bucket *bucket;
    CHECK_STATUS(weir_bucket_new(1.0, 3.0, 0, &bucket), WEIR_OK);
    weir_rate_limit key_limit = rate_limit(1.0, 2);
    weir_bloom *bloom;
    CHECK_STATUS(weir_bloom_new(10, 2, &key_limit, 1, 2, &bloom), WEIR_OK);
    weir_gcra_limit gl = gcra_limit(1.0, 4);
    size_t len = weir_bloom_footprint(6);
    void *region = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(region != MAP_FAILED);
    CHECK_STATUS(weir_bloom_init_gcra_in(region, len, 6, 1, &gl, 3, 4), WEIR_OK);
    weir_gcra word = {0};

    weir_charge_item items[4] = {0};
    items[0] = gcra_item(&word, &gl, 1);
    items[1].kind = WEIR_CHARGE_BUCKET;
    items[1].target = bucket;
    items[1].cost = 1.5;
    items[2].kind = WEIR_CHARGE_BLOOM;
    items[2].target = bloom;
    items[2].key = "alice";
    items[2].key_len = 5;
    items[2].cost = 1;
    items[3] = key_item(region, len, "team-a", 2);
    /* The bucket holds 3: two calls of 1.5; the third is refused by it. */
    CHECK(charge(items, 4, 0).admitted);
    CHECK(charge(items, 4, 0).admitted);
    CHECK(weir_bucket_tokens(bucket, 0) == 0.0);
    weir_charge_result r = charge(items, 4, 0);
    CHECK(!r.admitted && r.index == 1 && r.wait == weir_bucket_next(bucket, 0, 1.5));
    /* Nothing else was spent: the word had 4, two calls took 2. */
    CHECK(weir_gcra_room(&word, &gl, 0) == 2);
    CHECK(weir_bloom_next(bloom, 0, "alice", 5) > 0); /* its burst of 2, both taken */
    CHECK(weir_bloom_next_in(region, len, 0, "team-a", 6) == SEC); /* 2 + 2 of 4 */
    weir_bucket_free(bucket);
    weir_bloom_free(bloom);
    CHECK(munmap(region, len) == 0);
}

static void bad_input(void) {
    weir_gcra_limit gl = gcra_limit(1.0, 2);
    /* A GCRA limit no weir_gcra_limit_new makes (all zero): reading another
     * struct in its place (a weir_rate_limit is smaller) would read past it. */
    weir_gcra_limit zero_gl = {0};
    weir_gcra word = {0}, other = {0};
    weir_charge_item items[2] = {gcra_item(&other, &gl, 1), gcra_item(&word, &gl, 1)};
    weir_charge_result out;
    /* NULL out: nothing charged. */
    CHECK_STATUS(weir_charge_all(items, 2, 0, NULL), WEIR_ERR_NULL);
    CHECK(word.state == 0 && other.state == 0);
    /* Each fault names its item and charges nothing, the good item before
     * it included. */
#define FAULT(field_set, status)                                          \
    do {                                                                  \
        weir_charge_item bad[2] = {gcra_item(&other, &gl, 1), items[1]}; \
        field_set;                                                        \
        memset(&out, 0, sizeof out);                                      \
        CHECK_STATUS(weir_charge_all(bad, 2, 0, &out), status);           \
        CHECK(out.index == 1 && !out.admitted);                           \
        CHECK(word.state == 0 && other.state == 0);                       \
    } while (0)
    FAULT(bad[1].kind = 0, WEIR_ERR_UNKNOWN_KIND);
    FAULT(bad[1].kind = 99, WEIR_ERR_UNKNOWN_KIND);
    FAULT(bad[1].reserved = 1, WEIR_ERR_RESERVED);
    FAULT(bad[1].target = NULL, WEIR_ERR_NULL);
    FAULT(bad[1].target = (char *)&word + 1, WEIR_ERR_MISALIGNED);
    FAULT(bad[1].limit = NULL, WEIR_ERR_NULL);
    FAULT(bad[1].limit = &zero_gl, WEIR_ERR_GCRA_LIMIT_INVALID);
    FAULT(bad[1].cost = 0, WEIR_ERR_CHARGE_COST);
    FAULT(bad[1].cost = -1, WEIR_ERR_CHARGE_COST);
    FAULT(bad[1].cost = 1.5, WEIR_ERR_CHARGE_COST);
    FAULT(bad[1].cost = NAN, WEIR_ERR_CHARGE_COST);
    FAULT(bad[1].cost = INFINITY, WEIR_ERR_CHARGE_COST);
    FAULT((bad[1].kind = WEIR_CHARGE_RATE, bad[1].limit = &gl), WEIR_ERR_RATE_LIMIT_INVALID);
    FAULT((bad[1].kind = WEIR_CHARGE_BUCKET, bad[1].target = NULL), WEIR_ERR_NULL);
    FAULT((bad[1].kind = WEIR_CHARGE_BLOOM, bad[1].target = NULL), WEIR_ERR_NULL);
    static uint64_t not_a_region[64] __attribute__((aligned(64)));
    FAULT((bad[1].kind = WEIR_CHARGE_BLOOM_IN, bad[1].target = not_a_region,
           bad[1].target_len = sizeof not_a_region, bad[1].key = "k", bad[1].key_len = 1),
          WEIR_ERR_BLOOM_FOREIGN);
    FAULT((bad[1].kind = WEIR_CHARGE_BLOOM_IN, bad[1].target = (char *)not_a_region + 8,
           bad[1].target_len = 64),
          WEIR_ERR_MISALIGNED);
#undef FAULT
    /* Too many; NULL items with n > 0; a misaligned array. */
    weir_charge_item many[WEIR_CHARGE_MAX_ITEMS + 1];
    for (int i = 0; i <= WEIR_CHARGE_MAX_ITEMS; i++) many[i] = gcra_item(&word, &gl, 1);
    CHECK_STATUS(weir_charge_all(many, WEIR_CHARGE_MAX_ITEMS + 1, 0, &out), WEIR_ERR_CHARGE_TOO_MANY);
    CHECK(out.index == WEIR_CHARGE_MAX_ITEMS + 1);
    CHECK_STATUS(weir_charge_all(NULL, 1, 0, &out), WEIR_ERR_NULL);
    CHECK_STATUS(weir_charge_all((const weir_charge_item *)((char *)many + 4), 1, 0, &out),
                 WEIR_ERR_MISALIGNED);
    CHECK(word.state == 0);
    /* Sixteen of one word of burst 2: read as admitting each, refused at
     * the third charge, the two before given back. */
    weir_charge_result r = charge(many, WEIR_CHARGE_MAX_ITEMS, 0);
    CHECK(!r.admitted && r.index == 2 && r.kept == 0 && r.wait == SEC);
    CHECK(word.state == 0);
}

/* ---- forked processes on shared words ---- */

enum { WORKERS = 4, ROUNDS = 60, CALLS = 24, USERS = 4 };

/* The organisation, two teams (a window each), four users (two a team,
 * keys of a bloom region), the admitted counts and the kept charges: one
 * page shared by the parent and its workers. */
struct race {
    weir_gcra org;
    weir_rate teams[2];
    weir_gcra_limit org_limit;
    weir_rate_limit team_limit;
    weir_gcra_limit user_limit;
    long admitted[1 + 2 + USERS];
    long kept;
    int read_then_charge;
    size_t region_len;
    unsigned char region[] __attribute__((aligned(64)));
};

static const char *const user_keys[USERS] = {"ann", "bob", "cy", "dee"};

/* One worker's calls, all at one instant (nothing refills): through
 * weir_charge_all, or, with read_then_charge, as the nginx module judged
 * several limits before (read all, charge the last, then the ones read,
 * a lost charge admitting all the same). */
static long race_calls(void *arg) {
    struct race *s = arg;
    int me = (int)(getpid() % 7919);
    for (int i = 0; i < CALLS; i++) {
        int user = (me + i) % USERS, team = user / 2;
        weir_charge_item items[3] = {
            gcra_item(&s->org, &s->org_limit, 1), rate_item(&s->teams[team], &s->team_limit, 1),
            key_item(s->region, s->region_len, user_keys[user], 1)};
        int path[3] = {0, 1 + team, 3 + user};
        int admitted;
        if (s->read_then_charge) {
            admitted = weir_gcra_next(&s->org, &s->org_limit, SEC) == 0 &&
                       weir_rate_next(&s->teams[team], &s->team_limit, SEC) == 0 &&
                       weir_bloom_allow_in(s->region, s->region_len, SEC, user_keys[user],
                                           strlen(user_keys[user]));
            if (admitted) {
                (void)weir_gcra_allow(&s->org, &s->org_limit, SEC);
                (void)weir_rate_allow(&s->teams[team], &s->team_limit, SEC);
            }
        } else {
            /* Half the calls name the user first. */
            if (i % 2) {
                weir_charge_item t = items[0];
                items[0] = items[2];
                items[2] = t;
            }
            weir_charge_result r = charge(items, 3, SEC);
            admitted = r.admitted;
            __atomic_fetch_add(&s->kept, (long)r.kept, __ATOMIC_RELAXED);
        }
        if (admitted)
            for (int p = 0; p < 3; p++) __atomic_fetch_add(&s->admitted[path[p]], 1, __ATOMIC_RELAXED);
    }
    return 0;
}

/* Units spent on each limit at SEC: its burst less what it would still
 * admit. */
static long spent(struct race *s, int limit) {
    if (limit == 0) return 5 - weir_gcra_room(&s->org, &s->org_limit, SEC);
    if (limit <= 2) {
        weir_rate copy = s->teams[limit - 1];
        long left = 0;
        while (left < 10 && weir_rate_allow(&copy, &s->team_limit, SEC)) left++;
        return 3 - left;
    }
    /* A key of one word: its burst (2) less what it would admit, on a copy. */
    static unsigned char copy[1 << 14] __attribute__((aligned(64)));
    CHECK(s->region_len <= sizeof copy);
    memcpy(copy, s->region, s->region_len);
    const char *key = user_keys[limit - 3];
    long left = 0;
    while (left < 10 && weir_bloom_allow_in(copy, s->region_len, SEC, key, strlen(key))) left++;
    return 2 - left;
}

static void processes(void) {
    size_t region_len = weir_bloom_footprint(10);
    size_t size = 4096 + region_len;
    struct race *s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    long over[2] = {0, 0}, kept = 0, admitted = 0;
    for (int mode = 0; mode < 2; mode++) {
        for (int round = 0; round < ROUNDS; round++) {
            memset(s, 0, size);
            /* The organisation holds 5, each team 3, each user 2: 8 users'
             * worth, so every limit refuses some. */
            s->org_limit = gcra_limit(1.0, 5);
            s->team_limit = rate_limit(1.0, 3);
            s->user_limit = gcra_limit(1.0, 2);
            s->region_len = region_len;
            s->read_then_charge = mode;
            CHECK_STATUS(weir_bloom_init_gcra_in(s->region, region_len, 10, 1, &s->user_limit, 7, 8), WEIR_OK);
            fork_workers(WORKERS, race_calls, s);
            const long bursts[1 + 2 + USERS] = {5, 3, 3, 2, 2, 2, 2};
            long beyond = 0;
            for (int l = 0; l < 1 + 2 + USERS; l++) {
                if (s->admitted[l] > bursts[l]) beyond++;
                if (mode == 0) {
                    /* Never more admitted than held, and every unit spent is
                     * an admitted call's or a kept charge. */
                    CHECK(s->admitted[l] <= bursts[l]);
                    CHECK(spent(s, l) >= s->admitted[l]);
                    kept -= spent(s, l) - s->admitted[l];
                }
            }
            if (mode == 0) {
                kept += s->kept;
                CHECK(kept == 0);
                admitted += s->admitted[0];
            }
            over[mode] += beyond > 0;
        }
    }
    printf("processes: %d rounds of %d forked workers x %d calls, org/team/user limits of 5/3/2: "
           "charge_all admitted %ld calls, none beyond a limit; read then charge went beyond a limit "
           "in %ld of %d rounds\n",
           ROUNDS, WORKERS, CALLS, admitted, over[1], ROUNDS);
    CHECK(over[0] == 0);
    CHECK(munmap(s, size) == 0);
}

/* Two workers, one unit left: the interleaving the nginx module's comment
 * names, step by step. */
static void read_then_charge_two_for_one(void) {
    weir_gcra_limit one = gcra_limit(1.0, 1);
    weir_gcra org = {0}, users[2] = {{0}, {0}};
    /* Both read room. */
    int reads[2];
    for (int w = 0; w < 2; w++)
        reads[w] = weir_gcra_next(&org, &one, SEC) == 0 && weir_gcra_next(&users[w], &one, SEC) == 0;
    /* Both charge: the last limit, then the one read (a lost charge admits
     * all the same). */
    int admitted = 0;
    for (int w = 0; w < 2; w++) {
        if (reads[w] && weir_gcra_allow(&users[w], &one, SEC)) {
            (void)weir_gcra_allow(&org, &one, SEC);
            admitted++;
        }
    }
    CHECK(admitted == 2);
    /* weir_charge_all: one. */
    weir_gcra org2 = {0}, users2[2] = {{0}, {0}};
    admitted = 0;
    for (int w = 0; w < 2; w++) {
        weir_charge_item items[2] = {gcra_item(&org2, &one, 1), gcra_item(&users2[w], &one, 1)};
        admitted += charge(items, 2, SEC).admitted;
    }
    CHECK(admitted == 1);
    CHECK(weir_gcra_room(&users2[1], &one, SEC) == 1);
    printf("two workers, one unit left: read then charge admitted 2, weir_charge_all 1\n");
}

int main(void) {
    a_hierarchy();
    every_kind();
    bad_input();
    read_then_charge_two_for_one();
    if (weir_words_shareable() == WEIR_OK) processes();
    CHECK_DONE();
}
