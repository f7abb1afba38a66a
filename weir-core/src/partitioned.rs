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

/// An adaptive limit shared by partitions. Plain data: the caller guards it.
///
/// Each partition's state is a slot in the arrays below (by column, so
/// that a partition's index reaches each of its fields with no multiply).
/// The slots from `count` up are never written after it is made: each keeps
/// room 0, borrow 0, nothing in flight and no claim, so a call of a
/// partition past `count` is refused by the rule itself, and the enter and
/// the leave ask for `count` only on their way to an answer other than
/// going in or out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Partitioned {
    limit: Concurrency,
    count: usize,
    /// Each partition's share.
    shares: [f64; MAX_PARTITIONS],
    /// Each partition's borrow cap.
    borrows: [i64; MAX_PARTITIONS],
    /// Each partition's calls in flight.
    flying: [i64; MAX_PARTITIONS],
    /// When each partition was last refused within its own room, while that
    /// claim holds.
    claims: [Option<i64>; MAX_PARTITIONS],
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
            count: 0,
            shares: [0.0; MAX_PARTITIONS],
            borrows: [0; MAX_PARTITIONS],
            flying: [0; MAX_PARTITIONS],
            claims: [None; MAX_PARTITIONS],
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
        for ((share, borrow), p) in out.shares.iter_mut().zip(&mut out.borrows).zip(parts) {
            *share = p.share;
            *borrow = p.borrow;
        }
        out.count = parts.len();
        Ok(out)
    }

    /// How many partitions there are (0: not partitioned).
    pub fn partitions(&self) -> usize {
        self.count
    }

    /// `i`, if partition `i` exists.
    #[inline]
    fn known(&self, i: usize) -> Result<usize, PartitionError> {
        if i < self.count.min(MAX_PARTITIONS) {
            Ok(i)
        } else {
            Err(PartitionError::Unknown)
        }
    }

    /// The room partition `i` owns now: `⌊⌊limit⌋ × share⌋`. (Whatever
    /// the rooms, no call enters with `⌊limit⌋` in flight.)
    #[inline]
    pub fn room(&self, i: usize) -> Result<i64, PartitionError> {
        let share = self.shares[self.known(i)?];
        Ok((self.limit.limit() as f64 * share) as i64)
    }

    /// Calls of partition `i` in flight.
    pub fn flying_in(&self, i: usize) -> Result<i64, PartitionError> {
        Ok(self.flying[self.known(i)?])
    }

    /// Whether any partition other than `except` holds a claim at `now`.
    /// Out of line: only a borrowing call asks.
    #[inline(never)]
    fn claimed(&self, now: i64, except: usize) -> bool {
        let hold = (self.limit.long_rtt() as i64).saturating_add(1);
        self.claims[..self.count]
            .iter()
            .enumerate()
            .any(|(j, claim)| j != except && matches!(*claim, Some(at) if elapsed(at, now) < hold))
    }

    /// Lets a call of partition `i` in at `now`, by the rule in the
    /// module's documentation. `Ok(None)`: refused.
    #[inline]
    pub fn enter_partition(
        &mut self,
        i: usize,
        now: i64,
    ) -> Result<Option<ConcurrencyTicket>, PartitionError> {
        let limit = self.limit.limit();
        if limit != self.room_limit {
            // Out of the way: an unknown partition is answered before the
            // rooms are resized, so that an error changes nothing.
            if i >= self.count {
                return Err(PartitionError::Unknown);
            }
            self.size_rooms(limit);
        }
        // One bounds check, against the arrays: a slot past `count` has
        // room 0 and borrow 0 (see `Partitioned`), so it is refused below,
        // and only a refusal asks whether the partition exists.
        let (Some(&flying), Some(&room)) = (self.flying.get(i), self.rooms.get(i)) else {
            return Err(PartitionError::Unknown);
        };
        let own = flying < room;
        if !own && (flying - room >= self.borrows[i] || self.claimed(now, i)) {
            return if i < self.count {
                Ok(None)
            } else {
                Err(PartitionError::Unknown)
            };
        }
        // The global limit's own check, at the limit read above.
        let entered = self.limit.enter_below(limit, now);
        match entered {
            Some(_) => {
                self.flying[i] += 1;
                self.claims[i] = None;
            }
            None if own => self.claims[i] = Some(now),
            None => {}
        }
        Ok(entered)
    }

    /// Each partition's room at `⌊limit⌋ = limit`, kept until it moves.
    #[cold]
    #[inline(never)]
    fn size_rooms(&mut self, limit: i64) {
        self.room_limit = limit;
        for (room, share) in self.rooms.iter_mut().zip(&self.shares[..self.count]) {
            *room = (limit as f64 * share) as i64;
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
        let Some(flying) = self.flying.get_mut(i) else {
            return Err(PartitionError::Unknown);
        };
        // A slot past `count` has nothing in flight (see `Partitioned`), so
        // only an empty partition asks whether it exists.
        if *flying < 1 {
            return Err(if i < self.count {
                PartitionError::Empty
            } else {
                PartitionError::Unknown
            });
        }
        *flying -= 1;
        self.limit.leave(entry, now, dropped);
        Ok(())
    }
}
