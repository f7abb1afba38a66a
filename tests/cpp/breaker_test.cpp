// weir.hpp's Breaker and its settle-once BreakerTicket.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "weir.hpp"

using namespace std::chrono_literals;

TEST(Breaker, LetsAHealthyBackendThroughAndTallies) {
    auto breaker = weir::Breaker::make(0);
    ASSERT_TRUE(breaker);
    for (int i = 0; i < 10; i++) {
        weir::instant at = weir::instant(0) + weir::nanoseconds(i);
        weir::BreakerTicket ticket;
        ASSERT_TRUE(breaker->allow(at, 0.5, ticket));
        EXPECT_TRUE(ticket.flying());
        EXPECT_FALSE(breaker->pass(ticket, at));
        EXPECT_FALSE(ticket.flying());
    }
    EXPECT_EQ(breaker->ratio(10), 0.0);
    auto tally = breaker->tally(10);
    ASSERT_TRUE(tally);
    EXPECT_EQ(tally->total, 10);
    EXPECT_EQ(tally->success, 10);
}

TEST(Breaker, ThrottlesAFailingBackend) {
    auto breaker = weir::Breaker::make(weir::BreakerPolicy{}, 0);
    ASSERT_TRUE(breaker);
    for (int i = 0; i < 100; i++) {
        weir::instant at = weir::instant(0) + weir::nanoseconds(i);
        weir::BreakerTicket ticket;
        if (breaker->allow(at, 0.999, ticket)) {
            EXPECT_FALSE(breaker->fail(ticket, at));
        }
    }
    EXPECT_GT(breaker->ratio(100), 0.5);
    EXPECT_GT(breaker->tally(100)->failure, 0);
}

TEST(Breaker, RefusesABadPolicy) {
    weir::BreakerPolicy policy;
    policy.k = 0.5;
    EXPECT_EQ(weir::Breaker::make(policy, 0).error(), std::error_code(WEIR_ERR_BREAKER_K));
    policy = weir::BreakerPolicy{};
    policy.probe = 0s;
    EXPECT_EQ(weir::Breaker::make(policy, 0).error(), std::error_code(WEIR_ERR_BREAKER_PROBE));
}

TEST(Breaker, EnvoysLimitsAreFieldsOfTheSre) {
    weir::BreakerPolicy policy;
    EXPECT_EQ(policy.max_rejection_probability, 1.0);
    EXPECT_EQ(policy.rps_threshold, 0.0);
    EXPECT_EQ(policy.aggression, 1.0);
    EXPECT_FALSE(policy.skip_refusals);
    // 100 failures: (100 - 5) / 101 uncapped, 0.8 under the cap.
    policy.max_rejection_probability = 0.8;
    auto breaker = weir::Breaker::make(policy, 0);
    ASSERT_TRUE(breaker);
    for (int i = 0; i < 100; i++) {
        weir::BreakerTicket ticket;
        ASSERT_TRUE(breaker->allow(0, 0.999999, ticket));
        EXPECT_FALSE(breaker->fail(ticket, 0));
    }
    EXPECT_DOUBLE_EQ(breaker->ratio(0), 0.8);
    policy.skip_refusals = true;
    EXPECT_EQ(policy.c().skip_refusals, 1);
    policy.aggression = 0.0;
    EXPECT_EQ(weir::Breaker::make(policy, 0).error(), std::error_code(WEIR_ERR_BREAKER_AGGRESSION));
    policy = weir::BreakerPolicy{};
    policy.max_rejection_probability = 1.5;
    EXPECT_EQ(weir::Breaker::make(policy, 0).error(), std::error_code(WEIR_ERR_BREAKER_CAP));
    policy = weir::BreakerPolicy{};
    policy.rps_threshold = -1.0;
    EXPECT_EQ(weir::Breaker::make(policy, 0).error(), std::error_code(WEIR_ERR_BREAKER_RPS));
}

TEST(Breaker, ATicketSettlesOnce) {
    auto breaker = weir::Breaker::make(0);
    ASSERT_TRUE(breaker);
    weir::BreakerTicket ticket;
    ASSERT_TRUE(breaker->allow(0, 0.5, ticket));
    EXPECT_FALSE(breaker->pass(ticket, 1));
    EXPECT_EQ(breaker->pass(ticket, 2), std::error_code(WEIR_ERR_SETTLED));
    EXPECT_EQ(breaker->fail(ticket, 2), std::error_code(WEIR_ERR_SETTLED));
    EXPECT_EQ(breaker->tally(3)->total, 1);
    EXPECT_EQ(breaker->tally(3)->success, 1);
}

TEST(Breaker, ATicketBelongsToItsBreaker) {
    auto first = weir::Breaker::make(0);
    auto second = weir::Breaker::make(0);
    ASSERT_TRUE(first && second);
    weir::BreakerTicket ticket;
    ASSERT_TRUE(first->allow(0, 0.5, ticket));
    EXPECT_EQ(second->pass(ticket, 1), std::error_code(WEIR_ERR_BREAKER_TICKET));
    EXPECT_EQ(second->tally(1)->total, 0);
    EXPECT_FALSE(first->pass(ticket, 1));
}

TEST(Breaker, AMovedTicketLeavesAnEmptyOne) {
    auto breaker = weir::Breaker::make(0);
    ASSERT_TRUE(breaker);
    weir::BreakerTicket ticket;
    ASSERT_TRUE(breaker->allow(0, 0.5, ticket));
    weir::BreakerTicket moved = std::move(ticket);
    EXPECT_FALSE(ticket.flying());  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(moved.flying());
    EXPECT_EQ(breaker->pass(ticket, 1), std::error_code(WEIR_ERR_BREAKER_TICKET));  // the empty one settles nothing
    EXPECT_EQ(breaker->tally(1)->total, 0);
    EXPECT_FALSE(breaker->pass(moved, 1));
    EXPECT_EQ(breaker->tally(1)->total, 1);
}

TEST(Breaker, MovedFromRefuses) {
    weir::Breaker breaker = weir::Breaker::make(0).value();
    weir::Breaker moved = std::move(breaker);
    weir::BreakerTicket ticket;
    EXPECT_FALSE(breaker.allow(0, 0.5, ticket));  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(breaker.pass(ticket, 0), std::error_code(WEIR_ERR_NULL));
    EXPECT_EQ(breaker.tally(0).error(), std::error_code(WEIR_ERR_NULL));
    EXPECT_TRUE(moved.allow(0, 0.5, ticket));
}

TEST(Breaker, ThreadsShareOneBreaker) {
    const weir::Breaker breaker = weir::Breaker::make(0).value();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; i++) {
                weir::instant at = weir::instant(0) + weir::nanoseconds(i * 4 + t);
                weir::BreakerTicket ticket;
                if (breaker.allow(at, 0.5, ticket)) (void)breaker.pass(ticket, at);
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(breaker.tally(2000)->total, 2000);
}
