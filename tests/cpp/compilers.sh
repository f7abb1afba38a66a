#!/usr/bin/env bash
# weir.hpp, its GoogleTest suite and the C++ example compile warning-free
# (-Wall -Wextra -Wpedantic -Werror) with g++ and clang++, as C++17 and
# C++20, with and without exceptions. Compiles only (-fsyntax-only); the
# suite itself is built with g++ and run by ctest (cpp_tests_17, _20,
# _17_noexcept), so g++ checks the header, the example and a downstream
# program here, and clang++ checks those and the suite (with exceptions). A clang++ that is
# not installed is skipped (apt-get install clang); g++ is required.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
light=("$root/cpp-examples/request_loop.cpp" "$root/tests/downstream/app.cpp")
passed=0 failed=0
for cxx in g++ clang++; do
  if ! command -v "$cxx" >/dev/null 2>&1; then
    if [ "$cxx" = g++ ]; then echo "FAILED: g++ not found"; failed=$((failed + 1)); fi
    echo "skipped: $cxx not found"
    continue
  fi
  for std in c++17 c++20; do
    for exceptions in -fexceptions -fno-exceptions; do
      sources=("${light[@]}")
      # The suite once per standard: its -fno-exceptions build is g++'s
      # (cpp_tests_17_noexcept).
      if [ "$cxx" = clang++ ] && [ "$exceptions" = -fexceptions ]; then sources+=("$root"/tests/cpp/*.cpp); fi
      for source in "${sources[@]}"; do
        if out=$("$cxx" -std=$std $exceptions -Wall -Wextra -Wpedantic -Werror -I"$root/include" \
            -fsyntax-only "$source" 2>&1); then
          passed=$((passed + 1))
        else
          echo "FAILED: $cxx -std=$std $exceptions $source"
          echo "$out" | head -n 20
          failed=$((failed + 1))
        fi
      done
      echo "ok: $cxx -std=$std $exceptions"
    done
  done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
