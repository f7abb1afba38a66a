#!/usr/bin/env bash
# The shared library's SONAME is the one CMake installs the symlink for.
#   soname.sh LIBRARY EXPECTED_SONAME
set -euo pipefail
lib=$1 expected=$2
actual=$(readelf -d "$lib" | sed -nE 's/.*Library soname: \[(.*)\]/\1/p')
if [ "$actual" = "$expected" ]; then
  echo "ok: $lib has SONAME $actual"
  echo "1 passed, 0 failed"
else
  echo "FAILED: $lib has SONAME '${actual}', expected $expected"
  echo "0 passed, 1 failed"
  exit 1
fi
