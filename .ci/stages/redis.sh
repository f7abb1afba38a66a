#!/usr/bin/env bash
# about: the Redis module: clippy, its build, the README's fleet example, its unit tests and its tests against a real primary and replica, INFO weir's counts included
# tier: full
# order: 160
# needs-commands: cargo redis-server=redis-server redis-cli=redis-server python3=python3
# needs-rust-components: clippy
#
# CI for the Redis module (modules/redis): builds the module and
# runs its unit tests and its tests against real redis-servers (a primary
# and a replica on 127.0.0.1, started and stopped by the tests). Needs
# Debian's redis-server (the install stage's). Needs no libclang: the module
# binds the Redis module API by hand. tests/traces.rs replays the
# conformance traces on the module's test build (feature test-clock, built
# into target/redis-test-clock), and checks the release build has no test
# clock. Runs from the repo root, no stdin;
# closes on cargo test's own result line.
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "== $(redis-server --version)"

echo "== modules/redis: clippy"
cargo clippy --locked -p weir-redis --all-targets -- -D warnings
echo "== modules/redis: clippy, the test build (feature test-clock)"
cargo clippy --locked -p weir-redis --all-targets --features test-clock -- -D warnings

echo "== modules/redis: build the module"
cargo build --locked -p weir-redis --lib
export WEIR_REDIS_MODULE="${CARGO_TARGET_DIR:-$PWD/target}/debug/libweir_redis.so"
test -f "$WEIR_REDIS_MODULE"

echo "== modules/redis: the README's fleet example"
modules/redis/examples/fleet.sh

echo "== modules/redis: unit tests and server tests"
cargo test --locked -p weir-redis
