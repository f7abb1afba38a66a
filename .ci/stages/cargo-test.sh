#!/usr/bin/env bash
# about: cargo test --locked, the README's test command: every Rust test of the default members, the C and C++ programs through the C harness
# tier: quick
# order: 10
# needs-commands: cargo cc=gcc c++=g++
#
# The first test stage is the README's command as a user runs it, on the
# default members (the root crate, weir-core and c-examples/run). loom's
# models (about 50 s, and about 40 s more for the keyed table's two) and
# the full hostile sweep are among its tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --locked
