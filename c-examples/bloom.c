/* Per-client rate limiting for a million client addresses in 4 MiB, then the
 * same limiter shared by four forked worker processes through shared memory.
 *
 * Every client address gets 2 requests a second in bursts of 10. There is
 * no table of clients: a weir_bloom of 2^19 one-word limiters (4 MiB) maps
 * each address to 3 of them with a keyed hash, and no client is ever added
 * or evicted. */
#define _DEFAULT_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "weir.h"

#define MS INT64_C(1000000)
#define SEC INT64_C(1000000000)

enum { CLIENTS = 1000000, ABUSERS = 100, SIZE_LOG2 = 19, HASHES = 3, WORKERS = 4 };

/* The hash seed keeps clients from choosing addresses that collide. A
 * server draws it once at start-up (getrandom); fixed here so every run
 * prints the same. */
static const uint64_t SEED0 = UINT64_C(0x9e3779b97f4a7c15), SEED1 = UINT64_C(0xbf58476d1ce4e5b9);

int main(void) {
    weir_rate_limit limit;
    weir_status status = weir_rate_limit_new(2.0, 10, &limit);
    if (status != WEIR_OK) return fprintf(stderr, "%s\n", weir_status_str(status)), 1;

    /* Part 1: 100 seconds of traffic. Every 100 us a client never seen
     * before (10.x.y.z) makes a request; every 200 us one of 100 abusive
     * addresses (198.51.100.x) does, 50 requests a second each. */
    weir_bloom *bloom = NULL;
    status = weir_bloom_new(SIZE_LOG2, HASHES, &limit, SEED0, SEED1, &bloom);
    if (status != WEIR_OK) return fprintf(stderr, "%s\n", weir_status_str(status)), 1;
    long clients_limited = 0, abuser_requests = 0, abuser_allowed = 0;
    int abuser_limited[ABUSERS] = {0};
    for (long i = 0; i < CLIENTS; i++) {
        int64_t now = i * (SEC / 10000);
        unsigned char client[4] = {10, (unsigned char)(i >> 16), (unsigned char)(i >> 8),
                                   (unsigned char)i};
        clients_limited += !weir_bloom_allow(bloom, now, client, sizeof client);
        if (i % 2) continue;

        unsigned char abuser[4] = {198, 51, 100, (unsigned char)(i / 2 % ABUSERS)};
        abuser_requests++;
        if (weir_bloom_allow(bloom, now, abuser, sizeof abuser)) {
            abuser_allowed++;
        } else {
            abuser_limited[i / 2 % ABUSERS] = 1;
        }
    }
    int abusers_limited = 0;
    for (int a = 0; a < ABUSERS; a++) abusers_limited += abuser_limited[a];
    printf("One process, 100 s of traffic, limit 2/s in bursts of 10 per address:\n");
    printf("  %d ordinary clients (one request each): %ld limited\n", CLIENTS, clients_limited);
    printf("  %d abusive clients (50 requests/s each): %d limited, %ld of %ld requests let through\n",
           ABUSERS, abusers_limited, abuser_allowed, abuser_requests);
    printf("  memory: %zu bytes (%.1f MiB) for every address there is, fixed\n",
           weir_bloom_footprint(SIZE_LOG2), weir_bloom_footprint(SIZE_LOG2) / 1048576.0);
    weir_bloom_free(bloom);

    /* Part 2: the same limiter laid into shared memory, and four forked
     * workers (as nginx workers would) serving one abusive address at once,
     * 1000 requests a second each for 5 s. */
    size_t len = weir_bloom_footprint(SIZE_LOG2);
    size_t counts_at = (len + 63) / 64 * 64;
    void *shared = mmap(NULL, counts_at + WORKERS * sizeof(long) + sizeof(atomic_int), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return perror("mmap"), 1;
    long *allowed_by = (long *)(void *)((char *)shared + counts_at);
    atomic_int *ready = (atomic_int *)(void *)(allowed_by + WORKERS);
    atomic_init(ready, 0);
    status = weir_bloom_init_in(shared, len, SIZE_LOG2, HASHES, &limit, SEED0, SEED1);
    if (status != WEIR_OK) return fprintf(stderr, "%s\n", weir_status_str(status)), 1;
    pid_t workers[WORKERS];
    for (int w = 0; w < WORKERS; w++) {
        workers[w] = fork();
        if (workers[w] < 0) return perror("fork"), 1;
        if (workers[w] == 0) {
            /* A worker attaching to a region checks it once. */
            if (weir_bloom_check_in(shared, len) != WEIR_OK) _exit(1);
            /* Start together, so that the workers really race. */
            atomic_fetch_add(ready, 1);
            while (atomic_load(ready) < WORKERS) sched_yield();
            long allowed = 0;
            for (int64_t now = 0; now < 5 * SEC; now += MS) {
                allowed += weir_bloom_allow_in(shared, len, now, "198.51.100.7", 12);
            }
            allowed_by[w] = allowed;
            _exit(0);
        }
    }
    long total = 0;
    int failed = 0;
    for (int w = 0; w < WORKERS; w++) {
        int wstatus;
        if (waitpid(workers[w], &wstatus, 0) != workers[w] || !WIFEXITED(wstatus) ||
            WEXITSTATUS(wstatus) != 0) {
            failed = 1;
            continue;
        }
        total += allowed_by[w];
    }
    printf("\n%d forked workers sharing it through mmap(MAP_SHARED), one address, 20000 requests:\n",
           WORKERS);
    for (int w = 0; w < WORKERS; w++) printf("  worker %d let %ld through\n", w + 1, allowed_by[w]);
    printf("  together %ld in 5 s, what one process gets; a limiter per worker would let %d through\n",
           total, WORKERS * 10);
    munmap(shared, counts_at + WORKERS * sizeof(long) + sizeof(atomic_int));
    return failed;
}
