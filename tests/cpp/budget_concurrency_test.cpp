// weir.hpp's Budget, Concurrency and Limiter::refund: the same published
// arithmetic as the C tests, through the C++ faces.
#include <gtest/gtest.h>

#include <cstdint>

#include "weir.hpp"

namespace {

constexpr std::int64_t ms = 1000000;

TEST(Budget, GrpcThrottlingStopsAtHalf) {
    weir_budget_policy policy = weir_budget_policy_preset();
    policy.form = WEIR_BUDGET_TOKENS;  // 10 tokens, 0.1 a success
    auto budget = weir::Budget::make(policy, 0);
    ASSERT_TRUE(budget.ok());
    // By hand (A6): 10 -> 9, 8, 7, 6 allow; 5 is not above half.
    for (int i = 0; i < 4; i++) EXPECT_TRUE(budget->withdraw(0));
    EXPECT_FALSE(budget->withdraw(0));
    EXPECT_EQ(budget->tokens(0), 5000);
    EXPECT_EQ(budget->left(0), 0);
}

TEST(Budget, FinagleDefaultReserveAndBadPolicies) {
    auto budget = weir::Budget::make(0);
    ASSERT_TRUE(budget.ok());
    EXPECT_EQ(budget->left(0), 100);  // 10/s x 10 s, cost 5000
    weir_budget_policy bad = weir_budget_policy_preset();
    bad.ttl_ns = 0;
    auto refused = weir::Budget::make(bad, 0);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error(), std::error_code(WEIR_ERR_BUDGET_TTL));
}

TEST(Concurrency, PartitionsBorrowAndGiveBack) {
    weir_concurrency_policy policy = weir_concurrency_policy_preset();
    policy.initial_limit = policy.min_limit = policy.max_limit = 4;
    policy.queue_size = 0;
    const weir_concurrency_partition parts[2] = {{0.5, 0}, {0.5, 2}};
    auto limit = weir::Concurrency::make_partitioned(policy, parts, 2);
    ASSERT_TRUE(limit);
    EXPECT_EQ(limit->partition_room(0), 2);
    weir_concurrency_ticket t[4] = {};
    for (auto& flight : t) EXPECT_TRUE(limit->enter(1, 0, flight));
    weir_concurrency_ticket more{};
    EXPECT_FALSE(limit->enter(1, 0, more));
    EXPECT_FALSE(limit->enter(0, 0, more));
    EXPECT_FALSE(limit->enter(7, 0, more));
    EXPECT_EQ(limit->partition_flying(1), 4);
    for (auto& flight : t) EXPECT_FALSE(limit->leave(1, flight, weir::instant(1000000)));
    EXPECT_EQ(limit->leave(1, t[0], weir::instant(1000000)), std::error_code(WEIR_ERR_SETTLED));
    EXPECT_EQ(limit->flying(), 0);
    EXPECT_EQ(weir::Concurrency::make_partitioned(policy, parts, 0).error(),
              std::error_code(WEIR_ERR_CONCURRENCY_PARTITIONS));
}

TEST(Concurrency, EntersUpToTheLimitAndLeavesOnce) {
    weir_concurrency_policy policy = weir_concurrency_policy_preset();
    policy.initial_limit = 2;
    policy.min_limit = 1;
    policy.max_limit = 4;
    auto limit = weir::Concurrency::make(policy);
    ASSERT_TRUE(limit.ok());
    weir_concurrency_ticket a{}, b{}, c{};
    EXPECT_TRUE(limit->enter(0, a));
    EXPECT_TRUE(limit->enter(0, b));
    EXPECT_FALSE(limit->enter(0, c));
    EXPECT_FALSE(limit->leave(b, 10 * ms));
    EXPECT_EQ(limit->leave(b, 10 * ms), std::error_code(WEIR_ERR_SETTLED));
    EXPECT_FALSE(limit->leave(a, 10 * ms, true));
    EXPECT_EQ(limit->flying(), 0);
    EXPECT_GT(limit->long_rtt(), 0.0);
}

TEST(Limiter, RefundGivesBackWithinTheWindow) {
    auto quota = weir::Limiter::fixed_window(2, std::chrono::seconds(1), 0, 2, 0);
    ASSERT_TRUE(quota.ok());
    EXPECT_TRUE(quota->try_consume(0, 2));
    EXPECT_FALSE(quota->refund(10 * ms, 0, 1));
    EXPECT_EQ(quota->available(10 * ms), 1u);
    EXPECT_EQ(quota->refund(1000 * ms, 10 * ms, 1), std::error_code(WEIR_ERR_REFUND_EXPIRED));
}

}  // namespace
