#!/usr/bin/env bash
# about: the HTML references with warnings as errors: Doxygen over include/weir.h, cargo doc for weir-core and the C crate, every exported Go name documented
# tier: full
# order: 25
# needs-commands: cargo doxygen=doxygen go=golang-go
#
# The three references, each built with its warnings as errors:
#  1. C: Doxygen over include/weir.h (docs/Doxyfile): every public item
#     documented, no warning -> target/doc-c/html/index.html
#  2. Rust: cargo doc for weir-core (#![deny(missing_docs)]) and for the C
#     crate, RUSTDOCFLAGS="-D warnings" (broken intra-doc links included)
#     -> target/doc/weir_core/index.html
#  3. Go: every exported name of package weir (go/) has a doc comment
#     (go/internal/doccheck, which reads the source: no cgo, no installed
#     weir), then its reference as go doc prints it -> target/doc-go/weir.txt
# Needs doxygen (Debian's 1.9.4), cargo and go. Installs nothing: when a tool
# is missing it says which and how to install it, and fails.
# Runs from the repository root, without standard input; prints
# "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0 failed=0

missing=()
if ! command -v doxygen >/dev/null 2>&1; then
  missing+=("doxygen (the C reference): apt-get install -y doxygen (Debian 12 has 1.9.4, what docs/Doxyfile is written for)")
fi
if ! command -v go >/dev/null 2>&1; then
  missing+=("go (the Go check): apt-get install -y golang-go, or a release from https://go.dev/dl/ (1.24 or later)")
fi
if ! command -v cargo >/dev/null 2>&1; then
  missing+=("cargo (the Rust reference): rustup, https://rustup.rs")
fi
if ((${#missing[@]} > 0)); then
  echo "error: the docs stage needs tools that are not installed (it installs nothing):"
  printf '  %s\n' "${missing[@]}"
  exit 1
fi

step() {
  local name=$1
  shift
  echo "== $name"
  local began=$SECONDS
  if "$@"; then
    echo "ok: $name ($((SECONDS - began)) s)"
    passed=$((passed + 1))
  else
    echo "FAILED: $name"
    failed=$((failed + 1))
  fi
}

c_reference() {
  local version
  version=$(doxygen --version)
  if [[ $version != 1.9.4* ]]; then
    echo "note: doxygen $version; docs/Doxyfile is written for 1.9.4, and another version may warn differently"
  fi
  rm -rf target/doc-c
  # PROJECT_NUMBER in docs/Doxyfile.
  WEIR_VERSION=$(sed -n 's/^#define WEIR_VERSION "\(.*\)"$/\1/p' include/weir.h) \
    doxygen docs/Doxyfile &&
    test -f target/doc-c/html/index.html &&
    echo "target/doc-c/html/index.html"
}

rust_reference() {
  RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps -p weir-core -p weir &&
    echo "target/doc/weir_core/index.html, target/doc/weir/index.html"
}

go_reference() {
  mkdir -p target/doc-go &&
    (cd go && go run ./internal/doccheck . ./internal/cref ./internal/doccheck) &&
    (cd go && go doc -all .) >target/doc-go/weir.txt &&
    echo "target/doc-go/weir.txt"
}

step "C reference (Doxygen, warnings as errors)" c_reference
step "Rust reference (cargo doc, -D warnings)" rust_reference
step "Go doc comments (doccheck) and go doc -all" go_reference

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
