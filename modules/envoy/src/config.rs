//! The filter's configuration: the JSON Envoy makes of the
//! `google.protobuf.Struct` under `filter_config`, read into plain structs
//! and checked the way the nginx module checks its directives. Every error
//! names the field and the value (`limits[0].rate: invalid "5r/h": expected
//! Nr/s or Nr/m`), so that the one log line Envoy shows says what to fix.

use serde::Deserialize;
use serde_json::Value;
use weir_core::bloom::{BloomLimit, MAX_HASHES, MAX_SIZE_LOG2};
use weir_core::gcra::{GcraError, GcraLimit};
use weir_core::keyed::{buckets_for, Overflow, BUCKET_BYTES};
use weir_core::rate::{RateError, RateLimit, MAX_BURST as RATE_MAX_BURST};

/// kind smooth's largest burst: the nginx module's bound, far below the
/// GCRA word's own.
pub const MAX_BURST: u64 = 1_000_000;
/// The smallest `size`: the nginx module's (8 pages of 4 KiB).
pub const MIN_SIZE: u64 = 32 * 1024;
/// The largest table: the bloom's largest array (2^32 words of 8 bytes),
/// 2^28 buckets of 128 bytes.
pub const MAX_TABLE_BYTES: u64 = 8 << MAX_SIZE_LOG2;
/// The overflow chance a table sized by `keys` is laid for: at most this
/// chance that a new key finds no room while that many keys are active.
pub const TABLE_CHANCE: f64 = 1e-9;

/// The filter_name and per_route_config_name this module answers to.
pub const FILTER_NAME: &str = "weir_limit";

/// The word kind of a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// GCRA words: a token bucket (nginx's `kind=smooth`, the default).
    Smooth,
    /// Rate words: a burst, then nothing until the window ends.
    Window,
}

/// Where a limit's words live (its store), and how many.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// A bloom array of 2^`size_log2` words, `hashes` of them a key: fixed
    /// memory, a key now and then refused for another's traffic.
    Bloom { size_log2: u32, hashes: u32 },
    /// A keyed table of `buckets` buckets (8 slots of 16 bytes each): a
    /// word per key, exact while the table does not overflow; `overflow`
    /// answers a new key that finds no room.
    Table { buckets: u64, overflow: Overflow },
}

/// One piece of a key; a key is its pieces' bytes, concatenated.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum KeyPart {
    /// A request header's first value (the name in any case).
    Header(String),
    /// The `:authority` pseudo-header (HTTP/1's Host).
    Authority,
    /// The `:path` pseudo-header, as the client sent it (query included).
    Path,
    /// The downstream peer's address, without its port.
    ClientAddress,
    /// The client address from `x-forwarded-for` behind this many trusted
    /// proxies: the (N+1)-th address from the right, or the peer's address
    /// when the header holds N or fewer.
    XForwardedFor(f64),
    /// Fixed text (a prefix or separator between the other parts).
    Text(String),
}

/// A piece of a key as the filter reads it: header names lowercased, hop
/// counts whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Header(String),
    ClientAddress,
    XForwardedFor(usize),
    Text(Vec<u8>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimit {
    name: String,
    key: Vec<KeyPart>,
    rate: String,
    burst: f64,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    size: Option<Value>,
    #[serde(default)]
    hashes: Option<f64>,
    #[serde(default)]
    table: Option<RawTable>,
}

/// A limit's `table`: its words in a keyed table instead of a bloom array.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    #[serde(default)]
    keys: Option<Value>,
    #[serde(default)]
    overflow: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApply {
    limit: String,
    #[serde(default)]
    dry_run: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    limits: Vec<RawLimit>,
    #[serde(default)]
    apply: Option<Vec<RawApply>>,
    #[serde(default)]
    status: Option<f64>,
    #[serde(default)]
    log_level: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    #[serde(default)]
    apply: Option<Vec<RawApply>>,
    #[serde(default)]
    status: Option<f64>,
}

/// A limit as declared: what its words hold (its shape) and how its key is
/// read.
#[derive(Clone, Debug, PartialEq)]
pub struct LimitSpec {
    pub name: String,
    pub key: Vec<Part>,
    pub kind: Kind,
    /// The rate as written: N requests a second, or a minute.
    pub rate_number: u64,
    pub per_minute: bool,
    pub burst: u64,
    pub store: Store,
    pub limit: BloomLimit,
    /// `RateLimit-Policy`'s value, made once.
    pub policy: String,
    /// `RateLimit`'s value up to `t=`.
    pub state_prefix: String,
}

impl LimitSpec {
    /// What an update may not change, if `other` changes it: the words'
    /// kind and store (a bloom array or a table), a bloom's size and
    /// hashes, a table's size and overflow policy, and a smooth limit's
    /// tick (a GCRA word is an instant in ticks of 2^-shift ns; only rates
    /// above 7812500r/s have shift above 0). The rate and burst may change:
    /// the words stay, each config judging them by its own limit. Named
    /// with both values.
    pub fn unkept_change(&self, other: &LimitSpec) -> Option<String> {
        let kind = |k: Kind| match k {
            Kind::Smooth => "smooth",
            Kind::Window => "window",
        };
        let store = |s: &Store| match s {
            Store::Bloom { .. } => "bloom array",
            Store::Table { .. } => "table",
        };
        let tick = |l: &BloomLimit| match l {
            BloomLimit::Gcra(g) => g.parts().2,
            BloomLimit::Window(_) => 0,
        };
        if self.kind != other.kind {
            Some(format!(
                "kind ({} to {})",
                kind(self.kind),
                kind(other.kind)
            ))
        } else if let Some(change) = match (&self.store, &other.store) {
            (
                Store::Bloom { size_log2, hashes },
                Store::Bloom {
                    size_log2: size_log2_to,
                    hashes: hashes_to,
                },
            ) => {
                if size_log2 != size_log2_to {
                    Some(format!("size (2^{size_log2} to 2^{size_log2_to} words)"))
                } else if hashes != hashes_to {
                    Some(format!("hashes ({hashes} to {hashes_to})"))
                } else {
                    None
                }
            }
            (
                Store::Table { buckets, overflow },
                Store::Table {
                    buckets: buckets_to,
                    overflow: overflow_to,
                },
            ) => {
                if buckets != buckets_to {
                    Some(format!("table size ({buckets} to {buckets_to} buckets)"))
                } else if overflow != overflow_to {
                    Some(format!(
                        "table overflow ({} to {})",
                        overflow_name(*overflow),
                        overflow_name(*overflow_to)
                    ))
                } else {
                    None
                }
            }
            (from, to) => Some(format!("store ({} to {})", store(from), store(to))),
        } {
            Some(change)
        } else if tick(&self.limit) != tick(&other.limit) {
            Some(format!(
                "tick (2^-{} ns to 2^-{} ns: a smooth rate moved across 7812500r/s)",
                tick(&self.limit),
                tick(&other.limit)
            ))
        } else {
            None
        }
    }
}

/// A limit a request is held to, by its index in [`Config::limits`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Apply {
    pub limit: usize,
    pub dry_run: bool,
}

/// A limit a route names, resolved against the filter's limits per request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteApply {
    pub limit: String,
    pub dry_run: bool,
}

/// Envoy's log levels the module logs refusals at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Info = 2,
    Warn = 3,
    Error = 4,
}

/// The filter's config.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub limits: Vec<LimitSpec>,
    pub apply: Vec<Apply>,
    pub status: u32,
    pub log_level: LogLevel,
}

/// A route's config: the limits it applies instead of the filter's, its
/// refusal status.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteConfig {
    pub apply: Option<Vec<RouteApply>>,
    pub status: Option<u32>,
}

/// `field: invalid VALUE: why`, the nginx module's form.
pub(crate) fn bad(field: &str, value: &dyn std::fmt::Display, why: &str) -> String {
    format!("{field}: invalid {value}: {why}")
}

pub(crate) fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn json_error(e: serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    let inner = e.into_inner();
    // serde_json appends " at line L column C" of the JSON Envoy generated.
    let mut msg = inner.to_string();
    if let Some(at) = msg.rfind(" at line ") {
        msg.truncate(at);
    }
    if path.is_empty() || path == "." {
        msg
    } else {
        format!("{path}: {msg}")
    }
}

pub(crate) fn parse_json<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, String> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(json_error)
}

pub(crate) fn whole(field: &str, v: f64, lo: u64, hi: u64, why: &str) -> Result<u64, String> {
    if v.fract() != 0.0 || v < lo as f64 || v > hi as f64 {
        return Err(bad(field, &v, why));
    }
    Ok(v as u64)
}

pub(crate) fn status(field: &str, v: f64) -> Result<u32, String> {
    Ok(whole(field, v, 400, 599, "the status must be 400..599")? as u32)
}

/// nginx's size syntax: bytes, or a number with k/K, m/M or g/G.
fn parse_size(field: &str, v: &Value) -> Result<u64, String> {
    let (text, n) = match v {
        Value::Number(n) => (
            n.to_string(),
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64),
        ),
        Value::String(s) => {
            let (digits, unit) = match s.as_bytes().last() {
                Some(b'k' | b'K') => (&s[..s.len() - 1], 1u64 << 10),
                Some(b'm' | b'M') => (&s[..s.len() - 1], 1 << 20),
                Some(b'g' | b'G') => (&s[..s.len() - 1], 1 << 30),
                _ => (&s[..], 1),
            };
            let n = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                digits.parse::<u64>().ok().and_then(|n| n.checked_mul(unit))
            } else {
                None
            };
            (quoted(s), n)
        }
        other => (other.to_string(), None),
    };
    let n = n.ok_or_else(|| bad(field, &text, "expected bytes, or a number with k, m or g"))?;
    if n < MIN_SIZE {
        return Err(bad(field, &text, "the size is too small (at least 32k)"));
    }
    Ok(n)
}

/// The overflow policy's name in the config.
pub fn overflow_name(o: Overflow) -> &'static str {
    match o {
        Overflow::Refuse => "refuse",
        Overflow::Admit => "admit",
        Overflow::Shared => "shared",
    }
}

/// A count of keys: a whole number, or one with `k`, `m` or `g` (10^3,
/// 10^6, 10^9: keys are counted, not bytes).
fn parse_keys(field: &str, v: &Value) -> Result<u64, String> {
    let (text, n) = match v {
        Value::Number(n) => (
            n.to_string(),
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= 1e15)
                .map(|f| f as u64),
        ),
        Value::String(s) => {
            let (digits, unit) = match s.as_bytes().last() {
                Some(b'k' | b'K') => (&s[..s.len() - 1], 1_000u64),
                Some(b'm' | b'M') => (&s[..s.len() - 1], 1_000_000),
                Some(b'g' | b'G') => (&s[..s.len() - 1], 1_000_000_000),
                _ => (&s[..], 1),
            };
            let n = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                digits.parse::<u64>().ok().and_then(|n| n.checked_mul(unit))
            } else {
                None
            };
            (quoted(s), n.filter(|&n| n >= 1))
        }
        other => (other.to_string(), None),
    };
    n.ok_or_else(|| {
        bad(
            field,
            &text,
            "expected a number of keys (at least 1), or one with k, m or g",
        )
    })
}

/// A table's buckets: `size` bytes' worth (whole 128-byte buckets), or
/// enough for `keys` active keys at an overflow chance of at most
/// [`TABLE_CHANCE`] a new key; at least [`MIN_SIZE`] bytes either way, at
/// most [`MAX_TABLE_BYTES`].
fn table_buckets(
    at: &dyn Fn(&str) -> String,
    size: Option<&Value>,
    keys: Option<&Value>,
) -> Result<u64, String> {
    let bucket = BUCKET_BYTES as u64;
    let too_big = |field: &str, text: String| {
        bad(
            field,
            &text,
            "the table would be over 32g (2^28 buckets of 128 bytes)",
        )
    };
    let buckets = match (size, keys) {
        (Some(_), Some(k)) => {
            return Err(bad(
                &at("table.keys"),
                k,
                "a table is sized by keys or by the limit's size, not both",
            ))
        }
        (None, None) => {
            return Err(format!(
                "{}: missing: a table is sized by the limit's size or by table.keys",
                at("size")
            ))
        }
        (Some(v), None) => {
            let bytes = parse_size(&at("size"), v)?;
            if bytes > MAX_TABLE_BYTES {
                return Err(too_big(&at("size"), v.to_string()));
            }
            bytes / bucket
        }
        (None, Some(v)) => {
            let keys = parse_keys(&at("table.keys"), v)?;
            buckets_for(keys, TABLE_CHANCE)
                .filter(|&b| b <= MAX_TABLE_BYTES / bucket)
                .ok_or_else(|| too_big(&at("table.keys"), v.to_string()))?
                .max(MIN_SIZE / bucket)
        }
    };
    Ok(buckets)
}

/// The words a limit of `size` bytes gets: the largest power of two whose
/// words fit (8 bytes each), at most 2^MAX_SIZE_LOG2.
fn size_log2(size: u64) -> u32 {
    (63 - (size / 8).leading_zeros()).min(MAX_SIZE_LOG2)
}

fn gcra_error(e: GcraError) -> &'static str {
    match e {
        GcraError::TooFast => "the rate is too fast for the GCRA word",
        GcraError::TooSlow => "burst / rate is longer than the word's clock holds",
        _ => "the rate and burst do not form a limit",
    }
}

fn rate_error(e: RateError) -> &'static str {
    match e {
        RateError::TooFast => "the window (burst / rate) is under the rate word's shortest",
        RateError::TooSlow => "the window (burst / rate) is longer than the rate word holds",
        _ => "the rate and burst do not form a limit",
    }
}

fn limit(i: usize, raw: RawLimit) -> Result<LimitSpec, String> {
    let at = |f: &str| format!("limits[{i}].{f}");
    if raw.name.is_empty()
        || !raw
            .name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(bad(
            &at("name"),
            &quoted(&raw.name),
            "a name is letters, digits, '_' and '-' (it names the stats)",
        ));
    }
    if raw.key.is_empty() {
        return Err(bad(&at("key"), &"[]", "a key has at least one part"));
    }
    let mut key = Vec::with_capacity(raw.key.len());
    for (p, part) in raw.key.into_iter().enumerate() {
        key.push(match part {
            KeyPart::Header(name) => {
                if name.is_empty() || name.bytes().any(|b| b <= b' ' || b >= 0x7f) {
                    return Err(bad(
                        &format!("limits[{i}].key[{p}].header"),
                        &quoted(&name),
                        "not a header name",
                    ));
                }
                Part::Header(name.to_ascii_lowercase())
            }
            KeyPart::Authority => Part::Header(":authority".into()),
            KeyPart::Path => Part::Header(":path".into()),
            KeyPart::ClientAddress => Part::ClientAddress,
            KeyPart::XForwardedFor(hops) => Part::XForwardedFor(whole(
                &format!("limits[{i}].key[{p}].x_forwarded_for"),
                hops,
                0,
                64,
                "trusted hops must be a whole number 0..64",
            )? as usize),
            KeyPart::Text(text) => Part::Text(text.into_bytes()),
        });
    }

    let rate = &raw.rate;
    let (digits, per_minute) = if let Some(d) = rate.strip_suffix("r/s") {
        (d, false)
    } else if let Some(d) = rate.strip_suffix("r/m") {
        (d, true)
    } else {
        return Err(bad(&at("rate"), &quoted(rate), "expected Nr/s or Nr/m"));
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(
            &at("rate"),
            &quoted(rate),
            "the rate is not a whole number",
        ));
    }
    let rate_number: u64 = digits
        .parse()
        .map_err(|_| bad(&at("rate"), &quoted(rate), "the rate is too large"))?;
    if rate_number == 0 {
        return Err(bad(&at("rate"), &quoted(rate), "the rate is zero"));
    }

    let kind = match raw.kind.as_deref() {
        None | Some("smooth") => Kind::Smooth,
        Some("window") => Kind::Window,
        Some(other) => {
            return Err(bad(
                &at("kind"),
                &quoted(other),
                "expected smooth or window",
            ))
        }
    };
    let burst = whole(
        &at("burst"),
        raw.burst,
        1,
        MAX_BURST,
        "the burst must be 1..1000000 (1..1023 for kind window)",
    )?;
    if kind == Kind::Window && burst > RATE_MAX_BURST as u64 {
        return Err(bad(
            &at("burst"),
            &burst,
            "kind window takes a burst of 1..1023",
        ));
    }
    let store = match raw.table {
        None => {
            let hashes = match raw.hashes {
                None => 3,
                Some(h) => whole(
                    &at("hashes"),
                    h,
                    1,
                    u64::from(MAX_HASHES),
                    "hashes must be 1..8",
                )? as u32,
            };
            let size = raw.size.as_ref().ok_or_else(|| {
                format!(
                    "{}: missing: a bloom array needs its size (or give the limit a table)",
                    at("size")
                )
            })?;
            let size_log2 = size_log2(parse_size(&at("size"), size)?);
            Store::Bloom { size_log2, hashes }
        }
        Some(table) => {
            if let Some(h) = raw.hashes {
                return Err(bad(
                    &at("hashes"),
                    &h,
                    "a table holds one word a key: hashes is the bloom array's",
                ));
            }
            let overflow = match table.overflow.as_deref() {
                None | Some("refuse") => Overflow::Refuse,
                Some("admit") => Overflow::Admit,
                Some("shared") => Overflow::Shared,
                Some(other) => {
                    return Err(bad(
                        &at("table.overflow"),
                        &quoted(other),
                        "expected refuse, admit or shared",
                    ))
                }
            };
            let buckets = table_buckets(&at, raw.size.as_ref(), table.keys.as_ref())?;
            Store::Table { buckets, overflow }
        }
    };

    let per_s = if per_minute {
        rate_number as f64 / 60.0
    } else {
        rate_number as f64
    };
    let limit = match kind {
        Kind::Smooth => GcraLimit::new(per_s, burst as i64)
            .map(BloomLimit::from)
            .map_err(|e| {
                bad(
                    &at("burst"),
                    &burst,
                    &format!("with rate {rate}: {}", gcra_error(e)),
                )
            })?,
        Kind::Window => RateLimit::new(per_s, burst as i64)
            .map(BloomLimit::from)
            .map_err(|e| {
                bad(
                    &at("burst"),
                    &burst,
                    &format!("with rate {rate}: {}", rate_error(e)),
                )
            })?,
    };

    // The refusal headers' constant parts, as the nginx module makes them:
    // the policy with a window of burst / rate seconds rounded up (at least
    // 1), and the state up to t=.
    let seconds = burst * if per_minute { 60 } else { 1 };
    let window = seconds.div_ceil(rate_number).max(1);
    let policy = format!("\"{}\";q={};w={}", raw.name, burst, window);
    let state_prefix = format!("\"{}\";r=0;t=", raw.name);

    Ok(LimitSpec {
        name: raw.name,
        key,
        kind,
        rate_number,
        per_minute,
        burst,
        store,
        limit,
        policy,
        state_prefix,
    })
}

/// A config that is not JSON at all (a StringValue or BytesValue passes
/// its bytes as they are): named whole, up to 64 bytes.
pub(crate) fn not_json(bytes: &[u8]) -> Result<(), String> {
    if serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(64)]).into_owned();
    Err(bad(
        "",
        &quoted(&text),
        "expected a google.protobuf.Struct (JSON)",
    )
    .trim_start_matches(": ")
    .to_string())
}

pub(crate) fn log_level(v: Option<&str>) -> Result<LogLevel, String> {
    match v {
        None | Some("error") => Ok(LogLevel::Error),
        Some("warn") => Ok(LogLevel::Warn),
        Some("info") => Ok(LogLevel::Info),
        Some(other) => Err(bad(
            "log_level",
            &quoted(other),
            "expected info, warn or error",
        )),
    }
}

/// Reads and checks the filter's config.
pub fn parse(bytes: &[u8]) -> Result<Config, String> {
    not_json(bytes)?;
    let raw: RawConfig = parse_json(bytes)?;
    if raw.limits.is_empty() {
        return Err(bad("limits", &"[]", "declare at least one limit"));
    }
    let mut limits: Vec<LimitSpec> = Vec::with_capacity(raw.limits.len());
    for (i, l) in raw.limits.into_iter().enumerate() {
        let spec = limit(i, l)?;
        if limits.iter().any(|other| other.name == spec.name) {
            return Err(bad(
                &format!("limits[{i}].name"),
                &quoted(&spec.name),
                "the limit is declared twice",
            ));
        }
        limits.push(spec);
    }
    let apply = match raw.apply {
        None => (0..limits.len())
            .map(|limit| Apply {
                limit,
                dry_run: false,
            })
            .collect(),
        Some(list) => {
            let mut out = Vec::with_capacity(list.len());
            for (i, a) in list.into_iter().enumerate() {
                let limit = limits
                    .iter()
                    .position(|l| l.name == a.limit)
                    .ok_or_else(|| {
                        bad(
                            &format!("apply[{i}].limit"),
                            &quoted(&a.limit),
                            "no limit has this name",
                        )
                    })?;
                out.push(Apply {
                    limit,
                    dry_run: a.dry_run,
                });
            }
            out
        }
    };
    let status = match raw.status {
        None => 429,
        Some(s) => status("status", s)?,
    };
    Ok(Config {
        limits,
        apply,
        status,
        log_level: log_level(raw.log_level.as_deref())?,
    })
}

/// Reads and checks a route's config. The limits it names are the filter's
/// and are found per request (a route's config is read apart from, and may
/// outlive, the filter's).
pub fn parse_route(bytes: &[u8]) -> Result<RouteConfig, String> {
    not_json(bytes)?;
    let raw: RawRoute = parse_json(bytes)?;
    let apply = raw.apply.map(|list| {
        list.into_iter()
            .map(|a| RouteApply {
                limit: a.limit,
                dry_run: a.dry_run,
            })
            .collect()
    });
    let status = raw.status.map(|s| status("status", s)).transpose()?;
    Ok(RouteConfig { apply, status })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(limit: &str) -> Result<Config, String> {
        parse(format!(r#"{{"limits":[{limit}]}}"#).as_bytes())
    }

    const OK: &str = r#"{"name":"one","key":[{"header":"X-Client"}],"rate":"1r/m","burst":3,"kind":"window","size":"1m"}"#;

    #[test]
    fn a_limit_reads_as_the_nginx_module_reads_it() {
        let c = one(OK).unwrap();
        let l = &c.limits[0];
        assert_eq!(l.key, vec![Part::Header("x-client".into())]);
        assert_eq!(
            (l.kind, l.rate_number, l.per_minute, l.burst),
            (Kind::Window, 1, true, 3)
        );
        // 1 MiB of 8-byte words, 3 a key.
        assert_eq!(
            l.store,
            Store::Bloom {
                size_log2: 17,
                hashes: 3
            }
        );
        assert_eq!(l.policy, r#""one";q=3;w=180"#);
        assert_eq!(l.state_prefix, r#""one";r=0;t="#);
        assert_eq!(
            c.apply,
            vec![Apply {
                limit: 0,
                dry_run: false
            }]
        );
        assert_eq!((c.status, c.log_level), (429, LogLevel::Error));
    }

    #[test]
    fn every_key_part() {
        let c = one(r#"{"name":"k","key":[{"text":"k:"},"authority","path","client_address",{"x_forwarded_for":2},{"header":"a"}],"rate":"10r/s","burst":20,"size":65536}"#).unwrap();
        assert_eq!(
            c.limits[0].key,
            vec![
                Part::Text(b"k:".to_vec()),
                Part::Header(":authority".into()),
                Part::Header(":path".into()),
                Part::ClientAddress,
                Part::XForwardedFor(2),
                Part::Header("a".into())
            ]
        );
        assert_eq!(c.limits[0].kind, Kind::Smooth);
        assert_eq!(c.limits[0].policy, r#""k";q=20;w=2"#);
    }

    #[test]
    fn errors_name_the_field_and_the_value() {
        let cases = [
            (
                r#""rate":"0r/s""#,
                r#"limits[0].rate: invalid "0r/s": the rate is zero"#,
            ),
            (
                r#""rate":"5r/h""#,
                r#"limits[0].rate: invalid "5r/h": expected Nr/s or Nr/m"#,
            ),
            (
                r#""burst":0"#,
                "limits[0].burst: invalid 0: the burst must be",
            ),
            (
                r#""burst":2000,"kind":"window""#,
                "limits[0].burst: invalid 2000: kind window takes a burst of 1..1023",
            ),
            (
                r#""burst":2000000"#,
                "limits[0].burst: invalid 2000000: the burst must be",
            ),
            (
                r#""kind":"fast""#,
                r#"limits[0].kind: invalid "fast": expected smooth or window"#,
            ),
            (
                r#""hashes":9"#,
                "limits[0].hashes: invalid 9: hashes must be 1..8",
            ),
            (
                r#""size":"1k""#,
                r#"limits[0].size: invalid "1k": the size is too small"#,
            ),
            (
                r#""size":"lots""#,
                r#"limits[0].size: invalid "lots": expected bytes"#,
            ),
            (r#""brust":3"#, "unknown field `brust`"),
            (
                r#""burst":"x""#,
                r#"limits[0].burst: invalid type: string "x", expected f64"#,
            ),
        ];
        for (field, want) in cases {
            let base: serde_json::Value = serde_json::from_str(
                r#"{"name":"z","key":[{"header":"x"}],"rate":"1r/s","burst":3,"size":"1m"}"#,
            )
            .unwrap();
            let mut m = base.as_object().unwrap().clone();
            let extra: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&format!("{{{field}}}")).unwrap();
            m.extend(extra);
            let err = one(&serde_json::to_string(&m).unwrap()).unwrap_err();
            assert!(err.contains(want), "{field}: got {err}");
        }
        let err = parse(br#"{"limits":[],"status":200}"#).unwrap_err();
        assert_eq!(err, "limits: invalid []: declare at least one limit");
        let err = parse(format!(r#"{{"limits":[{OK}],"status":200}}"#).as_bytes()).unwrap_err();
        assert_eq!(err, "status: invalid 200: the status must be 400..599");
        let err = parse(format!(r#"{{"limits":[{OK},{OK}]}}"#).as_bytes()).unwrap_err();
        assert_eq!(
            err,
            r#"limits[1].name: invalid "one": the limit is declared twice"#
        );
        let err = parse(format!(r#"{{"limits":[{OK}],"apply":[{{"limit":"two"}}]}}"#).as_bytes())
            .unwrap_err();
        assert_eq!(
            err,
            r#"apply[0].limit: invalid "two": no limit has this name"#
        );
        let err = parse(b"rate=1r/s").unwrap_err();
        assert_eq!(
            err,
            r#"invalid "rate=1r/s": expected a google.protobuf.Struct (JSON)"#
        );
        let err = parse(br#"{"limits":[{"name":"a","key":[{"cookie":"x"}],"rate":"1r/s","burst":1,"size":"1m"}]}"#).unwrap_err();
        assert!(
            err.starts_with("limits[0].key[0]: unknown variant `cookie`"),
            "{err}"
        );
    }

    #[test]
    fn sizes_round_down_to_a_power_of_two_of_words() {
        assert_eq!(size_log2(32 * 1024), 12);
        assert_eq!(size_log2(1 << 20), 17);
        assert_eq!(size_log2((1 << 20) + 5000), 17);
        assert_eq!(size_log2(u64::MAX), MAX_SIZE_LOG2);
    }

    #[test]
    fn an_update_keeps_the_words_unless_their_shape_changes() {
        let a = one(OK).unwrap().limits.remove(0);
        let mut b = a.clone();
        b.key = vec![Part::ClientAddress];
        assert_eq!(a.unkept_change(&b), None, "the key is not the shape");
        let c = one(&OK.replace("\"burst\":3", "\"burst\":4"))
            .unwrap()
            .limits
            .remove(0);
        assert_eq!(a.unkept_change(&c), None, "the burst may change");
        let r = one(&OK.replace("1r/m", "9r/s")).unwrap().limits.remove(0);
        assert_eq!(a.unkept_change(&r), None, "the rate may change");
        let d = one(&OK.replace("1m", "2m")).unwrap().limits.remove(0);
        assert_eq!(
            a.unkept_change(&d).as_deref(),
            Some("size (2^17 to 2^18 words)")
        );
        let k = one(&OK.replace("window", "smooth"))
            .unwrap()
            .limits
            .remove(0);
        assert_eq!(
            a.unkept_change(&k).as_deref(),
            Some("kind (window to smooth)")
        );
        let h = one(&OK.replace("\"size\"", "\"hashes\":2,\"size\""))
            .unwrap()
            .limits
            .remove(0);
        assert_eq!(a.unkept_change(&h).as_deref(), Some("hashes (3 to 2)"));
        let slow = one(&OK.replace("window", "smooth"))
            .unwrap()
            .limits
            .remove(0);
        let fast = one(&OK.replace("window", "smooth").replace("1r/m", "8000000r/s"))
            .unwrap()
            .limits
            .remove(0);
        assert_eq!(
            slow.unkept_change(&fast).as_deref(),
            Some("tick (2^-0 ns to 2^-1 ns: a smooth rate moved across 7812500r/s)")
        );
    }

    const TABLE: &str = r#"{"name":"t","key":[{"header":"x"}],"rate":"1r/s","burst":3,"table":{"keys":"1m","overflow":"shared"}}"#;

    #[test]
    fn a_table_is_sized_by_keys_or_by_bytes() {
        let l = one(TABLE).unwrap().limits.remove(0);
        // 10^6 keys at an overflow chance of at most 1e-9 a new key: the
        // core's figure, 203,090 buckets (26 MB).
        assert_eq!(
            l.store,
            Store::Table {
                buckets: buckets_for(1_000_000, TABLE_CHANCE).unwrap(),
                overflow: Overflow::Shared
            }
        );
        assert_eq!(
            l.store,
            Store::Table {
                buckets: 203_090,
                overflow: Overflow::Shared
            }
        );
        assert_eq!(l.kind, Kind::Smooth, "the kind is its own field");
        let by_size = r#"{"name":"t","key":[{"header":"x"}],"rate":"1r/s","burst":3,"kind":"window","size":"1m","table":{}}"#;
        let l = one(by_size).unwrap().limits.remove(0);
        assert_eq!(
            (l.kind, l.store),
            (
                Kind::Window,
                Store::Table {
                    buckets: (1 << 20) / 128,
                    overflow: Overflow::Refuse
                }
            )
        );
        // A few keys still get the smallest memory, 32k.
        let few = one(&TABLE.replace("\"1m\"", "10"))
            .unwrap()
            .limits
            .remove(0);
        assert!(matches!(few.store, Store::Table { buckets: 256, .. }));
        let k = one(&TABLE.replace("\"1m\"", "\"2k\""))
            .unwrap()
            .limits
            .remove(0);
        assert_eq!(
            k.store,
            Store::Table {
                buckets: buckets_for(2000, TABLE_CHANCE).unwrap().max(256),
                overflow: Overflow::Shared
            }
        );
    }

    #[test]
    fn a_table_s_errors_name_the_field() {
        let cases = [
            (
                TABLE.replace("\"table\"", "\"size\":\"1m\",\"table\""),
                r#"limits[0].table.keys: invalid "1m": a table is sized by keys or by the limit's size, not both"#,
            ),
            (
                TABLE.replace("\"keys\":\"1m\",", ""),
                "limits[0].size: missing: a table is sized by the limit's size or by table.keys",
            ),
            (
                TABLE.replace("\"table\"", "\"hashes\":3,\"table\""),
                "limits[0].hashes: invalid 3: a table holds one word a key: hashes is the bloom array's",
            ),
            (
                TABLE.replace("shared", "spill"),
                r#"limits[0].table.overflow: invalid "spill": expected refuse, admit or shared"#,
            ),
            (
                TABLE.replace("\"1m\"", "\"lots\""),
                r#"limits[0].table.keys: invalid "lots": expected a number of keys"#,
            ),
            (
                TABLE.replace("\"1m\"", "0"),
                "limits[0].table.keys: invalid 0: expected a number of keys",
            ),
            (
                TABLE.replace("\"1m\"", "\"2g\""),
                r#"limits[0].table.keys: invalid "2g": the table would be over 32g"#,
            ),
            (
                TABLE.replace("\"keys\":\"1m\",", "").replace("\"table\"", "\"size\":\"33g\",\"table\""),
                r#"limits[0].size: invalid "33g": the table would be over 32g"#,
            ),
            (
                TABLE.replace("\"keys\"", "\"slots\""),
                "unknown field `slots`",
            ),
            (
                r#"{"name":"b","key":[{"header":"x"}],"rate":"1r/s","burst":3}"#.to_string(),
                "limits[0].size: missing: a bloom array needs its size (or give the limit a table)",
            ),
        ];
        for (limit, want) in cases {
            let err = one(&limit).unwrap_err();
            assert!(err.contains(want), "{limit}: got {err}");
        }
    }

    #[test]
    fn an_update_keeps_a_table_unless_its_store_changes() {
        let a = one(TABLE).unwrap().limits.remove(0);
        let rate = one(&TABLE
            .replace("1r/s", "5r/s")
            .replace("\"burst\":3", "\"burst\":9"))
        .unwrap()
        .limits
        .remove(0);
        assert_eq!(
            a.unkept_change(&rate),
            None,
            "the rate and burst may change"
        );
        let keys = one(&TABLE.replace("\"1m\"", "\"2m\""))
            .unwrap()
            .limits
            .remove(0);
        assert_eq!(
            a.unkept_change(&keys).as_deref(),
            Some("table size (203090 to 406179 buckets)")
        );
        let policy = one(&TABLE.replace("shared", "admit"))
            .unwrap()
            .limits
            .remove(0);
        assert_eq!(
            a.unkept_change(&policy).as_deref(),
            Some("table overflow (shared to admit)")
        );
        let bloom = one(&OK.replace("\"kind\":\"window\",", ""))
            .unwrap()
            .limits
            .remove(0);
        assert_eq!(
            bloom.unkept_change(&a).as_deref(),
            Some("store (bloom array to table)")
        );
        let window = one(&TABLE.replace("\"table\"", "\"kind\":\"window\",\"table\""))
            .unwrap()
            .limits
            .remove(0);
        assert_eq!(
            a.unkept_change(&window).as_deref(),
            Some("kind (smooth to window)")
        );
    }

    #[test]
    fn a_route_names_limits_and_may_set_the_status() {
        let r = parse_route(br#"{"apply":[{"limit":"a","dry_run":true}],"status":503}"#).unwrap();
        assert_eq!(
            r.apply,
            Some(vec![RouteApply {
                limit: "a".into(),
                dry_run: true
            }])
        );
        assert_eq!(r.status, Some(503));
        assert_eq!(parse_route(br#"{"apply":[]}"#).unwrap().apply, Some(vec![]));
        assert_eq!(parse_route(b"{}").unwrap().apply, None);
        assert_eq!(
            parse_route(br#"{"status":99}"#).unwrap_err(),
            "status: invalid 99: the status must be 400..599"
        );
    }
}
