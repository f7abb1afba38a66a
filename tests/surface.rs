//! The registry of faces: the one table of every place where weir's C
//! names must appear, and of the names left out of each, with the reason.
//!
//! include/weir.h declares the names, four kinds of them: its functions,
//! its handles (each opaque `typedef struct weir_x weir_x;`), the fields
//! of its structs (`weir_pool_policy.size`) and the statuses of
//! `enum weir_status` (`WEIR_OK`, `WEIR_ERR_*`). A face is a part of weir
//! that must carry them: the C++ header, the Go package, the bay's knobs,
//! the hostile sweep, the fuzz targets. [`FACES`] lists each face once:
//! the files it is read from and, for each kind, a [`Rule`] saying what
//! "appears" means there, or why the face does not carry that kind at all.
//! Every face is read as text, so `cargo test --test surface` needs no Go,
//! no browser and no C++ compiler. It fails with one line per gap, naming
//! the face, the name and what was looked for:
//!
//! ```text
//! Go package: function weir_pool_take: not called as `C.weir_pool_take(`
//! ```
//!
//! An opt-out, with its reason, is the only way to leave a name out of a
//! face that checks its kind: a row of [`OPT_OUTS`] (face, name or
//! pattern, reason), or, for the C++ header, a line of weir.hpp's own
//! `Not wrapped` comment block (see [`own_opt_outs`]). An opt-out that has
//! gone stale fails the test too: one covering a name the face now has
//! (remove it), or one that matches nothing weir.h declares (the name went
//! away or was misspelt).
//!
//! To add a face, add one entry to [`FACES`]: its name, its files, and a
//! rule per kind, built from the finders below (or a new finder: a
//! `fn(&Code, &Item) -> Result<(), String>` whose error says what it
//! looked for). The header's names then reach it, and every one it lacks
//! fails here until the face has it or [`OPT_OUTS`] says why not.
//!
//! To add an opt-out, add a row to [`OPT_OUTS`] naming the face (or
//! [`EVERY_FACE`]), the name — exactly, or a pattern with one `*` such as
//! `weir_hosted_only_*` or `*_inline` — and the reason, in a sentence a
//! reader can check.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

// ---------------------------------------------------------------------------
// The table.

/// Every face, and for each kind of name what it must carry.
const FACES: &[Face] = &[
    Face {
        name: "C++ header",
        files: &["include/weir.hpp"],
        own_opt_outs: Some("include/weir.hpp"),
        functions: Rule::Every(named),
        handles: Rule::Every(named_or_made),
        fields: Rule::Policies(set_by_cpp),
        statuses: Rule::Every(cpp_error_code),
    },
    Face {
        name: "Go package",
        files: &["go/*.go", "!go/*_test.go", "!go/genstatus.go"],
        own_opt_outs: None,
        functions: Rule::Every(called_from_go),
        handles: Rule::Every(named_or_made),
        fields: Rule::Policies(named_by_go_literal),
        statuses: Rule::Every(go_status),
    },
    Face {
        name: "bay knobs",
        files: &["bay/src/scenarios.rs"],
        own_opt_outs: None,
        functions: Rule::Not(BAY),
        handles: Rule::Not(BAY),
        fields: Rule::Policies(bay_knob),
        statuses: Rule::Not(BAY),
    },
    Face {
        name: "hostile sweep",
        files: &["tests/hostile.rs"],
        own_opt_outs: None,
        functions: Rule::Every(called),
        handles: Rule::Every(named_or_made),
        fields: Rule::Not(SWEEPS),
        statuses: Rule::Not(SWEEPS),
    },
    Face {
        name: "fuzz targets",
        files: &["fuzz/fuzz_targets/*.rs"],
        own_opt_outs: None,
        functions: Rule::Every(called),
        handles: Rule::Every(named_or_made),
        fields: Rule::Not(SWEEPS),
        statuses: Rule::Not(SWEEPS),
    },
];

const BAY: &str = "the bay runs weir-core, not the C library: its C face is \
    \"Copy as C\", which writes policies, so it carries the policies' fields \
    and nothing else";

const SWEEPS: &str = "a sweep guards calls: it calls every function and checks \
    invariants that hold whatever a call answers, not a status or a field by \
    name (the types' own tests do that)";

const PLACED_IN_GO: &str = "a placed handle keeps its slots' address, so C would keep \
    a pointer into the memory it was laid in after the call returns, which cgo's \
    pointer rules forbid for Go memory; Go programs use the heap handles, which \
    live in C's memory and which a finalizer frees";

/// An opt-out's face that stands for every face checking the name's kind.
const EVERY_FACE: &str = "every face";

/// The names a face leaves out, and why. (The C++ header lists its own in
/// weir.hpp: see [`own_opt_outs`].)
const OPT_OUTS: &[OptOut] = &[
    OptOut {
        face: "Go package",
        name: "weir_shedder_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_shedder_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_breaker_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_breaker_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_window_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_window_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_sliding_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_sliding_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_bucket_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_bucket_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_gate_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_gate_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_period_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_period_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_budget_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_budget_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_concurrency_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_concurrency_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_pool_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_pool_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_lease_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_lease_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_pool_attach",
        reason: "a pool is never shared between processes (its items are one \
            process's identities): the call only ever answers WEIR_ERR_REGION_POOL, \
            and the Go package has no placed pool to attach",
    },
    OptOut {
        face: "Go package",
        name: "weir_bloom_view_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_bloom_view_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_bloom_place_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_bloom_place_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_bloom_place_gcra_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_keyed_footprint",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_keyed_init_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: "Go package",
        name: "weir_keyed_init_rate_in",
        reason: PLACED_IN_GO,
    },
    OptOut {
        face: EVERY_FACE,
        name: "weir_critical_*",
        reason: "weir_critical_enter and weir_critical_exit are the firmware \
            SDK's hooks (feature sdk-critical-section): the SDK defines them \
            and weir calls them; the library never defines them",
    },
    OptOut {
        face: EVERY_FACE,
        name: "weir_hosted_only_*",
        reason: "the firmware header's stand-ins that turn a call to a \
            host-only function into a compile error; not functions to call",
    },
    OptOut {
        face: EVERY_FACE,
        name: "*_inline",
        reason: "the header's static inline fast paths exist only in C11 with \
            lock-free atomics: no Rust, Go or C++ face can call them; \
            tests/c/rate_inline.c keeps each in step with its out-of-line call",
    },
    OptOut {
        face: EVERY_FACE,
        name: "*_inline_",
        reason: "the inline fast paths' private helpers (C11 only, as above)",
    },
    OptOut {
        face: "Go package",
        name: "weir_budget_policy.reserved",
        reason: "must be zero; a Go composite literal leaves an unnamed field zero",
    },
    OptOut {
        face: "bay knobs",
        name: "weir_lease_policy.*",
        reason: "a lease spends units a shared store grants over the network; \
            the bay runs one process with no store to ask, so it has no \
            lease panel (docs/redis.md shows the lease with a real server)",
    },
    OptOut {
        face: "bay knobs",
        name: "weir_budget_policy.reserved",
        reason: "must be zero; \"Copy as C\" writes a designated initialiser, \
            which leaves an unnamed field zero",
    },
];

// ---------------------------------------------------------------------------
// The check.

#[test]
fn every_face_carries_every_name() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = fs::read_to_string(root.join("include/weir.h")).expect("include/weir.h");
    let items = c_header(&header);
    let count = |kind: &str| items.iter().filter(|i| i.kind() == kind).count();
    for (kind, least) in [
        ("function", 50),
        ("handle", 5),
        ("field", 50),
        ("status", 50),
    ] {
        assert!(
            count(kind) >= least,
            "read only {} {kind}s from include/weir.h: is the reader broken?",
            count(kind)
        );
    }
    assert!(
        items
            .iter()
            .any(|i| matches!(i, Item::Field { policy: true, .. })),
        "read no policy from include/weir.h: is the reader broken?"
    );
    let (problems, summary) = check(root, &items);
    println!("{summary}");
    assert!(
        problems.is_empty(),
        "{} problem(s) in the registry of faces: give each face the name, or \
         an opt-out with its reason (tests/surface.rs explains both):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Every gap and every stale opt-out, one line each; and what each face
/// checked (`cargo test --test surface -- --nocapture` prints it).
fn check(root: &Path, items: &[Item]) -> (Vec<String>, String) {
    let mut problems = Vec::new();
    let count = |kind: &str| items.iter().filter(|i| i.kind() == kind).count();
    let policy = |i: &&Item| matches!(i, Item::Field { policy: true, .. });
    let mut summary = format!(
        "include/weir.h: {} functions, {} handles, {} fields ({} of policies), {} statuses\n",
        count("function"),
        count("handle"),
        count("field"),
        items.iter().filter(policy).count(),
        count("status"),
    );
    let mut opt_outs: Vec<Listed> = OPT_OUTS
        .iter()
        .map(|o| Listed::new(o.face, o.name, o.reason, "OPT_OUTS"))
        .collect();
    for face in FACES {
        let code = Code::read(root, face);
        if let Some(file) = face.own_opt_outs {
            let text = fs::read_to_string(root.join(file)).expect(file);
            for (name, reason) in own_opt_outs(&text) {
                let from = format!("{file}'s Not wrapped block");
                opt_outs.push(Listed::new(face.name, &name, &reason, &from));
            }
        }
        // Per kind: names checked, found, opted out.
        let mut counts: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
        for item in items {
            let find = match face.rule(item.kind()) {
                Rule::Every(find) => find,
                Rule::Policies(find) if matches!(item, Item::Field { policy: true, .. }) => find,
                Rule::Policies(_) | Rule::Not(_) => continue,
            };
            let count = counts.entry(item.kind()).or_default();
            count.0 += 1;
            let name = item.name();
            let covering: Vec<&mut Listed> = opt_outs
                .iter_mut()
                .filter(|o| (o.face == face.name || o.face == EVERY_FACE) && o.covers(&name))
                .collect();
            match find(&code, item) {
                Err(why) if covering.is_empty() => {
                    problems.push(format!("{}: {} {name}: {why}", face.name, item.kind()));
                }
                Err(_) => {
                    count.2 += 1;
                    covering.into_iter().for_each(|o| o.used = true);
                }
                Ok(()) => {
                    count.1 += 1;
                    for o in covering {
                        o.used = true;
                        problems.push(format!(
                            "{}: stale opt-out `{}` ({}): the face has {name} now; remove it{}",
                            face.name,
                            o.name,
                            o.from,
                            if o.name.contains('*') {
                                " or narrow it"
                            } else {
                                ""
                            }
                        ));
                    }
                }
            }
        }
        summary.push_str(&format!("{}:\n", face.name));
        for kind in KINDS {
            let (checked, found, out) = counts.get(kind).copied().unwrap_or_default();
            let plural = if kind == "status" {
                "statuses".to_string()
            } else {
                format!("{kind}s")
            };
            summary.push_str(&match face.rule(kind) {
                Rule::Not(why) => format!("  {plural}: not carried: {why}\n"),
                rule => format!(
                    "  {plural}{}: {checked} checked, {found} found, {out} opted out\n",
                    if matches!(rule, Rule::Policies(_)) {
                        " of policies"
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    for o in &opt_outs {
        if o.face != EVERY_FACE && !FACES.iter().any(|f| f.name == o.face) {
            problems.push(format!(
                "opt-out `{}` ({}): no face is named {:?}",
                o.name, o.from, o.face
            ));
        } else if !o.used {
            problems.push(format!(
                "{}: stale opt-out `{}` ({}): it covers nothing weir.h declares that the face checks; remove it",
                o.face, o.name, o.from
            ));
        }
        if o.reason.trim().is_empty() {
            problems.push(format!(
                "{}: opt-out `{}` ({}) gives no reason",
                o.face, o.name, o.from
            ));
        }
    }
    (problems, summary)
}

// ---------------------------------------------------------------------------
// Faces, rules and opt-outs.

struct Face {
    name: &'static str,
    /// The files the face is read from, relative to the repository root:
    /// a path, `dir/*suffix` for every file in `dir` whose name ends so,
    /// and `!` before either to leave those files out.
    files: &'static [&'static str],
    /// A file whose `Not wrapped` comment block lists opt-outs of this
    /// face beside [`OPT_OUTS`] (see [`own_opt_outs`]).
    own_opt_outs: Option<&'static str>,
    functions: Rule,
    handles: Rule,
    fields: Rule,
    statuses: Rule,
}

/// The kinds of name, as [`Item::kind`] spells them.
const KINDS: [&str; 4] = ["function", "handle", "field", "status"];

impl Face {
    fn rule(&self, kind: &str) -> &Rule {
        match kind {
            "function" => &self.functions,
            "handle" => &self.handles,
            "field" => &self.fields,
            _ => &self.statuses,
        }
    }
}

/// Whether the face's code has the item: `Err` says what was looked for.
type Finder = fn(&Code, &Item) -> Result<(), String>;

enum Rule {
    /// Every name of this kind must appear, as the finder says.
    Every(Finder),
    /// For fields: every field of every policy (a struct that weir.h has a
    /// preset for, `weir_x weir_..._preset(void)`) must appear, as the
    /// finder says. A policy is what a caller fills in, so a face that
    /// builds one must set each field. The other structs are readings,
    /// tickets and checked values that weir fills: a face hands them over
    /// as the C struct or reads them back, and sets none of their fields.
    Policies(Finder),
    /// The face does not carry this kind of name, for the reason given.
    Not(&'static str),
}

struct OptOut {
    /// A face's name, or [`EVERY_FACE`].
    face: &'static str,
    /// A name (`weir_pool_take`, `weir_budget_policy.reserved`,
    /// `WEIR_ERR_NULL`), or a pattern with one `*`.
    name: &'static str,
    reason: &'static str,
}

/// An opt-out from any of the lists, and whether it covered a gap.
struct Listed {
    face: String,
    name: String,
    reason: String,
    from: String,
    used: bool,
}

impl Listed {
    fn new(face: &str, name: &str, reason: &str, from: &str) -> Listed {
        Listed {
            face: face.to_string(),
            name: name.to_string(),
            reason: reason.to_string(),
            from: from.to_string(),
            used: false,
        }
    }

    fn covers(&self, name: &str) -> bool {
        match self.name.split_once('*') {
            Some((prefix, suffix)) => {
                name.len() >= prefix.len() + suffix.len()
                    && name.starts_with(prefix)
                    && name.ends_with(suffix)
            }
            None => self.name == name,
        }
    }
}

/// The opt-outs a face lists in its own file: a block of `//` comment
/// lines whose first line contains `Not wrapped`, then lines of the form
/// `//   weir_name[, weir_name2]: reason`. A line that does not start with
/// a name continues the reason above it; the block ends at the first line
/// that is not a `//` comment.
fn own_opt_outs(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut lines = text.lines().map(str::trim);
    if !lines.any(|l| l.starts_with("//") && l.contains("Not wrapped")) {
        return out;
    }
    let mut last = 0..0;
    for line in lines.map_while(|l| l.strip_prefix("//")) {
        let line = line.trim();
        // An entry is a `- names: reason` line; other lines go on its reason.
        let entry = line
            .strip_prefix("- ")
            .and_then(|l| l.split_once(':'))
            .and_then(|(names, reason)| {
                let names: Vec<&str> = names.split(',').map(str::trim).collect();
                let is_name = |n: &&str| {
                    (n.starts_with("weir_") || n.starts_with('*'))
                        && n.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*')
                };
                names.iter().all(is_name).then_some((names, reason.trim()))
            });
        match entry {
            Some((names, reason)) => {
                let start = out.len();
                out.extend(names.iter().map(|n| (n.to_string(), reason.to_string())));
                last = start..out.len();
            }
            None if !line.is_empty() => {
                for (_, reason) in &mut out[last.clone()] {
                    reason.push(' ');
                    reason.push_str(line);
                }
            }
            None => {}
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The names weir.h declares.

#[derive(Debug, PartialEq)]
enum Item {
    Function(String),
    /// A handle, and the functions that make one (a `weir_x **` parameter).
    Handle(String, Vec<String>),
    /// A field of a struct; `policy` when weir.h has a preset for it.
    Field {
        of: String,
        field: String,
        policy: bool,
    },
    /// A status and its value.
    Status(String, i64),
}

impl Item {
    fn name(&self) -> String {
        match self {
            Item::Function(name) | Item::Handle(name, _) | Item::Status(name, _) => name.clone(),
            Item::Field { of, field, .. } => format!("{of}.{field}"),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Item::Function(_) => "function",
            Item::Handle(..) => "handle",
            Item::Field { .. } => "field",
            Item::Status(..) => "status",
        }
    }
}

/// Reads weir.h. A function is a declaration at column 0 whose last
/// identifier before its first `(` starts with `weir_`; a handle is an
/// opaque `typedef struct weir_x weir_x;`, made by the functions with a
/// `weir_x **` parameter; fields are the members of each
/// `typedef struct ... { ... } weir_x;`; statuses are the entries of
/// `enum weir_status`.
fn c_header(text: &str) -> Vec<Item> {
    let mut functions = Vec::new();
    let mut handles: Vec<(String, Vec<String>)> = Vec::new();
    let mut structs: Vec<(String, Vec<String>)> = Vec::new();
    let mut statuses = Vec::new();
    let mut declaration: Option<String> = None;
    let mut members: Option<Vec<String>> = None;
    let mut in_status = false;
    for line in text.lines() {
        // Functions, and the return type of each (for the presets).
        if let Some(open) = declaration.as_mut() {
            open.push(' ');
            open.push_str(line.trim());
        } else if line.starts_with(|c: char| c.is_ascii_alphabetic()) && line.contains('(') {
            declaration = Some(line.to_string());
        }
        if declaration
            .as_ref()
            .is_some_and(|d| d.trim_end().ends_with(';'))
        {
            let d = declaration.take().unwrap();
            let before = identifiers(&d[..d.find('(').unwrap()]);
            if let Some(name) = before.last().filter(|n| n.starts_with("weir_")) {
                let returns = before.first().unwrap().to_string();
                functions.push((name.to_string(), returns, d.clone()));
            }
        }
        // Handles and structs.
        let trimmed = line.trim();
        if let Some(rest) = line.strip_prefix("typedef struct ") {
            let words: Vec<&str> = rest.trim_end_matches(';').split_whitespace().collect();
            if let [tag, name] = words[..] {
                if tag == name && name.starts_with("weir_") {
                    handles.push((name.to_string(), Vec::new()));
                }
            }
            if trimmed.ends_with('{') {
                members = Some(Vec::new());
            }
        } else if let Some(fields) = members.as_mut() {
            if let Some(rest) = trimmed.strip_prefix('}') {
                let name = rest.trim().trim_end_matches(';').to_string();
                structs.push((name, members.take().unwrap()));
            } else if trimmed.ends_with(';') && !trimmed.starts_with("//") {
                let member = trimmed.trim_end_matches(';');
                let member = member.split('[').next().unwrap();
                if let Some(field) = identifiers(member).last() {
                    fields.push(field.to_string());
                }
            }
        }
        // Statuses.
        if line.starts_with("enum weir_status") {
            in_status = true;
        } else if in_status && trimmed.starts_with("};") {
            in_status = false;
        } else if in_status && trimmed.starts_with("WEIR_") {
            let (name, value) = trimmed.trim_end_matches(',').split_once('=').unwrap();
            let value = value.trim().parse().expect("a status value");
            statuses.push(Item::Status(name.trim().to_string(), value));
        }
    }
    let mut items = Vec::new();
    for (name, _, declaration) in &functions {
        for (handle, makers) in &mut handles {
            if declaration.contains(&format!("{handle} **")) {
                makers.push(name.clone());
            }
        }
        items.push(Item::Function(name.clone()));
    }
    items.extend(
        handles
            .into_iter()
            .map(|(h, makers)| Item::Handle(h, makers)),
    );
    for (of, fields) in structs {
        let policy = functions
            .iter()
            .any(|(name, returns, _)| *returns == of && name.ends_with("_preset"));
        for field in fields {
            items.push(Item::Field {
                of: of.clone(),
                field,
                policy,
            });
        }
    }
    items.extend(statuses);
    items
}

/// The identifiers in `text`, in order.
fn identifiers(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .collect()
}

// ---------------------------------------------------------------------------
// A face's code, read as text.

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// An identifier, keyword or number.
    Word(String),
    /// A string literal's contents.
    Str(String),
    Punct(char),
}

/// A face's files as tokens, comments left out; the identifiers its code
/// names and the ones it calls (`name(`).
struct Code {
    tokens: Vec<Tok>,
    named: BTreeSet<String>,
    called: BTreeSet<String>,
}

impl Code {
    fn read(root: &Path, face: &Face) -> Code {
        let mut files = BTreeSet::new();
        for pattern in face.files {
            let (leave_out, pattern) = match pattern.strip_prefix('!') {
                Some(p) => (true, p),
                None => (false, *pattern),
            };
            let matched: Vec<_> = match pattern.rsplit_once("/*") {
                Some((dir, suffix)) => fs::read_dir(root.join(dir))
                    .unwrap_or_else(|e| panic!("{}: {dir}: {e}", face.name))
                    .map(|entry| entry.unwrap().path())
                    .filter(|path| path.to_string_lossy().ends_with(suffix))
                    .collect(),
                None => vec![root.join(pattern)],
            };
            for path in matched {
                if leave_out {
                    files.remove(&path);
                } else {
                    files.insert(path);
                }
            }
        }
        assert!(!files.is_empty(), "{}: no files", face.name);
        let mut tokens = Vec::new();
        for path in files {
            let text =
                fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            tokens.extend(tokenize(&text));
        }
        Code::new(tokens)
    }

    fn new(tokens: Vec<Tok>) -> Code {
        let mut named = BTreeSet::new();
        let mut called = BTreeSet::new();
        for (i, tok) in tokens.iter().enumerate() {
            if let Tok::Word(word) = tok {
                named.insert(word.clone());
                if tokens.get(i + 1) == Some(&Tok::Punct('(')) {
                    called.insert(word.clone());
                }
            }
        }
        Code {
            tokens,
            named,
            called,
        }
    }

    /// Where `pattern` occurs in the tokens: `"C . weir_x ("` is the words
    /// and punctuation of the pattern, split at spaces.
    fn find(&self, pattern: &str) -> Vec<usize> {
        let want: Vec<Tok> = pattern.split(' ').flat_map(tokenize).collect();
        (0..self.tokens.len())
            .filter(|&i| self.tokens[i..].starts_with(&want))
            .collect()
    }
}

/// Rust, C++ and Go source as tokens: comments (`//`, `/* */`) left out,
/// string literals (`"..."`, Go's raw `` `...` ``) kept whole, char
/// literals dropped.
fn tokenize(text: &str) -> Vec<Tok> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(c) = at(i) {
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == Some('/') {
            while at(i).is_some_and(|c| c != '\n') {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == Some('*') {
            i += 2;
            while at(i).is_some() && !(at(i) == Some('*') && at(i + 1) == Some('/')) {
                i += 1;
            }
            i += 2;
        } else if c == '"' || c == '`' {
            let mut s = String::new();
            i += 1;
            while let Some(d) = at(i).filter(|&d| d != c) {
                if d == '\\' && c == '"' {
                    i += 1;
                }
                s.extend(at(i));
                i += 1;
            }
            i += 1;
            out.push(Tok::Str(s));
        } else if c == '\'' {
            // A char literal ('x', '\n', '"'), or a Rust lifetime ('a).
            if at(i + 1) == Some('\\') {
                i += 2;
                while at(i).is_some_and(|c| c != '\'') {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == Some('\'') {
                i += 3;
            } else {
                out.push(Tok::Punct(c));
                i += 1;
            }
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let start = i;
            while at(i).is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                i += 1;
            }
            out.push(Tok::Word(chars[start..i].iter().collect()));
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

/// The tokens from `open` (an opening bracket) to its closing one, both
/// left out.
fn group(tokens: &[Tok], open: usize) -> &[Tok] {
    let mut depth = 0;
    for (i, tok) in tokens.iter().enumerate().skip(open) {
        match tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return &tokens[open + 1..i];
                }
            }
            _ => {}
        }
    }
    &tokens[open + 1..]
}

/// `tokens` split at the commas outside brackets.
fn split_commas(tokens: &[Tok]) -> Vec<&[Tok]> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, tok) in tokens.iter().enumerate() {
        match tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => depth -= 1,
            Tok::Punct(',') if depth == 0 => {
                parts.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < tokens.len() {
        parts.push(&tokens[start..]);
    }
    parts
}

fn word(tok: &Tok) -> Option<&str> {
    match tok {
        Tok::Word(w) => Some(w),
        _ => None,
    }
}

fn string(tok: &Tok) -> Option<&str> {
    match tok {
        Tok::Str(s) => Some(s),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Finders: what "appears" means in each face.

/// Named in the code: called, or passed as a function (weir.hpp's handle
/// template takes `weir_x_free`).
fn named(code: &Code, item: &Item) -> Result<(), String> {
    let name = item.name();
    code.named
        .contains(&name)
        .then_some(())
        .ok_or_else(|| "not named in its code (called, or passed as a function)".to_string())
}

/// Called as `weir_x(`.
fn called(code: &Code, item: &Item) -> Result<(), String> {
    let name = item.name();
    code.called
        .contains(&name)
        .then_some(())
        .ok_or_else(|| format!("not called as `{name}(`"))
}

/// A handle named, or made by a call to one of its makers.
fn named_or_made(code: &Code, item: &Item) -> Result<(), String> {
    let Item::Handle(name, makers) = item else {
        unreachable!()
    };
    if code.named.contains(name) || makers.iter().any(|m| code.called.contains(m)) {
        return Ok(());
    }
    Err(format!("neither named nor made (by {makers:?})"))
}

/// Called through cgo, as `C.weir_x(`.
fn called_from_go(code: &Code, item: &Item) -> Result<(), String> {
    let name = item.name();
    if code.find(&format!("C . {name} (")).is_empty() {
        return Err(format!("not called as `C.{name}(`"));
    }
    Ok(())
}

/// A policy field, set in C++: weir.hpp either mirrors the policy as a C++
/// aggregate whose `weir_x c() const` sets `out.field`, or takes the C
/// struct itself (`const weir_x&`), whose every field the caller sets.
fn set_by_cpp(code: &Code, item: &Item) -> Result<(), String> {
    let Item::Field { of, field, .. } = item else {
        unreachable!()
    };
    let conversions = code.find(&format!("{of} c ( ) const"));
    if conversions.is_empty() {
        if code.find(&format!("const {of} &")).is_empty() {
            return Err(format!(
                "weir.hpp neither mirrors {of} (a `{of} c() const`) nor takes `const {of}&`"
            ));
        }
        return Ok(());
    }
    for start in conversions {
        let open = start
            + code.tokens[start..]
                .iter()
                .position(|t| *t == Tok::Punct('{'))
                .unwrap();
        let body = Code::new(group(&code.tokens, open).to_vec());
        if body.find(&format!("out . {field} =")).is_empty() {
            return Err(format!("`{of} c() const` does not set `out.{field}`"));
        }
    }
    Ok(())
}

/// A status in C++: weir.hpp makes `weir_status` an error_code enum
/// (`std::is_error_code_enum<weir_status>`), so every status is a
/// `std::error_code` with weir_status_str as its message; or named.
fn cpp_error_code(code: &Code, item: &Item) -> Result<(), String> {
    if !code.find("is_error_code_enum < weir_status >").is_empty()
        || code.named.contains(&item.name())
    {
        return Ok(());
    }
    Err("weir_status is no error_code enum (is_error_code_enum<weir_status>), nor is the status named".into())
}

/// A policy field, set in Go: every `C.weir_x{...}` composite literal of
/// the policy (the Go policy's conversion) names `field:`.
fn named_by_go_literal(code: &Code, item: &Item) -> Result<(), String> {
    let Item::Field { of, field, .. } = item else {
        unreachable!()
    };
    // `) C.weir_x {` is a function's result type and its body, not a literal.
    let literals: Vec<usize> = code
        .find(&format!("C . {of} {{"))
        .into_iter()
        .filter(|&i| i == 0 || code.tokens[i - 1] != Tok::Punct(')'))
        .collect();
    if literals.is_empty() {
        return Err(format!(
            "no `C.{of}{{...}}` literal converts a Go policy to it"
        ));
    }
    for start in literals {
        let names = split_commas(group(&code.tokens, start + 3));
        if !names
            .iter()
            .any(|part| part.starts_with(&[Tok::Word(field.clone()), Tok::Punct(':')]))
        {
            return Err(format!(
                "a `C.{of}{{...}}` literal does not name `{field}:`"
            ));
        }
    }
    Ok(())
}

/// A status in Go: `WEIR_OK` is what `check` turns into nil (`C.WEIR_OK`);
/// every other is the constant status_gen.go generates, `ErrX Status = N`
/// with the header's value.
fn go_status(code: &Code, item: &Item) -> Result<(), String> {
    let Item::Status(name, value) = item else {
        unreachable!()
    };
    let Some(rest) = name.strip_prefix("WEIR_ERR_") else {
        return match code.find(&format!("C . {name}")).is_empty() {
            true => Err(format!("not named as `C.{name}`")),
            false => Ok(()),
        };
    };
    let mut constant = "Err".to_string();
    for word in rest.split('_') {
        if ["SRE", "GCRA", "CPU", "TTL", "RPS"].contains(&word) {
            constant.push_str(word);
        } else {
            constant.push_str(&word[..1]);
            constant.push_str(&word[1..].to_lowercase());
        }
    }
    if code
        .find(&format!("{constant} Status = {value}"))
        .is_empty()
    {
        return Err(format!(
            "no `{constant} Status = {value}` (go generate rewrites status_gen.go)"
        ));
    }
    Ok(())
}

/// A policy field, in the bay: each panel whose C policy (its `c_type`,
/// or one of its `c_more` structs) is the struct has a knob for the field,
/// `c!(... "field" ...)` (`c!(in "var", ...)` for a `c_more` struct), so
/// that "Copy as C" names it and does not leave it 0.
fn bay_knob(code: &Code, item: &Item) -> Result<(), String> {
    let Item::Field { of, field, .. } = item else {
        unreachable!()
    };
    let (knobs, panels) = bay_panels(&code.tokens);
    let mut copies = 0;
    for panel in &panels {
        for (var, ty) in &panel.copies {
            if ty != of {
                continue;
            }
            copies += 1;
            let has = knobs
                .get(&panel.knobs)
                .is_some_and(|k| k.contains(&(var.clone(), field.clone())));
            if !has {
                let var = if var.is_empty() {
                    String::new()
                } else {
                    format!("in \"{var}\", ")
                };
                return Err(format!(
                    "panel {:?} ({}) has no knob `c!({var}\"{field}\")`",
                    panel.id, panel.knobs
                ));
            }
        }
    }
    if copies == 0 {
        return Err(format!("no panel copies {of} as C"));
    }
    Ok(())
}

/// Each bay knobs struct (`BreakerKnobs`) and its knobs' C fields, as
/// `(var, field)`: `("", "k")`, `("backoff", "base_ns")`.
type Knobs = BTreeMap<String, BTreeSet<(String, String)>>;

/// A bay panel: its id, its knobs' struct, and the C structs "Copy as C"
/// writes: `("", c_type)` and each `c_more` entry `(var, type)`.
struct Panel {
    id: String,
    knobs: String,
    copies: Vec<(String, String)>,
}

/// bay/src/scenarios.rs read as text: each knobs struct's C fields
/// `(var, field)`, from its `c!(...)` annotations; and the panels of
/// `ALL`, from each `scenario!(id, title, about, c_type, c_preset, Knobs,
/// ...)` and the `c_more: &[(var, type, preset)]` before it.
fn bay_panels(tokens: &[Tok]) -> (Knobs, Vec<Panel>) {
    let mut knobs = Knobs::new();
    let mut current = String::new();
    let mut panels = Vec::new();
    let mut more = Vec::new();
    let all = (0..tokens.len())
        .find(|&i| tokens[i..].starts_with(&[Tok::Word("static".into()), Tok::Word("ALL".into())]))
        .unwrap_or(tokens.len());
    for i in 0..tokens.len() {
        let next = |n: usize| tokens.get(i + n);
        let macro_call = |name: &str| {
            word(&tokens[i]) == Some(name)
                && next(1) == Some(&Tok::Punct('!'))
                && next(2) == Some(&Tok::Punct('('))
        };
        if let Some(w) = word(&tokens[i]).filter(|w| w.ends_with("Knobs")) {
            if next(1) == Some(&Tok::Punct('{')) {
                current = w.to_string();
            }
        }
        if macro_call("c") {
            let args = group(tokens, i + 2);
            let strings: Vec<&str> = args.iter().filter_map(string).collect();
            let field = match args.first().and_then(word) {
                Some("in") => strings.get(1).map(|f| (strings[0], *f)),
                _ => strings.first().map(|f| ("", *f)),
            };
            if let Some((var, field)) = field {
                knobs
                    .entry(current.clone())
                    .or_default()
                    .insert((var.into(), field.into()));
            }
        }
        if i < all {
            continue;
        }
        if word(&tokens[i]) == Some("c_more") {
            let open = i + tokens[i..]
                .iter()
                .position(|t| *t == Tok::Punct('['))
                .unwrap();
            for entry in split_commas(group(tokens, open)) {
                let fields: Vec<&str> = entry.iter().filter_map(string).collect();
                if let [var, ty, ..] = fields[..] {
                    more.push((var.to_string(), ty.to_string()));
                }
            }
        }
        if macro_call("scenario") {
            let args = split_commas(group(tokens, i + 2));
            let one = |n: usize| args.get(n).filter(|a| a.len() == 1).map(|a| &a[0]);
            let id = one(0).and_then(string).unwrap_or("?").to_string();
            let knobs_of = args
                .iter()
                .find_map(|a| a.first().and_then(word).filter(|w| w.ends_with("Knobs")));
            let mut copies = std::mem::take(&mut more);
            if let Some(ty) = one(3).and_then(string).filter(|t| t.starts_with("weir_")) {
                copies.insert(0, (String::new(), ty.to_string()));
            }
            panels.push(Panel {
                id,
                knobs: knobs_of.unwrap_or("?").to_string(),
                copies,
            });
        }
    }
    (knobs, panels)
}

// ---------------------------------------------------------------------------
// The readers' own tests.

#[test]
fn the_reader_finds_the_c_header_surface() {
    let items = c_header(
        "typedef struct weir_thing weir_thing;\n\
         // weir_commented(void);\n\
         #define WEIR_X(a) (a)\n\
         enum weir_status\n\
          {\n\
           // Success.\n\
           WEIR_OK = 0,\n\
           WEIR_ERR_THING_SIZE = 900,\n\
         };\n\
         typedef struct WEIR_ALIGN(8) {\n\
           // Doc.\n\
           int64_t size;\n\
           double *floor;\n\
         } weir_thing_policy;\n\
         typedef struct {\n\
           int32_t kind;\n\
         } weir_thing_taken;\n\
         weir_thing_policy weir_thing_policy_preset(void);\n\
         weir_status weir_thing_new(const weir_thing_policy *policy,\n\
                                    weir_thing **out);\n\
         bool weir_thing_allow(const weir_thing *thing, int64_t now);\n",
    );
    let field = |of: &str, field: &str, policy| Item::Field {
        of: of.into(),
        field: field.into(),
        policy,
    };
    assert_eq!(
        items,
        [
            Item::Function("weir_thing_policy_preset".into()),
            Item::Function("weir_thing_new".into()),
            Item::Function("weir_thing_allow".into()),
            Item::Handle("weir_thing".into(), vec!["weir_thing_new".into()]),
            field("weir_thing_policy", "size", true),
            field("weir_thing_policy", "floor", true),
            field("weir_thing_taken", "kind", false),
            Item::Status("WEIR_OK".into(), 0),
            Item::Status("WEIR_ERR_THING_SIZE".into(), 900),
        ]
    );
}

#[test]
fn the_tokenizer_leaves_out_comments_and_keeps_strings() {
    let code = Code::new(tokenize(
        "a(\"x // y\", '\"', b); // c(\n/* d( */ e::<'static>(`f(`) C.weir_g(1)",
    ));
    let called: Vec<&str> = code.called.iter().map(String::as_str).collect();
    assert_eq!(called, ["a", "weir_g"]);
    assert!(code.tokens.contains(&Tok::Str("x // y".into())));
    assert!(code.tokens.contains(&Tok::Str("f(".into())));
    assert_eq!(code.find("C . weir_g ("), [18]);
}

#[test]
fn a_face_lists_its_own_opt_outs_in_a_not_wrapped_block() {
    let opt_outs = own_opt_outs(
        "// weir.hpp\n\
         //\n\
         // Not wrapped (the C API serves these directly):\n\
         // One entry per `- ` line: its names, a colon, its reason.\n\
         //   - weir_a, weir_b: C only,\n\
         //     for now\n\
         //   - weir_c_*, *_x: a pattern\n\
         #ifndef X\n\
         //   - weir_d: after the block\n",
    );
    let pair = |n: &str, r: &str| (n.to_string(), r.to_string());
    assert_eq!(
        opt_outs,
        [
            pair("weir_a", "C only, for now"),
            pair("weir_b", "C only, for now"),
            pair("weir_c_*", "a pattern"),
            pair("*_x", "a pattern")
        ]
    );
    assert!(own_opt_outs("// no block\nint x;\n").is_empty());
}

#[test]
fn the_bay_reader_finds_knobs_and_panels() {
    let tokens = tokenize(
        "knobs! { /// A.\n AKnobs { k: \"k (a)\" = 1.0, [0.0, 1.0, 0.1], c!(\"k\");\n\
                  n: \"n\" = 1.0, [0.0, 1.0, 0.1], c!(in \"more\", int \"n_ns\", MS);\n\
                  t: \"traffic\" = 1.0, [0.0, 1.0, 0.1], None; } }\n\
         fn a(k: &AKnobs) {}\n\
         pub static ALL: &[Scenario] = &[\n\
           Scenario { c_more: &[(\"more\", \"weir_more\", \"weir_more_preset\")],\n\
             ..scenario!(\"a\", \"A (1, 2)\", \"about, (x\", \"weir_a_policy\", \"weir_a_policy_preset\", AKnobs, a, &[&[\"t\"]]) },\n\
           scenario!(\"b\", \"B\", \"about\", BKnobs, b, b_c, &[&[\"t\"]]),\n\
         ];\n",
    );
    let (knobs, panels) = bay_panels(&tokens);
    let fields: Vec<(String, String)> = knobs["AKnobs"].iter().cloned().collect();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(fields, [pair("", "k"), pair("more", "n_ns")]);
    assert_eq!(panels.len(), 2);
    assert_eq!(
        (panels[0].id.as_str(), panels[0].knobs.as_str()),
        ("a", "AKnobs")
    );
    assert_eq!(
        panels[0].copies,
        [pair("", "weir_a_policy"), pair("more", "weir_more")]
    );
    assert_eq!((panels[1].id.as_str(), panels[1].copies.len()), ("b", 0));
}

// ---------------------------------------------------------------------------
// The conformance traces: each face's sweep of traces/ (traces/README.md).

/// Each face that replays the traces: its name (the first word of its
/// lines in traces/skips.txt) and the files its replay is read from. A face
/// replays a type when every op its type's traces use appears in those
/// files as a quoted string (`"rate_allow"`); every type it does not replay
/// must be in traces/skips.txt with a reason, and a skip of a type it does
/// replay is stale.
const TRACE_REPLAYS: &[(&str, &[&str])] = &[
    ("c", &["tests/c/traces.c"]),
    ("cpp", &["tests/cpp/traces_test.cpp"]),
    ("go-cgo", &["go/traces_test.go", "go/traces_words_test.go"]),
    ("go-words", &["go/traces_words_test.go"]),
    ("firmware-m4", &["c-examples/firmware/trace_table.py"]),
    ("firmware-m0", &["c-examples/firmware/trace_table.py"]),
    ("nginx", &["modules/nginx/test/replay.py"]),
    ("redis", &["modules/redis/tests/traces.rs"]),
    ("wasm", &["bay/test/traces.mjs"]),
];

/// The ops each type's traces use (`type -> ops`), each trace file's type
/// and the ops each file uses.
type TraceFiles = BTreeMap<String, (String, BTreeSet<String>)>;

fn trace_ops(root: &Path) -> (BTreeMap<String, BTreeSet<String>>, TraceFiles) {
    let index = fs::read_to_string(root.join("traces/index.txt")).expect("traces/index.txt");
    let mut ops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = BTreeMap::new();
    for name in index
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let text = fs::read_to_string(root.join("traces").join(name)).expect(name);
        let mut lines = text.lines();
        let ty = lines
            .next()
            .and_then(|h| h.strip_prefix("weir-trace 1 "))
            .unwrap_or_else(|| panic!("traces/{name}: no version 1 header"))
            .to_string();
        let mut set = BTreeSet::new();
        for line in lines.filter(|l| !l.is_empty() && !l.starts_with('#')) {
            set.insert(line.split(' ').next().unwrap().to_string());
        }
        ops.entry(ty.clone())
            .or_default()
            .extend(set.iter().cloned());
        files.insert(name.to_string(), (ty, set));
    }
    (ops, files)
}

#[test]
fn every_face_replays_every_trace_or_says_why_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (ops, files) = trace_ops(root);
    assert!(ops.len() >= 17, "read only {} trace types", ops.len());
    let skips_text = fs::read_to_string(root.join("traces/skips.txt")).expect("traces/skips.txt");
    let mut skips: BTreeSet<(String, String)> = BTreeSet::new();
    let mut problems = Vec::new();
    for (i, line) in skips_text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.splitn(3, ' ');
        let (face, what, why) = (
            words.next().unwrap_or(""),
            words.next().unwrap_or(""),
            words.next().unwrap_or(""),
        );
        if !TRACE_REPLAYS.iter().any(|(f, _)| *f == face) {
            problems.push(format!("traces/skips.txt:{}: no face {face:?}", i + 1));
        }
        if !ops.contains_key(what) && !files.contains_key(what) {
            problems.push(format!(
                "traces/skips.txt:{}: no trace or type {what:?}",
                i + 1
            ));
        }
        if why.split_whitespace().count() < 4 {
            problems.push(format!("traces/skips.txt:{}: give the reason", i + 1));
        }
        skips.insert((face.to_string(), what.to_string()));
    }
    for (face, sources) in TRACE_REPLAYS {
        let mut text = String::new();
        for s in *sources {
            match fs::read_to_string(root.join(s)) {
                Ok(t) => text.push_str(&t),
                Err(_) => problems.push(format!("{face}: its replay {s} is missing")),
            }
        }
        for ty in ops.keys() {
            // The ops of the type's files the face does not skip one by one.
            let set: BTreeSet<&String> = files
                .iter()
                .filter(|(f, (t, _))| {
                    t == ty && !skips.contains(&(face.to_string(), f.to_string()))
                })
                .flat_map(|(_, (_, ops))| ops)
                .collect();
            let missing: Vec<&str> = set
                .into_iter()
                .filter(|op| !text.contains(&format!("\"{op}\"")))
                .map(String::as_str)
                .collect();
            let skipped = skips.contains(&(face.to_string(), ty.clone()));
            if missing.is_empty() && skipped {
                problems.push(format!(
                    "{face}: replays {ty} but traces/skips.txt skips it (remove the skip)"
                ));
            }
            if !missing.is_empty() && !skipped {
                problems.push(format!(
                    "{face}: does not replay {ty} (no {:?}); replay it or list it in \
                     traces/skips.txt with the reason",
                    missing
                ));
            }
        }
        for (file, (ty, _)) in &files {
            if skips.contains(&(face.to_string(), file.clone()))
                && skips.contains(&(face.to_string(), ty.clone()))
            {
                problems.push(format!("{face}: skips {file} and its type {ty} both"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) in the trace replays (traces/README.md, \"Skips\"):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
