// weir.hpp's Lease: asks, grants spent to the unit, release, and bad
// policies and costs as error codes.
#include <gtest/gtest.h>

#include <cstdint>

#include "weir.hpp"

namespace {

constexpr std::int64_t ms = 1000000;

TEST(Lease, AsksThenSpendsTheGrantAndReleases) {
    weir_lease_policy policy = weir_lease_policy_preset();
    policy.burst = 40;
    policy.share = 0.5;
    auto lease = weir::Lease::make(policy, 0);
    ASSERT_TRUE(lease.ok());
    EXPECT_EQ(lease->cap(), 20);
    auto first = lease->take(0);
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first->verdict, WEIR_LEASE_ASK);
    EXPECT_EQ(first->ask, 1);
    EXPECT_FALSE(lease->grant(ms, 3, 1000 * ms, ms));
    EXPECT_EQ(lease->unspent(ms), 3);
    EXPECT_EQ(lease->expires(ms), 1000 * ms);
    EXPECT_EQ(lease->take(2 * ms, 2)->verdict, WEIR_LEASE_GO);
    auto stats = lease->stats(2 * ms);
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->spent, 2u);
    EXPECT_EQ(stats->rtt_ns, ms);
    EXPECT_EQ(lease->release(2 * ms), 1);
    EXPECT_EQ(lease->unspent(2 * ms), 0);
}

TEST(Lease, BadPoliciesAndCostsAreErrorCodes) {
    weir_lease_policy bad = weir_lease_policy_preset();
    bad.share = 0;
    auto refused = weir::Lease::make(bad, 0);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error(), std::error_code(WEIR_ERR_LEASE_SHARE));
    auto lease = weir::Lease::make(0);
    ASSERT_TRUE(lease.ok());
    EXPECT_EQ(lease->take(0, 0).error(), std::error_code(WEIR_ERR_LEASE_COST));
    EXPECT_EQ(lease->grant(0, -1, 0, 0), std::error_code(WEIR_ERR_LEASE_GRANT));
}

}  // namespace
