//! The repository stands alone: a reader who has only these files can follow
//! every citation in them. Three checks over every text file the repository
//! holds (`git ls-files`, or a walk of the tree without git), reading files
//! only:
//!
//! 1. **Cited files exist.** A word that looks like a repository path to a
//!    `.md`, `.rs`, `.c`, `.h`, `.hpp`, `.cpp`, `.go`, `.sh`, `.py`, `.txt`
//!    or `.toml` file must name a file the repository holds, relative to
//!    the citing file's folder or to any folder above it (the repository's
//!    root included). A word with a `/` is a citation when its first folder
//!    is one the repository holds there (or `..`), so `sys/mman.h`,
//!    `$PREFIX/lib/...` and `target/...` (build output) are not. A bare
//!    name is checked for the kinds a reader looks up (`.md`, `.rs`, `.go`,
//!    `.sh`, `.py`, `.txt`, `.toml`) against every file's name; not `.c` and
//!    `.h`, which are mostly system headers and Go's `C.x` selectors. A
//!    name or path in double quotes in code (not in Markdown), `$x.sh` or
//!    `{x}.md` is a name the code builds (a file it writes, a suffix it
//!    matches), not a citation.
//! 2. **No source documents the reader lacks.** [`PHRASES`] lists the ways
//!    the text once cited a design document that never was in the
//!    repository, and the documents the behaviour first came from, each
//!    with its reason. The behaviour's public sources are named in
//!    docs/design.md, "Where the behaviour comes from".
//! 3. **No internal issue numbers.** `issue N`, `issues N` and `issue #N`
//!    point at a tracker the reader does not have, unless a project name
//!    comes first (`Envoy issue 123`, `golang/go issue 123`); `owner/repo#N`,
//!    `HikariCP #2004` and `.../issues/N` addresses are other spellings
//!    and pass. `item N` and `bug N` are flagged on a line that also says
//!    `issue` (the parts of an issue); alone they are a pool's items or a
//!    reply's elements.
//!
//! Skipped: fuzz/corpus/ (fuzzer inputs), lock files, files that are not
//! UTF-8, and this file, which has to spell out what it forbids.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Phrases that cite what the repository does not hold, and why each is
/// here. `case` says whether the match is case-sensitive. "The seed" once
/// meant the documents the behaviour came from; the phrases are the ways
/// that sense was spelled, so random and hash seeds ("its seed", "a fixed
/// seed", "under this seed", `seed0`, `BLOOM_SEEDS`, `the_seed_moves_the_words`,
/// `-Zmiri-many-seeds`, proptest's "Seeds for failure cases") still pass.
const PHRASES: &[(&str, bool, &str)] = &[
    (
        "DESIGN.md",
        true,
        "the design document is docs/design.md; an upper-case DESIGN.md never existed",
    ),
    ("DESIGN's", true, "DESIGN.md in short"),
    ("DESIGN scenario", true, "DESIGN.md in short"),
    (
        "design_md",
        false,
        "a test named after DESIGN.md; name the scenario (docs/design.md)",
    ),
    (
        "the seed's",
        false,
        "\"the seed\" meant the documents the behaviour came from; name the formula or the preset",
    ),
    ("the seeds'", false, "as \"the seed's\""),
    (
        "as the seed",
        false,
        "as \"the seed's\" (\"as the seed does\")",
    ),
    ("than the seed", false, "as \"the seed's\""),
    ("from the seed", false, "as \"the seed's\""),
    (
        "the seed:",
        false,
        "as \"the seed's\" (\"The seed: refusals feed ...\")",
    ),
    ("the seed refuses", false, "as \"the seed's\""),
    ("the seed already", false, "as \"the seed's\""),
    (
        "the_seeds",
        false,
        "a test named after the source documents",
    ),
    (
        "_the_seed_order",
        false,
        "a test named after the source documents",
    ),
    (
        "the issue's",
        false,
        "an internal issue nobody else can read; say what it found",
    ),
    ("the_issue_s", false, "a test named after an internal issue"),
];

/// Extensions a citation is checked for.
const CITED: &[&str] = &[
    "md", "rs", "c", "h", "hpp", "cpp", "go", "sh", "py", "txt", "toml",
];

/// Extensions a bare file name is checked for.
const BARE: &[&str] = &["md", "rs", "go", "sh", "py", "txt", "toml"];

/// Words before `issue N` that start a sentence or a clause rather than
/// name a project.
const NOT_PROJECTS: &[&str] = &[
    "A", "An", "And", "As", "By", "Each", "Every", "For", "From", "In", "Its", "Of", "On", "Or",
    "Our", "Per", "See", "Since", "That", "The", "This", "To", "With",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file of the repository, as `/`-separated paths from the root.
fn listed() -> Vec<String> {
    let git = Command::new("git")
        .args(["ls-files", "--cached", "--others", "--exclude-standard"])
        .current_dir(root())
        .output();
    let mut files: Vec<String> = match git {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
        _ => {
            let mut found = Vec::new();
            walk(&root(), "", &mut found);
            found
        }
    };
    files.retain(|f| root().join(f).is_file());
    files.sort();
    files.dedup();
    files
}

/// The tree below `dir`, without build output and version control.
fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if matches!(name.as_str(), ".git" | "target" | "node_modules")
            || (prefix.is_empty() && name == "build")
        {
            continue;
        }
        let path = format!("{prefix}{name}");
        if entry.path().is_dir() {
            walk(&entry.path(), &format!("{path}/"), out);
        } else {
            out.push(path);
        }
    }
}

/// The text files the checks read: (path, text).
fn texts(files: &[String]) -> Vec<(String, String)> {
    files
        .iter()
        .filter(|f| {
            !f.starts_with("fuzz/corpus/")
                && !f.ends_with(".lock")
                && !f.ends_with("package-lock.json")
                && f.as_str() != "tests/standalone.rs"
        })
        .filter_map(|f| {
            let text = std::fs::read_to_string(root().join(f)).ok()?;
            Some((f.clone(), text))
        })
        .collect()
}

/// `path` with `.` and `..` resolved, or None if it climbs above the root.
fn normal(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// The folders from `file`'s own up to the root ("").
fn folders(file: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut dir = Path::new(file).parent();
    while let Some(d) = dir {
        out.push(d.to_string_lossy().into_owned());
        dir = d.parent();
    }
    if out.last().map(String::as_str) != Some("") {
        out.push(String::new());
    }
    out
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_owned()
    } else {
        format!("{dir}/{rest}")
    }
}

fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/')
}

/// The citations of missing files on one line of `file`.
fn missing_on(
    file: &str,
    line: &str,
    files: &BTreeSet<String>,
    dirs: &BTreeSet<String>,
    names: &BTreeSet<String>,
) -> Vec<String> {
    let mut missing = Vec::new();
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        if !path_char(chars[i].1) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && path_char(chars[i].1) {
            i += 1;
        }
        let before = start.checked_sub(1).map(|k| chars[k].1);
        let after = chars.get(i).map(|&(_, c)| c);
        let end = chars.get(i).map_or(line.len(), |&(at, _)| at);
        let word = line[chars[start].0..end].trim_end_matches('.');
        if word.starts_with('/') || word.contains("//") || matches!(before, Some('$' | '{' | '}')) {
            continue;
        }
        let Some((stem, ext)) = word.rsplit_once('.') else {
            continue;
        };
        if !CITED.contains(&ext) || stem.is_empty() || stem.ends_with(['/', '.']) {
            continue;
        }
        let up = folders(file);
        // In code a quoted path is one the code makes; in prose it cites.
        let quoted = before == Some('"') && after == Some('"') && !file.ends_with(".md");
        if word.contains('/') && !quoted {
            let first = word.split('/').next().unwrap_or("");
            let holds_first = matches!(first, "." | "..")
                || up
                    .iter()
                    .any(|d| normal(&join(d, first)).is_some_and(|p| dirs.contains(&p)));
            if !holds_first {
                continue;
            }
            let found = up.iter().any(|d| {
                normal(&join(d, word)).is_some_and(|p| files.contains(&p) || dirs.contains(&p))
            });
            if !found {
                missing.push(word.to_owned());
            }
        } else if !word.contains('/') {
            let named = word.starts_with(|c: char| c.is_ascii_alphanumeric());
            if BARE.contains(&ext) && !quoted && named && !names.contains(word) {
                missing.push(word.to_owned());
            }
        }
    }
    missing
}

#[test]
fn every_cited_file_is_in_the_repository() {
    let listed = listed();
    let files: BTreeSet<String> = listed.iter().cloned().collect();
    let mut dirs = BTreeSet::new();
    for f in &listed {
        let mut up = Path::new(f).parent();
        while let Some(d) = up.filter(|d| !d.as_os_str().is_empty()) {
            dirs.insert(d.to_string_lossy().into_owned());
            up = d.parent();
        }
    }
    let names: BTreeSet<String> = listed
        .iter()
        .map(|f| f.rsplit('/').next().unwrap_or(f).to_owned())
        .collect();
    let mut bad = Vec::new();
    for (file, text) in texts(&listed) {
        for (n, line) in text.lines().enumerate() {
            for word in missing_on(&file, line, &files, &dirs, &names) {
                bad.push(format!("{file}:{}: {word}", n + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "citations of files the repository does not hold:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_citation_of_documents_the_reader_lacks() {
    let mut bad = Vec::new();
    for (file, text) in texts(&listed()) {
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            for &(phrase, case, why) in PHRASES {
                let hit = if case {
                    line.contains(phrase)
                } else {
                    lower.contains(&phrase.to_lowercase())
                };
                if hit {
                    bad.push(format!("{file}:{}: {phrase:?}: {why}", n + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Whether `word` names a project: `owner/repo`, or a capitalised name
/// that is not a word starting a sentence or clause.
fn project(word: &str) -> bool {
    let named = |s: &str| s.starts_with(|c: char| c.is_ascii_alphanumeric());
    match word.split_once('/') {
        Some((owner, repo)) => named(owner) && named(repo),
        None => word.starts_with(|c: char| c.is_ascii_uppercase()) && !NOT_PROJECTS.contains(&word),
    }
}

/// The `issue N` (and, on such a line, `item N` / `bug N`) references on
/// one line that no project name owns. A project's name is the word right
/// before `issue`, with only spaces between.
fn internal_numbers(line: &str) -> Vec<String> {
    let says_issue = line.to_lowercase().contains("issue");
    // The words, each with whether only spaces separate it from the last.
    let mut words: Vec<(&str, bool)> = Vec::new();
    let mut adjacent = false;
    for piece in line.split(' ') {
        for (k, word) in piece
            .split(|c: char| c.is_whitespace() || "(),;:`\"[]".contains(c))
            .enumerate()
        {
            if word.is_empty() {
                adjacent = false;
                continue;
            }
            words.push((word, adjacent && k == 0));
            adjacent = true;
        }
    }
    let mut bad = Vec::new();
    for i in 1..words.len() {
        let (word, next) = (words[i - 1].0.to_lowercase(), words[i].0);
        let number = next.trim_start_matches('#');
        if !number.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let is_issue = matches!(word.as_str(), "issue" | "issues");
        let is_part = says_issue && matches!(word.as_str(), "item" | "items" | "bug" | "bugs");
        if !is_issue && !is_part {
            continue;
        }
        if is_issue && i >= 2 && words[i - 1].1 && project(words[i - 2].0) {
            continue;
        }
        bad.push(format!("{} {next}", words[i - 1].0));
    }
    bad
}

#[test]
fn no_internal_issue_numbers() {
    let mut bad = Vec::new();
    for (file, text) in texts(&listed()) {
        for (n, line) in text.lines().enumerate() {
            for found in internal_numbers(line) {
                bad.push(format!("{file}:{}: {found}", n + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "issue numbers of a tracker the reader does not have (name the behaviour instead):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_rules_themselves() {
    // Issue numbers: internal ones fail, a project's pass.
    assert_eq!(internal_numbers("the clock (issue 11)."), ["issue 11"]);
    assert_eq!(internal_numbers("Issue 11: a take"), ["Issue 11"]);
    assert_eq!(
        internal_numbers("targets (issues 13 item 5 and 16 item 4)"),
        ["issues 13", "item 5", "item 4"]
    );
    assert_eq!(
        internal_numbers("/* Issue 11: the C ABI (issue 13, item 5)"),
        ["Issue 11", "issue 13", "item 5"]
    );
    assert!(internal_numbers("Envoy issue 16392 and golang/go issue 7").is_empty());
    assert!(internal_numbers("envoyproxy/envoy#16392, HikariCP #2004").is_empty());
    assert!(internal_numbers("item 42 made and given back").is_empty());
    // Citations: a missing document fails, build output and system headers
    // pass, paths resolve from the citing folder upward.
    let files: BTreeSet<String> = ["docs/design.md", "bay/web/bay.js", "README.md"]
        .map(String::from)
        .into();
    let dirs: BTreeSet<String> = ["docs", "bay", "bay/web", "bay/src"]
        .map(String::from)
        .into();
    let names: BTreeSet<String> = ["design.md", "bay.js", "README.md"]
        .map(String::from)
        .into();
    let missing = |file: &str, line: &str| missing_on(file, line, &files, &dirs, &names);
    assert_eq!(
        missing("README.md", "see DESIGN.md, scenario 1"),
        ["DESIGN.md"]
    );
    assert_eq!(missing("README.md", "docs/missing.md"), ["docs/missing.md"]);
    assert!(missing("README.md", "docs/design.md and ./README.md.").is_empty());
    assert!(missing("bay/src/lib.rs", "driven by `web/bay.js`").is_empty());
    assert!(missing("docs/x.md", "[b](../README.md#top)").is_empty());
    assert!(missing("a.c", "#include <sys/mman.h> target/x.md $d/x.sh").is_empty());
    assert!(missing("a.rs", r#"dir.join("empty.rs")"#).is_empty());
}
