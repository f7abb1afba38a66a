#!/usr/bin/env bash
# about: the whole suite built for i686 (32-bit) and run natively, taking the emulator share of the slow tests
# tier: full
# order: 210
# long: WEIR_LONG=1 (every test at its full length, as on the host)
# needs-commands: cargo i686-linux-gnu-gcc=gcc-i686-linux-gnu i686-linux-gnu-g++=g++-i686-linux-gnu
# needs-apt: libc6-dev-i386-cross libc6-i386 lib32gcc-s1
# needs-rust-targets: i686-unknown-linux-gnu
#
# Every Rust test of the default members and every C program, compiled for
# i686 (i686-linux-gnu-gcc; gcc-multilib conflicts with the aarch64 cross
# compiler) and run natively with the i386 loader, libc and libgcc_s.
#
# The short form: the tests run through a runner that only runs them
# (`env`), so they take the share they take under qemu in the aarch64
# stage (weir-core/tests/support/runner.rs): loom's models are skipped
# (they check the memory model, which cargo-test's run already did), the
# hostile sweep runs 10% of its rounds, each property an eighth of its
# cases. What is 32-bit (layouts, 64-bit atomics, the C programs) is all
# still built and run. WEIR_LONG=1 runs them in full, as before (loom's
# models and the full properties add a minute or two).
set -euo pipefail
cd "$(dirname "$0")/../.."
short=(CARGO_TARGET_I686_UNKNOWN_LINUX_GNU_RUNNER=env)
if [ -n "${WEIR_LONG:-}" ]; then
  short=()
fi
env CARGO_TARGET_I686_UNKNOWN_LINUX_GNU_LINKER=i686-linux-gnu-gcc "${short[@]}" \
  cargo test --locked --target i686-unknown-linux-gnu
