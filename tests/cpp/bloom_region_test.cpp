// weir.hpp's BloomRegion, the bloom laid in the caller's memory
// (weir_bloom_*_in): laid in an aligned std::vector and in aligned_alloc
// memory, each word kind admitting a key `burst` times, a second view and
// a second process sharing one array, and memory that holds no array
// answered with its status as a std::error_code.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__unix__)
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "weir.hpp"

using namespace std::chrono_literals;

static_assert(std::is_trivially_copyable<weir::BloomRegion>::value, "a BloomRegion is a view: copy freely");
static_assert(weir::BloomRegion::alignment == 64, "a region is laid on cache lines");

namespace {

// One cache line; a std::vector of them is 64-byte aligned (C++17's
// aligned operator new).
struct alignas(weir::BloomRegion::alignment) Line {
    unsigned char bytes[weir::BloomRegion::alignment];
};

constexpr std::uint32_t kSizeLog2 = 10;

std::vector<Line> lines_for(std::uint32_t size_log2) {
    return std::vector<Line>(weir::BloomRegion::footprint(size_log2) / sizeof(Line));
}

// The header's 64-bit words (weir_bloom_init_in documents them): 0 the
// magic, 1 the version, 2 the word kind | the line size << 32.
void put_word(void* region, std::size_t index, std::uint64_t value) {
    std::memcpy(static_cast<unsigned char*>(region) + 8 * index, &value, sizeof value);
}
std::uint64_t word_at(const void* region, std::size_t index) {
    std::uint64_t value = 0;
    std::memcpy(&value, static_cast<const unsigned char*>(region) + 8 * index, sizeof value);
    return value;
}

TEST(BloomRegion, FootprintIsTheHeaderAndTheWords) {
    EXPECT_EQ(weir::BloomRegion::footprint(kSizeLog2), std::size_t{WEIR_BLOOM_HEADER_BYTES} + 8 * 1024);
    EXPECT_EQ(weir::BloomRegion::footprint(WEIR_BLOOM_MIN_SIZE_LOG2), std::size_t{WEIR_BLOOM_HEADER_BYTES} + 64);
    EXPECT_EQ(weir::BloomRegion::footprint(WEIR_BLOOM_MIN_SIZE_LOG2 - 1), 0u);
    EXPECT_EQ(weir::BloomRegion::footprint(WEIR_BLOOM_MAX_SIZE_LOG2 + 1), 0u);
    EXPECT_EQ(weir::BloomRegion::footprint(kSizeLog2) % weir::BloomRegion::alignment, 0u);
}

TEST(BloomRegion, RateWordsInAnAlignedVectorAdmitAKeyBurstTimes) {
    std::vector<Line> lines = lines_for(kSizeLog2);
    const std::size_t len = lines.size() * sizeof(Line);
    const weir::RateLimit limit = weir::RateLimit::make(1.0, 3).value();
    auto region = weir::BloomRegion::init(lines.data(), len, kSizeLog2, 1, limit, 11, 12);
    ASSERT_TRUE(region) << region.error().message();
    EXPECT_EQ(region->data(), lines.data());
    EXPECT_EQ(region->size(), len);
    EXPECT_FALSE(weir::BloomRegion::check(lines.data(), len));
    for (int i = 0; i < 3; i++) EXPECT_TRUE(region->allow(0, "10.0.0.1")) << "event " << i;
    EXPECT_FALSE(region->allow(0, "10.0.0.1"));
    EXPECT_GT(region->next(0, "10.0.0.1"), 0ns);
    EXPECT_EQ(region->next(0, "10.0.0.2"), 0ns);
    EXPECT_TRUE(region->allow(0, "10.0.0.2"));
    // A fresh window when next says.
    EXPECT_TRUE(region->allow(weir::instant(0) + region->next(0, "10.0.0.1"), "10.0.0.1"));
}

TEST(BloomRegion, GcraWordsInAlignedAllocMemoryAdmitTheBurstThenOneATime) {
    const std::size_t len = weir::BloomRegion::footprint(kSizeLog2);
    std::unique_ptr<void, void (*)(void*)> mem(std::aligned_alloc(weir::BloomRegion::alignment, len), std::free);
    ASSERT_NE(mem.get(), nullptr);
    const weir::GcraLimit limit = weir::GcraLimit::make(1.0, 3).value();
    auto region = weir::BloomRegion::init_gcra(mem.get(), len, kSizeLog2, 2, limit, 21, 22);
    ASSERT_TRUE(region) << region.error().message();
    EXPECT_EQ(word_at(mem.get(), 2) & 0xffffffffu, 2u);  // the gcra kind
    EXPECT_TRUE(region->allow(0, "api-key"));
    EXPECT_TRUE(region->allow(0, "api-key"));
    EXPECT_TRUE(region->allow(0, "api-key"));
    EXPECT_FALSE(region->allow(0, "api-key"));
    EXPECT_EQ(region->next(0, "api-key"), 1s);
    EXPECT_FALSE(region->allow(weir::instant(0) + 999ms, "api-key"));
    EXPECT_TRUE(region->allow(weir::instant(0) + 1s, "api-key"));
    EXPECT_FALSE(region->allow(weir::instant(0) + 1s, "api-key"));
}

TEST(BloomRegion, AnAttachedViewSharesTheArray) {
    std::vector<Line> lines = lines_for(kSizeLog2);
    const std::size_t len = lines.size() * sizeof(Line);
    const weir::GcraLimit limit = weir::GcraLimit::make(1.0, 2).value();
    const weir::BloomRegion laid = weir::BloomRegion::init_gcra(lines.data(), len, kSizeLog2, 1, limit, 1, 2).value();
    auto attached = weir::BloomRegion::attach(lines.data(), len);
    ASSERT_TRUE(attached);
    const weir::BloomRegion copy = laid;  // a view: the same array
    EXPECT_TRUE(laid.allow(0, "k"));
    EXPECT_TRUE(copy.allow(0, "k"));
    EXPECT_FALSE(attached->allow(0, "k"));
    EXPECT_EQ(attached->next(0, "k"), 1s);
    // Laying it again resets it.
    ASSERT_TRUE(weir::BloomRegion::init_gcra(lines.data(), len, kSizeLog2, 1, limit, 1, 2));
    EXPECT_TRUE(attached->allow(0, "k"));
}

TEST(BloomRegion, CheckOfGarbageAnswersItsStatus) {
    std::vector<Line> lines = lines_for(kSizeLog2);
    const std::size_t len = lines.size() * sizeof(Line);
    std::memset(lines.data(), 0xab, len);
    const std::error_code garbage = weir::BloomRegion::check(lines.data(), len);
    EXPECT_EQ(garbage, std::error_code(WEIR_ERR_BLOOM_FOREIGN));
    EXPECT_TRUE(garbage.category() == weir::status_category());
    EXPECT_EQ(garbage.message(), weir_status_str(WEIR_ERR_BLOOM_FOREIGN));
    EXPECT_EQ(weir::BloomRegion::attach(lines.data(), len).error(), std::error_code(WEIR_ERR_BLOOM_FOREIGN));
    std::memset(lines.data(), 0, len);
    EXPECT_EQ(weir::BloomRegion::check(lines.data(), len), std::error_code(WEIR_ERR_BLOOM_FOREIGN));
    EXPECT_EQ(weir::BloomRegion::check(nullptr, len), std::error_code(WEIR_ERR_NULL));
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(lines.data());
    EXPECT_EQ(weir::BloomRegion::check(bytes + 8, len - 8), std::error_code(WEIR_ERR_MISALIGNED));

    // A real header with one field changed is refused for that field.
    const weir::RateLimit limit = weir::RateLimit::make(1.0, 1).value();
    ASSERT_TRUE(weir::BloomRegion::init(lines.data(), len, kSizeLog2, 1, limit, 1, 2));
    EXPECT_EQ(weir::BloomRegion::check(lines.data(), WEIR_BLOOM_HEADER_BYTES - 1),
              std::error_code(WEIR_ERR_BLOOM_TOO_SMALL));
    EXPECT_EQ(weir::BloomRegion::check(lines.data(), len - 8), std::error_code(WEIR_ERR_BLOOM_TOO_SMALL));
    const std::uint64_t version = word_at(lines.data(), 1);
    EXPECT_EQ(version, std::uint64_t{WEIR_BLOOM_VERSION});
    put_word(lines.data(), 1, version + 1);
    EXPECT_EQ(weir::BloomRegion::check(lines.data(), len), std::error_code(WEIR_ERR_BLOOM_VERSION));
    put_word(lines.data(), 1, version);
    const std::uint64_t shape = word_at(lines.data(), 2);
    put_word(lines.data(), 2, (shape & ~std::uint64_t{0xffffffff}) | 7);
    EXPECT_EQ(weir::BloomRegion::check(lines.data(), len), std::error_code(WEIR_ERR_BLOOM_KIND));
    put_word(lines.data(), 2, shape);
    EXPECT_FALSE(weir::BloomRegion::check(lines.data(), len));
}

TEST(BloomRegion, AViewOfMemoryNoLongerAnArrayRefuses) {
    std::vector<Line> lines = lines_for(kSizeLog2);
    const std::size_t len = lines.size() * sizeof(Line);
    const weir::RateLimit limit = weir::RateLimit::make(1.0, 5).value();
    const weir::BloomRegion region = weir::BloomRegion::init(lines.data(), len, kSizeLog2, 1, limit, 1, 2).value();
    EXPECT_TRUE(region.allow(0, "k"));
    std::memset(lines.data(), 0xab, WEIR_BLOOM_HEADER_BYTES);  // the header clobbered
    EXPECT_FALSE(region.allow(0, "k"));
    EXPECT_EQ(region.next(0, "k"), weir::nanoseconds::max());
}

TEST(BloomRegion, InitRefusesBadArgumentsAndWritesNothing) {
    std::vector<Line> lines = lines_for(kSizeLog2);
    const std::size_t len = lines.size() * sizeof(Line);
    std::memset(lines.data(), 0x5a, len);
    const weir::RateLimit rate = weir::RateLimit::make(1.0, 1).value();
    const weir::GcraLimit gcra = weir::GcraLimit::make(1.0, 1).value();
    unsigned char* bytes = reinterpret_cast<unsigned char*>(lines.data());
    EXPECT_EQ(weir::BloomRegion::init(bytes + 8, len - 8, kSizeLog2, 1, rate, 1, 2).error(),
              std::error_code(WEIR_ERR_MISALIGNED));
    EXPECT_EQ(weir::BloomRegion::init(lines.data(), len - 1, kSizeLog2, 1, rate, 1, 2).error(),
              std::error_code(WEIR_ERR_BLOOM_TOO_SMALL));
    EXPECT_EQ(weir::BloomRegion::init(nullptr, len, kSizeLog2, 1, rate, 1, 2).error(), std::error_code(WEIR_ERR_NULL));
    EXPECT_EQ(weir::BloomRegion::init(lines.data(), len, kSizeLog2, 0, rate, 1, 2).error(),
              std::error_code(WEIR_ERR_BLOOM_HASHES));
    EXPECT_EQ(weir::BloomRegion::init_gcra(lines.data(), len, WEIR_BLOOM_MIN_SIZE_LOG2 - 1, 1, gcra, 1, 2).error(),
              std::error_code(WEIR_ERR_BLOOM_TOO_FEW_WORDS));
    EXPECT_EQ(weir::BloomRegion::init_gcra(lines.data(), len, kSizeLog2, WEIR_BLOOM_MAX_HASHES + 1, gcra, 1, 2).error(),
              std::error_code(WEIR_ERR_BLOOM_HASHES));
    for (std::size_t i = 0; i < len; i++) ASSERT_EQ(bytes[i], 0x5a) << "byte " << i << " written";
}

TEST(BloomRegion, ThreadsShareOneRegionAndTakeExactlyTheBurst) {
    std::vector<Line> lines = lines_for(kSizeLog2);
    const weir::GcraLimit limit = weir::GcraLimit::make(1.0, 100).value();
    const weir::BloomRegion region =
        weir::BloomRegion::init_gcra(lines.data(), lines.size() * sizeof(Line), kSizeLog2, 1, limit, 3, 4).value();
    std::atomic<int> admitted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
        threads.emplace_back([&] {
            for (int i = 0; i < 1000; i++) {
                if (region.allow(7, "one key")) admitted++;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(admitted.load(), 100);
}

#if defined(__unix__)
TEST(BloomRegion, ProcessesShareARegionInSharedMemory) {
#if WEIR_WORDS_LOCK_FREE
    EXPECT_FALSE(weir::words_shareable()) << weir::words_shareable().message();
#endif
    if (weir::words_shareable()) GTEST_SKIP() << "words take a lock on this target";
    const std::size_t len = weir::BloomRegion::footprint(kSizeLog2);
    void* mem = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem, MAP_FAILED);
    const weir::RateLimit limit = weir::RateLimit::make(1.0, 4).value();
    ASSERT_TRUE(weir::BloomRegion::init(mem, len, kSizeLog2, 1, limit, 5, 6));
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // Another process: attaches and takes three of the four.
        auto region = weir::BloomRegion::attach(mem, len);
        int taken = 0;
        for (int i = 0; region && i < 3; i++) taken += region->allow(0, "shared") ? 1 : 0;
        _exit(taken == 3 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    const weir::BloomRegion region = weir::BloomRegion::attach(mem, len).value();
    EXPECT_TRUE(region.allow(0, "shared"));
    EXPECT_FALSE(region.allow(0, "shared"));
    munmap(mem, len);
}
#endif

}  // namespace
