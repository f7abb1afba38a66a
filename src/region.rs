//! Regions shared between processes: the one layout header every shared
//! structure starts with, the lock a killed process cannot hold forever,
//! and the laying and attaching of shared handles.
//!
//! A shared handle is a placed handle (`guard::place_handle`) laid after a
//! [`weir_region_header`] in memory the caller maps `MAP_SHARED`, with two
//! changes made once it sits at its final address: its slots are found
//! from the store's own address (`Slots::make_relative`), and its calls
//! take the region's lock, a `RegionLock` (a robust, process-shared
//! pthread mutex in a block between the header and the handle), around
//! the handle's own. Nothing in the region is a pointer, so every process
//! that maps it, at any address, uses the one handle through the ordinary
//! `weir_X_*` calls.

use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::sync::atomic::{AtomicU64, Ordering};

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::guard::{guard_status, state_of, usable, write_out, Guarded, Handle};
use crate::lock::ShortLock;
use crate::status::weir_status::{self, *};

/// The first word of a shared region's header: "weir:shr" in ASCII, read
/// as a little-endian 64-bit word. (A bloom array laid by
/// `weir_bloom_init_in` starts with "weir:blm" instead; see
/// `weir_region_header`.)
pub const WEIR_REGION_MAGIC: u64 = 0x7268_733a_7269_6577;
/// The layout version of `weir_region_header` this build reads and writes.
/// A region of any other is refused with `WEIR_ERR_REGION_LAYOUT`.
pub const WEIR_REGION_LAYOUT: u32 = 1;
/// The bytes of `weir_region_header`. The region's lock follows it, then
/// the handle (WEIR_REGION_HANDLE_OFFSET).
pub const WEIR_REGION_HEADER_BYTES: usize = 256;
/// The alignment a shared region needs (page-aligned memory from mmap has
/// it).
pub const WEIR_REGION_ALIGN: usize = 64;
/// The most bytes of policy a header keeps.
pub const WEIR_REGION_POLICY_BYTES: usize = 192;

/// `weir_region_header.kind` of a shared breaker.
pub const WEIR_REGION_BREAKER: u32 = 1;
/// `weir_region_header.kind` of a shared shedder.
pub const WEIR_REGION_SHEDDER: u32 = 2;
/// `weir_region_header.kind` of a shared bucket.
pub const WEIR_REGION_BUCKET: u32 = 3;
/// `weir_region_header.kind` of a shared gate.
pub const WEIR_REGION_GATE: u32 = 4;
/// `weir_region_header.kind` of a shared period counter.
pub const WEIR_REGION_PERIOD: u32 = 5;
/// `weir_region_header.kind` of a shared retry budget.
pub const WEIR_REGION_BUDGET: u32 = 6;
/// `weir_region_header.kind` of a shared adaptive limit.
pub const WEIR_REGION_CONCURRENCY: u32 = 7;
/// `weir_region_header.kind` of a shared window.
pub const WEIR_REGION_WINDOW: u32 = 8;
/// `weir_region_header.kind` of a shared sliding window.
pub const WEIR_REGION_SLIDING: u32 = 9;
/// `weir_region_header.kind` of a shared keyed table.
pub const WEIR_REGION_KEYED: u32 = 10;

/// The header every shared region starts with, 256 bytes, written by a
/// `weir_X_init_shared` call and checked, field by field, by every
/// `weir_X_attach`. It holds no pointer; every field is little-endian on
/// the hosts weir builds for. Aligned as a uint64_t; a region starts at a
/// multiple of WEIR_REGION_ALIGN (64).
///
/// A bloom array in shared memory (`weir_bloom_init_in`) keeps its own
/// 64-byte header, layout version 2 (WEIR_BLOOM_VERSION), which maps onto
/// this one: its first word is its magic ("weir:blm" where this header has
/// "weir:shr"), its second its layout version, then its kind and shape; its
/// words need no lock, so it has no lock to recover. A bloom region handed
/// to a `weir_X_attach` call is refused with `WEIR_ERR_REGION_KIND`. A later
/// bloom layout that takes this header will have version 3, which programs
/// of this version refuse with `WEIR_ERR_BLOOM_VERSION`.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug)]
pub struct weir_region_header {
    /// WEIR_REGION_MAGIC.
    pub magic: u64,
    /// WEIR_REGION_LAYOUT when laid by this build.
    pub layout: u32,
    /// What the region holds: WEIR_REGION_BREAKER, WEIR_REGION_SHEDDER,
    /// WEIR_REGION_BUCKET, WEIR_REGION_GATE, WEIR_REGION_PERIOD,
    /// WEIR_REGION_BUDGET, WEIR_REGION_CONCURRENCY, WEIR_REGION_WINDOW,
    /// WEIR_REGION_SLIDING, WEIR_REGION_KEYED.
    pub kind: u32,
    /// The region's bytes, header included: what `weir_X_shared_footprint`
    /// answered for its policy.
    pub bytes: u64,
    /// A fingerprint of the handle's layout in the build that laid it
    /// (weir's version, the compiler, the target, the handle's type and
    /// size): a region laid by a build that lays the handle out otherwise
    /// is refused (`WEIR_ERR_REGION_BUILD`), never misread. Programs
    /// linked against one libweir share regions; so do forked workers of
    /// one program.
    pub build: u64,
    /// The handle's slots (a breaker's or shedder's buckets; 0 for a
    /// bucket).
    pub slots: u64,
    /// The bytes of `policy` in use.
    pub policy_bytes: u32,
    /// Zero.
    pub reserved: u32,
    /// FNV-1a (64-bit) of the header's 256 bytes with this field zero: a
    /// header damaged after it was laid is refused
    /// (`WEIR_ERR_REGION_FOREIGN`).
    pub check: u64,
    /// Zero.
    pub reserved2: u64,
    /// The policy the handle was laid with, as the C struct the init call
    /// took (`weir_breaker_policy`, `weir_shedder_policy`; for a bucket its
    /// rate then its burst, two doubles), zero after `policy_bytes`.
    pub policy: [u8; WEIR_REGION_POLICY_BYTES],
}

assert_eq_size!(weir_region_header, [u8; WEIR_REGION_HEADER_BYTES]);
const_assert_eq!(core::mem::align_of::<weir_region_header>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_region_header, layout), 8);
const_assert_eq!(core::mem::offset_of!(weir_region_header, kind), 12);
const_assert_eq!(core::mem::offset_of!(weir_region_header, bytes), 16);
const_assert_eq!(core::mem::offset_of!(weir_region_header, build), 24);
const_assert_eq!(core::mem::offset_of!(weir_region_header, slots), 32);
const_assert_eq!(core::mem::offset_of!(weir_region_header, policy_bytes), 40);
const_assert_eq!(core::mem::offset_of!(weir_region_header, check), 48);
const_assert_eq!(core::mem::offset_of!(weir_region_header, policy), 64);

/// What a shared handle's lock has recovered from (`weir_X_recoveries`).
/// 16 bytes.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct weir_recoveries {
    /// Times a call found the lock's holder dead and took over: each
    /// answered `WEIR_ERR_REGION_RECOVERED` (or refused).
    pub recovered: u64,
    /// Of those, the times the state did not hold together and was reset.
    pub reset: u64,
}

assert_eq_size!(weir_recoveries, [u8; 16]);
const_assert_eq!(core::mem::offset_of!(weir_recoveries, reset), 8);

/// FNV-1a, 64-bit.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl weir_region_header {
    /// The header's `check`: its bytes hashed with `check` zero.
    fn checksum(&self) -> u64 {
        let mut copy = *self;
        copy.check = 0;
        // SAFETY: the header is 256 bytes of integers with no padding
        // (every field's offset is pinned above and they add up to its
        // size), so all of its bytes are initialised.
        let bytes = unsafe {
            core::slice::from_raw_parts(
                (&copy as *const weir_region_header).cast::<u8>(),
                WEIR_REGION_HEADER_BYTES,
            )
        };
        fnv(bytes)
    }
}

/// Where a shared handle's parts lie, from its type and slot count.
pub(crate) struct Layout {
    /// The placed handle's footprint (the region is the header and this).
    pub(crate) bytes: usize,
    /// Its alignment.
    pub(crate) align: usize,
    /// The byte offsets, from the handle's start, of its runs of slots (at
    /// most two; unused ones are 0).
    pub(crate) runs: [usize; 2],
}

/// A handle type that can be laid in a shared region.
pub(crate) trait Shareable: Handle + Sized {
    /// `weir_region_header.kind`.
    const KIND: u32;
    /// Whether the handle's state is behind a lock, so that its calls take
    /// the region's lock ([`RegionLock`]); a lock-free handle (bucket,
    /// gate) shares its atomics as they are.
    const LOCKED: bool;
    /// Where the parts of a handle with `slots` slots lie; an error for a
    /// count no handle of this type can have.
    fn layout_for(slots: usize) -> Result<Layout, weir_status>;
    /// How many slots this handle has.
    fn slots(&self) -> usize;
    /// This handle, placed at its final address in a region, made
    /// shareable: its slots found from their own address.
    fn share(&mut self) {}
    /// Whether this handle, at its address, has its slots where `layout`
    /// says and `slots` of them (the attach's check).
    fn fits(&self, layout: &Layout, slots: usize) -> bool;
    /// The fingerprint of this type's layout in this build.
    fn build() -> u64 {
        let text = format!(
            "{} {} {} {} {} {} {}",
            env!("CARGO_PKG_VERSION"),
            env!("WEIR_BUILD_RUSTC"),
            env!("WEIR_BUILD_TARGET"),
            Self::KIND,
            core::any::type_name::<Self::State>(),
            core::mem::size_of::<Self>(),
            core::mem::align_of::<Self>(),
        );
        fnv(text.as_bytes())
    }
}

/// Whether a relative store's slots, `(offset, len)` from the store at
/// `store`, are the `slots` at `first`.
pub(crate) fn run_fits(
    relative: Option<(isize, usize)>,
    store: *const u8,
    first: usize,
    slots: usize,
) -> bool {
    relative.is_some_and(|(offset, len)| {
        len == slots && (store as usize).wrapping_add(offset as usize) == first
    })
}

/// The footprint of a shared region holding a handle laid out as
/// `layout`: (bytes, alignment).
pub(crate) fn region_footprint(layout: &Layout) -> Result<(usize, usize), weir_status> {
    let bytes = layout
        .bytes
        .checked_add(WEIR_REGION_HANDLE_OFFSET)
        .filter(|&bytes| bytes <= isize::MAX as usize)
        .ok_or(WEIR_ERR_TOO_LARGE)?;
    Ok((bytes, layout.align.max(WEIR_REGION_ALIGN)))
}

/// The bytes of a policy struct, as the region header keeps them. Only
/// for the C policy structs, whose fields are integers and doubles with no
/// padding (each pins its offsets and size).
pub(crate) fn plain_bytes<T: Copy>(value: &T) -> &[u8] {
    // SAFETY: `T` is one of the C policy structs: every byte of it is a
    // field's, so all are initialised; the slice borrows `value`.
    unsafe {
        core::slice::from_raw_parts((value as *const T).cast::<u8>(), core::mem::size_of::<T>())
    }
}

/// Lays a shared handle: checks `mem`, `len` and `out`, lets `place` lay
/// the handle after the header (it checks the arguments and writes
/// nothing on an error), makes it shared, then writes the header, last.
pub(crate) fn lay_shared<H: Shareable>(
    mem: *mut c_void,
    len: usize,
    out: *mut *mut H,
    policy: &[u8],
    place: impl FnOnce(*mut c_void, usize, *mut *mut H) -> weir_status,
) -> weir_status {
    guard_status(|| {
        usable(out)?;
        if mem.is_null() {
            return Err(WEIR_ERR_NULL);
        }
        if mem as usize % WEIR_REGION_ALIGN != 0 {
            return Err(WEIR_ERR_PLACED_MISALIGNED);
        }
        if !cfg!(target_os = "linux") {
            return Err(WEIR_ERR_REGION_UNSUPPORTED);
        }
        let room = len
            .checked_sub(WEIR_REGION_HANDLE_OFFSET)
            .ok_or(WEIR_ERR_PLACED_TOO_SMALL)?;
        let base = mem.cast::<u8>();
        // SAFETY: `len >= WEIR_REGION_HANDLE_OFFSET`, so the handle's memory
        // starts inside (or just at the end of) the caller's region.
        let handle_mem = unsafe { base.add(WEIR_REGION_HANDLE_OFFSET) }.cast::<c_void>();
        let mut handle: *mut H = core::ptr::null_mut();
        match place(handle_mem, room, &mut handle) {
            WEIR_OK => {}
            status => return Err(status),
        }
        let header_at = mem.cast::<weir_region_header>();
        // SAFETY: `place` succeeded, so `handle` is the handle it just laid
        // at `handle_mem`, in the caller's memory, which by the header's
        // contract no other process uses until this call returns.
        let placed = unsafe { &mut *handle };
        let slots = placed.slots();
        let layout = H::layout_for(slots)?;
        let (bytes, _) = region_footprint(&layout)?;
        placed.share();
        let locked = if H::LOCKED {
            // SAFETY: the lock's 64 bytes lie between the header and the
            // handle, in the caller's region (checked above), 64-aligned.
            RegionLock::init(unsafe { base.add(WEIR_REGION_HEADER_BYTES) }.cast())
        } else {
            Ok(())
        };
        if let Err(status) = locked {
            // SAFETY: the header's 256 bytes are the caller's (checked
            // above); a zero magic keeps any old header from vouching for
            // the handle just overwritten.
            unsafe { core::ptr::addr_of_mut!((*header_at).magic).write(0) };
            return Err(status);
        }
        if H::LOCKED {
            placed.guarded().mark_shared();
        }
        let mut header = weir_region_header {
            magic: WEIR_REGION_MAGIC,
            layout: WEIR_REGION_LAYOUT,
            kind: H::KIND,
            bytes: bytes as u64,
            build: H::build(),
            slots: slots as u64,
            policy_bytes: policy.len() as u32,
            reserved: 0,
            check: 0,
            reserved2: 0,
            policy: [0; WEIR_REGION_POLICY_BYTES],
        };
        header.policy[..policy.len()].copy_from_slice(policy);
        header.check = header.checksum();
        // SAFETY: `mem` is 64-aligned with at least 256 bytes the caller's
        // to write (checked above).
        unsafe { header_at.write(header) };
        write_out(out, handle)
    })
}

/// Checks the region at `mem` and writes its handle, for this process, to
/// `*out`. Checked in this order, nothing written on an error: `out`,
/// `mem` NULL, misaligned (`WEIR_ERR_PLACED_MISALIGNED`), `len` under a
/// header (`WEIR_ERR_REGION_SIZE`), then the header: magic
/// (`WEIR_ERR_REGION_FOREIGN`, or `WEIR_ERR_REGION_KIND` for a bloom
/// array's), layout version, checksum, kind, build, size, and last the
/// handle's slots and lock against the header (`WEIR_ERR_REGION_SHAPE`),
/// and for a locked handle whether this system releases a dead holder's
/// lock (`WEIR_ERR_REGION_UNSUPPORTED`, see [`robust_futexes`]).
pub(crate) fn attach<H: Shareable>(mem: *mut c_void, len: usize, out: *mut *mut H) -> weir_status {
    guard_status(|| {
        usable(out)?;
        if mem.is_null() {
            return Err(WEIR_ERR_NULL);
        }
        if mem as usize % WEIR_REGION_ALIGN != 0 {
            return Err(WEIR_ERR_PLACED_MISALIGNED);
        }
        if len < WEIR_REGION_HEADER_BYTES {
            return Err(WEIR_ERR_REGION_SIZE);
        }
        // SAFETY: `mem` is 64-aligned with at least 256 readable bytes (by
        // the header's contract), and every bit pattern is a valid header:
        // it is integers only.
        let header = unsafe { mem.cast::<weir_region_header>().read_volatile() };
        if header.magic != WEIR_REGION_MAGIC {
            if header.magic == weir_core::bloom::MAGIC {
                return Err(WEIR_ERR_REGION_KIND);
            }
            return Err(WEIR_ERR_REGION_FOREIGN);
        }
        if header.layout != WEIR_REGION_LAYOUT {
            return Err(WEIR_ERR_REGION_LAYOUT);
        }
        if header.check != header.checksum() {
            return Err(WEIR_ERR_REGION_FOREIGN);
        }
        if header.kind != H::KIND {
            return Err(WEIR_ERR_REGION_KIND);
        }
        if header.build != H::build() {
            return Err(WEIR_ERR_REGION_BUILD);
        }
        let slots = usize::try_from(header.slots).map_err(|_| WEIR_ERR_REGION_SIZE)?;
        let layout = H::layout_for(slots).map_err(|_| WEIR_ERR_REGION_SIZE)?;
        let (bytes, _) = region_footprint(&layout).map_err(|_| WEIR_ERR_REGION_SIZE)?;
        if header.bytes != bytes as u64 || bytes > len {
            return Err(WEIR_ERR_REGION_SIZE);
        }
        // SAFETY: the header vouches (its checksum, kind and build match
        // this build's) that a handle of type `H`, laid by this build, sits
        // after it, inside the `bytes <= len` bytes of the region.
        let handle = unsafe { mem.cast::<u8>().add(WEIR_REGION_HANDLE_OFFSET) }.cast::<H>();
        // SAFETY: as above: the handle is there, initialised by the init
        // call, and `fits` reads only its flags and its stores' integers.
        let laid = unsafe { &*handle };
        if laid.guarded().is_shared() != H::LOCKED || !laid.fits(&layout, slots) {
            return Err(WEIR_ERR_REGION_SHAPE);
        }
        if H::LOCKED && !robust_futexes() {
            return Err(WEIR_ERR_REGION_UNSUPPORTED);
        }
        write_out(out, handle)
    })
}

/// The bytes of a region's lock ([`RegionLock`]), between the header and
/// the handle.
const LOCK_BYTES: usize = 64;

/// How far into a shared region its handle starts: the 256-byte header,
/// then 64 bytes for the region's robust lock and its recovery counts.
pub const WEIR_REGION_HANDLE_OFFSET: usize = 320;

const_assert_eq!(
    WEIR_REGION_HANDLE_OFFSET,
    WEIR_REGION_HEADER_BYTES + LOCK_BYTES
);

/// A state that a shared lock can find half-updated (its holder killed
/// mid-operation): `repair` checks its invariants and answers whether it
/// kept it; when they do not hold it resets the state and answers false.
pub(crate) trait Repair {
    fn repair(&mut self) -> bool;
}

/// Repairs the state behind a shared handle's own lock, whose holder died
/// holding the region's lock (and maybe this one): frees the lock and
/// repairs the value ([`Repair`]; a repair that panics counts as a reset).
///
/// # Safety
///
/// The caller holds the region's lock ([`RegionLock::run`]'s recovery), so
/// no one else, in any process, holds or takes `lock`.
pub(crate) unsafe fn repair<T: Repair>(lock: &ShortLock<T>) -> bool {
    // SAFETY: by this function's contract.
    let value = unsafe { lock.force_free() };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| value.repair())).unwrap_or(false)
}

/// Whether the kernel keeps this process's robust-futex list, the list
/// through which it releases a dying holder's robust mutexes (and hands
/// the next locker `EOWNERDEAD`). Without it a process killed holding a
/// region's lock would hold it forever, so locked handles are not shared
/// there. Linux has kept the list since 2.6.17, but an emulator may not:
/// qemu-user answers `ENOSYS` to the robust-list calls, and glibc still
/// makes robust mutexes. Asked once; the answer never changes.
#[cfg(target_os = "linux")]
pub(crate) fn robust_futexes() -> bool {
    use core::sync::atomic::AtomicU8;
    static KNOWN: AtomicU8 = AtomicU8::new(0);
    match KNOWN.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let mut head: *mut c_void = core::ptr::null_mut();
            let mut len: libc::size_t = 0;
            // SAFETY: get_robust_list(0, ...) reads the calling thread's
            // list head and its size into the two locals, which outlive
            // the call; it writes nothing else.
            let answer = unsafe {
                libc::syscall(
                    libc::SYS_get_robust_list,
                    0 as libc::c_long,
                    &mut head as *mut *mut c_void,
                    &mut len as *mut libc::size_t,
                )
            };
            let kept = answer == 0;
            KNOWN.store(if kept { 1 } else { 2 }, Ordering::Relaxed);
            kept
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn robust_futexes() -> bool {
    false
}

/// The lock of a shared region, laid between its header and its handle: a
/// robust, process-shared pthread mutex and the count of its recoveries.
/// A shared handle's calls take it (out of line: `guard` finds a shared
/// handle by its flag) around the handle's own lock, which is then never
/// contended, so a heap or placed handle keeps the lock it had and pays
/// nothing for sharing.
#[repr(C, align(64))]
pub(crate) struct RegionLock {
    #[cfg(target_os = "linux")]
    robust: UnsafeCell<libc::pthread_mutex_t>,
    recovered: AtomicU64,
    reset: AtomicU64,
}

const_assert_eq!(core::mem::size_of::<RegionLock>(), LOCK_BYTES);

// SAFETY: the mutex is made for sharing between threads and processes
// (PTHREAD_PROCESS_SHARED); the counts are atomics.
unsafe impl Sync for RegionLock {}

impl RegionLock {
    /// The region lock of the shared handle whose state is `guarded`.
    ///
    /// # Safety
    ///
    /// `guarded` is the state of a handle laid by [`lay_shared`] (its
    /// shared flag set) or found by [`attach`]: the handle starts
    /// [`WEIR_REGION_HANDLE_OFFSET`] into a region, the lock `LOCK_BYTES`
    /// before it.
    pub(crate) unsafe fn of<S>(guarded: &Guarded<S>) -> &RegionLock {
        // SAFETY: by this function's contract the lock sits just before
        // the handle, whose first (only) field is its `Guarded`.
        unsafe {
            &*(guarded as *const Guarded<S>)
                .cast::<u8>()
                .sub(LOCK_BYTES)
                .cast::<RegionLock>()
        }
    }

    /// Makes the lock in place: a robust, process-shared mutex, no
    /// recoveries.
    #[cfg(target_os = "linux")]
    fn init(at: *mut RegionLock) -> Result<(), weir_status> {
        if !robust_futexes() {
            return Err(WEIR_ERR_REGION_UNSUPPORTED);
        }
        let mut attr = core::mem::MaybeUninit::<libc::pthread_mutexattr_t>::uninit();
        // SAFETY: `at` is the caller's 64 bytes, 64-aligned, that no one
        // uses until the region is handed out; `attr` is initialised by
        // pthread_mutexattr_init before the other calls use it and
        // destroyed after.
        let status = unsafe {
            core::ptr::addr_of_mut!((*at).recovered).write(AtomicU64::new(0));
            core::ptr::addr_of_mut!((*at).reset).write(AtomicU64::new(0));
            let mut status = libc::pthread_mutexattr_init(attr.as_mut_ptr());
            if status == 0 {
                status = libc::pthread_mutexattr_setpshared(
                    attr.as_mut_ptr(),
                    libc::PTHREAD_PROCESS_SHARED,
                );
                if status == 0 {
                    status = libc::pthread_mutexattr_setrobust(
                        attr.as_mut_ptr(),
                        libc::PTHREAD_MUTEX_ROBUST,
                    );
                }
                if status == 0 {
                    status = libc::pthread_mutex_init(
                        UnsafeCell::raw_get(core::ptr::addr_of!((*at).robust)),
                        attr.as_ptr(),
                    );
                }
                libc::pthread_mutexattr_destroy(attr.as_mut_ptr());
            }
            status
        };
        if status != 0 {
            return Err(WEIR_ERR_REGION_UNSUPPORTED);
        }
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    fn init(_: *mut RegionLock) -> Result<(), weir_status> {
        Err(WEIR_ERR_REGION_UNSUPPORTED)
    }

    /// Runs `body` holding the lock. A lock whose holder died is recovered
    /// instead: `recover` checks and keeps or resets the state (answering
    /// whether it kept it), the lock is marked consistent and released,
    /// and the call answers `WEIR_ERR_REGION_RECOVERED` having run nothing
    /// else; one that cannot be taken answers `WEIR_ERR_REGION_BROKEN`.
    /// `body` must not unwind (the guard's bodies catch their panics).
    #[cfg(target_os = "linux")]
    pub(crate) fn run<R>(
        &self,
        recover: impl FnOnce() -> bool,
        body: impl FnOnce() -> R,
    ) -> Result<R, weir_status> {
        // SAFETY: `robust` was initialised by `init` before the region's
        // header was written, in the region every process maps.
        match unsafe { libc::pthread_mutex_lock(self.robust.get()) } {
            0 => {
                let answer = body();
                // SAFETY: this process holds the mutex, taken above.
                unsafe { libc::pthread_mutex_unlock(self.robust.get()) };
                Ok(answer)
            }
            libc::EOWNERDEAD => {
                if !recover() {
                    self.reset.fetch_add(1, Ordering::Relaxed);
                }
                self.recovered.fetch_add(1, Ordering::Relaxed);
                // SAFETY: this process holds the mutex (EOWNERDEAD hands it
                // over), which it marks consistent (so later lockers get
                // it as usual) and releases.
                unsafe {
                    libc::pthread_mutex_consistent(self.robust.get());
                    libc::pthread_mutex_unlock(self.robust.get());
                }
                Err(WEIR_ERR_REGION_RECOVERED)
            }
            _ => Err(WEIR_ERR_REGION_BROKEN),
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(crate) fn run<R>(
        &self,
        _: impl FnOnce() -> bool,
        _: impl FnOnce() -> R,
    ) -> Result<R, weir_status> {
        Err(WEIR_ERR_REGION_BROKEN)
    }

    /// What the lock has recovered from.
    pub(crate) fn recoveries(&self) -> weir_recoveries {
        weir_recoveries {
            recovered: self.recovered.load(Ordering::Relaxed),
            reset: self.reset.load(Ordering::Relaxed),
        }
    }
}

/// Writes a shared handle's recoveries to `*out` (`weir_X_recoveries`):
/// all zero for a handle that is not shared.
pub(crate) fn read_recoveries<H: Handle>(
    handle: *const H,
    out: *mut weir_recoveries,
) -> Result<(), weir_status> {
    let guarded = state_of(handle).map(|_| {
        // SAFETY: `state_of` found `handle` non-NULL and aligned; by the
        // header's contract it is a live handle.
        unsafe { &*handle }.guarded()
    })?;
    usable(out)?;
    let counts = if guarded.is_shared() {
        // SAFETY: the shared flag is set only on a handle laid in a region
        // by `lay_shared`.
        unsafe { RegionLock::of(guarded) }.recoveries()
    } else {
        weir_recoveries::default()
    };
    write_out(out, counts)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A state whose repair the test can steer: `broken` makes it reset.
    struct Probe {
        value: u64,
        broken: bool,
    }

    impl Repair for Probe {
        fn repair(&mut self) -> bool {
            if self.broken {
                self.value = 0;
                self.broken = false;
                return false;
            }
            true
        }
    }

    /// A region lock and a value behind its own lock, in a MAP_SHARED page.
    struct Shared {
        region: RegionLock,
        value: ShortLock<Probe>,
    }

    fn shared() -> Result<&'static Shared, weir_status> {
        let bytes = core::mem::size_of::<Shared>();
        // SAFETY: a fresh anonymous shared mapping, checked for failure,
        // large enough and page-aligned, never unmapped.
        unsafe {
            let mem = libc::mmap(
                core::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(mem, libc::MAP_FAILED);
            let at = mem.cast::<Shared>();
            RegionLock::init(core::ptr::addr_of_mut!((*at).region))?;
            core::ptr::addr_of_mut!((*at).value).write(ShortLock::new(Probe {
                value: 7,
                broken: false,
            }));
            Ok(&*at)
        }
    }

    fn outcome(shared: &Shared) -> Result<u64, weir_status> {
        shared.region.run(
            // SAFETY: called holding the region's lock.
            || unsafe { repair(&shared.value) },
            || shared.value.lock().value,
        )
    }

    /// Forks a child that takes both locks, runs `touch` on the value and
    /// exits holding them, as a killed process would.
    fn die_holding(shared: &Shared, touch: fn(&mut Probe)) {
        // SAFETY: the child only takes the locks (in shared memory, free at
        // the fork), writes the value and leaves with _exit, touching
        // nothing the fork copied in a half-made state.
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                assert_eq!(libc::pthread_mutex_lock(shared.region.robust.get()), 0);
                let mut held = shared.value.lock();
                touch(&mut held);
                core::mem::forget(held);
                libc::_exit(0);
            }
            let mut status = 0;
            assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
        }
    }

    #[test]
    fn a_dead_holder_is_recovered_once_kept_or_reset() {
        let shared = match shared() {
            Ok(shared) => shared,
            Err(status) => {
                // Only where the kernel keeps no robust-futex list (qemu-user).
                assert!(!robust_futexes());
                assert_eq!(status, WEIR_ERR_REGION_UNSUPPORTED);
                eprintln!("skipped: no robust-futex list here, so no region lock");
                return;
            }
        };
        assert_eq!(outcome(shared), Ok(7));
        die_holding(shared, |probe| probe.value = 8);
        // The call that finds the dead holder recovers and does nothing
        // else; the state held together, so it is kept as left.
        assert_eq!(outcome(shared), Err(WEIR_ERR_REGION_RECOVERED));
        assert_eq!(
            shared.region.recoveries(),
            weir_recoveries {
                recovered: 1,
                reset: 0
            }
        );
        assert_eq!(outcome(shared), Ok(8));
        die_holding(shared, |probe| probe.broken = true);
        assert_eq!(outcome(shared), Err(WEIR_ERR_REGION_RECOVERED));
        assert_eq!(
            shared.region.recoveries(),
            weir_recoveries {
                recovered: 2,
                reset: 1
            }
        );
        assert_eq!(outcome(shared), Ok(0));
    }

    #[test]
    fn header_checksum_covers_every_byte() {
        let mut header = weir_region_header {
            magic: WEIR_REGION_MAGIC,
            layout: WEIR_REGION_LAYOUT,
            kind: WEIR_REGION_BREAKER,
            bytes: 4096,
            build: 1,
            slots: 40,
            policy_bytes: 0,
            reserved: 0,
            check: 0,
            reserved2: 0,
            policy: [0; WEIR_REGION_POLICY_BYTES],
        };
        let sum = header.checksum();
        header.check = sum;
        assert_eq!(header.checksum(), sum, "the check itself is not hashed");
        header.policy[191] = 1;
        assert_ne!(header.checksum(), sum);
    }
}
