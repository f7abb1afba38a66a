//! The store behind a handle whose size is set at run time (window,
//! breaker, sliding, shedder, pool, and the bloom's lines): one type for a
//! heap handle and a placed one, so every call takes either.

/// Slots a handle reads and writes in place: a boxed slice weir allocated
/// (a heap handle; freed when the handle drops) or slots in the caller's
/// memory (a placed handle; never freed by weir).
pub(crate) struct Slots<T: 'static> {
    slice: &'static mut [T],
    owned: bool,
}

impl<T> Slots<T> {
    /// The slots of a `Vec` (its length; spare capacity is given back).
    pub(crate) fn heap(slots: Vec<T>) -> Slots<T> {
        Slots {
            slice: Box::leak(slots.into_boxed_slice()),
            owned: true,
        }
    }

    /// Slots in the caller's memory (see `guard::place_handle`).
    pub(crate) fn placed(slice: &'static mut [T]) -> Slots<T> {
        Slots {
            slice,
            owned: false,
        }
    }
}

impl<T> AsRef<[T]> for Slots<T> {
    #[inline]
    fn as_ref(&self) -> &[T] {
        self.slice
    }
}

impl<T> AsMut<[T]> for Slots<T> {
    #[inline]
    fn as_mut(&mut self) -> &mut [T] {
        self.slice
    }
}

impl<T> Drop for Slots<T> {
    fn drop(&mut self) {
        if self.owned {
            let slice: *mut [T] = &mut *self.slice;
            // SAFETY: an owned store's slice came from `Box::leak` in
            // `Slots::heap` and is dropped only here, once.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}

/// Slots lent only through shared references, for values that are atomics
/// other threads and processes update at the same time (a bloom array's
/// lines): a boxed slice weir allocated (a heap handle; freed when the
/// handle drops) or slots in the caller's memory (a placed handle's view
/// of a region; never freed by weir). No `&mut` is ever made to them.
pub(crate) struct Shared<T: 'static> {
    slice: &'static [T],
    owned: bool,
}

impl<T> Shared<T> {
    /// The slots of a `Vec` (its length; spare capacity is given back).
    pub(crate) fn heap(slots: Vec<T>) -> Shared<T> {
        Shared {
            slice: Box::leak(slots.into_boxed_slice()),
            owned: true,
        }
    }

    /// Slots in the caller's memory, which stay there while the handle is
    /// used (the header's contract).
    pub(crate) fn placed(slice: &'static [T]) -> Shared<T> {
        Shared {
            slice,
            owned: false,
        }
    }
}

impl<T> AsRef<[T]> for Shared<T> {
    #[inline]
    fn as_ref(&self) -> &[T] {
        self.slice
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        if self.owned {
            let slice: *mut [T] = self.slice as *const [T] as *mut [T];
            // SAFETY: an owned store's slice came from `Box::leak` in
            // `Shared::heap` (a unique allocation, whose `&'static` borrow
            // this store alone held) and is dropped only here, once.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}
