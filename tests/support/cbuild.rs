//! Compiles C programs against the freshly built static library and runs
//! them: the C tests, the C examples and the header checks all come through
//! here, so a machine with a Rust toolchain and a C compiler needs nothing
//! else.
//!
//! Everything follows the target cargo built for, so that
//! `cargo test --target <triple>` checks the C side on that target too:
//! - the triple comes from build.rs (cargo's `TARGET`, passed on as
//!   `WEIR_BUILD_TARGET`);
//! - the C compiler is that target's, as the `cc` crate picks it
//!   (`aarch64-linux-gnu-gcc` for aarch64-unknown-linux-gnu, and so on;
//!   `CC_<triple>` or `TARGET_CC` overrides it);
//! - the system libraries are those `rustc --print native-static-libs
//!   --target <triple>` names;
//! - the archive is `deps/libweir.a` of this binary's own profile directory
//!   (see [`static_lib`] for why that path is exact);
//! - each program runs through `CARGO_TARGET_<TRIPLE>_RUNNER` when it is set
//!   (for example `qemu-aarch64 -L /usr/aarch64-linux-gnu`), as cargo runs
//!   the Rust tests.
//!
//! Included by tests/c.rs as a module and by c-examples/run (the runner of
//! `cargo run --example c`) as its library; both crates' build scripts pass
//! the target on.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The flags every C file of the project compiles with.
pub const C_FLAGS: &[&str] = &[
    "-std=c11",
    "-Wall",
    "-Wextra",
    "-Wpedantic",
    "-Werror",
    "-g",
];

/// The flags the header is checked with as C++.
pub const CXX_FLAGS: &[&str] = &["-std=c++11", "-Wall", "-Wextra", "-Wpedantic", "-Werror"];

/// The repository root: the nearest directory up from the crate that
/// compiles this file holding `include/weir.h`.
pub fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|dir| dir.join("include/weir.h").is_file())
        .unwrap_or(&manifest)
        .to_path_buf()
}

/// The target triple this binary (and so the library) was built for.
pub fn target() -> &'static str {
    env!("WEIR_BUILD_TARGET")
}

/// The triple of the machine that built it.
pub fn host() -> &'static str {
    env!("WEIR_BUILD_HOST")
}

/// The profile directory this binary was built into:
/// `<target-dir>/[<triple>/]<profile>/`. Tests run from its `deps/`,
/// examples from its `examples/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("the binary lies two levels inside its profile directory")
        .to_path_buf()
}

/// The static library built for this binary's target and profile:
/// `<profile dir>/deps/libweir.a`.
///
/// Exact, not a guess among candidates: cargo gives a local package's
/// library no `-<hash>` file-name suffix when one of its crate types is a
/// `cdylib` (a C linker must find it by its plain name), so rustc writes
/// this crate's archive to exactly this path in each target's profile
/// directory, and rewrites it on every build of the library there. The
/// test or example running now was linked in the same directory by the
/// same cargo invocation, after the library it depends on was built.
pub fn static_lib() -> PathBuf {
    let path = profile_dir().join("deps").join("libweir.a");
    assert!(
        path.is_file(),
        "{} not found: build with `cargo test` or `cargo build --example c`",
        path.display()
    );
    path
}

/// The system libraries a Rust static library needs on this target, as
/// `rustc --print native-static-libs --target <triple>` lists them. Asked
/// once per process: the C programs compile on many threads at once, and
/// each asking rustc in one shared scratch directory let one thread delete
/// it under another.
pub fn native_libs() -> Vec<String> {
    static LIBS: OnceLock<Vec<String>> = OnceLock::new();
    LIBS.get_or_init(ask_rustc_for_native_libs).clone()
}

fn ask_rustc_for_native_libs() -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("weir-native-libs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("empty.rs");
    std::fs::write(&src, "").unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = Command::new(rustc)
        .args(["--target", target()])
        .args([
            "--crate-type",
            "staticlib",
            "--print",
            "native-static-libs",
            "-o",
        ])
        .arg(dir.join("libempty.a"))
        .arg(&src)
        .output()
        .expect("run rustc");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&output.stderr).into_owned()
        + &String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find_map(|line| line.split("native-static-libs:").nth(1))
        .unwrap_or_else(|| {
            panic!(
                "rustc --target {} printed no native-static-libs line:\n{text}",
                target()
            )
        });
    line.split_whitespace().map(str::to_owned).collect()
}

/// The C or C++ compiler cc picks for this target, with the flags it
/// adds for it (for example `-m32`, or `--target=` for clang).
pub fn compiler(cpp: bool) -> cc::Tool {
    cc::Build::new()
        .cpp(cpp)
        .host(host())
        .target(target())
        .opt_level(1)
        .debug(false)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .warnings(false)
        .get_compiler()
}

/// Compiles and links one C (or, with `cpp`, C++) file into `out` against
/// the static library. Returns the compiler's output on failure.
pub fn build(source: &Path, out: &Path, cpp: bool) -> Result<(), String> {
    let mut cmd = compiler(cpp).to_command();
    cmd.args(if cpp { CXX_FLAGS } else { C_FLAGS })
        .arg("-I")
        .arg(root().join("include"))
        .arg(source)
        .arg(static_lib())
        .args(native_libs())
        .arg("-o")
        .arg(out);
    let output = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// The runner cargo uses for this target, `CARGO_TARGET_<TRIPLE>_RUNNER`,
/// split into words the way a shell would (quotes and backslashes), or
/// empty when none is set.
pub fn runner() -> Vec<String> {
    let name = format!(
        "CARGO_TARGET_{}_RUNNER",
        target().to_uppercase().replace(['-', '.'], "_")
    );
    std::env::var(&name)
        .map(|value| shell_words(&value).unwrap_or_else(|e| panic!("{name}={value:?}: {e}")))
        .unwrap_or_default()
}

/// A command that runs `exe` on this target: directly, or through the
/// runner.
pub fn command(exe: &Path) -> Command {
    let runner = runner();
    match runner.split_first() {
        Some((program, args)) => {
            let mut cmd = Command::new(program);
            cmd.args(args).arg(exe);
            cmd
        }
        None => Command::new(exe),
    }
}

/// Splits `line` into words as a POSIX shell does without expansions:
/// blanks separate words, '…' keeps everything, "…" keeps everything but
/// `\"`, `\\`, `\$` and `` \` ``, and a backslash outside quotes keeps the
/// next character.
pub fn shell_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if let Some(done) = word.take() {
                    words.push(done);
                }
            }
            '\'' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unterminated '".into()),
                    }
                }
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unterminated \"".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unterminated \"".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err("a backslash ends the line".into()),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

/// Where compiled C programs go: `c/` in the profile's directory.
pub fn out_dir() -> PathBuf {
    let dir = profile_dir().join("c");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
