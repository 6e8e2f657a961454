#!/usr/bin/env python3
"""slow_dns.py: a DNS forwarder on loopback that answers late for chosen
names, in front of the test unbound of tests/dns/server.sh (a slow
authoritative server as the verifier sees it through its resolver).

  slow_dns.py --ready FILE --upstream 127.0.0.1:PORT --pattern REGEX
              --delay-ms N [--host 127.0.0.1] [--hold-after K --hold-file F]

It listens on HOST, UDP and TCP on one free port, and forwards every query
to the upstream (UDP over UDP, TCP over TCP). A query whose name (lower
case, no trailing dot) matches REGEX (re.search) is answered DELAY-MS
milliseconds late; the others at once. With --hold-after K and
--hold-file F, the matching queries after the K-th are held (not
forwarded, not answered) while F exists, then forwarded (a silent DNS
server for the verifier, as long as the test wants: the lines "held" and
"released" say when). When ready it writes "HOST:PORT" to
FILE (atomically). SIGTERM or SIGINT stops it; every query is handled in a
daemon thread, so nothing lingers. One line per query goes to stdout.
Python 3 standard library only.
"""
import argparse
import os
import re
import signal
import socket
import struct
import sys
import threading
import time

UPSTREAM_TIMEOUT = 10.0


def qname(msg):
    """The question's name, lower case without the dot; "" if unreadable."""
    labels = []
    pos = 12
    try:
        while True:
            n = msg[pos]
            if n == 0 or n > 63:
                break
            labels.append(msg[pos + 1:pos + 1 + n].decode("ascii", "replace"))
            pos += 1 + n
    except IndexError:
        return ""
    return ".".join(labels).lower()


class Forwarder:
    def __init__(self, upstream, pattern, delay_ms, hold_after=0,
                 hold_file=None):
        self.upstream = upstream
        self.pattern = re.compile(pattern, re.IGNORECASE)
        self.delay = delay_ms / 1000.0
        self.hold_after = hold_after
        self.hold_file = hold_file
        self.matched = 0
        self.lock = threading.Lock()

    def wait(self, msg, proto):
        name = qname(msg)
        slow = bool(name) and self.pattern.search(name) is not None
        with self.lock:
            if slow:
                self.matched += 1
            hold = (slow and self.hold_file is not None and
                    self.matched > self.hold_after and
                    os.path.exists(self.hold_file))
            print("%s %s delay_ms=%d%s" % (proto, name or "-",
                                           self.delay * 1000 if slow else 0,
                                           " held" if hold else ""),
                  flush=True)
        if hold:
            # (a test's file, looked at as a fake server would: polled)
            while os.path.exists(self.hold_file):
                time.sleep(0.05)
            with self.lock:
                print("%s %s released" % (proto, name), flush=True)
        if slow:
            time.sleep(self.delay)

    def ask_udp(self, msg):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(UPSTREAM_TIMEOUT)
            s.connect(self.upstream)
            s.send(msg)
            return s.recv(65535)

    def ask_tcp(self, msg):
        with socket.create_connection(self.upstream,
                                      timeout=UPSTREAM_TIMEOUT) as s:
            s.sendall(struct.pack("!H", len(msg)) + msg)
            n = struct.unpack("!H", read_exact(s, 2))[0]
            return read_exact(s, n)

    def udp_query(self, sock, msg, client):
        try:
            self.wait(msg, "udp")
            sock.sendto(self.ask_udp(msg), client)
        except OSError:
            pass

    def tcp_conn(self, conn):
        try:
            with conn:
                conn.settimeout(60)
                while True:
                    head = read_exact(conn, 2)
                    msg = read_exact(conn, struct.unpack("!H", head)[0])
                    self.wait(msg, "tcp")
                    reply = self.ask_tcp(msg)
                    conn.sendall(struct.pack("!H", len(reply)) + reply)
        except (OSError, EOFError):
            pass


def read_exact(s, n):
    d = b""
    while len(d) < n:
        c = s.recv(n - len(d))
        if not c:
            raise EOFError
        d += c
    return d


def listen(host):
    """A UDP and a TCP socket on one free port of host."""
    for _ in range(50):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((host, 0))
        port = u.getsockname()[1]
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            t.bind((host, port))
        except OSError:
            u.close()
            t.close()
            continue
        t.listen(64)
        return u, t, port
    raise OSError("no free port for UDP and TCP")


def serve(target, *args):
    th = threading.Thread(target=target, args=args, daemon=True)
    th.start()


def main(argv):
    ap = argparse.ArgumentParser(description="slow DNS forwarder")
    ap.add_argument("--ready", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--pattern", required=True)
    ap.add_argument("--delay-ms", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--hold-after", type=int, default=0)
    ap.add_argument("--hold-file")
    a = ap.parse_args(argv)
    uhost, _, uport = a.upstream.rpartition(":")
    fwd = Forwarder((uhost, int(uport)), a.pattern, a.delay_ms,
                    a.hold_after, a.hold_file)
    udp, tcp, port = listen(a.host)

    def udp_loop():
        while True:
            msg, client = udp.recvfrom(65535)
            serve(fwd.udp_query, udp, msg, client)

    def tcp_loop():
        while True:
            conn, _ = tcp.accept()
            serve(fwd.tcp_conn, conn)

    # SIGTERM and SIGINT blocked (the threads inherit it) and taken with
    # sigwait: a handler setting an Event the main thread is waiting in
    # can wait for ever for the Event's lock (tests/smtp/fake_smtp.py
    # hung a CI run's teardown so).
    stop_signals = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
    serve(udp_loop)
    serve(tcp_loop)
    tmp = a.ready + ".tmp"
    with open(tmp, "w") as f:
        f.write("%s:%d\n" % (a.host, port))
    os.rename(tmp, a.ready)
    signal.sigwait(stop_signals)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
