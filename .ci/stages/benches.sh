#!/usr/bin/env bash
# about: the criterion benchmarks, each compiled and run once in test mode
# tier: full
# order: 50
# needs-commands: cargo
#
# The benchmarks are measured by `cargo bench` (BENCHMARKS.md); here each
# one is compiled and run once in criterion's test mode so none can rot.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --locked --bench decisions
