#!/usr/bin/env bash
# weir_limit vs limit_req on one nginx (127.0.0.1): requests/s with wrk,
# repeated and interleaved, for all allowed, all refused and no limit
# (weir_*: kind=smooth, the default; weirw_*: kind=window; lr_*: limit_req;
# lrh_no: limit_req with weir's three refusal headers added by hand with
# `add_header ... always`, so its refusals are weir's byte for byte;
# lr2_no: limit_req's twin, its own zone of the same shape, so lr2_no ÷
# lr_no is the method's noise floor).
#   flock /tmp/weir-bench.lock chrt -f 10 bash modules/nginx/bench.sh [RUNS] [SECONDS]
#   (default 26 runs of 1 s: about 9 * (1.5 + RUNS * (SECONDS + 0.5)) s,
#   6 min, plus a 20 s build)
#
# Method, the same for every location:
# - one nginx, one worker, pinned to the last CPU (worker_cpu_affinity);
#   wrk -t1 -c16 pinned to CPU 0 (taskset), so the two never share a core
#   or migrate; both inherit the caller's scheduling (chrt -f 10). The
#   build runs at normal priority first.
# - every location gets a 1 s warm-up wrk first (discarded); then a round
#   runs every location once for SECONDS, each weir location next to the
#   limit_req one it is compared with, in the reverse order on even
#   rounds, so drift falls on both sides.
# - printed: each run, each location's median requests/s, and the median
#   of the per-round ratios weir ÷ limit_req. On this shared 2-core VM the
#   machine's speed drifts by ±20 % over seconds (two identical locations
#   differ that much run to run); a pair run a second apart sees nearly
#   the same machine, so many short pairs resolve a ratio better than a
#   few long runs: 26 to 40 pairs give the median ratio to a few per
#   cent (see lr2_no ÷ lr_no, the same work on both sides).
# - checked before the runs: each refused location's status and header
#   and body byte counts, and that keep-alive holds (one connection, two
#   requests); after: that no refusal reached the error log and no worker
#   died. Both modules log refusals at info, below the log's crit.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-26}
secs=${2:-1}
so=$(chrt -o 0 modules/nginx/build.sh "$(pwd)/target/nginx")
tmp=$(mktemp -d)
chmod 755 "$tmp"
cp "$so" "$tmp/weir.so" # a rebuild during the runs cannot touch this one
port=$((20000 + RANDOM % 20000))
ncpu=$(nproc)
affinity="" wrk_pin=()
if [ "$ncpu" -ge 2 ]; then
    affinity="worker_cpu_affinity 1$(printf '0%.0s' $(seq 2 "$ncpu"));"
    wrk_pin=(taskset -c 0)
fi
mkdir -p "$tmp/html" "$tmp/logs"
echo ok > "$tmp/html/f"
cat > "$tmp/nginx.conf" << EOF
load_module $tmp/weir.so;
worker_processes 1;
$affinity
pid $tmp/nginx.pid;
error_log $tmp/logs/error.log crit;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 10000000;
    client_body_temp_path $tmp/body;
    proxy_temp_path $tmp/proxy;
    fastcgi_temp_path $tmp/fastcgi;
    uwsgi_temp_path $tmp/uwsgi;
    scgi_temp_path $tmp/scgi;
    weir_limit_zone \$http_x_client zone=w_ok:1m rate=1000000r/s burst=1000;
    weir_limit_zone \$http_x_client zone=w_no:1m rate=1r/m burst=1;
    weir_limit_zone \$http_x_client zone=ww_ok:1m rate=1000000r/s burst=1000 kind=window;
    weir_limit_zone \$http_x_client zone=ww_no:1m rate=1r/m burst=1 kind=window;
    limit_req_zone \$http_x_client zone=l_ok:1m rate=1000000r/s;
    limit_req_zone \$http_x_client zone=l_no:1m rate=1r/m;
    limit_req_zone \$http_x_client zone=l2_no:1m rate=1r/m;
    limit_req_status 429;
    weir_limit_log_level info;
    limit_req_log_level info;
    server {
        listen 127.0.0.1:$port;
        root $tmp/html;
        location = /none { try_files /f =404; }
        location = /weir_ok { weir_limit zone=w_ok; try_files /f =404; }
        location = /weir_no { weir_limit zone=w_no; try_files /f =404; }
        location = /weirw_ok { weir_limit zone=ww_ok; try_files /f =404; }
        location = /weirw_no { weir_limit zone=ww_no; try_files /f =404; }
        location = /lr_ok { limit_req zone=l_ok burst=999 nodelay; try_files /f =404; }
        location = /lr_no { limit_req zone=l_no nodelay; try_files /f =404; }
        location = /lr2_no { limit_req zone=l2_no nodelay; try_files /f =404; }
        location = /lrh_no {
            limit_req zone=l_no nodelay;
            add_header Retry-After 60 always;
            add_header RateLimit-Policy '"w_no";q=1;w=60' always;
            add_header RateLimit '"w_no";r=0;t=60' always;
            try_files /f =404;
        }
    }
}
EOF
nginx -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/logs/error.log"
trap 'kill -QUIT $(cat $tmp/nginx.pid) 2>/dev/null; sleep 0.5; rm -rf "$tmp"' EXIT
url=http://127.0.0.1:$port
for _ in $(seq 50); do curl -s -o /dev/null "$url/none" && break; sleep 0.1; done
locs=(none weir_ok lr_ok weirw_ok weirw_no weir_no lr_no lr2_no lrh_no)

# The refusals compared: the key's first request is admitted, the second
# refused; two requests on one connection show whether it is kept.
pinned=${affinity%;}
echo "cpus $ncpu; nginx worker: ${pinned:-not pinned}; wrk: ${wrk_pin[*]:-not pinned}"
for loc in weir_no weirw_no lr_no lr2_no lrh_no; do
    curl -s -o /dev/null -H "X-Client: bench" "$url/$loc"
    curl -s -D "$tmp/h" -w '%{http_code} %{size_header} %{size_download} %{num_connects}\n' \
        -H "X-Client: bench" -o /dev/null "$url/$loc" -o /dev/null "$url/$loc" > "$tmp/w"
    read -r code hbytes bbytes _ < "$tmp/w"
    echo "refusal $loc: status $code, header bytes $hbytes, body bytes $bbytes;" \
        "new connections for a 2nd request on it: $(tail -n 1 "$tmp/w" | cut -d' ' -f4)," \
        "'Connection: keep-alive' in $(grep -ci '^connection: keep-alive' "$tmp/h") of 2"
done

declare -A all ratio
declare -A cur
for loc in "${locs[@]}"; do
    "${wrk_pin[@]}" wrk -t1 -c16 -d1s -H "X-Client: bench" "$url/$loc" > /dev/null
done
pair() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
for run in $(seq "$runs"); do
    order=("${locs[@]}")
    if [ $((run % 2)) = 0 ]; then mapfile -t order < <(printf '%s\n' "${locs[@]}" | tac); fi
    for loc in "${order[@]}"; do
        rps=$("${wrk_pin[@]}" wrk -t1 -c16 -d"${secs}s" -H "X-Client: bench" "$url/$loc" |
            sed -n 's/^Requests\/sec: *//p')
        code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Client: bench" "$url/$loc")
        echo "run $run $loc $rps req/s (last status $code)"
        all[$loc]="${all[$loc]:-} $rps"
        cur[$loc]=$rps
    done
    ratio[weir_ok]="${ratio[weir_ok]:-} $(pair "${cur[weir_ok]}" "${cur[lr_ok]}")"
    ratio[weirw_ok]="${ratio[weirw_ok]:-} $(pair "${cur[weirw_ok]}" "${cur[lr_ok]}")"
    ratio[weir_no]="${ratio[weir_no]:-} $(pair "${cur[weir_no]}" "${cur[lr_no]}")"
    ratio[weirw_no]="${ratio[weirw_no]:-} $(pair "${cur[weirw_no]}" "${cur[lr_no]}")"
    ratio[lrh_no]="${ratio[lrh_no]:-} $(pair "${cur[lrh_no]}" "${cur[lr_no]}")"
    ratio[lr2_no]="${ratio[lr2_no]:-} $(pair "${cur[lr2_no]}" "${cur[lr_no]}")"
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
for loc in "${locs[@]}"; do
    echo "median $loc $(median <<< "${all[$loc]}")"
done
for loc in weir_ok weirw_ok weir_no weirw_no lrh_no lr2_no; do
    base=lr_${loc#*_}
    echo "median ratio $loc / $base $(median <<< "${ratio[$loc]}") (per run:${ratio[$loc]})"
done
if grep -q 'exited on signal' "$tmp/logs/error.log"; then
    echo "bench.sh: a worker died during the runs:" >&2
    cat "$tmp/logs/error.log" >&2
    exit 1
fi
echo "error log lines (refusals are logged at info, the log is at crit): $(grep -c . "$tmp/logs/error.log" || true)"
