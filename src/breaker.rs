//! C face of [`weir_core::breaker`].

use core::sync::atomic::AtomicU32;

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{decide, decide_status, read_counts, start_counting};
use crate::guard::{
    free_handle, on, place_handle, placement, policy_or, reconfigure, status_on, usable, value_mut,
    write_footprint, write_out, Guarded, Handle,
};
use crate::lock::ShortLock;
#[cfg(feature = "std")]
use crate::region::{
    attach, lay_shared, plain_bytes, read_recoveries, region_footprint, run_fits, weir_recoveries,
    Layout, Repair, Shareable, WEIR_REGION_BREAKER,
};
use crate::slots::Slots;
use crate::status::weir_status::{self, *};
use weir_core::breaker::{
    Breaker, BreakerPolicy, BreakerPolicyError, BreakerTally, BreakerTicket, BreakerTicketError,
};

/// The breaker's policy (for `weir_breaker_new`; SRE: Google's client-side
/// throttling): the constants of its probability-based throttling. Start from
/// `weir_breaker_policy_preset()` and change what you need; every field is checked
/// when a breaker is made from it.
///
/// The last three fields are Envoy admission_control's limits, applied
/// after the breaker's formula (see `weir_breaker`), in this order:
/// `drop = drop ^ (1 / aggression)`, then
/// `drop = min(drop, max_rejection_probability)`, then `drop = 0` while the
/// window's traffic is under `rps_threshold * window_ns / 1e9` calls. The
/// preset's values (1, 0, 1, and `skip_refusals` 0) leave every decision
/// and reading as the formula alone gives it, to the bit. 72 bytes (48 before 0.2.0: the last
/// three fields are new, and `skip_refusals` takes the old `reserved`).
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct weir_breaker_policy {
    /// How many calls each success pays for while nothing is failing; finite
    /// and at least `floor`. The preset's 1.5 leaves a backend alone until
    /// more than a third of its calls fail.
    pub k: f64,
    /// What `k` decays to as the failing run fills the window; finite and at
    /// least 1.
    pub floor: f64,
    /// Calls in the window that are never refused, however they went; finite
    /// and not negative.
    pub protection: f64,
    /// How long with nothing let through before one call goes anyway (the
    /// probe); positive.
    pub probe_ns: i64,
    /// Buckets in the window; below one is raised to one, above 1048576 is
    /// `WEIR_ERR_BREAKER_SIZE`.
    pub size: i32,
    /// 0 (the preset, as in Google's formula): the breaker's own refusals count
    /// as traffic, so `total` in the formula counts them. 1: they do not,
    /// as in Envoy's admission_control and go-zero since its PR #5551 (its
    /// breaker never recovered under steady load while its refusals kept
    /// the ratio up); the tally still shows them. Anything else is
    /// `WEIR_ERR_BREAKER_REFUSALS`. A policy written for 0.1, with 0 in this
    /// slot (then `reserved`), keeps the behaviour it had.
    pub skip_refusals: i32,
    /// How far back the window reaches; positive.
    pub window_ns: i64,
    /// The most the refusal probability reaches, in [0, 1] (Envoy's
    /// `max_rejection_probability`, 0.8 by default there): `drop =
    /// min(drop, max_rejection_probability)`, applied last, so that at
    /// least this share of calls always reaches the backend. The preset's
    /// 1 caps nothing; 0 refuses nothing. NaN or outside [0, 1] is
    /// `WEIR_ERR_BREAKER_CAP`.
    pub max_rejection_probability: f64,
    /// A traffic floor in calls a second (Envoy's `rps_threshold`): while
    /// the window's traffic is below `rps_threshold * window_ns / 1e9`
    /// calls (its average rate over the whole window under the threshold),
    /// nothing is refused. Traffic counts refusals unless `skip_refusals`.
    /// The preset's 0 is no floor. Not finite or negative is
    /// `WEIR_ERR_BREAKER_RPS`.
    pub rps_threshold: f64,
    /// An exponent on the refusal probability (Envoy's `aggression`):
    /// `drop = drop ^ (1 / aggression)`, before the cap. Above 1 the breaker
    /// refuses more at a given failure rate (2 turns 0.25 into 0.5), below
    /// 1 less (0.5 turns 0.5 into 0.25); it never turns a healthy window
    /// (drop at or below 0) into refusals. The preset's 1 changes nothing,
    /// to the bit. Not finite or not positive is `WEIR_ERR_BREAKER_AGGRESSION`.
    pub aggression: f64,
}

assert_eq_size!(weir_breaker_policy, [u8; 72]);
const_assert_eq!(core::mem::align_of::<weir_breaker_policy>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_breaker_policy, k), 0);
const_assert_eq!(core::mem::offset_of!(weir_breaker_policy, floor), 8);
const_assert_eq!(core::mem::offset_of!(weir_breaker_policy, protection), 16);
const_assert_eq!(core::mem::offset_of!(weir_breaker_policy, probe_ns), 24);
const_assert_eq!(core::mem::offset_of!(weir_breaker_policy, size), 32);
const_assert_eq!(
    core::mem::offset_of!(weir_breaker_policy, skip_refusals),
    36
);
const_assert_eq!(core::mem::offset_of!(weir_breaker_policy, window_ns), 40);
const_assert_eq!(
    core::mem::offset_of!(weir_breaker_policy, max_rejection_probability),
    48
);
const_assert_eq!(
    core::mem::offset_of!(weir_breaker_policy, rps_threshold),
    56
);
const_assert_eq!(core::mem::offset_of!(weir_breaker_policy, aggression), 64);

impl From<BreakerPolicy> for weir_breaker_policy {
    fn from(sre: BreakerPolicy) -> weir_breaker_policy {
        weir_breaker_policy {
            k: sre.k,
            floor: sre.floor,
            protection: sre.protection,
            probe_ns: sre.probe_ns,
            size: sre.size,
            skip_refusals: i32::from(sre.skip_refusals),
            window_ns: sre.window_ns,
            max_rejection_probability: sre.max_rejection_probability,
            rps_threshold: sre.rps_threshold,
            aggression: sre.aggression,
        }
    }
}

impl From<weir_breaker_policy> for BreakerPolicy {
    /// `skip_refusals` is taken as non-zero; `weir_breaker_new` checks it
    /// is 0 or 1 first.
    fn from(sre: weir_breaker_policy) -> BreakerPolicy {
        BreakerPolicy {
            k: sre.k,
            floor: sre.floor,
            protection: sre.protection,
            probe_ns: sre.probe_ns,
            size: sre.size,
            window_ns: sre.window_ns,
            max_rejection_probability: sre.max_rejection_probability,
            rps_threshold: sre.rps_threshold,
            aggression: sre.aggression,
            skip_refusals: sre.skip_refusals != 0,
        }
    }
}

impl From<BreakerPolicyError> for weir_status {
    fn from(error: BreakerPolicyError) -> weir_status {
        weir_status::of(error.code())
    }
}

impl From<BreakerTicketError> for weir_status {
    fn from(error: BreakerTicketError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// The preset: k 1.5 decaying to 1.1, protection 5, a probe after 1 s with
/// nothing let through, 40 buckets over 10 s; Envoy's limits off
/// (`max_rejection_probability` 1, `rps_threshold` 0, `aggression` 1) and
/// refusals counted as traffic (`skip_refusals` 0): the classic formula.
#[no_mangle]
pub extern "C" fn weir_breaker_policy_preset() -> weir_breaker_policy {
    BreakerPolicy::PRESET.into()
}

/// Outcomes counted over a breaker's window. `total` counts every call,
/// refused ones included; `total = success + failure + drop`. 32 bytes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_breaker_tally {
    /// Every call: successes, failures and drops.
    pub total: i64,
    /// Calls let through that succeeded.
    pub success: i64,
    /// Calls let through that failed.
    pub failure: i64,
    /// Calls refused.
    pub drop: i64,
}

assert_eq_size!(weir_breaker_tally, [u8; 32]);
const_assert_eq!(core::mem::align_of::<weir_breaker_tally>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_breaker_tally, total), 0);
const_assert_eq!(core::mem::offset_of!(weir_breaker_tally, success), 8);
const_assert_eq!(core::mem::offset_of!(weir_breaker_tally, failure), 16);
const_assert_eq!(core::mem::offset_of!(weir_breaker_tally, drop), 24);

impl From<BreakerTally> for weir_breaker_tally {
    fn from(tally: BreakerTally) -> weir_breaker_tally {
        weir_breaker_tally {
            total: tally.total,
            success: tally.success,
            failure: tally.failure,
            drop: tally.drop,
        }
    }
}

/// A call the breaker let through: a plain value the caller keeps (on its
/// stack, in its request struct) and hands back, by address, to
/// `weir_breaker_pass` or `weir_breaker_fail` of the same breaker exactly
/// once. `weir_breaker_allow` fills it in; the caller does not. A second
/// settle answers `WEIR_ERR_SETTLED` and changes nothing, so an outcome
/// counts only for a call the breaker let through, and once. A ticket from
/// another breaker, or one overwritten, answers `WEIR_ERR_BREAKER_TICKET`
/// and changes nothing. Settle the ticket itself, not a copy: a copy of a
/// settled ticket is caught while no other call of that breaker is in
/// flight, but while one is, it is counted in that call's place. Two threads
/// may settle one ticket at once (a completion racing a timeout): weir
/// reads and writes it under the breaker's lock, so one settles it and the
/// other gets `WEIR_ERR_SETTLED`. 16 bytes, aligned as an int64_t: a
/// misaligned ticket is refused (`WEIR_ERR_MISALIGNED`), never read or
/// written. Its own type, not the shedder's `weir_shedder_ticket`, so that a
/// compiler rejects a shedder's ticket handed to a breaker.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_breaker_ticket {
    /// Which call: the breaker numbers the calls it lets through from 1; 0
    /// for a refusal.
    pub serial: u64,
    /// The breaker that handed the ticket out, by a tag each breaker gets
    /// when it is made (never 0).
    pub breaker: u32,
    /// 1 while the call is in flight, 0 once settled (or refused).
    pub flying: i32,
}

assert_eq_size!(weir_breaker_ticket, [u8; 16]);
const_assert_eq!(core::mem::align_of::<weir_breaker_ticket>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_breaker_ticket, serial), 0);
const_assert_eq!(core::mem::offset_of!(weir_breaker_ticket, breaker), 8);
const_assert_eq!(core::mem::offset_of!(weir_breaker_ticket, flying), 12);

impl From<BreakerTicket> for weir_breaker_ticket {
    fn from(ticket: BreakerTicket) -> weir_breaker_ticket {
        weir_breaker_ticket {
            serial: ticket.serial,
            breaker: ticket.breaker,
            flying: i32::from(ticket.open),
        }
    }
}

/// The tag the next breaker gets. Tags are never 0, so a zeroed ticket is
/// nobody's; they repeat only after 2^32 - 1 breakers.
fn next_tag() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    loop {
        let tag = crate::lock::next(&NEXT);
        if tag != 0 {
            return tag;
        }
    }
}

/// A circuit breaker that refuses a fraction of calls rather than all of
/// them: no open, half-open and closed, but a refusal probability that grows
/// with the failures in a rolling window of outcomes:
/// `w = max(k - (k - floor) * failing / size, floor)`,
/// `drop = (total - protection - w * accepts) / (total + 1)`, and then
/// `drop *= (size - working) / size` (then the policy's Envoy limits, see
/// `weir_breaker_policy`), where `total` counts every call in the window (refusals
/// included, unless `skip_refusals`), `accepts` its successes, and `failing` /
/// `working` are the runs of failure-only / success-only buckets at the
/// window's head (buckets with neither, or only refusals, leave both runs as
/// they are). At or below zero everything goes; otherwise, once `probe_ns`
/// has passed with nothing let through one call goes anyway (the probe),
/// and the rest are refused when the caller's roll falls under `drop`. Safe
/// to share between threads: each call takes a short per-handle lock, and a
/// decision never rescans the window. Heap per handle: 32 bytes per bucket
/// plus about 310 bytes (1.6 KiB at the preset). Made by `weir_breaker_new`, freed by `weir_breaker_free`.
///
/// What the preset does to an outage (the bay's breaker panel, picture in
/// docs/bay-breaker.svg; bay/tests/breaker_figures.rs measures it: 100
/// calls a second, every call failing for 30 s, eight seeds). The breaker
/// never cuts a backend off at once: the first refusals come 2 to 3 s into
/// the outage, and about 9 in 10 calls of its first 5 s still reach the
/// dead backend, because the window is still full of successes. From about
/// 10 s in, only 1 or 2 calls in a hundred get through (the rolls above the
/// ratio, which stays under 1; the probe adds one only when a whole
/// `probe_ns` passes with nothing let through). Over the 30 s, about a
/// fifth of all calls reach the backend. After it recovers, refusals fade
/// as successes refill the window, and the last refusal comes 8 to 11 s
/// later: about one window.
///
/// In the firmware build (docs/firmware.md) a breaker is placed only: on a
/// 32-bit core the preset needs 1560 bytes (32 per bucket plus 280). Its
/// updates hold the build's critical section (interrupts masked, with
/// `single-core`); the longest measured under QEMU: a call of 5017 instructions
/// on a Cortex-M4F, a section of 12905 (the formula in soft float) on a
/// Cortex-M0.
pub struct weir_breaker(Guarded<ShortLock<Breaker<Slots<BreakerTally>>>>);

impl Handle for weir_breaker {
    type State = ShortLock<Breaker<Slots<BreakerTally>>>;
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

/// Makes a breaker with an empty window opening at `now` and writes it to
/// `*out`; the probe counts from `now` too. `policy` NULL means the preset.
/// A bad policy gets a status naming the field, the fields checked in this
/// order (with several bad, the first is named): `WEIR_ERR_BREAKER_FLOOR`,
/// `WEIR_ERR_BREAKER_K`, `WEIR_ERR_BREAKER_PROTECTION`, `WEIR_ERR_BREAKER_PROBE`,
/// `WEIR_ERR_BREAKER_WINDOW`, `WEIR_ERR_BREAKER_CAP`, `WEIR_ERR_BREAKER_RPS`,
/// `WEIR_ERR_BREAKER_AGGRESSION`, `WEIR_ERR_BREAKER_SIZE`, then
/// `WEIR_ERR_BREAKER_REFUSALS` for a `skip_refusals` neither 0 nor 1. `WEIR_ERR_NO_MEMORY` if the buckets cannot
/// be allocated, `WEIR_ERR_NULL` if `out` is NULL; `*out` is written only
/// on success.
/// The policy is copied: the caller may change or free it after.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_breaker_new(
    policy: *const weir_breaker_policy,
    now: i64,
    out: *mut *mut weir_breaker,
) -> weir_status {
    new_handle(out, || {
        let core = checked(policy)?;
        let breaker = Breaker::new(core, now)?
            .map_store(Slots::heap)
            .tagged(next_tag());
        Ok(weir_breaker(Guarded::new(ShortLock::new(breaker))))
    })
}

/// The caller's policy (or the preset for NULL), checked as
/// `weir_breaker_new` documents.
fn checked(policy: *const weir_breaker_policy) -> Result<BreakerPolicy, weir_status> {
    let sre = policy_or(policy, weir_breaker_policy_preset())?;
    let core = BreakerPolicy::from(sre).check()?;
    if i64::from(core.size) > weir_core::window::MAX_SIZE {
        return Err(WEIR_ERR_BREAKER_SIZE);
    }
    if !matches!(sre.skip_refusals, 0 | 1) {
        return Err(WEIR_ERR_BREAKER_REFUSALS);
    }
    Ok(core)
}

/// The bytes and the alignment a placed breaker with this policy needs
/// (NULL: the preset), written to `*bytes` and `*align`: the handle and one
/// 32-byte bucket per `size` (1592 bytes, 8-aligned, at the preset on a
/// 64-bit host). The policy is checked as `weir_breaker_new` checks it, with
/// its statuses; `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `bytes`
/// or `align` pointer, and nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_breaker_footprint(
    policy: *const weir_breaker_policy,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    crate::guard::guard_status(|| {
        let core = checked(policy)?;
        let (total, alignment, _) = placement::<weir_breaker, BreakerTally>(slots(&core))?;
        write_footprint((total, alignment), bytes, align)
    })
}

/// How many buckets a breaker with this checked policy keeps.
fn slots(core: &BreakerPolicy) -> usize {
    // 1 <= size <= MAX_SIZE once checked and raised to one.
    core.size.max(1) as usize
}

/// Lays a breaker in memory the caller owns (a static array, a field of
/// its own struct) and writes it to `*out`: the same breaker
/// `weir_breaker_new` makes, taken by every `weir_breaker_*` call, without
/// a heap. `mem` holds `len` bytes, at least the footprint
/// `weir_breaker_footprint` answers for this policy, at a multiple of its
/// alignment. The memory stays the caller's: weir keeps nothing outside
/// it, `weir_breaker_free` on a placed breaker does nothing, and the caller
/// may reuse the memory once no call uses the breaker any more (moving or
/// copying it makes another breaker of neither). Checked in this order, and
/// nothing is written on an error: `out` (`WEIR_ERR_NULL`,
/// `WEIR_ERR_MISALIGNED`), the policy (the statuses of `weir_breaker_new`),
/// then `mem` NULL (`WEIR_ERR_NULL`), `mem` misaligned
/// (`WEIR_ERR_PLACED_MISALIGNED`), `len` below the footprint
/// (`WEIR_ERR_PLACED_TOO_SMALL`). A breaker laid over a live one leaks the
/// old one's heap, if it had any: lay a breaker only in memory no live
/// handle uses.
#[no_mangle]
pub extern "C" fn weir_breaker_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    policy: *const weir_breaker_policy,
    now: i64,
    out: *mut *mut weir_breaker,
) -> weir_status {
    place_handle(
        mem,
        len,
        out,
        BreakerTally::default(),
        || {
            let core = checked(policy)?;
            Ok((slots(&core), core))
        },
        |core, slots| {
            let breaker = Breaker::new_in(core, Slots::placed(slots), now)?.tagged(next_tag());
            Ok(weir_breaker(Guarded::new(ShortLock::new(breaker))))
        },
    )
}

#[cfg(feature = "std")]
impl Repair for Breaker<Slots<BreakerTally>> {
    /// Keeps a breaker whose sums and counts hold together
    /// (`Breaker::consistent`), resets one that does not.
    fn repair(&mut self) -> bool {
        if self.consistent() {
            return true;
        }
        self.reset();
        false
    }
}

#[cfg(feature = "std")]
impl Shareable for weir_breaker {
    const KIND: u32 = WEIR_REGION_BREAKER;
    const LOCKED: bool = true;

    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        if slots == 0 || slots as u64 > weir_core::window::MAX_SIZE as u64 {
            return Err(WEIR_ERR_BREAKER_SIZE);
        }
        let (bytes, align, first) = placement::<weir_breaker, BreakerTally>(slots)?;
        Ok(Layout {
            bytes,
            align,
            runs: [first, 0],
        })
    }

    fn slots(&self) -> usize {
        // SAFETY: read by the laying or attaching call, before the handle
        // is handed out: no other reference to the value is in use.
        unsafe { &*self.0.state().peek() }.store().as_ref().len()
    }

    fn share(&mut self) {
        let lock = self.0.state_mut();
        lock.owned().store_mut().make_relative();
    }

    fn fits(&self, layout: &Layout, slots: usize) -> bool {
        let lock = self.0.state();
        // SAFETY: the store's place and length are integers written when
        // the handle was laid and never changed after; the attach reads
        // them, and the lock's flag, and nothing else.
        let store = unsafe { &*lock.peek() }.store();
        let first = (self as *const weir_breaker as usize).wrapping_add(layout.runs[0]);
        run_fits(
            store.relative(),
            (store as *const Slots<BreakerTally>).cast(),
            first,
            slots,
        )
    }
}

/// The bytes and the alignment a shared breaker with this policy needs
/// (NULL: the preset), for `weir_breaker_init_shared`: a 256-byte
/// `weir_region_header` and the region's 64-byte lock, then the placed breaker (`weir_breaker_footprint`);
/// 64-aligned. Checked and answered as `weir_breaker_footprint`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_breaker_shared_footprint(
    policy: *const weir_breaker_policy,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    crate::guard::guard_status(|| {
        let core = checked(policy)?;
        let layout = weir_breaker::layout_for(slots(&core))?;
        write_footprint(region_footprint(&layout)?, bytes, align)
    })
}

/// Lays a breaker that processes share in `mem`, memory the caller maps
/// `MAP_SHARED` (a file or anonymous mapping made before `fork`), and
/// writes it to `*out` for this process: a `weir_region_header` (its kind
/// WEIR_REGION_BREAKER, the policy, a checksum), then the breaker
/// `weir_breaker_init_in` would lay, whose slots are found from the
/// region itself and whose lock is a robust, process-shared mutex. The
/// region holds no pointer: another process maps it at any address and
/// gets its own `weir_breaker *` from `weir_breaker_attach`; every
/// `weir_breaker_*` call then works on the one breaker, its tickets
/// included (a ticket settles in any process). Lay it once, before any
/// process attaches; laying it again resets it under anyone using it.
/// `weir_breaker_free` does nothing to it; unmap it when no call uses it.
///
/// A process killed while it holds the lock (a few hundred instructions a
/// call) leaves it to the next caller, which checks the breaker's sums and
/// counts: if they hold together the breaker is kept as the dead call left
/// it (that call's one update may be half made: at most one outcome or
/// one refusal counted or not), otherwise it is reset to an empty window at
/// the latest `now` it saw, keeping its policy and ticket numbering (calls
/// in flight then settle as `WEIR_ERR_SETTLED`). That call answers
/// `WEIR_ERR_REGION_RECOVERED` (`weir_breaker_allow` refuses instead) and
/// does nothing else; `weir_breaker_recoveries` counts both outcomes. A
/// process killed outside the lock changes nothing for the others, except
/// that the calls it had in flight are never settled.
///
/// Checked in this order, nothing written on an error: `out`, `mem` NULL
/// (`WEIR_ERR_NULL`), `mem` not 64-aligned (`WEIR_ERR_PLACED_MISALIGNED`),
/// `WEIR_ERR_REGION_UNSUPPORTED` off Linux, `len` under the header
/// (`WEIR_ERR_PLACED_TOO_SMALL`), then as `weir_breaker_init_in` (the
/// policy's statuses, then `WEIR_ERR_PLACED_TOO_SMALL` for a `len` under
/// `weir_breaker_shared_footprint`), and last, for every type with a lock
/// (all but the bucket and the gate), `WEIR_ERR_REGION_UNSUPPORTED` where
/// the kernel keeps no robust-futex list (qemu-user), so that a process
/// killed holding the lock could never release it.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_breaker_init_shared(
    mem: *mut core::ffi::c_void,
    len: usize,
    policy: *const weir_breaker_policy,
    now: i64,
    out: *mut *mut weir_breaker,
) -> weir_status {
    let sre = match policy_or(policy, weir_breaker_policy_preset()) {
        Ok(sre) => sre,
        Err(status) => return status,
    };
    lay_shared(mem, len, out, plain_bytes(&sre), |at, room, placed| {
        weir_breaker_init_in(at, room, &sre, now, placed)
    })
}

/// Checks the region at `mem` (`len` bytes, as mapped in this process)
/// that `weir_breaker_init_shared` laid, in this or another process, and
/// writes its breaker, for this process, to `*out`. Refused with a status,
/// nothing written: `out` NULL or misaligned, `mem` NULL (`WEIR_ERR_NULL`)
/// or not 64-aligned (`WEIR_ERR_PLACED_MISALIGNED`), `len` under the header
/// or the region (`WEIR_ERR_REGION_SIZE`), no weir region header or a
/// damaged one (`WEIR_ERR_REGION_FOREIGN`), another layout version
/// (`WEIR_ERR_REGION_LAYOUT`), another type, a bloom array's included
/// (`WEIR_ERR_REGION_KIND`), another build's layout
/// (`WEIR_ERR_REGION_BUILD`), a header whose size is not its slots'
/// (`WEIR_ERR_REGION_SIZE`), a breaker whose slots or lock do not match
/// the header (`WEIR_ERR_REGION_SHAPE`), and last, as
/// `weir_breaker_init_shared` answers it, `WEIR_ERR_REGION_UNSUPPORTED`
/// where the kernel keeps no robust-futex list. No bytes in the region make it
/// read or write outside the `len` bytes at `mem`. Once attached, the
/// region is trusted as memory a thread of this process shares: processes
/// that use it must not write it except through weir.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_breaker_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_breaker,
) -> weir_status {
    attach(mem, len, out)
}

/// Writes what a shared breaker's lock has recovered from (see
/// `weir_breaker_init_shared`) to `*out`; all zero for a breaker that is
/// not shared. `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`, `WEIR_ERR_POISONED`.
/// A reading: it changes nothing.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_breaker_recoveries(
    breaker: *const weir_breaker,
    out: *mut weir_recoveries,
) -> weir_status {
    crate::guard::guard_status(|| read_recoveries(breaker, out))
}

/// Gives a breaker a new policy in place (NULL: the preset), checked as
/// `weir_breaker_new` checks it. It keeps its tickets in flight (they
/// settle as before), its probe's clock, its clock and its counts. Its
/// window: kept bucket for bucket when the buckets keep their layout (the
/// same `size` and `window_ns / size`), the new formula reading it from the
/// next call; otherwise resampled: a new window opens at the latest `now`
/// the breaker has seen, holding the old window's sums (calls, successes,
/// failures, drops) in its newest bucket, so the formula reads the same
/// outcomes (they then age out together, one new `window_ns` later), and
/// the working and failing runs restart from that one bucket.
///
/// Memory: a heap breaker of another `size` allocates its new buckets
/// before it lets go of the old; a placed breaker keeps the size its memory
/// holds (a smaller `size` is held to it, as `weir_breaker_init_in` holds a
/// window to its memory) and answers `WEIR_ERR_PLACED_TOO_SMALL` for a
/// larger one.
///
/// Safe beside the breaker's other calls (not `weir_breaker_free`): it
/// takes the breaker's own lock, as they do, so a call racing it is judged
/// by the old policy or the new one, wholly; a breaker of another size
/// allocates its new buckets and moves into them under that lock. Checked
/// in this order, nothing changed on an
/// error: `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `breaker`,
/// `WEIR_ERR_REGION_UNSUPPORTED` for a shared breaker
/// (`weir_breaker_init_shared`: its policy is its region's, laid once for
/// every process), `WEIR_ERR_POISONED`, the policy's statuses as `weir_breaker_new` answers
/// them, `WEIR_ERR_PLACED_TOO_SMALL`, `WEIR_ERR_NO_MEMORY`. It counts
/// nothing.
#[no_mangle]
pub extern "C" fn weir_breaker_reconfigure(
    breaker: *mut weir_breaker,
    policy: *const weir_breaker_policy,
) -> weir_status {
    reconfigure(breaker, |state| {
        let core = checked(policy)?;
        let mut breaker = state.lock();
        let size = slots(&core);
        let held = breaker.policy().size as usize;
        let placed = breaker.store().is_placed();
        if size == held || (placed && size < held) {
            return Ok(breaker.reconfigure(core)?);
        }
        if placed {
            return Err(WEIR_ERR_PLACED_TOO_SMALL);
        }
        let ring = Slots::grown(size, BreakerTally::default())?;
        *breaker = breaker.reconfigure_into(core, ring)?;
        Ok(())
    })
}

/// Frees a breaker. NULL is accepted and ignored, and so is a placed
/// breaker (`weir_breaker_init_in`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_breaker_free(breaker: *mut weir_breaker) {
    free_handle(breaker)
}

/// Asks to make one call at `now`, with `roll` a draw from [0, 1) (clamped
/// into range; NaN counts as 0). True: go ahead; `*ticket` now holds the
/// call, to be settled once with `weir_breaker_pass` or `weir_breaker_fail`.
/// False: refused, recorded as a drop, and `*ticket` is written as already
/// settled. False, changing nothing, for a NULL breaker or a NULL or
/// misaligned `ticket`.
#[no_mangle]
pub extern "C" fn weir_breaker_allow(
    breaker: *const weir_breaker,
    now: i64,
    roll: f64,
    ticket: *mut weir_breaker_ticket,
) -> bool {
    let counted = move |_: &_, &admitted: &bool| match usable(ticket) {
        Ok(()) => Tally::of(admitted),
        Err(_) => Tally::Error,
    };
    decide(breaker, false, counted, move |state| {
        if usable(ticket).is_err() {
            return false;
        }
        let mut breaker = state.lock();
        let issued = breaker.allow(now, roll);
        let written = issued.unwrap_or(BreakerTicket {
            breaker: breaker.tag(),
            serial: 0,
            open: false,
        });
        write_out(ticket, written.into()).is_ok() && issued.is_some()
    })
}

/// Settles the call behind `*ticket` with `settle`, after checking the
/// ticket, and writes it back as settled. The ticket is read and written
/// under the breaker's lock, so two threads settling one ticket at once
/// settle it once between them.
fn settle(
    breaker: *const weir_breaker,
    ticket: *mut weir_breaker_ticket,
    settle: impl FnOnce(
        &mut Breaker<Slots<BreakerTally>>,
        &mut BreakerTicket,
    ) -> Result<(), BreakerTicketError>,
) -> weir_status {
    decide_status(breaker, Tally::errors, move |state| {
        let mut breaker = state.lock();
        let held = value_mut(ticket)?;
        let open = match held.flying {
            0 => false,
            1 => true,
            _ => return Err(WEIR_ERR_BREAKER_TICKET),
        };
        let mut core = BreakerTicket {
            breaker: held.breaker,
            serial: held.serial,
            open,
        };
        settle(&mut breaker, &mut core)?;
        *held = core.into();
        Ok(())
    })
}

/// The call behind `*ticket` succeeded, finishing at `now`.
/// `WEIR_ERR_SETTLED`, changing nothing, if the ticket was already settled
/// (or is a refusal's); `WEIR_ERR_BREAKER_TICKET`, changing nothing, if this
/// breaker did not hand it out (another breaker's, a zeroed or overwritten
/// one, or `flying` neither 0 nor 1); `WEIR_ERR_NULL` if `breaker` or
/// `ticket` is NULL; `WEIR_ERR_MISALIGNED`, changing nothing, if `ticket` is
/// misaligned.
#[no_mangle]
pub extern "C" fn weir_breaker_pass(
    breaker: *const weir_breaker,
    ticket: *mut weir_breaker_ticket,
    now: i64,
) -> weir_status {
    settle(breaker, ticket, |breaker, ticket| breaker.pass(ticket, now))
}

/// The call behind `*ticket` failed, finishing at `now`. Statuses as for
/// `weir_breaker_pass`.
#[no_mangle]
pub extern "C" fn weir_breaker_fail(
    breaker: *const weir_breaker,
    ticket: *mut weir_breaker_ticket,
    now: i64,
) -> weir_status {
    settle(breaker, ticket, |breaker, ticket| breaker.fail(ticket, now))
}

/// The fraction of calls the breaker would refuse at `now`, in [0, 1]
/// (never above `max_rejection_probability`; 1 only when an aggression
/// above 1 rounds a fraction up to it): zero while the window is healthy or
/// its traffic is under the `rps_threshold` floor. The probe is left out; this is the standing
/// throttle a dashboard or an alert wants. A reading: it changes nothing, at
/// any `now` (an earlier one than seen counts as the latest). 0 for a NULL
/// breaker.
#[no_mangle]
pub extern "C" fn weir_breaker_ratio(breaker: *const weir_breaker, now: i64) -> f64 {
    on(breaker, 0.0, |state| state.lock().ratio(now))
}

/// Writes the outcomes in the window at `now` to `*out`. A reading: it
/// changes nothing, at any `now`. `WEIR_ERR_NULL` if `breaker` or `out` is
/// NULL, `WEIR_ERR_MISALIGNED` if `out` is misaligned.
#[no_mangle]
pub extern "C" fn weir_breaker_read_tally(
    breaker: *const weir_breaker,
    now: i64,
    out: *mut weir_breaker_tally,
) -> weir_status {
    status_on(breaker, |state| {
        let tally = state.lock().tally(now);
        write_out(out, tally.into())
    })
}

/// Turns counting on for a breaker: from this call on,
/// `weir_breaker_read_counts` reports what it decided. Call it right after
/// `weir_breaker_new` to count everything since the handle was made; a second
/// call changes nothing. Until then the handle costs what it did before
/// counting existed (see `weir_counts` for what counting costs).
/// `WEIR_ERR_NULL` for a NULL handle, `WEIR_ERR_MISALIGNED` for one no handle
/// can be at, `WEIR_ERR_POISONED` for a poisoned one.
#[no_mangle]
pub extern "C" fn weir_breaker_start_counting(breaker: *const weir_breaker) -> weir_status {
    start_counting(breaker)
}

/// Writes to `*out` what a breaker decided since `weir_breaker_start_counting`.
/// A reading: it changes nothing. `admitted`: allows answered true; `refused`:
/// allows answered false (the drops of `weir_breaker_tally`, counted since
/// counting began rather than over the window); `errors`: allows given a NULL
/// or misaligned ticket, and passes and fails that answered an error; `units`:
/// equal to `admitted`. The outcomes of the calls let through are the window's,
/// in `weir_breaker_read_tally`.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_breaker_read_counts(
    breaker: *const weir_breaker,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(breaker, out)
}
