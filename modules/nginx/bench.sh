#!/usr/bin/env bash
# weir_limit vs limit_req on one nginx (1 worker, 127.0.0.1): requests/s
# with wrk, repeated and interleaved, for all allowed, all refused and no
# limit (weir_*: kind=smooth, the default; weirw_*: kind=window). Prints one
# line per run and the medians.
#   modules/nginx/bench.sh [RUNS] [SECONDS]     (default 5 runs of 5 s)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
secs=${2:-5}
so=$(modules/nginx/build.sh "$(pwd)/target/nginx")
tmp=$(mktemp -d)
chmod 755 "$tmp"
port=$((20000 + RANDOM % 20000))
mkdir -p "$tmp/html" "$tmp/logs"
echo ok > "$tmp/html/f"
cat > "$tmp/nginx.conf" << EOF
load_module $so;
worker_processes 1;
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
    }
}
EOF
nginx -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/logs/error.log"
trap 'kill -QUIT $(cat $tmp/nginx.pid) 2>/dev/null; sleep 0.5; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/none" && break; sleep 0.1; done
declare -A all
for run in $(seq "$runs"); do
    for loc in none weir_ok weirw_ok lr_ok weir_no weirw_no lr_no; do
        rps=$(wrk -t1 -c16 -d"${secs}s" -H "X-Client: bench" "http://127.0.0.1:$port/$loc" |
            sed -n 's/^Requests\/sec: *//p')
        code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Client: bench" "http://127.0.0.1:$port/$loc")
        echo "run $run $loc $rps req/s (last status $code)"
        all[$loc]="${all[$loc]:-} $rps"
    done
done
for loc in none weir_ok weirw_ok lr_ok weir_no weirw_no lr_no; do
    echo "median $loc $(tr ' ' '\n' <<< "${all[$loc]}" | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
