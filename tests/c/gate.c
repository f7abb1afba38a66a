/* weir_gate through the header: the ceiling, no ceiling, leaving too often,
 * NULL everywhere, and many threads at once. */
#include <pthread.h>

#include "check.h"
#include "weir.h"

enum { THREADS = 4, ROUNDS = 20000, LIMIT = 3 };

static void *hammer(void *arg) {
    weir_gate *gate = arg;
    long admitted = 0;
    for (int i = 0; i < ROUNDS; i++) {
        if (weir_gate_enter(gate)) {
            admitted++;
            if (weir_gate_held(gate) > LIMIT) return (void *)-1;
            weir_gate_leave(gate);
        }
    }
    return (void *)admitted;
}

int main(void) {
    weir_gate *gate = NULL;
    CHECK_STATUS(weir_gate_new(2, &gate), WEIR_OK);
    CHECK(gate != NULL);
    CHECK(weir_gate_enter(gate));
    CHECK(weir_gate_enter(gate));
    CHECK(!weir_gate_enter(gate));
    CHECK(weir_gate_held(gate) == 2);
    weir_gate_leave(gate);
    weir_gate_leave(gate);
    weir_gate_leave(gate); /* one too many: stays at zero */
    CHECK(weir_gate_held(gate) == 0);
    CHECK(weir_gate_enter(gate));
    CHECK(weir_gate_held(gate) == 1);
    weir_gate_free(gate);

    /* No ceiling. */
    CHECK_STATUS(weir_gate_new(0, &gate), WEIR_OK);
    for (int i = 0; i < 1000; i++) CHECK(weir_gate_enter(gate));
    CHECK(weir_gate_held(gate) == 1000);
    weir_gate_free(gate);
    CHECK_STATUS(weir_gate_new(INT64_MIN, &gate), WEIR_OK);
    CHECK(weir_gate_enter(gate));
    weir_gate_free(gate);

    /* NULL: a status, a refusal, a neutral answer; never a crash. */
    CHECK_STATUS(weir_gate_new(1, NULL), WEIR_ERR_NULL);
    CHECK(!weir_gate_enter(NULL));
    weir_gate_leave(NULL);
    CHECK(weir_gate_held(NULL) == 0);
    weir_gate_free(NULL);

    /* Threads: the ceiling holds and the count comes back to zero. */
    CHECK_STATUS(weir_gate_new(LIMIT, &gate), WEIR_OK);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, hammer, gate) == 0);
    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        void *admitted;
        CHECK(pthread_join(threads[i], &admitted) == 0);
        CHECK((long)admitted >= 0);
        total += (long)admitted;
    }
    CHECK(total > 0);
    CHECK(weir_gate_held(gate) == 0);
    weir_gate_free(gate);
    CHECK_DONE();
}
