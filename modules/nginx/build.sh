#!/usr/bin/env bash
# Builds the weir nginx module against Debian's nginx-dev, the way Debian's
# own nginx_mod helper does, and prints the path of the .so.
#   modules/nginx/build.sh [OUT_DIR]      (default: target/nginx)
#   WEIR_NGINX_TEST_CLOCK=1 modules/nginx/build.sh OUT_DIR
#       a test build (-DWEIR_TEST_CLOCK): requests may carry their time and
#       zones their seed, for the conformance replays (test/replay.py).
#       Never a build to serve with.
# Needs: apt-get install nginx nginx-dev; a Rust toolchain (builds
# libweir.a with cargo build --release unless WEIR_LIB names one).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/target/nginx}
src=/usr/share/nginx/src
[ -d "$src" ] || { echo "build.sh: $src missing: apt-get install nginx-dev" >&2; exit 1; }
if [ -z "${WEIR_LIB:-}" ]; then
    (cd "$root" && cargo build --release --lib --quiet)
    WEIR_LIB=$root/target/release/libweir.a
fi
export WEIR_ROOT=$root WEIR_LIB
test_clock=
if [ "${WEIR_NGINX_TEST_CLOCK:-}" = 1 ]; then test_clock=-DWEIR_TEST_CLOCK; fi
mkdir -p "$out"
# nginx's auto/make names an object by sed rules for .c, .cc, .cpp and .S
# sources that also match inside the build directory's own path: a mktemp
# name "tmp.S..." came out "tmp.o..." and make found no rule for it. So the
# build directory's path holds no dot.
base=${TMPDIR:-/tmp}
case $base in *.*) base=/tmp ;; esac
work=$(mktemp -d "$base/weir-nginx-XXXXXXXX")
trap 'rm -rf "$work"' EXIT
# configure writes into the source tree: work on a copy.
cp -a "$src" "$work/src"
cd "$work/src"
. ./conf_flags
./configure --with-cc-opt="$(dpkg-buildflags --get CFLAGS) -fPIC $(dpkg-buildflags --get CPPFLAGS) $test_clock" \
    --with-ld-opt="$(dpkg-buildflags --get LDFLAGS) -fPIC" "${NGX_CONF_FLAGS[@]}" \
    --add-dynamic-module="$root/modules/nginx" --builddir="$work/build" > "$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; exit 1; }
make -f "$work/build/Makefile" -C "$work/src" modules > "$work/make.log" 2>&1 ||
    { cat "$work/make.log" >&2; exit 1; }
grep -iE "warning" "$work/make.log" >&2 || true
# Installed by rename: an nginx running with the old .so maps it, and
# rewriting that file in place crashes its workers (SIGSEGV, seen when a
# benchmark rebuilt the module under a running one).
cp "$work/build/ngx_http_weir_limit_module.so" "$out/.ngx_http_weir_limit_module.so.$$"
mv -f "$out/.ngx_http_weir_limit_module.so.$$" "$out/ngx_http_weir_limit_module.so"
echo "$out/ngx_http_weir_limit_module.so"
