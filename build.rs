//! Tells the crate's own tests and examples which target they are built for.
//! tests/support/cbuild.rs compiles the C programs with that target's C
//! compiler and runs them through its CARGO_TARGET_<TRIPLE>_RUNNER, so that
//! `cargo test --target <triple>` checks the C side on that target too.
//! Nothing here touches the library itself.

fn main() {
    for name in ["TARGET", "HOST"] {
        let value = std::env::var(name).expect("cargo sets TARGET and HOST for build scripts");
        println!("cargo:rustc-env=WEIR_BUILD_{name}={value}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
