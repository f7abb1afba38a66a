#!/usr/bin/env bash
# about: coverage-guided fuzzing of the C ABI: every cargo-fuzz target for 15 s from its corpus, under AddressSanitizer, one a core side by side
# tier: full
# order: 220
# long: WEIR_FUZZ_SECONDS=3600 (or any number of seconds a target)
# needs-commands: cargo
# needs-toolchain: fuzz/rust-toolchain.toml
# needs-cargo-install: cargo-fuzz
#
# Coverage-guided fuzzing of the C ABI: every cargo-fuzz target in fuzz/
# runs for a fixed time (WEIR_FUZZ_SECONDS, default 15) from its committed
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
#
# A libFuzzer run is one process on one core, so the targets run side by
# side, WEIR_FUZZ_JOBS at a time (default: one a core): each still fuzzes
# for its full WEIR_FUZZ_SECONDS on a core of its own, and the stage takes
# half the time on two cores. Each target's report is printed when it ends,
# in the order `cargo fuzz list` gives.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${WEIR_FUZZ_SECONDS:-15}
jobs=${WEIR_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
((jobs >= 1)) || jobs=1

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

fuzz_one() { # target: one run, its output kept in $scratch
  mkdir -p "$scratch/$1" "corpus/$1"
  cargo "+$NIGHTLY" fuzz run "$1" "$scratch/$1" "corpus/$1" -- \
    -max_total_time="$seconds" -timeout=10 -print_final_stats=1 >"$scratch/$1.out" 2>"$scratch/$1.log"
}

passed=0
failed=0
mapfile -t targets < <(cargo "+$NIGHTLY" fuzz list)
for ((first = 0; first < ${#targets[@]}; first += jobs)); do
  batch=("${targets[@]:first:jobs}")
  pids=()
  for target in "${batch[@]}"; do
    echo "== fuzz $target: ${seconds} s"
    fuzz_one "$target" &
    pids+=($!)
  done
  for i in "${!batch[@]}"; do
    target=${batch[$i]}
    if wait "${pids[$i]}"; then
      cat "$scratch/$target.out"
      echo "== fuzz $target: done"
      grep -E '^(stat::number_of_executed_units|#[0-9]+ +DONE)' "$scratch/$target.log" || true
      passed=$((passed + 1))
    else
      cat "$scratch/$target.out"
      grep -A3 -E "panicked at|ERROR: AddressSanitizer" "$scratch/$target.log" | head -n 20 || true
      tail -n 30 "$scratch/$target.log"
      echo "FAILED: fuzz target $target (input in fuzz/artifacts/$target/)"
      failed=$((failed + 1))
    fi
  done
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
