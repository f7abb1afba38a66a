#!/usr/bin/env bash
# about: cargo test -p bay: the bay crate's own Rust tests
# tier: full
# order: 190
# needs-commands: cargo
#
# The bay is a workspace member outside the default ones (its page needs
# wasm and Chromium, the bay stage's), so the README's `cargo test` leaves
# its Rust tests out; they need nothing but cargo.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --locked -p bay
