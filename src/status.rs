//! `weir_status`: the one status type of the C surface, and its messages.

/// What a call that can fail reports. `WEIR_OK` is 0; every other value is
/// an error. Codes are grouped by area and are never renumbered or reused:
/// 1–99 general (30–39 targets and builds, 40–49 refunds, 50–59 placed handles in the caller's memory, 60–69 regions shared between processes, 70–79 counts, 80–89 charging several limits at once), 100–199 the limiter, 200–299 the pool,
/// 300–399 breaker, shedder and window (330–349 the breaker's limits, 350–359 the shedder's classes), 400–499 rate and bloom (430–449 the GCRA word),
/// 500–549 the retry budget, 550–599 the adaptive concurrency limit (560–579 its partitions), 600–629 the lease.
/// `weir_status_str` describes any value, known or not.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum weir_status {
    /// Success.
    WEIR_OK = 0,

    // 1–99: general.
    /// A pointer the call needs was NULL.
    WEIR_ERR_NULL = 1,
    /// An argument is outside the range the call documents.
    WEIR_ERR_INVALID_ARGUMENT = 2,
    /// An argument is NaN or infinite where a finite number is needed.
    WEIR_ERR_NOT_FINITE = 3,
    /// An argument is negative where it must not be.
    WEIR_ERR_NEGATIVE = 4,
    /// A size is too large to allocate or to represent.
    WEIR_ERR_TOO_LARGE = 5,
    /// Memory could not be allocated.
    WEIR_ERR_NO_MEMORY = 6,
    /// The call panicked inside the library; the handle is now poisoned.
    WEIR_ERR_PANIC = 7,
    /// An earlier call on this handle panicked; the handle refuses everything.
    WEIR_ERR_POISONED = 8,
    /// The call was already settled; settling it again changes nothing.
    WEIR_ERR_SETTLED = 9,
    /// An enumeration field holds a value that names no known case.
    WEIR_ERR_UNKNOWN_KIND = 10,
    /// A pointer is not aligned for the type it points to; nothing was read
    /// through it or written to it.
    WEIR_ERR_MISALIGNED = 11,
    /// A field marked reserved is not zero (a policy from a newer header, or
    /// one not zero-initialised).
    WEIR_ERR_RESERVED = 12,
    /// A backoff policy's `base_ns` is negative.
    WEIR_ERR_BACKOFF_BASE = 13,
    /// A backoff policy's `factor` is NaN, infinite or below 1.
    WEIR_ERR_BACKOFF_FACTOR = 14,
    /// A backoff policy's `cap_ns` is negative.
    WEIR_ERR_BACKOFF_CAP = 15,
    /// A backoff policy's `attempts` is below 1.
    WEIR_ERR_BACKOFF_ATTEMPTS = 16,
    /// A backoff policy's `spread` is NaN, infinite or outside [0, 1].
    WEIR_ERR_BACKOFF_SPREAD = 17,
    /// A sliding window's or a period counter's `quota` is zero or negative.
    WEIR_ERR_QUOTA = 18,
    /// A sliding window's `window_ns` is zero or negative.
    WEIR_ERR_SLIDING_WINDOW = 19,

    // 30–39: targets and builds (firmware).
    /// This build updates weir's 64-bit words under a lock kept in this
    /// program, not with lock-free instructions (the target has no 64-bit
    /// atomics), so a rate word or bloom region cannot be shared with another
    /// process or program: see `weir_words_shareable`.
    WEIR_ERR_WORDS_NOT_SHAREABLE = 30,

    // 40–49: refunds.
    /// A refund's units were taken in a window, or a cooldown's batch, that
    /// has ended since, or a bucket's refill has since made them good;
    /// nothing was given back.
    WEIR_ERR_REFUND_EXPIRED = 40,
    /// A refund to a cooldown limiter whose gate is armed: the batch is
    /// spent and its gate stands; nothing was given back.
    WEIR_ERR_REFUND_ARMED = 41,
    /// A refund to a limiter or `weir_bucket` already at capacity at `now`
    /// (a bucket that refilled, for one); nothing to give back.
    WEIR_ERR_REFUND_FULL = 42,
    /// A refund whose `taken_at` is later than its `now`; nothing changed.
    WEIR_ERR_REFUND_FUTURE = 43,

    // 50–59: placed handles (weir_X_init_in) in memory the caller owns.
    /// The memory handed to a `weir_X_init_in` call is shorter than the
    /// handle's footprint (`weir_X_footprint`); nothing was written to it.
    WEIR_ERR_PLACED_TOO_SMALL = 50,
    /// The memory handed to a `weir_X_init_in` call does not start at a
    /// multiple of the alignment `weir_X_footprint` answers; nothing was
    /// written to it.
    WEIR_ERR_PLACED_MISALIGNED = 51,
    /// The memory handed to `weir_bloom_view_in` for the view overlaps the
    /// region it would view: laying the view would overwrite the region's
    /// words, which others may be using; nothing was written.
    WEIR_ERR_PLACED_OVERLAP = 52,

    // 60–69: regions shared between processes (weir_X_init_shared,
    // weir_X_attach), every shared structure's.
    /// The memory handed to a `weir_X_attach` call does not start with a
    /// weir region header (`weir_region_header`: its magic is wrong, or its
    /// header's checksum does not match its bytes): not a region, random
    /// bytes, or a header damaged since it was laid.
    WEIR_ERR_REGION_FOREIGN = 60,
    /// A region whose header has a layout version this build does not read
    /// (WEIR_REGION_LAYOUT is the one it reads).
    WEIR_ERR_REGION_LAYOUT = 61,
    /// A region that holds another type than the attach call's (a shedder's
    /// region handed to `weir_breaker_attach`, a bloom array's to any).
    WEIR_ERR_REGION_KIND = 62,
    /// A region whose size does not add up: the memory handed over is
    /// shorter than the header says the region is, or the header's size is
    /// not what its type and slot count need.
    WEIR_ERR_REGION_SIZE = 63,
    /// A region laid by a build whose handle layout differs from this one's
    /// (another weir version, or the same version built by another
    /// compiler): its bytes would be misread, so it is refused.
    WEIR_ERR_REGION_BUILD = 64,
    /// A region whose handle does not match its header (its slots are not
    /// where, or not as many as, the header says, or its lock is not a
    /// shared one).
    WEIR_ERR_REGION_SHAPE = 65,
    /// A process died holding the shared handle's lock. This call took the
    /// lock, checked the handle's state, kept it if it held together or
    /// reset it if not (`weir_X_recoveries` counts both), and did nothing
    /// else: a decision that answers no status refused instead. The next
    /// call runs as usual.
    WEIR_ERR_REGION_RECOVERED = 66,
    /// The shared handle's lock cannot be taken again (the system reports
    /// it unrecoverable, or its bytes are not a lock); nothing changed. Lay
    /// the region again.
    WEIR_ERR_REGION_BROKEN = 67,
    /// Shared handles need a robust, process-shared mutex, which this
    /// platform lacks; nothing was written. They are built for Linux, and a
    /// handle with a lock (all but the bucket and the gate) also needs the
    /// kernel to release a dying holder's lock through its robust-futex
    /// list, which an emulator may not keep (qemu-user does not): there
    /// both its init and its attach answer this. Also every
    /// `weir_X_reconfigure` on a shared handle (breaker, window, bucket,
    /// sliding window, period, gate, and a bloom array's view of a region,
    /// `weir_bloom_view_in`): its policy is its region's, laid once for
    /// every process, so it is not changed in place (lay a new region for
    /// another policy); nothing changed.
    WEIR_ERR_REGION_UNSUPPORTED = 68,
    /// `weir_pool_attach`, always: a pool is placed-only and never shared
    /// between processes, because its items are one process's identities
    /// (file descriptors, pointers), meaningless in another; nothing was
    /// written.
    WEIR_ERR_REGION_POOL = 69,

    // 70–79: counts.
    /// `weir_<type>_read_counts` on a handle that does not count: turn
    /// counting on with `weir_<type>_start_counting` after making it.
    WEIR_ERR_COUNTS_OFF = 70,

    // 80–89: charging several limits at once (weir_charge_all).
    /// `weir_charge_all` was given more than WEIR_CHARGE_MAX_ITEMS items;
    /// nothing was charged.
    WEIR_ERR_CHARGE_TOO_MANY = 80,
    /// A `weir_charge_item`'s cost is NaN, infinite, zero or negative, or,
    /// for a word or a bloom key, not a whole number; nothing was charged.
    WEIR_ERR_CHARGE_COST = 81,

    // 100–199: the limiter.
    /// A limiter constructor was given a capacity of zero.
    WEIR_ERR_LIMITER_ZERO_CAPACITY = 100,
    /// A bucket limiter was given a refill amount of zero.
    WEIR_ERR_LIMITER_ZERO_REFILL_AMOUNT = 101,
    /// A bucket limiter was given a refill interval of zero or less.
    WEIR_ERR_LIMITER_ZERO_REFILL_INTERVAL = 102,
    /// A fixed-window limiter was given a window of zero or less.
    WEIR_ERR_LIMITER_ZERO_WINDOW = 103,
    /// A cooldown limiter was given a cooldown of zero or less.
    WEIR_ERR_LIMITER_ZERO_COOLDOWN = 104,
    /// A limiter constructor was given more initial units than its capacity.
    WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY = 105,
    /// A bucket limiter's refill anchor (`last_refill`) is later than `now`.
    WEIR_ERR_LIMITER_BUCKET_ANCHOR_IN_FUTURE = 106,
    /// A fixed-window limiter's anchor (`window_start`) is later than `now`.
    WEIR_ERR_LIMITER_WINDOW_ANCHOR_IN_FUTURE = 107,
    /// A cooldown limiter was given units while its gate (`cooldown_end`) is
    /// still armed at `now`: a contradiction.
    WEIR_ERR_LIMITER_COOLDOWN_ARMED_WITH_TOKENS = 108,
    /// Draining a cooldown limiter would arm a gate whose deadline
    /// (`now + cooldown_ns`) does not fit in an int64_t; nothing was changed.
    WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW = 109,
    /// The limiter cannot grant the amount now; nothing was taken.
    WEIR_ERR_LIMITER_RATE_LIMITED = 110,
    /// A limiter consume asked for zero units.
    WEIR_ERR_LIMITER_INVALID_AMOUNT = 111,
    /// A limiter getter for one variant was asked of another; check with
    /// `weir_limiter_is_bucket` and friends first.
    WEIR_ERR_LIMITER_WRONG_VARIANT = 112,
    /// The `weir_limiter` value is not one a constructor made: zeroed or
    /// overwritten. It refuses every call until rebuilt. (A value never
    /// initialised must not be passed at all: see `weir_limiter`.)
    WEIR_ERR_LIMITER_CORRUPT = 113,
    // 200–299: the pool.
    /// The item is idle in the pool, not lent: it cannot be given or
    /// dropped. Nothing changed.
    WEIR_ERR_POOL_ITEM_IDLE = 200,
    /// The pool did not lend the item and no reservation is open for it to
    /// fill. Nothing changed.
    WEIR_ERR_POOL_NOT_LENT = 201,
    /// No reservation is open: `made` or `unmade` without a take that
    /// answered WEIR_POOL_TAKEN_MAKE. Nothing changed.
    WEIR_ERR_POOL_NO_RESERVATION = 202,
    /// `made` with an item the pool already holds, idle or lent. Nothing
    /// changed.
    WEIR_ERR_POOL_ITEM_KNOWN = 203,
    /// A pool's `weir_pool_policy.size` is outside 1..WEIR_POOL_MAX_SIZE: zero,
    /// negative or too large.
    WEIR_ERR_POOL_SIZE = 204,
    /// A pool's `weir_pool_policy.idle` is negative.
    WEIR_ERR_POOL_IDLE = 205,
    /// A pool's `weir_pool_policy.keep_ns` is negative.
    WEIR_ERR_POOL_KEEP = 206,
    /// A pool's `weir_pool_policy.life_ns` is negative.
    WEIR_ERR_POOL_LIFE = 207,
    /// A pool's `weir_pool_policy.life_jitter` is not in 0..1 (NaN included).
    WEIR_ERR_POOL_JITTER = 220,
    /// A pool's `weir_pool_policy.min_idle` is negative.
    WEIR_ERR_POOL_MIN_IDLE = 221,
    /// A pool's `weir_pool_policy.max_making` is negative.
    WEIR_ERR_POOL_MAX_MAKING = 222,
    // 300–399: breaker, shedder and window.
    /// `weir_window_new`'s `window_ns` is zero or negative.
    WEIR_ERR_WINDOW_SPAN = 300,
    /// A breaker policy's `k` is NaN, infinite or below its `floor`.
    WEIR_ERR_BREAKER_K = 301,
    /// A breaker policy's `floor` is NaN, infinite or below 1.
    WEIR_ERR_BREAKER_FLOOR = 302,
    /// A breaker policy's `protection` is NaN, infinite or negative.
    WEIR_ERR_BREAKER_PROTECTION = 303,
    /// A breaker policy's `probe_ns` is zero or negative.
    WEIR_ERR_BREAKER_PROBE = 304,
    /// A shedder policy's CPU threshold is outside [0, 1000).
    WEIR_ERR_SHEDDER_CPU = 305,
    /// A shedder policy's `latency_ns` is zero or negative.
    WEIR_ERR_SHEDDER_LATENCY = 306,
    /// A shedder policy's `beta` is NaN or outside [0, 1).
    WEIR_ERR_SHEDDER_BETA = 307,
    /// A shedder policy's `floor` is NaN or outside (0, 1].
    WEIR_ERR_SHEDDER_FLOOR = 308,
    /// A shedder policy's `cool_ns` is negative.
    WEIR_ERR_SHEDDER_COOL = 309,
    /// A breaker ticket this breaker did not hand out: another breaker's, a
    /// zeroed or overwritten one. Nothing changed.
    WEIR_ERR_BREAKER_TICKET = 310,
    /// A breaker policy's `size` is above 1048576 buckets.
    WEIR_ERR_BREAKER_SIZE = 311,
    /// A breaker policy's `window_ns` is zero or negative.
    WEIR_ERR_BREAKER_WINDOW = 312,
    /// A shedder policy's `size` is above 1048576 buckets.
    WEIR_ERR_SHEDDER_SIZE = 313,
    /// A shedder policy's `window_ns` is zero or negative.
    WEIR_ERR_SHEDDER_WINDOW = 314,
    /// `weir_window_new`'s `size` is above 1048576 buckets.
    WEIR_ERR_WINDOW_SIZE = 315,
    /// A breaker policy's `max_rejection_probability` is NaN or outside
    /// [0, 1].
    WEIR_ERR_BREAKER_CAP = 330,
    /// A breaker policy's `rps_threshold` is not finite or is negative.
    WEIR_ERR_BREAKER_RPS = 331,
    /// A breaker policy's `aggression` is not finite or is not positive.
    WEIR_ERR_BREAKER_AGGRESSION = 332,
    /// A breaker policy's `skip_refusals` is neither 0 nor 1.
    WEIR_ERR_BREAKER_REFUSALS = 333,
    // 350–359: the shedder's criticality classes.
    /// A shedder call's class names none of the `WEIR_SHEDDER_*` classes.
    WEIR_ERR_SHEDDER_CLASS = 350,

    // 400–499: rate and bloom.
    /// A rate limit's burst is outside 1..1023.
    WEIR_ERR_RATE_BURST = 400,
    /// A rate limit of zero events a second.
    WEIR_ERR_RATE_ZERO = 401,
    /// A rate so slow that burst × interval overflows the rate word's time
    /// range (2^63 ns).
    WEIR_ERR_RATE_TOO_SLOW = 402,
    /// A rate so fast that burst × interval is under 100 × 512 ns, where the
    /// rate word's granularity would cost more than 1 % accuracy.
    WEIR_ERR_RATE_TOO_FAST = 403,
    /// A `weir_rate_limit` whose fields are out of range: not one that
    /// `weir_rate_limit_new` makes.
    WEIR_ERR_RATE_LIMIT_INVALID = 404,
    /// A bloom array's size_log2 is above WEIR_BLOOM_MAX_SIZE_LOG2.
    WEIR_ERR_BLOOM_SIZE = 410,
    /// A bloom array's hash count is 0 or above WEIR_BLOOM_MAX_HASHES.
    WEIR_ERR_BLOOM_HASHES = 411,
    /// A memory region is too small for a bloom array's header and words.
    WEIR_ERR_BLOOM_TOO_SMALL = 412,
    // 413 is retired, never to be reused: a misaligned region answers the
    // general WEIR_ERR_MISALIGNED like every other pointer.
    /// A memory region holds no valid bloom array header.
    WEIR_ERR_BLOOM_FOREIGN = 414,
    /// A memory region holds a bloom array of another layout version.
    WEIR_ERR_BLOOM_VERSION = 415,
    /// A bloom array's size_log2 is below WEIR_BLOOM_MIN_SIZE_LOG2: fewer
    /// words than one 64-byte line.
    WEIR_ERR_BLOOM_TOO_FEW_WORDS = 416,
    /// A memory region holds a bloom array of a word kind this library does
    /// not know.
    WEIR_ERR_BLOOM_KIND = 417,
    /// A memory region holds a bloom array laid out in lines of another size
    /// than 64 bytes.
    WEIR_ERR_BLOOM_LINE_SIZE = 418,
    /// `weir_bloom_reconfigure` on an array of GCRA words, or
    /// `weir_bloom_reconfigure_gcra` on one of rate words: a word's kind is
    /// chosen when the array is made and never changes (its bits mean
    /// nothing under the other kind); nothing changed.
    WEIR_ERR_BLOOM_KIND_CHANGE = 419,
    /// `weir_bloom_reconfigure_gcra` with a limit on another tick than the
    /// array's (the `shift` of `weir_gcra_limit`): the arrival times its
    /// words hold would be misread; nothing changed. Every rate up to
    /// 7,812,500 a second has tick 0, so two such limits always agree.
    WEIR_ERR_BLOOM_TICK_CHANGE = 420,

    // 430–449: the smooth (GCRA) word.
    /// A GCRA limit's burst is outside 1..WEIR_GCRA_MAX_BURST.
    WEIR_ERR_GCRA_BURST = 430,
    /// A GCRA limit of zero tokens a second.
    WEIR_ERR_GCRA_ZERO = 431,
    /// A GCRA rate so slow that burst / rate outlasts the word's clock.
    WEIR_ERR_GCRA_TOO_SLOW = 432,
    /// A GCRA rate above WEIR_GCRA_MAX_RATE (a token worth under a tick).
    WEIR_ERR_GCRA_TOO_FAST = 433,
    /// A `weir_gcra_limit` whose fields are out of range: not one that
    /// `weir_gcra_limit_new` makes.
    WEIR_ERR_GCRA_LIMIT_INVALID = 434,

    // 450–469: the keyed table.
    /// A keyed table's bucket count is 0, above WEIR_KEYED_MAX_BUCKETS, or
    /// more than the address space holds.
    WEIR_ERR_KEYED_BUCKETS = 450,
    /// A keyed table's overflow policy names none of the
    /// `WEIR_KEYED_OVERFLOW_*` policies.
    WEIR_ERR_KEYED_OVERFLOW = 451,
    /// `weir_keyed_buckets_for`: the chance is NaN, not above 0 or above 1,
    /// or the keys would need more than WEIR_KEYED_MAX_BUCKETS.
    WEIR_ERR_KEYED_SIZING = 452,
    /// A keyed table's call asked for a count outside 1..=burst, or named a
    /// key longer than any object can be.
    WEIR_ERR_KEYED_COUNT = 453,
    /// `weir_keyed_reconfigure` on a table of rate words, or
    /// `weir_keyed_reconfigure_rate` on one of GCRA words: a table's word
    /// kind is chosen when it is made and never changes (its words' bits
    /// mean nothing under the other kind); nothing changed.
    WEIR_ERR_KEYED_KIND_CHANGE = 454,
    /// `weir_keyed_reconfigure` with a limit on another tick than the
    /// table's (the `shift` of `weir_gcra_limit`): the arrival times its
    /// words hold would be misread; nothing changed. Every rate up to
    /// 7,812,500 a second has tick 0, so two such limits always agree.
    WEIR_ERR_KEYED_TICK_CHANGE = 455,

    // 500–549: the retry budget.
    /// A retry budget's `max_tokens` is outside 1..1000.
    WEIR_ERR_BUDGET_MAX_TOKENS = 500,
    /// A retry budget's `token_ratio` is NaN, infinite, or under 0.0005
    /// (it rounds to no thousandth).
    WEIR_ERR_BUDGET_TOKEN_RATIO = 501,
    /// A retry budget's `ttl_ns` is outside [1 s, 60 s].
    WEIR_ERR_BUDGET_TTL = 502,
    /// A retry budget's `min_per_s` is negative.
    WEIR_ERR_BUDGET_MIN_PER_S = 503,
    /// A retry budget's `percent` is NaN or outside [0, 1000].
    WEIR_ERR_BUDGET_PERCENT = 504,

    // 550–599: the adaptive concurrency limit.
    /// A concurrency policy's limits are not 1 ≤ `min_limit` ≤
    /// `initial_limit` ≤ `max_limit` ≤ WEIR_CONCURRENCY_MAX_LIMIT.
    WEIR_ERR_CONCURRENCY_LIMITS = 550,
    /// A concurrency policy's `queue_size` is negative or above `max_limit`.
    WEIR_ERR_CONCURRENCY_QUEUE = 551,
    /// A concurrency policy's `smoothing` is NaN or outside (0, 1].
    WEIR_ERR_CONCURRENCY_SMOOTHING = 552,
    /// A concurrency policy's `tolerance` is NaN, infinite or below 1.
    WEIR_ERR_CONCURRENCY_TOLERANCE = 553,
    /// A concurrency policy's `long_window` or `warmup` is below 1.
    WEIR_ERR_CONCURRENCY_WINDOW = 554,

    // 560–579: partitions of the adaptive limit.
    /// A partitioned limit's partition count is not 1 to
    /// `WEIR_CONCURRENCY_MAX_PARTITIONS`, or its partitions are NULL.
    WEIR_ERR_CONCURRENCY_PARTITIONS = 560,
    /// A partition's share is NaN or outside [0, 1], or the shares sum past 1.
    WEIR_ERR_CONCURRENCY_SHARE = 561,
    /// A partition's borrow cap is negative or above
    /// `WEIR_CONCURRENCY_MAX_LIMIT`.
    WEIR_ERR_CONCURRENCY_BORROW = 562,
    /// The limit has no partition with that number.
    WEIR_ERR_CONCURRENCY_PARTITION = 563,
    /// The partition has no call in flight to leave.
    WEIR_ERR_CONCURRENCY_PARTITION_EMPTY = 564,

    // 600–629: the lease.
    /// A lease policy's `interval_ns` is under 1 µs or not below `ttl_ns`.
    WEIR_ERR_LEASE_INTERVAL = 600,
    /// A lease policy's `ttl_ns` is outside [1 ms, 1 hour].
    WEIR_ERR_LEASE_TTL = 601,
    /// A lease policy's `burst` is outside 1..2^61.
    WEIR_ERR_LEASE_BURST = 602,
    /// A lease policy's `share` is NaN or outside (0, 1].
    WEIR_ERR_LEASE_SHARE = 603,
    /// A lease take's cost is under 1 or over the lease's cap.
    WEIR_ERR_LEASE_COST = 604,
    /// A lease grant is of fewer than 0 units or more than the cap.
    WEIR_ERR_LEASE_GRANT = 605,
}

/// The status as its integer code.
impl From<weir_status> for i32 {
    fn from(status: weir_status) -> i32 {
        status as i32
    }
}

/// A static, NUL-terminated, human-readable description of a status code.
/// Any value is accepted: a code weir does not define gets
/// "unknown status code". The string must not be freed.
#[no_mangle]
pub extern "C" fn weir_status_str(code: i32) -> *const core::ffi::c_char {
    weir_status::from_code(code)
        .map_or(c"unknown status code", weir_status::text)
        .as_ptr()
}

/// Every status, for turning a code from C back into a status.
const ALL: &[weir_status] = {
    use weir_status::*;
    &[
        WEIR_OK,
        WEIR_ERR_NULL,
        WEIR_ERR_INVALID_ARGUMENT,
        WEIR_ERR_NOT_FINITE,
        WEIR_ERR_NEGATIVE,
        WEIR_ERR_TOO_LARGE,
        WEIR_ERR_NO_MEMORY,
        WEIR_ERR_PANIC,
        WEIR_ERR_POISONED,
        WEIR_ERR_SETTLED,
        WEIR_ERR_UNKNOWN_KIND,
        WEIR_ERR_MISALIGNED,
        WEIR_ERR_RESERVED,
        WEIR_ERR_BACKOFF_BASE,
        WEIR_ERR_BACKOFF_FACTOR,
        WEIR_ERR_BACKOFF_CAP,
        WEIR_ERR_BACKOFF_ATTEMPTS,
        WEIR_ERR_BACKOFF_SPREAD,
        WEIR_ERR_QUOTA,
        WEIR_ERR_SLIDING_WINDOW,
        WEIR_ERR_WORDS_NOT_SHAREABLE,
        WEIR_ERR_REFUND_EXPIRED,
        WEIR_ERR_REFUND_ARMED,
        WEIR_ERR_REFUND_FULL,
        WEIR_ERR_REFUND_FUTURE,
        WEIR_ERR_PLACED_TOO_SMALL,
        WEIR_ERR_PLACED_MISALIGNED,
        WEIR_ERR_PLACED_OVERLAP,
        WEIR_ERR_REGION_FOREIGN,
        WEIR_ERR_REGION_LAYOUT,
        WEIR_ERR_REGION_KIND,
        WEIR_ERR_REGION_SIZE,
        WEIR_ERR_REGION_BUILD,
        WEIR_ERR_REGION_SHAPE,
        WEIR_ERR_REGION_RECOVERED,
        WEIR_ERR_REGION_BROKEN,
        WEIR_ERR_REGION_UNSUPPORTED,
        WEIR_ERR_REGION_POOL,
        WEIR_ERR_COUNTS_OFF,
        WEIR_ERR_CHARGE_TOO_MANY,
        WEIR_ERR_CHARGE_COST,
        WEIR_ERR_LIMITER_ZERO_CAPACITY,
        WEIR_ERR_LIMITER_ZERO_REFILL_AMOUNT,
        WEIR_ERR_LIMITER_ZERO_REFILL_INTERVAL,
        WEIR_ERR_LIMITER_ZERO_WINDOW,
        WEIR_ERR_LIMITER_ZERO_COOLDOWN,
        WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY,
        WEIR_ERR_LIMITER_BUCKET_ANCHOR_IN_FUTURE,
        WEIR_ERR_LIMITER_WINDOW_ANCHOR_IN_FUTURE,
        WEIR_ERR_LIMITER_COOLDOWN_ARMED_WITH_TOKENS,
        WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW,
        WEIR_ERR_LIMITER_RATE_LIMITED,
        WEIR_ERR_LIMITER_INVALID_AMOUNT,
        WEIR_ERR_LIMITER_WRONG_VARIANT,
        WEIR_ERR_LIMITER_CORRUPT,
        WEIR_ERR_POOL_ITEM_IDLE,
        WEIR_ERR_POOL_NOT_LENT,
        WEIR_ERR_POOL_NO_RESERVATION,
        WEIR_ERR_POOL_ITEM_KNOWN,
        WEIR_ERR_POOL_SIZE,
        WEIR_ERR_POOL_IDLE,
        WEIR_ERR_POOL_KEEP,
        WEIR_ERR_POOL_LIFE,
        WEIR_ERR_POOL_JITTER,
        WEIR_ERR_POOL_MIN_IDLE,
        WEIR_ERR_POOL_MAX_MAKING,
        WEIR_ERR_WINDOW_SPAN,
        WEIR_ERR_BREAKER_K,
        WEIR_ERR_BREAKER_FLOOR,
        WEIR_ERR_BREAKER_PROTECTION,
        WEIR_ERR_BREAKER_PROBE,
        WEIR_ERR_SHEDDER_CPU,
        WEIR_ERR_SHEDDER_LATENCY,
        WEIR_ERR_SHEDDER_BETA,
        WEIR_ERR_SHEDDER_FLOOR,
        WEIR_ERR_SHEDDER_COOL,
        WEIR_ERR_BREAKER_TICKET,
        WEIR_ERR_BREAKER_SIZE,
        WEIR_ERR_BREAKER_WINDOW,
        WEIR_ERR_SHEDDER_SIZE,
        WEIR_ERR_SHEDDER_WINDOW,
        WEIR_ERR_WINDOW_SIZE,
        WEIR_ERR_BREAKER_CAP,
        WEIR_ERR_BREAKER_RPS,
        WEIR_ERR_BREAKER_AGGRESSION,
        WEIR_ERR_BREAKER_REFUSALS,
        WEIR_ERR_SHEDDER_CLASS,
        WEIR_ERR_RATE_BURST,
        WEIR_ERR_RATE_ZERO,
        WEIR_ERR_RATE_TOO_SLOW,
        WEIR_ERR_RATE_TOO_FAST,
        WEIR_ERR_RATE_LIMIT_INVALID,
        WEIR_ERR_BLOOM_SIZE,
        WEIR_ERR_BLOOM_HASHES,
        WEIR_ERR_BLOOM_TOO_SMALL,
        WEIR_ERR_BLOOM_FOREIGN,
        WEIR_ERR_BLOOM_VERSION,
        WEIR_ERR_BLOOM_TOO_FEW_WORDS,
        WEIR_ERR_BLOOM_KIND,
        WEIR_ERR_BLOOM_LINE_SIZE,
        WEIR_ERR_BLOOM_KIND_CHANGE,
        WEIR_ERR_BLOOM_TICK_CHANGE,
        WEIR_ERR_GCRA_BURST,
        WEIR_ERR_GCRA_ZERO,
        WEIR_ERR_GCRA_TOO_SLOW,
        WEIR_ERR_GCRA_TOO_FAST,
        WEIR_ERR_GCRA_LIMIT_INVALID,
        WEIR_ERR_KEYED_BUCKETS,
        WEIR_ERR_KEYED_OVERFLOW,
        WEIR_ERR_KEYED_SIZING,
        WEIR_ERR_KEYED_COUNT,
        WEIR_ERR_KEYED_KIND_CHANGE,
        WEIR_ERR_KEYED_TICK_CHANGE,
        WEIR_ERR_BUDGET_MAX_TOKENS,
        WEIR_ERR_BUDGET_TOKEN_RATIO,
        WEIR_ERR_BUDGET_TTL,
        WEIR_ERR_BUDGET_MIN_PER_S,
        WEIR_ERR_BUDGET_PERCENT,
        WEIR_ERR_CONCURRENCY_LIMITS,
        WEIR_ERR_CONCURRENCY_QUEUE,
        WEIR_ERR_CONCURRENCY_SMOOTHING,
        WEIR_ERR_CONCURRENCY_TOLERANCE,
        WEIR_ERR_CONCURRENCY_WINDOW,
        WEIR_ERR_CONCURRENCY_PARTITIONS,
        WEIR_ERR_CONCURRENCY_SHARE,
        WEIR_ERR_CONCURRENCY_BORROW,
        WEIR_ERR_CONCURRENCY_PARTITION,
        WEIR_ERR_CONCURRENCY_PARTITION_EMPTY,
        WEIR_ERR_LEASE_INTERVAL,
        WEIR_ERR_LEASE_TTL,
        WEIR_ERR_LEASE_BURST,
        WEIR_ERR_LEASE_SHARE,
        WEIR_ERR_LEASE_COST,
        WEIR_ERR_LEASE_GRANT,
    ]
};

/// One past the largest code.
const CODES: usize = 630;

/// Which codes below [`CODES`] name a status: bit `code % 64` of word
/// `code / 64`, set for each status in [`ALL`] (80 bytes, so that a code
/// turns back into its status in a few instructions and little flash).
const NAMED: [u64; CODES.div_ceil(64)] = {
    let mut named = [0u64; CODES.div_ceil(64)];
    let mut i = 0;
    while i < ALL.len() {
        let code = ALL[i] as i32;
        assert!(code >= 0 && (code as usize) < CODES);
        named[code as usize / 64] |= 1 << (code % 64);
        i += 1;
    }
    named
};

impl weir_status {
    /// The status a code from C names, if it names one.
    pub const fn from_code(code: i32) -> Option<weir_status> {
        if code < 0 || code as usize >= CODES || NAMED[code as usize / 64] & (1 << (code % 64)) == 0
        {
            return None;
        }
        // SAFETY: weir_status is a fieldless #[repr(i32)] enum, and NAMED
        // has the bit of `code` set only when `code` is the discriminant of
        // a status in ALL, each a variant: `code` is a valid weir_status.
        Some(unsafe { core::mem::transmute::<i32, weir_status>(code) })
    }

    /// The status of a weir-core error's code (each core error's `code()`,
    /// the one mapping from the core's errors to these codes). Every such
    /// code names a status (the tests below check each error); were one
    /// not to, the answer would be `WEIR_ERR_INVALID_ARGUMENT`.
    #[inline]
    pub(crate) const fn of(code: i32) -> weir_status {
        match weir_status::from_code(code) {
            Some(status) => status,
            None => weir_status::WEIR_ERR_INVALID_ARGUMENT,
        }
    }

    /// What the status means, in one line.
    pub fn text(self) -> &'static core::ffi::CStr {
        use weir_status::*;
        match self {
            WEIR_OK => c"ok",
            WEIR_ERR_NULL => c"a required pointer was NULL",
            WEIR_ERR_INVALID_ARGUMENT => c"an argument is out of its documented range",
            WEIR_ERR_NOT_FINITE => c"an argument is NaN or infinite",
            WEIR_ERR_NEGATIVE => c"an argument is negative",
            WEIR_ERR_TOO_LARGE => c"a size is too large to allocate or represent",
            WEIR_ERR_NO_MEMORY => c"out of memory",
            WEIR_ERR_PANIC => c"internal panic; the handle is now poisoned",
            WEIR_ERR_POISONED => c"the handle was poisoned by an earlier panic",
            WEIR_ERR_SETTLED => c"already settled",
            WEIR_ERR_UNKNOWN_KIND => c"an enumeration field holds an unknown value",
            WEIR_ERR_MISALIGNED => c"a pointer is not aligned for its type",
            WEIR_ERR_RESERVED => c"a reserved field is not zero",
            WEIR_ERR_BACKOFF_BASE => c"backoff base_ns is negative",
            WEIR_ERR_BACKOFF_FACTOR => c"backoff factor is NaN, infinite or below 1",
            WEIR_ERR_BACKOFF_CAP => c"backoff cap_ns is negative",
            WEIR_ERR_BACKOFF_ATTEMPTS => c"backoff attempts is below 1",
            WEIR_ERR_BACKOFF_SPREAD => c"backoff spread is NaN, infinite or outside [0, 1]",
            WEIR_ERR_QUOTA => c"quota is zero or negative",
            WEIR_ERR_SLIDING_WINDOW => c"sliding window_ns is zero or negative",
            WEIR_ERR_WORDS_NOT_SHAREABLE => {
                c"this target's words take a lock in this program: not shareable between processes"
            }
            WEIR_ERR_REFUND_EXPIRED => {
                c"refund: the units' window or batch has ended, or the refill has made them good"
            }
            WEIR_ERR_REFUND_ARMED => c"refund: the cooldown's gate is armed; the batch is spent",
            WEIR_ERR_REFUND_FULL => c"refund: the limiter or bucket is already at capacity",
            WEIR_ERR_REFUND_FUTURE => c"refund: taken_at is later than now",
            WEIR_ERR_PLACED_TOO_SMALL => c"placed handle: memory shorter than its footprint",
            WEIR_ERR_REGION_FOREIGN => c"shared region: no weir region header (or a damaged one)",
            WEIR_ERR_REGION_LAYOUT => c"shared region: a layout version this build does not read",
            WEIR_ERR_REGION_KIND => c"shared region: it holds another type",
            WEIR_ERR_REGION_SIZE => c"shared region: its size does not add up",
            WEIR_ERR_REGION_BUILD => c"shared region: laid by a build with another handle layout",
            WEIR_ERR_REGION_SHAPE => c"shared region: its handle does not match its header",
            WEIR_ERR_REGION_RECOVERED => {
                c"shared region: a process died holding its lock; recovered, nothing else done"
            }
            WEIR_ERR_REGION_BROKEN => c"shared region: its lock cannot be taken again",
            WEIR_ERR_REGION_UNSUPPORTED => {
                c"shared region: no robust process-shared mutex here, or a shared handle's policy changed"
            }
            WEIR_ERR_REGION_POOL => c"shared region: a pool is never shared between processes",
            WEIR_ERR_PLACED_MISALIGNED => {
                c"placed handle: memory not aligned as its footprint says"
            }
            WEIR_ERR_PLACED_OVERLAP => c"placed handle: memory overlaps the region it views",
            WEIR_ERR_COUNTS_OFF => {
                c"the handle does not count: weir_<type>_start_counting turns counting on"
            }
            WEIR_ERR_CHARGE_TOO_MANY => c"charge: more items than WEIR_CHARGE_MAX_ITEMS",
            WEIR_ERR_CHARGE_COST => {
                c"charge: a cost is NaN, infinite, not positive, or not whole for a word or key"
            }
            WEIR_ERR_LIMITER_ZERO_CAPACITY => c"a limiter's capacity is zero",
            WEIR_ERR_LIMITER_ZERO_REFILL_AMOUNT => c"a bucket limiter's refill amount is zero",
            WEIR_ERR_LIMITER_ZERO_REFILL_INTERVAL => {
                c"a bucket limiter's refill interval is zero or negative"
            }
            WEIR_ERR_LIMITER_ZERO_WINDOW => c"a fixed-window limiter's window is zero or negative",
            WEIR_ERR_LIMITER_ZERO_COOLDOWN => c"a cooldown limiter's cooldown is zero or negative",
            WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY => {
                c"a limiter's initial units exceed its capacity"
            }
            WEIR_ERR_LIMITER_BUCKET_ANCHOR_IN_FUTURE => {
                c"a bucket limiter's refill anchor is later than now"
            }
            WEIR_ERR_LIMITER_WINDOW_ANCHOR_IN_FUTURE => {
                c"a fixed-window limiter's anchor is later than now"
            }
            WEIR_ERR_LIMITER_COOLDOWN_ARMED_WITH_TOKENS => {
                c"a cooldown limiter was given units while its gate is armed"
            }
            WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW => {
                c"a cooldown limiter's gate deadline would overflow"
            }
            WEIR_ERR_LIMITER_RATE_LIMITED => c"the limiter cannot grant the amount now",
            WEIR_ERR_LIMITER_INVALID_AMOUNT => c"a limiter consume asked for zero units",
            WEIR_ERR_LIMITER_WRONG_VARIANT => {
                c"the limiter is not of the variant this getter needs"
            }
            WEIR_ERR_LIMITER_CORRUPT => c"the limiter value is zeroed or corrupted; rebuild it",
            WEIR_ERR_POOL_ITEM_IDLE => c"the item is idle in the pool, not lent",
            WEIR_ERR_POOL_NOT_LENT => c"the pool did not lend this item and no reservation is open",
            WEIR_ERR_POOL_NO_RESERVATION => c"no reservation is open: take did not answer MAKE",
            WEIR_ERR_POOL_ITEM_KNOWN => c"the item is already in the pool, idle or lent",
            WEIR_ERR_POOL_SIZE => c"pool size is outside 1..WEIR_POOL_MAX_SIZE",
            WEIR_ERR_POOL_IDLE => c"pool idle is negative",
            WEIR_ERR_POOL_KEEP => c"pool keep_ns is negative",
            WEIR_ERR_POOL_LIFE => c"pool life_ns is negative",
            WEIR_ERR_POOL_JITTER => c"pool life_jitter is not in 0..1",
            WEIR_ERR_POOL_MIN_IDLE => c"pool min_idle is negative",
            WEIR_ERR_POOL_MAX_MAKING => c"pool max_making is negative",
            WEIR_ERR_WINDOW_SPAN => c"window window_ns is zero or negative",
            WEIR_ERR_BREAKER_K => c"sre k is not finite or is below floor",
            WEIR_ERR_BREAKER_FLOOR => c"sre floor is not finite or is below 1",
            WEIR_ERR_BREAKER_PROTECTION => c"sre protection is not finite or is negative",
            WEIR_ERR_BREAKER_PROBE => c"sre probe_ns is zero or negative",
            WEIR_ERR_SHEDDER_CPU => c"shed cpu threshold is outside [0, 1000)",
            WEIR_ERR_SHEDDER_LATENCY => c"shed latency_ns is zero or negative",
            WEIR_ERR_SHEDDER_BETA => c"shed beta is NaN or outside [0, 1)",
            WEIR_ERR_SHEDDER_FLOOR => c"shed floor is NaN or outside (0, 1]",
            WEIR_ERR_SHEDDER_COOL => c"shed cool_ns is negative",
            WEIR_ERR_BREAKER_TICKET => {
                c"breaker ticket not handed out by this breaker (another's, zeroed or overwritten)"
            }
            WEIR_ERR_BREAKER_SIZE => c"sre size is above 1048576 buckets",
            WEIR_ERR_BREAKER_WINDOW => c"sre window_ns is zero or negative",
            WEIR_ERR_SHEDDER_SIZE => c"shed size is above 1048576 buckets",
            WEIR_ERR_SHEDDER_WINDOW => c"shed window_ns is zero or negative",
            WEIR_ERR_WINDOW_SIZE => c"window size is above 1048576 buckets",
            WEIR_ERR_BREAKER_CAP => c"sre max_rejection_probability is NaN or outside [0, 1]",
            WEIR_ERR_BREAKER_RPS => c"sre rps_threshold is not finite or is negative",
            WEIR_ERR_BREAKER_AGGRESSION => c"sre aggression is not finite or is not positive",
            WEIR_ERR_BREAKER_REFUSALS => c"sre skip_refusals is neither 0 nor 1",
            WEIR_ERR_SHEDDER_CLASS => c"shedder criticality names no class",
            WEIR_ERR_RATE_BURST => c"rate burst is outside 1..1023",
            WEIR_ERR_RATE_ZERO => c"rate limit is zero",
            WEIR_ERR_RATE_TOO_SLOW => c"rate too slow: burst x interval exceeds the word's 2^63 ns",
            WEIR_ERR_RATE_TOO_FAST => {
                c"rate too fast: burst x interval under 100 x 512 ns (over 1 % error)"
            }
            WEIR_ERR_RATE_LIMIT_INVALID => c"not a weir_rate_limit made by weir_rate_limit_new",
            WEIR_ERR_BLOOM_SIZE => c"bloom size_log2 is above the maximum",
            WEIR_ERR_BLOOM_HASHES => c"bloom hash count is 0 or above the maximum",
            WEIR_ERR_BLOOM_TOO_SMALL => c"memory region too small for the bloom array",
            WEIR_ERR_BLOOM_FOREIGN => c"memory region holds no valid bloom array header",
            WEIR_ERR_BLOOM_VERSION => {
                c"memory region holds a bloom array of another layout version"
            }
            WEIR_ERR_BLOOM_TOO_FEW_WORDS => c"bloom size_log2 is below 3: fewer words than a line",
            WEIR_ERR_BLOOM_KIND => c"memory region holds a bloom array of an unknown word kind",
            WEIR_ERR_BLOOM_KIND_CHANGE => c"a bloom array's word kind cannot change",
            WEIR_ERR_BLOOM_TICK_CHANGE => {
                c"the GCRA limit is on another tick than the bloom array's words"
            }
            WEIR_ERR_BLOOM_LINE_SIZE => {
                c"memory region holds a bloom array laid in lines other than 64 bytes"
            }
            WEIR_ERR_GCRA_BURST => c"gcra burst is outside 1..2^53",
            WEIR_ERR_GCRA_ZERO => c"gcra rate is zero",
            WEIR_ERR_GCRA_TOO_SLOW => c"gcra rate too slow: burst / rate outlasts the word's clock",
            WEIR_ERR_GCRA_TOO_FAST => c"gcra rate too fast: above 1.6e10 a second",
            WEIR_ERR_GCRA_LIMIT_INVALID => c"not a weir_gcra_limit made by weir_gcra_limit_new",
            WEIR_ERR_KEYED_BUCKETS => c"keyed table buckets is 0, above 2^32 or beyond memory",
            WEIR_ERR_KEYED_OVERFLOW => c"keyed table overflow names no WEIR_KEYED_OVERFLOW_ policy",
            WEIR_ERR_KEYED_SIZING => {
                c"keyed sizing: chance outside (0, 1], or more than 2^32 buckets needed"
            }
            WEIR_ERR_KEYED_COUNT => c"keyed table n is outside 1..burst, or key_len is absurd",
            WEIR_ERR_KEYED_KIND_CHANGE => c"a keyed table's word kind cannot change",
            WEIR_ERR_KEYED_TICK_CHANGE => {
                c"the GCRA limit is on another tick than the keyed table's words"
            }
            WEIR_ERR_BUDGET_MAX_TOKENS => c"budget max_tokens is outside 1..1000",
            WEIR_ERR_BUDGET_TOKEN_RATIO => {
                c"budget token_ratio is not finite or rounds to under one thousandth"
            }
            WEIR_ERR_BUDGET_TTL => c"budget ttl_ns is outside [1 s, 60 s]",
            WEIR_ERR_BUDGET_MIN_PER_S => c"budget min_per_s is negative",
            WEIR_ERR_BUDGET_PERCENT => c"budget percent is NaN or outside [0, 1000]",
            WEIR_ERR_CONCURRENCY_LIMITS => {
                c"concurrency limits are not 1 <= min <= initial <= max <= the maximum"
            }
            WEIR_ERR_CONCURRENCY_QUEUE => c"concurrency queue_size is negative or above max_limit",
            WEIR_ERR_CONCURRENCY_SMOOTHING => c"concurrency smoothing is NaN or outside (0, 1]",
            WEIR_ERR_CONCURRENCY_TOLERANCE => c"concurrency tolerance is NaN, infinite or below 1",
            WEIR_ERR_CONCURRENCY_WINDOW => c"concurrency long_window or warmup is below 1",
            WEIR_ERR_CONCURRENCY_PARTITIONS => {
                c"concurrency partition count is not 1 to 16, or the partitions are NULL"
            }
            WEIR_ERR_CONCURRENCY_SHARE => {
                c"concurrency partition share is outside [0, 1] or the shares sum past 1"
            }
            WEIR_ERR_CONCURRENCY_BORROW => {
                c"concurrency partition borrow cap is negative or above the largest limit"
            }
            WEIR_ERR_CONCURRENCY_PARTITION => c"concurrency limit has no such partition",
            WEIR_ERR_CONCURRENCY_PARTITION_EMPTY => c"concurrency partition has no call in flight",
            WEIR_ERR_LEASE_INTERVAL => c"lease interval_ns is under 1 us or not below ttl_ns",
            WEIR_ERR_LEASE_TTL => c"lease ttl_ns is outside [1 ms, 1 hour]",
            WEIR_ERR_LEASE_BURST => c"lease burst is outside 1..2^61",
            WEIR_ERR_LEASE_SHARE => c"lease share is NaN or outside (0, 1]",
            WEIR_ERR_LEASE_COST => c"lease cost is under 1 or over the lease's cap",
            WEIR_ERR_LEASE_GRANT => c"lease grant is under 0 or over the lease's cap",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_messages_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for status in ALL {
            assert_eq!(weir_status::from_code(*status as i32), Some(*status));
            assert!(seen.insert(status.text()), "{status:?} repeats a message");
        }
        assert_eq!(weir_status::from_code(-1), None);
        assert_eq!(weir_status::from_code(i32::MAX), None);
        assert_eq!(weir_status::from_code(CODES as i32), None);
        for code in -2..CODES as i32 + 64 {
            let named = ALL.iter().any(|status| *status as i32 == code);
            let found = weir_status::from_code(code);
            assert_eq!(found.is_some(), named, "code {code}");
            assert_eq!(found.map(|status| status as i32), named.then_some(code));
        }
        assert_eq!(weir_status::from_code(413), None, "413 is retired");
    }

    /// Every weir-core error's code names a status, so `weir_status::of`
    /// never falls back. A new variant fails to compile in its `code()`
    /// until it has a code; list it here too.
    #[test]
    fn every_core_error_code_names_a_status() {
        use weir_core::backoff::BackoffError as Bo;
        use weir_core::bloom::BloomError as Bl;
        use weir_core::breaker::{BreakerPolicyError as Br, BreakerTicketError as Bt};
        use weir_core::bucket::BucketError as Bu;
        use weir_core::budget::BudgetError as Bg;
        use weir_core::charge::ChargeError;
        use weir_core::concurrency::ConcurrencyError as Co;
        use weir_core::gcra::GcraError as Gc;
        use weir_core::keyed::KeyedError as Ke;
        use weir_core::lease::LeaseError as Le;
        use weir_core::limiter::{LimiterError as Li, RefundError as Re};
        use weir_core::partitioned::PartitionError as Pa;
        use weir_core::period::PeriodError as Pe;
        use weir_core::pool::{PoolMisuse as Pm, PoolPolicyError as Pp};
        use weir_core::rate::RateError as Ra;
        use weir_core::shedder::{Settled, ShedderPolicyError as Sh};
        use weir_core::sliding::SlidingError as Sl;
        use weir_core::window::WindowError as Wi;
        let windows = [Wi::Span, Wi::TooLarge, Wi::NoMemory];
        let policies = [
            Co::Limits,
            Co::QueueSize,
            Co::Smoothing,
            Co::Tolerance,
            Co::Window,
        ];
        let mut codes = vec![Settled.code(), ChargeError::TooMany.code()];
        codes.extend(windows.map(Wi::code));
        codes.extend(windows.map(|w| Br::Window(w).code()));
        codes.extend(windows.map(|w| Sh::Window(w).code()));
        codes.extend(policies.map(Co::code));
        codes.extend(policies.map(|p| Pa::Policy(p).code()));
        codes.extend(
            [
                Bo::NegativeBase,
                Bo::FactorNotFinite,
                Bo::FactorBelowOne,
                Bo::NegativeCap,
                Bo::NoAttempts,
                Bo::SpreadNotFinite,
                Bo::NegativeSpread,
                Bo::SpreadAboveOne,
            ]
            .map(Bo::code),
        );
        codes.extend(
            [
                Bl::Size,
                Bl::TooFewWords,
                Bl::Hashes,
                Bl::NoMemory,
                Bl::TooSmall,
                Bl::Foreign,
                Bl::Version,
                Bl::Kind,
                Bl::LineSize,
            ]
            .map(Bl::code),
        );
        codes.extend(
            [
                Br::K,
                Br::Floor,
                Br::Protection,
                Br::Probe,
                Br::Cap,
                Br::Rps,
                Br::Aggression,
            ]
            .map(Br::code),
        );
        codes.extend([Bt::Settled, Bt::Foreign].map(Bt::code));
        codes.extend([Bu::NotFinite, Bu::Negative, Bu::TooLarge].map(Bu::code));
        codes.extend(
            [
                Bg::MaxTokens,
                Bg::TokenRatio,
                Bg::Ttl,
                Bg::MinPerSecond,
                Bg::Percent,
            ]
            .map(Bg::code),
        );
        for (gcra, rate) in [
            (Gc::NotFinite, Ra::NotFinite),
            (Gc::Negative, Ra::Negative),
            (Gc::Zero, Ra::Zero),
            (Gc::Burst, Ra::Burst),
            (Gc::TooFast, Ra::TooFast),
            (Gc::TooSlow, Ra::TooSlow),
            (Gc::Invalid, Ra::Invalid),
        ] {
            codes.extend([gcra.code(), rate.code()]);
        }
        codes.extend(
            [
                Ke::Buckets,
                Ke::NoMemory,
                Ke::TooSmall,
                Ke::KindChange,
                Ke::TickChange,
            ]
            .map(Ke::code),
        );
        codes.extend(
            [
                Le::Interval,
                Le::Ttl,
                Le::Burst,
                Le::Share,
                Le::Cost,
                Le::Grant,
            ]
            .map(Le::code),
        );
        codes.extend(
            [
                Li::ZeroCapacity,
                Li::ZeroRefillAmount,
                Li::ZeroRefillInterval,
                Li::ZeroWindow,
                Li::ZeroCooldown,
                Li::InitialAboveCapacity,
                Li::BucketAnchorInFuture,
                Li::WindowAnchorInFuture,
                Li::CooldownArmedWithTokens,
                Li::CooldownDeadlineOverflow,
                Li::RateLimited,
                Li::InvalidAmount,
                Li::WrongVariant,
            ]
            .map(Li::code),
        );
        codes.extend([Re::Amount, Re::Future, Re::Expired, Re::Armed, Re::Full].map(Re::code));
        codes.extend([Pa::Count, Pa::Share, Pa::Borrow, Pa::Unknown, Pa::Empty].map(Pa::code));
        codes.extend([Pe::Zero, Pe::Negative].map(Pe::code));
        codes.extend(
            [
                Pp::Size,
                Pp::Idle,
                Pp::Keep,
                Pp::Life,
                Pp::Jitter,
                Pp::MinIdle,
                Pp::MaxMaking,
                Pp::NoMemory,
            ]
            .map(Pp::code),
        );
        codes.extend([Pm::Idle, Pm::NotLent, Pm::NoReservation, Pm::Known].map(Pm::code));
        codes.extend([Sh::Cpu, Sh::Latency, Sh::Beta, Sh::Floor, Sh::Cool].map(Sh::code));
        codes.extend([Sl::Quota, Sl::Window, Sl::TooLarge, Sl::NoMemory].map(Sl::code));
        for code in codes {
            let status = weir_status::from_code(code);
            assert!(
                status.is_some_and(|s| s != weir_status::WEIR_OK),
                "core code {code} names no error"
            );
            assert_eq!(weir_status::of(code) as i32, code);
        }
    }
}
