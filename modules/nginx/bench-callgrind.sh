#!/usr/bin/env bash
# Instructions per request of one nginx worker under callgrind
# (master_process off): the total for N2 requests minus the total for N1,
# over N2 - N1 (startup cancels). Each case is its own nginx whose one
# limited location is /t, so every case walks the same location tree.
#   modules/nginx/bench-callgrind.sh [N1] [N2]     (default 1000 3000)
# Cases: none (no limit); weir_* kind=smooth (the default), weirw_*
# kind=window, weirt_* kind=smooth in a keyed table (store=table, the 1m
# zone's bytes: about 65,000 slots), lr_* limit_req; *_ok all allowed (rate=1000000r/s, weir
# burst=1000 against limit_req burst=999 nodelay), *_no all refused
# (rate=1r/m, burst=1 against nodelay; one key after its first request);
# "distinct" sends a new key each request.
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

conf() { # ZONE_LINE LIMIT_LINE
    cat > "$tmp/nginx.conf" << EOC
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
    limit_req_status 429;
    weir_limit_log_level info;
    limit_req_log_level info;
    $1
    server {
        listen 127.0.0.1:$port;
        root $tmp/html;
        location = /none { try_files /f =404; }
        location = /t { $2 try_files /f =404; }
    }
}
EOC
}

total() { # N KEYMODE -> Ir
    rm -f "$tmp"/cg.out
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
        nginx -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/logs/error.log" -g 'master_process off; daemon off;' \
        > /dev/null 2>&1 &
    local pid=$!
    for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$port/none" && break; sleep 0.1; done
    if [ "$2" = distinct ]; then
        python3 modules/nginx/test/distinct.py "$port" /t "$1" > /dev/null
    else
        WEIR_FIXED_KEY=bench python3 modules/nginx/test/distinct.py "$port" /t "$1" > /dev/null
    fi
    kill -QUIT "$pid"
    wait "$pid" || true
    callgrind_annotate "$tmp/cg.out" 2> /dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}

W='weir_limit_zone $http_x_client zone=w:1m'
L='limit_req_zone $http_x_client zone=l:1m'
only=${WEIR_ONLY:-} # e.g. "weir_ok/fixed lr_ok/fixed": only these cases
run() { # NAME KEYMODE ZONE_LINE LIMIT_LINE
    if [ -n "$only" ] && [[ " $only " != *" $1/$2 "* ]]; then return; fi
    conf "$3" "$4"
    local a b
    a=$(total "$n1" "$2")
    b=$(total "$n2" "$2")
    echo "$1 ($2 key): $(((b - a) / (n2 - n1))) instructions/request"
}
run none fixed "" ""
run weir_ok fixed "$W rate=1000000r/s burst=1000;" "weir_limit zone=w;"
run weirw_ok fixed "$W rate=1000000r/s burst=1000 kind=window;" "weir_limit zone=w;"
run lr_ok fixed "$L rate=1000000r/s;" "limit_req zone=l burst=999 nodelay;"
run weir_no fixed "$W rate=1r/m burst=1;" "weir_limit zone=w;"
run weirw_no fixed "$W rate=1r/m burst=1 kind=window;" "weir_limit zone=w;"
run lr_no fixed "$L rate=1r/m;" "limit_req zone=l nodelay;"
run weir_ok distinct "$W rate=1000000r/s burst=1000;" "weir_limit zone=w;"
run lr_ok distinct "$L rate=1000000r/s;" "limit_req zone=l burst=999 nodelay;"
run weirt_ok fixed "$W rate=1000000r/s burst=1000 store=table;" "weir_limit zone=w;"
run weirt_no fixed "$W rate=1r/m burst=1 store=table;" "weir_limit zone=w;"
run weirt_ok distinct "$W rate=1000000r/s burst=1000 store=table;" "weir_limit zone=w;"
