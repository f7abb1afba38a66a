//! Builds the C library, then one C example from `c-examples/` against it,
//! and runs it: `cargo run --release --example c -- tour` runs
//! `c-examples/tour.c`. With no name it lists the examples. With
//! `--target <triple>` it builds with that target's C compiler and runs the
//! program through `CARGO_TARGET_<TRIPLE>_RUNNER` when one is set.
//!
//! The library is built by a nested `cargo build --lib -p weir` in the same
//! profile and target directory, so afterwards `target/<profile>/libweir.a`
//! and `libweir.so` are where the README's next commands look, and the
//! root crate's test dependencies are never built.

use std::path::PathBuf;
use std::process::{exit, Command};

use weir_c_examples as cbuild;

/// `target/<profile>` of this executable (`target/<profile>/examples/c`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// Builds the C library (libweir.a, libweir.so) in this executable's
/// profile and target directory.
fn build_library() -> Result<(), String> {
    let profile = profile_dir();
    // target/<profile>, or target/<triple>/<profile> with --target.
    let cross = cbuild::target() != cbuild::host();
    let target_dir = if cross {
        profile.parent().and_then(|dir| dir.parent()).unwrap()
    } else {
        profile.parent().unwrap()
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(cbuild::root())
        .args(["build", "--lib", "-p", "weir", "--target-dir"])
        .arg(target_dir);
    if profile.file_name().is_some_and(|name| name == "release") {
        cmd.arg("--release");
    }
    if cross {
        cmd.args(["--target", cbuild::target()]);
    }
    let status = cmd.status().map_err(|e| format!("{cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed: {status}"))
    }
}

fn main() {
    let examples = cbuild::root().join("c-examples");
    let Some(name) = std::env::args().nth(1) else {
        let mut names: Vec<String> = std::fs::read_dir(&examples)
            .unwrap()
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                (path.extension()? == "c")
                    .then(|| path.file_stem().unwrap().to_string_lossy().into_owned())
            })
            .collect();
        names.sort();
        eprintln!(
            "usage: cargo run --example c -- NAME\nexamples: {}",
            names.join(" ")
        );
        exit(2);
    };
    let source = examples.join(format!("{name}.c"));
    if !source.exists() {
        eprintln!("no example {}", source.display());
        exit(2);
    }
    if let Err(message) = build_library() {
        eprintln!("{message}");
        exit(1);
    }
    let exe = cbuild::out_dir().join(format!("example-{name}"));
    if let Err(message) = cbuild::build(&source, &exe, false) {
        eprintln!("{message}");
        exit(1);
    }
    let status = cbuild::command(&exe)
        .args(std::env::args().skip(2))
        .status()
        .expect("run the example");
    exit(status.code().unwrap_or(1));
}
