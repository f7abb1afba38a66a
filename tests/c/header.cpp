// The header compiles as C++ (-std=c++11 -Wall -Wextra -Wpedantic -Werror),
// and the library links and answers from a C++ program.
#include <cstdio>
#include <cstring>

#include "weir.h"

// WEIR_ALIGN spells alignas(8) in C++11: the structs with 64-bit fields are
// 8-aligned here too, on 32-bit hosts as on 64-bit ones.
static_assert(alignof(weir_backoff) == 8, "weir_backoff is 8-aligned");
static_assert(alignof(weir_breaker_policy) == 8, "weir_breaker_policy is 8-aligned");
static_assert(alignof(weir_breaker_tally) == 8, "weir_breaker_tally is 8-aligned");
static_assert(alignof(weir_deadline) == 8, "weir_deadline is 8-aligned");
static_assert(alignof(weir_limiter) == 8, "weir_limiter is 8-aligned");
static_assert(alignof(weir_pool_policy) == 8, "weir_pool_policy is 8-aligned");
static_assert(alignof(weir_pool_stats) == 8, "weir_pool_stats is 8-aligned");
static_assert(alignof(weir_rate) == 8, "weir_rate is 8-aligned");
static_assert(alignof(weir_rate_limit) == 8, "weir_rate_limit is 8-aligned");
static_assert(alignof(weir_recoveries) == 8, "weir_recoveries is 8-aligned");
static_assert(alignof(weir_keyed_reading) == 8, "weir_keyed_reading is 8-aligned");
static_assert(sizeof(weir_keyed_reading) == 40, "weir_keyed_reading is 40 bytes");
static_assert(alignof(weir_region_header) == 8, "weir_region_header is 8-aligned");
static_assert(sizeof(weir_region_header) == WEIR_REGION_HEADER_BYTES, "weir_region_header is 256 bytes");
static_assert(alignof(weir_gcra) == 8, "weir_gcra is 8-aligned");
static_assert(alignof(weir_gcra_limit) == 8, "weir_gcra_limit is 8-aligned");
static_assert(alignof(weir_shedder_policy) == 8, "weir_shedder_policy is 8-aligned");
static_assert(alignof(weir_shedder_ticket) == 8, "weir_shedder_ticket is 8-aligned");
static_assert(alignof(weir_breaker_ticket) == 8, "weir_breaker_ticket is 8-aligned");
static_assert(alignof(weir_budget_policy) == 8, "weir_budget_policy is 8-aligned");
static_assert(alignof(weir_concurrency_policy) == 8, "weir_concurrency_policy is 8-aligned");
static_assert(alignof(weir_concurrency_ticket) == 8, "weir_concurrency_ticket is 8-aligned");
static_assert(alignof(weir_concurrency_partition) == 8, "weir_concurrency_partition is 8-aligned");
static_assert(alignof(weir_shedder_stats) == 8, "weir_shedder_stats is 8-aligned");
static_assert(alignof(weir_window_total) == 8, "weir_window_total is 8-aligned");
static_assert(alignof(weir_charge_item) == 8, "weir_charge_item is 8-aligned");
static_assert(alignof(weir_charge_result) == 8, "weir_charge_result is 8-aligned");
static_assert(alignof(weir_counts) == 8, "weir_counts is 8-aligned");
static_assert(alignof(weir_lease_policy) == 8, "weir_lease_policy is 8-aligned");
static_assert(alignof(weir_lease_answer) == 8, "weir_lease_answer is 8-aligned");
static_assert(alignof(weir_lease_stats) == 8, "weir_lease_stats is 8-aligned");

int main() {
    if (std::strcmp(weir_version(), WEIR_VERSION) != 0) {
        std::fprintf(stderr, "library %s, header %s\n", weir_version(), WEIR_VERSION);
        return 1;
    }
    weir_gate *gate = nullptr;
    if (weir_gate_new(1, &gate) != WEIR_OK || !weir_gate_enter(gate) || weir_gate_enter(gate)) {
        return 1;
    }
    weir_gate_free(gate);
    std::printf("header.cpp: the header compiles and links as C++\n");
    return 0;
}
