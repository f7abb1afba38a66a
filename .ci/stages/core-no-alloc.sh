#!/usr/bin/env bash
# about: weir-core without alloc (no_std): its tests, and clippy over them
# tier: quick
# order: 30
# needs-commands: cargo
# needs-rust-components: clippy
#
# The core is no_std: its tests pass without alloc too (the types that need
# an allocator drop out, and so do the integration tests that use them;
# this supersedes the old `--lib` form). It lints without alloc too: code
# only the alloc types use is dead there, which tests only warn about and
# the firmware stage's clippy refuses. A build for targets without std
# (thumbv7em, thumbv6m) is the firmware stage's.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --locked -p weir-core --no-default-features
cargo clippy --locked -p weir-core --no-default-features --all-targets -- -D warnings
