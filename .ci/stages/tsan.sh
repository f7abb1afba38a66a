#!/usr/bin/env bash
# about: ThreadSanitizer over weir-core's thread tests and the shared handles' threads, std rebuilt with the sanitizer
# tier: full
# order: 240
# needs-commands: cargo
# needs-toolchain: fuzz/rust-toolchain.toml +rust-src
#
# ThreadSanitizer, std rebuilt with the sanitizer (-Zbuild-std) so every
# atomic and lock is seen; a data race fails the run. Two builds:
#
# - The core crate's thread tests (weir-core/tests/rate.rs: the rate word
#   and the bloom array hammered from several threads, and a hierarchy of
#   them charged all or nothing by racing threads), built through
#   .ci/core, weir-core's sources without its dev-dependencies.
# - The C crate's shared handles (tests/shared_threads.rs): each of the
#   nine types laid in a MAP_SHARED mapping and attached by four threads,
#   each its own weir_X_attach handle, as processes would; the region's
#   robust pthread mutex, the handle's own lock and the lock-free bucket
#   and gate all under the sanitizer. Built through .ci/capi, the C
#   crate's sources without the root's dev-dependencies (criterion,
#   governor, proptest and cbindgen rebuilt with the sanitizer would be
#   most of this stage's time), in the same target directory as the core's
#   so the sanitized std is built once. TSan follows threads, not
#   processes: tests/c/shared.c's forked workers are checked by ASan and
#   UBSan (cmake-sanitize) instead.
#
# Needs: the nightly pinned in fuzz/rust-toolchain.toml with rust-src (the
# install stage's).
set -euo pipefail
cd "$(dirname "$0")/../.."
. .ci/nightly.sh rust-src

target=$(rustc "+$NIGHTLY" -vV | sed -n 's/^host: //p')
echo "== ThreadSanitizer: weir-core thread tests ($NIGHTLY, $target)"
cd .ci/core
RUSTFLAGS="-Zsanitizer=thread" \
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
  cargo "+$NIGHTLY" test -Zbuild-std --target "$target" \
    --target-dir ../../target/ci-tsan --features std --test rate
cd ../..

echo "== ThreadSanitizer: shared handles from threads ($NIGHTLY, $target)"
cd .ci/capi
RUSTFLAGS="-Zsanitizer=thread" \
TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" \
  cargo "+$NIGHTLY" test --locked -Zbuild-std --target "$target" \
    --target-dir ../../target/ci-tsan --test shared_threads
