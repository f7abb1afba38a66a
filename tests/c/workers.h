/* Forked workers for the C tests that share memory between processes: each
 * worker runs one function in its own process and reports a count through
 * a page mapped MAP_SHARED. Include after defining _DEFAULT_SOURCE. */
#ifndef WEIR_TEST_WORKERS_H
#define WEIR_TEST_WORKERS_H

#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { WORKERS_MAX = 16 };

/* Forks `workers` processes, each running `work(arg)` once, and returns the
 * sum of their answers. A worker that fails to exit cleanly fails the
 * test. `arg` should point into memory mapped MAP_SHARED for the workers
 * to share anything. */
static long fork_workers(int workers, long (*work)(void *arg), void *arg) {
    CHECK(workers > 0 && workers <= WORKERS_MAX);
    long *counts = mmap(NULL, WORKERS_MAX * sizeof(long), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(counts != MAP_FAILED);
    pid_t pids[WORKERS_MAX];
    /* A worker whose CHECK fails exits through exit(), which would print
     * the parent's unflushed output a second time. */
    fflush(NULL);
    for (int w = 0; w < workers; w++) {
        pids[w] = fork();
        CHECK(pids[w] >= 0);
        if (pids[w] == 0) {
            counts[w] = work(arg);
            _exit(0);
        }
    }
    long total = 0;
    for (int w = 0; w < workers; w++) {
        int status;
        CHECK(waitpid(pids[w], &status, 0) == pids[w]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        total += counts[w];
    }
    CHECK(munmap(counts, WORKERS_MAX * sizeof(long)) == 0);
    return total;
}

#endif
