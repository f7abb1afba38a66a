//! weir's limits as a Redis module, so a fleet of servers shares one limit.
//!
//! Load it with `redis-server --loadmodule libweir_redis.so`. Its commands
//! (README, "Redis module", has the full reference):
//!
//! | command | what it does |
//! |---|---|
//! | `WEIR.BUCKET key rate burst [COST n] [MS]` | GCRA; `CL.THROTTLE`'s five-integer reply |
//! | `WEIR.BUCKET.MS key rate burst [COST n]` | the same, times in milliseconds |
//! | `WEIR.WINDOW key quota window_ms [COST n]` | an exact sliding window |
//! | `WEIR.PERIOD key quota period_ms [ALIGN] [COST n]` | a fixed window |
//! | `WEIR.LIMITER key BUCKET\|WINDOW\|COOLDOWN … [COST n]` | the core's integer limiter; statuses as errors |
//! | `WEIR.REFUND key n` | gives units back |
//! | `WEIR.LEASE key rate burst want [ttl_ms]` | takes up to `want` units of a bucket at once, for a client to spend locally |
//! | `WEIR.ALL numkeys key … spec …` | takes from several limits, all or nothing |
//! | `WEIR.*.PEEK …` | the same answers without taking; read-only |
//!
//! Decisions use this server's Unix time, and each write is replicated as
//! the state it produced (`SET key value PXAT t`), never as the command, so
//! replicas and the AOF hold exactly the primary's state and expiry.
//!
//! `INFO weir` shows, per command, its calls and how many admitted, refused
//! and failed since the module was loaded ([`stats`]).

pub mod api;
pub mod gcra;
pub mod parse;
pub mod sliding;
pub mod state;
pub mod stats;
#[cfg(feature = "test-clock")]
pub mod test_clock;

use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use weir_core::limiter::{Limiter, LimiterError, LimiterKind};

use api::{Api, Ctx, Held, InfoCtx, RawCtx, RawInfoCtx, RawString, OK, WRONGTYPE};
use gcra::Gcra;
use parse::{Fail, LimiterSpec, Spec};
use state::{BucketState, DecodeError, Which};
use stats::Counts;

const MS: i64 = 1_000_000;
const SECOND: i64 = 1_000_000_000;

/// A state to write back, and when it reads as fresh (its key's expiry).
enum Write {
    Set {
        value: Vec<u8>,
        fresh_at: Option<i64>,
    },
    Delete,
}

/// One limit's answer: the five integers, and what to write if taken.
struct Outcome {
    allowed: bool,
    reply: [i64; 5],
    write: Option<Write>,
}

/// `ns` as whole `unit`s, rounded up: a client that waits that long is
/// never early.
fn ceil_in(ns: i64, unit: i64) -> i64 {
    if ns <= 0 {
        0
    } else {
        (ns - 1) / unit + 1
    }
}

/// The five integers: limited, limit, remaining, retry after (-1 when
/// allowed), reset after.
fn five(allowed: bool, limit: u64, remaining: u64, retry: i64, reset: i64, unit: i64) -> [i64; 5] {
    [
        i64::from(!allowed),
        limit as i64,
        remaining as i64,
        if allowed { -1 } else { ceil_in(retry, unit) },
        ceil_in(reset, unit),
    ]
}

/// Reads key argument `i` as a `which`, with `decode`.
fn read<T>(
    ctx: &Ctx,
    i: usize,
    which: Which,
    decode: impl FnOnce(&[u8]) -> Result<T, DecodeError>,
) -> Result<Option<T>, Fail> {
    let key = ctx.open_read(i);
    match key.held() {
        Held::Empty => Ok(None),
        Held::String(bytes) => decode(bytes)
            .map(Some)
            .map_err(|e| Fail::Msg(e.message(which))),
        Held::Other => Err(Fail::Msg(WRONGTYPE.into())),
    }
}

/// Writes `write` to key argument `i` and replicates the result.
fn commit(ctx: &Ctx, i: usize, write: Write, now: i64) -> Result<(), Fail> {
    match write {
        Write::Set {
            fresh_at: Some(at), ..
        } if at <= now => commit(ctx, i, Write::Delete, now),
        Write::Set { value, fresh_at } => {
            let at_ms = fresh_at.map(|at| ceil_in(at, MS));
            let written = ctx.open_write(i).write(&value, at_ms);
            if !written {
                return Err(Fail::Msg("ERR the key could not be written".into()));
            }
            ctx.replicate_set(i, &value, at_ms);
            Ok(())
        }
        Write::Delete => {
            ctx.open_write(i).delete();
            ctx.replicate_del(i);
            Ok(())
        }
    }
}

/// Decides `spec` for key argument `i` at `now`; `take` false is a peek.
fn decide(ctx: &Ctx, i: usize, spec: &Spec, now: i64, take: bool) -> Result<Outcome, Fail> {
    match *spec {
        Spec::Bucket { gcra, cost, ms } => {
            let stored = read(ctx, i, Which::Bucket, state::decode_bucket)?;
            let tat = stored.map(|s| s.tat);
            let step = if take {
                gcra.take(tat, now, cost)
            } else {
                gcra.peek(tat, now, cost)
            };
            let unit = if ms { MS } else { SECOND };
            let reply = five(
                step.allowed,
                gcra.burst(),
                step.remaining,
                step.retry_after,
                step.reset_after,
                unit,
            );
            let write = (take && step.allowed).then(|| Write::Set {
                value: state::encode_bucket(&BucketState {
                    tat: step.tat,
                    interval: gcra.interval,
                    tolerance: gcra.tolerance,
                })
                .to_vec(),
                fresh_at: Some(step.tat),
            });
            Ok(Outcome {
                allowed: step.allowed,
                reply,
                write,
            })
        }
        Spec::Window {
            quota,
            window,
            cost,
        } => {
            let mut w = read(ctx, i, Which::Window, state::decode_window)?
                .map(|(_, w)| w)
                .unwrap_or_default();
            let v = w.take(quota, window, now, cost, take);
            let write = (take && v.allowed).then(|| Write::Set {
                value: state::encode_window(window, &w),
                fresh_at: w.empty_at(window),
            });
            Ok(Outcome {
                allowed: v.allowed,
                reply: five(
                    v.allowed,
                    quota,
                    v.remaining,
                    v.retry_after,
                    v.reset_after,
                    MS,
                ),
                write,
            })
        }
        Spec::Period {
            quota,
            period,
            align,
            cost,
        } => {
            let stored = read(ctx, i, Which::Period, state::decode_period)?;
            let mut counter = open_period(stored, quota, period, align, now);
            let allowed = if take {
                counter.consume(now, cost).is_ok()
            } else {
                counter.available(now) >= cost
            };
            let end = period_end(&counter, now);
            let reply = five(
                allowed,
                quota,
                counter.available(now),
                end - now,
                end - now,
                MS,
            );
            let write = (take && allowed).then(|| Write::Set {
                value: state::encode_period(align, &counter),
                fresh_at: Some(end),
            });
            Ok(Outcome {
                allowed,
                reply,
                write,
            })
        }
        Spec::Limiter { .. } => Err(Fail::Msg("ERR not a WEIR.ALL spec".into())),
    }
}

/// The fixed period counting at `now`: the stored one, carried over (a new
/// quota keeps the count already used), or a new one. A period opens at
/// the first take after the last one closed, or, with `align`, on a
/// multiple of the period on the Unix clock. A change of period or of
/// `ALIGN` opens a new period.
fn open_period(
    stored: Option<(bool, Limiter)>,
    quota: u64,
    period: i64,
    align: bool,
    now: i64,
) -> Limiter {
    if let Some((stored_align, counter)) = stored {
        if let LimiterKind::FixedWindow {
            window_ns,
            window_start,
        } = counter.parts().1
        {
            let open = align || now < window_start.saturating_add(window_ns);
            if stored_align == align && window_ns == period && open {
                let used = counter.capacity() - counter.available(now);
                let start = counter.window_start(now).unwrap_or(window_start);
                let kind = LimiterKind::FixedWindow {
                    window_ns,
                    window_start: start,
                };
                if let Some(carried) = Limiter::from_parts(quota, quota.saturating_sub(used), kind)
                {
                    return carried;
                }
            }
        }
    }
    let start = if align {
        now - now.rem_euclid(period)
    } else {
        now
    };
    let kind = LimiterKind::FixedWindow {
        window_ns: period,
        window_start: start,
    };
    Limiter::from_parts(quota, quota, kind).expect("a positive quota and period")
}

/// When the period counting at `now` closes.
fn period_end(counter: &Limiter, now: i64) -> i64 {
    let start = counter.window_start(now).unwrap_or(now);
    let length = counter.window_ns().unwrap_or(0);
    start.saturating_add(length)
}

type Body = fn(&Ctx) -> Result<(), Fail>;

/// Runs a command body: its refusals become error replies, and a panic
/// becomes an error reply instead of unwinding into Redis. The call is
/// counted in `counts` by what the body decided ([`Ctx::decided`]).
fn run(ctx: &Ctx, counts: &Counts, body: Body) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| body(ctx)));
    counts.count(ctx.verdict(), !matches!(result, Ok(Ok(()))));
    match result {
        Ok(Ok(())) => OK,
        Ok(Err(Fail::Arity)) => ctx.wrong_arity(),
        Ok(Err(Fail::Msg(m))) => {
            ctx.reply_error(&m);
            OK
        }
        Err(_) => {
            ctx.reply_error("ERR weir: internal error (nothing was written)");
            OK
        }
    }
}

/// The arguments from `from` on.
fn args(ctx: &Ctx, from: usize) -> Vec<&[u8]> {
    (from..ctx.argc()).map(|i| ctx.arg(i)).collect()
}

fn reply_five(ctx: &Ctx, reply: &[i64; 5]) {
    ctx.reply_array(5);
    for &n in reply {
        ctx.reply_int(n);
    }
}

/// `WEIR.<KIND> key …` and its peek; `kind` is the spec word, `ms` forces
/// milliseconds (`WEIR.BUCKET.MS`).
fn single(ctx: &Ctx, kind: &str, take: bool, ms: bool) -> Result<(), Fail> {
    if ctx.argc() < 2 {
        return Err(Fail::Arity);
    }
    let mut spec = parse::whole_spec(kind.as_bytes(), &args(ctx, 2))?;
    if let Spec::Bucket { ms: m, .. } = &mut spec {
        *m |= ms;
    }
    let now = ctx.now_ns();
    let outcome = decide(ctx, 1, &spec, now, take)?;
    ctx.decided(outcome.allowed);
    if let Some(write) = outcome.write {
        commit(ctx, 1, write, now)?;
    }
    reply_five(ctx, &outcome.reply);
    Ok(())
}

/// The C status name of a limiter error, as the error reply's code, with
/// its meaning.
fn limiter_error(e: LimiterError) -> String {
    let (code, text) = match e {
        LimiterError::ZeroCapacity => ("WEIR_ERR_LIMITER_ZERO_CAPACITY", "the capacity is zero"),
        LimiterError::ZeroRefillAmount => (
            "WEIR_ERR_LIMITER_ZERO_REFILL_AMOUNT",
            "the refill amount is zero",
        ),
        LimiterError::ZeroRefillInterval => (
            "WEIR_ERR_LIMITER_ZERO_REFILL_INTERVAL",
            "the refill interval is zero",
        ),
        LimiterError::ZeroWindow => ("WEIR_ERR_LIMITER_ZERO_WINDOW", "the window is zero"),
        LimiterError::ZeroCooldown => ("WEIR_ERR_LIMITER_ZERO_COOLDOWN", "the cooldown is zero"),
        LimiterError::InitialAboveCapacity => (
            "WEIR_ERR_LIMITER_INITIAL_ABOVE_CAPACITY",
            "more units than the capacity",
        ),
        LimiterError::BucketAnchorInFuture => (
            "WEIR_ERR_LIMITER_BUCKET_ANCHOR_IN_FUTURE",
            "the refill anchor is in the future",
        ),
        LimiterError::WindowAnchorInFuture => (
            "WEIR_ERR_LIMITER_WINDOW_ANCHOR_IN_FUTURE",
            "the window anchor is in the future",
        ),
        LimiterError::CooldownArmedWithTokens => (
            "WEIR_ERR_LIMITER_COOLDOWN_ARMED_WITH_TOKENS",
            "units while the gate is armed",
        ),
        LimiterError::CooldownDeadlineOverflow => (
            "WEIR_ERR_LIMITER_COOLDOWN_DEADLINE_OVERFLOW",
            "the cooldown's deadline would overflow; nothing was taken",
        ),
        LimiterError::RateLimited => (
            "WEIR_ERR_LIMITER_RATE_LIMITED",
            "the limiter cannot grant the amount now; nothing was taken",
        ),
        LimiterError::InvalidAmount => ("WEIR_ERR_LIMITER_INVALID_AMOUNT", "the amount is zero"),
        LimiterError::WrongVariant => (
            "WEIR_ERR_LIMITER_WRONG_VARIANT",
            "the key holds a limiter of another variant",
        ),
    };
    format!("{code} {text}")
}

/// The limiter `spec` describes at `now`, from its stored value (whose
/// units and anchor it keeps; the settings are the call's) or new.
fn limiter_for(stored: Option<Limiter>, spec: LimiterSpec, now: i64) -> Result<Limiter, Fail> {
    let Some(stored) = stored else {
        return match spec {
            LimiterSpec::Bucket {
                capacity,
                refill_amount,
                refill_interval,
            } => Limiter::bucket(capacity, refill_amount, refill_interval, now, capacity, now),
            LimiterSpec::Window { capacity, window } => {
                Limiter::fixed_window(capacity, window, now, capacity, now)
            }
            LimiterSpec::Cooldown { capacity, cooldown } => {
                Limiter::cooldown(capacity, cooldown, now, capacity, now)
            }
        }
        .map_err(|e| Fail::Msg(limiter_error(e)));
    };
    let (available, kind) = stored.parts();
    let (capacity, kind) = match (spec, kind) {
        (
            LimiterSpec::Bucket {
                capacity,
                refill_amount,
                refill_interval,
            },
            LimiterKind::Bucket { last_refill, .. },
        ) => (
            capacity,
            LimiterKind::Bucket {
                refill_amount,
                refill_interval_ns: refill_interval,
                last_refill,
            },
        ),
        (
            LimiterSpec::Window { capacity, window },
            LimiterKind::FixedWindow { window_start, .. },
        ) => (
            capacity,
            LimiterKind::FixedWindow {
                window_ns: window,
                window_start,
            },
        ),
        (
            LimiterSpec::Cooldown { capacity, cooldown },
            LimiterKind::Cooldown { cooldown_end, .. },
        ) => (
            capacity,
            LimiterKind::Cooldown {
                cooldown_ns: cooldown,
                cooldown_end,
            },
        ),
        _ => return Err(Fail::Msg(limiter_error(LimiterError::WrongVariant))),
    };
    Limiter::from_parts(capacity, available.min(capacity), kind)
        .ok_or_else(|| Fail::Msg("ERR the key holds a corrupt weir limiter".into()))
}

/// When a limiter reads as fresh (full) again if nothing more is taken, or
/// `None` when it never will by itself (a cooldown part used but not
/// drained) or the instant does not fit.
fn limiter_fresh_at(limiter: &Limiter, now: i64) -> Option<i64> {
    let available = limiter.available(now);
    let missing = limiter.capacity() - available;
    if missing == 0 {
        return Some(now);
    }
    match limiter.parts().1 {
        LimiterKind::Bucket {
            refill_amount,
            refill_interval_ns,
            ..
        } => {
            let anchor = limiter.last_refill(now).ok()?;
            let intervals = i64::try_from(missing.div_ceil(refill_amount)).ok()?;
            anchor.checked_add(intervals.checked_mul(refill_interval_ns)?)
        }
        LimiterKind::FixedWindow { window_ns, .. } => {
            limiter.window_start(now).ok()?.checked_add(window_ns)
        }
        LimiterKind::Cooldown { cooldown_end, .. } => (available == 0).then_some(cooldown_end),
    }
}

fn limiter_write(limiter: &Limiter, now: i64) -> Write {
    match limiter_fresh_at(limiter, now) {
        Some(at) if at <= now => Write::Delete,
        fresh_at => Write::Set {
            value: state::encode_limiter(limiter),
            fresh_at,
        },
    }
}

/// `WEIR.LIMITER key VARIANT … [COST n]` and its peek.
fn limiter_command(ctx: &Ctx, take: bool) -> Result<(), Fail> {
    if ctx.argc() < 3 {
        return Err(Fail::Arity);
    }
    let Spec::Limiter { spec, cost } = parse::whole_spec(b"LIMITER", &args(ctx, 2))? else {
        unreachable!("a LIMITER spec")
    };
    let now = ctx.now_ns();
    let stored = read(ctx, 1, Which::Limiter, state::decode_limiter)?;
    let mut limiter = limiter_for(stored, spec, now)?;
    if take {
        let taken = limiter.consume(now, cost);
        if matches!(taken, Ok(()) | Err(LimiterError::RateLimited)) {
            ctx.decided(taken.is_ok());
        }
        taken.map_err(|e| Fail::Msg(limiter_error(e)))?;
        commit(ctx, 1, limiter_write(&limiter, now), now)?;
    }
    ctx.reply_int(limiter.available(now) as i64);
    Ok(())
}

/// `WEIR.REFUND key n`: gives up to `n` units back; replies how many came
/// back. See the README for each kind's rule.
fn refund_command(ctx: &Ctx) -> Result<(), Fail> {
    if ctx.argc() != 3 {
        return Err(Fail::Arity);
    }
    let n = parse::count(ctx.arg(2), "n", i64::MAX as u64)?;
    let now = ctx.now_ns();
    let which = {
        let key = ctx.open_read(1);
        match key.held() {
            Held::Empty => None,
            Held::String(bytes) => Some(state::kind_of(bytes).map_err(|e| {
                Fail::Msg(
                    e.message(Which::Bucket)
                        .replace("weir bucket", "weir limit"),
                )
            })?),
            Held::Other => return Err(Fail::Msg(WRONGTYPE.into())),
        }
    };
    let (back, write) = match which {
        None => (0, None),
        Some(Which::Bucket) => {
            let s = read(ctx, 1, Which::Bucket, state::decode_bucket)?.expect("present");
            let gcra = Gcra {
                interval: s.interval,
                tolerance: s.tolerance,
            };
            let (tat, back) = gcra.refund(s.tat, now, n);
            let write = Write::Set {
                value: state::encode_bucket(&BucketState { tat, ..s }).to_vec(),
                fresh_at: Some(tat),
            };
            (back, Some(write))
        }
        Some(Which::Window) => {
            let (window, mut w) =
                read(ctx, 1, Which::Window, state::decode_window)?.expect("present");
            let back = w.refund(window, now, n);
            let write = Write::Set {
                value: state::encode_window(window, &w),
                fresh_at: Some(w.empty_at(window).unwrap_or(now)),
            };
            (back, Some(write))
        }
        Some(Which::Period) => {
            let (align, counter) =
                read(ctx, 1, Which::Period, state::decode_period)?.expect("present");
            let period = counter.window_ns().unwrap_or(1);
            let open = open_period(
                Some((align, counter)),
                counter.capacity(),
                period,
                align,
                now,
            );
            let available = open.available(now);
            let back = n.min(open.capacity() - available);
            let kind = LimiterKind::FixedWindow {
                window_ns: period,
                window_start: open.window_start(now).unwrap_or(now),
            };
            let refunded =
                Limiter::from_parts(open.capacity(), available + back, kind).expect("sound parts");
            let write = Write::Set {
                value: state::encode_period(align, &refunded),
                fresh_at: Some(period_end(&refunded, now)),
            };
            (back, Some(write))
        }
        Some(Which::Limiter) => {
            let limiter = read(ctx, 1, Which::Limiter, state::decode_limiter)?.expect("present");
            let (refunded, back) = refund_limiter(&limiter, now, n);
            (back, Some(limiter_write(&refunded, now)))
        }
    };
    if back > 0 {
        if let Some(write) = write {
            commit(ctx, 1, write, now)?;
        }
    }
    ctx.reply_int(back as i64);
    Ok(())
}

/// A limiter with up to `n` units given back at `now`, never past its
/// capacity; a drained cooldown whose gate is armed is undone (its gate
/// released), as if the take that drained it had given the units back.
fn refund_limiter(limiter: &Limiter, now: i64, n: u64) -> (Limiter, u64) {
    let capacity = limiter.capacity();
    let available = limiter.available(now);
    let back = n.min(capacity - available);
    let kind = match limiter.parts().1 {
        LimiterKind::Bucket {
            refill_amount,
            refill_interval_ns,
            last_refill,
        } => LimiterKind::Bucket {
            refill_amount,
            refill_interval_ns,
            last_refill: limiter.last_refill(now).unwrap_or(last_refill),
        },
        LimiterKind::FixedWindow {
            window_ns,
            window_start,
        } => LimiterKind::FixedWindow {
            window_ns,
            window_start: limiter.window_start(now).unwrap_or(window_start),
        },
        LimiterKind::Cooldown {
            cooldown_ns,
            cooldown_end,
        } => LimiterKind::Cooldown {
            cooldown_ns,
            cooldown_end: if back > 0 {
                cooldown_end.min(now)
            } else {
                cooldown_end
            },
        },
    };
    let refunded = Limiter::from_parts(capacity, available + back, kind).unwrap_or(*limiter);
    (refunded, back)
}

/// A lease's default length when the call names none: one second.
const LEASE_TTL_MS: u64 = 1_000;

/// The longest lease: an hour.
const LEASE_MAX_TTL_MS: u64 = 3_600_000;

/// `WEIR.LEASE key rate burst want [ttl_ms]`: takes up to `want` units at
/// once from the bucket `WEIR.BUCKET key rate burst` reads (the same state,
/// the same primary's clock), for a client to spend locally until the
/// lease ends. Replies `[granted, ttl_ms, next_ms]`: the units taken (0 to
/// `want`; charged now, as `WEIR.BUCKET … COST granted` would charge them),
/// the milliseconds from this answer for which they may be spent, and the
/// milliseconds until the bucket holds a unit again (0 when it holds one
/// now; rounded up). Unspent units go back with `WEIR.REFUND key n`.
fn lease_command(ctx: &Ctx) -> Result<(), Fail> {
    if ctx.argc() != 5 && ctx.argc() != 6 {
        return Err(Fail::Arity);
    }
    let Spec::Bucket { gcra, .. } = parse::whole_spec(b"BUCKET", &args(ctx, 2)[..2])? else {
        unreachable!("a BUCKET spec")
    };
    let want = parse::count(ctx.arg(4), "want", i64::MAX as u64)?;
    let ttl_ms = if ctx.argc() == 6 {
        parse::count(ctx.arg(5), "ttl_ms", LEASE_MAX_TTL_MS)?
    } else {
        LEASE_TTL_MS
    };
    let now = ctx.now_ns();
    let tat = read(ctx, 1, Which::Bucket, state::decode_bucket)?.map(|s| s.tat);
    // What the bucket holds now, whole units: all of it, or `want`.
    let granted = want.min(gcra.peek(tat, now, 1).remaining);
    let after = if granted > 0 {
        let step = gcra.take(tat, now, granted);
        debug_assert!(step.allowed, "the bucket held the units granted");
        commit(
            ctx,
            1,
            Write::Set {
                value: state::encode_bucket(&BucketState {
                    tat: step.tat,
                    interval: gcra.interval,
                    tolerance: gcra.tolerance,
                })
                .to_vec(),
                fresh_at: Some(step.tat),
            },
            now,
        )?;
        Some(step.tat)
    } else {
        tat
    };
    ctx.decided(granted > 0);
    let next = gcra.peek(after, now, 1);
    ctx.reply_array(3);
    ctx.reply_int(granted as i64);
    ctx.reply_int(ttl_ms as i64);
    ctx.reply_int(if next.allowed {
        0
    } else {
        ceil_in(next.retry_after, MS)
    });
    Ok(())
}

/// `WEIR.ALL numkeys key [key …] spec [spec …]`.
fn all_command(ctx: &Ctx) -> Result<(), Fail> {
    if ctx.is_keys_position_request() {
        ctx.not_a_call();
        // Declared even for a malformed call, as far as numkeys reaches.
        if ctx.argc() > 2 {
            if let Ok(n) = parse::count(ctx.arg(1), "numkeys", parse::MAX_ALL_KEYS as u64) {
                for i in 2..(2 + n as usize).min(ctx.argc()) {
                    ctx.key_at(i);
                }
            }
        }
        return Ok(());
    }
    if ctx.argc() < 4 {
        return Err(Fail::Arity);
    }
    let numkeys = parse::count(ctx.arg(1), "numkeys", parse::MAX_ALL_KEYS as u64)? as usize;
    if ctx.argc() < 2 + numkeys + 1 {
        return Err(Fail::Arity);
    }
    let keys = 2..2 + numkeys;
    for a in keys.clone() {
        for b in a + 1..keys.end {
            if ctx.arg(a) == ctx.arg(b) {
                return Err(Fail::Msg("ERR WEIR.ALL names a key twice".into()));
            }
        }
    }
    let specs = parse::all_specs(&args(ctx, 2 + numkeys), numkeys)?;
    let now = ctx.now_ns();
    let mut outcomes = Vec::with_capacity(numkeys);
    for (k, spec) in specs.iter().enumerate() {
        outcomes.push(decide(ctx, 2 + k, spec, now, true)?);
    }
    let all = outcomes.iter().all(|o| o.allowed);
    ctx.decided(all);
    if all {
        for (k, outcome) in outcomes.iter_mut().enumerate() {
            if let Some(write) = outcome.write.take() {
                commit(ctx, 2 + k, write, now)?;
            }
        }
    } else {
        // Nothing was taken: each limit answers as its peek.
        outcomes.clear();
        for (k, spec) in specs.iter().enumerate() {
            outcomes.push(decide(ctx, 2 + k, spec, now, false)?);
        }
    }
    ctx.reply_array(1 + numkeys);
    ctx.reply_int(i64::from(!all));
    for outcome in &outcomes {
        reply_five(ctx, &outcome.reply);
    }
    Ok(())
}

/// A command: its entry point and its own counts for `INFO weir`.
struct Command {
    call: api::CommandFn,
    counts: &'static Counts,
}

/// `command!(name, body)` makes `name`, a [`Command`] whose entry point runs
/// `body` and counts each call in the command's own [`Counts`]: a command
/// in the table in `RedisModule_OnLoad` is counted with nothing more.
macro_rules! command {
    ($name:ident, $body:expr) => {
        #[allow(non_upper_case_globals)]
        static $name: Command = {
            static COUNTS: Counts = Counts::new();
            unsafe extern "C" fn call(
                raw: *mut RawCtx,
                argv: *mut *mut RawString,
                argc: c_int,
            ) -> c_int {
                // SAFETY: Redis calls commands with its context and
                // arguments, alive for the call; the Ctx does not escape it.
                let ctx = unsafe { Ctx::new(raw, argv, argc) };
                run(&ctx, &COUNTS, $body)
            }
            Command {
                call,
                counts: &COUNTS,
            }
        };
    };
}

command!(cmd_bucket, |c| single(c, "BUCKET", true, false));
command!(cmd_bucket_ms, |c| single(c, "BUCKET", true, true));
command!(cmd_bucket_peek, |c| single(c, "BUCKET", false, false));
command!(cmd_bucket_ms_peek, |c| single(c, "BUCKET", false, true));
command!(cmd_window, |c| single(c, "WINDOW", true, false));
command!(cmd_window_peek, |c| single(c, "WINDOW", false, false));
command!(cmd_period, |c| single(c, "PERIOD", true, false));
command!(cmd_period_peek, |c| single(c, "PERIOD", false, false));
command!(cmd_limiter, |c| limiter_command(c, true));
command!(cmd_limiter_peek, |c| limiter_command(c, false));
command!(cmd_refund, refund_command);
command!(cmd_all, all_command);
command!(cmd_lease, lease_command);

/// `INFO weir` (or `INFO` with everything): the module's section.
unsafe extern "C" fn info(raw: *mut RawInfoCtx, _for_crash_report: c_int) {
    // SAFETY: Redis passes the info context, alive for this call.
    let ctx = unsafe { InfoCtx::new(raw) };
    // Nothing here panics but a broken invariant; never unwind into Redis.
    let _ = catch_unwind(AssertUnwindSafe(|| stats::info(&ctx)));
}

/// The module's version as Redis shows it (`MODULE LIST`): 0.3.0, the
/// workspace's.
const MODULE_VERSION: c_int = 300;

/// Called by Redis when it loads the module.
///
/// # Safety
/// Only Redis calls this, with its load context.
#[no_mangle]
pub unsafe extern "C" fn RedisModule_OnLoad(
    ctx: *mut RawCtx,
    _argv: *mut *mut RawString,
    _argc: c_int,
) -> c_int {
    // SAFETY: ctx is the load context Redis passes.
    let Some(api) = (unsafe { Api::load(ctx, c"weir", MODULE_VERSION) }) else {
        return api::ERR;
    };
    let take = c"write deny-oom fast";
    let peek = c"readonly fast";
    let commands: [(&std::ffi::CStr, &Command, &std::ffi::CStr, c_int); 13] = [
        (c"weir.bucket", &cmd_bucket, take, 1),
        (c"weir.bucket.ms", &cmd_bucket_ms, take, 1),
        (c"weir.bucket.peek", &cmd_bucket_peek, peek, 1),
        (c"weir.bucket.ms.peek", &cmd_bucket_ms_peek, peek, 1),
        (c"weir.window", &cmd_window, c"write deny-oom", 1),
        (c"weir.window.peek", &cmd_window_peek, c"readonly", 1),
        (c"weir.period", &cmd_period, take, 1),
        (c"weir.period.peek", &cmd_period_peek, peek, 1),
        (c"weir.limiter", &cmd_limiter, take, 1),
        (c"weir.limiter.peek", &cmd_limiter_peek, peek, 1),
        (c"weir.refund", &cmd_refund, c"write fast", 1),
        (c"weir.lease", &cmd_lease, take, 1),
        // Keys sit after numkeys: declared through the getkeys API.
        (c"weir.all", &cmd_all, c"write deny-oom getkeys-api", 0),
    ];
    for (name, command, flags, first) in commands {
        // SAFETY: the load context; the names and flags are static.
        if !unsafe { api.create_command(ctx, name, command.call, flags, first) } {
            return api::ERR;
        }
    }
    // Test builds only: the clock the conformance replays set (not in INFO).
    #[cfg(feature = "test-clock")]
    {
        command!(cmd_test_now, test_clock::command);
        // SAFETY: as above.
        if !unsafe { api.create_command(ctx, c"weir.test.now", cmd_test_now.call, c"fast", 0) } {
            return api::ERR;
        }
    }
    let counted: Vec<_> = commands.iter().map(|(n, c, _, _)| (*n, c.counts)).collect();
    stats::register(&counted);
    // SAFETY: the load context; `info` lives as long as the module.
    if !unsafe { api.register_info(ctx, info) } {
        return api::ERR;
    }
    OK
}
