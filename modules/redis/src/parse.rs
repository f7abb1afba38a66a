//! Reading the commands' arguments: strict numbers and the specs each
//! command (and each part of `WEIR.ALL`) takes. Every refusal is a message
//! that starts with its error code; nothing is read from a key before the
//! arguments have all passed.

use crate::gcra::{Gcra, GcraError, MAX_SPAN_NS, RATE_SCALE};

/// The most stamps a sliding window may keep per key (16 bytes each): the
/// bound on its memory, and on the work one call does.
pub const MAX_WINDOW_QUOTA: u64 = 100_000;

/// The most keys `WEIR.ALL` takes at once.
pub const MAX_ALL_KEYS: usize = 64;

/// Why a command was refused before it touched a key.
#[derive(Debug, PartialEq, Eq)]
pub enum Fail {
    /// The wrong number of arguments: Redis's own arity error.
    Arity,
    /// Any other refusal, as its error reply.
    Msg(String),
}

impl From<String> for Fail {
    fn from(s: String) -> Fail {
        Fail::Msg(s)
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T, Fail> {
    Err(Fail::Msg(message.into()))
}

fn is_word(token: &[u8], word: &str) -> bool {
    token.eq_ignore_ascii_case(word.as_bytes())
}

/// A whole number from 1 to `max`, written in plain decimal digits.
pub fn count(token: &[u8], name: &str, max: u64) -> Result<u64, Fail> {
    let digits = token.strip_prefix(b"-").unwrap_or(token);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return fail(format!("ERR {name} is not a whole number"));
    }
    if token.len() != digits.len() || digits.iter().all(|&d| d == b'0') {
        return fail(format!("ERR {name} must be positive"));
    }
    let mut n: u64 = 0;
    for &d in digits {
        n = match n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(d - b'0')))
        {
            Some(n) if n <= max => n,
            _ => return fail(format!("ERR {name} is too large (at most {max})")),
        };
    }
    Ok(n)
}

/// A positive span in milliseconds, as nanoseconds.
pub fn millis(token: &[u8], name: &str) -> Result<i64, Fail> {
    let max = (MAX_SPAN_NS / 1_000_000) as u64;
    Ok(count(token, name, max)? as i64 * 1_000_000)
}

/// A rate in tokens per second: decimal digits with an optional fraction,
/// as billionths (digits past the ninth decimal are dropped: the rate
/// rounds down, against admitting).
pub fn rate(token: &[u8]) -> Result<u64, Fail> {
    let body = token.strip_prefix(b"-").unwrap_or(token);
    let (whole, fraction) = match body.iter().position(|&b| b == b'.') {
        Some(dot) => (&body[..dot], &body[dot + 1..]),
        None => (body, &b""[..]),
    };
    let digits_ok = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if whole.is_empty() && fraction.is_empty()
        || !digits_ok(whole)
        || !digits_ok(fraction)
        || body.len() == whole.len() + 1 && fraction.is_empty()
    {
        return fail("ERR rate is not a number of tokens per second");
    }
    if token.len() != body.len() {
        return fail("ERR rate must be positive");
    }
    let too_large = || {
        fail(format!(
            "ERR rate is too large (at most {} per second)",
            crate::gcra::MAX_RATE
        ))
    };
    let mut scaled: u64 = 0;
    for &d in whole {
        scaled = match scaled
            .checked_mul(10)
            .and_then(|s| s.checked_add(u64::from(d - b'0')))
        {
            Some(s) if s <= crate::gcra::MAX_RATE => s,
            _ => return too_large(),
        };
    }
    scaled *= RATE_SCALE;
    let mut place = RATE_SCALE;
    for &d in fraction.iter().take(9) {
        place /= 10;
        scaled += u64::from(d - b'0') * place;
    }
    if scaled == 0 {
        return fail("ERR rate must be positive (at least 0.000000001 per second)");
    }
    if scaled > crate::gcra::MAX_RATE * RATE_SCALE {
        return too_large();
    }
    Ok(scaled)
}

/// The integer limiter's variants and settings (`WEIR.LIMITER`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimiterSpec {
    Bucket {
        capacity: u64,
        refill_amount: u64,
        refill_interval: i64,
    },
    Window {
        capacity: u64,
        window: i64,
    },
    Cooldown {
        capacity: u64,
        cooldown: i64,
    },
}

/// One limit and what a call takes from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spec {
    /// `BUCKET rate burst [COST n] [MS]`
    Bucket { gcra: Gcra, cost: u64, ms: bool },
    /// `WINDOW quota window_ms [COST n]`
    Window { quota: u64, window: i64, cost: u64 },
    /// `PERIOD quota period_ms [ALIGN] [COST n]`
    Period {
        quota: u64,
        period: i64,
        align: bool,
        cost: u64,
    },
    /// `LIMITER BUCKET|WINDOW|COOLDOWN …` (not in `WEIR.ALL`)
    Limiter { spec: LimiterSpec, cost: u64 },
}

/// The most a capacity or quota may be: replies are signed 64-bit.
const MAX_UNITS: u64 = i64::MAX as u64;

/// Reads one spec of kind `kind` from the front of `args`; how many
/// tokens it used. Options may follow in any order, each at most once.
pub fn spec(kind: &[u8], args: &[&[u8]]) -> Result<(Spec, usize), Fail> {
    let need = |n: usize| {
        if args.len() < n {
            Err(Fail::Arity)
        } else {
            Ok(())
        }
    };
    let (mut spec, mut used) = if is_word(kind, "BUCKET") {
        need(2)?;
        let rate = rate(args[0])?;
        let burst = count(args[1], "burst", MAX_UNITS)?;
        let gcra = Gcra::new(rate, burst).map_err(|e| match e {
            GcraError::SpanTooLong => Fail::Msg(format!(
                "ERR burst / rate is too long (at most {} days)",
                MAX_SPAN_NS / 86_400_000_000_000
            )),
            GcraError::RateTooHigh => Fail::Msg("ERR rate is too large".into()),
            GcraError::ZeroRate | GcraError::ZeroBurst => {
                Fail::Msg("ERR rate and burst must be positive".into())
            }
        })?;
        (
            Spec::Bucket {
                gcra,
                cost: 1,
                ms: false,
            },
            2,
        )
    } else if is_word(kind, "WINDOW") {
        need(2)?;
        let quota = count(args[0], "quota", MAX_WINDOW_QUOTA)?;
        let window = millis(args[1], "window_ms")?;
        (
            Spec::Window {
                quota,
                window,
                cost: 1,
            },
            2,
        )
    } else if is_word(kind, "PERIOD") {
        need(2)?;
        let quota = count(args[0], "quota", MAX_UNITS)?;
        let period = millis(args[1], "period_ms")?;
        (
            Spec::Period {
                quota,
                period,
                align: false,
                cost: 1,
            },
            2,
        )
    } else if is_word(kind, "LIMITER") {
        need(1)?;
        let variant = args[0];
        let spec = if is_word(variant, "BUCKET") {
            need(4)?;
            LimiterSpec::Bucket {
                capacity: count(args[1], "capacity", MAX_UNITS)?,
                refill_amount: count(args[2], "refill_amount", MAX_UNITS)?,
                refill_interval: millis(args[3], "refill_interval_ms")?,
            }
        } else if is_word(variant, "WINDOW") {
            need(3)?;
            LimiterSpec::Window {
                capacity: count(args[1], "capacity", MAX_UNITS)?,
                window: millis(args[2], "window_ms")?,
            }
        } else if is_word(variant, "COOLDOWN") {
            need(3)?;
            LimiterSpec::Cooldown {
                capacity: count(args[1], "capacity", MAX_UNITS)?,
                cooldown: millis(args[2], "cooldown_ms")?,
            }
        } else {
            return fail("ERR the limiter variant is BUCKET, WINDOW or COOLDOWN");
        };
        let used = if matches!(spec, LimiterSpec::Bucket { .. }) {
            4
        } else {
            3
        };
        (Spec::Limiter { spec, cost: 1 }, used)
    } else {
        return fail("ERR a spec starts with BUCKET, WINDOW or PERIOD");
    };
    let (mut cost_seen, mut ms_seen, mut align_seen) = (false, false, false);
    while used < args.len() {
        let option = args[used];
        if is_word(option, "COST") && !cost_seen {
            need(used + 2)?;
            let n = count(args[used + 1], "COST", MAX_UNITS)?;
            let (limit, what) = match &mut spec {
                Spec::Bucket { gcra, cost, .. } => {
                    *cost = n;
                    (gcra.burst(), "burst")
                }
                Spec::Window { quota, cost, .. } | Spec::Period { quota, cost, .. } => {
                    *cost = n;
                    (*quota, "quota")
                }
                Spec::Limiter { cost, spec } => {
                    *cost = n;
                    let (LimiterSpec::Bucket { capacity, .. }
                    | LimiterSpec::Window { capacity, .. }
                    | LimiterSpec::Cooldown { capacity, .. }) = *spec;
                    (capacity, "capacity")
                }
            };
            if n > limit {
                return fail(format!(
                    "ERR COST is more than the {what}: it could never pass"
                ));
            }
            cost_seen = true;
            used += 2;
        } else if is_word(option, "MS") && !ms_seen && matches!(spec, Spec::Bucket { .. }) {
            if let Spec::Bucket { ms, .. } = &mut spec {
                *ms = true;
            }
            ms_seen = true;
            used += 1;
        } else if is_word(option, "ALIGN") && !align_seen && matches!(spec, Spec::Period { .. }) {
            if let Spec::Period { align, .. } = &mut spec {
                *align = true;
            }
            align_seen = true;
            used += 1;
        } else {
            break;
        }
    }
    Ok((spec, used))
}

/// A command's whole spec: `kind` and every token after it, all used.
pub fn whole_spec(kind: &[u8], args: &[&[u8]]) -> Result<Spec, Fail> {
    let (spec, used) = spec(kind, args)?;
    if used != args.len() {
        return fail("ERR syntax error");
    }
    Ok(spec)
}

/// `WEIR.ALL`'s specs: `count` of them, back to back, each starting with
/// its kind; `LIMITER` is not among them.
pub fn all_specs(args: &[&[u8]], count: usize) -> Result<Vec<Spec>, Fail> {
    let mut specs = Vec::with_capacity(count);
    let mut at = 0;
    while at < args.len() {
        if specs.len() == count {
            return fail("ERR WEIR.ALL has more specs than keys");
        }
        if is_word(args[at], "LIMITER") {
            return fail("ERR WEIR.ALL takes BUCKET, WINDOW and PERIOD specs");
        }
        let (spec, used) = spec(args[at], &args[at + 1..])?;
        specs.push(spec);
        at += 1 + used;
    }
    if specs.len() != count {
        return fail("ERR WEIR.ALL needs one spec per key");
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg<T: std::fmt::Debug>(r: Result<T, Fail>) -> String {
        match r {
            Err(Fail::Msg(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn counts_are_strict() {
        assert_eq!(count(b"12", "n", 100), Ok(12));
        assert_eq!(count(b"100", "n", 100), Ok(100));
        assert!(msg(count(b"101", "n", 100)).contains("too large"));
        assert!(msg(count(b"99999999999999999999999", "n", u64::MAX)).contains("too large"));
        assert!(msg(count(b"0", "n", 100)).contains("positive"));
        assert!(msg(count(b"-3", "n", 100)).contains("positive"));
        for bad in [&b""[..], b"x", b"1.5", b" 1", b"+1", b"1e3", b"-", b"0x10"] {
            assert!(
                msg(count(bad, "n", 100)).contains("not a whole number"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn rates_are_exact_decimals() {
        assert_eq!(rate(b"1"), Ok(RATE_SCALE));
        assert_eq!(rate(b"0.5"), Ok(RATE_SCALE / 2));
        assert_eq!(rate(b".25"), Ok(RATE_SCALE / 4));
        assert_eq!(rate(b"1000000000"), Ok(1_000_000_000 * RATE_SCALE));
        assert_eq!(rate(b"0.000000001"), Ok(1));
        // Past the ninth decimal the rate rounds down.
        assert_eq!(rate(b"0.0000000019"), Ok(1));
        assert!(msg(rate(b"0.0000000001")).contains("positive"));
        assert!(msg(rate(b"0")).contains("positive"));
        assert!(msg(rate(b"-1")).contains("positive"));
        assert!(msg(rate(b"1000000001")).contains("too large"));
        assert!(msg(rate(b"99999999999999999999999")).contains("too large"));
        for bad in [
            &b""[..],
            b".",
            b"1.",
            b"a",
            b"1.2.3",
            b"nan",
            b"inf",
            b"1e3",
        ] {
            assert!(msg(rate(bad)).contains("not a number"), "{bad:?}");
        }
    }

    #[test]
    fn specs_and_options() {
        let (s, used) = spec(b"bucket", &[b"10", b"5", b"COST", b"2", b"ms"]).unwrap();
        assert_eq!(used, 5);
        assert!(matches!(
            s,
            Spec::Bucket {
                cost: 2,
                ms: true,
                ..
            }
        ));
        assert!(msg(whole_spec(b"BUCKET", &[b"10", b"5", b"COST", b"6"])).contains("never pass"));
        assert!(msg(whole_spec(b"BUCKET", &[b"10", b"5", b"ALIGN"])).contains("syntax"));
        assert!(msg(whole_spec(b"PERIOD", &[b"10", b"5", b"ALIGN", b"ALIGN"])).contains("syntax"));
        assert_eq!(whole_spec(b"WINDOW", &[b"10"]), Err(Fail::Arity));
        assert_eq!(
            whole_spec(b"BUCKET", &[b"10", b"5", b"COST"]),
            Err(Fail::Arity)
        );
        assert!(msg(whole_spec(b"WINDOW", &[b"100001", b"5"])).contains("too large"));
        assert!(msg(whole_spec(b"BUCKET", &[b"1", b"1000000000000"])).contains("too long"));
        let s = whole_spec(b"LIMITER", &[b"cooldown", b"3", b"1000", b"COST", b"3"]).unwrap();
        assert!(matches!(s, Spec::Limiter { cost: 3, .. }));
        let specs = all_specs(
            &[
                b"BUCKET", b"1", b"2", b"WINDOW", b"3", b"1000", b"COST", b"2", b"PERIOD", b"4",
                b"10", b"ALIGN",
            ],
            3,
        )
        .unwrap();
        assert_eq!(specs.len(), 3);
        assert!(msg(all_specs(&[b"BUCKET", b"1", b"2"], 2)).contains("one spec per key"));
        assert!(msg(all_specs(
            &[b"BUCKET", b"1", b"2", b"BUCKET", b"1", b"2"],
            1
        ))
        .contains("more specs"));
        assert!(msg(all_specs(&[b"LIMITER", b"COOLDOWN", b"1", b"2"], 1))
            .contains("BUCKET, WINDOW and PERIOD"));
    }
}
