//! Three jobs, none of which changes the library's code:
//!
//! - Gives libweir.so its SONAME, from the crate version (the one place the
//!   version lives: the workspace's Cargo.toml). The convention: while the
//!   major version is 0, every minor release may break the C API (0.1 → 0.2
//!   does), so the SONAME carries major and minor (`libweir.so.0.2` for
//!   every 0.2.x); from 1.0 on it carries the major alone (`libweir.so.1`).
//!   A patch release keeps the SONAME, so programs linked against 0.2.0 run
//!   against 0.2.3. CMake installs the file as `libweir.so.<full version>`
//!   with the SONAME and `libweir.so` as symlinks.
//! - Tells the crate's own tests and examples which target they are built
//!   for: tests/support/cbuild.rs compiles the C programs with that target's
//!   C compiler and runs them through its CARGO_TARGET_<TRIPLE>_RUNNER, so
//!   that `cargo test --target <triple>` checks the C side on that target.
//! - Names the compiler (`rustc -vV`) for the layout fingerprint of shared
//!   regions (src/region.rs).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for name in ["TARGET", "HOST"] {
        let value = std::env::var(name).expect("cargo sets TARGET and HOST for build scripts");
        println!("cargo:rustc-env=WEIR_BUILD_{name}={value}");
    }
    // The compiler, for the fingerprint of a shared region's layout
    // (src/region.rs): Rust lays out its structs as it sees fit, so two
    // compilers may lay one handle differently.
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).replace('\n', " "))
        .unwrap_or_default();
    println!("cargo:rustc-env=WEIR_BUILD_RUSTC={version}");
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap();
    let soname = if major == "0" {
        format!("libweir.so.0.{minor}")
    } else {
        format!("libweir.so.{major}")
    };
    // ELF targets only: Mach-O and PE name their libraries differently.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = !matches!(os.as_str(), "macos" | "ios" | "windows" | "none" | "")
        && std::env::var("CARGO_CFG_TARGET_FAMILY")
            .is_ok_and(|f| f.split(',').any(|f| f == "unix"));
    if elf {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
}
