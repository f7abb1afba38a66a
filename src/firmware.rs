//! What the firmware build (no `std`) needs that `std` would give: the
//! panic handler, and the critical section that word updates run in where
//! the target has no 64-bit atomics (see `weir_core::atomic`).
//!
//! # Panics
//!
//! Every C entry point validates its input first, so no path is meant to
//! panic. Should one panic anyway, there is no unwinding to catch it (the
//! firmware profile has `panic = "abort"`, and bare-metal targets never
//! unwind): the handler stops the program on a trap (`udf`, a HardFault on
//! Cortex-M, which the SDK's fault handler reports or resets on), or spins
//! where the architecture is not Arm. It never returns and never unwinds
//! into C.
//!
//! # The critical section
//!
//! Cortex-M3/M4/M7/M33 have no 64-bit atomics and Cortex-M0/M0+ no
//! compare-and-swap at all, so there a word update takes a lock. The
//! default lock of `portable-atomic` on M3 and later, a spinlock, would
//! deadlock when an interrupt handler preempts an update of a word whose
//! lock it then needs, and on M0 it needs a critical section that a C SDK
//! does not provide (the `critical-section` crate's symbols are Rust
//! functions). So the firmware build makes the choice explicit, one feature
//! of three, and stops with a message without one:
//!
//! - `single-core`: interrupts are masked (PRIMASK) for the few
//!   instructions of each update: weir's own critical section below on M0,
//!   portable-atomic's `unsafe-assume-single-core` on M3 and later. Sound
//!   on a single-core part whose code calls weir in privileged mode (the
//!   default on bare metal: `cpsid` is ignored unprivileged). Safe from
//!   interrupt handlers.
//! - `privileged` (M3 and later): a spinlock per update taken with
//!   interrupts masked (portable-atomic's `unsafe-assume-privileged`), for
//!   several cores running one image; privileged mode too.
//! - `sdk-critical-section` (M0/M0+): weir calls two functions the SDK
//!   defines, `uint32_t weir_critical_enter(void)` and
//!   `void weir_critical_exit(uint32_t state)` (the header declares them):
//!   enter masks whatever must be masked (interrupts, the other core
//!   through a hardware spinlock, the scheduler) and returns what exit
//!   needs to restore; exit receives the value its own enter returned.
//!
//! On a target with 64-bit atomics none of this is used.

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    loop {
        #[cfg(target_arch = "arm")]
        // SAFETY: `udf` raises an undefined-instruction fault and touches no
        // memory; the program is stopping anyway.
        unsafe {
            core::arch::asm!("udf #0xfe", options(nomem, nostack))
        };
        core::hint::spin_loop();
    }
}

#[cfg(any(
    all(feature = "single-core", feature = "privileged"),
    all(feature = "single-core", feature = "sdk-critical-section"),
    all(feature = "privileged", feature = "sdk-critical-section"),
))]
compile_error!("weir: choose one of the features single-core, privileged and sdk-critical-section");

#[cfg(all(
    not(target_has_atomic = "64"),
    not(any(
        feature = "single-core",
        feature = "privileged",
        feature = "sdk-critical-section"
    ))
))]
compile_error!(
    "weir: this target has no 64-bit atomics, so the firmware build needs to know how to lock a \
     word update: build with --features single-core (weir masks interrupts; one core, privileged \
     mode), privileged (Cortex-M3 and later: spinlock with interrupts masked, several cores) or \
     sdk-critical-section (Cortex-M0/M0+: the SDK defines weir_critical_enter/exit)"
);

#[cfg(all(
    feature = "single-core",
    not(all(target_arch = "arm", target_os = "none"))
))]
compile_error!("weir: the single-core feature masks interrupts with cpsid: bare-metal Arm only");

#[cfg(all(feature = "privileged", not(target_has_atomic = "ptr")))]
compile_error!(
    "weir: the privileged feature needs a compare-and-swap, which this target lacks: use \
     single-core, or sdk-critical-section with the SDK's own lock"
);

#[cfg(all(feature = "sdk-critical-section", target_has_atomic = "ptr"))]
compile_error!(
    "weir: sdk-critical-section is for targets without compare-and-swap (Cortex-M0/M0+); on this \
     target portable-atomic locks 64-bit words itself: use single-core or privileged"
);

/// The critical section of the `single-core` feature on Cortex-M0/M0+:
/// interrupts masked through PRIMASK, and restored only if they were
/// enabled before, so that it nests inside the caller's own critical
/// sections.
#[cfg(all(
    feature = "single-core",
    target_arch = "arm",
    target_os = "none",
    not(target_has_atomic = "ptr")
))]
struct SingleCore;

#[cfg(all(
    feature = "single-core",
    target_arch = "arm",
    target_os = "none",
    not(target_has_atomic = "ptr")
))]
critical_section::set_impl!(SingleCore);

// SAFETY: on a single-core part in privileged mode, masking interrupts
// keeps every other context out until the mask is restored (the feature's
// documented requirement). The asm blocks are not `nomem`, so they order
// memory accesses like a compiler fence.
#[cfg(all(
    feature = "single-core",
    target_arch = "arm",
    target_os = "none",
    not(target_has_atomic = "ptr")
))]
unsafe impl critical_section::Impl for SingleCore {
    unsafe fn acquire() -> u32 {
        enter()
    }

    unsafe fn release(primask: u32) {
        exit(primask)
    }
}

/// Enters the build's critical section, the one the handles' lock
/// (src/lock.rs) and, on Cortex-M0, every word update take: answers what
/// [`exit`] needs to restore. With `single-core` or `privileged` on
/// bare-metal Arm, interrupts masked (PRIMASK set, its old value answered),
/// so that it nests inside the caller's own critical sections; with
/// `sdk-critical-section`, the SDK's `weir_critical_enter`; with none of
/// them (a target with 64-bit atomics), nothing.
#[cfg(all(
    any(feature = "single-core", feature = "privileged"),
    target_arch = "arm",
    target_os = "none"
))]
#[inline]
pub(crate) fn enter() -> u32 {
    let primask: u32;
    // SAFETY: reads PRIMASK and sets it; no other state changes. Sound on
    // a part in privileged mode (the features' documented requirement);
    // not `nomem`, so it orders memory accesses like a compiler fence.
    unsafe { core::arch::asm!("mrs {0}, PRIMASK", "cpsid i", out(reg) primask, options(nostack)) };
    primask
}

/// Ends the critical section [`enter`] began, given what it answered:
/// interrupts enabled again only if they were enabled before.
#[cfg(all(
    any(feature = "single-core", feature = "privileged"),
    target_arch = "arm",
    target_os = "none"
))]
#[inline]
pub(crate) fn exit(primask: u32) {
    if primask & 1 == 0 {
        // SAFETY: interrupts were enabled when the section began, so
        // enabling them again restores that state; not `nomem`, a
        // compiler fence as in `enter`.
        unsafe { core::arch::asm!("cpsie i", options(nostack)) };
    }
}

/// [`enter`] with `sdk-critical-section`: the SDK's hook.
#[cfg(feature = "sdk-critical-section")]
#[inline]
pub(crate) fn enter() -> u32 {
    // SAFETY: a plain C call with no arguments; the feature's contract.
    unsafe { weir_critical_enter() }
}

/// [`exit`] with `sdk-critical-section`: the SDK's hook.
#[cfg(feature = "sdk-critical-section")]
#[inline]
pub(crate) fn exit(state: u32) {
    // SAFETY: `state` is what the matching `enter` returned.
    unsafe { weir_critical_exit(state) }
}

/// [`enter`] where the build chose no critical section (a target with
/// 64-bit atomics, or `privileged` on an architecture other than Arm):
/// nothing to mask; the handles' lock is its spinlock word alone.
#[cfg(not(any(
    feature = "sdk-critical-section",
    all(
        any(feature = "single-core", feature = "privileged"),
        target_arch = "arm",
        target_os = "none"
    )
)))]
#[inline]
pub(crate) fn enter() -> u32 {
    0
}

/// [`exit`] where the build chose no critical section: nothing.
#[cfg(not(any(
    feature = "sdk-critical-section",
    all(
        any(feature = "single-core", feature = "privileged"),
        target_arch = "arm",
        target_os = "none"
    )
)))]
#[inline]
pub(crate) fn exit(_state: u32) {}

#[cfg(feature = "sdk-critical-section")]
extern "C" {
    /// Defined by the SDK when the firmware library is built with the
    /// `sdk-critical-section` feature (other builds never call it): keeps
    /// out every other context that may touch a weir word (masks
    /// interrupts, takes a hardware spinlock, ...) and returns what
    /// `weir_critical_exit` needs to restore the state before. Each word
    /// update calls the pair once, around a few instructions.
    fn weir_critical_enter() -> u32;
    /// Defined by the SDK with `weir_critical_enter`: ends the critical
    /// section, given the value its own `weir_critical_enter` returned.
    fn weir_critical_exit(state: u32);
}

/// The critical section of the `sdk-critical-section` feature: the SDK's
/// two functions.
#[cfg(feature = "sdk-critical-section")]
struct SdkCriticalSection;

#[cfg(feature = "sdk-critical-section")]
critical_section::set_impl!(SdkCriticalSection);

// SAFETY: the SDK's weir_critical_enter keeps every other context that may
// touch a weir word out until the matching weir_critical_exit (the
// feature's documented contract).
#[cfg(feature = "sdk-critical-section")]
unsafe impl critical_section::Impl for SdkCriticalSection {
    unsafe fn acquire() -> u32 {
        enter()
    }

    unsafe fn release(state: u32) {
        exit(state)
    }
}
