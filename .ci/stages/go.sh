#!/usr/bin/env bash
# about: the Go package (go/) through an installed prefix: vet, race tests (the cross tests against C among them), two live fuzz targets, the Prometheus collector module (go/prom: vet, a scrape of its /metrics), a fresh module through a local proxy
# tier: full
# order: 100
# needs-commands: go=golang-go cargo cmake=cmake cc=gcc pkg-config=pkg-config python3=python3
# needs-go-mod-download: go/prom
#
# The Go package (go/): built against an installed weir, as a Go user has it.
#  1. weir is built and installed with CMake into a staged prefix
#     (build/go-prefix);
#     PKG_CONFIG_PATH points at it and LD_LIBRARY_PATH is unset throughout;
#  2. go vet ./... and go test -race ./... in go/ (the fuzz targets' seed
#     corpora run as plain tests there), then two fuzz targets live for
#     250,000 calls each (about 10 s);
#     the Prometheus collector's module (go/prom, its own go.mod, so that the
#     package keeps no dependency): vet, and its example's /metrics scraped
#     through httptest (a few seconds);
#  3. a fresh module outside the repository gets the package through a local
#     module proxy (GOPROXY=file://, made by go/mkproxy.sh from go/),
#     builds a program against it and runs it, builds and runs the module's
#     example server, and runs the package's tests and Examples from the
#     module cache; the binaries must not need libweir.so.
# Needs cmake, cargo, a C compiler, pkg-config, go (1.24 or later), python3.
# Runs from the repository root; prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
unset LD_LIBRARY_PATH
passed=0 failed=0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/weir-go.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

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

finish() {
  echo "took $SECONDS s"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

if ! command -v go >/dev/null 2>&1; then
  echo "skipped: go is not installed"
  finish
fi
go version

# A fixed prefix, not one under $scratch: go's build cache key for a cgo
# package leaves out what pkg-config answered, so a package cached by an
# earlier run keeps that run's library path, and a temporary prefix is
# gone by then (the link fails: "cannot find .../libweir.a"). Reinstalled
# here every run; the sums below key the cache to its contents. Without
# the nginx module, which the Go package does not use (the default CMake
# build, the README's install block and the nginx stage each build one;
# a fourth cost about 20 s).
prefix=$root/build/go-prefix
install_weir() {
  cmake -S . -B build/go -DCMAKE_BUILD_TYPE=Release -DWEIR_BUILD_TESTS=OFF -DWEIR_BUILD_NGINX=OFF >/dev/null &&
    cmake --build build/go >/dev/null &&
    cmake --install build/go --prefix "$prefix" >/dev/null
}
step "weir installed to a staged prefix" install_weir || true
[ -f "$prefix/lib/pkgconfig/weir-static.pc" ] || finish

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# cgo's build cache keys on the flags, not on the contents of a header or
# archive outside the module: their sums in CGO_CFLAGS make them part of it.
# The prefix's path too, which pkg-config's answer names (and a cache
# filled by a run that installed elsewhere must not be hit).
sums=$( (echo "$prefix" && cat "$prefix/include/weir.h" "$prefix/lib/libweir.a") | sha256sum | cut -c1-16)
export CGO_ENABLED=1 CGO_CFLAGS="-g -O2 -DWEIR_INPUTS_SUM=$sums"

in_go() { (cd go && "$@"); }
# gofmt -l lists the files it would change, one Go module or not; any is a
# failure.
gofmt_clean() {
  local listed
  listed=$(gofmt -l go) || return 1
  [ -z "$listed" ] || { echo "not gofmt-clean:"; echo "$listed"; return 1; }
}
step "gofmt -l go/ lists nothing" gofmt_clean
step "go vet ./..." in_go go vet ./...
step "go test -race ./... (seed corpora as plain tests)" in_go go test -race -count=1 ./...
# A count, not a duration: go1.26's coordinator can fail a -fuzztime
# duration run at its deadline with a bare "context deadline exceeded" and
# no crasher (golang/go#75804, fixed in 1.27). 250,000 calls is about 10 s
# here.
for target in FuzzRateWordC FuzzBloomKey; do
  step "go test -fuzz $target, 250000 calls" in_go go test -run '^$' -fuzz "^$target\$" -fuzztime 250000x .
done

in_prom() { (cd go/prom && "$@"); }
step "go/prom: go vet ./..." in_prom go vet ./...
step "go/prom: go test ./... (a scrape of the example's /metrics)" in_prom go test -count=1 ./...

# The module zip a proxy serves, by the script docs/go.md gives readers.
version=v$(sed -n 's/^#define WEIR_VERSION "\(.*\)"/\1/p' include/weir.h)
module=github.com/weir-rs/weir/go
proxy=$scratch/proxy
make_proxy() { go/mkproxy.sh "$proxy" >/dev/null; }
step "module zip and proxy for $module@$version" make_proxy

fresh=$scratch/fresh
export GOPROXY=file://$proxy GOSUMDB=off GOFLAGS=-modcacherw GOMODCACHE=$scratch/modcache
fresh_module() {
  mkdir -p "$fresh" && cd "$fresh" &&
    go mod init example.com/fresh >/dev/null 2>&1 &&
    cat >main.go <<'GO'
package main

import (
	"errors"
	"fmt"
	"os"

	weir "github.com/weir-rs/weir/go"
)

func main() {
	v, err := weir.Version()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	b, err := weir.NewBucketAt(10, 2, 0)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer b.Close()
	_, err = weir.NewRateLimit(5, 5000)
	fmt.Println("weir", v, b.AllowAt(0), b.AllowAt(0), b.AllowAt(0), errors.Is(err, weir.ErrRateBurst))
}
GO
  go get "$module@$version" &&
    go build -o fresh . &&
    out=$(./fresh) && echo "$out" && [ "$out" = "weir ${version#v} true true false true" ] &&
    ! ldd ./fresh | grep libweir >/dev/null &&
    go build -o server "$module/examples/server" && ./server >/dev/null &&
    go test -count=1 "$module" "$module/examples/server"
}
step "a fresh module gets it through GOPROXY=file://, builds, runs (no LD_LIBRARY_PATH)" fresh_module

finish
