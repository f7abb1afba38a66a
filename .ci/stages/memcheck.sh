#!/usr/bin/env bash
# about: every C test and example of the default CMake build again, under valgrind memcheck
# tier: full
# order: 70
# needs-commands: cargo cmake=cmake cc=gcc c++=g++ valgrind=valgrind
#
# valgrind memcheck over every C test and example: the default CMake build
# (release library), each program run again under
#   valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect
# as the ctest tests labelled `memcheck` (CMakeLists.txt, weir_memcheck).
# An invalid read or write, a use of an uninitialised value or a leak fails
# the run. Needs valgrind (Debian: valgrind); cmake configures without the
# memcheck tests when it is missing, so this script checks first.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind is not installed (apt-get install valgrind)" >&2
  exit 1
fi
cmake --preset default
cmake --build --preset default --parallel 2
ctest --preset memcheck
