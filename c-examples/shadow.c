/* Trying a tighter limit before it refuses anyone, then putting it live
 * without losing state. The real bucket (20 a second, a burst of 10)
 * decides; a shadow bucket with the candidate policy (10 a second, a burst
 * of 5) is asked the same question on every call and only counted: its
 * `refused` is the calls it would have refused. A breaker's or a shedder's
 * shadow is asked only for the calls the real one let through (only those
 * run, so only those have an outcome to settle). */
#include <inttypes.h>
#include <stdio.h>

#include "weir.h"

int main(void) {
    weir_bucket *real = NULL, *shadow = NULL;
    if (weir_bucket_new(20.0, 10.0, 0, &real) != WEIR_OK) return 1;
    if (weir_bucket_new(10.0, 5.0, 0, &shadow) != WEIR_OK) return 1;
    weir_bucket_start_counting(real);
    weir_bucket_start_counting(shadow);

    /* A client calling every 60 ms for 3 s. */
    int64_t now = 0;
    for (; now < INT64_C(3000000000); now += INT64_C(60000000)) {
        if (weir_bucket_take(real, now, 1.0)) {
            /* serve the call */
        }
        (void)weir_bucket_take(shadow, now, 1.0); /* counted, never enforced */
    }
    weir_counts r, s;
    weir_bucket_read_counts(real, &r);
    weir_bucket_read_counts(shadow, &s);
    printf("real:   %" PRIu64 " served, %" PRIu64 " refused\n", r.admitted, r.refused);
    printf("shadow: would have served %" PRIu64 ", refused %" PRIu64 "\n", s.admitted,
           s.refused);

    /* The candidate goes live in place: the real bucket keeps the tokens it
     * holds (up to the new burst) and its counts. */
    printf("tokens before: %.2f\n", weir_bucket_tokens(real, now));
    if (weir_bucket_reconfigure(real, 10.0, 5.0, now) != WEIR_OK) return 1;
    printf("tokens after:  %.2f\n", weir_bucket_tokens(real, now));
    weir_bucket_free(shadow);
    weir_bucket_free(real);
    return 0;
}
