//! A retry budget: retries limited to a share of real traffic.
//!
//! Backoff spaces one caller's retries out but does not cap how many all
//! callers send together; a budget does. Two published forms, each kept to
//! its own arithmetic:
//!
//! - **Tokens** (gRPC's retry throttling, design A6): a count that starts at
//!   `max_tokens`. Each failed attempt takes one token, each success gives
//!   `token_ratio` back, and the count stays in [0, `max_tokens`]. A retry is
//!   allowed only while the count, after the failure's token is taken, is
//!   above `max_tokens / 2`. A6 allows `token_ratio` three decimal places,
//!   so the count is kept exactly in thousandths of a token.
//! - **Percent** (Finagle's `RetryBudget`): each request deposits credit,
//!   each retry withdraws, and credit expires after about `ttl`. Retries may
//!   be `percent` of the deposits still alive plus a reserve of
//!   `min_per_s × ttl` retries (whole seconds of `ttl`, as Finagle takes
//!   them), which itself refills as withdrawals expire. Finagle's integer
//!   units are kept: a deposit is 1000, a retry costs `⌊1000 / percent⌋`
//!   (1 when `percent` is 0, when deposits give nothing), the reserve is
//!   `min_per_s × ttl_s × cost`, and a retry is allowed while alive
//!   deposits − alive withdrawals + reserve ≥ cost.
//!
//! **Slices.** As in Finagle, the percent form counts in 10 slices of
//! `ttl / 10`, laid on a grid that starts when the budget is made. A deposit
//! or withdrawal lives until the slice ten after its own begins: between
//! 0.9 × `ttl` (made at the end of a slice) and `ttl` (at its start). So
//! the bound is: at any moment, the retries taken in the live slices (the
//! current one and the nine before it, a span of at least 0.9 × `ttl` and
//! under `ttl`) are at most `(deposits in them) × 1000 / cost +
//! min_per_s × ttl_s`. `1000 / cost` is `percent` itself when `1000 /
//! percent` is whole (0.2 → 5000), and a little above it otherwise
//! (0.3 → cost 3333, so 1000 / 3333 ≈ 0.30003): Finagle's rounding, kept.
//! (Finagle restarts its slice clock at each expiry instead of keeping a
//! fixed grid, so its slices can run a little longer; the bound is the same.)
//!
//! Time is `i64` nanoseconds of the caller's clock; a `now` earlier than one
//! already seen counts as no time passing. Every sum saturates. The tokens
//! form ignores time.

use crate::time::{elapsed, SECOND};

/// How many slices the percent form divides `ttl` into (Finagle's number).
pub const SLICES: usize = 10;

/// The largest `max_tokens` gRPC's A6 accepts.
pub const MAX_TOKENS: i32 = 1000;

/// The shortest and longest `ttl` Finagle accepts: 1 s and 60 s.
pub const TTL_MIN_NS: i64 = SECOND;
/// See [`TTL_MIN_NS`].
pub const TTL_MAX_NS: i64 = 60 * SECOND;

/// Why a budget could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetError {
    /// `max_tokens` is outside 1..=1000.
    MaxTokens,
    /// `token_ratio` is NaN, infinite, or rounds to under one thousandth.
    TokenRatio,
    /// `ttl` is outside [1 s, 60 s].
    Ttl,
    /// `min_per_s` is negative.
    MinPerSecond,
    /// `percent` is NaN or outside [0, 1000].
    Percent,
}

impl BudgetError {
    /// The C status code (`weir_status` in `include/weir.h`) the C
    /// library answers for this error: one mapping, which the C surface and
    /// the bay's wasm replay both read.
    pub const fn code(self) -> i32 {
        match self {
            BudgetError::MaxTokens => 500,
            BudgetError::TokenRatio => 501,
            BudgetError::Ttl => 502,
            BudgetError::MinPerSecond => 503,
            BudgetError::Percent => 504,
        }
    }
}

/// gRPC A6: the token count and its constants, all in thousandths.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tokens {
    max: i64,
    ratio: i64,
    count: i64,
}

/// One slice of the percent form: its number on the grid and its net
/// credit (deposits minus withdrawals, in Finagle's units).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
struct Slice {
    number: i64,
    credit: i64,
}

/// Finagle: the slices, the units, and the reserve.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Percent {
    origin: i64,
    slice_ns: i64,
    /// The latest slice number seen, so that time never runs backwards.
    seen: i64,
    slices: [Slice; SLICES],
    deposit: i64,
    cost: i64,
    reserve: i64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    Tokens(Tokens),
    Percent(Percent),
}

/// A retry budget in one of its two forms. Plain data: the caller (the C
/// face: a short lock) guards it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    form: Form,
}

impl Budget {
    /// gRPC A6 retry throttling: `max_tokens` in 1..=1000, `token_ratio`
    /// finite and at least 0.0005 (it is rounded to the nearest thousandth,
    /// halves up). The count starts full.
    pub fn tokens(max_tokens: i32, token_ratio: f64) -> Result<Budget, BudgetError> {
        if !(1..=MAX_TOKENS).contains(&max_tokens) {
            return Err(BudgetError::MaxTokens);
        }
        if !token_ratio.is_finite() || token_ratio < 0.0005 {
            return Err(BudgetError::TokenRatio);
        }
        // Finite and positive: `as` rounds toward zero and saturates, so
        // adding a half rounds to the nearest thousandth.
        let ratio = (token_ratio * 1000.0 + 0.5) as i64;
        let max = i64::from(max_tokens) * 1000;
        Ok(Budget {
            form: Form::Tokens(Tokens {
                max,
                ratio,
                count: max,
            }),
        })
    }

    /// Finagle's RetryBudget: `ttl_ns` in [1 s, 60 s], `min_per_s` zero or
    /// more, `percent` in [0, 1000] (0.2 is a fifth). Its slice grid starts
    /// at `now`. Checks in that order.
    pub fn percent(
        ttl_ns: i64,
        min_per_s: i32,
        percent: f64,
        now: i64,
    ) -> Result<Budget, BudgetError> {
        if !(TTL_MIN_NS..=TTL_MAX_NS).contains(&ttl_ns) {
            return Err(BudgetError::Ttl);
        }
        if min_per_s < 0 {
            return Err(BudgetError::MinPerSecond);
        }
        if !(0.0..=1000.0).contains(&percent) {
            // Also NaN, which no range contains.
            return Err(BudgetError::Percent);
        }
        let (deposit, cost) = if percent == 0.0 {
            (0, 1)
        } else {
            // Finagle's `(1000 / percent).toInt`: toward zero, saturating at
            // the largest int (a tiny percent makes retries that dear).
            let cost = (1000.0 / percent) as i64;
            (1000, cost.clamp(1, i64::from(i32::MAX)))
        };
        let reserve = i64::from(min_per_s)
            .saturating_mul(ttl_ns / SECOND)
            .saturating_mul(cost);
        Ok(Budget {
            form: Form::Percent(Percent {
                origin: now,
                slice_ns: ttl_ns / SLICES as i64,
                seen: 0,
                slices: [Slice::default(); SLICES],
                deposit,
                cost,
                reserve,
            }),
        })
    }

    /// A request that counts as traffic. Tokens: an attempt succeeded, and
    /// `token_ratio` comes back (up to `max_tokens`). Percent: a request
    /// (not a retry) was sent, and deposits its credit at `now`.
    pub fn deposit(&mut self, now: i64) {
        match &mut self.form {
            Form::Tokens(t) => t.count = t.count.saturating_add(t.ratio).min(t.max),
            Form::Percent(p) => {
                let amount = p.deposit;
                p.add(now, amount);
            }
        }
    }

    /// Asks for one retry at `now`; whether it may be sent. Tokens: call it
    /// on every failed attempt, whether a retry is wanted or not: the
    /// failure takes its token (never below zero) and the answer is whether
    /// the count is still above half of `max_tokens` (A6 counts the failure
    /// either way). Percent: true takes the retry's cost; false changes
    /// nothing.
    pub fn withdraw(&mut self, now: i64) -> bool {
        match &mut self.form {
            Form::Tokens(t) => {
                t.count = (t.count - 1000).max(0);
                t.count > t.max / 2
            }
            Form::Percent(p) => {
                let now_slice = p.slice_at(now);
                if p.balance(now_slice) < p.cost {
                    return false;
                }
                let cost = p.cost;
                p.add(now, -cost);
                true
            }
        }
    }

    /// How many retries `withdraw` would allow in a row at `now`, with no
    /// deposit between. Changes nothing.
    pub fn left(&self, now: i64) -> i64 {
        match &self.form {
            // The k-th failure answers true while count - 1000k > max / 2.
            Form::Tokens(t) => (t.count - t.max / 2 - 1).max(-1).div_euclid(1000).max(0),
            Form::Percent(p) => (p.balance(p.slice_at(now)) / p.cost).max(0),
        }
    }

    /// Takes the policy of `to` in place (a budget made by
    /// [`Budget::tokens`] or [`Budget::percent`] at `now`), keeping what
    /// has a meaning under it:
    ///
    /// - **Tokens to tokens**: the count is kept, held to the new
    ///   `max_tokens` (a count above it is cut to it). Every call from then
    ///   on answers true only where a budget made with the new policy, full,
    ///   would: the kept count is never above that one's.
    /// - **Percent to percent**: the live credit is kept (what had aged out
    ///   under the old policy stays out), each deposit and
    ///   withdrawal at the worth in retries its own policy gave it (a
    ///   slice's credit is rescaled by `cost' / cost`, rounded down, so
    ///   against retrying), and laid on the new policy's slices (`ttl' /
    ///   10`, on the same grid from the budget's making): a slice holding
    ///   more deposits than withdrawals goes into the new slice where it
    ///   began, one holding more withdrawals into the new slice where it
    ///   ended (never past the slice `now` falls in, itself never earlier
    ///   than the latest slice seen), and what lands ten or more new slices
    ///   back has aged out. So each deposit ages out no later, and each
    ///   withdrawal no sooner, than under the new policy, as if it had been
    ///   in force when they were made (slices of the same width stay as they
    ///   are). The reserve is the new policy's. Then, as the percent form's
    ///   bound has it, the retries alive in the live slices are at most the
    ///   deposits alive there, each at its own policy's `1000 / cost`, plus
    ///   `min_per_s' × ttl_s'`.
    /// - **A change of form**: nothing carries over (a token count has no
    ///   meaning as alive credit, nor credit as a count): the budget is `to`,
    ///   as made at `now`.
    pub fn reconfigure(&mut self, to: Budget, now: i64) {
        self.form = match (self.form, to.form) {
            (Form::Tokens(old), Form::Tokens(mut new)) => {
                new.count = old.count.min(new.max);
                Form::Tokens(new)
            }
            (Form::Percent(old), Form::Percent(new)) => Form::Percent(old.carried(new, now)),
            (_, form) => form,
        };
    }

    /// The raw count at `now`, in the form's own units. Tokens: the token
    /// count in thousandths (10 tokens: 10000). Percent: alive deposits −
    /// alive withdrawals + reserve, in Finagle's units (1000 a deposit).
    /// Changes nothing.
    pub fn tokens_at(&self, now: i64) -> i64 {
        match &self.form {
            Form::Tokens(t) => t.count,
            Form::Percent(p) => p.balance(p.slice_at(now)),
        }
    }
}

impl Percent {
    /// `new` (a percent budget just made) holding this one's live credit,
    /// as [`Budget::reconfigure`] lays it: on this grid's origin, in
    /// `new`'s slices and units.
    fn carried(&self, mut new: Percent, now: i64) -> Percent {
        let at = self.slice_at(now);
        // Offsets from the origin: the slices' bounds fit, since `at` is a
        // whole number of slices within `elapsed`'s range.
        let now_off = elapsed(self.origin, now).max(at.saturating_mul(self.slice_ns));
        let seen = now_off / new.slice_ns;
        new.origin = self.origin;
        new.seen = seen;
        new.slices = [Slice::default(); SLICES];
        for slice in self
            .slices
            .iter()
            .filter(|s| s.number <= at && at - s.number < SLICES as i64 && s.credit != 0)
        {
            let scaled = (i128::from(slice.credit) * i128::from(new.cost))
                .div_euclid(i128::from(self.cost))
                .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            let start = slice.number.saturating_mul(self.slice_ns);
            let number = if scaled >= 0 {
                start / new.slice_ns
            } else {
                (start.saturating_add(self.slice_ns - 1) / new.slice_ns).min(seen)
            };
            if seen - number >= SLICES as i64 {
                continue;
            }
            let slot = &mut new.slices[(number % SLICES as i64) as usize];
            if slot.number != number {
                *slot = Slice { number, credit: 0 };
            }
            slot.credit = slot.credit.saturating_add(scaled);
        }
        new
    }

    /// The slice number `now` falls in, never earlier than one seen.
    fn slice_at(&self, now: i64) -> i64 {
        (elapsed(self.origin, now) / self.slice_ns).max(self.seen)
    }

    /// Credit in the live slices (the one numbered `at` and the nine
    /// before) plus the reserve.
    fn balance(&self, at: i64) -> i64 {
        self.slices
            .iter()
            .filter(|s| s.number <= at && at - s.number < SLICES as i64)
            .fold(self.reserve, |sum, s| sum.saturating_add(s.credit))
    }

    /// Adds `amount` to the slice `now` falls in, reusing the ring slot of
    /// a slice ten or more back.
    fn add(&mut self, now: i64, amount: i64) {
        let at = self.slice_at(now);
        self.seen = at;
        let slot = &mut self.slices[(at % SLICES as i64) as usize];
        if slot.number != at {
            *slot = Slice {
                number: at,
                credit: 0,
            };
        }
        slot.credit = slot.credit.saturating_add(amount);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    // gRPC A6's example throttling policy: maxTokens 10, tokenRatio 0.1.
    // Worked by hand from A6: the count starts at 10, the threshold is
    // 10 / 2 = 5, and a retry is allowed while the count is above 5.
    #[test]
    fn grpc_a6_failures_take_one_and_stop_at_half() {
        let mut b = Budget::tokens(10, 0.1).unwrap();
        assert_eq!(b.tokens_at(0), 10_000);
        assert_eq!(b.left(0), 4);
        // Failures: 10 -> 9, 8, 7, 6 (each above 5: retry) -> 5 (not above).
        for expected in [9_000, 8_000, 7_000, 6_000] {
            assert!(b.withdraw(0));
            assert_eq!(b.tokens_at(0), expected);
        }
        assert_eq!(b.left(0), 0);
        assert!(!b.withdraw(0));
        assert_eq!(b.tokens_at(0), 5_000);
        // One success: 5 + 0.1 = 5.1, above 5, but the next failure would
        // leave 4.1, so still no retry left.
        b.deposit(0);
        assert_eq!(b.tokens_at(0), 5_100);
        assert_eq!(b.left(0), 0);
        assert!(!b.withdraw(0));
        assert_eq!(b.tokens_at(0), 4_100);
    }

    #[test]
    fn grpc_a6_count_is_clamped_to_zero_and_max() {
        let mut b = Budget::tokens(10, 0.1).unwrap();
        b.deposit(0); // already 10: stays 10
        assert_eq!(b.tokens_at(0), 10_000);
        for _ in 0..25 {
            b.withdraw(0);
        }
        assert_eq!(b.tokens_at(0), 0); // ten failures reach 0; the rest stay
                                       // From 0, 60 successes of 0.1 make 6.0: the first failure then
                                       // leaves 5.0, which is not above 5. 61 make 6.1 -> 5.1: a retry.
        for _ in 0..60 {
            b.deposit(0);
        }
        assert_eq!(b.tokens_at(0), 6_000);
        assert_eq!(b.left(0), 0);
        b.deposit(0);
        assert_eq!(b.left(0), 1);
        assert!(b.withdraw(0));
        assert_eq!(b.tokens_at(0), 5_100);
    }

    #[test]
    fn grpc_a6_ratio_keeps_three_decimals() {
        // 0.001 a success: 1000 successes give back exactly one token.
        let mut b = Budget::tokens(4, 0.001).unwrap();
        b.withdraw(0);
        assert_eq!(b.tokens_at(0), 3_000);
        for _ in 0..1000 {
            b.deposit(0);
        }
        assert_eq!(b.tokens_at(0), 4_000);
        // 0.1235 rounds to 0.124 (a half goes up); 0.0004 is under a
        // thousandth and refused.
        let mut b = Budget::tokens(4, 0.1235).unwrap();
        b.withdraw(0);
        b.deposit(0);
        assert_eq!(b.tokens_at(0), 3_124);
        assert_eq!(Budget::tokens(4, 0.0004), Err(BudgetError::TokenRatio));
    }

    #[test]
    fn grpc_a6_bad_constants_are_refused() {
        assert_eq!(Budget::tokens(0, 0.1), Err(BudgetError::MaxTokens));
        assert_eq!(Budget::tokens(1001, 0.1), Err(BudgetError::MaxTokens));
        assert!(Budget::tokens(1000, 0.1).is_ok());
        for ratio in [f64::NAN, f64::INFINITY, -1.0, 0.0] {
            assert_eq!(Budget::tokens(10, ratio), Err(BudgetError::TokenRatio));
        }
        // A huge ratio fills the count and no more.
        let mut b = Budget::tokens(10, 1e300).unwrap();
        b.withdraw(0);
        b.deposit(0);
        assert_eq!(b.tokens_at(0), 10_000);
    }

    // Finagle's default: ttl 10 s, 10 retries a second, 20 %. By hand:
    // deposit 1000, cost 1000 / 0.2 = 5000, reserve 10 × 10 × 5000 =
    // 500000, so 500000 / 5000 = 100 retries with no traffic at all.
    #[test]
    fn finagle_default_reserve_is_a_hundred_retries() {
        let mut b = Budget::percent(10 * SECOND, 10, 0.2, 0).unwrap();
        assert_eq!(b.tokens_at(0), 500_000);
        assert_eq!(b.left(0), 100);
        for _ in 0..100 {
            assert!(b.withdraw(0));
        }
        assert!(!b.withdraw(0));
        // Five requests deposit 5 × 1000 = 5000: one more retry.
        for _ in 0..5 {
            b.deposit(0);
        }
        assert_eq!(b.left(0), 1);
        assert!(b.withdraw(0));
        assert!(!b.withdraw(0));
    }

    // ttl 1 s, no reserve, 10 %: cost 1000 / 0.1 = 10000, so ten requests
    // pay for one retry and nine do not.
    #[test]
    fn finagle_ten_percent_is_one_retry_in_ten_requests() {
        let mut b = Budget::percent(SECOND, 0, 0.1, 0).unwrap();
        for _ in 0..9 {
            b.deposit(0);
        }
        assert_eq!(b.tokens_at(0), 9_000);
        assert!(!b.withdraw(0));
        b.deposit(0);
        assert!(b.withdraw(0));
        assert!(!b.withdraw(0));
        // 200 %: cost 1000 / 2 = 500, each request pays for two retries.
        let mut b = Budget::percent(SECOND, 0, 2.0, 0).unwrap();
        b.deposit(0);
        assert_eq!(b.left(0), 2);
    }

    // percent 0 with 5 a second over 1 s: deposit 0, cost 1, reserve
    // 5 × 1 × 1 = 5. Requests give nothing; withdrawals come back when
    // their slice leaves the window, 1 s (10 slices of 100 ms) later.
    #[test]
    fn finagle_min_per_second_alone_refills_as_withdrawals_expire() {
        let mut b = Budget::percent(SECOND, 5, 0.0, 0).unwrap();
        for _ in 0..100 {
            b.deposit(0);
        }
        assert_eq!(b.left(0), 5);
        for _ in 0..5 {
            assert!(b.withdraw(50 * MS));
        }
        assert!(!b.withdraw(999 * MS));
        assert_eq!(b.left(999 * MS), 0);
        assert_eq!(b.left(SECOND), 5);
        // Both zero: Finagle's empty budget, never a retry.
        let mut b = Budget::percent(SECOND, 0, 0.0, 0).unwrap();
        b.deposit(0);
        assert!(!b.withdraw(0));
    }

    // ttl 10 s: slices of 1 s. A deposit at 0.5 s (slice 0) lives until
    // slice 10 starts at 10 s (9.5 s); one at 0.999 s also leaves at 10 s
    // (9.001 s, just over 0.9 × ttl).
    #[test]
    fn finagle_deposits_expire_at_the_slice_boundary() {
        let mut b = Budget::percent(10 * SECOND, 0, 1.0, 0).unwrap();
        b.deposit(500 * MS);
        b.deposit(999 * MS);
        assert_eq!(b.left(9_999 * MS), 2);
        assert_eq!(b.left(10 * SECOND), 0);
        // A deposit at 1 s (slice 1) lives the full 10 s, to 11 s.
        b.deposit(SECOND);
        assert_eq!(b.left(10_999 * MS), 1);
        assert_eq!(b.left(11 * SECOND), 0);
    }

    #[test]
    fn finagle_time_going_backwards_is_no_time_passing() {
        let mut b = Budget::percent(SECOND, 0, 1.0, 0).unwrap();
        b.deposit(2 * SECOND);
        // Earlier than seen: still counted in the latest slice.
        b.deposit(0);
        assert_eq!(b.left(2 * SECOND), 2);
        assert_eq!(b.left(0), 2);
        assert!(b.withdraw(i64::MIN));
        assert_eq!(b.left(2 * SECOND), 1);
        assert_eq!(b.left(3 * SECOND), 0);
    }

    #[test]
    fn finagle_rounding_of_the_cost_is_stated() {
        // 0.3: cost ⌊1000 / 0.3⌋ = 3333; 10 requests = 10000 → 3 retries
        // (10000 / 3333 = 3.0003).
        let mut b = Budget::percent(SECOND, 0, 0.3, 0).unwrap();
        for _ in 0..10 {
            b.deposit(0);
        }
        assert_eq!(b.left(0), 3);
        // A tiny percent saturates the cost at 2^31 - 1: no deposit count a
        // test can make pays for one.
        let mut b = Budget::percent(SECOND, 1, 1e-300, 0).unwrap();
        assert_eq!(b.tokens_at(0), i64::from(i32::MAX)); // 1 × 1 × cost
        b.deposit(0);
        assert_eq!(b.left(0), 1);
    }

    #[test]
    fn finagle_bad_constants_are_refused() {
        assert_eq!(
            Budget::percent(SECOND - 1, 0, 0.2, 0),
            Err(BudgetError::Ttl)
        );
        assert_eq!(
            Budget::percent(60 * SECOND + 1, 0, 0.2, 0),
            Err(BudgetError::Ttl)
        );
        assert_eq!(
            Budget::percent(SECOND, -1, 0.2, 0),
            Err(BudgetError::MinPerSecond)
        );
        for percent in [f64::NAN, -0.1, 1000.5, f64::INFINITY] {
            assert_eq!(
                Budget::percent(SECOND, 0, percent, 0),
                Err(BudgetError::Percent)
            );
        }
        // The extremes it accepts stay in range.
        let mut b = Budget::percent(60 * SECOND, i32::MAX, 1000.0, i64::MAX).unwrap();
        for _ in 0..10 {
            b.deposit(i64::MAX);
            assert!(b.withdraw(i64::MAX));
        }
        assert!(b.left(i64::MIN) > 0);
    }
}
