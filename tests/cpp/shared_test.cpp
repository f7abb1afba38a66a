// weir.hpp's shared handles: shared_footprint(), place_shared() and
// attach() for the breaker, the shedder and the bucket; a forked process
// attaches and its calls land in the one handle; bad regions refused with
// their statuses; the recoveries reading.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "weir.hpp"

namespace {

constexpr std::size_t kRegion = 1 << 16;

struct Mapping {
    void* mem = mmap(nullptr, kRegion, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ~Mapping() { munmap(mem, kRegion); }
};

}  // namespace

TEST(Shared, AForkedProcessCountsInTheOneBreaker) {
    Mapping region;
    ASSERT_NE(region.mem, MAP_FAILED);
    auto fp = weir::Breaker::shared_footprint(weir::BreakerPolicy{});
    ASSERT_TRUE(fp);
    EXPECT_EQ(fp->align, std::size_t{WEIR_REGION_ALIGN});
    auto breaker = weir::Breaker::place_shared(region.mem, kRegion, weir::BreakerPolicy{}, weir::instant(0));
    ASSERT_TRUE(breaker);
    std::fflush(nullptr);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto mine = weir::Breaker::attach(region.mem, kRegion);
        if (!mine) _exit(1);
        for (int i = 0; i < 100; i++) {
            weir::BreakerTicket ticket;
            if (!mine->allow(weir::instant(10), 0.5, ticket)) _exit(2);
            if (mine->pass(ticket, weir::instant(10))) _exit(3);
        }
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    auto tally = breaker->tally(weir::instant(10));
    ASSERT_TRUE(tally);
    EXPECT_EQ(tally->success, 100);
    auto recoveries = breaker->recoveries();
    ASSERT_TRUE(recoveries);
    EXPECT_EQ(recoveries->recovered, 0u);
}

TEST(Shared, BadRegionsAreRefused) {
    Mapping region;
    ASSERT_NE(region.mem, MAP_FAILED);
    std::memset(region.mem, 0x77, 4096);
    EXPECT_EQ(weir::Shedder::attach(region.mem, kRegion).error(),
              weir::make_error_code(WEIR_ERR_REGION_FOREIGN));
    {
        // Destroyed before the region is laid again as another type.
        auto shedder = weir::Shedder::place_shared(region.mem, kRegion, weir::ShedderPolicy{}, weir::instant(0));
        ASSERT_TRUE(shedder);
        EXPECT_TRUE(weir::Shedder::attach(region.mem, kRegion));
        EXPECT_EQ(weir::Breaker::attach(region.mem, kRegion).error(),
                  weir::make_error_code(WEIR_ERR_REGION_KIND));
    }
    EXPECT_EQ(weir::Bucket::attach(region.mem, 100).error(), weir::make_error_code(WEIR_ERR_REGION_SIZE));
    auto fp = weir::Bucket::shared_footprint();
    ASSERT_TRUE(fp);
    auto bucket = weir::Bucket::place_shared(region.mem, fp->bytes, 1.0, 10.0, weir::instant(0));
    ASSERT_TRUE(bucket);
    auto again = weir::Bucket::attach(region.mem, fp->bytes);
    ASSERT_TRUE(again);
    EXPECT_TRUE(again->take(weir::instant(1), 10.0));
    EXPECT_FALSE(bucket->take(weir::instant(1), 1.0));
    // Its policy is the region's: no change in place, nothing changed.
    EXPECT_EQ(again->reconfigure(1000.0, 1000.0, weir::instant(1)),
              weir::make_error_code(WEIR_ERR_REGION_UNSUPPORTED));
    EXPECT_FALSE(bucket->take(weir::instant(1), 1.0));
}

TEST(Shared, AGateAndAPeriodHoldAcrossAttachments) {
    Mapping region;
    ASSERT_NE(region.mem, MAP_FAILED);
    {
        // Destroyed before the region is laid again as another type.
        auto gate = weir::Gate::place_shared(region.mem, kRegion, 1);
        ASSERT_TRUE(gate);
        auto other = weir::Gate::attach(region.mem, kRegion);
        ASSERT_TRUE(other);
        EXPECT_TRUE(gate->enter());
        EXPECT_FALSE(other->enter());
        EXPECT_EQ(other->reconfigure(5), weir::make_error_code(WEIR_ERR_REGION_UNSUPPORTED));
        EXPECT_FALSE(gate->enter());
    }
    EXPECT_EQ(weir::Period::attach(region.mem, kRegion).error(),
              weir::make_error_code(WEIR_ERR_REGION_KIND));
    auto period = weir::Period::place_shared(region.mem, kRegion, 2, std::chrono::seconds(1));
    ASSERT_TRUE(period);
    auto again = weir::Period::attach(region.mem, kRegion);
    ASSERT_TRUE(again);
    auto recoveries = again->recoveries();
    ASSERT_TRUE(recoveries);
    EXPECT_EQ(recoveries->recovered, 0u);
}

TEST(Shared, ASlidingWindowHoldsItsQuotaAcrossAttachments) {
    Mapping region;
    ASSERT_NE(region.mem, MAP_FAILED);
    auto fp = weir::Sliding::shared_footprint(3, std::chrono::seconds(60));
    ASSERT_TRUE(fp);
    auto sliding = weir::Sliding::place_shared(region.mem, fp->bytes, 3, std::chrono::seconds(60));
    ASSERT_TRUE(sliding);
    auto other = weir::Sliding::attach(region.mem, fp->bytes);
    ASSERT_TRUE(other);
    int got = 0;
    for (int i = 0; i < 5; i++) got += sliding->take(weir::instant(1)) + other->take(weir::instant(1));
    EXPECT_EQ(got, 3);
    auto recoveries = other->recoveries();
    ASSERT_TRUE(recoveries);
    EXPECT_EQ(recoveries->recovered, 0u);
    EXPECT_EQ(weir::Window::attach(region.mem, fp->bytes).error(), weir::make_error_code(WEIR_ERR_REGION_KIND));
}
