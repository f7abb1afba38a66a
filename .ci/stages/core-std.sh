#!/usr/bin/env bash
# about: weir-core's unit tests with std (its thread tests)
# tier: full
# order: 40
# needs-commands: cargo
#
# `std` changes only the crate's own cfg (its thread tests), so the lib's
# tests are what differ; the integration tests (loom's 50 s among them)
# already ran in cargo-test.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --locked -p weir-core --features std --lib
