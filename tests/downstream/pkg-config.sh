#!/usr/bin/env bash
# A downstream build through pkg-config against an installed prefix, the
# way a Makefile or cgo does it.
#   pkg-config.sh static|shared PREFIX OUT_DIR [CC]
#  static: weir-static.pc (the archive by path; what cgo's
#          `#cgo pkg-config: weir-static` uses);
#  shared: weir.pc, run once through an rpath and once through
#          LD_LIBRARY_PATH, as the README documents.
set -euo pipefail
kind=$1 prefix=$2 out=$3 cc=${4:-cc}
here=$(cd "$(dirname "$0")" && pwd)
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
mkdir -p "$out"
if [ "$kind" = static ]; then
  # shellcheck disable=SC2046
  "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror "$here/app.c" \
    $(pkg-config --cflags --libs weir-static) -o "$out/app"
  bash "$here/run.sh" static "$out/app"
  # weir.pc's Libs.private carry the same system libraries.
  libs=$(pkg-config --static --libs weir)
  case "$libs" in
    *-lpthread*) echo "ok: pkg-config --static --libs weir: $libs" ;;
    *) echo "FAILED: pkg-config --static --libs weir lacks the system libraries: $libs"; exit 1 ;;
  esac
else
  libdir=$(pkg-config --variable=libdir weir)
  # shellcheck disable=SC2046
  "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror "$here/app.c" \
    $(pkg-config --cflags --libs weir) -Wl,-rpath,"$libdir" -o "$out/app-rpath"
  bash "$here/run.sh" shared "$out/app-rpath"
  # shellcheck disable=SC2046
  "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror "$here/app.c" \
    $(pkg-config --cflags --libs weir) -o "$out/app"
  LD_LIBRARY_PATH="$libdir" bash "$here/run.sh" shared "$out/app"
fi
