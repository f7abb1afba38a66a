#!/usr/bin/env python3
"""The Envoy module against a real Envoy 1.40.0 (run by modules/envoy/test.sh).

Starts Envoy (--concurrency 2, 127.0.0.1, high ports, the listener from a
watched LDS file, direct_response routes), polls /ready with a bound, drives
it with one connection per request so both workers serve, updates the
listener by renaming a new LDS file into place, stops Envoy by its pid, and
asserts counts that elapsed time cannot change (1 request a minute, bursts
asked at once). Ends with "N passed, N failed". Standard library only.

    driver.py ENVOY_BINARY MODULE_DIR [DOCS_MD]

With DOCS_MD (docs/envoy.md), it also runs the bootstrap YAML there as
written (its two ports changed), and the same with a bad rate, which must
stop Envoy at startup with the module's line.
"""

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import common
from common import Tally, bad, check, free_port, ok, struct, wait_for

ENVOY, MODULE_DIR = sys.argv[1], sys.argv[2]
DOCS = sys.argv[3] if len(sys.argv) > 3 else None
TMP = tempfile.mkdtemp(prefix="weir-envoy-")


# The distinct-key test: BULK_KEYS keys, each asking half its burst (1 of
# 2), in BULK_WORDS words (k = 3).
BULK_KEYS = int(os.environ.get("WEIR_KEYS", "50000"))
BULK_WORDS = 1 << 18
# The same for a keyed table laid for that many keys: none refused.
TABLE_KEYS = int(os.environ.get("WEIR_KEYS", "10000"))
# A table of 32k (256 buckets of 8 slots) sent more keys than it has slots.
FULL_KEYS = 3000

PORT = free_port()
ADMIN = free_port()
LOG = os.path.join(TMP, "envoy.log")
LDS = os.path.join(TMP, "lds", "lds.yaml")

# ---- HTTP: one connection per request, so the kernel spreads them over
# both workers' listening sockets (SO_REUSEPORT).


def request(path, headers=None, port=None):
    return common.request(port or PORT, path, headers)


def raw(path, pairs):
    """A request with these header (name, value) pairs, repeats kept."""
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
    try:
        c.putrequest("GET", path)
        for k, v in pairs:
            c.putheader(k, v)
        c.endheaders()
        r = c.getresponse()
        r.read()
        return r.status
    finally:
        c.close()


def get(path, client=None, headers=None):
    h = dict(headers or {})
    if client is not None:
        h["X-Client"] = client
    return request(path, h)[0]


def counts(path, client, n, headers=None):
    tally = {200: 0, 429: 0}
    for _ in range(n):
        s = get(path, client, headers)
        tally[s] = tally.get(s, 0) + 1
    return f"{tally[200]} {tally[429]}"


# Key k1's requests until both workers served one: at least 10, at most
# SPREAD_BOUND (two workers chosen at random leave one idle for 60
# connections once in 2^59 runs).
SPREAD_BOUND = 60


def k1_across_workers(workers):
    """Sends key k1 to /a, a connection a request, until each of WORKERS
    (their downstream_cx_total counters) has served one and at least 10
    were sent, SPREAD_BOUND at most: (requests sent, [(admitted, refused)
    per worker], what went wrong or None)."""
    per_worker = [[0, 0] for _ in workers]
    sent = 0
    while sent < 10 or min(a + r for a, r in per_worker) == 0:
        if sent == SPREAD_BOUND:
            return sent, per_worker, f"k1 served by 1 worker only in {sent} requests, each on a connection of its own"
        before = stats()
        status = get("/a", "k1")
        after = stats()
        sent += 1
        served = [i for i, w in enumerate(workers) if after[w] > before[w]]
        if len(served) != 1 or status not in (200, 429):
            return sent, per_worker, f"k1's request {sent}: status {status}, served by workers {served} (one expected)"
        per_worker[served[0]][0 if status == 200 else 1] += 1
    return sent, per_worker, None


def admin(path):
    c = http.client.HTTPConnection("127.0.0.1", ADMIN, timeout=5)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read().decode()
    finally:
        c.close()


def stats():
    return common.stats(ADMIN)


def log_text():
    with open(LOG, errors="replace") as f:
        return f.read()


# ---- config


def per_route(value, name="weir_limit"):
    return {
        "weir": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.dynamic_modules.v3.DynamicModuleFilterPerRoute",
            "dynamic_module_config": {"name": "weir_envoy"},
            "filter_name": name,
            "filter_config": struct(value),
        }
    }


def limit(name, burst, rate="1r/m", kind="window", key=None, size="1m", hashes=None, table=None):
    """A limit; with `table`, its words in a keyed table (sized by
    table's keys unless `size` is given)."""
    l = {"name": name, "key": key or [{"header": "x-client"}], "rate": rate, "burst": burst}
    if table is not None:
        l["table"] = table
    if size and (table is None or size != "1m"):
        l["size"] = size
    if kind:
        l["kind"] = kind
    if hashes:
        l["hashes"] = hashes
    return l


def apply(*names, dry=()):
    return [{"limit": n, "dry_run": n in dry} for n in names]


def routes(extra_route=None, route_filter_name="weir_limit"):
    """Every route: (path, per-route value or None, or the string 'disabled')."""
    table = [
        ("/a", {"apply": apply("one")}),
        ("/b", {"apply": apply("one")}),
        ("/dry", {"apply": apply("dry", dry=("dry",))}),
        ("/code", {"apply": apply("code"), "status": 503}),
        ("/two", {"apply": apply("one", "idx")}),
        ("/two2", {"apply": apply("idx", "one")}),
        ("/inherit", None),
        ("/off", {"apply": []}),
        ("/disabled", "disabled"),
        ("/smooth", {"apply": apply("smooth")}),
        ("/win", {"apply": apply("win")}),
        ("/cplx", {"apply": apply("cplx")}),
        ("/host", {"apply": apply("host")}),
        ("/peer", {"apply": apply("peer")}),
        ("/xff", {"apply": apply("xff")}),
        ("/stat", {"apply": apply("stat", "statdry", dry=("statdry",))}),
        ("/unknown", {"apply": apply("nope")}),
        ("/bulk", {"apply": apply("bulk")}),
        ("/tab", {"apply": apply("tab")}),
        ("/tabfull", {"apply": apply("tabfull")}),
        ("/tabbulk", {"apply": apply("tabbulk")}),
    ]
    out = []
    for path, cfg in table + ([extra_route] if extra_route else []):
        r = {"match": {"path": path}, "direct_response": {"status": 200, "body": {"inline_string": path + "\n"}}}
        if cfg == "disabled":
            r["typed_per_filter_config"] = {
                "weir": {"@type": "type.googleapis.com/envoy.config.route.v3.FilterConfig", "disabled": True}
            }
        elif cfg is not None:
            r["typed_per_filter_config"] = per_route(cfg, route_filter_name)
        out.append(r)
    # Keys from the path: every /p/... shares the path limit.
    out.append(
        {
            "match": {"prefix": "/p/"},
            "direct_response": {"status": 200, "body": {"inline_string": "p\n"}},
            "typed_per_filter_config": per_route({"apply": apply("path")}),
        }
    )
    return out


def limits(one_burst=3, one_size="1m", one_rate="1r/m", one_kind="window", tab=None):
    return [
        limit("one", one_burst, size=one_size, rate=one_rate, kind=one_kind),
        limit("idx", 1, hashes=2),
        limit("dry", 1),
        limit("code", 1),
        limit("small", 2, hashes=1, size="64k"),
        limit("smooth", 3, rate="1r/s", kind=None),
        limit("win", 3, rate="1r/s"),
        limit("cplx", 2, key=[{"text": "k:"}, {"header": "x-client"}]),
        limit("host", 2, key=["authority"]),
        limit("peer", 2, key=["client_address"]),
        limit("xff", 2, key=[{"x_forwarded_for": 1}]),
        limit("path", 2, key=["path"]),
        limit("stat", 2),
        limit("statdry", 1),
        limit("bulk", 2, kind=None, size=f"{BULK_WORDS * 8}"),
        dict(limit("tab", 2, table={"keys": 1000}), **(tab or {})),
        limit("tabfull", 2, size="32k", table={"overflow": "refuse"}),
        limit("tabbulk", 2, kind=None, table={"keys": TABLE_KEYS}),
    ]


def filter_config(**kw):
    one = {k[4:]: kw.pop(k) for k in ("one_burst", "one_size", "one_rate", "one_kind") if k in kw}
    tab = kw.pop("tab", None)
    cfg = {"limits": limits(tab=tab, **{"one_" + k: v for k, v in one.items()}), "apply": apply("small")}
    cfg.update(kw)
    return cfg


def listener(fc, extra_route=None, filter_name="weir_limit", raw_config=None, route_filter_name="weir_limit"):
    hcm = {
        "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        "stat_prefix": "weir_test",
        "route_config": {"name": "r", "virtual_hosts": [{"name": "all", "domains": ["*"], "routes": routes(extra_route, route_filter_name)}]},
        "http_filters": [
            {
                "name": "weir",
                "typed_config": {
                    "@type": "type.googleapis.com/envoy.extensions.filters.http.dynamic_modules.v3.DynamicModuleFilter",
                    "dynamic_module_config": {"name": "weir_envoy"},
                    "filter_name": filter_name,
                    "filter_config": raw_config if raw_config is not None else struct(fc),
                },
            },
            {"name": "envoy.filters.http.router", "typed_config": {"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}},
        ],
    }
    return {
        "@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
        "name": "main",
        "address": {"socket_address": {"address": "127.0.0.1", "port_value": PORT}},
        "filter_chains": [{"filters": [{"name": "envoy.filters.network.http_connection_manager", "typed_config": hcm}]}],
    }


version = 0


def write_lds(lst):
    """Renames a new LDS file into the watched directory (Envoy reloads on
    the move)."""
    global version
    version += 1
    tmp = os.path.join(TMP, "lds.tmp")
    with open(tmp, "w") as f:
        json.dump({"version_info": str(version), "resources": [lst]}, f)
    os.rename(tmp, LDS)


def bootstrap():
    return {
        "node": {"id": "weir-test", "cluster": "weir-test"},
        "admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": ADMIN}}},
        "dynamic_resources": {
            "lds_config": {
                "resource_api_version": "V3",
                "path_config_source": {"path": LDS, "watched_directory": {"path": os.path.dirname(LDS)}},
            }
        },
    }


def lds_counter(name):
    return stats().get(f"listener_manager.lds.{name}", 0)


def update(lst):
    """An LDS update; returns 'accepted', 'rejected' or 'timeout'."""
    good, rejected = lds_counter("update_success"), lds_counter("update_rejected")
    write_lds(lst)
    result = []

    def done():
        s = stats()
        if s.get("listener_manager.lds.update_rejected", 0) > rejected:
            result.append("rejected")
        elif s.get("listener_manager.lds.update_success", 0) > good:
            result.append("accepted")
        return bool(result)

    wait_for(done)
    return result[0] if result else "timeout"


# ---- run

proc = None


def start(cfg=None):
    global proc
    if cfg is None:
        os.makedirs(os.path.dirname(LDS), exist_ok=True)
        write_lds(listener(filter_config()))
        cfg = os.path.join(TMP, "bootstrap.yaml")
        with open(cfg, "w") as f:
            json.dump(bootstrap(), f)
    env = dict(os.environ, ENVOY_DYNAMIC_MODULES_SEARCH_PATH=MODULE_DIR)
    log = open(LOG, "w")
    # Envoy is this process's child (it dies with its parent: PR_SET_PDEATHSIG).
    proc = subprocess.Popen(
        [ENVOY, "-c", cfg, "--concurrency", "2", "--use-dynamic-base-id", "--drain-time-s", "1", "--log-format", "[%Y-%m-%d %T.%e][%t][%l][%n] %v"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    started = time.monotonic()

    def ready():
        if proc.poll() is not None:
            return True  # exited: not ready, and no use waiting
        try:
            return admin("/ready")[0] == 200
        except OSError:
            return False

    if not wait_for(ready, seconds=10.0, step=0.02) or proc.poll() is not None:
        return None
    return time.monotonic() - started


def stop():
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    took = start()
    if took is None:
        bad("envoy did not become ready: " + log_text()[-2000:])
        return
    ok(f"envoy ready in {took:.2f} s (/ready polled)")
    check("the module's ABI version matched", True, "Dynamic module ABI version v0.2.0 matched." in log_text())
    s = stats()
    workers = sorted(k for k in s if re.match(rf"listener\.127\.0\.0\.1_{PORT}\.worker_\d+\.downstream_cx_total$", k))
    check("two workers", 2, len(workers))

    # ---- exact counts per key across workers; keys independent. The
    # kernel picks a connection's worker (SO_REUSEPORT hashes its
    # addresses), so ten connections can all land on one worker: key k1's
    # requests go on, a connection each, until both workers have served
    # it (SPREAD_BOUND requests at most). Only the burst is admitted in
    # all: a worker with a limit of its own would admit its first request
    # of k1, so the count shows one limit shared by both workers.
    sent, per_worker, trouble = k1_across_workers(workers)
    if trouble:
        bad(trouble)
    else:
        check(f"key k1: burst 3 of {sent} admitted, across both workers", 3, sum(a for a, _ in per_worker))
        ok("k1's requests were served by both workers (" + " and ".join(f"{a} admitted, {r} refused" for a, r in per_worker) + ")")
    check("key k1 shares its limit between routes", "0 3", counts("/b", "k1", 3))
    check("key k2 is independent of k1", "3 2", counts("/a", "k2", 5))
    check("an empty key is not limited", "20 0", counts("/a", None, 20))

    # ---- the key's sources.
    codes = []
    for h in ("x-client", "X-CLIENT", "X-Client", "x-cLiEnT"):
        codes.append(str(request("/a", {h: "h1"})[0]))
    check("a header key in any case is one key", "200 200 200 429", " ".join(codes))
    check(
        "repeated headers: the first is the key",
        "429 200",
        f"{raw('/a', [('X-Client', 'h1'), ('X-Client', 'h2')])} {raw('/a', [('X-Client', 'h2'), ('X-Client', 'h1')])}",
    )
    check("a concatenated key (k: + x-client): burst 2 of 3", "2 1", counts("/cplx", "x1", 3))
    check("the concatenated key is the parts' bytes", True, 'limit "cplx", key "k:x1"' in log_text())
    check("a concatenation with an empty part is still a key (k:)", "2 1", counts("/cplx", None, 3))
    check("authority: burst 2 of 3 for one host", "2 1", counts("/host", None, 3, {"Host": "h1.example"}))
    check("authority: another host is independent", "2 0", counts("/host", None, 2, {"Host": "h2.example"}))
    check("path: burst 2 of 3 for one path", "2 1", counts("/p/x", None, 3))
    check("path: another path is independent", "2 0", counts("/p/y", None, 2))
    check("client address: burst 2 of 3 from 127.0.0.1", "2 1", counts("/peer", None, 3))
    check("client address is the address without its port", True, 'limit "peer", key "127.0.0.1"' in log_text())
    fwd = lambda via: {"X-Forwarded-For": f"6.6.6.6, {via}"}
    got = " ".join(str(get("/xff", None, fwd(v))) for v in ("10.0.0.1", "10.0.0.2", "10.0.0.3"))
    check("x-forwarded-for, 1 trusted hop: one client through three proxies", "200 200 429", got)
    check("x-forwarded-for: the key is the client's address", True, 'limit "xff", key "6.6.6.6"' in log_text())
    check("x-forwarded-for: another client is independent", "200", str(get("/xff", None, {"X-Forwarded-For": "7.7.7.7, 10.0.0.1"})))
    check("x-forwarded-for shorter than the hops: the peer's address", "2 1", counts("/xff", None, 3, {"X-Forwarded-For": "8.8.8.8"}))

    # ---- the two kinds at 1 r/s, burst 3.
    check("kind smooth (the default): burst 3 of 4 at once", "3 1", counts("/smooth", "sh1", 4))
    check("kind window: burst 3 of 4 at once", "3 1", counts("/win", "sh1", 4))
    check("kind smooth: Retry-After 1 (one back each second)", "1", request("/smooth", {"X-Client": "sh1"})[1].get("retry-after"))
    check("kind window: Retry-After 3 (all back after the window)", "3", request("/win", {"X-Client": "sh1"})[1].get("retry-after"))
    wait_for(lambda: get("/smooth", "sh1") == 200, seconds=4.0, step=0.1)
    check("kind smooth: one more after a second, the window still shut", "429 429", f"{get('/smooth', 'sh1')} {get('/win', 'sh1')}")

    # ---- status, Retry-After, RateLimit fields.
    status, h, body = request("/a", {"X-Client": "k1"})
    check("refused: 429", 429, status)
    retry = h.get("retry-after", "")
    if retry.isdigit() and 1 <= int(retry) <= 180:
        ok(f"Retry-After {retry}")
    else:
        bad(f"Retry-After [{retry}]")
    check("RateLimit-Policy", '"one";q=3;w=180', h.get("ratelimit-policy"))
    check("RateLimit", f'"one";r=0;t={retry}', h.get("ratelimit"))
    check("refused with an empty body", b"", body)
    check("a route's status (503)", "200 503", f"{get('/code', 'c1')} {get('/code', 'c1')}")
    check("a refusal logs the limit and key at error", True, '[error][dynamic_modules] weir_limit: refused, limit "code", key "c1"' in log_text())

    # ---- dry run admits all and logs.
    check("dry run admits all", "5 0", counts("/dry", "d1", 5))
    n = log_text().count('weir_limit: would refuse, dry run, limit "dry", key "d1"')
    check("dry run logs each would-be refusal", 4, n)

    # ---- several limits: all or nothing, as the nginx module.
    check("two limits: the tighter (idx, burst 1) applies", "1 2", counts("/two", "t1", 3))
    check("two limits: refused by the last, the first was charged once", "2 1", counts("/a", "t1", 3))
    check("two limits, first refuses: the tighter applies", "1 2", counts("/two2", "t2", 3))
    check("two limits, first refuses: the other was charged once", "2 1", counts("/a", "t2", 3))

    # ---- per route: inherit, off, disabled, unknown name.
    check("a route with no per-route config has the filter's apply (small, burst 2)", "2 2", counts("/inherit", "s1", 4))
    check("a route's apply: [] turns limits off", "10 0", counts("/off", "s2", 10))
    check("a route's FilterConfig disabled: true turns the filter off", "10 0", counts("/disabled", "s3", 10))
    check("a route naming an unknown limit: admitted", "3 0", counts("/unknown", "u1", 3))
    check("... and logged", True, 'the route applies limit "nope", which this filter does not declare' in log_text())

    # ---- stats: per limit and decision.
    check("stat: burst 2 of 5, dry run statdry (burst 1) beside it", "2 3", counts("/stat", "st", 5))
    s = stats()
    got = [s.get(f"dynamicmodulescustom.weir_limit.{n}", -1) for n in ("stat.allowed", "stat.refused", "stat.dry_run_refused", "statdry.allowed", "statdry.dry_run_refused", "statdry.refused")]
    # statdry is charged only when stat admits (2 requests): 1 allowed, 1 would-be refusal.
    check("counters: stat allowed 2, refused 3; statdry allowed 1, dry-run refused 1", [2, 3, 0, 1, 1, 0], got)
    check("counters: dry allowed 1, dry-run refused 4", [1, 4], [s.get("dynamicmodulescustom.weir_limit.dry.allowed"), s.get("dynamicmodulescustom.weir_limit.dry.dry_run_refused")])

    # ---- a keyed table (limit tab, 1r/m, burst 2, kind window): every key
    # its own word, so each gets exactly its burst whatever the others send.
    check("table: a third key's traffic first (tc: burst 2 of 20)", "2 18", counts("/tab", "tc", 20))
    check("table: key ta gets exactly its burst (2 of 4)", "2 2", counts("/tab", "ta", 4))
    check("table: key tb gets exactly its burst (2 of 4)", "2 2", counts("/tab", "tb", 4))
    status, h, _ = request("/tab", {"X-Client": "ta"})
    retry = h.get("retry-after", "")
    check("table: the refusal's fields (window of 120 s)", (429, '"tab";q=2;w=120', True), (status, h.get("ratelimit-policy"), retry.isdigit() and 100 <= int(retry) <= 120))
    s = stats()
    got = [s.get(f"dynamicmodulescustom.weir_limit.tab.{c}", -1) for c in ("allowed", "refused", "overflow")]
    check("table: counters allowed 6, refused 23, overflow 0", [6, 23, 0], got)
    check("a bloom limit has no overflow counter", -1, s.get("dynamicmodulescustom.weir_limit.one.overflow", -1))

    # ---- a full table (32k: 2,048 slots) sent 3,000 keys, each once in
    # its window: the keys that find room are admitted, the others
    # overflow and, by overflow: refuse, are refused; each overflow counted.
    here = os.path.dirname(os.path.abspath(__file__))

    def load(path, n):
        out = subprocess.run(
            [sys.executable, os.path.join(here, "load.py"), str(PORT), path, str(n)],
            capture_output=True, text=True, timeout=600,
        ).stdout
        m = re.search(r"ok=(\d+) refused=(\d+) other=0", out)
        if not m:
            bad(f"{path}: {out}")
            return None
        return int(m.group(1)), int(m.group(2))

    got = load("/tabfull", FULL_KEYS)
    if got:
        admitted, refused_n = got
        overflows = stats().get("dynamicmodulescustom.weir_limit.tabfull.overflow", -1)
        print(f"     a full table: {admitted} of {FULL_KEYS} keys found room in 2048 slots, {refused_n} overflowed ({overflows} counted)")
        check("full table: every refusal is an overflow, counted", (True, refused_n), (refused_n > 0 and 1500 <= admitted <= 2048, overflows))
        # The load's first key found an empty table: still exact.
        check("full table: a key that found room keeps its word (key-0: 1 more of 2)", "1 1", counts("/tabfull", "key-0", 2))

    # ---- many distinct keys in a table laid for them: not one refused.
    got = load("/tabbulk", TABLE_KEYS)
    if got:
        overflows = stats().get("dynamicmodulescustom.weir_limit.tabbulk.overflow", -1)
        check(f"{TABLE_KEYS} distinct keys in a table laid for {TABLE_KEYS}: 0 refused, 0 overflows", (TABLE_KEYS, 0, 0), got + (overflows,))

    # ---- many distinct keys, each asking half its burst in one window: the
    # false refusals stay under the bloom's bound (the nginx module's test,
    # modules/nginx/test/false_refusals.py: k = 3 words in one line of 8, a
    # word spent by floor(1 / f) = 2 other keys).
    out = subprocess.run(
        [sys.executable, os.path.join(here, "load.py"), str(PORT), "/bulk", str(BULK_KEYS)],
        capture_output=True, text=True, timeout=600,
    ).stdout
    m = re.search(r"ok=(\d+) refused=(\d+)", out)
    if not m:
        bad(f"distinct keys: {out}")
    else:
        admitted, refused_n = int(m.group(1)), int(m.group(2))
        total = admitted + refused_n
        f = float(subprocess.run(
            [sys.executable, os.path.join(here, "..", "..", "nginx", "test", "false_refusals.py"), str(total), str(BULK_WORDS), "3", "0.5"],
            capture_output=True, text=True,
        ).stdout)
        limit_n = int(total * f)
        print(f"     distinct keys: {total} in 2^18 words, {refused_n} falsely refused (bound F = {f:.4f}: {limit_n})")
        if total == BULK_KEYS and refused_n <= limit_n:
            ok(f"{total} distinct keys: {refused_n} false refusals <= {limit_n}")
        else:
            bad(f"distinct keys: {out.strip()}, bound {limit_n}")

    # ---- a listener update keeps the state; a changed shape is refused.
    check("update with the same shapes is accepted", "accepted", update(listener(filter_config(), ("/v2", {"apply": apply("one")}))))
    wait_for(lambda: request("/v2")[0] == 200, seconds=5)
    check("the update serves (/v2)", 200, request("/v2")[0])
    check("the update keeps the state (k1 still refused)", "0 2", counts("/a", "k1", 2))
    check("the update keeps the state (k3 fresh)", "3 1", counts("/a", "k3", 4))
    check("the new route shares limit one (k3 refused)", "0 1", counts("/v2", "k3", 1))
    check("the update keeps a table's state (ta still refused)", "0 1", counts("/tab", "ta", 1))

    def refused(name, lst, want):
        mark = len(log_text())
        result = update(lst)
        text = log_text()[mark:]
        lines = [l for l in text.splitlines() if "[dynamic_modules] weir_limit:" in l]
        line = next((l for l in lines if want in l), None)
        if result == "rejected" and line and len(lines) == 1:
            ok(f"{name}: rejected, {line.split('] ', 1)[-1][:160]}")
        else:
            bad(f"{name}: {result}, log: {text[-600:]}")

    refused("a changed kind", listener(filter_config(one_kind="smooth")), 'limit "one": an update cannot change a limit\'s kind (window to smooth)')
    check("the old config keeps serving, its state too", "0 1", counts("/a", "k3", 1))
    refused("a changed size", listener(filter_config(one_size="2m")), 'limit "one": an update cannot change a limit\'s size (2^17 to 2^18 words)')
    check("after the refused resize, the state is kept", "0 1", counts("/a", "k3", 1))
    refused("a changed tick", listener(dict(filter_config(), limits=[dict(l, rate="8000000r/s") if l["name"] == "smooth" else l for l in limits()])),
            'limit "smooth": an update cannot change a limit\'s tick')
    refused("a changed table overflow policy", listener(filter_config(tab={"table": {"keys": 1000, "overflow": "admit"}})),
            'limit "tab": an update cannot change a limit\'s table overflow (refuse to admit)')
    refused("a changed table size", listener(filter_config(tab={"table": {"keys": 100000}})),
            'limit "tab": an update cannot change a limit\'s table size (256 to 20309 buckets)')
    refused("a bloom limit turned into a table", listener(dict(filter_config(), limits=[dict(l, table={}) if l["name"] == "one" else l for l in limits()])),
            'limit "one": an update cannot change a limit\'s store (bloom array to table)')
    check("after the refused table changes, its state is kept", "0 1", counts("/tab", "ta", 1))

    # ---- an update that changes limit one's rate and burst (1r/m burst 3
    # to 2r/m burst 4) keeps its words, under load: while it lands, 40
    # keys send requests in turn (a connection each, both workers). A
    # window's count carries over (docs/envoy.md), so no key gets more
    # than the new burst in all, where fresh words would give 3 + 4.
    check("before: key rk spends its burst (3)", "3 1", counts("/a", "rk", 4))
    load = {}
    stop_load = threading.Event()

    def hammer(w):
        i = 0
        while not stop_load.is_set():
            key = f"ld{w}-{i % 10}"
            load.setdefault(key, []).append(get("/a", key))
            i += 1

    threads = [threading.Thread(target=hammer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    wait_for(lambda: sum(map(len, load.values())) >= 40, seconds=10)
    check("a changed rate and burst is accepted (limits one and tab)", "accepted", update(listener(filter_config(one_burst=4, one_rate="2r/m", tab={"burst": 3, "rate": "2r/m"}))))
    stop_load.set()
    for t in threads:
        t.join(30)
    most = max(v.count(200) for v in load.values())
    ok_n = sum(v.count(200) for v in load.values())
    check(f"under load across the update, no key beyond the new burst ({ok_n} of {sum(map(len, load.values()))} admitted, a key's most {most})",
          True, most <= 4 and len(load) == 40)
    probes = iter(range(1000))
    wait_for(lambda: counts("/a", f"probe{next(probes)}", 5) == "4 1", seconds=10)
    check("after: a fresh key gets the new burst (4)", "4 1", counts("/a", "rk2", 5))
    check("after: key rk keeps its 3 of the window, one more of the new 4", "1 2", counts("/a", "rk", 3))
    check("after: table key ta keeps its 2 of the window, one more of the new 3", "1 1", counts("/tab", "ta", 2))

    # ---- bad configs: each rejected with one line naming the field and value.
    def with_limit(**change):
        fc = filter_config()
        fc["limits"][0].update(change)
        return listener(fc)

    bad_cases = [
        ("zero rate", with_limit(rate="0r/s"), 'weir_limit: filter_config: limits[0].rate: invalid "0r/s": the rate is zero'),
        ("bad rate unit", with_limit(rate="5r/h"), 'limits[0].rate: invalid "5r/h": expected Nr/s or Nr/m'),
        ("burst out of range (window)", with_limit(burst=2000), "limits[0].burst: invalid 2000: kind window takes a burst of 1..1023"),
        ("burst out of range (smooth)", with_limit(burst=2000000, kind="smooth"), "limits[0].burst: invalid 2000000: the burst must be 1..1000000"),
        ("burst zero", with_limit(burst=0), "limits[0].burst: invalid 0"),
        ("size too small", with_limit(size="1k"), 'limits[0].size: invalid "1k": the size is too small (at least 32k)'),
        ("bad hashes", with_limit(hashes=9), "limits[0].hashes: invalid 9: hashes must be 1..8"),
        ("unknown kind", with_limit(kind="fast"), 'limits[0].kind: invalid "fast": expected smooth or window'),
        ("unknown key part", with_limit(key=[{"cookie": "x"}]), "limits[0].key[0]: unknown variant `cookie`"),
        ("misspelled field", with_limit(brust=3), "limits[0].brust: unknown field `brust`"),
        ("wrong type", with_limit(burst="three"), 'limits[0].burst: invalid type: string "three", expected f64'),
        ("a table sized twice", with_limit(table={"keys": 10}), "limits[0].table.keys: invalid 10: a table is sized by keys or by the limit's size, not both"),
        ("a table with hashes", with_limit(table={}, hashes=2), "limits[0].hashes: invalid 2: a table holds one word a key: hashes is the bloom array's"),
        ("an unknown overflow policy", with_limit(table={"overflow": "spill"}), 'limits[0].table.overflow: invalid "spill": expected refuse, admit or shared'),
        ("unknown limit applied", listener(dict(filter_config(), apply=apply("nope"))), 'apply[0].limit: invalid "nope": no limit has this name'),
        ("a limit declared twice", listener(dict(filter_config(), limits=limits() + [limit("one", 3)])), f'limits[{len(limits())}].name: invalid "one": the limit is declared twice'),
        ("bad status", listener(dict(filter_config(), status=200)), "status: invalid 200: the status must be 400..599"),
        ("bad log level", listener(dict(filter_config(), log_level="loud")), 'log_level: invalid "loud": expected info, warn or error'),
        ("unknown filter_name", listener(filter_config(), filter_name="other"), 'filter_name: invalid "other": this module\'s filters are "weir_limit" and "weir_breaker"'),
        ("a StringValue instead of a Struct", listener(None, raw_config={"@type": "type.googleapis.com/google.protobuf.StringValue", "value": "rate=1r/s"}), 'weir_limit: filter_config: invalid "rate=1r/s": expected a google.protobuf.Struct (JSON)'),
        ("unknown per-route filter_name", listener(filter_config(), route_filter_name="other"), 'weir_limit: per-route filter_name: invalid "other": this module\'s filters are "weir_limit" and "weir_breaker"'),
        ("bad per-route status", listener(filter_config(), ("/v9", {"apply": apply("one"), "status": 99})), "weir_limit: per-route filter_config: status: invalid 99: the status must be 400..599"),
    ]
    for name, lst, want in bad_cases:
        refused(name, lst, want)
    check("after the refused updates, the running config still serves, its state too", "0 1", counts("/a", "rk", 1))

    # ---- the last update, accepted again: limits and state as before.
    check("an update back to the first rate and burst is accepted", "accepted", update(listener(filter_config())))
    check("... and the state is still there (k1 refused)", "0 1", counts("/a", "k1", 1))

    # ---- a removed limit's words go with the last config that holds it:
    # once the old listener has drained (--drain-time-s 1), the name takes
    # another shape (another kind).
    fc = filter_config()
    fc["limits"] = [l for l in fc["limits"] if l["name"] != "stat"]
    check("an update without limit stat is accepted", "accepted", update(listener(fc)))
    fc = filter_config()
    next(l for l in fc["limits"] if l["name"] == "stat").update(burst=5, kind="smooth")
    result = "timeout"
    for _ in range(40):
        result = update(listener(fc))
        if result == "accepted":
            break
        time.sleep(0.25)
    check("... then stat again with another shape (its old words freed)", "accepted", result)
    check("... fresh: burst 5 for a key stat refused before", "5 1", counts("/stat", "st", 6))

    pid = proc.pid
    stop()
    alive = True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        alive = False
    check("envoy stopped by its pid", False, alive)


def docs():
    """The bootstrap in docs/envoy.md, as written but for its ports."""
    global PORT, ADMIN
    text = open(DOCS).read()
    m = re.search(r"## A first configuration.*?```yaml\n(.*?)```", text, re.S)
    if not m:
        bad("docs/envoy.md: no yaml block under 'A first configuration'")
        return
    PORT, ADMIN = free_port(), free_port()
    yaml = m.group(1).replace("port_value: 9901", f"port_value: {ADMIN}").replace("port_value: 10000", f"port_value: {PORT}")
    cfg = os.path.join(TMP, "docs.yaml")
    with open(cfg, "w") as f:
        f.write(yaml)
    took = start(cfg)
    if took is None:
        bad("docs/envoy.md's bootstrap did not start: " + log_text()[-1500:])
        return
    ok(f"docs/envoy.md's bootstrap runs ({took:.2f} s to /ready)")
    # api_key is a dry run: charged and counted on the requests it keys.
    keyed = " ".join(str(request("/api/y", {"X-Api-Key": "a"})[0]) for _ in range(3))
    check("docs: api_key, a dry run, admits", "200 200 200", keyed)
    check("docs: api_key's counter", 3, stats().get("dynamicmodulescustom.weir_limit.api_key.allowed"))
    # per_client: 20 at once (3 spent above), then one each 100 ms: of 30
    # requests sent in T s, 17 plus at most the T x 10 (+1) refilled pass.
    t0 = time.monotonic()
    got = [request("/api/x")[0] for _ in range(30)]
    refills = int((time.monotonic() - t0) * 10) + 1
    passed_n = got.count(200)
    if got[:17] == [200] * 17 and 17 <= passed_n <= 17 + refills and got.count(429) == 30 - passed_n:
        ok(f"docs: /api/ per client address: 20 at once, then one each 100 ms ({passed_n} of 30, {refills} refills at most)")
    else:
        bad(f"docs: /api/: {got} (refills at most {refills})")
    check("docs: refusals logged at log_level info", True, '[info][dynamic_modules] weir_limit: refused, limit "per_client", key "127.0.0.1"' in log_text())
    h = request("/api/x")[1]
    check("docs: the refusal's fields", ('"per_client";q=20;w=2', '"per_client";r=0;t=1'), (h.get("ratelimit-policy"), h.get("ratelimit")))
    xff = {"X-Forwarded-For": "6.6.6.6, 10.0.0.1"}
    check("docs: /login, 5 a minute per client behind one proxy, 503", "200 200 200 200 200 503", " ".join(str(request("/login", xff)[0]) for _ in range(6)))
    check("docs: /health has no limits", [200] * 30, [request("/health")[0] for _ in range(30)])
    s = stats()
    check("docs: the counters", True, s.get("dynamicmodulescustom.weir_limit.per_client.refused", 0) >= 2 and s.get("dynamicmodulescustom.weir_limit.login.refused") == 1)
    stop()

    # The same bootstrap with a bad rate: Envoy stops at startup with the line.
    bad_cfg = os.path.join(TMP, "docs-bad.yaml")
    with open(bad_cfg, "w") as f:
        f.write(yaml.replace("rate: 10r/s", "rate: 10r/h", 1))
    if start(bad_cfg) is not None:
        bad("docs: a bad rate did not stop Envoy")
        stop()
        return
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    want = 'weir_limit: filter_config: limits[0].rate: invalid "10r/h": expected Nr/s or Nr/m'
    check("docs: a bad rate stops Envoy at startup with the module's line", (True, True), (proc.poll() not in (None, 0), want in log_text()))


try:
    main()
    if DOCS:
        docs()
except Exception as e:  # a crash of the driver is a failure, with its cause
    import traceback

    traceback.print_exc()
    bad(f"driver: {e!r}")
finally:
    stop()
    if Tally.failed and os.path.exists(LOG):
        print("---- envoy log (tail)")
        print(log_text()[-3000:])
    shutil.rmtree(TMP, ignore_errors=True)
print(f"{Tally.passed} passed, {Tally.failed} failed")
sys.exit(1 if Tally.failed else 0)
