//! `include/weir.h` is generated from the C crate (`src/`) by cbindgen and committed.
//! This test regenerates it and fails when the committed file is stale.
//! Regenerate with: WEIR_BLESS=1 cargo test --test header

use std::path::PathBuf;

/// The header as cbindgen makes it from the current source.
fn generate() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("read cbindgen.toml");
    let version = format!(
        "\n#define WEIR_VERSION \"{}\"\n#define WEIR_VERSION_MAJOR {}\n#define WEIR_VERSION_MINOR {}\n#define WEIR_VERSION_PATCH {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
    );
    // cbindgen.toml's own after_includes (the hosted/firmware switch) follow
    // the version block.
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
    with_inline_fast_paths(with_hosted_only_block(String::from_utf8(out).unwrap()))
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
                    names.push(name.to_owned());
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
  \"(WEIR_FREESTANDING) has no heap handles; see README.md, Firmware\"
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

/// One version for the whole release: the crates (the workspace's
/// version), the header's block (generated from it) and CMake's
/// `project(weir VERSION ...)` must agree, and the root crate must depend
/// on the weir-core of the same version.
#[test]
fn every_version_agrees() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let version = env!("CARGO_PKG_VERSION");
    let cmake = std::fs::read_to_string(root.join("CMakeLists.txt")).unwrap();
    assert!(
        cmake.contains(&format!("project(weir VERSION {version} ")),
        "CMakeLists.txt's project VERSION is not {version}"
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
