#!/usr/bin/env bash
# about: instruction counts (callgrind) of a few decisions, weir beside governor: the smoke form of benches/counts/counts.py
# tier: full
# order: 130
# needs-commands: cargo cc=gcc valgrind=valgrind python3=python3
#
# The instruction-count table in its smoke form: builds the C
# library, the C loops (benches/counts/weir_counts.c) and the Rust peers
# crate (benches/peers/, its own target dir target/peers), counts a few rows
# with callgrind and prints them. Fails when a case cannot be built or run,
# or answers the other way from its name (a refusing row that allowed).
# Then the keyed table's promise at 10^6 keys in its footprint for an
# overflow chance of 10^-9 (native, about 2 s): 10^6 keys each sending half
# their burst, none refused (benches/peers/src/bin/keyed-memory.rs).
# Needs: valgrind, a C compiler, python3. The full tables:
#   python3 benches/counts/counts.py   (rewrites its section of BENCHMARKS.md)
#   python3 benches/counts/keyed.py    (the keyed table's section, printed)
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 benches/counts/counts.py --smoke
target/peers/release/keyed-memory refusals
