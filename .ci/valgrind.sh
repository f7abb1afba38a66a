#!/usr/bin/env bash
# valgrind memcheck over every C test and example that the CMake default
# preset builds (release library, as C users link it). No suppressions: a
# program passes when memcheck reports no error and it exits 0.
#
# Needs: cmake, a C and C++ compiler, cargo, valgrind (Debian: valgrind).
# Usage: bash .ci/valgrind.sh [program-name ...]   (default: all of them)
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 1; }
cmake --preset default >/dev/null
if [ "$#" -gt 0 ]; then
    cmake --build --preset default --target "$@" >/dev/null
    programs=("$@")
else
    cmake --build --preset default >/dev/null
    programs=()
    for exe in build/default/test_* build/default/example_*; do
        [ -f "$exe" ] && [ -x "$exe" ] && programs+=("$(basename "$exe")")
    done
fi

log=$(mktemp -d)
passed=0
failed=0
for name in "${programs[@]}"; do
    # The C tests read nothing from their working directory, but ctest runs
    # them from the source root; do the same.
    if valgrind -q --error-exitcode=99 "build/default/$name" >"$log/$name" 2>&1; then
        echo "ok     $name"
        passed=$((passed + 1))
    else
        echo "FAILED $name"
        sed 's/^/    /' "$log/$name" | head -60
        failed=$((failed + 1))
    fi
done
rm -rf "$log"
echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
