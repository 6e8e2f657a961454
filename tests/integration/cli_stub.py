#!/usr/bin/env python3
"""cli_stub.py: HTTP peers for tests/integration/test_cli.sh on loopback.

  cli_stub.py stub  --port-file F --log L --responses R
      answers each request with the next response of the JSON file R (a
      list of {status, headers, body, repeat}; the last one repeats; the
      body is sent "repeat" times over, 1 by default); "{RESET_ISO+N}"
      and "{RESET_UNIX+N}" in a body become the time N seconds from now.
      For what the real server cannot be made to answer (the flat 429 shape,
      which only /v1/domain/check sends; a 429 that never ends; a 500; a
      200 that is not JSON; a download of 40 MB).
  cli_stub.py proxy --port-file F --log L --upstream PORT --drop N
      forwards each request to 127.0.0.1:PORT; the first N get the server's
      work done but their answer is dropped (the connection closes): a
      response lost on the way back.

Each request is logged as one JSON line (method, path, headers, body
length, and the body itself, base64, for small ones). Runs until killed.
"""
import argparse, base64, http.client, http.server, json, socketserver, sys, time

def log_request(path, h, body):
    with open(path, "a") as f:
        f.write(json.dumps({
            "method": h.command, "path": h.path,
            "headers": {k.lower(): v for k, v in h.headers.items()},
            "body_len": len(body),
            "body": base64.b64encode(body).decode() if len(body) < 1 << 20 else None,
        }) + "\n")

def read_body(h):
    n = int(h.headers.get("Content-Length") or 0)
    body = b""
    while len(body) < n:
        chunk = h.rfile.read(min(n - len(body), 1 << 16))
        if not chunk:
            break
        body += chunk
    return body

def expand(text):
    now = time.time()
    out = text
    for key, fmt in (("RESET_ISO", "iso"), ("RESET_UNIX", "unix")):
        while "{" + key in out:
            start = out.index("{" + key)
            end = out.index("}", start)
            n = int(out[start + len(key) + 1:end] or 0)
            t = now + n
            val = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) if fmt == "iso" else str(int(t))
            out = out[:start] + val + out[end + 1:]
    return out

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["stub", "proxy"])
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--responses")
    ap.add_argument("--upstream", type=int)
    ap.add_argument("--drop", type=int, default=0)
    a = ap.parse_args()
    state = {"n": 0, "drop": a.drop}
    responses = json.load(open(a.responses)) if a.responses else []

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *args):
            pass
        def handle_any(self):
            body = read_body(self)
            log_request(a.log, self, body)
            if a.mode == "stub":
                r = responses[min(state["n"], len(responses) - 1)]
                state["n"] += 1
                out = expand(r.get("body", "")).encode() * r.get("repeat", 1)
                self.send_response(r.get("status", 200))
                for k, v in r.get("headers", {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
                return
            c = http.client.HTTPConnection("127.0.0.1", a.upstream, timeout=60)
            hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            c.request(self.command, self.path, body=body, headers=hdrs)
            resp = c.getresponse()
            data = resp.read()
            if state["drop"] > 0:
                state["drop"] -= 1
                self.close_connection = True
                return			# the answer is lost
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        do_GET = do_POST = do_DELETE = handle_any

    class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
    srv = S(("127.0.0.1", 0), H)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()

if __name__ == "__main__":
    main()
