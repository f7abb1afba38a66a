/* weir_sliding through the header: exact counting to the window's edge,
 * bad sizes, NULL, time going backwards and the ends of the clock, each
 * followed by proof that the window still behaves. */
#include "check.h"
#include "weir.h"

int main(void) {
    weir_sliding *sliding = NULL;

    /* Two per 100 ns: an event at t counts until t + 99 and is out at
     * t + 100. */
    CHECK_STATUS(weir_sliding_new(2, 100, &sliding), WEIR_OK);
    CHECK(sliding != NULL);
    CHECK(weir_sliding_left(sliding, 0) == 2);
    CHECK(weir_sliding_next(sliding, 0) == 0);
    CHECK(weir_sliding_take(sliding, 10));
    CHECK(weir_sliding_take(sliding, 50));
    CHECK(!weir_sliding_take(sliding, 60));
    CHECK(weir_sliding_left(sliding, 60) == 0);
    CHECK(weir_sliding_next(sliding, 60) == 50);
    CHECK(!weir_sliding_take(sliding, 109));
    CHECK(weir_sliding_next(sliding, 109) == 1);
    CHECK(weir_sliding_left(sliding, 110) == 1);
    CHECK(weir_sliding_take(sliding, 110));
    CHECK(!weir_sliding_take(sliding, 149));
    CHECK(weir_sliding_take(sliding, 150));

    /* Time going backwards counts as no time passing. */
    CHECK(!weir_sliding_take(sliding, 0));
    CHECK(!weir_sliding_take(sliding, INT64_MIN));
    CHECK(weir_sliding_left(sliding, 100) == 0);
    /* The room comes at 210 (the take at 110 falls out): 110 from this
       caller's own clock, not 60 from the latest take's. */
    CHECK(weir_sliding_next(sliding, 100) == 110);
    CHECK(weir_sliding_take(sliding, 210));
    CHECK(!weir_sliding_take(sliding, 210));

    /* The end of the clock: a stamp there never falls out. */
    CHECK(weir_sliding_take(sliding, INT64_MAX));
    CHECK(weir_sliding_take(sliding, INT64_MAX));
    CHECK(!weir_sliding_take(sliding, INT64_MAX));
    CHECK(weir_sliding_next(sliding, INT64_MAX) == INT64_MAX);
    CHECK(weir_sliding_left(sliding, INT64_MAX) == 0);
    weir_sliding_free(sliding);

    /* The longest window, from the start of the clock. */
    CHECK_STATUS(weir_sliding_new(1, INT64_MAX, &sliding), WEIR_OK);
    CHECK(weir_sliding_take(sliding, INT64_MIN));
    CHECK(!weir_sliding_take(sliding, -2));
    CHECK(weir_sliding_next(sliding, -2) == 1);
    CHECK(weir_sliding_take(sliding, -1));
    weir_sliding_free(sliding);

    /* Bad sizes: a status, and *out is left alone. */
    weir_sliding *untouched = (weir_sliding *)&sliding;
    sliding = untouched;
    CHECK_STATUS(weir_sliding_new(0, 100, &sliding), WEIR_ERR_QUOTA);
    CHECK_STATUS(weir_sliding_new(5, 0, &sliding), WEIR_ERR_SLIDING_WINDOW);
    CHECK_STATUS(weir_sliding_new(-1, 100, &sliding), WEIR_ERR_QUOTA);
    CHECK_STATUS(weir_sliding_new(5, -100, &sliding), WEIR_ERR_SLIDING_WINDOW);
    CHECK_STATUS(weir_sliding_new(INT64_MIN, INT64_MIN, &sliding), WEIR_ERR_QUOTA);
    /* Stamps of 8 bytes each: INT64_MAX of them cannot be represented. (A
     * quota that is representable but too large for the machine gets
     * WEIR_ERR_NO_MEMORY; that is tested in Rust, because a sanitizer's
     * allocator would stop the program instead of returning NULL.) */
    CHECK_STATUS(weir_sliding_new(INT64_MAX, 100, &sliding), WEIR_ERR_TOO_LARGE);
    CHECK_STATUS(weir_sliding_new(INT64_MAX / 4, 100, &sliding), WEIR_ERR_TOO_LARGE);
    CHECK(sliding == untouched);
    CHECK_STATUS(weir_sliding_new(1, 100, NULL), WEIR_ERR_NULL);

    /* NULL handles: a refusal or a neutral answer, never a crash. */
    CHECK(!weir_sliding_take(NULL, 0));
    CHECK(weir_sliding_left(NULL, 0) == 0);
    CHECK(weir_sliding_next(NULL, 0) == INT64_MAX);
    weir_sliding_free(NULL);
    CHECK_DONE();
}
