//! Tells the example runner which target it is built for, as the root
//! crate's build.rs tells its tests: tests/support/cbuild.rs (this crate's
//! library) compiles the C example with that target's C compiler.

fn main() {
    for name in ["TARGET", "HOST"] {
        let value = std::env::var(name).expect("cargo sets TARGET and HOST for build scripts");
        println!("cargo:rustc-env=WEIR_BUILD_{name}={value}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
