//! The store behind a handle whose size is set at run time (window,
//! breaker, sliding): one type for a heap handle and a placed one, so every
//! call takes either.

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

    /// Whether the slots are in the caller's memory (a placed handle's),
    /// which weir can neither grow nor free.
    pub(crate) fn is_placed(&self) -> bool {
        !self.owned
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
