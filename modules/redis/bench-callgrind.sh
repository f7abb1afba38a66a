#!/usr/bin/env bash
# What each command costs the server in instructions: redis-server runs
# under callgrind, and for each scenario the counters are zeroed, N
# requests are sent with redis-benchmark (-c 50, unpipelined or -P 16),
# and the dump's total is divided by N. The count covers everything the
# server does in user space for a request (reading, parsing, the command,
# the reply), not the kernel's share of the syscalls. Unlike ops/s it
# repeats on a loaded machine.
#
# Usage: modules/redis/bench-callgrind.sh [requests]   (default 20000)
# Needs valgrind, redis-server, redis-benchmark. REDIS_CELL_MODULE as in
# bench.sh adds CL.THROTTLE.
set -euo pipefail
cd "$(dirname "$0")/../.."

requests=${1:-20000}
cargo build --release -p weir-redis --quiet
module="$PWD/target/release/libweir_redis.so"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" \
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
  --loadmodule "$module" ${REDIS_CELL_MODULE:+--loadmodule "$REDIS_CELL_MODULE"} \
  --daemonize no >"$dir/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
cli() { redis-cli -p "$port" "$@"; }
for _ in $(seq 600); do
  cli PING >/dev/null 2>&1 && break
  sleep 0.1
done
cli PING >/dev/null
sha=$(cli SCRIPT LOAD "$(cat modules/redis/bench/gcra.lua)")
cli SET g:k v >/dev/null
cli WEIR.BUCKET b:no 0.001 1 >/dev/null
cli EVALSHA "$sha" 1 l:no 0.001 1 >/dev/null
scenarios=(
  "weir allowed|WEIR.BUCKET b:ok 1000000000 1000000000"
  "lua allowed|EVALSHA $sha 1 l:ok 1000000000 1000000000"
  "weir refused|WEIR.BUCKET b:no 0.001 1"
  "lua refused|EVALSHA $sha 1 l:no 0.001 1"
  "SET PX (ceiling)|SET s:k v PX 100000"
  "GET (ceiling)|GET g:k"
)
if [ -n "${REDIS_CELL_MODULE:-}" ]; then
  cli CL.THROTTLE c:no 0 1 1000 >/dev/null
  scenarios+=(
    "cell allowed|CL.THROTTLE c:ok 999999 1000000 1"
    "cell refused|CL.THROTTLE c:no 0 1 1000"
  )
fi

echo "instructions per request, server side, $requests requests a scenario, -c 50"
echo
echo "| scenario | -P 1 | -P 16 |"
echo "|---|---:|---:|"
n=0
for s in "${scenarios[@]}"; do
  IFS='|' read -r name command <<<"$s"
  line="| $name"
  for pipeline in 1 16; do
    n=$((n + 1))
    callgrind_control --zero "$pid" >/dev/null 2>&1
    # shellcheck disable=SC2086
    redis-benchmark -p "$port" -c 50 -P "$pipeline" -n "$requests" -q $command >/dev/null
    callgrind_control --dump="s$n" "$pid" >/dev/null 2>&1
    dump=$(ls -t "$dir"/cg.out.* | head -1)
    total=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$dump" | head -1)
    [ -n "$total" ] || total=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$dump" | head -1)
    line="$line | $((total / requests))"
  done
  echo "$line |"
done
