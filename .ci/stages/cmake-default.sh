#!/usr/bin/env bash
# about: the default CMake preset: the release library, the C and C++ tests and examples, the install and downstream checks (ctest)
# tier: quick
# order: 60
# needs-commands: cargo cmake=cmake cc=gcc c++=g++ clang++=clang pkg-config=pkg-config
# needs-apt: libgtest-dev googletest
#
# Configures, builds and tests the default preset (build/default, release,
# cargo's target/ shared with every other stage). GoogleTest builds
# weir.hpp's tests and clang++ checks the C++ header beside g++; CMake
# leaves either out with a warning when it is missing, so they are needs
# here.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset default
cmake --build --preset default --parallel 2
ctest --preset default
