"""Reads weir_limit_metrics's page in both formats and checks each parses
and that they agree: `metrics.py PORT PATH`. Fetches PATH (Prometheus's
text format, parsed here by a small strict parser: HELP and TYPE lines,
samples `name{label="value",...} number`, label values with their three
escapes) and PATH?format=json, and prints one line per zone and count,
`ZONE NAME VALUE`, sorted. Exits 1, saying why, on any line that does not
parse, a sample without its TYPE, or a count the two formats disagree on."""
import json
import re
import sys
import urllib.request

port, path = int(sys.argv[1]), sys.argv[2]
base = "http://127.0.0.1:%d%s" % (port, path)


def fail(why):
    print("metrics.py: " + why, file=sys.stderr)
    sys.exit(1)


def fetch(url, want_type):
    with urllib.request.urlopen(url, timeout=10) as r:
        ctype = r.headers.get("Content-Type", "")
        if not ctype.startswith(want_type):
            fail("%s: Content-Type %r, not %s" % (url, ctype, want_type))
        return r.read().decode("utf-8")


NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
SAMPLE = re.compile(r"^(%s)(?:\{((?:%s)(?:,%s)*)\})? (\S+)$" % (NAME, LABEL, LABEL))


def unescape(v):
    return re.sub(r'\\([\\"n])', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def prometheus(text):
    """{(metric, labels as a sorted tuple): value}."""
    if not text.endswith("\n"):
        fail("the text does not end with a newline")
    types, samples = {}, {}
    for line in text.split("\n")[:-1]:
        if line.startswith("# HELP "):
            if not re.match(r"^# HELP %s \S" % NAME, line):
                fail("bad HELP line %r" % line)
        elif line.startswith("# TYPE "):
            m = re.match(r"^# TYPE (%s) (counter|gauge|untyped)$" % NAME, line)
            if not m or m.group(1) in types:
                fail("bad or repeated TYPE line %r" % line)
            types[m.group(1)] = m.group(2)
        else:
            m = SAMPLE.match(line)
            if not m:
                fail("not a sample: %r" % line)
            name, labels, value = m.group(1), m.group(2) or "", m.group(m.lastindex)
            if name not in types:
                fail("a sample before its TYPE: %r" % line)
            pairs = tuple(sorted((k, unescape(v)) for k, v in re.findall(LABEL, labels)))
            try:
                number = float(value)
            except ValueError:
                fail("not a number: %r" % line)
            if types[name] == "counter" and (number < 0 or number != int(number)):
                fail("a counter that is not a whole number: %r" % line)
            if (name, pairs) in samples:
                fail("a sample twice: %r" % line)
            samples[(name, pairs)] = int(number)
    return samples


samples = prometheus(fetch(base, "text/plain; version=0.0.4"))
doc = json.loads(fetch(base + "?format=json", "application/json"))
rows = {}
for (name, labels), value in samples.items():
    labels = dict(labels)
    if name == "weir_limit_requests_total":
        rows[(labels["zone"], labels["decision"])] = value
    elif name == "weir_limit_zone_words":
        rows[(labels["zone"], "words")] = value
    elif name == "weir_limit_zone_slots":
        rows[(labels["zone"], "slots")] = value
    elif name == "weir_limit_zone_overflows_total":
        rows[(labels["zone"], "overflows")] = value
    else:
        fail("an unknown metric %s" % name)
for zone, fields in doc["zones"].items():
    for field, value in fields.items():
        if field in ("burst", "kind", "store"):
            continue
        if rows.get((zone, field)) != value:
            fail("%s %s: json %r, prometheus %r" % (zone, field, value, rows.get((zone, field))))
    for (z, field) in rows:
        if z == zone and field not in fields:
            fail("%s %s: in prometheus, not in json" % (zone, field))
if {z for z, _ in rows} != set(doc["zones"]):
    fail("the zones differ: %r, %r" % (sorted({z for z, _ in rows}), sorted(doc["zones"])))
for (zone, field), value in sorted(rows.items()):
    print(zone, field, value)
