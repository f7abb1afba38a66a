#!/usr/bin/env python3
"""A small upstream for the breaker tests: serves 127.0.0.1:PORT and answers
200 "up" until told to fail, then 503 "down" until told to recover.

    upstream.py PORT

GET /_fail and /_ok switch it; GET /_count answers the calls it has served
as JSON ({"ok": N, "failed": N}, control paths not counted). A path ending
in /_reset closes the connection without an answer; one ending in /_slow
answers 200 after 0.5 s (neither is counted). Standard library only; the
test stops it by its pid.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
state = {"failing": False, "ok": 0, "failed": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without TCP_NODELAY the body
    # waits for the peer's delayed ACK (40 ms a call).
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, code, body):
        self.send_response(code)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.endswith("/_reset"):
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if self.path.endswith("/_slow"):
            time.sleep(0.5)
            self.answer(200, b"slow\n")
            return
        with lock:
            if self.path == "/_fail":
                state["failing"] = True
                body, code = b"failing\n", 200
            elif self.path == "/_ok":
                state["failing"] = False
                body, code = b"ok\n", 200
            elif self.path == "/_count":
                body, code = json.dumps({"ok": state["ok"], "failed": state["failed"]}).encode(), 200
            elif state["failing"]:
                state["failed"] += 1
                body, code = b"down\n", 503
            else:
                state["ok"] += 1
                body, code = b"up\n", 200
        self.answer(code, body)


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
