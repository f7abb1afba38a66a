#!/usr/bin/env bash
# Stages an install prefix from this checkout's release build, laid out as
# `cmake --install` lays it (include/weir.h, lib/libweir.a,
# lib/pkgconfig/weir-static.pc), for the Go cgo code's
# `#cgo pkg-config: weir-static`. Usage: stage-prefix.sh PREFIX (from
# anywhere; builds libweir.a with cargo if it is missing or older than a
# source). Prints the PKG_CONFIG_PATH to export.
set -euo pipefail
prefix=${1:?usage: stage-prefix.sh PREFIX}
root=$(cd "$(dirname "$0")/../.." && pwd)
lib="$root/target/release/libweir.a"
if [ ! -f "$lib" ] || [ -n "$(find "$root/src" "$root/weir-core/src" -newer "$lib" -print -quit)" ]; then
  (cd "$root" && cargo build --release --lib --quiet)
fi
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
cp "$root/include/weir.h" "$prefix/include/weir.h"
cp "$lib" "$prefix/lib/libweir.a"
version=$(sed -n 's/^#define WEIR_VERSION "\(.*\)"/\1/p' "$root/include/weir.h")
cat > "$prefix/lib/pkgconfig/weir-static.pc" <<PC
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: weir-static
Description: weir as a static library (staged from a checkout)
Version: $version
Cflags: -I\${includedir}
Libs: \${libdir}/libweir.a -lpthread -ldl -lm
PC
echo "$prefix/lib/pkgconfig"
