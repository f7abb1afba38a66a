//! C face of [`weir_core::pool`].

use static_assertions::{assert_eq_align, assert_eq_size, const_assert_eq};

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{
    decide_counted, decide_or, decide_status, decide_status_counted, decide_status_or, read_counts,
    start_counting,
};
use crate::guard::{
    free_handle, guard_status, on, place_handle, placement, policy_or, reconfigure, slice_out,
    status_on, usable, write_footprint, write_out,
};
use crate::guard::{Guarded, Handle};
use crate::lock::ShortLock;
use crate::slots::Slots;
use crate::status::weir_status;
use weir_core::pool::{
    Pool, PoolMisuse, PoolPolicy, PoolPolicyError, PoolSlot, PoolStats, PoolTaken,
};

/// The pool's store: never shared (a pool has no shared form), so it
/// never holds a distance in place of its pointer.
type PoolSlots = Slots<PoolSlot, false>;

/// A resource's identity: C's `uintptr_t`. cbindgen.toml renames it to
/// `uintptr_t` and does not emit it, since `<stdint.h>` declares that.
pub type weir_item = usize;

/// The pool's policy (for `weir_pool_new`): the limits a pool holds itself
/// to. Durations are nanoseconds; a zero `keep_ns` or `life_ns` means no
/// limit. Validated by `weir_pool_new`,
/// each field with its own status, the first wrong one in field order: a
/// `size` outside 1..`WEIR_POOL_MAX_SIZE` is `WEIR_ERR_POOL_SIZE`, a
/// negative `idle` `WEIR_ERR_POOL_IDLE`, a negative `keep_ns`
/// `WEIR_ERR_POOL_KEEP`, a negative `life_ns` `WEIR_ERR_POOL_LIFE`, a
/// `life_jitter` outside 0..1 or NaN `WEIR_ERR_POOL_JITTER`, a negative
/// `min_idle` `WEIR_ERR_POOL_MIN_IDLE`, a negative `max_making`
/// `WEIR_ERR_POOL_MAX_MAKING`; an `idle` above `size` counts as `size`, and
/// an `idle` of 0 keeps nothing idle.
///
/// Since 0.2.0 the struct is 56 bytes: `life_jitter`, `min_idle` and
/// `max_making` follow the first four fields, and all three are 0 in the
/// preset. A struct zeroed and then filled field by field (or a C
/// initialiser naming only the first four) behaves as 0.1's pool did.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct weir_pool_policy {
    /// The most resources alive at once: idle, lent and being made (≥ 1).
    pub size: i64,
    /// The most kept idle (0: none; above `size`: `size`).
    pub idle: i64,
    /// How long a resource may sit idle before it is closed (0: no limit).
    pub keep_ns: i64,
    /// How long a resource may live from its making (0: no limit).
    pub life_ns: i64,
    /// The most a resource's life may be shortened, as a fraction of
    /// `life_ns` in 0..1, by the caller's draw in `weir_pool_made_jittered`
    /// (0: each lives exactly `life_ns`), so that resources made together
    /// do not retire together.
    pub life_jitter: f64,
    /// How many idle resources `weir_pool_make_ahead` keeps ready (0: none;
    /// above `idle`, as `idle`).
    pub min_idle: i64,
    /// The most resources being made at once (0: up to `size`; above
    /// `size`, as `size`): past it take answers WAIT rather than MAKE.
    pub max_making: i64,
}

assert_eq_size!(weir_pool_policy, [u8; 56]);
const_assert_eq!(core::mem::align_of::<weir_pool_policy>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_pool_policy, size), 0);
const_assert_eq!(core::mem::offset_of!(weir_pool_policy, idle), 8);
const_assert_eq!(core::mem::offset_of!(weir_pool_policy, keep_ns), 16);
const_assert_eq!(core::mem::offset_of!(weir_pool_policy, life_ns), 24);
const_assert_eq!(core::mem::offset_of!(weir_pool_policy, life_jitter), 32);
const_assert_eq!(core::mem::offset_of!(weir_pool_policy, min_idle), 40);
const_assert_eq!(core::mem::offset_of!(weir_pool_policy, max_making), 48);

impl From<weir_pool_policy> for PoolPolicy {
    fn from(limits: weir_pool_policy) -> PoolPolicy {
        PoolPolicy {
            size: limits.size,
            idle: limits.idle,
            keep_ns: limits.keep_ns,
            life_ns: limits.life_ns,
            life_jitter: limits.life_jitter,
            min_idle: limits.min_idle,
            max_making: limits.max_making,
        }
    }
}

/// The largest `size` a pool accepts (2^24).
pub const WEIR_POOL_MAX_SIZE: i64 = 16_777_216;
const_assert_eq!(WEIR_POOL_MAX_SIZE, weir_core::pool::MAX_SIZE);

/// The preset limits: 10 live, 10 idle, closed after 30 minutes idle, no
/// maximum age (the default size of HikariCP and Go's database/sql, which
/// also keeps idle equal to size); no jitter, nothing made ahead, makes up
/// to `size`.
#[no_mangle]
pub extern "C" fn weir_pool_policy_preset() -> weir_pool_policy {
    let PoolPolicy {
        size,
        idle,
        keep_ns,
        life_ns,
        life_jitter,
        min_idle,
        max_making,
    } = PoolPolicy::PRESET;
    weir_pool_policy {
        size,
        idle,
        keep_ns,
        life_ns,
        life_jitter,
        min_idle,
        max_making,
    }
}

/// `weir_pool_taken.kind`: an idle resource, now lent to the caller.
pub const WEIR_POOL_TAKEN_READY: i32 = 1;
/// `weir_pool_taken.kind`: an idle resource past `keep_ns` or `life_ns`, or
/// marked old by `weir_pool_mark_old`, already out of the pool and its
/// count. The caller closes `item` and takes again.
pub const WEIR_POOL_TAKEN_STALE: i32 = 2;
/// `weir_pool_taken.kind`: nothing idle, room for one more, and the room is
/// reserved. The caller makes a resource and calls `weir_pool_made` (or, if
/// making failed, `weir_pool_unmade`). `item` is 0.
pub const WEIR_POOL_TAKEN_MAKE: i32 = 3;
/// `weir_pool_taken.kind`: nothing idle and no room (or `max_making` are being
/// made, or the pool is closed, or NULL). The caller's own queue decides
/// what next. `item` is 0.
pub const WEIR_POOL_TAKEN_WAIT: i32 = 4;

/// What `weir_pool_take` answers: `kind` is one of `WEIR_POOL_TAKEN_READY`,
/// `_STALE`, `_MAKE`, `_WAIT` (never 0, so a zeroed struct is recognisably
/// not an answer); `item` is the resource for READY and STALE, 0 otherwise.
/// Layout: `kind` at offset 0, `item` at offset `sizeof(uintptr_t)`, size
/// `2 * sizeof(uintptr_t)`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct weir_pool_taken {
    /// One of the `WEIR_POOL_TAKEN_*` constants.
    pub kind: i32,
    /// The resource, for READY and STALE; 0 for MAKE and WAIT.
    pub item: weir_item,
}

assert_eq_size!(weir_pool_taken, [usize; 2]);
assert_eq_align!(weir_pool_taken, usize);
const_assert_eq!(core::mem::offset_of!(weir_pool_taken, kind), 0);
const_assert_eq!(
    core::mem::offset_of!(weir_pool_taken, item),
    core::mem::size_of::<usize>()
);

impl From<PoolTaken> for weir_pool_taken {
    fn from(taken: PoolTaken) -> weir_pool_taken {
        let (kind, item) = match taken {
            PoolTaken::Ready(item) => (WEIR_POOL_TAKEN_READY, item),
            PoolTaken::Stale(item) => (WEIR_POOL_TAKEN_STALE, item),
            PoolTaken::Make => (WEIR_POOL_TAKEN_MAKE, 0),
            PoolTaken::Wait => (WEIR_POOL_TAKEN_WAIT, 0),
        };
        weir_pool_taken { kind, item }
    }
}

/// Running totals since the pool was made (modelled on Go's database/sql
/// DBStats). Read with `weir_pool_read_stats`.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_pool_stats {
    /// Resources registered as made: by `weir_pool_made`, or given or
    /// dropped unregistered into an open reservation.
    pub made: u64,
    /// Takes answered READY.
    pub reused: u64,
    /// Idle resources handed back by take as STALE.
    pub stale: u64,
    /// Idle resources `weir_pool_evict` removed for sitting `keep_ns`.
    pub evicted_idle: u64,
    /// Resources retired for living `life_ns`: removed by `weir_pool_evict`
    /// (when not already due for idleness) or not kept by `weir_pool_give`.
    pub evicted_age: u64,
    /// Lent resources reported broken with `weir_pool_drop`.
    pub dropped: u64,
    /// Resources `weir_pool_give` did not keep because enough were idle.
    pub refused: u64,
    /// Takes answered WAIT.
    pub waits: u64,
    /// Reservations released by `weir_pool_unmade`.
    pub unmade: u64,
    /// Resources handed back by `weir_pool_close`, or not kept by a give
    /// after it.
    pub closed: u64,
    /// Resources marked old by `weir_pool_mark_old`, then removed by
    /// `weir_pool_evict` or not kept by `weir_pool_give` (an old one take
    /// meets is counted in `stale`). Since 0.2.0.
    pub retired: u64,
}

assert_eq_size!(weir_pool_stats, [u64; 11]);
const_assert_eq!(core::mem::align_of::<weir_pool_stats>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_pool_stats, made), 0);
const_assert_eq!(core::mem::offset_of!(weir_pool_stats, waits), 56);
const_assert_eq!(core::mem::offset_of!(weir_pool_stats, closed), 72);
const_assert_eq!(core::mem::offset_of!(weir_pool_stats, retired), 80);

impl From<PoolStats> for weir_pool_stats {
    fn from(c: PoolStats) -> weir_pool_stats {
        weir_pool_stats {
            made: c.made,
            reused: c.reused,
            stale: c.stale,
            evicted_idle: c.evicted_idle,
            evicted_age: c.evicted_age,
            dropped: c.dropped,
            refused: c.refused,
            waits: c.waits,
            unmade: c.unmade,
            closed: c.closed,
            retired: c.retired,
        }
    }
}

/// The bookkeeping of a pool of resources (connections, descriptors,
/// handles), each known only by a `uintptr_t` identity. It never opens,
/// closes, sleeps or waits: each call says what the caller should do, and
/// the caller does it.
///
/// Who closes what: the caller always. Every resource the pool stops
/// holding is handed back to be closed: a STALE take, every item
/// `weir_pool_evict` and `weir_pool_close` write out, and every give that
/// answers `*kept == false`. A resource reported with `weir_pool_drop` is the
/// caller's to close too. Freeing the pool hands back nothing: close it
/// first.
///
/// Newest first: the resource returned most recently is lent first. A lent
/// resource is found again by its identity (an O(1) hash lookup) and keeps
/// the birth it was made with, so `life_ns` retires it however often it is
/// reused. PoolMisuse (giving an idle item, giving or dropping one the pool
/// never lent, `made` without a reservation) is a status and changes
/// nothing.
///
/// Time: a `now` earlier than the latest one a take, evict, or successful
/// made or give was given counts as that latest one, so a resource never
/// grows younger and an idle clock never starts earlier than it should
/// (`weir_pool_drop` and `weir_pool_unmade` take no time;
/// `weir_pool_next_expiry` only reads). A call that returns an error moves
/// nothing, the pool's clock included.
///
/// Generations: `weir_pool_mark_old` marks every resource the pool holds as
/// old (after a password or DNS change, say); `weir_pool_evict` hands the
/// idle ones back, take hands back an old one it meets as STALE, a give of
/// a lent one answers `*kept == false`, and what is registered afterwards
/// is new.
///
/// Takes a short per-handle lock; safe to use from many threads at once.
/// Memory per handle on 64-bit: about 280 bytes, plus 24 bytes per table
/// slot (the power of two at least 2 × size) and per idle place
/// (min(idle, size)), all allocated by `weir_pool_new` and never again
/// (about 1.3 KiB for the preset) but by a `weir_pool_reconfigure` that
/// needs more, or laid in the caller's memory by `weir_pool_init_in`.
///
/// In the firmware build (docs/firmware.md) a pool is placed only: on a 32-bit
/// core the preset needs 1224 bytes. Its updates hold the build's critical
/// section (interrupts masked, with `single-core`); the longest measured under
/// QEMU: a call of 802 instructions on a Cortex-M4F, a section of 1131 on a
/// Cortex-M0.
pub struct weir_pool(Guarded<ShortLock<Pool<PoolSlots>>>);

/// A pool's state, whichever memory holds its slots.
type PoolState = ShortLock<Pool<PoolSlots>>;

impl Handle for weir_pool {
    type State = PoolState;
    fn guarded(&self) -> &Guarded<PoolState> {
        &self.0
    }
}

impl From<PoolPolicyError> for weir_status {
    fn from(error: PoolPolicyError) -> weir_status {
        weir_status::of(error.code())
    }
}

impl From<PoolMisuse> for weir_status {
    fn from(misuse: PoolMisuse) -> weir_status {
        weir_status::of(misuse.code())
    }
}

/// Makes an empty pool with `limits` (NULL: `weir_pool_policy_preset()`) and
/// writes it to `*out`; all its memory is allocated here. Bad limits get
/// the status of the first wrong field (`WEIR_ERR_POOL_SIZE`, `_IDLE`,
/// `_KEEP`, `_LIFE`, `_JITTER`, `_MIN_IDLE`, `_MAX_MAKING`: see
/// `weir_pool_policy`), `WEIR_ERR_NO_MEMORY` when the table
/// cannot be allocated; `WEIR_ERR_NULL` if `out` is NULL,
/// `WEIR_ERR_MISALIGNED` if `limits` or `out` is misaligned. `*out` is
/// written only on success. The limits are copied: the caller may change
/// or free them after.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_pool_new(
    limits: *const weir_pool_policy,
    out: *mut *mut weir_pool,
) -> weir_status {
    new_handle(out, || {
        let limits = policy_or(limits, weir_pool_policy_preset())?;
        let pool = Pool::new(limits.into())?.map_store(Slots::heap);
        Ok(weir_pool(Guarded::new(ShortLock::new(pool))))
    })
}

/// The caller's limits (or the preset for NULL), checked as `weir_pool_new`
/// checks them.
fn checked(limits: *const weir_pool_policy) -> Result<PoolPolicy, weir_status> {
    let limits = policy_or(limits, weir_pool_policy_preset())?;
    Ok(PoolPolicy::from(limits).check()?)
}

/// The bytes and the alignment a placed pool with these limits needs
/// (NULL: the preset), written to `*bytes` and `*align`: the handle, then
/// one 24-byte slot (on a 64-bit host) per table slot (the power of two at
/// least 2 × size) and per idle place (min(idle, size)), 8-aligned; 1288
/// bytes at the preset on a 64-bit Linux host. The limits are checked as
/// `weir_pool_new` checks them, with its statuses; `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align` pointer (or a
/// misaligned `limits`), and nothing is written on an error.
#[no_mangle]
pub extern "C" fn weir_pool_footprint(
    limits: *const weir_pool_policy,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    guard_status(|| {
        let limits = checked(limits)?;
        let (total, alignment, _) = placement::<weir_pool, PoolSlot>(limits.store_len())?;
        write_footprint((total, alignment), bytes, align)
    })
}

/// Lays a pool in memory the caller owns (a static array, a field of its
/// own struct) and writes it to `*out`: the pool `weir_pool_new` makes with
/// these limits (NULL: the preset), taken by every `weir_pool_*` call,
/// without a heap. `mem` holds `len` bytes, at least the footprint
/// `weir_pool_footprint` answers for these limits, at a multiple of its
/// alignment. The memory stays the caller's: weir keeps nothing outside it,
/// `weir_pool_free` on a placed pool does nothing (close it first, as for a
/// heap one), and the caller may reuse the memory once no call uses the
/// pool any more (moving or copying it makes another pool of neither).
/// Checked in this order, and nothing is written on an error: `out`
/// (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), the limits (the statuses of
/// `weir_pool_new`), then `mem` NULL (`WEIR_ERR_NULL`), `mem` misaligned
/// (`WEIR_ERR_PLACED_MISALIGNED`), `len` below the footprint
/// (`WEIR_ERR_PLACED_TOO_SMALL`). Lay a pool only in memory no live handle
/// uses.
#[no_mangle]
pub extern "C" fn weir_pool_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    limits: *const weir_pool_policy,
    out: *mut *mut weir_pool,
) -> weir_status {
    place_handle(
        mem,
        len,
        out,
        PoolSlot::default(),
        || {
            let limits = checked(limits)?;
            Ok((limits.store_len(), limits))
        },
        |limits, slots| {
            let pool = Pool::new_in(limits, Slots::placed(slots))?;
            Ok(weir_pool(Guarded::new(ShortLock::new(pool))))
        },
    )
}

/// Gives a pool new limits in place (NULL: the preset), checked as
/// `weir_pool_new` checks them, in force from the next call. The pool keeps
/// every resource it holds, idle or lent, with its birth, its idle clock and
/// its mark of `weir_pool_mark_old`; the MAKEs outstanding (each still
/// filled by made, give or drop, or released by unmade); the newest-first
/// order of the idle ones; its clock, its stats and counts, and whether it
/// is closed. The new `keep_ns` and `life_ns` judge each resource by its
/// own idle clock and birth from the next take, evict or give; the new
/// `life_jitter` shortens only lives registered from then on.
///
/// A smaller `size` than the resources live (idle, lent and being made)
/// takes none away: they are the caller's, known by their identities, and
/// each still comes back through give, drop or unmade. Take answers WAIT
/// rather than MAKE (and `weir_pool_make_ahead` reserves nothing) until
/// fewer than the new `size` are live. More idle than the new idle cap stay
/// idle, lent first and handed back by evict as before, and a give keeps
/// nothing until fewer than the cap are idle. So from the change on, the
/// resources live are never more than the larger of those live at the
/// change and the new `size`; once they are fewer than it, the new `size`
/// bounds them.
///
/// Memory: the pool's table and idle places need the power of two at least
/// twice the larger of the new `size` and the resources live, plus the
/// larger of min(`idle`, `size`) and the resources idle (24 bytes each on a
/// 64-bit host). When its store has that many, the table is laid out again
/// in it and nothing is allocated (a heap pool keeps its store, however
/// much smaller the new limits). Otherwise a heap pool allocates the larger
/// store and moves every resource into it before it lets the old one go
/// (`WEIR_ERR_NO_MEMORY`, changing nothing, if it cannot), and a placed pool
/// (`weir_pool_init_in`) answers `WEIR_ERR_PLACED_TOO_SMALL`: the limits
/// `weir_pool_footprint` sized its memory for fit it always.
///
/// Safe beside the pool's other calls (not `weir_pool_free`): it takes the
/// pool's own lock, as they do, so a call racing it is answered under the
/// old limits or the new ones, wholly. A pool has no shared form, so no
/// region to refuse. Checked in this order, nothing changed on an error:
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `pool`,
/// `WEIR_ERR_POISONED`, the limits' statuses as `weir_pool_new` answers
/// them (and `WEIR_ERR_MISALIGNED` for a misaligned `limits`),
/// `WEIR_ERR_PLACED_TOO_SMALL`, `WEIR_ERR_NO_MEMORY`. It counts nothing.
/// It visits the table when its length changes: O(size), under the lock.
#[no_mangle]
pub extern "C" fn weir_pool_reconfigure(
    pool: *mut weir_pool,
    limits: *const weir_pool_policy,
) -> weir_status {
    reconfigure(pool, |state| {
        let limits = checked(limits)?;
        let mut pool = state.lock();
        match pool.reconfigure(limits) {
            Err(PoolPolicyError::NoMemory) if pool.store().is_placed() => {
                Err(weir_status::WEIR_ERR_PLACED_TOO_SMALL)
            }
            Err(PoolPolicyError::NoMemory) => {
                let need = pool.store_len_for(limits)?;
                let store = Slots::grown(need, PoolSlot::default())?;
                *pool = pool.reconfigure_into(limits, store)?;
                Ok(())
            }
            changed => Ok(changed?),
        }
    })
}

/// Refuses, always: a pool has no shared form, so there is no region to
/// attach. Its items are one process's identities (file descriptors,
/// pointers), which mean nothing, or something else, in another process;
/// a pool is placed-only (`weir_pool_init_in`) and used by the threads of
/// the process that laid it. Kept so that code attaching every handle type
/// gets a status for the pool, never a misread region. Checked in this
/// order, nothing written: `out` NULL or misaligned (`WEIR_ERR_NULL`,
/// `WEIR_ERR_MISALIGNED`), `mem` NULL (`WEIR_ERR_NULL`), then
/// `WEIR_ERR_REGION_POOL` whatever `mem` and `len` hold.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_pool_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_pool,
) -> weir_status {
    let _ = len;
    guard_status(|| {
        usable(out)?;
        if mem.is_null() {
            return Err(weir_status::WEIR_ERR_NULL);
        }
        Err(weir_status::WEIR_ERR_REGION_POOL)
    })
}

/// Frees a pool. NULL is accepted and ignored, and so is a placed pool
/// (`weir_pool_init_in`): its memory is the caller's. Resources still idle
/// or lent are not closed (the pool never held more than their
/// identities): call `weir_pool_close` first and close what it hands back.
#[no_mangle]
pub extern "C" fn weir_pool_free(pool: *mut weir_pool) {
    free_handle(pool)
}

/// Asks for a resource at `now`. READY: the newest idle one, now lent.
/// STALE: the newest idle one was past `keep_ns` or `life_ns`, or marked
/// old; it is out of
/// the pool, the caller closes it and takes again. MAKE: room is reserved
/// for one more; the caller makes it and calls `weir_pool_made` (or
/// `weir_pool_unmade` if making failed). WAIT: no room, `max_making` are
/// being made already, or the pool is closed. A NULL or poisoned pool
/// answers WAIT.
#[no_mangle]
pub extern "C" fn weir_pool_take(pool: *const weir_pool, now: i64) -> weir_pool_taken {
    let wait = weir_pool_taken {
        kind: WEIR_POOL_TAKEN_WAIT,
        item: 0,
    };
    let counted = move || take_counted(pool, now);
    decide_or(pool, wait, counted, move |pool| {
        pool.lock().take(now).into()
    })
}

/// `weir_pool_take` on a pool that counts (or is poisoned): out of line,
/// with the take's own arguments, so that the take reaches it by a jump
/// (see `decide_or`).
#[cold]
#[inline(never)]
extern "C" fn take_counted(pool: *const weir_pool, now: i64) -> weir_pool_taken {
    let wait = weir_pool_taken {
        kind: WEIR_POOL_TAKEN_WAIT,
        item: 0,
    };
    let counted = move |_: &_, taken: &weir_pool_taken| match taken.kind {
        WEIR_POOL_TAKEN_READY | WEIR_POOL_TAKEN_MAKE => Tally::Admitted(1.0),
        WEIR_POOL_TAKEN_WAIT => Tally::Refused,
        _ => Tally::Nothing,
    };
    decide_counted(pool, wait, counted, move |pool| {
        pool.lock().take(now).into()
    })
}

/// Registers `item`, made after a MAKE, as lent and born at `now`; it fills
/// the reservation. `WEIR_ERR_POOL_ITEM_KNOWN` if the pool already holds
/// `item`, `WEIR_ERR_POOL_NO_RESERVATION` if no MAKE is outstanding;
/// `WEIR_ERR_NULL` for a NULL pool. On an error nothing changes.
#[no_mangle]
pub extern "C" fn weir_pool_made(pool: *const weir_pool, item: weir_item, now: i64) -> weir_status {
    decide_status(pool, Tally::errors, move |pool| {
        Ok(pool.lock().made(item, now)?)
    })
}

/// `weir_pool_made`, with the resource's life shortened by the caller's
/// `draw` (uniform over all 64-bit values, from the caller's own
/// generator): by floor(J × draw / 2^64) nanoseconds, where J =
/// floor(`life_jitter` × `life_ns`), at most `life_ns` − 1, so each
/// resource lives at least 1 ns and resources made together retire spread
/// over up to J nanoseconds. A `draw` of 0, a `life_jitter` of 0 or no
/// `life_ns` is exactly `weir_pool_made`. Statuses as `weir_pool_made`
/// (any `draw` is valid); on an error nothing changes.
#[no_mangle]
pub extern "C" fn weir_pool_made_jittered(
    pool: *const weir_pool,
    item: weir_item,
    now: i64,
    draw: u64,
) -> weir_status {
    decide_status(pool, Tally::errors, move |pool| {
        Ok(pool.lock().made_jittered(item, now, draw)?)
    })
}

/// Reserves room for the resources to make ahead so that `min_idle` stay
/// ready, and returns how many: `min_idle` less the idle resources not
/// marked old and the MAKEs already outstanding, capped by the room left
/// under `size` and under `max_making`. Each is a reservation as a MAKE
/// is: the caller makes it and gives it with `weir_pool_give` (an item
/// the pool does not know fills a reservation; `weir_pool_made` or
/// `weir_pool_made_jittered` first, then give, also works), or calls
/// `weir_pool_unmade` if making failed. Call it after a take, a give or an
/// evict, or on a timer. 0 with `min_idle` 0 (the preset), for a closed
/// pool, and for a NULL one.
#[no_mangle]
pub extern "C" fn weir_pool_make_ahead(pool: *const weir_pool) -> i64 {
    on(pool, 0, |pool| pool.lock().make_ahead() as i64)
}

/// Marks every resource the pool holds now, idle or lent, as old, and
/// returns how many (0 for a NULL pool). From then on `weir_pool_evict`
/// hands back the idle old ones first, whatever their age (and
/// `weir_pool_next_expiry` is 0 while any is idle), take hands back an old
/// one it meets as STALE, and a give of an old one answers `*kept ==
/// false`; resources registered afterwards (by made, or given or dropped
/// into a reservation, even one opened before the mark) are new. Old idle
/// ones still fill `idle` places until evict or take hands them back, so
/// call `weir_pool_evict` soon after. Counted in
/// `weir_pool_stats.retired`. It visits the whole table: O(size),
/// no allocation.
#[no_mangle]
pub extern "C" fn weir_pool_mark_old(pool: *const weir_pool) -> i64 {
    on(pool, 0, |pool| pool.lock().mark_old() as i64)
}

/// Releases the room a MAKE reserved, because making failed, so a failing
/// factory does not shrink the pool for good. `WEIR_ERR_POOL_NO_RESERVATION`
/// if no MAKE is outstanding; `WEIR_ERR_NULL` for a NULL pool.
#[no_mangle]
pub extern "C" fn weir_pool_unmade(pool: *const weir_pool) -> weir_status {
    decide_status(pool, Tally::errors, move |pool| Ok(pool.lock().unmade()?))
}

/// Gives a lent resource back at `now` and writes to `*kept` whether the
/// pool kept it. `*kept == false`: the caller closes `item` (enough were
/// idle, it has lived `life_ns`, it was marked old by `weir_pool_mark_old`,
/// or the pool is closed). The resource keeps
/// the birth it was lent with. An `item` the pool does not know, given while
/// a MAKE is outstanding, fills that reservation, born at `now`.
///
/// A broken resource goes to `weir_pool_drop` instead. Errors change
/// nothing and leave `*kept` unwritten: `WEIR_ERR_POOL_ITEM_IDLE` (already
/// idle in the pool: do not close it), `WEIR_ERR_POOL_NOT_LENT` (never lent
/// and no reservation open: the pool does not hold it), `WEIR_ERR_NULL`
/// (NULL pool or `kept`).
#[no_mangle]
pub extern "C" fn weir_pool_give(
    pool: *const weir_pool,
    item: weir_item,
    now: i64,
    kept: *mut bool,
) -> weir_status {
    let counted = move || give_counted(pool, item, now, kept);
    decide_status_or(pool, counted, move |pool| {
        usable(kept)?;
        let was_kept = pool.lock().give(item, now)?;
        write_out(kept, was_kept)
    })
}

/// `weir_pool_give` on a pool that counts (or is poisoned), as
/// `take_counted` is for a take.
#[cold]
#[inline(never)]
extern "C" fn give_counted(
    pool: *const weir_pool,
    item: weir_item,
    now: i64,
    kept: *mut bool,
) -> weir_status {
    decide_status_counted(pool, Tally::errors, move |pool| {
        usable(kept)?;
        let was_kept = pool.lock().give(item, now)?;
        write_out(kept, was_kept)
    })
}

/// Says a lent resource broke and is not coming back; its room is free and
/// the caller closes it. An `item` the pool does not know, dropped while a
/// MAKE is outstanding, ends that reservation (counted as made and
/// dropped). Errors change nothing: `WEIR_ERR_POOL_ITEM_IDLE`,
/// `WEIR_ERR_POOL_NOT_LENT`, `WEIR_ERR_NULL` (NULL pool).
#[no_mangle]
pub extern "C" fn weir_pool_drop(pool: *const weir_pool, item: weir_item) -> weir_status {
    decide_status(pool, Tally::errors, move |pool| {
        Ok(pool.lock().drop_item(item)?)
    })
}

/// Runs `fill` on `pool` with room for the first `cap` entries of the
/// caller's buffer `out` (no more than the idle resources it could hand back)
/// and a `put` that writes each item it receives to the next entry; returns
/// what `fill` returns, how many it wrote.
fn into_buffer(
    pool: &mut Pool<PoolSlots>,
    out: *mut weir_item,
    cap: usize,
    fill: impl FnOnce(&mut Pool<PoolSlots>, usize, &mut dyn FnMut(weir_item)) -> usize,
) -> usize {
    let Ok(room) = slice_out(out, cap.min(pool.idle())) else {
        return 0;
    };
    let mut at = 0;
    fill(pool, room.len(), &mut |item| {
        room[at].write(item);
        at += 1;
    })
}

/// Removes the idle resources due at `now` — those idle for `keep_ns` or
/// more, alive for `life_ns` or more (the boundary included), or marked
/// old by `weir_pool_mark_old` — oldest
/// first, writes at most `cap` of them to `out` for the caller to close, and
/// returns how many it wrote: only `out[0]` to `out[returned - 1]` are
/// written, and only those resources are removed.
///
/// What did not fit stays idle for the next call. A return of `cap` means
/// more may be due: call again, until it returns less than `cap` or
/// `weir_pool_next_expiry(pool, now)` is no longer 0. `out == NULL` or
/// `cap == 0` writes and removes nothing and returns 0, and so does an
/// `out` not aligned for a `uintptr_t`. A NULL pool answers 0.
#[no_mangle]
pub extern "C" fn weir_pool_evict(
    pool: *const weir_pool,
    now: i64,
    out: *mut weir_item,
    cap: usize,
) -> usize {
    on(pool, 0, |pool| {
        into_buffer(&mut pool.lock(), out, cap, |pool, cap, put| {
            pool.evict_with(now, cap, put)
        })
    })
}

/// Closes the pool for shutdown and empties it: writes at most `cap` idle
/// resources to `out`, oldest first, for the caller to close, and returns
/// how many it wrote: only `out[0]` to `out[returned - 1]` are written.
/// What did not fit stays for the next call; a return of `cap` means more
/// may be waiting, so call again until `weir_pool_idle(pool)` is 0. From
/// the first call on, take answers WAIT and give keeps nothing
/// (`*kept == false`), so each lent resource is closed by its borrower when
/// it comes back. `out == NULL` or `cap == 0` writes nothing and returns 0,
/// but still closes the pool. An `out` not aligned for a `uintptr_t` is
/// refused whole: it returns 0 and the pool stays open. A NULL pool answers
/// 0.
#[no_mangle]
pub extern "C" fn weir_pool_close(
    pool: *const weir_pool,
    out: *mut weir_item,
    cap: usize,
) -> usize {
    on(pool, 0, |pool| {
        into_buffer(&mut pool.lock(), out, cap, |pool, cap, put| {
            pool.close_with(cap, put)
        })
    })
}

/// How many resources exist: idle, lent and being made. 0 for a NULL pool.
#[no_mangle]
pub extern "C" fn weir_pool_live(pool: *const weir_pool) -> i64 {
    on(pool, 0, |pool| pool.lock().live() as i64)
}

/// How many are sitting idle. 0 for a NULL pool.
#[no_mangle]
pub extern "C" fn weir_pool_idle(pool: *const weir_pool) -> i64 {
    on(pool, 0, |pool| pool.lock().idle() as i64)
}

/// How many are lent out or being made (reserved by MAKE). 0 for a NULL
/// pool.
#[no_mangle]
pub extern "C" fn weir_pool_busy(pool: *const weir_pool) -> i64 {
    on(pool, 0, |pool| pool.lock().busy() as i64)
}

/// Nanoseconds from `now` until the next idle resource becomes due: 0 if
/// one is due already (one marked old is), `INT64_MAX` if none ever will (nothing idle, or no
/// `keep_ns` and no `life_ns`). `weir_pool_evict` at `now` plus this removes
/// at least one, so one timer armed with it replaces polling. It only
/// reads: `now` does not move the pool's clock. `INT64_MAX` for a NULL pool.
#[no_mangle]
pub extern "C" fn weir_pool_next_expiry(pool: *const weir_pool, now: i64) -> i64 {
    on(pool, i64::MAX, |pool| pool.lock().next_expiry(now))
}

/// Writes the pool's running totals to `*out`. `WEIR_ERR_NULL` if `pool`
/// or `out` is NULL, `WEIR_ERR_MISALIGNED` if `out` is misaligned; `*out`
/// is written only on success.
#[no_mangle]
pub extern "C" fn weir_pool_read_stats(
    pool: *const weir_pool,
    out: *mut weir_pool_stats,
) -> weir_status {
    status_on(pool, |pool| {
        let counters = pool.lock().stats();
        write_out(out, counters.into())
    })
}

/// Turns counting on for a pool: from this call on, `weir_pool_read_counts`
/// reports what it decided. Call it right after `weir_pool_new` to count
/// everything since the handle was made; a second call changes nothing. Until
/// then the handle costs what it did before counting existed (see `weir_counts`
/// for what counting costs). `WEIR_ERR_NULL` for a NULL handle,
/// `WEIR_ERR_MISALIGNED` for one no handle can be at, `WEIR_ERR_POISONED` for a
/// poisoned one.
#[no_mangle]
pub extern "C" fn weir_pool_start_counting(pool: *const weir_pool) -> weir_status {
    start_counting(pool)
}

/// Writes to `*out` what a pool decided since `weir_pool_start_counting`. A
/// reading: it changes nothing. `admitted`: takes answered READY or MAKE;
/// `refused`: takes answered WAIT; `errors`: made, give, drop and unmade calls
/// that answered an error; `units`: equal to `admitted`. STALE takes are not
/// decisions (the caller takes again) and count nowhere here. `weir_pool_stats`
/// counts READY (`reused`) and WAIT (`waits`) too, since the pool was made and
/// whether or not it counts; these counts add MAKE admissions and errors, from
/// `weir_pool_start_counting` on.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_pool_read_counts(
    pool: *const weir_pool,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(pool, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::weir_status::WEIR_OK;

    #[test]
    fn heap_per_handle_is_as_the_header_says() {
        let mut pool = std::ptr::null_mut();
        assert_eq!(weir_pool_new(std::ptr::null(), &mut pool), WEIR_OK);
        let handle = core::mem::size_of::<weir_pool>();
        let heap = handle + on(pool, 0, |p| p.lock().heap_bytes());
        // "about 280 bytes, plus 24 per table slot and per idle place;
        // about 1.3 KiB for the preset" (64-bit).
        if cfg!(target_pointer_width = "64") {
            assert!((260..=300).contains(&handle), "{handle}");
            assert_eq!(heap - handle, (32 + 10) * 24);
            assert!((1250..=1400).contains(&heap), "{heap}");
        }
        weir_pool_free(pool);
    }

    #[test]
    fn a_heap_pool_grows_its_store_and_keeps_its_items() {
        let small = weir_pool_policy {
            size: 2,
            ..weir_pool_policy_preset()
        };
        let mut pool = std::ptr::null_mut();
        assert_eq!(weir_pool_new(&small, &mut pool), WEIR_OK);
        for item in [7, 9] {
            assert_eq!(weir_pool_take(pool, 0).kind, WEIR_POOL_TAKEN_MAKE);
            assert_eq!(weir_pool_made(pool, item, 0), WEIR_OK);
        }
        let mut kept = false;
        assert_eq!(weir_pool_give(pool, 7, 1, &mut kept), WEIR_OK);
        let large = weir_pool_policy { size: 300, ..small };
        let before = on(pool, 0, |p| p.lock().heap_bytes());
        assert_eq!(weir_pool_reconfigure(pool, &large), WEIR_OK);
        let after = on(pool, 0, |p| p.lock().heap_bytes());
        assert!(after > before, "{before} -> {after}");
        assert_eq!((weir_pool_live(pool), weir_pool_idle(pool)), (2, 1));
        assert_eq!(weir_pool_give(pool, 9, 2, &mut kept), WEIR_OK);
        assert!(kept);
        assert_eq!(weir_pool_take(pool, 3).item, 9);
        assert_eq!(weir_pool_take(pool, 3).item, 7);
        assert_eq!(weir_pool_take(pool, 3).kind, WEIR_POOL_TAKEN_MAKE);
        // Back to the small limits: the store is kept, the items too.
        assert_eq!(weir_pool_reconfigure(pool, &small), WEIR_OK);
        assert_eq!(on(pool, 0, |p| p.lock().heap_bytes()), after);
        assert_eq!(weir_pool_live(pool), 3);
        assert_eq!(weir_pool_unmade(pool), WEIR_OK);
        assert_eq!(weir_pool_take(pool, 4).kind, WEIR_POOL_TAKEN_WAIT);
        let bad = weir_pool_policy { idle: -1, ..large };
        assert_eq!(
            weir_pool_reconfigure(pool, &bad),
            weir_status::of(weir_core::pool::PoolPolicyError::Idle.code())
        );
        assert_eq!(
            weir_pool_reconfigure(std::ptr::null_mut(), &small),
            weir_status::WEIR_ERR_NULL
        );
        weir_pool_free(pool);
    }
}
