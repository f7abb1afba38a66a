/* Four forked workers share one breaker in front of a backend that starts
 * failing, against a breaker per worker. The backend answers every call
 * until 10 s in and fails every call after; each worker sends it 2 calls
 * a second (8 a second in all), in simulated time passed as `now`, the
 * workers taking turns in time order.
 *
 * The shared breaker is laid once (weir_breaker_init_shared) in memory
 * mapped MAP_SHARED before the fork; each worker attaches to it
 * (weir_breaker_attach) and also keeps a breaker of its own
 * (weir_breaker_new) that sees only its quarter of the traffic. For
 * comparison, one breaker in this process is fed the same 8 calls a
 * second: the shared breaker starts refusing about when it does, the
 * per-worker breakers seconds later (the breaker's protection and its
 * window's successes weigh more against a quarter of the failures).
 * Build with -DPER_WORKER=50 to see the gap close at higher traffic. */
#define _DEFAULT_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weir.h"

#ifndef PER_WORKER
#define PER_WORKER 2
#endif

enum { WORKERS = 4, PER_SECOND = PER_WORKER, SECONDS = 30, REGION = 1 << 16 };

static const int64_t SECOND = 1000000000;
static const int64_t FAILS_FROM = 10 * SECOND;

/* What one worker saw, written to shared memory for the parent. */
struct seen {
    int64_t shared_first_refusal; /* ns; -1: never refused */
    int64_t own_first_refusal;
    long shared_failed_calls; /* calls after FAILS_FROM that reached the backend */
    long own_failed_calls;
};

static uint64_t next_random(uint64_t *state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* One call through `breaker` at `now`: whether it reached the backend. */
static int call(weir_breaker *breaker, int64_t now, uint64_t *seed) {
    weir_breaker_ticket ticket;
    double roll = (double)(next_random(seed) >> 11) * 0x1.0p-53;
    if (!weir_breaker_allow(breaker, now, roll, &ticket)) return 0;
    if (now < FAILS_FROM)
        weir_breaker_pass(breaker, &ticket, now);
    else
        weir_breaker_fail(breaker, &ticket, now);
    return 1;
}

/* The instant of worker w's i-th call: the workers' calls interleave. */
static int64_t instant(int w, int i) {
    return (int64_t)i * (SECOND / PER_SECOND) + (int64_t)w * (SECOND / PER_SECOND / WORKERS);
}

/* Whose turn it is: the workers take their calls in time order, as the
 * calls of one server's workers arrive. */
static long *turn;

static void worker(int w, void *region, struct seen *seen) {
    weir_breaker *shared = NULL, *own = NULL;
    if (weir_breaker_attach(region, REGION, &shared) != WEIR_OK) _exit(1);
    if (weir_breaker_new(NULL, 0, &own) != WEIR_OK) _exit(1);
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(w + 1);
    struct seen mine = {-1, -1, 0, 0};
    for (int i = 0; i < PER_SECOND * SECONDS; i++) {
        int64_t now = instant(w, i);
        while (__atomic_load_n(turn, __ATOMIC_ACQUIRE) != (long)i * WORKERS + w) sched_yield();
        /* Both breakers guard the same call; the backend is asked once per
         * breaker that lets it through, so each count is that breaker's. */
        int through_shared = call(shared, now, &seed);
        int through_own = call(own, now, &seed);
        if (!through_shared && mine.shared_first_refusal < 0) mine.shared_first_refusal = now;
        if (!through_own && mine.own_first_refusal < 0) mine.own_first_refusal = now;
        if (now >= FAILS_FROM) {
            mine.shared_failed_calls += through_shared;
            mine.own_failed_calls += through_own;
        }
        __atomic_store_n(turn, (long)i * WORKERS + w + 1, __ATOMIC_RELEASE);
    }
    seen[w] = mine;
    weir_breaker_free(own);
    _exit(0);
}

static double seconds(int64_t ns) { return (double)ns / (double)SECOND; }

int main(void) {
    void *region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct seen *seen = mmap(NULL, sizeof(struct seen) * WORKERS, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    turn = mmap(NULL, sizeof *turn, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || seen == MAP_FAILED || turn == MAP_FAILED) return 1;
    weir_breaker *shared = NULL;
    weir_status laid = weir_breaker_init_shared(region, REGION, NULL, 0, &shared);
    if (laid == WEIR_ERR_REGION_UNSUPPORTED) {
        /* No robust process-shared lock here (not Linux, or an emulator
         * such as qemu-user): a worker killed holding the lock would hold
         * it forever, so weir shares no breaker. */
        printf("no shared breaker on this system: %s\n", weir_status_str(laid));
        return 0;
    }
    if (laid != WEIR_OK) return 1;

    fflush(NULL);
    pid_t pids[WORKERS];
    for (int w = 0; w < WORKERS; w++) {
        pids[w] = fork();
        if (pids[w] < 0) return 1;
        if (pids[w] == 0) worker(w, region, seen);
    }
    for (int w = 0; w < WORKERS; w++) {
        int status;
        if (waitpid(pids[w], &status, 0) != pids[w] || !WIFEXITED(status) || WEXITSTATUS(status))
            return 1;
    }

    /* One breaker in one process at the combined traffic, in time order. */
    weir_breaker *alone = NULL;
    if (weir_breaker_new(NULL, 0, &alone) != WEIR_OK) return 1;
    uint64_t seed = 7;
    int64_t alone_first = -1;
    long alone_failed = 0;
    for (int i = 0; i < PER_SECOND * SECONDS; i++) {
        for (int w = 0; w < WORKERS; w++) {
            int64_t now = instant(w, i);
            int through = call(alone, now, &seed);
            if (!through && alone_first < 0) alone_first = now;
            if (now >= FAILS_FROM) alone_failed += through;
        }
    }

    printf("backend fails every call from %.0f s; %d workers x %d calls/s\n", seconds(FAILS_FROM),
           WORKERS, PER_SECOND);
    int64_t shared_first = -1;
    long shared_failed = 0, own_failed = 0;
    for (int w = 0; w < WORKERS; w++) {
        if (seen[w].shared_first_refusal >= 0 &&
            (shared_first < 0 || seen[w].shared_first_refusal < shared_first))
            shared_first = seen[w].shared_first_refusal;
        shared_failed += seen[w].shared_failed_calls;
        own_failed += seen[w].own_failed_calls;
        printf("worker %d: its own breaker first refuses at %.2f s\n", w,
               seconds(seen[w].own_first_refusal));
    }
    printf("shared breaker (4 processes): first refusal at %.2f s, %ld failing calls let through\n",
           seconds(shared_first), shared_failed);
    printf("one breaker, one process, same traffic: first refusal at %.2f s, %ld let through\n",
           seconds(alone_first), alone_failed);
    printf("per-process breakers: %ld failing calls let through in all\n", own_failed);
    weir_recoveries recoveries;
    if (weir_breaker_recoveries(shared, &recoveries) != WEIR_OK) return 1;
    printf("shared breaker recoveries: %" PRIu64 "\n", recoveries.recovered);
    weir_breaker_free(alone);
    munmap(seen, sizeof(struct seen) * WORKERS);
    munmap(region, REGION);
    return 0;
}
