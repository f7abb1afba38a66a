#!/usr/bin/env bash
# WEIR.BUCKET against a Lua GCRA script (bench/gcra.lua, run with EVALSHA)
# on one redis-server in one run, with redis-benchmark on loopback:
# allowed and refused takes, 50 clients unpipelined and at -P 16, with a
# bare SET k v PX as the ceiling for any write. Rounds are interleaved and
# each figure is the median of its rounds; beside ops/s it prints the
# server's own CPU time per call (INFO commandstats usec_per_call), which
# shifts less than ops/s on a shared machine.
#
# Usage: modules/redis/bench.sh [rounds] [requests]   (defaults 3, 200000)
# Needs redis-server and redis-benchmark (Debian: redis-server, redis-tools).
# With REDIS_CELL_MODULE=/path/to/libredis_cell.so (redis-cell built from
# crates.io; not part of this repository) CL.THROTTLE is measured too.
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds=${1:-3}
requests=${2:-200000}

cargo build --release -p weir-redis --quiet
module="$PWD/target/release/libweir_redis.so"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
  --loadmodule "$module" ${REDIS_CELL_MODULE:+--loadmodule "$REDIS_CELL_MODULE"} --daemonize no >"$dir/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
cli() { redis-cli -p "$port" "$@"; }
for _ in $(seq 200); do
  cli PING >/dev/null 2>&1 && break
  sleep 0.05
done
cli PING >/dev/null

sha=$(cli SCRIPT LOAD "$(cat modules/redis/bench/gcra.lua)")

# name | stat | command
scenarios=(
  "weir allowed|weir.bucket|WEIR.BUCKET b:ok 1000000000 1000000000"
  "lua allowed|evalsha|EVALSHA $sha 1 l:ok 1000000000 1000000000"
  "weir refused|weir.bucket|WEIR.BUCKET b:no 0.001 1"
  "lua refused|evalsha|EVALSHA $sha 1 l:no 0.001 1"
  "SET PX (ceiling)|set|SET s:k v PX 100000"
)
if [ -n "${REDIS_CELL_MODULE:-}" ]; then
  # CL.THROTTLE key max_burst count period: its burst is max_burst + 1.
  scenarios+=(
    "cell allowed|cl.throttle|CL.THROTTLE c:ok 999999 1000000 1"
    "cell refused|cl.throttle|CL.THROTTLE c:no 0 1 1000"
  )
  cli CL.THROTTLE c:no 0 1 1000 >/dev/null
fi
# The refused keys are drained first: every later call is refused.
cli WEIR.BUCKET b:no 0.001 1 >/dev/null
cli EVALSHA "$sha" 1 l:no 0.001 1 >/dev/null

results="$dir/results"
: >"$results"
for pipeline in 1 16; do
  for round in $(seq "$rounds"); do
    for s in "${scenarios[@]}"; do
      IFS='|' read -r name stat command <<<"$s"
      cli CONFIG RESETSTAT >/dev/null
      # shellcheck disable=SC2086
      rps=$(redis-benchmark -p "$port" -c 50 -P "$pipeline" -n "$requests" --csv $command |
        tail -1 | cut -d, -f2 | tr -d '"')
      usec=$(cli INFO commandstats | tr -d '\r' |
        sed -n "s/^cmdstat_$stat:.*usec_per_call=\([0-9.]*\).*/\1/p")
      echo "$pipeline|$name|$rps|$usec|$round" >>"$results"
    done
  done
done

# Check the refused scenarios really refused.
[ "$(cli WEIR.BUCKET b:no 0.001 1 | head -1)" = 1 ] || { echo "weir refused scenario was allowed"; exit 1; }
[ "$(cli EVALSHA "$sha" 1 l:no 0.001 1 | head -1)" = 1 ] || { echo "lua refused scenario was allowed"; exit 1; }
if [ -n "${REDIS_CELL_MODULE:-}" ]; then
  [ "$(cli CL.THROTTLE c:no 0 1 1000 | head -1)" = 1 ] || { echo "cell refused scenario was allowed"; exit 1; }
fi

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# One scenario's ops/s in each round, in round order.
per_round() { grep "^$1|$2|" "$results" | sort -t'|' -k5 -n | cut -d'|' -f3; }
# The median over rounds of (ops/s of $2) / (ops/s of $3), each pair taken
# in the same round, seconds apart, so that load shifts between rounds
# cancel.
ratio() {
  paste -d' ' <(per_round "$1" "$2") <(per_round "$1" "$3") |
    awk '{printf "%.4f\n", $1 / $2}' | median
}
row() {
  local pipeline=$1 name=$2 anchor=$3
  rps=$(grep "^$pipeline|$name|" "$results" | cut -d'|' -f3 | median)
  usec=$(grep "^$pipeline|$name|" "$results" | cut -d'|' -f4 | median)
  printf '| -P %s | %s | %.0f | %s | %.2f× |\n' "$pipeline" "$name" "$rps" "$usec" "$(ratio "$pipeline" "$name" "$anchor")"
}
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $rounds rounds of $requests requests, -c 50, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| pipeline | scenario | ops/s (median) | server µs/call (median) | vs Lua, same round (median) |"
echo "|---|---|---:|---:|---:|"
for pipeline in 1 16; do
  for kind in allowed refused; do
    for who in weir lua ${REDIS_CELL_MODULE:+cell}; do
      row "$pipeline" "$who $kind" "lua $kind"
    done
  done
  row "$pipeline" "SET PX (ceiling)" "lua allowed"
done
