//! The limits: one bloom array of words per named limit, shared by every
//! worker through the filter config, kept across config updates in a
//! process-wide registry (an update may change a limit's rate and burst:
//! the words stay, each config judging them by its own limit), and the
//! decision over several limits at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use weir_core::bloom::{Bloom, BloomShape};

use crate::config::{Config, LimitSpec};

/// A limit's words, and the spec they were first laid with (the name, the
/// kind, the size, the hashes and a smooth limit's tick are theirs for as
/// long as they live; the rate and burst are each config's).
#[derive(Debug)]
pub struct Words {
    pub spec: LimitSpec,
    pub bloom: Bloom,
}

/// A limit in a live config: its spec as this config wrote it (the key,
/// the headers, the rate and the burst may differ from the words' first
/// spec; the kind, size, hashes and tick may not), and the words' shape
/// with this config's limit, which judges them.
#[derive(Debug)]
pub struct Limit {
    pub spec: LimitSpec,
    pub words: Arc<Words>,
    pub shape: BloomShape,
}

/// The limits of every live config, by name: a config built while another
/// holds a limit of the same name takes its words, so an update (or a
/// second listener) keeps the state. Entries die with the last config that
/// holds them.
fn registry() -> &'static Mutex<HashMap<String, Weak<Words>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<String, Weak<Words>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A 128-bit SipHash key from the OS, so that nobody can aim two keys at
/// the same words.
fn seed() -> Result<(u64, u64), String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| format!("reading /dev/urandom for a SipHash key: {e}"))?;
    let (a, c) = b.split_at(8);
    Ok((
        u64::from_le_bytes(a.try_into().expect("8 bytes")),
        u64::from_le_bytes(c.try_into().expect("8 bytes")),
    ))
}

/// The words for each of `config`'s limits: a live limit of the same name
/// and shape is shared (judged by this config's rate and burst, which may
/// differ), a new name gets fresh words. A changed kind, size, hashes or
/// tick refuses the whole config, naming the limit and the field, and
/// changes nothing.
pub fn attach(config: &Config) -> Result<Vec<Limit>, String> {
    let mut reg = registry().lock().unwrap_or_else(|e| e.into_inner());
    reg.retain(|_, w| w.strong_count() > 0);
    // Check every limit before laying any words.
    for spec in &config.limits {
        if let Some(words) = reg.get(&spec.name).and_then(Weak::upgrade) {
            if let Some(change) = words.spec.unkept_change(spec) {
                return Err(format!(
                    "limit \"{}\": an update cannot change a limit's {change}; \
                     rename the limit or restart Envoy",
                    spec.name,
                ));
            }
        }
    }
    let mut out = Vec::with_capacity(config.limits.len());
    for spec in &config.limits {
        let words = match reg.get(&spec.name).and_then(Weak::upgrade) {
            Some(words) => words,
            None => {
                let (s0, s1) = seed()?;
                let shape = BloomShape::new(spec.size_log2, spec.hashes, spec.limit, s0, s1)
                    .map_err(|e| format!("limit \"{}\": {e:?}", spec.name))?;
                let bloom =
                    Bloom::new(shape).map_err(|e| format!("limit \"{}\": {e:?}", spec.name))?;
                let words = Arc::new(Words {
                    spec: spec.clone(),
                    bloom,
                });
                reg.insert(spec.name.clone(), Arc::downgrade(&words));
                words
            }
        };
        // Checked above: the same kind and tick.
        let shape =
            words.bloom.shape().with_limit(spec.limit).ok_or_else(|| {
                format!("limit \"{}\": its words cannot take this limit", spec.name)
            })?;
        out.push(Limit {
            spec: spec.clone(),
            words,
            shape,
        });
    }
    Ok(out)
}

/// Nanoseconds on the monotonic clock since the module first asked: the
/// `now` every worker passes, so all read one clock.
pub fn now() -> i64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    i64::try_from(epoch.elapsed().as_nanos()).unwrap_or(i64::MAX)
}

/// Charges `key` at `now` by this config's limit: 0 when admitted, else
/// the wait in ns (at least 1) until it would be.
pub fn charge(limit: &Limit, key: &[u8], now: i64) -> i64 {
    let lines = limit.words.bloom.lines();
    if limit.shape.allow(lines, now, key) {
        return 0;
    }
    limit.shape.next(lines, now, key).max(1)
}

/// The wait until `key` would be admitted at `now`, reading only: 0 when
/// it would be now.
pub fn peek(limit: &Limit, key: &[u8], now: i64) -> i64 {
    limit.shape.next(limit.words.bloom.lines(), now, key)
}

/// One limit a request is held to, with its key (empty: not limited).
pub struct Held<'a> {
    pub limit: &'a Limit,
    pub dry_run: bool,
    pub key: &'a [u8],
}

/// What the limits decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Admitted; the callback was told of each dry-run limit that would
    /// have refused.
    Admit,
    /// Refused by `held[index]`, free again in `wait` ns.
    Refuse { index: usize, wait: i64 },
}

/// Every limit applies, all or nothing, as the nginx module's do (and
/// limit_req's): the enforced limits are read first (the last one charged
/// at once, since nothing after it can refuse), and only when every one
/// would admit are the others charged. A refusal charges none of them. Two
/// workers can both read room for one request between the read and the
/// charge and both be admitted (limit_req's lookup and account have the
/// same gap). Dry-run limits are charged after, when the request is
/// admitted; `dry_refusal(i)` is called for each that would have refused.
pub fn judge(held: &[Held], now: i64, mut dry_refusal: impl FnMut(usize)) -> Verdict {
    if let [one] = held {
        // The common case: one limit, one charge.
        if one.key.is_empty() {
            return Verdict::Admit;
        }
        let wait = charge(one.limit, one.key, now);
        if wait == 0 {
            return Verdict::Admit;
        }
        if one.dry_run {
            dry_refusal(0);
            return Verdict::Admit;
        }
        return Verdict::Refuse { index: 0, wait };
    }
    let enforced = |h: &Held| !h.key.is_empty() && !h.dry_run;
    let last = held.iter().rposition(enforced);
    if let Some(last) = last {
        for (i, h) in held[..last].iter().enumerate() {
            if enforced(h) {
                let wait = peek(h.limit, h.key, now);
                if wait > 0 {
                    return Verdict::Refuse { index: i, wait };
                }
            }
        }
        let h = &held[last];
        let wait = charge(h.limit, h.key, now);
        if wait > 0 {
            return Verdict::Refuse { index: last, wait };
        }
        // Admitted: charge the ones read. A charge lost to a race here
        // admits the request all the same.
        for h in &held[..last] {
            if enforced(h) {
                let _ = charge(h.limit, h.key, now);
            }
        }
    }
    for (i, h) in held.iter().enumerate() {
        if h.dry_run && !h.key.is_empty() && charge(h.limit, h.key, now) > 0 {
            dry_refusal(i);
        }
    }
    Verdict::Admit
}

/// `Retry-After`'s seconds for a wait: whole seconds rounded up, at least 1.
pub fn retry_after(wait_ns: i64) -> i64 {
    let retry = if wait_ns == i64::MAX {
        0
    } else {
        (wait_ns + 999_999_999) / 1_000_000_000
    };
    retry.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;

    const S: i64 = 1_000_000_000;

    fn limits(json: &str) -> Vec<Limit> {
        attach(&parse(json.as_bytes()).unwrap()).unwrap()
    }

    fn lim(name: &str, burst: u32) -> String {
        format!(
            r#"{{"name":"{name}","key":[{{"header":"x"}}],"rate":"1r/m","burst":{burst},"kind":"window","size":"32k"}}"#
        )
    }

    #[test]
    fn all_or_nothing_over_two_limits() {
        let ls = limits(&format!(
            r#"{{"limits":[{},{}]}}"#,
            lim("aon_wide", 3),
            lim("aon_tight", 1)
        ));
        let (wide, tight) = (&ls[0], &ls[1]);
        let both = |key: &'static [u8]| {
            [
                Held {
                    limit: wide,
                    dry_run: false,
                    key,
                },
                Held {
                    limit: tight,
                    dry_run: false,
                    key,
                },
            ]
        };
        assert_eq!(judge(&both(b"t1"), S, |_| ()), Verdict::Admit);
        // Refused by the tight one (last): the wide one is not charged.
        assert!(matches!(
            judge(&both(b"t1"), S, |_| ()),
            Verdict::Refuse { index: 1, .. }
        ));
        assert!(matches!(
            judge(&both(b"t1"), S, |_| ()),
            Verdict::Refuse { index: 1, .. }
        ));
        // So the wide one has 2 of its 3 left for t1.
        let wide_only = [Held {
            limit: wide,
            dry_run: false,
            key: b"t1",
        }];
        assert_eq!(judge(&wide_only, S, |_| ()), Verdict::Admit);
        assert_eq!(judge(&wide_only, S, |_| ()), Verdict::Admit);
        assert!(matches!(
            judge(&wide_only, S, |_| ()),
            Verdict::Refuse { index: 0, .. }
        ));
        // Reversed order: the first (read, not charged) refuses.
        let rev = [
            Held {
                limit: tight,
                dry_run: false,
                key: b"t2",
            },
            Held {
                limit: wide,
                dry_run: false,
                key: b"t2",
            },
        ];
        assert_eq!(judge(&rev, S, |_| ()), Verdict::Admit);
        assert!(matches!(
            judge(&rev, S, |_| ()),
            Verdict::Refuse { index: 0, .. }
        ));
    }

    #[test]
    fn dry_runs_admit_and_report() {
        let ls = limits(&format!(r#"{{"limits":[{}]}}"#, lim("dry_one", 1)));
        let held = [Held {
            limit: &ls[0],
            dry_run: true,
            key: b"d",
        }];
        let mut seen = 0;
        for _ in 0..4 {
            assert_eq!(judge(&held, S, |_| seen += 1), Verdict::Admit);
        }
        assert_eq!(seen, 3);
    }

    #[test]
    fn an_empty_key_is_not_limited() {
        let ls = limits(&format!(r#"{{"limits":[{}]}}"#, lim("empty_one", 1)));
        let held = [Held {
            limit: &ls[0],
            dry_run: false,
            key: b"",
        }];
        for _ in 0..5 {
            assert_eq!(judge(&held, S, |_| ()), Verdict::Admit);
        }
    }

    #[test]
    fn a_live_limit_keeps_its_words_and_refuses_a_new_shape() {
        let first = limits(&format!(r#"{{"limits":[{}]}}"#, lim("kept", 2)));
        let again = limits(&format!(r#"{{"limits":[{}]}}"#, lim("kept", 2)));
        assert!(Arc::ptr_eq(&first[0].words, &again[0].words));
        let err = attach(
            &parse(
                format!(
                    r#"{{"limits":[{},{}]}}"#,
                    lim("kept_new", 1),
                    lim("kept", 3).replace("window", "smooth")
                )
                .as_bytes(),
            )
            .unwrap(),
        )
        .unwrap_err();
        assert_eq!(
            err,
            "limit \"kept\": an update cannot change a limit's kind (window to smooth); \
             rename the limit or restart Envoy"
        );
        drop((first, again));
        // Once no config holds it, the name is free for any shape.
        let fresh = limits(&format!(r#"{{"limits":[{}]}}"#, lim("kept", 3)));
        assert_eq!(fresh[0].words.spec.burst, 3);
    }

    #[test]
    fn an_update_that_changes_the_rate_and_burst_keeps_the_words() {
        // 1r/m burst 3, spent by k; then 60r/m burst 4: the window's count
        // (3) stays, one more joins it; the old config still judges by its
        // own limit while it drains.
        let old = limits(&format!(r#"{{"limits":[{}]}}"#, lim("relimit", 3)));
        fn held(l: &Limit) -> [Held<'_>; 1] {
            [Held {
                limit: l,
                dry_run: false,
                key: b"k",
            }]
        }
        for _ in 0..3 {
            assert_eq!(judge(&held(&old[0]), S, |_| ()), Verdict::Admit);
        }
        assert!(matches!(
            judge(&held(&old[0]), S, |_| ()),
            Verdict::Refuse { .. }
        ));
        let new = limits(&format!(
            r#"{{"limits":[{}]}}"#,
            lim("relimit", 4).replace("1r/m", "60r/m")
        ));
        assert!(Arc::ptr_eq(&old[0].words, &new[0].words));
        assert_eq!(judge(&held(&new[0]), S, |_| ()), Verdict::Admit);
        assert!(matches!(
            judge(&held(&old[0]), S, |_| ()),
            Verdict::Refuse { .. }
        ));
        // The new window (4 × 1 s from its start) ends long before the
        // old one (3 min): at S + 4 s the key is fresh under the new limit.
        assert!(matches!(
            judge(&held(&new[0]), S + 4 * S - 1, |_| ()),
            Verdict::Refuse { .. }
        ));
        assert_eq!(judge(&held(&new[0]), S + 4 * S, |_| ()), Verdict::Admit);
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after(1), 1);
        assert_eq!(retry_after(S), 1);
        assert_eq!(retry_after(S + 1), 2);
        assert_eq!(retry_after(i64::MAX), 1);
    }
}
