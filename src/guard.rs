//! The panic boundary, the NULL checks and the handle plumbing that every
//! `extern "C"` function goes through.
//!
//! Each `extern "C"` body is one call to a function here: [`guard`] or
//! [`guard_status`] for calls without a handle, [`on`] or [`status_on`] for
//! calls on a handle, [`new_handle`] and [`free_handle`] for the life of one.
//! They check pointers for NULL, run the body inside `catch_unwind` so no
//! panic reaches C, and poison a handle whose operation panicked so that it
//! refuses everything afterwards instead of acting on half-updated state.
//!
//! Without `std` (the firmware build) there is no unwinding and no
//! `catch_unwind`: every helper runs the body directly, and a panic (which
//! no code path is meant to reach) stops the program in the firmware panic
//! handler (src/firmware.rs), never returning into C. The handle helpers are
//! the same in both builds, placed handles included; only [`new_handle`]
//! (the heap) is hosted-only, and a handle's lock is the one `crate::lock`
//! chooses for the build.

use core::mem::MaybeUninit;
#[cfg(feature = "std")]
use std::panic::{catch_unwind, AssertUnwindSafe};

use core::sync::atomic::{AtomicU8, Ordering};

use crate::counts::{weir_counts, Counts, Tally};
use crate::lock::set_flags;
use crate::status::weir_status::{self, *};

/// A handle's state with its flags ([`POISONED`], [`COUNTING`], [`PLACED`])
/// and the counts it keeps once counting is on.
pub(crate) struct Guarded<S> {
    flags: AtomicU8,
    state: S,
    counts: Counts,
}

/// The bit of `Guarded::flags` that an earlier panic sets.
const POISONED: u8 = 1;

/// The bit of `Guarded::flags` that `start_counting` sets. It shares the
/// byte with [`POISONED`], so a decision on a handle that does not count
/// tests one byte, as it did before counting existed, and takes the
/// counting path out of line.
const COUNTING: u8 = 2;

/// The bit of `Guarded::flags` that marks a handle laid in memory the
/// caller owns (a placed handle, which [`free_handle`] leaves alone) rather
/// than in a box of weir's. Set once, before the handle is handed out; the
/// decisions' test of [`POISONED`] and [`COUNTING`] masks it out, so a
/// placed handle decides on the path a heap one does.
const PLACED: u8 = 4;

/// The bit of `Guarded::flags` that marks a shared handle, laid in a
/// region by `region::lay_shared`: its calls take the region's lock
/// (`region::RegionLock`) around their bodies. Set once, before the region
/// is handed out. It is one of the bits a decision tests with
/// [`POISONED`] and [`COUNTING`], so a heap or placed handle decides on the
/// path it always did and only a shared one takes the path out of line.
#[cfg(feature = "std")]
const SHARED: u8 = 8;
/// No handle is shared in the firmware build.
#[cfg(not(feature = "std"))]
const SHARED: u8 = 0;

/// The bit of `Guarded::flags` that marks a lock-free handle (a bucket, a
/// gate) laid in a region by `region::lay_shared` (its
/// `Shareable::share`): its calls take no lock, so it is not [`SHARED`],
/// but its policy is the region's, as a locked one's is. Set once, before
/// the region is handed out; no decision tests it.
#[cfg(feature = "std")]
const REGION: u8 = 16;

/// The bits that send a decision out of line.
const COLD: u8 = POISONED | COUNTING | SHARED;

impl<S> Guarded<S> {
    pub(crate) fn new(state: S) -> Self {
        Guarded {
            flags: AtomicU8::new(0),
            state,
            counts: Counts::default(),
        }
    }

    /// The state, for laying and attaching a shared handle.
    #[cfg(feature = "std")]
    pub(crate) fn state(&self) -> &S {
        &self.state
    }

    /// The state, for the one owner of a handle being laid.
    #[cfg(feature = "std")]
    pub(crate) fn state_mut(&mut self) -> &mut S {
        &mut self.state
    }

    /// Counts a decision, on a handle that counts (a shared one that does
    /// not comes out of line too).
    #[inline]
    fn note(&self, counted: Tally) {
        if self.flags.load(Ordering::Relaxed) & COUNTING != 0 {
            self.counts.note(counted);
        }
    }

    fn poisoned(&self) -> bool {
        self.flags.load(Ordering::Relaxed) & POISONED != 0
    }

    fn poison(&self) {
        set_flags(&self.flags, POISONED);
    }

    fn placed(&self) -> bool {
        self.flags.load(Ordering::Relaxed) & PLACED != 0
    }

    pub(crate) fn mark_placed(&self) {
        set_flags(&self.flags, PLACED);
    }

    /// Whether the handle is shared (laid in a region).
    #[cfg(feature = "std")]
    pub(crate) fn is_shared(&self) -> bool {
        self.flags.load(Ordering::Relaxed) & SHARED != 0
    }

    /// Marks a handle laid in a region (`region::lay_shared`), before the
    /// region is handed out.
    #[cfg(feature = "std")]
    pub(crate) fn mark_shared(&self) {
        set_flags(&self.flags, SHARED);
    }

    /// Whether the handle lies in a region shared between processes,
    /// locked ([`SHARED`]) or lock-free ([`REGION`]).
    #[cfg(feature = "std")]
    pub(crate) fn in_region(&self) -> bool {
        self.flags.load(Ordering::Relaxed) & (SHARED | REGION) != 0
    }

    /// Marks a lock-free handle laid in a region (its `Shareable::share`),
    /// before the region is handed out.
    #[cfg(feature = "std")]
    pub(crate) fn mark_in_region(&self) {
        set_flags(&self.flags, REGION);
    }
}

/// An opaque C handle: a struct whose only field is a [`Guarded`] state.
pub(crate) trait Handle {
    type State;
    fn guarded(&self) -> &Guarded<Self::State>;

    /// Checks and keeps or resets the state of a shared handle whose
    /// holder died holding the region's lock (`region::repair`): whether
    /// it was kept. A handle type with nothing to repair keeps it.
    ///
    /// # Safety
    ///
    /// The caller holds the region's lock (`region::RegionLock::run`).
    #[cfg(feature = "std")]
    unsafe fn recover(_state: &Self::State) -> bool {
        true
    }
}

/// Runs `inner` for a call on `guarded`'s handle: directly, or for a shared
/// handle holding the region's lock, which answers
/// `WEIR_ERR_REGION_RECOVERED` (a dead holder's state checked and kept or
/// reset) or `WEIR_ERR_REGION_BROKEN` instead of running it.
#[cfg(feature = "std")]
#[inline]
fn shared<H: Handle, R>(
    guarded: &Guarded<H::State>,
    inner: impl FnOnce() -> R,
) -> Result<R, weir_status> {
    if !guarded.is_shared() {
        return Ok(inner());
    }
    // SAFETY: the shared flag is set only on a handle laid in a region by
    // `region::lay_shared`.
    let lock = unsafe { crate::region::RegionLock::of(guarded) };
    // SAFETY: `recover` runs holding the region's lock.
    lock.run(|| unsafe { H::recover(&guarded.state) }, inner)
}

/// No handle is shared in the firmware build: `inner`'s answer.
#[cfg(not(feature = "std"))]
#[inline]
fn shared<H: Handle, R>(
    _: &Guarded<H::State>,
    inner: impl FnOnce() -> R,
) -> Result<R, weir_status> {
    Ok(inner())
}

/// A handle whose state only an exclusive reference may change: the
/// bucket, whose takes read its policy without a lock, so its
/// reconfiguration ([`reconfigure_alone`]) runs with no other call.
pub(crate) trait HandleMut: Handle {
    fn guarded_mut(&mut self) -> &mut Guarded<Self::State>;
}

/// A reconfiguration (`weir_<type>_reconfigure`): `body` replaces the
/// policy behind `handle` under the handle's own lock (or its atomics), so
/// a call racing it sees the old policy or the new one, wholly, and answers
/// an error changing nothing. `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`,
/// `WEIR_ERR_POISONED` before it runs; a panic in it poisons the handle
/// (`WEIR_ERR_PANIC`). It counts nothing: it is not a decision. A shared
/// handle, locked or lock-free, answers `WEIR_ERR_REGION_UNSUPPORTED`
/// after the pointer's checks and before the poison's: its policy is its
/// region's, laid once for every process.
pub(crate) fn reconfigure<H: Handle>(
    handle: *const H,
    body: impl FnOnce(&H::State) -> Result<(), weir_status>,
) -> weir_status {
    if let Err(status) = usable(handle) {
        return status;
    }
    // SAFETY: `usable` checked that the pointer is not NULL and aligned, and
    // a handle pointer came from `new_handle` or `place_handle` and has not
    // been freed (the header states this contract).
    #[cfg(feature = "std")]
    if unsafe { &*handle }.guarded().in_region() {
        return WEIR_ERR_REGION_UNSUPPORTED;
    }
    status_on(handle, body)
}

/// [`reconfigure`] for a [`HandleMut`]: `body` changes the state through
/// an exclusive reference, and the caller holds every other call on the
/// handle off while it runs (the header says so).
pub(crate) fn reconfigure_alone<H: HandleMut>(
    handle: *mut H,
    body: impl FnOnce(&mut H::State) -> Result<(), weir_status>,
) -> weir_status {
    if let Err(status) = usable(handle) {
        return status;
    }
    // SAFETY: a non-NULL handle pointer came from `new_handle` or
    // `place_handle` and has not been freed, and the header's contract for
    // this reconfiguration is that no other call on the handle runs
    // meanwhile, so this is the only reference to it.
    let guarded = unsafe { &mut *handle }.guarded_mut();
    // A shared handle's policy is its region's, laid once for every
    // process: it is not changed in place. Checked before the poison, as
    // [`reconfigure`] checks it.
    #[cfg(feature = "std")]
    if guarded.in_region() {
        return WEIR_ERR_REGION_UNSUPPORTED;
    }
    if guarded.poisoned() {
        return WEIR_ERR_POISONED;
    }
    match catching(|| body(&mut guarded.state)) {
        Ok(result) => result.err().unwrap_or(WEIR_OK),
        Err(()) => {
            guarded.poison();
            WEIR_ERR_PANIC
        }
    }
}

/// Why a call on a handle could not run its body.
enum Fault {
    Null,
    Poisoned,
    Panicked,
    /// A shared handle's region lock recovered from a dead holder, or
    /// cannot be taken (see `region::RegionLock`): the handle stays usable.
    Region(weir_status),
}

impl From<Fault> for weir_status {
    fn from(fault: Fault) -> weir_status {
        match fault {
            Fault::Null => WEIR_ERR_NULL,
            Fault::Poisoned => WEIR_ERR_POISONED,
            Fault::Panicked => WEIR_ERR_PANIC,
            Fault::Region(status) => status,
        }
    }
}

/// Runs `body` on the state behind `handle`, unless `handle` is NULL or
/// poisoned; a panic in `body` poisons the handle.
#[inline]
fn run<H: Handle, R>(handle: *const H, body: impl FnOnce(&H::State) -> R) -> Result<R, Fault> {
    // SAFETY: a non-NULL handle pointer came from `new_handle` and has not
    // been passed to `free_handle` (the header states this contract).
    let handle = unsafe { handle.as_ref() }.ok_or(Fault::Null)?;
    let guarded = handle.guarded();
    if guarded.poisoned() {
        return Err(Fault::Poisoned);
    }
    match shared::<H, _>(guarded, || catching(|| body(&guarded.state))) {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(())) => {
            guarded.poison();
            Err(Fault::Panicked)
        }
        Err(status) => Err(Fault::Region(status)),
    }
}

/// The state behind `handle`, for a call that acts on several handles at
/// once inside one [`guard_status`] (`weir_charge_all`): `WEIR_ERR_NULL`
/// for a NULL handle, `WEIR_ERR_MISALIGNED` for one no handle can be at,
/// `WEIR_ERR_POISONED` for one an earlier panic poisoned. A panic in such
/// a call poisons none of them: it is `WEIR_ERR_PANIC`, and the call
/// touches a handle only through its state's atomic operations.
#[inline]
pub(crate) fn state_of<'a, H: Handle + 'a>(handle: *const H) -> Result<&'a H::State, weir_status> {
    usable(handle)?;
    // SAFETY: a non-NULL handle pointer came from `new_handle` and has not
    // been passed to `free_handle` (the header states this contract).
    let guarded = unsafe { &*handle }.guarded();
    if guarded.poisoned() {
        return Err(WEIR_ERR_POISONED);
    }
    Ok(&guarded.state)
}

/// A decision or a reading on a handle: `body`'s answer, or `neutral` when
/// the handle is NULL or poisoned or `body` panicked.
#[inline]
pub(crate) fn on<H: Handle, R>(
    handle: *const H,
    neutral: R,
    body: impl FnOnce(&H::State) -> R,
) -> R {
    run(handle, body).unwrap_or(neutral)
}

/// A call on a handle that reports a status: NULL, poisoned and panicked
/// handles get `WEIR_ERR_NULL`, `WEIR_ERR_POISONED` and `WEIR_ERR_PANIC`.
#[inline]
pub(crate) fn status_on<H: Handle>(
    handle: *const H,
    body: impl FnOnce(&H::State) -> Result<(), weir_status>,
) -> weir_status {
    match run(handle, body) {
        Ok(result) => result.err().unwrap_or(WEIR_OK),
        Err(fault) => fault.into(),
    }
}

/// A decision on a handle, as [`on`], that a counting handle counts:
/// `tally` says what the answer was (admitted, refused, an error); it
/// comes before `body` so that a call reads as [`on`] does. On a
/// handle that does not count, the only test is the one byte [`on`] tests
/// for poison; the counting path is out of line.
#[inline]
pub(crate) fn decide<H: Handle, R>(
    handle: *const H,
    neutral: R,
    tally: impl FnOnce(&H::State, &R) -> Tally,
    body: impl FnOnce(&H::State) -> R,
) -> R {
    // SAFETY: a non-NULL handle pointer came from `new_handle` and has not
    // been passed to `free_handle` (the header states this contract).
    let Some(handle) = (unsafe { handle.as_ref() }) else {
        return neutral;
    };
    let guarded = handle.guarded();
    if guarded.flags.load(Ordering::Relaxed) & COLD != 0 {
        return flagged::<H, R>(guarded, neutral, body, tally);
    }
    catching(|| body(&guarded.state)).unwrap_or_else(|_| {
        guarded.poison();
        neutral
    })
}

/// [`decide`] on a handle that counts, or is poisoned. `extern "C"`, which
/// cannot unwind (it catches every panic itself), so that [`decide`]
/// reaches it by a jump and a decision on a handle that does not count
/// needs no stack frame for it.
#[cold]
#[inline(never)]
#[allow(improper_ctypes_definitions)]
extern "C" fn flagged<H: Handle, R>(
    guarded: &Guarded<H::State>,
    neutral: R,
    body: impl FnOnce(&H::State) -> R,
    tally: impl FnOnce(&H::State, &R) -> Tally,
) -> R {
    if guarded.poisoned() {
        return neutral;
    }
    match shared::<H, _>(guarded, || {
        catching(|| {
            let answer = body(&guarded.state);
            let counted = tally(&guarded.state, &answer);
            (answer, counted)
        })
    }) {
        Ok(Ok((answer, counted))) => {
            guarded.note(counted);
            answer
        }
        Ok(Err(())) => {
            guarded.poison();
            neutral
        }
        // A recovery (or a lock that cannot be taken) ran nothing: a
        // decision that answers no status refuses.
        Err(_) => neutral,
    }
}

/// [`decide`] for the hottest paths (a bucket's take, a bloom's allow, a
/// pool's take and give): on a handle that counts or is poisoned it runs
/// `cold`, a call of an out-of-line `extern "C"` function that takes the
/// entry point's own arguments and decides with [`decide_counted`]. Its
/// arguments are then already where the call needs them, so the compiler
/// reaches it by a jump and a handle that does not count runs exactly the
/// instructions it ran before counting existed.
#[inline]
pub(crate) fn decide_or<H: Handle, R>(
    handle: *const H,
    neutral: R,
    cold: impl FnOnce() -> R,
    body: impl FnOnce(&H::State) -> R,
) -> R {
    // SAFETY: a non-NULL handle pointer came from `new_handle` and has not
    // been passed to `free_handle` (the header states this contract).
    let Some(handle) = (unsafe { handle.as_ref() }) else {
        return neutral;
    };
    let guarded = handle.guarded();
    if guarded.flags.load(Ordering::Relaxed) & COLD != 0 {
        return cold();
    }
    catching(|| body(&guarded.state)).unwrap_or_else(|_| {
        guarded.poison();
        neutral
    })
}

/// The `cold` path of [`decide_or`]: [`decide`]'s, inline.
#[inline]
pub(crate) fn decide_counted<H: Handle, R>(
    handle: *const H,
    neutral: R,
    tally: impl FnOnce(&H::State, &R) -> Tally,
    body: impl FnOnce(&H::State) -> R,
) -> R {
    // SAFETY: as in `decide_or`, which checked the pointer.
    let Some(handle) = (unsafe { handle.as_ref() }) else {
        return neutral;
    };
    flagged::<H, R>(handle.guarded(), neutral, body, tally)
}

/// [`decide_or`] for a status-returning call: on a handle that counts or
/// is poisoned it runs `cold`, which decides with
/// [`decide_status_counted`].
#[inline]
pub(crate) fn decide_status_or<H: Handle>(
    handle: *const H,
    cold: impl FnOnce() -> weir_status,
    body: impl FnOnce(&H::State) -> Result<(), weir_status>,
) -> weir_status {
    // SAFETY: a non-NULL handle pointer came from `new_handle` and has not
    // been passed to `free_handle` (the header states this contract).
    let Some(handle) = (unsafe { handle.as_ref() }) else {
        return WEIR_ERR_NULL;
    };
    let guarded = handle.guarded();
    if guarded.flags.load(Ordering::Relaxed) & COLD != 0 {
        return cold();
    }
    match catching(|| body(&guarded.state)) {
        Ok(result) => result.err().unwrap_or(WEIR_OK),
        Err(_) => {
            guarded.poison();
            WEIR_ERR_PANIC
        }
    }
}

/// The `cold` path of [`decide_status_or`]: [`decide_status`]'s, inline.
#[inline]
pub(crate) fn decide_status_counted<H: Handle>(
    handle: *const H,
    tally: impl FnOnce(weir_status) -> Tally,
    body: impl FnOnce(&H::State) -> Result<(), weir_status>,
) -> weir_status {
    // SAFETY: as in `decide_status_or`, which checked the pointer.
    let Some(handle) = (unsafe { handle.as_ref() }) else {
        return WEIR_ERR_NULL;
    };
    flagged_status::<H>(handle.guarded(), body, tally)
}

/// A status-returning call on a handle, as [`status_on`], that a counting
/// handle counts: `tally` maps the status it answers (`WEIR_OK` or an
/// error) to what it counts. On a handle that does not count, the only
/// test is the one byte [`status_on`] tests for poison.
#[inline]
pub(crate) fn decide_status<H: Handle>(
    handle: *const H,
    tally: impl FnOnce(weir_status) -> Tally,
    body: impl FnOnce(&H::State) -> Result<(), weir_status>,
) -> weir_status {
    // SAFETY: a non-NULL handle pointer came from `new_handle` and has not
    // been passed to `free_handle` (the header states this contract).
    let Some(handle) = (unsafe { handle.as_ref() }) else {
        return WEIR_ERR_NULL;
    };
    let guarded = handle.guarded();
    if guarded.flags.load(Ordering::Relaxed) & COLD != 0 {
        return flagged_status::<H>(guarded, body, tally);
    }
    match catching(|| body(&guarded.state)) {
        Ok(result) => result.err().unwrap_or(WEIR_OK),
        Err(_) => {
            guarded.poison();
            WEIR_ERR_PANIC
        }
    }
}

/// [`decide_status`] on a handle that counts, or is poisoned; `extern
/// "C"` as [`flagged`] is.
#[cold]
#[inline(never)]
#[allow(improper_ctypes_definitions)]
extern "C" fn flagged_status<H: Handle>(
    guarded: &Guarded<H::State>,
    body: impl FnOnce(&H::State) -> Result<(), weir_status>,
    tally: impl FnOnce(weir_status) -> Tally,
) -> weir_status {
    if guarded.poisoned() {
        return WEIR_ERR_POISONED;
    }
    match shared::<H, _>(guarded, || catching(|| body(&guarded.state))) {
        Ok(Ok(result)) => {
            let status = result.err().unwrap_or(WEIR_OK);
            guarded.note(tally(status));
            status
        }
        Ok(Err(())) => {
            guarded.poison();
            WEIR_ERR_PANIC
        }
        Err(status) => status,
    }
}

/// Turns counting on for `handle` (`weir_<type>_start_counting`): from this
/// call on, its decisions are counted. `WEIR_ERR_NULL`,
/// `WEIR_ERR_MISALIGNED`, `WEIR_ERR_POISONED`; a second call changes
/// nothing.
pub(crate) fn start_counting<H: Handle>(handle: *const H) -> weir_status {
    guard_status(|| {
        state_of(handle)?;
        // SAFETY: `state_of` found `handle` non-NULL, aligned and not
        // poisoned; by the header's contract it came from `new_handle`.
        let guarded = unsafe { &*handle }.guarded();
        set_flags(&guarded.flags, COUNTING);
        Ok(())
    })
}

/// Writes what `handle` counted to `*out` (`weir_<type>_read_counts`):
/// `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for the handle or `out`,
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count. A poisoned
/// handle's counts are read all the same: they stopped with its poisoning.
pub(crate) fn read_counts<H: Handle>(handle: *const H, out: *mut weir_counts) -> weir_status {
    guard_status(|| {
        usable(handle)?;
        usable(out)?;
        // SAFETY: `handle` is non-NULL and aligned and, by the header's
        // contract, came from `new_handle` and has not been freed.
        let guarded = unsafe { &*handle }.guarded();
        if guarded.flags.load(Ordering::Relaxed) & COUNTING == 0 {
            return Err(WEIR_ERR_COUNTS_OFF);
        }
        write_out(out, guarded.counts.read())
    })
}

/// Runs `body`: `Err` if it panicked (hosted: `catch_unwind`). In the
/// firmware build there is no unwinding: a panic stops in the panic handler
/// (src/firmware.rs) and never returns, so the answer is always `Ok`.
#[cfg(feature = "std")]
#[inline]
fn catching<R>(body: impl FnOnce() -> R) -> Result<R, ()> {
    catch_unwind(AssertUnwindSafe(body)).map_err(|_| ())
}

/// [`catching`] in the firmware build: `body`'s answer.
#[cfg(not(feature = "std"))]
#[inline]
fn catching<R>(body: impl FnOnce() -> R) -> Result<R, ()> {
    Ok(body())
}

/// A call without a handle: `body`'s answer, or `neutral` if it panicked.
#[inline]
pub(crate) fn guard<R>(neutral: R, body: impl FnOnce() -> R) -> R {
    catching(body).unwrap_or(neutral)
}

/// A call without a handle that reports a status; a panic is `WEIR_ERR_PANIC`.
#[inline]
pub(crate) fn guard_status(body: impl FnOnce() -> Result<(), weir_status>) -> weir_status {
    match catching(body) {
        Ok(result) => result.err().unwrap_or(WEIR_OK),
        Err(()) => WEIR_ERR_PANIC,
    }
}

/// `Ok` when `ptr` can point to a `T` at all: `WEIR_ERR_NULL` when it is
/// NULL, `WEIR_ERR_MISALIGNED` when its address is not a multiple of `T`'s
/// alignment (reading or writing through it would be undefined behaviour).
/// A call that must not act unless it can write its answer checks its
/// out-pointer with this first.
#[inline]
pub(crate) fn usable<T>(ptr: *const T) -> Result<(), weir_status> {
    if ptr.is_null() {
        Err(WEIR_ERR_NULL)
    } else if !aligned(ptr) {
        Err(WEIR_ERR_MISALIGNED)
    } else {
        Ok(())
    }
}

/// Whether `ptr`'s address is a multiple of `T`'s alignment. (The same test
/// as `<*const T>::is_aligned`, which needs Rust 1.79.)
#[inline]
fn aligned<T>(ptr: *const T) -> bool {
    ptr as usize % core::mem::align_of::<T>() == 0
}

/// Makes a handle with `make` and writes it to `*out`; `*out` is written
/// only on success. A NULL or misaligned `out` fails before `make` runs.
#[cfg(feature = "std")]
pub(crate) fn new_handle<H>(
    out: *mut *mut H,
    make: impl FnOnce() -> Result<H, weir_status>,
) -> weir_status {
    guard_status(|| {
        usable(out)?;
        let handle = Box::into_raw(Box::new(make()?));
        // SAFETY: `out` is non-NULL and aligned and, by the header's
        // contract, points to writable storage for one pointer.
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// Frees a handle made by `new_handle`; NULL is accepted and ignored, and
/// so is a placed handle (made by [`place_handle`]): its memory is the
/// caller's, and nothing in it owns anything else. In the firmware build
/// every handle is placed, so this does nothing.
pub(crate) fn free_handle<H: Handle>(handle: *mut H) {
    guard((), || {
        // SAFETY: a non-NULL handle came from `new_handle` or `place_handle`
        // and, by the header's contract, has not been freed or had its
        // memory reused.
        match unsafe { handle.as_ref() } {
            Some(held) if held.guarded().placed() => {}
            // SAFETY: not placed, so it came from `Box::into_raw` in
            // `new_handle` and, by the header's contract, is freed only once.
            #[cfg(feature = "std")]
            Some(_) => drop(unsafe { Box::from_raw(handle) }),
            _ => {}
        }
    })
}

/// Where a placed handle of type `H` with `slots` trailing values of `T`
/// lies in the caller's memory: the handle at the start, the slots at the
/// first multiple of `T`'s alignment after it. Answers (footprint in
/// bytes, alignment, offset of the slots), or `WEIR_ERR_TOO_LARGE` when the
/// footprint does not fit a `usize`.
pub(crate) fn placement<H, T>(slots: usize) -> Result<(usize, usize, usize), weir_status> {
    let (size_t, align_t) = (core::mem::size_of::<T>(), core::mem::align_of::<T>());
    let offset = core::mem::size_of::<H>().div_ceil(align_t) * align_t;
    let total = size_t
        .checked_mul(slots)
        .and_then(|bytes| bytes.checked_add(offset))
        .filter(|&total| total <= isize::MAX as usize)
        .ok_or(WEIR_ERR_TOO_LARGE)?;
    Ok((total, core::mem::align_of::<H>().max(align_t), offset))
}

/// Answers a footprint to the caller's `*size` and `*align`, both checked
/// before either is written.
pub(crate) fn write_footprint(
    (total, align): (usize, usize),
    size: *mut usize,
    align_out: *mut usize,
) -> Result<(), weir_status> {
    usable(size)?;
    usable(align_out)?;
    write_out(size, total)?;
    write_out(align_out, align)
}

/// Lays a handle in the caller's memory. `plan` checks the arguments and
/// answers how many slots of `T` the handle needs, with what `make` needs
/// besides; `mem` must then hold `len` bytes, at least the footprint of `H`
/// and those slots (see [`placement`]), starting at a multiple of its
/// alignment. `make` gets the slots, each already written with `fill`, and
/// answers the handle, which is written at `mem`; `*out` then points at it.
/// Checked before anything is written, in this order: `out` usable, `plan`,
/// `mem` NULL, `mem` misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len` short
/// (`WEIR_ERR_PLACED_TOO_SMALL`).
///
/// The handle keeps the slots' address, so the memory must stay where it
/// is, and stay the caller's, until the handle is no longer used; the
/// handle owns nothing else, so there is nothing to free.
pub(crate) fn place_handle<H: Handle, T: Copy + 'static, P>(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut H,
    fill: T,
    plan: impl FnOnce() -> Result<(usize, P), weir_status>,
    make: impl FnOnce(P, &'static mut [T]) -> Result<H, weir_status>,
) -> weir_status {
    place_handle_with(mem, len, out, move || fill, plan, make)
}

/// [`place_handle`] for slots that are not `Copy` (the bloom's lines of
/// atomics): each slot is written with a value `fill` makes. The same
/// checks in the same order, the same footprint ([`placement`]).
pub(crate) fn place_handle_with<H: Handle, T: 'static, P>(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut H,
    fill: impl Fn() -> T,
    plan: impl FnOnce() -> Result<(usize, P), weir_status>,
    make: impl FnOnce(P, &'static mut [T]) -> Result<H, weir_status>,
) -> weir_status {
    guard_status(|| {
        usable(out)?;
        let (slots, plan) = plan()?;
        let (total, align, offset) = placement::<H, T>(slots)?;
        if mem.is_null() {
            return Err(WEIR_ERR_NULL);
        }
        if mem as usize % align != 0 {
            return Err(WEIR_ERR_PLACED_MISALIGNED);
        }
        if len < total {
            return Err(WEIR_ERR_PLACED_TOO_SMALL);
        }
        let base = mem.cast::<u8>();
        // SAFETY: `mem` is non-NULL, aligned for `H` and `T` (`align` is the
        // larger of theirs and `offset` a multiple of `T`'s), and by the
        // header's contract `len` bytes at it are the caller's to write and
        // stay put while the handle is used; `offset + slots * size_of::<T>()`
        // is at most `total <= len`, so the slots lie inside, after the
        // handle's `size_of::<H>()` bytes. Each slot is written before the
        // slice is made, so every value in it is initialised.
        let slots = unsafe {
            let first = base.add(offset).cast::<T>();
            for index in 0..slots {
                first.add(index).write(fill());
            }
            core::slice::from_raw_parts_mut(first, slots)
        };
        let handle = make(plan, slots)?;
        let at = base.cast::<H>();
        // SAFETY: `at` is `mem`, aligned for `H`, with `size_of::<H>() <= len`
        // bytes the caller's to write (see above); by the header's contract
        // no live handle is there, so nothing that must be dropped is
        // overwritten.
        unsafe { at.write(handle) };
        // SAFETY: just written, and no other thread has its address yet.
        let placed = unsafe { &*at };
        // Before `*out` publishes it: `free_handle` must leave it alone.
        placed.guarded().mark_placed();
        write_out(out, at)
    })
}

/// [`place_handle`] for a handle with two runs of slots, `n` of `T` then
/// `n` of `U` (the shedder's buckets and its queues' slots): `plan`
/// answers `n`, and `make` gets both runs. The same checks in the same
/// order; the footprint is [`placement`]'s for `n` values of `(T, U)` laid
/// one run after the other (see [`placement2`]).
pub(crate) fn place_handle2<H: Handle, T: Copy + 'static, U: Copy + 'static, P>(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut H,
    fill: (T, U),
    plan: impl FnOnce() -> Result<(usize, P), weir_status>,
    make: impl FnOnce(P, &'static mut [T], &'static mut [U]) -> Result<H, weir_status>,
) -> weir_status {
    guard_status(|| {
        usable(out)?;
        let (slots, plan) = plan()?;
        let (total, align, first, second) = placement2::<H, T, U>(slots)?;
        if mem.is_null() {
            return Err(WEIR_ERR_NULL);
        }
        if mem as usize % align != 0 {
            return Err(WEIR_ERR_PLACED_MISALIGNED);
        }
        if len < total {
            return Err(WEIR_ERR_PLACED_TOO_SMALL);
        }
        let base = mem.cast::<u8>();
        // SAFETY: as in `place_handle`: `mem` is aligned for `H`, `T` and
        // `U`, both runs lie inside `total <= len` bytes the caller's to
        // write, after the handle and apart from each other (`placement2`),
        // and every slot is written before its slice is made.
        let (ts, us) = unsafe {
            let t = base.add(first).cast::<T>();
            let u = base.add(second).cast::<U>();
            for index in 0..slots {
                t.add(index).write(fill.0);
                u.add(index).write(fill.1);
            }
            (
                core::slice::from_raw_parts_mut(t, slots),
                core::slice::from_raw_parts_mut(u, slots),
            )
        };
        let handle = make(plan, ts, us)?;
        let at = base.cast::<H>();
        // SAFETY: as in `place_handle`.
        unsafe { at.write(handle) };
        // SAFETY: just written, and no other thread has its address yet.
        let placed = unsafe { &*at };
        placed.guarded().mark_placed();
        write_out(out, at)
    })
}

/// Where a placed handle of type `H` with `n` values of `T` and then `n`
/// of `U` lies: (footprint, alignment, offset of the `T`s, offset of the
/// `U`s), or `WEIR_ERR_TOO_LARGE`.
pub(crate) fn placement2<H, T, U>(n: usize) -> Result<(usize, usize, usize, usize), weir_status> {
    let (end_t, align_ht, first) = placement::<H, T>(n)?;
    let align_u = core::mem::align_of::<U>();
    let second = end_t
        .checked_next_multiple_of(align_u)
        .ok_or(WEIR_ERR_TOO_LARGE)?;
    let total = core::mem::size_of::<U>()
        .checked_mul(n)
        .and_then(|bytes| bytes.checked_add(second))
        .filter(|&total| total <= isize::MAX as usize)
        .ok_or(WEIR_ERR_TOO_LARGE)?;
    Ok((total, align_ht.max(align_u), first, second))
}

/// A placed handle with no slots besides itself (bucket, gate, period,
/// budget, adaptive limit): `make` checks the arguments and makes it, then
/// [`place_handle`] lays it at `mem`.
pub(crate) fn place_plain<H: Handle>(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut H,
    make: impl FnOnce() -> Result<H, weir_status>,
) -> weir_status {
    place_handle(
        mem,
        len,
        out,
        (),
        || Ok((0, make()?)),
        |handle, _| Ok(handle),
    )
}

/// The footprint of a placed handle with no slots: its size and alignment.
pub(crate) fn plain_footprint<H>(bytes: *mut usize, align: *mut usize) -> weir_status {
    guard_status(|| {
        write_footprint(
            (core::mem::size_of::<H>(), core::mem::align_of::<H>()),
            bytes,
            align,
        )
    })
}

/// Writes `value` to the caller's `*out`, or fails with `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED` and writes nothing.
#[inline]
pub(crate) fn write_out<T>(out: *mut T, value: T) -> Result<(), weir_status> {
    usable(out)?;
    // SAFETY: `out` is non-NULL and aligned and, by the header's contract,
    // points to writable storage for a `T`.
    unsafe { out.write(value) };
    Ok(())
}

/// Reads the caller's `*input`, or fails with `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED`.
#[inline]
pub(crate) fn read_in<T: Copy>(input: *const T) -> Result<T, weir_status> {
    usable(input)?;
    // SAFETY: `input` is non-NULL and aligned and, by the header's contract,
    // points to a readable `T` whose every bit pattern is valid (only plain
    // integer and float fields cross the boundary this way).
    Ok(unsafe { input.read() })
}

/// A policy the caller passes by pointer, or `preset` when it passes NULL;
/// `WEIR_ERR_MISALIGNED` for a misaligned one (never the preset in its
/// place: the caller meant a policy of its own).
pub(crate) fn policy_or<T: Copy>(policy: *const T, preset: T) -> Result<T, weir_status> {
    if policy.is_null() {
        return Ok(preset);
    }
    read_in(policy)
}

/// The caller's value behind `value` for updating in place, or
/// `WEIR_ERR_NULL` / `WEIR_ERR_MISALIGNED`.
#[inline]
pub(crate) fn value_mut<'a, T>(value: *mut T) -> Result<&'a mut T, weir_status> {
    usable(value)?;
    // SAFETY: `value` is non-NULL and aligned and, by the header's contract,
    // points to a writable `T` that no other thread uses during this call;
    // only types whose every bit pattern is valid are passed this way.
    Ok(unsafe { &mut *value })
}

/// Whether `len` values of `T` are more than any array can hold.
fn too_long<T>(len: usize) -> bool {
    len > isize::MAX as usize / core::mem::size_of::<T>().max(1)
}

/// The caller's array of `len` values at `items` for reading: empty when
/// `items` is NULL or `len` is too large for any array to have;
/// `WEIR_ERR_MISALIGNED` when `items` is not aligned for a `T`.
pub(crate) fn slice_in<'a, T>(items: *const T, len: usize) -> Result<&'a [T], weir_status> {
    if items.is_null() || too_long::<T>(len) {
        return Ok(&[]);
    }
    if !aligned(items) {
        return Err(WEIR_ERR_MISALIGNED);
    }
    // SAFETY: `items` is non-NULL and aligned and, by the header's contract,
    // points to `len` readable values of a type whose every bit pattern is
    // valid, which no other thread writes during this call.
    Ok(unsafe { core::slice::from_raw_parts(items, len) })
}

/// The caller's buffer of `cap` values at `items` for writing, which may be
/// uninitialised: empty when `items` is NULL or `cap` is too large for any
/// buffer to have; `WEIR_ERR_MISALIGNED` when `items` is not aligned for a
/// `T`. Callers pass only as many as they will write.
pub(crate) fn slice_out<'a, T>(
    items: *mut T,
    cap: usize,
) -> Result<&'a mut [MaybeUninit<T>], weir_status> {
    if items.is_null() || too_long::<T>(cap) {
        return Ok(&mut []);
    }
    if !aligned(items) {
        return Err(WEIR_ERR_MISALIGNED);
    }
    // SAFETY: `items` is non-NULL and aligned and, by the header's contract,
    // points to `cap` writable slots for `T` that no other thread uses
    // during this call; `MaybeUninit` asks nothing of their contents.
    Ok(unsafe { core::slice::from_raw_parts_mut(items.cast::<MaybeUninit<T>>(), cap) })
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use crate::lock::ShortLock;
    use std::ptr;

    /// A handle whose operations can be told to panic.
    struct Probe(Guarded<ShortLock<i64>>);

    impl Handle for Probe {
        type State = ShortLock<i64>;
        fn guarded(&self) -> &Guarded<ShortLock<i64>> {
            &self.0
        }
    }

    fn bump(state: &ShortLock<i64>, explode: bool) -> i64 {
        let mut count = state.lock();
        *count += 1;
        assert!(!explode, "probe told to panic");
        *count
    }

    #[test]
    fn null_handles_get_the_neutral_answer_or_null_status() {
        let null: *const Probe = ptr::null();
        assert_eq!(on(null, -1, |s| bump(s, false)), -1);
        assert_eq!(status_on(null, |_| Ok(())), WEIR_ERR_NULL);
    }

    #[test]
    fn a_panic_poisons_the_handle_and_it_refuses_afterwards() {
        let probe = Probe(Guarded::new(ShortLock::new(0)));
        assert_eq!(on(&probe, -1, |s| bump(s, false)), 1);
        assert_eq!(on(&probe, -1, |s| bump(s, true)), -1);
        assert_eq!(on(&probe, -1, |s| bump(s, false)), -1);
        assert_eq!(status_on(&probe, |_| Ok(())), WEIR_ERR_POISONED);

        let fresh = Probe(Guarded::new(ShortLock::new(0)));
        let status = status_on(&fresh, |s| {
            bump(s, true);
            Ok(())
        });
        assert_eq!(status, WEIR_ERR_PANIC);
        assert_eq!(status_on(&fresh, |_| Ok(())), WEIR_ERR_POISONED);
    }

    #[test]
    fn guards_without_a_handle_turn_panics_into_answers() {
        assert_eq!(guard(7, || panic!("boom")), 7);
        assert_eq!(guard_status(|| panic!("boom")), WEIR_ERR_PANIC);
        assert_eq!(guard_status(|| Err(WEIR_ERR_NEGATIVE)), WEIR_ERR_NEGATIVE);
        assert_eq!(guard_status(|| Ok(())), WEIR_OK);
    }

    #[test]
    fn handles_are_written_only_on_success_and_free_accepts_null() {
        let mut out: *mut Probe = ptr::null_mut();
        assert_eq!(
            new_handle(&mut out, || Err(WEIR_ERR_NEGATIVE)),
            WEIR_ERR_NEGATIVE
        );
        assert!(out.is_null());
        assert_eq!(
            new_handle::<Probe>(ptr::null_mut(), || unreachable!()),
            WEIR_ERR_NULL
        );
        assert_eq!(
            new_handle(&mut out, || Ok(Probe(Guarded::new(ShortLock::new(5))))),
            WEIR_OK
        );
        assert_eq!(on(out, -1, |s| bump(s, false)), 6);
        free_handle(out);
        free_handle::<Probe>(ptr::null_mut());
    }

    #[test]
    fn out_and_in_pointers_are_checked() {
        assert_eq!(write_out(ptr::null_mut::<i64>(), 1), Err(WEIR_ERR_NULL));
        let mut slot = 0_i64;
        assert_eq!(write_out(&mut slot, 9), Ok(()));
        assert_eq!(slot, 9);
        assert_eq!(read_in(ptr::null::<i64>()), Err(WEIR_ERR_NULL));
        assert_eq!(read_in(&slot), Ok(9));
        assert_eq!(policy_or(ptr::null::<i64>(), 3), Ok(3));
        assert_eq!(policy_or(&slot, 3), Ok(9));
        assert_eq!(value_mut(ptr::null_mut::<i64>()), Err(WEIR_ERR_NULL));
        assert_eq!(value_mut(&mut slot).map(|v| *v), Ok(9));
    }

    /// Eight-aligned storage for a few `i64`s, and a pointer one byte into it:
    /// never aligned for an `i64`, never dereferenced by the tests.
    #[repr(C, align(8))]
    struct Storage([u8; 40]);

    fn misaligned(storage: &mut Storage) -> *mut i64 {
        storage.0.as_mut_ptr().wrapping_add(1).cast::<i64>()
    }

    #[test]
    fn misaligned_pointers_are_a_status_and_never_touched() {
        let mut storage = Storage([0xAB; 40]);
        let odd = misaligned(&mut storage);
        assert_eq!(usable(odd.cast_const()), Err(WEIR_ERR_MISALIGNED));
        assert_eq!(usable(ptr::null::<i64>()), Err(WEIR_ERR_NULL));
        assert_eq!(write_out(odd, 1), Err(WEIR_ERR_MISALIGNED));
        assert_eq!(read_in(odd.cast_const()), Err(WEIR_ERR_MISALIGNED));
        // A misaligned policy is refused, not replaced by the preset.
        assert_eq!(policy_or(odd.cast_const(), 3), Err(WEIR_ERR_MISALIGNED));
        assert_eq!(value_mut(odd).map(|v| *v), Err(WEIR_ERR_MISALIGNED));
        assert_eq!(slice_in(odd.cast_const(), 2), Err(WEIR_ERR_MISALIGNED));
        assert_eq!(slice_in(odd.cast_const(), 0), Err(WEIR_ERR_MISALIGNED));
        assert_eq!(slice_out(odd, 2).map(|s| s.len()), Err(WEIR_ERR_MISALIGNED));
        let mut out: *mut Probe = ptr::null_mut();
        let odd_out = (&mut out as *mut *mut Probe)
            .cast::<u8>()
            .wrapping_add(1)
            .cast::<*mut Probe>();
        assert_eq!(
            new_handle::<Probe>(odd_out, || unreachable!("made before out was checked")),
            WEIR_ERR_MISALIGNED
        );
        assert!(out.is_null());
        // Nothing was written anywhere.
        assert_eq!(storage.0, [0xAB; 40]);
        // Every offset that is a multiple of the alignment is accepted.
        let base = storage.0.as_mut_ptr();
        for offset in 0..16 {
            let at = base.wrapping_add(offset).cast::<i64>();
            let aligned = offset % core::mem::align_of::<i64>() == 0;
            assert_eq!(usable(at.cast_const()).is_ok(), aligned, "{offset}");
        }
        // A type aligned to 1 is aligned anywhere.
        assert_eq!(read_in(base.wrapping_add(3).cast_const()), Ok(0xAB_u8));
    }

    #[test]
    fn aligned_slices_are_the_callers_memory_and_null_is_empty() {
        let mut items = [1_i64, 2, 3];
        assert_eq!(slice_in(items.as_ptr(), 3), Ok(&[1, 2, 3][..]));
        assert_eq!(slice_in(ptr::null::<i64>(), 3), Ok(&[][..]));
        assert_eq!(slice_in(items.as_ptr(), usize::MAX), Ok(&[][..]));
        let room = slice_out(items.as_mut_ptr(), 2).unwrap();
        room[1].write(7);
        assert_eq!(items, [1, 7, 3]);
        assert_eq!(slice_out(ptr::null_mut::<i64>(), 2).map(|s| s.len()), Ok(0));
    }
}
