//! An exact sliding-window counter: at most `quota` events in any stretch
//! of time `window` long.
//!
//! Where a bucket smooths, a window counts: "a thousand a day" is a window,
//! not a rate, and a bucket would let a client spend the whole day's
//! allowance in its first minute. The window keeps the stamp of every event
//! it still counts, so the count is exact rather than the estimate a
//! two-counter scheme gives.
//!
//! The stamps live in a ring of `quota` slots in a store the caller
//! chooses (see [`crate::store`]): a `Vec` that [`Sliding::new`] allocates
//! once, when the window is made, or a slice or array handed to
//! [`Sliding::new_in`]; an event is counted while `now < stamp + window` and falls
//! out at exactly `stamp + window`. Each call first drops the stamps that
//! have fallen out, oldest first, so a call costs O(1) amortised and never
//! allocates.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::store::Slots;
use crate::time::{elapsed, NEVER};

/// Why a sliding window could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlidingError {
    /// The quota is zero or negative.
    Quota,
    /// The window is zero or negative.
    Window,
    /// The ring of `quota` stamps is too large to represent.
    TooLarge,
    /// The ring of `quota` stamps could not be allocated.
    NoMemory,
}

impl SlidingError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            SlidingError::Quota => 18,
            SlidingError::Window => 19,
            SlidingError::TooLarge => 5,
            SlidingError::NoMemory => 6,
        }
    }
}

/// A sliding-window counter over a ring of stamps in the store `S` (a
/// `Vec<i64>` by default; see [`crate::store`]). Not synchronised: the C
/// handle wraps it in a mutex.
#[derive(Debug)]
pub struct Sliding<#[cfg(feature = "alloc")] S = Vec<i64>, #[cfg(not(feature = "alloc"))] S> {
    /// How long a window is, in nanoseconds (positive).
    window: i64,
    /// The ring of stamps, oldest at `head`: one slot per unit of quota,
    /// all there from the start and overwritten as the ring goes round.
    stamps: S,
    /// The ring's size: the quota.
    quota: usize,
    /// Where the oldest counted stamp is.
    head: usize,
    /// How many stamps are counted.
    live: usize,
    /// The latest `now` a take was given; an earlier one counts as this.
    /// Readings do not move it.
    latest: i64,
}

#[cfg(feature = "alloc")]
impl Sliding {
    /// An empty window allowing `quota` events in any `window_ns`-long
    /// stretch. Allocates `quota` stamps of 8 bytes each.
    pub fn new(quota: i64, window_ns: i64) -> Result<Sliding, SlidingError> {
        if quota <= 0 {
            return Err(SlidingError::Quota);
        }
        if window_ns <= 0 {
            return Err(SlidingError::Window);
        }
        let size = usize::try_from(quota).map_err(|_| SlidingError::TooLarge)?;
        if size > isize::MAX as usize / core::mem::size_of::<i64>() {
            return Err(SlidingError::TooLarge);
        }
        let mut stamps = Vec::new();
        stamps
            .try_reserve_exact(size)
            .map_err(|_| SlidingError::NoMemory)?;
        stamps.resize(size, 0);
        Sliding::new_in(stamps, window_ns)
    }
}

impl<S: Slots<i64>> Sliding<S> {
    /// An empty window over the caller's store, allowing as many events as
    /// it has slots (the quota) in any `window_ns`-long stretch:
    /// [`SlidingError::Quota`] for a store with no slot.
    pub fn new_in(stamps: S, window_ns: i64) -> Result<Sliding<S>, SlidingError> {
        let size = stamps.as_ref().len();
        if size == 0 {
            return Err(SlidingError::Quota);
        }
        if window_ns <= 0 {
            return Err(SlidingError::Window);
        }
        Ok(Sliding {
            window: window_ns,
            stamps,
            quota: size,
            head: 0,
            live: 0,
            latest: i64::MIN,
        })
    }

    /// The store holding the stamps, as it stands.
    pub fn store(&self) -> &S {
        &self.stamps
    }

    /// The store holding the stamps, to say again where its slots are
    /// (see [`crate::window::Window::store_mut`]).
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.stamps
    }

    /// The window with its stamps moved to another store: `rehome` gets the
    /// store and must answer one holding the same slots, in the same order.
    /// Nothing else changes.
    pub fn map_store<T: Slots<i64>>(self, rehome: impl FnOnce(S) -> T) -> Sliding<T> {
        Sliding {
            window: self.window,
            stamps: rehome(self.stamps),
            quota: self.quota,
            head: self.head,
            live: self.live,
            latest: self.latest,
        }
    }

    /// The quota the window was made with, or last given by
    /// [`Sliding::reconfigure`].
    pub fn quota(&self) -> i64 {
        self.quota as i64
    }

    /// How many stamps the store holds: the largest quota
    /// [`Sliding::reconfigure`] takes in place.
    pub fn capacity(&self) -> usize {
        self.stamps.as_ref().len()
    }

    /// Takes a new quota and window in place, keeping the stamps it counts
    /// at the latest take's `now` (events fallen out of the old window stay
    /// gone, even under a longer one): the newest `quota'` of them if it
    /// counts more, judged from then on
    /// by the new window (a stamp counts while `now < stamp + window'`).
    /// Keeping the newest is exact: a window that counts more than `quota'`
    /// admits nothing until the oldest stamp kept falls out, which is when
    /// fewer than `quota'` would be left of them all. So every stretch of
    /// `window'` in which an event is admitted after the change holds at
    /// most `quota'` events that the window counted at the change or
    /// admitted after it; a stretch with none admitted after it holds only
    /// events the old policy admitted. The clock (the latest take's `now`)
    /// is kept.
    ///
    /// Checked in order: [`SlidingError::Quota`], [`SlidingError::Window`],
    /// then [`SlidingError::TooLarge`] for a quota over [`Sliding::capacity`]
    /// (for those, make a store that holds it and use
    /// [`Sliding::reconfigure_into`]). An error changes nothing.
    pub fn reconfigure(&mut self, quota: i64, window_ns: i64) -> Result<(), SlidingError> {
        let size = Self::check(quota, window_ns)?;
        if size > self.capacity() {
            return Err(SlidingError::TooLarge);
        }
        self.forget_fallen();
        // The ring in time order from slot 0, then the newest `size` first.
        let ring = &mut self.stamps.as_mut()[..self.quota];
        ring.rotate_left(self.head);
        let kept = self.live.min(size);
        ring.copy_within(self.live - kept..self.live, 0);
        self.head = 0;
        self.live = kept;
        self.quota = size;
        self.window = window_ns;
        Ok(())
    }

    /// [`Sliding::reconfigure`] into another store, for a quota over this
    /// one's capacity: the window over `stamps` (its length is the new
    /// quota) holding the stamps this one counts, the newest `quota'` if it
    /// counts more, with its clock. This one is left as it was.
    /// [`SlidingError::Quota`] for a store with no slot,
    /// [`SlidingError::Window`].
    pub fn reconfigure_into<T: Slots<i64>>(
        &self,
        mut stamps: T,
        window_ns: i64,
    ) -> Result<Sliding<T>, SlidingError> {
        let size = Self::check(stamps.as_ref().len() as i64, window_ns)?;
        let live = self.counted_at(self.latest);
        let kept = live.min(size);
        let skip = self.live - kept;
        for (i, slot) in stamps.as_mut()[..kept].iter_mut().enumerate() {
            *slot = self.stamps.as_ref()[self.wrap(self.head + skip + i)];
        }
        Ok(Sliding {
            window: window_ns,
            stamps,
            quota: size,
            head: 0,
            live: kept,
            latest: self.latest,
        })
    }

    /// Drops the stamps that have fallen out at the latest take's `now`,
    /// as that take would have: a change of window counts only the events
    /// the old one still counted.
    fn forget_fallen(&mut self) {
        if self.live > 0 {
            self.advance(self.latest);
        }
    }

    /// A quota and a window checked as [`Sliding::new`] checks them: the
    /// quota as a count of slots.
    fn check(quota: i64, window_ns: i64) -> Result<usize, SlidingError> {
        if quota <= 0 {
            return Err(SlidingError::Quota);
        }
        if window_ns <= 0 {
            return Err(SlidingError::Window);
        }
        let size = usize::try_from(quota).map_err(|_| SlidingError::TooLarge)?;
        if size > isize::MAX as usize / core::mem::size_of::<i64>() {
            return Err(SlidingError::TooLarge);
        }
        Ok(size)
    }

    /// A ring index brought back into range: `index` is below twice the
    /// quota, so one subtraction does what `%` would, without a division on
    /// every call.
    #[inline]
    fn wrap(&self, index: usize) -> usize {
        if index >= self.quota {
            index - self.quota
        } else {
            index
        }
    }

    /// Moves the window's clock to `now` (an earlier `now` than one seen
    /// counts as the latest) and drops the stamps that have fallen out.
    fn advance(&mut self, now: i64) -> i64 {
        let now = now.max(self.latest);
        self.latest = now;
        while self.live > 0 && elapsed(self.stamps.as_ref()[self.head], now) >= self.window {
            self.head = self.wrap(self.head + 1);
            self.live -= 1;
        }
        now
    }

    /// Counts an event at `now` if the window has room for it; whether it
    /// did.
    pub fn take(&mut self, now: i64) -> bool {
        let now = self.advance(now);
        if self.live == self.quota {
            return false;
        }
        let tail = self.wrap(self.head + self.live);
        self.stamps.as_mut()[tail] = now;
        self.live += 1;
        true
    }

    /// How many of the stamps held are still counted at `now` (already
    /// clocked): the ring is in time order, so the ones fallen out are a
    /// prefix, found by binary search without dropping them. O(log quota).
    fn counted_at(&self, now: i64) -> usize {
        let (mut fallen, mut rest) = (0, self.live);
        while rest > 0 {
            let half = rest / 2;
            let stamp = self.stamps.as_ref()[self.wrap(self.head + fallen + half)];
            if elapsed(stamp, now) >= self.window {
                fallen += half + 1;
                rest -= half + 1;
            } else {
                rest = half;
            }
        }
        self.live - fallen
    }

    /// How many more events the window would count at `now` (an earlier
    /// `now` than the latest take's counts as that one). Pure: it changes
    /// no later answer.
    pub fn left(&self, now: i64) -> i64 {
        let now = now.max(self.latest);
        (self.quota - self.counted_at(now)) as i64
    }

    /// Nanoseconds from `now` until the window has room: 0 when it has room
    /// now, otherwise when its oldest event falls out ([`NEVER`] if that
    /// instant is past the end of the clock, or the wait does not fit in an
    /// `i64`). Pure. Whether there is room
    /// is read as [`Sliding::left`] reads it, but the wait counts from the
    /// caller's own `now`, even one earlier than the latest take's: a
    /// caller that waits what it was told finds room by its own clock.
    pub fn next(&self, now: i64) -> i64 {
        if self.counted_at(now.max(self.latest)) < self.quota {
            return 0;
        }
        // All `quota` stamps are still counted, so the oldest is at `head`.
        // Not yet fallen out, so `out > now`; a wait past the end of the
        // clock is NEVER.
        match self.stamps.as_ref()[self.head].checked_add(self.window) {
            Some(out) => out.checked_sub(now).unwrap_or(NEVER),
            None => NEVER,
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use crate::time::SECOND;

    #[test]
    fn counts_exactly_to_the_window_edge() {
        let mut sliding = Sliding::new(2, 100).unwrap();
        assert_eq!(sliding.left(0), 2);
        assert!(sliding.take(10));
        assert!(sliding.take(50));
        assert!(!sliding.take(60));
        assert_eq!(sliding.left(60), 0);
        assert_eq!(sliding.next(60), 50);
        // The event at 10 is counted until 109 and falls out at 110.
        assert!(!sliding.take(109));
        assert_eq!(sliding.next(109), 1);
        assert_eq!(sliding.left(110), 1);
        assert_eq!(sliding.next(110), 0);
        assert!(sliding.take(110));
        assert!(!sliding.take(149));
        assert!(sliding.take(150));
        assert_eq!(sliding.next(150), 60);
    }

    #[test]
    fn a_wait_asked_before_the_latest_take_counts_from_the_callers_now() {
        let mut sliding = Sliding::new(1, 100).unwrap();
        assert!(sliding.take(40));
        // Asked at 10 (a clock behind the take's), the room comes at 140:
        // 130 from the caller's now, not 100 from the take's.
        assert_eq!(sliding.next(10), 130);
        assert!(!sliding.take(10 + 129));
        assert!(sliding.take(10 + 130));
        // A wait too long for an i64 (from a very early now): never.
        let mut late = Sliding::new(1, 100).unwrap();
        assert!(late.take(i64::MAX - 200));
        assert_eq!(late.next(i64::MIN), NEVER);
    }

    #[test]
    fn no_stretch_of_a_window_holds_more_than_the_quota() {
        let (quota, window) = (7, 1_000);
        let mut sliding = Sliding::new(quota, window).unwrap();
        let mut passed = Vec::new();
        for now in (0..20_000).step_by(37) {
            if sliding.take(now) {
                passed.push(now);
            }
        }
        for (i, &start) in passed.iter().enumerate() {
            let inside = passed[i..]
                .iter()
                .take_while(|&&t| t < start + window)
                .count();
            assert!(inside <= quota as usize);
        }
        // And it is not stingier than that: each refusal had a full window.
        assert!(passed.len() >= 20_000 / window as usize * quota as usize);
    }

    #[test]
    fn the_ring_is_reserved_once_and_never_grows() {
        let mut sliding = Sliding::new(3, 10).unwrap();
        let capacity = sliding.stamps.capacity();
        assert_eq!(capacity, 3);
        for now in 0..1_000 {
            sliding.take(now);
        }
        assert_eq!(sliding.stamps.capacity(), capacity);
        assert_eq!(sliding.stamps.len(), 3);
    }

    #[test]
    fn the_ring_goes_round_many_times_and_stays_exact() {
        // Quota 3, window 10, one take a tick: each 10-tick stretch passes
        // exactly 3 (at its first three ticks), however often the ring of
        // three slots has gone round.
        let mut sliding = Sliding::new(3, 10).unwrap();
        for now in 0..1_000 {
            assert_eq!(sliding.take(now), now % 10 < 3, "{now}");
            // Each stamp falls out exactly as its successor comes in.
            assert_eq!(sliding.left(now), (2 - now).max(0), "{now}");
            let wait = match now % 10 {
                _ if now < 2 => 0,
                0 | 1 => 1,
                tick => 10 - tick,
            };
            assert_eq!(sliding.next(now), wait, "{now}");
        }
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert_eq!(Sliding::new(0, SECOND).unwrap_err(), SlidingError::Quota);
        assert_eq!(Sliding::new(5, 0).unwrap_err(), SlidingError::Window);
        assert_eq!(Sliding::new(-1, SECOND).unwrap_err(), SlidingError::Quota);
        assert_eq!(Sliding::new(5, i64::MIN).unwrap_err(), SlidingError::Window);
        assert_eq!(Sliding::new(0, 0).unwrap_err(), SlidingError::Quota);
        assert_eq!(
            Sliding::new(i64::MAX, SECOND).unwrap_err(),
            SlidingError::TooLarge
        );
        // Representable but far more than any machine has: 2^60 bytes on a
        // 64-bit host. On a 32-bit one it is 2^31 bytes, which the address
        // space may well hold, so only a 64-bit host checks that answer;
        // every host checks the size just past the limit.
        let huge = (isize::MAX as usize / 8) as i64;
        if usize::BITS == 64 {
            assert_eq!(
                Sliding::new(huge, SECOND).unwrap_err(),
                SlidingError::NoMemory
            );
        }
        assert_eq!(
            Sliding::new(huge + 1, SECOND).unwrap_err(),
            SlidingError::TooLarge
        );
    }

    #[test]
    fn time_going_backwards_counts_as_no_time_passing() {
        let mut sliding = Sliding::new(2, 100).unwrap();
        assert!(sliding.take(1_000));
        assert!(sliding.take(1_050));
        // Earlier readings are the latest one: still full.
        assert!(!sliding.take(0));
        assert!(!sliding.take(i64::MIN));
        assert_eq!(sliding.left(500), 0);
        // The room comes at 1_100: 600 from this caller's clock.
        assert_eq!(sliding.next(500), 600);
        // The window carries on from its latest reading.
        assert!(sliding.take(1_100));
        assert!(!sliding.take(1_100));
    }

    #[test]
    fn readings_are_pure() {
        // `left` and `next` used to move the window's clock and
        // drop stamps, so a take at an earlier `now` after a reading
        // counted as the reading's `now`.
        let mut read = Sliding::new(1, 100).unwrap();
        assert!(read.take(0));
        assert_eq!(read.left(1_000), 1);
        assert_eq!(read.next(1_000), 0);
        // Without the readings, 50 is inside the window of the take at 0.
        assert!(!read.take(50));
        assert_eq!(read.next(50), 50);
        assert!(read.take(100));
        // A reading at an earlier `now` counts as of the latest take, and
        // its wait runs from that `now` to the room at 200.
        assert_eq!(read.left(0), 0);
        assert_eq!(read.next(0), 200);
    }

    #[test]
    fn extreme_times_saturate() {
        let mut sliding = Sliding::new(1, 10).unwrap();
        assert!(sliding.take(i64::MIN));
        assert_eq!(sliding.next(i64::MIN), 10);
        assert!(sliding.take(i64::MAX));
        // At the end of the clock the stamp can never fall out.
        assert!(!sliding.take(i64::MAX));
        assert_eq!(sliding.next(i64::MAX), NEVER);
        assert_eq!(sliding.left(i64::MAX), 0);

        let mut sliding = Sliding::new(1, i64::MAX).unwrap();
        // The longest window: the stamp at the very start falls out at -1.
        assert!(sliding.take(i64::MIN));
        assert!(!sliding.take(-2));
        assert_eq!(sliding.next(-2), 1);
        assert!(sliding.take(-1));
    }
}
