#!/usr/bin/env python3
"""A reload that changes a table zone's rate and burst, under load, against
a real nginx running the module's test build (WEIR_NGINX_TEST_CLOCK=1: a
request's X-Weir-Test-Msec header is its time, so every answer is exact).

    reload_table.py TEST_SO

Two workers; table zones `ts` (kind=smooth) and `tw` (kind=window) with a
fixed SipHash key, and a bloom zone `late` declared after them. A table
holds its limit in its shared region: the master publishes a reload's new
limit there when the reload is committed, and from then on every worker
judges by it, the old config's workers still finishing their requests too
(docs/nginx.md, "A reload that changes a rate or burst").

Checked: a client sends steadily (one request every STEP ms of test time on
each zone) while two others hammer other keys; the config is rewritten
with a new rate and burst and the master sent SIGHUP, the client going on
throughout. Each zone's answers are those of one word judged by the old
limit up to one request and by the new one from it on (the words keep
their state), that request falling between the last answer before the
SIGHUP and the first request sent after the reload's notice; the bound
across the change holds. A request an old worker reads after the commit is
judged by the new limit (its connection opened and its request begun
before the reload, finished after). A key that spent its burst stays
refused right after the reload where the new limit says so; a fresh key
gets the new burst. A reload that changes nothing more says nothing (the
zone's header holds the published limit). A reload that nginx abandons
after the tables' zones were attached (the later zone's size changed)
publishes nothing. A changed tick is refused loudly, the state kept.

Servers on 127.0.0.1 on a free high port, polled with a bound, stopped by
their pid. Prints a line per check and ends with "N passed, N failed"."""

import http.client
import socket
import sys
import threading
import time

from reload import MS, SECOND, STEP, Client, Gcra, Nginx, Window, gcra_limit

OLD = (10, 5)  # rate r/s, burst
NEW = (2, 1)
THIRD = (5, 3)
NOTICE = "its words are kept"

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


def zones(limit, rate_s=None, size_late="1m"):
    rate, burst = limit
    rs = rate_s or f"{rate}r/s"
    return (f"    weir_limit_zone $http_x_client zone=ts:1m rate={rs} burst={burst} store=table "
            f"test_seed=1:2;\n"
            f"    weir_limit_zone $http_x_client zone=tw:1m rate={rate}r/s burst={burst} kind=window "
            f"store=table test_seed=3:4;\n"
            # Declared last: its zone is attached after the tables'.
            f"    weir_limit_zone $http_x_client zone=late:{size_late} rate=1r/s burst=1;\n")


def notice(zone, old, new):
    return (f'weir_limit_zone "{zone}": rate {old[0]}r/s to {new[0]}r/s, burst {old[1]} to {new[1]}; '
            f"{NOTICE}")


def hammer(port, stop, counts):
    """Other keys, as fast as one connection goes: the load."""
    c = Client(port)
    i = 0
    while not stop.is_set():
        i += 1
        try:
            c.get("/ts" if i % 2 else "/tw", f"load{i % 97}", 10_000 + i % 50_000)
            counts[0] += 1
        except RuntimeError:
            pass


def unread(port, client_port):
    """The bytes the server's end of the connection from `client_port` has
    not read yet (/proc/net/tcp's rx_queue), or None if it is not there."""
    with open("/proc/net/tcp", encoding="ascii") as f:
        next(f)
        for line in f:
            fields = line.split()
            local, remote = fields[1], fields[2]
            if int(local.split(":")[1], 16) == port and int(remote.split(":")[1], 16) == client_port:
                return int(fields[4].split(":")[1], 16)
    return None


class Begun:
    """A request begun before a reload and finished after it: its request
    line and first header are sent now and read by an old worker (polled,
    with a bound), and since it is not idle the worker, told to quit,
    keeps the connection until it ends."""

    def __init__(self, port, path, key):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: test\r\nX-Client: {key}\r\n".encode())
        client_port = self.sock.getsockname()[1]
        self.read = False
        for _ in range(200):
            if unread(port, client_port) == 0:
                self.read = True
                break
            time.sleep(0.01)

    def finish(self, msec):
        self.sock.sendall(f"X-Weir-Test-Msec: {msec}\r\nConnection: close\r\n\r\n".encode())
        r = http.client.HTTPResponse(self.sock)
        r.begin()
        r.read()
        self.sock.close()
        return r.status, int(r.getheader("X-Pid"))


def switch_point(answers, model, old, new, lowest, highest):
    """The first request judged by the new limit: a k in [lowest, highest]
    such that one word judged by `old` for answers[:k] and by `new` from
    there gives every answer; None if there is none."""
    for k in range(lowest, highest + 1):
        m = model()
        if all((200 if m.allow(old if i < k else new, msec * MS) else 429) == status
               for i, (msec, status) in enumerate(answers)):
            return k
    return None


def main():
    so = sys.argv[1]
    n = Nginx(so, names=("ts", "tw", "late"))
    try:
        n.write(zones(OLD))
        n.start()
        old_workers = n.workers()
        check("two workers", 2, len(old_workers))
        c = Client(n.port)

        # A key spends its burst just before the reload, on both tables;
        # two more spend theirs, to be asked by an old worker after it.
        t_spent, t_drain = 100_000, 150_000
        spent = {z: [c.get(f"/{z}", "spent", t_spent)[0] for _ in range(OLD[1] + 1)] for z in ("ts", "tw")}
        check("table, smooth: the burst spent before the reload", [200] * OLD[1] + [429], spent["ts"])
        check("table, window: the burst spent before the reload", [200] * OLD[1] + [429], spent["tw"])
        for z in ("ts", "tw"):
            for _ in range(OLD[1]):
                c.get(f"/{z}", "drain", t_drain)
        begun = {z: Begun(n.port, f"/{z}", "drain") for z in ("ts", "tw")}
        check("two requests begun on old workers before the reload", [True, True],
              [begun[z].read for z in ("ts", "tw")])

        # The steady client, under load, across the reload.
        stop = threading.Event()
        load = [0]
        hammers = [threading.Thread(target=hammer, args=(n.port, stop, load)) for _ in range(2)]
        for h in hammers:
            h.start()
        log = []  # (zone, msec, status, pid, sent, answered): wall times
        reloaded = threading.Event()

        def steady():
            sc = Client(n.port)
            msec = 10_000
            after = 0
            while after < 300:  # 3 s of test time after the new workers answer
                for z in ("ts", "tw"):
                    sent = time.monotonic()
                    status, pid = sc.get(f"/{z}", "steady", msec)
                    log.append((z, msec, status, pid, sent, time.monotonic()))
                    if reloaded.is_set() and pid not in old_workers:
                        after += 1
                msec += STEP

        st = threading.Thread(target=steady, daemon=True)
        st.start()
        while len(log) < 200:  # 2 s of test time under the old limit
            time.sleep(0.01)
        hup = time.monotonic()
        _, text = n.reload(zones(NEW), notice("tw", OLD, NEW))
        published = time.monotonic()  # the notices are logged once the limits are published
        for z in ("ts", "tw"):
            check(f"the reload says so for {z} (notice)", True, notice(z, OLD, NEW) in text)
        for _ in range(200):
            if len(n.workers() - old_workers) == 2:
                break
            time.sleep(0.05)
        new_workers = n.workers() - old_workers
        check("two new workers", 2, len(new_workers))
        reloaded.set()
        st.join(120)
        stop.set()
        for h in hammers:
            h.join(10)
        print(f"     {len(log)} steady requests, {load[0]} others alongside")

        # Each table's answers: one word, the old limit's up to the commit,
        # the new one's from it on, whichever worker answered.
        for z, model, lim in (("ts", Gcra, gcra_limit), ("tw", Window, lambda r, b: (r, b))):
            rows = [r for r in log if r[0] == z]
            answers = [(msec, status) for _, msec, status, _, _, _ in rows]
            lowest = sum(1 for r in rows if r[5] < hup)
            highest = next((i for i, r in enumerate(rows) if r[4] > published), len(rows))
            k = switch_point(answers, model, lim(*OLD), lim(*NEW), lowest, highest)
            if k is None:
                bad(f"zone {z}: no switch from the old limit to the new one between request {lowest} "
                    f"and {highest} gives every steady answer")
                continue
            late = sum(1 for r in rows[k:] if r[3] in old_workers)
            ok(f"zone {z}: every steady answer as one word gives it, the old limit's for {k}, the new "
               f"one's for {len(rows) - k} ({late} of them answered by old workers)")
            # The bound across the change: each stretch its own limit's.
            for part, (rate, burst) in ((answers[:k], OLD), (answers[k:], NEW)):
                times = [m for m, _ in part]
                admitted = sum(1 for _, s in part if s == 200)
                bound = burst + (max(times) - min(times)) * MS * rate // SECOND
                check(f"zone {z}: {admitted} admitted by {rate}r/s burst={burst} within its bound {bound}",
                      True, admitted <= bound)
            if z == "ts":
                cost = sum(gcra_limit(*(OLD if i < k else NEW))[0] for i, (_, s) in enumerate(answers) if s == 200)
                stretch = (answers[-1][0] - answers[0][0]) * MS
                tol = max(gcra_limit(*OLD)[1], gcra_limit(*NEW)[1])
                check("zone ts: the admitted tokens' worth fits the stretch plus a bucket", True,
                      cost <= stretch + tol)

        # The requests begun before the reload, finished by old workers
        # after the commit: judged by the new limit. Smooth: the key owes
        # 0.5 s; at +200 ms the old limit (a bucket of 0.5 s, 0.1 s a
        # token) admits, the new one (0.5 s, 0.5 s) refuses. Window: 5 in
        # a window; at +1 s the old limit's (5 × 0.1 s) has ended, the new
        # one's (5 × 0.5 s) has not.
        for z, at in (("ts", t_drain + 200), ("tw", t_drain + 1000)):
            status, pid = begun[z].finish(at)
            check(f"zone {z}: a request an old worker reads after the commit is judged by the new limit",
                  (429, True), (status, pid in old_workers))

        c = Client(n.port)
        check("smooth: the spent key is still refused right after the reload", 429,
              c.get("/ts", "spent", t_spent + 1)[0])
        check("smooth: and free once its debt has run down (0.5 s)", 200, c.get("/ts", "spent", t_spent + 500)[0])
        check("window: the spent key is still refused right after the reload", 429,
              c.get("/tw", "spent", t_spent + 1)[0])
        check("window: refused until 5 × 0.5 s after its window opened", (429, 200),
              (c.get("/tw", "spent", t_spent + 2499)[0], c.get("/tw", "spent", t_spent + 2500)[0]))
        check("a fresh key gets the new burst (1)", [200, 429, 200, 429],
              [c.get(f"/{z}", "fresh", t_spent)[0] for z in ("ts", "ts", "tw", "tw")])

        # The same config again: the zone's header holds the published
        # limit, so nothing is published and nothing said.
        serving = n.workers()
        _, text = n.reload(zones(NEW), "start worker process")
        check("a reload that changes nothing more publishes nothing", False, NOTICE in text)

        # Abandoned after the tables' zones were attached: the later zone's
        # size is refused, nginx keeps the running config, and the tables'
        # new limit is not published.
        for _ in range(200):
            if len(n.workers() - serving) == 2 and len(n.workers()) == 2:
                break
            time.sleep(0.05)
        serving = n.workers()
        want = 'weir_limit_zone "late": a reload cannot change a zone\'s size'
        _, text = n.reload(zones(THIRD, size_late="2m"), want)
        check("a reload refused at a later zone is refused loudly", True, want in text and "[emerg]" in text)
        check("that reload publishes nothing", False, NOTICE in text)
        check("after it: the same workers", serving, n.workers())
        check("after it: the tables keep the committed limit (burst 1)", [200, 429, 200, 429],
              [c.get(f"/{z}", "kept", 300_000)[0] for z in ("ts", "ts", "tw", "tw")])

        # A changed tick: refused, the state kept.
        want = 'weir_limit_zone "ts": a reload cannot move a smooth zone\'s rate across 7812500r/s'
        _, text = n.reload(zones(NEW, rate_s="8000000r/s"), want)
        check("a changed tick is refused loudly", True, want in text and "[emerg]" in text)
        check("after the refused tick: the same workers", serving, n.workers())
        check("after the refused tick: the state is kept (burst 1 spent)", 429, c.get("/ts", "kept", 300_000)[0])

        # Then another rate and burst, compared with the published one.
        _, text = n.reload(zones(THIRD), notice("ts", NEW, THIRD))
        check("a later reload starts from the published limit (notice)", True, notice("ts", NEW, THIRD) in text)
        check("and its burst applies (3 of 4)", [200, 200, 200, 429],
              [c.get("/ts", "third", 400_000)[0] for _ in range(4)])
    finally:
        n.stop()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
