//! A per-handle lock for the pool's C face: an uncontended lock and unlock
//! are one compare-and-swap and one swap.
//!
//! `std::sync::Mutex` costs the same two atomics, but its poisoning reads the
//! thread's panic count on each lock and unlock, about a fifth of a pool
//! take through the C ABI. A handle does not need that
//! poisoning: `guard` already marks a handle whose operation panicked, and
//! refuses it afterwards. The state word is the futex protocol of Drepper's
//! "Futexes Are Tricky" (std's own Linux mutex): 0 free, 1 locked, 2 locked
//! and someone may sleep. Only the sleeping differs: a contended thread
//! sleeps on a std `Condvar`, so no platform call is needed.

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
