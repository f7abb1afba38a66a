//! C face of [`weir_core::deadline`].

use static_assertions::{assert_eq_size, const_assert_eq};

use crate::guard::{guard, read_in, write_out};
use weir_core::deadline::Deadline;

/// A time budget of `budget_ns` measured from `start` (the caller's clock
/// reading when it began). A budget of zero or less means none: such a
/// deadline never expires. Only the time since `start` matters, so no
/// clock value overflows it. By-value plain data with no heap: the caller
/// guards it (every call only reads it). 16 bytes; a pointer to one must be
/// aligned as an int64_t, and a misaligned one is treated as NULL.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct weir_deadline {
    /// The caller's clock reading, in nanoseconds, when the budget started.
    pub start: i64,
    /// The budget in nanoseconds; zero or less: none, never expires.
    pub budget_ns: i64,
}

assert_eq_size!(weir_deadline, [u8; 16]);
const_assert_eq!(core::mem::align_of::<weir_deadline>(), 8);
const_assert_eq!(core::mem::offset_of!(weir_deadline, start), 0);
const_assert_eq!(core::mem::offset_of!(weir_deadline, budget_ns), 8);

impl From<weir_deadline> for Deadline {
    fn from(d: weir_deadline) -> Deadline {
        Deadline {
            start: d.start,
            budget_ns: d.budget_ns,
        }
    }
}

impl From<Deadline> for weir_deadline {
    fn from(d: Deadline) -> weir_deadline {
        weir_deadline {
            start: d.start,
            budget_ns: d.budget_ns,
        }
    }
}

/// A deadline of `budget_ns` starting at `now`. Any values are accepted: a
/// budget of zero or less never expires.
#[no_mangle]
pub extern "C" fn weir_deadline_start(budget_ns: i64, now: i64) -> weir_deadline {
    let plain = weir_deadline {
        start: now,
        budget_ns,
    };
    guard(plain, || Deadline::start(budget_ns, now).into())
}

/// Whether the budget is spent at `now`: true once the time since `start`
/// reaches `budget_ns` (inclusive); never true when there is no budget. A
/// `now` before `start` is no time passing. A NULL or misaligned deadline
/// is true: a caller that cannot tell must stop, not run unbounded.
#[no_mangle]
pub extern "C" fn weir_deadline_expired(deadline: *const weir_deadline, now: i64) -> bool {
    guard(true, || {
        read_in(deadline).map_or(true, |d| Deadline::from(d).expired(now))
    })
}

/// What is left of the budget at `now`, never negative (0 once expired),
/// written to `*out`; returns true. A `now` before `start` is no time
/// passing (the whole budget is left). Returns false and writes nothing
/// when there is no budget (it has no finite remainder), or when
/// `deadline` or `out` is NULL or misaligned.
#[no_mangle]
pub extern "C" fn weir_deadline_remaining(
    deadline: *const weir_deadline,
    now: i64,
    out: *mut i64,
) -> bool {
    guard(false, || {
        read_in(deadline)
            .ok()
            .and_then(|d| Deadline::from(d).remaining(now))
            .is_some_and(|left| write_out(out, left).is_ok())
    })
}
