//! Adaptive load shedding: refuse work only when the server is both hot and
//! full.
//!
//! - **Hot**: the CPU (read by the caller, in thousandths) is at or over the
//!   threshold, or it was within the last `cool_ns` and the shedder has
//!   refused since.
//! - **Full**: both the moving average and the current count of calls in
//!   flight exceed the limit: the busiest complete bucket's passes per
//!   nanosecond times the fastest complete bucket's mean response time (the
//!   capacity the server has shown), scaled by
//!   `(1000 - cpu) / (1000 - threshold)` held to `[floor, 1]`.
//!
//! A CPU spike with nothing queued refuses nothing, and neither does a long
//! queue on an idle CPU. As go-zero's adaptive shedder does: the moving
//! average of calls in flight moves on every completion (pass or fail), with
//! the count after the call leaves; it starts at zero, so nothing is refused
//! before a call has completed. Passes and response times come from complete
//! buckets only; the busiest pass count is at least one, the capacity at
//! least one call, and the limit at least one call. With no complete bucket
//! holding a pass, the response time is the policy's assumed `latency_ns`.
//! A failed call leaves flight without feeding passes or response times.
//!
//! # Criticality
//!
//! A call may carry one of four [`Criticality`] classes; an unclassed call
//! ([`Shedder::allow`]) is [`Criticality::Critical`] and decides exactly as
//! above. With `L` the limit above, `t` the CPU threshold, `cpu` the
//! reading, `hot` as above, and "over `x`" meaning that both the moving
//! average and the count in flight exceed `x`, a call is refused when:
//!
//! ```text
//! CRITICAL_PLUS   cpu ≥ t (now, not merely cooling)  and over L × 5/4
//! CRITICAL        hot                                and over L
//! SHEDDABLE_PLUS  hot or cpu ≥ ⌊t × 3/4⌋             and over L × 3/4
//! SHEDDABLE       hot or cpu ≥ ⌊t / 2⌋               and over L / 2
//! ```
//!
//! The sheddable classes are refused earlier, at lower points of the same
//! two measures (the CPU and the calls in flight); CRITICAL_PLUS later, only
//! while the CPU is over the threshold and the overload, in the moving
//! average as well as the count, persists past a margin of a quarter of
//! the limit. Each class's hot set contains the next higher class's and its
//! point is lower, so at any one moment a class is never refused while a
//! lower class would be admitted. An admitted call changes the shedder
//! exactly as an admitted CRITICAL call would. A refused CRITICAL_PLUS call
//! changes it as a refused CRITICAL call would (a CRITICAL call would have
//! been refused too). A refused sheddable call does not count as a refusal
//! for cooling: it never keeps a CRITICAL call hot.
//!
//! A decision never rescans the window. Two monotonic queues over the
//! complete buckets keep the busiest pass count and the fastest mean
//! response time at their fronts: a bucket enters them once, when the head
//! moves past it, after dropping the entries it beats, and leaves once, when
//! it expires, so the work per decision is O(1) amortised whatever the
//! bucket count. A reading at a later `now` takes the same answer from the
//! queues without moving them.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::store::Slots;
use crate::time::elapsed;
use crate::window::{Window, WindowError, WindowTotal};

/// CPU use, in thousandths, that is all of it.
pub const CPU_MAX: i32 = 1000;

/// The constants of adaptive load shedding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShedderPolicy {
    /// Buckets in the window; below one is raised to one.
    pub size: i32,
    /// How far back the window reaches.
    pub window_ns: i64,
    /// CPU use in thousandths at or above which the server is hot, in
    /// [0, 1000).
    pub cpu: i32,
    /// Response time assumed while no complete bucket holds a pass.
    pub latency_ns: i64,
    /// Weight of the old value in the moving average of calls in flight, in
    /// [0, 1).
    pub beta: f64,
    /// How long the server stays hot after the CPU falls, if the shedder has
    /// refused since. Zero: not at all.
    pub cool_ns: i64,
    /// The least share of capacity admitted however hot the CPU, in (0, 1].
    pub floor: f64,
}

impl ShedderPolicy {
    /// The preset: 50 buckets over 5 s, hot at 900‰, 1 s assumed response
    /// time, average weighted 0.9, 1 s to cool, never under 0.1 of capacity.
    pub const PRESET: ShedderPolicy = ShedderPolicy {
        size: 50,
        window_ns: 5_000_000_000,
        cpu: 900,
        latency_ns: 1_000_000_000,
        beta: 0.9,
        cool_ns: 1_000_000_000,
        floor: 0.1,
    };

    /// The policy checked: threshold in [0, 1000), `latency_ns` and
    /// `window_ns` positive, `beta` in [0, 1), `floor` in (0, 1], `cool_ns`
    /// not negative.
    pub fn check(self) -> Result<ShedderPolicy, ShedderPolicyError> {
        if !(0..CPU_MAX).contains(&self.cpu) {
            return Err(ShedderPolicyError::Cpu);
        }
        if self.window_ns <= 0 {
            return Err(ShedderPolicyError::Window(WindowError::Span));
        }
        if self.latency_ns <= 0 {
            return Err(ShedderPolicyError::Latency);
        }
        if !(0.0..1.0).contains(&self.beta) {
            return Err(ShedderPolicyError::Beta);
        }
        if !(self.floor > 0.0 && self.floor <= 1.0) {
            return Err(ShedderPolicyError::Floor);
        }
        if self.cool_ns < 0 {
            return Err(ShedderPolicyError::Cool);
        }
        Ok(self)
    }
}

impl Default for ShedderPolicy {
    fn default() -> ShedderPolicy {
        ShedderPolicy::PRESET
    }
}

/// Why a shedder could not be made from a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShedderPolicyError {
    /// The CPU threshold is outside [0, 1000).
    Cpu,
    /// `latency_ns` is zero or negative.
    Latency,
    /// `beta` is outside [0, 1) or NaN.
    Beta,
    /// `floor` is outside (0, 1] or NaN.
    Floor,
    /// `cool_ns` is negative.
    Cool,
    /// The window could not be made.
    Window(WindowError),
}

impl ShedderPolicyError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            ShedderPolicyError::Cpu => 305,
            ShedderPolicyError::Latency => 306,
            ShedderPolicyError::Beta => 307,
            ShedderPolicyError::Floor => 308,
            ShedderPolicyError::Cool => 309,
            // The shedder's own codes for its window's errors.
            ShedderPolicyError::Window(WindowError::Span) => 314,
            ShedderPolicyError::Window(WindowError::TooLarge) => 313,
            ShedderPolicyError::Window(WindowError::NoMemory) => 6,
        }
    }
}

/// How much a call matters, for [`Shedder::allow_class`]: the lower the
/// class, the earlier it is refused (see the module's documentation for
/// the rule). Ordered from least to most important.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Criticality {
    /// Refused first: at half the CPU threshold and half the limit.
    Sheddable,
    /// Refused at three quarters of the CPU threshold and of the limit.
    SheddablePlus,
    /// The default: decided exactly as [`Shedder::allow`] decides.
    #[default]
    Critical,
    /// Refused last: only with the CPU over the threshold now and the load
    /// over the limit by a quarter.
    CriticalPlus,
}

impl Criticality {
    /// Every class, least important first.
    pub const ALL: [Criticality; 4] = [
        Criticality::Sheddable,
        Criticality::SheddablePlus,
        Criticality::Critical,
        Criticality::CriticalPlus,
    ];

    /// The share of the limit (and, for the sheddable classes, of the CPU
    /// threshold) at which this class is refused.
    pub fn share(self) -> f64 {
        match self {
            Criticality::Sheddable => 0.5,
            Criticality::SheddablePlus => 0.75,
            Criticality::Critical => 1.0,
            Criticality::CriticalPlus => 1.25,
        }
    }
}

/// A call the shedder let through, kept by the caller until it settles the
/// call with [`Shedder::pass`] or [`Shedder::fail`], exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShedderTicket {
    /// When the call started.
    pub start: i64,
    /// Whether the call is still in flight (not yet settled).
    pub open: bool,
}

/// A ticket was settled a second time; nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settled;

impl Settled {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        9
    }
}

/// What the shedder knows at a moment, for a dashboard.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShedderStats {
    /// Calls in flight now.
    pub flying: i64,
    /// The moving average of calls in flight.
    pub average: f64,
    /// Calls the server has shown it can hold at once, before the CPU
    /// scaling; at least one.
    pub capacity: f64,
    /// The capacity scaled by the last CPU reading: what both `flying` and
    /// `average` must exceed for a refusal; at least one.
    pub limit: f64,
    /// The last CPU reading, in thousandths (clamped into [0, 1000]).
    pub cpu: i32,
    /// Whether the shedder counts as hot.
    pub hot: bool,
}

/// One slot of a shedder's queues: the number and pass count of a complete
/// bucket on the busiest queue, and the number and mean response time of
/// one on the fastest queue (each queue a ring over the slots of its own).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShedderFront {
    busiest: (u64, i64),
    fastest: (u64, f64),
}

/// A queue of at most `room` entries kept in a ring over slots of
/// [`ShedderFront`]: `head` the oldest, `len` how many.
#[derive(Clone, Copy, Debug, Default)]
struct Ring {
    head: usize,
    len: usize,
}

impl Ring {
    /// The slot of the entry `index` places after the front.
    #[inline]
    fn at(&self, index: usize, room: usize) -> usize {
        let at = self.head + index;
        if at >= room {
            at - room
        } else {
            at
        }
    }

    #[inline]
    fn get<T>(
        &self,
        index: usize,
        slots: &[ShedderFront],
        field: fn(&ShedderFront) -> T,
    ) -> Option<T> {
        (index < self.len).then(|| field(&slots[self.at(index, slots.len())]))
    }

    #[inline]
    fn front<T>(&self, slots: &[ShedderFront], field: fn(&ShedderFront) -> T) -> Option<T> {
        self.get(0, slots, field)
    }

    #[inline]
    fn back<T>(&self, slots: &[ShedderFront], field: fn(&ShedderFront) -> T) -> Option<T> {
        self.len
            .checked_sub(1)
            .and_then(|last| self.get(last, slots, field))
    }

    #[inline]
    fn pop_front(&mut self, room: usize) {
        self.head = self.at(1, room);
        self.len -= 1;
    }

    #[inline]
    fn pop_back(&mut self) {
        self.len -= 1;
    }

    /// The slot the next entry goes to; the caller writes it. The queues
    /// hold at most `size - 1` entries, within the room.
    #[inline]
    fn push_back(&mut self, room: usize) -> usize {
        let at = self.at(self.len, room);
        self.len += 1;
        at
    }

    /// How many entries from the front satisfy `before` (which holds for a
    /// prefix), by bisection.
    fn partition_point<T>(
        &self,
        slots: &[ShedderFront],
        field: fn(&ShedderFront) -> T,
        before: impl Fn(&T) -> bool,
    ) -> usize {
        let (mut low, mut high) = (0, self.len);
        while low < high {
            let mid = low + (high - low) / 2;
            match self.get(mid, slots, field) {
                Some(value) if before(&value) => low = mid + 1,
                _ => high = mid,
            }
        }
        low
    }
}

fn busiest_of(front: &ShedderFront) -> (u64, i64) {
    front.busiest
}

fn fastest_of(front: &ShedderFront) -> (u64, f64) {
    front.fastest
}

/// Load shedding that refuses work only when the server is both hot and
/// full. Its buckets live in the store `W` and its queues in `F`, one slot
/// of each per bucket (`Vec`s by default; see [`crate::store`]). Not
/// synchronised: its owner guards it (the C handle takes a short lock).
#[derive(Clone, Debug)]
pub struct Shedder<
    #[cfg(feature = "alloc")] W = Vec<WindowTotal>,
    #[cfg(feature = "alloc")] F = Vec<ShedderFront>,
    #[cfg(not(feature = "alloc"))] W,
    #[cfg(not(feature = "alloc"))] F,
> {
    shed: ShedderPolicy,
    /// 1 / (1000 - threshold), for scaling the capacity by the CPU.
    per_cpu: f64,
    /// Per bucket: the response times of passed calls (sum) and the passes
    /// (count).
    window: Window<WindowTotal, W>,
    /// The complete buckets inside the window that no later complete bucket
    /// outdoes, oldest first, by number: passes strictly falling along
    /// `busiest`, mean response times strictly rising along `fastest`. So
    /// each front is the best of the complete buckets. Each holds at most
    /// `size - 1` entries, in rings over the slots of `fronts`.
    busiest: Ring,
    fastest: Ring,
    fronts: F,
    flying: i64,
    average: f64,
    /// When the CPU was last at or over the threshold.
    overloaded_at: Option<i64>,
    /// Whether the shedder has refused since it last cooled.
    dropped: bool,
    /// The last CPU reading, clamped.
    cpu: i32,
    /// The capacity from the queues' fronts, kept for the head bucket.
    capacity: f64,
    /// The latest `now` seen; an earlier one counts as this one.
    latest: i64,
}

/// The mean response time of a bucket holding a pass.
#[inline]
fn mean(bucket: &WindowTotal) -> Option<f64> {
    (bucket.count > 0).then(|| bucket.sum as f64 / bucket.count as f64)
}

#[cfg(feature = "alloc")]
impl Shedder {
    /// A shedder with an empty window opening at `now`.
    pub fn new(shed: ShedderPolicy, now: i64) -> Result<Shedder, ShedderPolicyError> {
        let shed = shed.check()?;
        let window = Window::new(i64::from(shed.size.max(1)), shed.window_ns, now)
            .map_err(ShedderPolicyError::Window)?;
        let mut fronts = Vec::new();
        fronts
            .try_reserve_exact(window.size())
            .map_err(|_| ShedderPolicyError::Window(WindowError::NoMemory))?;
        fronts.resize(window.size(), ShedderFront::default());
        Shedder::over(shed, window, fronts, now)
    }
}

impl<W: Slots<WindowTotal>, F: Slots<ShedderFront>> Shedder<W, F> {
    /// A shedder over the caller's stores, one bucket per slot of
    /// `buckets` (every slot is cleared) and at least as many slots in
    /// `fronts`: the length of `buckets` is the window's size, whatever the
    /// policy's `size` says. Otherwise as [`Shedder::new`]. A store of
    /// buckets with no slot, or fewer fronts than buckets, is
    /// `Window(WindowError::NoMemory)`.
    pub fn new_in(
        shed: ShedderPolicy,
        buckets: W,
        fronts: F,
        now: i64,
    ) -> Result<Shedder<W, F>, ShedderPolicyError> {
        let shed = shed.check()?;
        let window =
            Window::new_in(buckets, shed.window_ns, now).map_err(ShedderPolicyError::Window)?;
        if fronts.as_ref().len() < window.size() {
            return Err(ShedderPolicyError::Window(WindowError::NoMemory));
        }
        Shedder::over(shed, window, fronts, now)
    }

    /// The shedder with its buckets and its queues' slots moved to other
    /// stores: each closure gets a store and must answer one holding the
    /// same slots, in the same order. Nothing else changes.
    pub fn map_store<V: Slots<WindowTotal>, G: Slots<ShedderFront>>(
        self,
        buckets: impl FnOnce(W) -> V,
        fronts: impl FnOnce(F) -> G,
    ) -> Shedder<V, G> {
        Shedder {
            shed: self.shed,
            per_cpu: self.per_cpu,
            window: self.window.map_store(buckets),
            busiest: self.busiest,
            fastest: self.fastest,
            fronts: fronts(self.fronts),
            flying: self.flying,
            average: self.average,
            overloaded_at: self.overloaded_at,
            dropped: self.dropped,
            cpu: self.cpu,
            capacity: self.capacity,
            latest: self.latest,
        }
    }

    /// The shedder over a checked policy, its fresh window and its queues'
    /// slots; the window's size becomes the policy's.
    fn over(
        mut shed: ShedderPolicy,
        window: Window<WindowTotal, W>,
        fronts: F,
        now: i64,
    ) -> Result<Shedder<W, F>, ShedderPolicyError> {
        // The window holds at most MAX_SIZE buckets, far within an i32.
        shed.size = window.size() as i32;
        let mut shedder = Shedder {
            shed,
            per_cpu: 1.0 / f64::from(CPU_MAX - shed.cpu),
            window,
            busiest: Ring::default(),
            fastest: Ring::default(),
            fronts,
            flying: 0,
            average: 0.0,
            overloaded_at: None,
            dropped: false,
            cpu: 0,
            capacity: 1.0,
            latest: now,
        };
        shedder.capacity = shedder.measure(1, None);
        Ok(shedder)
    }

    /// The stores holding the window's buckets and the queues' entries,
    /// to say again where their slots are (see [`Window::store_mut`]).
    pub fn stores_mut(&mut self) -> (&mut W, &mut F) {
        (self.window.store_mut(), &mut self.fronts)
    }

    /// The stores holding the window's buckets and the queues' entries.
    pub fn stores(&self) -> (&W, &F) {
        (self.window.store(), &self.fronts)
    }

    /// Whether the state holds together: both queues within the window's
    /// buckets, no negative count in flight, the averages finite. True
    /// after every completed operation; one cut off part-way (its process
    /// killed while it held the lock) may leave it false, or leave one
    /// update half made.
    pub fn consistent(&self) -> bool {
        let size = self.window.size();
        let ring = |ring: &Ring| ring.len <= size && ring.head < size.max(1);
        ring(&self.busiest)
            && ring(&self.fastest)
            && self.fronts.as_ref().len() >= size
            && self.flying >= 0
            && self.average.is_finite()
            && self.average >= 0.0
            && self.capacity.is_finite()
            && self.window.store().as_ref().iter().all(|b| b.count >= 0)
    }

    /// Starts again from an empty window at the latest `now` seen, keeping
    /// the policy and the last CPU reading: no call in flight (calls
    /// handed out before settle without counting below zero), no history
    /// of latency or load.
    pub fn reset(&mut self) {
        self.window.clear(self.latest);
        self.busiest = Ring::default();
        self.fastest = Ring::default();
        self.fronts.as_mut().fill(ShedderFront::default());
        self.flying = 0;
        self.average = 0.0;
        self.overloaded_at = None;
        self.dropped = false;
        self.capacity = 1.0;
        self.capacity = self.measure(1, None);
    }

    /// The policy in force (its size raised to at least one).
    pub fn policy(&self) -> ShedderPolicy {
        self.shed
    }

    /// Takes a new policy in place, checked as [`Shedder::new`] checks it
    /// (an error changes nothing), in the same stores: the window's size
    /// stays the store's whatever `shed.size` says, as [`Shedder::new_in`]
    /// has it (for another size, [`Shedder::reconfigure_into`] stores of
    /// that size). Kept whatever the policy: the calls in flight (their
    /// tickets settle as before), the moving average of calls in flight
    /// (the new `beta` weighs it from the next completion), the last CPU
    /// reading, when the CPU was last at or over the threshold and whether
    /// the shedder has refused since (judged from then on by the new
    /// threshold and `cool_ns`), and the clock.
    ///
    /// The measured capacity: if the buckets keep their layout (the same
    /// size and `window_ns / size`), the window and its queues are kept as
    /// they are, and the capacity is read again from them under the new
    /// `latency_ns`. Otherwise the window opens empty at the latest `now`
    /// seen (a bucket's passes per nanosecond mean nothing at another
    /// width), and the capacity is the new policy's before a complete
    /// bucket holds a pass: exactly a new shedder's.
    pub fn reconfigure(&mut self, shed: ShedderPolicy) -> Result<(), ShedderPolicyError> {
        let mut shed = shed.check()?;
        shed.size = self.shed.size;
        let width = (shed.window_ns / i64::from(shed.size)).max(1);
        if width != self.window.width() {
            self.window
                .restart(shed.window_ns, self.latest)
                .map_err(ShedderPolicyError::Window)?;
            self.busiest = Ring::default();
            self.fastest = Ring::default();
            self.fronts.as_mut().fill(ShedderFront::default());
        }
        self.shed = shed;
        self.per_cpu = 1.0 / f64::from(CPU_MAX - shed.cpu);
        let fronts = self.fronts.as_ref();
        let busiest = self.busiest.front(fronts, busiest_of).map_or(1, |(_, c)| c);
        let fastest = self.fastest.front(fronts, fastest_of).map(|(_, t)| t);
        self.capacity = self.measure(busiest, fastest);
        Ok(())
    }

    /// [`Shedder::reconfigure`] into other stores, whose length is the new
    /// window's size (as [`Shedder::new_in`] takes them): the window always
    /// opens empty in them at the latest `now` seen (as a change of layout
    /// does), everything else kept. This shedder is left as it was. Errors
    /// as [`Shedder::new_in`]'s.
    pub fn reconfigure_into<V: Slots<WindowTotal>, G: Slots<ShedderFront>>(
        &self,
        shed: ShedderPolicy,
        buckets: V,
        fronts: G,
    ) -> Result<Shedder<V, G>, ShedderPolicyError> {
        let mut moved = Shedder::new_in(shed, buckets, fronts, self.latest)?;
        moved.flying = self.flying;
        moved.average = self.average;
        moved.overloaded_at = self.overloaded_at;
        moved.dropped = self.dropped;
        moved.cpu = self.cpu;
        Ok(moved)
    }

    /// Brings the window to `now` (an earlier `now` than one seen counts as
    /// the latest), and the queues and the capacity with it.
    #[inline]
    fn advance(&mut self, now: i64) -> i64 {
        let now = now.max(self.latest);
        self.latest = now;
        let before = self.window.epoch();
        self.window.advance(now, |_, _| {});
        if self.window.epoch() != before {
            self.complete(before);
        }
        now
    }

    /// The bucket numbered `number`, the head until the window moved on, is
    /// complete: the expired entries leave the queues, the bucket joins them
    /// if it is still inside the window, and the capacity follows the fronts.
    fn complete(&mut self, number: u64) {
        // The oldest complete bucket inside the window (the head's number is
        // at least the size).
        let oldest = self.window.epoch() + 1 - self.window.size() as u64;
        // Still in the ring exactly when still inside the window.
        let bucket = self.window.get(number).copied().unwrap_or_default();
        let room = self.fronts.as_ref().len();
        let fronts = self.fronts.as_mut();
        while self
            .busiest
            .front(fronts, busiest_of)
            .is_some_and(|(n, _)| n < oldest)
        {
            self.busiest.pop_front(room);
        }
        while self
            .fastest
            .front(fronts, fastest_of)
            .is_some_and(|(n, _)| n < oldest)
        {
            self.fastest.pop_front(room);
        }
        if let Some(time) = mean(&bucket).filter(|_| number >= oldest) {
            while self
                .busiest
                .back(fronts, busiest_of)
                .is_some_and(|(_, c)| c <= bucket.count)
            {
                self.busiest.pop_back();
            }
            fronts[self.busiest.push_back(room)].busiest = (number, bucket.count);
            while self
                .fastest
                .back(fronts, fastest_of)
                .is_some_and(|(_, t)| t >= time)
            {
                self.fastest.pop_back();
            }
            fronts[self.fastest.push_back(room)].fastest = (number, time);
        }
        let fronts = self.fronts.as_ref();
        let busiest = self.busiest.front(fronts, busiest_of).map_or(1, |(_, c)| c);
        let fastest = self.fastest.front(fronts, fastest_of).map(|(_, t)| t);
        self.capacity = self.measure(busiest, fastest);
    }

    /// The capacity from the busiest pass count of a complete bucket and the
    /// fastest mean response time of one (`None`: no complete bucket holds a
    /// pass), over the bucket width; at least one call.
    #[inline]
    fn measure(&self, busiest: i64, fastest: Option<f64>) -> f64 {
        let fastest = fastest.unwrap_or(self.shed.latency_ns as f64);
        (busiest.max(1) as f64 * fastest / self.window.width() as f64).max(1.0)
    }

    /// The capacity as of `now`, as [`Shedder::advance`] would leave it,
    /// without moving anything: the queues' entries still inside the window
    /// at `now` (the first of them is the best, found by bisection) and the
    /// head bucket, if `now` has completed it.
    fn capacity_at(&self, now: i64) -> f64 {
        let before = self.window.epoch();
        let after = self.window.epoch_at(now.max(self.latest));
        if after == before {
            return self.capacity;
        }
        let oldest = after + 1 - self.window.size() as u64;
        let head = self.window.head();
        let head = (before >= oldest).then_some(head);
        let fronts = self.fronts.as_ref();
        let first = self
            .busiest
            .partition_point(fronts, busiest_of, |&(n, _)| n < oldest);
        let mut busiest = self
            .busiest
            .get(first, fronts, busiest_of)
            .map_or(1, |(_, c)| c);
        let first = self
            .fastest
            .partition_point(fronts, fastest_of, |&(n, _)| n < oldest);
        let mut fastest = self.fastest.get(first, fronts, fastest_of).map(|(_, t)| t);
        if let Some(head) = head {
            busiest = busiest.max(head.count);
            if let Some(time) = mean(head) {
                fastest = Some(fastest.map_or(time, |t| t.min(time)));
            }
        }
        self.measure(busiest, fastest)
    }

    /// `capacity` scaled by how near `cpu` is to all of it.
    #[inline]
    fn limit(&self, capacity: f64, cpu: i32) -> f64 {
        let factor = f64::from(CPU_MAX - cpu) * self.per_cpu;
        (capacity * factor.clamp(self.shed.floor, 1.0)).max(1.0)
    }

    /// Hot at `now` with the CPU at `cpu`: over the threshold, or within the
    /// cooling time of the last time it was and refused since. A reading:
    /// it changes nothing (a decision forgets the refusal once it has
    /// cooled, see [`Shedder::allow`]).
    #[inline]
    fn hot(&self, now: i64, cpu: i32) -> bool {
        if cpu >= self.shed.cpu {
            return true;
        }
        self.dropped
            && matches!(self.overloaded_at, Some(at) if elapsed(at, now) < self.shed.cool_ns)
    }

    /// Asks to start one call at `now` with the CPU at `cpu` thousandths
    /// (held to [0, 1000]). `Some` means go ahead: the caller keeps the
    /// ticket and settles it once the call has finished.
    #[inline]
    pub fn allow(&mut self, now: i64, cpu: i32) -> Option<ShedderTicket> {
        let now = self.advance(now);
        let cpu = cpu.clamp(0, CPU_MAX);
        self.cpu = cpu;
        if cpu >= self.shed.cpu {
            self.overloaded_at = Some(now);
        }
        if self.hot(now, cpu) {
            let limit = self.limit(self.capacity, cpu);
            if self.average > limit && self.flying as f64 > limit {
                self.dropped = true;
                return None;
            }
        } else {
            // Cooled: the refusal is forgotten, as go-zero's stillHot
            // forgets it, but only here, in a decision, never in a reading.
            self.dropped = false;
        }
        self.flying = self.flying.saturating_add(1);
        Some(ShedderTicket {
            start: now,
            open: true,
        })
    }

    /// Asks to start one call of class `class` at `now` with the CPU at
    /// `cpu` thousandths (held to [0, 1000]), by the rule in the module's
    /// documentation. [`Criticality::Critical`] is [`Shedder::allow`].
    pub fn allow_class(&mut self, now: i64, cpu: i32, class: Criticality) -> Option<ShedderTicket> {
        if class == Criticality::Critical {
            return self.allow(now, cpu);
        }
        let now = self.advance(now);
        let cpu = cpu.clamp(0, CPU_MAX);
        self.cpu = cpu;
        if cpu >= self.shed.cpu {
            self.overloaded_at = Some(now);
        }
        let hot = self.hot(now, cpu);
        if !hot {
            self.dropped = false;
        }
        let warm = match class {
            Criticality::CriticalPlus => cpu >= self.shed.cpu,
            Criticality::SheddablePlus => hot || cpu >= self.shed.cpu * 3 / 4,
            _ => hot || cpu >= self.shed.cpu / 2,
        };
        if warm {
            let limit = self.limit(self.capacity, cpu) * class.share();
            if self.average > limit && self.flying as f64 > limit {
                if class == Criticality::CriticalPlus {
                    self.dropped = true;
                }
                return None;
            }
        }
        self.flying = self.flying.saturating_add(1);
        Some(ShedderTicket {
            start: now,
            open: true,
        })
    }

    /// A call leaves flight: the moving average moves with the count left.
    #[inline]
    fn leave(&mut self) {
        self.flying = (self.flying - 1).max(0);
        let beta = self.shed.beta;
        self.average = self.average * beta + self.flying as f64 * (1.0 - beta);
    }

    /// The call behind `ticket` succeeded at `now`: it leaves flight, and its
    /// response time and its pass count towards capacity. A ticket already
    /// settled is an error and changes nothing.
    #[inline]
    pub fn pass(&mut self, ticket: &mut ShedderTicket, now: i64) -> Result<(), Settled> {
        if !ticket.open {
            return Err(Settled);
        }
        ticket.open = false;
        let now = self.advance(now);
        self.leave();
        self.window.head_mut().add(elapsed(ticket.start, now));
        Ok(())
    }

    /// The call behind `ticket` failed: it leaves flight but says nothing
    /// about capacity. A ticket already settled is an error and changes
    /// nothing.
    #[inline]
    pub fn fail(&mut self, ticket: &mut ShedderTicket) -> Result<(), Settled> {
        if !ticket.open {
            return Err(Settled);
        }
        ticket.open = false;
        self.leave();
        Ok(())
    }

    /// How many calls are in flight.
    pub fn flying(&self) -> i64 {
        self.flying
    }

    /// What the shedder knows at `now` (an earlier `now` than one seen
    /// counts as the latest). A reading: it changes nothing, so no later
    /// answer depends on whether, or when, it was asked.
    pub fn stats(&self, now: i64) -> ShedderStats {
        let now = now.max(self.latest);
        let cpu = self.cpu;
        let capacity = self.capacity_at(now);
        ShedderStats {
            flying: self.flying,
            average: self.average,
            capacity,
            limit: self.limit(capacity, cpu),
            cpu,
            hot: self.hot(now, cpu),
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn the_policy_is_checked() {
        let bad = |shed: ShedderPolicy| Shedder::new(shed, 0).unwrap_err();
        let p = ShedderPolicy::PRESET;
        assert_eq!(
            bad(ShedderPolicy { cpu: 1000, ..p }),
            ShedderPolicyError::Cpu
        );
        assert_eq!(bad(ShedderPolicy { cpu: -1, ..p }), ShedderPolicyError::Cpu);
        assert_eq!(
            bad(ShedderPolicy { latency_ns: 0, ..p }),
            ShedderPolicyError::Latency
        );
        assert_eq!(
            bad(ShedderPolicy { beta: 1.0, ..p }),
            ShedderPolicyError::Beta
        );
        assert_eq!(
            bad(ShedderPolicy {
                beta: f64::NAN,
                ..p
            }),
            ShedderPolicyError::Beta
        );
        assert_eq!(
            bad(ShedderPolicy { floor: 0.0, ..p }),
            ShedderPolicyError::Floor
        );
        assert_eq!(
            bad(ShedderPolicy { floor: 1.5, ..p }),
            ShedderPolicyError::Floor
        );
        assert_eq!(
            bad(ShedderPolicy {
                floor: f64::NAN,
                ..p
            }),
            ShedderPolicyError::Floor
        );
        assert_eq!(
            bad(ShedderPolicy { cool_ns: -1, ..p }),
            ShedderPolicyError::Cool
        );
        assert_eq!(
            bad(ShedderPolicy { window_ns: 0, ..p }),
            ShedderPolicyError::Window(WindowError::Span)
        );
        let one = Shedder::new(ShedderPolicy { size: 0, ..p }, 0).unwrap();
        assert_eq!(one.policy().size, 1);
    }

    #[test]
    fn starts_from_the_assumed_latency_and_one_pass() {
        let shedder = Shedder::new(ShedderPolicy::PRESET, 0).unwrap();
        let stats = shedder.stats(0);
        // One pass per 100 ms bucket, 1 s each: ten in flight.
        assert_eq!(stats.capacity, 10.0);
        assert_eq!(stats.average, 0.0);
        assert_eq!(stats.flying, 0);
        assert!(!stats.hot);
    }

    #[test]
    fn the_capacity_uses_complete_buckets_only() {
        let mut shedder = Shedder::new(ShedderPolicy::PRESET, 0).unwrap();
        let mut tickets = [ShedderTicket {
            start: 0,
            open: false,
        }; 40];
        for ticket in &mut tickets {
            *ticket = shedder.allow(0, 0).unwrap();
        }
        for ticket in &mut tickets {
            shedder.pass(ticket, 5 * MS).unwrap();
        }
        // Still in the first bucket: it is not complete.
        assert_eq!(shedder.stats(99 * MS).capacity, 10.0);
        // Complete now: 40 passes per 100 ms at 5 ms each is 2 in flight.
        assert_eq!(shedder.stats(100 * MS).capacity, 2.0);
        // The limit is never under one call.
        let mut fast = Shedder::new(ShedderPolicy::PRESET, 0).unwrap();
        let mut ticket = fast.allow(0, 0).unwrap();
        fast.pass(&mut ticket, 1).unwrap();
        assert_eq!(fast.stats(100 * MS).capacity, 1.0);
        assert_eq!(fast.stats(100 * MS).limit, 1.0);
    }

    #[test]
    fn a_ticket_settles_once() {
        let mut shedder = Shedder::new(ShedderPolicy::PRESET, 0).unwrap();
        let mut ticket = shedder.allow(0, 0).unwrap();
        let mut other = shedder.allow(0, 0).unwrap();
        assert_eq!(shedder.flying(), 2);
        assert_eq!(shedder.pass(&mut ticket, 10 * MS), Ok(()));
        let before = shedder.stats(10 * MS);
        assert_eq!(shedder.pass(&mut ticket, 20 * MS), Err(Settled));
        assert_eq!(shedder.fail(&mut ticket), Err(Settled));
        assert_eq!(shedder.stats(10 * MS), before);
        assert_eq!(shedder.fail(&mut other), Ok(()));
        assert_eq!(shedder.fail(&mut other), Err(Settled));
        assert_eq!(shedder.flying(), 0);
    }

    #[test]
    fn the_average_moves_on_each_completion_with_the_count_left() {
        let mut shedder = Shedder::new(ShedderPolicy::PRESET, 0).unwrap();
        let mut a = shedder.allow(0, 0).unwrap();
        let mut b = shedder.allow(0, 0).unwrap();
        let mut c = shedder.allow(0, 0).unwrap();
        assert_eq!(shedder.stats(0).average, 0.0);
        shedder.pass(&mut a, 1).unwrap();
        assert!((shedder.stats(1).average - 0.2).abs() < 1e-12);
        shedder.fail(&mut b).unwrap();
        assert!((shedder.stats(1).average - (0.18 + 0.1)).abs() < 1e-12);
        shedder.pass(&mut c, 2).unwrap();
        assert!((shedder.stats(2).average - 0.252).abs() < 1e-12);
    }

    /// A sequence once decided wrong: refused at 0 s; hot again at 1.6 s without a
    /// refusal; then a decision at 1.7 s on a cool CPU, with 20 in flight and
    /// an average of 23. A reading at 1.5 s (after the cool-off from the
    /// refusal at 0 s has run out) must not change that decision.
    fn the_cool_off_sequence(read_at_1_5_s: bool) -> bool {
        use alloc::vec::Vec;
        let mut shedder = Shedder::new(ShedderPolicy::PRESET, 0).unwrap();
        let mut early: Vec<ShedderTicket> = (0..20).map(|_| shedder.allow(0, 0).unwrap()).collect();
        for ticket in &mut early[..10] {
            shedder.fail(ticket).unwrap();
        }
        // Hot and full (limit 5 at 950): refused. Then a call at 899, just
        // under the threshold, fits the limit of 10 and goes.
        assert!(shedder.allow(0, 950).is_none(), "refused at 0 s");
        early.push(shedder.allow(0, 899).unwrap());
        // Ten passes of 1.5 s each in the bucket at 1.5 s: a capacity of 150.
        for ticket in &mut early[10..20] {
            shedder.pass(ticket, 1_500 * MS).unwrap();
        }
        if read_at_1_5_s {
            shedder.stats(1_500 * MS);
        }
        assert!(shedder.allow(1_600 * MS, 900).is_some(), "hot, not refused");
        let mut late: Vec<ShedderTicket> = (0..37)
            .map(|_| shedder.allow(1_600 * MS, 0).unwrap())
            .collect();
        for ticket in &mut late[..19] {
            shedder.fail(ticket).unwrap();
        }
        // One pass of 1 ns: once its bucket is complete, the capacity is 1.
        let mut quick = shedder.allow(1_600 * MS, 0).unwrap();
        shedder.pass(&mut quick, 1_600 * MS + 1).unwrap();
        assert_eq!(shedder.flying(), 20);
        assert_eq!(shedder.average.round(), 23.0);
        shedder.allow(1_700 * MS, 100).is_some()
    }

    #[test]
    fn a_stats_reading_changes_no_later_decision() {
        let without = the_cool_off_sequence(false);
        let with = the_cool_off_sequence(true);
        // Still hot at 1.7 s: the CPU was over the threshold 0.1 s before,
        // and the shedder has refused since it last cooled.
        assert!(!without, "refused: hot and full");
        assert_eq!(with, without, "a reading at 1.5 s changed the decision");
    }

    #[test]
    fn a_decision_never_rescans_the_window() {
        // Every decision opens a new bucket, the case that used to walk the
        // whole window: the work per decision must not grow with the size.
        for size in [10, 50, 400] {
            let shed = ShedderPolicy {
                size,
                window_ns: i64::from(size) * 100 * MS,
                ..ShedderPolicy::PRESET
            };
            let mut shedder = Shedder::new(shed, 0).unwrap();
            let mut worst = 0;
            for i in 0..3 * i64::from(size) {
                let now = i * 100 * MS;
                let before = shedder.window.visits();
                let ticket = shedder.allow(now, (i % 1000) as i32);
                worst = worst.max(shedder.window.visits() - before);
                if let Some(mut ticket) = ticket {
                    shedder.pass(&mut ticket, now + (i % 7) * MS).unwrap();
                }
            }
            // Moving on by one bucket clears one bucket; nothing else walks.
            assert!(
                worst <= 1,
                "{worst} buckets visited by one decision at size {size}"
            );
        }
    }

    /// The capacity the slow way: every complete bucket at `now` scanned.
    fn scan(shedder: &Shedder, now: i64) -> f64 {
        let mut busiest: i64 = 1;
        let mut fastest = None::<f64>;
        shedder.window.each(now, false, |bucket| {
            busiest = busiest.max(bucket.count);
            if let Some(time) = mean(bucket) {
                fastest = Some(fastest.map_or(time, |t| t.min(time)));
            }
        });
        shedder.measure(busiest, fastest)
    }

    #[test]
    fn the_queues_agree_with_a_full_scan() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || crate::xorshift(&mut state);
        for size in [1, 2, 3, 7, 50] {
            let shed = ShedderPolicy {
                size,
                window_ns: i64::from(size) * 100 * MS,
                ..ShedderPolicy::PRESET
            };
            let mut shedder = Shedder::new(shed, 0).unwrap();
            let mut open: alloc::vec::Vec<ShedderTicket> = alloc::vec::Vec::new();
            let mut now = 0_i64;
            for _ in 0..20_000 {
                let r = next();
                now = now.saturating_add(match r % 64 {
                    0 => 100 * MS * i64::from(size) + 7,
                    1 => -300 * MS,
                    2..=20 => 0,
                    _ => (r >> 16) as i64 % (150 * MS),
                });
                match (r >> 8) % 4 {
                    0 | 1 => {
                        if let Some(ticket) = shedder.allow(now, ((r >> 24) % 1100) as i32) {
                            open.push(ticket);
                        }
                    }
                    2 if !open.is_empty() => {
                        let at = (r >> 32) as usize % open.len();
                        let mut ticket = open.swap_remove(at);
                        let late = now.saturating_add((r >> 40) as i64 % (20 * MS));
                        shedder.pass(&mut ticket, late).unwrap();
                    }
                    3 if !open.is_empty() => {
                        let mut ticket = open.swap_remove(0);
                        shedder.fail(&mut ticket).unwrap();
                    }
                    _ => {}
                }
                let latest = shedder.latest;
                assert_eq!(shedder.capacity, scan(&shedder, latest));
                let ahead = latest.saturating_add((r >> 20) as i64 % (120 * MS * i64::from(size)));
                assert_eq!(shedder.stats(ahead).capacity, scan(&shedder, ahead));
            }
        }
    }

    #[test]
    fn cpu_readings_are_clamped() {
        let mut shedder = Shedder::new(ShedderPolicy::PRESET, 0).unwrap();
        shedder.allow(0, -50).unwrap();
        assert_eq!(shedder.stats(0).cpu, 0);
        shedder.allow(0, 5_000).unwrap();
        let stats = shedder.stats(0);
        assert_eq!(stats.cpu, 1000);
        assert!(stats.hot);
    }
}
