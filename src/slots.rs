//! The store behind a handle whose size is set at run time (window,
//! breaker, sliding, shedder, pool, and the bloom's lines): one type for a
//! heap handle, a placed one and a shared one, so every call takes any of
//! them. The firmware build has only placed ones.

use crate::status::weir_status;
use weir_core::bloom::BloomLine;

/// Slots a handle reads and writes in place: a boxed slice weir allocated
/// (a heap handle; freed when the handle drops), slots in the caller's
/// memory (a placed handle; never freed by weir), or slots found from the
/// store's own address (a shared handle, in a region each process maps at
/// its own address: the region holds no pointer, only the distance from
/// this store to its slots). As large as the slice it stands for: the
/// distance is kept in the pointer's place, tagged by its low bit (slots
/// are at least 2-aligned, so a pointer to them never has it). A store of a
/// type that is never shared (`SHAREABLE` false: the pool's) never holds a
/// distance, and its reads skip the test of that bit.
pub(crate) struct Slots<T: 'static, const SHAREABLE: bool = true> {
    /// The first slot, or (low bit set) `1 | ` the bytes from this store's
    /// address to its first slot.
    first: *mut T,
    len: usize,
    #[cfg(feature = "std")]
    owned: bool,
}

// SAFETY: a store is one owner's slots, as the `&'static mut [T]` it stood
// for before was: it moves and is shared between threads exactly as that
// slice would be.
unsafe impl<T: Send, const SHAREABLE: bool> Send for Slots<T, SHAREABLE> {}
// SAFETY: as above; `&Slots` gives only `&[T]`.
unsafe impl<T: Sync, const SHAREABLE: bool> Sync for Slots<T, SHAREABLE> {}

impl<T, const SHAREABLE: bool> Slots<T, SHAREABLE> {
    /// Slots are at least 2-aligned, so the low bit of `first` is free.
    const TAGGABLE: () = assert!(core::mem::align_of::<T>() >= 2);

    /// The slots of a `Vec` (its length; spare capacity is given back).
    #[cfg(feature = "std")]
    pub(crate) fn heap(slots: Vec<T>) -> Slots<T, SHAREABLE> {
        let () = Self::TAGGABLE;
        let slice = Box::leak(slots.into_boxed_slice());
        Slots {
            len: slice.len(),
            first: slice.as_mut_ptr(),
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
    pub(crate) fn grown(len: usize, fill: T) -> Result<Slots<T, SHAREABLE>, weir_status>
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
    pub(crate) fn grown(_len: usize, _fill: T) -> Result<Slots<T, SHAREABLE>, weir_status> {
        Err(weir_status::WEIR_ERR_NO_MEMORY)
    }

    /// Slots in the caller's memory (see `guard::place_handle`).
    pub(crate) fn placed(slice: &'static mut [T]) -> Slots<T, SHAREABLE> {
        let () = Self::TAGGABLE;
        Slots {
            len: slice.len(),
            first: slice.as_mut_ptr(),
            #[cfg(feature = "std")]
            owned: false,
        }
    }

    #[inline]
    fn base(&self) -> *mut T {
        let raw = self.first as usize;
        if !SHAREABLE || raw & 1 == 0 {
            return self.first;
        }
        (self as *const Self)
            .cast::<u8>()
            .wrapping_add(raw ^ 1)
            .cast::<T>()
            .cast_mut()
    }
}

impl<T> Slots<T> {
    #[cfg(feature = "std")]
    /// Turns a placed store that has reached its final address (inside a
    /// shared region) into one that finds its slots from that address, so
    /// that a process mapping the region elsewhere finds them too.
    pub(crate) fn make_relative(&mut self) {
        if self.first as usize & 1 == 0 {
            let offset = (self.first as usize).wrapping_sub(self as *const Self as usize);
            self.first = (offset | 1) as *mut T;
        }
    }

    #[cfg(feature = "std")]
    /// Where a relative store's slots lie: (bytes from the store's own
    /// address, how many), or `None` for a store that holds a pointer.
    pub(crate) fn relative(&self) -> Option<(isize, usize)> {
        let raw = self.first as usize;
        (raw & 1 == 1).then_some(((raw ^ 1) as isize, self.len))
    }
}

impl<T, const SHAREABLE: bool> AsRef<[T]> for Slots<T, SHAREABLE> {
    #[inline]
    fn as_ref(&self) -> &[T] {
        // SAFETY: `base` is the first of `len` initialised slots this store
        // owns or borrows for its whole life: a boxed slice, the caller's
        // placed slots, or (relative) the slots at `offset` from this store
        // inside the same region, which the attach checked against the
        // region's header before handing the handle out.
        unsafe { core::slice::from_raw_parts(self.base(), self.len) }
    }
}

impl<T, const SHAREABLE: bool> AsMut<[T]> for Slots<T, SHAREABLE> {
    #[inline]
    fn as_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `as_ref`; `&mut self` makes this the only reference.
        unsafe { core::slice::from_raw_parts_mut(self.base(), self.len) }
    }
}

#[cfg(feature = "std")]
impl<T, const SHAREABLE: bool> Drop for Slots<T, SHAREABLE> {
    fn drop(&mut self) {
        if self.owned {
            let slice = core::ptr::slice_from_raw_parts_mut(self.first, self.len);
            // SAFETY: an owned store's slice came from `Box::leak` in
            // `Slots::heap` and is dropped only here, once.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}

/// A bloom array's lines, lent only through shared references: its words
/// are atomics that other threads (and, in a region, other processes)
/// update at the same time, so no `&mut` is ever made to them. A boxed
/// slice weir allocated (a heap handle; freed when the handle drops), or
/// lines in the caller's memory (a placed array's own, or a region's for a
/// view; never freed by weir). The firmware build has only the latter.
pub(crate) struct Lines {
    slice: &'static [BloomLine],
    #[cfg(feature = "std")]
    owned: bool,
}

impl Lines {
    /// The lines of a `Vec` (its length; spare capacity is given back).
    #[cfg(feature = "std")]
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
            #[cfg(feature = "std")]
            owned: false,
        }
    }
}

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
