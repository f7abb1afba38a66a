#!/usr/bin/env bash
# about: the pool's instruction-count targets: the C boundary, flat with size, the 0.2.0 knobs
# tier: full
# order: 140
# needs-commands: cargo cc=gcc valgrind=valgrind python3=python3
#
# The pool's instruction-count targets (BENCHMARKS.md),
# counted the way benches/counts/counts.py counts every row: callgrind,
# two loop lengths differenced, each binary's empty loop subtracted.
#   take+give through the C ABI          <= 1.3x the core's (weir-core)
#   take+give with the 0.2.0 knobs on    <= 1.1x with them off
#   take+give at size 1e5                <= 1.2x at size 10
# Needs valgrind, a C compiler, cargo. Runs from the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 - <<'PY'
import sys
sys.path.insert(0, "benches/counts")
import counts

bins = counts.build()
n1, n2 = 2000, 12000
def per(side, name):
    loops = counts.C_LOOPS if side == "c" else counts.RUST_LOOPS
    return counts.per_iteration(bins[side], loops[name], name, n1, n2)["Ir"]
empty = {side: per(side, "empty") for side in ("c", "rust")}
def cost(side, name):
    return per(side, name) - empty[side]
c10 = cost("c", "pool_take_give_10")
rows = [
    ("pool take+give C ABI vs core", c10, cost("rust", "core_pool_take_give_10"), 1.3),
    ("pool take+give knobs on vs off", cost("c", "pool_take_give_knobs_10"), c10, 1.1),
    ("pool take+give 1e5 vs 10", cost("c", "pool_take_give_1e5"), c10, 1.2),
]
failed = 0
for row, a, b, most in rows:
    ok = a <= most * b
    failed += not ok
    print(f"{row}: {a:.0f} / {b:.0f} = {a / b:.3f} (at most {most}) {'ok' if ok else 'FAILED'}")
print(f"{len(rows) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
