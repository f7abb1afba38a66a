#!/usr/bin/env bash
# about: weir-core without alloc (no_std): its tests, and clippy over them
# tier: quick
# order: 30
# needs-commands: cargo
# needs-rust-components: clippy
#
# The core is no_std: its tests pass without alloc too (the types that need
# an allocator drop out, and so do the integration tests that use them;
# this supersedes the old `--lib` form). The window, breaker, sliding
# window, shedder, pool and bloom stay, over a fixed array or a borrowed
# slice: weir-core/tests/store.rs runs them here, and the step below checks
# that they are still there. It lints without alloc too: code
# only the alloc types use is dead there, which tests only warn about and
# the firmware stage's clippy refuses. A build for targets without std
# (thumbv7em, thumbv6m) is the firmware stage's.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --locked -p weir-core --no-default-features 2>&1 | tee "${TMPDIR:-/tmp}/weir-core-no-alloc.log"
# The storage tests ran (a cfg slip that dropped them would pass silently).
log=$(cat "${TMPDIR:-/tmp}/weir-core-no-alloc.log")
for name in an_array_and_a_slice_give_the_same_answers a_store_with_no_slot_is_refused; do
  case "$log" in
    *"test $name ... ok"*) ;;
    *) echo "core-no-alloc: $name did not run without alloc" >&2; exit 1 ;;
  esac
done
cargo clippy --locked -p weir-core --no-default-features --all-targets -- -D warnings
