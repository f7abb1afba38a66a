#!/usr/bin/env bash
# Instructions per request of one nginx worker under callgrind
# (master_process off), for each location of bench.sh's config: the total
# for N2 requests minus the total for N1, over N2 - N1 (startup cancels).
#   modules/nginx/bench-callgrind.sh [N1] [N2]     (default 1000 3000)
set -euo pipefail
cd "$(dirname "$0")/../.."
n1=${1:-1000}
n2=${2:-3000}
so=$(modules/nginx/build.sh "$(pwd)/target/nginx")
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/html" "$tmp/logs"
echo ok > "$tmp/html/f"
port=$((20000 + RANDOM % 20000))
# bench.sh's config, one process.
sed -n '/^cat > "\$tmp\/nginx.conf" << EOF$/,/^EOF$/p' modules/nginx/bench.sh | sed '1d;$d' |
    sed "s|\$so|$so|; s|\$tmp|$tmp|g; s|\$port|$port|; s|\\\\\\\$|\$|g" > "$tmp/nginx.conf"
total() { # LOC N KEYMODE -> Ir
    rm -f "$tmp"/cg.out
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
        nginx -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/logs/error.log" -g 'master_process off; daemon off;' \
        > /dev/null 2>&1 &
    local pid=$!
    for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$port/none" && break; sleep 0.1; done
    if [ "$3" = distinct ]; then
        python3 modules/nginx/test/distinct.py "$port" "/$1" "$2" > /dev/null
    else
        WEIR_FIXED_KEY=bench python3 modules/nginx/test/distinct.py "$port" "/$1" "$2" > /dev/null
    fi
    kill -QUIT "$pid"
    wait "$pid" || true
    callgrind_annotate "$tmp/cg.out" 2> /dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}
for case in "none fixed" "weir_ok fixed" "weirw_ok fixed" "lr_ok fixed" "weir_no fixed" "weirw_no fixed" "lr_no fixed" "weir_ok distinct" "lr_ok distinct"; do
    set -- $case
    a=$(total "$1" "$n1" "$2")
    b=$(total "$1" "$n2" "$2")
    echo "$1 ($2 key): $(( (b - a) / (n2 - n1) )) instructions/request"
done
