#!/usr/bin/env bash
# about: Miri over the named subset of weir-core's unit tests (.ci/miri-tests.txt), in shares side by side
# tier: full
# order: 230
# long: WEIR_MIRI_ALL=1 or WEIR_LONG=1 (every unit test, well over ten minutes)
# needs-commands: cargo
# needs-toolchain: fuzz/rust-toolchain.toml +miri +rust-src
#
# Miri interprets weir-core's unit tests and fails on undefined behaviour,
# an arithmetic overflow or a leak. Built through .ci/core (weir-core's
# sources without its dev-dependencies). Long loops run a hundredth of
# their rounds under cfg(miri) (weir_core::rounds), and only the named
# subset in .ci/miri-tests.txt runs, so the run fits its budget of two
# minutes. WEIR_MIRI_ALL=1 (or WEIR_LONG=1) runs every unit test instead
# (well over ten minutes).
#
# Miri interprets on one core, so the subset runs as WEIR_MIRI_JOBS shares
# side by side (default: one a core; every other name of the list to each
# of two), after `cargo miri setup` and one build. Each share prints its
# own "test result:" line.
#
# Needs: the nightly pinned in fuzz/rust-toolchain.toml with miri and
# rust-src (the install stage's).
set -euo pipefail
cd "$(dirname "$0")/../.."
. .ci/nightly.sh miri rust-src

# The named subset: the tests in .ci/miri-tests.txt, each run by its exact
# name. Left out of it, among others: the bloom's 2^16- and 2^20-word
# arrays, the rate word's and the bucket's accuracy runs (a second's worth
# of calls, 100,000 takes), and sliding::tests::bad_sizes_are_errors (Miri
# stops the run with "resource exhaustion" where a real allocator answers an
# impossible try_reserve with an error, which is what that test checks).
# A new test joins the list once its time under Miri has been measured.
all=${WEIR_MIRI_ALL:-${WEIR_LONG:-}}
if [ -n "$all" ]; then
  echo "== Miri: weir-core unit tests ($NIGHTLY, all of them)"
  cd .ci/core
  exec cargo "+$NIGHTLY" miri test --target-dir ../../target/ci-miri --lib
fi
mapfile -t names < <(grep -v -e '^#' -e '^$' .ci/miri-tests.txt)
# Each name must still be a test (<module>::tests::<name>, a `fn <name>(` in
# weir-core/src/<module>.rs): --exact passes over a name no test has, so a
# renamed or removed test would leave the subset without a word.
stale=()
for name in "${names[@]}"; do
  grep -q "fn ${name##*::}(" "weir-core/src/${name%%::*}.rs" 2>/dev/null || stale+=("$name")
done
if ((${#stale[@]})); then
  echo "no such test in weir-core/src for these names in .ci/miri-tests.txt:"
  printf '  %s\n' "${stale[@]}"
  exit 1
fi
jobs=${WEIR_MIRI_JOBS:-$(nproc 2>/dev/null || echo 1)}
((jobs >= 1)) || jobs=1

echo "== Miri: weir-core unit tests ($NIGHTLY, ${#names[@]} named, $jobs shares)"
cd .ci/core
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cargo "+$NIGHTLY" miri setup
pids=()
for ((share = 0; share < jobs; share++)); do
  mine=()
  for i in "${!names[@]}"; do
    if ((i % jobs == share)); then mine+=("${names[$i]}"); fi
  done
  ((${#mine[@]})) || continue
  # The first share builds; the others wait on cargo's lock, then reuse it.
  cargo "+$NIGHTLY" miri test --target-dir ../../target/ci-miri --lib -- --exact "${mine[@]}" \
    >"$scratch/$share.log" 2>&1 &
  pids+=("$share:$!")
done
status=0
for entry in "${pids[@]}"; do
  wait "${entry#*:}" || status=1
  echo "== Miri: share ${entry%%:*}"
  cat "$scratch/${entry%%:*}.log"
done
exit "$status"
