//! `include/weir.h` is generated from the C crate (`src/`) by cbindgen and committed.
//! This test regenerates it and fails when the committed file is stale.
//! cbindgen writes the declarations in its own order (constants, enums,
//! types, functions); `in_reading_order` moves them into one section per
//! type of [`INDEX`], in the order a reader needs them.
//! Regenerate with: WEIR_BLESS=1 cargo test --test header

use std::collections::BTreeSet;
use std::path::PathBuf;

/// One type of the index: its name, what it is, and its rows (a label and
/// the names in it, each name optionally followed by a note in brackets).
struct Entry {
    name: &'static str,
    what: &'static str,
    rows: &'static [(&'static str, &'static [&'static str])],
}

/// The index at the top of weir.h, in the order a reader needs the types:
/// the statuses every call shares first (every section uses them), then
/// the decisions a server asks on every call, then the by-value
/// helpers, the pool and the keyed limiters, then what every call shares.
/// Hand-ordered; `index_lists_every_function` fails when a function of the
/// header is missing from it or a name in it is not in the header.
const INDEX: &[Entry] = &[
    Entry {
        name: "weir_status",
        what: "what a call that can fail reports (WEIR_OK is 0)",
        rows: &[
            ("reads", &["weir_status_str", "weir_version (WEIR_VERSION)"]),
            ("counts", &["weir_counts (filled by each read_counts)"]),
        ],
    },
    Entry {
        name: "weir_breaker",
        what: "circuit breaker: refuses more calls as failures pile up",
        rows: &[
            (
                "policy",
                &[
                    "weir_breaker_policy (for the breaker)",
                    "weir_breaker_policy_preset",
                ],
            ),
            (
                "make",
                &["weir_breaker_new (copies the policy)", "weir_breaker_free"],
            ),
            (
                "placed",
                &["weir_breaker_footprint", "weir_breaker_init_in"],
            ),
            (
                "shared",
                &[
                    "weir_breaker_shared_footprint",
                    "weir_breaker_init_shared (a weir_region_header first)",
                    "weir_breaker_attach",
                    "weir_breaker_recoveries (fills a weir_recoveries)",
                ],
            ),
            (
                "calls",
                &[
                    "weir_breaker_allow (fills a weir_breaker_ticket)",
                    "weir_breaker_pass",
                    "weir_breaker_fail",
                ],
            ),
            (
                "reads",
                &[
                    "weir_breaker_ratio",
                    "weir_breaker_read_tally (weir_breaker_tally)",
                ],
            ),
            (
                "counts",
                &["weir_breaker_start_counting", "weir_breaker_read_counts"],
            ),
            ("change", &["weir_breaker_reconfigure (copies the policy)"]),
        ],
    },
    Entry {
        name: "weir_shedder",
        what: "load shedder: refuses when the server is both hot and full",
        rows: &[
            (
                "policy",
                &[
                    "weir_shedder_policy (for the shedder)",
                    "weir_shedder_policy_preset",
                ],
            ),
            (
                "make",
                &["weir_shedder_new (copies the policy)", "weir_shedder_free"],
            ),
            (
                "placed",
                &["weir_shedder_footprint", "weir_shedder_init_in"],
            ),
            (
                "shared",
                &[
                    "weir_shedder_shared_footprint",
                    "weir_shedder_init_shared",
                    "weir_shedder_attach",
                    "weir_shedder_recoveries",
                ],
            ),
            (
                "calls",
                &[
                    "weir_shedder_allow (fills a weir_shedder_ticket)",
                    "weir_shedder_allow_class (WEIR_SHEDDER_CRITICAL_PLUS ...)",
                    "weir_shedder_pass",
                    "weir_shedder_fail",
                ],
            ),
            (
                "reads",
                &[
                    "weir_shedder_flying",
                    "weir_shedder_read_stats (weir_shedder_stats)",
                ],
            ),
            (
                "counts",
                &["weir_shedder_start_counting", "weir_shedder_read_counts"],
            ),
            ("change", &["weir_shedder_reconfigure (copies the policy)"]),
        ],
    },
    Entry {
        name: "weir_window",
        what: "rolling window of sums and counts",
        rows: &[
            ("make", &["weir_window_new", "weir_window_free"]),
            ("placed", &["weir_window_footprint", "weir_window_init_in"]),
            (
                "shared",
                &[
                    "weir_window_shared_footprint",
                    "weir_window_init_shared",
                    "weir_window_attach",
                    "weir_window_recoveries",
                ],
            ),
            ("calls", &["weir_window_add"]),
            (
                "reads",
                &[
                    "weir_window_read_total (weir_window_total)",
                    "weir_window_read_buckets",
                    "weir_window_size",
                    "weir_window_width",
                ],
            ),
            (
                "counts",
                &["weir_window_start_counting", "weir_window_read_counts"],
            ),
            ("change", &["weir_window_reconfigure"]),
        ],
    },
    Entry {
        name: "weir_bucket",
        what: "token bucket, lock-free",
        rows: &[
            ("make", &["weir_bucket_new", "weir_bucket_free"]),
            ("placed", &["weir_bucket_footprint", "weir_bucket_init_in"]),
            (
                "shared",
                &[
                    "weir_bucket_shared_footprint",
                    "weir_bucket_init_shared",
                    "weir_bucket_attach",
                ],
            ),
            ("calls", &["weir_bucket_take", "weir_bucket_refund"]),
            (
                "reads",
                &["weir_bucket_next (Retry-After)", "weir_bucket_tokens"],
            ),
            (
                "counts",
                &["weir_bucket_start_counting", "weir_bucket_read_counts"],
            ),
            ("change", &["weir_bucket_reconfigure"]),
        ],
    },
    Entry {
        name: "weir_sliding",
        what: "exact sliding-window quota",
        rows: &[
            ("make", &["weir_sliding_new", "weir_sliding_free"]),
            (
                "placed",
                &["weir_sliding_footprint", "weir_sliding_init_in"],
            ),
            (
                "shared",
                &[
                    "weir_sliding_shared_footprint",
                    "weir_sliding_init_shared",
                    "weir_sliding_attach",
                    "weir_sliding_recoveries",
                ],
            ),
            ("calls", &["weir_sliding_take"]),
            ("reads", &["weir_sliding_left", "weir_sliding_next"]),
            ("change", &["weir_sliding_reconfigure"]),
            (
                "counts",
                &["weir_sliding_start_counting", "weir_sliding_read_counts"],
            ),
        ],
    },
    Entry {
        name: "weir_period",
        what: "fixed-window quota per period",
        rows: &[
            ("make", &["weir_period_new", "weir_period_free"]),
            ("placed", &["weir_period_footprint", "weir_period_init_in"]),
            (
                "shared",
                &[
                    "weir_period_shared_footprint",
                    "weir_period_init_shared",
                    "weir_period_attach",
                    "weir_period_recoveries",
                ],
            ),
            ("calls", &["weir_period_take (weir_period_quota)"]),
            ("reads", &["weir_period_left", "weir_period_next"]),
            ("change", &["weir_period_reconfigure"]),
            (
                "counts",
                &["weir_period_start_counting", "weir_period_read_counts"],
            ),
        ],
    },
    Entry {
        name: "weir_gate",
        what: "concurrency ceiling, lock-free",
        rows: &[
            ("make", &["weir_gate_new", "weir_gate_free"]),
            ("placed", &["weir_gate_footprint", "weir_gate_init_in"]),
            (
                "shared",
                &[
                    "weir_gate_shared_footprint",
                    "weir_gate_init_shared",
                    "weir_gate_attach",
                ],
            ),
            ("calls", &["weir_gate_enter", "weir_gate_leave"]),
            ("reads", &["weir_gate_held"]),
            ("change", &["weir_gate_reconfigure"]),
            (
                "counts",
                &["weir_gate_start_counting", "weir_gate_read_counts"],
            ),
        ],
    },
    Entry {
        name: "weir_concurrency",
        what: "adaptive concurrency limit (Gradient2)",
        rows: &[
            (
                "policy",
                &[
                    "weir_concurrency_policy (for the controller)",
                    "weir_concurrency_policy_preset",
                ],
            ),
            (
                "make",
                &[
                    "weir_concurrency_new (copies the policy)",
                    "weir_concurrency_new_partitioned (weir_concurrency_partition)",
                    "weir_concurrency_free",
                ],
            ),
            (
                "placed",
                &["weir_concurrency_footprint", "weir_concurrency_init_in"],
            ),
            (
                "shared",
                &[
                    "weir_concurrency_shared_footprint",
                    "weir_concurrency_init_shared",
                    "weir_concurrency_attach",
                    "weir_concurrency_recoveries",
                ],
            ),
            (
                "calls",
                &[
                    "weir_concurrency_enter (fills a weir_concurrency_ticket)",
                    "weir_concurrency_leave",
                    "weir_concurrency_enter_partition",
                    "weir_concurrency_leave_partition",
                ],
            ),
            (
                "reads",
                &[
                    "weir_concurrency_limit",
                    "weir_concurrency_flying",
                    "weir_concurrency_long_rtt",
                    "weir_concurrency_partition_flying",
                    "weir_concurrency_partition_room",
                ],
            ),
            (
                "counts",
                &[
                    "weir_concurrency_start_counting",
                    "weir_concurrency_read_counts",
                ],
            ),
            (
                "change",
                &["weir_concurrency_reconfigure (copies the policy)"],
            ),
        ],
    },
    Entry {
        name: "weir_budget",
        what: "retry budget: gRPC tokens or Finagle percent",
        rows: &[
            (
                "policy",
                &[
                    "weir_budget_policy (WEIR_BUDGET_*)",
                    "weir_budget_policy_preset",
                ],
            ),
            ("make", &["weir_budget_new", "weir_budget_free"]),
            ("placed", &["weir_budget_footprint", "weir_budget_init_in"]),
            (
                "shared",
                &[
                    "weir_budget_shared_footprint",
                    "weir_budget_init_shared",
                    "weir_budget_attach",
                    "weir_budget_recoveries",
                ],
            ),
            ("calls", &["weir_budget_deposit", "weir_budget_withdraw"]),
            ("reads", &["weir_budget_left", "weir_budget_tokens"]),
            (
                "counts",
                &["weir_budget_start_counting", "weir_budget_read_counts"],
            ),
            ("change", &["weir_budget_reconfigure (copies the policy)"]),
        ],
    },
    Entry {
        name: "weir_backoff",
        what: "retry policy, by value (WEIR_BACKOFF_JITTER_*)",
        rows: &[
            (
                "policy",
                &[
                    "weir_backoff (its own)",
                    "weir_backoff_preset",
                    "weir_backoff_full_jitter",
                    "weir_backoff_check",
                ],
            ),
            (
                "calls",
                &[
                    "weir_backoff_more",
                    "weir_backoff_delay",
                    "weir_backoff_ceiling",
                    "weir_backoff_schedule",
                ],
            ),
        ],
    },
    Entry {
        name: "weir_deadline",
        what: "time budget, by value",
        rows: &[
            ("make", &["weir_deadline_start"]),
            (
                "reads",
                &["weir_deadline_expired", "weir_deadline_remaining"],
            ),
        ],
    },
    Entry {
        name: "weir_pool",
        what: "resource-pool bookkeeping (items are uintptr_t)",
        rows: &[
            (
                "policy",
                &["weir_pool_policy (for the pool)", "weir_pool_policy_preset"],
            ),
            (
                "make",
                &["weir_pool_new (copies the limits)", "weir_pool_free"],
            ),
            (
                "placed",
                &[
                    "weir_pool_footprint",
                    "weir_pool_init_in",
                    "weir_pool_attach (refuses: never shared)",
                ],
            ),
            (
                "calls",
                &[
                    "weir_pool_take (weir_pool_taken, WEIR_POOL_TAKEN_*)",
                    "weir_pool_made",
                    "weir_pool_made_jittered",
                    "weir_pool_unmade",
                    "weir_pool_give",
                    "weir_pool_drop",
                    "weir_pool_make_ahead",
                    "weir_pool_evict",
                    "weir_pool_mark_old",
                    "weir_pool_close",
                ],
            ),
            (
                "reads",
                &[
                    "weir_pool_live",
                    "weir_pool_idle",
                    "weir_pool_busy",
                    "weir_pool_next_expiry",
                    "weir_pool_read_stats (weir_pool_stats)",
                ],
            ),
            ("change", &["weir_pool_reconfigure (copies the limits)"]),
            (
                "counts",
                &["weir_pool_start_counting", "weir_pool_read_counts"],
            ),
        ],
    },
    Entry {
        name: "weir_rate",
        what: "one-word rate limiter in caller-owned (shared) memory",
        rows: &[
            (
                "policy",
                &[
                    "weir_rate_limit (for the rate word and the bloom)",
                    "weir_rate_limit_new",
                ],
            ),
            ("calls", &["weir_rate_allow"]),
            ("reads", &["weir_rate_next"]),
            (
                "inline (C11)",
                &["weir_rate_allow_inline", "weir_rate_next_inline"],
            ),
            (
                "shared",
                &["weir_words_shareable (may words be shared between programs?)"],
            ),
        ],
    },
    Entry {
        name: "weir_gcra",
        what: "one-word token bucket (GCRA) in caller-owned (shared) memory",
        rows: &[
            ("policy", &["weir_gcra_limit", "weir_gcra_limit_new"]),
            ("calls", &["weir_gcra_allow", "weir_gcra_allow_n"]),
            ("reads", &["weir_gcra_next", "weir_gcra_room"]),
        ],
    },
    Entry {
        name: "weir_bloom",
        what: "rate or GCRA words for millions of keys in fixed memory",
        rows: &[
            (
                "make",
                &[
                    "weir_bloom_new (copies the limit)",
                    "weir_bloom_new_gcra",
                    "weir_bloom_free",
                ],
            ),
            (
                "calls",
                &["weir_bloom_allow (keys are not kept)", "weir_bloom_next"],
            ),
            (
                "change",
                &[
                    "weir_bloom_reconfigure (copies the limit)",
                    "weir_bloom_reconfigure_gcra",
                ],
            ),
            (
                "in place",
                &[
                    "weir_bloom_footprint",
                    "weir_bloom_init_in",
                    "weir_bloom_init_gcra_in",
                    "weir_bloom_check_in",
                    "weir_bloom_allow_in",
                    "weir_bloom_next_in",
                ],
            ),
            (
                "placed",
                &[
                    "weir_bloom_place_footprint",
                    "weir_bloom_place_in (its own words; firmware too)",
                    "weir_bloom_place_gcra_in",
                    "weir_bloom_view_footprint",
                    "weir_bloom_view_in (a handle over a region)",
                ],
            ),
            (
                "counts",
                &["weir_bloom_start_counting", "weir_bloom_read_counts"],
            ),
        ],
    },
    Entry {
        name: "weir_keyed",
        what: "one exact word per key for millions of keys in fixed memory",
        rows: &[
            (
                "make",
                &[
                    "weir_keyed_new (GCRA words; copies the limit)",
                    "weir_keyed_new_rate",
                    "weir_keyed_free",
                ],
            ),
            (
                "calls",
                &[
                    "weir_keyed_allow (keys are not kept)",
                    "weir_keyed_decide (WEIR_KEYED_ALLOWED, ...)",
                    "weir_keyed_next",
                    "weir_keyed_read (weir_keyed_reading)",
                ],
            ),
            (
                "change",
                &[
                    "weir_keyed_reconfigure (any form, shared too; copies the limit)",
                    "weir_keyed_reconfigure_rate",
                ],
            ),
            (
                "sizing",
                &[
                    "weir_keyed_buckets_for",
                    "weir_keyed_overflow_chance",
                    "weir_keyed_lock_free",
                ],
            ),
            (
                "placed",
                &[
                    "weir_keyed_footprint",
                    "weir_keyed_init_in (firmware too)",
                    "weir_keyed_init_rate_in",
                ],
            ),
            (
                "shared",
                &[
                    "weir_keyed_shared_footprint",
                    "weir_keyed_init_shared",
                    "weir_keyed_init_shared_rate",
                    "weir_keyed_attach",
                ],
            ),
        ],
    },
    Entry {
        name: "weir_charge",
        what: "all or nothing over several words, buckets and bloom keys",
        rows: &[(
            "calls",
            &["weir_charge_all (weir_charge_item, WEIR_CHARGE_*, weir_charge_result)"],
        )],
    },
    Entry {
        name: "weir_lease",
        what: "units leased from a fleet limit (WEIR.LEASE), spent locally",
        rows: &[
            (
                "policy",
                &[
                    "weir_lease_policy (for the lease)",
                    "weir_lease_policy_preset",
                ],
            ),
            ("make", &["weir_lease_new", "weir_lease_free"]),
            ("placed", &["weir_lease_footprint", "weir_lease_init_in"]),
            (
                "calls",
                &[
                    "weir_lease_take (weir_lease_answer, WEIR_LEASE_*)",
                    "weir_lease_grant",
                    "weir_lease_release",
                ],
            ),
            (
                "reads",
                &[
                    "weir_lease_unspent",
                    "weir_lease_expires",
                    "weir_lease_cap",
                    "weir_lease_read_stats (weir_lease_stats)",
                ],
            ),
            ("change", &["weir_lease_reconfigure"]),
            (
                "counts",
                &["weir_lease_start_counting", "weir_lease_read_counts"],
            ),
        ],
    },
    Entry {
        name: "weir_limiter",
        what: "embeddable integer quota, by value",
        rows: &[
            (
                "make",
                &[
                    "weir_limiter_bucket",
                    "weir_limiter_fixed_window",
                    "weir_limiter_cooldown",
                ],
            ),
            (
                "calls",
                &[
                    "weir_limiter_try_consume",
                    "weir_limiter_consume",
                    "weir_limiter_refund",
                ],
            ),
            (
                "reads",
                &[
                    "weir_limiter_available",
                    "weir_limiter_capacity",
                    "weir_limiter_is_bucket",
                    "weir_limiter_is_fixed_window",
                    "weir_limiter_is_cooldown",
                ],
            ),
            (
                "snapshot",
                &[
                    "weir_limiter_refill_amount",
                    "weir_limiter_refill_interval_ns",
                    "weir_limiter_last_refill",
                    "weir_limiter_window_ns",
                    "weir_limiter_window_start",
                    "weir_limiter_cooldown_ns",
                    "weir_limiter_cooldown_end",
                ],
            ),
        ],
    },
    Entry {
        name: "firmware",
        what: "defined by the SDK, not by weir (sdk-critical-section)",
        rows: &[("SDK", &["weir_critical_enter", "weir_critical_exit"])],
    },
];

/// The index, as the end of the header's first comment (Doxygen's main
/// page, which cbindgen.toml's `header` opens), wrapped to 79 columns. Its
/// entries are a fenced block: Doxygen keeps their layout and, reading
/// them as C, links every name to its reference (so no entry may hold an
/// apostrophe, which would open a character literal there).
fn index_comment() -> String {
    let mut out = String::from(
        " *\n * Index: every type, whose policy it takes, how it is made and its calls.\n \
         * Constructors copy the policy or limit they are given: the caller may\n \
         * change or free it after the call. Keys given to `weir_bloom_*` are hashed\n \
         * during the call and not kept.\n *\n * ```",
    );
    for (at, entry) in INDEX.iter().enumerate() {
        if at > 0 {
            out += "\n *";
        }
        out += &format!(
            "\n * {} — {}\n *   section  line 0000\n",
            entry.name, entry.what
        );
        assert!(
            entry.name.len() + entry.what.len() < 72,
            "index line too long: {}",
            entry.what
        );
        let texts = entry
            .rows
            .iter()
            .flat_map(|(_, names)| names.iter())
            .chain([&entry.what]);
        for text in texts {
            assert!(
                !text.contains('\''),
                "an apostrophe in the index would open a C character literal in Doxygen's reading: {text}"
            );
        }
        for (at, (label, names)) in entry.rows.iter().enumerate() {
            if at > 0 {
                out += "\n";
            }
            // At least one space after the label, however long.
            let lead = format!(" *   {label:<8} ");
            let mut line = lead.clone();
            for (i, name) in names.iter().enumerate() {
                let item = if i + 1 < names.len() {
                    format!("{name},")
                } else {
                    name.to_string()
                };
                if line.len() > lead.len() && line.len() + 1 + item.len() > 79 {
                    out += line.trim_end();
                    out += "\n";
                    line = format!(" *{:<12}", "");
                }
                if line.len() > lead.len() && !line.ends_with(' ') {
                    line.push(' ');
                }
                line += &item;
            }
            out += line.trim_end();
        }
    }
    out + "\n * ```\n */"
}

/// The names of the functions a header declares: `type name(` at the start
/// of a line (with `extern` for the two the firmware SDK defines).
fn declared_functions(header: &str) -> BTreeSet<String> {
    header
        .lines()
        .filter(|line| {
            line.starts_with(|c: char| c.is_ascii_lowercase()) && !line.starts_with("typedef")
        })
        .filter_map(|line| {
            let open = line.find('(')?;
            let name = line[..open].rsplit([' ', '*']).next()?;
            // The firmware stubs that make a hosted-only call a compile
            // error are not functions of the library, nor are the inline
            // fast paths' private helpers (named with a trailing `_`).
            (name.starts_with("weir_")
                && !name.starts_with("weir_hosted_only_")
                && !name.ends_with('_'))
            .then(|| name.to_owned())
        })
        .collect()
}

/// The header as cbindgen makes it from the current source.
fn generate() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("read cbindgen.toml");
    // cbindgen.toml's header opens the first comment (the file's and the
    // main page's: the conventions); the index ends it.
    let conventions = config.header.take().unwrap_or_default();
    let open = conventions
        .strip_suffix("\n */")
        .expect("cbindgen.toml's header ends with its comment's close");
    config.header = Some(format!("{open}\n{}", index_comment()));
    let version = format!(
        "\n/// This header's version, \"MAJOR.MINOR.PATCH\"; `weir_version()` answers\n\
         /// the linked library's.\n\
         #define WEIR_VERSION \"{}\"\n\
         /// This header's major version: a number, for `#if`.\n\
         #define WEIR_VERSION_MAJOR {}\n\
         /// This header's minor version.\n\
         #define WEIR_VERSION_MINOR {}\n\
         /// This header's patch version.\n\
         #define WEIR_VERSION_PATCH {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
    );
    // cbindgen.toml's own after_includes (the hosted/firmware switch, the
    // WEIR_ALIGN macro) follow the version block; with_after_include would
    // replace them, so the version joins them.
    let after = format!(
        "{version}{}",
        config.after_includes.clone().unwrap_or_default()
    );
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/lib.rs"))
        .with_after_include(after)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    with_inline_fast_paths(with_hosted_only_block(in_reading_order(
        String::from_utf8(out).unwrap(),
    )))
}

/// The opening and closing of cbindgen's `extern "C"` block.
const EXTERN_OPEN: &str = "#ifdef __cplusplus\nextern \"C\" {\n#endif // __cplusplus\n";
const EXTERN_CLOSE: &str = "#ifdef __cplusplus\n}  // extern \"C\"\n#endif  // __cplusplus\n";

/// What a chunk of cbindgen's output declares: its name, and whether it is
/// a function (which must sit inside `extern "C"`).
fn declared_name(chunk: &str) -> Option<(String, bool)> {
    for line in chunk.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let name = match words.as_slice() {
            ["#define", name, ..] => name.split('(').next().unwrap(),
            ["typedef", "struct", name, name2] if name2.ends_with(';') => {
                let _ = name;
                name2.trim_end_matches(';')
            }
            ["typedef", ..] => continue,
            ["}", name] if name.ends_with(';') => name.trim_end_matches(';'),
            ["enum", name, ..] => name,
            _ if !line.starts_with([' ', '/', '#', '}']) && line.contains('(') => {
                let open = line.find('(').unwrap();
                let name = line[..open].rsplit([' ', '*']).next().unwrap();
                return Some((name.to_owned(), true));
            }
            _ => continue,
        };
        return Some((name.to_owned(), false));
    }
    None
}

/// The INDEX entry a declared name belongs to: the entry that lists it, else
/// the longest entry name that prefixes it (`WEIR_POOL_MAX_SIZE` and
/// `weir_pool_taken` belong to `weir_pool`); the first entry (the statuses
/// and what every call shares) when none does.
fn section_of(name: &str) -> usize {
    let bare = |item: &str| item.split_whitespace().next().unwrap().to_owned();
    if let Some(at) = INDEX.iter().position(|e| {
        e.rows
            .iter()
            .any(|(_, names)| names.iter().any(|item| bare(item) == name))
    }) {
        return at;
    }
    let lower = name.to_ascii_lowercase();
    INDEX
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.name.starts_with("weir_")
                && (lower == e.name || lower.starts_with(&format!("{}_", e.name)))
        })
        .max_by_key(|(_, e)| e.name.len())
        .map_or(0, |(at, _)| at)
}

/// The place of a function among its section's: its position in the
/// section's rows (the order a user calls them in).
fn call_order(section: usize, name: &str) -> usize {
    INDEX[section]
        .rows
        .iter()
        .flat_map(|(_, names)| names.iter())
        .position(|item| item.split_whitespace().next() == Some(name))
        .unwrap_or(usize::MAX)
}

/// The statuses of `enum weir_status` that belong to one section (by their
/// name: `WEIR_ERR_BREAKER_*` to the breaker's), as a paragraph of its
/// banner that lists each with its number (Doxygen's `\details`: the
/// group's title is its brief). The enum itself stays whole in
/// the first section: one C++ type for every status, so that comparing any
/// of them with a returned `weir_status` is a comparison within one enum.
fn statuses_comment(enum_chunk: &str, section: usize) -> Option<String> {
    let name = INDEX[section].name;
    if !name.starts_with("weir_") {
        return None;
    }
    let own = format!("WEIR_ERR_{}_", name["weir_".len()..].to_ascii_uppercase());
    let items: Vec<String> = enum_chunk
        .lines()
        .filter_map(|line| {
            let (status, number) = line.trim().trim_end_matches(',').split_once(" = ")?;
            status
                .starts_with(&own)
                .then(|| format!("{status} ({number})"))
        })
        .collect();
    if items.is_empty() {
        return None;
    }
    let mut out = String::from(
        " * \\details Its own statuses, besides the general ones (in\n * `enum weir_status`, the first section):",
    );
    let mut line = String::from(" *  ");
    for (i, item) in items.iter().enumerate() {
        let item = if i + 1 < items.len() {
            format!("{item},")
        } else {
            format!("{item}.")
        };
        if line.len() + 1 + item.len() > 79 {
            out += "\n";
            out += &line;
            line = String::from(" *  ");
        }
        line += " ";
        line += &item;
    }
    out += "\n";
    out += &line;
    Some(out)
}

/// One section's chunks: its types (each with its rank: handle, constants,
/// policy, the rest) and its functions (each with its place in the INDEX
/// row).
type Section = (Vec<(u8, String)>, Vec<(usize, String)>);

/// The Doxygen group of an INDEX entry's section: its name without `weir_`
/// (`breaker`, `rate`, ...). src/rate_inline.h adds to the group `rate`.
fn group_name(entry: &Entry) -> &'static str {
    entry.name.strip_prefix("weir_").unwrap_or(entry.name)
}

/// A section's banner: a rule, then the comment that makes the section a
/// Doxygen group (`\defgroup`, titled as in the index) and opens it (`@{`;
/// the section's end closes it), with the section's own statuses.
fn banner(entry: &Entry, statuses: Option<String>) -> String {
    let mut out = format!(
        "/* {} */\n/** \\defgroup {} {} — {}",
        "=".repeat(72),
        group_name(entry),
        entry.name,
        entry.what
    );
    if let Some(statuses) = statuses {
        out += "\n *\n";
        out += &statuses;
    }
    if !entry.name.starts_with("weir_") {
        // The firmware hooks: declared only in the firmware build's header.
        let names: Vec<&str> = entry
            .rows
            .iter()
            .flat_map(|(_, names)| names.iter().copied())
            .collect();
        out += &format!(
            "\n *\n * Declared only where WEIR_HOSTED is not (the firmware build):\n * {}.",
            names.join(", ")
        );
    }
    out + "\n * @{ */\n\n"
}

/// A C enum's chunk with a doc comment on the typedef that cbindgen writes
/// after the enum for C (`typedef enum x x;` from C23, `typedef int32_t x;`
/// before), which has none of its own. The declarations stay cbindgen's.
fn with_typedef_doc(chunk: String, name: &str) -> String {
    let typedefs = "\n#ifndef __cplusplus\n#if __STDC_VERSION__ >= 202311L\n";
    let Some(at) = chunk.find(typedefs) else {
        return chunk;
    };
    let doc = format!(
        "\n/// The C type of `enum {name}` values: the enum itself from C23\n\
         /// on (fixed to int32_t there), int32_t before, where an enum's size is\n\
         /// the compiler's choice. C++ uses the enum (fixed to int32_t)."
    );
    let mut chunk = chunk;
    chunk.insert_str(at, &doc);
    chunk
}

/// cbindgen's output in reading order: after the prelude (the conventions,
/// the index, the version and the macros), one section per INDEX entry,
/// each with its banner (with its own statuses), then its handle type,
/// constants, policy, other types, and its functions in the order a user
/// calls them (inside an `extern "C"` block of its own). Declarations are
/// cbindgen's own text, moved, never rewritten (the C typedef of an enum
/// gets a doc comment: `with_typedef_doc`). Each section is a Doxygen
/// group, closed after its last declaration. The index's `line 0000`
/// placeholders then get the line of each section's group.
fn in_reading_order(header: String) -> String {
    let items_start = header
        .find("\n\n\n")
        .map(|at| at + 3)
        .expect("cbindgen leaves two blank lines before the first item");
    let open = header.find(EXTERN_OPEN).expect("extern \"C\" opens");
    let close = header.rfind(EXTERN_CLOSE).expect("extern \"C\" closes");
    let (prelude, types, functions, tail) = (
        &header[..items_start],
        &header[items_start..open],
        &header[open + EXTERN_OPEN.len()..close],
        &header[close + EXTERN_CLOSE.len()..],
    );
    let chunks = |text: &str| -> Vec<String> {
        text.split("\n\n")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let mut sections: Vec<Section> = INDEX.iter().map(|_| (Vec::new(), Vec::new())).collect();
    let mut status_enum = String::new();
    for chunk in chunks(types) {
        let (name, _) = declared_name(&chunk).unwrap_or_else(|| panic!("no name in {chunk}"));
        let section = section_of(&name);
        if name == "weir_status" {
            status_enum = chunk.clone();
        }
        let chunk = with_typedef_doc(chunk, &name);
        let entry = INDEX[section].name;
        // The handle first, then constants, the policy, then the rest.
        let rank = if name == entry {
            0
        } else if name.starts_with("WEIR_") {
            1
        } else if name.ends_with("_policy") {
            2
        } else {
            3
        };
        sections[section].0.push((rank, chunk));
    }
    for chunk in chunks(functions) {
        let (name, _) = declared_name(&chunk).unwrap_or_else(|| panic!("no name in {chunk}"));
        let section = section_of(&name);
        sections[section]
            .1
            .push((call_order(section, &name), chunk));
    }
    let mut out = String::from(prelude);
    for (at, (mut types, mut functions)) in sections.into_iter().enumerate() {
        if types.is_empty() && functions.is_empty() {
            continue;
        }
        types.sort_by_key(|(rank, _)| *rank);
        functions.sort_by_key(|(order, _)| *order);
        out += &banner(&INDEX[at], statuses_comment(&status_enum, at));
        for (_, chunk) in &types {
            out += chunk;
            out += "\n\n";
        }
        if !functions.is_empty() {
            out += EXTERN_OPEN;
            out += "\n";
            for (_, chunk) in &functions {
                out += chunk;
                out += "\n\n";
            }
            out += EXTERN_CLOSE;
            out += "\n";
        }
        out += "/** @} */\n\n";
    }
    out += tail.trim_start_matches('\n');
    // Each index entry's `line 0000` becomes the line of its group.
    for entry in INDEX {
        let title = format!("\n * {} — {}\n", entry.name, entry.what);
        let group = format!(
            "\n/** \\defgroup {} {} — {}\n",
            group_name(entry),
            entry.name,
            entry.what
        );
        // Every entry has its section (an entry without declarations would
        // leave its index line pointing nowhere). The hosted-only block is
        // inserted later, into the last section, so no line above moves.
        let line = out
            .find(&group)
            .map(|at| out[..at].lines().count() + 1)
            .unwrap_or_else(|| panic!("{}: no section for this index entry", entry.name));
        let in_index = out.find(&title).expect("the index lists every entry");
        let at = in_index + out[in_index..].find("line 0000").expect("a placeholder");
        out.replace_range(at..at + "line 0000".len(), &format!("line {line:04}"));
    }
    out
}

/// The header with the rate word's `static inline` fast path
/// (src/rate_inline.h) at its end, inside the include guard and outside
/// `extern "C"`: after every declaration it uses.
fn with_inline_fast_paths(header: String) -> String {
    let close = "#endif  /* WEIR_H */";
    let at = header
        .rfind(close)
        .expect("the header closes its include guard");
    let mut header = header;
    header.insert_str(at, &format!("{}\n", include_str!("../src/rate_inline.h")));
    header
}

/// The functions declared under `#if defined(WEIR_HOSTED)`: what the
/// firmware build lacks.
fn hosted_only_functions(header: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut hosted = false;
    for line in header.lines() {
        match line {
            "#if defined(WEIR_HOSTED)" => hosted = true,
            "#endif" => hosted = false,
            _ if hosted && !line.starts_with([' ', '/', '#']) => {
                if let Some(open) = line.find('(') {
                    let name = line[..open].rsplit([' ', '*']).next().unwrap();
                    // Only functions: `typedef struct WEIR_ALIGN(8) {`
                    // has a parenthesis too.
                    if name.starts_with("weir_") {
                        names.push(name.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    names
}

/// The header with, before its closing `extern "C"` brace, the block that
/// turns a firmware program's call to a host-only function into a compile
/// error naming the reason. Generated here from the header itself, so it
/// follows every function that is added under the `std` feature.
fn with_hosted_only_block(header: String) -> String {
    let mut block = String::from(
        "#if !defined(WEIR_HOSTED)
/*
 * WEIR_FREESTANDING: the firmware build has none of the functions above that
 * sit under `#if defined(WEIR_HOSTED)`. Each such name below expands to a
 * call of a function the compiler refuses with a message that names it (GCC
 * 12+ and clang: `unavailable`; older GCC: `error`). Those are defined
 * nowhere, so any other compiler stops at the link.
 */
#if defined(__has_attribute)
#if __has_attribute(unavailable)
#define WEIR_HOSTED_ONLY_(name) __attribute__((unavailable(WEIR_HOSTED_ONLY_MESSAGE_(name))))
#elif __has_attribute(error)
#define WEIR_HOSTED_ONLY_(name) __attribute__((error(WEIR_HOSTED_ONLY_MESSAGE_(name))))
#endif
#endif
#ifndef WEIR_HOSTED_ONLY_
#define WEIR_HOSTED_ONLY_(name)
#endif
#define WEIR_HOSTED_ONLY_MESSAGE_(name) \\
  #name \" needs the hosted weir library: the firmware build \" \\
  \"(WEIR_FREESTANDING) has no heap: there a handle is placed \" \\
  \"(weir_<type>_init_in, weir_bloom_place_in), and bloom regions \" \\
  \"and the charge are hosted-only; see docs/firmware.md\"
",
    );
    for name in hosted_only_functions(&header) {
        block.push_str(&format!(
            "int weir_hosted_only_{name}(void) WEIR_HOSTED_ONLY_({name});\n\
             #define {name}(...) weir_hosted_only_{name}()\n"
        ));
    }
    block.push_str("#endif  // !defined(WEIR_HOSTED)\n\n");
    let close = "#ifdef __cplusplus\n}  // extern \"C\"";
    let at = header.rfind(close).expect("the header closes extern \"C\"");
    let mut header = header;
    header.insert_str(at, &block);
    header
}

#[test]
fn header_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include/weir.h");
    let fresh = generate();
    if std::env::var_os("WEIR_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/weir.h is stale; regenerate it with: WEIR_BLESS=1 cargo test --test header"
    );
}

#[test]
fn every_exported_name_carries_the_prefix() {
    let header = generate();
    for line in header.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let name = match words.as_slice() {
            ["#define", name, ..] => *name,
            ["typedef", "struct", name, ..] if *name != "{" => *name,
            // The closing line of `typedef struct { ... } name;`.
            ["}", name] if name.ends_with(';') => name.trim_end_matches(';'),
            ["enum", name, ..] | ["struct", name, ..] => *name,
            _ => match line.find('(') {
                // A function declaration at the start of a line.
                Some(open) if !line.starts_with([' ', '/', '#']) && line.ends_with(");") => {
                    line[..open].rsplit([' ', '*']).next().unwrap()
                }
                _ => continue,
            },
        };
        assert!(
            name.starts_with("weir_") || name.starts_with("WEIR_"),
            "exported name without the weir_/WEIR_ prefix: {line}"
        );
    }
}

#[test]
fn index_lists_every_function() {
    let header = generate();
    let declared = declared_functions(&header);
    assert!(declared.len() > 50, "found only {declared:?}");
    let mut listed = BTreeSet::new();
    let mut unknown = Vec::new();
    for entry in INDEX {
        for (_, names) in entry.rows {
            for item in *names {
                let name = item.split_whitespace().next().unwrap();
                let known = declared.contains(name)
                    || header.contains(&format!("}} {name};"))
                    || header.contains(&format!("typedef struct {name} {name};"))
                    || header.contains(&format!("enum {name}"));
                if !known {
                    unknown.push(name);
                }
                if declared.contains(name) && !listed.insert(name.to_owned()) {
                    unknown.push(name);
                }
            }
        }
    }
    let missing: Vec<&String> = declared.difference(&listed).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "weir.h's index (INDEX in tests/header.rs) is out of step with the header:\n  \
         functions missing from it: {missing:?}\n  names in it that the header lacks, or listed twice: {unknown:?}"
    );
}

/// One version for the whole release: the crates (the workspace's
/// version), the header's block (generated from it) and CMake's project
/// version (read from Cargo.toml) must agree, and the root crate must depend
/// on the weir-core of the same version.
#[test]
fn every_version_agrees() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let version = env!("CARGO_PKG_VERSION");
    let cmake = std::fs::read_to_string(root.join("CMakeLists.txt")).unwrap();
    assert!(
        cmake.contains("project(weir VERSION ${weir_version} ")
            && cmake.contains(
                "file(STRINGS \"${CMAKE_CURRENT_LIST_DIR}/Cargo.toml\" weir_version_line"
            ),
        "CMakeLists.txt no longer takes its project VERSION from Cargo.toml"
    );
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let dependency = manifest
        .lines()
        .find(|line| line.starts_with("weir-core = {"))
        .expect("Cargo.toml depends on weir-core");
    assert!(
        dependency.contains(&format!("version = \"{version}\"")),
        "Cargo.toml's weir-core dependency is not version {version}: {dependency}"
    );
    let header = std::fs::read_to_string(root.join("include/weir.h")).unwrap();
    assert!(header.contains(&format!("#define WEIR_VERSION \"{version}\"")));
}
