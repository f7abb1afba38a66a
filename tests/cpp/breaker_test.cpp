// weir.hpp's Breaker. Kept apart from the other classes' tests: the
// breaker's C API changes in 0.2.0 (a settle-once ticket from allow), and
// this file and weir.hpp's breaker section are what follow it.
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
        ASSERT_TRUE(breaker->allow(at, 0.5));
        EXPECT_FALSE(breaker->pass(at));
    }
    EXPECT_EQ(breaker->ratio(10), 0.0);
    auto tally = breaker->tally(10);
    ASSERT_TRUE(tally);
    EXPECT_EQ(tally->total, 10);
    EXPECT_EQ(tally->success, 10);
}

TEST(Breaker, ThrottlesAFailingBackend) {
    auto breaker = weir::Breaker::make(weir::Sre{}, 0);
    ASSERT_TRUE(breaker);
    for (int i = 0; i < 100; i++) {
        weir::instant at = weir::instant(0) + weir::nanoseconds(i);
        if (breaker->allow(at, 0.999)) {
            EXPECT_FALSE(breaker->fail(at));
        }
    }
    EXPECT_GT(breaker->ratio(100), 0.5);
    EXPECT_GT(breaker->tally(100)->failure, 0);
}

TEST(Breaker, RefusesABadPolicy) {
    weir::Sre policy;
    policy.k = 0.5;
    EXPECT_EQ(weir::Breaker::make(policy, 0).error(), std::error_code(WEIR_ERR_SRE_K));
    policy = weir::Sre{};
    policy.probe = 0s;
    EXPECT_EQ(weir::Breaker::make(policy, 0).error(), std::error_code(WEIR_ERR_SRE_PROBE));
}

TEST(Breaker, MovedFromRefuses) {
    weir::Breaker breaker = weir::Breaker::make(0).value();
    weir::Breaker moved = std::move(breaker);
    EXPECT_FALSE(breaker.allow(0, 0.5));  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(breaker.pass(0), std::error_code(WEIR_ERR_NULL));
    EXPECT_EQ(breaker.tally(0).error(), std::error_code(WEIR_ERR_NULL));
    EXPECT_TRUE(moved.allow(0, 0.5));
}

TEST(Breaker, ThreadsShareOneBreaker) {
    const weir::Breaker breaker = weir::Breaker::make(0).value();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; i++) {
                weir::instant at = weir::instant(0) + weir::nanoseconds(i * 4 + t);
                if (breaker.allow(at, 0.5)) (void)breaker.pass(at);
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(breaker.tally(2000)->total, 2000);
}
