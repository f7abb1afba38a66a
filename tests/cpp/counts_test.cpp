// weir.hpp's counts: every handle class turns counting on and reads what
// it decided; off until then.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "weir.hpp"

using namespace std::chrono_literals;

TEST(Counts, OffUntilTurnedOn) {
    auto bucket = weir::Bucket::make(1.0, 2.0, 0).value();
    EXPECT_TRUE(bucket.take(0));
    auto off = bucket.counts();
    ASSERT_FALSE(off);
    EXPECT_EQ(off.error(), weir::make_error_code(WEIR_ERR_COUNTS_OFF));
    EXPECT_FALSE(bucket.start_counting());
    EXPECT_FALSE(bucket.start_counting());  // a second call changes nothing
    EXPECT_TRUE(bucket.take(0));
    EXPECT_FALSE(bucket.take(0));
    EXPECT_FALSE(bucket.take(0, 0.0));  // no take could pass: an error
    weir_counts counts = bucket.counts().value();
    EXPECT_EQ(counts.admitted, 1u);
    EXPECT_EQ(counts.refused, 1u);
    EXPECT_EQ(counts.errors, 1u);
    EXPECT_EQ(counts.units, 1.0);
}

TEST(Counts, EveryHandleCounts) {
    auto gate = weir::Gate::make(1).value();
    ASSERT_FALSE(gate.start_counting());
    EXPECT_TRUE(gate.enter());
    EXPECT_FALSE(gate.enter());
    EXPECT_EQ(gate.counts()->admitted, 1u);
    EXPECT_EQ(gate.counts()->refused, 1u);

    auto sliding = weir::Sliding::make(1, 1s).value();
    ASSERT_FALSE(sliding.start_counting());
    EXPECT_TRUE(sliding.take(0));
    EXPECT_FALSE(sliding.take(0));
    EXPECT_EQ(sliding.counts()->refused, 1u);

    auto period = weir::Period::make(1, 1s).value();
    ASSERT_FALSE(period.start_counting());
    EXPECT_EQ(period.take(0), weir::PeriodQuota::hit);
    EXPECT_EQ(period.take(0), weir::PeriodQuota::over);
    EXPECT_EQ(period.counts()->admitted, 1u);
    EXPECT_EQ(period.counts()->refused, 1u);

    auto window = weir::Window::make(4, 1s, 0).value();
    ASSERT_FALSE(window.start_counting());
    EXPECT_FALSE(window.add(0, 5));
    EXPECT_FALSE(window.add(0, -2));
    EXPECT_EQ(window.counts()->admitted, 2u);
    EXPECT_EQ(window.counts()->units, 3.0);

    auto budget = weir::Budget::make(0).value();
    ASSERT_FALSE(budget.start_counting());
    budget.withdraw(0);
    weir_counts b = budget.counts().value();
    EXPECT_EQ(b.admitted + b.refused, 1u);

    auto limit = weir::Concurrency::make().value();
    ASSERT_FALSE(limit.start_counting());
    weir_concurrency_ticket flight{};
    EXPECT_TRUE(limit.enter(0, flight));
    EXPECT_FALSE(limit.leave(flight, 1000));
    EXPECT_EQ(limit.leave(flight, 1000), weir::make_error_code(WEIR_ERR_SETTLED));
    EXPECT_EQ(limit.counts()->admitted, 1u);
    EXPECT_EQ(limit.counts()->errors, 1u);

    auto pool = weir::Pool::make().value();
    ASSERT_FALSE(pool.start_counting());
    EXPECT_EQ(pool.take(0).kind, weir::PoolTaken::Kind::make);
    EXPECT_FALSE(pool.unmade());
    EXPECT_EQ(pool.unmade(), weir::make_error_code(WEIR_ERR_POOL_NO_RESERVATION));
    EXPECT_EQ(pool.counts()->admitted, 1u);
    EXPECT_EQ(pool.counts()->errors, 1u);

    auto shedder = weir::Shedder::make(0).value();
    ASSERT_FALSE(shedder.start_counting());
    weir::ShedderTicket st;
    EXPECT_TRUE(shedder.allow(0, 0, st));
    EXPECT_FALSE(shedder.pass(st, 1000));
    EXPECT_EQ(shedder.counts()->admitted, 1u);

    auto breaker = weir::Breaker::make(0).value();
    ASSERT_FALSE(breaker.start_counting());
    weir::BreakerTicket bt;
    EXPECT_TRUE(breaker.allow(0, 0.5, bt));
    EXPECT_FALSE(breaker.pass(bt, 1000));
    EXPECT_EQ(breaker.pass(bt, 1000), weir::make_error_code(WEIR_ERR_SETTLED));
    EXPECT_EQ(breaker.counts()->admitted, 1u);
    EXPECT_EQ(breaker.counts()->errors, 1u);

    auto limit1 = weir::RateLimit::make(1.0, 1).value();
    auto bloom = weir::Bloom::make(10, 3, limit1, 1, 2).value();
    ASSERT_FALSE(bloom.start_counting());
    EXPECT_TRUE(bloom.allow(0, "key"));
    EXPECT_FALSE(bloom.allow(0, "key"));
    EXPECT_EQ(bloom.counts()->admitted, 1u);
    EXPECT_EQ(bloom.counts()->refused, 1u);

    auto gcra = weir::GcraLimit::make(1.0, 2).value();
    auto table = weir::Keyed::make(4, gcra, weir::Keyed::overflow::refuse, 1, 2).value();
    EXPECT_EQ(table.counts().error(), weir::make_error_code(WEIR_ERR_COUNTS_OFF));
    ASSERT_FALSE(table.start_counting());
    EXPECT_EQ(table.decide(0, "key", 2).value(), weir::Keyed::decision::allowed);
    EXPECT_FALSE(table.allow(0, "key"));
    EXPECT_FALSE(table.decide(0, "key", 3));
    weir_counts k = table.counts().value();
    EXPECT_EQ(k.admitted, 1u);
    EXPECT_EQ(k.refused, 1u);
    EXPECT_EQ(k.errors, 1u);
    EXPECT_EQ(k.units, 2.0);
}
