//! The limit in force of a type whose words take a new limit in place: the
//! bloom array ([`crate::bloom::Bloom::reconfigure`]) and the keyed table
//! ([`crate::keyed::Keyed::reconfigure`]). One cell, published whole, that
//! every decision reads without waiting; atomics only, so it builds with
//! no allocator and, laid in memory shared between processes, is read by
//! every process that maps it.
//!
//! Why this way. A limit ([`BloomLimit`]) is two words (a rate limit's
//! interval, then its fraction and burst; a GCRA limit's per-token ticks
//! and tolerance, its tick being the owner's for good), more than one
//! atomic holds, and a decision must read one limit, never the interval of
//! one and the burst of another. Nor may a decision wait for a
//! reconfiguration: the decisions are lock-free, and in the firmware build
//! an interrupt handler that waited for the main loop's half-written limit
//! would wait forever. So there are two slots, and `state` holds the
//! generation `g` in force (the limit in `slots[g % 2]`), a bit set while a
//! reconfiguration writes (one at a time) and a bit for a cell that takes
//! no new limit (the bloom's view of a region, whose limit is the region
//! header's). A reconfiguration to `g + 1` sets its writing bit, then
//! (after a release fence) fills `slots[(g + 1) % 2]`, the slot *not* in
//! force, then publishes `g + 1` with the bit clear (a release store). A
//! decision reads `state` (acquire), the slot of its generation `g`, then
//! (after an acquire fence) `state` again, and keeps the words only if
//! `state` still names `g`, or names `g + 1` with the writing bit clear:
//! the slot of `g` is written only by the reconfiguration to `g + 2`, which
//! sets the writing bit over `g + 1` before its first word, so a decision
//! that read any word of it finds that bit, or a later generation, and
//! reads again. A decision never waits for a writer (the slot being
//! written is not the one in force) and reads again only if two
//! reconfigurations start while it reads. Every field is an atomic, so no
//! read is a data race: the check is what makes the two words one limit.
//! Generation 0 (never reconfigured) is the owner's own limit, the one it
//! was made with, so an owner never reconfigured pays one load and a
//! branch per decision.
//!
//! What "in force" means for a decision racing a change: the decision is
//! judged wholly by the limit it read, old or new, and commits its word
//! with one compare-and-swap, which may land just after the change (a
//! decision is a read of the limit, then of the word, then its write).
//! Such a decision is an old-limit decision whose write is ordered after
//! the new limit's first ones; the owners' bounds count it under the limit
//! that judged it.
//!
//! Writers. A second reconfiguration waits for the first to publish (a few
//! stores). A writer that stops between setting its bit and publishing (a
//! process killed there, with the cell in memory it shared) leaves the
//! limit in force as it was, and every decision goes on under it; a later
//! reconfiguration would wait for the bit, so lay such a cell again (or
//! restart its users) after a process died inside a reconfiguration.

use crate::atomic::{AtomicU64, Ordering};
use crate::bloom::BloomLimit;
use crate::gcra::GcraLimit;
use crate::rate::RateLimit;

/// Why a new limit cannot replace the one a cell's words were made with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A limit of the other word kind: a rate word's bits read as a GCRA
    /// word's (or the reverse) mean nothing.
    Kind,
    /// A GCRA limit on another tick (`shift`): an arrival time stored in
    /// ticks of 2^-shift ns would be misread by 2^(shift' − shift).
    Tick,
}

/// Whether words made under `made` may be judged by `new` from now on:
/// `new` when they may.
pub(crate) fn check(made: &BloomLimit, new: BloomLimit) -> Result<BloomLimit, Refused> {
    match (made, &new) {
        (BloomLimit::Window(_), BloomLimit::Window(_)) => Ok(new),
        (BloomLimit::Gcra(old), BloomLimit::Gcra(to)) if old.parts().2 == to.parts().2 => Ok(new),
        (BloomLimit::Gcra(_), BloomLimit::Gcra(_)) => Err(Refused::Tick),
        _ => Err(Refused::Kind),
    }
}

/// The limit an owner decides by once reconfigured, published whole: see
/// the module's documentation.
#[derive(Debug)]
pub(crate) struct LimitCell {
    /// `generation << 2 | FIXED | WRITING`.
    state: AtomicU64,
    /// Each slot's two words (window: interval_ns, interval_frac | burst
    /// << 32; gcra: per_token, tolerance).
    slots: [[AtomicU64; 2]; 2],
}

/// [`LimitCell::state`]'s bit for a reconfiguration writing a slot.
const WRITING: u64 = 1;
/// [`LimitCell::state`]'s bit for a cell that takes no new limit.
const FIXED: u64 = 2;

impl LimitCell {
    /// A cell holding the owner's own limit, which a reconfiguration may
    /// replace.
    pub(crate) const fn new() -> LimitCell {
        LimitCell::with_state(0)
    }

    /// A cell holding the owner's own limit for good ([`LimitCell::fixed`]
    /// says so; [`LimitCell::publish`] must not be called).
    pub(crate) const fn fixed() -> LimitCell {
        LimitCell::with_state(FIXED)
    }

    const fn with_state(state: u64) -> LimitCell {
        LimitCell {
            state: AtomicU64::new(state),
            slots: [
                [AtomicU64::new(0), AtomicU64::new(0)],
                [AtomicU64::new(0), AtomicU64::new(0)],
            ],
        }
    }

    /// Whether the cell was made [`LimitCell::fixed`].
    pub(crate) fn is_fixed(&self) -> bool {
        self.state.load(Ordering::Relaxed) & FIXED != 0
    }

    /// The limit in force if the owner was reconfigured; `None` while it
    /// is `made`, the limit the owner was made with.
    #[inline(always)]
    pub(crate) fn get(&self, made: &BloomLimit) -> Option<BloomLimit> {
        let state = self.state.load(Ordering::Acquire);
        if state >> 2 == 0 {
            return None;
        }
        Some(self.read(made, state))
    }

    /// The limit of `state`'s generation or of a later one, read whole,
    /// of `made`'s kind and tick.
    #[inline(never)]
    fn read(&self, made: &BloomLimit, mut state: u64) -> BloomLimit {
        loop {
            let generation = state >> 2;
            let slot = &self.slots[(generation % 2) as usize];
            let (a, b) = (
                slot[0].load(Ordering::Relaxed),
                slot[1].load(Ordering::Relaxed),
            );
            crate::atomic::fence(Ordering::Acquire);
            let again = self.state.load(Ordering::Relaxed);
            let kept =
                again >> 2 == generation || (again >> 2 == generation + 1 && again & WRITING == 0);
            if kept {
                return match made {
                    BloomLimit::Window(_) => BloomLimit::Window(RateLimit::from_checked_parts(
                        a,
                        b as u32,
                        (b >> 32) as u32,
                    )),
                    BloomLimit::Gcra(made) => {
                        BloomLimit::Gcra(GcraLimit::from_checked_parts(a, b as i64, made.parts().2))
                    }
                };
            }
            core::hint::spin_loop();
            state = self.state.load(Ordering::Acquire);
        }
    }

    /// Publishes `limit` (checked by [`check`] against the owner's own):
    /// from the next read, it is in force. One writer at a time; a second
    /// waits for the first to publish.
    pub(crate) fn publish(&self, limit: &BloomLimit) {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & WRITING != 0 {
                core::hint::spin_loop();
                state = self.state.load(Ordering::Relaxed);
                continue;
            }
            match self.state.compare_exchange_weak(
                state,
                state | WRITING,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(found) => state = found,
            }
        }
        crate::atomic::fence(Ordering::Release);
        let generation = (state >> 2) + 1;
        let parts = match limit {
            BloomLimit::Window(limit) => {
                let (interval_ns, frac, burst) = limit.parts();
                [interval_ns, u64::from(frac) | u64::from(burst) << 32]
            }
            BloomLimit::Gcra(limit) => {
                let (per_token, tolerance, _) = limit.parts();
                [per_token, tolerance as u64]
            }
        };
        for (word, part) in self.slots[(generation % 2) as usize].iter().zip(parts) {
            word.store(part, Ordering::Relaxed);
        }
        self.state
            .store(generation << 2 | (state & FIXED), Ordering::Release);
    }
}
