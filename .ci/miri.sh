#!/usr/bin/env bash
# Miri interprets weir-core's unit tests and fails on undefined behaviour,
# an arithmetic overflow or a leak. Built through .ci/core (weir-core's
# sources without its dev-dependencies). Long loops run a hundredth of
# their rounds under cfg(miri) (weir_core::rounds), and the tests below,
# which need large arrays or a second's worth of calls, are left out, so
# the run fits its budget of two minutes. WEIR_MIRI_ALL=1 runs every unit
# test in full instead (well over ten minutes).
#
# Needs: the nightly pinned in fuzz/rust-toolchain.toml with miri and
# rust-src (all installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/nightly.sh miri rust-src

# Left out: each would take minutes interpreted.
skip=(
  # 2^20 words and 250,000 keys.
  bloom::tests::few_keys_are_refused_before_their_burst
  # Arrays of 2^16 words, each word written by Miri one at a time.
  bloom::tests::two_keys_are_independent
  bloom::tests::a_key_spent_under_one_seed_is_fresh_under_another
  # Long runs of calls checking accuracy: a second at a million a second
  # and at ten thousand, 100,000 takes of a bucket.
  rate::tests::accuracy_is_within_one_percent_at_a_million_a_second
  rate::tests::accuracy_is_within_one_percent_at_ten_thousand_a_second_burst_one
  bucket::tests::rates_with_inexact_intervals_hold_their_burst_and_rate
)
# Left out: Miri stops the whole run ("resource exhaustion") where a real
# allocator answers an impossible try_reserve with an error, which is what
# this test checks.
skip+=(sliding::tests::bad_sizes_are_errors)
args=()
if [ -z "${WEIR_MIRI_ALL:-}" ]; then
  for name in "${skip[@]}"; do
    args+=(--skip "$name")
  done
fi

echo "== Miri: weir-core unit tests ($NIGHTLY${WEIR_MIRI_ALL:+, all of them})"
cd .ci/core
cargo "+$NIGHTLY" miri test --target-dir ../../target/ci-miri --lib -- "${args[@]}"
