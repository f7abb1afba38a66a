#!/usr/bin/env bash
# about: cargo test -p bay: the bay crate's own Rust tests; the conformance traces replayed by the bay's wasm build under node
# tier: full
# order: 190
# needs-commands: cargo node=nodejs
# needs-rust-targets: wasm32-unknown-unknown
#
# The bay is a workspace member outside the default ones (its page needs
# wasm and Chromium, the bay stage's), so the README's `cargo test` leaves
# its Rust tests out. Then the wasm build the page runs replays traces/
# through its bay_<op> exports (bay/test/traces.mjs, plain node: no
# browser, no npm packages).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --locked -p bay
cargo build --locked --release -p bay --lib --target wasm32-unknown-unknown -q
node bay/test/traces.mjs target/wasm32-unknown-unknown/release/bay.wasm traces
