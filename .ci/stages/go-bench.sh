#!/usr/bin/env bash
# about: the Go benchmark module (go/bench): vet, its tests, one short round of the table
# tier: full
# order: 110
# needs-commands: go=golang-go cargo cc=gcc pkg-config=pkg-config
# needs-go-mod-download: go/bench
#
# The Go benchmarks, briefly: the benchmark module's own tests (every side runs, weir's allocate nothing),
# and one short run of the interleaved table (one round, 5 ms a side; it
# checks the table can be made, not the numbers: go/bench/run.sh makes
# those). Needs go, pkg-config, a C compiler, and cargo if
# target/release/libweir.a is stale; the bench module's peers
# (golang.org/x/time, go-zero) in the module cache (the install stage's
# go mod download).
set -uo pipefail
cd "$(dirname "$0")/../.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
passed=0 failed=0
step() {
  local name=$1
  shift
  echo "== $name"
  if "$@"; then
    passed=$((passed + 1))
  else
    echo "FAILED: $name"
    failed=$((failed + 1))
  fi
}

# A fixed prefix, and the user's Go build cache (the go stage's, where the
# standard library and the peers, go-zero and x/time, are already built:
# a cache of this checkout's own, target/go-cache, rebuilt them on every
# clean clone, about 30 s here). go's cache key for a cgo package leaves
# out what pkg-config answered, so a cached build would keep the library
# path of whichever prefix it was built against (a temporary one, another
# checkout's) and the link then fails or links another library: as in
# .ci/stages/go.sh, a sum of the prefix's path, header and archive in
# CGO_CFLAGS keys the cache to them.
prefix=$PWD/target/go-prefix
if ! PKG_CONFIG_PATH=$(go/bench/stage-prefix.sh "$prefix"); then
  echo "0 passed, 1 failed"
  exit 1
fi
export PKG_CONFIG_PATH
sums=$( (echo "$prefix" && cat "$prefix/include/weir.h" "$prefix/lib/libweir.a") | sha256sum | cut -c1-16)
export CGO_ENABLED=1 CGO_CFLAGS="-g -O2 -DWEIR_INPUTS_SUM=$sums"
# go/ itself (the cross tests among its tests, plain and under -race) is
# vetted and tested by .ci/stages/go.sh, the stage before this one.
step "go vet (the bench module)" bash -c 'cd go/bench && go vet .'
step "bench module tests" bash -c 'cd go/bench && go test -count=1 .'
step "the table, one short round" bash -c 'cd go/bench && WEIR_BENCH_ROUNDS=1 WEIR_BENCH_MS=5 go test -count=1 -run "^$" -bench "^BenchmarkTable$" -benchtime 1x .'
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
