#!/usr/bin/env bash
# about: rustfmt and clippy (-D warnings) on the default members
# tier: full
# order: 20
# needs-commands: cargo
# needs-rust-components: rustfmt clippy
#
# Formatting and lints on the default members; the Redis module's lints
# are its own stage's (redis), the firmware build's the firmware stage's.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo fmt --all --check
cargo clippy --locked --all-targets -- -D warnings
