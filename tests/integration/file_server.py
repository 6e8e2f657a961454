#!/usr/bin/env python3
"""file_server.py: an HTTPS server of files for the source_url tests
(tests/integration/test_source_url.sh). Every request is appended to the
log, before it is answered, as one JSON line: {"time", "path", "query",
"host"}. GET paths:

    /files/NAME        the file NAME of --dir; query: type=T (its
                       Content-Type, default application/octet-stream),
                       chunked=1 (no Content-Length: chunked encoding),
                       rate=N (about N bytes a second)
    /redirect/N        302 to /redirect/N-1 (same query), the last one
                       (N = 1) to the URL in to=URL; code=C for another
                       3xx code
    /endless           200, a CSV that never ends (chunked), until the
                       client goes away or 120 s have passed;
                       length=N announces a Content-Length of N instead
    /stall             200 with a Content-Length of 1 MB, 100 bytes of
                       it, then nothing for 120 s
    anything else      404

    file_server.py --host H --port P --cert C --key K --dir D --log FILE
        --ready FILE

--port 0 picks a free port; the ready file gets the port once listening
(webhook_receiver.py's tls_serve).
"""
import argparse
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

from webhook_receiver import tls_args, tls_serve

LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        with LOCK:
            with open(self.server.log, "a") as f:
                f.write(json.dumps({"time": time.time(), "path": url.path,
                                    "query": url.query,
                                    "host": self.headers.get("Host", "")})
                        + "\n")
        try:
            self.answer(url, q)
        except OSError:
            pass    # the client went away (a refused body, a timeout)

    def plain(self, code, text, headers=()):
        body = text.encode()
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def answer(self, url, q):
        parts = url.path.split("/")
        if len(parts) == 3 and parts[1] == "files":
            return self.file(parts[2], q)
        if len(parts) == 3 and parts[1] == "redirect" and parts[2].isdigit():
            n = int(parts[2])
            to = q.get("to", ["/"])[0]
            loc = to if n <= 1 else "/redirect/%d?%s" % (n - 1, url.query)
            return self.plain(int(q.get("code", ["302"])[0]), "moved\n",
                              [("Location", loc)])
        if url.path == "/endless":
            return self.endless(q)
        if url.path == "/stall":
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Content-Length", str(1024 * 1024))
            self.end_headers()
            self.wfile.write(b"email\n" + b"x" * 94)
            self.wfile.flush()
            time.sleep(120)
            return None
        return self.plain(404, "not found\n")

    def file(self, name, q):
        path = os.path.join(self.server.dir, os.path.basename(name))
        if not os.path.isfile(path):
            return self.plain(404, "not found\n")
        with open(path, "rb") as f:
            data = f.read()
        chunked = q.get("chunked", ["0"])[0] == "1"
        rate = int(q.get("rate", ["0"])[0])
        self.send_response(200)
        self.send_header("Content-Type",
                         q.get("type", ["application/octet-stream"])[0])
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        step = max(1, rate // 10) if rate else 65536
        for i in range(0, len(data), step):
            piece = data[i:i + step]
            if chunked:
                self.chunk(piece)
            else:
                self.wfile.write(piece)
            if rate:
                self.wfile.flush()
                time.sleep(0.1)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        return None

    def endless(self, q):
        self.send_response(200)
        self.send_header("Content-Type", "text/csv")
        if "length" in q:
            self.send_header("Content-Length", q["length"][0])
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        block = b"".join(b"row%07d,u%07d@example.com\n" % (i, i)
                         for i in range(2000))
        end = time.time() + 120
        while time.time() < end:
            if "length" in q:
                self.wfile.write(block)
            else:
                self.chunk(block)


def main():
    ap = argparse.ArgumentParser()
    tls_args(ap)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    open(a.log, "a").close()
    tls_serve(Handler, a, log=a.log, dir=a.dir)


if __name__ == "__main__":
    main()
