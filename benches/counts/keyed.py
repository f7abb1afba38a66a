#!/usr/bin/env python3
"""The keyed table's figures for BENCHMARKS.md ("Keyed table"): weir's keyed
table (weir-core) at 10^6 active keys in its footprint for an overflow
chance of 10^-9, beside governor's keyed limiter (its default hasher, and
foldhash) and weir's bloom, all in benches/peers/src/bin/keyed-peers.rs
as a Rust user builds them, counted as benches/counts/counts.py counts (its functions).

    python3 benches/counts/keyed.py          prints the section's table
    python3 benches/counts/keyed.py --no-ll  the same without cachegrind
    python3 benches/counts/keyed.py --quick  the table's and governor keyed's
        (default hasher) instructions, the table's for a new key each call
        (core_keyed_new), and the table's last-level misses at LLs of 1, 2
        and 8 MiB: no times, no memory (a few minutes)

Instructions: callgrind on loop_<case> at two iteration counts, differenced,
the empty loop subtracted. Every keyed row makes its 16-byte key in the
loop (`keys_only` is that alone) and steps through the 10^6 keys by a
stride prime to 10^6, so that a run's keys are spread over the whole fill.
Last-level misses: callgrind --cache-sim=yes inside the loop, at two
iteration counts differenced, at two LL sizes (16-way, 64-byte lines):
the L3 lscpu names (rounded down to a power of two) and 8 MiB, a third of
the table.
Times: the fastest of seven native runs, in three rounds over every case,
the empty loop subtracted. Memory and false refusals: target/peers/release/
keyed-memory.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import counts  # noqa: E402

ROOT = counts.ROOT
PEERS = os.path.join(ROOT, "target", "peers", "release")

# case: loop function
CASES = {
    "keys_only": "keys_only",
    "governor_keyed_default_allow": "governor_keyed_default",
    "governor_keyed_default_refuse": "governor_keyed_default",
    "governor_keyed_fast_allow": "governor_keyed_fast",
    "governor_keyed_fast_refuse": "governor_keyed_fast",
    "core_keyed_allow": "core_keyed",
    "core_keyed_refuse": "core_keyed",
    "core_bloom_allow_2pow22": "core_bloom",
    "core_bloom_allow_2pow20": "core_bloom",
}
LL_CASES = ["core_keyed_allow", "governor_keyed_default_allow", "governor_keyed_fast_allow",
            "core_bloom_allow_2pow22"]


def ll_misses(binary, loop, case, n1, n2, ll):
    """Last-level misses (data read and write, instruction read) per
    iteration of loop_<loop>, counted by callgrind's cache simulation inside
    the loop only (--toggle-collect; the simulated caches run from the
    program's start), at two iteration counts differenced. Only inside the
    loop: governor's maps are seeded at random, so whole-program runs differ
    in their setup from run to run."""
    def run_at(n):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "cg.out")
            counts.run(["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--LL={ll},16,64",
                        "--toggle-collect=loop_" + loop, "--callgrind-out-file=" + out,
                        binary, case, str(n)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            text = open(out).read()
            events = re.search(r"^events: (.*)$", text, re.M).group(1).split()
            totals = [int(x) for x in
                      re.search(r"^(?:summary|totals): (.*)$", text, re.M).group(1).split()]
            c = dict(zip(events, totals))
            return c.get("DLmr", 0) + c.get("DLmw", 0) + c.get("ILmr", 0)
    return (run_at(n2) - run_at(n1)) / (n2 - n1)


def parallel(jobs):
    """Runs the callables two at a time (counts and simulated misses do not
    depend on the machine's load); their answers in order."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda job: job(), jobs))


QUICK_CASES = ["keys_only", "governor_keyed_default_allow", "governor_keyed_default_refuse",
               "core_keyed_allow", "core_keyed_refuse", "core_keyed_new"]
QUICK_LL = [1 << 20, 2 << 20, 8 << 20]


def quick(peers, n1, n2):
    """--quick: the instruction rows that bind the table's targets and its
    last-level misses with LLs far smaller than the table, printed as they
    come."""
    empty = counts.per_iteration(peers, "empty", "empty", n1, n2)["Ir"]
    # core_keyed_new: a new key each call (counted only; not in CASES,
    # whose rows are also timed over 10^6 calls).
    loops = dict(CASES, core_keyed_new="core_keyed_new")
    instr = parallel([lambda c=c: counts.per_iteration(peers, loops[c], c, n1, n2)["Ir"]
                      for c in QUICK_CASES])
    print("| case | instructions |\n|---|---:|")
    for case, i in zip(QUICK_CASES, instr):
        print(f"| `{case}` | {i - empty:.1f} |")
    found = parallel([lambda ll=ll: ll_misses(peers, "core_keyed", "core_keyed_allow", 20000, 60000, ll)
                      for ll in QUICK_LL])
    print("\n| case | " + " | ".join(f"LL {ll >> 20} MiB" for ll in QUICK_LL) + " |")
    print("|---|" + "---:|" * len(QUICK_LL))
    print("| `core_keyed_allow` | " + " | ".join(f"{m:.2f}" for m in found) + " |")


def main():
    started = time.time()
    counts.run(["cargo", "build", "--release", "--quiet", "--manifest-path", "benches/peers/Cargo.toml",
                "--target-dir", os.path.join(ROOT, "target", "peers")])
    peers = os.path.join(PEERS, "keyed-peers")
    n1, n2 = 2000, 22000
    if "--quick" in sys.argv:
        quick(peers, n1, n2)
        return
    empty = counts.per_iteration(peers, "empty", "empty", n1, n2)["Ir"]
    instr = parallel([lambda c=c, l=l: counts.per_iteration(peers, l, c, n1, n2)["Ir"]
                      for c, l in CASES.items()])
    rows = {case: {"instr": i - empty, "ns": float("inf")} for case, i in zip(CASES, instr)}
    print(rows, file=sys.stderr, flush=True)
    empty_ns = float("inf")
    for _ in range(3):
        empty_ns = min(empty_ns, counts.native_ns(peers, "empty", 1000000))
        for case in rows:
            rows[case]["ns"] = min(rows[case]["ns"], counts.native_ns(peers, case, 1000000))
    for row in rows.values():
        row["ns"] = max(row["ns"] - empty_ns, 0.0)
    sizes = [counts.ll_bytes(), 8 << 20]
    misses = {}
    if "--no-ll" not in sys.argv:
        keys = [(case, ll) for case in LL_CASES for ll in sizes]
        found = parallel([lambda c=c, ll=ll: ll_misses(peers, CASES[c], c, 20000, 60000, ll)
                          for c, ll in keys])
        misses = dict(zip(keys, found))
        print(misses, file=sys.stderr, flush=True)
    memory = [subprocess.run([os.path.join(PEERS, "keyed-memory"), c], capture_output=True, text=True,
                             check=True).stdout.strip()
              for c in ("governor_default", "governor_fast", "weir_keyed", "weir_bloom_2pow22")]
    refusals = subprocess.run([os.path.join(PEERS, "keyed-memory"), "refusals"], capture_output=True,
                              text=True, check=True).stdout.strip()

    model, l3, cpus = counts.cpu()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    out = [f"Generated by `python3 benches/counts/keyed.py` on "
           f"{time.strftime('%Y-%m-%d at %H:%M UTC', time.gmtime())}, commit `{commit}`, in "
           f"{time.time() - started:.0f} s. CPU: {model}, {cpus} CPUs, L3 {l3}; load average at the end "
           f"{os.getloadavg()[0]:.1f}.", "",
           "| case | instructions | ns |", "|---|---:|---:|"]
    for case, row in rows.items():
        out.append(f"| `{case}` | {row['instr']:.1f} | {row['ns']:.2f} |")
    if misses:
        out += ["", "Last-level misses per decision (callgrind --cache-sim=yes, 16-way, 64-byte lines):", "",
                "| case | " + " | ".join(f"LL {ll >> 20} MiB" for ll in sizes) + " |",
                "|---|" + "---:|" * len(sizes)]
        for case in LL_CASES:
            out.append(f"| `{case}` | " + " | ".join(f"{misses[(case, ll)]:.2f}" for ll in sizes) + " |")
    out += ["", "Memory at 10^6 keys and false refusals (`keyed-memory`):", "", "```"] + memory + \
           [refusals, "```"]
    gov = rows["governor_keyed_default_allow"]["instr"]
    out += ["", f"Keyed table allow / governor keyed (default hasher) allow: "
                f"{rows['core_keyed_allow']['instr']:.1f} / {gov:.1f} = "
                f"{rows['core_keyed_allow']['instr'] / gov:.2f}× (at most 1.2×); refuse: "
                f"{rows['core_keyed_refuse']['instr']:.1f} / {rows['governor_keyed_default_refuse']['instr']:.1f} = "
                f"{rows['core_keyed_refuse']['instr'] / rows['governor_keyed_default_refuse']['instr']:.2f}×."]
    print("\n".join(out))


if __name__ == "__main__":
    main()
