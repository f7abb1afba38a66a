/* Whether weir accepts a policy the bay's "copy as C" wrote: the literal is
 * #included from BAY_POLICY, and _Generic picks its type's constructor.
 * Prints "accepted" or "refused". */
#include <stdio.h>

#include "weir.h"

#include BAY_POLICY

static weir_status shed(const weir_shed *p) {
    weir_shedder *s = NULL;
    weir_status status = weir_shedder_new(p, 0, &s);
    weir_shedder_free(s);
    return status;
}

static weir_status budget(const weir_retry_budget *p) {
    weir_budget *b = NULL;
    weir_status status = weir_budget_new(p, 0, &b);
    weir_budget_free(b);
    return status;
}

static weir_status gradient(const weir_gradient *p) {
    weir_concurrency *c = NULL;
    weir_status status = weir_concurrency_new(p, &c);
    weir_concurrency_free(c);
    return status;
}

static weir_status limits(const weir_limits *p) {
    weir_pool *pool = NULL;
    weir_status status = weir_pool_new(p, &pool);
    weir_pool_free(pool);
    return status;
}

static weir_status backoff(const weir_backoff *p) { return weir_backoff_check(p); }

static weir_status sre(const weir_sre *p) {
    weir_breaker *b = NULL;
    weir_status status = weir_breaker_new(p, 0, &b);
    weir_breaker_free(b);
    return status;
}

int main(void) {
    weir_status status = _Generic(policy,
        weir_shed: shed, weir_retry_budget: budget, weir_gradient: gradient,
        weir_limits: limits, weir_backoff: backoff, weir_sre: sre)(&policy);
    puts(status == WEIR_OK ? "accepted" : "refused");
    return 0;
}
