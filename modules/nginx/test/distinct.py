"""Sends one request for each of N distinct keys (X-Client) to a weir_limit
location, pipelined over a few keep-alive connections, and prints how many
got 200 and 429: `distinct.py PORT PATH N`. With WEIR_FIXED_KEY set, every
request carries that key instead."""
import os
import selectors
import socket
import sys

port, path, total = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
CONNS, BATCH = 8, 200
FIXED = os.environ.get("WEIR_FIXED_KEY")
sel = selectors.DefaultSelector()
counts = {"200": 0, "429": 0, "other": 0}
next_key = 0


def batch():
    global next_key
    n = min(BATCH, total - next_key)
    keys = [FIXED.encode() if FIXED else b"key-%d" % (next_key + i) for i in range(n)]
    reqs = b"".join(
        b"GET %s HTTP/1.1\r\nHost: x\r\nX-Client: %s\r\n\r\n" % (path.encode(), key) for key in keys)
    next_key += n
    return reqs, n


def parse(buf):
    """Complete responses in buf: their statuses, and what is left."""
    out = []
    while True:
        head_end = buf.find(b"\r\n\r\n")
        if head_end < 0:
            return out, buf
        head = buf[:head_end].decode("latin-1").split("\r\n")
        length = 0
        for line in head[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
        end = head_end + 4 + length
        if len(buf) < end:
            return out, buf
        out.append(head[0].split()[1])
        buf = buf[end:]


for _ in range(CONNS):
    if next_key >= total:
        break
    s = socket.create_connection(("127.0.0.1", port))
    reqs, n = batch()
    s.sendall(reqs)
    sel.register(s, selectors.EVENT_READ, {"buf": b"", "left": n})
while sel.get_map():
    for key, _ in sel.select(timeout=30):
        s, st = key.fileobj, key.data
        data = s.recv(1 << 20)
        if not data:
            raise SystemExit("connection closed early")
        statuses, st["buf"] = parse(st["buf"] + data)
        for code in statuses:
            counts[code if code in counts else "other"] += 1
        st["left"] -= len(statuses)
        if st["left"] == 0:
            if next_key < total:
                reqs, n = batch()
                st["left"] = n
                s.sendall(reqs)
            else:
                sel.unregister(s)
                s.close()
print("distinct: ok=%d refused=%d other=%d" % (counts["200"], counts["429"], counts["other"]))
