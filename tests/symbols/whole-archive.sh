#!/usr/bin/env bash
# Links tests/symbols/two_rust_libs.c with -Wl,--whole-archive over weir's
# static archive and a second Rust static library, then runs it.
#   whole-archive.sh CC WEIR_ARCHIVE OTHER_ARCHIVE OUT_DIR [SYSTEM_LIBS...]
set -euo pipefail
cc=$1 weir=$2 other=$3 out=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$here/../../include" \
  "$here/two_rust_libs.c" \
  -Wl,--whole-archive "$weir" "$other" -Wl,--no-whole-archive "$@" \
  -o "$out/two_rust_libs"
"$out/two_rust_libs"
