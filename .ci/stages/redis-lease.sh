#!/usr/bin/env bash
# about: leases over Redis: the hiredis client's fleet (exactness, then the four-client benchmark on one key and on 10,000 keys) and the go-redis Limiter's tests, against real redis-servers
# tier: full
# order: 162
# long: WEIR_LONG=1 (each benchmark run 30 s instead of 2)
# needs-commands: cargo cc=gcc redis-server=redis-server redis-cli=redis-server python3=python3 go=golang-go pkg-config=pkg-config
# needs-apt: libhiredis-dev
# needs-go-mod-download: go/redislease
#
# WEIR.LEASE and weir_lease from their users' side:
#  1. modules/redis/examples/lease.sh: the hiredis client (lease.c, linked
#     with libweir.a) in four processes against one redis-server: the units
#     granted never pass the bucket, every admit was granted, then the
#     benchmark (leases against one WEIR.BUCKET per request) with its
#     bounds checked;
#  2. go/redislease (its own Go module, go-redis v9): go vet and its tests,
#     which start a redis-server with the module and stop it by pid. cgo
#     links the same libweir.a through a weir-static.pc written here, with
#     the flags the installed one carries.
# Measured on the 2-core machine: 79 s from a clean target directory (48 s
# of it the two release builds), 29 s with them built; the benchmark's four
# 2-second runs and the exactness run take about 13 s of either. Runs from the repo root; prints "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
passed=0 failed=0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/weir-lease.XXXXXX")
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

target=${CARGO_TARGET_DIR:-$root/target}
build() {
  cargo build --locked --release -p weir-redis --lib --quiet &&
    cargo build --locked --release --lib --quiet
}
step "the module and libweir.a (release)" build
export WEIR_REDIS_MODULE=$target/release/libweir_redis.so

step "the hiredis client's fleet (modules/redis/examples/lease.sh)" modules/redis/examples/lease.sh

cat >"$scratch/weir-static.pc" <<PC
Name: weir-static
Description: weir as a static library, from this checkout's cargo build
Version: 0.3.0
Cflags: -I$root/include
Libs: $target/release/libweir.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
PC
export PKG_CONFIG_PATH=$scratch
# cgo's cache keys on flags, not on the archive's contents nor on the path
# pkg-config names: both join them (a test binary cached by a run with
# another target directory would link an archive that is gone).
sums=$( (echo "$target" && cat include/weir.h "$target/release/libweir.a") | sha256sum | cut -c1-16)
export CGO_ENABLED=1 CGO_CFLAGS="-g -O2 -DWEIR_INPUTS_SUM=$sums"
in_module() { (cd go/redislease && "$@"); }
step "go/redislease: go vet" in_module go vet ./...
step "go/redislease: go test against a real redis-server" in_module go test -count=1 -v ./...

echo "took $SECONDS s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
