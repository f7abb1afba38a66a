//! C face of [`weir_core::lease`].

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{decide_status, read_counts, start_counting};
use crate::guard::{
    free_handle, on, place_plain, plain_footprint, policy_or, reconfigure, status_on, usable,
    write_out, Guarded, Handle,
};
use crate::lock::ShortLock;
use crate::status::weir_status::{self, *};
use weir_core::lease::{Lease, LeaseError, LeasePolicy, LeaseStats, LeaseTake};
use weir_core::time::NEVER;

/// `weir_lease_answer.verdict`: admitted from units held.
pub const WEIR_LEASE_GO: i32 = 0;
/// `weir_lease_answer.verdict`: not decided; ask the store for `ask` units
/// now, record its answer with `weir_lease_grant`, and take again.
pub const WEIR_LEASE_ASK: i32 = 1;
/// `weir_lease_answer.verdict`: refused; try again after `retry_after_ns`.
pub const WEIR_LEASE_REFUSE: i32 = 2;

/// The constants of a lease. Start from `weir_lease_policy_preset()` and
/// change what you need. 32 bytes, aligned to 8.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct weir_lease_policy {
    /// How often a steady client should ask the store, in ns: at least
    /// 1 µs, below `ttl_ns` (`WEIR_ERR_LEASE_INTERVAL`).
    pub interval_ns: i64,
    /// How long a grant may be spent after its ask was sent, in ns (the
    /// `ttl_ms` of `WEIR.LEASE`): 1 ms to an hour (`WEIR_ERR_LEASE_TTL`).
    pub ttl_ns: i64,
    /// The shared limit's burst, in units: 1 to 2^61 − 1
    /// (`WEIR_ERR_LEASE_BURST`).
    pub burst: i64,
    /// The share of `burst` one client may hold and ask for together, in
    /// (0, 1] (`WEIR_ERR_LEASE_SHARE`): its cap is max(1, ⌊share × burst⌋).
    pub share: f64,
}

assert_eq_size!(weir_lease_policy, [u8; 32]);
const_assert_eq!(core::mem::align_of::<weir_lease_policy>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_lease_policy, interval_ns), 0);
const_assert_eq!(core::mem::offset_of!(weir_lease_policy, ttl_ns), 8);
const_assert_eq!(core::mem::offset_of!(weir_lease_policy, burst), 16);
const_assert_eq!(core::mem::offset_of!(weir_lease_policy, share), 24);

/// What `weir_lease_take` answers. 24 bytes, aligned to 8.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_lease_answer {
    /// `WEIR_LEASE_GO`, `WEIR_LEASE_ASK` or `WEIR_LEASE_REFUSE`.
    pub verdict: i32,
    /// Always 0.
    pub reserved: i32,
    /// Units to ask the store for now; 0 for none. With `WEIR_LEASE_GO`
    /// above 0: ask ahead, without holding the request (units run low).
    /// With `WEIR_LEASE_ASK`: at least the cost.
    pub ask: i64,
    /// With `WEIR_LEASE_REFUSE`: ns until a take may find units, at least
    /// 1 (the rest of an ask's expected round trip, or when the store said
    /// it holds a unit again); 0 otherwise.
    pub retry_after_ns: i64,
}

assert_eq_size!(weir_lease_answer, [u8; 24]);
const_assert_eq!(core::mem::align_of::<weir_lease_answer>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_lease_answer, verdict), 0);
const_assert_eq!(core::mem::offset_of!(weir_lease_answer, reserved), 4);
const_assert_eq!(core::mem::offset_of!(weir_lease_answer, ask), 8);
const_assert_eq!(core::mem::offset_of!(weir_lease_answer, retry_after_ns), 16);

/// What a lease has done and holds; filled by `weir_lease_read_stats`.
/// 64 bytes, aligned to 8.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_lease_stats {
    /// Asks answered (`WEIR_LEASE_GO` with an ask, and `WEIR_LEASE_ASK`):
    /// the store commands this client sends, refunds aside.
    pub asks: u64,
    /// Units granted in all.
    pub granted: u64,
    /// Units admitted.
    pub spent: u64,
    /// Units that expired unspent.
    pub expired: u64,
    /// Units handed back by `weir_lease_release`.
    pub released: u64,
    /// Units held and live now.
    pub held: u64,
    /// The measured demand, in thousandths of a unit a second.
    pub rate_milli: u64,
    /// The measured round trip in ns; 0 before one was measured.
    pub rtt_ns: i64,
}

assert_eq_size!(weir_lease_stats, [u8; 64]);
const_assert_eq!(core::mem::align_of::<weir_lease_stats>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_lease_stats, asks), 0);
const_assert_eq!(core::mem::offset_of!(weir_lease_stats, rtt_ns), 56);

impl From<LeaseStats> for weir_lease_stats {
    fn from(s: LeaseStats) -> weir_lease_stats {
        weir_lease_stats {
            asks: s.asks,
            granted: s.granted,
            spent: s.spent,
            expired: s.expired,
            released: s.released,
            held: s.held,
            rate_milli: s.rate_milli,
            rtt_ns: s.rtt_ns,
        }
    }
}

impl From<LeaseError> for weir_status {
    fn from(error: LeaseError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// The preset: ask about every 100 ms, leases of 1 s, a burst of 100, a
/// quarter of it at most on one client.
#[no_mangle]
pub extern "C" fn weir_lease_policy_preset() -> weir_lease_policy {
    let p = LeasePolicy::default();
    weir_lease_policy {
        interval_ns: p.interval_ns,
        ttl_ns: p.ttl_ns,
        burst: p.burst,
        share: p.share,
    }
}

/// One client's account of units leased from a limit the fleet shares in a
/// store (the Redis module's `WEIR.LEASE key rate burst want ttl_ms`): it
/// spends them locally, says when to ask for more and how many, and what
/// to give back (`WEIR.REFUND key n`). No I/O: the caller sends the asks.
///
/// Sizing: the lease measures the demand (the cost of every take) and the
/// round trip (from the take that answered an ask to the grant that
/// answered it). An ask tops the units held up to what the demand spends
/// in one `interval_ns` plus two round trips, so a steady client asks about
/// once per `interval_ns`, and asks ahead once the units held would last
/// under two round trips (if the demand spends at least two units in a
/// lease's `ttl_ns`; else it asks when it runs out). The units held plus the units asked never exceed
/// its cap, max(1, ⌊share × burst⌋).
///
/// Bounds. Every admitted unit was granted (charged in the store) first and
/// is admitted once, so the fleet admits no more than the store granted:
/// for a bucket of `rate` and `burst`, at most `burst + rate × t` over `t`
/// from the key's first use, and over any window of length `w` at most
/// `burst + rate × (w + ttl)` (a unit granted before the window may be
/// spent in it, never later than `ttl` after its ask was sent). The cost
/// the other way: while one client is refused, at most `(clients − 1) ×
/// cap` units sit granted and unspent on the others; units that expire
/// unspent are lost to the fleet until the store's bucket refills.
///
/// A `now` earlier than one seen is no time passing. Takes a short
/// per-handle lock and is safe to use from many threads at once; 280
/// bytes of heap per handle. Made by `weir_lease_new` (or laid in the
/// caller's memory by `weir_lease_init_in`), freed by `weir_lease_free`.
///
/// In the firmware build (docs/firmware.md) a lease is placed only: on a
/// 32-bit core 264 bytes. Its calls hold the build's critical section
/// (interrupts masked, with `single-core`); the longest measured under QEMU:
/// a call of 3909 instructions on a Cortex-M4F, a section of 7636 on a
/// Cortex-M0.
pub struct weir_lease(Guarded<ShortLock<Lease>>);

impl Handle for weir_lease {
    type State = ShortLock<Lease>;
    fn guarded(&self) -> &Guarded<Self::State> {
        &self.0
    }
}

/// Makes a lease holding nothing at `now` and writes it to `*out`. `policy`
/// NULL means the preset. Checks, in order: `WEIR_ERR_MISALIGNED` (policy),
/// `WEIR_ERR_LEASE_TTL`, `WEIR_ERR_LEASE_INTERVAL`, `WEIR_ERR_LEASE_BURST`,
/// `WEIR_ERR_LEASE_SHARE`. `WEIR_ERR_NULL` if `out` is NULL; `*out` is
/// written only on success.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_lease_new(
    policy: *const weir_lease_policy,
    now: i64,
    out: *mut *mut weir_lease,
) -> weir_status {
    new_handle(out, || make(policy, now))
}

/// The handle `weir_lease_new` and `weir_lease_init_in` make.
fn make(policy: *const weir_lease_policy, now: i64) -> Result<weir_lease, weir_status> {
    let p = policy_or(policy, weir_lease_policy_preset())?;
    let lease = Lease::new(&core_policy(p), now)?;
    Ok(weir_lease(Guarded::new(ShortLock::new(lease))))
}

/// The core's policy for the C one.
fn core_policy(p: weir_lease_policy) -> LeasePolicy {
    LeasePolicy {
        interval_ns: p.interval_ns,
        ttl_ns: p.ttl_ns,
        burst: p.burst,
        share: p.share,
    }
}

/// The bytes and the alignment a placed lease needs (`weir_lease_init_in`),
/// written to `*bytes` and `*align`: its handle and nothing more, whatever
/// the policy. `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bytes`
/// or `align` pointer; nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_lease_footprint(bytes: *mut usize, align: *mut usize) -> weir_status {
    plain_footprint::<weir_lease>(bytes, align)
}

/// Lays a lease in memory the caller owns (a static array, a field of its
/// own struct) and writes it to `*out`: the lease `weir_lease_new` makes
/// from `policy` (NULL: the preset) at `now`, holding nothing, taken by
/// every `weir_lease_*` call, without a heap. `mem` holds `len` bytes, at
/// least the footprint `weir_lease_footprint` answers, at a multiple of its
/// alignment. The memory stays the caller's: `weir_lease_free` on a placed
/// lease does nothing, and the memory may be reused once no call uses it
/// (read `weir_lease_release` first: its units are the store's). Checked in
/// this order, nothing written on an error: `out` (`WEIR_ERR_NULL`,
/// `WEIR_ERR_MISALIGNED`), the arguments (`WEIR_ERR_MISALIGNED` for a
/// misaligned policy, `WEIR_ERR_LEASE_TTL`, `WEIR_ERR_LEASE_INTERVAL`,
/// `WEIR_ERR_LEASE_BURST`, `WEIR_ERR_LEASE_SHARE`, as `weir_lease_new`
/// answers them), then `mem` NULL (`WEIR_ERR_NULL`), `mem` misaligned
/// (`WEIR_ERR_PLACED_MISALIGNED`), `len` below the footprint
/// (`WEIR_ERR_PLACED_TOO_SMALL`).
#[no_mangle]
pub extern "C" fn weir_lease_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    policy: *const weir_lease_policy,
    now: i64,
    out: *mut *mut weir_lease,
) -> weir_status {
    place_plain(mem, len, out, || make(policy, now))
}

/// Frees a lease. NULL is accepted and ignored, and so is a placed one
/// (`weir_lease_init_in`): its memory is the caller's. Its unspent units
/// are not given back: read them first with `weir_lease_release`.
#[no_mangle]
pub extern "C" fn weir_lease_free(lease: *mut weir_lease) {
    free_handle(lease)
}

/// Spends `cost` units at `now` if they are held (the earliest to expire
/// first) and writes the answer to `*out`: `WEIR_LEASE_GO` (admitted;
/// `ask` above 0 asks ahead), `WEIR_LEASE_ASK` (send an ask for `ask`
/// units, grant its answer, take again) or `WEIR_LEASE_REFUSE`. Units whose
/// lease ended are dropped first. `WEIR_ERR_NULL` for a NULL lease or
/// `out`, `WEIR_ERR_MISALIGNED` for a misaligned `out`,
/// `WEIR_ERR_LEASE_COST` for a cost under 1 or over the cap (it could never
/// go); an error changes nothing.
#[no_mangle]
pub extern "C" fn weir_lease_take(
    lease: *const weir_lease,
    now: i64,
    cost: i64,
    out: *mut weir_lease_answer,
) -> weir_status {
    // A counting lease counts a go as admitted (its cost in units), a
    // refusal as refused, an ask as nothing (the call comes back once the
    // store answers) and an error status as an error.
    let decided = core::cell::Cell::new(Tally::Nothing);
    let counted = |status| match status {
        WEIR_OK => decided.get(),
        _ => Tally::Error,
    };
    decide_status(lease, counted, |lease| {
        usable(out)?;
        let taken = lease.lock().take(now, cost)?;
        decided.set(match taken {
            LeaseTake::Go { .. } => Tally::Admitted(cost as f64),
            LeaseTake::Ask { .. } => Tally::Nothing,
            LeaseTake::Refuse { .. } => Tally::Refused,
        });
        let answer = match taken {
            LeaseTake::Go { ask } => weir_lease_answer {
                verdict: WEIR_LEASE_GO,
                ask,
                ..Default::default()
            },
            LeaseTake::Ask { ask } => weir_lease_answer {
                verdict: WEIR_LEASE_ASK,
                ask,
                ..Default::default()
            },
            LeaseTake::Refuse { retry_after } => weir_lease_answer {
                verdict: WEIR_LEASE_REFUSE,
                retry_after_ns: retry_after,
                ..Default::default()
            },
        };
        write_out(out, answer)
    })
}

/// Turns counting on for a lease: from this call on, `weir_lease_read_counts`
/// reports what it decided. Call it right after `weir_lease_new` to count
/// everything since the handle was made; a second call changes nothing. Until
/// then the handle costs what it did before counting existed (see `weir_counts`
/// for what counting costs). `WEIR_ERR_NULL` for a NULL handle,
/// `WEIR_ERR_MISALIGNED` for one no handle can be at, `WEIR_ERR_POISONED` for a
/// poisoned one.
#[no_mangle]
pub extern "C" fn weir_lease_start_counting(lease: *const weir_lease) -> weir_status {
    start_counting(lease)
}

/// Writes to `*out` what a lease decided since `weir_lease_start_counting`. A
/// reading: it changes nothing. `admitted`: takes answered `WEIR_LEASE_GO`;
/// `refused`: takes answered `WEIR_LEASE_REFUSE`; `errors`: takes that
/// answered an error status; `units`: the admitted takes' costs. A take
/// answered `WEIR_LEASE_ASK` counts as nothing: the call comes back once the
/// store has answered. What the lease holds and asked is in
/// `weir_lease_read_stats`.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_lease_read_counts(
    lease: *const weir_lease,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(lease, out)
}

/// Records the store's answer to an ask, at `now`: `granted` units that may
/// be spent before `until` (when the ask was sent, plus the lease's
/// length: a lease then ends no later than the store's), and `next`, the
/// instant before which the store holds no more (the reply's third item
/// added to `now`; `now` when it holds some). A failed ask is a grant of 0
/// with `next` when to try again. Ends the travelling ask and measures the
/// round trip. A grant short of the ask (the store ran dry) holds the next
/// ask back by the unanswered share of one interval (an answer of 0 out of
/// `n`: a whole interval), so clients sharing a drained limit ask about
/// once an interval each rather than once per unit it refills. The cap holds while grants answer this lease's asks (a store
/// grants at most what was asked); a grant that answers none is kept all
/// the same (its units were charged). `WEIR_ERR_NULL` for a NULL lease,
/// `WEIR_ERR_LEASE_GRANT` for `granted` under 0 or over the cap (after
/// `weir_lease_reconfigure`, over the largest cap the lease has had, so
/// that an ask sent before a lower cap is still answered in full); an
/// error changes nothing.
#[no_mangle]
pub extern "C" fn weir_lease_grant(
    lease: *const weir_lease,
    now: i64,
    granted: i64,
    until: i64,
    next: i64,
) -> weir_status {
    status_on(lease, |lease| {
        lease.lock().grant(now, granted, until, next)?;
        Ok(())
    })
}

/// Gives a lease a new `policy` (NULL: the preset) in place, under its own
/// lock, so a call racing it on another thread sees the old policy or the
/// new one, wholly. Its interval, ttl and cap count from the next call.
///
/// What a reconfiguration keeps, whatever the policy: the units held, each
/// until the instant it was granted until (they were charged in the store,
/// so they stay spendable to the end of their own grant, above a lower cap
/// too: they are spent first as usual, and no ask goes until the units
/// held and asked are under the new cap); the ask in flight, its size and
/// when it was sent (taken as lost once unanswered for a whole new ttl; a
/// grant answering it is accepted in full, see `weir_lease_grant`); the
/// measured demand and round trip; when the store said it holds units
/// again; the clock, the stats and the counts. A take's cost must be
/// within the new cap (`WEIR_ERR_LEASE_COST`).
///
/// The bounds across the change: every unit admitted was still granted by
/// the store first and spent once, so the fleet's admits stay within the
/// store's limit, and over any window of length `w` within
/// `burst + rate × (w + ttl)` with the longer of the two ttls (a grant
/// made before the change lives its own length).
///
/// Checks, in order: `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad
/// `lease`, `WEIR_ERR_POISONED` for a poisoned one, `WEIR_ERR_MISALIGNED`
/// for a misaligned `policy`, then `WEIR_ERR_LEASE_TTL`,
/// `WEIR_ERR_LEASE_INTERVAL`, `WEIR_ERR_LEASE_BURST`,
/// `WEIR_ERR_LEASE_SHARE` as `weir_lease_new` answers them; an error
/// changes nothing. It counts nothing.
#[no_mangle]
pub extern "C" fn weir_lease_reconfigure(
    lease: *const weir_lease,
    policy: *const weir_lease_policy,
) -> weir_status {
    reconfigure(lease, |lease| {
        let policy = core_policy(policy_or(policy, weir_lease_policy_preset())?);
        lease.lock().reconfigure(&policy)?;
        Ok(())
    })
}

/// The units held and live at `now`: what to give back with the store's
/// refund if the client stopped now. A pure reading; 0 for a NULL lease.
#[no_mangle]
pub extern "C" fn weir_lease_unspent(lease: *const weir_lease, now: i64) -> i64 {
    on(lease, 0, |lease| lease.lock().unspent(now))
}

/// Drops every unit held at `now` and answers how many were live: refund
/// them to the store (`WEIR.REFUND key n`). Later takes find none held. 0
/// for a NULL lease.
#[no_mangle]
pub extern "C" fn weir_lease_release(lease: *const weir_lease, now: i64) -> i64 {
    on(lease, 0, |lease| lease.lock().release(now))
}

/// When the earliest units held expire; `INT64_MAX` when none are held and
/// for a NULL lease. A pure reading.
#[no_mangle]
pub extern "C" fn weir_lease_expires(lease: *const weir_lease, now: i64) -> i64 {
    on(lease, NEVER, |lease| lease.lock().expires(now))
}

/// The most units this lease holds and asks for together:
/// max(1, ⌊share × burst⌋). 0 for a NULL lease.
#[no_mangle]
pub extern "C" fn weir_lease_cap(lease: *const weir_lease) -> i64 {
    on(lease, 0, |lease| lease.lock().cap())
}

/// Writes what the lease has done and holds at `now` to `*out`. A pure
/// reading. `WEIR_ERR_NULL` if `lease` or `out` is NULL,
/// `WEIR_ERR_MISALIGNED` if `out` is misaligned; `*out` is written only on
/// success.
#[no_mangle]
pub extern "C" fn weir_lease_read_stats(
    lease: *const weir_lease,
    now: i64,
    out: *mut weir_lease_stats,
) -> weir_status {
    status_on(lease, |lease| {
        let stats = lease.lock().stats(now);
        write_out(out, stats.into())
    })
}

#[cfg(all(test, target_pointer_width = "64", target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_documented_handle_size_is_right() {
        assert_eq!(core::mem::size_of::<weir_lease>(), 280);
    }

    #[test]
    fn a_take_with_a_null_out_changes_nothing() {
        let mut lease = core::ptr::null_mut();
        assert_eq!(weir_lease_new(core::ptr::null(), 0, &mut lease), WEIR_OK);
        assert_eq!(
            weir_lease_take(lease, 0, 1, core::ptr::null_mut()),
            WEIR_ERR_NULL
        );
        let mut stats = weir_lease_stats::default();
        assert_eq!(weir_lease_read_stats(lease, 0, &mut stats), WEIR_OK);
        assert_eq!(stats.asks, 0);
        weir_lease_free(lease);
    }
}
