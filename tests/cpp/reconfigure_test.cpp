// Every handle's reconfigure() in weir.hpp: what a change keeps, and that a
// refused change changes nothing. docs/cpp.md ("Changing a limit in place")
// shows these bodies.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "weir.hpp"

using namespace std::chrono_literals;

constexpr std::int64_t ms = 1'000'000;

TEST(Reconfigure, ABucketKeepsItsTokensUpToTheNewBurst) {
    auto bucket = weir::Bucket::make(10.0, 5.0, 0).value();
    bucket.take(0, 2.0);                                  // 3 tokens left
    EXPECT_FALSE(bucket.reconfigure(20.0, 2.0, 0));       // kept: 2, the new burst
    EXPECT_EQ(bucket.tokens(0), 2.0);
    EXPECT_TRUE(bucket.reconfigure(-1.0, 2.0, 0));        // refused: nothing changes
    EXPECT_EQ(bucket.tokens(0), 2.0);
    EXPECT_EQ(bucket.tokens(50 * ms), 2.0);               // full at 20/s
}

TEST(Reconfigure, ASlidingWindowKeepsItsNewestStamps) {
    auto sliding = weir::Sliding::make(3, 1s).value();
    for (int i = 0; i < 3; i++) sliding.take(i * ms);
    EXPECT_FALSE(sliding.reconfigure(5, 1s));             // two more fit
    EXPECT_EQ(sliding.left(3 * ms), 2);
    EXPECT_FALSE(sliding.reconfigure(2, 1s));             // the 2 newest count
    EXPECT_EQ(sliding.left(3 * ms), 0);
    EXPECT_EQ(sliding.reconfigure(0, 1s), weir::make_error_code(WEIR_ERR_QUOTA));
}

TEST(Reconfigure, APeriodKeepsItsOpenPeriodsCount) {
    auto period = weir::Period::make(10, 1s).value();
    for (int i = 0; i < 4; i++) period.take(0);
    EXPECT_FALSE(period.reconfigure(5, 1s, false));       // 4 of 5 used
    EXPECT_EQ(period.left(0), 1);
    EXPECT_EQ(period.left(1'000 * ms), 5);                // the next period
}

TEST(Reconfigure, AGateKeepsTheCallsInside) {
    auto gate = weir::Gate::make(3).value();
    gate.enter();
    gate.enter();
    EXPECT_FALSE(gate.reconfigure(1));                    // both stay inside
    EXPECT_EQ(gate.held(), 2);
    EXPECT_FALSE(gate.enter());                           // none until under 1
    gate.leave();
    gate.leave();
    EXPECT_TRUE(gate.enter());
}

TEST(Reconfigure, AWindowKeepsItsTotal) {
    auto window = weir::Window::make(4, 400ms, 0).value();
    window.add(0, 5);
    window.add(150 * ms, 7);
    EXPECT_FALSE(window.reconfigure(8, 800ms, 200 * ms)); // another layout
    EXPECT_EQ(window.total(200 * ms).value().sum, 12);    // in one bucket
    EXPECT_EQ(window.total(999 * ms).value().sum, 12);
    EXPECT_EQ(window.total(1'000 * ms).value().sum, 0);   // gone 800 ms on
}

TEST(Reconfigure, ABreakerKeepsItsTicketsAndWindow) {
    auto breaker = weir::Breaker::make(0).value();
    weir::BreakerTicket ticket;
    breaker.allow(0, 0.5, ticket);
    weir::BreakerPolicy wider;
    wider.window = 20s;                                   // another layout
    EXPECT_FALSE(breaker.reconfigure(wider));
    EXPECT_FALSE(breaker.fail(ticket, ms));               // still settles
    EXPECT_EQ(breaker.tally(ms).value().failure, 1);
    weir::BreakerPolicy bad;
    bad.floor = 0.5;
    EXPECT_TRUE(breaker.reconfigure(bad));
}

TEST(Reconfigure, ALeaseKeepsTheUnitsItHolds) {
    auto lease = weir::Lease::make(0).value();            // the preset: a cap of 25
    const auto answer = lease.take(0, 20).value();        // ask for 20
    EXPECT_FALSE(lease.grant(2 * ms, answer.ask, 1'000 * ms, 2 * ms));
    weir_lease_policy lower = weir_lease_policy_preset();
    lower.share = 0.05;                                   // a cap of 5
    EXPECT_FALSE(lease.reconfigure(lower));
    EXPECT_EQ(lease.cap(), 5);
    EXPECT_EQ(lease.unspent(3 * ms), 20);                 // kept above the cap
    EXPECT_EQ(lease.take(3 * ms, 6).error(), weir::make_error_code(WEIR_ERR_LEASE_COST));
    EXPECT_EQ(lease.take(3 * ms, 5).value().verdict, WEIR_LEASE_GO);
}

TEST(Reconfigure, APoolKeepsEveryItemAboveASmallerSize) {
    weir::PoolPolicy limits;                              // the preset: size 10
    auto pool = weir::Pool::make(limits).value();
    for (std::uintptr_t item = 1; item <= 3; item++) {
        pool.take(0);                                     // make
        pool.made(item, 0);
    }
    pool.give(3, ms);                                     // 3 idle, 1 and 2 lent
    weir::PoolPolicy smaller;
    smaller.size = 2;
    EXPECT_FALSE(pool.reconfigure(smaller));
    EXPECT_EQ(pool.live(), 3);                            // all kept
    EXPECT_EQ(pool.take(2 * ms).item, 3u);                // the idle one, lent
    EXPECT_EQ(pool.take(2 * ms).kind, weir::PoolTaken::Kind::wait);
    EXPECT_FALSE(pool.drop(1));
    EXPECT_FALSE(pool.drop(2));                           // one live, under 2
    EXPECT_EQ(pool.take(3 * ms).kind, weir::PoolTaken::Kind::make);
    weir::PoolPolicy bad;
    bad.size = 0;
    EXPECT_EQ(pool.reconfigure(bad), weir::make_error_code(WEIR_ERR_POOL_SIZE));
    EXPECT_EQ(pool.live(), 2);
}

TEST(Reconfigure, ABloomKeepsEveryWord) {
    auto old_limit = weir::GcraLimit::make(10.0, 5).value();
    auto bloom = weir::Bloom::make_gcra(10, 1, old_limit, 1, 2).value();
    for (int i = 0; i < 5; i++) EXPECT_TRUE(bloom.allow(0, "k"));   // owes 0.5 s
    auto slower = weir::GcraLimit::make(2.0, 1).value();
    EXPECT_FALSE(bloom.reconfigure(slower));
    EXPECT_FALSE(bloom.allow(0, "k"));                    // the debt carried over
    EXPECT_EQ(bloom.next(0, "k"), 500ms);
    EXPECT_TRUE(bloom.allow(500 * ms, "k"));
    auto window = weir::RateLimit::make(1.0, 1).value();
    EXPECT_EQ(bloom.reconfigure(window), weir::make_error_code(WEIR_ERR_BLOOM_KIND_CHANGE));
    auto fast = weir::GcraLimit::make(1e9, 5).value();   // a finer tick
    EXPECT_EQ(bloom.reconfigure(fast), weir::make_error_code(WEIR_ERR_BLOOM_TICK_CHANGE));
    EXPECT_FALSE(bloom.allow(500 * ms, "k"));             // still 2/s, burst 1
}

TEST(Reconfigure, AKeyedTableKeepsEveryKeysWord) {
    using overflow = weir::Keyed::overflow;
    auto table = weir::Keyed::make(64, weir::GcraLimit::make(10.0, 5).value(), overflow::refuse, 1, 2).value();
    for (int i = 0; i < 5; i++) EXPECT_TRUE(table.allow(0, "k"));   // owes 0.5 s
    EXPECT_TRUE(table.allow(0, "other"));
    EXPECT_FALSE(table.reconfigure(weir::GcraLimit::make(2.0, 1).value()));
    EXPECT_FALSE(table.allow(0, "k"));                    // the debt carried over
    EXPECT_EQ(table.next(0, "k").value(), 500ms);
    EXPECT_EQ(table.next(0, "other").value(), 100ms);     // its 0.1 s of debt, kept as time
    EXPECT_TRUE(table.allow(500 * ms, "k"));
    EXPECT_EQ(table.reconfigure(weir::RateLimit::make(1.0, 1).value()),
              weir::make_error_code(WEIR_ERR_KEYED_KIND_CHANGE));
    EXPECT_EQ(table.reconfigure(weir::GcraLimit::make(1e9, 5).value()),   // a finer tick
              weir::make_error_code(WEIR_ERR_KEYED_TICK_CHANGE));
    EXPECT_FALSE(table.allow(500 * ms, "k"));             // still 2/s, burst 1

    // Rate words, in the caller's memory: a window keeps its start and
    // count, read under the new burst and interval.
    auto size = weir::Keyed::footprint(4).value();
    std::vector<std::max_align_t> memory(size.bytes / sizeof(std::max_align_t) + size.align);
    void* at = memory.data();
    std::size_t room = memory.size() * sizeof(std::max_align_t);
    ASSERT_NE(std::align(size.align, size.bytes, at, room), nullptr);
    auto placed =
        weir::Keyed::place_rate(at, room, 4, weir::RateLimit::make(10.0, 5).value(), overflow::refuse, 1, 2).value();
    for (int i = 0; i < 4; i++) EXPECT_TRUE(placed.allow(i, "k"));
    EXPECT_FALSE(placed.reconfigure(weir::RateLimit::make(20.0, 3).value()));
    EXPECT_FALSE(placed.allow(4, "k"));                   // 4 events, the new burst 3
    EXPECT_EQ(placed.next(4, "k").value(), 200ms - 4ns);  // 4 x 50 ms after its start
    EXPECT_TRUE(placed.allow(200 * ms, "k"));
    EXPECT_EQ(placed.reconfigure(weir::GcraLimit::make(1.0, 1).value()),
              weir::make_error_code(WEIR_ERR_KEYED_KIND_CHANGE));
}
