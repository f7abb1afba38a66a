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
build_log=$(mktemp)
build() {
    if ! "$@" >"$build_log" 2>&1; then
        cat "$build_log"
        echo "valgrind: 0 passed, 1 failed (the build failed)"
        exit 1
    fi
}
build cmake --preset default
if [ "$#" -gt 0 ]; then
    build cmake --build --preset default --target "$@"
    programs=("$@")
else
    build cmake --build --preset default
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
rm -rf "$log" "$build_log"
echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
