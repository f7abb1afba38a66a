#!/usr/bin/env python3
"""A reload that changes a zone's rate and burst, under load, against a real
nginx running the module's test build (WEIR_NGINX_TEST_CLOCK=1: a request's
X-Weir-Test-Msec header is its time, so every answer is exact).

    reload.py TEST_SO

Two workers; zones `s` (kind=smooth) and `w` (kind=window), one hash each
among 2^16 words with a fixed SipHash key, so a key is one word. A client
sends steadily (one request every STEP ms of test time on each zone, key
"steady") while another hammers other keys; the config is rewritten with a
new rate and burst and the master is sent SIGHUP, the client going on
throughout. Each answer names its worker (X-Pid), so each request is known
to be judged by the old limit or the new one, and each status is checked
against a model of the word (weir-core's gcra.rs and rate.rs, in integers)
given the old limit and then the new one on one state: the words survive
the reload. Then the bound across the change (docs/nginx.md) is checked
over the whole stretch; a key that spent its burst stays refused right
after the reload where the new limit says so (and a fresh key passes); and
reloads that change a zone's kind, hashes, size or tick are refused, naming
the zone and the field, while the old workers keep serving with the state.

Servers on 127.0.0.1 on a free high port, polled with a bound, stopped by
their pid. Prints a line per check and ends with "N passed, N failed"."""

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

MS = 1_000_000
SECOND = 1_000_000_000
STEP = 20  # ms of test time between the steady client's requests
OLD = (10, 5)  # rate r/s, burst
NEW = (2, 1)

passed = failed = 0


def ok(what):
    global passed
    passed += 1
    print(f"ok   {what}")


def bad(what):
    global failed
    failed += 1
    print(f"FAIL {what}")


def check(what, want, got):
    if want == got:
        ok(what)
    else:
        bad(f"{what}: expected {want!r}, got {got!r}")


# ---- the words, as weir-core computes them (shift 0: rates under 7812500/s)

def gcra_limit(rate, burst):
    per_token = -(-SECOND // rate)  # ceil(10^9 / rate), exact for whole rates
    return per_token, burst * per_token


class Gcra:
    """gcra.rs: pass iff max(tat, t) + c <= t + tolerance; write that."""

    def __init__(self):
        self.tat = 0

    def allow(self, limit, now):
        per_token, tolerance = limit
        nxt = max(self.tat, now) + per_token
        if nxt <= now + tolerance:
            self.tat = nxt
            return True
        return False


class Window:
    """rate.rs: a window of start S (on a 512 ns grid) and a count; it has
    expired when t − S ≥ ceil(count × I); I = 10^9 / rate (whole here)."""

    def __init__(self):
        self.start = 0
        self.count = 0

    def allow(self, limit, now):
        rate, burst = limit
        interval = SECOND // rate
        assert interval * rate == SECOND
        if self.count == 0 or now - self.start >= self.count * interval:
            self.start = -(-now // 512) * 512
            self.count = 1
            return True
        if self.count < burst:
            self.count += 1
            return True
        return False


# ---- nginx


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def zones(limit, kind_s="smooth", hashes_s=1, size_w="1m", rate_s=None):
    rate, burst = limit
    rs = rate_s or f"{rate}r/s"
    return (f"    weir_limit_zone $http_x_client zone=s:1m rate={rs} burst={burst} kind={kind_s} "
            f"hashes={hashes_s} test_seed=1:2 test_words_log2=16;\n"
            f"    weir_limit_zone $http_x_client zone=w:{size_w} rate={rate}r/s burst={burst} kind=window "
            f"hashes=1 test_seed=3:4 test_words_log2=16;\n")


class Nginx:
    """A master and two workers; a location /NAME limited by zone NAME for
    each of `names`."""

    def __init__(self, so, names=("s", "w")):
        self.so = so
        self.names = names
        self.tmp = tempfile.mkdtemp(prefix="weir-reload-")
        os.chmod(self.tmp, 0o755)
        self.port = free_port()
        self.master = None
        os.makedirs(os.path.join(self.tmp, "logs"))
        os.makedirs(os.path.join(self.tmp, "html"))
        for name in names:
            with open(os.path.join(self.tmp, "html", name), "w", encoding="ascii") as f:
                f.write("ok\n")
        self.conf = os.path.join(self.tmp, "nginx.conf")
        self.log = os.path.join(self.tmp, "logs", "error.log")

    def write(self, zone_lines):
        locations = "".join(f"        location = /{z} {{ weir_limit zone={z}; }}\n" for z in self.names)
        with open(self.conf, "w", encoding="ascii") as f:
            f.write(f"""load_module {self.so};
worker_processes 2;
daemon on;
master_process on;
pid {self.tmp}/nginx.pid;
error_log {self.log} notice;
events {{ worker_connections 256; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    client_body_temp_path {self.tmp}/body;
    proxy_temp_path {self.tmp}/proxy;
    fastcgi_temp_path {self.tmp}/fastcgi;
    uwsgi_temp_path {self.tmp}/uwsgi;
    scgi_temp_path {self.tmp}/scgi;
{zone_lines}
    server {{
        listen 127.0.0.1:{self.port} reuseport;
        root {self.tmp}/html;
        add_header X-Pid $pid always;
{locations}        location = /health {{ return 204; }}
    }}
}}
""")

    def start(self):
        subprocess.run(["nginx", "-p", self.tmp, "-c", self.conf, "-e", self.log],
                       check=True, capture_output=True)
        pid_file = os.path.join(self.tmp, "nginx.pid")
        for _ in range(100):
            if os.path.exists(pid_file) and os.path.getsize(pid_file) > 0 and len(self.workers()) == 2:
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

    def workers(self):
        pid_file = os.path.join(self.tmp, "nginx.pid")
        try:
            with open(pid_file, encoding="ascii") as f:
                master = int(f.read())
        except (OSError, ValueError):
            return set()
        out = set()
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                with open(f"/proc/{p}/stat", encoding="ascii") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                # fields[0] is the state, fields[1] the parent; a worker
                # shutting down still counts until it exits.
                if int(fields[1]) == master:
                    out.add(int(p))
            except (OSError, IndexError, ValueError):
                pass
        return out

    def log_size(self):
        return os.path.getsize(self.log)

    def log_since(self, offset):
        with open(self.log, encoding="utf-8", errors="replace") as f:
            f.seek(offset)
            return f.read()

    def reload(self, zone_lines, expect):
        """Rewrites the config, HUPs the master and waits (bounded) for the
        log line `expect` names: 'reconfigured' or an emerg message."""
        before = self.workers()
        offset = self.log_size()
        self.write(zone_lines)
        os.kill(self.master, signal.SIGHUP)
        for _ in range(200):
            text = self.log_since(offset)
            if expect in text:
                break
            time.sleep(0.05)
        return before, self.log_since(offset)

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


class Client:
    def __init__(self, port):
        self.port = port
        self.conn = None

    def get(self, path, key, msec):
        for _ in range(3):  # an old worker closes its keep-alive connections
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                self.conn.request("GET", path, headers={"X-Client": key, "X-Weir-Test-Msec": str(msec)})
                r = self.conn.getresponse()
                r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, int(r.getheader("X-Pid"))
            except (OSError, http.client.HTTPException):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
        raise RuntimeError(f"no answer for {path} {key} at {msec}")


def hammer(port, stop, counts):
    """Other keys, as fast as one connection goes: the load."""
    c = Client(port)
    i = 0
    while not stop.is_set():
        i += 1
        try:
            c.get("/s" if i % 2 else "/w", f"load{i % 97}", 1_000_000 + i)
            counts[0] += 1
        except RuntimeError:
            pass


def main():
    so = sys.argv[1]
    n = Nginx(so)
    try:
        n.write(zones(OLD))
        n.start()
        old_workers = n.workers()
        check("two workers", 2, len(old_workers))
        c = Client(n.port)

        # A key spends its burst just before the reload, on both zones.
        t_spent = 100_000
        spent = {z: [c.get(f"/{z}", "spent", t_spent)[0] for _ in range(OLD[1] + 1)] for z in "sw"}
        check("the burst spent before the reload (smooth)", [200] * OLD[1] + [429], spent["s"])
        check("the burst spent before the reload (window)", [200] * OLD[1] + [429], spent["w"])

        # The steady client, under load, across the reload.
        stop = threading.Event()
        load = [0]
        hammers = [threading.Thread(target=hammer, args=(n.port, stop, load)) for _ in range(2)]
        for h in hammers:
            h.start()
        log = []  # (zone, msec, status, pid)
        reloaded = threading.Event()
        steady_done = threading.Event()

        def steady():
            sc = Client(n.port)
            msec = 10_000
            after = 0
            while after < 300:  # 3 s of test time after the new workers answer
                for z in "sw":
                    status, pid = sc.get(f"/{z}", "steady", msec)
                    log.append((z, msec, status, pid))
                    if reloaded.is_set() and pid not in old_workers:
                        after += 1
                msec += STEP
            steady_done.set()

        st = threading.Thread(target=steady)
        st.start()
        while len(log) < 200:  # 2 s of test time under the old limit
            time.sleep(0.01)
        _, text = n.reload(zones(NEW), "its words are kept")
        check("the reload says so (notice)", True,
              'weir_limit_zone "s": rate 10r/s to 2r/s, burst 5 to 1; its words are kept' in text)
        for _ in range(200):
            if len(n.workers() - old_workers) == 2:
                break
            time.sleep(0.05)
        new_workers = n.workers() - old_workers
        check("two new workers", 2, len(new_workers))
        reloaded.set()
        steady_done.wait(120)
        st.join(5)
        stop.set()
        for h in hammers:
            h.join(10)
        print(f"     {len(log)} steady requests, {load[0]} others alongside")

        # Every answer as the model gives it: the old limit's on the old
        # workers, the new one's on the new, one word throughout.
        for z, model, lim in (("s", Gcra(), gcra_limit), ("w", Window(), lambda r, b: (r, b))):
            wrong = []
            judged = {"old": [], "new": []}
            for zz, msec, status, pid in log:
                if zz != z:
                    continue
                gen = "new" if pid in new_workers else "old"
                limit = lim(*NEW) if gen == "new" else lim(*OLD)
                want = 200 if model.allow(limit, msec * MS) else 429
                if want != status:
                    wrong.append((msec, gen, status, want))
                judged[gen].append((msec, status))
            check(f"zone {z}: every steady answer as the words give it across the reload "
                  f"({len(judged['old'])} old, {len(judged['new'])} new)", [], wrong[:5])
            # The bound across the change: each stretch its own policy's.
            for gen, (rate, burst) in (("old", OLD), ("new", NEW)):
                times = [m for m, s in judged[gen]]
                if not times:
                    bad(f"zone {z}: no request judged by the {gen} limit")
                    continue
                admitted = sum(1 for _, s in judged[gen] if s == 200)
                span = (max(times) - min(times)) * MS
                bound = burst + span * rate // SECOND
                if admitted <= bound:
                    ok(f"zone {z}: {admitted} admitted by the {gen} limit <= its bound {bound}")
                else:
                    bad(f"zone {z}: {admitted} admitted by the {gen} limit > its bound {bound}")
            if z == "s":
                # The GCRA word's joint bound: costs in ns sum to at most
                # the stretch plus the larger tolerance.
                cost = sum((SECOND // (NEW[0] if gen == "new" else OLD[0]))
                           for gen in ("old", "new") for _, s in judged[gen] if s == 200)
                times = [m for g in judged.values() for m, _ in g]
                stretch = (max(times) - min(times)) * MS
                tol = max(gcra_limit(*OLD)[1], gcra_limit(*NEW)[1])
                check("zone s: the admitted tokens' worth fits the stretch plus a bucket", True,
                      cost <= stretch + tol)

        # The key that spent its burst at t_spent: the new workers read its
        # words under the new limit. Smooth: it owes 0.5 s, the new bucket
        # holds 0.5 s: refused until t_spent + 0.5 s. Window: 5 events ≥ the
        # new burst 1: refused until its window ends, 5 × 0.5 s after its start.
        c = Client(n.port)
        check("smooth: the spent key is still refused right after the reload", 429,
              c.get("/s", "spent", t_spent + 1)[0])
        check("smooth: and free once its debt has run down (0.5 s)", 200,
              c.get("/s", "spent", t_spent + 500)[0])
        check("window: the spent key is still refused right after the reload", 429,
              c.get("/w", "spent", t_spent + 1)[0])
        check("window: refused until 5 × 0.5 s after its window opened", (429, 200),
              (c.get("/w", "spent", t_spent + 2499)[0], c.get("/w", "spent", t_spent + 2500)[0]))
        check("a fresh key gets the new burst (1)", [200, 429],
              [c.get("/s", "fresh", t_spent)[0], c.get("/s", "fresh", t_spent)[0]])

        # Changes a reload refuses: the old workers keep serving, state too.
        c.get("/s", "kept", 200_000)
        for what, lines, want in (
            ("kind", zones(NEW, kind_s="window"),
             'weir_limit_zone "s": a reload cannot change a zone\'s kind (smooth to window)'),
            ("hashes", zones(NEW, hashes_s=2),
             'weir_limit_zone "s": a reload cannot change a zone\'s hashes (1 to 2)'),
            ("size", zones(NEW, size_w="2m"),
             'weir_limit_zone "w": a reload cannot change a zone\'s size'),
            ("tick", zones(NEW, rate_s="8000000r/s"),
             'weir_limit_zone "s": a reload cannot move a smooth zone\'s rate across 7812500r/s'),
        ):
            serving = n.workers()
            _, text = n.reload(lines, want)
            check(f"a changed {what} is refused loudly", True, want in text and "[emerg]" in text)
            check(f"after the refused {what}: the same workers", serving, n.workers())
            check(f"after the refused {what}: the state is kept (burst 1 spent)", 429,
                  c.get("/s", "kept", 200_000)[0])
    finally:
        n.stop()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
