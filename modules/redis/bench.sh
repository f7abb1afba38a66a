#!/usr/bin/env bash
# WEIR.BUCKET against a Lua GCRA script (bench/gcra.lua, run with EVALSHA)
# on one redis-server in one run, with redis-benchmark on loopback:
# allowed and refused takes, 50 clients unpipelined and at -P 16. Two
# ceilings run beside them: a bare SET k v PX for any command that writes
# (an allowed take), and a bare GET for any command that reads one key and
# replies (a refused take writes nothing, so GET bounds it).
#
# Method, the same for every scenario:
# - one warm-up pass of each scenario (a tenth of the requests, not
#   counted) after the server starts;
# - rounds: each round runs every scenario once, in an order rotated by one
#   each round, so no scenario always follows the same one;
# - each figure is the median of its rounds; the ratio column is the median
#   of the per-round ratios (each pair measured seconds apart), so that load
#   shifts between rounds cancel;
# - beside ops/s: the server's own time per call (INFO commandstats
#   usec_per_call), and the CPU the server process and redis-benchmark each
#   used during the run, as a share of one core. A client near 100% is the
#   bottleneck: redis-benchmark is one thread, and unpipelined most of its
#   time is the kernel's loopback TCP work, so for cheap commands (GET, a
#   refusal) ops/s measures the client, not the command.
#
# Usage: modules/redis/bench.sh [rounds] [requests]   (defaults 7, 100000)
# On the shared machine: flock /tmp/weir-bench.lock chrt -f 10 bash modules/redis/bench.sh
# Needs redis-server and redis-benchmark (Debian: redis-server, redis-tools).
# With REDIS_CELL_MODULE=/path/to/libredis_cell.so (redis-cell built from
# crates.io; not part of this repository) CL.THROTTLE is measured too.
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds=${1:-7}
requests=${2:-100000}

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
  "GET (ceiling)|get|GET g:k"
)
if [ -n "${REDIS_CELL_MODULE:-}" ]; then
  # CL.THROTTLE key max_burst count period: its burst is max_burst + 1.
  scenarios+=(
    "cell allowed|cl.throttle|CL.THROTTLE c:ok 999999 1000000 1"
    "cell refused|cl.throttle|CL.THROTTLE c:no 0 1 1000"
  )
  cli CL.THROTTLE c:no 0 1 1000 >/dev/null
fi
cli SET g:k v >/dev/null
# The refused keys are drained first: every later call is refused.
cli WEIR.BUCKET b:no 0.001 1 >/dev/null
cli EVALSHA "$sha" 1 l:no 0.001 1 >/dev/null

# The CPU time (user + system) the server process has used, in clock ticks.
server_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
ticks_per_s=$(getconf CLK_TCK)
# Runs scenario $2 with pipeline $1 and $3 requests; prints ops/s, the
# server's µs per call, and the server's and the client's CPU share (%).
measure() {
  local pipeline=$1 stat command times t0 t1 rps usec
  IFS='|' read -r _ stat command <<<"$2"
  cli CONFIG RESETSTAT >/dev/null
  t0=$(server_ticks)
  # shellcheck disable=SC2086
  times=$( { TIMEFORMAT='%R %U %S'; time redis-benchmark -p "$port" -c 50 -P "$pipeline" -n "$3" \
    --csv $command >"$dir/out" 2>"$dir/err"; } 2>&1)
  t1=$(server_ticks)
  rps=$(tail -1 "$dir/out" | cut -d, -f2 | tr -d '"')
  usec=$(cli INFO commandstats | tr -d '\r' |
    sed -n "s/^cmdstat_$stat:.*usec_per_call=\([0-9.]*\).*/\1/p")
  read -r wall user sys <<<"$times"
  awk -v rps="$rps" -v usec="$usec" -v st=$((t1 - t0)) -v hz="$ticks_per_s" \
    -v wall="$wall" -v user="$user" -v sys="$sys" \
    'BEGIN { printf "%s|%s|%.0f|%.0f\n", rps, usec, 100 * st / hz / wall, 100 * (user + sys) / wall }'
}

for pipeline in 1 16; do
  for s in "${scenarios[@]}"; do
    measure "$pipeline" "$s" $((requests / 10)) >/dev/null
  done
done

results="$dir/results"
: >"$results"
count=${#scenarios[@]}
for pipeline in 1 16; do
  for round in $(seq "$rounds"); do
    shift_by=$(((round - 1) % count))
    for s in "${scenarios[@]:shift_by}" "${scenarios[@]:0:shift_by}"; do
      name=${s%%|*}
      echo "$pipeline|$name|$(measure "$pipeline" "$s" "$requests")|$round" >>"$results"
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
per_round() { grep "^$1|$2|" "$results" | sort -t'|' -k7 -n | cut -d'|' -f3; }
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
  server=$(grep "^$pipeline|$name|" "$results" | cut -d'|' -f5 | median)
  client=$(grep "^$pipeline|$name|" "$results" | cut -d'|' -f6 | median)
  printf '| -P %s | %s | %.0f | %s | %.0f%% | %.0f%% | %.2f× |\n' "$pipeline" "$name" "$rps" "$usec" \
    "$server" "$client" "$(ratio "$pipeline" "$name" "$anchor")"
}
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $rounds rounds of $requests requests, -c 50, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), scheduling $(chrt -p $$ | sed -n 's/.*policy: //p' | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "SET PX's ratio is to Lua allowed, GET's to Lua refused: the most any write, or any read, could reach."
echo
echo "| pipeline | scenario | ops/s (median) | server µs/call (median) | server CPU | client CPU | vs Lua, same round (median) |"
echo "|---|---|---:|---:|---:|---:|---:|"
for pipeline in 1 16; do
  for kind in allowed refused; do
    for who in weir lua ${REDIS_CELL_MODULE:+cell}; do
      row "$pipeline" "$who $kind" "lua $kind"
    done
  done
  row "$pipeline" "SET PX (ceiling)" "lua allowed"
  row "$pipeline" "GET (ceiling)" "lua refused"
done
