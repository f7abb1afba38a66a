/* Shared handles (weir_X_init_shared, weir_X_attach) between forked
 * processes: a breaker and a bucket laid once in a MAP_SHARED region and
 * attached by each worker; exact counts across four processes; every
 * kind of bad region (random bytes, another magic, layout, type, build,
 * size, shape, a damaged header, short or misaligned memory) refused with
 * its status; and workers killed with SIGKILL at random points of their
 * loops, after which the others carry on (an alarm fails the test if any
 * call blocks) and the bounds hold. The kill loop runs a short form (25
 * kills each for the breaker, shedder and bucket, 5 for each other type);
 * with WEIR_LONG=1 in the environment, 300 kills for every type. Where
 * the kernel keeps no robust-futex list (qemu-user), the locked types are
 * refused with WEIR_ERR_REGION_UNSUPPORTED and only the bucket and the
 * gate, which take no lock, are shared and killed. */
#define _DEFAULT_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "weir.h"
#include "workers.h"

enum { WORKERS = 4, TAKES = 2000, REGION = 1 << 16 };

static void *map_region(size_t bytes) {
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED);
    return mem;
}

/* The header's checksum, for tests that change a field and want only
 * that field's check to answer. */
static uint64_t fnv(const void *bytes, size_t len) {
    const unsigned char *at = bytes;
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) hash = (hash ^ at[i]) * 0x100000001b3ull;
    return hash;
}

static void reseal(weir_region_header *header) {
    header->check = 0;
    header->check = fnv(header, sizeof *header);
}

static uint64_t next_random(uint64_t *state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static void *region;

/* Whether the kernel releases a dying process's robust mutexes: it keeps
 * each thread's robust-futex list, which qemu-user does not. */
static bool robust_futexes(void) {
    void *head = NULL;
    size_t len = 0;
    return syscall(SYS_get_robust_list, 0, &head, &len) == 0;
}

/* Cleared where there are no robust futexes: only the lock-free types run. */
static bool locks_shared = true;

/* Each worker attaches on its own and takes from the one bucket. */
static long take_all(void *arg) {
    (void)arg;
    weir_bucket *bucket = NULL;
    CHECK_STATUS(weir_bucket_attach(region, REGION, &bucket), WEIR_OK);
    long got = 0;
    for (int i = 0; i < TAKES; i++) got += weir_bucket_take(bucket, 5, 1.0);
    return got;
}

/* Each worker lets calls through the one breaker and settles them. */
static long pass_all(void *arg) {
    (void)arg;
    weir_breaker *breaker = NULL;
    CHECK_STATUS(weir_breaker_attach(region, REGION, &breaker), WEIR_OK);
    long passed = 0;
    for (int i = 0; i < TAKES; i++) {
        weir_breaker_ticket ticket;
        if (weir_breaker_allow(breaker, 1000 + i, 0.5, &ticket)) {
            CHECK_STATUS(weir_breaker_pass(breaker, &ticket, 1000 + i), WEIR_OK);
            passed++;
        }
    }
    return passed;
}

/* Each worker holds 100 calls in flight through the one shedder: it sees
 * the other workers' calls too. */
static long hold_calls(void *arg) {
    (void)arg;
    weir_shedder *shedder = NULL;
    CHECK_STATUS(weir_shedder_attach(region, REGION, &shedder), WEIR_OK);
    long held = 0;
    for (int i = 0; i < 100; i++) {
        weir_shedder_ticket ticket;
        held += weir_shedder_allow(shedder, 1000, 0, &ticket);
    }
    return held;
}

/* Each worker enters the one gate and takes from the one period counter,
 * 100 times each, leaving nothing. */
static long enter_all(void *arg) {
    (void)arg;
    weir_gate *gate = NULL;
    CHECK_STATUS(weir_gate_attach(region, REGION, &gate), WEIR_OK);
    long in = 0;
    for (int i = 0; i < 100; i++) in += weir_gate_enter(gate);
    return in;
}

static long take_period(void *arg) {
    (void)arg;
    weir_period *period = NULL;
    CHECK_STATUS(weir_period_attach(region, REGION, &period), WEIR_OK);
    long got = 0;
    for (int i = 0; i < TAKES; i++) got += weir_period_take(period, 7) != WEIR_PERIOD_QUOTA_OVER;
    return got;
}

static long take_sliding(void *arg) {
    (void)arg;
    weir_sliding *sliding = NULL;
    CHECK_STATUS(weir_sliding_attach(region, REGION, &sliding), WEIR_OK);
    long got = 0;
    for (int i = 0; i < TAKES; i++) got += weir_sliding_take(sliding, 7);
    return got;
}

static long add_window(void *arg) {
    (void)arg;
    weir_window *window = NULL;
    CHECK_STATUS(weir_window_attach(region, REGION, &window), WEIR_OK);
    for (int i = 0; i < 100; i++) CHECK_STATUS(weir_window_add(window, 7, 3), WEIR_OK);
    return 100;
}

static void exact_across_processes(void) {
    region = map_region(REGION);
    size_t bytes = 0, align = 0;
    CHECK_STATUS(weir_bucket_shared_footprint(&bytes, &align), WEIR_OK);
    CHECK(bytes > WEIR_REGION_HEADER_BYTES && bytes <= REGION && align == WEIR_REGION_ALIGN);
    weir_bucket *bucket = NULL;
    /* No refill, 1000 tokens: four workers asking 2000 each get 1000 in all. */
    CHECK_STATUS(weir_bucket_init_shared(region, bytes, 1.0, 1000.0, 0, &bucket), WEIR_OK);
    const weir_region_header *header = region;
    CHECK(header->magic == WEIR_REGION_MAGIC && header->layout == WEIR_REGION_LAYOUT);
    CHECK(header->kind == WEIR_REGION_BUCKET && header->bytes == bytes);
    CHECK(fork_workers(WORKERS, take_all, NULL) == 1000);
    CHECK(weir_bucket_take(bucket, 5, 1.0) == false);

    CHECK_STATUS(weir_breaker_shared_footprint(NULL, &bytes, &align), WEIR_OK);
    CHECK(bytes <= REGION && align == WEIR_REGION_ALIGN);
    weir_breaker *breaker = NULL;
    CHECK_STATUS(weir_breaker_init_shared(region, REGION, NULL, 0, &breaker), WEIR_OK);
    CHECK(fork_workers(WORKERS, pass_all, NULL) == WORKERS * TAKES);
    weir_breaker_tally tally;
    CHECK_STATUS(weir_breaker_read_tally(breaker, 1000 + TAKES, &tally), WEIR_OK);
    CHECK(tally.total == WORKERS * TAKES && tally.success == WORKERS * TAKES);
    weir_recoveries recoveries;
    CHECK_STATUS(weir_breaker_recoveries(breaker, &recoveries), WEIR_OK);
    CHECK(recoveries.recovered == 0 && recoveries.reset == 0);
    /* A ticket handed out in one process settles in another. */
    weir_breaker_ticket ticket;
    CHECK(weir_breaker_allow(breaker, 9000, 0.5, &ticket));
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        weir_breaker *mine = NULL;
        if (weir_breaker_attach(region, REGION, &mine) != WEIR_OK) _exit(1);
        _exit(weir_breaker_fail(mine, &ticket, 9000) == WEIR_OK ? 0 : 2);
    }
    int status;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_STATUS(weir_breaker_read_tally(breaker, 9000, &tally), WEIR_OK);
    CHECK(tally.failure == 1);
    weir_shedder *shedder = NULL;
    CHECK_STATUS(weir_shedder_shared_footprint(NULL, &bytes, &align), WEIR_OK);
    CHECK(bytes <= REGION && align == WEIR_REGION_ALIGN);
    CHECK_STATUS(weir_shedder_init_shared(region, bytes, NULL, 0, &shedder), WEIR_OK);
    CHECK(fork_workers(WORKERS, hold_calls, NULL) == WORKERS * 100);
    CHECK(weir_shedder_flying(shedder) == WORKERS * 100);
    CHECK_STATUS(weir_breaker_attach(region, REGION, &breaker), WEIR_ERR_REGION_KIND);
    /* A pool is never shared: its attach refuses any region. */
    weir_pool *pool = NULL;
    CHECK_STATUS(weir_pool_attach(region, REGION, &pool), WEIR_ERR_REGION_POOL);
    CHECK(pool == NULL);
    CHECK_STATUS(weir_pool_attach(NULL, REGION, &pool), WEIR_ERR_NULL);
    CHECK_STATUS(weir_pool_attach(region, REGION, NULL), WEIR_ERR_NULL);
    weir_gate *gate = NULL;
    CHECK_STATUS(weir_gate_shared_footprint(&bytes, &align), WEIR_OK);
    CHECK_STATUS(weir_gate_init_shared(region, bytes, 10, &gate), WEIR_OK);
    CHECK(fork_workers(WORKERS, enter_all, NULL) == 10);
    CHECK(weir_gate_enter(gate) == false);
    weir_period *period = NULL;
    CHECK_STATUS(weir_period_shared_footprint(&bytes, &align), WEIR_OK);
    CHECK_STATUS(weir_period_init_shared(region, bytes, 1000, 3600 * 1000000000ll, false, &period),
                 WEIR_OK);
    CHECK(fork_workers(WORKERS, take_period, NULL) == 1000);
    CHECK(weir_period_take(period, 7) == WEIR_PERIOD_QUOTA_OVER);
    CHECK_STATUS(weir_period_recoveries(period, &recoveries), WEIR_OK);
    CHECK(recoveries.recovered == 0);
    CHECK_STATUS(weir_gate_attach(region, REGION, &gate), WEIR_ERR_REGION_KIND);
    weir_sliding *sliding = NULL;
    CHECK_STATUS(weir_sliding_init_shared(region, REGION, 1000, 3600 * 1000000000ll, &sliding), WEIR_OK);
    CHECK(fork_workers(WORKERS, take_sliding, NULL) == 1000);
    CHECK(weir_sliding_take(sliding, 7) == false);
    /* A shared handle's policy is its region's: no reconfiguration. */
    CHECK_STATUS(weir_sliding_reconfigure(sliding, 2000, 3600 * 1000000000ll), WEIR_ERR_REGION_UNSUPPORTED);
    CHECK(weir_sliding_take(sliding, 8) == false);
    weir_window *window = NULL;
    CHECK_STATUS(weir_window_init_shared(region, REGION, 10, 1000000000, 0, &window), WEIR_OK);
    CHECK(fork_workers(WORKERS, add_window, NULL) == WORKERS * 100);
    weir_window_total total;
    CHECK_STATUS(weir_window_read_total(window, 7, true, &total), WEIR_OK);
    CHECK(total.count == WORKERS * 100 && total.sum == WORKERS * 300);
    CHECK_STATUS(weir_window_recoveries(window, &recoveries), WEIR_OK);
    CHECK(recoveries.recovered == 0);
    weir_budget *budget = NULL;
    weir_budget_policy budget_policy = weir_budget_policy_preset();
    CHECK_STATUS(weir_budget_init_shared(region, REGION, &budget_policy, 0, &budget), WEIR_OK);
    CHECK_STATUS(weir_budget_attach(region, REGION, &budget), WEIR_OK);
    weir_concurrency *limit = NULL;
    CHECK_STATUS(weir_concurrency_init_shared(region, REGION, NULL, &limit), WEIR_OK);
    CHECK_STATUS(weir_concurrency_attach(region, REGION, &limit), WEIR_OK);
    CHECK_STATUS(weir_budget_attach(region, REGION, &budget), WEIR_ERR_REGION_KIND);
    /* A heap breaker is not shared: its recoveries read zero. */
    weir_breaker *heap = NULL;
    CHECK_STATUS(weir_breaker_new(NULL, 0, &heap), WEIR_OK);
    CHECK_STATUS(weir_breaker_recoveries(heap, &recoveries), WEIR_OK);
    CHECK(recoveries.recovered == 0);
    CHECK_STATUS(weir_breaker_recoveries(NULL, &recoveries), WEIR_ERR_NULL);
    CHECK_STATUS(weir_breaker_recoveries(heap, NULL), WEIR_ERR_NULL);
    weir_breaker_free(heap);
    CHECK(munmap(region, REGION) == 0);
}

/* Every bad region is refused by status and nothing is written to out. */
static void bad_regions_refused(void) {
    unsigned char *mem = map_region(REGION);
    weir_breaker *breaker = NULL;
    weir_bucket *bucket = NULL;
    weir_breaker *untouched = (weir_breaker *)&breaker;

    /* Random bytes, many times over: never a handle. */
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 2000; round++) {
        for (size_t i = 0; i < 4096; i += 8) {
            uint64_t word = next_random(&seed);
            memcpy(mem + i, &word, 8);
        }
        if (round % 2) {
            /* The right magic and layout on random bytes: the checksum
             * refuses. */
            uint64_t magic = WEIR_REGION_MAGIC;
            uint32_t layout = WEIR_REGION_LAYOUT;
            memcpy(mem, &magic, 8);
            memcpy(mem + 8, &layout, 4);
        }
        breaker = untouched;
        weir_status got = weir_breaker_attach(mem, REGION, &breaker);
        CHECK(got == WEIR_ERR_REGION_FOREIGN);
        CHECK(breaker == untouched);
        CHECK(weir_bucket_attach(mem, REGION, &bucket) == WEIR_ERR_REGION_FOREIGN);
    }

    CHECK_STATUS(weir_breaker_init_shared(mem, REGION, NULL, 0, &breaker), WEIR_OK);
    weir_region_header *header = (weir_region_header *)mem;
    weir_region_header good = *header;
    CHECK_STATUS(weir_breaker_attach(mem, REGION, &breaker), WEIR_OK);

    /* Another type. */
    CHECK_STATUS(weir_bucket_attach(mem, REGION, &bucket), WEIR_ERR_REGION_KIND);
    /* Another layout version (checked before the checksum). */
    header->layout = WEIR_REGION_LAYOUT + 1;
    CHECK_STATUS(weir_breaker_attach(mem, REGION, &breaker), WEIR_ERR_REGION_LAYOUT);
    /* A damaged field without its checksum. */
    *header = good;
    header->slots += 1;
    CHECK_STATUS(weir_breaker_attach(mem, REGION, &breaker), WEIR_ERR_REGION_FOREIGN);
    /* Another build's layout. */
    *header = good;
    header->build ^= 1;
    reseal(header);
    CHECK_STATUS(weir_breaker_attach(mem, REGION, &breaker), WEIR_ERR_REGION_BUILD);
    /* A size that is not the slots'. */
    *header = good;
    header->bytes += 64;
    reseal(header);
    CHECK_STATUS(weir_breaker_attach(mem, REGION, &breaker), WEIR_ERR_REGION_SIZE);
    /* Slots no breaker can have. */
    *header = good;
    header->slots = 0;
    reseal(header);
    CHECK_STATUS(weir_breaker_attach(mem, REGION, &breaker), WEIR_ERR_REGION_SIZE);
    header->slots = UINT64_MAX;
    reseal(header);
    CHECK_STATUS(weir_breaker_attach(mem, REGION, &breaker), WEIR_ERR_REGION_SIZE);
    /* A header whose slots and size agree, over a breaker with others:
     * the handle does not match it. */
    weir_breaker_policy small = weir_breaker_policy_preset();
    small.size = 20;
    size_t small_bytes = 0, align = 0;
    CHECK_STATUS(weir_breaker_shared_footprint(&small, &small_bytes, &align), WEIR_OK);
    *header = good;
    header->slots = 20;
    header->bytes = small_bytes;
    reseal(header);
    CHECK_STATUS(weir_breaker_attach(mem, REGION, &breaker), WEIR_ERR_REGION_SHAPE);
    /* Memory shorter than the region, or than a header; misaligned. */
    *header = good;
    CHECK_STATUS(weir_breaker_attach(mem, good.bytes - 1, &breaker), WEIR_ERR_REGION_SIZE);
    CHECK_STATUS(weir_breaker_attach(mem, 100, &breaker), WEIR_ERR_REGION_SIZE);
    CHECK_STATUS(weir_breaker_attach(mem + 8, REGION - 8, &breaker), WEIR_ERR_PLACED_MISALIGNED);
    CHECK_STATUS(weir_breaker_attach(NULL, REGION, &breaker), WEIR_ERR_NULL);
    CHECK_STATUS(weir_breaker_attach(mem, REGION, NULL), WEIR_ERR_NULL);
    CHECK_STATUS(weir_breaker_attach(mem, good.bytes, &breaker), WEIR_OK);

    /* A bloom array's region is another type. */
    weir_rate_limit limit;
    CHECK_STATUS(weir_rate_limit_new(100, 10, &limit), WEIR_OK);
    CHECK_STATUS(weir_bloom_init_in(mem, REGION, 6, 2, &limit, 1, 2), WEIR_OK);
    CHECK_STATUS(weir_breaker_attach(mem, REGION, &breaker), WEIR_ERR_REGION_KIND);

    /* Laying: short and misaligned memory, a bad policy: nothing written. */
    memset(mem, 0x5a, 4096);
    CHECK_STATUS(weir_breaker_init_shared(mem, 100, NULL, 0, &breaker), WEIR_ERR_PLACED_TOO_SMALL);
    CHECK_STATUS(weir_breaker_init_shared(mem, good.bytes - 1, NULL, 0, &breaker),
                 WEIR_ERR_PLACED_TOO_SMALL);
    CHECK_STATUS(weir_breaker_init_shared(mem + 8, REGION - 8, NULL, 0, &breaker),
                 WEIR_ERR_PLACED_MISALIGNED);
    small.floor = 0;
    CHECK_STATUS(weir_breaker_init_shared(mem, REGION, &small, 0, &breaker), WEIR_ERR_BREAKER_FLOOR);
    CHECK_STATUS(weir_bucket_init_shared(mem, REGION, -1, 1, 0, &bucket), WEIR_ERR_NEGATIVE);
    for (int i = 0; i < 4096; i++) CHECK(mem[i] == 0x5a);
    CHECK(munmap(mem, REGION) == 0);
}

static volatile sig_atomic_t stop_loop;

/* A worker's endless loop on the shared breaker, with time moving on and
 * a backend failing half the time; it never exits by itself. */
static void breaker_loop(int worker) {
    weir_breaker *breaker = NULL;
    if (weir_breaker_attach(region, REGION, &breaker) != WEIR_OK) _exit(3);
    uint64_t seed = 0x1234567ull + (uint64_t)worker * 7919 + (uint64_t)getpid();
    for (int64_t now = 0;; now += 1000) {
        weir_breaker_ticket ticket;
        if (weir_breaker_allow(breaker, now, (next_random(&seed) >> 11) * 0x1.0p-53, &ticket)) {
            weir_status settled = next_random(&seed) & 1 ? weir_breaker_pass(breaker, &ticket, now)
                                                        : weir_breaker_fail(breaker, &ticket, now);
            /* A recovery answers its own status; a reset settles the
             * calls in flight. Anything else is a bug. */
            if (settled != WEIR_OK && settled != WEIR_ERR_REGION_RECOVERED &&
                settled != WEIR_ERR_SETTLED)
                _exit(4);
        }
    }
}

/* A worker's endless loop on the shared shedder: calls let through and
 * settled, passed or failed, with the CPU reading moving. */
static void shedder_loop(int worker) {
    weir_shedder *shedder = NULL;
    if (weir_shedder_attach(region, REGION, &shedder) != WEIR_OK) _exit(3);
    uint64_t seed = 0x7654321ull + (uint64_t)worker * 7919 + (uint64_t)getpid();
    for (int64_t now = 0;; now += 1000) {
        weir_shedder_ticket ticket;
        if (weir_shedder_allow(shedder, now, (int32_t)(next_random(&seed) % 1000), &ticket)) {
            weir_status settled = next_random(&seed) & 1 ? weir_shedder_pass(shedder, &ticket, now)
                                                        : weir_shedder_fail(shedder, &ticket);
            if (settled != WEIR_OK && settled != WEIR_ERR_REGION_RECOVERED) _exit(4);
        }
    }
}

/* Counted takes: `counted[w]` is what worker w's takes got, written after
 * each take (a kill between the two loses one, never adds one). */
static void bucket_loop(int worker, long *counted) {
    weir_bucket *bucket = NULL;
    if (weir_bucket_attach(region, REGION, &bucket) != WEIR_OK) _exit(3);
    for (;;) {
        if (weir_bucket_take(bucket, 5, 1.0)) __atomic_add_fetch(&counted[worker], 1, __ATOMIC_RELAXED);
    }
}

static pid_t start_worker(int type, int worker, long *counted) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (type == 0) breaker_loop(worker);
        if (type == 2) shedder_loop(worker);
        bucket_loop(worker, counted);
    }
    return pid;
}

static void sleep_us(long us) {
    struct timespec pause = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&pause, NULL);
}

/* Kills a random worker at a random point, `kills` times, restarting it;
 * after each kill this process calls the handle itself (an alarm bounds
 * every call). */
static void kills_leave_the_rest_running(int kills) {
    for (int type = 0; type < 3; type++) {
        if (!locks_shared && type != 1) continue;
        region = map_region(REGION);
        long *counted = map_region(4096);
        weir_breaker *breaker = NULL;
        weir_bucket *bucket = NULL;
        weir_shedder *shedder = NULL;
        const double burst = 1e8;
        if (type == 0)
            CHECK_STATUS(weir_breaker_init_shared(region, REGION, NULL, 0, &breaker), WEIR_OK);
        else if (type == 2)
            CHECK_STATUS(weir_shedder_init_shared(region, REGION, NULL, 0, &shedder), WEIR_OK);
        else
            CHECK_STATUS(weir_bucket_init_shared(region, REGION, 0.0, burst, 0, &bucket), WEIR_OK);
        pid_t pids[WORKERS];
        for (int w = 0; w < WORKERS; w++) pids[w] = start_worker(type, w, counted);
        uint64_t seed = 42 + (uint64_t)type;
        int recovered_calls = 0;
        for (int k = 0; k < kills; k++) {
            sleep_us(200 + (long)(next_random(&seed) % 3000));
            int w = (int)(next_random(&seed) % WORKERS);
            CHECK(kill(pids[w], SIGKILL) == 0);
            int status;
            CHECK(waitpid(pids[w], &status, 0) == pids[w]);
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
            alarm(10);
            if (type == 0) {
                weir_breaker_tally tally;
                weir_status read = weir_breaker_read_tally(breaker, INT64_MAX / 2, &tally);
                CHECK(read == WEIR_OK || read == WEIR_ERR_REGION_RECOVERED);
                recovered_calls += read == WEIR_ERR_REGION_RECOVERED;
                if (read == WEIR_OK)
                    CHECK(tally.total == tally.success + tally.failure + tally.drop);
            } else if (type == 2) {
                weir_shedder_ticket ticket;
                (void)weir_shedder_allow(shedder, INT64_MAX / 2, 0, &ticket);
                CHECK(weir_shedder_flying(shedder) >= 0);
            } else {
                (void)weir_bucket_tokens(bucket, 5);
            }
            alarm(0);
            pids[w] = start_worker(type, w, counted);
        }
        for (int w = 0; w < WORKERS; w++) {
            int status;
            CHECK(kill(pids[w], SIGKILL) == 0);
            CHECK(waitpid(pids[w], &status, 0) == pids[w]);
            /* A worker that failed a check exited by itself first. */
            CHECK(WIFSIGNALED(status));
        }
        alarm(10);
        if (type == 0) {
            weir_recoveries recoveries;
            CHECK_STATUS(weir_breaker_recoveries(breaker, &recoveries), WEIR_OK);
            CHECK(recoveries.reset <= recoveries.recovered);
            CHECK((long)recovered_calls <= (long)recoveries.recovered);
            weir_breaker_tally tally;
            weir_status read;
            while ((read = weir_breaker_read_tally(breaker, 0, &tally)) == WEIR_ERR_REGION_RECOVERED) {
            }
            CHECK_STATUS(read, WEIR_OK);
            CHECK(tally.total == tally.success + tally.failure + tally.drop);
            printf("breaker: %d kills, %llu recoveries (%llu resets)\n", kills,
                   (unsigned long long)recoveries.recovered, (unsigned long long)recoveries.reset);
        } else if (type == 2) {
            weir_recoveries recoveries;
            CHECK_STATUS(weir_shedder_recoveries(shedder, &recoveries), WEIR_OK);
            CHECK(recoveries.reset <= recoveries.recovered);
            printf("shedder: %d kills, %llu recoveries (%llu resets), %lld in flight\n", kills,
                   (unsigned long long)recoveries.recovered, (unsigned long long)recoveries.reset,
                   (long long)weir_shedder_flying(shedder));
        } else {
            long total = 0;
            for (int w = 0; w < WORKERS; w++) total += counted[w];
            double left = weir_bucket_tokens(bucket, 5);
            /* No refill: what the workers counted and what is left never
             * exceed the burst (each kill may lose one counted take). */
            CHECK(total >= 0 && (double)total + left <= burst);
            CHECK((double)total + left >= burst - kills - 1);
            printf("bucket: %d kills, %ld takes counted, %.0f left of %.0f\n", kills, total, left,
                   burst);
        }
        alarm(0);
        CHECK(munmap(counted, 4096) == 0);
        CHECK(munmap(region, REGION) == 0);
    }
}

/* The other types under the same kills: a period counter, sliding window,
 * window, retry budget, adaptive limit and gate, each shared by four
 * looping workers. Counted admissions never pass a quota; a window holds
 * every counted add and at most one more per kill; nobody blocks. */
enum { BIG = 1 << 21, QUOTA = 100000 };

static void other_loop(int type, int worker, long *counted) {
    void *handle = NULL;
    weir_status attached;
    switch (type) {
    case 0: attached = weir_period_attach(region, BIG, (weir_period **)&handle); break;
    case 1: attached = weir_sliding_attach(region, BIG, (weir_sliding **)&handle); break;
    case 2: attached = weir_window_attach(region, BIG, (weir_window **)&handle); break;
    case 3: attached = weir_budget_attach(region, BIG, (weir_budget **)&handle); break;
    case 4: attached = weir_concurrency_attach(region, BIG, (weir_concurrency **)&handle); break;
    default: attached = weir_gate_attach(region, BIG, (weir_gate **)&handle); break;
    }
    if (attached != WEIR_OK) _exit(3);
    for (int64_t now = 7;; now++) {
        int admitted = 0;
        switch (type) {
        case 0: admitted = weir_period_take(handle, 7) != WEIR_PERIOD_QUOTA_OVER; break;
        case 1: admitted = weir_sliding_take(handle, 7); break;
        case 2: admitted = weir_window_add(handle, 7, 1) == WEIR_OK; break;
        case 3:
            weir_budget_deposit(handle, now);
            admitted = weir_budget_withdraw(handle, now);
            break;
        case 4: {
            weir_concurrency_ticket ticket;
            if (weir_concurrency_enter(handle, now, &ticket)) {
                admitted = 1;
                weir_status left = weir_concurrency_leave(handle, &ticket, now + 1000, false);
                if (left != WEIR_OK && left != WEIR_ERR_REGION_RECOVERED) _exit(4);
            }
            break;
        }
        default:
            if (weir_gate_enter(handle)) {
                admitted = 1;
                weir_gate_leave(handle);
            }
        }
        if (admitted) __atomic_add_fetch(&counted[worker], 1, __ATOMIC_RELAXED);
    }
}

static void kills_on_the_other_types(int kills) {
    const char *names[] = {"period", "sliding", "window", "budget", "concurrency", "gate"};
    for (int type = 0; type < 6; type++) {
        if (!locks_shared && type != 5) continue;
        region = map_region(BIG);
        long *counted = map_region(4096);
        void *handle = NULL;
        weir_status laid;
        switch (type) {
        case 0:
            laid = weir_period_init_shared(region, BIG, QUOTA, 3600 * 1000000000ll, false,
                                           (weir_period **)&handle);
            break;
        case 1:
            laid = weir_sliding_init_shared(region, BIG, QUOTA, 3600 * 1000000000ll,
                                            (weir_sliding **)&handle);
            break;
        case 2:
            laid = weir_window_init_shared(region, BIG, 4, 3600 * 1000000000ll, 0,
                                           (weir_window **)&handle);
            break;
        case 3: laid = weir_budget_init_shared(region, BIG, NULL, 0, (weir_budget **)&handle); break;
        case 4: laid = weir_concurrency_init_shared(region, BIG, NULL, (weir_concurrency **)&handle); break;
        default: laid = weir_gate_init_shared(region, BIG, 2, (weir_gate **)&handle); break;
        }
        CHECK_STATUS(laid, WEIR_OK);
        pid_t pids[WORKERS];
        for (int w = 0; w < WORKERS; w++) {
            fflush(NULL);
            pids[w] = fork();
            CHECK(pids[w] >= 0);
            if (pids[w] == 0) other_loop(type, w, counted);
        }
        uint64_t seed = 99 + (uint64_t)type;
        for (int k = 0; k < kills; k++) {
            sleep_us(200 + (long)(next_random(&seed) % 3000));
            int w = (int)(next_random(&seed) % WORKERS);
            CHECK(kill(pids[w], SIGKILL) == 0);
            int status;
            CHECK(waitpid(pids[w], &status, 0) == pids[w]);
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
            /* A call of this process's own returns within the alarm. */
            alarm(10);
            weir_recoveries recoveries;
            weir_status read = WEIR_OK;
            switch (type) {
            case 0: read = weir_period_recoveries(handle, &recoveries); break;
            case 1: read = weir_sliding_recoveries(handle, &recoveries); break;
            case 2: read = weir_window_recoveries(handle, &recoveries); break;
            case 3: read = weir_budget_recoveries(handle, &recoveries); break;
            case 4: read = weir_concurrency_recoveries(handle, &recoveries); break;
            default: (void)weir_gate_enter(handle);
            }
            CHECK_STATUS(read, WEIR_OK);
            alarm(0);
            fflush(NULL);
            pids[w] = fork();
            CHECK(pids[w] >= 0);
            if (pids[w] == 0) other_loop(type, w, counted);
        }
        for (int w = 0; w < WORKERS; w++) {
            int status;
            CHECK(kill(pids[w], SIGKILL) == 0);
            CHECK(waitpid(pids[w], &status, 0) == pids[w]);
            CHECK(WIFSIGNALED(status));
        }
        long total = 0;
        for (int w = 0; w < WORKERS; w++) total += counted[w];
        alarm(10);
        weir_recoveries recoveries = {0, 0};
        if (type == 0 || type == 1) CHECK(total <= QUOTA);
        if (type == 0) CHECK_STATUS(weir_period_recoveries(handle, &recoveries), WEIR_OK);
        if (type == 1) CHECK_STATUS(weir_sliding_recoveries(handle, &recoveries), WEIR_OK);
        if (type == 3) CHECK_STATUS(weir_budget_recoveries(handle, &recoveries), WEIR_OK);
        if (type == 4) CHECK_STATUS(weir_concurrency_recoveries(handle, &recoveries), WEIR_OK);
        if (type == 2) {
            weir_window_total sum;
            weir_status read;
            while ((read = weir_window_read_total(handle, 7, true, &sum)) == WEIR_ERR_REGION_RECOVERED) {
            }
            CHECK_STATUS(read, WEIR_OK);
            CHECK(sum.count >= total && sum.count <= total + kills);
            CHECK_STATUS(weir_window_recoveries(handle, &recoveries), WEIR_OK);
        }
        alarm(0);
        printf("%s: %d kills, %ld admitted, %llu recoveries (%llu resets)\n", names[type], kills,
               total, (unsigned long long)recoveries.recovered, (unsigned long long)recoveries.reset);
        CHECK(recoveries.reset == 0);
        CHECK(munmap(counted, 4096) == 0);
        CHECK(munmap(region, BIG) == 0);
    }
}

/* No robust futexes: every locked type's init refuses, writing nothing,
 * and the bucket and the gate are shared and exact as anywhere. */
static void locked_types_refused(void) {
    region = map_region(REGION);
    weir_breaker *breaker = NULL;
    weir_shedder *shedder = NULL;
    weir_period *period = NULL;
    weir_sliding *sliding = NULL;
    weir_window *window = NULL;
    weir_budget *budget = NULL;
    weir_concurrency *limit = NULL;
    CHECK_STATUS(weir_breaker_init_shared(region, REGION, NULL, 0, &breaker), WEIR_ERR_REGION_UNSUPPORTED);
    CHECK_STATUS(weir_shedder_init_shared(region, REGION, NULL, 0, &shedder), WEIR_ERR_REGION_UNSUPPORTED);
    CHECK_STATUS(weir_period_init_shared(region, REGION, 1000, 3600 * 1000000000ll, false, &period),
                 WEIR_ERR_REGION_UNSUPPORTED);
    CHECK_STATUS(weir_sliding_init_shared(region, REGION, 1000, 3600 * 1000000000ll, &sliding),
                 WEIR_ERR_REGION_UNSUPPORTED);
    CHECK_STATUS(weir_window_init_shared(region, REGION, 10, 1000000000, 0, &window),
                 WEIR_ERR_REGION_UNSUPPORTED);
    CHECK_STATUS(weir_budget_init_shared(region, REGION, NULL, 0, &budget), WEIR_ERR_REGION_UNSUPPORTED);
    CHECK_STATUS(weir_concurrency_init_shared(region, REGION, NULL, &limit), WEIR_ERR_REGION_UNSUPPORTED);
    CHECK(!breaker && !shedder && !period && !sliding && !window && !budget && !limit);
    size_t bytes = 0, align = 0;
    weir_bucket *bucket = NULL;
    CHECK_STATUS(weir_bucket_shared_footprint(&bytes, &align), WEIR_OK);
    CHECK_STATUS(weir_bucket_init_shared(region, bytes, 1.0, 1000.0, 0, &bucket), WEIR_OK);
    CHECK(fork_workers(WORKERS, take_all, NULL) == 1000);
    weir_gate *gate = NULL;
    CHECK_STATUS(weir_gate_shared_footprint(&bytes, &align), WEIR_OK);
    CHECK_STATUS(weir_gate_init_shared(region, bytes, 10, &gate), WEIR_OK);
    CHECK(fork_workers(WORKERS, enter_all, NULL) == 10);
    CHECK(munmap(region, REGION) == 0);
}

int main(void) {
    const char *long_form = getenv("WEIR_LONG");
    int kills = long_form && *long_form == '1' ? 300 : 25;
    locks_shared = robust_futexes();
    if (!locks_shared) {
        printf("skipped: no robust-futex list here (qemu-user?), so the locked types are not shared;"
               " the bucket and the gate are\n");
        locked_types_refused();
        kills_leave_the_rest_running(kills);
        kills_on_the_other_types(kills == 300 ? 300 : 5);
        CHECK_DONE();
    }
    exact_across_processes();
    bad_regions_refused();
    kills_leave_the_rest_running(kills);
    kills_on_the_other_types(kills == 300 ? 300 : 5);
    CHECK_DONE();
}
