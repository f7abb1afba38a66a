// weir.hpp's placed handles: footprint() and place() for each handle
// class, the object answering as one made by make(), and its destructor
// leaving the caller's memory alone.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>

#include "weir.hpp"

using namespace std::chrono_literals;

namespace {
alignas(64) unsigned char memory[8192];
}

TEST(Placed, ABreakerAnswersAsAMadeOne) {
    auto fp = weir::Breaker::footprint(weir::BreakerPolicy{});
    ASSERT_TRUE(fp);
    ASSERT_LE(fp->bytes, sizeof memory);
    EXPECT_EQ(weir::Breaker::place(memory, fp->bytes - 1, weir::BreakerPolicy{}, weir::instant(0)).error(),
              weir::make_error_code(WEIR_ERR_PLACED_TOO_SMALL));
    {
        auto placed = weir::Breaker::place(memory, sizeof memory, weir::BreakerPolicy{}, weir::instant(0));
        ASSERT_TRUE(placed);
        EXPECT_EQ(static_cast<void*>(placed->get()), static_cast<void*>(memory));
        auto made = weir::Breaker::make(weir::instant(0));
        ASSERT_TRUE(made);
        for (std::int64_t now = 0; now < 1000000000; now += 3000000) {
            weir::BreakerTicket a, b;
            double roll = static_cast<double>(now % 997) / 997.0;
            bool allowed = made->allow(weir::instant(now), roll, a);
            ASSERT_EQ(allowed, placed->allow(weir::instant(now), roll, b));
            if (allowed) {
                EXPECT_EQ(made->fail(a, weir::instant(now)), placed->fail(b, weir::instant(now)));
            }
            EXPECT_EQ(made->ratio(weir::instant(now)), placed->ratio(weir::instant(now)));
        }
    }
    // The destructor freed nothing: the memory still holds the breaker.
    weir_breaker* again = reinterpret_cast<weir_breaker*>(memory);
    EXPECT_GE(weir_breaker_ratio(again, 1000000000), 0.0);
}

TEST(Placed, EveryHandleClassPlaces) {
    // Each in its own stretch of the memory: the objects live together.
    auto gate = weir::Gate::place(memory, 256, 1);
    ASSERT_TRUE(gate);
    EXPECT_TRUE(gate->enter());
    EXPECT_FALSE(gate->enter());
    ASSERT_TRUE(weir::Gate::footprint());

    auto bucket = weir::Bucket::place(memory + 256, 256, 10.0, 1.0, weir::instant(0));
    ASSERT_TRUE(bucket);
    EXPECT_TRUE(bucket->take(weir::instant(0)));
    EXPECT_FALSE(bucket->take(weir::instant(0)));
    ASSERT_TRUE(weir::Bucket::footprint());

    auto period = weir::Period::place(memory + 512, 256, 1, 1s);
    ASSERT_TRUE(period);
    EXPECT_EQ(period->take(weir::instant(0)), weir::PeriodQuota::hit);
    ASSERT_TRUE(weir::Period::footprint());

    auto sliding = weir::Sliding::place(memory + 768, 256, 2, 1s);
    ASSERT_TRUE(sliding);
    EXPECT_EQ(sliding->left(weir::instant(0)), 2);
    auto sliding_fp = weir::Sliding::footprint(2, 1s);
    ASSERT_TRUE(sliding_fp);
    EXPECT_FALSE(weir::Sliding::footprint(0, 1s));

    auto window = weir::Window::place(memory + 1024, 512, 4, 1s, weir::instant(0));
    ASSERT_TRUE(window);
    EXPECT_FALSE(window->add(weir::instant(0), 5));
    ASSERT_TRUE(weir::Window::footprint(4, 1s));

    auto budget = weir::Budget::place(memory + 1536, 512, weir_budget_policy_preset(), weir::instant(0));
    ASSERT_TRUE(budget);
    ASSERT_TRUE(weir::Budget::footprint());

    auto limit = weir::Concurrency::place(memory + 2048, 1024, weir_concurrency_policy_preset());
    ASSERT_TRUE(limit);
    EXPECT_GT(limit->limit(), 0);
    ASSERT_TRUE(weir::Concurrency::footprint());

    auto shed_fp = weir::Shedder::footprint(weir::ShedderPolicy{});
    ASSERT_TRUE(shed_fp);
    ASSERT_LE(shed_fp->bytes, 4096u);
    auto shedder = weir::Shedder::place(memory + 4096, 4096, weir::ShedderPolicy{}, weir::instant(0));
    ASSERT_TRUE(shedder);
    EXPECT_EQ(shedder->flying(), 0);

    EXPECT_EQ(weir::Gate::place(memory + 3073, 512, 1).error(),
              weir::make_error_code(WEIR_ERR_PLACED_MISALIGNED));
}

TEST(Placed, ALeaseAnswersAsAMadeOne) {
    alignas(64) static unsigned char lease_memory[512];
    auto fp = weir::Lease::footprint();
    ASSERT_TRUE(fp);
    ASSERT_LE(fp->bytes, sizeof lease_memory);
    weir_lease_policy policy = weir_lease_policy_preset();
    policy.burst = 8;
    policy.share = 0.5;
    EXPECT_EQ(weir::Lease::place(lease_memory, fp->bytes - 1, policy, weir::instant(0)).error(),
              weir::make_error_code(WEIR_ERR_PLACED_TOO_SMALL));
    EXPECT_EQ(weir::Lease::place(lease_memory + 1, sizeof lease_memory - 1, policy, weir::instant(0)).error(),
              weir::make_error_code(WEIR_ERR_PLACED_MISALIGNED));
    {
        auto placed = weir::Lease::place(lease_memory, sizeof lease_memory, policy, weir::instant(0));
        ASSERT_TRUE(placed);
        EXPECT_EQ(static_cast<void*>(placed->get()), static_cast<void*>(lease_memory));
        auto made = weir::Lease::make(policy, weir::instant(0));
        ASSERT_TRUE(made);
        EXPECT_EQ(made->cap(), placed->cap());
        for (std::int64_t now = 0; now < 2000000000; now += 7000000) {
            auto a = made->take(weir::instant(now));
            auto b = placed->take(weir::instant(now));
            ASSERT_TRUE(a);
            ASSERT_TRUE(b);
            EXPECT_EQ(a->verdict, b->verdict);
            EXPECT_EQ(a->ask, b->ask);
            EXPECT_EQ(a->retry_after_ns, b->retry_after_ns);
            if (a->ask > 0) {
                // The store grants what was asked, for a lease of ttl.
                weir::instant until(now + policy.ttl_ns);
                EXPECT_EQ(made->grant(weir::instant(now), a->ask, until, weir::instant(now)),
                          placed->grant(weir::instant(now), b->ask, until, weir::instant(now)));
            }
            EXPECT_EQ(made->unspent(weir::instant(now)), placed->unspent(weir::instant(now)));
        }
        auto sa = made->stats(weir::instant(2000000000));
        auto sb = placed->stats(weir::instant(2000000000));
        ASSERT_TRUE(sa);
        ASSERT_TRUE(sb);
        EXPECT_GT(sa->spent, 0u);
        EXPECT_EQ(0, std::memcmp(&*sa, &*sb, sizeof *sa));
    }
    // The destructor left the caller's memory alone: the lease there answers.
    weir_lease* left = reinterpret_cast<weir_lease*>(lease_memory);
    EXPECT_EQ(weir_lease_cap(left), 4);
}

TEST(Placed, APoolAnswersAsAMadeOne) {
    alignas(64) static unsigned char pool_memory[2048];
    weir::PoolPolicy limits{};
    auto fp = weir::Pool::footprint(limits);
    ASSERT_TRUE(fp);
    ASSERT_LE(fp->bytes, sizeof pool_memory);
    EXPECT_EQ(weir::Pool::place(pool_memory, fp->bytes - 1, limits).error(),
              weir::make_error_code(WEIR_ERR_PLACED_TOO_SMALL));
    {
        auto placed = weir::Pool::place(pool_memory, fp->bytes, limits);
        ASSERT_TRUE(placed);
        auto made = weir::Pool::make(limits);
        ASSERT_TRUE(made);
        std::uintptr_t next_item = 1;
        for (std::int64_t now = 0; now < 4000000000; now += 7000000) {
            weir::PoolTaken a = made->take(weir::instant(now));
            weir::PoolTaken b = placed->take(weir::instant(now));
            ASSERT_EQ(a.kind, b.kind);
            ASSERT_EQ(a.item, b.item);
            std::uintptr_t item = a.item;
            if (a.kind == weir::PoolTaken::Kind::make) {
                item = next_item++;
                EXPECT_EQ(made->made(item, weir::instant(now)), placed->made(item, weir::instant(now)));
            }
            if (a.kind == weir::PoolTaken::Kind::ready || a.kind == weir::PoolTaken::Kind::make) {
                if (now % 3 != 0) {
                    auto kept_a = made->give(item, weir::instant(now));
                    auto kept_b = placed->give(item, weir::instant(now));
                    ASSERT_TRUE(kept_a && kept_b);
                    EXPECT_EQ(*kept_a, *kept_b);
                } else {
                    EXPECT_EQ(made->drop(item), placed->drop(item));
                }
            }
            EXPECT_EQ(made->live(), placed->live());
            EXPECT_EQ(made->idle(), placed->idle());
        }
        auto sa = made->stats();
        auto sb = placed->stats();
        ASSERT_TRUE(sa && sb);
        EXPECT_EQ(std::memcmp(&*sa, &*sb, sizeof *sa), 0);
        EXPECT_GT(sa->reused, 0u);
    }
    // The destructor freed nothing: the memory still holds the pool.
    EXPECT_GE(weir_pool_live(reinterpret_cast<weir_pool*>(pool_memory)), 0);
}

TEST(Placed, ABloomViewSharesItsRegionsWords) {
    alignas(64) static unsigned char region[64 + 8 * 64];
    alignas(64) static unsigned char view_memory[256];
    auto limit = weir::RateLimit::make(1.0, 2);
    ASSERT_TRUE(limit);
    ASSERT_EQ(weir::BloomRegion::footprint(6), sizeof region);
    auto laid = weir::BloomRegion::init(region, sizeof region, 6, 2, *limit, 11, 12);
    ASSERT_TRUE(laid);
    auto fp = weir::Bloom::view_footprint();
    ASSERT_TRUE(fp);
    ASSERT_LE(fp->bytes, sizeof view_memory);
    EXPECT_EQ(laid->view(view_memory, fp->bytes - 1).error(), weir::make_error_code(WEIR_ERR_PLACED_TOO_SMALL));
    {
        auto view = laid->view(view_memory, fp->bytes);
        ASSERT_TRUE(view);
        auto made = weir::Bloom::make(6, 2, *limit, 11, 12);
        ASSERT_TRUE(made);
        for (int i = 0; i < 4; ++i) {
            EXPECT_EQ(made->allow(weir::instant(0), "key"), view->allow(weir::instant(0), "key"));
        }
        // The region decides over the words the view charged.
        EXPECT_EQ(laid->next(weir::instant(0), "key"), view->next(weir::instant(0), "key"));
        EXPECT_GT(view->next(weir::instant(0), "key").count(), 0);
    }
    EXPECT_FALSE(weir::Bloom::view(view_memory, sizeof view_memory, region, 63));
    // The destructor left the region alone.
    EXPECT_FALSE(weir::BloomRegion::check(region, sizeof region));
}

TEST(Placed, ABloomWithItsOwnWordsAnswersAsAMadeOne) {
    alignas(64) static unsigned char bloom_memory[256 + 8 * 64];
    auto limit = weir::RateLimit::make(1.0, 2);
    auto gcra = weir::GcraLimit::make(1.0, 2);
    ASSERT_TRUE(limit);
    ASSERT_TRUE(gcra);
    EXPECT_EQ(weir::Bloom::place_footprint(2).error(), weir::make_error_code(WEIR_ERR_BLOOM_TOO_FEW_WORDS));
    auto fp = weir::Bloom::place_footprint(6);
    ASSERT_TRUE(fp);
    EXPECT_EQ(fp->align, 64u);
    ASSERT_LE(fp->bytes, sizeof bloom_memory);
    EXPECT_EQ(weir::Bloom::place(bloom_memory, fp->bytes - 1, 6, 2, *limit, 11, 12).error(),
              weir::make_error_code(WEIR_ERR_PLACED_TOO_SMALL));
    EXPECT_EQ(weir::Bloom::place(bloom_memory + 8, fp->bytes, 6, 2, *limit, 11, 12).error(),
              weir::make_error_code(WEIR_ERR_PLACED_MISALIGNED));
    {
        auto placed = weir::Bloom::place(bloom_memory, fp->bytes, 6, 2, *limit, 11, 12);
        ASSERT_TRUE(placed);
        EXPECT_EQ(static_cast<void*>(placed->get()), static_cast<void*>(bloom_memory));
        auto made = weir::Bloom::make(6, 2, *limit, 11, 12);
        ASSERT_TRUE(made);
        for (std::int64_t now = 0; now < 5000000000; now += 300000000) {
            for (const char* key : {"a", "b", "a", "c", "a"}) {
                ASSERT_EQ(made->allow(weir::instant(now), key), placed->allow(weir::instant(now), key));
                ASSERT_EQ(made->next(weir::instant(now), key), placed->next(weir::instant(now), key));
            }
        }
        // Not a region: the region calls refuse it.
        EXPECT_TRUE(weir::BloomRegion::check(bloom_memory, fp->bytes));
    }
    {
        auto placed = weir::Bloom::place_gcra(bloom_memory, sizeof bloom_memory, 6, 3, *gcra, 5, 6);
        ASSERT_TRUE(placed);
        auto made = weir::Bloom::make_gcra(6, 3, *gcra, 5, 6);
        ASSERT_TRUE(made);
        for (std::int64_t now = 0; now < 5000000000; now += 250000000) {
            for (const char* key : {"x", "x", "y", "x"}) {
                ASSERT_EQ(made->allow(weir::instant(now), key), placed->allow(weir::instant(now), key));
            }
        }
    }
    // The destructor freed nothing: the memory still holds the array.
    EXPECT_GE(weir_bloom_next(reinterpret_cast<weir_bloom*>(bloom_memory), 0, "x", 1), 0);
}
