// weir.hpp's handle classes (all but the breaker, in breaker_test.cpp):
// each one's calls, moves, misuse of a moved-from object, and threads
// sharing one handle.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "weir.hpp"

using namespace std::chrono_literals;

TEST(Gate, EntersUpToTheLimitAndLeaves) {
    auto gate = weir::Gate::make(2);
    ASSERT_TRUE(gate);
    EXPECT_TRUE(gate->enter());
    EXPECT_TRUE(gate->enter());
    EXPECT_FALSE(gate->enter());
    EXPECT_EQ(gate->held(), 2);
    gate->leave();
    EXPECT_EQ(gate->held(), 1);
}

TEST(Gate, MovesAndAMovedFromGateRefuses) {
    weir::Gate gate = weir::Gate::make(1).value();
    weir_gate* raw = gate.get();
    weir::Gate moved(std::move(gate));
    EXPECT_EQ(moved.get(), raw);
    EXPECT_FALSE(gate);  // NOLINT(bugprone-use-after-move): the point of the test
    EXPECT_FALSE(gate.enter());
    EXPECT_EQ(gate.held(), 0);
    gate.leave();  // does nothing
    weir::Gate other = weir::Gate::make(5).value();
    other = std::move(moved);  // frees other's gate, takes moved's
    EXPECT_EQ(other.get(), raw);
    EXPECT_TRUE(other.enter());
    EXPECT_FALSE(other.enter());
    weir_gate* released = other.release();
    EXPECT_FALSE(other);
    weir_gate_free(released);
}

TEST(Gate, ThreadsShareOneGate) {
    const weir::Gate gate = weir::Gate::make(3).value();
    std::atomic<int> inside{0};
    std::atomic<int> most{0};
    std::atomic<bool> over{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&] {
            for (int i = 0; i < 2000; i++) {
                if (!gate.enter()) continue;
                int now_inside = ++inside;
                if (now_inside > 3) over = true;
                int seen = most.load();
                while (now_inside > seen && !most.compare_exchange_weak(seen, now_inside)) {
                }
                --inside;
                gate.leave();
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_FALSE(over.load());
    EXPECT_EQ(gate.held(), 0);
}

TEST(Bucket, TakesTheBurstThenRefills) {
    auto bucket = weir::Bucket::make(1.0, 2.0, 0);
    ASSERT_TRUE(bucket);
    EXPECT_TRUE(bucket->take(0));
    EXPECT_TRUE(bucket->take(0));
    EXPECT_FALSE(bucket->take(0));
    EXPECT_EQ(bucket->next(0), 1s);
    EXPECT_TRUE(bucket->take(weir::instant(0) + 1s));
    EXPECT_DOUBLE_EQ(bucket->tokens(weir::instant(0) + 1s), 0.0);
}

TEST(Bucket, ARefundGivesBackWhatTheRefillHasNot) {
    auto bucket = weir::Bucket::make(10.0, 5.0, 0);
    ASSERT_TRUE(bucket);
    EXPECT_TRUE(bucket->take(0, 5.0));
    // 250 ms on, 2.5 tokens have refilled: a refund of the 5 gives back 2.5.
    EXPECT_FALSE(bucket->refund(weir::instant(0) + 250ms, 0, 5.0));
    EXPECT_DOUBLE_EQ(bucket->tokens(weir::instant(0) + 250ms), 5.0);
    // A token taken at 0 has refilled by then; nothing fits now anyway.
    EXPECT_EQ(bucket->refund(weir::instant(0) + 250ms, 0), std::error_code(WEIR_ERR_REFUND_EXPIRED));
    const weir::instant later = weir::instant(0) + 250ms;
    EXPECT_EQ(bucket->refund(later, later), std::error_code(WEIR_ERR_REFUND_FULL));
    EXPECT_EQ(bucket->refund(0, 1), std::error_code(WEIR_ERR_REFUND_FUTURE));
    EXPECT_EQ(bucket->refund(0, 0, 0.0), std::error_code(WEIR_ERR_LIMITER_INVALID_AMOUNT));
}

TEST(Bucket, RefusesBadArgumentsWithTheirStatus) {
    EXPECT_EQ(weir::Bucket::make(-1.0, 1.0, 0).error(), std::error_code(WEIR_ERR_NEGATIVE));
    EXPECT_EQ(weir::Bucket::make(1.0 / 0.0, 1.0, 0).error(), std::error_code(WEIR_ERR_NOT_FINITE));
    auto bucket = weir::Bucket::make(1.0, 1.0, 0);
    EXPECT_FALSE(bucket->take(0, 0.0));
    EXPECT_FALSE(bucket->take(0, 2.0));
}

TEST(Bucket, ThreadsShareOneBucketAndTakeExactlyTheBurst) {
    const weir::Bucket bucket = weir::Bucket::make(0.0, 1000.0, 0).value();
    std::atomic<int> taken{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&] {
            for (int i = 0; i < 1000; i++) {
                if (bucket.take(0)) ++taken;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(taken.load(), 1000);
}

TEST(Bucket, MovedFromRefuses) {
    weir::Bucket bucket = weir::Bucket::make(1.0, 1.0, 0).value();
    weir::Bucket moved = std::move(bucket);
    EXPECT_FALSE(bucket.take(0));  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(bucket.next(0), weir::nanoseconds::max());
    EXPECT_TRUE(moved.take(0));
}

TEST(Sliding, CountsAQuotaOverAnyWindow) {
    auto sliding = weir::Sliding::make(2, 1s);
    ASSERT_TRUE(sliding);
    EXPECT_TRUE(sliding->take(0));
    EXPECT_TRUE(sliding->take(weir::instant(0) + 500ms));
    EXPECT_FALSE(sliding->take(weir::instant(0) + 600ms));
    EXPECT_EQ(sliding->left(weir::instant(0) + 600ms), 0);
    EXPECT_EQ(sliding->next(weir::instant(0) + 600ms), 400ms);
    EXPECT_TRUE(sliding->take(weir::instant(0) + 1s));
    EXPECT_EQ(weir::Sliding::make(0, 1s).error(), std::error_code(WEIR_ERR_QUOTA));
    weir::Sliding moved = std::move(*sliding);
    EXPECT_FALSE(sliding->take(0));  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(moved.left(weir::instant(0) + 10s), 2);
}

TEST(Period, AnswersUnderHitOver) {
    auto period = weir::Period::make(2, 1s);
    ASSERT_TRUE(period);
    EXPECT_EQ(period->take(0), weir::PeriodQuota::under);
    EXPECT_EQ(period->take(0), weir::PeriodQuota::hit);
    EXPECT_EQ(period->take(0), weir::PeriodQuota::over);
    EXPECT_EQ(period->left(0), 0);
    EXPECT_EQ(period->next(0), 1s);
    EXPECT_EQ(period->take(weir::instant(0) + 1s), weir::PeriodQuota::under);
    weir::Period moved(std::move(*period));
    EXPECT_EQ(period->take(0), weir::PeriodQuota::over);  // NOLINT(bugprone-use-after-move)
}

TEST(Window, SumsAndCountsAndCopiesBuckets) {
    auto window = weir::Window::make(4, 4s, 0);
    ASSERT_TRUE(window);
    EXPECT_EQ(window->size(), 4);
    EXPECT_EQ(window->width(), 1s);
    EXPECT_FALSE(window->add(0, 5));
    EXPECT_FALSE(window->add(weir::instant(0) + 1s, 7));
    auto total = window->total(weir::instant(0) + 1s);
    ASSERT_TRUE(total);
    EXPECT_EQ(total->sum, 12);
    EXPECT_EQ(total->count, 2);
    weir_window_total buckets[4] = {};
    EXPECT_EQ(window->buckets(weir::instant(0) + 1s, true, buckets, 4), 4u);
    EXPECT_EQ(buckets[2].sum, 5);
    EXPECT_EQ(buckets[3].sum, 7);
    EXPECT_EQ(weir::Window::make(4, 0s, 0).error(), std::error_code(WEIR_ERR_WINDOW_SPAN));
    weir::Window moved = std::move(*window);
    EXPECT_EQ(window->add(0, 1), std::error_code(WEIR_ERR_NULL));  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(window->total(0).error(), std::error_code(WEIR_ERR_NULL));
    EXPECT_EQ(moved.total(weir::instant(0) + 1s)->sum, 12);
}

TEST(Shedder, TicketsSettleOnce) {
    auto shedder = weir::Shedder::make(0);
    ASSERT_TRUE(shedder);
    weir::ShedderTicket ticket;
    EXPECT_FALSE(ticket.flying());
    ASSERT_TRUE(shedder->allow(0, 100, ticket));
    EXPECT_TRUE(ticket.flying());
    EXPECT_EQ(shedder->flying(), 1);
    EXPECT_FALSE(shedder->pass(ticket, weir::instant(0) + 10ms));
    EXPECT_EQ(shedder->pass(ticket, weir::instant(0) + 10ms), std::error_code(WEIR_ERR_SETTLED));
    EXPECT_EQ(shedder->fail(ticket), std::error_code(WEIR_ERR_SETTLED));
    EXPECT_EQ(shedder->flying(), 0);
    auto stats = shedder->stats(weir::instant(0) + 10ms);
    ASSERT_TRUE(stats);
    EXPECT_EQ(stats->flying, 0);
}

TEST(Shedder, AMovedTicketSettlesOnceAndItsSourceIsSettled) {
    auto shedder = weir::Shedder::make(weir::ShedderPolicy{}, 0);
    weir::ShedderTicket ticket;
    ASSERT_TRUE(shedder->allow(0, 0, ticket));
    weir::ShedderTicket moved = std::move(ticket);
    EXPECT_FALSE(ticket.flying());  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(moved.flying());
    EXPECT_FALSE(shedder->fail(moved));
    EXPECT_EQ(shedder->flying(), 0);
}

// Three calls in flight and an average of three against a limit of 4 (the
// assumed 20 ms over 5 ms buckets): over half the limit, not over three
// quarters of it, so at half the CPU threshold only sheddable calls go.
TEST(Shedder, ClassesAreRefusedAtTheirOwnPoints) {
    weir::ShedderPolicy policy;
    policy.size = 4;
    policy.window = 20ms;
    policy.cpu = 800;
    policy.latency = 20ms;
    policy.beta = 0.0;
    policy.cool = 0ms;
    policy.floor = 1.0;
    auto shedder = weir::Shedder::make(policy, 0);
    ASSERT_TRUE(shedder);
    std::vector<weir::ShedderTicket> open(4);
    for (auto& ticket : open) ASSERT_TRUE(shedder->allow(0, 0, ticket));
    EXPECT_FALSE(shedder->fail(open[0]));
    weir::ShedderTicket ticket;
    EXPECT_FALSE(shedder->allow(0, 400, weir::criticality::sheddable, ticket));
    EXPECT_FALSE(ticket.flying());
    EXPECT_TRUE(shedder->allow(0, 399, weir::criticality::sheddable, ticket));
    EXPECT_FALSE(shedder->fail(ticket));
    for (auto cls : {weir::criticality::sheddable_plus, weir::criticality::critical, weir::criticality::critical_plus}) {
        weir::ShedderTicket other;
        EXPECT_TRUE(shedder->allow(0, 999, cls, other));
        EXPECT_FALSE(shedder->fail(other));
    }
    weir::ShedderTicket odd;
    EXPECT_FALSE(shedder->allow(0, 0, static_cast<weir::criticality>(7), odd));
    EXPECT_EQ(weir_shedder_allow_class(shedder->get(), 0, 0, 7, odd.get()), WEIR_ERR_SHEDDER_CLASS);
}

TEST(Shedder, RefusesABadPolicy) {
    weir::ShedderPolicy policy;
    policy.cpu = 1000;
    EXPECT_EQ(weir::Shedder::make(policy, 0).error(), std::error_code(WEIR_ERR_SHEDDER_CPU));
    policy = weir::ShedderPolicy{};
    policy.beta = 1.0;
    EXPECT_EQ(weir::Shedder::make(policy, 0).error(), std::error_code(WEIR_ERR_SHEDDER_BETA));
}

TEST(Shedder, ThreadsShareOneShedder) {
    const weir::Shedder shedder = weir::Shedder::make(0).value();
    std::vector<std::thread> threads;
    std::atomic<int> settled{0};
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; i++) {
                weir::ShedderTicket ticket;
                weir::instant at = weir::instant(0) + weir::nanoseconds(i * 1000 + t);
                if (shedder.allow(at, 0, ticket) && !shedder.pass(ticket, at)) ++settled;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(settled.load(), 2000);
    EXPECT_EQ(shedder.flying(), 0);
}

TEST(Pool, MakesLendsAndTakesBack) {
    weir::PoolPolicy limits;
    limits.size = 2;
    auto pool = weir::Pool::make(limits);
    ASSERT_TRUE(pool);
    weir::PoolTaken taken = pool->take(0);
    EXPECT_EQ(taken.kind, weir::PoolTaken::Kind::make);
    EXPECT_FALSE(pool->made(42, 0));
    auto kept = pool->give(42, weir::instant(0) + 1ms);
    ASSERT_TRUE(kept);
    EXPECT_TRUE(*kept);
    EXPECT_EQ(pool->idle(), 1);
    taken = pool->take(weir::instant(0) + 2ms);
    EXPECT_EQ(taken.kind, weir::PoolTaken::Kind::ready);
    EXPECT_EQ(taken.item, 42u);
    EXPECT_EQ(pool->busy(), 1);
    EXPECT_FALSE(pool->drop(42));
    EXPECT_EQ(pool->live(), 0);
    EXPECT_EQ(pool->give(7, 0).error(), std::error_code(WEIR_ERR_POOL_NOT_LENT));
    EXPECT_EQ(pool->unmade(), std::error_code(WEIR_ERR_POOL_NO_RESERVATION));
    EXPECT_EQ(pool->stats()->made, 1u);
    EXPECT_EQ(pool->next_expiry(0), weir::nanoseconds::max());
    std::uintptr_t out[4] = {};
    EXPECT_EQ(pool->evict(0, out, 4), 0u);
    EXPECT_EQ(pool->close(out, 4), 0u);
    EXPECT_EQ(pool->take(0).kind, weir::PoolTaken::Kind::wait);
}

TEST(Pool, RefusesBadLimitsAndAMovedFromPoolWaits) {
    weir::PoolPolicy limits;
    limits.size = 0;
    EXPECT_EQ(weir::Pool::make(limits).error(), std::error_code(WEIR_ERR_POOL_SIZE));
    limits = weir::PoolPolicy{};
    limits.idle = -1;
    EXPECT_EQ(weir::Pool::make(limits).error(), std::error_code(WEIR_ERR_POOL_IDLE));
    weir::Pool pool = weir::Pool::make().value();
    weir::Pool moved = std::move(pool);
    EXPECT_EQ(pool.take(0).kind, weir::PoolTaken::Kind::wait);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(pool.stats().error(), std::error_code(WEIR_ERR_NULL));
    EXPECT_EQ(moved.take(0).kind, weir::PoolTaken::Kind::make);
}

TEST(Pool, GenerationsJitterMakeAheadAndMaxMaking) {
    weir::PoolPolicy limits;
    limits.size = 4;
    limits.life = 100s;
    limits.life_jitter = 0.5;
    limits.min_idle = 2;
    limits.max_making = 3;
    auto pool = weir::Pool::make(limits);
    ASSERT_TRUE(pool);
    // Two reservations to keep two ready; each filled by a give.
    EXPECT_EQ(pool->make_ahead(), 2);
    EXPECT_TRUE(*pool->give(1, 0));
    EXPECT_TRUE(*pool->give(2, 0));
    EXPECT_EQ(pool->make_ahead(), 0);
    // Jitter: a draw of 2^63 takes half of 50 s off item 3's life.
    EXPECT_EQ(pool->take(0).item, 2u);
    EXPECT_EQ(pool->take(0).item, 1u);
    EXPECT_EQ(pool->take(0).kind, weir::PoolTaken::Kind::make);
    EXPECT_FALSE(pool->made_jittered(3, 0, std::uint64_t(1) << 63));
    EXPECT_FALSE(*pool->give(3, weir::instant(0) + 75s));
    // A new generation: the idle one comes back from evict, the lent one is
    // not kept, and what is made next is kept.
    EXPECT_TRUE(*pool->give(1, 0));
    EXPECT_EQ(pool->mark_old(), 2);
    std::uintptr_t out[4] = {};
    EXPECT_EQ(pool->evict(0, out, 4), 1u);
    EXPECT_EQ(out[0], 1u);
    EXPECT_FALSE(*pool->give(2, 0));
    EXPECT_EQ(pool->stats()->retired, 2u);
    EXPECT_EQ(pool->take(0).kind, weir::PoolTaken::Kind::make);
    EXPECT_FALSE(pool->made(5, 0));
    EXPECT_TRUE(*pool->give(5, 0));
    limits.max_making = -1;
    EXPECT_EQ(weir::Pool::make(limits).error(), std::error_code(WEIR_ERR_POOL_MAX_MAKING));
    limits.max_making = 0;
    limits.life_jitter = 2.0;
    EXPECT_EQ(weir::Pool::make(limits).error(), std::error_code(WEIR_ERR_POOL_JITTER));
}

TEST(Pool, ThreadsShareOnePool) {
    weir::PoolPolicy limits;
    limits.size = 4;
    limits.idle = 4;
    const weir::Pool pool = weir::Pool::make(limits).value();
    std::atomic<std::uintptr_t> next_item{1};
    std::vector<std::thread> threads;
    std::atomic<bool> broken{false};
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&] {
            for (int i = 0; i < 500; i++) {
                weir::PoolTaken taken = pool.take(i);
                std::uintptr_t item = taken.item;
                if (taken.kind == weir::PoolTaken::Kind::make) {
                    item = next_item++;
                    if (pool.made(item, i)) broken = true;
                } else if (taken.kind != weir::PoolTaken::Kind::ready) {
                    continue;
                }
                auto kept = pool.give(item, i);
                if (!kept) broken = true;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_FALSE(broken.load());
    EXPECT_LE(pool.live(), 4);
    EXPECT_EQ(pool.busy(), 0);
}

TEST(Rate, AWordAdmitsItsBurstPerWindow) {
    auto limit = weir::RateLimit::make(10.0, 2);
    ASSERT_TRUE(limit);
    weir::Rate rate;
    EXPECT_TRUE(rate.allow(*limit, 0));
    EXPECT_TRUE(rate.allow(*limit, 0));
    EXPECT_FALSE(rate.allow(*limit, 0));
    EXPECT_GT(rate.next(*limit, 0), 0ns);
    EXPECT_EQ(weir::RateLimit::make(0.0, 1).error(), std::error_code(WEIR_ERR_RATE_ZERO));
    EXPECT_EQ(weir::RateLimit::make(1.0, 0).error(), std::error_code(WEIR_ERR_RATE_BURST));
}

TEST(Bloom, LimitsEachKey) {
    auto limit = weir::RateLimit::make(1.0, 1);
    auto bloom = weir::Bloom::make(10, 1, *limit, 1, 2);
    ASSERT_TRUE(bloom);
    EXPECT_TRUE(bloom->allow(0, "10.0.0.1"));
    EXPECT_FALSE(bloom->allow(0, "10.0.0.1"));
    EXPECT_GT(bloom->next(0, "10.0.0.1"), 0ns);
    EXPECT_EQ(weir::Bloom::make(10, 0, *limit, 1, 2).error(), std::error_code(WEIR_ERR_BLOOM_HASHES));
    weir::Bloom moved = std::move(*bloom);
    EXPECT_FALSE(bloom->allow(0, "x"));  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(bloom->next(0, "x"), weir::nanoseconds::max());
}

TEST(Bloom, GcraWordsRefillOneAtATime) {
    const weir::GcraLimit limit = weir::GcraLimit::make(1.0, 2).value();
    auto bloom = weir::Bloom::make_gcra(10, 3, limit, 1, 2);
    ASSERT_TRUE(bloom);
    EXPECT_TRUE(bloom->allow(0, "10.0.0.1"));
    EXPECT_TRUE(bloom->allow(0, "10.0.0.1"));
    EXPECT_FALSE(bloom->allow(0, "10.0.0.1"));
    EXPECT_EQ(bloom->next(0, "10.0.0.1"), 1s);
    EXPECT_EQ(weir::Bloom::make_gcra(2, 1, limit, 1, 2).error(), std::error_code(WEIR_ERR_BLOOM_TOO_FEW_WORDS));
    EXPECT_EQ(weir::Bloom::make_gcra(10, 0, limit, 1, 2).error(), std::error_code(WEIR_ERR_BLOOM_HASHES));
}

TEST(Limiter, BucketWindowAndCooldown) {
    auto bucket = weir::Limiter::bucket(2, 1, 1s, 0, 2, 0);
    ASSERT_TRUE(bucket);
    EXPECT_EQ(bucket->capacity(), 2u);
    EXPECT_TRUE(bucket->try_consume(0, 2));
    EXPECT_FALSE(bucket->try_consume(0, 1));
    EXPECT_EQ(bucket->consume(0, 1), std::error_code(WEIR_ERR_LIMITER_RATE_LIMITED));
    EXPECT_EQ(bucket->available(weir::instant(0) + 1s), 1u);
    auto window = weir::Limiter::fixed_window(3, 1s, 0, 3, 0);
    ASSERT_TRUE(window);
    EXPECT_TRUE(window->try_consume(0, 3));
    EXPECT_EQ(window->available(weir::instant(0) + 1s), 3u);
    auto cooldown = weir::Limiter::cooldown(1, 1s, 0, 1, 0);
    ASSERT_TRUE(cooldown);
    EXPECT_TRUE(cooldown->try_consume(0, 1));
    EXPECT_FALSE(cooldown->try_consume(weir::instant(0) + 500ms, 1));
    EXPECT_TRUE(cooldown->try_consume(weir::instant(0) + 1s, 1));
    EXPECT_EQ(weir::Limiter::bucket(0, 1, 1s, 0, 0, 0).error(), std::error_code(WEIR_ERR_LIMITER_ZERO_CAPACITY));
}

TEST(Deadline, ExpiresAndSaysWhatIsLeft) {
    weir::Deadline deadline(1s, 0);
    EXPECT_FALSE(deadline.expired(weir::instant(0) + 999ms));
    EXPECT_TRUE(deadline.expired(weir::instant(0) + 1s));
    EXPECT_EQ(deadline.remaining(weir::instant(0) + 400ms), weir::nanoseconds(600ms));
    weir::Deadline none(0s, 0);
    EXPECT_FALSE(none.expired(weir::instant(INT64_MAX)));
    EXPECT_FALSE(none.remaining(0).has_value());
}

TEST(Backoff, SchedulesRetries) {
    weir::Backoff policy;
    EXPECT_FALSE(policy.check());
    EXPECT_TRUE(policy.more(1));
    EXPECT_FALSE(policy.more(policy.attempts));
    EXPECT_EQ(policy.ceiling(1), 100ms);
    EXPECT_EQ(policy.ceiling(2), 200ms);
    policy.jitter = WEIR_BACKOFF_JITTER_RIGID;
    EXPECT_EQ(policy.delay(2, 0.5), 200ms);
    policy.factor = 0.5;
    EXPECT_EQ(policy.check(), std::error_code(WEIR_ERR_BACKOFF_FACTOR));
    EXPECT_EQ(policy.ceiling(1), weir::nanoseconds(-1));
}

TEST(Backoff, FullJitterIsThePresetWithFullJitter) {
    const weir::Backoff preset;
    const weir::Backoff full = weir::Backoff::full_jitter();
    EXPECT_EQ(full.jitter, WEIR_BACKOFF_JITTER_FULL);
    EXPECT_EQ(full.base, preset.base);
    EXPECT_EQ(full.factor, preset.factor);
    EXPECT_EQ(full.cap, preset.cap);
    EXPECT_EQ(full.attempts, preset.attempts);
    EXPECT_EQ(full.spread, preset.spread);
    EXPECT_FALSE(full.check());
    // Uniform over [0, ceiling]: the draw scales the ceiling.
    EXPECT_EQ(full.delay(2, 0.0), 0ns);
    EXPECT_EQ(full.delay(2, 0.5), 100ms);
}

TEST(Backoff, ScheduleWritesTheRunAsDelayDrawsIt) {
    weir::Backoff rigid;
    rigid.jitter = WEIR_BACKOFF_JITTER_RIGID;
    rigid.attempts = 5;
    std::int64_t out[8] = {};
    ASSERT_EQ(rigid.schedule(nullptr, 0, out, 8), 4u);  // attempts - 1
    EXPECT_EQ(out[0], std::chrono::nanoseconds(100ms).count());
    EXPECT_EQ(out[1], std::chrono::nanoseconds(200ms).count());
    EXPECT_EQ(out[2], std::chrono::nanoseconds(400ms).count());
    EXPECT_EQ(out[3], std::chrono::nanoseconds(800ms).count());
    std::int64_t short_out[2] = {};
    EXPECT_EQ(rigid.schedule(nullptr, 0, short_out, 2), 2u);  // cut short by cap
    EXPECT_EQ(short_out[1], std::chrono::nanoseconds(200ms).count());

    weir::Backoff full = weir::Backoff::full_jitter();
    full.attempts = 4;
    const double draws[] = {0.5, 0.25};
    ASSERT_EQ(full.schedule(draws, 2, out, 8), 3u);
    EXPECT_EQ(weir::nanoseconds(out[0]), full.delay(1, 0.5));
    EXPECT_EQ(weir::nanoseconds(out[1]), full.delay(2, 0.25));
    EXPECT_EQ(weir::nanoseconds(out[2]), full.delay(3, 0.0));  // the draws ran short

    full.factor = 0.5;  // invalid: nothing written
    out[0] = -7;
    EXPECT_EQ(full.schedule(draws, 2, out, 8), 0u);
    EXPECT_EQ(out[0], -7);
}
