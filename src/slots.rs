//! The store behind a handle whose size is set at run time (window,
//! breaker, sliding, shedder, pool, and the bloom's lines): one type for a
//! heap handle and a placed one, so every call takes either. The firmware
//! build has only placed ones, and no bloom.

use crate::status::weir_status;
#[cfg(feature = "std")]
use weir_core::bloom::BloomLine;

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

    /// Whether the slots are in the caller's memory (a placed handle's),
    /// which weir can neither grow nor free. Always, in the firmware build.
    pub(crate) fn is_placed(&self) -> bool {
        #[cfg(feature = "std")]
        return !self.owned;
        #[cfg(not(feature = "std"))]
        return true;
    }

    /// New slots of `len` values `fill` on the heap, for a heap handle that
    /// grows (a reconfiguration to a larger size): `WEIR_ERR_NO_MEMORY` when
    /// they cannot be allocated.
    #[cfg(feature = "std")]
    pub(crate) fn grown(len: usize, fill: T) -> Result<Slots<T>, weir_status>
    where
        T: Clone,
    {
        let mut ring = Vec::new();
        ring.try_reserve_exact(len)
            .map_err(|_| weir_status::WEIR_ERR_NO_MEMORY)?;
        ring.resize(len, fill);
        Ok(Slots::heap(ring))
    }

    /// [`Slots::grown`] in the firmware build, which has no heap: always
    /// `WEIR_ERR_NO_MEMORY` (there every handle is placed, and a placed one
    /// never grows, so no call reaches this).
    #[cfg(not(feature = "std"))]
    pub(crate) fn grown(_len: usize, _fill: T) -> Result<Slots<T>, weir_status> {
        Err(weir_status::WEIR_ERR_NO_MEMORY)
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

/// A bloom array's lines, lent only through shared references: its words
/// are atomics that other threads (and, in a region, other processes)
/// update at the same time, so no `&mut` is ever made to them. A boxed
/// slice weir allocated (a heap handle; freed when the handle drops) or a
/// region's lines in the caller's memory (a view; never freed by weir).
#[cfg(feature = "std")]
pub(crate) struct Lines {
    slice: &'static [BloomLine],
    owned: bool,
}

#[cfg(feature = "std")]
impl Lines {
    /// The lines of a `Vec` (its length; spare capacity is given back).
    pub(crate) fn heap(lines: Vec<BloomLine>) -> Lines {
        Lines {
            slice: Box::leak(lines.into_boxed_slice()),
            owned: true,
        }
    }

    /// Lines in the caller's memory, which stay there while the handle is
    /// used (the header's contract).
    pub(crate) fn placed(slice: &'static [BloomLine]) -> Lines {
        Lines {
            slice,
            owned: false,
        }
    }
}

#[cfg(feature = "std")]
impl AsRef<[BloomLine]> for Lines {
    #[inline]
    fn as_ref(&self) -> &[BloomLine] {
        self.slice
    }
}

#[cfg(feature = "std")]
impl Drop for Lines {
    fn drop(&mut self) {
        if self.owned {
            let slice: *mut [BloomLine] = self.slice as *const [BloomLine] as *mut [BloomLine];
            // SAFETY: an owned store's slice came from `Box::leak` in
            // `Lines::heap`, a unique allocation that only this store
            // borrowed, and is dropped only here, once. Every byte of a
            // `BloomLine` is inside an atomic (an `UnsafeCell`: 8 words, no
            // padding), so the shared borrow it was kept as carries the
            // permission to write and free it.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}
