#!/usr/bin/env bash
# about: a shedder decision that opens a bucket costs the same at 10 and 400 buckets (callgrind)
# tier: full
# order: 120
# needs-commands: cargo cc=gcc valgrind=valgrind
#
# Instructions per weir_shedder_allow, counted by callgrind, at 10, 50 and
# 400 buckets: for decisions that open a new bucket ("new") and for
# decisions inside one bucket ("same"). A decision never rescans the window,
# so the cost must not grow with the bucket count: the check fails when a
# new-bucket decision at 400 buckets costs more than twice one at 10.
# Needs: valgrind, a C compiler. Runs from the repo root.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --lib --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -Wall -Wextra -Wpedantic -Werror -Iinclude benches/callgrind/shedder.c \
    target/release/libweir.a -lpthread -ldl -lm -o "$out/shedder"
calls=2000
declare -A per
for size in 10 50 400; do
    for mode in new same; do
        valgrind --tool=callgrind --toggle-collect=weir_shedder_allow \
            --callgrind-out-file="$out/cg.$size.$mode" "$out/shedder" "$size" "$mode" "$calls" \
            >/dev/null 2>&1
        total=$(awk '/^(summary|totals):/ {print $2; exit}' "$out/cg.$size.$mode")
        per[$size.$mode]=$((total / calls))
        printf 'size %4d  %-4s  %6d instructions per weir_shedder_allow\n' \
            "$size" "$mode" "${per[$size.$mode]}"
    done
done
if ((per[400.new] <= 2 * per[10.new])); then
    echo "1 passed, 0 failed"
else
    echo "0 passed, 1 failed: a new-bucket decision at 400 buckets costs ${per[400.new]}, at 10 ${per[10.new]}"
    exit 1
fi
