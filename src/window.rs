//! C face of [`weir_core::window`].

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::counts::{weir_counts, Tally};
#[cfg(feature = "std")]
use crate::guard::new_handle;
use crate::guard::{decide_status, read_counts, reconfigure, start_counting};
use crate::guard::{
    free_handle, guard_status, on, place_handle, placement, slice_out, status_on, write_footprint,
    write_out, Guarded, Handle,
};
use crate::lock::ShortLock;
#[cfg(feature = "std")]
use crate::region::{
    attach, lay_shared, read_recoveries, region_footprint, run_fits, weir_recoveries, Layout,
    Repair, Shareable, WEIR_REGION_WINDOW,
};
use crate::slots::Slots;
use crate::status::weir_status::{self, *};
use weir_core::window::{Window, WindowError, WindowTotal};

impl From<WindowError> for weir_status {
    fn from(error: WindowError) -> weir_status {
        weir_status::of(error.code())
    }
}

/// A sum and how many values went into it (a mean once `count` is
/// positive). Both saturate at `INT64_MAX` / `INT64_MIN` instead of wrapping.
/// 16 bytes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_window_total {
    /// The values added, summed.
    pub sum: i64,
    /// How many values were added.
    pub count: i64,
}

assert_eq_size!(weir_window_total, [u8; 16]);
const_assert_eq!(core::mem::align_of::<weir_window_total>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_window_total, sum), 0);
const_assert_eq!(core::mem::offset_of!(weir_window_total, count), 8);

impl From<WindowTotal> for weir_window_total {
    fn from(total: WindowTotal) -> weir_window_total {
        weir_window_total {
            sum: total.sum,
            count: total.count,
        }
    }
}

/// A rolling window: `size` buckets that together cover the last `window_ns`,
/// each bucket a sum and a count. Writing at a later `now` clears the
/// buckets the gap swept past and snaps the head to a bucket boundary;
/// reading at a later `now` skips them without clearing, so two reads at the
/// same `now` agree; a `now` before the head bucket opened counts as no time
/// passing. Safe to share between threads: each call takes a short
/// per-handle lock. Heap per handle: 16 bytes per bucket plus about 110
/// bytes. Made by `weir_window_new`, freed by `weir_window_free`.
///
/// In the firmware build (docs/firmware.md) a window is placed only: on a
/// 32-bit core 16 bytes per bucket plus 80 (720 for 40 buckets). Its updates
/// hold the build's critical section (interrupts masked, with `single-core`);
/// the longest measured under QEMU: a call of 1214 instructions (40 buckets) on
/// a Cortex-M4F, a section of 5243 on a Cortex-M0.
pub struct weir_window(Guarded<ShortLock<Window<WindowTotal, Slots<WindowTotal>>>>);

impl Handle for weir_window {
    type State = ShortLock<Window<WindowTotal, Slots<WindowTotal>>>;
    fn guarded(&self) -> &Guarded<Self::State> {
        &self.0
    }

    #[cfg(feature = "std")]
    unsafe fn recover(state: &Self::State) -> bool {
        // SAFETY: by `recover`'s contract the caller holds the region's
        // lock.
        unsafe { crate::region::repair(state) }
    }
}

/// Makes an empty window of `size` buckets covering `window_ns`, its first
/// bucket opening at `now`, and writes it to `*out`. A `size` below one is
/// raised to one; each bucket is `window_ns / size` wide, and at least 1 ns.
/// `WEIR_ERR_WINDOW_SPAN` if `window_ns` is zero or negative,
/// `WEIR_ERR_WINDOW_SIZE` above 1048576 buckets, `WEIR_ERR_NO_MEMORY` if the
/// buckets cannot be allocated, `WEIR_ERR_NULL` if `out` is NULL; `*out` is
/// written only on success.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_window_new(
    size: i32,
    window_ns: i64,
    now: i64,
    out: *mut *mut weir_window,
) -> weir_status {
    new_handle(out, || {
        let window = Window::new(i64::from(size), window_ns, now)?.map_store(Slots::heap);
        Ok(weir_window(Guarded::new(ShortLock::new(window))))
    })
}

/// How many buckets a window of `size` over `window_ns` keeps, checked as
/// `weir_window_new` checks them.
fn buckets(size: i32, window_ns: i64) -> Result<usize, weir_status> {
    if window_ns <= 0 {
        return Err(WEIR_ERR_WINDOW_SPAN);
    }
    let size = i64::from(size).max(1);
    if size > weir_core::window::MAX_SIZE {
        return Err(WEIR_ERR_WINDOW_SIZE);
    }
    // 1 <= size <= MAX_SIZE.
    Ok(size as usize)
}

/// The bytes and the alignment a placed window of `size` buckets over
/// `window_ns` needs, written to `*bytes` and `*align`: the handle and one
/// 16-byte bucket per `size`. `WEIR_ERR_WINDOW_SPAN` and
/// `WEIR_ERR_WINDOW_SIZE` as for `weir_window_new`; `WEIR_ERR_NULL` or
/// `WEIR_ERR_MISALIGNED` for a bad `bytes` or `align` pointer. Nothing is
/// written on an error.
#[no_mangle]
pub extern "C" fn weir_window_footprint(
    size: i32,
    window_ns: i64,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    guard_status(|| {
        let (total, alignment, _) =
            placement::<weir_window, WindowTotal>(buckets(size, window_ns)?)?;
        write_footprint((total, alignment), bytes, align)
    })
}

/// Lays a window in memory the caller owns and writes it to `*out`: the
/// window `weir_window_new` makes, taken by every `weir_window_*` call,
/// without a heap. `mem` holds `len` bytes, at least the footprint
/// `weir_window_footprint` answers, at a multiple of its alignment. The
/// memory stays the caller's: `weir_window_free` on a placed window does
/// nothing, and the memory may be reused once no call uses the window.
/// Checked in this order, nothing written on an error: `out`
/// (`WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`), `WEIR_ERR_WINDOW_SPAN`,
/// `WEIR_ERR_WINDOW_SIZE`, then `mem` NULL (`WEIR_ERR_NULL`), `mem`
/// misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len` below the footprint
/// (`WEIR_ERR_PLACED_TOO_SMALL`).
#[no_mangle]
pub extern "C" fn weir_window_init_in(
    mem: *mut core::ffi::c_void,
    len: usize,
    size: i32,
    window_ns: i64,
    now: i64,
    out: *mut *mut weir_window,
) -> weir_status {
    place_handle(
        mem,
        len,
        out,
        WindowTotal::default(),
        || Ok((buckets(size, window_ns)?, ())),
        |(), slots| {
            let window = Window::new_in(Slots::placed(slots), window_ns, now)?;
            Ok(weir_window(Guarded::new(ShortLock::new(window))))
        },
    )
}

#[cfg(feature = "std")]
impl Repair for Window<WindowTotal, Slots<WindowTotal>> {
    /// Keeps the state as the dead call left it: a half-made add or advance is at most that call's one value added or not, or buckets cleared that the next advance clears anyway.
    fn repair(&mut self) -> bool {
        true
    }
}

#[cfg(feature = "std")]
impl Shareable for weir_window {
    const KIND: u32 = WEIR_REGION_WINDOW;
    const LOCKED: bool = true;

    fn layout_for(slots: usize) -> Result<Layout, weir_status> {
        if slots == 0 || slots as u64 > weir_core::window::MAX_SIZE as u64 {
            return Err(WEIR_ERR_WINDOW_SIZE);
        }
        let (bytes, align, first) = placement::<weir_window, WindowTotal>(slots)?;
        Ok(Layout {
            bytes,
            align,
            runs: [first, 0],
        })
    }

    fn slots(&self) -> usize {
        // SAFETY: read by the laying call, before the handle is handed
        // out: no other reference to the value is in use.
        unsafe { &*self.0.state().peek() }.store().as_ref().len()
    }

    fn share(&mut self) {
        let lock = self.0.state_mut();
        lock.owned().store_mut().make_relative();
    }

    fn fits(&self, layout: &Layout, slots: usize) -> bool {
        let lock = self.0.state();
        // SAFETY: the store's place and length are integers written when
        // the handle was laid and never changed after; the attach reads
        // them, and the lock's flag, and nothing else.
        let store = unsafe { &*lock.peek() }.store();
        let first = (self as *const weir_window as usize).wrapping_add(layout.runs[0]);
        run_fits(
            store.relative(),
            (store as *const Slots<WindowTotal>).cast(),
            first,
            slots,
        )
    }
}

/// The bytes and the alignment a shared window needs
/// (`weir_window_init_shared`), written to `*bytes` and `*align`: a
/// 256-byte `weir_region_header` and the region's 64-byte lock, then the placed window
/// (`weir_window_footprint`); 64-aligned. Checked and answered as
/// `weir_window_footprint`.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_window_shared_footprint(
    size: i32,
    window_ns: i64,
    bytes: *mut usize,
    align: *mut usize,
) -> weir_status {
    crate::guard::guard_status(|| {
        let layout = weir_window::layout_for(buckets(size, window_ns)?)?;
        crate::guard::write_footprint(region_footprint(&layout)?, bytes, align)
    })
}

/// Lays a window that processes share in `mem`, memory the caller maps
/// `MAP_SHARED`, and writes it to `*out` for this process: a
/// `weir_region_header` (its kind WEIR_REGION_WINDOW; its policy `size`, an int32_t, then `window_ns`, an int64_t),
/// then the window `weir_window_init_in` would lay, its lock a robust,
/// process-shared mutex. Another process gets its own `weir_window *` from
/// `weir_window_attach`; every `weir_window_*` call then works on the one
/// window. A process killed holding the lock leaves the window as its
/// call left it (at most that call's one value added or not); the next call answers as a recovered call
/// does (see `weir_breaker_init_shared`) and `weir_window_recoveries`
/// counts it. Lay it once, before any process attaches. Checked as
/// `weir_breaker_init_shared` checks its region (`WEIR_ERR_NULL`,
/// `WEIR_ERR_PLACED_MISALIGNED`, `WEIR_ERR_REGION_UNSUPPORTED`,
/// `WEIR_ERR_PLACED_TOO_SMALL`), the arguments as `weir_window_init_in`
/// checks them.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_window_init_shared(
    mem: *mut core::ffi::c_void,
    len: usize,
    size: i32,
    window_ns: i64,
    now: i64,
    out: *mut *mut weir_window,
) -> weir_status {
    let mut policy = [0u8; 12];
    policy[..4].copy_from_slice(&size.to_le_bytes());
    policy[4..].copy_from_slice(&window_ns.to_le_bytes());
    lay_shared(mem, len, out, &policy, |at, room, placed| {
        weir_window_init_in(at, room, size, window_ns, now, placed)
    })
}

/// Checks the region at `mem` that `weir_window_init_shared` laid and
/// writes its window, for this process, to `*out`: refused with the
/// statuses `weir_breaker_attach` lists, nothing written.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_window_attach(
    mem: *mut core::ffi::c_void,
    len: usize,
    out: *mut *mut weir_window,
) -> weir_status {
    attach(mem, len, out)
}

/// Writes what a shared window's lock has recovered from (see
/// `weir_window_init_shared`) to `*out`; all zero for one that is not
/// shared. `WEIR_ERR_NULL`, `WEIR_ERR_MISALIGNED`, `WEIR_ERR_POISONED`. A
/// reading: it changes nothing.
#[cfg(feature = "std")]
#[no_mangle]
pub extern "C" fn weir_window_recoveries(
    handle: *const weir_window,
    out: *mut weir_recoveries,
) -> weir_status {
    crate::guard::guard_status(|| read_recoveries(handle, out))
}

/// Frees a window. NULL is accepted and ignored, and so is a placed one
/// (`weir_window_init_in`): its memory is the caller's.
#[no_mangle]
pub extern "C" fn weir_window_free(window: *mut weir_window) {
    free_handle(window)
}

/// Adds `value` to the bucket `now` falls in (its sum saturates), after
/// clearing what the gap since the last write swept past. `WEIR_ERR_NULL`
/// for a NULL window.
#[no_mangle]
pub extern "C" fn weir_window_add(window: *const weir_window, now: i64, value: i64) -> weir_status {
    let counted = move |status| match status {
        WEIR_OK => Tally::Admitted(value as f64),
        _ => Tally::Error,
    };
    decide_status(window, counted, move |state| {
        state.lock().add(now, value);
        Ok(())
    })
}

/// Writes to `*out` the sum and count over the buckets inside the window at
/// `now`, with the bucket `now` falls in when `current` is true and without
/// it (complete buckets only) when false. Clears nothing. `WEIR_ERR_NULL` if
/// `window` or `out` is NULL, `WEIR_ERR_MISALIGNED` if `out` is misaligned.
#[no_mangle]
pub extern "C" fn weir_window_read_total(
    window: *const weir_window,
    now: i64,
    current: bool,
    out: *mut weir_window_total,
) -> weir_status {
    status_on(window, |state| {
        let total = state.lock().total(now, current);
        write_out(out, total.into())
    })
}

/// Copies the buckets inside the window at `now` into `out`, oldest first,
/// and returns how many it wrote. With `current` true there are `size` of
/// them, the last being the bucket `now` falls in; with `current` false that
/// one is left out (`size - 1`). Buckets a write at `now` would clear are
/// copied as empty, so each position always covers the same stretch of time
/// relative to `now`. With room for fewer (`cap`), the newest `cap` are
/// written. Clears nothing. Returns 0 for a NULL window, or a NULL or
/// misaligned `out`.
#[no_mangle]
pub extern "C" fn weir_window_read_buckets(
    window: *const weir_window,
    now: i64,
    current: bool,
    out: *mut weir_window_total,
    cap: usize,
) -> usize {
    on(window, 0, |state| {
        let window = state.lock();
        let live = window.size() - usize::from(!current);
        let Ok(room) = slice_out(out, cap.min(live)) else {
            return 0;
        };
        let skip = live - room.len();
        let mut seen: usize = 0;
        window.each(now, current, |bucket| {
            if let Some(slot) = seen.checked_sub(skip).and_then(|at| room.get_mut(at)) {
                slot.write((*bucket).into());
            }
            seen += 1;
        });
        room.len()
    })
}

/// Gives a window a new `size` and `window_ns` at `now`, in place, checked
/// as `weir_window_new` checks them. If its buckets keep their layout (the
/// same size and `window_ns / size`), nothing changes. Otherwise it is
/// resampled at `now`: it opens again at `now` with the total inside at
/// `now` (the current bucket included) in its first bucket, so
/// `weir_window_read_total` at `now` with `current` reads the same (without
/// `current`, complete buckets only, it reads them once that bucket has
/// completed), and those values then leave together one new `window_ns`
/// later; `weir_window_read_buckets` shows them in that one bucket. Its
/// counts carry over.
///
/// Memory: a heap window of another size allocates its new buckets before
/// it lets go of the old; a placed window keeps the size its memory holds
/// (a smaller `size` is held to it, as `weir_window_init_in` holds it) and
/// answers `WEIR_ERR_PLACED_TOO_SMALL` for a larger one.
///
/// Safe beside the window's other calls (not `weir_window_free`): it takes
/// the window's own lock, as they do, so a call racing it sees the old
/// layout or the new one, wholly; a window of another size allocates its
/// new buckets and moves into them under that lock. Checked in this order, nothing changed on an
/// error: `WEIR_ERR_NULL` or `WEIR_ERR_MISALIGNED` for a bad `window`,
/// `WEIR_ERR_REGION_UNSUPPORTED` for a shared window
/// (`weir_window_init_shared`: its policy is its region's, laid once for
/// every process), `WEIR_ERR_POISONED`, `WEIR_ERR_WINDOW_SPAN`, `WEIR_ERR_WINDOW_SIZE`,
/// `WEIR_ERR_PLACED_TOO_SMALL`, `WEIR_ERR_NO_MEMORY`. It counts nothing.
#[no_mangle]
pub extern "C" fn weir_window_reconfigure(
    window: *mut weir_window,
    size: i32,
    window_ns: i64,
    now: i64,
) -> weir_status {
    reconfigure(window, |state| {
        let count = buckets(size, window_ns)?;
        let mut window = state.lock();
        let held = window.size();
        let placed = window.store().is_placed();
        if count == held || (placed && count < held) {
            return Ok(window.reconfigure(window_ns, now)?);
        }
        if placed {
            return Err(WEIR_ERR_PLACED_TOO_SMALL);
        }
        let ring = Slots::grown(count, WindowTotal::default())?;
        *window = window.reconfigure_into(ring, window_ns, now)?;
        Ok(())
    })
}

/// How many buckets the window has; 0 for a NULL window.
#[no_mangle]
pub extern "C" fn weir_window_size(window: *const weir_window) -> i32 {
    // The size is at most 1048576, so it fits.
    on(window, 0, |state| state.lock().size() as i32)
}

/// How much time one bucket covers, in nanoseconds; 0 for a NULL window.
#[no_mangle]
pub extern "C" fn weir_window_width(window: *const weir_window) -> i64 {
    on(window, 0, |state| state.lock().width())
}

/// Turns counting on for a window: from this call on, `weir_window_read_counts`
/// reports what it decided. Call it right after `weir_window_new` to count
/// everything since the handle was made; a second call changes nothing. Until
/// then the handle costs what it did before counting existed (see `weir_counts`
/// for what counting costs). `WEIR_ERR_NULL` for a NULL handle,
/// `WEIR_ERR_MISALIGNED` for one no handle can be at, `WEIR_ERR_POISONED` for a
/// poisoned one.
#[no_mangle]
pub extern "C" fn weir_window_start_counting(window: *const weir_window) -> weir_status {
    start_counting(window)
}

/// Writes to `*out` what a window decided since `weir_window_start_counting`. A
/// reading: it changes nothing. `admitted`: adds; `refused`: 0 (a window
/// refuses nothing); `errors`: 0 on a handle (an add answers an error only for
/// a NULL window); `units`: the sum of the added values.
///
/// `WEIR_ERR_COUNTS_OFF` for a handle that does not count; `WEIR_ERR_NULL` if
/// the handle or `out` is NULL, `WEIR_ERR_MISALIGNED` if either is misaligned.
/// `*out` is written only on `WEIR_OK`.
#[no_mangle]
pub extern "C" fn weir_window_read_counts(
    window: *const weir_window,
    out: *mut weir_counts,
) -> weir_status {
    read_counts(window, out)
}
