//! The rolling window: `size` buckets that together cover the last
//! `window_ns` of the caller's clock, the oldest dropping off as time moves
//! on.
//!
//! One generic window serves three types: the breaker keeps a tally of
//! outcomes per bucket, the shedder a [`WindowTotal`] of response times, and the C
//! `weir_window` a [`WindowTotal`] of whatever the caller adds. Anything `Copy +
//! Default` can be a bucket; the default is what a bucket is cleared back to.
//!
//! Time never moves on its own: every call carries the `now` it happens at.
//! Writing at a later `now` clears the buckets the gap swept past and snaps
//! the head to a bucket boundary, so buckets keep their width instead of
//! drifting with each write. Reading at a later `now` skips those buckets
//! without clearing them, so a window nobody writes to still ages out and
//! two reads at the same `now` agree. A `now` before the head bucket opened
//! counts as no time passing: it lands in the head bucket and clears
//! nothing.
//!
//! The buckets live in a store the caller chooses (see [`crate::store`]):
//! a `Vec` that [`Window::new`] allocates once, at construction, or a slice
//! or array handed to [`Window::new_in`]. Nothing afterwards allocates.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::store::Slots;

/// The most buckets a window may have. Far above any useful resolution, and
/// low enough that a mistaken size cannot ask for gigabytes.
pub const MAX_SIZE: i64 = 1 << 20;

/// Why a window could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowError {
    /// The time the window covers is zero or negative.
    Span,
    /// More buckets than [`MAX_SIZE`].
    TooLarge,
    /// The buckets could not be allocated, or a store handed to
    /// [`Window::new_in`] holds no slot.
    NoMemory,
}

impl WindowError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            WindowError::Span => 300,
            WindowError::TooLarge => 315,
            WindowError::NoMemory => 6,
        }
    }
}

/// A sum and how many values went into it: a mean once `count` is positive.
/// Both saturate instead of wrapping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowTotal {
    /// The values added, summed.
    pub sum: i64,
    /// How many values were added.
    pub count: i64,
}

impl WindowTotal {
    /// Folds one value in.
    #[inline]
    pub fn add(&mut self, value: i64) {
        self.sum = self.sum.saturating_add(value);
        self.count = self.count.saturating_add(1);
    }

    /// Folds another total in.
    #[inline]
    pub fn merge(&mut self, other: &WindowTotal) {
        self.sum = self.sum.saturating_add(other.sum);
        self.count = self.count.saturating_add(other.count);
    }
}

/// A rolling window of `B` buckets kept in the store `S` (a `Vec<B>` by
/// default; see [`crate::store`]). Not synchronised: its owner guards it.
#[derive(Clone, Debug)]
pub struct Window<B, #[cfg(feature = "alloc")] S = Vec<B>, #[cfg(not(feature = "alloc"))] S> {
    /// How much time one bucket covers, at least 1 ns.
    width: i64,
    buckets: S,
    _slot: core::marker::PhantomData<B>,
    /// Index of the bucket `start` opens.
    head: usize,
    /// When the head bucket opened: the first `now`, then snapped forward by
    /// whole widths.
    start: i64,
    /// The head bucket's number. Buckets are numbered in time order; the
    /// bucket `j` places after the head in the ring is `epoch - size + j`.
    epoch: u64,
    /// Buckets visited so far, by any walk: the unit tests bound the work
    /// of an owner's decisions with it.
    #[cfg(test)]
    visits: core::cell::Cell<u64>,
}

#[cfg(feature = "alloc")]
impl<B: Copy + Default> Window<B> {
    /// An empty window of `size` buckets covering `window_ns`, its first
    /// bucket opening at `now`. A size below one is raised to one, and a
    /// bucket narrower than a nanosecond is widened to one.
    pub fn new(size: i64, window_ns: i64, now: i64) -> Result<Window<B>, WindowError> {
        if window_ns <= 0 {
            return Err(WindowError::Span);
        }
        let size = size.max(1);
        if size > MAX_SIZE {
            return Err(WindowError::TooLarge);
        }
        // Both fit: 1 <= size <= MAX_SIZE.
        let count = size as usize;
        let mut buckets = Vec::new();
        buckets
            .try_reserve_exact(count)
            .map_err(|_| WindowError::NoMemory)?;
        buckets.resize(count, B::default());
        Window::new_in(buckets, window_ns, now)
    }
}

impl<B: Copy + Default, S: Slots<B>> Window<B, S> {
    /// An empty window over the caller's store, one bucket per slot (every
    /// slot is cleared), covering `window_ns`, its first bucket opening at
    /// `now`: [`WindowError::NoMemory`] for a store with no slot,
    /// [`WindowError::TooLarge`] for one of more than [`MAX_SIZE`].
    pub fn new_in(mut buckets: S, window_ns: i64, now: i64) -> Result<Window<B, S>, WindowError> {
        if window_ns <= 0 {
            return Err(WindowError::Span);
        }
        let count = buckets.as_ref().len();
        if count == 0 {
            return Err(WindowError::NoMemory);
        }
        if count as u64 > MAX_SIZE as u64 {
            return Err(WindowError::TooLarge);
        }
        buckets.as_mut().fill(B::default());
        Ok(Window {
            // count fits: 1 <= count <= MAX_SIZE.
            width: (window_ns / count as i64).max(1),
            buckets,
            _slot: core::marker::PhantomData,
            head: 0,
            start: now,
            epoch: count as u64,
            #[cfg(test)]
            visits: core::cell::Cell::new(0),
        })
    }

    /// The window emptied and opened again at `now` over `window_ns`, in
    /// the same store, as [`Window::new_in`] would make it there; an error
    /// ([`WindowError::Span`] for a `window_ns` of zero or less) changes
    /// nothing.
    pub fn restart(&mut self, window_ns: i64, now: i64) -> Result<(), WindowError> {
        if window_ns <= 0 {
            return Err(WindowError::Span);
        }
        let count = self.buckets.as_ref().len();
        self.buckets.as_mut().fill(B::default());
        self.width = (window_ns / count as i64).max(1);
        self.head = 0;
        self.start = now;
        self.epoch = count as u64;
        Ok(())
    }

    /// The window with its buckets moved to another store: `rehome` gets
    /// the store and must answer one holding the same slots, in the same
    /// order (a `Vec` turned into a boxed slice, say). Nothing else changes.
    pub fn map_store<T: Slots<B>>(self, rehome: impl FnOnce(S) -> T) -> Window<B, T> {
        Window {
            width: self.width,
            buckets: rehome(self.buckets),
            _slot: core::marker::PhantomData,
            head: self.head,
            start: self.start,
            epoch: self.epoch,
            #[cfg(test)]
            visits: self.visits,
        }
    }

    /// The store holding the buckets, as it stands.
    #[inline]
    pub fn store(&self) -> &S {
        &self.buckets
    }

    /// The store holding the buckets, for an owner that moves the handle
    /// holding it and must say again where the slots are (the C library's
    /// shared handles find their slots from the store's own address). The
    /// slots it answers must stay the same ones, in the same order.
    #[inline]
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.buckets
    }

    /// Empties every bucket and opens the first at `now`, as
    /// [`Window::new_in`] leaves a new window over the same store.
    pub fn clear(&mut self, now: i64) {
        self.buckets.as_mut().fill(B::default());
        self.head = 0;
        self.start = now;
        self.epoch = self.buckets.as_ref().len() as u64;
    }

    /// How many buckets the window has.
    #[inline]
    pub fn size(&self) -> usize {
        self.buckets.as_ref().len()
    }

    /// How much time one bucket covers, in nanoseconds.
    #[inline]
    pub fn width(&self) -> i64 {
        self.width
    }

    /// The number of the head bucket (see [`Window::advance`]); it grows by
    /// one for every bucket the head moves on.
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// How many buckets every walk so far has visited.
    #[cfg(all(test, feature = "alloc"))]
    pub(crate) fn visits(&self) -> u64 {
        self.visits.get()
    }

    #[cfg(test)]
    #[inline]
    fn visited(&self) {
        self.visits.set(self.visits.get() + 1);
    }

    #[cfg(not(test))]
    #[inline(always)]
    fn visited(&self) {}

    /// How many whole bucket widths `now` lies past the head bucket's
    /// opening; zero for a `now` inside it or before it.
    #[inline]
    fn span(&self, now: i64) -> u64 {
        match now.checked_sub(self.start) {
            Some(gap) if gap < self.width => 0,
            Some(gap) => (gap / self.width) as u64,
            // The difference overflows only across most of the clock's
            // range. In i128 it is exact, and divided by a width of at least
            // 1 it fits in a u64.
            None if now < self.start => 0,
            None => ((i128::from(now) - i128::from(self.start)) / i128::from(self.width)) as u64,
        }
    }

    /// Hands each bucket a write at `now` would clear to `gone`, with its
    /// number, oldest first, without clearing anything: what
    /// [`Window::advance`] would take out, for an owner that keeps running
    /// totals and wants them as of `now` without moving the window.
    #[inline]
    pub fn expiring(&self, now: i64, mut gone: impl FnMut(u64, &B)) {
        let size = self.buckets.as_ref().len();
        let steps = self.span(now).min(size as u64) as usize;
        for j in 1..=steps {
            self.visited();
            let index = (self.head + j) % size;
            gone(
                self.epoch + j as u64 - size as u64,
                &self.buckets.as_ref()[index],
            );
        }
    }

    /// Moves the head to the bucket `now` falls in, clearing the buckets the
    /// gap swept past. Each bucket is handed to `gone` with its number just
    /// before it is cleared, so an owner that keeps running totals can take
    /// it out of them. A `now` inside the head bucket, or earlier, does
    /// nothing.
    #[inline]
    pub fn advance(&mut self, now: i64, gone: impl FnMut(u64, &B)) {
        let span = self.span(now);
        if span == 0 {
            return;
        }
        self.expiring(now, gone);
        let size = self.buckets.as_ref().len();
        let steps = span.min(size as u64) as usize;
        for j in 1..=steps {
            self.buckets.as_mut()[(self.head + j) % size] = B::default();
        }
        self.head = (self.head + steps) % size;
        self.epoch += steps as u64;
        // start + span * width lies between start and now, so it is an i64.
        self.start = (i128::from(self.start) + i128::from(span) * i128::from(self.width)) as i64;
    }

    /// The number the head bucket would have after a write at `now`: the
    /// [`Window::epoch`] as of `now`, without moving anything.
    #[inline]
    pub fn epoch_at(&self, now: i64) -> u64 {
        self.epoch + self.span(now).min(self.buckets.as_ref().len() as u64)
    }

    /// The bucket numbered `number` (see [`Window::epoch`]), if it is still
    /// in the ring: the head or one of the `size - 1` before it.
    #[inline]
    pub fn get(&self, number: u64) -> Option<&B> {
        let back = self.epoch.checked_sub(number)?;
        let size = self.buckets.as_ref().len();
        (back < size as u64)
            .then(|| &self.buckets.as_ref()[(self.head + size - back as usize) % size])
    }

    /// The head bucket as it stands, without moving it.
    #[inline]
    pub fn head(&self) -> &B {
        &self.buckets.as_ref()[self.head]
    }

    /// The bucket `now` falls in, for the caller to add to, after clearing
    /// what the gap since the last write swept past.
    pub fn slot(&mut self, now: i64) -> &mut B {
        self.advance(now, |_, _| {});
        self.head_mut()
    }

    /// The head bucket as it stands, without moving it.
    #[inline]
    pub fn head_mut(&mut self) -> &mut B {
        &mut self.buckets.as_mut()[self.head]
    }

    /// Visits the buckets inside the window at `now`, oldest first, without
    /// clearing anything. The last bucket visited is the one `now` falls in
    /// when `current` is true; with `current` false that bucket is left out,
    /// as it has seen only part of its time. Buckets a write at `now` would
    /// clear are visited as empty, so the count is always `size` (or
    /// `size - 1` without the current one) and each position covers the same
    /// stretch of time relative to `now`.
    pub fn each(&self, now: i64, current: bool, mut visit: impl FnMut(&B)) {
        let size = self.buckets.as_ref().len();
        let span = self.span(now).min(size as u64) as usize;
        let empty = B::default();
        // The stored buckets still inside: the head and the size - span - 1
        // before it; then span fresh ones, the last of them current.
        let stored = size - span;
        for j in 0..stored {
            let index = (self.head + span + 1 + j) % size;
            let is_current = span == 0 && j + 1 == stored;
            if current || !is_current {
                self.visited();
                visit(&self.buckets.as_ref()[index]);
            }
        }
        let fresh = if current {
            span
        } else {
            span.saturating_sub(1)
        };
        for _ in 0..fresh {
            self.visited();
            visit(&empty);
        }
    }
}

impl<S: Slots<WindowTotal>> Window<WindowTotal, S> {
    /// Adds `value` to the bucket `now` falls in.
    pub fn add(&mut self, now: i64, value: i64) {
        self.slot(now).add(value);
    }

    /// The sum and count over the buckets inside the window at `now`, with or
    /// without the current one.
    pub fn total(&self, now: i64, current: bool) -> WindowTotal {
        let mut total = WindowTotal::default();
        self.each(now, current, |bucket| total.merge(bucket));
        total
    }

    /// Takes a new span in place, in the same store (its size stays the
    /// store's). If the buckets keep their width (`window_ns / size`),
    /// nothing changes. Otherwise the window is resampled at `now`: it
    /// opens again at `now` with the total inside at `now` (the current
    /// bucket included) in its first bucket, so a total at `now` reads the
    /// same, and those values then leave together one new `window_ns`
    /// later. [`WindowError::Span`] for a `window_ns` of zero or less; an
    /// error changes nothing.
    pub fn reconfigure(&mut self, window_ns: i64, now: i64) -> Result<(), WindowError> {
        if window_ns <= 0 {
            return Err(WindowError::Span);
        }
        if (window_ns / self.size() as i64).max(1) != self.width {
            let total = self.total(now, true);
            self.restart(window_ns, now)?;
            *self.head_mut() = total;
        }
        Ok(())
    }

    /// [`Window::reconfigure`] into another store, whose length is the new
    /// size: always resampled at `now` into it. This window is left as it
    /// was. Errors as [`Window::new_in`]'s.
    pub fn reconfigure_into<T: Slots<WindowTotal>>(
        &self,
        store: T,
        window_ns: i64,
        now: i64,
    ) -> Result<Window<WindowTotal, T>, WindowError> {
        let mut moved = Window::new_in(store, window_ns, now)?;
        *moved.head_mut() = self.total(now, true);
        Ok(moved)
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec;

    #[test]
    fn a_reconfiguration_keeps_the_total_and_resamples_another_width() {
        let mut window: Window<WindowTotal> = Window::new(4, 400, 0).unwrap();
        for (now, value) in [(0, 1), (150, 2), (250, 4), (390, 8)] {
            window.add(now, value);
        }
        let total = window.total(390, true);
        let before = format!("{window:?}");
        assert_eq!(window.reconfigure(0, 390), Err(WindowError::Span));
        assert_eq!(format!("{window:?}"), before);
        // The same width: nothing changes.
        window.reconfigure(403, 390).unwrap();
        assert_eq!(format!("{window:?}"), before);
        // Another width: the total at 390 reads the same, and leaves
        // together one new window later.
        window.reconfigure(800, 390).unwrap();
        assert_eq!(window.total(390, true), total);
        assert_eq!(window.total(390 + 799, true), total);
        assert_eq!(window.total(390 + 800, true), WindowTotal::default());
        // Into a store of another size.
        let moved = window
            .reconfigure_into(vec![WindowTotal::default(); 8], 800, 400)
            .unwrap();
        assert_eq!((moved.size(), moved.width()), (8, 100));
        assert_eq!(moved.total(400, true), total);
        assert_eq!(moved.total(400 + 800, true), WindowTotal::default());
    }

    const MS: i64 = 1_000_000;

    fn buckets(window: &Window<WindowTotal>, now: i64, current: bool) -> Vec<(i64, i64)> {
        let mut seen = Vec::new();
        window.each(now, current, |b| seen.push((b.sum, b.count)));
        seen
    }

    #[test]
    fn size_below_one_is_raised_and_width_is_at_least_a_nanosecond() {
        let window = Window::<WindowTotal>::new(0, 10, 0).unwrap();
        assert_eq!(window.size(), 1);
        assert_eq!(window.width(), 10);
        let window = Window::<WindowTotal>::new(-7, 10, 0).unwrap();
        assert_eq!(window.size(), 1);
        let window = Window::<WindowTotal>::new(100, 10, 0).unwrap();
        assert_eq!(window.width(), 1);
    }

    #[test]
    fn bad_spans_and_sizes_are_errors() {
        assert_eq!(
            Window::<WindowTotal>::new(4, 0, 0).unwrap_err(),
            WindowError::Span
        );
        assert_eq!(
            Window::<WindowTotal>::new(4, -1, 0).unwrap_err(),
            WindowError::Span
        );
        assert_eq!(
            Window::<WindowTotal>::new(MAX_SIZE + 1, 1_000, 0).unwrap_err(),
            WindowError::TooLarge
        );
    }

    #[test]
    fn writes_land_in_the_bucket_now_falls_in() {
        let mut window = Window::<WindowTotal>::new(4, 400 * MS, 0).unwrap();
        window.add(0, 5);
        window.add(99 * MS, 6);
        window.add(100 * MS, 7);
        window.add(350 * MS, 8);
        assert_eq!(
            buckets(&window, 350 * MS, true),
            vec![(11, 2), (7, 1), (0, 0), (8, 1)]
        );
        assert_eq!(
            window.total(350 * MS, true),
            WindowTotal { sum: 26, count: 4 }
        );
        assert_eq!(
            window.total(350 * MS, false),
            WindowTotal { sum: 18, count: 3 }
        );
    }

    #[test]
    fn writing_later_clears_what_the_gap_swept_and_snaps_the_head() {
        let mut window = Window::<WindowTotal>::new(4, 400 * MS, 0).unwrap();
        for i in 0..4 {
            window.add(i * 100 * MS, 1 + i);
        }
        // 250 ms past the last bucket's opening: two buckets swept.
        window.add(550 * MS, 10);
        assert_eq!(
            buckets(&window, 550 * MS, true),
            vec![(3, 1), (4, 1), (0, 0), (10, 1)]
        );
        // The head opened at 500 ms, not at 550 ms: 599 ms is still in it.
        window.add(599 * MS, 1);
        assert_eq!(buckets(&window, 599 * MS, true)[3], (11, 2));
        window.add(600 * MS, 1);
        assert_eq!(buckets(&window, 600 * MS, true)[3], (1, 1));
        // A gap longer than the window clears everything.
        window.add(10_000 * MS, 2);
        assert_eq!(
            buckets(&window, 10_000 * MS, true),
            vec![(0, 0), (0, 0), (0, 0), (2, 1)]
        );
    }

    #[test]
    fn reading_later_skips_without_clearing_and_reads_agree() {
        let mut window = Window::<WindowTotal>::new(4, 400 * MS, 0).unwrap();
        for i in 0..4 {
            window.add(i * 100 * MS, 1 + i);
        }
        let later = 550 * MS;
        let first = buckets(&window, later, true);
        assert_eq!(first, vec![(3, 1), (4, 1), (0, 0), (0, 0)]);
        assert_eq!(buckets(&window, later, true), first);
        assert_eq!(buckets(&window, later, false), vec![(3, 1), (4, 1), (0, 0)]);
        // Nothing was cleared: the earlier view is intact.
        assert_eq!(
            buckets(&window, 300 * MS, true),
            vec![(1, 1), (2, 1), (3, 1), (4, 1)]
        );
        // A window nobody writes to ages out.
        assert_eq!(window.total(5_000 * MS, true), WindowTotal::default());
        assert_eq!(buckets(&window, 5_000 * MS, true).len(), 4);
    }

    #[test]
    fn time_going_backwards_changes_nothing() {
        let mut window = Window::<WindowTotal>::new(4, 400 * MS, 1_000 * MS).unwrap();
        window.add(1_250 * MS, 3);
        let before = buckets(&window, 1_250 * MS, true);
        // Earlier than the head opened: into the head, nothing cleared.
        window.add(0, 4);
        window.add(i64::MIN, 5);
        let after = buckets(&window, 1_250 * MS, true);
        assert_eq!(after[..3], before[..3]);
        assert_eq!(after[3], (12, 3));
        assert_eq!(buckets(&window, i64::MIN, true), after);
    }

    #[test]
    fn extreme_times_saturate() {
        let mut window = Window::<WindowTotal>::new(3, 3, i64::MIN).unwrap();
        window.add(i64::MIN, 1);
        window.add(i64::MAX, 2);
        assert_eq!(
            window.total(i64::MAX, true),
            WindowTotal { sum: 2, count: 1 }
        );
        window.add(i64::MAX, i64::MAX);
        assert_eq!(window.total(i64::MAX, true).sum, i64::MAX);
        window.add(i64::MIN, 1);
        assert_eq!(window.total(i64::MAX, true).count, 3);
    }

    #[test]
    fn advance_reports_each_cleared_bucket_with_its_number() {
        let mut window = Window::<WindowTotal>::new(3, 30, 0).unwrap();
        window.add(0, 1);
        window.add(10, 2);
        let head = window.epoch();
        let mut gone = Vec::new();
        // 35 ns past the head's opening at 10: three widths, the whole ring.
        window.advance(45, |number, b| gone.push((number, b.sum)));
        assert_eq!(gone, vec![(head - 2, 0), (head - 1, 1), (head, 2)]);
        assert_eq!(window.epoch(), head + 3);
        assert_eq!(window.total(45, true), WindowTotal::default());
    }
}
