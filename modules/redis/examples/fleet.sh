#!/usr/bin/env bash
# A fleet sharing one limit: one redis-server with the module, and five
# "web servers" (here, five concurrent clients, each its own connection)
# that each see 40 requests from user 42 at once. The user may make 50
# requests, then one every 100 s. Whichever servers the requests land on,
# exactly 50 pass in total.
#
# Run from the repo root: modules/redis/examples/fleet.sh
# Needs redis-server and redis-cli (Debian: redis-server).
set -euo pipefail
cd "$(dirname "$0")/../../.."

# WEIR_REDIS_MODULE names an already built module (CI passes its own).
module=${WEIR_REDIS_MODULE:-}
if [ -z "$module" ]; then
  cargo build --release -p weir-redis --quiet
  module="$PWD/target/release/libweir_redis.so"
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" \
  --loadmodule "$module" --daemonize no >"$dir/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 200); do
  redis-cli -p "$port" PING >/dev/null 2>&1 && break
  sleep 0.05
done

# One web server: 40 requests from user 42 through one connection. Each
# reply is WEIR.BUCKET's five integers, one a line; the first is 0 when the
# request may go ahead.
web_server() {
  for _ in $(seq 40); do echo "WEIR.BUCKET user:42 0.01 50"; done |
    redis-cli -p "$port" | awk 'NR % 5 == 1 && $1 == 0 {n++} END {print n + 0}' >"$dir/web$1"
}
web=()
for i in 1 2 3 4 5; do
  web_server "$i" &
  web+=($!)
done
wait "${web[@]}"

total=0
for i in 1 2 3 4 5; do
  echo "web server $i let through $(cat "$dir/web$i") of 40"
  total=$((total + $(cat "$dir/web$i")))
done
echo "the fleet let through $total of 200 (the limit: a burst of 50)"
echo "user 42's bucket now: $(redis-cli -p "$port" WEIR.BUCKET.PEEK user:42 0.01 50 | tr '\n' ' ')"
[ "$total" -eq 50 ]
