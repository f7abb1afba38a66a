#!/usr/bin/env bash
# about: ThreadSanitizer over weir-core's thread tests, std rebuilt with the sanitizer
# tier: full
# order: 240
# needs-commands: cargo
# needs-toolchain: fuzz/rust-toolchain.toml +rust-src
#
# ThreadSanitizer over the core crate's thread tests (weir-core/tests/rate.rs:
# the rate word and the bloom array hammered from several threads, and a
# hierarchy of them charged all or nothing by racing threads). std is
# rebuilt with the sanitizer (-Zbuild-std), so every atomic and lock is
# seen. Built through .ci/core, weir-core's sources without its
# dev-dependencies, so nothing else is compiled. A data race fails the run.
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
