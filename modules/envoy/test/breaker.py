#!/usr/bin/env python3
"""The weir_breaker filter against a real Envoy 1.40.0, beside Envoy's
admission_control (run by modules/envoy/test.sh).

    breaker.py ENVOY_BINARY MODULE_DIR REPLAY_BINARY

Starts three upstreams (test/upstream.py, 127.0.0.1, high ports, polled,
stopped by pid) and one Envoy (--concurrency 2) with two listeners: one
with weir_breaker in front of clusters a and b (and a route with a breaker
of its own), one with admission_control in front of cluster c. Each
listener then goes through the same outage, one request every STEP: the
upstream healthy for HEALTHY s, answering 503 for OUTAGE s, healthy again
for RECOVERY s. Checks what holds however the machine schedules the calls:
the breaker refuses in the outage with 503s naming it, the probe lets calls
through, its ratio falls to 0 after recovery (polled) and calls pass again,
cluster b (healthy all along) is never refused, and Envoy's counters and
gauge equal what weir's breaker decides replaying the filter's decision log
(REPLAY_BINARY, examples/breaker_replay.rs). Prints, without checking them,
the figures that depend on timing (when each starts and stops refusing,
calls that reached the dead backend) and ends with "N passed, N failed".
Helpers shared with driver.py are in common.py. Standard library only.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import common
from common import Tally, bad, check, free_port, ok, struct, wait_for

ENVOY, MODULE_DIR, REPLAY = sys.argv[1], sys.argv[2], sys.argv[3]
HERE = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp(prefix="weir-envoy-breaker-")
LOG = os.path.join(TMP, "envoy.log")

# The timeline (WEIR_LONG=1: the same outage at 4x the length).
LONG = os.environ.get("WEIR_LONG") == "1"
STEP = 0.010
HEALTHY, OUTAGE, RECOVERY = (4.0, 8.0, 12.0) if LONG else (1.0, 2.0, 3.0)
WINDOW_NS = 8_000_000_000 if LONG else 2_000_000_000

# Matching settings: k = floor = 1/sr_threshold, no protection, refusals
# left out of the traffic (admission_control records only the calls it
# lets through), no cap and no traffic floor on either.
POLICY = {
    "k": 1.5,
    "floor": 1.5,
    "protection": 0,
    "probe_ns": 100_000_000,
    "size": 20,
    "window_ns": WINDOW_NS,
    "skip_refusals": True,
}
ROUTE_POLICY = {"k": 2, "floor": 2, "protection": 0, "probe_ns": 250_000_000, "size": 20, "window_ns": WINDOW_NS}

PORT, AC_PORT, ADMIN = free_port(), free_port(), free_port()
UP = {"a": free_port(), "b": free_port(), "c": free_port()}

def request(port, path):
    return common.request(port, path)


def stats():
    return common.stats(ADMIN)


def stat(s, metric, breaker):
    """The weir_breaker METRIC of BREAKER in the /stats snapshot S."""
    for k, v in s.items():
        if k.startswith("dynamicmodulescustom.") and f"weir_breaker.{metric}." in k and k.endswith("." + breaker):
            return v
    return None


def logged():
    """The decide and settle lines in Envoy's log so far."""
    text = open(LOG, errors="replace").read()
    return text, text.count("weir_breaker: decide "), text.count("weir_breaker: settle ")


def total(s, metric):
    return sum(v for k, v in s.items() if k.startswith(f"dynamicmodulescustom.weir_breaker.{metric}.breaker."))


def route(prefix, cluster, per_filter=None):
    r = {"match": {"prefix": prefix}, "route": {"cluster": cluster, "timeout": "2s"}}
    if per_filter:
        r["typed_per_filter_config"] = per_filter
    return r


ROUTER = {"name": "envoy.filters.http.router", "typed_config": {"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}


def hcm(prefix, routes, filters):
    return {
        "name": "envoy.filters.network.http_connection_manager",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
            "stat_prefix": prefix,
            "route_config": {"name": prefix, "virtual_hosts": [{"name": "all", "domains": ["*"], "routes": routes}]},
            "http_filters": filters + [ROUTER],
        },
    }


def breaker_filter():
    return {
        "name": "breaker",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.dynamic_modules.v3.DynamicModuleFilter",
            "dynamic_module_config": {"name": "weir_envoy"},
            "filter_name": "weir_breaker",
            "filter_config": struct({"policy": POLICY, "failure_status": [[500, 599]], "max_breakers": 3, "log_level": "info", "log_decisions": True}),
        },
    }


def admission_control():
    secs = WINDOW_NS // 1_000_000_000
    return {
        "name": "envoy.filters.http.admission_control",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.admission_control.v3.AdmissionControl",
            "enabled": {"default_value": True, "runtime_key": "ac.enabled"},
            "sampling_window": f"{secs}s",
            "sr_threshold": {"default_value": {"value": 100 / 1.5}, "runtime_key": "ac.sr_threshold"},
            "aggression": {"default_value": 1.0, "runtime_key": "ac.aggression"},
            "rps_threshold": {"default_value": 0, "runtime_key": "ac.rps_threshold"},
            "max_rejection_probability": {"default_value": {"value": 100.0}, "runtime_key": "ac.max_rejection_probability"},
            "success_criteria": {"http_criteria": {"http_success_status": [{"start": 100, "end": 500}]}},
        },
    }


def cluster(name, port):
    return {
        "name": name,
        "type": "STATIC",
        "connect_timeout": "1s",
        "load_assignment": {
            "cluster_name": name,
            "endpoints": [{"lb_endpoints": [{"endpoint": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": port}}}}]}],
        },
    }


def listener(name, port, chain):
    return {"name": name, "address": {"socket_address": {"address": "127.0.0.1", "port_value": port}}, "filter_chains": [{"filters": [chain]}]}


def bootstrap():
    own = {
        "breaker": {
            "@type": "type.googleapis.com/envoy.extensions.filters.http.dynamic_modules.v3.DynamicModuleFilterPerRoute",
            "dynamic_module_config": {"name": "weir_envoy"},
            "filter_name": "weir_breaker",
            "filter_config": struct({"breaker": "own", "policy": ROUTE_POLICY, "status": 429}),
        }
    }
    # Another route naming the same breaker with another policy: it shares
    # the first one's, and the filter says so once.
    other = json.loads(json.dumps(own))
    other["breaker"]["filter_config"]["value"]["policy"] = dict(ROUTE_POLICY, k=3)
    routes = [
        route("/a", "cluster_a"),
        route("/other", "cluster_a", other),
        route("/b", "cluster_b"),
        route("/own", "cluster_a", own),
        route("/over", "cluster_c"),
        {"match": {"prefix": "/direct"}, "direct_response": {"status": 200, "body": {"inline_string": "direct\n"}}},
    ]
    return {
        "admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": ADMIN}}},
        "static_resources": {
            "listeners": [
                listener("breaker", PORT, hcm("weir_breaker_test", routes, [breaker_filter()])),
                listener("ac", AC_PORT, hcm("ac", [route("/c", "cluster_c")], [admission_control()])),
            ],
            "clusters": [cluster(f"cluster_{n}", p) for n, p in UP.items()],
        },
    }


procs = []


def spawn(args, log):
    p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, ENVOY_DYNAMIC_MODULES_SEARCH_PATH=MODULE_DIR))
    procs.append(p)
    return p


def stop_all():
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def upstream(name, path):
    return json.loads(request(UP[name], path)[2]) if path == "/_count" else request(UP[name], path)[0]


def outage(port, path, up, extra=None):
    """Runs the timeline against PORT/PATH (upstream UP failing in the
    middle), the phases by the clock; EXTRA, another path, is sent every
    4th call. Returns the results [(t, phase, status, refused_by, body)],
    t the call's start, and EXTRA's statuses."""
    results, extra_codes = [], []
    t0 = time.monotonic()
    phase = "healthy"
    i = 0
    while True:
        now = time.monotonic() - t0
        if now >= HEALTHY + OUTAGE + RECOVERY:
            break
        if phase == "healthy" and now >= HEALTHY:
            upstream(up, "/_fail")
            phase = "outage"
        elif phase == "outage" and now >= HEALTHY + OUTAGE:
            upstream(up, "/_ok")
            phase = "recovery"
        status, headers, body = request(port, path)
        refused = None
        if headers.get("x-weir-breaker"):
            refused = headers["x-weir-breaker"]
        elif status == 503 and body != b"down\n":
            refused = "admission_control"
        results.append((now, phase, status, refused, body))
        if extra and i % 4 == 0:
            extra_codes.append(request(port, extra)[0])
        i += 1
        # The next call STEP after this one's start.
        delay = t0 + now + STEP - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return results, extra_codes


def summary(results):
    """When refusals start (s after the outage began) and stop (s after
    recovery), and the calls that reached the backend while it was down."""
    refusals = [(t, ph) for t, ph, _, by, _ in results if by]
    first = next((t - HEALTHY for t, _ in refusals), None)
    last = refusals[-1][0] - (HEALTHY + OUTAGE) if refusals else None
    dead = sum(1 for _, ph, s, by, _ in results if ph == "outage" and not by and s == 503)
    before = sum(1 for t, ph, s, by, _ in results if ph == "outage" and not by and (first is None or t - HEALTHY < first))
    return {"first": first, "last": last, "dead": dead, "before_first": before, "refused": len(refusals), "sent": len(results)}


def fmt(x):
    return "never" if x is None else f"{x:+.2f} s"


def main():
    for name, port in UP.items():
        spawn([sys.executable, os.path.join(HERE, "upstream.py"), str(port)], open(os.path.join(TMP, f"up_{name}.log"), "w"))
    for name in UP:
        def up_ready(name=name):
            try:
                return upstream(name, "/_count") is not None
            except OSError:
                return False

        if not wait_for(up_ready):
            bad(f"upstream {name} did not answer")
            return
    ok("three upstreams answer (polled)")

    cfg = os.path.join(TMP, "envoy.json")
    with open(cfg, "w") as f:
        json.dump(bootstrap(), f)
    envoy = spawn(
        [ENVOY, "-c", cfg, "--concurrency", "2", "--use-dynamic-base-id", "--log-format", "[%Y-%m-%d %T.%e][%t][%l][%n] %v"],
        open(LOG, "w"),
    )

    def ready():
        if envoy.poll() is not None:
            return True
        try:
            return request(ADMIN, "/ready")[0] == 200
        except OSError:
            return False

    if not wait_for(ready, 10.0, 0.02) or envoy.poll() is not None:
        bad("envoy did not become ready: " + open(LOG, errors="replace").read()[-2000:])
        return
    ok("envoy ready with weir_breaker and admission_control (/ready polled)")

    check("a route without a cluster is not broken", 200, request(PORT, "/direct")[0])
    own = [request(PORT, "/own")[0] for _ in range(5)]
    check("a route's own breaker lets healthy calls through", [200] * 5, own)

    # A reset settles the ticket as a failure: the upstream closing without
    # an answer (Envoy's own 503 reaches response_headers), and the client
    # going away before the answer (no response headers: stream_complete).
    check("an upstream reset reaches the client as Envoy's 503", 503, request(PORT, "/own/_reset")[0])
    c = socket.create_connection(("127.0.0.1", PORT))
    c.sendall(b"GET /own/_slow HTTP/1.1\r\nHost: x\r\n\r\n")
    # Closed once the breaker let it through (5 + the reset + this one).
    check("the slow call is let through (polled)", True, wait_for(lambda: stat(stats(), "passed", "cluster_a/own") == 7))
    c.close()
    check("the client going away settles it as a failure (polled)", True, wait_for(lambda: stat(stats(), "failed", "cluster_a/own") == 2))

    # ---- weir_breaker through the outage.
    res, b_codes = outage(PORT, "/a", "a", extra="/b")
    w = summary(res)
    # When refusals start and stop depends on how the machine schedules the
    # calls: printed in the summary, not checked. Checked: what holds
    # whatever the timing.
    check("healthy: every call let through", True, all(s == 200 for _, ph, s, by, _ in res if ph == "healthy"))
    check("the outage: the breaker refused", True, w["refused"] > 0)
    check("refusals are 503 naming the breaker", {(503, "cluster_a")}, {(s, by) for _, _, s, by, _ in res if by})
    check("cluster b, healthy, is never refused", True, len(b_codes) > 0 and all(c == 200 for c in b_codes))

    # Recovered: the failures leave the window with time, and the breaker
    # stops refusing. Once its gauge reads 0 (polled, one call a poll; the
    # gauge follows the breaker's calls), a healthy backend's calls all pass.
    tail = []

    def cleared():
        tail.append(request(PORT, "/a"))
        return stat(stats(), "refusal_ratio_ppm", "cluster_a") == 0

    check("after recovery the refusal ratio falls to 0 (polled)", True, wait_for(cleared, 10.0 + 3 * WINDOW_NS / 1e9, STEP))
    tail += [request(PORT, "/a") for _ in range(20)]
    check("then the next 20 calls all pass", [200] * 20, [st for st, _, _ in tail[-20:]])
    refused_after = sum(1 for st, h, _ in tail if h.get("x-weir-breaker"))

    # Three breakers made (cluster_a/own, cluster_a, cluster_b): max_breakers.
    check("past max_breakers a cluster goes unthrottled", 200, request(PORT, "/over")[0])

    # ---- Envoy's counters and gauge against weir's breaker replaying the
    # log, once the log holds a line for each decision and settlement
    # /stats counts (every call let through settles once).
    s = stats()
    check("past max_breakers: counted in weir_breaker.overflow", 1, s.get("dynamicmodulescustom.weir_breaker.overflow"))
    want = (total(s, "passed") + total(s, "refused"), total(s, "passed"))
    check("the log holds every decision and settlement /stats counts (polled)", True, wait_for(lambda: logged()[1:] == want))
    text = logged()[0]
    rep = subprocess.run([REPLAY], input=text, capture_output=True, text=True, timeout=60)
    replay = {}
    for line in rep.stdout.splitlines():
        name, *kv = line.split()
        replay[name] = dict(x.split("=") for x in kv)
    check("the replay ran", (0, True), (rep.returncode, "cluster_a" in replay))
    if "cluster_a" not in replay:
        print(rep.stdout, rep.stderr)
        return
    ra = replay["cluster_a"]

    for k in sorted(s):
        if "weir_breaker." in k and k.endswith("cluster_a"):
            print(f"     {k}: {s[k]}")
    check("replay: every decision the filter logged is weir's", "0", ra["mismatches"])
    for metric, key in (("passed", "passed"), ("refused", "refused"), ("failed", "failed"), ("probes", "probes")):
        check(f"stats: cluster_a {metric} equals the replay", int(ra[key]), stat(s, metric, "cluster_a"))
    check("stats: cluster_a refusals equal the 503s the client saw", w["refused"] + refused_after, stat(s, "refused", "cluster_a"))
    check("the probe let calls through while refusing", True, int(ra["probes"]) >= 1)
    check("gauge: cluster_a's refusal ratio (ppm) equals the replay's", int(ra["ratio_ppm"]), stat(s, "refusal_ratio_ppm", "cluster_a"))
    # Each call let through is two operations (decide, settle), a refusal
    # one; the last 20 calls, one after another, are the last 40.
    ops = 2 * int(ra["passed"]) + int(ra["refused"])
    check("replay: refusals, then none in the last 20 calls", True, 0 < int(ra["last_refusal_seq"]) <= ops - 40)
    rb = replay.get("cluster_b", {})
    check(
        "stats: cluster_b let through all, refused and failed none",
        (len(b_codes), 0, 0, 0),
        (stat(s, "passed", "cluster_b"), stat(s, "refused", "cluster_b") or 0, stat(s, "failed", "cluster_b") or 0, int(rb.get("refused", -1))),
    )
    check(
        "a route's own breaker is its own (cluster_a/own): 7 let through, the two resets failed",
        (7, 2, "0", "2"),
        (stat(s, "passed", "cluster_a/own"), stat(s, "failed", "cluster_a/own"), replay.get("cluster_a/own", {}).get("refused"), replay.get("cluster_a/own", {}).get("failed")),
    )
    got_a = upstream("a", "/_count")
    check("the dead backend saw exactly the calls let through in the outage", got_a["failed"], w["dead"])

    # ---- admission_control through the same outage.
    res_c, _ = outage(AC_PORT, "/c", "c")
    c = summary(res_c)
    s = stats()
    check("admission_control refused in the outage", True, c["refused"] > 0)
    check("admission_control's rq_rejected equals the refusals seen", c["refused"], s.get("http.ac.admission_control.rq_rejected"))
    got_c = upstream("c", "/_count")
    check("admission_control's dead backend saw the calls let through", got_c["failed"], c["dead"])

    # A route naming breaker own with another policy: the same breaker.
    before = stat(stats(), "passed", "cluster_a/own")
    check("a route naming the same breaker with another policy is let through by it", 200, request(PORT, "/other")[0])
    check("the shared breaker counted it", before + 1, stat(stats(), "passed", "cluster_a/own"))
    said = 'routes name breaker "cluster_a/own" with different policies'
    check("the filter says the policies differ (polled)", True, wait_for(lambda: said in logged()[0]))

    print(f"timeline: {HEALTHY:g} s healthy, {OUTAGE:g} s answering 503, {RECOVERY:g} s healthy; one call each {STEP * 1000:g} ms")
    print("filter            | first refusal after the outage began | calls to the dead backend before it | last refusal after recovery | calls to the dead backend | refused")
    for name, x in (("weir_breaker", w), ("admission_control", c)):
        print(f"{name:17} | {fmt(x['first']):>36} | {x['before_first']:>35} | {fmt(x['last']):>27} | {x['dead']:>25} | {x['refused']}/{x['sent']}")


try:
    main()
except Exception as e:
    import traceback

    traceback.print_exc()
    bad(f"driver: {e!r}")
finally:
    stop_all()
    if Tally.failed and os.path.exists(LOG):
        print("---- envoy log (tail)")
        print(open(LOG, errors="replace").read()[-3000:])
    shutil.rmtree(TMP, ignore_errors=True)
print(f"{Tally.passed} passed, {Tally.failed} failed")
sys.exit(1 if Tally.failed else 0)
