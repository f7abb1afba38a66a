#!/usr/bin/env bash
# about: the Redis module on a six-node Redis Cluster (three primaries, three replicas, 127.0.0.1): routing by slot, hash-tagged WEIR.ALL and CROSSSLOT, a slot migrated, a clean and two dirty failovers under load with each limit's over-admit measured
# tier: full
# order: 165
# long: WEIR_LONG=1 (nine failovers, each of the three ways on every primary, with 10 s of load on each side of each)
# needs-commands: cargo redis-server=redis-server redis-cli=redis-server
#
# The Redis module on a real cluster: builds the module, starts six
# redis-servers with it on 127.0.0.1 (free high ports, every file in a temp
# dir, cluster-node-timeout 2000 ms), joins them with
# `redis-cli --cluster create ... --cluster-replicas 1`, waits for
# cluster_state:ok by polling with a bound, then runs
# modules/redis/tests/cluster.rs against it (WEIR_CLUSTER_PORTS names the
# ports). That test's client routes by slot and follows MOVED and ASK; it
# fails primaries over three ways (CLUSTER FAILOVER on a replica; SIGKILL
# of a primary; SIGKILL of a primary whose replica lags) under load, starts
# each killed node again from its config file, and prints each limit's
# admits against its bound. Every node is stopped by its pid (its pid
# file) on exit. Closes on cargo test's result line.
#   bash .ci/run redis-cluster              three failovers, 2 s of load on each side
#   WEIR_LONG=1 bash .ci/run redis-cluster  nine failovers, 10 s on each side
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "== $(redis-server --version)"

echo "== modules/redis: build the module and the cluster test"
cargo build --locked -p weir-redis --lib
export WEIR_REDIS_MODULE="${CARGO_TARGET_DIR:-$PWD/target}/debug/libweir_redis.so"
test -f "$WEIR_REDIS_MODULE"
cargo test --locked -p weir-redis --test cluster --no-run

tmp=$(mktemp -d "${TMPDIR:-/tmp}/weir-cluster.XXXXXX")
ports=()
started=()

# Whether PID is the redis-server on PORT (a pid file can outlive its
# process, and a pid can be reused).
is_node() { # PID PORT
  [[ -r /proc/$1/cmdline ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -Eq "redis-server.*:$2( |\$)"
}

# Every node's pids: the ones started here and the ones in the pid files
# (a node the test killed and started again writes its new pid there).
node_pids() { # PORT
  local port=$1 pid
  for pid in "${started[@]}" $(cat "$tmp/$port/redis.pid" 2>/dev/null); do
    if is_node "$pid" "$port"; then echo "$pid"; fi
  done | sort -u
}

stop_nodes() {
  local port pid pids=()
  for port in "${ports[@]}"; do
    for pid in $(node_pids "$port"); do
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid:$port")
    done
  done
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do
      if is_node "${pid%%:*}" "${pid##*:}"; then alive=1; fi
    done
    ((alive)) || break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    if is_node "${pid%%:*}" "${pid##*:}"; then kill -KILL "${pid%%:*}" 2>/dev/null || true; fi
  done
  ports=()
  started=()
}
trap 'stop_nodes; rm -rf "$tmp"' EXIT

# Whether something listens on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Starts six nodes on PORT..PORT+5 (their cluster buses on PORT+10000...);
# fails when one does not answer PING within 10 s.
start_nodes() { # BASE
  local base=$1 port i
  for i in 0 1 2 3 4 5; do
    port=$((base + i))
    mkdir -p "$tmp/$port"
    cat >"$tmp/$port/redis.conf" <<EOF
port $port
bind 127.0.0.1
daemonize no
pidfile $tmp/$port/redis.pid
logfile $tmp/$port/redis.log
dir $tmp/$port
save ""
appendonly no
cluster-enabled yes
cluster-config-file nodes.conf
cluster-node-timeout 2000
loadmodule $WEIR_REDIS_MODULE
EOF
    redis-server "$tmp/$port/redis.conf" </dev/null >/dev/null 2>&1 &
    started+=($!)
    disown $! # the test may kill it: no job notice
    ports+=("$port")
  done
  for i in 0 1 2 3 4 5; do
    port=${ports[$i]}
    for _ in $(seq 200); do
      if redis-cli -p "$port" PING 2>/dev/null | grep PONG >/dev/null; then continue 2; fi
      kill -0 "${started[$i]}" 2>/dev/null || break
      sleep 0.05
    done
    echo "127.0.0.1:$port did not start:"
    tail -2 "$tmp/$port/redis.log" 2>/dev/null || true
    return 1
  done
}

# Free ports: six in a row, and their bus ports, none listening, all below
# the kernel's range for outgoing connections' ports (a busy machine's
# loopback traffic holds many of those); a node that still fails to start
# (another process took its port meanwhile) means a fresh try on other
# ports, three at most.
ephemeral=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
top=$((ephemeral - 10000 - 6))
((top > 12000)) || top=22000
for attempt in 1 2 3; do
  for _ in $(seq 50); do
    base=$((10000 + RANDOM % (top - 10000)))
    free=1
    for i in 0 1 2 3 4 5; do
      if listening $((base + i)) || listening $((base + i + 10000)); then free=0; fi
    done
    ((free)) && break
  done
  if start_nodes "$base"; then break; fi
  stop_nodes
  rm -rf "${tmp:?}"/*
  if ((attempt == 3)); then
    echo "the nodes did not start"
    exit 1
  fi
done
echo "== six nodes on 127.0.0.1:${ports[0]}..${ports[5]}"

addresses=()
for port in "${ports[@]}"; do addresses+=("127.0.0.1:$port"); done
if ! redis-cli --cluster create "${addresses[@]}" --cluster-replicas 1 --cluster-yes >"$tmp/create.log" 2>&1; then
  cat "$tmp/create.log"
  exit 1
fi

# Every node says cluster_state:ok and knows all six, and every replica's
# link is up: polled, for 60 s at most.
ready() {
  local port text
  for port in "${ports[@]}"; do
    text=$(redis-cli -p "$port" CLUSTER INFO 2>/dev/null) || return 1
    grep -q '^cluster_state:ok' <<<"$text" || return 1
    grep -q '^cluster_known_nodes:6' <<<"$text" || return 1
    text=$(redis-cli -p "$port" INFO replication 2>/dev/null) || return 1
    if grep -q '^role:slave' <<<"$text"; then
      grep -q '^master_link_status:up' <<<"$text" || return 1
    fi
  done
}
began=$SECONDS
until ready; do
  if ((SECONDS - began > 60)); then
    echo "the cluster did not reach cluster_state:ok within 60 s"
    for port in "${ports[@]}"; do redis-cli -p "$port" CLUSTER INFO | head -1; done
    exit 1
  fi
  sleep 0.1
done
echo "== cluster_state:ok on all six after $((SECONDS - began)) s"
redis-cli -p "${ports[0]}" CLUSTER NODES | sort -k2 | awk '
  { id[$1] = $2; sub(/@.*/, "", id[$1]) }
  $3 ~ /master/ { line[NR] = "   primary " id[$1] " slots " $9 }
  $3 ~ /slave/ { of[NR] = $4; mine[NR] = $1 }
  END {
    for (n in line) print line[n]
    for (n in of) print "   replica " id[mine[n]] " of " id[of[n]]
  }' | sort

echo "== modules/redis/tests/cluster.rs against the cluster"
WEIR_CLUSTER_PORTS="${ports[*]}" cargo test --locked -p weir-redis --test cluster -- \
  --include-ignored --test-threads=1 --nocapture
