#!/usr/bin/env python3
"""slow_client.py: a client that sends its request body one byte at a time,
for the slow-client tests (tests/integration/test_slow_clients.sh).

  slow_client.py http HOST PORT PATH KEY BYTES INTERVAL_S
      an HTTP/1.1 POST with Content-Length BYTES, its body sent one byte
      every INTERVAL_S seconds; prints the status line it gets (or
      "no answer")
  slow_client.py fcgi HOST PORT PATH BYTES INTERVAL_S [KEY [BODY]]
      the same spoken as FastCGI straight to a responder (no web server in
      between): BEGIN_REQUEST, the CGI parameters, then the body one byte
      per FCGI_STDIN record every INTERVAL_S seconds (BYTES 0: a GET);
      with BODY, that body at once instead; prints the Status line of the
      answer (or "no answer")
  slow_client.py early HOST PORT PATH KEY CONTENT_LENGTH WAIT_S
      a multipart POST whose headers announce CONTENT_LENGTH bytes, of
      which only the first 100 are sent; then it sends nothing more and
      waits up to WAIT_S seconds for the answer, which must come while
      the body is still unsent; prints the status line, the Content-Type
      and the body (or "no answer")
Either stops sending once an answer has come.
"""
import select
import socket
import struct
import sys
import time


def send_slowly(s, nbytes, interval):
    for _ in range(nbytes):
        r, _, _ = select.select([s], [], [], interval)
        if r:
            return          # an answer came before the body was complete
        try:
            s.sendall(b"{")
        except OSError:
            return


def read_answer(s, timeout):
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data and b"\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data


def http(host, port, path, key, nbytes, interval):
    s = socket.create_connection((host, int(port)), timeout=10)
    head = ("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
            "Content-Type: application/json\r\nContent-Length: %d\r\n"
            "Connection: close\r\n\r\n" % (path, host, key, nbytes))
    s.sendall(head.encode())
    send_slowly(s, nbytes, interval)
    data = read_answer(s, 30)
    line = data.split(b"\r\n", 1)[0].decode(errors="replace")
    print(line if line else "no answer")


def early(host, port, path, key, length, wait):
    s = socket.create_connection((host, int(port)), timeout=10)
    head = ("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
            "Content-Type: multipart/form-data; boundary=b\r\n"
            "Content-Length: %d\r\nConnection: close\r\n\r\n"
            % (path, host, key, length))
    s.sendall(head.encode() + (b"--b\r\n" + b"x" * 100)[:100])
    s.settimeout(wait)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    if not data:
        print("no answer")
        return
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    ctype = [l.split(":", 1)[1].strip() for l in lines[1:]
             if l.lower().startswith("content-type:")]
    print(lines[0])
    print(ctype[0] if ctype else "")
    print(body.decode(errors="replace"))


def record(kind, content, req=1):
    return struct.pack(">BBHHBB", 1, kind, req, len(content), 0, 0) + content


def pair(name, value):
    def n(x):
        return bytes([len(x)]) if len(x) < 128 else struct.pack(">I", len(x) | 0x80000000)
    return n(name) + n(value) + name + value


def fcgi(host, port, path, nbytes, interval, key, body=None):
    if body is not None:
        nbytes = len(body)
    s = socket.create_connection((host, int(port)), timeout=10)
    auth = [("HTTP_AUTHORIZATION", "Bearer " + key)] if key else []
    params = b"".join(pair(k.encode(), v.encode()) for k, v in auth + [
        ("REQUEST_METHOD", "POST" if nbytes else "GET"), ("REQUEST_URI", path),
        ("SCRIPT_NAME", ""), ("PATH_INFO", path), ("QUERY_STRING", ""),
        ("CONTENT_TYPE", "application/json"),
        ("CONTENT_LENGTH", str(nbytes)), ("REMOTE_ADDR", "127.0.0.1"),
        ("SERVER_PROTOCOL", "HTTP/1.1")])
    s.sendall(record(1, struct.pack(">HB5x", 1, 0)) + record(4, params) +
              record(4, b""))
    if body is not None:
        s.sendall(record(5, body) + record(5, b""))
        nbytes = 0
    for _ in range(nbytes):
        r, _, _ = select.select([s], [], [], interval)
        if r:
            break
        try:
            s.sendall(record(5, b"{"))
        except OSError:
            break
    # FCGI_STDOUT records: the first carries "Status: ..." (a request held
    # by a test may wait long on a loaded machine)
    s.settimeout(120)
    out = b""
    try:
        while True:
            h = s.recv(8)
            if len(h) < 8:
                break
            _, kind, _, clen, plen, _ = struct.unpack(">BBHHBB", h)
            body = b""
            while len(body) < clen + plen:
                c = s.recv(clen + plen - len(body))
                if not c:
                    break
                body += c
            if kind == 6:
                out += body[:clen]
            if kind == 3 or b"\r\n" in out:
                break
    except OSError:
        pass
    line = out.split(b"\r\n", 1)[0].decode(errors="replace")
    print(line if line else "no answer")


def main(argv):
    if len(argv) >= 8 and argv[1] == "http":
        http(argv[2], argv[3], argv[4], argv[5], int(argv[6]), float(argv[7]))
    elif len(argv) >= 8 and argv[1] == "early":
        early(argv[2], argv[3], argv[4], argv[5], int(argv[6]), float(argv[7]))
    elif len(argv) >= 7 and argv[1] == "fcgi":
        fcgi(argv[2], argv[3], argv[4], int(argv[5]), float(argv[6]),
             argv[7] if len(argv) > 7 else "",
             argv[8].encode() if len(argv) > 8 else None)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
