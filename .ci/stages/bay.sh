#!/usr/bin/env bash
# about: the bay in headless Chromium: every panel against a native run and the copied C, titled axes, round ticks, the cursor readout, zoom, every select, the docs' pictures current
# tier: full
# order: 180
# needs-commands: cargo chromium=chromium node=nodejs npm=npm python3=python3 curl=curl cc=gcc
# needs-rust-targets: wasm32-unknown-unknown
# needs-npm-ci: bay
#
# The bay's checks: the page's wasm builds, every panel plots in Debian's
# headless Chromium (uPlot drawing) what the native run gives point by
# point, each panel's copied C compiles against include/weir.h into its
# replay in bay/c/, which prints the same series row for row; every plot's
# axes are titled with units and count axes tick on whole numbers, the
# readout under the cursor matches the run, drag zooms, every choice
# redraws the plot; a screenshot of every panel; and the README's pictures
# (docs/bay-*.png) plot what the page plots now (docs/bay-*.json).
# `BAY_PICTURES=write bash .ci/run bay` rewrites those pictures first.
# Screenshots and the C programs land in target/bay-shots (or $BAY_SHOTS).
# Needs: rustup target wasm32-unknown-unknown; Debian packages chromium,
# nodejs, npm, a C compiler; uPlot and playwright-core in bay/node_modules
# (the install stage's npm ci). Runs from the repo root; no stdin.
set -euo pipefail
cd "$(dirname "$0")/../.."
pictures=${BAY_PICTURES:-}
root=$PWD
out=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$out"
}
trap cleanup EXIT

[ -x /usr/bin/chromium ] || { echo "bay.sh: /usr/bin/chromium missing (apt-get install chromium)"; exit 1; }
cargo build --release -p weir --lib -q
cargo build --release -p bay -q
cargo build --release -p bay --lib --target wasm32-unknown-unknown -q
cp target/wasm32-unknown-unknown/release/bay.wasm bay/web/bay.wasm

# uPlot (the page's plots, served by `bay serve` from bay/node_modules) and
# playwright-core (these tests) come from the install stage's npm ci.
[ -f bay/node_modules/uplot/dist/uPlot.iife.min.js ] && [ -d bay/node_modules/playwright-core ] ||
  { echo "bay: bay/node_modules lacks uPlot or playwright-core: (cd bay && npm ci)"; exit 1; }

# A high port chosen by the kernel, then served by pid and polled, bounded.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BAY_NO_BUILD=1 ./target/release/bay serve --port "$port" >"$out/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do
  curl -sf -o /dev/null "http://127.0.0.1:$port/" && break
  kill -0 "$server" 2>/dev/null || { cat "$out/serve.log"; exit 1; }
  sleep 0.1
done
curl -sf -o /dev/null "http://127.0.0.1:$port/" || { echo "bay.sh: the server never answered"; exit 1; }

BAY_URL="http://127.0.0.1:$port/" BAY_NATIVE="$root/target/release/bay" BAY_OUT="${BAY_SHOTS:-$root/target/bay-shots}" \
  WEIR_LIB="$root/target/release/libweir.a" WEIR_ROOT="$root" BAY_PICTURES="$pictures" \
  timeout 400 node bay/test/browser.mjs
