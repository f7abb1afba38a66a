#!/usr/bin/env bash
# about: the sanitize CMake preset: the C and C++ tests and examples under AddressSanitizer and UBSan
# tier: full
# order: 90
# needs-commands: cargo cmake=cmake cc=gcc c++=g++ clang++=clang
# needs-apt: libgtest-dev googletest
#
# The library in cargo's dev profile (target/debug, as cargo-test left
# it), every C test and example built with -fsanitize=address,undefined
# (build/sanitize) and run with leak detection on.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset sanitize
cmake --build --preset sanitize --parallel 2
ctest --preset sanitize
