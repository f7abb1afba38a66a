#!/usr/bin/env bash
# about: the nginx module with real traffic on 127.0.0.1: two workers, exact counts, headers, the metrics page, keys in log lines, reloads (a changed rate in place, under load, bloom and table zones), bad configs refused, 125,000 distinct keys, keyed table zones (each key exactly its burst, 8,000 keys, the overflow policies), the conformance traces on its test build
# tier: full
# order: 170
# long: WEIR_LONG=1 or WEIR_KEYS=1000000 (10^6 distinct keys in 33m, then in a table of keys=1m)
# needs-commands: cargo nginx=nginx curl=curl python3=python3 dpkg-buildflags=dpkg-dev make=make cc=gcc
# needs-apt: nginx-dev
#
# The nginx module with real traffic on loopback: builds the
# module against Debian's nginx-dev, starts nginx (2 workers, 127.0.0.1, a
# high port, every file in a temp dir), drives it with curl and a
# pipelined client (modules/nginx/test/distinct.py), stops
# it by its pid, and asserts counts that elapsed time cannot change (1
# request a minute, bursts asked at once). Then builds the module's test
# build (WEIR_NGINX_TEST_CLOCK=1: a request header sets the time) and
# replays the conformance traces on it (modules/nginx/test/replay.py, which
# also checks that the release build has no test clock). Ends with
# "N passed, N failed".
# Installs nothing: the install stage adds its Debian packages.
#   bash .ci/run nginx                     everything, 125,000 distinct keys
#   WEIR_LONG=1 bash .ci/run nginx         the long form: 10^6 keys in 33m
#   WEIR_KEYS=1000000 bash .ci/run nginx   the same
#   WEIR_KEYS=1000000 WEIR_WORDS_LOG2=21 bash .ci/run nginx   10^6 keys in 17m
# Needs: nginx nginx-dev curl (Debian), python3, a Rust toolchain.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

so=$(modules/nginx/build.sh "$root/target/nginx") || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp" # the workers (nobody) read html/
# Two free ports, the server's and the counts page's (mport), each asked of
# the kernel (bind to port 0), as the Python tests do: a port drawn at
# random could be one an outgoing connection holds (a run failed so).
read -r port mport < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
')
passed=0
failed=0
master=

ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { # check NAME EXPECTED ACTUAL
    if [ "$2" == "$3" ]; then ok "$1"; else bad "$1: expected [$2], got [$3]"; fi
}

stop() {
    if [ -n "$master" ] && kill -0 "$master" 2> /dev/null; then
        kill -QUIT "$master"
        for _ in $(seq 100); do kill -0 "$master" 2> /dev/null || break; sleep 0.1; done
        kill -0 "$master" 2> /dev/null && kill -KILL "$master"
    fi
    master=
}
trap 'stop; rm -rf "$tmp"' EXIT

mkdir -p "$tmp/html/idx" "$tmp/logs"
echo hello > "$tmp/html/index.html"
echo hello > "$tmp/html/idx/index.html"
for f in a b two two2 dry code inherit srv bulk arg cplx smooth win tree bin mix cnt tab tabw tmix tref tadm tsh tbulk; do echo "$f" > "$tmp/html/$f"; done

# The distinct-key test's zone: 2^words_log2 words, about 4.2 words a key
# (the load of 10^6 keys in 33m), unless WEIR_WORDS_LOG2 says.
keys=${WEIR_KEYS:-125000}
if [ -n "${WEIR_LONG:-}" ]; then keys=${WEIR_KEYS:-1000000}; fi
words_log2=${WEIR_WORDS_LOG2:-$(python3 -c "import math; print(round(math.log2($keys * 4.194304)))")}
bulk_mb=$(( (1 << words_log2) * 8 / 1048576 + 1 ))
# The long form's table zone for as many keys: 26 bytes a key
# (weir_keyed_buckets_for at 1e-9), 2m for the pool's pages and the counts.
table_mb=$(( keys * 26 / 1000000 + 2 ))

# write_conf BURST_OF_ZONE_ONE [SIZE_OF_ZONE_ONE [KIND_OF_ZONE_ONE [REST_OF_ZONE_TAB]]]
write_conf() {
    cat > "$tmp/nginx.conf" << EOF
load_module $so;
worker_processes ${WORKERS:-2};
daemon on;
master_process on;
pid $tmp/nginx.pid;
error_log $tmp/logs/error.log info;
events { worker_connections 1024; }
http {
    access_log $tmp/logs/access.log;
    keepalive_requests 10000000;
    log_format weir '\$pid \$http_x_client \$status \$weir_limit_status \$weir_limit_zone \$uri';
    client_body_temp_path $tmp/body;
    proxy_temp_path $tmp/proxy;
    fastcgi_temp_path $tmp/fastcgi;
    uwsgi_temp_path $tmp/uwsgi;
    scgi_temp_path $tmp/scgi;
    weir_limit_zone \$http_x_client zone=one:${2:-1m} rate=1r/m burst=$1 ${3:-kind=window};
    weir_limit_zone \$http_x_client zone=idx:1m rate=1r/m burst=1 kind=window hashes=2;
    weir_limit_zone \$http_x_client zone=dry:1m rate=1r/m burst=1 kind=window;
    weir_limit_zone \$http_x_client zone=small:64k rate=1r/m burst=2 kind=window hashes=1;
    weir_limit_zone \$http_x_client zone=bulk:${bulk_mb}m rate=1r/m burst=2;
    weir_limit_zone \$http_x_client zone=smooth:1m rate=1r/s burst=3;
    weir_limit_zone \$http_x_client zone=win:1m rate=1r/s burst=3 kind=window;
    weir_limit_zone \$arg_c zone=arg:1m rate=1r/m burst=2 kind=window;
    weir_limit_zone k:\$http_x_client zone=cplx:1m rate=1r/m burst=2 kind=window;
    weir_limit_zone \$arg_o zone=org:1m rate=1r/m burst=5 kind=window;
    weir_limit_zone \$http_x_client zone=tuser:1m rate=1r/m burst=2;
    weir_limit_zone \$binary_remote_addr zone=bin:1m rate=1r/m burst=1 kind=window;
    weir_limit_zone k:\$binary_remote_addr:\$http_x_client zone=mix:1m rate=1r/m burst=1 kind=window;
    weir_limit_zone \$http_x_client zone=cnt:1m rate=1r/m burst=3 kind=window;
    weir_limit_zone \$http_x_client zone=cntdry:1m rate=1r/m burst=1 kind=window;
    weir_limit_zone \$http_x_client zone=tab:1m rate=1r/m ${4:-burst=3 store=table keys=10k};
    weir_limit_zone \$http_x_client zone=tabw:1m rate=1r/s burst=3 kind=window store=table;
    weir_limit_zone \$http_x_client zone=tref:32k rate=1r/m burst=1 store=table;
    weir_limit_zone \$http_x_client zone=tadm:32k rate=1r/m burst=1 store=table overflow=admit;
    weir_limit_zone \$http_x_client zone=tsh:32k rate=1r/m burst=1 store=table overflow=shared;
    weir_limit_zone \$http_x_client zone=tbulk:${table_mb}m rate=1r/m burst=2 store=table keys=$keys;
    server {
        listen 127.0.0.1:$port reuseport;
        root $tmp/html;
        access_log $tmp/logs/weir.log weir;
        add_header X-Weir \$weir_limit_status always;
        weir_limit zone=small;
        location = /a { weir_limit zone=one; }
        location = /b { weir_limit zone=one; }
        location /idx/ { weir_limit zone=idx; index index.html; }
        location = /dry { weir_limit zone=dry dry_run; weir_limit_log_level warn; }
        location = /code { weir_limit zone=idx; weir_limit_status 503; }
        location = /two { weir_limit zone=one; weir_limit zone=idx; }
        location = /two2 { weir_limit zone=idx; weir_limit zone=one; }
        location = /inherit { }
        location = /bulk { weir_limit zone=bulk; access_log off; }
        location = /arg { weir_limit zone=arg; }
        location = /smooth { weir_limit zone=smooth; }
        location = /win { weir_limit zone=win; }
        location = /cplx { weir_limit zone=cplx; }
        location = /tree { weir_limit zone=tuser; weir_limit zone=org; }
        location = /bin { weir_limit zone=bin; }
        location = /mix { weir_limit zone=mix; }
        location = /cnt { weir_limit zone=cnt; weir_limit zone=cntdry dry_run; }
        location = /tab { weir_limit zone=tab; }
        location = /tabw { weir_limit zone=tabw; }
        location = /tmix { weir_limit zone=tab; weir_limit zone=idx; }
        location = /tref { weir_limit zone=tref; access_log off; }
        location = /tadm { weir_limit zone=tadm; access_log off; }
        location = /tsh { weir_limit zone=tsh; access_log off; }
        location = /tbulk { weir_limit zone=tbulk; access_log off; }
        location = /health { return 204; }
    }
    server {
        listen 127.0.0.1:$mport reuseport;
        location = /metrics { weir_limit_metrics; }
        location = /metrics.json { weir_limit_metrics json; }
    }
}
EOF
}

workers() { pgrep -P "$master" | sort | tr '\n' ' '; }

start() {
    nginx -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/logs/error.log" || return 1
    for _ in $(seq 100); do
        [ -s "$tmp/nginx.pid" ] && curl -s -o /dev/null "http://127.0.0.1:$port/health" && break
        sleep 0.1
    done
    master=$(cat "$tmp/nginx.pid")
}

# get PATH KEY -> status
get() { curl -s -o /dev/null -w '%{http_code}' -H "X-Client: $2" "http://127.0.0.1:$port$1"; }
# counts PATH KEY N -> "200s 429s"
counts() {
    local ok=0 no=0 s
    for _ in $(seq "$3"); do
        s=$(get "$1" "$2")
        case $s in 200) ok=$((ok + 1)) ;; 429) no=$((no + 1)) ;; esac
    done
    echo "$ok $no"
}

# ---- nginx -t refuses bad configuration, naming the directive and value.
badconf() { # NAME ZONE_LINE LIMIT_LINE WANT
    cat > "$tmp/bad.conf" << EOF
load_module $so;
pid $tmp/bad.pid;
error_log $tmp/logs/bad.log;
events { }
http { $2 server { listen 127.0.0.1:$port; location / { $3 } } }
EOF
    local out
    out=$(nginx -t -p "$tmp" -c "$tmp/bad.conf" -e "$tmp/logs/bad.log" 2>&1)
    if [ $? -ne 0 ] && grep -qF -- "$4" <<< "$out"; then ok "nginx -t: $1"; else bad "nginx -t: $1: $out"; fi
}
badconf "zero rate" 'weir_limit_zone $http_x_client zone=z:1m rate=0r/s burst=3;' 'weir_limit zone=z;' 'weir_limit_zone: invalid "rate=0r/s"'
badconf "burst out of range (window)" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=2000 kind=window;' 'weir_limit zone=z;' 'weir_limit_zone: invalid "burst=2000"'
badconf "burst out of range (smooth)" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=2000000;' 'weir_limit zone=z;' 'weir_limit_zone: invalid "burst=2000000"'
badconf "burst zero" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=0;' 'weir_limit zone=z;' 'invalid "burst=0"'
badconf "unknown zone" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3;' 'weir_limit zone=nope;' 'weir_limit: unknown zone "zone=nope"'
badconf "size too small" 'weir_limit_zone $http_x_client zone=z:1k rate=1r/s burst=3;' 'weir_limit zone=z;' 'invalid "zone=z:1k"'
badconf "bad hashes" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3 hashes=9;' 'weir_limit zone=z;' 'invalid "hashes=9"'
badconf "bad rate unit" 'weir_limit_zone $http_x_client zone=z:1m rate=5r/h burst=3;' 'weir_limit zone=z;' 'invalid "rate=5r/h"'
badconf "17 enforced limits in one place" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3;' "$(printf 'weir_limit zone=z; %.0s' $(seq 17))" 'at most 16 enforced weir_limit'
badconf "weir_limit_metrics: unknown format" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3;' 'weir_limit zone=z; weir_limit_metrics xml;' 'weir_limit_metrics: invalid "xml"'
badconf "unknown kind" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3 kind=fast;' 'weir_limit zone=z;' 'invalid "kind=fast"'
badconf "unknown store" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3 store=tree;' 'weir_limit zone=z;' 'invalid "store=tree"'
badconf "unknown overflow policy" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3 store=table overflow=drop;' 'weir_limit zone=z;' 'invalid "overflow=drop"'
badconf "keys= without store=table" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3 keys=1000;' 'weir_limit zone=z;' 'invalid "keys=1000": keys= and overflow= are store=table'
badconf "a table with hashes" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3 store=table hashes=2;' 'weir_limit zone=z;' 'invalid "hashes=2": a table'
badconf "a table too large for its zone" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3 store=table keys=1m;' 'weir_limit zone=z;' 'zone "z" is too small for "keys=1m": its table is 203090 buckets'
badconf "zero keys" 'weir_limit_zone $http_x_client zone=z:1m rate=1r/s burst=3 store=table keys=0;' 'weir_limit zone=z;' 'invalid "keys=0"'

write_conf 3
out=$(nginx -t -p "$tmp" -c "$tmp/nginx.conf" -e "$tmp/logs/error.log" 2>&1)
if [ $? -eq 0 ]; then ok "nginx -t: the test config"; else bad "nginx -t: $out"; fi
start || { bad "nginx did not start: $(tail -5 "$tmp/logs/error.log")"; echo "$passed passed, $failed failed"; exit 1; }
check "two workers" 2 "$(workers | wc -w)"

# spread PATH KEY SENT: after SENT requests of KEY, more (refused, the
# burst spent) until both workers have served KEY (the access log's pids),
# 60 requests in all at most: the kernel picks each connection's worker
# (reuseport hashes its addresses), so ten can all land on one. Prints
# "WORKERS ADMITTED SENT": the workers that served KEY, how many of the
# further requests were admitted (none, when both workers share one
# limit: a worker with its own would admit its first request), all sent.
spread() {
    local sent=$3 admitted=0 served
    while :; do
        served=$(awk -v k="$2" '$2 == k { print $1 }' "$tmp/logs/weir.log" | sort -u | wc -l)
        if [ "$served" -ge 2 ] || [ "$sent" -ge 60 ]; then break; fi
        [ "$(get "$1" "$2")" = 200 ] && admitted=$((admitted + 1))
        sent=$((sent + 1))
    done
    echo "$served $admitted $sent"
}

# ---- exact counts per key across workers; keys independent.
check "key k1: burst 3 of 10 admitted, across workers" "3 7" "$(counts /a k1 10)"
read -r served admitted sent <<< "$(spread /a k1 10)"
if [ "$served" -ge 2 ] && [ "$admitted" -eq 0 ]; then
    ok "k1 was served by both workers, 3 of $sent admitted"
else
    bad "k1: served by $served worker(s) in $sent requests, each on a connection of its own; $admitted more admitted past the burst"
fi
check "key k1 shares its zone between locations" "0 3" "$(counts /b k1 3)"
check "key k2 is independent of k1" "3 2" "$(counts /a k2 5)"
check "an empty key is not limited" "20 0" "$(counts /a '' 20)"

# ---- the three ways a key is read: \$http_NAME straight from the headers
# (any case, the first of repeated ones, as nginx 1.22's variable), another
# lone variable by its index, a complex value by its script.
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "a header key in any case is one key" "200 200 200 429" \
    "$(for h in 'x-client' 'X-CLIENT' 'X-Client' 'x-cLiEnT'; do printf '%s ' "$(code -H "$h: h1" "http://127.0.0.1:$port/a")"; done | sed 's/ $//')"
check "repeated headers: the first is the key" "429 200" \
    "$(code -H 'X-Client: h1' -H 'X-Client: h2' "http://127.0.0.1:$port/a") $(code -H 'X-Client: h2' -H 'X-Client: h1' "http://127.0.0.1:$port/a")"
argcounts() { # KEY N
    local ok=0 no=0 s
    for _ in $(seq "$2"); do
        s=$(code "http://127.0.0.1:$port/arg?c=$1")
        case $s in 200) ok=$((ok + 1)) ;; 429) no=$((no + 1)) ;; esac
    done
    echo "$ok $no"
}
check "a \$arg_c key (read by index): burst 2 of 3" "2 1" "$(argcounts q1 3)"
check "an empty \$arg_c key is not limited" "4 0" "$(argcounts '' 4)"
check "a complex key (k:\$http_x_client): burst 2 of 3" "2 1" "$(counts /cplx x1 3)"

# ---- the two shapes at 1 r/s, burst 3: both admit 3 at once; the smooth
# (GCRA) word gives one back each second, limit_req's shape, the window
# word all three after 3 s.
retry_of() { curl -s -D - -o /dev/null -H "X-Client: $2" "http://127.0.0.1:$port$1" | tr -d '\r' | sed -n 's/^Retry-After: //p'; }
check "kind=smooth (the default): burst 3 of 4 at once" "3 1" "$(counts /smooth sh1 4)"
check "kind=window: burst 3 of 4 at once" "3 1" "$(counts /win sh1 4)"
check "kind=smooth: Retry-After 1 (one back each second)" 1 "$(retry_of /smooth sh1)"
check "kind=window: Retry-After 3 (all back after the window)" 3 "$(retry_of /win sh1)"
# Polled with a bound: the smooth zone admits again (after about 1 s)
# while the window zone still refuses (until 3 s).
for _ in $(seq 40); do [ "$(get /smooth sh1)" = 200 ] && break; sleep 0.1; done
check "kind=smooth: one more after a second, the window still shut" "429 429" "$(get /smooth sh1) $(get /win sh1)"

# ---- status, Retry-After, RateLimit headers, the variable.
h=$(curl -s -D - -o /dev/null -H "X-Client: k1" "http://127.0.0.1:$port/a" | tr -d '\r')
check "refused: 429" "HTTP/1.1 429 Too Many Requests" "$(head -1 <<< "$h")"
retry=$(sed -n 's/^Retry-After: //p' <<< "$h")
if [ -n "$retry" ] && [ "$retry" -ge 1 ] && [ "$retry" -le 180 ]; then ok "Retry-After $retry"; else bad "Retry-After [$retry]"; fi
check "RateLimit-Policy" '"one";q=3;w=180' "$(sed -n 's/^RateLimit-Policy: //p' <<< "$h")"
check "RateLimit" "\"one\";r=0;t=$retry" "$(sed -n 's/^RateLimit: //p' <<< "$h")"
check "\$weir_limit_status on a refusal" "REJECTED" "$(sed -n 's/^X-Weir: //p' <<< "$h")"
h=$(curl -s -D - -o /dev/null -H "X-Client: k9" "http://127.0.0.1:$port/a" | tr -d '\r')
check "\$weir_limit_status on a pass" "PASSED" "$(sed -n 's/^X-Weir: //p' <<< "$h")"
check "weir_limit_status 503" "200 503" "$(get /code c1) $(get /code c1)"

# ---- dry run admits all and logs.
check "dry run admits all" "5 0" "$(counts /dry d1 5)"
n=$(grep -c 'would refuse, dry run, zone "dry", key "d1"' "$tmp/logs/error.log")
check "dry run logs each would-be refusal" 4 "$n"
h=$(curl -s -D - -o /dev/null -H "X-Client: d1" "http://127.0.0.1:$port/dry" | tr -d '\r')
check "\$weir_limit_status in a dry run" "REJECTED_DRY_RUN" "$(sed -n 's/^X-Weir: //p' <<< "$h")"

# ---- the counts page (weir_limit_metrics) and \$weir_limit_zone. Zone cnt
# (burst 3) enforced and cntdry (burst 1) in a dry run, in one location: 10
# requests of key n1 are 3 admitted by cnt and 7 refused; cntdry, charged
# only for those 3, would admit 1 and refuse 2. Two requests without the
# header are unkeyed in both.
check "counts: cnt admits 3 of 10" "3 7" "$(counts /cnt n1 10)"
check "counts: no key, not limited" "2 0" "$(counts /cnt '' 2)"
m=$(python3 modules/nginx/test/metrics.py "$mport" /metrics) || bad "the counts page does not parse: $m"
want="cnt admitted 3
cnt dry_run_admitted 0
cnt dry_run_refused 0
cnt errors 0
cnt refused 7
cnt unkeyed 2
cnt words 65536
cntdry admitted 0
cntdry dry_run_admitted 1
cntdry dry_run_refused 2
cntdry errors 0
cntdry refused 0
cntdry unkeyed 2
cntdry words 65536"
check "counts: Prometheus text and JSON parse, agree, and count every request" "$want" "$(grep '^cnt' <<< "$m")"
check "counts: reading changes nothing" "$m" "$(python3 modules/nginx/test/metrics.py "$mport" /metrics)"
mcode() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "counts page: json by default where asked, 405 on POST, 400 on an unknown format" "application/json 405 400" \
    "$(curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$mport/metrics.json") $(mcode -X POST "http://127.0.0.1:$mport/metrics") $(mcode "http://127.0.0.1:$mport/metrics?format=xml")"
# \$weir_limit_zone names the zone that refused (in a dry run, that would
# have), in the access log.
zl=$(awk '$2 == "n1" { print $3, $4, $5 }' "$tmp/logs/weir.log" | sort | uniq -c | awk '{ print $1, $2, $3, $4 }')
check "\$weir_limit_zone names the refusing zone" "1 200 PASSED -
2 200 REJECTED_DRY_RUN cntdry
7 429 REJECTED cnt" "$zl"

# ---- keys in log lines: a binary key (\$binary_remote_addr) in hex, any
# other escaped: NUL and control bytes (from the address and a header), a
# quote and a backslash. No raw control byte reaches the error log.
check "a \$binary_remote_addr key: burst 1 of 2" "1 1" "$(counts /bin '' 2)"
check "the binary key is logged in hex" 1 \
    "$(grep -c 'refused, zone "bin", key 0x7f000001, client' "$tmp/logs/error.log")"
raw=$(printf 'x\001y\033[31m\177"\\\377')
check "a key of NUL and control bytes: burst 1 of 2" "200 429" \
    "$(code -H "X-Client: $raw" "http://127.0.0.1:$port/mix") $(code -H "X-Client: $raw" "http://127.0.0.1:$port/mix")"
check "the mixed key is logged escaped" 1 \
    "$(grep -cF 'refused, zone "mix", key "k:\x7f\x00\x00\x01:x\x01y\x1b[31m\x7f\"\\\xff", client' "$tmp/logs/error.log")"
long=$(printf 'a%.0s' $(seq 300))
check "a 300-byte key: burst 1 of 2" "200 429" \
    "$(code -H "X-Client: $long" "http://127.0.0.1:$port/mix") $(code -H "X-Client: $long" "http://127.0.0.1:$port/mix")"
check "a long key is logged up to its first 256 bytes, then ..." 1 \
    "$(grep -cF "refused, zone \"mix\", key \"k:\\x7f\\x00\\x00\\x01:${long:0:249}\"..., client" "$tmp/logs/error.log")"
check "no control byte but newlines in the error log" 0 \
    "$(python3 -c 'import sys; print(sum(b < 32 and b not in (9, 10) for b in open(sys.argv[1], "rb").read()))' "$tmp/logs/error.log")"

# ---- index: one request, one charge (burst 1).
check "a request through index is charged once" "200 429" "$(get /idx/ i1) $(get /idx/ i1)"

# ---- several weir_limit all apply; a level with none inherits.
# All or nothing, as limit_req: a request the later limit (idx) refuses
# is not charged to the earlier one (one, burst 3), and the reverse.
check "two limits: the tighter (idx, burst 1) applies" "1 2" "$(counts /two t1 3)"
check "two limits: refused by the last, the first was charged once" "2 1" "$(counts /a t1 3)"
check "two limits, first refuses: the tighter applies" "1 2" "$(counts /two2 t2 3)"
check "two limits, first refuses: the other was charged once" "2 1" "$(counts /a t2 3)"
check "inherited from the server (small, burst 2)" "2 2" "$(counts /inherit s1 4)"
check "\$weir_limit_zone with two enforced zones names the one that refused" "idx one" \
    "$(awk '$2 == "t1" && $6 == "/two" && $3 == 429 { print $5 }' "$tmp/logs/weir.log" | sort -u) $(awk '$2 == "t1" && $6 == "/a" && $3 == 429 { print $5 }' "$tmp/logs/weir.log" | sort -u)"

# ---- two limits charged together under concurrency, across both workers
# (weir_charge_all): an organisation's (one key for all, ?o=, burst 5) and
# each user's (burst 2). In each round 30 users send 2 requests each, all
# at once: never more than 5 admitted, none of a user's beyond 2.
tree_over=0 tree_ok=0
for round in 1 2 3 4 5; do
    out=$(for c in $(seq 30); do echo "r$round-u$c"; echo "r$round-u$c"; done |
        xargs -P 60 -I{} curl -s -o /dev/null -w '%{http_code} {}\n' -H "X-Client: {}" "http://127.0.0.1:$port/tree?o=org$round")
    admitted=$(grep -c '^200 ' <<< "$out")
    most=$(awk '$1 == 200 { n[$2]++ } END { m = 0; for (k in n) if (n[k] > m) m = n[k]; print m }' <<< "$out")
    tree_ok=$((tree_ok + admitted))
    if [ "$admitted" -gt 5 ] || [ "$most" -gt 2 ] || [ "$(grep -c '^429 ' <<< "$out")" -ne $((60 - admitted)) ]; then
        tree_over=$((tree_over + 1))
        echo "     round $round: $admitted admitted, a user's most $most: $(sort <<< "$out" | uniq -c | head -5)"
    fi
done
check "two limits at once, 5 rounds of 60 concurrent requests: never beyond a limit ($tree_ok admitted of 25)" 0 "$tree_over"

# ---- a zone holding a keyed table (store=table): each key exactly its
# burst, across both workers; the window word too.
check "table: key tk1, burst 3 of 10 admitted, across workers" "3 7" "$(counts /tab tk1 10)"
check "table: key tk2 is independent of tk1" "3 2" "$(counts /tab tk2 5)"
check "table, kind=window: burst 3 of 4, Retry-After 3" "3 1 3" "$(counts /tabw tw1 4) $(retry_of /tabw tw1)"
read -r served admitted sent <<< "$(spread /tab tk1 10)"
if [ "$served" -ge 2 ] && [ "$admitted" -eq 0 ]; then
    ok "table: tk1 was served by both workers, 3 of $sent admitted"
else
    bad "table: tk1 served by $served worker(s) in $sent requests, each on a connection of its own; $admitted more admitted past the burst"
fi
# A table beside a bloom in one place: the table is read first and charged
# after the bloom, so a refusal by either charges the other nothing.
check "table and bloom: the tighter (idx, burst 1) applies" "1 2" "$(counts /tmix tm1 3)"
check "table and bloom: the table was charged once" "2 1" "$(counts /tab tm1 3)"
check "table and bloom: refused by the table, the bloom is not charged" "3 0 0 1 200" \
    "$(counts /tab tm2 3) $(counts /tmix tm2 1) $(get /idx/ tm2)"
# Many keys never refuse one another: 8,000 keys (a table sized keys=10k),
# each sending its burst of 3 in three passes, then a fourth.
tab_out=
for pass in 1 2 3 4; do
    tab_out="$tab_out $(timeout 120 python3 modules/nginx/test/distinct.py "$port" /tab 8000 | sed -n 's/^distinct: ok=\([0-9]*\) refused=\([0-9]*\).*/\1:\2/p')"
done
check "table: 8,000 keys, each admitted exactly its burst of 3, then refused" " 8000:0 8000:0 8000:0 0:8000" "$tab_out"
# The overflow policy, seen in a tiny table (32k: its slots are read from
# the counts page) sent 4,000 new keys, one request each at 1r/m: every
# key past the room overflows. refuse: refused; admit: admitted; shared:
# one shared word (burst 1) admits the first overflowing key.
metrics_of() { python3 modules/nginx/test/metrics.py "$mport" /metrics | awk -v z="$1" -v f="$2" '$1 == z && $2 == f { print $3 }'; }
for zone in tref tadm tsh; do
    d=$(timeout 120 python3 modules/nginx/test/distinct.py "$port" /$zone 4000 | sed -n 's/^distinct: ok=\([0-9]*\) refused=\([0-9]*\).*/\1 \2/p')
    eval "${zone}_ok=\${d% *} ${zone}_no=\${d#* } ${zone}_over=\$(metrics_of $zone overflows) ${zone}_slots=\$(metrics_of $zone slots)"
done
echo "     tiny tables: $tref_slots slots; overflows refuse $tref_over, admit $tadm_over, shared $tsh_over"
if [ "$tref_over" -ge $((4000 - tref_slots)) ] && [ "$tref_no" -eq "$tref_over" ] && [ "$tref_ok" -eq $((4000 - tref_over)) ]; then
    ok "overflow=refuse: the $tref_over overflowing keys refused, the $tref_ok others admitted"
else
    bad "overflow=refuse: ok $tref_ok, refused $tref_no, overflows $tref_over, slots $tref_slots"
fi
if [ "$tadm_over" -ge $((4000 - tadm_slots)) ] && [ "$tadm_ok $tadm_no" = "4000 0" ]; then
    ok "overflow=admit: all 4000 admitted, $tadm_over of them by the policy"
else
    bad "overflow=admit: ok $tadm_ok, refused $tadm_no, overflows $tadm_over, slots $tadm_slots"
fi
if [ "$tsh_over" -ge $((4000 - tsh_slots)) ] && [ "$tsh_no" -eq $((tsh_over - 1)) ]; then
    ok "overflow=shared: of $tsh_over overflowing keys, the shared word admitted 1"
else
    bad "overflow=shared: ok $tsh_ok, refused $tsh_no, overflows $tsh_over, slots $tsh_slots"
fi

# ---- reload keeps the state; a changed burst applies in place; a changed
# kind or size is refused loudly (modules/nginx/test/reload.py, below, has
# the reload under load on the test build).
before=$(workers)
kill -HUP "$master"
for _ in $(seq 100); do [ "$(workers)" != "$before" ] && [ "$(workers | wc -w)" -eq 2 ] && break; sleep 0.1; done
if [ "$(workers)" != "$before" ]; then ok "reload: new workers"; else bad "reload: workers unchanged"; fi
check "reload keeps the state (k1 still refused)" "0 2" "$(counts /a k1 2)"
check "reload keeps the state (k3 fresh)" "3 1" "$(counts /a k3 4)"
check "reload keeps the counts" "$(grep '^cnt' <<< "$m")" "$(python3 modules/nginx/test/metrics.py "$mport" /metrics | grep '^cnt')"
check "reload keeps the table (tk1 still refused, tk3 fresh)" "0 2 3 1" "$(counts /tab tk1 2) $(counts /tab tk3 4)"
# refused_reload NAME WANT: a reload whose error log line says WANT.
refused_reload() {
    local lines
    lines=$(($(wc -l < "$tmp/logs/error.log") + 1)) # the lines after those there now
    kill -HUP "$master"
    for _ in $(seq 100); do tail -n +"$lines" "$tmp/logs/error.log" | grep "cannot change" >/dev/null && break; sleep 0.1; done
    if tail -n +"$lines" "$tmp/logs/error.log" | grep "$2" >/dev/null; then
        ok "$1 is refused loudly"
    else
        bad "$1: $(tail -n +"$lines" "$tmp/logs/error.log" | tail -3)"
    fi
}
write_conf 3 1m kind=smooth
before=$(workers)
refused_reload "a changed kind" 'weir_limit_zone "one": a reload cannot change a zone.s kind (window to smooth)'
check "the old config keeps serving, its state too" "0 1" "$(counts /a k3 1)"
check "same workers after the refused reload" "$before" "$(workers)"
write_conf 3 2m
refused_reload "a changed size" 'weir_limit_zone "one": a reload cannot change a zone.s size'
write_conf 3 1m kind=window 'burst=3 hashes=3'
refused_reload "a table made a bloom" 'weir_limit_zone "tab": a reload cannot change a zone.s store (table to bloom)'
write_conf 3 1m kind=window 'burst=3 store=table keys=10k overflow=admit'
refused_reload "a table's changed overflow policy" 'weir_limit_zone "tab": a reload cannot change a table.s overflow policy (refuse to admit)'
write_conf 3 1m kind=window 'burst=3 store=table keys=20k'
refused_reload "a table's changed size" 'weir_limit_zone "tab": a reload cannot change a table.s size'
write_conf 3 1m kind=window 'burst=3 store=table keys=10k kind=window'
refused_reload "a table's changed kind" 'weir_limit_zone "tab": a reload cannot change a zone.s kind (smooth to window)'
check "after the refused table reloads, its state is kept" "0 1" "$(counts /tab tk3 1)"
check "after the refused resize, the state is kept" "0 1" "$(counts /a k3 1)"
# A burst of 4 where k3 spent 3 of 3: its window keeps its count, one more.
# The table's too (tab, smooth 1r/m): tk3 owes about 3 minutes of a bucket
# of 4 now, one more; the master publishes the new limit in the table.
write_conf 4 1m kind=window 'burst=4 store=table keys=10k'
before=$(workers)
lines=$(($(wc -l < "$tmp/logs/error.log") + 1))
kill -HUP "$master"
for _ in $(seq 100); do [ "$(workers)" != "$before" ] && [ "$(workers | wc -w)" -eq 2 ] && break; sleep 0.1; done
if [ "$(workers)" != "$before" ]; then ok "a changed burst reloads"; else bad "a changed burst: workers unchanged"; fi
check "a changed burst keeps the words (k3: one more of 4)" "1 1" "$(counts /a k3 2)"
check "a changed burst applies to a fresh key (k5: 4 of 4)" "4 1" "$(counts /a k5 5)"
check "a table's changed burst is published, its words kept" 1 \
    "$(tail -n +"$lines" "$tmp/logs/error.log" | grep -c 'weir_limit_zone "tab": rate 1r/m to 1r/m, burst 3 to 4; its words are kept')"
check "a table's changed burst keeps the words (tk3: one more of 4)" "1 1" "$(counts /tab tk3 2)"
check "a table's changed burst applies to a fresh key (tk5: 4 of 4)" "4 1" "$(counts /tab tk5 5)"

# ---- many distinct keys (X-Client), each sending half its burst (1 of 2)
# in one window: the false refusals stay under the bound include/weir.h
# gives (modules/nginx/test/false_refusals.py: k = 3 words in one line of
# 8, a word spent by floor(1 / f) = 2 other keys). The CI form is 125,000
# keys in 2^19 words (5m), the load of 10^6 keys in 2^22 (33m); the long
# form: WEIR_LONG=1 (or WEIR_KEYS=1000000) bash .ci/run nginx.
dist=$(timeout 600 python3 modules/nginx/test/distinct.py "$port" /bulk "$keys" | sed -n 's/^distinct: //p')
ok_n=$(sed -n 's/.*ok=\([0-9]*\).*/\1/p' <<< "$dist")
no_n=$(sed -n 's/.*refused=\([0-9]*\).*/\1/p' <<< "$dist")
total=$((ok_n + no_n))
f=$(python3 modules/nginx/test/false_refusals.py "$total" $((1 << words_log2)) 3 0.5)
limit=$(python3 -c "print(int($total * $f))")
echo "     distinct keys: $total in 2^$words_log2 words (${bulk_mb}m), $no_n falsely refused (bound F = $f: $limit)"
if [ "$total" -ge $((keys * 99 / 100)) ] && [ "$no_n" -le "$limit" ]; then
    ok "$total distinct keys: $no_n false refusals <= $limit"
else
    bad "distinct keys: [$dist], limit $limit"
fi

# The long form only (WEIR_LONG=1 or WEIR_KEYS=N): as many distinct keys,
# the same load, in a table sized keys=N: none refused, no overflow.
if [ -n "${WEIR_LONG:-}${WEIR_KEYS:-}" ]; then
    dist=$(timeout 900 python3 modules/nginx/test/distinct.py "$port" /tbulk "$keys" | sed -n 's/^distinct: //p')
    over=$(python3 modules/nginx/test/metrics.py "$mport" /metrics | awk '$1 == "tbulk" && $2 == "overflows" { print $3 }')
    echo "     distinct keys in a table (keys=$keys, ${table_mb}m): $dist, $over overflows"
    check "$keys distinct keys in a table: all admitted, no overflow" "ok=$keys refused=0 other=0 0" "$dist $over"
fi

stop
if [ -z "$(pgrep -f "$tmp/nginx.conf")" ]; then ok "nginx stopped by its pid"; else bad "nginx still running"; fi

# ---- the conformance traces, on the module's test build (its own nginx).
if test_so=$(WEIR_NGINX_TEST_CLOCK=1 WEIR_LIB=${WEIR_LIB:-$root/target/release/libweir.a} \
    modules/nginx/build.sh "$root/target/nginx-test"); then
    replay=$(timeout 300 python3 modules/nginx/test/replay.py "$test_so" "$so" 2>&1)
    sed 's/^/     /' <<< "$replay"
    counts=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' <<< "$replay")
    if [ -n "$counts" ]; then
        passed=$((passed + ${counts% *}))
        failed=$((failed + ${counts#* }))
    else
        bad "the trace replay did not finish"
    fi
    # A reload that changes a zone's rate and burst, under load: bloom
    # zones, then table zones.
    for script in reload reload_table; do
        reload=$(timeout 300 python3 "modules/nginx/test/$script.py" "$test_so" 2>&1)
        sed 's/^/     /' <<< "$reload"
        counts=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' <<< "$reload")
        if [ -n "$counts" ]; then
            passed=$((passed + ${counts% *}))
            failed=$((failed + ${counts#* }))
        else
            bad "the reload test ($script.py) did not finish"
        fi
    done
else
    bad "the test build did not build"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
