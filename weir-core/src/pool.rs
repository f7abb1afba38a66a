//! The bookkeeping of a pool of resources: which to hand out, when to make
//! another, when to wait, and which have sat or lived long enough to close.
//!
//! The pool never opens, closes, sleeps or waits. It knows resources only by
//! an identity (`usize`: a pointer, a file descriptor, a handle) and tells
//! the caller what to do with them; the caller does it. Time is the caller's
//! `now` in nanoseconds, and only differences matter.
//!
//! Three promises shape it:
//! - **Newest first.** The resource returned most recently is lent first: it
//!   is the likeliest to still be good, and the oldest are left to age past
//!   `keep` and be evicted, which is how a pool shrinks after a burst.
//! - **Never lost.** An idle resource too old to lend comes back from
//!   [`Pool::take`] as [`PoolTaken::Stale`] for the caller to close, whether or
//!   not the eviction timer has run; [`Pool::evict`] and [`Pool::close`] hand
//!   back every resource they remove; `give` says when it did not keep one.
//! - **Never younger than it is.** Each lent resource is found again by its
//!   identity when it comes back, so it keeps the birth it was made with and
//!   `life` retires it however often it has been reused.
//!
//! Every resource the pool knows (idle or lent) sits in an open-addressing
//! table sized once from `size`, so a lookup is O(1) and no operation
//! allocates after construction. The table and the idle stack live in one
//! store of [`PoolSlot`]s that the caller chooses (see [`crate::store`]):
//! the `Vec` [`Pool::new`] allocates, or a slice or an array of
//! [`store_len`] slots handed to [`Pool::new_in`], with no allocator at
//! all. The same code runs over each.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::store::Slots;
use crate::time::{after, NEVER};

/// The largest `size` a pool accepts: 2^24 resources.
pub const MAX_SIZE: i64 = 1 << 24;

/// The limits a pool holds itself to. Durations are nanoseconds; a zero
/// `keep_ns` or `life_ns` means no limit. The last three fields are zero in
/// the preset, which is the pool as it was before they existed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoolPolicy {
    /// The most resources alive at once: idle, lent and being made.
    pub size: i64,
    /// The most kept idle; above `size` it counts as `size`.
    pub idle: i64,
    /// How long a resource may sit idle before it is closed (0: for ever).
    pub keep_ns: i64,
    /// How long a resource may live from its making (0: for ever).
    pub life_ns: i64,
    /// The most a resource's life may be shortened by the caller's draw in
    /// [`Pool::made_jittered`], as a fraction of `life_ns` in 0..=1 (0: every
    /// resource lives exactly `life_ns`), so that resources made together
    /// do not all retire together.
    pub life_jitter: f64,
    /// How many idle resources [`Pool::make_ahead`] keeps ready (0: none
    /// made ahead); above the idle cap it counts as the idle cap.
    pub min_idle: i64,
    /// The most resources being made at once (0: up to `size`): past it
    /// `take` answers `Wait` rather than `Make`.
    pub max_making: i64,
}

impl PoolPolicy {
    /// Ten live, ten idle, closed after thirty minutes idle, no maximum age:
    /// the default pool size of HikariCP and Go's `database/sql`, with idle
    /// equal to size as `database/sql` keeps it, so a pool that grew under
    /// load does not throw its resources away at once.
    pub const PRESET: PoolPolicy = PoolPolicy {
        size: 10,
        idle: 10,
        keep_ns: 30 * 60 * crate::time::SECOND,
        life_ns: 0,
        life_jitter: 0.0,
        min_idle: 0,
        max_making: 0,
    };
    /// The limits, if a pool accepts them: the error of the first wrong
    /// field in field order otherwise (as [`Pool::new`] and
    /// [`Pool::new_in`] refuse them).
    pub fn check(self) -> Result<PoolPolicy, PoolPolicyError> {
        let faults = [
            (!(1..=MAX_SIZE).contains(&self.size), PoolPolicyError::Size),
            (self.idle < 0, PoolPolicyError::Idle),
            (self.keep_ns < 0, PoolPolicyError::Keep),
            (self.life_ns < 0, PoolPolicyError::Life),
            (
                !(0.0..=1.0).contains(&self.life_jitter),
                PoolPolicyError::Jitter,
            ),
            (self.min_idle < 0, PoolPolicyError::MinIdle),
            (self.max_making < 0, PoolPolicyError::MaxMaking),
        ];
        match faults.iter().find(|(failed, _)| *failed) {
            Some(&(_, fault)) => Err(fault),
            None => Ok(self),
        }
    }

    /// How many [`PoolSlot`]s a pool with these limits needs in its store:
    /// [`store_len`]`(size, idle)`.
    pub const fn store_len(&self) -> usize {
        store_len(self.size, self.idle)
    }
}

impl Default for PoolPolicy {
    fn default() -> PoolPolicy {
        PoolPolicy::PRESET
    }
}

/// Why limits were refused: the field that is wrong, checked in field
/// order (size, idle, keep, life, jitter, min idle, max making).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolPolicyError {
    /// `size` is outside 1..=[`MAX_SIZE`]: zero (such a pool could never
    /// lend anything), negative, or too large.
    Size,
    /// `idle` is negative.
    Idle,
    /// `keep_ns` is negative.
    Keep,
    /// `life_ns` is negative.
    Life,
    /// `life_jitter` is not in 0..=1 (NaN included).
    Jitter,
    /// `min_idle` is negative.
    MinIdle,
    /// `max_making` is negative.
    MaxMaking,
    /// The table for `size` resources could not be allocated.
    NoMemory,
}

impl PoolPolicyError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            PoolPolicyError::Size => 204,
            PoolPolicyError::Idle => 205,
            PoolPolicyError::Keep => 206,
            PoolPolicyError::Life => 207,
            PoolPolicyError::Jitter => 220,
            PoolPolicyError::MinIdle => 221,
            PoolPolicyError::MaxMaking => 222,
            PoolPolicyError::NoMemory => 6,
        }
    }
}

/// What [`Pool::take`] answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolTaken {
    /// An idle resource, now lent to the caller.
    Ready(usize),
    /// An idle resource past `keep` or `life`: already out of the pool and
    /// its count. The caller closes it and takes again.
    Stale(usize),
    /// Nothing idle but room for one more: room is reserved. The caller
    /// makes one and reports it with [`Pool::made`] (or [`Pool::give`] /
    /// [`Pool::drop_item`] it unregistered), or reports failure with
    /// [`Pool::unmade`].
    Make,
    /// Nothing idle and no room, or `max_making` already being made: the
    /// caller's own queue decides what next. A closed pool always answers
    /// this.
    Wait,
}

/// A call the pool refused because it would have miscounted. Nothing
/// changes when one is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolMisuse {
    /// The item is idle in the pool, not lent (`give` or `drop_item` of it).
    Idle,
    /// The pool never lent the item and no reservation is open to take it
    /// (`give` or `drop_item`).
    NotLent,
    /// No reservation is open (`made` or `unmade` without a `Make`).
    NoReservation,
    /// `made` with an item the pool already holds, idle or lent.
    Known,
}

impl PoolMisuse {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            PoolMisuse::Idle => 200,
            PoolMisuse::NotLent => 201,
            PoolMisuse::NoReservation => 202,
            PoolMisuse::Known => 203,
        }
    }
}

/// Running totals since the pool was made, for a dashboard (modelled on Go's
/// `database/sql` DBStats). Every resource made ends up counted once in
/// `stale`, `evicted_idle`, `evicted_age`, `dropped`, `refused`, `closed`
/// or `retired`, or is still idle or lent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// By `made`, or an unknown item given or dropped into a reservation.
    pub made: u64,
    /// `Ready` answers.
    pub reused: u64,
    /// `Stale` answers.
    pub stale: u64,
    /// Removed by `evict` for idleness.
    pub evicted_idle: u64,
    /// Removed by `evict` for age only, or not kept by `give` for age.
    pub evicted_age: u64,
    /// Reported broken with `drop_item`.
    pub dropped: u64,
    /// Not kept by `give`: enough were idle.
    pub refused: u64,
    /// `Wait` answers.
    pub waits: u64,
    /// Reservations released by `unmade`.
    pub unmade: u64,
    /// Handed back by `close`, or not kept by a `give` after it.
    pub closed: u64,
    /// Marked old by [`Pool::mark_old`], then removed by `evict` or not kept
    /// by `give` (an old one a `take` meets counts in `stale`).
    pub retired: u64,
}

/// An idle resource: its identity, when it was made, since when it is idle.
#[derive(Clone, Copy, Debug)]
struct Idle {
    item: usize,
    birth: i64,
    since: i64,
}

/// Why an idle resource is due to be closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Due {
    Idle,
    Age,
    Old,
}

/// A table slot's state (a [`PoolSlot`]'s `mark` in the table).
const EMPTY: i64 = 0;
const LENT: i64 = 1;
const IDLE: i64 = 2;
/// Lent before the latest [`Pool::mark_old`]: not kept when it comes back.
const LENT_OLD: i64 = 3;
/// Added to a table slot's mark while [`Pool::reconfigure`] moves the
/// table in place: the entry is not yet in its new place.
const PENDING: i64 = 4;

/// One slot of a pool's store (see [`crate::store`]): a place in its table
/// of the resources it knows, or a place on its stack of idle ones. A
/// fresh slot is `PoolSlot::default()`; what a slot holds is the pool's
/// business, and [`Pool::new_in`] overwrites the slots it uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolSlot {
    item: usize,
    birth: i64,
    /// In the table: the slot's state (`EMPTY`, `LENT`, ...); on the idle
    /// stack: since when the resource is idle.
    mark: i64,
}

/// The table's slot count for `size` resources (1..=[`MAX_SIZE`]): the
/// power of two at least twice it, so the table is never more than half
/// full and a probe always ends.
const fn table_len(size: usize) -> usize {
    (size * 2).next_power_of_two()
}

/// How many [`PoolSlot`]s a pool of `size` resources keeping at most
/// `idle` idle needs in its store ([`Pool::new_in`]): a table of the power
/// of two at least `2 × size`, then `min(idle, size)` idle places. A
/// `size` outside 1..=[`MAX_SIZE`] counts as the nearest end of that range
/// and a negative `idle` as 0 (`new_in` refuses such a policy anyway). A
/// `const fn`, so that it can size an array: a pool with the preset holds
/// its 42 slots in `[PoolSlot; store_len(10, 10)]`.
pub const fn store_len(size: i64, idle: i64) -> usize {
    let size = if size < 1 {
        1
    } else if size > MAX_SIZE {
        MAX_SIZE
    } else {
        size
    };
    let idle = if idle < 0 {
        0
    } else if idle > size {
        size
    } else {
        idle
    };
    // Both fit: 1 <= size <= 2^24 and 0 <= idle <= size.
    table_len(size as usize) + idle as usize
}

// Every resource the pool knows, by identity, sits in the first slots of
// its store: an open-addressing table with linear probing and
// backward-shift deletion (no tombstones), its length a power of two (see
// `table_len`). `shift` is 64 minus log2 of that length: a hash's top bits
// pick the slot.

/// The slot an item's probe starts at (Fibonacci hashing: spreads aligned
/// pointers and consecutive descriptors alike).
#[inline]
fn home(shift: u32, item: usize) -> usize {
    ((item as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

/// The slot holding `item` in the table (the first `mask + 1` of
/// `table`), if any.
#[inline]
fn find(table: &[PoolSlot], mask: usize, shift: u32, item: usize) -> Option<usize> {
    let mut slot = home(shift, item);
    loop {
        let entry = &table[slot];
        match entry.mark {
            EMPTY => return None,
            _ if entry.item == item => return Some(slot),
            _ => slot = (slot + 1) & mask,
        }
    }
}

/// Puts an item the table (the first `mask + 1` of `table`) does not
/// hold; returns its slot.
fn insert(
    table: &mut [PoolSlot],
    (mask, shift): (usize, u32),
    item: usize,
    birth: i64,
    tag: i64,
) -> usize {
    let mut slot = home(shift, item);
    while table[slot].mark != EMPTY {
        slot = (slot + 1) & mask;
    }
    table[slot] = PoolSlot {
        item,
        birth,
        mark: tag,
    };
    slot
}

/// Empties `slot` of the table (the first `mask + 1` of `table`),
/// shifting back the entries after it whose probe passed through it so
/// that every lookup still finds them.
fn remove(table: &mut [PoolSlot], mask: usize, shift: u32, mut slot: usize) {
    let mut next = slot;
    loop {
        table[slot].mark = EMPTY;
        loop {
            next = (next + 1) & mask;
            if table[next].mark == EMPTY {
                return;
            }
            // An entry may move back to `slot` unless its home lies
            // cyclically in (slot, next].
            let home = home(shift, table[next].item);
            let stays = if slot <= next {
                slot < home && home <= next
            } else {
                slot < home || home <= next
            };
            if !stays {
                break;
            }
        }
        table[slot] = table[next];
        slot = next;
    }
}

/// A pool's bookkeeping, over a store `S` of [`PoolSlot`]s (a `Vec` by
/// default; see [`crate::store`] and [`store_len`]). Not synchronised:
/// share it behind a lock (the C handle does).
#[derive(Debug)]
pub struct Pool<#[cfg(feature = "alloc")] S = Vec<PoolSlot>, #[cfg(not(feature = "alloc"))] S> {
    size: usize,
    /// The most kept idle: `min(limits.idle, size)`.
    idle_cap: usize,
    keep_ns: i64,
    life_ns: i64,
    /// The most a draw shortens a life: `life_jitter × life_ns`, rounded
    /// down, below `life_ns`.
    jitter_ns: i64,
    /// `min(limits.min_idle, idle_cap)`.
    min_idle: usize,
    /// The most reservations open at once: `max_making`, or `size` for 0.
    max_making: usize,
    /// The table's slots, then `idle_cap` idle places: idle resources,
    /// oldest-returned at the bottom, newest on top, `idle_len` of them.
    store: S,
    /// The table's length (a power of two) and its hash's shift.
    table_len: usize,
    shift: u32,
    idle_len: usize,
    /// How many at the bottom of the idle stack were there at the latest
    /// `mark_old`: nothing is pushed below them, so they stay the bottom.
    old_idle: usize,
    lent: usize,
    reserved: usize,
    /// The latest `now` seen: an earlier one counts as this one.
    latest: i64,
    /// Set by `close`: nothing more is made or kept.
    closed: bool,
    counters: PoolStats,
}

/// The limits as a pool holds them (checked already): each field with its
/// caps applied, as [`Pool::new_in`] and [`Pool::reconfigure`] set them.
struct Limits {
    size: usize,
    idle_cap: usize,
    jitter_ns: i64,
    min_idle: usize,
    max_making: usize,
}

impl Limits {
    fn of(limits: PoolPolicy) -> Limits {
        // Fits: 0 < size <= 2^24.
        let size = limits.size as usize;
        let idle_cap = limits.idle.min(size as i64) as usize;
        let life_ns = limits.life_ns;
        // Rounded down and kept below `life_ns` (0 without a life), so a
        // jittered resource still lives at least 1 ns.
        let jitter_ns =
            ((life_ns as f64 * limits.life_jitter) as i64).min(life_ns.saturating_sub(1));
        let max_making = match limits.max_making {
            0 => size,
            m => m.min(size as i64) as usize,
        };
        Limits {
            size,
            idle_cap,
            jitter_ns: jitter_ns.max(0),
            min_idle: limits.min_idle.min(idle_cap as i64) as usize,
            max_making,
        }
    }
}

#[cfg(feature = "alloc")]
impl Pool {
    /// An empty pool, every allocation it will ever make done here: one
    /// `Vec` of [`store_len`] slots, over which [`Pool::new_in`] runs.
    ///
    /// A `size` outside 1..=[`MAX_SIZE`] is refused, and so is a negative
    /// `idle`, `keep_ns`, `life_ns`, `min_idle` or `max_making`, and a
    /// `life_jitter` outside 0..=1, each with its own error (the first wrong
    /// field in that order); an `idle` above `size` counts as `size`, a
    /// `min_idle` above that as it, a `max_making` above `size` as `size`;
    /// an `idle` of zero keeps nothing (every `give` answers "not kept").
    pub fn new(limits: PoolPolicy) -> Result<Pool, PoolPolicyError> {
        let limits = limits.check()?;
        let len = store_len(limits.size, limits.idle);
        let mut store = Vec::new();
        store
            .try_reserve_exact(len)
            .map_err(|_| PoolPolicyError::NoMemory)?;
        store.resize(len, PoolSlot::default());
        Pool::new_in(limits, store)
    }
}

impl<S: Slots<PoolSlot>> Pool<S> {
    /// An empty pool over the caller's store, which holds at least
    /// [`store_len`]`(size, idle)` slots (the first that many are
    /// overwritten; any after them are left alone): a fixed array, a
    /// borrowed slice, memory a C caller handed over. The limits are
    /// checked as [`Pool::new`] checks them; a store with fewer slots is
    /// [`PoolPolicyError::NoMemory`]. Nothing afterwards allocates.
    pub fn new_in(limits: PoolPolicy, mut store: S) -> Result<Pool<S>, PoolPolicyError> {
        let limits = limits.check()?;
        let PoolPolicy {
            size,
            idle,
            keep_ns,
            life_ns,
            ..
        } = limits;
        let len = store_len(size, idle);
        let slots = store.as_mut();
        if slots.len() < len {
            return Err(PoolPolicyError::NoMemory);
        }
        slots[..len].fill(PoolSlot::default());
        let limits = Limits::of(limits);
        let table_len = table_len(limits.size);
        Ok(Pool {
            size: limits.size,
            idle_cap: limits.idle_cap,
            keep_ns,
            life_ns,
            jitter_ns: limits.jitter_ns,
            min_idle: limits.min_idle,
            max_making: limits.max_making,
            store,
            table_len,
            shift: 64 - table_len.trailing_zeros(),
            idle_len: 0,
            old_idle: 0,
            lent: 0,
            reserved: 0,
            latest: i64::MIN,
            closed: false,
            counters: PoolStats::default(),
        })
    }

    /// The pool with its slots moved to another store: `rehome` gets the
    /// store and must answer one holding the same slots, in the same order
    /// (a `Vec` turned into a boxed slice, say). Nothing else changes.
    pub fn map_store<T: Slots<PoolSlot>>(self, rehome: impl FnOnce(S) -> T) -> Pool<T> {
        Pool {
            size: self.size,
            idle_cap: self.idle_cap,
            keep_ns: self.keep_ns,
            life_ns: self.life_ns,
            jitter_ns: self.jitter_ns,
            min_idle: self.min_idle,
            max_making: self.max_making,
            store: rehome(self.store),
            table_len: self.table_len,
            shift: self.shift,
            idle_len: self.idle_len,
            old_idle: self.old_idle,
            lent: self.lent,
            reserved: self.reserved,
            latest: self.latest,
            closed: self.closed,
            counters: self.counters,
        }
    }

    /// The store the pool's slots are in.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The table's length and the idle places this pool needs to hold
    /// `limits` with the resources it holds now: the power of two at least
    /// twice the larger of the new size and the resources live (idle, lent
    /// and being made), then the larger of the new idle cap and the
    /// resources idle.
    fn layout(&self, limits: &Limits) -> (usize, usize) {
        (
            table_len(limits.size.max(self.live())),
            limits.idle_cap.max(self.idle_len),
        )
    }

    /// How many slots a store needs for this pool to take `limits` now
    /// ([`Pool::reconfigure`] in its own store, [`Pool::reconfigure_into`]
    /// in another): [`store_len`] of the new limits, or more while more
    /// resources are live or idle than they allow. The limits are checked
    /// as [`Pool::new`] checks them.
    pub fn store_len_for(&self, limits: PoolPolicy) -> Result<usize, PoolPolicyError> {
        let (table, places) = self.layout(&Limits::of(limits.check()?));
        Ok(table + places)
    }

    /// Takes new limits in place, in the same store, from the next call on.
    /// Checked as [`Pool::new`] checks them, and a store with fewer slots
    /// than [`Pool::store_len_for`] answers is [`PoolPolicyError::NoMemory`]:
    /// an error changes nothing.
    ///
    /// Kept: every resource it holds, idle or lent, with its birth, its idle
    /// clock and its mark of [`Pool::mark_old`]; the reservations open; the
    /// newest-first order of the idle ones; the clock, the running totals and
    /// whether it is closed. More live than the new `size`: none is taken
    /// away (the caller holds them), and `take` answers `Wait` rather than
    /// `Make` until fewer than `size` are live; more idle than the new idle
    /// cap: they stay idle, lent first, and `give` keeps nothing until fewer
    /// than the cap are idle. The new `keep_ns` and `life_ns` judge every
    /// resource from its own idle clock and birth from the next call; the
    /// new `life_jitter` shortens the lives of resources made from then on.
    /// So across the change the live resources are never more than the
    /// larger of those live at the change and the new `size`.
    pub fn reconfigure(&mut self, limits: PoolPolicy) -> Result<(), PoolPolicyError> {
        let checked = limits.check()?;
        let held = Limits::of(checked);
        let (table, places) = self.layout(&held);
        if self.store.as_ref().len() < table + places {
            return Err(PoolPolicyError::NoMemory);
        }
        if table != self.table_len {
            self.relay(table);
        }
        self.hold(checked, held);
        Ok(())
    }

    /// [`Pool::reconfigure`] into another store of at least
    /// [`Pool::store_len_for`] slots (a larger one, for limits this store
    /// cannot hold): everything [`Pool::reconfigure`] keeps is moved into
    /// it. This pool is left as it was. Errors as [`Pool::reconfigure`]'s.
    pub fn reconfigure_into<T: Slots<PoolSlot>>(
        &self,
        limits: PoolPolicy,
        mut store: T,
    ) -> Result<Pool<T>, PoolPolicyError> {
        let checked = limits.check()?;
        let held = Limits::of(checked);
        let (table, places) = self.layout(&held);
        let slots = store.as_mut();
        if slots.len() < table + places {
            return Err(PoolPolicyError::NoMemory);
        }
        slots[..table].fill(PoolSlot::default());
        let shift = 64 - table.trailing_zeros();
        let old = self.store.as_ref();
        for entry in old[..self.table_len].iter().filter(|e| e.mark != EMPTY) {
            insert(
                slots,
                (table - 1, shift),
                entry.item,
                entry.birth,
                entry.mark,
            );
        }
        let idle = self.table_len..self.table_len + self.idle_len;
        slots[table..table + self.idle_len].copy_from_slice(&old[idle]);
        let mut moved = Pool {
            size: self.size,
            idle_cap: self.idle_cap,
            keep_ns: self.keep_ns,
            life_ns: self.life_ns,
            jitter_ns: self.jitter_ns,
            min_idle: self.min_idle,
            max_making: self.max_making,
            store,
            table_len: table,
            shift,
            idle_len: self.idle_len,
            old_idle: self.old_idle,
            lent: self.lent,
            reserved: self.reserved,
            latest: self.latest,
            closed: self.closed,
            counters: self.counters,
        };
        moved.hold(checked, held);
        Ok(moved)
    }

    /// Sets the limits (checked, and as held) in force from the next call.
    fn hold(&mut self, limits: PoolPolicy, held: Limits) {
        self.size = held.size;
        self.idle_cap = held.idle_cap;
        self.keep_ns = limits.keep_ns;
        self.life_ns = limits.life_ns;
        self.jitter_ns = held.jitter_ns;
        self.min_idle = held.min_idle;
        self.max_making = held.max_making;
    }

    /// Lays the table out again at length `table` in the same store, with
    /// the idle stack after it: every entry to the front, marked
    /// [`PENDING`]; the idle stack to its new place; then each pending entry
    /// to the first slot of its probe that is empty or pending, swapping
    /// with a pending one there, so that an entry once placed never moves
    /// and every probe that passes it still finds what lies beyond.
    /// The store holds at least `table` plus the idle places, and `table`
    /// is more than the entries.
    fn relay(&mut self, table: usize) {
        let (old, idle) = (self.table_len, self.idle_len);
        let slots = self.store.as_mut();
        let mut entries = 0;
        for at in 0..old {
            let entry = slots[at];
            if entry.mark != EMPTY {
                slots[entries] = PoolSlot {
                    mark: entry.mark + PENDING,
                    ..entry
                };
                entries += 1;
            }
        }
        // `entries < table`, so the table's front does not reach the stack.
        slots.copy_within(old..old + idle, table);
        slots[entries..table].fill(PoolSlot::default());
        let (mask, shift) = (table - 1, 64 - table.trailing_zeros());
        for at in 0..entries {
            while slots[at].mark > PENDING {
                let entry = slots[at];
                let mut to = home(shift, entry.item);
                while to != at && (EMPTY + 1..=LENT_OLD).contains(&slots[to].mark) {
                    to = (to + 1) & mask;
                }
                let placed = PoolSlot {
                    mark: entry.mark - PENDING,
                    ..entry
                };
                if to == at {
                    slots[at] = placed;
                } else if slots[to].mark == EMPTY {
                    slots[to] = placed;
                    slots[at] = PoolSlot::default();
                } else {
                    slots[at] = slots[to];
                    slots[to] = placed;
                }
            }
        }
        self.table_len = table;
        self.shift = shift;
    }

    /// The table: the store's first `table_len` slots. (The hot paths
    /// index the store itself, the table's mask keeping them inside.)
    #[inline]
    fn table_mut(&mut self) -> &mut [PoolSlot] {
        let len = self.table_len;
        &mut self.store.as_mut()[..len]
    }

    #[inline]
    fn find(&self, item: usize) -> Option<usize> {
        find(self.store.as_ref(), self.table_len - 1, self.shift, item)
    }

    #[inline]
    fn insert(&mut self, item: usize, birth: i64, tag: i64) -> usize {
        let at = (self.table_len - 1, self.shift);
        insert(self.store.as_mut(), at, item, birth, tag)
    }

    #[inline]
    fn remove(&mut self, slot: usize) {
        let (mask, shift) = (self.table_len - 1, self.shift);
        remove(self.store.as_mut(), mask, shift, slot)
    }

    /// The idle stack's entry `at` (0: the bottom).
    #[inline]
    fn idle_at(&self, at: usize) -> Idle {
        let slot = self.store.as_ref()[self.table_len + at];
        Idle {
            item: slot.item,
            birth: slot.birth,
            since: slot.mark,
        }
    }

    #[inline]
    fn set_idle(&mut self, at: usize, idle: Idle) {
        let at = self.table_len + at;
        self.store.as_mut()[at] = PoolSlot {
            item: idle.item,
            birth: idle.birth,
            mark: idle.since,
        };
    }

    /// Takes the top of the idle stack off.
    #[inline]
    fn pop_idle(&mut self) -> Option<Idle> {
        let top = self.idle_len.checked_sub(1)?;
        self.idle_len = top;
        Some(self.idle_at(top))
    }

    /// The pool's clock at `now`: `now`, or the latest seen if that is
    /// later. Only reads; [`Pool::commit_clock`] moves it, once a call knows
    /// it will succeed, so a refused call leaves the clock where it was.
    #[inline]
    fn clock(&self, now: i64) -> i64 {
        self.latest.max(now)
    }

    /// Moves the pool's clock to `now` (already [`Pool::clock`]ed).
    #[inline]
    fn commit_clock(&mut self, now: i64) {
        self.latest = now;
    }

    /// The instant an idle resource becomes due, if it ever does.
    fn expiry(&self, idle: &Idle) -> Option<i64> {
        let keep = (self.keep_ns > 0).then(|| after(idle.since, self.keep_ns));
        let life = (self.life_ns > 0).then(|| after(idle.birth, self.life_ns));
        match (keep, life) {
            (Some(keep), Some(life)) => Some(keep.min(life)),
            (keep, life) => keep.or(life),
        }
    }

    /// Whether an idle resource is due at `now`, and why: idleness first
    /// when both apply. Due means its expiry instant is at or before `now`.
    #[inline]
    fn due(&self, idle: &Idle, now: i64) -> Option<Due> {
        if self.keep_ns > 0 && after(idle.since, self.keep_ns) <= now {
            Some(Due::Idle)
        } else if self.too_old(idle.birth, now) {
            Some(Due::Age)
        } else {
            None
        }
    }

    #[inline]
    fn too_old(&self, birth: i64, now: i64) -> bool {
        self.life_ns > 0 && after(birth, self.life_ns) <= now
    }

    /// Lends the newest idle resource, hands back a stale one, reserves room
    /// for one more, or says to wait.
    ///
    /// The newest idle resource is looked at first; if it is past `keep` or
    /// `life` it comes back as [`PoolTaken::Stale`], already out of the pool,
    /// and the caller closes it and takes again.
    #[inline]
    pub fn take(&mut self, now: i64) -> PoolTaken {
        let now = self.clock(now);
        self.commit_clock(now);
        if self.closed {
            self.counters.waits += 1;
            return PoolTaken::Wait;
        }
        if let Some(top) = self.pop_idle() {
            let slot = self.find(top.item);
            let old = self.idle_len < self.old_idle;
            if old || self.due(&top, now).is_some() {
                self.old_idle = self.old_idle.min(self.idle_len);
                if let Some(slot) = slot {
                    self.remove(slot);
                }
                self.counters.stale += 1;
                return PoolTaken::Stale(top.item);
            }
            if let Some(slot) = slot {
                self.store.as_mut()[slot].mark = LENT;
            }
            self.lent += 1;
            self.counters.reused += 1;
            return PoolTaken::Ready(top.item);
        }
        if self.live() < self.size && self.reserved < self.max_making {
            self.reserved += 1;
            PoolTaken::Make
        } else {
            self.counters.waits += 1;
            PoolTaken::Wait
        }
    }

    /// Registers a resource made after [`PoolTaken::Make`], as lent and born at
    /// `now`; it fills the reservation. On an error nothing changes, the
    /// clock included.
    pub fn made(&mut self, item: usize, now: i64) -> Result<(), PoolMisuse> {
        self.made_jittered(item, now, 0)
    }

    /// [`Pool::made`], with the resource's life shortened by `draw`'s share
    /// of the most the policy allows: by `⌊jitter_ns × draw / 2^64⌋`
    /// nanoseconds, where `jitter_ns = ⌊life_jitter × life_ns⌋` (kept below
    /// `life_ns`). The caller draws `draw` uniformly from all 64-bit values
    /// (its own generator: the pool has no dice); a `draw` of 0, no
    /// `life_ns` or no `life_jitter` shortens nothing. On an error nothing
    /// changes, the clock included.
    pub fn made_jittered(&mut self, item: usize, now: i64, draw: u64) -> Result<(), PoolMisuse> {
        let now = self.clock(now);
        if self.find(item).is_some() {
            return Err(PoolMisuse::Known);
        }
        if self.reserved == 0 {
            return Err(PoolMisuse::NoReservation);
        }
        self.commit_clock(now);
        self.reserved -= 1;
        let cut = ((self.jitter_ns as u128 * draw as u128) >> 64) as i64;
        // A resource's life is checked from its birth, so a shorter life is
        // an earlier birth.
        self.insert(item, now.saturating_sub(cut), LENT);
        self.lent += 1;
        self.counters.made += 1;
        Ok(())
    }

    /// Releases a reservation whose make failed, so a failing factory does
    /// not shrink the pool for good.
    pub fn unmade(&mut self) -> Result<(), PoolMisuse> {
        if self.reserved == 0 {
            return Err(PoolMisuse::NoReservation);
        }
        self.reserved -= 1;
        self.counters.unmade += 1;
        Ok(())
    }

    /// Takes back a lent resource; whether the pool kept it. When not, the
    /// caller closes it: enough were idle, it is past `life`, or the pool is
    /// closed.
    ///
    /// The resource keeps the birth it was lent with. An item the pool does
    /// not know, given while a reservation is open, is one made after
    /// `Make` without `made`: it fills the reservation, born at `now`. On
    /// an error nothing changes, the clock included.
    #[inline]
    pub fn give(&mut self, item: usize, now: i64) -> Result<bool, PoolMisuse> {
        let now = self.clock(now);
        let slot = match self.find(item) {
            Some(slot) if self.store.as_ref()[slot].mark == IDLE => return Err(PoolMisuse::Idle),
            Some(slot) => slot,
            None => self.register_unmade(item, now)?,
        };
        self.commit_clock(now);
        let PoolSlot {
            birth, mark: tag, ..
        } = self.store.as_ref()[slot];
        self.lent -= 1;
        let counter = if self.closed {
            &mut self.counters.closed
        } else if tag == LENT_OLD {
            &mut self.counters.retired
        } else if self.too_old(birth, now) {
            &mut self.counters.evicted_age
        } else if self.idle_len >= self.idle_cap {
            &mut self.counters.refused
        } else {
            self.store.as_mut()[slot].mark = IDLE;
            self.set_idle(
                self.idle_len,
                Idle {
                    item,
                    birth,
                    since: now,
                },
            );
            self.idle_len += 1;
            return Ok(true);
        };
        *counter += 1;
        self.remove(slot);
        Ok(false)
    }

    /// An unknown item arriving while a reservation is open fills it: it is
    /// registered as made and lent, born at `now`.
    #[inline]
    fn register_unmade(&mut self, item: usize, now: i64) -> Result<usize, PoolMisuse> {
        if self.reserved == 0 {
            return Err(PoolMisuse::NotLent);
        }
        self.reserved -= 1;
        self.lent += 1;
        self.counters.made += 1;
        Ok(self.insert(item, now, LENT))
    }

    /// Forgets a lent resource that broke and is not coming back; the caller
    /// closes it. An unknown item dropped while a reservation is open fills
    /// and ends the reservation (counted as made and dropped).
    pub fn drop_item(&mut self, item: usize) -> Result<(), PoolMisuse> {
        let slot = match self.find(item) {
            Some(slot) if self.store.as_ref()[slot].mark == IDLE => return Err(PoolMisuse::Idle),
            Some(slot) => slot,
            None => {
                let now = self.latest;
                self.register_unmade(item, now)?
            }
        };
        self.remove(slot);
        self.lent -= 1;
        self.counters.dropped += 1;
        Ok(())
    }

    /// Removes the idle resources due at `now` (past `keep` or `life`),
    /// oldest first, passing at most `cap` of them to `put` for the caller to
    /// close. Returns how many it passed (at most `cap`); when that is `cap`,
    /// more may be due and stay idle for the next call.
    pub fn evict_with(&mut self, now: i64, cap: usize, mut put: impl FnMut(usize)) -> usize {
        let now = self.clock(now);
        self.commit_clock(now);
        let (mut written, mut kept, mut old_kept) = (0, 0, 0);
        for at in 0..self.idle_len {
            let idle = self.idle_at(at);
            let old = at < self.old_idle;
            if written < cap {
                let why = if old {
                    Some(Due::Old)
                } else {
                    self.due(&idle, now)
                };
                if let Some(why) = why {
                    written += 1;
                    self.forget(idle.item);
                    *match why {
                        Due::Idle => &mut self.counters.evicted_idle,
                        Due::Age => &mut self.counters.evicted_age,
                        Due::Old => &mut self.counters.retired,
                    } += 1;
                    put(idle.item);
                    continue;
                }
            }
            self.set_idle(kept, idle);
            kept += 1;
            old_kept += usize::from(old);
        }
        self.idle_len = kept;
        self.old_idle = old_kept;
        written
    }

    /// [`Pool::evict_with`] into a slice: the first `returned` entries are
    /// written.
    pub fn evict(&mut self, now: i64, out: &mut [usize]) -> usize {
        let mut at = 0;
        self.evict_with(now, out.len(), |item| {
            out[at] = item;
            at += 1;
        })
    }

    /// Closes the pool for shutdown and empties it: passes at most `cap` idle
    /// resources to `put`, oldest first, for the caller to close. Returns
    /// how many it passed (at most `cap`); the rest stay for the next call,
    /// so call again until [`Pool::idle`] is 0. From then on `take` answers
    /// `Wait` and `give` keeps nothing, so every lent resource comes back to
    /// its borrower to close.
    pub fn close_with(&mut self, cap: usize, mut put: impl FnMut(usize)) -> usize {
        self.closed = true;
        let written = self.idle_len.min(cap);
        for at in 0..written {
            let item = self.idle_at(at).item;
            self.forget(item);
            self.counters.closed += 1;
            put(item);
        }
        let (from, to) = (self.table_len + written, self.table_len + self.idle_len);
        self.store.as_mut().copy_within(from..to, self.table_len);
        self.idle_len -= written;
        self.old_idle = self.old_idle.saturating_sub(written);
        written
    }

    /// [`Pool::close_with`] into a slice: the first `returned` entries are
    /// written.
    pub fn close(&mut self, out: &mut [usize]) -> usize {
        let mut at = 0;
        self.close_with(out.len(), |item| {
            out[at] = item;
            at += 1;
        })
    }

    /// Removes an item from the table, if it is there.
    fn forget(&mut self, item: usize) {
        if let Some(slot) = self.find(item) {
            self.remove(slot);
        }
    }

    /// Marks every resource the pool holds now, idle or lent, as old: from
    /// here on `evict` hands back the idle ones (oldest first, before any
    /// other), `take` hands back an old one it meets as `Stale`, and `give`
    /// does not keep a lent one. Resources registered afterwards (`made`, or
    /// an unknown item given or dropped into a reservation) are new, even
    /// if their reservation was opened before. Returns how many it marked.
    /// Visits every table slot: O(size), no allocation.
    pub fn mark_old(&mut self) -> usize {
        self.old_idle = self.idle_len;
        let mut lent = 0;
        for slot in self.table_mut() {
            if slot.mark == LENT {
                slot.mark = LENT_OLD;
            }
            lent += usize::from(slot.mark == LENT_OLD);
        }
        self.old_idle + lent
    }

    /// How many resources to make ahead so that `min_idle` stay ready, and
    /// reserves room for that many, as that many `Make` answers would: the
    /// caller makes each and gives it with [`Pool::give`] (it fills a
    /// reservation and becomes idle; or `made` / `made_jittered` first and
    /// then `give`), or reports a failure with [`Pool::unmade`]. It is
    /// `min_idle` less the idle resources not marked old and the
    /// reservations already open, capped by the room left under `size` and
    /// under `max_making`; 0 when the pool is closed.
    pub fn make_ahead(&mut self) -> usize {
        if self.closed {
            return 0;
        }
        let ready = self.idle_len - self.old_idle + self.reserved;
        let wanted = self
            .min_idle
            .saturating_sub(ready)
            .min(self.size.saturating_sub(self.live()))
            .min(self.max_making.saturating_sub(self.reserved));
        self.reserved += wanted;
        wanted
    }

    /// How long from `now` until the next idle resource becomes due: 0 if
    /// one is due already (one marked old is), [`NEVER`] if none ever will
    /// (nothing idle, or no `keep` and no `life`). [`Pool::evict`] at `now`
    /// plus this removes at least one. Reads only: `now` does not move the
    /// pool's clock.
    pub fn next_expiry(&self, now: i64) -> i64 {
        let clock = self.clock(now);
        if self.old_idle > 0 {
            return 0;
        }
        let due = (0..self.idle_len).filter_map(|at| self.expiry(&self.idle_at(at)));
        match due.min() {
            None => NEVER,
            Some(at) if at <= clock => 0,
            Some(at) => at.saturating_sub(now),
        }
    }

    /// How many resources exist: idle, lent, and being made.
    pub fn live(&self) -> usize {
        self.idle_len + self.lent + self.reserved
    }

    /// How many are sitting idle.
    pub fn idle(&self) -> usize {
        self.idle_len
    }

    /// How many are lent out or being made.
    pub fn busy(&self) -> usize {
        self.lent + self.reserved
    }

    /// Whether `close` has been called.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The running totals.
    pub fn stats(&self) -> PoolStats {
        self.counters
    }

    /// The bytes of the slots in its store (all it allocated, for one that
    /// [`Pool::new`] made: [`store_len`] slots of 24 bytes on 64-bit, never
    /// changed but by [`Pool::reconfigure_into`]).
    pub fn heap_bytes(&self) -> usize {
        core::mem::size_of_val(self.store.as_ref())
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use crate::time::SECOND;

    const MINUTE: i64 = 60 * SECOND;

    fn pool(size: i64, idle: i64, keep_ns: i64, life_ns: i64) -> Pool {
        Pool::new(PoolPolicy {
            size,
            idle,
            keep_ns,
            life_ns,
            ..PoolPolicy::PRESET
        })
        .unwrap()
    }

    /// Takes MAKE and registers `item` at `now`.
    fn make(pool: &mut Pool, item: usize, now: i64) {
        assert_eq!(pool.take(now), PoolTaken::Make);
        pool.made(item, now).unwrap();
    }

    #[test]
    fn preset_is_ten_ten_thirty_minutes_no_life() {
        assert_eq!(
            PoolPolicy::default(),
            PoolPolicy {
                size: 10,
                idle: 10,
                keep_ns: 30 * MINUTE,
                life_ns: 0,
                life_jitter: 0.0,
                min_idle: 0,
                max_making: 0,
            }
        );
    }

    #[test]
    fn limits_are_validated() {
        let bad = |size, idle, keep_ns, life_ns| {
            Pool::new(PoolPolicy {
                size,
                idle,
                keep_ns,
                life_ns,
                ..PoolPolicy::PRESET
            })
            .unwrap_err()
        };
        assert_eq!(bad(-1, 1, 0, 0), PoolPolicyError::Size);
        assert_eq!(bad(1, -1, 0, 0), PoolPolicyError::Idle);
        assert_eq!(bad(1, 1, -1, 0), PoolPolicyError::Keep);
        assert_eq!(bad(1, 1, 0, i64::MIN), PoolPolicyError::Life);
        assert_eq!(bad(0, 0, 0, 0), PoolPolicyError::Size);
        assert_eq!(bad(MAX_SIZE + 1, 0, 0, 0), PoolPolicyError::Size);
        assert_eq!(bad(i64::MAX, 0, 0, 0), PoolPolicyError::Size);
        // Several wrong fields: the first in field order.
        assert_eq!(bad(0, -1, -1, -1), PoolPolicyError::Size);
        assert_eq!(bad(1, 1, -1, -1), PoolPolicyError::Keep);
        assert!(Pool::new(PoolPolicy {
            size: 1,
            idle: i64::MAX,
            keep_ns: i64::MAX,
            life_ns: i64::MAX,
            ..PoolPolicy::PRESET
        })
        .is_ok());
    }

    #[test]
    fn newest_returned_is_lent_first() {
        let mut p = pool(3, 3, 0, 0);
        for item in [1, 2, 3] {
            make(&mut p, item, 0);
        }
        for item in [1, 2, 3] {
            assert_eq!(p.give(item, 1), Ok(true));
        }
        assert_eq!(p.take(2), PoolTaken::Ready(3));
        assert_eq!(p.take(2), PoolTaken::Ready(2));
        assert_eq!(p.take(2), PoolTaken::Ready(1));
        assert_eq!(p.take(2), PoolTaken::Wait);
        assert_eq!(p.stats().reused, 3);
        assert_eq!(p.stats().waits, 1);
    }

    #[test]
    fn idle_past_keep_comes_back_stale_and_out_of_the_count() {
        let mut p = pool(2, 2, MINUTE, 0);
        make(&mut p, 7, 0);
        assert_eq!(p.give(7, 0), Ok(true));
        assert_eq!(p.take(MINUTE - 1), PoolTaken::Ready(7));
        assert_eq!(p.give(7, MINUTE), Ok(true));
        assert_eq!(p.live(), 1);
        // Idle exactly `keep`: due (the boundary is included).
        assert_eq!(p.take(2 * MINUTE), PoolTaken::Stale(7));
        assert_eq!(p.live(), 0);
        assert_eq!(p.idle(), 0);
        assert_eq!(p.stats().stale, 1);
        // The item is gone: giving it again is misuse.
        assert_eq!(p.give(7, 2 * MINUTE), Err(PoolMisuse::NotLent));
        assert_eq!(p.take(2 * MINUTE), PoolTaken::Make);
    }

    #[test]
    fn life_counts_from_birth_across_many_loans() {
        let mut p = pool(1, 1, 0, 10 * SECOND);
        make(&mut p, 9, 0);
        // Lent and returned every second: give never resets the age.
        for t in 1..10 {
            assert_eq!(p.give(9, t * SECOND), Ok(true));
            assert_eq!(p.take(t * SECOND), PoolTaken::Ready(9));
        }
        assert_eq!(p.give(9, 9 * SECOND), Ok(true));
        assert_eq!(p.take(10 * SECOND), PoolTaken::Stale(9));
        assert_eq!(p.live(), 0);
    }

    #[test]
    fn give_past_life_is_not_kept() {
        let mut p = pool(1, 1, 0, SECOND);
        make(&mut p, 4, 0);
        assert_eq!(p.give(4, SECOND), Ok(false));
        assert_eq!(p.live(), 0);
        assert_eq!(p.stats().evicted_age, 1);
    }

    #[test]
    fn reservations_fill_to_size_then_wait_and_unmade_frees_room() {
        let mut p = pool(2, 2, 0, 0);
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.take(0), PoolTaken::Wait);
        assert_eq!((p.live(), p.busy()), (2, 2));
        p.unmade().unwrap();
        assert_eq!(p.live(), 1);
        assert_eq!(p.take(0), PoolTaken::Make);
        p.unmade().unwrap();
        p.unmade().unwrap();
        assert_eq!(p.unmade(), Err(PoolMisuse::NoReservation));
        assert_eq!(p.live(), 0);
        assert_eq!(p.stats().unmade, 3);
    }

    #[test]
    fn unregistered_item_given_after_make_fills_the_reservation_born_now() {
        let mut p = pool(1, 1, 0, 10 * SECOND);
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.give(5, 4 * SECOND), Ok(true));
        assert_eq!(p.live(), 1);
        assert_eq!(p.busy(), 0);
        assert_eq!(p.stats().made, 1);
        // Born at 4 s, not at the take: still fresh at 13.9 s.
        assert_eq!(p.take(14 * SECOND - 1), PoolTaken::Ready(5));
        assert_eq!(p.give(5, 14 * SECOND - 1), Ok(true));
        assert_eq!(p.take(14 * SECOND), PoolTaken::Stale(5));
    }

    #[test]
    fn give_beyond_idle_is_not_kept() {
        let mut p = pool(3, 1, 0, 0);
        make(&mut p, 1, 0);
        make(&mut p, 2, 0);
        assert_eq!(p.give(1, 0), Ok(true));
        assert_eq!(p.give(2, 0), Ok(false));
        assert_eq!((p.live(), p.idle(), p.busy()), (1, 1, 0));
        assert_eq!(p.stats().refused, 1);
        assert_eq!(p.give(2, 0), Err(PoolMisuse::NotLent));
    }

    #[test]
    fn idle_above_size_counts_as_size_and_zero_keeps_nothing() {
        let mut p = pool(1, 5, 0, 0);
        assert_eq!(p.idle_cap, 1);
        let mut p0 = pool(1, 0, 0, 0);
        make(&mut p0, 1, 0);
        assert_eq!(p0.give(1, 0), Ok(false));
        make(&mut p, 1, 0);
        assert_eq!(p.give(1, 0), Ok(true));
    }

    #[test]
    fn misuse_is_reported_and_changes_nothing() {
        let mut p = pool(2, 2, 0, 0);
        assert_eq!(p.made(1, 0), Err(PoolMisuse::NoReservation));
        assert_eq!(p.give(1, 0), Err(PoolMisuse::NotLent));
        assert_eq!(p.drop_item(1), Err(PoolMisuse::NotLent));
        make(&mut p, 1, 0);
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.made(1, 0), Err(PoolMisuse::Known));
        assert_eq!(p.give(1, 0), Ok(true));
        assert_eq!(p.give(1, 0), Err(PoolMisuse::Idle));
        assert_eq!(p.drop_item(1), Err(PoolMisuse::Idle));
        assert_eq!(p.made(1, 0), Err(PoolMisuse::Known));
        assert_eq!((p.live(), p.idle(), p.busy()), (2, 1, 1));
        p.made(2, 0).unwrap();
        assert_eq!(p.stats().made, 2);
        assert_eq!(p.drop_item(2), Ok(()));
        assert_eq!(p.drop_item(2), Err(PoolMisuse::NotLent));
        assert_eq!((p.live(), p.idle(), p.busy()), (1, 1, 0));
    }

    #[test]
    fn a_refused_call_does_not_move_the_clock() {
        // A fixed bug: `made` and `give` moved the pool's clock before
        // they validated, so a refused call at 20 s made an item given at 0
        // stale at 5 s (keep 10 s).
        let mut p = pool(4, 4, 10 * SECOND, 0);
        make(&mut p, 1, 0);
        assert_eq!(p.give(1, 0), Ok(true));
        assert_eq!(p.made(99, 20 * SECOND), Err(PoolMisuse::NoReservation));
        assert_eq!(p.made(1, 20 * SECOND), Err(PoolMisuse::Known));
        assert_eq!(p.give(1, 20 * SECOND), Err(PoolMisuse::Idle));
        assert_eq!(p.give(98, 20 * SECOND), Err(PoolMisuse::NotLent));
        assert_eq!(p.next_expiry(5 * SECOND), 5 * SECOND);
        assert_eq!(p.take(5 * SECOND), PoolTaken::Ready(1));
    }

    #[test]
    fn drop_frees_room_and_unknown_drop_ends_a_reservation() {
        let mut p = pool(1, 1, 0, 0);
        make(&mut p, 1, 0);
        assert_eq!(p.take(0), PoolTaken::Wait);
        p.drop_item(1).unwrap();
        assert_eq!(p.live(), 0);
        assert_eq!(p.take(0), PoolTaken::Make);
        p.drop_item(8).unwrap();
        assert_eq!(p.live(), 0);
        let c = p.stats();
        assert_eq!((c.made, c.dropped), (2, 2));
    }

    #[test]
    fn evict_returns_exactly_the_due_oldest_first_and_leaves_the_rest() {
        let mut p = pool(6, 6, 10 * SECOND, 100 * SECOND);
        for item in 1..=6 {
            make(&mut p, item, 0);
        }
        // Given at 0,1,2,3,4,5 s: due for idleness at 10..15 s.
        for item in 1..=6 {
            p.give(item, (item as i64 - 1) * SECOND).unwrap();
        }
        let mut out = [0; 2];
        assert_eq!(p.evict(12 * SECOND - 1, &mut out), 2);
        assert_eq!(out, [1, 2]);
        assert_eq!(p.idle(), 4);
        assert_eq!(p.evict(13 * SECOND, &mut out), 2);
        assert_eq!(out, [3, 4]);
        assert_eq!(p.evict(13 * SECOND, &mut out), 0);
        // Two due, room for one: it returns what it wrote (never more than
        // the room), and the other stays for the next call.
        let mut out = [0; 2];
        assert_eq!(p.evict(20 * SECOND, &mut out[..1]), 1);
        assert_eq!(out, [5, 0]);
        assert_eq!(p.idle(), 1);
        assert_eq!(p.next_expiry(20 * SECOND), 0);
        assert_eq!(p.evict(20 * SECOND, &mut out), 1);
        assert_eq!(out[0], 6);
        assert_eq!(p.live(), 0);
        assert_eq!(p.stats().evicted_idle, 6);
    }

    #[test]
    fn evict_for_age_and_count_only_with_no_room() {
        let mut p = pool(3, 3, 0, 10 * SECOND);
        make(&mut p, 1, 0);
        make(&mut p, 2, 5 * SECOND);
        p.give(2, 6 * SECOND).unwrap();
        p.give(1, 7 * SECOND).unwrap();
        // No room: nothing written, nothing removed.
        assert_eq!(p.evict(12 * SECOND, &mut []), 0);
        assert_eq!(p.idle(), 2);
        let mut out = [0; 3];
        assert_eq!(p.evict(12 * SECOND, &mut out), 1);
        assert_eq!(out[0], 1);
        assert_eq!(p.stats().evicted_age, 1);
        assert_eq!(p.take(12 * SECOND), PoolTaken::Ready(2));
    }

    #[test]
    fn next_expiry_agrees_with_evict() {
        let mut p = pool(3, 3, 10 * SECOND, 25 * SECOND);
        assert_eq!(p.next_expiry(0), NEVER);
        make(&mut p, 1, 0);
        make(&mut p, 2, 0);
        p.give(1, 3 * SECOND).unwrap();
        p.give(2, 4 * SECOND).unwrap();
        let now = 5 * SECOND;
        let wait = p.next_expiry(now);
        assert_eq!(wait, 8 * SECOND);
        let mut out = [0; 3];
        assert_eq!(p.evict(now + wait - 1, &mut out), 0);
        assert_eq!(p.evict(now + wait, &mut out), 1);
        assert_eq!(out[0], 1);
        assert_eq!(p.next_expiry(now + wait), SECOND);
        assert_eq!(p.take(now + wait), PoolTaken::Ready(2));
        p.give(2, 20 * SECOND).unwrap();
        // Item 2: idle until 30 s, but born at 0 with life 25 s.
        assert_eq!(p.next_expiry(21 * SECOND), 4 * SECOND);
        assert_eq!(p.evict(25 * SECOND - 1, &mut out), 0);
        assert_eq!(p.next_expiry(25 * SECOND - 1), 1);
        assert_eq!(p.next_expiry(25 * SECOND), 0);
        assert_eq!(p.evict(25 * SECOND, &mut out), 1);
        assert_eq!(p.next_expiry(25 * SECOND), NEVER);
    }

    #[test]
    fn no_keep_no_life_never_expires() {
        let mut p = pool(1, 1, 0, 0);
        make(&mut p, 1, i64::MIN);
        p.give(1, i64::MIN).unwrap();
        assert_eq!(p.next_expiry(i64::MAX), NEVER);
        assert_eq!(p.evict(i64::MAX, &mut [0]), 0);
        assert_eq!(p.take(i64::MAX), PoolTaken::Ready(1));
    }

    #[test]
    fn time_going_backwards_is_no_time_passing() {
        let mut p = pool(1, 1, 10 * SECOND, 0);
        make(&mut p, 1, 100 * SECOND);
        p.give(1, 100 * SECOND).unwrap();
        // An earlier `now` does not make the item younger than at 100 s...
        assert_eq!(p.take(0), PoolTaken::Ready(1));
        p.give(1, 0).unwrap();
        // ...and its idle clock started at 100 s, the latest seen.
        assert_eq!(p.next_expiry(100 * SECOND), 10 * SECOND);
        assert_eq!(p.take(110 * SECOND), PoolTaken::Stale(1));
        // Extreme times saturate.
        let mut p = pool(1, 1, i64::MAX, i64::MAX);
        make(&mut p, 1, i64::MAX - 1);
        p.give(1, i64::MAX - 1).unwrap();
        assert_eq!(p.next_expiry(i64::MAX - 1), 1);
        assert_eq!(p.take(i64::MAX), PoolTaken::Stale(1));
    }

    #[test]
    fn close_hands_back_every_idle_item_and_shuts_the_pool() {
        let mut p = pool(4, 4, 0, 0);
        for item in 1..=4 {
            make(&mut p, item, 0);
        }
        for item in 1..=3 {
            p.give(item, 0).unwrap();
        }
        let mut out = [0; 2];
        assert_eq!(p.close(&mut out), 2);
        assert_eq!(out, [1, 2]);
        assert_eq!(p.idle(), 1);
        assert_eq!(p.close(&mut out), 1);
        assert_eq!(out[0], 3);
        assert_eq!(p.close(&mut out), 0);
        assert!(p.is_closed());
        assert_eq!(p.take(0), PoolTaken::Wait);
        // The lent one comes back to be closed by its borrower.
        assert_eq!(p.give(4, 0), Ok(false));
        assert_eq!(p.live(), 0);
        assert_eq!(p.stats().closed, 4);
    }

    #[test]
    fn table_survives_many_inserts_and_removals() {
        // Items that collide heavily (multiples of a large power of two:
        // 2^40 on 64-bit hosts, 2^24 on 32-bit ones), lent and returned and
        // dropped in a shuffled order.
        let size = 64;
        let mut p = pool(size, size, 0, 0);
        let item = |k: usize| k << (usize::BITS / 2 + 8) | k;
        for k in 0..size as usize {
            make(&mut p, item(k), 0);
        }
        for round in 0..50usize {
            for k in (0..size as usize).filter(|k| (k + round) % 3 == 0) {
                p.drop_item(item(k)).unwrap();
                make(&mut p, item(k), 0);
            }
        }
        for k in 0..size as usize {
            assert_eq!(p.give(item(k), 0), Ok(true));
        }
        assert_eq!(p.live(), size as usize);
        for k in (0..size as usize).rev() {
            assert_eq!(p.take(0), PoolTaken::Ready(item(k)));
        }
    }

    #[test]
    fn memory_is_allocated_once() {
        let mut p = pool(10, 10, MINUTE, 0);
        let bytes = p.heap_bytes();
        assert_eq!(bytes, (10 + 32) * core::mem::size_of::<PoolSlot>());
        assert_eq!(store_len(10, 10), 42);
        for round in 0..100 {
            for item in 0..10 {
                if round == 0 {
                    make(&mut p, item, 0);
                } else {
                    assert!(matches!(p.take(round), PoolTaken::Ready(_)));
                }
            }
            for item in 0..10 {
                p.give(item, round).unwrap();
            }
        }
        assert_eq!(p.heap_bytes(), bytes);
        assert_eq!(p.store.capacity(), 42);
    }

    fn limits(size: i64, idle: i64, life_ns: i64) -> PoolPolicy {
        PoolPolicy {
            size,
            idle,
            keep_ns: 0,
            life_ns,
            ..PoolPolicy::PRESET
        }
    }

    #[test]
    fn new_limits_are_validated_in_field_order() {
        let bad = |jitter: f64, min_idle, max_making| {
            Pool::new(PoolPolicy {
                life_jitter: jitter,
                min_idle,
                max_making,
                ..PoolPolicy::PRESET
            })
            .err()
        };
        for jitter in [f64::NAN, -0.001, 1.001, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(bad(jitter, 0, 0), Some(PoolPolicyError::Jitter));
        }
        assert_eq!(bad(0.0, -1, 0), Some(PoolPolicyError::MinIdle));
        assert_eq!(bad(0.0, 0, i64::MIN), Some(PoolPolicyError::MaxMaking));
        assert_eq!(bad(f64::NAN, -1, -1), Some(PoolPolicyError::Jitter));
        assert_eq!(bad(0.5, -1, -1), Some(PoolPolicyError::MinIdle));
        assert_eq!(bad(1.0, i64::MAX, i64::MAX), None);
        assert_eq!(bad(-0.0, 0, 0), None);
        let size_first = Pool::new(PoolPolicy {
            size: 0,
            life_jitter: f64::NAN,
            ..PoolPolicy::PRESET
        });
        assert_eq!(size_first.err(), Some(PoolPolicyError::Size));
    }

    #[test]
    fn jitter_shortens_life_by_the_draws_share() {
        // life 100 s, jitter 0.25: at most 25 s off; a draw of 2^63 is half
        // of that, 12.5 s; the largest draw is just under 25 s.
        let mut p = Pool::new(PoolPolicy {
            life_jitter: 0.25,
            ..limits(4, 4, 100 * SECOND)
        })
        .unwrap();
        assert_eq!(p.take(0), PoolTaken::Make);
        p.made_jittered(1, 0, 1 << 63).unwrap();
        assert_eq!(p.give(1, 0), Ok(true));
        assert_eq!(p.next_expiry(0), 87_500_000_000);
        assert_eq!(p.take(0), PoolTaken::Ready(1));
        assert_eq!(p.give(1, 87_500_000_000 - 1), Ok(true));
        assert_eq!(p.take(87_500_000_000), PoolTaken::Stale(1));
        // Draw 0 shortens nothing; draw u64::MAX shortens by ⌊25e9 × (2^64 −
        // 1) / 2^64⌋ = 25e9 − 1.
        let mut p = Pool::new(PoolPolicy {
            life_jitter: 0.25,
            ..limits(4, 4, 100 * SECOND)
        })
        .unwrap();
        assert_eq!(p.take(0), PoolTaken::Make);
        p.made_jittered(2, 0, 0).unwrap();
        assert_eq!(p.take(0), PoolTaken::Make);
        p.made_jittered(3, 0, u64::MAX).unwrap();
        // Item 3 lives 100 s − (25 s − 1 ns): due at 75 s + 1 ns.
        assert_eq!(p.give(3, 75 * SECOND), Ok(true));
        assert_eq!(p.take(75 * SECOND + 1), PoolTaken::Stale(3));
        assert_eq!(p.give(2, 100 * SECOND - 1), Ok(true));
        assert_eq!(p.stats().stale, 1);
        // Misuse changes nothing, as with `made`.
        assert_eq!(p.made_jittered(9, 0, 5), Err(PoolMisuse::NoReservation));
        assert_eq!(p.made_jittered(2, 0, 5), Err(PoolMisuse::Known));
    }

    #[test]
    fn jitter_without_life_or_fraction_changes_nothing() {
        let mut p = pool(1, 1, 0, 0);
        assert_eq!(p.take(0), PoolTaken::Make);
        p.made_jittered(1, 0, u64::MAX).unwrap();
        p.give(1, 0).unwrap();
        assert_eq!(p.next_expiry(0), NEVER);
        // Jitter 1 keeps at least 1 ns of life: life 10 ns, at most 9 off,
        // the largest draw ⌊9 × (2^64 − 1) / 2^64⌋ = 8 off.
        let mut p = Pool::new(PoolPolicy {
            life_jitter: 1.0,
            ..limits(1, 1, 10)
        })
        .unwrap();
        assert_eq!(p.take(0), PoolTaken::Make);
        p.made_jittered(1, 0, u64::MAX).unwrap();
        assert_eq!(p.give(1, 0), Ok(true));
        assert_eq!(p.next_expiry(0), 2);
        // Jitter 0 with a life: exactly `made`.
        let mut p = pool(1, 1, 0, 10);
        assert_eq!(p.take(0), PoolTaken::Make);
        p.made_jittered(1, 0, u64::MAX).unwrap();
        p.give(1, 0).unwrap();
        assert_eq!(p.next_expiry(0), 10);
    }

    #[test]
    fn make_ahead_reserves_up_to_min_idle_within_size_and_max_making() {
        let mut p = Pool::new(PoolPolicy {
            min_idle: 3,
            ..limits(4, 4, 0)
        })
        .unwrap();
        assert_eq!(p.make_ahead(), 3);
        assert_eq!(p.make_ahead(), 0);
        assert_eq!((p.live(), p.busy()), (3, 3));
        // Made ahead and given: idle, and nothing more is wanted.
        for item in 1..=3 {
            assert_eq!(p.give(item, 0), Ok(true));
        }
        assert_eq!(p.make_ahead(), 0);
        // One lent: one wanted, and room for it.
        assert_eq!(p.take(0), PoolTaken::Ready(3));
        assert_eq!(p.make_ahead(), 1);
        p.unmade().unwrap();
        // All four live: no room, nothing wanted however few are idle.
        assert_eq!(p.take(0), PoolTaken::Ready(2));
        assert_eq!(p.take(0), PoolTaken::Ready(1));
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.make_ahead(), 0);
        // max_making caps it; min_idle above idle counts as idle.
        let mut p = Pool::new(PoolPolicy {
            min_idle: 50,
            max_making: 2,
            ..limits(10, 5, 0)
        })
        .unwrap();
        assert_eq!(p.make_ahead(), 2);
        p.made(1, 0).unwrap();
        assert_eq!(p.make_ahead(), 1);
        assert_eq!(p.take(0), PoolTaken::Wait);
        p.unmade().unwrap();
        p.give(1, 0).unwrap();
        // One idle, one reservation open: 3 wanted, 1 more may be made.
        assert_eq!(p.make_ahead(), 1);
        p.unmade().unwrap();
        assert_eq!(p.make_ahead(), 1);
        assert_eq!(p.busy(), 2);
        // Closed: none.
        p.close(&mut [0; 4]);
        assert_eq!(p.make_ahead(), 0);
    }

    #[test]
    fn max_making_answers_wait_once_that_many_are_being_made() {
        let mut p = Pool::new(PoolPolicy {
            max_making: 2,
            ..limits(5, 5, 0)
        })
        .unwrap();
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.take(0), PoolTaken::Wait);
        assert_eq!(p.stats().waits, 1);
        p.made(1, 0).unwrap();
        assert_eq!(p.take(0), PoolTaken::Make);
        p.unmade().unwrap();
        p.unmade().unwrap();
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.take(0), PoolTaken::Wait);
        // Above size it counts as size.
        let mut p = Pool::new(PoolPolicy {
            max_making: 9,
            ..limits(1, 1, 0)
        })
        .unwrap();
        assert_eq!(p.take(0), PoolTaken::Make);
        assert_eq!(p.take(0), PoolTaken::Wait);
    }

    #[test]
    fn mark_old_retires_idle_by_evict_lent_by_give_and_new_ones_stay() {
        let mut p = pool(6, 6, 0, 0);
        for item in 1..=4 {
            make(&mut p, item, 0);
        }
        p.give(1, 0).unwrap();
        p.give(2, 0).unwrap();
        assert_eq!(p.mark_old(), 4);
        assert_eq!(p.next_expiry(0), 0);
        // The lent old ones are not kept when they come back.
        assert_eq!(p.give(3, 0), Ok(false));
        // Evict hands back exactly the old idle ones, oldest first.
        let mut out = [0; 1];
        assert_eq!(p.evict(0, &mut out), 1);
        assert_eq!(out, [1]);
        let mut out = [0; 4];
        assert_eq!(p.evict(0, &mut out), 1);
        assert_eq!(out[0], 2);
        assert_eq!(p.evict(0, &mut out), 0);
        assert_eq!(p.next_expiry(0), NEVER);
        // New ones are made in the new generation.
        make(&mut p, 5, 0);
        assert_eq!(p.give(5, 0), Ok(true));
        assert_eq!(p.give(4, 0), Ok(false));
        assert_eq!(p.take(0), PoolTaken::Ready(5));
        assert_eq!((p.live(), p.idle()), (1, 0));
        assert_eq!(p.stats().retired, 4);
    }

    #[test]
    fn take_hands_back_an_old_idle_one_as_stale() {
        let mut p = pool(3, 3, 0, 0);
        make(&mut p, 1, 0);
        make(&mut p, 2, 0);
        // A reservation open before the mark, filled after it: new.
        assert_eq!(p.take(0), PoolTaken::Make);
        p.give(1, 0).unwrap();
        p.give(2, 0).unwrap();
        assert_eq!(p.mark_old(), 2);
        p.made(3, 0).unwrap();
        assert_eq!(p.give(3, 0), Ok(true));
        // The new one sits above the old ones and is lent first.
        assert_eq!(p.take(0), PoolTaken::Ready(3));
        assert_eq!(p.give(3, 0), Ok(true));
        assert_eq!(p.take(0), PoolTaken::Ready(3));
        assert_eq!(p.take(0), PoolTaken::Stale(2));
        // Dropping an old lent one, and closing with old idle ones left.
        assert_eq!(p.drop_item(3), Ok(()));
        let mut out = [0; 4];
        assert_eq!(p.close(&mut out), 1);
        assert_eq!(out[0], 1);
        assert_eq!(p.next_expiry(0), NEVER);
        let c = p.stats();
        assert_eq!((c.stale, c.dropped, c.closed, c.retired), (1, 1, 1, 0));
        // Marking twice marks the same; an empty pool marks none.
        let mut p = pool(2, 2, 0, 0);
        assert_eq!(p.mark_old(), 0);
        make(&mut p, 1, 0);
        assert_eq!(p.mark_old(), 1);
        assert_eq!(p.mark_old(), 1);
        assert_eq!(p.give(1, 0), Ok(false));
    }
}
