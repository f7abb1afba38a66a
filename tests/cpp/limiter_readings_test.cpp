// weir.hpp's Limiter readings (weir_limiter_is_* and the snapshot getters):
// each variant reads back the values it was built with, the anchors
// project to `now`, the other variants' readings answer their status, and
// a snapshot rebuilds a limiter that answers as the original does.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "weir.hpp"

using namespace std::chrono_literals;

namespace {

const weir::instant t0 = weir::instant(0) + 10s;
const std::error_code wrong_variant(WEIR_ERR_LIMITER_WRONG_VARIANT);

TEST(LimiterReadings, ABucketReadsBackItsSettings) {
    const weir::Limiter bucket = weir::Limiter::bucket(5, 2, 1s, t0, 4, t0).value();
    EXPECT_TRUE(bucket.is_bucket());
    EXPECT_FALSE(bucket.is_fixed_window());
    EXPECT_FALSE(bucket.is_cooldown());
    EXPECT_EQ(bucket.capacity(), 5u);
    EXPECT_EQ(bucket.available(t0), 4u);
    EXPECT_EQ(bucket.refill_amount().value(), 2u);
    EXPECT_EQ(bucket.refill_interval().value(), 1s);
    EXPECT_EQ(bucket.last_refill(t0).value().ns(), t0.ns());
    // Projected to `now`: whole intervals only; the stored one before it.
    EXPECT_EQ(bucket.last_refill(t0 + 2500ms).value().ns(), (t0 + 2s).ns());
    EXPECT_EQ(bucket.last_refill(t0 + (-1s)).value().ns(), t0.ns());
    EXPECT_EQ(bucket.window_length().error(), wrong_variant);
    EXPECT_EQ(bucket.window_start(t0).error(), wrong_variant);
    EXPECT_EQ(bucket.cooldown_length().error(), wrong_variant);
    EXPECT_EQ(bucket.cooldown_end().error(), wrong_variant);
}

TEST(LimiterReadings, AFixedWindowReadsBackItsSettings) {
    const weir::Limiter window = weir::Limiter::fixed_window(3, 1s, t0, 2, t0 + 400ms).value();
    EXPECT_FALSE(window.is_bucket());
    EXPECT_TRUE(window.is_fixed_window());
    EXPECT_FALSE(window.is_cooldown());
    EXPECT_EQ(window.capacity(), 3u);
    EXPECT_EQ(window.available(t0 + 400ms), 2u);
    EXPECT_EQ(window.window_length().value(), 1s);
    EXPECT_EQ(window.window_start(t0 + 400ms).value().ns(), t0.ns());
    EXPECT_EQ(window.window_start(t0 + 2500ms).value().ns(), (t0 + 2s).ns());
    EXPECT_EQ(window.available(t0 + 2500ms), 3u);
    EXPECT_EQ(window.refill_amount().error(), wrong_variant);
    EXPECT_EQ(window.refill_interval().error(), wrong_variant);
    EXPECT_EQ(window.last_refill(t0).error(), wrong_variant);
    EXPECT_EQ(window.cooldown_length().error(), wrong_variant);
    EXPECT_EQ(window.cooldown_end().error(), wrong_variant);
}

TEST(LimiterReadings, ACooldownReadsBackItsSettingsAndItsGate) {
    weir::Limiter cooldown = weir::Limiter::cooldown(2, 1s, t0, 2, t0).value();
    EXPECT_FALSE(cooldown.is_bucket());
    EXPECT_FALSE(cooldown.is_fixed_window());
    EXPECT_TRUE(cooldown.is_cooldown());
    EXPECT_EQ(cooldown.capacity(), 2u);
    EXPECT_EQ(cooldown.cooldown_length().value(), 1s);
    EXPECT_EQ(cooldown.cooldown_end().value().ns(), t0.ns());
    // Taking the last unit arms the gate until now + the cooldown.
    ASSERT_TRUE(cooldown.try_consume(t0 + 5s, 2));
    EXPECT_EQ(cooldown.cooldown_end().value().ns(), (t0 + 6s).ns());
    EXPECT_EQ(cooldown.available(t0 + 5500ms), 0u);
    EXPECT_EQ(cooldown.available(t0 + 6s), 2u);
    EXPECT_EQ(cooldown.refill_amount().error(), wrong_variant);
    EXPECT_EQ(cooldown.refill_interval().error(), wrong_variant);
    EXPECT_EQ(cooldown.last_refill(t0).error(), wrong_variant);
    EXPECT_EQ(cooldown.window_length().error(), wrong_variant);
    EXPECT_EQ(cooldown.window_start(t0).error(), wrong_variant);
}

TEST(LimiterReadings, ASnapshotRebuildsALimiterThatAnswersTheSame) {
    weir::Limiter bucket = weir::Limiter::bucket(4, 1, 300ms, t0, 4, t0).value();
    ASSERT_TRUE(bucket.try_consume(t0 + 100ms, 4));
    const weir::instant now = t0 + 500ms;  // one refill in, 200 ms toward the next
    weir::Limiter rebuilt = weir::Limiter::bucket(bucket.capacity(), bucket.refill_amount().value(),
                                                  bucket.refill_interval().value(), bucket.last_refill(now).value(),
                                                  bucket.available(now), now)
                                .value();
    EXPECT_EQ(rebuilt.last_refill(now).value().ns(), (t0 + 300ms).ns());
    for (std::int64_t ms = 500; ms <= 2000; ms += 50) {
        const weir::instant t = t0 + std::chrono::milliseconds(ms);
        EXPECT_EQ(bucket.available(t), rebuilt.available(t)) << "at " << ms << " ms";
        EXPECT_EQ(bucket.try_consume(t, 1), rebuilt.try_consume(t, 1)) << "at " << ms << " ms";
    }

    weir::Limiter window = weir::Limiter::fixed_window(3, 1s, t0, 3, t0).value();
    ASSERT_TRUE(window.try_consume(t0 + 1200ms, 2));
    const weir::instant later = t0 + 1500ms;
    weir::Limiter rewindowed = weir::Limiter::fixed_window(window.capacity(), window.window_length().value(),
                                                           window.window_start(later).value(),
                                                           window.available(later), later)
                                   .value();
    for (std::int64_t ms = 1500; ms <= 4000; ms += 100) {
        const weir::instant t = t0 + std::chrono::milliseconds(ms);
        EXPECT_EQ(window.try_consume(t, 1), rewindowed.try_consume(t, 1)) << "at " << ms << " ms";
    }
}

TEST(LimiterReadings, ACorruptedValueAnswersItsStatus) {
    weir::Limiter limiter = weir::Limiter::bucket(5, 2, 1s, t0, 4, t0).value();
    std::memset(static_cast<void*>(limiter.get()), 0, sizeof(weir_limiter));
    const std::error_code corrupt(WEIR_ERR_LIMITER_CORRUPT);
    EXPECT_FALSE(limiter.is_bucket());
    EXPECT_FALSE(limiter.is_fixed_window());
    EXPECT_FALSE(limiter.is_cooldown());
    EXPECT_EQ(limiter.capacity(), 0u);
    EXPECT_EQ(limiter.refill_amount().error(), corrupt);
    EXPECT_EQ(limiter.refill_interval().error(), corrupt);
    EXPECT_EQ(limiter.last_refill(t0).error(), corrupt);
    EXPECT_EQ(limiter.window_length().error(), corrupt);
    EXPECT_EQ(limiter.window_start(t0).error(), corrupt);
    EXPECT_EQ(limiter.cooldown_length().error(), corrupt);
    EXPECT_EQ(limiter.cooldown_end().error(), corrupt);
}

}  // namespace
