/* weir_period through the header: the quota per period, HIT and OVER,
 * alignment (negative readings too), the clamp of a period under 1 ns, bad
 * quotas, NULL, time going backwards and the ends of the clock. */
#include "check.h"
#include "weir.h"

_Static_assert(sizeof(weir_period_quota) == 4, "weir_period_quota is an int32_t");
_Static_assert(WEIR_PERIOD_QUOTA_UNDER == 0 && WEIR_PERIOD_QUOTA_HIT == 1 && WEIR_PERIOD_QUOTA_OVER == 2,
               "weir_period_quota values are fixed");

int main(void) {
    weir_period *period = NULL;

    /* Three per 100 ns, opened by the first event (at 30: open to 130). */
    CHECK_STATUS(weir_period_new(3, 100, false, &period), WEIR_OK);
    CHECK(period != NULL);
    CHECK(weir_period_left(period, 0) == 3);
    CHECK(weir_period_next(period, 0) == 0);
    CHECK(weir_period_take(period, 30) == WEIR_PERIOD_QUOTA_UNDER);
    CHECK(weir_period_take(period, 40) == WEIR_PERIOD_QUOTA_UNDER);
    CHECK(weir_period_left(period, 40) == 1);
    CHECK(weir_period_next(period, 40) == 90);
    CHECK(weir_period_take(period, 50) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_take(period, 129) == WEIR_PERIOD_QUOTA_OVER);
    CHECK(weir_period_left(period, 129) == 0);
    /* Time going backwards stays in the open period. */
    CHECK(weir_period_take(period, 0) == WEIR_PERIOD_QUOTA_OVER);
    CHECK(weir_period_take(period, INT64_MIN) == WEIR_PERIOD_QUOTA_OVER);
    CHECK(weir_period_next(period, INT64_MIN) == 1);
    /* Closed at 130. */
    CHECK(weir_period_left(period, 130) == 3);
    CHECK(weir_period_next(period, 130) == 0);
    CHECK(weir_period_take(period, 200) == WEIR_PERIOD_QUOTA_UNDER);
    CHECK(weir_period_next(period, 200) == 100);
    /* The end of the clock: a period that reaches it never ends. */
    CHECK(weir_period_take(period, INT64_MAX) == WEIR_PERIOD_QUOTA_UNDER);
    CHECK(weir_period_take(period, INT64_MAX) == WEIR_PERIOD_QUOTA_UNDER);
    CHECK(weir_period_take(period, INT64_MAX) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_take(period, INT64_MAX) == WEIR_PERIOD_QUOTA_OVER);
    CHECK(weir_period_next(period, INT64_MAX) == INT64_MAX);
    weir_period_free(period);

    /* Aligned: periods open on multiples of the period, by floor division,
     * so -150 lies in [-200, -100). */
    CHECK_STATUS(weir_period_new(1, 100, true, &period), WEIR_OK);
    CHECK(weir_period_take(period, -150) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_next(period, -150) == 50);
    CHECK(weir_period_take(period, -101) == WEIR_PERIOD_QUOTA_OVER);
    CHECK(weir_period_take(period, -100) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_take(period, -1) == WEIR_PERIOD_QUOTA_OVER);
    CHECK(weir_period_take(period, 0) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_take(period, 199) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_next(period, 199) == 1);
    weir_period_free(period);
    CHECK_STATUS(weir_period_new(2, 1000, true, &period), WEIR_OK);
    CHECK(weir_period_take(period, INT64_MIN) == WEIR_PERIOD_QUOTA_UNDER);
    CHECK(weir_period_next(period, INT64_MIN) > 0);
    CHECK(weir_period_take(period, INT64_MIN + 1) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_take(period, INT64_MIN + 2) == WEIR_PERIOD_QUOTA_OVER);
    weir_period_free(period);

    /* A period under one nanosecond is raised to one. */
    int64_t short_periods[] = {0, -5, INT64_MIN};
    for (int i = 0; i < 3; i++) {
        CHECK_STATUS(weir_period_new(1, short_periods[i], true, &period), WEIR_OK);
        CHECK(weir_period_take(period, 7) == WEIR_PERIOD_QUOTA_HIT);
        CHECK(weir_period_take(period, 7) == WEIR_PERIOD_QUOTA_OVER);
        CHECK(weir_period_next(period, 7) == 1);
        CHECK(weir_period_take(period, 8) == WEIR_PERIOD_QUOTA_HIT);
        weir_period_free(period);
    }

    /* Readings are pure: asked at 1000, a take at 500 still opens the
     * period [500, 600), and a take at 1000 opens the next one. */
    CHECK_STATUS(weir_period_new(1, 100, false, &period), WEIR_OK);
    CHECK(weir_period_left(period, 1000) == 1);
    CHECK(weir_period_next(period, 2000) == 0);
    CHECK(weir_period_take(period, 500) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_take(period, 550) == WEIR_PERIOD_QUOTA_OVER);
    CHECK(weir_period_take(period, 1000) == WEIR_PERIOD_QUOTA_HIT);
    CHECK(weir_period_next(period, 1000) == 100);
    /* An earlier reading answers as of the latest take. */
    CHECK(weir_period_next(period, 0) == 100);
    CHECK(weir_period_take(period, 1100) == WEIR_PERIOD_QUOTA_HIT);
    weir_period_free(period);

    /* Bad quotas: a status, and *out is left alone. */
    weir_period *untouched = (weir_period *)&period;
    period = untouched;
    CHECK_STATUS(weir_period_new(0, 100, false, &period), WEIR_ERR_QUOTA);
    CHECK_STATUS(weir_period_new(-1, 100, true, &period), WEIR_ERR_QUOTA);
    CHECK_STATUS(weir_period_new(INT64_MIN, 100, true, &period), WEIR_ERR_QUOTA);
    CHECK(period == untouched);
    CHECK_STATUS(weir_period_new(1, 100, false, NULL), WEIR_ERR_NULL);

    /* The largest quota counts without overflowing. */
    CHECK_STATUS(weir_period_new(INT64_MAX, 100, false, &period), WEIR_OK);
    CHECK(weir_period_take(period, 0) == WEIR_PERIOD_QUOTA_UNDER);
    CHECK(weir_period_left(period, 0) == INT64_MAX - 1);
    weir_period_free(period);

    /* NULL handles: a refusal or a neutral answer, never a crash. */
    CHECK(weir_period_take(NULL, 0) == WEIR_PERIOD_QUOTA_OVER);
    CHECK(weir_period_left(NULL, 0) == 0);
    CHECK(weir_period_next(NULL, 0) == INT64_MAX);
    weir_period_free(NULL);
    CHECK_DONE();
}
