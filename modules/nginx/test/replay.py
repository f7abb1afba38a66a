#!/usr/bin/env python3
"""The conformance traces (traces/README.md) replayed against a real nginx
running the module's test build.

    replay.py TEST_SO RELEASE_SO

TEST_SO is the module built with WEIR_NGINX_TEST_CLOCK=1 (build.sh): a
request's X-Weir-Test-Msec header stands in for nginx's millisecond clock,
and weir_limit_zone takes test_seed= and test_words_log2=. RELEASE_SO is the
module as released, which must refuse those parameters and ignore the
header. Each nginx runs on 127.0.0.1 on a free high port, with its files in
a temp dir, is polled for readiness with a bound and stopped by its pid.

What replays, and how. The module judges a request by a key in a bloom of
words (rate words for kind=window, GCRA words for kind=smooth) at nginx's
clock in milliseconds. So:

- a `bloom` trace's blooms become zones (the same size, hashes, seed and
  limit) and its `bloom_allow` calls requests (X-Client: the key);
- a `rate` or `gcra` trace's word becomes one key in a zone with one hash,
  a fresh key each time the trace resets the word to zero;
- a limit replays when nginx's rate=Nr/s or Nr/m gives the same double;
- a call replays when its time is a whole number of milliseconds (0 or
  more) and its key a printable, non-empty header value. The answer is the
  status (200 or 429). A `*_next` right after a refused request at the same
  time and key is checked against its Retry-After (whole seconds, rounded
  up, at least 1).

A call nginx cannot be asked is passed over: harmless when it is a reading
or a refusal (the words are unchanged); otherwise the replay is out of step
and passes over everything until the trace starts afresh (a word reset to
zero, a new bloom). Each trace's line says how many calls replayed and why
the others were passed over. A trace of another type, or one where no call
replays, must be listed for the face nginx in traces/skips.txt, and a
listed trace must not replay.

Prints a line per check and ends with "N passed, N failed"."""

import http.client
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
MS = 1_000_000
INT64_MAX = (1 << 63) - 1
# A zone for a word: one hash among 2^16 words, so that the few keys a
# trace uses (a fresh one per reset) never share a word.
WORD_LOG2 = 16
WORD_SEED = (1, 2)

passed = failed = 0


def ok(what):
    global passed
    passed += 1
    print(f"ok   {what}")


def bad(what):
    global failed
    failed += 1
    print(f"FAIL {what}")


def num(token):
    if token.startswith("0x"):
        return int(token, 16)
    return int(token)


def double(token):
    return struct.unpack("<d", struct.pack("<Q", num(token)))[0]


def traces():
    tdir = os.path.join(ROOT, "traces")
    found = []
    for here, _, names in os.walk(tdir):
        found += [os.path.join(here, n) for n in names if n.endswith(".trace")]
    out = []
    for path in sorted(found, key=lambda p: os.path.relpath(p, tdir)):
        with open(path, encoding="ascii") as f:
            lines = f.read().split("\n")
        head = lines[0].split(" ")
        calls = []
        for number, line in enumerate(lines[1:], start=2):
            if not line or line.startswith("#"):
                continue
            tokens = line.split(" ")
            eq = tokens.index("=")
            calls.append((number, tokens[0], tokens[1:eq], tokens[eq + 1:]))
        out.append((os.path.relpath(path, tdir), head[2], calls))
    return out


def listed_skips():
    listed = {}
    path = os.path.join(ROOT, "traces", "skips.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) >= 2 and parts[0] == "nginx":
                    listed[parts[1]] = parts[2] if len(parts) > 2 else ""
    return listed


def nginx_rate(rate):
    """nginx's rate= for a limit of `rate` per second, when it parses to
    the very same double, else None."""
    if not math.isfinite(rate) or rate <= 0:
        return None
    if rate == int(rate) and rate <= 1e9:
        return f"{int(rate)}r/s"
    n = round(rate * 60)
    if n >= 1 and n / 60.0 == rate:
        return f"{n}r/m"
    return None


class Plan:
    """Zones, and for each trace the requests it sends."""

    def __init__(self):
        self.zones = []  # (name, kind, rate, burst, hashes, seed, log2)
        self.index = {}

    def zone(self, kind, rate, burst, hashes, seed, log2):
        spec = (kind, rate, burst, hashes, seed, log2)
        if kind == "window" and burst > 1023 or burst > 1_000_000:
            return None
        if spec not in self.index or hashes != 1:
            # A bloom's zone is its own (its words are its state); a word's
            # zones are shared by limit, each reset on a fresh key.
            self.index[spec] = f"z{len(self.zones)}"
            self.zones.append((self.index[spec],) + spec)
        return self.index[spec]


def plan_trace(plan, file, kind, calls):
    """The requests replaying `calls`, and what was passed over."""
    requests = []  # (line, zone, key, ms, want_allowed, next_check)
    over = {}
    limits = {"rate": None, "gcra": None}  # (nginx rate, burst) or None
    zone = None  # the current zone, or None when it cannot be made
    in_step = True
    touched = False
    fresh = 0
    key = f"{file}#0"

    def pass_over(why, changes):
        nonlocal in_step
        over[why] = over.get(why, 0) + 1
        if changes:
            in_step = False

    word = kind in ("rate", "gcra")
    for line, op, args, outs in calls:
        if op in ("rate_limit_new", "gcra_limit_new"):
            which = op.split("_")[0]
            if num(outs[0]) != 0:
                continue
            rate = nginx_rate(double(args[0]))
            limits[which] = (rate, num(args[1])) if rate else None
            if word:
                # A word keeps its state under a new limit; a zone cannot
                # change its limit, so only an untouched word moves on.
                if limits[which] is None:
                    zone = None
                else:
                    zone = plan.zone("window" if which == "rate" else "smooth",
                                     limits[which][0], limits[which][1], 1, WORD_SEED, WORD_LOG2)
                if touched:
                    in_step = False
            continue
        if op in ("rate_limit_set", "gcra_limit_set"):
            limits[op.split("_")[0]] = None
            if word:
                zone = None
                if touched:
                    in_step = False
            continue
        if op in ("rate_set", "gcra_set"):
            fresh += 1
            key = f"{file}#{fresh}"
            touched = False
            in_step = num(args[0]) == 0
            if not in_step:
                pass_over("a word written raw", False)
            continue
        if op in ("bloom_new", "bloom_new_gcra"):
            if num(outs[0]) != 0:
                continue
            limit = limits["gcra" if op == "bloom_new_gcra" else "rate"]
            log2, hashes, k0, k1 = (num(a) for a in args)
            zone = None
            if limit is not None and 3 <= log2 <= 20 and 1 <= hashes <= 8:
                zone = plan.zone("smooth" if op == "bloom_new_gcra" else "window",
                                 limit[0], limit[1], hashes, (k0, k1), log2)
            in_step = True
            continue
        if op in ("rate_allow", "gcra_allow", "gcra_allow_n", "bloom_allow"):
            now = num(args[0])
            allowed = num(outs[0]) == 1
            this_key = key
            if op == "bloom_allow":
                raw = bytes.fromhex(args[1][1:])
                this_key = raw.decode("ascii") if raw and all(0x21 <= b <= 0x7E for b in raw) else None
            if not in_step:
                pass_over("out of step after a call nginx cannot be asked", allowed)
            elif zone is None:
                pass_over("a limit or bloom nginx cannot configure", allowed)
            elif now < 0 or now % MS != 0:
                pass_over("a time that is not a whole millisecond", allowed)
            elif this_key is None:
                pass_over("a key that is no header value (empty is not limited)", allowed)
            elif op == "gcra_allow_n" and num(args[1]) != 1:
                pass_over("a cost other than 1 (a request costs 1)", allowed)
            else:
                requests.append([line, zone, this_key, now // MS, allowed, None])
                touched = touched or allowed
            continue
        if op in ("rate_next", "gcra_next", "bloom_next"):
            now = num(args[0])
            this_key = key
            if op == "bloom_next":
                raw = bytes.fromhex(args[1][1:])
                this_key = raw.decode("ascii", "replace")
            last = requests[-1] if requests else None
            if (last and not last[4] and last[3] * MS == now and last[2] == this_key
                    and last[5] is None and in_step):
                wait = num(outs[0])
                retry = 0 if wait == INT64_MAX else (wait + 999_999_999) // 1_000_000_000
                last[5] = (line, max(retry, 1))
            else:
                pass_over("a reading nginx does not show", False)
            continue
        if op == "gcra_room":
            pass_over("a reading nginx does not show", False)
            continue
        if op in ("bloom_reconfigure", "bloom_reconfigure_gcra"):
            # A zone's limit changes only when nginx reloads its
            # configuration (test/reload.py tests that), never by a request.
            pass_over("a limit changed in place, which only a reload does", True)
            continue
        pass_over(f"an operation nginx has no request for ({op})", True)
    return requests, over


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    def __init__(self, so, zones, locations):
        self.tmp = tempfile.mkdtemp(prefix="weir-replay-")
        os.chmod(self.tmp, 0o755)
        self.port = free_port()
        self.master = None
        os.makedirs(os.path.join(self.tmp, "logs"))
        os.makedirs(os.path.join(self.tmp, "html"))
        with open(os.path.join(self.tmp, "html", "ok"), "w", encoding="ascii") as f:
            f.write("ok\n")
        self.conf = os.path.join(self.tmp, "nginx.conf")
        with open(self.conf, "w", encoding="ascii") as f:
            f.write(f"""load_module {so};
worker_processes 1;
daemon on;
master_process on;
pid {self.tmp}/nginx.pid;
error_log {self.tmp}/logs/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    client_body_temp_path {self.tmp}/body;
    proxy_temp_path {self.tmp}/proxy;
    fastcgi_temp_path {self.tmp}/fastcgi;
    uwsgi_temp_path {self.tmp}/uwsgi;
    scgi_temp_path {self.tmp}/scgi;
    weir_limit_log_level info;
{zones}
    server {{
        listen 127.0.0.1:{self.port};
        root {self.tmp}/html;
{locations}
        location = /health {{ return 204; }}
    }}
}}
""")

    def test(self):
        r = subprocess.run(["nginx", "-t", "-p", self.tmp, "-c", self.conf, "-e",
                            f"{self.tmp}/logs/error.log"], capture_output=True, text=True)
        return r.returncode, r.stderr

    def start(self):
        subprocess.run(["nginx", "-p", self.tmp, "-c", self.conf, "-e", f"{self.tmp}/logs/error.log"],
                       check=True, capture_output=True)
        pid_file = os.path.join(self.tmp, "nginx.pid")
        for _ in range(100):
            if os.path.exists(pid_file) and os.path.getsize(pid_file) > 0:
                try:
                    c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                    c.request("GET", "/health")
                    if c.getresponse().status == 204:
                        break
                except OSError:
                    pass
            time.sleep(0.1)
        with open(pid_file, encoding="ascii") as f:
            self.master = int(f.read())
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def get(self, path, headers):
        self.conn.request("GET", path, headers=headers)
        r = self.conn.getresponse()
        r.read()
        return r.status, r.getheader("Retry-After")

    def stop(self):
        if self.master:
            try:
                os.kill(self.master, signal.SIGQUIT)
                for _ in range(100):
                    os.kill(self.master, 0)
                    time.sleep(0.1)
                os.kill(self.master, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.master = None
        shutil.rmtree(self.tmp, ignore_errors=True)


def zone_line(name, kind, rate, burst, hashes, seed, log2, test=True):
    size = max(64 * 1024, 4 * (8 << log2))
    extra = f" test_seed={seed[0]}:{seed[1]} test_words_log2={log2}" if test else ""
    return (f"    weir_limit_zone $http_x_client zone={name}:{size} rate={rate} burst={burst} "
            f"kind={kind} hashes={hashes}{extra};")


def release_checks(test_so, release_so):
    """The release build has no test clock; the test build's works."""
    zones = zone_line("r", "window", "1r/m", 1, 1, (1, 2), 10, test=False)
    locations = "        location = /r { weir_limit zone=r; try_files /ok =500; }"
    for so, name, want in ((test_so, "test", "200 200"), (release_so, "release", "200 429")):
        n = Nginx(so, zones, locations)
        try:
            n.start()
            got = []
            for ms in (5_000, 5_000 + 10**9):  # the second 11.6 days later
                status, _ = n.get("/r", {"X-Client": "k", "X-Weir-Test-Msec": str(ms)})
                got.append(str(status))
            got = " ".join(got)
            if got == want:
                ok(f"{name} build: X-Weir-Test-Msec {'moves' if name == 'test' else 'does not move'} the clock ({got})")
            else:
                bad(f"{name} build: two requests 10^9 ms apart on the header: expected {want}, got {got}")
        finally:
            n.stop()
    n = Nginx(release_so, zone_line("s", "window", "1r/m", 1, 1, (1, 2), 10), locations.replace("=r", "=s"))
    try:
        code, err = n.test()
        if code != 0 and 'invalid "test_seed=1:2": unknown parameter' in err:
            ok("release build: nginx -t refuses test_seed= as an unknown parameter")
        else:
            bad(f"release build: nginx -t on test_seed=: {code} {err.strip()}")
    finally:
        n.stop()


def main():
    test_so, release_so = sys.argv[1], sys.argv[2]
    release_checks(test_so, release_so)

    plan = Plan()
    listed = listed_skips()
    planned = []
    for file, kind, calls in traces():
        is_listed = file in listed or file[: -len(".trace")] in listed or kind in listed
        if kind not in ("rate", "gcra", "bloom"):
            if not is_listed:
                bad(f"{file}: type {kind} is not replayed, and traces/skips.txt does not list it for nginx")
            continue
        requests, over = plan_trace(plan, file, kind, calls)
        if not requests:
            if is_listed:
                ok(f"{file}: skipped as listed (no call nginx can be asked: {over})")
            else:
                bad(f"{file}: no call replays ({over}), and traces/skips.txt does not list it for nginx")
            continue
        if is_listed:
            bad(f"{file}: listed as skipped for nginx, but {len(requests)} calls replay")
        planned.append((file, requests, over))

    zones = "\n".join(zone_line(*z) for z in plan.zones)
    locations = "\n".join(f"        location = /{z[0]} {{ weir_limit zone={z[0]}; try_files /ok =500; }}"
                          for z in plan.zones)
    n = Nginx(test_so, zones, locations)
    try:
        code, err = n.test()
        if code != 0:
            bad(f"nginx -t on the replay's {len(plan.zones)} zones: {err.strip()}")
            return
        n.start()
        for file, requests, over in planned:
            wrong = None
            for line, zone, key, ms, allowed, next_check in requests:
                status, retry = n.get(f"/{zone}", {"X-Client": key, "X-Weir-Test-Msec": str(ms)})
                if status != (200 if allowed else 429):
                    wrong = f"{file}:{line}: expected {'200' if allowed else '429'}, got {status}"
                    break
                if next_check and str(next_check[1]) != retry:
                    wrong = f"{file}:{next_check[0]}: expected Retry-After {next_check[1]}, got {retry}"
                    break
            checked = sum(1 for r in requests if r[5])
            passed_over = sum(over.values())
            if wrong:
                bad(wrong)
            else:
                ok(f"{file}: {len(requests)} requests ({checked} Retry-After checked), "
                   f"{passed_over} calls passed over {over if over else ''}".rstrip())
    finally:
        n.stop()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
