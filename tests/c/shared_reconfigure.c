/* Reconfiguring a shared handle (weir_X_init_shared, weir_X_attach): a
 * shared handle's policy is its region's, laid once for every process, so
 * each type's weir_X_reconfigure (breaker, window, bucket, sliding window,
 * period, gate) answers WEIR_ERR_REGION_UNSUPPORTED on it, from the
 * process that laid it, from another handle attached to it and from a
 * forked process, and changes nothing: the region's bytes are the same
 * after the call, and the handle decides by the policy it was laid with.
 * The same call on a heap handle of the type still works, and a NULL
 * handle still answers WEIR_ERR_NULL first. Where the system has no robust
 * process-shared mutex (WEIR_ERR_REGION_UNSUPPORTED from the breaker's
 * lay), the locked types are skipped and the lock-free ones (bucket,
 * gate) still run. */
#define _DEFAULT_SOURCE
#include <string.h>

#include "weir.h"
#include "workers.h"

enum { REGION = 1 << 16 };

static const int64_t HOUR = 3600 * 1000000000ll;

static unsigned char *region;
static unsigned char before[REGION];

/* The bytes compared before and after: the whole region, or under valgrind
 * memcheck (CMakeLists.txt sets WEIR_MEMCHECK for those runs) only its
 * header, every byte of which weir writes: a handle's padding is copied
 * undefined into the region, and valgrind cannot tell that a comparison of
 * undefined bytes with their own copy comes out equal. */
static size_t compared(void) {
    const char *memcheck = getenv("WEIR_MEMCHECK");
    return memcheck && *memcheck == '1' ? WEIR_REGION_HEADER_BYTES : REGION;
}

static void *map_region(void) {
    void *mem = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED);
    return mem;
}

/* The refusal a reconfiguration of the shared handle must answer, and
 * what it must leave: the region's bytes as they were. */
#define REFUSED(call)                                                 \
    do {                                                              \
        memcpy(before, region, REGION);                               \
        CHECK_STATUS((call), WEIR_ERR_REGION_UNSUPPORTED);            \
        CHECK(memcmp(before, region, compared()) == 0);               \
    } while (0)

/* What a forked worker (fork_workers) answers when it attaches and
 * reconfigures: 1 when it was refused as it should be, 0 otherwise. */

static long child_breaker(void *arg) {
    (void)arg;
    weir_breaker *mine = NULL;
    if (weir_breaker_attach(region, REGION, &mine) != WEIR_OK) return 0;
    return weir_breaker_reconfigure(mine, NULL) == WEIR_ERR_REGION_UNSUPPORTED;
}

static long child_window(void *arg) {
    (void)arg;
    weir_window *mine = NULL;
    if (weir_window_attach(region, REGION, &mine) != WEIR_OK) return 0;
    return weir_window_reconfigure(mine, 20, HOUR, 9) == WEIR_ERR_REGION_UNSUPPORTED;
}

static long child_bucket(void *arg) {
    (void)arg;
    weir_bucket *mine = NULL;
    if (weir_bucket_attach(region, REGION, &mine) != WEIR_OK) return 0;
    return weir_bucket_reconfigure(mine, 1000.0, 1000.0, 9) == WEIR_ERR_REGION_UNSUPPORTED;
}

static long child_sliding(void *arg) {
    (void)arg;
    weir_sliding *mine = NULL;
    if (weir_sliding_attach(region, REGION, &mine) != WEIR_OK) return 0;
    return weir_sliding_reconfigure(mine, 2000, HOUR) == WEIR_ERR_REGION_UNSUPPORTED;
}

static long child_period(void *arg) {
    (void)arg;
    weir_period *mine = NULL;
    if (weir_period_attach(region, REGION, &mine) != WEIR_OK) return 0;
    return weir_period_reconfigure(mine, 2000, HOUR, false) == WEIR_ERR_REGION_UNSUPPORTED;
}

static long child_gate(void *arg) {
    (void)arg;
    weir_gate *mine = NULL;
    if (weir_gate_attach(region, REGION, &mine) != WEIR_OK) return 0;
    return weir_gate_reconfigure(mine, 2000) == WEIR_ERR_REGION_UNSUPPORTED;
}

enum { WORKERS = 4 };

/* Runs `call` in forked workers, with the region's bytes compared before
 * and after: each is refused. */
static void refused_in_workers(long (*call)(void *arg)) {
    memcpy(before, region, REGION);
    CHECK(fork_workers(WORKERS, call, NULL) == WORKERS);
    CHECK(memcmp(before, region, compared()) == 0);
}

static void breaker(void) {
    weir_breaker *laid = NULL, *attached = NULL;
    CHECK_STATUS(weir_breaker_init_shared(region, REGION, NULL, 0, &laid), WEIR_OK);
    CHECK_STATUS(weir_breaker_attach(region, REGION, &attached), WEIR_OK);
    for (int i = 0; i < 10; i++) {
        weir_breaker_ticket ticket;
        CHECK(weir_breaker_allow(attached, 5, 0.5, &ticket));
        CHECK_STATUS(weir_breaker_pass(attached, &ticket, 5), WEIR_OK);
    }
    weir_breaker_policy policy = weir_breaker_policy_preset();
    policy.size *= 2; /* a resize, which a region could not hold */
    REFUSED(weir_breaker_reconfigure(laid, &policy));
    REFUSED(weir_breaker_reconfigure(attached, NULL)); /* the same policy */
    refused_in_workers(child_breaker);
    weir_breaker_tally tally;
    CHECK_STATUS(weir_breaker_read_tally(laid, 5, &tally), WEIR_OK);
    CHECK(tally.total == 10 && tally.success == 10);
    weir_breaker *heap = NULL;
    CHECK_STATUS(weir_breaker_new(NULL, 0, &heap), WEIR_OK);
    CHECK_STATUS(weir_breaker_reconfigure(heap, &policy), WEIR_OK);
    weir_breaker_free(heap);
    CHECK_STATUS(weir_breaker_reconfigure(NULL, NULL), WEIR_ERR_NULL);
}

static void window(void) {
    weir_window *laid = NULL, *attached = NULL;
    CHECK_STATUS(weir_window_init_shared(region, REGION, 10, HOUR, 0, &laid), WEIR_OK);
    CHECK_STATUS(weir_window_attach(region, REGION, &attached), WEIR_OK);
    for (int i = 0; i < 10; i++) CHECK_STATUS(weir_window_add(attached, 5, 3), WEIR_OK);
    REFUSED(weir_window_reconfigure(laid, 20, HOUR, 9));
    REFUSED(weir_window_reconfigure(attached, 10, HOUR, 9)); /* the same layout */
    refused_in_workers(child_window);
    CHECK(weir_window_size(laid) == 10);
    weir_window_total total;
    CHECK_STATUS(weir_window_read_total(attached, 9, true, &total), WEIR_OK);
    CHECK(total.count == 10 && total.sum == 30);
    weir_window *heap = NULL;
    CHECK_STATUS(weir_window_new(10, HOUR, 0, &heap), WEIR_OK);
    CHECK_STATUS(weir_window_reconfigure(heap, 20, HOUR, 9), WEIR_OK);
    CHECK(weir_window_size(heap) == 20);
    weir_window_free(heap);
    CHECK_STATUS(weir_window_reconfigure(NULL, 20, HOUR, 9), WEIR_ERR_NULL);
}

static void bucket(void) {
    weir_bucket *laid = NULL, *attached = NULL;
    /* No refill, a burst of 10. */
    CHECK_STATUS(weir_bucket_init_shared(region, REGION, 0.0, 10.0, 0, &laid), WEIR_OK);
    CHECK_STATUS(weir_bucket_attach(region, REGION, &attached), WEIR_OK);
    for (int i = 0; i < 4; i++) CHECK(weir_bucket_take(attached, 5, 1.0));
    REFUSED(weir_bucket_reconfigure(laid, 1000.0, 1000.0, 9));
    REFUSED(weir_bucket_reconfigure(attached, 0.0, 10.0, 9)); /* the same policy */
    refused_in_workers(child_bucket);
    /* Still the laid bucket: 6 tokens left, none refilled. */
    int left = 0;
    while (weir_bucket_take(laid, 9, 1.0)) left++;
    CHECK(left == 6);
    weir_bucket *heap = NULL;
    CHECK_STATUS(weir_bucket_new(0.0, 10.0, 0, &heap), WEIR_OK);
    CHECK_STATUS(weir_bucket_reconfigure(heap, 0.0, 20.0, 9), WEIR_OK);
    weir_bucket_free(heap);
    CHECK_STATUS(weir_bucket_reconfigure(NULL, 0.0, 20.0, 9), WEIR_ERR_NULL);
}

static void sliding(void) {
    weir_sliding *laid = NULL, *attached = NULL;
    CHECK_STATUS(weir_sliding_init_shared(region, REGION, 100, HOUR, &laid), WEIR_OK);
    CHECK_STATUS(weir_sliding_attach(region, REGION, &attached), WEIR_OK);
    for (int i = 0; i < 10; i++) CHECK(weir_sliding_take(attached, 5));
    REFUSED(weir_sliding_reconfigure(laid, 2000, HOUR));
    REFUSED(weir_sliding_reconfigure(attached, 50, HOUR)); /* no growth needed */
    refused_in_workers(child_sliding);
    CHECK(weir_sliding_left(laid, 9) == 90);
    weir_sliding *heap = NULL;
    CHECK_STATUS(weir_sliding_new(100, HOUR, &heap), WEIR_OK);
    CHECK_STATUS(weir_sliding_reconfigure(heap, 50, HOUR), WEIR_OK);
    CHECK(weir_sliding_left(heap, 9) == 50);
    weir_sliding_free(heap);
    CHECK_STATUS(weir_sliding_reconfigure(NULL, 50, HOUR), WEIR_ERR_NULL);
}

static void period(void) {
    weir_period *laid = NULL, *attached = NULL;
    CHECK_STATUS(weir_period_init_shared(region, REGION, 100, HOUR, false, &laid), WEIR_OK);
    CHECK_STATUS(weir_period_attach(region, REGION, &attached), WEIR_OK);
    for (int i = 0; i < 10; i++) CHECK(weir_period_take(attached, 5) != WEIR_PERIOD_QUOTA_OVER);
    REFUSED(weir_period_reconfigure(laid, 2000, HOUR, false));
    REFUSED(weir_period_reconfigure(attached, 100, HOUR, false)); /* the same policy */
    refused_in_workers(child_period);
    CHECK(weir_period_left(laid, 9) == 90);
    weir_period *heap = NULL;
    CHECK_STATUS(weir_period_new(100, HOUR, false, &heap), WEIR_OK);
    CHECK_STATUS(weir_period_reconfigure(heap, 50, HOUR, false), WEIR_OK);
    CHECK(weir_period_left(heap, 9) == 50);
    weir_period_free(heap);
    CHECK_STATUS(weir_period_reconfigure(NULL, 50, HOUR, false), WEIR_ERR_NULL);
}

static void gate(void) {
    weir_gate *laid = NULL, *attached = NULL;
    CHECK_STATUS(weir_gate_init_shared(region, REGION, 3, &laid), WEIR_OK);
    CHECK_STATUS(weir_gate_attach(region, REGION, &attached), WEIR_OK);
    for (int i = 0; i < 3; i++) CHECK(weir_gate_enter(attached));
    /* The gate is lock-free, as the bucket is: its refusal is the region's,
     * not a lock's. */
    REFUSED(weir_gate_reconfigure(laid, 2000));
    REFUSED(weir_gate_reconfigure(attached, 3)); /* the same limit */
    refused_in_workers(child_gate);
    CHECK(weir_gate_held(laid) == 3);
    CHECK(weir_gate_enter(laid) == false); /* still the limit it was laid with */
    weir_gate_leave(attached);
    CHECK(weir_gate_enter(laid));
    weir_gate *heap = NULL;
    CHECK_STATUS(weir_gate_new(3, &heap), WEIR_OK);
    CHECK_STATUS(weir_gate_reconfigure(heap, 2000), WEIR_OK);
    weir_gate_free(heap);
    CHECK_STATUS(weir_gate_reconfigure(NULL, 2000), WEIR_ERR_NULL);
}

int main(void) {
    region = map_region();
    weir_breaker *probe = NULL;
    weir_status locks = weir_breaker_init_shared(region, REGION, NULL, 0, &probe);
    CHECK(locks == WEIR_OK || locks == WEIR_ERR_REGION_UNSUPPORTED);
    if (locks == WEIR_OK) {
        breaker();
        window();
        sliding();
        period();
    } else {
        printf("skipped: the locked types (no robust process-shared mutex here)\n");
    }
    bucket();
    gate();
    CHECK(munmap(region, REGION) == 0);
    CHECK_DONE();
}
