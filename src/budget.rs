//! C face of [`weir_core::budget`].

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{
    decide, free_handle, on, place_plain, plain_footprint, policy_or, read_counts, reconfigure,
    start_counting, Guarded, Handle,
};
use crate::lock::ShortLock;
#[cfg(feature = "std")]
use crate::region::{
    attach, lay_shared, plain_bytes, read_recoveries, region_footprint, weir_recoveries, Layout,
    Repair, Shareable, WEIR_REGION_BUDGET,
};
use crate::status::weir_status::{self, *};
use weir_core::budget::{Budget, BudgetError};

/// `weir_budget_policy.form`: gRPC's retry throttling (design A6), a token
/// count between `max_tokens` and zero.
pub const WEIR_BUDGET_TOKENS: i32 = 0;
/// `weir_budget_policy.form`: Finagle's RetryBudget, `percent` of the
/// requests of the last `ttl_ns` plus `min_per_s` retries a second.
pub const WEIR_BUDGET_PERCENT: i32 = 1;

/// The constants of a retry budget. Start from `weir_budget_policy_preset()`
/// and change what you need. Only the fields of the chosen `form` are read
/// and checked; the others are ignored. 40 bytes, aligned as an int64_t.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct weir_budget_policy {
    /// `WEIR_BUDGET_TOKENS` or `WEIR_BUDGET_PERCENT`; any other value is
    /// `WEIR_ERR_UNKNOWN_KIND`.
    pub form: i32,
    /// Tokens: the most tokens, and where the count starts; in 1..1000
    /// (A6's range).
    pub max_tokens: i32,
    /// Tokens: what each success gives back, rounded to the nearest
    /// thousandth (A6 allows three decimal places); at least 0.0005, finite.
    pub token_ratio: f64,
    /// Percent: how long a request's credit lives, about; in [1 s, 60 s]
    /// (Finagle's range). Counted in 10 slices of `ttl_ns / 10`.
    pub ttl_ns: i64,
    /// Percent: retries a second always allowed, on top of `percent`; zero
    /// or more.
    pub min_per_s: i32,
    /// Always 0 (`WEIR_ERR_RESERVED` otherwise).
    pub reserved: i32,
    /// Percent: the share of requests that may be retried (0.2 is a fifth),
    /// in [0, 1000].
    pub percent: f64,
}

assert_eq_size!(weir_budget_policy, [u8; 40]);
const_assert_eq!(core::mem::align_of::<weir_budget_policy>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_budget_policy, form), 0);
const_assert_eq!(core::mem::offset_of!(weir_budget_policy, max_tokens), 4);
const_assert_eq!(core::mem::offset_of!(weir_budget_policy, token_ratio), 8);
const_assert_eq!(core::mem::offset_of!(weir_budget_policy, ttl_ns), 16);
const_assert_eq!(core::mem::offset_of!(weir_budget_policy, min_per_s), 24);
const_assert_eq!(core::mem::offset_of!(weir_budget_policy, reserved), 28);
const_assert_eq!(core::mem::offset_of!(weir_budget_policy, percent), 32);

impl From<BudgetError> for weir_status {
    fn from(error: BudgetError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// The preset: Finagle's default budget (percent form, 20 % of the requests
/// of the last 10 s plus 10 retries a second), with A6's example constants
/// (10 tokens, 0.1 a success) filled in for the tokens form.
#[no_mangle]
pub extern "C" fn weir_budget_policy_preset() -> weir_budget_policy {
    weir_budget_policy {
        form: WEIR_BUDGET_PERCENT,
        max_tokens: 10,
        token_ratio: 0.1,
        ttl_ns: 10_000_000_000,
        min_per_s: 10,
        reserved: 0,
        percent: 0.2,
    }
}

/// A retry budget: retries held to a share of real traffic, next to (not
/// instead of) backoff.
///
/// Tokens form (gRPC A6): the count starts at `max_tokens`;
/// `weir_budget_deposit` (a success) adds `token_ratio`, up to
/// `max_tokens`; `weir_budget_withdraw` (a failure) takes 1, never below 0,
/// and answers whether the count is still above `max_tokens / 2`. The count
/// is exact in thousandths. Time is ignored.
///
/// Percent form (Finagle): `weir_budget_deposit` (a request that is not a
/// retry) adds 1000; `weir_budget_withdraw` takes `cost = ⌊1000 /
/// percent⌋` (1 when `percent` is 0) if alive credit + reserve ≥ cost,
/// where reserve = `min_per_s × ⌊ttl_ns / 1 s⌋ × cost`. Credit and
/// withdrawals are counted in 10 slices of `ttl_ns / 10` from the budget's
/// making and live until the slice ten after their own begins: between 0.9
/// and 1.0 × `ttl_ns`. Bound: the retries taken in the live slices (at
/// least 0.9 × `ttl_ns`, under `ttl_ns`) are at most deposits there × 1000 /
/// cost + `min_per_s × ⌊ttl_ns / 1 s⌋`; 1000 / cost is `percent` when 1000 /
/// percent is whole, and a little above otherwise (Finagle's rounding).
///
/// A `now` earlier than one seen is no time passing. Safe to share between
/// threads: each call takes a short per-handle lock. Heap per handle: about
/// 270 bytes. Made by `weir_budget_new`, freed by `weir_budget_free`.
///
/// In the firmware build (docs/firmware.md) a budget is placed only: on a
/// 32-bit core 256 bytes. Its updates hold the build's critical section
/// (interrupts masked, with `single-core`); the longest measured under QEMU: a
/// call of 723 instructions on a Cortex-M4F, a section of 1560 on a Cortex-M0.
pub struct weir_budget(Guarded<ShortLock<Budget>>);

impl Handle for weir_budget {
    type State = ShortLock<Budget>;
    fn guarded(&self) -> &Guarded<Self::State> {
        &self.0
    }

    #[cfg(feature = "std")]
    unsafe fn recover(state: &Self::State) -> bool {
        // SAFETY: by `recover`'s contract the caller holds the region's
        // lock.
        unsafe { crate::region::repair(state) }
    }
}

/// Makes a budget at `now` and writes it to `*out`; the percent form's
/// slices start at `now`. `policy` NULL means the preset. Checks, in order:
/// `WEIR_ERR_MISALIGNED` (policy), `WEIR_ERR_RESERVED`,
/// `WEIR_ERR_UNKNOWN_KIND` (form), then the chosen form's fields:
/// `WEIR_ERR_BUDGET_MAX_TOKENS`, `WEIR_ERR_BUDGET_TOKEN_RATIO`, or
/// `WEIR_ERR_BUDGET_TTL`, `WEIR_ERR_BUDGET_MIN_PER_S`,
/// `WEIR_ERR_BUDGET_PERCENT`. `WEIR_ERR_NULL` if `out` is NULL; `*out` is
/// written only on success.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_budget_new(
    policy: *const weir_budget_policy,
    now: i64,
    out: *mut *mut weir_budget,
) -> weir_status {
    new_handle(out, || make(policy, now))
}

/// The handle `weir_budget_new` and `weir_budget_init_in` make.
fn make(policy: *const weir_budget_policy, now: i64) -> Result<weir_budget, weir_status> {
    Ok(weir_budget(Guarded::new(ShortLock::new(checked(
        policy, now,
    )?))))
}

/// The budget `policy` (NULL: the preset) makes at `now`, checked as
/// `weir_budget_new` checks it.
fn checked(policy: *const weir_budget_policy, now: i64) -> Result<Budget, weir_status> {
    let p = policy_or(policy, weir_budget_policy_preset())?;
    if p.reserved != 0 {
        return Err(WEIR_ERR_RESERVED);
    }
    Ok(match p.form {
        WEIR_BUDGET_TOKENS => Budget::tokens(p.max_tokens, p.token_ratio)?,
        WEIR_BUDGET_PERCENT => Budget::percent(p.ttl_ns, p.min_per_s, p.percent, now)?,
        _ => return Err(WEIR_ERR_UNKNOWN_KIND),
    })
}

/// The bytes and the alignment a placed budget needs (`weir_budget_init_in`),
/// written to `*bytes` and `*align`: its handle and nothing more.
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align`
/// pointer; nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_budget_footprint(bytes: *mut usize, align: *mut usize) -> weir_status {
    plain_footprint::<weir_budget>(bytes, align)
}

/// Lays a budget in memory the caller owns (a static array, a field of its
/// own struct) and writes it to `*out`: the budget `weir_budget_new` makes from `policy` (NULL: the preset) at `now`,
/// taken by every `weir_budget_*` call, without a heap. `mem` holds `len`
/// bytes, at least the footprint `weir_budget_footprint` answers, at a
/// multiple of its alignment. The memory stays the caller's:
/// `weir_budget_free` on a placed budget does nothing, and the memory may be
/// reused once no call uses it. Checked in this order, nothing written on
/// an error: `out` (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), the arguments
/// (`WEIR_ERR_RESERVED`, `WEIR_ERR_UNKNOWN_KIND`,
/// `WEIR_ERR_BUDGET_MAX_TOKENS`, `WEIR_ERR_BUDGET_TOKEN_RATIO`,
/// `WEIR_ERR_BUDGET_TTL`, `WEIR_ERR_BUDGET_MIN_PER_S`,
/// `WEIR_ERR_BUDGET_PERCENT`, and `WEIR_ERR_MISALIGNED` for a misaligned
/// policy, as `weir_budget_new` answers them), then `mem` NULL
/// (`WEIR_ERR_NULL`), `mem` misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len`
/// below the footprint (`WEIR_ERR_PLACED_TOO_SMALL`).
#[no_mangle]
pub extern "C" fn weir_budget_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    policy: *const weir_budget_policy,
    now: i64,
    out: *mut *mut weir_budget,
) -> weir_status {
    place_plain(mem, len, out, || make(policy, now))
}

#[cfg(feature = "std")]
impl Repair for Budget {
    /// Keeps the state as the dead call left it: every field of a half-made deposit or withdrawal is a value one could leave, at most that one call's token counted or not.
    fn repair(&mut self) -> bool {
        true
    }
}

#[cfg(feature = "std")]
impl Shareable for weir_budget {
    const KIND: u32 = WEIR_REGION_BUDGET;
    const LOCKED: bool = true;

    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        if slots != 0 {
            return Err(WEIR_ERR_INVALID_ARGUMENT);
        }
        Ok(Layout {
            bytes: core::mem::size_of::<weir_budget>(),
            align: core::mem::align_of::<weir_budget>(),
            runs: [0, 0],
        })
    }

    fn slots(&self) -> usize {
        0
    }

    fn fits(&self, _: &Layout, _: usize) -> bool {
        true
    }
}

/// The bytes and the alignment a shared retry budget needs
/// (`weir_budget_init_shared`), written to `*bytes` and `*align`: a
/// 256-byte `weir_region_header` and the region's 64-byte lock, then the placed retry budget
/// (`weir_budget_footprint`); 64-aligned. Checked and answered as
/// `weir_budget_footprint`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_budget_shared_footprint(
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    crate::guard::guard_status(|| {
        let layout = weir_budget::layout_for(0)?;
        crate::guard::write_footprint(region_footprint(&layout)?, bytes, align)
    })
}

/// Lays a retry budget that processes share in `mem`, memory the caller maps
/// `MAP_SHARED`, and writes it to `*out` for this process: a
/// `weir_region_header` (its kind WEIR_REGION_BUDGET; its policy the `weir_budget_policy`),
/// then the retry budget `weir_budget_init_in` would lay, its lock a robust,
/// process-shared mutex. Another process gets its own `weir_budget *` from
/// `weir_budget_attach`; every `weir_budget_*` call then works on the one
/// retry budget. A process killed holding the lock leaves the retry budget as its
/// call left it (at most that call's one deposit or withdrawal counted or not); the next call answers as a recovered call
/// does (see `weir_breaker_init_shared`) and `weir_budget_recoveries`
/// counts it. Lay it once, before any process attaches. Checked as
/// `weir_breaker_init_shared` checks its region (`WEIR_ERR_NULL`,
/// `WEIR_ERR_PLACED_MISALIGNED`, `WEIR_ERR_REGION_UNSUPPORTED`,
/// `WEIR_ERR_PLACED_TOO_SMALL`), the arguments as `weir_budget_init_in`
/// checks them.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_budget_init_shared(
    mem: *mut core::ffi::c_void,
    len: usize,
    policy: *const weir_budget_policy,
    now: i64,
    out: *mut *mut weir_budget,
) -> weir_status {
    let budget_policy = match policy_or(policy, weir_budget_policy_preset()) {
        Ok(p) => p,
        Err(status) => return status,
    };
    let policy = plain_bytes(&budget_policy).to_vec();
    lay_shared(mem, len, out, &policy, |at, room, placed| {
        weir_budget_init_in(at, room, &budget_policy, now, placed)
    })
}

/// Checks the region at `mem` that `weir_budget_init_shared` laid and
/// writes its retry budget, for this process, to `*out`: refused with the
/// statuses `weir_breaker_attach` lists, nothing written.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_budget_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_budget,
) -> weir_status {
    attach(mem, len, out)
}

/// Writes what a shared retry budget's lock has recovered from (see
/// `weir_budget_init_shared`) to `*out`; all zero for one that is not
/// shared. `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`, `WEIR_ERR_POISONED`. A
/// reading: it changes nothing.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_budget_recoveries(
    handle: *const weir_budget,
    out: *mut weir_recoveries,
) -> weir_status {
    crate::guard::guard_status(|| read_recoveries(handle, out))
}

/// Gives a budget a new policy in place at `now` (NULL: the preset),
/// checked as `weir_budget_new` checks it. What it keeps:
///
/// - Tokens form to tokens form: the token count, held to the new
///   `max_tokens`. From then on `weir_budget_withdraw` answers true only
///   where a budget made with the new policy (and so full) would.
/// - Percent form to percent form: the live credit (what had aged out under
///   the old policy stays out), each deposit and
///   withdrawal keeping the worth in retries its own policy gave it (a
///   slice's credit is rescaled by `cost' / cost` and rounded down, against
///   retrying), laid on the new policy's slices (`ttl_ns' / 10`, on the same
///   grid from the budget's making): a slice holding more deposits than
///   withdrawals goes into the new slice where it began, one holding more
///   withdrawals into the new slice where it ended (never past the slice
///   `now` falls in, itself never earlier than the latest slice the budget
///   has seen), and what lands ten or more new slices back has aged out. So
///   each deposit ages out no later, and each withdrawal no sooner, than
///   under the new policy had it been in force when they were made (slices
///   of the same width stay as they are). The reserve is the new policy's.
///   Bound: the retries alive in the live slices are at most the deposits
///   alive there, each × 1000 / its own policy's cost, plus `min_per_s' ×
///   ⌊ttl_ns' / 1 s⌋`.
/// - A change of form keeps nothing (a token count means nothing as credit,
///   nor credit as a count): the budget starts as `weir_budget_new` would
///   make it at `now`.
///
/// Safe beside the budget's other calls (not `weir_budget_free`): it takes
/// the budget's own lock, as they do, so a call racing it is judged by the
/// old policy or the new one, wholly. A shared budget
/// (`weir_budget_init_shared`) keeps its region's policy, laid once for
/// every process: `WEIR_ERR_REGION_UNSUPPORTED`. Checked in this order,
/// nothing changed on an error: `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED`
/// for a bad `budget`, `WEIR_ERR_REGION_UNSUPPORTED`, `WEIR_ERR_POISONED`,
/// then the policy's statuses as `weir_budget_new` answers them. It counts
/// nothing.
#[no_mangle]
pub extern "C" fn weir_budget_reconfigure(
    budget: *mut weir_budget,
    policy: *const weir_budget_policy,
    now: i64,
) -> weir_status {
    reconfigure(budget, |state| {
        let to = checked(policy, now)?;
        state.lock().reconfigure(to, now);
        Ok(())
    })
}

/// Frees a budget. NULL is accepted and ignored, and so is a placed one
/// (`weir_budget_init_in`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_budget_free(budget: *mut weir_budget) {
    free_handle(budget)
}

/// Counts one request as traffic at `now`. Tokens form: call it for each
/// attempt that succeeded (`token_ratio` back). Percent form: call it for
/// each request sent that is not a retry, whatever its outcome. Does
/// nothing for a NULL budget.
#[no_mangle]
pub extern "C" fn weir_budget_deposit(budget: *const weir_budget, now: i64) {
    on(budget, (), |state| state.lock().deposit(now))
}

/// Asks for one retry at `now`: true means send it. Tokens form: call it on
/// every failed attempt, even one you would not retry; the failure takes its
/// token whatever the answer (A6 counts failures, not retries). Percent
/// form: true takes the retry's cost, false changes nothing. False for a
/// NULL budget.
#[no_mangle]
pub extern "C" fn weir_budget_withdraw(budget: *const weir_budget, now: i64) -> bool {
    let counted = move |_: &_, &sent: &bool| Tally::of(sent);
    decide(budget, false, counted, move |state| {
        state.lock().withdraw(now)
    })
}

/// How many `weir_budget_withdraw` calls in a row would answer true at
/// `now`, with no deposit between. A reading: changes nothing. 0 for a NULL
/// budget.
#[no_mangle]
pub extern "C" fn weir_budget_left(budget: *const weir_budget, now: i64) -> i64 {
    on(budget, 0, |state| state.lock().left(now))
}

/// The raw count at `now`. Tokens form: the token count in thousandths
/// (10 tokens is 10000), in [0, 1000 × max_tokens]. Percent form: alive
/// credit − alive withdrawals + reserve, in Finagle's units (1000 a
/// request). A reading: changes nothing. 0 for a NULL budget.
#[no_mangle]
pub extern "C" fn weir_budget_tokens(budget: *const weir_budget, now: i64) -> i64 {
    on(budget, 0, |state| state.lock().tokens_at(now))
}

/// Turns counting on for a retry budget: from this call on,
/// `weir_budget_read_counts` reports what it decided. Call it right after
/// `weir_budget_new` to count everything since the handle was made; a second
/// call changes nothing. Until then the handle costs what it did before
/// counting existed (see `weir_counts` for what counting costs).
/// `WEIR_ERR_NULL` for a NULL handle, `WEIR_ERR_MISALIGNED` for one no handle
/// can be at, `WEIR_ERR_POISONED` for a poisoned one.
#[no_mangle]
pub extern "C" fn weir_budget_start_counting(budget: *const weir_budget) -> weir_status {
    start_counting(budget)
}

/// Writes to `*out` what a retry budget decided since
/// `weir_budget_start_counting`. A reading: it changes nothing. `admitted`:
/// withdrawals answered true (retries sent); `refused`: withdrawals answered
/// false; `errors`: 0 (deposits are not counted); `units`: equal to `admitted`.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_budget_read_counts(
    budget: *const weir_budget,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(budget, out)
}
