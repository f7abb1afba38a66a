//! The limits: one bloom array or keyed table of words per named limit,
//! shared by every worker through the filter config, kept across config
//! updates in a process-wide registry (an update may change a limit's rate
//! and burst: the words stay, each config judging them by its own limit),
//! and the decision over several limits at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use weir_core::bloom::{Bloom, BloomShape};
use weir_core::keyed::{Decision, KeyedBucket, KeyedCounters, KeyedShape, BUCKET_BYTES};

use crate::config::{Config, LimitSpec, Store};

/// A limit's words, and the spec they were first laid with (the name, the
/// kind, the store and its size, hashes and overflow policy, and a smooth
/// limit's tick are theirs for as long as they live; the rate and burst
/// are each config's).
#[derive(Debug)]
pub struct Words {
    pub spec: LimitSpec,
    pub store: WordStore,
}

/// Where the words are.
#[derive(Debug)]
pub enum WordStore {
    Bloom(Bloom),
    Table(Table),
}

/// A keyed table's slots and counters, and its SipHash key (each config
/// lays its own shape over them, with its own limit).
#[derive(Debug)]
pub struct Table {
    pub buckets: Vec<KeyedBucket>,
    pub counters: KeyedCounters,
    seed: (u64, u64),
}

/// The words' shape with one config's limit, which judges them.
#[derive(Debug)]
pub enum Shape {
    Bloom(BloomShape),
    Table(KeyedShape),
}

/// A limit in a live config: its spec as this config wrote it (the key,
/// the headers, the rate and the burst may differ from the words' first
/// spec; the kind, store and tick may not), and the words' shape with this
/// config's limit.
#[derive(Debug)]
pub struct Limit {
    pub spec: LimitSpec,
    pub words: Arc<Words>,
    pub shape: Shape,
}

impl Limit {
    /// How many calls overflowed the limit's table (0 for a bloom array),
    /// over every config that shares it.
    pub fn overflows(&self) -> u64 {
        match &self.words.store {
            WordStore::Bloom(_) => 0,
            WordStore::Table(t) => t.counters.overflows(),
        }
    }
}

/// The store a spec asks for, fresh, under a SipHash key from the OS.
fn lay(spec: &LimitSpec) -> Result<WordStore, String> {
    let at = |e: &dyn std::fmt::Debug| format!("limit \"{}\": {e:?}", spec.name);
    let (s0, s1) = seed()?;
    match spec.store {
        Store::Bloom { size_log2, hashes } => {
            let shape =
                BloomShape::new(size_log2, hashes, spec.limit, s0, s1).map_err(|e| at(&e))?;
            Ok(WordStore::Bloom(Bloom::new(shape).map_err(|e| at(&e))?))
        }
        Store::Table { buckets, .. } => {
            let no_memory = || {
                format!(
                    "limit \"{}\": no memory for its table ({} bytes)",
                    spec.name,
                    buckets.saturating_mul(BUCKET_BYTES as u64)
                )
            };
            let n = usize::try_from(buckets).map_err(|_| no_memory())?;
            let mut store = Vec::new();
            store.try_reserve_exact(n).map_err(|_| no_memory())?;
            store.extend((0..n).map(|_| KeyedBucket::fresh()));
            Ok(WordStore::Table(Table {
                buckets: store,
                counters: KeyedCounters::new(),
                seed: (s0, s1),
            }))
        }
    }
}

/// `words` judged by `spec`'s limit (the same kind, store and tick,
/// checked by [`LimitSpec::unkept_change`]).
fn shape(words: &Words, spec: &LimitSpec) -> Result<Shape, String> {
    let refused = || format!("limit \"{}\": its words cannot take this limit", spec.name);
    match (&words.store, words.spec.store) {
        (WordStore::Bloom(bloom), _) => bloom
            .shape()
            .with_limit(spec.limit)
            .map(Shape::Bloom)
            .ok_or_else(refused),
        (WordStore::Table(table), Store::Table { buckets, overflow }) => {
            let (s0, s1) = table.seed;
            KeyedShape::new(buckets, spec.limit, overflow, s0, s1)
                .map(Shape::Table)
                .map_err(|_| refused())
        }
        (WordStore::Table(_), Store::Bloom { .. }) => Err(refused()),
    }
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
/// differ), a new name gets fresh words. A changed kind, store, size,
/// hashes, overflow policy or tick refuses the whole config, naming the
/// limit and the field, and changes nothing.
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
                let words = Arc::new(Words {
                    spec: spec.clone(),
                    store: lay(spec)?,
                });
                reg.insert(spec.name.clone(), Arc::downgrade(&words));
                words
            }
        };
        // Checked above: the same kind, store and tick.
        let shape = shape(&words, spec)?;
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

/// What one charge did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Charged {
    /// 0 when admitted, else the wait in ns (at least 1) until it would
    /// be (1 for a refusal by a table's overflow policy: the wait for room
    /// is not known).
    pub wait: i64,
    /// The key found no room in the limit's table: its overflow policy
    /// answered.
    pub overflowed: bool,
}

/// Charges `key` at `now` by this config's limit.
pub fn charge(limit: &Limit, key: &[u8], now: i64) -> Charged {
    let (allowed, overflowed) = match (&limit.shape, &limit.words.store) {
        (Shape::Bloom(shape), WordStore::Bloom(bloom)) => {
            (shape.allow(bloom.lines(), now, key), false)
        }
        (Shape::Table(shape), WordStore::Table(table)) => {
            match shape.decide(&table.buckets, &table.counters, now, key, 1) {
                Decision::Allowed => (true, false),
                Decision::Refused => (false, false),
                Decision::Overflowed(allowed) => (allowed, true),
            }
        }
        _ => unreachable!("a limit's shape is laid over its own store"),
    };
    let wait = if allowed {
        0
    } else {
        peek(limit, key, now).max(1)
    };
    Charged { wait, overflowed }
}

/// The wait until `key` would be admitted at `now`, reading only: 0 when
/// it would be now (and for a key without a slot in a table, whether or
/// not it would find room).
pub fn peek(limit: &Limit, key: &[u8], now: i64) -> i64 {
    match (&limit.shape, &limit.words.store) {
        (Shape::Bloom(shape), WordStore::Bloom(bloom)) => shape.next(bloom.lines(), now, key),
        (Shape::Table(shape), WordStore::Table(table)) => shape.next(&table.buckets, now, key),
        _ => unreachable!("a limit's shape is laid over its own store"),
    }
}

/// One limit a request is held to, with its key (empty: not limited).
pub struct Held<'a> {
    pub limit: &'a Limit,
    pub dry_run: bool,
    pub key: &'a [u8],
}

/// What [`judge`] tells its caller of one held limit, besides the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    /// A dry-run limit would have refused.
    DryRefusal,
    /// A charge overflowed the limit's table (its policy answered).
    Overflow,
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
/// admitted; `note(i, Note::DryRefusal)` is called for each that would
/// have refused, `note(i, Note::Overflow)` for each charge that overflowed
/// a table. A table's key that would overflow reads as admitting: only the
/// last enforced limit's charge, made at once, can be refused by its
/// overflow policy.
pub fn judge(held: &[Held], now: i64, mut note: impl FnMut(usize, Note)) -> Verdict {
    let charge = |i: usize, h: &Held, note: &mut dyn FnMut(usize, Note)| {
        let c = charge(h.limit, h.key, now);
        if c.overflowed {
            note(i, Note::Overflow);
        }
        c.wait
    };
    if let [one] = held {
        // The common case: one limit, one charge.
        if one.key.is_empty() {
            return Verdict::Admit;
        }
        let wait = charge(0, one, &mut note);
        if wait == 0 {
            return Verdict::Admit;
        }
        if one.dry_run {
            note(0, Note::DryRefusal);
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
        let wait = charge(last, &held[last], &mut note);
        if wait > 0 {
            return Verdict::Refuse { index: last, wait };
        }
        // Admitted: charge the ones read. A charge lost to a race here
        // admits the request all the same.
        for (i, h) in held[..last].iter().enumerate() {
            if enforced(h) {
                let _ = charge(i, h, &mut note);
            }
        }
    }
    for (i, h) in held.iter().enumerate() {
        if h.dry_run && !h.key.is_empty() && charge(i, h, &mut note) > 0 {
            note(i, Note::DryRefusal);
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
        assert_eq!(judge(&both(b"t1"), S, |_, _| ()), Verdict::Admit);
        // Refused by the tight one (last): the wide one is not charged.
        assert!(matches!(
            judge(&both(b"t1"), S, |_, _| ()),
            Verdict::Refuse { index: 1, .. }
        ));
        assert!(matches!(
            judge(&both(b"t1"), S, |_, _| ()),
            Verdict::Refuse { index: 1, .. }
        ));
        // So the wide one has 2 of its 3 left for t1.
        let wide_only = [Held {
            limit: wide,
            dry_run: false,
            key: b"t1",
        }];
        assert_eq!(judge(&wide_only, S, |_, _| ()), Verdict::Admit);
        assert_eq!(judge(&wide_only, S, |_, _| ()), Verdict::Admit);
        assert!(matches!(
            judge(&wide_only, S, |_, _| ()),
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
        assert_eq!(judge(&rev, S, |_, _| ()), Verdict::Admit);
        assert!(matches!(
            judge(&rev, S, |_, _| ()),
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
            assert_eq!(
                judge(&held, S, |_, n| {
                    assert_eq!(n, Note::DryRefusal);
                    seen += 1
                }),
                Verdict::Admit
            );
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
            assert_eq!(judge(&held, S, |_, _| ()), Verdict::Admit);
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
            assert_eq!(judge(&held(&old[0]), S, |_, _| ()), Verdict::Admit);
        }
        assert!(matches!(
            judge(&held(&old[0]), S, |_, _| ()),
            Verdict::Refuse { .. }
        ));
        let new = limits(&format!(
            r#"{{"limits":[{}]}}"#,
            lim("relimit", 4).replace("1r/m", "60r/m")
        ));
        assert!(Arc::ptr_eq(&old[0].words, &new[0].words));
        assert_eq!(judge(&held(&new[0]), S, |_, _| ()), Verdict::Admit);
        assert!(matches!(
            judge(&held(&old[0]), S, |_, _| ()),
            Verdict::Refuse { .. }
        ));
        // The new window (4 × 1 s from its start) ends long before the
        // old one (3 min): at S + 4 s the key is fresh under the new limit.
        assert!(matches!(
            judge(&held(&new[0]), S + 4 * S - 1, |_, _| ()),
            Verdict::Refuse { .. }
        ));
        assert_eq!(judge(&held(&new[0]), S + 4 * S, |_, _| ()), Verdict::Admit);
    }

    /// A table limit of 1r/m: a key's window lasts its burst minutes, so
    /// every key charged stays active through the test.
    fn table(name: &str, burst: u32, table: &str) -> String {
        format!(
            r#"{{"name":"{name}","key":[{{"header":"x"}}],"rate":"1r/m","burst":{burst},"kind":"window","table":{table}}}"#
        )
    }

    fn one_held<'a>(l: &'a Limit, key: &'a [u8]) -> [Held<'a>; 1] {
        [Held {
            limit: l,
            dry_run: false,
            key,
        }]
    }

    #[test]
    fn a_table_gives_every_key_exactly_its_burst() {
        // 1,000 keys in a table laid for 1,000 (256 buckets, the least:
        // 2,048 slots, under half full): none overflows. Every key is
        // admitted its burst of 3 exactly, then refused with the wait
        // until its window ends.
        let ls = limits(&format!(
            r#"{{"limits":[{}]}}"#,
            table("exact_table", 3, r#"{"keys":1000}"#)
        ));
        let l = &ls[0];
        assert!(matches!(l.words.store, WordStore::Table(_)));
        let mut notes = 0;
        for round in 0..4 {
            for k in 0u32..1000 {
                let key = format!("k{k}");
                let v = judge(&one_held(l, key.as_bytes()), S, |_, _| notes += 1);
                if round < 3 {
                    assert_eq!(v, Verdict::Admit, "key {key}, round {round}");
                } else {
                    assert!(
                        matches!(v, Verdict::Refuse { index: 0, wait } if wait > 179 * S && wait <= 180 * S),
                        "key {key}: {v:?}"
                    );
                }
            }
        }
        assert_eq!((notes, l.overflows()), (0, 0));
    }

    #[test]
    fn an_overflowing_table_answers_by_its_policy_and_counts() {
        for policy in ["refuse", "admit", "shared"] {
            let name = format!("overflow_{policy}");
            let ls = limits(&format!(
                r#"{{"limits":[{}]}}"#,
                table(&name, 1, &format!(r#"{{"keys":10,"overflow":"{policy}"}}"#))
            ));
            let l = &ls[0];
            // 256 buckets of 8: 3,000 active keys cannot all find room.
            let (mut admitted, mut overflowed) = (0u64, 0u64);
            let mut held_keys = Vec::new();
            for k in 0u32..3000 {
                let key = format!("o{k}");
                let mut over = false;
                let v = judge(&one_held(l, key.as_bytes()), S, |i, n| {
                    assert_eq!((i, n), (0, Note::Overflow));
                    over = true;
                });
                overflowed += u64::from(over);
                if v == Verdict::Admit {
                    admitted += 1;
                }
                if !over {
                    assert_eq!(v, Verdict::Admit);
                    held_keys.push(key);
                } else if let Verdict::Refuse { wait, .. } = v {
                    assert_eq!(wait, 1, "the wait for room is not known");
                }
            }
            assert!(overflowed > 0 && overflowed < 3000 - 1500, "{overflowed}");
            assert_eq!(l.overflows(), overflowed, "{policy}");
            let expected = match policy {
                "refuse" => 3000 - overflowed,
                "admit" => 3000,
                // One shared window of burst 1.
                _ => 3000 - overflowed + 1,
            };
            assert_eq!(admitted, expected, "{policy}");
            // The keys that found room are still exact: each refused now.
            for key in &held_keys {
                assert!(matches!(
                    judge(&one_held(l, key.as_bytes()), S, |_, _| ()),
                    Verdict::Refuse { .. }
                ));
            }
        }
    }

    #[test]
    fn an_update_keeps_a_table_and_refuses_a_new_size_or_policy() {
        let old = limits(&format!(
            r#"{{"limits":[{}]}}"#,
            table("kept_table", 2, r#"{"keys":100}"#)
        ));
        for _ in 0..2 {
            assert_eq!(
                judge(&one_held(&old[0], b"k"), S, |_, _| ()),
                Verdict::Admit
            );
        }
        // Burst 2 to 3, 1r/m to 60r/m: the table stays, the key's count
        // (2) with it, one more joins it under the new limit.
        let new = limits(&format!(
            r#"{{"limits":[{}]}}"#,
            table("kept_table", 3, r#"{"keys":100}"#).replace("1r/m", "60r/m")
        ));
        assert!(Arc::ptr_eq(&old[0].words, &new[0].words));
        assert_eq!(
            judge(&one_held(&new[0], b"k"), S, |_, _| ()),
            Verdict::Admit
        );
        assert!(matches!(
            judge(&one_held(&new[0], b"k"), S, |_, _| ()),
            Verdict::Refuse { .. }
        ));
        assert!(matches!(
            judge(&one_held(&old[0], b"k"), S, |_, _| ()),
            Verdict::Refuse { .. }
        ));
        for (change, want) in [
            (
                table("kept_table", 3, r#"{"keys":100000}"#),
                "table size (256 to 20309 buckets)",
            ),
            (
                table("kept_table", 3, r#"{"keys":100,"overflow":"admit"}"#),
                "table overflow (refuse to admit)",
            ),
            (lim("kept_table", 3), "store (table to bloom array)"),
        ] {
            let err = attach(&parse(format!(r#"{{"limits":[{change}]}}"#).as_bytes()).unwrap())
                .unwrap_err();
            assert_eq!(
                err,
                format!(
                    "limit \"kept_table\": an update cannot change a limit's {want}; \
                     rename the limit or restart Envoy"
                )
            );
        }
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after(1), 1);
        assert_eq!(retry_after(S), 1);
        assert_eq!(retry_after(S + 1), 2);
        assert_eq!(retry_after(i64::MAX), 1);
    }
}
