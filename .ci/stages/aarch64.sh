#!/usr/bin/env bash
# about: the whole suite built for aarch64 and run under qemu-user, the C programs compiled with aarch64-linux-gnu-gcc
# tier: full
# order: 200
# long: WEIR_LONG=1 (loom's models and the whole hostile sweep under qemu too; the properties keep their eighth)
# needs-commands: cargo aarch64-linux-gnu-gcc=gcc-aarch64-linux-gnu aarch64-linux-gnu-g++=g++-aarch64-linux-gnu qemu-aarch64=qemu-user
# needs-apt: libc6-dev-arm64-cross
# needs-rust-targets: aarch64-unknown-linux-gnu
#
# Every Rust test of the default members and every C program, through
# qemu-aarch64. Under a runner the tests take their emulator share
# (weir-core/tests/support/runner.rs): loom skips itself, the hostile sweep
# runs 10% of its rounds, each property an eighth of its cases, the keyed
# table's traces a tenth of their calls. The checks that read the
# repository's text (the header's freshness, the surface registry, the
# citations) answer the same on every CPU and are skipped here (about 50 s
# under qemu); the native stages run them.
# WEIR_LONG=1 runs loom's models and the whole sweep under qemu as well
# (WEIR_LOOM=1, WEIR_HOSTILE_PERCENT=100: much longer).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${WEIR_LONG:-}" ]; then
  export WEIR_LOOM=1 WEIR_HOSTILE_PERCENT=100
fi
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu" \
  cargo test --locked --target aarch64-unknown-linux-gnu -- \
  --skip header_is_current --skip index_lists_every_function --skip every_version_agrees \
  --skip every_face_carries_every_name --skip every_face_replays_every_trace_or_says_why_not \
  --skip every_cited_file_is_in_the_repository --skip no_citation_of_documents_the_reader_lacks \
  --skip no_internal_issue_numbers
