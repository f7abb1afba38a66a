#!/usr/bin/env bash
# A fleet of four client processes sharing limits in one redis-server, with
# the C library's weir_lease and hiredis (modules/redis/examples/lease.c):
#
#  1. exactness: four clients want 4000 units of a key whose bucket holds
#     2000 and refills once in 1000 s; the units Redis granted are at most
#     2000, and every unit a client admitted was granted (admitted +
#     expired + refunded = granted, per client and in total);
#  2. the benchmark: four clients at a steady 2500 requests a second each
#     (10,000 in all), on one key limited to 5000 a second (burst 500), and
#     on 10,000 keys limited to 0.5 a second each (burst 1; each request's
#     key drawn at random), each with
#     leases and with one WEIR.BUCKET per request: Redis commands per
#     admitted request, admitted per second against the bound, and each
#     client's share of the admits.
#
# Run from the repo root: modules/redis/examples/lease.sh (2 s a run);
# WEIR_LONG=1 runs each benchmark run for 30 s. Needs redis-server,
# hiredis (Debian: libhiredis-dev), a C compiler, cargo, python3.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
seconds=2
[ "${WEIR_LONG:-0}" = 1 ] && seconds=30

module=${WEIR_REDIS_MODULE:-}
if [ -z "$module" ]; then
  cargo build --release -p weir-redis --quiet
  module="$root/target/release/libweir_redis.so"
fi
cargo build --release --lib --quiet
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
cc -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -I include \
  modules/redis/examples/lease.c "${CARGO_TARGET_DIR:-$root/target}/release/libweir.a" \
  -lhiredis -lpthread -ldl -lm -o "$dir/lease"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
  --loadmodule "$module" --daemonize no >"$dir/log" 2>&1 &
pid=$!
for _ in $(seq 200); do
  redis-cli -p "$port" PING >/dev/null 2>&1 && break
  sleep 0.05
done
[ "$(redis-cli -p "$port" PING)" = PONG ]

# Four clients at once with the same arguments; their lines in $dir/out.
fleet() { # mode keys rate burst per_second seconds
  local pids=()
  for c in 0 1 2 3; do
    "$dir/lease" "$port" "$@" $((c + 1)) >"$dir/c$c" &
    pids+=($!)
  done
  wait "${pids[@]}"
  cat "$dir"/c[0-3] >"$dir/out"
  redis-cli -p "$port" FLUSHALL >/dev/null
}


echo "== exactness: 4 clients x 1000 requests on a burst of 2000 that refills in 1000 s"
fleet lease 1 0.0005 2000 2000 0.5
python3 - "$dir/out" <<'EOF'
import sys
rows = [dict(zip(l.split()[::2], map(float, l.split()[1::2]))) for l in open(sys.argv[1])]
for r in rows:
    assert r["admitted"] + r["expired"] + r["refunded"] == r["granted"], r
granted = sum(r["granted"] for r in rows)
admitted = sum(r["admitted"] for r in rows)
print(f"granted {granted:.0f} (bound 2000), admitted {admitted:.0f}, "
      f"commands {sum(r['commands'] for r in rows):.0f}")
assert granted <= 2000 and admitted <= granted
EOF

echo "== benchmark: 4 clients x 2500 requests a second for $seconds s"
for keys in 1 10000; do
  if [ "$keys" = 1 ]; then rate=5000 burst=500; else rate=0.5 burst=1; fi
  for mode in lease each; do
    fleet "$mode" "$keys" "$rate" "$burst" 2500 "$seconds"
    python3 - "$dir/out" "$mode" "$keys" "$rate" "$burst" <<'EOF'
import sys
path, mode, keys, rate, burst = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
rows = [dict(zip(l.split()[::2], map(float, l.split()[1::2]))) for l in open(path)]
admitted = sum(r["admitted"] for r in rows)
commands = sum(r["commands"] for r in rows)
secs = max(r["seconds"] for r in rows)
bound = keys * (burst + rate * secs)
shares = [r["admitted"] / admitted for r in rows] if admitted else [0.25] * 4
spread = max(abs(s - 0.25) / 0.25 for s in shares)
print(f"{keys:>5} key(s) {mode:>5}: {commands / max(admitted, 1):.4f} commands per admit, "
      f"{admitted / secs:,.0f} admitted/s (bound {bound / secs:,.0f}/s over {secs:.2f} s), "
      f"shares {' '.join(f'{s:.3f}' for s in shares)} (most {spread * 100:.1f} % from even)")
assert admitted <= bound, (admitted, bound)
if mode == "lease":
    for r in rows:
        assert r["admitted"] + r["expired"] + r["refunded"] == r["granted"], r
EOF
  done
done
