#!/usr/bin/env python3
"""Runs the fenced blocks of the guides as a reader copies them.

    python3 .ci/doc_blocks.py [--check | --list] MARKDOWN_FILE...

Every fenced block (```) of each file is one of these, said by the HTML
comments on the lines right above its opening fence (one or more comment
lines, no blank line between them and the fence):

  (no marker)                 a ```sh or ```bash block: run, in a fresh
                              empty directory outside the repository
  <!-- run: from-checkout --> a ```sh or ```bash block run from the root of
                              the checkout (it builds from the tree, or
                              takes files from it)
  <!-- file: PATH -->         the block is the repository's file PATH, byte
                              for byte (a block after it builds that file)
  <!-- output -->             what the nearest run block above it prints:
                              its lines must appear, in order and together,
                              in that block's standard output; a line `...`
                              stands for any lines
  <!-- run-by: STAGE... -->   a stage of .ci/stages/ runs these commands
                              (the whole test suite, a sanitizer build):
                              each STAGE must exist
  <!-- illustrative: WHY -->  not run: a fragment, a server that runs until
                              stopped, a transcript; WHY says which

Any other block fails the check: a block in another language (```c,
```console, ```text, none) must carry a marker, so every block is either
run or says why not. Other comments above a fence (the install markers of
docs/c.md) are left alone.

--check classifies every block and checks the file, run-by and marker
rules, running nothing (a second or two). --list prints each block and
what it is. Without either, it also runs the run blocks, in the order of
the files given, then of the blocks in each, and checks the output blocks.

A run block is a script for `bash -euo pipefail`, with the environment
of this process less PKG_CONFIG_PATH, LD_LIBRARY_PATH, CARGO_TARGET_DIR and
CGO_CFLAGS / CGO_LDFLAGS (a block sets what it needs), TMPDIR a directory
of its own (so `mktemp -d` lands there), and GOCACHE and GOMODCACHE
directories of the run's own, as a new reader's are empty (cgo's cache does
not key on what pkg-config answered, and each run installs into a new
prefix; a module cache keeps a version's first content). Blocks from the
checkout share what
earlier blocks built into it (target/, build/); nothing else carries over.
A block fails on a non-zero exit, on running past its time limit
(WEIR_DOC_BLOCK_TIMEOUT, 300 s), or on leaving a process running (a server
it did not stop): this process is the subreaper of everything a block
starts, so a daemon cannot slip away; whatever is left is reported and
killed. A block's output is shown only when it fails. As in any
`bash -e` script, a failure inside `a && b` stops nothing unless it is
the block's last command: write a step whose failure matters on a line of
its own.

Ends with "N passed, N failed": one count for each block that is run or
checked (illustrative blocks are listed, not counted).

Why a script of its own: txm (npm) comes nearest, with annotations in HTML
comments and any language, but it leaves an unannotated block alone (the
check that every block is run or marked would still be ours), names no
directory to run in, and would bring node and an npm tree into the stage;
byexample runs prompt-style sessions (`$ cmd` then output), which a reader
cannot paste as they are; pytest-markdown-docs runs Python blocks only,
skeptic Rust blocks only, and mdsh writes command output into the Markdown
rather than testing it.
"""

import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHELLS = {"sh", "bash"}
COMMENT = re.compile(r"^<!--\s*(.*?)\s*-->$")
KNOWN = ("illustrative", "output", "file", "run", "run-by")
TIMEOUT = float(os.environ.get("WEIR_DOC_BLOCK_TIMEOUT", "300"))
UNSET = ("PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "CARGO_TARGET_DIR", "CGO_CFLAGS", "CGO_LDFLAGS")


class Block:
    def __init__(self, path, line, lang, markers, text):
        self.path = path  # as given, relative to the root
        self.line = line  # the opening fence's line, from 1
        self.lang = lang
        self.markers = markers  # {key: value}
        self.text = text
        self.kind = None  # run, file, output, run-by, illustrative
        self.problem = None  # why the block is not valid, or None

    def where(self):
        return f"{self.path}:{self.line}"

    def describe(self):
        if self.kind == "run":
            place = "from the checkout" if self.markers.get("run") == "from-checkout" else "in a fresh directory"
            return f"run {place}"
        if self.kind == "file":
            return f"the file {self.markers['file']}"
        if self.kind == "output":
            return "output, checked"
        if self.kind == "run-by":
            return f"run by the stage {self.markers['run-by']}"
        if self.kind == "illustrative":
            return f"illustrative: {self.markers['illustrative']}"
        return "?"


def parse(path):
    """The fenced blocks of one Markdown file."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        stripped = lines[i].lstrip(" ")
        if not stripped.startswith("```"):
            i += 1
            continue
        indent = len(lines[i]) - len(stripped)
        info = stripped[3:].strip()
        lang = info.split()[0] if info else ""
        start = i
        markers = {}
        j = i - 1
        while j >= 0 and COMMENT.match(lines[j].strip()):
            body = COMMENT.match(lines[j].strip()).group(1)
            key, _, value = body.partition(":")
            key = key.strip()
            if key in KNOWN:
                markers.setdefault(key, value.strip())
            j -= 1
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip(" "))
            i += 1
        if i == len(lines):
            sys.exit(f"{path}:{start + 1}: a fence that never closes")
        blocks.append(Block(path, start + 1, lang, markers, "\n".join(body) + "\n"))
        i += 1
    return blocks


def classify(block):
    m = block.markers
    given = [k for k in ("illustrative", "output", "file", "run-by") if k in m]
    if len(given) > 1:
        block.problem = f"markers {', '.join(given)} together: a block is one thing"
        return
    if "run" in m and (given or block.lang not in SHELLS):
        block.problem = "<!-- run: ... --> is for a ```sh or ```bash block that runs"
        return
    if "run" in m and m["run"] != "from-checkout":
        block.problem = f'unknown <!-- run: {m["run"]} --> (the one place is from-checkout)'
        return
    if given:
        block.kind = given[0]
        if block.kind == "illustrative" and not m["illustrative"]:
            block.problem = "<!-- illustrative --> needs its reason: <!-- illustrative: WHY -->"
        elif block.kind == "file" and not m["file"]:
            block.problem = "<!-- file: PATH --> names no file"
        elif block.kind == "run-by" and not m["run-by"]:
            block.problem = "<!-- run-by: STAGE --> names no stage"
        elif block.kind == "output" and m["output"]:
            block.problem = "<!-- output --> takes nothing after it"
        return
    if block.lang in SHELLS:
        block.kind = "run"
        return
    block.problem = (
        f"an unmarked ```{block.lang} block that nothing runs: mark it "
        "<!-- file: PATH -->, <!-- output -->, <!-- run-by: STAGE --> or "
        "<!-- illustrative: WHY -->, or write it as a ```sh block"
    )


def check_static(block, blocks):
    """The checks that run nothing: returns (ok, message)."""
    if block.kind == "file":
        path = os.path.join(ROOT, block.markers["file"])
        if not os.path.isfile(path):
            return False, f"no file {block.markers['file']}"
        with open(path, encoding="utf-8") as f:
            if f.read() != block.text:
                return False, f"differs from {block.markers['file']} (copy the file into the block)"
        return True, ""
    if block.kind == "run-by":
        missing = [s for s in block.markers["run-by"].split() if not os.path.isfile(os.path.join(ROOT, ".ci/stages", s + ".sh"))]
        if missing:
            return False, f"no stage {', '.join(missing)} in .ci/stages/"
        return True, ""
    if block.kind == "output":
        if previous_run(block, blocks) is None:
            return False, "no run block above it in the file"
        return True, ""
    return True, ""


def previous_run(block, blocks):
    found = None
    for b in blocks:
        if b is block:
            return found
        if b.path == block.path and b.kind == "run":
            found = b
    return None


def matches(pattern, text):
    """Whether the pattern's lines appear together in text; `...` is any lines."""
    want = [line.rstrip() for line in pattern.rstrip("\n").split("\n")]
    have = [line.rstrip("\r").rstrip() for line in text.split("\n")]

    def at(w, h):
        if w == len(want):
            return True
        if want[w] == "...":
            return any(at(w + 1, k) for k in range(h, len(have) + 1))
        return h < len(have) and have[h] == want[w] and at(w + 1, h + 1)

    return any(at(0, h) for h in range(len(have)))


# ---------------------------------------------------------------------------
# Running.

def subreaper():
    """Makes this process the parent of every orphan a block leaves."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def children():
    """The processes whose parent is this one (what a block left behind)."""
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
            # comm is in parentheses and may hold spaces: the fields follow its last ')'.
            state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
            if int(ppid) == me and state != "Z":
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
                found.append((int(name), cmd))
        except (OSError, ValueError):
            continue
    return found


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def leftovers(grace=10.0):
    """Waits up to `grace` s for what a block left to end; kills the rest."""
    end = time.monotonic() + grace
    while True:
        reap()
        left = children()
        if not left or time.monotonic() > end:
            break
        time.sleep(0.1)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    end = time.monotonic() + 5
    while children() and time.monotonic() < end:
        reap()
        time.sleep(0.1)
    for pid, _ in children():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.1)
    reap()
    return left


def run(block, index, scratch, env_base):
    """Runs one block: returns (ok, message, stdout)."""
    home = os.path.join(scratch, f"block-{index:02d}")
    tmp = os.path.join(home, "tmp")
    os.makedirs(tmp)
    os.makedirs(os.path.join(home, "cwd"))
    # Workers that drop root (nginx's `nobody`) must reach a block's files.
    for d in (home, tmp, os.path.join(home, "cwd")):
        os.chmod(d, 0o755)
    script = os.path.join(home, "block.sh")
    with open(script, "w", encoding="utf-8") as f:
        f.write(block.text)
    cwd = ROOT if block.markers.get("run") == "from-checkout" else os.path.join(home, "cwd")
    env = dict(env_base, TMPDIR=tmp)
    out_path, err_path = os.path.join(home, "stdout"), os.path.join(home, "stderr")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", script], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=out, stderr=err, start_new_session=True,
        )
        try:
            status = proc.wait(timeout=TIMEOUT)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            status = proc.wait()
            timed_out = True
    left = leftovers()
    with open(out_path, encoding="utf-8", errors="replace") as f:
        stdout = f.read()
    if timed_out:
        return False, f"still running after {TIMEOUT:.0f} s: killed", stdout
    if status != 0:
        return False, f"exit status {status}", stdout
    if left:
        names = "; ".join(f"{pid} {cmd[:80]}" for pid, cmd in left)
        return False, f"left running (killed): {names}", stdout
    return True, "", stdout


def show_tail(index, scratch, lines=60):
    home = os.path.join(scratch, f"block-{index:02d}")
    for name in ("stdout", "stderr"):
        with open(os.path.join(home, name), encoding="utf-8", errors="replace") as f:
            text = f.read().rstrip("\n").split("\n")
        if text == [""]:
            continue
        print(f"     {name}, its last {min(lines, len(text))} of {len(text)} lines:")
        for line in text[-lines:]:
            print(f"     | {line}")


def main(argv):
    mode = "run"
    if argv and argv[0] in ("--check", "--list"):
        mode = argv.pop(0)[2:]
    if not argv:
        sys.exit(__doc__)
    files = []
    for a in argv:
        a = os.path.relpath(os.path.abspath(a), ROOT)
        if a not in files:
            files.append(a)
    blocks = [b for path in files for b in parse(path)]
    for b in blocks:
        classify(b)

    if mode == "list":
        for b in blocks:
            print(f"{b.where():22} ```{b.lang:6} {b.problem or b.describe()}")
        return 0

    passed = failed = 0
    results = {}  # block -> ok

    def result(block, ok, message):
        nonlocal passed, failed
        results[block] = ok
        if ok:
            passed += 1
            print(f"ok   {block.where():22} {block.describe()}{message}")
        else:
            failed += 1
            what = "" if block.problem else f"{block.describe()}: "
            print(f"FAIL {block.where():22} {what}{message}")

    # Everything that runs nothing, first: a wrong marker fails at once.
    for b in blocks:
        if b.problem:
            result(b, False, b.problem)
        elif b.kind in ("file", "run-by") or (b.kind == "output" and mode == "check"):
            ok, message = check_static(b, blocks)
            result(b, ok, message)
        elif b.kind == "output":
            ok, message = check_static(b, blocks)
            if not ok:
                result(b, False, message)

    if mode == "run":
        if not subreaper():
            print("note: no PR_SET_CHILD_SUBREAPER here: a daemon a block leaves running is not caught")
        scratch = tempfile.mkdtemp(prefix="weir-doc-blocks.")
        os.chmod(scratch, 0o755)
        env = {k: v for k, v in os.environ.items() if k not in UNSET}
        env["GOCACHE"] = os.path.join(scratch, "gocache")
        env["GOMODCACHE"] = os.path.join(scratch, "gomodcache")
        env["GOFLAGS"] = "-modcacherw"  # so that the module cache can be removed
        outputs = {}
        try:
            for index, b in enumerate(blocks):
                if b.problem or b.kind != "run":
                    continue
                began = time.monotonic()
                ok, message, stdout = run(b, index, scratch, env)
                outputs[b] = stdout
                took = f", {time.monotonic() - began:.1f} s"
                result(b, ok, took if ok else f"{message}{took}")
                if not ok:
                    show_tail(index, scratch)
            for b in blocks:
                if b.problem or b.kind != "output" or b in results:
                    continue
                source = previous_run(b, blocks)
                if source not in outputs or not results.get(source):
                    result(b, False, f"its run block ({source.where()}) did not run to the end")
                elif matches(b.text, outputs[source]):
                    result(b, True, f" (of {source.where()})")
                else:
                    result(b, False, f"not in the standard output of {source.where()}:")
                    for line in outputs[source].rstrip("\n").split("\n")[-30:]:
                        print(f"     | {line}")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    print()
    print("blocks per file: run / checked (file, output, run-by) / illustrative")
    for path in files:
        mine = [b for b in blocks if b.path == path]
        ran = sum(1 for b in mine if b.kind == "run" and not b.problem)
        checked = sum(1 for b in mine if b.kind in ("file", "output", "run-by") and not b.problem)
        shown = sum(1 for b in mine if b.kind == "illustrative" and not b.problem)
        bad = sum(1 for b in mine if b.problem)
        print(f"  {path:22} {ran:2} / {checked:2} / {shown:2}" + (f"   ({bad} unmarked or mismarked)" if bad else ""))
    for b in blocks:
        if b.kind == "illustrative" and not b.problem:
            print(f"illustrative {b.where()}: {b.markers['illustrative']}")
    if mode == "run":
        print(f"{passed} passed, {failed} failed")
    else:
        print(f"{mode}: {passed} passed, {failed} failed (run blocks not run)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
