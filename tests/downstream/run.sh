#!/usr/bin/env bash
# Runs downstream programs and checks how they link weir: a static link
# needs no libweir.so at run time, a shared one needs libweir.so.<SONAME>.
#   run.sh static|shared PROGRAM...
set -euo pipefail
kind=$1
shift
passed=0 failed=0
for program in "$@"; do
  needed=$(readelf -d "$program" | sed -nE 's/.*Shared library: \[(libweir[^]]*)\].*/\1/p')
  if [ "$kind" = static ] && [ -n "$needed" ]; then
    echo "FAILED: $program should link libweir.a but needs $needed"
    failed=$((failed + 1)); continue
  fi
  if [ "$kind" = shared ] && [ -z "$needed" ]; then
    echo "FAILED: $program should need libweir.so but links it statically"
    failed=$((failed + 1)); continue
  fi
  if "$program"; then
    echo "ok: $program (${needed:-static})"
    passed=$((passed + 1))
  else
    echo "FAILED: $program exited with $?"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
