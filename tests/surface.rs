//! The surface check: every function and handle type a face of weir
//! declares is reached by each sweep that guards that face. Today the face
//! is the C header (include/weir.h) and its sweeps are the hostile sweep
//! (tests/hostile.rs) and the fuzz targets (fuzz/fuzz_targets/*.rs); a
//! function added to the header without a call in both fails here, naming
//! it.
//!
//! The sweeps are read as text: a function counts as reached when the code
//! (comments left out) calls it, `name(`; a handle type when the code names
//! it or calls a function that makes one (a `weir_x **` out-parameter).
//!
//! A later face (the C++ header, the Go package) joins [`FACES`] with one
//! entry: the file that declares it, a reader for its declarations, and its
//! sweeps.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// What a face declares: its functions, and each handle type with the
/// functions that make one.
#[derive(Default)]
struct Surface {
    functions: BTreeSet<String>,
    handles: Vec<(String, Vec<String>)>,
}

/// Files whose code must reach every name of a face. A path ending in
/// `/*.rs` (or any `/*.ext`) is every such file in that directory.
struct Sweep {
    name: &'static str,
    files: &'static [&'static str],
}

struct Face {
    name: &'static str,
    /// The file that declares the face, from the repository root.
    declares: &'static str,
    /// Reads the face's declarations from that file's text.
    read: fn(&str) -> Surface,
    sweeps: &'static [Sweep],
}

const FACES: &[Face] = &[Face {
    name: "C header",
    declares: "include/weir.h",
    read: c_header,
    sweeps: &[
        Sweep {
            name: "the hostile sweep",
            files: &["tests/hostile.rs"],
        },
        Sweep {
            name: "the fuzz targets",
            files: &["fuzz/fuzz_targets/*.rs"],
        },
    ],
}];

/// Reads a C header: a function is a declaration at column 0 whose first
/// identifier before `(` starts with `weir_`; a handle is an opaque
/// `typedef struct weir_x weir_x;`, made by the functions whose
/// declaration has a `weir_x **` parameter.
fn c_header(text: &str) -> Surface {
    let mut surface = Surface::default();
    let mut declarations = Vec::new();
    let mut open: Option<String> = None;
    for line in text.lines() {
        if let Some(declaration) = open.as_mut() {
            declaration.push(' ');
            declaration.push_str(line.trim());
        } else if line.starts_with(|c: char| c.is_ascii_alphabetic()) && line.contains('(') {
            open = Some(line.to_string());
        } else if let Some(rest) = line.strip_prefix("typedef struct ") {
            let words: Vec<&str> = rest.trim_end_matches(';').split_whitespace().collect();
            if let [tag, name] = words[..] {
                if tag == name && name.starts_with("weir_") {
                    surface.handles.push((name.to_string(), Vec::new()));
                }
            }
        }
        if open.as_ref().is_some_and(|d| d.trim_end().ends_with(';')) {
            declarations.push(open.take().unwrap());
        }
    }
    for declaration in declarations {
        let before = &declaration[..declaration.find('(').unwrap()];
        let Some(name) = identifiers(before).last().copied() else {
            continue;
        };
        if !name.starts_with("weir_") || NOT_CALLABLE.iter().any(|skip| skip(name)) {
            continue;
        }
        for (handle, makers) in &mut surface.handles {
            if declaration.contains(&format!("{handle} **")) {
                makers.push(name.to_string());
            }
        }
        surface.functions.insert(name.to_string());
    }
    surface
}

/// Names the header declares that are not weir's to sweep:
/// - `weir_critical_enter` / `weir_critical_exit`: the firmware hooks an SDK
///   defines and weir calls (feature sdk-critical-section), never defined
///   by the library;
/// - `weir_hosted_only_*`: the firmware header's stand-ins that turn a call
///   to a host-only function into a compile error;
/// - the header's `static inline` fast paths (`*_inline`, and their
///   helpers `*_inline_`): C only, so no Rust sweep can call them;
///   tests/c/rate_inline.c keeps each in step with its out-of-line call.
const NOT_CALLABLE: &[fn(&str) -> bool] = &[
    |name| name == "weir_critical_enter" || name == "weir_critical_exit",
    |name| name.starts_with("weir_hosted_only_"),
    |name| name.ends_with("_inline") || name.ends_with("_inline_"),
];

/// The identifiers in `text`, in order.
fn identifiers(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .collect()
}

/// What a sweep's code reaches: the identifiers it calls and the ones it
/// names, with `//` comments left out.
struct Reached {
    called: BTreeSet<String>,
    named: BTreeSet<String>,
}

fn reached(root: &Path, sweep: &Sweep) -> Reached {
    let mut reached = Reached {
        called: BTreeSet::new(),
        named: BTreeSet::new(),
    };
    let mut files = Vec::new();
    for pattern in sweep.files {
        match pattern.rsplit_once("/*") {
            Some((dir, ext)) => {
                let entries = fs::read_dir(root.join(dir))
                    .unwrap_or_else(|e| panic!("{}: {dir}: {e}", sweep.name));
                for entry in entries {
                    let path = entry.unwrap().path();
                    if path.to_string_lossy().ends_with(ext) {
                        files.push(path);
                    }
                }
            }
            None => files.push(root.join(pattern)),
        }
    }
    assert!(!files.is_empty(), "{}: no files", sweep.name);
    for path in files {
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
                rest = &rest[start..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                let (word, after) = rest.split_at(end);
                if after.trim_start().starts_with('(') {
                    reached.called.insert(word.to_string());
                }
                reached.named.insert(word.to_string());
                rest = after;
            }
        }
    }
    reached
}

/// What each sweep of `face` misses, as lines for a failure message.
fn missing(root: &Path, face: &Face) -> Vec<String> {
    let text = fs::read_to_string(root.join(face.declares))
        .unwrap_or_else(|e| panic!("{}: {e}", face.declares));
    let surface = (face.read)(&text);
    assert!(
        surface.functions.len() >= 10 && !surface.handles.is_empty(),
        "{}: read only {} functions and {} handles from {}: is the reader broken?",
        face.name,
        surface.functions.len(),
        surface.handles.len(),
        face.declares
    );
    let mut gaps = Vec::new();
    for sweep in face.sweeps {
        let reached = reached(root, sweep);
        for function in &surface.functions {
            if !reached.called.contains(function) {
                gaps.push(format!(
                    "{} function {function}: not called by {}",
                    face.name, sweep.name
                ));
            }
        }
        for (handle, makers) in &surface.handles {
            if !reached.named.contains(handle) && !makers.iter().any(|m| reached.called.contains(m))
            {
                gaps.push(format!(
                    "{} handle {handle}: neither named nor made (by {makers:?}) in {}",
                    face.name, sweep.name
                ));
            }
        }
    }
    gaps
}

#[test]
fn every_function_and_handle_is_swept_and_fuzzed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let gaps: Vec<String> = FACES.iter().flat_map(|face| missing(root, face)).collect();
    assert!(
        gaps.is_empty(),
        "{} gap(s): add each to the sweep named (tests/hostile.rs, fuzz/fuzz_targets/):\n{}",
        gaps.len(),
        gaps.join("\n")
    );
}

#[test]
fn the_reader_finds_the_c_header_surface() {
    let surface = c_header(
        "typedef struct weir_thing weir_thing;\n\
         // weir_commented(void);\n\
         #define WEIR_X(a) (a)\n\
         weir_status weir_thing_new(int64_t limit,\n\
                                    weir_thing **out);\n\
         bool weir_thing_allow(const weir_thing *thing, int64_t now);\n",
    );
    let functions: Vec<&str> = surface.functions.iter().map(String::as_str).collect();
    assert_eq!(functions, ["weir_thing_allow", "weir_thing_new"]);
    assert_eq!(
        surface.handles,
        [("weir_thing".to_string(), vec!["weir_thing_new".to_string()])]
    );
}
