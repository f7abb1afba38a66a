//! All or nothing over several limits: one call charges a GCRA word, a
//! rate word, a bucket and a bloom key (an organisation's quota, a team's,
//! a user's) each its cost, and either every one is charged or none is. A
//! refusal by the user's limit does not spend the organisation's.
//!
//! # How
//!
//! [`charge_all`] first reads every item (`next`, which writes nothing)
//! and refuses, with nothing charged, if one would refuse. Then it charges
//! the items in order, each with its own atomic step: the very step the
//! item's own call takes ([`gcra::allow_n`], `n` calls of [`rate::allow`]
//! at one `now`, [`Bucket::take`], [`BloomShape::allow`]), noting the word's
//! value before and after. When an item refuses (another call spent it
//! between the read and the charge), the items already charged are given
//! back, last first: each word is put back to the value before the charge
//! by one compare-and-swap that succeeds only while the word still holds
//! exactly the value the charge wrote. [`charge_in_order`] is the second
//! half alone.
//!
//! # The bound: no limit ever admits beyond its own
//!
//! Each item's bound (a GCRA word's `burst + T × rate`, a rate word's
//! `burst + floor(T / interval)`, a bucket's, a bloom key's) holds over
//! the charges that stay, under any interleaving of threads and processes
//! and any order of their `now`s. Every charge moves its word strictly up
//! (a TAT by at least the cost, a window's count or start up), so a word
//! that still holds the value a charge wrote has, since that charge, seen
//! only charges that were given back the same way, last first: the word's
//! values form a stack, a charge pushes, a give-back pops, and only the
//! top can pop. After the pop the word holds exactly what it held before
//! the charge, and the charges that stay form, in order, a sequence of the
//! word's own steps, each from the value the one before left: the
//! sequence the word's bound is proved over. A give-back never returns more
//! than was taken and never touches a word that has moved on, so it never
//! resurrects capacity that expired or that a later call spent.
//!
//! Subtracting the cost from whatever the word holds would not do: a GCRA
//! charge at a later `now` on top of ours moved the TAT to
//! `max(TAT, now) + cost`, the `max` swallowing part of our cost, and
//! subtracting all of it then leaves more room than that later charge's
//! own history allows (an over-admit by up to the difference of the two
//! `now`s); taking one
//! from a rate word's count shortens a window that later events were
//! admitted into, so the next window opens before their instants are past.
//! So a word that has moved on keeps the charge.
//!
//! # The slack: what a refusal may cost the others
//!
//! A refused call leaves the other items as if they had not been asked,
//! except that:
//!
//! - **a charge given back was visible until then**: between charging item
//!   `j` and giving it back (the span of one call: charging the items after
//!   `j`, then the give-backs), item `j` holds `cost` less room, and
//!   another call may be refused for it. A false refusal, never an
//!   over-admit: at most item `j`'s cost, for that span.
//! - **a charge that cannot be given back is kept**: if another call
//!   charged the same word after ours and has not given its own back, ours
//!   stays, and the item counts as if the refused call had been admitted by
//!   it (the answer's `kept`). That is at most the item's cost per refused
//!   call, and it comes back as the limit refills (a GCRA word or bucket:
//!   after cost / rate; a rate word: when its window expires). It needs two
//!   races at once: since the items are read first, a charge is given back
//!   only when a later item was spent between the read and the charge (by
//!   another call, or by this one when it names a word twice), and it is
//!   kept only when the earlier one was charged by someone else in the same
//!   few hundred nanoseconds.
//!
//! A process that dies between a charge and its give-back leaves the
//! charge, as if admitted. Refunds ([`Bucket::refund`]) subtract from a
//! bucket's word, outside the stack above: a refund of the same bucket
//! landing between a charge and its give-back may let the give-back
//! succeed over a take, so refund a bucket that calls charge with
//! [`charge_all`] only where that race cannot happen.
//!
//! The items are charged in the order given: put first the item likeliest
//! to refuse, so that a race on it costs the others nothing. One `now`
//! serves every item. At most [`MAX_ITEMS`] items: what each charge wrote
//! is kept on the stack, in an array of that many records.
//!
//! [`BloomShape::allow`]: crate::bloom::BloomShape::allow

use crate::atomic::AtomicU64;
use crate::bloom::{BloomLine, BloomShape, BloomTaken};
use crate::bucket::Bucket;
use crate::gcra::{self, GcraLimit};
use crate::rate::{self, RateLimit, Word};

/// The most items one call charges.
pub const MAX_ITEMS: usize = 16;

/// One limit to charge and its cost.
#[derive(Debug)]
pub enum ChargeItem<'a, W = AtomicU64> {
    /// A GCRA word ([`crate::gcra`]), `cost` tokens (1..=burst).
    Gcra {
        /// The word, shared with every other caller of this limit.
        word: &'a W,
        /// The limit the word is read under.
        limit: GcraLimit,
        /// Tokens to take.
        cost: i64,
    },
    /// A rate word ([`crate::rate`]), `cost` events (1..=burst), as that
    /// many calls at the one `now`.
    Rate {
        /// The word, shared with every other caller of this limit.
        word: &'a W,
        /// The limit the word is read under.
        limit: RateLimit,
        /// Events to take.
        cost: i64,
    },
    /// A token bucket, `cost` tokens (positive, up to its burst; fractions
    /// allowed).
    Bucket {
        /// The bucket.
        bucket: &'a Bucket,
        /// Tokens to take.
        cost: f64,
    },
    /// A key of a bloom array (`lines` its [`BloomShape::lines`] lines),
    /// `cost` events (1..=burst) on each of its words that takes them.
    Bloom {
        /// The array's shape: its size, hashes, limit and key.
        shape: &'a BloomShape,
        /// The array's words, in lines.
        lines: &'a [BloomLine<W>],
        /// The key, hashed during the call and not kept.
        key: &'a [u8],
        /// Events to take on each of the key's words that takes them.
        cost: i64,
    },
}

impl<W> Clone for ChargeItem<'_, W> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<W> Copy for ChargeItem<'_, W> {}

/// What [`charge_all`] answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChargeAnswer {
    /// Every item was charged its cost.
    Admitted,
    /// Item `index` refused; no charge was kept but `kept` of the items
    /// before it (see the module's slack).
    Refused {
        /// The item that refused.
        index: usize,
        /// Nanoseconds from `now` until that item would take its cost, read
        /// just after the refusal: 0 if a race has freed it already,
        /// [`crate::time::NEVER`] if it never will (a cost above what it
        /// holds, a negative `now`, a clock past its end).
        wait: i64,
        /// Items charged before it whose charge could not be given back:
        /// each stays charged, as if admitted.
        kept: usize,
    },
}

impl ChargeAnswer {
    /// Whether every item was charged.
    pub fn admitted(&self) -> bool {
        matches!(self, ChargeAnswer::Admitted)
    }
}

/// A word's or a bloom key's cost given as a double (as the C surface's
/// `weir_charge_item` gives every cost) as whole tokens or events: `None`
/// when it is NaN, infinite, zero, negative or not whole. Costs of 2^63 and
/// more read as `i64::MAX` (more than any limit holds).
#[inline]
pub fn whole_cost(cost: f64) -> Option<i64> {
    // The cast saturates (NaN is 0): a positive whole cost below 2^63
    // converts back to itself, and every finite double from 2^63 is whole.
    let n = cost as i64;
    if n > 0 && n as f64 == cost {
        Some(n)
    } else if cost >= 9_223_372_036_854_775_808.0 && cost.is_finite() {
        Some(i64::MAX)
    } else {
        None
    }
}

/// Why [`charge_all`] could not judge the items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChargeError {
    /// More than [`MAX_ITEMS`] items.
    TooMany,
}

impl ChargeError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            ChargeError::TooMany => 80,
        }
    }
}

/// What one item's charge wrote, to give it back.
enum Taken<'a, W> {
    Word {
        word: &'a W,
        before: u64,
        after: u64,
    },
    Bucket {
        bucket: &'a Bucket,
        before: i64,
        after: i64,
    },
    Bloom(BloomTaken<'a, W>),
}

impl<W: Word> Taken<'_, W> {
    /// Gives the charge back if every word it wrote still holds what it
    /// wrote; whether it did (a bloom key's words each on its own).
    fn restore(&self) -> bool {
        match self {
            Taken::Word {
                word,
                before,
                after,
            } => restore(*word, *before, *after),
            Taken::Bucket {
                bucket,
                before,
                after,
            } => bucket.restore(*before, *after),
            Taken::Bloom(taken) => taken.restore(),
        }
    }
}

impl<'a, W: Word> ChargeItem<'a, W> {
    /// Nanoseconds from `now` until the item would take its cost: 0 if it
    /// would now. Reads only.
    #[inline(always)]
    pub fn wait(&self, now: i64) -> i64 {
        match *self {
            ChargeItem::Gcra { word, limit, cost } => gcra::next_n(word, &limit, now, cost),
            ChargeItem::Rate { word, limit, cost } => rate::next_n(word, &limit, now, cost),
            ChargeItem::Bucket { bucket, cost } => bucket.next(now, cost),
            ChargeItem::Bloom {
                shape,
                lines,
                key,
                cost,
            } => shape.next_n(lines, now, key, cost),
        }
    }

    /// The item's own charge at `now`, and what it wrote.
    #[inline(always)]
    fn take(&self, now: i64) -> Option<Taken<'a, W>> {
        match *self {
            ChargeItem::Gcra { word, limit, cost } => {
                gcra::take_n(word, &limit, now, cost).map(|(before, after)| Taken::Word {
                    word,
                    before,
                    after,
                })
            }
            ChargeItem::Rate { word, limit, cost } => {
                rate::take_n(word, &limit, now, cost).map(|(before, after)| Taken::Word {
                    word,
                    before,
                    after,
                })
            }
            ChargeItem::Bucket { bucket, cost } => {
                bucket
                    .take_recorded(now, cost)
                    .map(|(before, after)| Taken::Bucket {
                        bucket,
                        before,
                        after,
                    })
            }
            ChargeItem::Bloom {
                shape,
                lines,
                key,
                cost,
            } => shape.take(lines, now, key, cost).map(Taken::Bloom),
        }
    }
}

/// Charges every item its cost at `now`, or none (see the module): reads
/// them all first, refusing with nothing charged if one would refuse, then
/// [`charge_in_order`]. An item whose cost it can never take (zero,
/// negative, above its burst) refuses with a wait of
/// [`crate::time::NEVER`]; no items is admitted.
pub fn charge_all<W: Word>(
    items: &[ChargeItem<'_, W>],
    now: i64,
) -> Result<ChargeAnswer, ChargeError> {
    if items.len() > MAX_ITEMS {
        return Err(ChargeError::TooMany);
    }
    for (index, item) in items.iter().enumerate() {
        let wait = item.wait(now);
        if wait > 0 {
            return Ok(ChargeAnswer::Refused {
                index,
                wait,
                kept: 0,
            });
        }
    }
    Ok(charge_in_turn(items, now))
}

/// Charges the items in order at `now`, each by its own atomic step, and
/// at the first refusal gives back the ones charged, last first (see the
/// module): [`charge_all`] without its first reading. A refusal here has
/// usually charged and given back the items before the one that refused;
/// [`charge_all`] reads first so that it seldom has to.
pub fn charge_in_order<W: Word>(
    items: &[ChargeItem<'_, W>],
    now: i64,
) -> Result<ChargeAnswer, ChargeError> {
    if items.len() > MAX_ITEMS {
        return Err(ChargeError::TooMany);
    }
    Ok(charge_in_turn(items, now))
}

/// Charges the items in turn; at the first refusal gives back the ones
/// charged, last first. What each charge wrote is kept in an array on the
/// stack (at most [`MAX_ITEMS`]: the callers check).
fn charge_in_turn<W: Word>(items: &[ChargeItem<'_, W>], now: i64) -> ChargeAnswer {
    let mut taken: [Option<Taken<'_, W>>; MAX_ITEMS] = Default::default();
    for (index, (item, slot)) in items.iter().zip(taken.iter_mut()).enumerate() {
        match item.take(now) {
            Some(charged) => *slot = Some(charged),
            None => {
                // Read with this call's own charges still in place.
                let wait = item.wait(now);
                let mut kept = 0;
                for charged in taken[..index].iter().rev().flatten() {
                    kept += usize::from(!charged.restore());
                }
                return ChargeAnswer::Refused { index, wait, kept };
            }
        }
    }
    ChargeAnswer::Admitted
}

/// Puts `word` back to `before` if it still holds `after`, whether it did:
/// a compare-and-swap retried only while it fails spuriously, so that a
/// word holding anything else is left alone.
#[inline]
pub(crate) fn restore<W: Word>(word: &W, before: u64, after: u64) -> bool {
    loop {
        match word.swap_if(after, before) {
            Ok(_) => return true,
            Err(seen) if seen == after => continue,
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atomic::Ordering;
    use crate::time::{NEVER, SECOND};
    use core::cell::Cell;

    fn gcra(rate: f64, burst: i64) -> GcraLimit {
        GcraLimit::new(rate, burst).unwrap()
    }

    fn window(rate: f64, burst: i64) -> RateLimit {
        RateLimit::new(rate, burst).unwrap()
    }

    fn value(word: &AtomicU64) -> u64 {
        word.load(Ordering::Relaxed)
    }

    #[test]
    fn a_hierarchy_is_charged_whole_or_not_at_all() {
        // An organisation of 10, a team of 5, a user of 2, a second.
        let (org, team, user) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
        let bucket = Bucket::new(1.0, 4.0, 0).unwrap();
        let items = [
            ChargeItem::Gcra {
                word: &org,
                limit: gcra(10.0, 10),
                cost: 1,
            },
            ChargeItem::Rate {
                word: &team,
                limit: window(5.0, 5),
                cost: 1,
            },
            ChargeItem::Bucket {
                bucket: &bucket,
                cost: 1.0,
            },
            ChargeItem::Gcra {
                word: &user,
                limit: gcra(2.0, 2),
                cost: 1,
            },
        ];
        assert_eq!(charge_all(&items, SECOND), Ok(ChargeAnswer::Admitted));
        assert_eq!(charge_all(&items, SECOND), Ok(ChargeAnswer::Admitted));
        let before = (value(&org), value(&team), bucket.tokens(SECOND));
        // The user's third is refused, and nothing else is spent.
        assert_eq!(
            charge_all(&items, SECOND),
            Ok(ChargeAnswer::Refused {
                index: 3,
                wait: SECOND / 2,
                kept: 0
            })
        );
        assert_eq!((value(&org), value(&team), bucket.tokens(SECOND)), before);
        // The same through the charges themselves: each given back.
        assert_eq!(
            charge_in_order(&items, SECOND),
            Ok(ChargeAnswer::Refused {
                index: 3,
                wait: SECOND / 2,
                kept: 0
            })
        );
        assert_eq!((value(&org), value(&team), bucket.tokens(SECOND)), before);
        assert_eq!(bucket.tokens(SECOND), 2.0);
        // Nothing to charge is admitted; too many is an error.
        assert_eq!(charge_all::<AtomicU64>(&[], 0), Ok(ChargeAnswer::Admitted));
        let many = [items[0]; MAX_ITEMS + 1];
        assert_eq!(charge_all(&many, 0), Err(ChargeError::TooMany));
        assert_eq!(charge_in_order(&many, 0), Err(ChargeError::TooMany));
        assert_eq!(value(&org), before.0, "an error charged");
    }

    #[test]
    fn costs_it_can_never_take_refuse_for_ever() {
        let word = AtomicU64::new(0);
        let bucket = Bucket::new(1.0, 2.0, 0).unwrap();
        for item in [
            ChargeItem::Gcra {
                word: &word,
                limit: gcra(1.0, 3),
                cost: 4,
            },
            ChargeItem::Gcra {
                word: &word,
                limit: gcra(1.0, 3),
                cost: 0,
            },
            ChargeItem::Rate {
                word: &word,
                limit: window(1.0, 3),
                cost: -1,
            },
            ChargeItem::Bucket {
                bucket: &bucket,
                cost: f64::NAN,
            },
            ChargeItem::Bucket {
                bucket: &bucket,
                cost: 2.5,
            },
        ] {
            for charge in [charge_all, charge_in_order] {
                assert_eq!(
                    charge(&[item], 0),
                    Ok(ChargeAnswer::Refused {
                        index: 0,
                        wait: NEVER,
                        kept: 0
                    })
                );
            }
        }
        assert_eq!(value(&word), 0);
        assert_eq!(bucket.tokens(0), 2.0);
    }

    #[test]
    fn a_word_named_twice_is_charged_twice_or_not_at_all() {
        // A burst of 3: two items of 2 each read as admitting, but together
        // they do not fit, and the first is given back.
        let word = AtomicU64::new(0);
        let item = ChargeItem::Gcra {
            word: &word,
            limit: gcra(1.0, 3),
            cost: 2,
        };
        let answer = charge_all(&[item, item], 0).unwrap();
        assert_eq!(
            answer,
            ChargeAnswer::Refused {
                index: 1,
                wait: SECOND,
                kept: 0
            }
        );
        assert_eq!(value(&word), 0);
        let rate = AtomicU64::new(0);
        let item = ChargeItem::Rate {
            word: &rate,
            limit: window(1.0, 3),
            cost: 2,
        };
        assert!(!charge_all(&[item, item], 0).unwrap().admitted());
        assert_eq!(value(&rate), 0);
        assert!(charge_all(&[item], 0).unwrap().admitted());
    }

    /// A word that, the first time it is read, lets `race` run: another
    /// call's charge landing between this call's charges.
    struct Raced<'a> {
        word: AtomicU64,
        race: Cell<Option<&'a dyn Fn()>>,
    }

    impl<'a> Raced<'a> {
        fn new(race: Option<&'a dyn Fn()>) -> Self {
            Raced {
                word: AtomicU64::new(0),
                race: Cell::new(race),
            }
        }
    }

    impl Word for Raced<'_> {
        fn get(&self) -> u64 {
            if let Some(race) = self.race.take() {
                race();
            }
            self.word.get()
        }

        fn swap_if(&self, current: u64, new: u64) -> Result<u64, u64> {
            self.word.swap_if(current, new)
        }
    }

    #[test]
    fn a_charge_another_call_charged_over_is_kept_never_subtracted() {
        // The organisation: 1 a second, a burst of 2, idle. Our call
        // charges it at 0, then, charging the user, finds the user spent
        // by a racing call that, in between, also charged the organisation
        // at 1.5 s (its clock ahead).
        let (org_limit, user_limit) = (gcra(1.0, 2), gcra(1.0, 1));
        let (org, user) = (Raced::new(None), Raced::new(None));
        let late = 3 * SECOND / 2;
        let race = || {
            assert!(gcra::allow(&org.word, &org_limit, late));
            assert!(gcra::allow(&user.word, &user_limit, 0));
        };
        user.race.set(Some(&race));
        let items = [
            ChargeItem::Gcra {
                word: &org,
                limit: org_limit,
                cost: 1,
            },
            ChargeItem::Gcra {
                word: &user,
                limit: user_limit,
                cost: 1,
            },
        ];
        let answer = charge_in_order(&items, 0).unwrap();
        assert_eq!(
            answer,
            ChargeAnswer::Refused {
                index: 1,
                wait: SECOND,
                kept: 1
            }
        );
        // Our token stays: the racer's charge moved the TAT from 1 s (ours)
        // to max(1 s, 1.5 s) + 1 s = 2.5 s, its `max` swallowing half of
        // ours. At 1.5 s one more token passes, two in all with the
        // racer's: the burst.
        let kept = value(&org.word);
        assert_eq!(kept, 5 * SECOND as u64 / 2);
        let passes = |tat: u64| {
            let word = AtomicU64::new(tat);
            (0..4)
                .filter(|_| gcra::allow(&word, &org_limit, late))
                .count()
        };
        assert_eq!(passes(kept), 1);
        // Our token subtracted from what the word holds would leave 1.5 s,
        // where two more pass at 1.5 s: three at one instant, over the
        // bound. The racer's history alone (an idle word taken at 1.5 s)
        // leaves 2.5 s: what was kept.
        let (per_token, ..) = org_limit.parts();
        assert_eq!(passes(kept - per_token), 2);
        let alone = AtomicU64::new(0);
        assert!(gcra::allow(&alone, &org_limit, late));
        assert_eq!(value(&alone), kept);
    }

    #[test]
    fn a_rate_word_keeps_a_charge_a_later_event_rode_on() {
        // A window of 2 a second. Our call opens it at 0; a racing event at
        // 0.9 s lands in it (the window, holding 2, runs to 2 s). Were our
        // event taken off the count, the window would end at 1 s and two
        // more would pass there: three within 0.1 s, over the bound of 2.
        let limit = window(1.0, 2);
        let word = Raced::new(None);
        let other = Raced::new(None);
        let race = || {
            assert!(rate::allow(&word.word, &limit, 9 * SECOND / 10));
            assert!(rate::allow(&other.word, &limit, 0));
        };
        other.race.set(Some(&race));
        assert!(rate::allow(&other.word, &limit, 0));
        let items = [
            ChargeItem::Rate {
                word: &word,
                limit,
                cost: 1,
            },
            ChargeItem::Rate {
                word: &other,
                limit,
                cost: 1,
            },
        ];
        let answer = charge_in_order(&items, 0).unwrap();
        assert!(matches!(
            answer,
            ChargeAnswer::Refused {
                index: 1,
                kept: 1,
                ..
            }
        ));
        assert!(!rate::allow(&word.word, &limit, SECOND));
        assert_eq!(rate::next(&word.word, &limit, SECOND), SECOND);
        // The count taken down by one: two more at 1 s, three within 0.1 s.
        let decremented = AtomicU64::new(value(&word.word) - 1);
        let at_one = (0..4)
            .filter(|_| rate::allow(&decremented, &limit, SECOND))
            .count();
        assert_eq!(at_one, 2);
    }

    /// Over lines in an array: the charge's bloom items need no allocator.
    #[test]
    fn a_bloom_key_gives_back_each_word_it_charged() {
        use crate::bloom::{Bloom, BloomLine, BloomShape};
        for limit in [
            crate::bloom::BloomLimit::Window(window(1.0, 2)),
            crate::bloom::BloomLimit::Gcra(gcra(1.0, 2)),
        ] {
            let store: [BloomLine; 8] = core::array::from_fn(|_| BloomLine::fresh());
            let bloom = Bloom::new_in(BloomShape::new(6, 3, limit, 1, 2).unwrap(), store).unwrap();
            let user = AtomicU64::new(0);
            let lines = bloom.lines();
            let items = [
                ChargeItem::Bloom {
                    shape: &bloom.shape(),
                    lines,
                    key: b"team",
                    cost: 2,
                },
                ChargeItem::Gcra {
                    word: &user,
                    limit: gcra(1.0, 1),
                    cost: 1,
                },
            ];
            let words = || -> [u64; 64] { core::array::from_fn(|i| value(&lines[i / 8].0[i % 8])) };
            let fresh = words();
            assert!(gcra::allow(&user, &gcra(1.0, 1), 0));
            assert!(matches!(
                charge_in_order(&items, 0).unwrap(),
                ChargeAnswer::Refused {
                    index: 1,
                    kept: 0,
                    ..
                }
            ));
            assert_eq!(words(), fresh);
            assert_eq!(bloom.next(0, b"team"), 0);
            user.store(0, Ordering::Relaxed);
            assert!(charge_all(&items, 0).unwrap().admitted());
            assert!(!bloom.allow(0, b"team"), "the key took 2 of 2 on each word");
            assert_eq!(
                charge_all(&items, 0).unwrap(),
                ChargeAnswer::Refused {
                    index: 0,
                    wait: bloom.shape().next_n(lines, 0, b"team", 2),
                    kept: 0
                }
            );
        }
    }
}
