#!/usr/bin/env bash
# about: the whole suite built for i686 (32-bit) and run natively
# tier: full
# order: 210
# needs-commands: cargo i686-linux-gnu-gcc=gcc-i686-linux-gnu i686-linux-gnu-g++=g++-i686-linux-gnu
# needs-apt: libc6-dev-i386-cross libc6-i386 lib32gcc-s1
# needs-rust-targets: i686-unknown-linux-gnu
#
# Every Rust test of the default members and every C program, compiled for
# i686 (i686-linux-gnu-gcc; gcc-multilib conflicts with the aarch64 cross
# compiler) and run natively with the i386 loader, libc and libgcc_s.
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO_TARGET_I686_UNKNOWN_LINUX_GNU_LINKER=i686-linux-gnu-gcc \
  cargo test --locked --target i686-unknown-linux-gnu
