//! The locks behind the handles, chosen at compile time: one code path in
//! every handle's module (`lock::ShortLock`, taken with its `lock`), two
//! builds.
//!
//! - Hosted (`std`): `ShortLock` is the lock below: an uncontended lock and
//!   unlock are one compare-and-swap and one swap. Every handle with a lock
//!   takes it. A shared
//!   handle (src/region.rs) keeps it too: its calls take the region's
//!   robust lock around it, out of line, so a heap or placed handle pays
//!   nothing for sharing.
//! - Firmware (no `std`): `ShortLock` is `Critical`, the critical section the
//!   build chose (src/firmware.rs): with `single-core` interrupts masked
//!   (PRIMASK) while the lock is held, so an interrupt handler never finds
//!   it taken; with `privileged` the same and a spinlock word in the lock,
//!   for the other cores; with `sdk-critical-section` the SDK's
//!   `weir_critical_enter`/`weir_critical_exit`. On a target with 64-bit
//!   atomics built with none of the three (no Cortex-M is one), a spinlock
//!   word alone: there a handle must not be called from an interrupt
//!   handler that can preempt a call on the same handle.
//!
//! Also here: the flag byte and tag counter updates of the handles, which
//! on a target without compare-and-swap (Cortex-M0) run inside that same
//! critical section.
//!
//! # The hosted short lock
//!
//! `std::sync::Mutex` costs the same two atomics, but its poisoning reads the
//! thread's panic count on each lock and unlock, about a fifth of a pool
//! take through the C ABI. A handle does not need that
//! poisoning: `guard` already marks a handle whose operation panicked, and
//! refuses it afterwards. The state word is the futex protocol of Drepper's
//! "Futexes Are Tricky" (std's own Linux mutex): 0 free, 1 locked, 2 locked
//! and someone may sleep. Only the sleeping differs: a contended thread
//! sleeps on a std `Condvar`, so no platform call is needed.

#[cfg(not(feature = "std"))]
pub(crate) use firmware::Critical as ShortLock;
#[cfg(feature = "std")]
pub(crate) use hosted::ShortLock;

use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};

/// Sets `bits` in `flags` (a handle's flag byte).
#[cfg(target_has_atomic = "8")]
#[inline]
pub(crate) fn set_flags(flags: &AtomicU8, bits: u8) {
    flags.fetch_or(bits, Ordering::Relaxed);
}

/// Sets `bits` in `flags` (a handle's flag byte).
#[cfg(not(target_has_atomic = "8"))]
#[inline]
pub(crate) fn set_flags(flags: &AtomicU8, bits: u8) {
    critical_update(|| flags.store(flags.load(Ordering::Relaxed) | bits, Ordering::Relaxed));
}

/// Adds one to `counter` and answers the value before.
#[cfg(target_has_atomic = "32")]
#[inline]
pub(crate) fn next(counter: &AtomicU32) -> u32 {
    counter.fetch_add(1, Ordering::Relaxed)
}

/// Adds one to `counter` and answers the value before.
#[cfg(not(target_has_atomic = "32"))]
#[inline]
pub(crate) fn next(counter: &AtomicU32) -> u32 {
    critical_update(|| {
        let value = counter.load(Ordering::Relaxed);
        counter.store(value.wrapping_add(1), Ordering::Relaxed);
        value
    })
}

/// `update` inside the build's critical section: how a target without
/// compare-and-swap (Cortex-M0) updates a flag byte or a counter.
#[cfg(not(target_has_atomic = "8"))]
fn critical_update<R>(update: impl FnOnce() -> R) -> R {
    let state = crate::firmware::enter();
    let answer = update();
    crate::firmware::exit(state);
    answer
}

#[cfg(feature = "std")]
mod hosted {
    use core::cell::UnsafeCell;
    use core::ops::{Deref, DerefMut};
    use core::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Condvar, Mutex, PoisonError};

    const FREE: u32 = 0;
    const LOCKED: u32 = 1;
    const SLEEPERS: u32 = 2;

    /// A value behind the lock.
    #[derive(Debug, Default)]
    pub(crate) struct ShortLock<T> {
        state: AtomicU32,
        sleep: Mutex<()>,
        wake: Condvar,
        value: UnsafeCell<T>,
    }

    // SAFETY: the value is reached only through a `ShortGuard`, and at most one
    // exists at a time (the state word's compare-and-swap or swap from FREE
    // hands out the lock once, with Acquire; the guard's drop releases it with
    // Release), so sharing the lock shares `T` as a `Mutex<T>` would.
    unsafe impl<T: Send> Sync for ShortLock<T> {}

    impl<T> ShortLock<T> {
        pub(crate) fn new(value: T) -> ShortLock<T> {
            ShortLock {
                state: AtomicU32::new(FREE),
                sleep: Mutex::new(()),
                wake: Condvar::new(),
                value: UnsafeCell::new(value),
            }
        }

        /// The value, for the one owner of a handle being laid in a region.
        pub(crate) fn owned(&mut self) -> &mut T {
            self.value.get_mut()
        }

        /// The value, unlocked: for reading integers that never change
        /// after a shared handle is laid (its attach's check).
        pub(crate) fn peek(&self) -> *const T {
            self.value.get()
        }

        /// Frees the lock, whoever holds it, and lends the value: for a
        /// shared handle whose holder died holding it (`region::repair`).
        ///
        /// # Safety
        ///
        /// No one else holds the lock or takes it while the answer lives:
        /// the caller holds the lock around it (the region's).
        #[allow(clippy::mut_from_ref)]
        pub(crate) unsafe fn force_free(&self) -> &mut T {
            self.state.store(FREE, Ordering::Release);
            // SAFETY: by this function's contract no other reference to
            // the value exists while the answer lives.
            unsafe { &mut *self.value.get() }
        }

        /// Waits for the lock and holds it until the guard drops (unwinding
        /// included, so a panic inside never leaves it held).
        #[inline]
        pub(crate) fn lock(&self) -> ShortGuard<'_, T> {
            if self
                .state
                .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                self.lock_contended();
            }
            ShortGuard { lock: self }
        }

        #[cold]
        fn lock_contended(&self) {
            // A short spin first: the pool's critical sections are a few hundred
            // instructions.
            for _ in 0..64 {
                core::hint::spin_loop();
                if self.state.load(Ordering::Relaxed) == FREE
                    && self
                        .state
                        .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                {
                    return;
                }
            }
            // Marked SLEEPERS whoever holds it, so its unlock wakes one sleeper.
            while self.state.swap(SLEEPERS, Ordering::Acquire) != FREE {
                let mut asleep = self.sleep.lock().unwrap_or_else(PoisonError::into_inner);
                // Checked under `sleep`, which the unlocker takes before it
                // notifies: a wake-up between the check and the wait is not lost.
                while self.state.load(Ordering::Relaxed) == SLEEPERS {
                    asleep = self
                        .wake
                        .wait(asleep)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }

        #[cold]
        fn wake_one(&self) {
            drop(self.sleep.lock().unwrap_or_else(PoisonError::into_inner));
            self.wake.notify_one();
        }
    }

    /// The lock, held.
    pub(crate) struct ShortGuard<'a, T> {
        lock: &'a ShortLock<T>,
    }

    impl<T> Deref for ShortGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            // SAFETY: this guard holds the lock, so no other reference to the
            // value exists while it lives.
            unsafe { &*self.lock.value.get() }
        }
    }

    impl<T> DerefMut for ShortGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            // SAFETY: as in `deref`, and `&mut self` makes this one unique.
            unsafe { &mut *self.lock.value.get() }
        }
    }

    impl<T> Drop for ShortGuard<'_, T> {
        #[inline]
        fn drop(&mut self) {
            if self.lock.state.swap(FREE, Ordering::Release) == SLEEPERS {
                self.lock.wake_one();
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn threads_never_hold_it_at_once() {
            let lock = ShortLock::new((0u64, false));
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        for _ in 0..20_000 {
                            let mut held = lock.lock();
                            assert!(!held.1, "two holders");
                            held.1 = true;
                            held.0 += 1;
                            held.1 = false;
                        }
                    });
                }
            });
            assert_eq!(lock.lock().0, 80_000);
        }

        #[test]
        fn a_panic_inside_releases_it() {
            let lock = ShortLock::new(0);
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _held = lock.lock();
                panic!("inside");
            }));
            assert!(caught.is_err());
            *lock.lock() += 1;
            assert_eq!(*lock.lock(), 1);
        }
    }
}

#[cfg(not(feature = "std"))]
mod firmware {
    use core::cell::UnsafeCell;
    use core::ops::{Deref, DerefMut};
    #[cfg(any(
        feature = "privileged",
        not(any(feature = "single-core", feature = "sdk-critical-section"))
    ))]
    use core::sync::atomic::{AtomicBool, Ordering};

    /// A value behind the firmware build's critical section (see the
    /// module's documentation): held for one call's update, never across
    /// calls.
    pub(crate) struct Critical<T> {
        /// The spinlock word of `privileged` (and of a build with no
        /// feature): true while held.
        #[cfg(any(
            feature = "privileged",
            not(any(feature = "single-core", feature = "sdk-critical-section"))
        ))]
        held: AtomicBool,
        value: UnsafeCell<T>,
    }

    // SAFETY: the value is reached only through a `CriticalGuard`, and at
    // most one exists at a time: the critical section keeps every other
    // context of this core out while it lives, and the spinlock word (where
    // there is one) every other core.
    unsafe impl<T: Send> Sync for Critical<T> {}

    impl<T> Critical<T> {
        pub(crate) fn new(value: T) -> Critical<T> {
            Critical {
                #[cfg(any(
                    feature = "privileged",
                    not(any(feature = "single-core", feature = "sdk-critical-section"))
                ))]
                held: AtomicBool::new(false),
                value: UnsafeCell::new(value),
            }
        }

        /// Enters the critical section and holds it until the guard drops.
        #[inline]
        pub(crate) fn lock(&self) -> CriticalGuard<'_, T> {
            let state = crate::firmware::enter();
            #[cfg(any(
                feature = "privileged",
                not(any(feature = "single-core", feature = "sdk-critical-section"))
            ))]
            while self
                .held
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                core::hint::spin_loop();
            }
            CriticalGuard { lock: self, state }
        }
    }

    /// The critical section, held.
    pub(crate) struct CriticalGuard<'a, T> {
        lock: &'a Critical<T>,
        /// What `firmware::exit` restores.
        state: u32,
    }

    impl<T> Deref for CriticalGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            // SAFETY: this guard holds the section, so no other reference
            // to the value exists while it lives.
            unsafe { &*self.lock.value.get() }
        }
    }

    impl<T> DerefMut for CriticalGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            // SAFETY: as in `deref`, and `&mut self` makes this one unique.
            unsafe { &mut *self.lock.value.get() }
        }
    }

    impl<T> Drop for CriticalGuard<'_, T> {
        #[inline]
        fn drop(&mut self) {
            #[cfg(any(
                feature = "privileged",
                not(any(feature = "single-core", feature = "sdk-critical-section"))
            ))]
            self.lock.held.store(false, Ordering::Release);
            crate::firmware::exit(self.state);
        }
    }
}
