#!/usr/bin/env python3
"""commit_drop_proxy.py: a TCP proxy in front of MariaDB that loses the
answer to one COMMIT, as a network or a database node that dies at the
wrong moment does: the COMMIT reaches the server and is applied, the
server's answer is thrown away, and the client's connection is closed.

  commit_drop_proxy.py --ready FILE --upstream HOST:PORT --arm FILE

It listens on 127.0.0.1 (a free port) and writes "127.0.0.1:PORT" to the
ready file when it listens. Every connection is passed through both ways.
The client's commands are read as MySQL protocol packets (3-byte length,
sequence number; a command is a packet with sequence 0): when a COM_QUERY
"COMMIT" comes while the --arm file exists, the file is removed, the
COMMIT is sent on, and what the server answers next is not passed back:
both sides of that connection are closed instead. When the arm file
holds text, only a COMMIT of a transaction that ran a statement with that
text counts (a COM_QUERY with it, or a COM_STMT_EXECUTE of a statement
prepared from it: the statement id is read from the server's answer to
the COM_STMT_PREPARE), so that other transactions of a program pass.
An arm file of "autocommit:TEXT" loses instead the answer to the next
execution of a prepared statement with TEXT (one that commits by itself,
outside a transaction: the server applies it, its answer is lost).
An arm file of "down:TEXT" is TEXT's, and the node then stays dead: the
proxy writes the file named as the arm file with ".down" added, closes
every other connection open through it (the client's other processes
lose theirs, as with a node that dies) and every new connection at once
while that file is there (the test removes it to bring the node back),
so that the client cannot run anything after the COMMIT whose answer it
lost.
An arm file of "seen:TEXT" loses nothing: it marks the next execution of
a prepared statement with TEXT, and once the server's answer to it has
been passed back to the client, the proxy writes the file named as the
arm file with ".seen" added (the arm file removed), so that a test knows
the client has read what that statement found.
One line per dropped answer goes to stdout. SIGTERM or SIGINT stops it.
Python 3 standard library only.
"""
import argparse
import os
import signal
import socket
import sys
import threading

COM_QUERY = 3
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17


def armed(arm):
    """None when not armed, else the text a transaction must have run
    (without a "down:" prefix: see fired)."""
    try:
        with open(arm, "rb") as f:
            want = f.read().strip()
    except OSError:
        return None
    if want.startswith(b"seen:"):
        return None
    return want[len(b"down:"):] if want.startswith(b"down:") else want


def watched(arm, text):
    """Whether the arm file is "seen:TEXT" for a TEXT in text (a prepared
    statement about to run): then it is removed."""
    try:
        with open(arm, "rb") as f:
            want = f.read().strip()
    except OSError:
        return False
    if not want.startswith(b"seen:") or want[len(b"seen:"):] not in text:
        return False
    try:
        os.unlink(arm)
    except OSError:
        pass
    return True


# the connections open through the proxy: a close function each
OPEN = {}
OPEN_LOCK = threading.Lock()


def fired(arm, me):
    """The armed answer is about to be lost: disarms; with "down:", the
    node goes down (the .down file, every connection but me closed)
    before the statement is sent on."""
    try:
        with open(arm, "rb") as f:
            down = f.read().startswith(b"down:")
    except OSError:
        down = False
    if down:
        with open(arm + ".down", "w") as f:
            f.write("down\n")
        with OPEN_LOCK:
            others = [c for k, c in OPEN.items() if k is not me]
        for close in others:
            close()
    os.unlink(arm)


def serve(client, upstream, arm):
    try:
        server = socket.create_connection(upstream, timeout=10)
        server.settimeout(None)
    except OSError:
        client.close()
        return
    drop = threading.Event()
    what = {"kind": "a COMMIT"}
    # per connection: statement ids prepared from the armed text, the
    # text of the PREPARE whose answer is awaited, and whether the open
    # transaction ran the armed text; seen: the answer awaited is to the
    # statement a "seen:" arm file watches
    st = {"ids": {}, "preparing": None, "ran": set(), "seen": False}

    def close_both():
        with OPEN_LOCK:
            OPEN.pop(client, None)
        for s in (client, server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    with OPEN_LOCK:
        OPEN[client] = close_both

    def server_to_client():
        try:
            while True:
                data = server.recv(65536)
                if not data:
                    break
                if drop.is_set():
                    print("dropped the answer to %s" % what["kind"], flush=True)
                    break
                # the answer to a PREPARE: OK (0), statement id, ...
                if st["preparing"] is not None and len(data) >= 9 and data[4] == 0:
                    sid = int.from_bytes(data[5:9], "little")
                    st["ids"][sid] = st["preparing"]
                st["preparing"] = None
                client.sendall(data)
                if st["seen"]:
                    st["seen"] = False
                    with open(arm + ".seen", "w") as f:
                        f.write("seen\n")
        except OSError:
            pass
        close_both()

    threading.Thread(target=server_to_client, daemon=True).start()
    buf = b""
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            buf += data
            # forward whole packets, looking at each command
            while len(buf) >= 4:
                n = buf[0] | buf[1] << 8 | buf[2] << 16
                if len(buf) < 4 + n:
                    break
                pkt, buf = buf[:4 + n], buf[4 + n:]
                payload = pkt[4:]
                cmd = payload[:1]
                if pkt[3] == 0 and cmd == bytes([COM_STMT_PREPARE]):
                    st["preparing"] = payload[1:]
                elif pkt[3] == 0 and cmd == bytes([COM_STMT_EXECUTE]) and len(payload) >= 5:
                    text = st["ids"].get(int.from_bytes(payload[1:5], "little"))
                    if text is not None:
                        st["ran"].add(text)
                        if watched(arm, text):
                            st["seen"] = True
                        want = armed(arm)
                        if (want is not None and want.startswith(b"autocommit:") and
                                want[len(b"autocommit:"):] in text):
                            fired(arm, client)
                            what["kind"] = "a statement"
                            drop.set()
                elif pkt[3] == 0 and cmd == bytes([COM_QUERY]):
                    q = payload[1:].strip()
                    st["ran"].add(q)
                    if q.upper() in (b"COMMIT", b"ROLLBACK"):
                        want = armed(arm)
                        if (q.upper() == b"COMMIT" and want is not None and
                                (want == b"" or any(want in t for t in st["ran"]))):
                            fired(arm, client)
                            drop.set()
                        st["ran"] = set()
                server.sendall(pkt)
    except OSError:
        pass
    if not drop.is_set():
        close_both()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ready", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--arm", required=True)
    a = ap.parse_args()
    host, port = a.upstream.rsplit(":", 1)
    upstream = (host, int(port))
    # the stopping signals are taken by the main thread with sigwait
    # (a handler would run between bytecodes of the accept loop)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)

    def accept_loop():
        while True:
            c, _ = ls.accept()
            if os.path.exists(a.arm + ".down"):
                c.close()
                continue
            threading.Thread(target=serve, args=(c, upstream, a.arm), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()
    tmp = a.ready + ".tmp"
    with open(tmp, "w") as f:
        f.write("127.0.0.1:%d\n" % ls.getsockname()[1])
    os.rename(tmp, a.ready)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    sys.exit(0)


if __name__ == "__main__":
    main()
