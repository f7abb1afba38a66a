#!/usr/bin/env bash
# about: Miri over the named subset of weir-core's unit tests (.ci/miri-tests.txt)
# tier: full
# order: 230
# long: WEIR_MIRI_ALL=1 (every unit test in full, well over ten minutes)
# needs-commands: cargo
# needs-toolchain: fuzz/rust-toolchain.toml +miri +rust-src
#
# Miri interprets weir-core's unit tests and fails on undefined behaviour,
# an arithmetic overflow or a leak. Built through .ci/core (weir-core's
# sources without its dev-dependencies). Long loops run a hundredth of
# their rounds under cfg(miri) (weir_core::rounds), and only the named
# subset in .ci/miri-tests.txt runs, so the run fits its budget of two
# minutes. WEIR_MIRI_ALL=1 runs every unit
# test in full instead (well over ten minutes).
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
args=()
if [ -z "${WEIR_MIRI_ALL:-}" ]; then
  mapfile -t names < <(grep -v -e '^#' -e '^$' .ci/miri-tests.txt)
  args=(--exact "${names[@]}")
fi

echo "== Miri: weir-core unit tests ($NIGHTLY${WEIR_MIRI_ALL:+, all of them})"
cd .ci/core
cargo "+$NIGHTLY" miri test --target-dir ../../target/ci-miri --lib -- "${args[@]}"
