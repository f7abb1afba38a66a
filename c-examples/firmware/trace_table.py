#!/usr/bin/env python3
"""Turns the conformance traces (traces/README.md) into a C table that the
firmware trace runner (c-examples/firmware/traces.c) replays from flash.

    trace_table.py OUT_DIR FACE [words|handles|bloom|keyed, or several joined by +]

Reads every trace under traces/ and the face's lines in traces/skips.txt
(FACE is firmware-m4 or firmware-m0), and writes OUT_DIR/trace_table.h
(the operation codes and the table's types) and OUT_DIR/trace_table.c
(every call of every trace the face does not skip: its operation, line,
arguments and expected answers as 64-bit words). The table is const and
links into flash: the image's RAM use does not grow with the traces. A
trace that is neither listed nor of a type the firmware build has, and an
operation this runner does not know, stop the build with the file and
line: nothing is dropped silently."""

import os
import sys

# The firmware build's operations, in the order of their codes, with how
# many arguments each takes (None: variable, see backoff_schedule).
OPS = [
    ("rate_limit_new", 2), ("rate_limit_set", 3), ("rate_set", 1),
    ("rate_allow", 1), ("rate_next", 1),
    ("gcra_limit_new", 2), ("gcra_limit_set", 4), ("gcra_set", 1),
    ("gcra_allow", 1), ("gcra_allow_n", 2), ("gcra_next", 1), ("gcra_room", 1),
    ("limiter_bucket", 6), ("limiter_fixed_window", 5), ("limiter_cooldown", 5),
    ("limiter_try_consume", 2), ("limiter_consume", 2), ("limiter_refund", 3),
    ("limiter_available", 1), ("limiter_capacity", 0),
    ("limiter_last_refill", 1), ("limiter_window_start", 1), ("limiter_cooldown_end", 0),
    ("backoff_preset", 0), ("backoff_full_jitter", 0), ("backoff_set", 6),
    ("backoff_check", 0), ("backoff_more", 1), ("backoff_delay", 3),
    ("backoff_ceiling", 1), ("backoff_schedule", None),
    ("deadline_start", 2), ("deadline_set", 2), ("deadline_expired", 1),
    ("deadline_remaining", 1),
    # The handle types, placed: a `_new` line lays the handle in the
    # runner's static arena with `weir_X_init_in` (the firmware build has no
    # heap); every other call is the C call itself.
    ("bucket_new", 3), ("bucket_take", 2), ("bucket_refund", 3), ("bucket_next", 2),
    ("bucket_tokens", 1),
    ("window_new", 3), ("window_add", 2), ("window_read_total", 2),
    ("window_read_buckets", 3), ("window_size", 0), ("window_width", 0),
    ("sliding_new", 2), ("sliding_take", 1), ("sliding_left", 1), ("sliding_next", 1),
    ("period_new", 3), ("period_take", 1), ("period_left", 1), ("period_next", 1),
    ("gate_new", 1), ("gate_enter", 0), ("gate_leave", 0), ("gate_held", 0),
    ("budget_new", 8), ("budget_deposit", 1), ("budget_withdraw", 1), ("budget_left", 1),
    ("budget_tokens", 1),
    ("concurrency_new", 8), ("concurrency_enter", 1), ("concurrency_leave", 3),
    ("concurrency_limit", 0), ("concurrency_flying", 0), ("concurrency_long_rtt", 0),
    ("breaker_new", 11), ("breaker_allow", 2), ("breaker_pass", 2), ("breaker_fail", 2),
    ("breaker_ratio", 1), ("breaker_read_tally", 1),
    ("shedder_new", 8), ("shedder_allow", 2), ("shedder_allow_class", 3),
    ("shedder_pass", 2), ("shedder_fail", 1), ("shedder_flying", 0), ("shedder_read_stats", 1),
    ("pool_new", 7), ("pool_take", 1), ("pool_made", 2), ("pool_made_jittered", 3),
    ("pool_unmade", 0), ("pool_give", 2), ("pool_drop", 1), ("pool_evict", 2), ("pool_close", 1),
    ("pool_mark_old", 0), ("pool_make_ahead", 0), ("pool_live", 0), ("pool_idle", 0),
    ("pool_busy", 0), ("pool_next_expiry", 1), ("pool_read_stats", 0),
    ("bucket_reconfigure", 3), ("window_reconfigure", 3), ("sliding_reconfigure", 2),
    ("period_reconfigure", 3), ("gate_reconfigure", 1), ("breaker_reconfigure", 10),
    ("lease_new", 5), ("lease_take", 2), ("lease_grant", 4), ("lease_release", 1),
    ("lease_unspent", 1), ("lease_expires", 1), ("lease_cap", 0), ("lease_read_stats", 1),
    ("lease_reconfigure", 4),
    ("budget_reconfigure", 8), ("concurrency_reconfigure", 8), ("shedder_reconfigure", 7),
    # The bloom, placed with its own words (`weir_bloom_place_in`, or its
    # gcra form) under the held limit; a key is compiled to its length and
    # its bytes packed little-endian in whole words (KEYED).
    ("bloom_new", 4), ("bloom_new_gcra", 4), ("bloom_allow", 2), ("bloom_next", 2),
    ("pool_reconfigure", 7),
    # The keyed table, placed with its buckets (`weir_keyed_init_in`, or its
    # rate form) under the held limit; keys as the bloom's, decide's n after
    # the key's words. Its sizing calls take no table.
    ("keyed_new", 4), ("keyed_new_rate", 4), ("keyed_allow", 2), ("keyed_decide", 3),
    ("keyed_next", 2), ("keyed_read", 0), ("keyed_buckets_for", 2),
    ("keyed_overflow_chance", 2),
    # The held bloom's new limit: the held rate or GCRA limit.
    ("bloom_reconfigure", 0), ("bloom_reconfigure_gcra", 0),
    # The held table's new limit: the held GCRA or rate limit.
    ("keyed_reconfigure", 0), ("keyed_reconfigure_rate", 0),
]
# The operations with a key argument, and its position.
KEYED = {"bloom_allow": 1, "bloom_next": 1, "keyed_allow": 1, "keyed_decide": 1,
         "keyed_next": 1}
CODE = {name: i for i, (name, _) in enumerate(OPS)}
ARITY = dict(OPS)
WORDS = ["rate", "gcra", "limiter", "backoff", "deadline"]
HANDLES = ["bucket", "window", "sliding", "period", "gate", "budget", "concurrency",
           "breaker", "shedder", "pool", "lease"]
# The bloom, placed in the arena as the handles are; a group of its own,
# so that the M0 can replay it in an image of its own.
BLOOM = ["bloom"]
# The keyed table, placed too; a group of its own for the same reason.
KEYED_TABLE = ["keyed"]
TYPES = WORDS + HANDLES + BLOOM + KEYED_TABLE
# Ticket slots: the k-th allow or enter of a file writes slot k (traces/
# README.md). The runner keeps a ring of TICKETS slots per face (RAM: the
# M0 has 16 KiB in all), so slot k lives in ring entry k % TICKETS; the
# table says which entry a settle names, and a trace that settles a ticket
# after its entry was reused stops the build (listed in skips.txt instead).
TICKETS = {"firmware-m4": 2048, "firmware-m0": 64}
# The static arena the runner lays each placed handle in: 2 MiB of the
# mps2-an386's 4 MiB of RAM, 8 KiB of the microbit's 16.
ARENA = {"firmware-m4": 2 << 20, "firmware-m0": 8 << 10}
ISSUE = {"breaker_allow", "shedder_allow", "shedder_allow_class", "concurrency_enter"}
SETTLE = {"breaker_pass": 0, "breaker_fail": 0, "shedder_pass": 0, "shedder_fail": 0,
          "concurrency_leave": 0}
# The most answers one call may have: backoff_schedule's cap bounds it (the
# runner keeps them on the stack, and the M0 has 16 KiB of RAM in all).
MAX_OUTS = 64


def word(token, where):
    """A trace value as the 64-bit word the runner compares."""
    try:
        if token.startswith("0x"):
            return int(token, 16)
        n = int(token, 10)
    except ValueError:
        sys.exit(f"{where}: not a number: {token!r}")
    if n < 0:
        n += 1 << 64
    if not 0 <= n < 1 << 64:
        sys.exit(f"{where}: out of 64 bits: {token}")
    return n


def key_words(token, where):
    """A key (`x` and two hex digits a byte) as its length, then its bytes
    packed little-endian in 64-bit words, the last one padded with zeros:
    the runner passes the words' address and the length to the call."""
    if not token.startswith("x") or len(token) % 2 != 1:
        sys.exit(f"{where}: not a key: {token!r}")
    try:
        data = bytes.fromhex(token[1:])
    except ValueError:
        sys.exit(f"{where}: not a key: {token!r}")
    padded = data + bytes(-len(data) % 8)
    return [len(data)] + [int.from_bytes(padded[i:i + 8], "little") for i in range(0, len(padded), 8)]


def parse(path, ring):
    with open(path, encoding="ascii") as f:
        lines = f.read().split("\n")
    head = lines[0].split(" ")
    if len(head) != 3 or head[0] != "weir-trace" or head[1] != "1":
        sys.exit(f"{path}:1: not a version 1 trace: {lines[0]!r}")
    kind = head[2]
    if kind not in TYPES:
        sys.exit(f"{path}:1: type {kind} is not in the firmware build, and traces/skips.txt does not list it")
    calls = []
    issued = 0
    for number, line in enumerate(lines[1:], start=2):
        if line == "" or line.startswith("#"):
            continue
        where = f"{path}:{number}"
        tokens = line.split(" ")
        if "=" not in tokens:
            sys.exit(f"{where}: no '='")
        eq = tokens.index("=")
        op, args, outs = tokens[0], tokens[1:eq], tokens[eq + 1:]
        if op not in CODE:
            sys.exit(f"{where}: operation {op} is not one the firmware runner knows")
        arity = ARITY[op]
        if arity is None:  # backoff_schedule cap n random...
            if len(args) < 2 or len(args) != 2 + word(args[1], where):
                sys.exit(f"{where}: backoff_schedule wants cap, n and n draws")
            if word(args[0], where) > MAX_OUTS:
                sys.exit(f"{where}: backoff_schedule cap above {MAX_OUTS}")
        elif len(args) != arity:
            sys.exit(f"{where}: {op} takes {arity} arguments, not {len(args)}")
        if len(outs) > MAX_OUTS + 1:
            sys.exit(f"{where}: more than {MAX_OUTS + 1} answers")
        if op in KEYED:
            at = KEYED[op]
            values = ([word(t, where) for t in args[:at]] + key_words(args[at], where)
                      + [word(t, where) for t in args[at + 1:]])
        else:
            values = [word(t, where) for t in args]
        if op in ISSUE:
            issued += 1
        elif op in SETTLE:
            at = SETTLE[op]
            slot = values[at]
            if slot >= issued:
                sys.exit(f"{where}: ticket slot {slot} not issued yet")
            if issued - slot > ring:
                sys.exit(f"{where}: settles ticket slot {slot} after {issued - slot - 1} "
                         f"later ones, more than the runner's ring of {ring} keeps")
            values[at] = slot % ring
        calls.append((CODE[op], number, values, [word(t, where) for t in outs]))
    return kind, calls


def skips(root, face):
    """The face's skips: file (relative to traces/, with or without
    .trace) or type, to its reason."""
    listed = {}
    path = os.path.join(root, "traces", "skips.txt")
    if not os.path.exists(path):
        return listed
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) >= 2 and parts[0] == face:
                listed[parts[1]] = parts[2] if len(parts) > 2 else ""
    return listed


def main():
    out, face = sys.argv[1], sys.argv[2]
    # An optional third argument keeps some groups of types: "words",
    # "handles", "bloom" or "keyed", or several joined by "+" ("handles+bloom"); the
    # M0 replays each group in an image of its own, since the tables and
    # codes do not fit its 256 KiB of flash together.
    groups = {"words": WORDS, "handles": HANDLES, "bloom": BLOOM, "keyed": KEYED_TABLE}
    wanted = sys.argv[3] if len(sys.argv) > 3 else ""
    group = [t for name in wanted.split("+") for t in groups.get(name, [])] if wanted else TYPES
    if wanted and any(name not in groups for name in wanted.split("+")):
        sys.exit(f"unknown group in {wanted!r}: words, handles, bloom or keyed, joined by +")
    ring = TICKETS[face]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    tdir = os.path.join(root, "traces")
    listed = skips(root, face)
    paths = []
    for here, _, names in os.walk(tdir):
        paths += [os.path.join(here, n) for n in names if n.endswith(".trace")]
    files, calls, words, skipped = [], [], [], 0
    for path in sorted(paths, key=lambda p: os.path.relpath(p, tdir)):
        rel = os.path.relpath(path, tdir)
        with open(path, encoding="ascii") as f:
            head = f.readline().split()
        kind = head[2] if len(head) == 3 else ""
        why = listed.get(rel, listed.get(rel[: -len(".trace")], listed.get(kind)))
        if why is not None:
            skipped += 1
            continue
        if kind not in group and kind in TYPES:
            continue
        kind, these = parse(path, ring)
        files.append((rel, len(calls), len(these)))
        for code, line, args, outs in these:
            calls.append((code, line, len(args), len(outs), len(words)))
            words.extend(args + outs)
    with open(os.path.join(out, "trace_table.h"), "w", encoding="ascii") as h:
        h.write("/* Generated by c-examples/firmware/trace_table.py: do not edit. */\n")
        h.write("#ifndef WEIR_TRACE_TABLE_H\n#define WEIR_TRACE_TABLE_H\n#include <stdint.h>\n\n")
        h.write("enum {\n")
        for name, _ in OPS:
            h.write(f"    OP_{name} = {CODE[name]},\n")
        h.write("};\n\n")
        h.write(f"#define TRACE_MAX_OUTS {MAX_OUTS + 1}\n")
        h.write(f"#define TRACE_TICKETS {ring}\n")
        h.write(f"#define TRACE_ARENA_BYTES {ARENA[face]}\n")
        # Whether the runner links the handle types' calls (an image of the
        # words alone leaves them out, to keep the M0's flash for its table).
        h.write(f"#define TRACE_HANDLES {int(any(t in group for t in HANDLES + BLOOM + KEYED_TABLE))}\n")
        # Whether it links the bloom's (an image without its traces leaves
        # them out: the M0's handle image has no flash to spare).
        h.write(f"#define TRACE_BLOOM {int('bloom' in group)}\n")        # Whether it links the keyed table's (likewise).
        h.write(f"#define TRACE_KEYED {int('keyed' in group)}\n")

        # Whether it links weir_pool_reconfigure (its table relaid in place):
        # only an image with a trace that calls it, since the M0's handle
        # image, which skips the pool's traces, has no flash for it.
        used = {code for code, *_ in calls}
        h.write(f"#define TRACE_POOL_RECONFIGURE {int(CODE['pool_reconfigure'] in used)}\n\n")
        h.write("typedef struct {\n    uint8_t op;\n    uint8_t nargs;\n    uint8_t nouts;\n"
                "    uint8_t reserved;\n    uint32_t line;\n    uint32_t word;\n} trace_call;\n\n")
        h.write("typedef struct {\n    const char *name;\n    uint32_t first;\n    uint32_t count;\n} trace_file;\n\n")
        h.write("extern const trace_call trace_calls[];\nextern const uint64_t trace_words[];\n")
        h.write("extern const trace_file trace_files[];\nextern const uint32_t trace_file_count;\n")
        h.write("#endif\n")
    with open(os.path.join(out, "trace_table.c"), "w", encoding="ascii") as c:
        c.write("/* Generated by c-examples/firmware/trace_table.py: do not edit. */\n")
        c.write('#include "trace_table.h"\n\n')
        c.write("const trace_call trace_calls[] = {\n")
        for code, line, nargs, nouts, w in calls or [(0, 0, 0, 0, 0)]:
            c.write(f"    {{{code}, {nargs}, {nouts}, 0, {line}, {w}}},\n")
        c.write("};\n\nconst uint64_t trace_words[] = {\n")
        for i in range(0, max(len(words), 1), 4):
            chunk = (words or [0])[i:i + 4]
            c.write("    " + ", ".join(f"UINT64_C(0x{w:x})" for w in chunk) + ",\n")
        c.write("};\n\nconst trace_file trace_files[] = {\n")
        for name, first, count in files or [("", 0, 0)]:
            c.write(f'    {{"{name}", {first}, {count}}},\n')
        c.write(f"}};\n\nconst uint32_t trace_file_count = {len(files)};\n")
    print(f"{face}: {len(files)} traces compiled in ({len(calls)} calls, "
          f"{len(calls) * 12 + len(words) * 8} bytes of flash), {skipped} skipped as traces/skips.txt lists")


if __name__ == "__main__":
    main()
