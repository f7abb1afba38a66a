// weir.hpp's charge_all over ChargeItems: an organisation, a team and a
// user charged all or nothing (a refusal by the user spends neither of the
// others), every kind of item, each way of passing them (an
// initializer_list, a std::array, a std::vector, a pointer and a count),
// errors that charge nothing, and threads racing for an organisation's
// last tokens.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#if __cplusplus >= 202002L
#include <span>
#endif
#include <thread>
#include <type_traits>
#include <vector>

#include "weir.hpp"

using namespace std::chrono_literals;

static_assert(std::is_trivially_copyable<weir::ChargeItem>::value, "a ChargeItem is plain data");

namespace {

const weir::instant t0(1'000'000'000);

TEST(Charge, AUserRefusalSpendsNeitherTheTeamNorTheOrganisation) {
    const auto org_limit = weir::GcraLimit::make(10.0, 10).value();
    const auto team_limit = weir::RateLimit::make(5.0, 5).value();
    const auto user_limit = weir::GcraLimit::make(2.0, 2).value();
    weir::Gcra org, user;
    weir::Rate team;
    auto call = [&] {
        return weir::charge_all({weir::ChargeItem::gcra(org, org_limit), weir::ChargeItem::rate(team, team_limit),
                                 weir::ChargeItem::gcra(user, user_limit)},
                                t0)
            .value();
    };
    EXPECT_TRUE(call());
    EXPECT_TRUE(call());
    const weir::ChargeResult refused = call();
    EXPECT_FALSE(refused);
    EXPECT_EQ(refused.index, 2u);
    EXPECT_EQ(refused.wait, 500ms);
    EXPECT_EQ(refused.kept, 0u);
    EXPECT_EQ(org.room(org_limit, t0), 8);
    EXPECT_EQ(team.next(team_limit, t0), 0ns);
}

TEST(Charge, EveryKindAndEveryWayOfPassingThem) {
    const auto limit = weir::GcraLimit::make(1.0, 4).value();
    weir::Gcra word;
    auto bucket = weir::Bucket::make(1.0, 3.0, t0).value();
    const auto key_limit = weir::RateLimit::make(1.0, 2).value();
    auto bloom = weir::Bloom::make(8, 2, key_limit, 1, 2).value();
    struct alignas(64) Line {
        std::uint64_t words[8];
    };
    std::vector<Line> memory(weir::BloomRegion::footprint(6) / sizeof(Line));
    auto region = weir::BloomRegion::init_gcra(memory.data(), memory.size() * sizeof(Line), 6, 1, limit, 3, 4).value();

    const std::array<weir::ChargeItem, 4> items = {
        weir::ChargeItem::gcra(word, limit), weir::ChargeItem::bucket(bucket, 1.5),
        weir::ChargeItem::bloom(bloom, "alice"), weir::ChargeItem::bloom(region, "team-a", 2)};
    EXPECT_TRUE(weir::charge_all(items, t0).value());
    const std::vector<weir::ChargeItem> again(items.begin(), items.end());
    EXPECT_TRUE(weir::charge_all(again, t0).value());
    // The bucket (3 tokens) is spent: refused there, nothing else charged.
    const weir::ChargeResult refused = weir::charge_all(items.data(), items.size(), t0).value();
    EXPECT_FALSE(refused.admitted);
    EXPECT_EQ(refused.index, 1u);
    EXPECT_EQ(refused.wait, bucket.next(t0, 1.5));
    EXPECT_EQ(word.room(limit, t0), 2);
    EXPECT_GT(bloom.next(t0, "alice"), 0ns);
    EXPECT_EQ(region.next(t0, "team-a"), 1s);
    // No items: admitted.
    EXPECT_TRUE(weir::charge_all(items.data(), 0, t0).value());
#if __cplusplus >= 202002L
    EXPECT_EQ(weir::charge_all(std::span<const weir::ChargeItem>(items).first(1), t0).value().admitted, true);
#endif
}

// A region judged by a new limit keeps its words: a key that spent its
// burst under the header's limit (10/s, burst 5) owes 0.5 s, which the new
// one (2/s, burst 1) reads as refused for 0.5 s; a limit of another tick is
// refused and charges nothing.
TEST(Charge, ARegionJudgedByANewLimitKeepsItsWords) {
    const auto old_limit = weir::GcraLimit::make(10.0, 5).value();
    const auto new_limit = weir::GcraLimit::make(2.0, 1).value();
    const auto fine = weir::GcraLimit::make(1e7, 1).value();
    struct alignas(64) Line {
        std::uint64_t words[8];
    };
    std::vector<Line> memory(weir::BloomRegion::footprint(6) / sizeof(Line));
    auto region =
        weir::BloomRegion::init_gcra(memory.data(), memory.size() * sizeof(Line), 6, 1, old_limit, 3, 4).value();
    for (int i = 0; i < 5; i++) EXPECT_TRUE(weir::charge_all({weir::ChargeItem::bloom(region, "k")}, t0).value());
    const weir::ChargeResult refused = weir::charge_all({weir::ChargeItem::bloom(region, "k", new_limit)}, t0).value();
    EXPECT_FALSE(refused.admitted);
    EXPECT_EQ(refused.wait, 500ms);
    std::vector<std::uint64_t> before(memory.size() * 8);
    std::memcpy(before.data(), memory.data(), before.size() * 8);
    auto wrong = weir::charge_all({weir::ChargeItem::bloom(region, "other", fine)}, t0);
    EXPECT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error(), std::error_code(WEIR_ERR_GCRA_LIMIT_INVALID));
    EXPECT_EQ(std::memcmp(before.data(), memory.data(), before.size() * 8), 0);
    EXPECT_TRUE(weir::charge_all({weir::ChargeItem::bloom(region, "k", new_limit)}, t0 + 500ms).value());
}

TEST(Charge, ErrorsChargeNothing) {
    const auto limit = weir::GcraLimit::make(1.0, 2).value();
    weir::Gcra word, other;
    auto half = weir::charge_all({weir::ChargeItem::gcra(other, limit), weir::ChargeItem::gcra(word, limit)}, t0);
    ASSERT_TRUE(half.ok());
    const weir::Bucket moved_from = [] {
        auto b = weir::Bucket::make(1.0, 1.0, 0).value();
        weir::Bucket taken = std::move(b);
        (void)taken;
        return b;
    }();
    auto bad = weir::charge_all({weir::ChargeItem::gcra(other, limit), weir::ChargeItem::bucket(moved_from)}, t0);
    EXPECT_FALSE(bad.ok());
    EXPECT_EQ(bad.error(), std::error_code(WEIR_ERR_NULL));
    // The good item before the bad one was not charged.
    EXPECT_EQ(other.room(limit, t0), 1);
    EXPECT_EQ(word.room(limit, t0), 1);
    std::vector<weir::ChargeItem> many(WEIR_CHARGE_MAX_ITEMS + 1, weir::ChargeItem::gcra(word, limit));
    auto too_many = weir::charge_all(many, t0);
    EXPECT_EQ(too_many.error(), std::error_code(WEIR_ERR_CHARGE_TOO_MANY));
    EXPECT_EQ(word.room(limit, t0), 1);
    EXPECT_STREQ(std::error_code(WEIR_ERR_CHARGE_COST).message().substr(0, 7).c_str(), "charge:");
}

TEST(Charge, ThreadsNeverTakeMoreThanTheOrganisationHolds) {
    const auto org_limit = weir::GcraLimit::make(1.0, 5).value();
    const auto user_limit = weir::GcraLimit::make(1.0, 2).value();
    weir::Gcra org;
    std::array<weir::Gcra, 4> users;
    std::atomic<int> admitted{0}, kept{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 50; i++) {
                auto& user = users[(t + i) % 4];
                const auto r = weir::charge_all(
                                   {weir::ChargeItem::gcra(org, org_limit), weir::ChargeItem::gcra(user, user_limit)}, t0)
                                   .value();
                admitted += r.admitted;
                kept += static_cast<int>(r.kept);
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_LE(admitted.load(), 5);
    // Every token the organisation spent is an admitted call's or a kept one.
    EXPECT_EQ(5 - org.room(org_limit, t0), admitted.load() + kept.load());
}

}  // namespace
