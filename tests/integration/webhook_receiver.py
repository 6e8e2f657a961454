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
                       group G were in flight when it came, itself
                       included; a request stops counting before its
                       answer is written, so that the figure never
                       exceeds what the sender has in flight
    hold=1             the request is not answered until the test releases
                       it: POST /_release?group=G&n=N (n=all: every
                       one held now and later) answers at once and
                       releases the N oldest held requests of group G;
                       it is not logged

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
RELEASED = threading.Condition(LOCK)
HELD = {}       # group: the ids of its held requests, oldest first
OPEN = set()    # groups released for good (n=all)
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

    def release(self, q):
        group = q.get("group", [""])[0]
        n = q.get("n", ["all"])[0]
        with LOCK:
            held = HELD.setdefault(group, [])
            k = len(held) if n == "all" else min(int(n), len(held))
            if n == "all":
                OPEN.add(group)
            del held[:k]
            RELEASED.notify_all()
        reply = ('{"released":%d}' % k).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if url.path == "/_release":
            return self.release(q)
        group = q.get("group", [""])[0]
        with LOCK:
            INFLIGHT[group] = INFLIGHT.get(group, 0) + 1
            self.counted = group
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
            if "hold" in q and group not in OPEN:
                HELD.setdefault(group, []).append(n)
                # bounded, so that a failed test leaves no thread behind
                RELEASED.wait_for(lambda: group in OPEN or
                                  n not in HELD[group], timeout=300)
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


class TLSServer(ThreadingHTTPServer):
    """Each connection's TLS handshake runs in its own thread: a client
    slow to shake hands (a loaded machine) holds up no other."""
    daemon_threads = True
    ctx = None

    def finish_request(self, request, client_address):
        try:
            request.settimeout(60)     # the handshake's, at most
            tls = self.ctx.wrap_socket(request, server_side=True)
            tls.settimeout(None)
        except (ssl.SSLError, OSError):
            return
        try:
            super().finish_request(tls, client_address)
        finally:
            tls.close()


def tls_serve(handler, a, **attrs):
    """Serves handler over TLS on a.host:a.port (the attrs set on the
    server) until SIGTERM; the ready file gets the port once listening."""
    # stopped by the test's EXIT trap: a clean exit status
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = TLSServer((a.host, a.port), handler)
    for k, v in attrs.items():
        setattr(srv, k, v)
    srv.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    srv.ctx.load_cert_chain(a.cert, a.key)
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
