//! Compiles C programs against the freshly built static library: the C
//! tests, the C examples and the header checks all come through here, so a
//! machine with a Rust toolchain and a C compiler needs nothing else.
//! Included by tests/c.rs as a module and by c-examples/run (the runner of
//! `cargo run --example c`) as its library.
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

/// The newest `libweir*.a` of the running executable's profile, where cargo
/// puts the library's static build for tests and examples.
pub fn static_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // Tests run from target/<profile>/deps, examples from
    // target/<profile>/examples; the library is in deps or the profile dir.
    let profile = exe.parent().unwrap().parent().unwrap();
    let dirs = [profile.join("deps"), profile.to_path_buf()];
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = dirs
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with("libweir") && name.ends_with(".a")
        })
        .filter_map(|path| Some((path.metadata().ok()?.modified().ok()?, path)))
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, path)| path)
        .expect("libweir.a not found beside the executable; build with `cargo test`")
}

/// The system libraries a Rust static library needs on this target, as
/// `rustc --print native-static-libs` lists them. Asked once per process:
/// the C programs compile on many threads at once, and each asking rustc in
/// one shared scratch directory let one thread delete it under another.
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
        .unwrap_or(" -lpthread -lm -ldl -lc");
    line.split_whitespace().map(str::to_owned).collect()
}

/// The host's target triple, as `rustc -vV` reports it.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let output = Command::new(rustc)
        .arg("-vV")
        .output()
        .expect("run rustc -vV");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

/// The C or C++ compiler cc picks for this host.
pub fn compiler(cpp: bool) -> cc::Tool {
    let target = host_triple();
    cc::Build::new()
        .cpp(cpp)
        .host(&target)
        .target(&target)
        .opt_level(1)
        .cargo_metadata(false)
        .warnings(false)
        .get_compiler()
}

/// Compiles and links one C (or, with `cpp`, C++) file into `out` against
/// the static library. Returns the compiler's output on failure.
pub fn build(source: &Path, out: &Path, cpp: bool) -> Result<(), String> {
    let tool = compiler(cpp);
    let mut cmd = Command::new(tool.path());
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

/// Where compiled C programs go: `c/` in the profile's target directory.
pub fn out_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().unwrap().parent().unwrap().join("c");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
