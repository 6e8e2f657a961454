#!/usr/bin/env python3
"""webhook_receiver.py: an HTTPS receiver of webhook and callback deliveries
for the integration tests (tests/integration/test_webhooks.sh). Every
request is appended, as it arrives and before it is answered, to the log
as one JSON line: {"n", "time", "path", "query", "headers" (names
lower-cased), "body_b64", "inflight"}. What it answers is chosen by the query string
of the URL delivered to:

    codes=500,500,200  the n-th request to this path gets the n-th code
                       (the last one again after that; default 200)
    sleep_first=S      the first request to this path waits S seconds
                       before its answer
    sleep=S            every request to this path waits S seconds
    stall_after=N      answer 200 with a Content-Length of 100 MB, send
                       N bytes of it and then wait 30 s
    location=URL       sent as Location (for 3xx codes)
    group=G            the record's "inflight" says how many requests of
                       group G were being answered when it came, itself
                       included

    webhook_receiver.py --host H --port P --cert C --key K --log FILE
        --ready FILE

--port 0 picks a free port; the ready file gets the port once listening.
"""
import argparse
import base64
import json
import os
import signal
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNTS = {}
INFLIGHT = {}
STATE = {"n": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        self.handle_any()

    def do_GET(self):
        self.handle_any()

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        group = q.get("group", [""])[0]
        with LOCK:
            INFLIGHT[group] = INFLIGHT.get(group, 0) + 1
            STATE["n"] += 1
            n = STATE["n"]
            k = COUNTS.get(url.path, 0)
            COUNTS[url.path] = k + 1
            rec = {"n": n, "time": time.time(), "path": url.path,
                   "query": url.query,
                   "headers": {h.lower(): v for h, v in self.headers.items()},
                   "body_b64": base64.b64encode(body).decode(),
                   "inflight": INFLIGHT[group]}
            with open(self.server.log, "a") as f:
                f.write(json.dumps(rec) + "\n")
        self.counted = group
        try:
            self.answer(q, k)
        finally:
            self.answered()

    def answered(self):
        """The request leaves its group's count: just before its answer
        is written, so that a sender that has the answer and sends its
        next request is never counted twice here."""
        with LOCK:
            if self.counted is not None:
                INFLIGHT[self.counted] -= 1
                self.counted = None

    def answer(self, q, k):
        codes = [int(c) for c in q.get("codes", ["200"])[0].split(",")]
        code = codes[min(k, len(codes) - 1)]
        if k == 0 and "sleep_first" in q:
            time.sleep(float(q["sleep_first"][0]))
        if "sleep" in q:
            time.sleep(float(q["sleep"][0]))
        try:
            self.answered()
            if "stall_after" in q:
                self.send_response(200)
                self.send_header("Content-Length", str(100 * 1024 * 1024))
                self.end_headers()
                self.wfile.write(b"x" * int(q["stall_after"][0]))
                self.wfile.flush()
                time.sleep(30)
                return
            reply = b'{"received":true}'
            self.send_response(code)
            if "location" in q:
                self.send_header("Location", q["location"][0])
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
        except OSError:
            pass    # the sender went away (a killed worker)


def tls_args(ap):
    """The options every HTTPS server of the tests takes."""
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--ready", required=True)


def tls_serve(handler, a, **attrs):
    """Serves handler over TLS on a.host:a.port (the attrs set on the
    server) until SIGTERM; the ready file gets the port once listening."""
    # stopped by the test's EXIT trap: a clean exit status
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = ThreadingHTTPServer((a.host, a.port), handler)
    srv.daemon_threads = True
    for k, v in attrs.items():
        setattr(srv, k, v)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(a.ready + ".tmp", "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(a.ready + ".tmp", a.ready)
    srv.serve_forever()


def main():
    ap = argparse.ArgumentParser()
    tls_args(ap)
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    open(a.log, "a").close()
    tls_serve(Handler, a, log=a.log)


if __name__ == "__main__":
    main()
