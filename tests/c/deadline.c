/* weir_deadline through the header: spending a budget, no budget, time
 * going backwards, INT64 extremes, NULL deadlines and out-pointers. */
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_deadline) == 16, "weir_deadline size");
_Static_assert(_Alignof(weir_deadline) == 8, "weir_deadline alignment");
_Static_assert(offsetof(weir_deadline, start) == 0, "start offset");
_Static_assert(offsetof(weir_deadline, budget_ns) == 8, "budget_ns offset");

int main(void) {
    int64_t left = -1;

    /* A budget is spent, inclusively at its end. */
    weir_deadline d = weir_deadline_start(100, 1000);
    CHECK(d.start == 1000 && d.budget_ns == 100);
    CHECK(!weir_deadline_expired(&d, 1000));
    CHECK(weir_deadline_remaining(&d, 1000, &left) && left == 100);
    CHECK(weir_deadline_remaining(&d, 1030, &left) && left == 70);
    CHECK(!weir_deadline_expired(&d, 1099));
    CHECK(weir_deadline_expired(&d, 1100));
    CHECK(weir_deadline_remaining(&d, 1100, &left) && left == 0);
    CHECK(weir_deadline_remaining(&d, INT64_MAX, &left) && left == 0);

    /* Time going backwards is no time passing. */
    CHECK(!weir_deadline_expired(&d, 0));
    CHECK(weir_deadline_remaining(&d, 0, &left) && left == 100);
    CHECK(!weir_deadline_expired(&d, INT64_MIN));
    CHECK(weir_deadline_remaining(&d, INT64_MIN, &left) && left == 100);

    /* No budget: never expires, and remaining says so without writing. */
    const int64_t none[] = {0, -1, INT64_MIN};
    const int64_t nows[] = {INT64_MIN, -1, 0, 1, INT64_MAX};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        weir_deadline open = weir_deadline_start(none[i], 0);
        for (size_t j = 0; j < sizeof nows / sizeof nows[0]; j++) {
            CHECK(!weir_deadline_expired(&open, nows[j]));
            left = 42;
            CHECK(!weir_deadline_remaining(&open, nows[j], &left));
            CHECK(left == 42);
        }
    }

    /* INT64 extremes saturate instead of wrapping. */
    weir_deadline wide = weir_deadline_start(INT64_MAX, INT64_MIN);
    CHECK(!weir_deadline_expired(&wide, -2)); /* INT64_MAX - 1 ns have passed */
    CHECK(weir_deadline_remaining(&wide, -2, &left) && left == 1);
    CHECK(weir_deadline_expired(&wide, INT64_MAX));
    CHECK(weir_deadline_remaining(&wide, INT64_MIN, &left) && left == INT64_MAX);
    weir_deadline late = weir_deadline_start(INT64_MAX, INT64_MAX);
    CHECK(!weir_deadline_expired(&late, INT64_MAX));
    CHECK(!weir_deadline_expired(&late, INT64_MIN));
    CHECK(weir_deadline_remaining(&late, INT64_MAX, &left) && left == INT64_MAX);
    weir_deadline tiny = weir_deadline_start(1, INT64_MIN);
    CHECK(weir_deadline_expired(&tiny, INT64_MAX));
    CHECK(weir_deadline_remaining(&tiny, INT64_MAX, &left) && left == 0);

    /* NULL: expired is the refusal; remaining reports nothing. */
    CHECK(weir_deadline_expired(NULL, 0));
    left = 42;
    CHECK(!weir_deadline_remaining(NULL, 0, &left));
    CHECK(left == 42);
    CHECK(!weir_deadline_remaining(&d, 1000, NULL));
    /* The deadline is plain data and still answers the same afterwards. */
    CHECK(weir_deadline_remaining(&d, 1030, &left) && left == 70);
    CHECK_DONE();
}
