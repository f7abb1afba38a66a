// weir.hpp's Keyed, the keyed table (weir_keyed): made on the heap, placed
// in an aligned vector and shared by two processes through a MAP_SHARED
// mapping; each key admitted exactly its burst, overflow answered by the
// policy, bad arguments answered as std::error_code, sizing as the header
// states it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__unix__)
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "weir.hpp"

static_assert(!std::is_copy_constructible<weir::Keyed>::value, "a Keyed owns its table: move it");
static_assert(std::is_nothrow_move_constructible<weir::Keyed>::value, "moves never throw");

namespace {

constexpr std::int64_t kSec = 1000000000;
constexpr std::uint64_t kSeed0 = 0x243f6a8885a308d3u;
constexpr std::uint64_t kSeed1 = 0x13198a2e03707344u;

weir::GcraLimit gcra_limit(double per_s, std::int64_t burst) {
    auto limit = weir::GcraLimit::make(per_s, burst);
    EXPECT_TRUE(limit.ok());
    return *limit;
}

using Overflow = weir::Keyed::overflow;
using Decision = weir::Keyed::decision;

struct alignas(128) Block {
    unsigned char bytes[128];
};

TEST(Keyed, EachKeyGetsItsBurstAndNextSaysWhenMore) {
    auto table = weir::Keyed::make(64, gcra_limit(1.0, 3), Overflow::refuse, kSeed0, kSeed1);
    ASSERT_TRUE(table.ok()) << table.error().message();
    for (int key = 0; key < 50; key++) {
        std::string name = "client-" + std::to_string(key);
        for (int i = 0; i < 3; i++) EXPECT_TRUE(table->allow(weir::instant(kSec), name));
        EXPECT_FALSE(table->allow(weir::instant(kSec), name));
        auto next = table->next(weir::instant(kSec), name);
        ASSERT_TRUE(next.ok());
        EXPECT_EQ(next->count(), kSec); // a wait: from kSec to 2 * kSec
    }
    auto reading = table->read();
    ASSERT_TRUE(reading.ok());
    EXPECT_EQ(reading->buckets, 64u);
    EXPECT_EQ(reading->slots, 512u);
    EXPECT_EQ(reading->occupied, 50u);
    EXPECT_EQ(reading->overflows, 0u);
    EXPECT_EQ(reading->kind, std::uint32_t{WEIR_KEYED_KIND_GCRA});
    // All or nothing: two at once once two have come back.
    auto two = table->decide(weir::instant(3 * kSec), "client-1", 2);
    ASSERT_TRUE(two.ok());
    EXPECT_EQ(*two, Decision::allowed);
    EXPECT_TRUE(weir::Keyed::admitted(*two));
}

TEST(Keyed, OverflowIsAnsweredByThePolicy) {
    // One bucket: eight keys fill it.
    for (auto policy : {Overflow::refuse, Overflow::admit, Overflow::shared}) {
        auto table = weir::Keyed::make(1, gcra_limit(1.0, 1), policy, kSeed0, kSeed1);
        ASSERT_TRUE(table.ok());
        for (int key = 0; key < 8; key++) EXPECT_TRUE(table->allow(weir::instant(0), std::to_string(key)));
        auto ninth = table->decide(weir::instant(0), "ninth");
        ASSERT_TRUE(ninth.ok());
        EXPECT_EQ(*ninth, policy == Overflow::refuse ? Decision::overflow_refused : Decision::overflow_admitted);
        EXPECT_EQ(table->read()->overflows, 1u);
        EXPECT_EQ(table->read()->overflow_policy, static_cast<std::uint32_t>(policy));
    }
}

TEST(Keyed, BadArgumentsAreErrorCodes) {
    auto limit = gcra_limit(1.0, 2);
    auto none = weir::Keyed::make(0, limit, Overflow::refuse, kSeed0, kSeed1);
    EXPECT_FALSE(none.ok());
    EXPECT_EQ(none.error(), std::error_code(WEIR_ERR_KEYED_BUCKETS));
    auto unknown = weir::Keyed::make(4, limit, static_cast<Overflow>(9), kSeed0, kSeed1);
    EXPECT_EQ(unknown.error(), std::error_code(WEIR_ERR_KEYED_OVERFLOW));
    auto table = weir::Keyed::make(4, limit, Overflow::refuse, kSeed0, kSeed1);
    ASSERT_TRUE(table.ok());
    EXPECT_EQ(table->decide(weir::instant(0), "k", 3).error(), std::error_code(WEIR_ERR_KEYED_COUNT));
    EXPECT_EQ(table->decide(weir::instant(-1), "k").error(), std::error_code(WEIR_ERR_NEGATIVE));
    EXPECT_EQ(table->next(weir::instant(-1), "k").error(), std::error_code(WEIR_ERR_NEGATIVE));
    // A moved-from table answers what the C call answers for NULL.
    weir::Keyed moved = std::move(*table);
    EXPECT_FALSE(table->get());
    EXPECT_FALSE(table->allow(weir::instant(0), "k"));
    EXPECT_EQ(table->read().error(), std::error_code(WEIR_ERR_NULL));
    EXPECT_TRUE(moved.allow(weir::instant(0), "k"));
}

TEST(Keyed, SizingIsTheHeaders) {
    auto buckets = weir::Keyed::buckets_for(1000000, 1e-9);
    ASSERT_TRUE(buckets.ok());
    EXPECT_EQ(*buckets, 203090u);
    EXPECT_EQ(weir::Keyed::buckets_for(1000, 0.0).error(), std::error_code(WEIR_ERR_KEYED_SIZING));
    EXPECT_NEAR(weir::Keyed::overflow_chance(4e6, 8e6) / 2.754e-20, 1.0, 1e-3);
    EXPECT_TRUE(std::isnan(weir::Keyed::overflow_chance(-1.0, 8.0)));
}

TEST(Keyed, PlacedAnswersAsTheHeapOne) {
    auto rate = weir::RateLimit::make(10.0, 2);
    ASSERT_TRUE(rate.ok());
    auto size = weir::Keyed::footprint(16);
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(size->align, 128u);
    std::vector<Block> memory(size->bytes / sizeof(Block) + 1);
    auto placed = weir::Keyed::place_rate(memory.data(), memory.size() * sizeof(Block), 16, *rate,
                                          Overflow::refuse, kSeed0, kSeed1);
    ASSERT_TRUE(placed.ok()) << placed.error().message();
    auto heap = weir::Keyed::make_rate(16, *rate, Overflow::refuse, kSeed0, kSeed1);
    ASSERT_TRUE(heap.ok());
    for (int key = 0; key < 40; key++) {
        for (int i = 0; i < 3; i++) {
            std::string name = std::to_string(key);
            EXPECT_EQ(placed->allow(weir::instant(kSec), name), heap->allow(weir::instant(kSec), name));
        }
    }
    EXPECT_EQ(placed->read()->kind, std::uint32_t{WEIR_KEYED_KIND_RATE});
    EXPECT_EQ(placed->read()->occupied, heap->read()->occupied);
    auto misplaced = weir::Keyed::place(memory.data(), 8, 16, gcra_limit(1.0, 1), Overflow::refuse, 1, 2);
    EXPECT_EQ(misplaced.error(), std::error_code(WEIR_ERR_PLACED_TOO_SMALL));
}

#if defined(__unix__)
TEST(Keyed, TwoProcessesShareOneTable) {
    auto size = weir::Keyed::shared_footprint(32);
    if (!weir::Keyed::lock_free()) {
        EXPECT_EQ(size.error(), std::error_code(WEIR_ERR_WORDS_NOT_SHAREABLE));
        GTEST_SKIP() << "no 16-byte compare-and-swap here: a table is not shared";
    }
    ASSERT_TRUE(size.ok());
    void* mem = mmap(nullptr, size->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem, MAP_FAILED);
    {
        auto table =
            weir::Keyed::place_shared(mem, size->bytes, 32, gcra_limit(1.0, 4), Overflow::refuse, kSeed0, kSeed1);
        ASSERT_TRUE(table.ok()) << table.error().message();
        // The child takes what it can of each key; the parent then finds
        // every key spent: the two shared one word per key.
        pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            auto mine = weir::Keyed::attach(mem, size->bytes);
            int admitted = 0;
            if (mine.ok()) {
                for (int key = 0; key < 20; key++) {
                    for (int i = 0; i < 6; i++) admitted += mine->allow(weir::instant(kSec), std::to_string(key));
                }
            }
            _exit(admitted == 20 * 4 ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        for (int key = 0; key < 20; key++) EXPECT_FALSE(table->allow(weir::instant(kSec), std::to_string(key)));
        EXPECT_EQ(table->read()->occupied, 20u);
        auto attached = weir::Keyed::attach(mem, 100);
        EXPECT_EQ(attached.error(), std::error_code(WEIR_ERR_REGION_SIZE));
    }
    ASSERT_EQ(munmap(mem, size->bytes), 0);
}
#endif

}  // namespace
