"""Sends N requests to PATH over 8 keep-alive connections, one request in
flight on each (Envoy closes a connection that pipelines), and prints how
many got 200 and 429: `load.py PORT PATH N`. Each request carries a new
X-Client key, or WEIR_FIXED_KEY when it is set. Standard library only."""
import os
import selectors
import socket
import sys

port, path, total = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
CONNS = 8
FIXED = os.environ.get("WEIR_FIXED_KEY")
sel = selectors.DefaultSelector()
counts = {"200": 0, "429": 0, "other": 0}
sent = 0


def send(s):
    global sent
    key = FIXED.encode() if FIXED else b"key-%d" % sent
    sent += 1
    s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nX-Client: %s\r\n\r\n" % (path.encode(), key))


def response(buf):
    """The status of the first complete response in buf and what is left,
    or (None, buf)."""
    head_end = buf.find(b"\r\n\r\n")
    if head_end < 0:
        return None, buf
    head = buf[:head_end].decode("latin-1").split("\r\n")
    length = 0
    for line in head[1:]:
        name, _, value = line.partition(":")
        if name.lower() == "content-length":
            length = int(value)
    end = head_end + 4 + length
    if len(buf) < end:
        return None, buf
    return head[0].split()[1], buf[end:]


for _ in range(min(CONNS, total)):
    s = socket.create_connection(("127.0.0.1", port))
    send(s)
    sel.register(s, selectors.EVENT_READ, {"buf": b""})
done = 0
while done < total:
    events = sel.select(timeout=60)
    if not events:
        raise SystemExit("no answer in 60 s")
    for key, _ in events:
        s, st = key.fileobj, key.data
        data = s.recv(1 << 16)
        if not data:
            raise SystemExit("connection closed early")
        st["buf"] += data
        status, st["buf"] = response(st["buf"])
        if status is None:
            continue
        counts[status if status in counts else "other"] += 1
        done += 1
        if sent < total:
            send(s)
        else:
            sel.unregister(s)
            s.close()
print("load: ok=%d refused=%d other=%d" % (counts["200"], counts["429"], counts["other"]))
