// weir.hpp's error codes, results and time types.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <system_error>
#include <type_traits>

#include "weir.hpp"

using namespace std::chrono_literals;

TEST(Errors, StatusIsAnErrorCodeEnumWhoseMessageIsTheLibrarys) {
    std::error_code ok = WEIR_OK;
    EXPECT_FALSE(ok);
    std::error_code null = WEIR_ERR_NULL;
    EXPECT_TRUE(null);
    EXPECT_EQ(null.value(), 1);
    EXPECT_EQ(&null.category(), &weir::status_category());
    EXPECT_STREQ(null.category().name(), "weir");
    EXPECT_EQ(null.message(), std::string(weir_status_str(WEIR_ERR_NULL)));
    EXPECT_EQ(std::error_code(WEIR_ERR_SETTLED), weir::make_error_code(WEIR_ERR_SETTLED));
    // A code weir does not define still has a message.
    EXPECT_EQ(weir::status_category().message(9999), std::string(weir_status_str(9999)));
}

TEST(Errors, ResultHoldsAValueOrAnError) {
    weir::result<int> value(7);
    ASSERT_TRUE(value);
    EXPECT_TRUE(value.ok());
    EXPECT_EQ(*value, 7);
    EXPECT_EQ(value.value(), 7);
    EXPECT_FALSE(value.error());

    weir::result<int> error(WEIR_ERR_NEGATIVE);
    EXPECT_FALSE(error);
    EXPECT_EQ(error.error(), std::error_code(WEIR_ERR_NEGATIVE));
#if WEIR_HPP_EXCEPTIONS
    EXPECT_THROW(error.value(), std::system_error);
    try {
        error.value();
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code(), std::error_code(WEIR_ERR_NEGATIVE));
    }
#endif
}

TEST(Time, InstantFromRawNanosecondsAndFromSteadyClock) {
    weir::instant raw(INT64_C(1500));
    EXPECT_EQ(raw.ns(), 1500);
    auto point = weir::clock::time_point(2s);
    EXPECT_EQ(weir::instant(point).ns(), INT64_C(2000000000));
    weir::instant a = weir::now();
    weir::instant b = weir::now();
    EXPECT_LE(a.ns(), b.ns());
    EXPECT_EQ((raw + 1us).ns(), 2500);
    EXPECT_EQ((weir::instant(INT64_MAX - 1) + 1s).ns(), INT64_MAX);
    EXPECT_EQ((weir::instant(INT64_MIN + 1) + (-1s)).ns(), INT64_MIN);
}

TEST(Version, HeaderAndLibraryAgree) { EXPECT_STREQ(weir::version(), WEIR_VERSION); }

// Every handle class is move-only.
template <class T>
constexpr bool move_only = !std::is_copy_constructible<T>::value && !std::is_copy_assignable<T>::value &&
                           std::is_nothrow_move_constructible<T>::value && std::is_nothrow_move_assignable<T>::value;
static_assert(move_only<weir::Gate>, "Gate is move-only");
static_assert(move_only<weir::Bucket>, "Bucket is move-only");
static_assert(move_only<weir::Sliding>, "Sliding is move-only");
static_assert(move_only<weir::Period>, "Period is move-only");
static_assert(move_only<weir::Window>, "Window is move-only");
static_assert(move_only<weir::Shedder>, "Shedder is move-only");
static_assert(move_only<weir::ShedderTicket>, "ShedderTicket is move-only");
static_assert(move_only<weir::Pool>, "Pool is move-only");
static_assert(move_only<weir::Bloom>, "Bloom is move-only");
static_assert(move_only<weir::Breaker>, "Breaker is move-only");
static_assert(move_only<weir::BreakerTicket>, "BreakerTicket is move-only");
static_assert(!std::is_copy_constructible<weir::Rate>::value, "a Rate word is not copied");
// Policies are aggregates.
static_assert(std::is_aggregate<weir::BreakerPolicy>::value, "BreakerPolicy is an aggregate");
static_assert(std::is_aggregate<weir::ShedderPolicy>::value, "ShedderPolicy is an aggregate");
static_assert(std::is_aggregate<weir::PoolPolicy>::value, "PoolPolicy is an aggregate");
static_assert(std::is_aggregate<weir::Backoff>::value, "Backoff is an aggregate");

TEST(Policies, DefaultsAreThePresets) {
    weir_shedder_policy shed = weir::ShedderPolicy{}.c();
    weir_shedder_policy shed_preset = weir_shedder_policy_preset();
    EXPECT_EQ(std::memcmp(&shed, &shed_preset, sizeof shed), 0);
    weir_pool_policy limits = weir::PoolPolicy{}.c();
    weir_pool_policy limits_preset = weir_pool_policy_preset();
    EXPECT_EQ(std::memcmp(&limits, &limits_preset, sizeof limits), 0);
    weir_backoff backoff = weir::Backoff{}.c();
    weir_backoff backoff_preset = weir_backoff_preset();
    EXPECT_EQ(std::memcmp(&backoff, &backoff_preset, sizeof backoff), 0);
    weir_breaker_policy sre = weir::BreakerPolicy{}.c();
    weir_breaker_policy sre_preset = weir_breaker_policy_preset();
    EXPECT_EQ(std::memcmp(&sre, &sre_preset, sizeof sre), 0);
}
