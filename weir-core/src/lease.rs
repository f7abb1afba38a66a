//! A client's local account of units leased from a shared limit.
//!
//! A fleet that shares one limit in a store (the Redis module's
//! `WEIR.LEASE`) can ask the store once per request, or ask for several
//! units at once and spend them locally. A [`Lease`] is the second way's
//! bookkeeping on one client: it holds the units granted to it, each grant
//! with the instant until which it may be spent; [`Lease::take`] spends
//! them, and says when to ask the store for more and how many; the caller
//! sends the ask and records the answer with [`Lease::grant`]. No I/O
//! happens here.
//!
//! **How much to ask for.** The lease measures the demand (the cost of
//! every take, admitted or not) and the round trip (from the take that
//! answered an ask to the grant that answered it). An ask tops the units
//! held up to what the demand spends in one `interval_ns` plus two round
//! trips, so a steady client asks about once per `interval_ns`. It asks
//! ahead, while a take still goes, once the units held would last less
//! than two round trips, so a steady client is not refused while its ask
//! travels. The units held plus the units asked never exceed `cap =
//! max(1, ⌊share × burst⌋)`, the stated share of the limit's burst, so a
//! busy client cannot hold the whole fleet's quota.
//!
//! **Bounds.** Every admitted unit was granted (charged in the store)
//! first and is spent once, so:
//!
//! - admits by the fleet ≤ units granted by the store ≤ what the store's
//!   limit allows: for a GCRA bucket of `rate` and `burst`, over any span
//!   of length `t` from the key's first use, `burst + rate × t`;
//! - over any window of length `w`, admits ≤ `burst + rate × (w + ttl)`:
//!   a unit granted before the window may be spent in it, but not later
//!   than `ttl` after it was asked for;
//! - the cost the other way: while one client is refused, at most
//!   `(machines − 1) × cap` units sit granted and unspent on the others.
//!   Units that expire unspent are lost to the fleet (the store's bucket
//!   refills at its rate regardless); [`Lease::release`] hands units back
//!   for the caller to refund.

use crate::time::NEVER;

/// Nanoseconds in a second.
const SECOND: i64 = 1_000_000_000;

/// How many grants a lease keeps apart; a grant beyond them merges into the
/// one that expires first, keeping the earlier expiry.
const SLOTS: usize = 4;

/// The most units a lease's cap may be: the Redis module's largest burst.
pub const MAX_UNITS: i64 = i64::MAX / 4;

/// A lease's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeasePolicy {
    /// How often a steady client should ask, in ns: at least 1 µs, below
    /// `ttl_ns`.
    pub interval_ns: i64,
    /// How long a grant may be spent after its ask was sent, in ns (the
    /// Redis module's `ttl_ms`): at least 1 ms, at most an hour.
    pub ttl_ns: i64,
    /// The shared limit's burst, in units: at least 1, at most
    /// [`MAX_UNITS`].
    pub burst: i64,
    /// The share of `burst` one client may hold (and have asked for): in
    /// (0, 1].
    pub share: f64,
}

impl Default for LeasePolicy {
    fn default() -> LeasePolicy {
        LeasePolicy {
            interval_ns: 100_000_000,
            ttl_ns: SECOND,
            burst: 100,
            share: 0.25,
        }
    }
}

/// Why a lease's settings or a call were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseError {
    /// `interval_ns` under 1 µs or not below `ttl_ns`.
    Interval,
    /// `ttl_ns` under 1 ms or over an hour.
    Ttl,
    /// `burst` under 1 or over [`MAX_UNITS`].
    Burst,
    /// `share` not in (0, 1].
    Share,
    /// A take's cost under 1 or over the cap: it could never go.
    Cost,
    /// A grant of fewer than 0 units, or of more than the cap (after a
    /// reconfiguration, than the largest cap the lease has had).
    Grant,
}

impl LeaseError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            LeaseError::Interval => 600,
            LeaseError::Ttl => 601,
            LeaseError::Burst => 602,
            LeaseError::Share => 603,
            LeaseError::Cost => 604,
            LeaseError::Grant => 605,
        }
    }
}

/// What a take answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseTake {
    /// Admitted from units held. `ask` above 0: send an ask for that many
    /// now, without waiting for it (the units held run low).
    Go {
        /// Units to ask for now, 0 for none.
        ask: i64,
    },
    /// Not decided: too few units held and no ask travelling. Send an ask
    /// for `ask` units now, record its answer with [`Lease::grant`] and
    /// take again.
    Ask {
        /// Units to ask for, at least the cost.
        ask: i64,
    },
    /// Refused: too few units held, and an ask is travelling or the store
    /// said it holds none before a later instant. Try again after
    /// `retry_after` ns.
    Refuse {
        /// Nanoseconds until a take may find units; at least 1.
        retry_after: i64,
    },
}

/// What a lease has done, for a reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeaseStats {
    /// Asks the lease answered (`Go` with an ask, and `Ask`).
    pub asks: u64,
    /// Units granted to it in all.
    pub granted: u64,
    /// Units it admitted.
    pub spent: u64,
    /// Units that expired unspent.
    pub expired: u64,
    /// Units handed back by [`Lease::release`].
    pub released: u64,
    /// Units held now (live at the latest instant seen).
    pub held: u64,
    /// The measured demand, in thousandths of a unit a second.
    pub rate_milli: u64,
    /// The measured round trip, in ns (0 before one was measured).
    pub rtt_ns: i64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot {
    units: i64,
    until: i64,
}

/// One client's leased units. Not shared between threads by itself; the C
/// face holds it under a lock.
#[derive(Clone, Debug)]
pub struct Lease {
    interval: i64,
    ttl: i64,
    cap: i64,
    /// The largest cap the lease has had: a grant may answer an ask sent
    /// under it before a reconfiguration lowered the cap.
    widest: i64,
    slots: [Slot; SLOTS],
    /// The latest instant seen.
    seen: i64,
    /// Units asked for and not yet answered, and when that ask was sent.
    asked: i64,
    asked_at: i64,
    /// Before this instant the store holds nothing to grant.
    empty_until: i64,
    /// Demand since `since`, for the rate.
    demand: i64,
    since: i64,
    rate_milli: u64,
    rtt: i64,
    stats: LeaseStats,
}

impl LeasePolicy {
    /// Checks the settings, in field order; the cap they give.
    pub fn cap(&self) -> Result<i64, LeaseError> {
        if !(1_000_000..=3_600 * SECOND).contains(&self.ttl_ns) {
            return Err(LeaseError::Ttl);
        }
        if self.interval_ns < 1_000 || self.interval_ns >= self.ttl_ns {
            return Err(LeaseError::Interval);
        }
        if !(1..=MAX_UNITS).contains(&self.burst) {
            return Err(LeaseError::Burst);
        }
        if !(self.share > 0.0 && self.share <= 1.0) {
            return Err(LeaseError::Share);
        }
        // share ≤ 1 and burst ≤ MAX_UNITS: the product fits, and `as`
        // rounds toward zero (against holding more).
        Ok(((self.share * self.burst as f64) as i64).clamp(1, self.burst))
    }
}

impl Lease {
    /// A lease holding nothing, at `now`.
    pub fn new(policy: &LeasePolicy, now: i64) -> Result<Lease, LeaseError> {
        let cap = policy.cap()?;
        Ok(Lease {
            interval: policy.interval_ns,
            ttl: policy.ttl_ns,
            cap,
            widest: cap,
            slots: [Slot::default(); SLOTS],
            seen: now,
            asked: 0,
            asked_at: now,
            empty_until: i64::MIN,
            demand: 0,
            since: now,
            rate_milli: 0,
            rtt: 0,
            stats: LeaseStats::default(),
        })
    }

    /// The most units this lease holds and asks for together.
    pub fn cap(&self) -> i64 {
        self.cap
    }

    /// Takes a new policy in place, checked as [`Lease::new`] checks it
    /// (an error changes nothing); its interval, ttl and cap count from the
    /// next call.
    ///
    /// Kept, whatever the policy: the units held, each with the instant it
    /// was granted until (they were charged in the store, so they stay
    /// spendable to the end of their own grant); the ask in flight, its
    /// size and when it was sent (taken as lost once it has gone
    /// unanswered for a whole new ttl); the measured demand and round
    /// trip; when the store said it holds units again; the clock and the
    /// stats. Units held above a lower cap stay and are spent first as
    /// usual: no ask goes until the units held and asked are under the new
    /// cap, and a take's cost must be within it. A grant answering an ask
    /// sent before the change is accepted up to the largest cap the
    /// lease has had, even above a lower cap (a late one too).
    ///
    /// The bounds across the change: every admitted unit was still
    /// granted first and spent once, so the fleet's admits stay within the
    /// store's limit; over a window of length `w`, admits ≤ `burst + rate ×
    /// (w + ttl)` with the longer of the two ttls for the grants made
    /// before the change.
    pub fn reconfigure(&mut self, policy: &LeasePolicy) -> Result<(), LeaseError> {
        self.cap = policy.cap()?;
        self.widest = self.widest.max(self.cap);
        self.interval = policy.interval_ns;
        self.ttl = policy.ttl_ns;
        Ok(())
    }

    /// Moves the clock to `now` (never back) and drops expired units.
    fn advance(&mut self, now: i64) -> i64 {
        self.seen = self.seen.max(now);
        let now = self.seen;
        for slot in &mut self.slots {
            if slot.units > 0 && slot.until <= now {
                self.stats.expired += slot.units as u64;
                *slot = Slot::default();
            }
        }
        // An ask unanswered for a whole ttl is taken as lost: a new one may
        // go. A late answer is still recorded by `grant`.
        if self.asked > 0 && now.saturating_sub(self.asked_at) >= self.ttl {
            self.asked = 0;
        }
        now
    }

    fn held_at(&self) -> i64 {
        self.slots.iter().map(|s| s.units).sum()
    }

    /// Units the measured demand spends over `span` ns, rounded up.
    fn demand_over(&self, span: i64) -> i64 {
        let units =
            (u128::from(self.rate_milli) * span.max(0) as u128).div_ceil(1_000 * SECOND as u128);
        units.min(MAX_UNITS as u128) as i64
    }

    /// Folds the demand since the last ask into the rate.
    fn measure(&mut self, now: i64) {
        let elapsed = now.saturating_sub(self.since);
        if elapsed <= 0 {
            return;
        }
        let sample = (self.demand as u128 * 1_000 * SECOND as u128 / elapsed as u128)
            .min(u128::from(u64::MAX / 2)) as u64;
        self.rate_milli = if self.stats.asks == 0 {
            sample
        } else {
            self.rate_milli / 2 + sample / 2
        };
        self.demand = 0;
        self.since = now;
    }

    /// How many to ask for now, holding `held`: up to the demand of one
    /// interval and two round trips, at least `least`, within the cap.
    fn ask_size(&self, held: i64, least: i64) -> i64 {
        let target = self.demand_over(self.interval.saturating_add(2 * self.rtt));
        target.saturating_sub(held).max(least).min(self.cap - held)
    }

    fn start_ask(&mut self, now: i64, n: i64) -> i64 {
        self.asked = n;
        self.asked_at = now;
        self.stats.asks += 1;
        n
    }

    /// Spends `cost` units at `now` if they are held, and says whether to
    /// ask for more: see [`LeaseTake`]. The oldest-expiring units go first.
    pub fn take(&mut self, now: i64, cost: i64) -> Result<LeaseTake, LeaseError> {
        if cost < 1 || cost > self.cap {
            return Err(LeaseError::Cost);
        }
        let now = self.advance(now);
        self.demand = self.demand.saturating_add(cost);
        let held = self.held_at();
        if held >= cost {
            let mut left = cost;
            let mut order: [usize; SLOTS] = [0, 1, 2, 3];
            order.sort_unstable_by_key(|&i| self.slots[i].until);
            for i in order {
                let spend = left.min(self.slots[i].units);
                self.slots[i].units -= spend;
                left -= spend;
                if self.slots[i].units == 0 {
                    self.slots[i] = Slot::default();
                }
            }
            self.stats.spent += cost as u64;
            let held = held - cost;
            // Ask ahead while the units held would last under two round
            // trips, if the demand would spend more than one unit in a
            // lease's life (else the units asked would mostly expire).
            let low = self.demand_over(2 * self.rtt).max(1);
            let worth = self.demand_over(self.ttl) >= 2;
            let ask = if self.asked == 0 && now >= self.empty_until && held < low && worth {
                self.measure(now);
                let n = self.ask_size(held, 1);
                if n > 0 {
                    self.start_ask(now, n)
                } else {
                    0
                }
            } else {
                0
            };
            return Ok(LeaseTake::Go { ask });
        }
        if self.asked > 0 {
            let waited = now.saturating_sub(self.asked_at);
            let retry = self.rtt.saturating_sub(waited).max(1);
            return Ok(LeaseTake::Refuse { retry_after: retry });
        }
        if now < self.empty_until {
            return Ok(LeaseTake::Refuse {
                retry_after: self.empty_until.saturating_sub(now),
            });
        }
        self.measure(now);
        // held < cost ≤ cap, so the ask fits under the cap.
        let n = self.ask_size(held, cost - held);
        Ok(LeaseTake::Ask {
            ask: self.start_ask(now, n),
        })
    }

    /// Records a store's answer at `now`: `granted` units (0 or more) that
    /// may be spent before `until` (the instant the ask was sent plus the
    /// lease's length), and `next`, the instant before which the store
    /// holds no more (`now` or earlier when it holds some). A failed ask is
    /// a grant of 0 with `next` when to try again. Ends the travelling ask
    /// and measures the round trip from it. A grant short of the ask (the
    /// store ran dry) also holds the next ask back by the unanswered share
    /// of one interval.
    pub fn grant(
        &mut self,
        now: i64,
        granted: i64,
        until: i64,
        next: i64,
    ) -> Result<(), LeaseError> {
        // Above the cap only up to the largest cap the lease has had: an
        // ask sent under it before a reconfiguration may answer late.
        if granted < 0 || granted > self.widest {
            return Err(LeaseError::Grant);
        }
        let now = self.advance(now);
        let mut wait_until = next;
        if self.asked > 0 {
            // A short grant: the store ran dry. Ask again no sooner than
            // the unanswered part of an interval, so that clients sharing
            // a drained limit ask about once per interval each, not once
            // per unit the store refills.
            if granted < self.asked {
                let short =
                    (self.asked - granted) as i128 * self.interval as i128 / self.asked as i128;
                wait_until = wait_until.max(now.saturating_add(short as i64));
            }
            let rtt = now.saturating_sub(self.asked_at).min(self.ttl);
            self.rtt = if self.rtt == 0 {
                rtt
            } else {
                self.rtt / 2 + rtt / 2
            };
            self.asked = 0;
        }
        self.empty_until = wait_until;
        self.stats.granted += granted as u64;
        if granted == 0 {
            return Ok(());
        }
        if until <= now {
            self.stats.expired += granted as u64;
            return Ok(());
        }
        let slot = match self.slots.iter().position(|s| s.units == 0) {
            Some(free) => free,
            None => {
                // Merge into the first to expire, keeping the earlier
                // expiry: merged units never outlive either grant.
                let first = (0..SLOTS).min_by_key(|&i| self.slots[i].until).unwrap_or(0);
                self.slots[first].until = self.slots[first].until.min(until);
                self.slots[first].units = self.slots[first].units.saturating_add(granted);
                return Ok(());
            }
        };
        self.slots[slot] = Slot {
            units: granted,
            until,
        };
        Ok(())
    }

    /// The units held and live at `now`: what to give back (with the
    /// store's refund) if the client stops now. A reading: changes nothing.
    pub fn unspent(&self, now: i64) -> i64 {
        let now = self.seen.max(now);
        self.slots
            .iter()
            .filter(|s| s.until > now)
            .map(|s| s.units)
            .sum()
    }

    /// Drops every unit held at `now` and answers how many were live: the
    /// caller refunds them to the store. Later takes find none.
    pub fn release(&mut self, now: i64) -> i64 {
        let now = self.advance(now);
        let live = self.unspent(now);
        self.slots = [Slot::default(); SLOTS];
        self.stats.released += live as u64;
        live
    }

    /// When the earliest units held expire; [`NEVER`] when none are held.
    /// A reading.
    pub fn expires(&self, now: i64) -> i64 {
        let now = self.seen.max(now);
        self.slots
            .iter()
            .filter(|s| s.units > 0 && s.until > now)
            .map(|s| s.until)
            .min()
            .unwrap_or(NEVER)
    }

    /// What the lease has done, and holds at `now`. A reading.
    pub fn stats(&self, now: i64) -> LeaseStats {
        LeaseStats {
            held: self.unspent(now) as u64,
            rate_milli: self.rate_milli,
            rtt_ns: self.rtt,
            ..self.stats
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "alloc")]
    #[test]
    fn a_reconfiguration_keeps_the_units_and_the_ask_in_flight() {
        use alloc::format;
        let p = LeasePolicy {
            interval_ns: 10 * MS,
            ttl_ns: SECOND,
            burst: 400,
            share: 0.25,
        };
        let mut l = Lease::new(&p, 0).unwrap();
        assert_eq!(l.take(0, 1), Ok(LeaseTake::Ask { ask: 1 }));
        l.grant(MS, 80, SECOND, MS).unwrap();
        assert_eq!(l.unspent(MS), 80);
        // A refused policy changes nothing.
        let before = format!("{l:?}");
        let bad = LeasePolicy { share: 1.5, ..p };
        assert_eq!(l.reconfigure(&bad), Err(LeaseError::Share));
        assert_eq!(format!("{l:?}"), before);
        // A lower cap keeps the 80 units held, spent as before; a cost
        // over the new cap is refused.
        let lower = LeasePolicy { share: 0.05, ..p };
        l.reconfigure(&lower).unwrap();
        assert_eq!(l.cap(), 20);
        assert_eq!(l.unspent(MS), 80);
        assert_eq!(l.take(2 * MS, 21), Err(LeaseError::Cost));
        assert_eq!(l.take(2 * MS, 20), Ok(LeaseTake::Go { ask: 0 }));
        assert_eq!(l.unspent(2 * MS), 60);
        // An ask sent under the larger cap is still answered in full.
        let mut m = Lease::new(&p, 0).unwrap();
        assert!(matches!(m.take(0, 90), Ok(LeaseTake::Ask { ask: 90 })));
        m.reconfigure(&lower).unwrap();
        m.grant(MS, 90, SECOND, MS).unwrap();
        assert_eq!(m.unspent(MS), 90);
        assert_eq!(m.grant(MS, 101, SECOND, MS), Err(LeaseError::Grant));
    }

    const MS: i64 = 1_000_000;

    fn policy() -> LeasePolicy {
        LeasePolicy {
            interval_ns: 100 * MS,
            ttl_ns: 1_000 * MS,
            burst: 1_000,
            share: 0.5,
        }
    }

    #[test]
    fn asks_when_empty_then_spends_the_grant() {
        let mut l = Lease::new(&policy(), 0).unwrap();
        assert_eq!(l.take(0, 1), Ok(LeaseTake::Ask { ask: 1 }));
        // While the ask travels, takes are refused.
        assert!(matches!(l.take(MS / 2, 1), Ok(LeaseTake::Refuse { .. })));
        l.grant(MS, 10, 1_000 * MS, MS).unwrap();
        assert_eq!(l.stats(MS).rtt_ns, MS);
        for _ in 0..10 {
            assert!(matches!(l.take(2 * MS, 1), Ok(LeaseTake::Go { .. })));
        }
        assert_eq!(l.unspent(2 * MS), 0);
    }

    #[test]
    fn expiry_drops_units() {
        let mut l = Lease::new(&policy(), 0).unwrap();
        l.take(0, 1).unwrap();
        l.grant(0, 50, 500 * MS, 0).unwrap();
        assert_eq!(l.unspent(499 * MS), 50);
        assert_eq!(l.unspent(500 * MS), 0);
        assert!(matches!(l.take(500 * MS, 1), Ok(LeaseTake::Ask { .. })));
        assert_eq!(l.stats(500 * MS).expired, 50);
    }

    #[test]
    fn an_empty_store_is_not_asked_again_before_it_said() {
        let mut l = Lease::new(&policy(), 0).unwrap();
        l.take(0, 1).unwrap();
        // Nothing before 300 ms, the store says.
        l.grant(MS, 0, 1_000 * MS, 300 * MS).unwrap();
        assert_eq!(
            l.take(10 * MS, 1),
            Ok(LeaseTake::Refuse {
                retry_after: 290 * MS
            })
        );
        assert!(matches!(l.take(300 * MS, 1), Ok(LeaseTake::Ask { .. })));
        // A grant of none of the ask holds the next back a whole interval,
        // even when the store will hold a unit sooner.
        l.grant(301 * MS, 0, 1_000 * MS, 302 * MS).unwrap();
        assert_eq!(
            l.take(302 * MS, 1),
            Ok(LeaseTake::Refuse {
                retry_after: 99 * MS
            })
        );
        assert!(matches!(l.take(401 * MS, 1), Ok(LeaseTake::Ask { .. })));
    }

    #[test]
    fn settings_and_calls_are_checked() {
        let bad = |f: fn(&mut LeasePolicy)| {
            let mut p = policy();
            f(&mut p);
            Lease::new(&p, 0).err()
        };
        assert_eq!(bad(|p| p.ttl_ns = MS - 1), Some(LeaseError::Ttl));
        assert_eq!(
            bad(|p| p.interval_ns = p.ttl_ns),
            Some(LeaseError::Interval)
        );
        assert_eq!(bad(|p| p.interval_ns = 999), Some(LeaseError::Interval));
        assert_eq!(bad(|p| p.burst = 0), Some(LeaseError::Burst));
        assert_eq!(bad(|p| p.share = 0.0), Some(LeaseError::Share));
        assert_eq!(bad(|p| p.share = f64::NAN), Some(LeaseError::Share));
        assert_eq!(bad(|p| p.share = 1.5), Some(LeaseError::Share));
        let mut l = Lease::new(&policy(), 0).unwrap();
        assert_eq!(l.cap(), 500);
        assert_eq!(l.take(0, 0), Err(LeaseError::Cost));
        assert_eq!(l.take(0, 501), Err(LeaseError::Cost));
        assert_eq!(l.grant(0, -1, MS, 0), Err(LeaseError::Grant));
        assert_eq!(l.grant(0, 501, MS, 0), Err(LeaseError::Grant));
    }

    #[test]
    fn many_takes_at_one_instant_spend_exactly_the_grant() {
        // The largest burst, the whole of it one client's cap, at the ends
        // of the clock: exactly the units granted go, then none.
        for now in [i64::MIN, 0, i64::MAX - 2 * SECOND] {
            let p = LeasePolicy {
                burst: MAX_UNITS,
                share: 1.0,
                ..policy()
            };
            let mut l = Lease::new(&p, now).unwrap();
            assert_eq!(l.cap(), MAX_UNITS);
            l.grant(now, MAX_UNITS, now.saturating_add(SECOND), now)
                .unwrap();
            assert_eq!(l.take(now, MAX_UNITS - 3), Ok(LeaseTake::Go { ask: 0 }));
            let went = (0..10)
                .filter(|_| matches!(l.take(now, 1), Ok(LeaseTake::Go { .. })))
                .count();
            assert_eq!(went, 3);
            assert_eq!(l.unspent(now), 0);
            assert_eq!(l.stats(now).spent, MAX_UNITS as u64);
        }
    }

    #[test]
    fn a_steady_client_asks_about_once_an_interval() {
        // 2000 units a second, one every 500 µs; the store answers in 1 ms.
        let mut l = Lease::new(&policy(), 0).unwrap();
        let mut pending: Option<(i64, i64)> = None;
        let mut refused = 0;
        let mut undecided = 0;
        let step = MS / 2;
        let end = 10_000 * MS;
        let mut t = 0;
        while t < end {
            if let Some((at, n)) = pending {
                if t >= at + MS {
                    l.grant(t, n, at + 1_000 * MS, t).unwrap();
                    pending = None;
                }
            }
            match l.take(t, 1).unwrap() {
                LeaseTake::Go { ask } if ask > 0 => pending = Some((t, ask)),
                LeaseTake::Ask { ask } => {
                    pending = Some((t, ask));
                    undecided += 1;
                }
                LeaseTake::Refuse { .. } => refused += 1,
                LeaseTake::Go { .. } => {}
            }
            t += step;
        }
        let s = l.stats(end);
        // About one ask per 100 ms interval over 10 s, after warming up.
        assert!(s.asks <= 110, "{s:?}");
        assert!(refused + undecided <= 5, "{refused} {undecided}");
        assert_eq!(s.spent + refused + undecided, 20_000);
        // It measured the demand and the round trip.
        assert!((1_900_000..=2_100_000).contains(&s.rate_milli), "{s:?}");
        assert_eq!(s.rtt_ns, MS);
    }
}
