//! Whether the tests run under an emulator, and how much shorter the slow
//! ones run there. Under `cargo test --target <triple>` with a
//! `CARGO_TARGET_<TRIPLE>_RUNNER` (qemu-aarch64 in CI) each case costs many
//! times what it costs natively; the properties check the same algorithm on
//! every CPU, so a sample of their cases is kept there.
#![allow(dead_code)]

/// Whether cargo was told to run test binaries through a runner (an
/// emulator) for some target: the runner variables are set only for cross
/// runs, and a test cannot name its own target without a build script.
pub fn through_a_runner() -> bool {
    std::env::vars_os().any(|(name, value)| {
        let name = name.to_string_lossy();
        name.starts_with("CARGO_TARGET_") && name.ends_with("_RUNNER") && !value.is_empty()
    })
}

/// How many cases a property runs: `full` natively, an eighth of it (at
/// least 32) through a runner.
pub fn cases(full: u32) -> u32 {
    if through_a_runner() {
        (full / 8).max(32).min(full)
    } else {
        full
    }
}
