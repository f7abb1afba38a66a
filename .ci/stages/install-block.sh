#!/usr/bin/env bash
# about: the install block of docs/c.md run verbatim into a temporary prefix, then its use block against that prefix
# tier: full
# order: 80
# needs-commands: cargo cmake=cmake cc=gcc pkg-config=pkg-config
#
# The install instructions of docs/c.md, run verbatim: the block between
# <!-- install-block: begin --> and <!-- install-block: end --> installs into
# a fresh temporary PREFIX (from the repository root; PREFIX is set first,
# and the block keeps it), then the block between <!-- install-use: begin -->
# and <!-- install-use: end --> builds and runs programs against that prefix
# (from the root too: it makes its project in a scratch directory). The
# doc-blocks stage runs these two with every other block of the guides.
# Needs cmake, a C compiler, pkg-config and cargo.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
doc=docs/c.md # the file that holds the two blocks

# The shell lines of the fenced block after the marker `name`.
block() {
  awk -v begin="<!-- $1: begin" -v end="<!-- $1: end" '
    index($0, begin) == 1 { inside = 1; next }
    index($0, end) == 1 { inside = 0 }
    inside && /^```/ { next }
    inside { print }' "$doc"
}

passed=0 failed=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export PREFIX="$scratch/prefix"

for name in install-block install-use; do
  script="$scratch/$name.sh"
  block "$name" > "$script"
  if [ ! -s "$script" ]; then
    echo "FAILED: $doc has no <!-- $name: begin --> ... <!-- $name: end --> block"
    failed=$((failed + 1))
    continue
  fi
  echo "== docs/c.md $name:"
  sed 's/^/   | /' "$script"
  if (cd "$root" && TMPDIR="$scratch" bash -euo pipefail "$script"); then
    echo "ok: docs/c.md $name"
    passed=$((passed + 1))
  else
    echo "FAILED: docs/c.md $name"
    failed=$((failed + 1))
    break
  fi
done

# What the table in $doc says the prefix holds.
for file in include/weir.h include/weir.hpp lib/libweir.a lib/libweir.so lib/cmake/weir/weirConfig.cmake \
  lib/cmake/weir/weirConfigVersion.cmake lib/pkgconfig/weir.pc lib/pkgconfig/weir-static.pc; do
  if [ -e "$PREFIX/$file" ]; then
    passed=$((passed + 1))
  else
    echo "FAILED: the install did not put $file in the prefix"
    failed=$((failed + 1))
  fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
