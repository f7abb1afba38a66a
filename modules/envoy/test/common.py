"""Helpers the Envoy drivers share (driver.py and breaker.py, run by
modules/envoy/test.sh): ports, the pass/fail tally, HTTP requests,
Envoy's /stats, bounded polling, protobuf Structs. Standard library only."""

import http.client
import random
import socket
import time

TAKEN = set()


def free_port():
    """A port no one listens on now, from 20000..39999 (the machine is
    shared: a fixed or merely random port can be taken), not given before."""
    while True:
        p = 20000 + random.randrange(20000)
        if p in TAKEN:
            continue
        TAKEN.add(p)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                continue
            return p


class Tally:
    """The checks so far; each driver ends with `passed` and `failed`."""

    passed = 0
    failed = 0


def ok(name):
    Tally.passed += 1
    print(f"ok   {name}", flush=True)


def bad(name):
    Tally.failed += 1
    print(f"FAIL {name}", flush=True)


def check(name, want, got):
    if want == got:
        ok(name)
    else:
        bad(f"{name}: expected [{want}], got [{got}]")


def request(port, path, headers=None, timeout=5):
    """GET PATH from 127.0.0.1:PORT on a connection of its own (so the
    kernel spreads requests over Envoy's workers): (status, headers with
    lower-case names, body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body
    finally:
        c.close()


def stats(admin_port):
    """Envoy's /stats, the numeric ones, by name."""
    _, _, text = request(admin_port, "/stats")
    out = {}
    for line in text.decode().splitlines():
        k, _, v = line.partition(": ")
        if v.isdigit():
            out[k] = int(v)
    return out


def wait_for(pred, seconds=10.0, step=0.05):
    """Polls PRED every STEP s until it holds, for SECONDS at most; its
    last answer."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def struct(value):
    return {"@type": "type.googleapis.com/google.protobuf.Struct", "value": value}
