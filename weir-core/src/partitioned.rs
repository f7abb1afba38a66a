//! Partitions of the adaptive limit: shares of one [`Concurrency`] limit.
//!
//! A limit may be split into up to [`MAX_PARTITIONS`] partitions, each
//! named by its index and given a `share` of the limit and a `borrow` cap.
//! With `L = ⌊limit⌋` (the Gradient2 limit, which all partitions' samples
//! move), partition `i` owns `room_i = ⌊L × share_i⌋` calls (the shares
//! sum to at most 1, so the rooms sum to at most `L`, a rounding aside). A
//! call of partition `i` enters when fewer than `L` calls are in flight in all and:
//!
//! ```text
//! own room:  flying_i < room_i
//! borrowing: flying_i − room_i < borrow_i, and no partition holds a claim
//! ```
//!
//! A partition under its own room that is refused (the others' borrowed
//! calls fill the limit) holds a **claim** for one long-term round-trip
//! time (`long_rtt`, the time a call in flight takes to come back), or
//! until one of its calls enters: while any claim holds, no partition
//! borrows, so the room that borrowers give back as their calls leave goes
//! to its owner first. Every call enters only while fewer than `L` are in
//! flight, under the caller's lock, so the calls in flight never exceed the
//! limit at the moment each entered, under any interleaving of enter and
//! leave; the limit may fall afterwards (a slow sample), and then no call
//! enters until enough have left.
//!
//! A call made through [`Concurrency::enter`] directly (through `Deref`)
//! belongs to no partition: it enters against the global limit alone.

use core::ops::{Deref, DerefMut};

use crate::concurrency::{Concurrency, ConcurrencyPolicy, ConcurrencyTicket};
use crate::time::elapsed;

/// The most partitions a limit may have.
pub const MAX_PARTITIONS: usize = 16;

/// One partition's terms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Partition {
    /// Its share of the limit, in [0, 1]; all shares sum to at most 1.
    pub share: f64,
    /// How many calls past its own room it may borrow from room others are
    /// not using; 0 to [`crate::concurrency::MAX_LIMIT`].
    pub borrow: i64,
}

/// Why a partitioned limit could not be made, or a partition used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionError {
    /// The limit's own policy is bad.
    Policy(crate::concurrency::ConcurrencyError),
    /// Not 1 to [`MAX_PARTITIONS`] partitions.
    Count,
    /// A share is NaN or outside [0, 1], or the shares sum past 1.
    Share,
    /// A borrow cap is negative or above [`crate::concurrency::MAX_LIMIT`].
    Borrow,
    /// No partition has that index.
    Unknown,
    /// The partition has no call in flight to leave.
    Empty,
}

impl PartitionError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            PartitionError::Policy(e) => e.code(),
            PartitionError::Count => 560,
            PartitionError::Share => 561,
            PartitionError::Borrow => 562,
            PartitionError::Unknown => 563,
            PartitionError::Empty => 564,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Part {
    terms: Partition,
    flying: i64,
    /// When it was last refused within its own room, while that claim holds.
    claim: Option<i64>,
}

/// An adaptive limit shared by partitions. Plain data: the caller guards it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Partitioned {
    limit: Concurrency,
    parts: [Part; MAX_PARTITIONS],
    count: usize,
    /// Each partition's room at `⌊limit⌋ = room_limit`, kept so that a
    /// decision at an unchanged limit multiplies nothing.
    rooms: [i64; MAX_PARTITIONS],
    room_limit: i64,
}

impl Deref for Partitioned {
    type Target = Concurrency;
    fn deref(&self) -> &Concurrency {
        &self.limit
    }
}

impl DerefMut for Partitioned {
    fn deref_mut(&mut self) -> &mut Concurrency {
        &mut self.limit
    }
}

impl From<Concurrency> for Partitioned {
    /// A limit with no partitions: every call goes through `Deref`.
    fn from(limit: Concurrency) -> Partitioned {
        Partitioned {
            limit,
            parts: [Part::default(); MAX_PARTITIONS],
            count: 0,
            rooms: [0; MAX_PARTITIONS],
            room_limit: -1,
        }
    }
}

impl Partitioned {
    /// A limit made from `policy`, split into `parts`.
    pub fn new(policy: ConcurrencyPolicy, parts: &[Partition]) -> Result<Self, PartitionError> {
        let limit = Concurrency::new(policy).map_err(PartitionError::Policy)?;
        if parts.is_empty() || parts.len() > MAX_PARTITIONS {
            return Err(PartitionError::Count);
        }
        let mut sum = 0.0;
        for p in parts {
            if !(0.0..=1.0).contains(&p.share) {
                return Err(PartitionError::Share);
            }
            sum += p.share;
        }
        // A sum a rounding over 1 (thirds) still counts as 1.
        if sum > 1.0 + 1e-9 {
            return Err(PartitionError::Share);
        }
        if parts
            .iter()
            .any(|p| !(0..=i64::from(crate::concurrency::MAX_LIMIT)).contains(&p.borrow))
        {
            return Err(PartitionError::Borrow);
        }
        let mut out = Partitioned::from(limit);
        for (slot, p) in out.parts.iter_mut().zip(parts) {
            slot.terms = *p;
        }
        out.count = parts.len();
        Ok(out)
    }

    /// How many partitions there are (0: not partitioned).
    pub fn partitions(&self) -> usize {
        self.count
    }

    #[inline]
    fn part(&self, i: usize) -> Result<&Part, PartitionError> {
        self.parts[..self.count]
            .get(i)
            .ok_or(PartitionError::Unknown)
    }

    /// The room partition `i` owns now: `⌊⌊limit⌋ × share⌋`. (Whatever
    /// the rooms, no call enters with `⌊limit⌋` in flight.)
    #[inline]
    pub fn room(&self, i: usize) -> Result<i64, PartitionError> {
        let share = self.part(i)?.terms.share;
        Ok((self.limit.limit() as f64 * share) as i64)
    }

    /// Calls of partition `i` in flight.
    pub fn flying_in(&self, i: usize) -> Result<i64, PartitionError> {
        Ok(self.part(i)?.flying)
    }

    /// Whether any partition other than `except` holds a claim at `now`.
    /// Out of line: only a borrowing call asks.
    #[inline(never)]
    fn claimed(&self, now: i64, except: usize) -> bool {
        let hold = (self.limit.long_rtt() as i64).saturating_add(1);
        self.parts[..self.count]
            .iter()
            .enumerate()
            .any(|(j, p)| j != except && matches!(p.claim, Some(at) if elapsed(at, now) < hold))
    }

    /// Lets a call of partition `i` in at `now`, by the rule in the
    /// module's documentation. `Ok(None)`: refused.
    #[inline]
    pub fn enter_partition(
        &mut self,
        i: usize,
        now: i64,
    ) -> Result<Option<ConcurrencyTicket>, PartitionError> {
        if i >= self.count {
            return Err(PartitionError::Unknown);
        }
        let limit = self.limit.limit();
        if limit != self.room_limit {
            self.size_rooms(limit);
        }
        let room = self.rooms.get(i).copied().unwrap_or(0);
        let Some(part) = self.parts.get(i) else {
            return Err(PartitionError::Unknown);
        };
        let own = part.flying < room;
        if !own && (part.flying - room >= part.terms.borrow || self.claimed(now, i)) {
            return Ok(None);
        }
        // The global limit's own check, at the limit read above.
        let entered = self.limit.enter_below(limit, now);
        if let Some(part) = self.parts.get_mut(i) {
            match entered {
                Some(_) => {
                    part.flying += 1;
                    part.claim = None;
                }
                None if own => part.claim = Some(now),
                None => {}
            }
        }
        Ok(entered)
    }

    /// Each partition's room at `⌊limit⌋ = limit`, kept until it moves.
    #[cold]
    #[inline(never)]
    fn size_rooms(&mut self, limit: i64) {
        self.room_limit = limit;
        for (room, p) in self.rooms.iter_mut().zip(&self.parts[..self.count]) {
            *room = (limit as f64 * p.terms.share) as i64;
        }
    }

    /// The call of partition `i` behind `entry` ended at `now`: it leaves
    /// flight and its latency is a sample, as [`Concurrency::leave`]. An
    /// error (an unknown partition, or one with nothing in flight) changes
    /// nothing.
    #[inline]
    pub fn leave_partition(
        &mut self,
        i: usize,
        entry: ConcurrencyTicket,
        now: i64,
        dropped: bool,
    ) -> Result<(), PartitionError> {
        if i >= self.count {
            return Err(PartitionError::Unknown);
        }
        let part = self.parts.get_mut(i).ok_or(PartitionError::Unknown)?;
        if part.flying < 1 {
            return Err(PartitionError::Empty);
        }
        part.flying -= 1;
        self.limit.leave(entry, now, dropped);
        Ok(())
    }
}
