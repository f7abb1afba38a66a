// weir.hpp's GCRA word (GcraLimit, Gcra): the burst at one instant, one
// token every 1 / rate after it, room and next telling the same story,
// all-or-nothing batches, the limit's checks, and threads sharing a word.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

#include "weir.hpp"

using namespace std::chrono_literals;

static_assert(!std::is_copy_constructible<weir::Gcra>::value, "a Gcra word is not copied");
static_assert(std::is_trivially_copyable<weir::GcraLimit>::value, "a GcraLimit is plain data");

namespace {

TEST(Gcra, AdmitsExactlyTheBurstAtOneInstantThenOneAfterAnInterval) {
    const weir::GcraLimit limit = weir::GcraLimit::make(10.0, 3).value();  // a token every 100 ms
    weir::Gcra word;
    const weir::instant t0(1'000'000'000);
    EXPECT_TRUE(word.allow(limit, t0));
    EXPECT_TRUE(word.allow(limit, t0));
    EXPECT_TRUE(word.allow(limit, t0));
    EXPECT_FALSE(word.allow(limit, t0));
    EXPECT_EQ(word.next(limit, t0), 100ms);
    EXPECT_FALSE(word.allow(limit, t0 + 99'999'999ns));
    EXPECT_TRUE(word.allow(limit, t0 + 100ms));
    EXPECT_FALSE(word.allow(limit, t0 + 100ms));
    EXPECT_EQ(word.next(limit, t0 + 100ms), 100ms);
}

TEST(Gcra, RoomAndNextAgree) {
    const weir::GcraLimit limit = weir::GcraLimit::make(4.0, 2).value();  // a token every 250 ms
    weir::Gcra word;
    EXPECT_EQ(word.room(limit, 0), 2);
    EXPECT_EQ(word.next(limit, 0), 0ns);
    ASSERT_TRUE(word.allow(limit, 0));
    ASSERT_TRUE(word.allow(limit, 0));
    EXPECT_EQ(word.room(limit, 0), 0);
    const weir::nanoseconds wait = word.next(limit, 0);
    EXPECT_EQ(wait, 250ms);
    // At every instant: room is 0 exactly while next is not 0, and the
    // room a full bucket regains is one token every 250 ms.
    for (std::int64_t ms = 0; ms <= 1000; ms += 50) {
        const weir::instant t = weir::instant(0) + std::chrono::milliseconds(ms);
        const std::int64_t room = word.room(limit, t);
        const weir::nanoseconds next = word.next(limit, t);
        EXPECT_EQ(room == 0, next > 0ns) << "at " << ms << " ms";
        EXPECT_EQ(room, ms >= 500 ? 2 : ms / 250) << "at " << ms << " ms";
        if (next > 0ns) {
            EXPECT_EQ(word.room(limit, t + next), 1) << "at " << ms << " ms";
            EXPECT_EQ(word.room(limit, t + (next - 1ns)), 0) << "at " << ms << " ms";
        }
    }
    // Reading changes nothing: the word still refuses at 0.
    EXPECT_FALSE(word.allow(limit, 0));
}

TEST(Gcra, AllowNTakesAllOrNothing) {
    const weir::GcraLimit limit = weir::GcraLimit::make(1.0, 3).value();
    weir::Gcra word;
    EXPECT_FALSE(word.allow_n(limit, 0, 4));  // above the burst: never
    EXPECT_FALSE(word.allow_n(limit, 0, 0));
    EXPECT_FALSE(word.allow_n(limit, 0, -1));
    EXPECT_EQ(word.room(limit, 0), 3);  // the refusals wrote nothing
    EXPECT_TRUE(word.allow_n(limit, 0, 2));
    EXPECT_FALSE(word.allow_n(limit, 0, 2));  // one left: two refused whole
    EXPECT_EQ(word.room(limit, 0), 1);
    EXPECT_TRUE(word.allow_n(limit, 0, 1));
    EXPECT_EQ(word.room(limit, 0), 0);
    EXPECT_TRUE(word.allow_n(limit, weir::instant(0) + 2s, 2));
}

TEST(Gcra, RefusesANegativeInstant) {
    const weir::GcraLimit limit = weir::GcraLimit::make(1.0, 1).value();
    weir::Gcra word;
    EXPECT_FALSE(word.allow(limit, -1));
    EXPECT_EQ(word.next(limit, -1), weir::nanoseconds::max());
    EXPECT_EQ(word.room(limit, -1), 0);
    EXPECT_TRUE(word.allow(limit, 0));  // untouched by the refusals
}

TEST(Gcra, LimitRefusesBadArgumentsWithTheirStatus) {
    EXPECT_EQ(weir::GcraLimit::make(1.0, 0).error(), std::error_code(WEIR_ERR_GCRA_BURST));
    EXPECT_EQ(weir::GcraLimit::make(0.0, 1).error(), std::error_code(WEIR_ERR_GCRA_ZERO));
    EXPECT_EQ(weir::GcraLimit::make(-1.0, 1).error(), std::error_code(WEIR_ERR_NEGATIVE));
    EXPECT_EQ(weir::GcraLimit::make(std::nan(""), 1).error(), std::error_code(WEIR_ERR_NOT_FINITE));
    EXPECT_EQ(weir::GcraLimit::make(1e12, 1).error(), std::error_code(WEIR_ERR_GCRA_TOO_FAST));
    EXPECT_EQ(weir::GcraLimit::make(1e-12, 1).error(), std::error_code(WEIR_ERR_GCRA_TOO_SLOW));
    auto ok = weir::GcraLimit::make(1.0, 1);
    EXPECT_TRUE(ok);
    EXPECT_FALSE(ok.error());
}

TEST(Gcra, ThreadsShareOneWordAndTakeExactlyTheBurst) {
    const weir::GcraLimit limit = weir::GcraLimit::make(1.0, 100).value();
    weir::Gcra word;
    std::atomic<int> admitted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&] {
            for (int i = 0; i < 1000; i++) {
                if (word.allow(limit, 5)) admitted++;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(admitted.load(), 100);
    EXPECT_EQ(word.room(limit, 5), 0);
}

TEST(Gcra, TheCWordIsTheSame) {
    const weir::GcraLimit limit = weir::GcraLimit::make(1.0, 1).value();
    weir::Gcra word;
    EXPECT_TRUE(weir_gcra_allow(word.get(), limit.get(), 0));
    EXPECT_FALSE(word.allow(limit, 0));
    EXPECT_EQ(weir_gcra_next(word.get(), limit.get(), 0), 1'000'000'000);
}

}  // namespace
