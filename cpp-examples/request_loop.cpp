// A request loop in C++ over weir.hpp: each request is rate limited by a
// bucket, asks a breaker whether the backend is worth calling, and borrows
// a connection from a pool. The backend fails for two seconds in the
// middle; the breaker sheds most calls then, and lets them through again
// once it recovers. Time is simulated (a request every 10 ms for 6 s), so
// the run is the same every time.
#include <chrono>
#include <cstdint>
#include <cstdio>

#include "weir.hpp"

using namespace std::chrono_literals;

namespace {

// The backend: fails from 2 s to 4 s.
bool call_backend(std::uintptr_t connection, weir::instant now) {
    (void)connection;
    return now.ns() < weir::instant(2'000'000'000).ns() || now.ns() >= weir::instant(4'000'000'000).ns();
}

// A deterministic draw in [0, 1) for the breaker's roll.
double draw(std::uint64_t& state) {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
}

}  // namespace

int main() {
    const weir::instant start = 0;
    auto bucket = weir::Bucket::make(80.0, 10.0, start);  // 80 requests/s, bursts of 10
    auto breaker = weir::Breaker::make(start);             // the preset policy
    weir::PoolPolicy limits;                                   // the preset, but 4 connections
    limits.size = 4;
    limits.idle = 4;
    auto pool = weir::Pool::make(limits);
    if (!bucket || !breaker || !pool) {
        std::fprintf(stderr, "setup failed: %s\n",
                     (!bucket ? bucket.error() : !breaker ? breaker.error() : pool.error()).message().c_str());
        return 1;
    }

    std::uintptr_t next_connection = 1;
    std::uint64_t rng = 42;
    int limited = 0, shed = 0, ok = 0, failed = 0, waited = 0;
    int failed_late = 0, ok_late = 0;
    for (weir::instant now = start; now.ns() < weir::instant(6'000'000'000).ns(); now = now + 10ms) {
        if (!bucket->take(now)) {
            limited++;  // a 429 with Retry-After: bucket->next(now)
            continue;
        }
        weir::BreakerTicket call;
        if (!breaker->allow(now, draw(rng), call)) {
            shed++;  // a fast 503: the backend is failing
            continue;
        }
        weir::PoolTaken taken = pool->take(now);
        while (taken.kind == weir::PoolTaken::Kind::stale) {
            taken = pool->take(now);  // close taken.item first; a stale item is out of the pool's count
        }
        std::uintptr_t connection = taken.item;
        if (taken.kind == weir::PoolTaken::Kind::make) {
            connection = next_connection++;  // connect here
            (void)pool->made(connection, now);
        } else if (taken.kind == weir::PoolTaken::Kind::wait) {
            waited++;
            (void)breaker->fail(call, now);  // the call never happened: count it against the backend
            continue;
        }
        bool good = call_backend(connection, now);
        if (good) {
            ok++;
            (void)breaker->pass(call, now);
            auto kept = pool->give(connection, now);
            (void)kept;  // if !*kept, close the connection
        } else {
            failed++;
            (void)breaker->fail(call, now);
            (void)pool->drop(connection);  // a failed call's connection is closed
        }
        if (now.ns() >= weir::instant(5'000'000'000).ns()) {
            (good ? ok_late : failed_late)++;
        }
    }
    std::printf("requests: %d ok, %d failed, %d shed by the breaker, %d rate limited, %d waited\n", ok, failed,
                shed, limited, waited);
    std::printf("after recovery (5-6 s): %d ok, %d failed; connections made: %d\n", ok_late, failed_late,
                static_cast<int>(next_connection - 1));
    // The outage was shed, the limit held, and the backend was used again.
    bool expected = shed > 0 && limited > 0 && failed > 0 && ok_late > 0 && failed_late == 0;
    return expected ? 0 : 1;
}
