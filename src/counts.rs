//! What a handle decided since counting began: `weir_counts`, filled by
//! every handle's `weir_<type>_read_counts`.

use weir_core::atomic::{AtomicU64, Ordering};

/// What a handle decided since `weir_<type>_start_counting` turned its
/// counting on (right after `weir_<type>_new`, that is since it was made).
/// Every handle type fills the same struct, so that one exporter reads them
/// all; what each field counts for a type is in that type's
/// `weir_<type>_read_counts`. 32 bytes.
///
/// Counting is off until `weir_<type>_start_counting`: a handle that does
/// not count costs what it did before counting existed, and a refusal on it
/// writes nothing. A counting handle adds one relaxed atomic add per call
/// (two for an admission with units) to a line of its own heap block,
/// which every thread deciding on it then writes, refusals included.
///
/// Each field counts on its own (relaxed atomics): a reading taken while
/// other threads decide may hold one call's admission and not yet its
/// units, never a count that goes backwards. A reading changes nothing.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct weir_counts {
    /// Calls let through (taken, entered, allowed, added).
    pub admitted: u64,
    /// Calls refused for want of room: the limit said no.
    pub refused: u64,
    /// Calls answered with an error status, or refused for an argument no
    /// call could pass (a cost of 0, NaN or over the burst, a NULL key or
    /// ticket, a negative `now` where it is refused): misuse, not load.
    pub errors: u64,
    /// The units the admitted calls took: a bucket's tokens, a window's
    /// added values; equal to `admitted` where every call is one unit.
    /// A sum of doubles, exact up to 2^53.
    pub units: f64,
}

static_assertions::assert_eq_size!(weir_counts, [u8; 32]);
static_assertions::const_assert_eq!(core::mem::align_of::<weir_counts>(), 8);
static_assertions::const_assert_eq!(core::mem::offset_of!(weir_counts, admitted), 0);
static_assertions::const_assert_eq!(core::mem::offset_of!(weir_counts, refused), 8);
static_assertions::const_assert_eq!(core::mem::offset_of!(weir_counts, errors), 16);
static_assertions::const_assert_eq!(core::mem::offset_of!(weir_counts, units), 24);

/// What one call counts as.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Tally {
    /// Let through, taking this many units.
    Admitted(f64),
    /// Refused for want of room.
    Refused,
    /// An error status, or a refusal of an argument no call could pass.
    Error,
    /// Nothing to count (a settle that succeeded, say).
    Nothing,
}

impl Tally {
    /// One unit admitted, or refused.
    pub(crate) fn of(admitted: bool) -> Tally {
        if admitted {
            Tally::Admitted(1.0)
        } else {
            Tally::Refused
        }
    }

    /// `WEIR_OK` counts nothing, any error status counts as an error: for
    /// the calls that settle, give back or leave.
    pub(crate) fn errors(status: crate::status::weir_status) -> Tally {
        if status == crate::status::weir_status::WEIR_OK {
            Tally::Nothing
        } else {
            Tally::Error
        }
    }
}

/// A handle's counts: relaxed atomics, written only on a counting handle.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    admitted: AtomicU64,
    refused: AtomicU64,
    errors: AtomicU64,
    /// The bits of an `f64`.
    units: AtomicU64,
}

impl Counts {
    /// Counts one call.
    pub(crate) fn note(&self, tally: Tally) {
        match tally {
            Tally::Admitted(units) => {
                self.admitted.fetch_add(1, Ordering::Relaxed);
                let _ = self
                    .units
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                        Some((f64::from_bits(bits) + units).to_bits())
                    });
            }
            Tally::Refused => {
                self.refused.fetch_add(1, Ordering::Relaxed);
            }
            Tally::Error => {
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
            Tally::Nothing => {}
        }
    }

    /// The counts now.
    pub(crate) fn read(&self) -> weir_counts {
        weir_counts {
            admitted: self.admitted.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            units: f64::from_bits(self.units.load(Ordering::Relaxed)),
        }
    }
}
