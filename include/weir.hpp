// weir.hpp — C++17 over weir's C API (weir.h), header-only.
//
// - One move-only RAII class per handle in namespace weir (Breaker,
//   Shedder, Window, Bucket, Sliding, Period, Gate, Pool, Bloom, Keyed,
//   Budget, Lease, Concurrency); a
//   moved-from object holds nothing, and every call on it answers what the C
//   call answers for NULL (a refusal, 0, or WEIR_ERR_NULL). BloomRegion is
//   the bloom laid in the caller's (shared) memory: a view, not an owner.
// - Value types for weir's by-value structs (RateLimit, Rate, GcraLimit,
//   Gcra, Limiter, Deadline) and policies as aggregates whose defaults are the presets
//   (`weir::BreakerPolicy{}` is `weir_breaker_policy_preset()`; `weir::BreakerPolicy{.k = 2.0}` in C++20).
// - weir::charge_all charges several limits all or nothing (an
//   organisation's, a team's, a user's): ChargeItem::gcra, rate, bucket
//   and bloom name each limit and its cost.
// - Time: every `now` is a `weir::instant`, made from a raw int64_t of
//   nanoseconds on the caller's clock or from a std::chrono::steady_clock
//   time point; `weir::now()` reads steady_clock. Durations are
//   std::chrono::nanoseconds (any coarser std::chrono duration converts).
// - Errors: weir_status is a std::error_code enum (`std::error_code ec =
//   WEIR_ERR_NULL;`, `ec.message()` is weir_status_str). Constructors are
//   `static result<T> make(...)`: test it, read `.error()`, or take the
//   value. Nothing here throws unless you call `value()` on an error with
//   exceptions enabled (it throws std::system_error; with -fno-exceptions it
//   aborts), so the header builds with -fno-exceptions.
// - Threads: a handle's calls are const and may be made from many threads
//   at once, as in C. Value types are plain data: guard them yourself.
//
// Nothing here allocates except error_code::message(). The C API stays
// available beside it: `get()` returns the C handle.
//
// Not wrapped: the functions weir.h declares that no code here calls by
// name, each with its reason. One entry per `//   - ` line: its names
// (comma-separated; `*` matches any run of characters), a colon, then the
// reason, which may go on over the following lines.
//   - weir_critical_enter, weir_critical_exit: not weir's functions: a
//     firmware SDK defines them and the firmware library calls them
//     (feature sdk-critical-section); a program never calls them.
//   - weir_hosted_only_*: the firmware header's (WEIR_FREESTANDING)
//     stand-ins that turn a call to a host-only function into a compile
//     error; declared, never defined.
//   - *_inline, *_inline_: weir_rate_allow_inline, weir_rate_next_inline
//     and their helpers are C11 static inline fast paths that weir.h
//     compiles only for C (`!defined(__cplusplus)`), so C++ cannot see
//     them; Rate::allow and Rate::next call weir_rate_allow and
//     weir_rate_next, which answer the same.
//   - weir_pool_attach: a pool is never shared between processes (its
//     items are one process's identities), so the call only ever answers
//     WEIR_ERR_REGION_POOL; Pool has place() and no attach().
#ifndef WEIR_HPP
#define WEIR_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "weir.h"

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define WEIR_HPP_EXCEPTIONS 1
#else
#define WEIR_HPP_EXCEPTIONS 0
#endif

namespace weir {

// ---------------------------------------------------------------- errors

// The error category of weir_status: message() is weir_status_str.
class status_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "weir"; }
    std::string message(int code) const override { return weir_status_str(static_cast<std::int32_t>(code)); }
};

inline const std::error_category& status_category() noexcept {
    static const status_category_impl category;
    return category;
}

inline std::error_code make_error_code(weir_status status) noexcept {
    return std::error_code(static_cast<int>(status), status_category());
}

}  // namespace weir

namespace std {
template <>
struct is_error_code_enum<weir_status> : true_type {};
}  // namespace std

// Found by argument-dependent lookup: weir_status lives in the global
// namespace, as the C header declares it.
inline std::error_code make_error_code(weir_status status) noexcept { return weir::make_error_code(status); }

namespace weir {

// A value or the status that prevented it.
template <class T>
class result {
public:
    result(T value) noexcept(std::is_nothrow_move_constructible<T>::value) : value_(std::move(value)) {}
    result(std::error_code error) noexcept : error_(error) {}
    result(weir_status status) noexcept : error_(weir::make_error_code(status)) {}

    bool ok() const noexcept { return value_.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
    // WEIR_OK when there is a value.
    std::error_code error() const noexcept { return error_; }

    T& operator*() & noexcept { return *value_; }
    const T& operator*() const& noexcept { return *value_; }
    T* operator->() noexcept { return &*value_; }
    const T* operator->() const noexcept { return &*value_; }

    // The value; on an error, throws std::system_error (aborts when built
    // with -fno-exceptions).
    T& value() & { check(); return *value_; }
    T&& value() && { check(); return std::move(*value_); }

private:
    void check() const {
        if (value_) return;
#if WEIR_HPP_EXCEPTIONS
        throw std::system_error(error_);
#else
        std::abort();
#endif
    }

    std::optional<T> value_;
    std::error_code error_;
};

// ------------------------------------------------------------------ time

using clock = std::chrono::steady_clock;
using std::chrono::nanoseconds;

// A reading of the caller's clock in nanoseconds: a raw int64_t, or a
// steady_clock time point (its nanoseconds since the clock's epoch).
class instant {
public:
    constexpr instant(std::int64_t ns) noexcept : ns_(ns) {}
    instant(clock::time_point time) noexcept
        : ns_(std::chrono::duration_cast<nanoseconds>(time.time_since_epoch()).count()) {}
    constexpr std::int64_t ns() const noexcept { return ns_; }
    friend constexpr bool operator==(instant a, instant b) noexcept { return a.ns_ == b.ns_; }
    friend constexpr bool operator!=(instant a, instant b) noexcept { return a.ns_ != b.ns_; }

private:
    std::int64_t ns_;
};

// steady_clock now, as an instant.
inline instant now() noexcept { return instant(clock::now()); }

// The instant `d` after `t` (saturating at INT64_MAX / INT64_MIN).
inline instant operator+(instant t, nanoseconds d) noexcept {
    const std::int64_t n = static_cast<std::int64_t>(d.count());
    if (n > 0 && t.ns() > INT64_MAX - n) return instant(INT64_MAX);
    if (n < 0 && t.ns() < INT64_MIN - n) return instant(INT64_MIN);
    return instant(t.ns() + n);
}

inline const char* version() noexcept { return weir_version(); }

namespace detail {

inline std::error_code code(weir_status status) noexcept { return weir::make_error_code(status); }

// The move-only owner of one C handle; `Free` accepts NULL.
template <class C, void (*Free)(C*)>
class handle {
public:
    handle(const handle&) = delete;
    handle& operator=(const handle&) = delete;
    handle(handle&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
    handle& operator=(handle&& other) noexcept {
        if (this != &other) {
            Free(ptr_);
            ptr_ = std::exchange(other.ptr_, nullptr);
        }
        return *this;
    }
    ~handle() { Free(ptr_); }

    // The C handle, still owned by this object (NULL once moved from).
    C* get() const noexcept { return ptr_; }
    // Gives up ownership: the caller frees the C handle.
    C* release() noexcept { return std::exchange(ptr_, nullptr); }
    explicit operator bool() const noexcept { return ptr_ != nullptr; }

protected:
    explicit handle(C* ptr) noexcept : ptr_(ptr) {}

private:
    C* ptr_;
};

}  // namespace detail

// Whether this build may share its words (a Rate or Gcra word, a
// BloomRegion) with another process: no error where word updates are
// lock-free 64-bit atomics; WEIR_ERR_WORDS_NOT_SHAREABLE where each takes a
// lock inside this program (then BloomRegion::init and check answer it too).
inline std::error_code words_shareable() noexcept { return detail::code(weir_words_shareable()); }

// What a placed handle needs (weir_X_footprint): `bytes` at a multiple of
// `align`. Each handle class's place() lays one there (weir_X_init_in);
// the memory stays the caller's, and the object's destructor leaves it
// alone (weir_X_free does nothing to a placed handle). Keep the memory
// where it is until the object is gone.
struct footprint {
    std::size_t bytes;
    std::size_t align;
};

// ------------------------------------------------------------------ gate

// A concurrency ceiling (weir_gate): at most `limit` inside at once.
class Gate : public detail::handle<weir_gate, weir_gate_free> {
public:
    // `limit` of zero or less: no ceiling.
    static result<Gate> make(std::int64_t limit) noexcept {
        weir_gate* out = nullptr;
        weir_status status = weir_gate_new(limit, &out);
        if (status != WEIR_OK) return status;
        return Gate(out);
    }
    bool enter() const noexcept { return weir_gate_enter(get()); }
    void leave() const noexcept { weir_gate_leave(get()); }
    std::int64_t held() const noexcept { return weir_gate_held(get()); }
    // A new limit in place (weir_gate_reconfigure): the calls inside kept,
    // none entering until the count is under it. Safe beside the gate's
    // other calls: an enter racing it is judged by the old limit or the new.
    std::error_code reconfigure(std::int64_t limit) noexcept {
        return detail::code(weir_gate_reconfigure(get(), limit));
    }

    // Counting (weir_gate_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_gate_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_gate_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_gate_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Gate> place(void* mem, std::size_t len, std::int64_t limit) noexcept {
        weir_gate* out = nullptr;
        weir_status status = weir_gate_init_in(mem, len, limit, &out);
        if (status != WEIR_OK) return status;
        return Gate(out);
    }
    // Shared between processes (weir_gate_init_shared, weir_gate_attach);
    // destroying the object leaves the region alone.
    static result<weir::footprint> shared_footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_gate_shared_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Gate> place_shared(void* mem, std::size_t len, std::int64_t limit) noexcept {
        weir_gate* out = nullptr;
        weir_status status = weir_gate_init_shared(mem, len, limit, &out);
        if (status != WEIR_OK) return status;
        return Gate(out);
    }
    static result<Gate> attach(void* mem, std::size_t len) noexcept {
        weir_gate* out = nullptr;
        weir_status status = weir_gate_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Gate(out);
    }

private:
    explicit Gate(weir_gate* gate) noexcept : handle(gate) {}
};

// ---------------------------------------------------------------- budget

// A retry budget (weir_budget): gRPC's token throttling or Finagle's
// percent budget, as `policy.form` says. The policy is the C struct; start
// from weir_budget_policy_preset().
class Budget : public detail::handle<weir_budget, weir_budget_free> {
public:
    static result<Budget> make(const weir_budget_policy& policy, instant now) noexcept {
        weir_budget* out = nullptr;
        weir_status status = weir_budget_new(&policy, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Budget(out);
    }
    static result<Budget> make(instant now) noexcept { return make(weir_budget_policy_preset(), now); }
    void deposit(instant now) const noexcept { weir_budget_deposit(get(), now.ns()); }
    bool withdraw(instant now) const noexcept { return weir_budget_withdraw(get(), now.ns()); }
    std::int64_t left(instant now) const noexcept { return weir_budget_left(get(), now.ns()); }
    std::int64_t tokens(instant now) const noexcept { return weir_budget_tokens(get(), now.ns()); }
    // A new policy at `now`, in place (weir_budget_reconfigure): a token
    // count kept up to the new max_tokens; percent credit kept at the worth
    // its own policy gave it, laid on the new ttl's slices so that a
    // deposit ages out no later and a withdrawal no sooner than the new
    // policy would have it; a change of form starts afresh. An error changes nothing. Safe beside
    // the budget's other calls: it takes the budget's lock.
    std::error_code reconfigure(const weir_budget_policy& policy, instant now) noexcept {
        return detail::code(weir_budget_reconfigure(get(), &policy, now.ns()));
    }

    // Counting (weir_budget_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_budget_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_budget_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_budget_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Budget> place(void* mem, std::size_t len, const weir_budget_policy& policy, instant now) noexcept {
        weir_budget* out = nullptr;
        weir_status status = weir_budget_init_in(mem, len, &policy, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Budget(out);
    }
    // Shared between processes (weir_budget_init_shared, weir_budget_attach);
    // destroying the object leaves the region alone.
    static result<weir::footprint> shared_footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_budget_shared_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Budget> place_shared(void* mem, std::size_t len, const weir_budget_policy& policy, instant now) noexcept {
        weir_budget* out = nullptr;
        weir_status status = weir_budget_init_shared(mem, len, &policy, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Budget(out);
    }
    static result<Budget> attach(void* mem, std::size_t len) noexcept {
        weir_budget* out = nullptr;
        weir_status status = weir_budget_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Budget(out);
    }
    // What the shared lock recovered from (weir_budget_recoveries).
    result<weir_recoveries> recoveries() const noexcept {
        weir_recoveries out{};
        weir_status status = weir_budget_recoveries(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

private:
    explicit Budget(weir_budget* budget) noexcept : handle(budget) {}
};

// ----------------------------------------------------------------- lease

// One client's units leased from a fleet limit (weir_lease; the Redis
// module's WEIR.LEASE grants them): take spends them or says to ask, grant
// records the store's answer, release hands back what is live. The policy
// is the C struct; start from weir_lease_policy_preset().
class Lease : public detail::handle<weir_lease, weir_lease_free> {
public:
    static result<Lease> make(const weir_lease_policy& policy, instant now) noexcept {
        weir_lease* out = nullptr;
        weir_status status = weir_lease_new(&policy, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Lease(out);
    }
    static result<Lease> make(instant now) noexcept { return make(weir_lease_policy_preset(), now); }
    result<weir_lease_answer> take(instant now, std::int64_t cost = 1) const noexcept {
        weir_lease_answer out{};
        weir_status status = weir_lease_take(get(), now.ns(), cost, &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    std::error_code grant(instant now, std::int64_t granted, instant until, instant next) const noexcept {
        return weir_lease_grant(get(), now.ns(), granted, until.ns(), next.ns());
    }
    std::int64_t release(instant now) const noexcept { return weir_lease_release(get(), now.ns()); }
    std::int64_t unspent(instant now) const noexcept { return weir_lease_unspent(get(), now.ns()); }
    std::int64_t expires(instant now) const noexcept { return weir_lease_expires(get(), now.ns()); }
    std::int64_t cap() const noexcept { return weir_lease_cap(get()); }
    // A new policy in place (weir_lease_reconfigure): the units held stay
    // spendable to the end of their own grants (above a lower cap too), the
    // ask in flight, the measured demand and round trip and the stats are
    // kept; the new interval, ttl and cap count from the next call. Safe
    // beside the other calls (the handle's own lock).
    std::error_code reconfigure(const weir_lease_policy& policy) noexcept {
        return detail::code(weir_lease_reconfigure(get(), &policy));
    }
    result<weir_lease_stats> stats(instant now) const noexcept {
        weir_lease_stats out{};
        weir_status status = weir_lease_read_stats(get(), now.ns(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

    // Counting (weir_lease_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_lease_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_lease_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_lease_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Lease> place(void* mem, std::size_t len, const weir_lease_policy& policy, instant now) noexcept {
        weir_lease* out = nullptr;
        weir_status status = weir_lease_init_in(mem, len, &policy, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Lease(out);
    }

private:
    explicit Lease(weir_lease* lease) noexcept : handle(lease) {}
};

// ----------------------------------------------------------- concurrency

// An adaptive concurrency limit (weir_concurrency, Gradient2). The policy
// is the C struct; start from weir_concurrency_policy_preset(). A weir_concurrency_ticket is the
// call in flight: give it back once to leave().
class Concurrency : public detail::handle<weir_concurrency, weir_concurrency_free> {
public:
    static result<Concurrency> make(const weir_concurrency_policy& policy) noexcept {
        weir_concurrency* out = nullptr;
        weir_status status = weir_concurrency_new(&policy, &out);
        if (status != WEIR_OK) return status;
        return Concurrency(out);
    }
    static result<Concurrency> make() noexcept { return make(weir_concurrency_policy_preset()); }
    // A limit split into `count` partitions (weir_concurrency_new_partitioned).
    static result<Concurrency> make_partitioned(const weir_concurrency_policy& policy,
                                                const weir_concurrency_partition* parts,
                                                std::int32_t count) noexcept {
        weir_concurrency* out = nullptr;
        weir_status status = weir_concurrency_new_partitioned(&policy, parts, count, &out);
        if (status != WEIR_OK) return status;
        return Concurrency(out);
    }
    // A call of partition `partition`: true, go ahead (leave it with the
    // same partition); false, refused, or no such partition.
    bool enter(std::int32_t partition, instant now, weir_concurrency_ticket& flight) const noexcept {
        return weir_concurrency_enter_partition(get(), partition, now.ns(), &flight) == WEIR_OK && flight.flying == 1;
    }
    std::error_code leave(std::int32_t partition, weir_concurrency_ticket& flight, instant now,
                          bool dropped = false) const noexcept {
        return detail::code(weir_concurrency_leave_partition(get(), partition, &flight, now.ns(), dropped));
    }
    std::int64_t partition_flying(std::int32_t partition) const noexcept {
        return weir_concurrency_partition_flying(get(), partition);
    }
    std::int64_t partition_room(std::int32_t partition) const noexcept {
        return weir_concurrency_partition_room(get(), partition);
    }
    bool enter(instant now, weir_concurrency_ticket& flight) const noexcept {
        return weir_concurrency_enter(get(), now.ns(), &flight);
    }
    std::error_code leave(weir_concurrency_ticket& flight, instant now, bool dropped = false) const noexcept {
        return detail::code(weir_concurrency_leave(get(), &flight, now.ns(), dropped));
    }
    std::int64_t limit() const noexcept { return weir_concurrency_limit(get()); }
    std::int64_t flying() const noexcept { return weir_concurrency_flying(get()); }
    double long_rtt() const noexcept { return weir_concurrency_long_rtt(get()); }
    // A new policy in place (weir_concurrency_reconfigure): the limit
    // reached kept, held to the new [min_limit, max_limit]; calls in flight,
    // latency averages and partitions kept. An error changes nothing. Safe
    // beside the limit's other calls: it takes the limit's lock.
    std::error_code reconfigure(const weir_concurrency_policy& policy) noexcept {
        return detail::code(weir_concurrency_reconfigure(get(), &policy));
    }

    // Counting (weir_concurrency_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_concurrency_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_concurrency_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_concurrency_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Concurrency> place(void* mem, std::size_t len, const weir_concurrency_policy& policy) noexcept {
        weir_concurrency* out = nullptr;
        weir_status status = weir_concurrency_init_in(mem, len, &policy, &out);
        if (status != WEIR_OK) return status;
        return Concurrency(out);
    }
    // Shared between processes (weir_concurrency_init_shared, weir_concurrency_attach);
    // destroying the object leaves the region alone.
    static result<weir::footprint> shared_footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_concurrency_shared_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Concurrency> place_shared(void* mem, std::size_t len, const weir_concurrency_policy& policy) noexcept {
        weir_concurrency* out = nullptr;
        weir_status status = weir_concurrency_init_shared(mem, len, &policy, &out);
        if (status != WEIR_OK) return status;
        return Concurrency(out);
    }
    static result<Concurrency> attach(void* mem, std::size_t len) noexcept {
        weir_concurrency* out = nullptr;
        weir_status status = weir_concurrency_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Concurrency(out);
    }
    // What the shared lock recovered from (weir_concurrency_recoveries).
    result<weir_recoveries> recoveries() const noexcept {
        weir_recoveries out{};
        weir_status status = weir_concurrency_recoveries(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

private:
    explicit Concurrency(weir_concurrency* limit) noexcept : handle(limit) {}
};

// ---------------------------------------------------------------- bucket

// A token bucket (weir_bucket): `rate` tokens a second up to `burst`.
class Bucket : public detail::handle<weir_bucket, weir_bucket_free> {
public:
    static result<Bucket> make(double rate, double burst, instant now) noexcept {
        weir_bucket* out = nullptr;
        weir_status status = weir_bucket_new(rate, burst, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Bucket(out);
    }
    bool take(instant now, double n = 1.0) const noexcept { return weir_bucket_take(get(), now.ns(), n); }
    // Until `n` tokens are there (the Retry-After); nanoseconds::max() if never.
    nanoseconds next(instant now, double n = 1.0) const noexcept {
        return nanoseconds(weir_bucket_next(get(), now.ns(), n));
    }
    double tokens(instant now) const noexcept { return weir_bucket_tokens(get(), now.ns()); }
    // A new rate and burst at `now`, in place (weir_bucket_reconfigure): the
    // tokens held at `now` kept up to the new burst, the counts kept. An
    // error changes nothing. Not concurrent with any other call on it.
    std::error_code reconfigure(double rate, double burst, instant now) noexcept {
        return detail::code(weir_bucket_reconfigure(get(), rate, burst, now.ns()));
    }
    // Gives back `n` tokens taken at `taken_at` for a call never made: the
    // cost less the refill since, never above the burst
    // (weir_bucket_refund: what it can and cannot undo).
    std::error_code refund(instant now, instant taken_at, double n = 1.0) const noexcept {
        return detail::code(weir_bucket_refund(get(), now.ns(), taken_at.ns(), n));
    }

    // Counting (weir_bucket_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_bucket_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_bucket_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_bucket_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Bucket> place(void* mem, std::size_t len, double rate, double burst, instant now) noexcept {
        weir_bucket* out = nullptr;
        weir_status status = weir_bucket_init_in(mem, len, rate, burst, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Bucket(out);
    }
    // Shared between processes: laid once in memory mapped MAP_SHARED
    // (weir_bucket_init_shared), attached by each process
    // (weir_bucket_attach); destroying the object leaves the region alone.
    static result<weir::footprint> shared_footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_bucket_shared_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Bucket> place_shared(void* mem, std::size_t len, double rate, double burst, instant now) noexcept {
        weir_bucket* out = nullptr;
        weir_status status = weir_bucket_init_shared(mem, len, rate, burst, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Bucket(out);
    }
    static result<Bucket> attach(void* mem, std::size_t len) noexcept {
        weir_bucket* out = nullptr;
        weir_status status = weir_bucket_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Bucket(out);
    }

private:
    explicit Bucket(weir_bucket* bucket) noexcept : handle(bucket) {}
};

// --------------------------------------------------------------- sliding

// An exact sliding-window counter (weir_sliding): `quota` per `window`.
class Sliding : public detail::handle<weir_sliding, weir_sliding_free> {
public:
    static result<Sliding> make(std::int64_t quota, nanoseconds window) noexcept {
        weir_sliding* out = nullptr;
        weir_status status = weir_sliding_new(quota, window.count(), &out);
        if (status != WEIR_OK) return status;
        return Sliding(out);
    }
    bool take(instant now) const noexcept { return weir_sliding_take(get(), now.ns()); }
    std::int64_t left(instant now) const noexcept { return weir_sliding_left(get(), now.ns()); }
    nanoseconds next(instant now) const noexcept { return nanoseconds(weir_sliding_next(get(), now.ns())); }
    // A new quota and window in place (weir_sliding_reconfigure): the
    // newest stamps it counts kept, judged by the new window. A heap window
    // grows for a larger quota; a placed one answers
    // WEIR_ERR_PLACED_TOO_SMALL. An error changes nothing. Safe beside the
    // window's other calls: it takes the window's own lock, as they do.
    std::error_code reconfigure(std::int64_t quota, nanoseconds window) noexcept {
        return detail::code(weir_sliding_reconfigure(get(), quota, window.count()));
    }

    // Counting (weir_sliding_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_sliding_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_sliding_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint(std::int64_t quota, nanoseconds window) noexcept {
        weir::footprint out{};
        weir_status status = weir_sliding_footprint(quota, window.count(), &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Sliding> place(void* mem, std::size_t len, std::int64_t quota, nanoseconds window) noexcept {
        weir_sliding* out = nullptr;
        weir_status status = weir_sliding_init_in(mem, len, quota, window.count(), &out);
        if (status != WEIR_OK) return status;
        return Sliding(out);
    }
    // Shared between processes (weir_sliding_init_shared, weir_sliding_attach);
    // destroying the object leaves the region alone.
    static result<weir::footprint> shared_footprint(std::int64_t quota, nanoseconds window) noexcept {
        weir::footprint out{};
        weir_status status = weir_sliding_shared_footprint(quota, window.count(), &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Sliding> place_shared(void* mem, std::size_t len, std::int64_t quota, nanoseconds window) noexcept {
        weir_sliding* out = nullptr;
        weir_status status = weir_sliding_init_shared(mem, len, quota, window.count(), &out);
        if (status != WEIR_OK) return status;
        return Sliding(out);
    }
    static result<Sliding> attach(void* mem, std::size_t len) noexcept {
        weir_sliding* out = nullptr;
        weir_status status = weir_sliding_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Sliding(out);
    }
    // What the shared lock recovered from (weir_sliding_recoveries).
    result<weir_recoveries> recoveries() const noexcept {
        weir_recoveries out{};
        weir_status status = weir_sliding_recoveries(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

private:
    explicit Sliding(weir_sliding* sliding) noexcept : handle(sliding) {}
};

// ---------------------------------------------------------------- period

// Where a period's quota stands after a take (weir_period_quota).
enum class PeriodQuota : std::int32_t { under = WEIR_PERIOD_QUOTA_UNDER, hit = WEIR_PERIOD_QUOTA_HIT, over = WEIR_PERIOD_QUOTA_OVER };

// A fixed-window counter (weir_period): `quota` events per `period`.
class Period : public detail::handle<weir_period, weir_period_free> {
public:
    static result<Period> make(std::int64_t quota, nanoseconds period, bool align = false) noexcept {
        weir_period* out = nullptr;
        weir_status status = weir_period_new(quota, period.count(), align, &out);
        if (status != WEIR_OK) return status;
        return Period(out);
    }
    PeriodQuota take(instant now) const noexcept { return static_cast<PeriodQuota>(weir_period_take(get(), now.ns())); }
    std::int64_t left(instant now) const noexcept { return weir_period_left(get(), now.ns()); }
    nanoseconds next(instant now) const noexcept { return nanoseconds(weir_period_next(get(), now.ns())); }
    // A new quota, period and alignment in place (weir_period_reconfigure):
    // the open period keeps its end and count. An error changes nothing.
    // Safe beside the counter's other calls: it takes the counter's lock.
    std::error_code reconfigure(std::int64_t quota, nanoseconds period, bool align) noexcept {
        return detail::code(weir_period_reconfigure(get(), quota, period.count(), align));
    }

    // Counting (weir_period_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_period_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_period_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_period_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Period> place(void* mem, std::size_t len, std::int64_t quota, nanoseconds period, bool align = false) noexcept {
        weir_period* out = nullptr;
        weir_status status = weir_period_init_in(mem, len, quota, period.count(), align, &out);
        if (status != WEIR_OK) return status;
        return Period(out);
    }
    // Shared between processes (weir_period_init_shared,
    // weir_period_attach); destroying the object leaves the region alone.
    static result<weir::footprint> shared_footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_period_shared_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Period> place_shared(void* mem, std::size_t len, std::int64_t quota, nanoseconds period,
                                       bool align = false) noexcept {
        weir_period* out = nullptr;
        weir_status status = weir_period_init_shared(mem, len, quota, period.count(), align, &out);
        if (status != WEIR_OK) return status;
        return Period(out);
    }
    static result<Period> attach(void* mem, std::size_t len) noexcept {
        weir_period* out = nullptr;
        weir_status status = weir_period_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Period(out);
    }
    // What the shared lock recovered from (weir_period_recoveries).
    result<weir_recoveries> recoveries() const noexcept {
        weir_recoveries out{};
        weir_status status = weir_period_recoveries(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

private:
    explicit Period(weir_period* period) noexcept : handle(period) {}
};

// ---------------------------------------------------------------- window

// A rolling window of sums and counts (weir_window).
class Window : public detail::handle<weir_window, weir_window_free> {
public:
    static result<Window> make(std::int32_t size, nanoseconds window, instant now) noexcept {
        weir_window* out = nullptr;
        weir_status status = weir_window_new(size, window.count(), now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Window(out);
    }
    std::error_code add(instant now, std::int64_t value) const noexcept {
        return detail::code(weir_window_add(get(), now.ns(), value));
    }
    result<weir_window_total> total(instant now, bool current = true) const noexcept {
        weir_window_total out{};
        weir_status status = weir_window_read_total(get(), now.ns(), current, &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Copies up to `cap` buckets into `out`, oldest first; how many it wrote.
    std::size_t buckets(instant now, bool current, weir_window_total* out, std::size_t cap) const noexcept {
        return weir_window_read_buckets(get(), now.ns(), current, out, cap);
    }
    std::int32_t size() const noexcept { return weir_window_size(get()); }
    nanoseconds width() const noexcept { return nanoseconds(weir_window_width(get())); }
    // A new size and span at `now`, in place (weir_window_reconfigure):
    // nothing changes when the buckets keep their layout, else the total at
    // `now` goes into one bucket of the new window. A heap window grows; a
    // placed one answers WEIR_ERR_PLACED_TOO_SMALL. An error changes
    // nothing. Safe beside the window's other calls: it takes its lock.
    std::error_code reconfigure(std::int32_t size, nanoseconds window, instant now) noexcept {
        return detail::code(weir_window_reconfigure(get(), size, window.count(), now.ns()));
    }

    // Counting (weir_window_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_window_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_window_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint(std::int32_t size, nanoseconds window) noexcept {
        weir::footprint out{};
        weir_status status = weir_window_footprint(size, window.count(), &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Window> place(void* mem, std::size_t len, std::int32_t size, nanoseconds window, instant now) noexcept {
        weir_window* out = nullptr;
        weir_status status = weir_window_init_in(mem, len, size, window.count(), now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Window(out);
    }
    // Shared between processes (weir_window_init_shared, weir_window_attach);
    // destroying the object leaves the region alone.
    static result<weir::footprint> shared_footprint(std::int32_t size, nanoseconds window) noexcept {
        weir::footprint out{};
        weir_status status = weir_window_shared_footprint(size, window.count(), &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Window> place_shared(void* mem, std::size_t len, std::int32_t size, nanoseconds window, instant now) noexcept {
        weir_window* out = nullptr;
        weir_status status = weir_window_init_shared(mem, len, size, window.count(), now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Window(out);
    }
    static result<Window> attach(void* mem, std::size_t len) noexcept {
        weir_window* out = nullptr;
        weir_status status = weir_window_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Window(out);
    }
    // What the shared lock recovered from (weir_window_recoveries).
    result<weir_recoveries> recoveries() const noexcept {
        weir_recoveries out{};
        weir_status status = weir_window_recoveries(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

private:
    explicit Window(weir_window* window) noexcept : handle(window) {}
};

// --------------------------------------------------------------- shedder

// The shedder's policy (weir_shedder_policy); the defaults are weir_shedder_policy_preset().
struct ShedderPolicy {
    std::int32_t size = weir_shedder_policy_preset().size;
    std::int32_t cpu = weir_shedder_policy_preset().cpu;
    nanoseconds window = nanoseconds(weir_shedder_policy_preset().window_ns);
    nanoseconds latency = nanoseconds(weir_shedder_policy_preset().latency_ns);
    double beta = weir_shedder_policy_preset().beta;
    nanoseconds cool = nanoseconds(weir_shedder_policy_preset().cool_ns);
    double floor = weir_shedder_policy_preset().floor;

    weir_shedder_policy c() const noexcept {
        weir_shedder_policy out = weir_shedder_policy_preset();
        out.size = size;
        out.cpu = cpu;
        out.window_ns = window.count();
        out.latency_ns = latency.count();
        out.beta = beta;
        out.cool_ns = cool.count();
        out.floor = floor;
        return out;
    }
};

// A call the shedder let through, settled once by pass or fail. Move-only:
// a copy would settle on its own.
class ShedderTicket {
public:
    ShedderTicket() noexcept = default;
    ShedderTicket(const ShedderTicket&) = delete;
    ShedderTicket& operator=(const ShedderTicket&) = delete;
    ShedderTicket(ShedderTicket&& other) noexcept : ticket_(std::exchange(other.ticket_, weir_shedder_ticket{})) {}
    ShedderTicket& operator=(ShedderTicket&& other) noexcept {
        ticket_ = std::exchange(other.ticket_, weir_shedder_ticket{});
        return *this;
    }
    bool flying() const noexcept { return ticket_.flying == 1; }
    weir_shedder_ticket* get() noexcept { return &ticket_; }

private:
    weir_shedder_ticket ticket_{};
};

// A call's class for Shedder::allow: the lower, the earlier it is refused
// (WEIR_SHEDDER_*; critical is the default and decides as the unclassed allow).
enum class criticality : std::int32_t {
    critical = WEIR_SHEDDER_CRITICAL,
    critical_plus = WEIR_SHEDDER_CRITICAL_PLUS,
    sheddable_plus = WEIR_SHEDDER_SHEDDABLE_PLUS,
    sheddable = WEIR_SHEDDER_SHEDDABLE,
};

// Adaptive load shedding (weir_shedder).
class Shedder : public detail::handle<weir_shedder, weir_shedder_free> {
public:
    // The policy is copied; `policy` may go away after the call.
    static result<Shedder> make(const ShedderPolicy& policy, instant now) noexcept {
        weir_shedder_policy c = policy.c();
        weir_shedder* out = nullptr;
        weir_status status = weir_shedder_new(&c, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Shedder(out);
    }
    static result<Shedder> make(instant now) noexcept { return make(ShedderPolicy{}, now); }

    // True: go ahead, and `ticket` holds the call until pass or fail.
    bool allow(instant now, std::int32_t cpu_permille, ShedderTicket& ticket) const noexcept {
        return weir_shedder_allow(get(), now.ns(), cpu_permille, ticket.get());
    }
    // allow for a call of class `cls` (the rule is
    // weir_shedder_allow_class's): true, go ahead; false, refused. A value
    // cast into criticality from outside the four is refused too.
    bool allow(instant now, std::int32_t cpu_permille, criticality cls,
               ShedderTicket& ticket) const noexcept {
        return weir_shedder_allow_class(get(), now.ns(), cpu_permille, static_cast<std::int32_t>(cls),
                                        ticket.get()) == WEIR_OK &&
               ticket.get()->flying == 1;
    }
    std::error_code pass(ShedderTicket& ticket, instant now) const noexcept {
        return detail::code(weir_shedder_pass(get(), ticket.get(), now.ns()));
    }
    std::error_code fail(ShedderTicket& ticket) const noexcept {
        return detail::code(weir_shedder_fail(get(), ticket.get()));
    }
    std::int64_t flying() const noexcept { return weir_shedder_flying(get()); }
    // A new policy in place (weir_shedder_reconfigure): calls in flight,
    // their moving average and the hot state kept; the window kept when its
    // buckets keep their layout, opened empty otherwise. A heap shedder of
    // another size moves into new buckets; a placed one answers
    // WEIR_ERR_PLACED_TOO_SMALL for a larger. An error changes nothing. Safe
    // beside the shedder's other calls: it takes the shedder's lock.
    std::error_code reconfigure(const ShedderPolicy& policy) noexcept {
        weir_shedder_policy c = policy.c();
        return detail::code(weir_shedder_reconfigure(get(), &c));
    }
    result<weir_shedder_stats> stats(instant now) const noexcept {
        weir_shedder_stats out{};
        weir_status status = weir_shedder_read_stats(get(), now.ns(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

    // Counting (weir_shedder_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_shedder_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_shedder_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint(const ShedderPolicy& policy) noexcept {
        weir_shedder_policy c = policy.c();
        weir::footprint out{};
        weir_status status = weir_shedder_footprint(&c, &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Shedder> place(void* mem, std::size_t len, const ShedderPolicy& policy, instant now) noexcept {
        weir_shedder_policy c = policy.c();
        weir_shedder* out = nullptr;
        weir_status status = weir_shedder_init_in(mem, len, &c, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Shedder(out);
    }
    // Shared between processes: laid once in memory mapped MAP_SHARED
    // (weir_shedder_init_shared), attached by each process
    // (weir_shedder_attach); destroying the object leaves the region alone.
    static result<weir::footprint> shared_footprint(const ShedderPolicy& policy) noexcept {
        weir_shedder_policy c = policy.c();
        weir::footprint out{};
        weir_status status = weir_shedder_shared_footprint(&c, &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Shedder> place_shared(void* mem, std::size_t len, const ShedderPolicy& policy, instant now) noexcept {
        weir_shedder_policy c = policy.c();
        weir_shedder* out = nullptr;
        weir_status status = weir_shedder_init_shared(mem, len, &c, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Shedder(out);
    }
    static result<Shedder> attach(void* mem, std::size_t len) noexcept {
        weir_shedder* out = nullptr;
        weir_status status = weir_shedder_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Shedder(out);
    }
    // What the shared lock recovered from (weir_shedder_recoveries).
    result<weir_recoveries> recoveries() const noexcept {
        weir_recoveries out{};
        weir_status status = weir_shedder_recoveries(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

private:
    explicit Shedder(weir_shedder* shedder) noexcept : handle(shedder) {}
};

// ------------------------------------------------------------------ pool

// The pool's policy (weir_pool_policy); the defaults are weir_pool_policy_preset().
struct PoolPolicy {
    std::int64_t size = weir_pool_policy_preset().size;
    std::int64_t idle = weir_pool_policy_preset().idle;
    nanoseconds keep = nanoseconds(weir_pool_policy_preset().keep_ns);
    nanoseconds life = nanoseconds(weir_pool_policy_preset().life_ns);
    // Since 0.2.0: the most a draw shortens a life (a fraction of `life`),
    // how many to keep ready idle, the most made at once (0: up to size).
    double life_jitter = weir_pool_policy_preset().life_jitter;
    std::int64_t min_idle = weir_pool_policy_preset().min_idle;
    std::int64_t max_making = weir_pool_policy_preset().max_making;

    weir_pool_policy c() const noexcept {
        weir_pool_policy out = weir_pool_policy_preset();
        out.size = size;
        out.idle = idle;
        out.keep_ns = keep.count();
        out.life_ns = life.count();
        out.life_jitter = life_jitter;
        out.min_idle = min_idle;
        out.max_making = max_making;
        return out;
    }
};

// What a take answers (weir_pool_taken).
struct PoolTaken {
    enum class Kind : std::int32_t {
        ready = WEIR_POOL_TAKEN_READY,
        stale = WEIR_POOL_TAKEN_STALE,
        make = WEIR_POOL_TAKEN_MAKE,
        wait = WEIR_POOL_TAKEN_WAIT,
    };
    Kind kind;
    std::uintptr_t item;
};

// The bookkeeping of a pool of resources known by uintptr_t (weir_pool).
class Pool : public detail::handle<weir_pool, weir_pool_free> {
public:
    // The limits are copied; `limits` may go away after the call.
    static result<Pool> make(const PoolPolicy& limits = PoolPolicy{}) noexcept {
        weir_pool_policy c = limits.c();
        weir_pool* out = nullptr;
        weir_status status = weir_pool_new(&c, &out);
        if (status != WEIR_OK) return status;
        return Pool(out);
    }
    PoolTaken take(instant now) const noexcept {
        weir_pool_taken taken = weir_pool_take(get(), now.ns());
        return PoolTaken{static_cast<PoolTaken::Kind>(taken.kind), taken.item};
    }
    std::error_code made(std::uintptr_t item, instant now) const noexcept {
        return detail::code(weir_pool_made(get(), item, now.ns()));
    }
    // `made`, the life shortened by the caller's uniform 64-bit `draw`.
    std::error_code made_jittered(std::uintptr_t item, instant now, std::uint64_t draw) const noexcept {
        return detail::code(weir_pool_made_jittered(get(), item, now.ns(), draw));
    }
    std::error_code unmade() const noexcept { return detail::code(weir_pool_unmade(get())); }
    // Reservations for what to make ahead to keep `min_idle` ready.
    std::int64_t make_ahead() const noexcept { return weir_pool_make_ahead(get()); }
    // Marks every resource held as old (a new generation); how many.
    std::int64_t mark_old() const noexcept { return weir_pool_mark_old(get()); }
    // Whether the pool kept `item`; if not, the caller closes it.
    result<bool> give(std::uintptr_t item, instant now) const noexcept {
        bool kept = false;
        weir_status status = weir_pool_give(get(), item, now.ns(), &kept);
        if (status != WEIR_OK) return status;
        return kept;
    }
    std::error_code drop(std::uintptr_t item) const noexcept { return detail::code(weir_pool_drop(get(), item)); }
    std::size_t evict(instant now, std::uintptr_t* out, std::size_t cap) const noexcept {
        return weir_pool_evict(get(), now.ns(), out, cap);
    }
    std::size_t close(std::uintptr_t* out, std::size_t cap) const noexcept { return weir_pool_close(get(), out, cap); }
    // New limits in place (weir_pool_reconfigure), from the next call: every
    // resource idle or lent is kept, more than the new size too (take
    // answers wait until fewer are live), with its birth and idle clock; the
    // reservations, stats and counts are kept. A heap pool grows its store
    // when it needs more; a placed one answers WEIR_ERR_PLACED_TOO_SMALL. An
    // error changes nothing. Safe beside the other calls (the pool's lock).
    std::error_code reconfigure(const PoolPolicy& limits) noexcept {
        weir_pool_policy c = limits.c();
        return detail::code(weir_pool_reconfigure(get(), &c));
    }
    std::int64_t live() const noexcept { return weir_pool_live(get()); }
    std::int64_t idle() const noexcept { return weir_pool_idle(get()); }
    std::int64_t busy() const noexcept { return weir_pool_busy(get()); }
    nanoseconds next_expiry(instant now) const noexcept {
        return nanoseconds(weir_pool_next_expiry(get(), now.ns()));
    }
    result<weir_pool_stats> stats() const noexcept {
        weir_pool_stats out{};
        weir_status status = weir_pool_read_stats(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

    // Counting (weir_pool_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_pool_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_pool_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint). Close it before
    // the memory goes, as a heap pool before its destructor.
    static result<weir::footprint> footprint(const PoolPolicy& limits = PoolPolicy{}) noexcept {
        weir_pool_policy c = limits.c();
        weir::footprint out{};
        weir_status status = weir_pool_footprint(&c, &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Pool> place(void* mem, std::size_t len, const PoolPolicy& limits = PoolPolicy{}) noexcept {
        weir_pool_policy c = limits.c();
        weir_pool* out = nullptr;
        weir_status status = weir_pool_init_in(mem, len, &c, &out);
        if (status != WEIR_OK) return status;
        return Pool(out);
    }

private:
    explicit Pool(weir_pool* pool) noexcept : handle(pool) {}
};

// ------------------------------------------------------------- rate word

// A rate limit checked once (weir_rate_limit): plain data, copy freely.
class RateLimit {
public:
    static result<RateLimit> make(double limit_per_s, std::int64_t burst) noexcept {
        RateLimit out;
        weir_status status = weir_rate_limit_new(limit_per_s, burst, &out.limit_);
        if (status != WEIR_OK) return status;
        return out;
    }
    const weir_rate_limit* get() const noexcept { return &limit_; }

private:
    RateLimit() noexcept = default;
    weir_rate_limit limit_{};
};

// The one-word rate limiter (weir_rate), ready when constructed. Not
// copyable: a copy would be a second limiter. For a word in shared memory,
// use weir_rate_allow on it directly.
class Rate {
public:
    Rate() noexcept = default;
    Rate(const Rate&) = delete;
    Rate& operator=(const Rate&) = delete;
    bool allow(const RateLimit& limit, instant now) noexcept { return weir_rate_allow(&rate_, limit.get(), now.ns()); }
    nanoseconds next(const RateLimit& limit, instant now) const noexcept {
        return nanoseconds(weir_rate_next(&rate_, limit.get(), now.ns()));
    }
    weir_rate* get() noexcept { return &rate_; }

private:
    weir_rate rate_{};
};

// ------------------------------------------------------------- gcra word

// A GCRA limit checked once (weir_gcra_limit): `rate_per_s` tokens a second
// up to `burst`. Plain data, copy freely.
class GcraLimit {
public:
    static result<GcraLimit> make(double rate_per_s, std::int64_t burst) noexcept {
        GcraLimit out;
        weir_status status = weir_gcra_limit_new(rate_per_s, burst, &out.limit_);
        if (status != WEIR_OK) return status;
        return out;
    }
    const weir_gcra_limit* get() const noexcept { return &limit_; }

private:
    GcraLimit() noexcept = default;
    weir_gcra_limit limit_{};
};

// The one-word token bucket (weir_gcra, GCRA), full when constructed: at
// one instant it admits exactly `burst`, then one more every 1 / rate. Not
// copyable: a copy would be a second bucket. For a word in shared memory,
// use weir_gcra_allow on it directly.
class Gcra {
public:
    Gcra() noexcept = default;
    Gcra(const Gcra&) = delete;
    Gcra& operator=(const Gcra&) = delete;
    bool allow(const GcraLimit& limit, instant now) noexcept { return weir_gcra_allow(&gcra_, limit.get(), now.ns()); }
    // `n` tokens at once, all or nothing; refuses an `n` outside 1..burst.
    bool allow_n(const GcraLimit& limit, instant now, std::int64_t n) noexcept {
        return weir_gcra_allow_n(&gcra_, limit.get(), now.ns(), n);
    }
    // Until one token is there (the Retry-After): 0 if one is now;
    // nanoseconds::max() for a negative `now`.
    nanoseconds next(const GcraLimit& limit, instant now) const noexcept {
        return nanoseconds(weir_gcra_next(&gcra_, limit.get(), now.ns()));
    }
    // Whole tokens there at `now`, 0 to burst (a RateLimit header's remaining).
    std::int64_t room(const GcraLimit& limit, instant now) const noexcept {
        return weir_gcra_room(&gcra_, limit.get(), now.ns());
    }
    weir_gcra* get() noexcept { return &gcra_; }

private:
    weir_gcra gcra_{};
};

// ----------------------------------------------------------------- bloom

// Millions of keys' rate or GCRA words in fixed memory (weir_bloom).
class Bloom : public detail::handle<weir_bloom, weir_bloom_free> {
public:
    // Rate words (fixed windows). The limit is copied. Pass secret random
    // seeds.
    static result<Bloom> make(std::uint32_t size_log2, std::uint32_t hashes, const RateLimit& limit,
                              std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_bloom* out = nullptr;
        weir_status status = weir_bloom_new(size_log2, hashes, limit.get(), seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Bloom(out);
    }
    // GCRA words (token buckets, limit_req's shape). The limit is copied.
    static result<Bloom> make_gcra(std::uint32_t size_log2, std::uint32_t hashes, const GcraLimit& limit,
                                   std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_bloom* out = nullptr;
        weir_status status = weir_bloom_new_gcra(size_log2, hashes, limit.get(), seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Bloom(out);
    }
    // The key is hashed during the call and not kept.
    bool allow(instant now, std::string_view key) const noexcept {
        return weir_bloom_allow(get(), now.ns(), key.data(), key.size());
    }
    nanoseconds next(instant now, std::string_view key) const noexcept {
        return nanoseconds(weir_bloom_next(get(), now.ns(), key.data(), key.size()));
    }
    // A new limit for every word, in one publication (weir_bloom_reconfigure,
    // weir_bloom_reconfigure_gcra): a racing decision is judged by the old
    // limit or the new one, whole. Each word keeps its window (start and
    // count, read under the new burst and interval) or its arrival time (a
    // key's debt carries over as time). WEIR_ERR_BLOOM_KIND_CHANGE for the
    // other kind, WEIR_ERR_BLOOM_TICK_CHANGE for a GCRA limit on another
    // tick, WEIR_ERR_REGION_UNSUPPORTED for a view of a region. An error
    // changes nothing. Safe beside the other calls. The limit is copied.
    std::error_code reconfigure(const RateLimit& limit) noexcept {
        return detail::code(weir_bloom_reconfigure(get(), limit.get()));
    }
    std::error_code reconfigure(const GcraLimit& limit) noexcept {
        return detail::code(weir_bloom_reconfigure_gcra(get(), limit.get()));
    }

    // Counting (weir_bloom_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_bloom_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_bloom_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // A Bloom placed in the caller's memory with its own words (see
    // weir::footprint): answers as one made by make() or make_gcra() with
    // the same arguments. The words are this program's, not a region to
    // share (BloomRegion is). Keep the memory in place while it is used;
    // the destructor leaves it alone.
    static result<weir::footprint> place_footprint(std::uint32_t size_log2) noexcept {
        weir::footprint out{};
        weir_status status = weir_bloom_place_footprint(size_log2, &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Bloom> place(void* mem, std::size_t len, std::uint32_t size_log2, std::uint32_t hashes,
                               const RateLimit& limit, std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_bloom* out = nullptr;
        weir_status status = weir_bloom_place_in(mem, len, size_log2, hashes, limit.get(), seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Bloom(out);
    }
    static result<Bloom> place_gcra(void* mem, std::size_t len, std::uint32_t size_log2, std::uint32_t hashes,
                                    const GcraLimit& limit, std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_bloom* out = nullptr;
        weir_status status =
            weir_bloom_place_gcra_in(mem, len, size_log2, hashes, limit.get(), seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Bloom(out);
    }
    // A Bloom over a region laid by BloomRegion::init or init_gcra (here or
    // in another process), placed in the caller's memory (see
    // weir::footprint; BloomRegion::view is the same call): its words are
    // the region's, its counts its own. Keep both memories in place while
    // it is used; the destructor leaves them alone.
    static result<weir::footprint> view_footprint() noexcept {
        weir::footprint out{};
        weir_status status = weir_bloom_view_footprint(&out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Bloom> view(void* mem, std::size_t len, void* region, std::size_t region_len) noexcept {
        weir_bloom* out = nullptr;
        weir_status status = weir_bloom_view_in(mem, len, region, region_len, &out);
        if (status != WEIR_OK) return status;
        return Bloom(out);
    }

private:
    explicit Bloom(weir_bloom* bloom) noexcept : handle(bloom) {}
};

// A bloom array laid in the caller's memory (weir_bloom_*_in): a view of
// `size()` bytes at `data()`, which it neither owns nor frees. The memory
// is 64-byte aligned (`alignment`) and `footprint(size_log2)` bytes long:
// mmap(MAP_SHARED) memory shares one array between processes, lock-free;
// any aligned buffer (a std::vector of `alignas(64)` lines, an
// std::aligned_alloc block) serves one process. Copies view the same array;
// keep the memory alive while any view of it is used. Its calls are const
// and may be made from many threads and processes at once.
class BloomRegion {
public:
    static constexpr std::size_t alignment = WEIR_BLOOM_ALIGN;

    // The bytes a region of 2^size_log2 words needs, of either kind; 0 for
    // a size_log2 out of range.
    static std::size_t footprint(std::uint32_t size_log2) noexcept { return weir_bloom_footprint(size_log2); }
    // Lays a fresh array of rate words (fixed windows) at `mem`, resetting
    // one already there, and views it. Lay it once, before anyone uses it.
    // The limit is copied into the region's header.
    static result<BloomRegion> init(void* mem, std::size_t len, std::uint32_t size_log2, std::uint32_t hashes,
                                    const RateLimit& limit, std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_status status = weir_bloom_init_in(mem, len, size_log2, hashes, limit.get(), seed0, seed1);
        if (status != WEIR_OK) return status;
        return BloomRegion(mem, len);
    }
    // `init` with GCRA words (token buckets).
    static result<BloomRegion> init_gcra(void* mem, std::size_t len, std::uint32_t size_log2, std::uint32_t hashes,
                                         const GcraLimit& limit, std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_status status = weir_bloom_init_gcra_in(mem, len, size_log2, hashes, limit.get(), seed0, seed1);
        if (status != WEIR_OK) return status;
        return BloomRegion(mem, len);
    }
    // Whether `len` bytes at `mem` hold an array laid by init or init_gcra
    // (here or in another process): WEIR_OK, or the status saying why not
    // (WEIR_ERR_BLOOM_FOREIGN, _VERSION, _KIND, _TOO_SMALL, ...).
    static std::error_code check(const void* mem, std::size_t len) noexcept {
        return detail::code(weir_bloom_check_in(mem, len));
    }
    // Views an array laid before, once `check` accepts it.
    static result<BloomRegion> attach(void* mem, std::size_t len) noexcept {
        weir_status status = weir_bloom_check_in(mem, len);
        if (status != WEIR_OK) return status;
        return BloomRegion(mem, len);
    }

    // `Bloom::allow` on the region, of the word kind its header names; the
    // key is hashed during the call and not kept. Refuses once the memory
    // no longer holds an array `check` accepts.
    bool allow(instant now, std::string_view key) const noexcept {
        return weir_bloom_allow_in(mem_, len_, now.ns(), key.data(), key.size());
    }
    // nanoseconds::max() once the memory no longer holds an array.
    nanoseconds next(instant now, std::string_view key) const noexcept {
        return nanoseconds(weir_bloom_next_in(mem_, len_, now.ns(), key.data(), key.size()));
    }
    // A Bloom over this region placed at `mem` (Bloom::view): the same
    // words, decided on without reading the header each call.
    result<Bloom> view(void* mem, std::size_t len) const noexcept { return Bloom::view(mem, len, mem_, len_); }
    void* data() const noexcept { return mem_; }
    std::size_t size() const noexcept { return len_; }

private:
    BloomRegion(void* mem, std::size_t len) noexcept : mem_(mem), len_(len) {}
    void* mem_;
    std::size_t len_;
};

// ----------------------------------------------------------------- keyed

// One exact word per key for millions of keys in fixed memory (weir_keyed):
// GCRA words by default, rate words with make_rate. Unlike Bloom, a key is
// never refused for another's traffic while the table has room; when a
// new key finds none, the overflow policy answers (see weir_keyed_new).
class Keyed : public detail::handle<weir_keyed, weir_keyed_free> {
public:
    // The overflow policies (WEIR_KEYED_OVERFLOW_*).
    enum class overflow : std::uint32_t {
        refuse = WEIR_KEYED_OVERFLOW_REFUSE,
        admit = WEIR_KEYED_OVERFLOW_ADMIT,
        shared = WEIR_KEYED_OVERFLOW_SHARED,
    };
    // What decided a call (WEIR_KEYED_REFUSED, ...).
    enum class decision : std::uint32_t {
        refused = WEIR_KEYED_REFUSED,
        allowed = WEIR_KEYED_ALLOWED,
        overflow_admitted = WEIR_KEYED_OVERFLOW_ADMITTED,
        overflow_refused = WEIR_KEYED_OVERFLOW_REFUSED,
    };
    // Whether a decision admitted the call.
    static constexpr bool admitted(decision d) noexcept {
        return d == decision::allowed || d == decision::overflow_admitted;
    }

    // GCRA words, `buckets` buckets of 8 slots (size with buckets_for). The
    // limit is copied. Pass secret random seeds.
    static result<Keyed> make(std::uint64_t buckets, const GcraLimit& limit, overflow policy,
                              std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_keyed* out = nullptr;
        weir_status status =
            weir_keyed_new(buckets, limit.get(), static_cast<std::uint32_t>(policy), seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Keyed(out);
    }
    // Rate words (fixed windows).
    static result<Keyed> make_rate(std::uint64_t buckets, const RateLimit& limit, overflow policy,
                                   std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_keyed* out = nullptr;
        weir_status status =
            weir_keyed_new_rate(buckets, limit.get(), static_cast<std::uint32_t>(policy), seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Keyed(out);
    }

    // One event for the key; the key is hashed during the call and not kept.
    bool allow(instant now, std::string_view key) const noexcept {
        return weir_keyed_allow(get(), now.ns(), key.data(), key.size());
    }
    // `n` events for the key, all or nothing, and what decided.
    result<decision> decide(instant now, std::string_view key, std::int64_t n = 1) const noexcept {
        std::uint32_t out = 0;
        weir_status status = weir_keyed_decide(get(), now.ns(), key.data(), key.size(), n, &out);
        if (status != WEIR_OK) return status;
        return static_cast<decision>(out);
    }
    // How long from `now` until the key's own word would admit one event
    // (0 if it would now; INT64_MAX nanoseconds if never). Charges nothing.
    result<nanoseconds> next(instant now, std::string_view key) const noexcept {
        std::int64_t wait = 0;
        weir_status status = weir_keyed_next(get(), now.ns(), key.data(), key.size(), &wait);
        if (status != WEIR_OK) return status;
        return nanoseconds(wait);
    }
    // A new limit for every key's word, in place and in one publication
    // (weir_keyed_reconfigure for a table of GCRA words,
    // weir_keyed_reconfigure_rate for rate words): a racing call is judged
    // by the old limit or the new one, whole. Each word keeps its arrival
    // time (a key's debt carries over as time) or its window (start and
    // count, read under the new burst and interval); which slots are at
    // rest, and the shared overflow word, follow the new limit. A placed
    // or shared table takes it too (every process attached reads it).
    // WEIR_ERR_KEYED_KIND_CHANGE for the other kind,
    // WEIR_ERR_KEYED_TICK_CHANGE for a GCRA limit on another tick. An error
    // changes nothing. Safe beside the other calls. The limit is copied.
    std::error_code reconfigure(const GcraLimit& limit) noexcept {
        return detail::code(weir_keyed_reconfigure(get(), limit.get()));
    }
    std::error_code reconfigure(const RateLimit& limit) noexcept {
        return detail::code(weir_keyed_reconfigure_rate(get(), limit.get()));
    }
    // The table's shape and fill; scans every slot.
    result<weir_keyed_reading> read() const noexcept {
        weir_keyed_reading out{};
        weir_status status = weir_keyed_read(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

    // Counting (weir_keyed_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then. An overflow counts as what its
    // policy decided; a shared table's counts are the region's.
    std::error_code start_counting() const noexcept { return detail::code(weir_keyed_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_keyed_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

    // Sizing: the fewest buckets for `keys` active keys at an overflow
    // chance of at most `chance` a new key, and that chance.
    static result<std::uint64_t> buckets_for(std::uint64_t keys, double chance) noexcept {
        std::uint64_t out = 0;
        weir_status status = weir_keyed_buckets_for(keys, chance, &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    static double overflow_chance(double keys, double slots) noexcept { return weir_keyed_overflow_chance(keys, slots); }
    // Whether calls are lock-free and a table can be shared between
    // processes on this machine.
    static bool lock_free() noexcept { return weir_keyed_lock_free(); }

    // A table placed in the caller's memory (see weir::footprint): answers
    // as one made by make() or make_rate(). Keep the memory in place while
    // it is used; the destructor leaves it alone.
    static result<weir::footprint> footprint(std::uint64_t buckets) noexcept {
        weir::footprint out{};
        weir_status status = weir_keyed_footprint(buckets, &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Keyed> place(void* mem, std::size_t len, std::uint64_t buckets, const GcraLimit& limit,
                               overflow policy, std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_keyed* out = nullptr;
        weir_status status = weir_keyed_init_in(mem, len, buckets, limit.get(), static_cast<std::uint32_t>(policy),
                                                seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Keyed(out);
    }
    static result<Keyed> place_rate(void* mem, std::size_t len, std::uint64_t buckets, const RateLimit& limit,
                                    overflow policy, std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_keyed* out = nullptr;
        weir_status status = weir_keyed_init_rate_in(mem, len, buckets, limit.get(),
                                                     static_cast<std::uint32_t>(policy), seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Keyed(out);
    }
    // Shared between processes (weir_keyed_init_shared, weir_keyed_attach),
    // in memory mapped MAP_SHARED at a multiple of 128 bytes; destroying
    // the object leaves the region alone.
    static result<weir::footprint> shared_footprint(std::uint64_t buckets) noexcept {
        weir::footprint out{};
        weir_status status = weir_keyed_shared_footprint(buckets, &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Keyed> place_shared(void* mem, std::size_t len, std::uint64_t buckets, const GcraLimit& limit,
                                      overflow policy, std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_keyed* out = nullptr;
        weir_status status = weir_keyed_init_shared(mem, len, buckets, limit.get(),
                                                    static_cast<std::uint32_t>(policy), seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Keyed(out);
    }
    static result<Keyed> place_shared_rate(void* mem, std::size_t len, std::uint64_t buckets, const RateLimit& limit,
                                           overflow policy, std::uint64_t seed0, std::uint64_t seed1) noexcept {
        weir_keyed* out = nullptr;
        weir_status status = weir_keyed_init_shared_rate(mem, len, buckets, limit.get(),
                                                         static_cast<std::uint32_t>(policy), seed0, seed1, &out);
        if (status != WEIR_OK) return status;
        return Keyed(out);
    }
    static result<Keyed> attach(void* mem, std::size_t len) noexcept {
        weir_keyed* out = nullptr;
        weir_status status = weir_keyed_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Keyed(out);
    }

private:
    explicit Keyed(weir_keyed* table) noexcept : handle(table) {}
};

// ---------------------------------------------------------------- charge

// One limit for charge_all and what the call costs it (weir_charge_item):
// made by the factories below, over the C++ types or over the C words
// themselves (a word in shared memory). It points at the limit: keep the
// limit alive and in place while the item is used. Plain data, the C
// struct and nothing else, so an array of items is an array of
// weir_charge_item.
class ChargeItem {
public:
    // A GCRA word, `cost` whole tokens.
    static ChargeItem gcra(Gcra& word, const GcraLimit& limit, std::int64_t cost = 1) noexcept {
        return gcra(word.get(), limit, cost);
    }
    static ChargeItem gcra(weir_gcra* word, const GcraLimit& limit, std::int64_t cost = 1) noexcept {
        return ChargeItem(WEIR_CHARGE_GCRA, word, limit.get(), static_cast<double>(cost));
    }
    // A rate word, `cost` whole events (that many allows at one instant).
    static ChargeItem rate(Rate& word, const RateLimit& limit, std::int64_t cost = 1) noexcept {
        return rate(word.get(), limit, cost);
    }
    static ChargeItem rate(weir_rate* word, const RateLimit& limit, std::int64_t cost = 1) noexcept {
        return ChargeItem(WEIR_CHARGE_RATE, word, limit.get(), static_cast<double>(cost));
    }
    // A bucket, `cost` tokens (fractions allowed).
    static ChargeItem bucket(const Bucket& bucket, double cost = 1.0) noexcept {
        return ChargeItem(WEIR_CHARGE_BUCKET, bucket.get(), nullptr, cost);
    }
    // A key of a bloom array, `cost` whole events; the key's bytes are
    // read during charge_all and not kept.
    static ChargeItem bloom(const Bloom& bloom, std::string_view key, std::int64_t cost = 1) noexcept {
        ChargeItem out(WEIR_CHARGE_BLOOM, bloom.get(), nullptr, static_cast<double>(cost));
        out.item_.key = key.data();
        out.item_.key_len = key.size();
        return out;
    }
    static ChargeItem bloom(const BloomRegion& region, std::string_view key, std::int64_t cost = 1) noexcept {
        return bloom_judged_by(region, key, nullptr, cost);
    }
    // A key of a bloom region judged by `limit` in place of the limit in
    // the region's header, which is left alone (weir_charge_item.limit): a
    // region whose rate or burst changed (a reload) keeps its words, each
    // caller bringing its limit. A limit of the region's word kind (a
    // GcraLimit for init_gcra, a RateLimit for init); a GcraLimit of another
    // tick than the region's is refused (WEIR_ERR_GCRA_LIMIT_INVALID). The
    // item points at `limit`, which must outlive it.
    static ChargeItem bloom(const BloomRegion& region, std::string_view key, const GcraLimit& limit,
                            std::int64_t cost = 1) noexcept {
        return bloom_judged_by(region, key, limit.get(), cost);
    }
    static ChargeItem bloom(const BloomRegion& region, std::string_view key, const RateLimit& limit,
                            std::int64_t cost = 1) noexcept {
        return bloom_judged_by(region, key, limit.get(), cost);
    }
    const weir_charge_item& c() const noexcept { return item_; }

private:
    static ChargeItem bloom_judged_by(const BloomRegion& region, std::string_view key, const void* limit,
                                      std::int64_t cost) noexcept {
        ChargeItem out(WEIR_CHARGE_BLOOM_IN, region.data(), limit, static_cast<double>(cost));
        out.item_.target_len = region.size();
        out.item_.key = key.data();
        out.item_.key_len = key.size();
        return out;
    }
    ChargeItem(std::uint32_t kind, void* target, const void* limit, double cost) noexcept {
        item_.kind = kind;
        item_.target = target;
        item_.limit = limit;
        item_.cost = cost;
    }
    weir_charge_item item_{};
};

static_assert(sizeof(ChargeItem) == sizeof(weir_charge_item) && std::is_standard_layout<ChargeItem>::value,
              "a ChargeItem is a weir_charge_item");

// What charge_all answered (weir_charge_result): admitted, or which item
// refused and how long until it would take its cost.
struct ChargeResult {
    bool admitted;
    // The item that refused; the number of items when admitted.
    std::size_t index;
    // Until items[index] would take its cost (the Retry-After): 0 when
    // admitted, nanoseconds::max() if it never will.
    nanoseconds wait;
    // Charges before the refusal that could not be given back, each still
    // charged as if admitted (weir_charge_all: the slack).
    std::uint32_t kept;
    explicit operator bool() const noexcept { return admitted; }
};

// Charges every item its cost at `now`, or none: an organisation's limit,
// a team's and a user's, so that a refusal by one spends none of the
// others (weir_charge_all: how, the bound, the slack). An error (a bad
// item, more than WEIR_CHARGE_MAX_ITEMS) charges nothing.
inline result<ChargeResult> charge_all(const ChargeItem* items, std::size_t n, instant now) noexcept {
    weir_charge_result out{};
    weir_status status = weir_charge_all(reinterpret_cast<const weir_charge_item*>(items), n, now.ns(), &out);
    if (status != WEIR_OK) return status;
    return ChargeResult{out.admitted, out.index, nanoseconds(out.wait), out.kept};
}
inline result<ChargeResult> charge_all(std::initializer_list<ChargeItem> items, instant now) noexcept {
    return charge_all(items.begin(), items.size(), now);
}
// Any contiguous range of items: a std::array, a std::vector, a
// std::span (C++20).
template <class Items, class = decltype(std::data(std::declval<const Items&>()) + std::size(std::declval<const Items&>())),
          class = std::enable_if_t<std::is_same<std::remove_cv_t<std::remove_pointer_t<decltype(std::data(
                                                    std::declval<const Items&>()))>>,
                                                ChargeItem>::value>>
inline result<ChargeResult> charge_all(const Items& items, instant now) noexcept {
    return charge_all(std::data(items), std::size(items), now);
}

// --------------------------------------------------------------- limiter

// An embeddable integer limiter (weir_limiter), plain data.
class Limiter {
public:
    static result<Limiter> bucket(std::uint64_t capacity, std::uint64_t refill_amount, nanoseconds refill_interval,
                                  instant last_refill, std::uint64_t initial_available, instant now) noexcept {
        Limiter out;
        weir_status status = weir_limiter_bucket(&out.limiter_, capacity, refill_amount, refill_interval.count(),
                                                 last_refill.ns(), initial_available, now.ns());
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Limiter> fixed_window(std::uint64_t capacity, nanoseconds window, instant window_start,
                                        std::uint64_t initial_available, instant now) noexcept {
        Limiter out;
        weir_status status = weir_limiter_fixed_window(&out.limiter_, capacity, window.count(), window_start.ns(),
                                                       initial_available, now.ns());
        if (status != WEIR_OK) return status;
        return out;
    }
    // `cooldown_end` before `now`: no gate armed (pass `now` for a new one).
    static result<Limiter> cooldown(std::uint64_t capacity, nanoseconds cooldown, instant cooldown_end,
                                    std::uint64_t initial_available, instant now) noexcept {
        Limiter out;
        weir_status status = weir_limiter_cooldown(&out.limiter_, capacity, cooldown.count(), cooldown_end.ns(),
                                                   initial_available, now.ns());
        if (status != WEIR_OK) return status;
        return out;
    }
    bool try_consume(instant now, std::uint64_t amount) noexcept {
        return weir_limiter_try_consume(&limiter_, now.ns(), amount);
    }
    std::error_code consume(instant now, std::uint64_t amount) noexcept {
        return detail::code(weir_limiter_consume(&limiter_, now.ns(), amount));
    }
    // Gives back units taken at `taken_at` for a call never made
    // (weir_limiter_refund: what it can and cannot undo).
    std::error_code refund(instant now, instant taken_at, std::uint64_t amount) noexcept {
        return detail::code(weir_limiter_refund(&limiter_, now.ns(), taken_at.ns(), amount));
    }
    std::uint64_t available(instant now) const noexcept { return weir_limiter_available(&limiter_, now.ns()); }
    std::uint64_t capacity() const noexcept { return weir_limiter_capacity(&limiter_); }

    // Which variant it is; all three false for a corrupted value.
    bool is_bucket() const noexcept { return weir_limiter_is_bucket(&limiter_); }
    bool is_fixed_window() const noexcept { return weir_limiter_is_fixed_window(&limiter_); }
    bool is_cooldown() const noexcept { return weir_limiter_is_cooldown(&limiter_); }

    // The settings and anchor a snapshot needs (weir_limiter: "Snapshot and
    // rebuild"). Each reading is one variant's and answers
    // WEIR_ERR_LIMITER_WRONG_VARIANT for the others, WEIR_ERR_LIMITER_CORRUPT
    // for a corrupted value.
    //
    // A bucket's units per refill, its refill interval, and its refill
    // anchor projected to `now` (pass it with available(now) to bucket()).
    result<std::uint64_t> refill_amount() const noexcept {
        std::uint64_t out = 0;
        weir_status status = weir_limiter_refill_amount(&limiter_, &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    result<nanoseconds> refill_interval() const noexcept {
        std::int64_t out = 0;
        weir_status status = weir_limiter_refill_interval_ns(&limiter_, &out);
        if (status != WEIR_OK) return status;
        return nanoseconds(out);
    }
    result<instant> last_refill(instant now) const noexcept {
        std::int64_t out = 0;
        weir_status status = weir_limiter_last_refill(&limiter_, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return instant(out);
    }
    // A fixed window's length, and the start of the window holding `now`.
    result<nanoseconds> window_length() const noexcept {
        std::int64_t out = 0;
        weir_status status = weir_limiter_window_ns(&limiter_, &out);
        if (status != WEIR_OK) return status;
        return nanoseconds(out);
    }
    result<instant> window_start(instant now) const noexcept {
        std::int64_t out = 0;
        weir_status status = weir_limiter_window_start(&limiter_, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return instant(out);
    }
    // A cooldown's gate length (weir_limiter_cooldown_ns; `cooldown` is the
    // constructor), and its stored gate deadline, which gates only while
    // available() is 0.
    result<nanoseconds> cooldown_length() const noexcept {
        std::int64_t out = 0;
        weir_status status = weir_limiter_cooldown_ns(&limiter_, &out);
        if (status != WEIR_OK) return status;
        return nanoseconds(out);
    }
    result<instant> cooldown_end() const noexcept {
        std::int64_t out = 0;
        weir_status status = weir_limiter_cooldown_end(&limiter_, &out);
        if (status != WEIR_OK) return status;
        return instant(out);
    }
    weir_limiter* get() noexcept { return &limiter_; }

private:
    Limiter() noexcept = default;
    weir_limiter limiter_{};
};

// -------------------------------------------------------------- deadline

// A time budget from a start (weir_deadline), plain data.
class Deadline {
public:
    // A budget of zero or less never expires.
    Deadline(nanoseconds budget, instant now) noexcept : deadline_(weir_deadline_start(budget.count(), now.ns())) {}
    bool expired(instant now) const noexcept { return weir_deadline_expired(&deadline_, now.ns()); }
    // What is left; empty when there is no budget.
    std::optional<nanoseconds> remaining(instant now) const noexcept {
        std::int64_t out = 0;
        if (!weir_deadline_remaining(&deadline_, now.ns(), &out)) return std::nullopt;
        return nanoseconds(out);
    }

private:
    weir_deadline deadline_;
};

// --------------------------------------------------------------- backoff

// A retry policy (weir_backoff); the defaults are weir_backoff_preset().
struct Backoff {
    nanoseconds base = nanoseconds(weir_backoff_preset().base_ns);
    double factor = weir_backoff_preset().factor;
    nanoseconds cap = nanoseconds(weir_backoff_preset().cap_ns);
    std::int32_t attempts = weir_backoff_preset().attempts;
    std::int32_t jitter = weir_backoff_preset().jitter;
    double spread = weir_backoff_preset().spread;

    // The preset with full jitter (WEIR_BACKOFF_JITTER_FULL: uniform over
    // [0, ceiling(retry)]), the strategy AWS's measurements favour.
    static Backoff full_jitter() noexcept {
        const weir_backoff p = weir_backoff_full_jitter();
        return Backoff{nanoseconds(p.base_ns), p.factor, nanoseconds(p.cap_ns), p.attempts, p.jitter, p.spread};
    }

    weir_backoff c() const noexcept {
        weir_backoff out = weir_backoff_preset();
        out.base_ns = base.count();
        out.factor = factor;
        out.cap_ns = cap.count();
        out.attempts = attempts;
        out.jitter = jitter;
        out.spread = spread;
        return out;
    }
    std::error_code check() const noexcept {
        weir_backoff p = c();
        return detail::code(weir_backoff_check(&p));
    }
    // May a call that has made `made` attempts make another?
    bool more(std::int32_t made) const noexcept {
        weir_backoff p = c();
        return weir_backoff_more(&p, made);
    }
    nanoseconds ceiling(std::int32_t retry) const noexcept {
        weir_backoff p = c();
        return nanoseconds(weir_backoff_ceiling(&p, retry));
    }
    nanoseconds delay(std::int32_t retry, double draw, nanoseconds previous = nanoseconds(0)) const noexcept {
        weir_backoff p = c();
        return nanoseconds(weir_backoff_delay(&p, retry, draw, previous.count()));
    }
    // The delays of a whole run, in nanoseconds, as delay() draws them:
    // retry i uses draws[i - 1] (0 once the draws run short). Writes the
    // first min(cap, attempts - 1) to `out_ns` and returns how many; 0 for
    // an invalid policy.
    std::size_t schedule(const double* draws, std::size_t draws_len, std::int64_t* out_ns,
                         std::size_t cap) const noexcept {
        weir_backoff p = c();
        return weir_backoff_schedule(&p, draws, draws_len, out_ns, cap);
    }
};

// --------------------------------------------------------------- breaker

// The breaker's policy (weir_breaker_policy); the defaults are weir_breaker_policy_preset().
struct BreakerPolicy {
    double k = weir_breaker_policy_preset().k;
    double floor = weir_breaker_policy_preset().floor;
    double protection = weir_breaker_policy_preset().protection;
    nanoseconds probe = nanoseconds(weir_breaker_policy_preset().probe_ns);
    std::int32_t size = weir_breaker_policy_preset().size;
    nanoseconds window = nanoseconds(weir_breaker_policy_preset().window_ns);
    // Envoy admission_control's limits (see weir_breaker_policy): a cap on the refusal
    // probability, a traffic floor in calls a second, an exponent, and
    // whether the breaker's own refusals are left out of the traffic.
    double max_rejection_probability = weir_breaker_policy_preset().max_rejection_probability;
    double rps_threshold = weir_breaker_policy_preset().rps_threshold;
    double aggression = weir_breaker_policy_preset().aggression;
    bool skip_refusals = weir_breaker_policy_preset().skip_refusals != 0;

    weir_breaker_policy c() const noexcept {
        weir_breaker_policy out = weir_breaker_policy_preset();
        out.k = k;
        out.floor = floor;
        out.protection = protection;
        out.probe_ns = probe.count();
        out.size = size;
        out.window_ns = window.count();
        out.max_rejection_probability = max_rejection_probability;
        out.rps_threshold = rps_threshold;
        out.aggression = aggression;
        out.skip_refusals = skip_refusals ? 1 : 0;
        return out;
    }
};

// One call a breaker let through (weir_breaker_ticket), settled once with
// Breaker::pass or Breaker::fail. Move-only, so that a copy cannot be
// settled in the original's place; a moved-from ticket is empty and its
// settle answers WEIR_ERR_BREAKER_TICKET.
class BreakerTicket {
public:
    BreakerTicket() noexcept = default;
    BreakerTicket(const BreakerTicket&) = delete;
    BreakerTicket& operator=(const BreakerTicket&) = delete;
    BreakerTicket(BreakerTicket&& other) noexcept : ticket_(std::exchange(other.ticket_, weir_breaker_ticket{})) {}
    BreakerTicket& operator=(BreakerTicket&& other) noexcept {
        ticket_ = std::exchange(other.ticket_, weir_breaker_ticket{});
        return *this;
    }
    // True while the call is let through and not yet settled.
    bool flying() const noexcept { return ticket_.flying == 1; }
    weir_breaker_ticket* get() noexcept { return &ticket_; }

private:
    weir_breaker_ticket ticket_{};
};

// A circuit breaker that refuses a growing fraction of calls (weir_breaker).
class Breaker : public detail::handle<weir_breaker, weir_breaker_free> {
public:
    // The policy is copied; `policy` may go away after the call.
    static result<Breaker> make(const BreakerPolicy& policy, instant now) noexcept {
        weir_breaker_policy c = policy.c();
        weir_breaker* out = nullptr;
        weir_status status = weir_breaker_new(&c, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Breaker(out);
    }
    static result<Breaker> make(instant now) noexcept { return make(BreakerPolicy{}, now); }

    // `roll` is a draw from [0, 1). True: go ahead, and `ticket` holds the
    // call until pass or fail settles it, once (a second settle answers
    // WEIR_ERR_SETTLED and changes nothing).
    bool allow(instant now, double roll, BreakerTicket& ticket) const noexcept {
        return weir_breaker_allow(get(), now.ns(), roll, ticket.get());
    }
    std::error_code pass(BreakerTicket& ticket, instant now) const noexcept {
        return detail::code(weir_breaker_pass(get(), ticket.get(), now.ns()));
    }
    std::error_code fail(BreakerTicket& ticket, instant now) const noexcept {
        return detail::code(weir_breaker_fail(get(), ticket.get(), now.ns()));
    }
    double ratio(instant now) const noexcept { return weir_breaker_ratio(get(), now.ns()); }
    // A new policy in place (weir_breaker_reconfigure): the window kept
    // when its buckets keep their layout, resampled into one bucket
    // otherwise; tickets in flight still settle. An error changes nothing.
    // Safe beside the breaker's other calls: it takes the breaker's lock.
    std::error_code reconfigure(const BreakerPolicy& policy) noexcept {
        weir_breaker_policy c = policy.c();
        return detail::code(weir_breaker_reconfigure(get(), &c));
    }
    result<weir_breaker_tally> tally(instant now) const noexcept {
        weir_breaker_tally out{};
        weir_status status = weir_breaker_read_tally(get(), now.ns(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

    // Counting (weir_breaker_start_counting): off until turned on; counts()
    // answers WEIR_ERR_COUNTS_OFF until then.
    std::error_code start_counting() const noexcept { return detail::code(weir_breaker_start_counting(get())); }
    result<weir_counts> counts() const noexcept {
        weir_counts out{};
        weir_status status = weir_breaker_read_counts(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }
    // Placed in the caller's memory (see weir::footprint).
    static result<weir::footprint> footprint(const BreakerPolicy& policy) noexcept {
        weir_breaker_policy c = policy.c();
        weir::footprint out{};
        weir_status status = weir_breaker_footprint(&c, &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Breaker> place(void* mem, std::size_t len, const BreakerPolicy& policy, instant now) noexcept {
        weir_breaker_policy c = policy.c();
        weir_breaker* out = nullptr;
        weir_status status = weir_breaker_init_in(mem, len, &c, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Breaker(out);
    }
    // Shared between processes: laid once in memory mapped MAP_SHARED
    // (weir_breaker_init_shared), attached by each process
    // (weir_breaker_attach); destroying the object leaves the region alone.
    static result<weir::footprint> shared_footprint(const BreakerPolicy& policy) noexcept {
        weir_breaker_policy c = policy.c();
        weir::footprint out{};
        weir_status status = weir_breaker_shared_footprint(&c, &out.bytes, &out.align);
        if (status != WEIR_OK) return status;
        return out;
    }
    static result<Breaker> place_shared(void* mem, std::size_t len, const BreakerPolicy& policy, instant now) noexcept {
        weir_breaker_policy c = policy.c();
        weir_breaker* out = nullptr;
        weir_status status = weir_breaker_init_shared(mem, len, &c, now.ns(), &out);
        if (status != WEIR_OK) return status;
        return Breaker(out);
    }
    static result<Breaker> attach(void* mem, std::size_t len) noexcept {
        weir_breaker* out = nullptr;
        weir_status status = weir_breaker_attach(mem, len, &out);
        if (status != WEIR_OK) return status;
        return Breaker(out);
    }
    // What the shared lock recovered from (weir_breaker_recoveries).
    result<weir_recoveries> recoveries() const noexcept {
        weir_recoveries out{};
        weir_status status = weir_breaker_recoveries(get(), &out);
        if (status != WEIR_OK) return status;
        return out;
    }

private:
    explicit Breaker(weir_breaker* breaker) noexcept : handle(breaker) {}
};

}  // namespace weir

#endif  // WEIR_HPP
