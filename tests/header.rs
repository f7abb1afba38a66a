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
    // cbindgen.toml's after_includes (the WEIR_ALIGN macro) comes first;
    // with_after_include would replace it, so the version joins it.
    let after_includes = config.after_includes.clone().unwrap_or_default() + &version;
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/lib.rs"))
        .with_after_include(after_includes)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).unwrap()
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
    assert!(
        manifest.contains(&format!(
            "weir-core = {{ path = \"weir-core\", version = \"{version}\" }}"
        )),
        "Cargo.toml's weir-core dependency is not version {version}"
    );
    let header = std::fs::read_to_string(root.join("include/weir.h")).unwrap();
    assert!(header.contains(&format!("#define WEIR_VERSION \"{version}\"")));
}
