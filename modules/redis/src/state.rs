//! How each limit's state is kept in a Redis string.
//!
//! A plain string, not a module data type, so that Redis persists,
//! rewrites, dumps and replicates it with no callbacks of ours: RDB and AOF
//! rewrite store it as any string, `DUMP`/`RESTORE` move it, and the module
//! replicates each new state as `SET key value PXAT t`.
//!
//! Every value starts with four bytes: `w`, `r`, the kind (`B` bucket, `W`
//! sliding window, `P` fixed period, `L` integer limiter) and the format
//! version (1). Fields follow as little-endian 64-bit integers:
//!
//! | kind | fields after the header |
//! |---|---|
//! | `B` | TAT (Unix ns), interval (ns per token), tolerance (ns) |
//! | `W` | window (ns), then per run: stamp (Unix ns), units |
//! | `P` | align (one byte, 0 or 1), then the limiter fields |
//! | `L` | variant (one byte: 0 bucket, 1 fixed window, 2 cooldown), capacity, available, refill amount (0 unless a bucket), period (ns), anchor (Unix ns) |
//!
//! A value of another version, another kind or a wrong length is refused
//! with an error, never misread.

use weir_core::limiter::{Limiter, LimiterKind};

use crate::gcra::MAX_SPAN_NS;
use crate::sliding::{Run, Window};

const VERSION: u8 = 1;

/// The kinds of state, by their header byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    Bucket,
    Window,
    Period,
    Limiter,
}

impl Which {
    fn byte(self) -> u8 {
        match self {
            Which::Bucket => b'B',
            Which::Window => b'W',
            Which::Period => b'P',
            Which::Limiter => b'L',
        }
    }

    fn from_byte(b: u8) -> Option<Which> {
        Some(match b {
            b'B' => Which::Bucket,
            b'W' => Which::Window,
            b'P' => Which::Period,
            b'L' => Which::Limiter,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Which::Bucket => "bucket",
            Which::Window => "window",
            Which::Period => "period",
            Which::Limiter => "limiter",
        }
    }
}

/// Why a stored value could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Not a weir value at all.
    Foreign,
    /// A weir value of another kind.
    OtherKind(Which),
    /// A weir value of another format version.
    Version(u8),
    /// The right header, but fields no limit can hold.
    Corrupt,
}

impl DecodeError {
    /// The error reply for a key holding this, asked as `wanted`.
    pub fn message(&self, wanted: Which) -> String {
        match self {
            DecodeError::Foreign => format!(
                "WRONGTYPE the key holds a string that is not a weir {}",
                wanted.name()
            ),
            DecodeError::OtherKind(held) => format!(
                "WRONGTYPE the key holds a weir {}, not a weir {}",
                held.name(),
                wanted.name()
            ),
            DecodeError::Version(v) => format!(
                "ERR the key holds a weir {} in format version {v}; this module reads version {VERSION}",
                wanted.name()
            ),
            DecodeError::Corrupt => format!("ERR the key holds a corrupt weir {}", wanted.name()),
        }
    }
}

/// Which kind a stored value is, or why it is none.
pub fn kind_of(bytes: &[u8]) -> Result<Which, DecodeError> {
    if bytes.len() < 4 || &bytes[..2] != b"wr" {
        return Err(DecodeError::Foreign);
    }
    let which = Which::from_byte(bytes[2]).ok_or(DecodeError::Foreign)?;
    if bytes[3] != VERSION {
        return Err(DecodeError::Version(bytes[3]));
    }
    Ok(which)
}

/// The fields of a `wanted` value, after its header is checked.
fn body(bytes: &[u8], wanted: Which) -> Result<&[u8], DecodeError> {
    let held = kind_of(bytes)?;
    if held != wanted {
        return Err(DecodeError::OtherKind(held));
    }
    Ok(&bytes[4..])
}

fn header(which: Which, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + capacity);
    out.extend_from_slice(&[b'w', b'r', which.byte(), VERSION]);
    out
}

fn word(bytes: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
    u64::from_le_bytes(w)
}

/// A bucket's stored TAT and the parameters it was last taken with (a
/// refund needs them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BucketState {
    pub tat: i64,
    pub interval: i64,
    pub tolerance: i64,
}

/// The latest instant a stored TAT may name (the year 2116): beyond it a
/// value is corrupt, and sums with it could not be trusted.
const TAT_HORIZON: i64 = i64::MAX / 2;

pub const BUCKET_LEN: usize = 4 + 24;

pub fn encode_bucket(s: &BucketState) -> [u8; BUCKET_LEN] {
    let mut out = [0u8; BUCKET_LEN];
    out[..4].copy_from_slice(&[b'w', b'r', b'B', VERSION]);
    out[4..12].copy_from_slice(&s.tat.to_le_bytes());
    out[12..20].copy_from_slice(&s.interval.to_le_bytes());
    out[20..28].copy_from_slice(&s.tolerance.to_le_bytes());
    out
}

pub fn decode_bucket(bytes: &[u8]) -> Result<BucketState, DecodeError> {
    let b = body(bytes, Which::Bucket)?;
    if b.len() != 24 {
        return Err(DecodeError::Corrupt);
    }
    let s = BucketState {
        tat: word(b, 0) as i64,
        interval: word(b, 1) as i64,
        tolerance: word(b, 2) as i64,
    };
    let sound = (0..=TAT_HORIZON).contains(&s.tat)
        && s.interval >= 1
        && (s.interval..=MAX_SPAN_NS).contains(&s.tolerance);
    sound.then_some(s).ok_or(DecodeError::Corrupt)
}

/// A sliding window's stored length and runs.
pub fn encode_window(window: i64, w: &Window) -> Vec<u8> {
    let mut out = header(Which::Window, 8 + 16 * w.runs.len());
    out.extend_from_slice(&window.to_le_bytes());
    for run in &w.runs {
        out.extend_from_slice(&run.stamp.to_le_bytes());
        out.extend_from_slice(&run.units.to_le_bytes());
    }
    out
}

pub fn decode_window(bytes: &[u8]) -> Result<(i64, Window), DecodeError> {
    let b = body(bytes, Which::Window)?;
    if b.len() < 8 || (b.len() - 8) % 16 != 0 {
        return Err(DecodeError::Corrupt);
    }
    let window = word(b, 0) as i64;
    if !(1..=MAX_SPAN_NS).contains(&window) {
        return Err(DecodeError::Corrupt);
    }
    let mut runs = Vec::with_capacity((b.len() - 8) / 16);
    let mut previous = i64::MIN;
    for i in 0..(b.len() - 8) / 16 {
        let stamp = word(b, 1 + 2 * i) as i64;
        let units = word(b, 2 + 2 * i);
        if units == 0 || stamp < previous || !(0..=TAT_HORIZON).contains(&stamp) {
            return Err(DecodeError::Corrupt);
        }
        previous = stamp;
        runs.push(Run { stamp, units });
    }
    Ok((window, Window { runs }))
}

const LIMITER_LEN: usize = 1 + 5 * 8;

fn push_limiter(out: &mut Vec<u8>, limiter: &Limiter) {
    let (available, kind) = limiter.parts();
    let (variant, amount, period, anchor) = match kind {
        LimiterKind::Bucket {
            refill_amount,
            refill_interval_ns,
            last_refill,
        } => (0u8, refill_amount, refill_interval_ns, last_refill),
        LimiterKind::FixedWindow {
            window_ns,
            window_start,
        } => (1, 0, window_ns, window_start),
        LimiterKind::Cooldown {
            cooldown_ns,
            cooldown_end,
        } => (2, 0, cooldown_ns, cooldown_end),
    };
    out.push(variant);
    for w in [
        limiter.capacity(),
        available,
        amount,
        period as u64,
        anchor as u64,
    ] {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

fn read_limiter(b: &[u8]) -> Result<Limiter, DecodeError> {
    if b.len() != LIMITER_LEN {
        return Err(DecodeError::Corrupt);
    }
    let w = &b[1..];
    let (capacity, available, amount) = (word(w, 0), word(w, 1), word(w, 2));
    let (period, anchor) = (word(w, 3) as i64, word(w, 4) as i64);
    let kind = match b[0] {
        0 => LimiterKind::Bucket {
            refill_amount: amount,
            refill_interval_ns: period,
            last_refill: anchor,
        },
        1 => LimiterKind::FixedWindow {
            window_ns: period,
            window_start: anchor,
        },
        2 => LimiterKind::Cooldown {
            cooldown_ns: period,
            cooldown_end: anchor,
        },
        _ => return Err(DecodeError::Corrupt),
    };
    // The core checks the parts a limiter can hold; spans are also held to
    // what this module accepts, so later sums cannot overflow.
    if period > MAX_SPAN_NS || !(i64::MIN / 2..=TAT_HORIZON).contains(&anchor) {
        return Err(DecodeError::Corrupt);
    }
    Limiter::from_parts(capacity, available, kind).ok_or(DecodeError::Corrupt)
}

pub fn encode_limiter(limiter: &Limiter) -> Vec<u8> {
    let mut out = header(Which::Limiter, LIMITER_LEN);
    push_limiter(&mut out, limiter);
    out
}

pub fn decode_limiter(bytes: &[u8]) -> Result<Limiter, DecodeError> {
    read_limiter(body(bytes, Which::Limiter)?)
}

/// A fixed period: whether it aligns to the clock, and its counter (a core
/// fixed-window limiter).
pub fn encode_period(align: bool, limiter: &Limiter) -> Vec<u8> {
    let mut out = header(Which::Period, 1 + LIMITER_LEN);
    out.push(u8::from(align));
    push_limiter(&mut out, limiter);
    out
}

pub fn decode_period(bytes: &[u8]) -> Result<(bool, Limiter), DecodeError> {
    let b = body(bytes, Which::Period)?;
    if b.is_empty() || b[0] > 1 {
        return Err(DecodeError::Corrupt);
    }
    let limiter = read_limiter(&b[1..])?;
    if !limiter.is_fixed_window() {
        return Err(DecodeError::Corrupt);
    }
    Ok((b[0] == 1, limiter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        let s = BucketState {
            tat: 1_764_000_000_000_000_000,
            interval: 333_333_334,
            tolerance: 3 * 333_333_334,
        };
        assert_eq!(decode_bucket(&encode_bucket(&s)), Ok(s));

        let w = Window {
            runs: vec![Run { stamp: 5, units: 2 }, Run { stamp: 9, units: 1 }],
        };
        assert_eq!(decode_window(&encode_window(100, &w)), Ok((100, w)));

        for l in [
            Limiter::bucket(10, 2, 1_000, 50, 7, 60).unwrap(),
            Limiter::fixed_window(10, 1_000, 50, 3, 60).unwrap(),
            Limiter::cooldown(10, 1_000, 50, 10, 60).unwrap(),
        ] {
            assert_eq!(decode_limiter(&encode_limiter(&l)), Ok(l));
        }
        let p = Limiter::fixed_window(4, 1_000, 0, 4, 0).unwrap();
        assert_eq!(decode_period(&encode_period(true, &p)), Ok((true, p)));
    }

    #[test]
    fn foreign_other_kinds_versions_and_corrupt_values_are_refused() {
        assert_eq!(decode_bucket(b"hello"), Err(DecodeError::Foreign));
        assert_eq!(decode_bucket(b""), Err(DecodeError::Foreign));
        assert_eq!(decode_bucket(b"wrX\x01"), Err(DecodeError::Foreign));
        let l = Limiter::cooldown(10, 1_000, 50, 10, 60).unwrap();
        assert_eq!(
            decode_bucket(&encode_limiter(&l)),
            Err(DecodeError::OtherKind(Which::Limiter))
        );
        let mut v = encode_bucket(&BucketState {
            tat: 1,
            interval: 1,
            tolerance: 1,
        });
        v[3] = 2;
        assert_eq!(decode_bucket(&v), Err(DecodeError::Version(2)));
        v[3] = 1;
        assert_eq!(decode_bucket(&v[..20]), Err(DecodeError::Corrupt));
        v[12..20].copy_from_slice(&0i64.to_le_bytes());
        assert_eq!(decode_bucket(&v), Err(DecodeError::Corrupt));
        let mut v = encode_limiter(&l);
        v[4 + 1 + 8..4 + 1 + 16].copy_from_slice(&11u64.to_le_bytes());
        assert_eq!(decode_limiter(&v), Err(DecodeError::Corrupt));
        assert_eq!(
            decode_period(&encode_period(false, &l)),
            Err(DecodeError::Corrupt)
        );
    }
}
