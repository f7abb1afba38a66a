/* weir_status_str answers every value; the version macros match the library. */
#include <limits.h>
#include <string.h>

#include "check.h"
#include "weir.h"

int main(void) {
    CHECK(strcmp(weir_version(), WEIR_VERSION) == 0);
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", WEIR_VERSION_MAJOR, WEIR_VERSION_MINOR,
             WEIR_VERSION_PATCH);
    CHECK(strcmp(weir_version(), expected) == 0);

    CHECK(strcmp(weir_status_str(WEIR_OK), "ok") == 0);
    const char *unknown = weir_status_str(-1);
    CHECK(unknown != NULL && strlen(unknown) > 0);
    CHECK(strcmp(weir_status_str(INT_MIN), unknown) == 0);
    CHECK(strcmp(weir_status_str(INT_MAX), unknown) == 0);
    /* Every defined code has its own message, distinct from the unknown one. */
    const weir_status codes[] = {WEIR_ERR_NULL,      WEIR_ERR_INVALID_ARGUMENT, WEIR_ERR_NOT_FINITE,
                                 WEIR_ERR_NEGATIVE,  WEIR_ERR_TOO_LARGE,        WEIR_ERR_NO_MEMORY,
                                 WEIR_ERR_PANIC,     WEIR_ERR_POISONED,         WEIR_ERR_SETTLED,
                                 WEIR_ERR_UNKNOWN_KIND, WEIR_ERR_MISALIGNED, WEIR_ERR_RESERVED,
                                 WEIR_ERR_BACKOFF_BASE, WEIR_ERR_BACKOFF_FACTOR, WEIR_ERR_BACKOFF_CAP,
                                 WEIR_ERR_BACKOFF_ATTEMPTS, WEIR_ERR_BACKOFF_SPREAD, WEIR_ERR_QUOTA,
                                 WEIR_ERR_SLIDING_WINDOW, WEIR_ERR_POOL_SIZE, WEIR_ERR_POOL_IDLE,
                                 WEIR_ERR_POOL_KEEP, WEIR_ERR_POOL_LIFE};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        CHECK(strcmp(weir_status_str(codes[i]), unknown) != 0);
        CHECK(strcmp(weir_status_str(codes[i]), "ok") != 0);
    }
    CHECK(WEIR_ERR_MISALIGNED == 11);
    /* Codes added later: 12-19 general, 204-207 the pool. */
    CHECK(WEIR_ERR_RESERVED == 12 && WEIR_ERR_SLIDING_WINDOW == 19);
    CHECK(WEIR_ERR_POOL_SIZE == 204 && WEIR_ERR_POOL_LIFE == 207);
    /* The breaker's limits: 330-333. */
    CHECK(WEIR_ERR_BREAKER_CAP == 330 && WEIR_ERR_BREAKER_RPS == 331 && WEIR_ERR_BREAKER_AGGRESSION == 332 &&
          WEIR_ERR_BREAKER_REFUSALS == 333);
    CHECK(strcmp(weir_status_str(WEIR_ERR_MISALIGNED), "a pointer is not aligned for its type") == 0);
    CHECK_DONE();
}
