#!/usr/bin/env bash
# Regenerates the Go table of BENCHMARKS.md (section "Go package", between
# its go-table markers): instructions per decision from cachegrind, then
# one `go test -bench Table` run of every pair, interleaved.
#
# Instructions: each side runs alone under cachegrind at two decision
# counts, and the difference of the totals over the difference of the
# counts is its instructions per decision (the runtime's start and the
# side's setup cancel). Totals, not callgrind's per-function toggle, which
# misreads cgo's stack switches.
#
# Usage: go/bench/run.sh [--no-write] [--instr FILE]   (from anywhere;
# needs go, valgrind, pkg-config, and cargo if target/release/libweir.a is
# stale). --instr reuses the counts of an earlier run (its "instructions:"
# lines, as "side count") instead of running cachegrind again.
# Environment: WEIR_BENCH_ROUNDS (9), WEIR_BENCH_MS (30), N1/N2 (cachegrind
# counts, 20000 and 40000).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
write=1 instr_from=
while [ $# -gt 0 ]; do
  case $1 in
    --no-write) write=0 ;;
    --instr) instr_from=$2; shift ;;
    *) echo "run.sh: unknown argument $1"; exit 2 ;;
  esac
  shift
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# A fixed prefix and this checkout's own build cache: go's cache key for a
# cgo package leaves out pkg-config's answer (see .ci/stages/go-bench.sh).
export GOCACHE="$root/target/go-cache"
PKG_CONFIG_PATH=$("$here/stage-prefix.sh" "$root/target/go-prefix")
export PKG_CONFIG_PATH
cd "$here"
go test -c -o "$scratch/bench.test" .
bin=$scratch/bench.test

n1=${N1:-20000}
n2=${N2:-40000}
refs() {
  WEIR_BENCH_ONE="$1" WEIR_BENCH_N="$2" GOMAXPROCS=1 GOGC=off \
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bin" 2>&1 |
    sed -n 's/.*I *refs: *//p' | tr -d ,
}
: > "$scratch/instr"
[ -n "$instr_from" ] && cp "$instr_from" "$scratch/instr" && : > "$scratch/sides"
[ -z "$instr_from" ] && WEIR_BENCH_LIST=1 "$bin" -test.run '^TestListSides$' | sed -n 's/^SIDE //p' > "$scratch/sides"
while IFS= read -r side; do
  a=$(refs "$side" "$n1")
  b=$(refs "$side" "$n2")
  per=$(( (b - a) / (n2 - n1) ))
  echo "$side $per" >> "$scratch/instr"
  echo "instructions: $side: $per"
done < "$scratch/sides"

WEIR_BENCH_TABLE="$scratch/table.md" WEIR_BENCH_INSTR="$scratch/instr" \
  "$bin" -test.run '^$' -test.bench '^BenchmarkTable$' -test.benchtime 1x -test.v |
  grep -v '^ *|' || true
[ -s "$scratch/table.md" ] || { echo "run.sh: no table was written"; exit 1; }
cat "$scratch/table.md"

if [ "$write" = 1 ]; then
  {
    echo "Measured $(date -u +%Y-%m-%d) by go/bench/run.sh on $(uname -m), $(go version | cut -d' ' -f3), $(nproc) cores;"
    echo "ns and allocations are medians of ${WEIR_BENCH_ROUNDS:-9} interleaved rounds, the ratio the median of the rounds' ratios; instructions from cachegrind ($n2 − $n1 decisions, differenced)."
    echo
    cat "$scratch/table.md"
  } > "$scratch/section"
  python3 - "$root/BENCHMARKS.md" "$scratch/section" <<'PY'
import sys
path, section = sys.argv[1], open(sys.argv[2]).read()
text = open(path).read()
begin, end = "<!-- go-table: begin -->", "<!-- go-table: end -->"
if begin not in text or end not in text:
    sys.exit("BENCHMARKS.md has no go-table markers")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + "\n" + section + end + tail)
PY
  echo "run.sh: BENCHMARKS.md's Go table rewritten"
fi
