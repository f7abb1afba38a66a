//! The store behind a handle whose size is set at run time (window,
//! breaker, shedder, sliding): one type for a heap handle and a placed one,
//! so every call takes either. The firmware build has only placed ones.

/// Slots a handle reads and writes in place: a boxed slice weir allocated
/// (a heap handle; freed when the handle drops) or slots in the caller's
/// memory (a placed handle; never freed by weir).
pub(crate) struct Slots<T: 'static> {
    slice: &'static mut [T],
    #[cfg(feature = "std")]
    owned: bool,
}

impl<T> Slots<T> {
    /// The slots of a `Vec` (its length; spare capacity is given back).
    #[cfg(feature = "std")]
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
            #[cfg(feature = "std")]
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

#[cfg(feature = "std")]
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
