//! Two threads racing to settle each of many tickets at once (a completion
//! and a timeout), for the types that hand out settle-once tickets.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use weir::status::weir_status::{self, WEIR_ERR_SETTLED, WEIR_OK};

/// Whether a settle in the race went through: `WEIR_OK`, or the loser's
/// `WEIR_ERR_SETTLED`; anything else fails the test.
pub fn went_through(status: weir_status) -> bool {
    match status {
        WEIR_OK => true,
        other => {
            assert_eq!(other, WEIR_ERR_SETTLED);
            false
        }
    }
}

struct Cells<T>(Vec<UnsafeCell<T>>);
// SAFETY: weir reads and writes a ticket only under its handle's lock,
// which is what the race checks.
unsafe impl<T> Sync for Cells<T> {}

/// Opens `count` tickets with `open`, then has two threads settle each one
/// at the same moment, released together by a spinning barrier:
/// `settle(thread, ticket)` answers whether that thread's settle went
/// through. Returns how many went through, which must be `count`.
pub fn settle_each_from_two_threads<T: Default>(
    count: usize,
    open: impl Fn(*mut T),
    settle: impl Fn(usize, *mut T) -> bool + Sync,
) -> usize {
    let tickets = Cells((0..count).map(|_| UnsafeCell::new(T::default())).collect());
    for ticket in &tickets.0 {
        open(ticket.get());
    }
    let arrived = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let racers: Vec<_> = (0..2)
            .map(|thread| {
                let (tickets, arrived, settle) = (&tickets, &arrived, &settle);
                scope.spawn(move || {
                    let mut settled = 0;
                    for (i, ticket) in tickets.0.iter().enumerate() {
                        arrived.fetch_add(1, SeqCst);
                        while arrived.load(SeqCst) < 2 * (i + 1) {
                            std::hint::spin_loop();
                        }
                        settled += usize::from(settle(thread, ticket.get()));
                    }
                    settled
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).sum()
    })
}
