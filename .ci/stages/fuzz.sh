#!/usr/bin/env bash
# about: coverage-guided fuzzing of the C ABI: every cargo-fuzz target for 25 s from its corpus, under AddressSanitizer
# tier: full
# order: 220
# long: WEIR_FUZZ_SECONDS=3600 (or any number of seconds a target)
# needs-commands: cargo
# needs-toolchain: fuzz/rust-toolchain.toml
# needs-cargo-install: cargo-fuzz
#
# Coverage-guided fuzzing of the C ABI: every cargo-fuzz target in fuzz/
# runs for a fixed time (WEIR_FUZZ_SECONDS, default 25) from its committed
# corpus, under AddressSanitizer, with overflow checks and debug
# assertions on. Any crash (a failed model check, a panic, even one weir's
# guard would catch, or a memory error) fails the run; the input is left in
# fuzz/artifacts/<target>/ with the command that replays it.
#
# Needs: the nightly pinned in fuzz/rust-toolchain.toml and cargo-fuzz
# (`cargo install cargo-fuzz --locked`, about a minute), both the install
# stage's. New inputs go to a scratch directory, so the
# committed corpus is left as it is; `cargo fuzz run <target>` from fuzz/
# grows it.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${WEIR_FUZZ_SECONDS:-25}

. .ci/nightly.sh
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "no cargo-fuzz (cargo install cargo-fuzz --locked, or bash .ci/run install)" >&2
  exit 1
fi

cd fuzz
echo "== cargo fuzz build ($NIGHTLY, $(cargo fuzz --version))"
cargo "+$NIGHTLY" fuzz build
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

passed=0
failed=0
for target in $(cargo "+$NIGHTLY" fuzz list); do
  echo "== fuzz $target: ${seconds} s"
  mkdir -p "$scratch/$target" "corpus/$target"
  if cargo "+$NIGHTLY" fuzz run "$target" "$scratch/$target" "corpus/$target" -- \
      -max_total_time="$seconds" -timeout=10 -print_final_stats=1 2>"$scratch/$target.log"; then
    grep -E '^(stat::number_of_executed_units|#[0-9]+ +DONE)' "$scratch/$target.log" || true
    passed=$((passed + 1))
  else
    grep -A3 -E "panicked at|ERROR: AddressSanitizer" "$scratch/$target.log" | head -n 20 || true
    tail -n 30 "$scratch/$target.log"
    echo "FAILED: fuzz target $target (input in fuzz/artifacts/$target/)"
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
