#!/usr/bin/env python3
"""farm_smtp.py: an independent "friendly farm" for make bench-farm, one
asyncio process answering SMTP for many domains on many loopback addresses,
as one provider's server would (tests/bench/bench_farm.sh).

  farm_smtp.py --ready FILE --cert CERT --key KEY [--port 0]
               [--flight-ms 20] [--catchall REGEX] HOST...

It listens on PORT (0: a free one) of every HOST and on a control port of
the first HOST; when ready it writes "SMTP_PORT CONTROL_PORT" to FILE (the
format of tests/smtp/fake_smtp.py, so that mail_env.sh's fake_ctl works).
Every flight of commands (what arrives in one read, complete lines) is
answered --flight-ms after it arrives, all its replies at once. EHLO offers
PIPELINING and STARTTLS (a real TLS handshake with CERT). RCPT: local parts
"user" + digits are accepted, at domains that REGEX matches whole every
local part is accepted (catch-all), anything else gets 550 5.1.1.

Control commands (one line each, answered with one line): reset, set (k=v
words: hold=1 makes every flight wait, unanswered, until hold=0, as
tests/smtp/fake_smtp.py's hold does (tests/integration/test_galera.sh
freezes a job mid-way with it); any other k=v is ignored), quit,
  held         "held=N": flights waiting for hold=0 now
  concurrency  "total_max=T now=N max=M sessions=S": M is the most
               sessions open at once at any ONE of the addresses (what a
               client's per-host limit bounds), T the most over all
  stats        "sessions=N max_mail=M max_rcpt=R rset=K quit=Q flights=F"
  log          the last session: "sessions=N flights=F tls=0|1 commands=..."
"""
import asyncio
import os
import re
import signal
import ssl
import sys

FLIGHT = 0.02
CATCHALL = None
TLS = None
S = {}
HELD = {"now": 0}
RELEASED = None     # an asyncio.Event, set while hold=0


def reset():
    S.update(sessions=0, max_mail=0, max_rcpt=0, rset=0, quit=0, flights=0,
             total_now=0, total_max=0, host_max=0, last="sessions=0 flights=0 tls=0 commands=")
    S["now"] = {}


def reply(cmd, line, st):
    """the reply to one command line, and whether to close after it"""
    if cmd in ("EHLO", "HELO"):
        st["helo"] = True
        if cmd == "HELO":
            return "250 farm.bench.test\r\n", False
        ext = ["farm.bench.test", "PIPELINING", "8BITMIME", "SIZE 10240000"]
        if not st["tls"]:
            ext.append("STARTTLS")
        return "".join("250%s%s\r\n" % ("-" if i < len(ext) - 1 else " ", e)
                       for i, e in enumerate(ext)), False
    if cmd == "STARTTLS":
        return "220 2.0.0 ready to start TLS\r\n", False
    if cmd == "MAIL":
        st["mail"] += 1
        return "250 2.1.0 ok\r\n", False
    if cmd == "RCPT":
        st["rcpt"] += 1
        m = re.search(r"<([^>@]*)@([^>]*)>", line)
        if m:
            local, dom = m.group(1).lower(), m.group(2).lower()
            if re.fullmatch(r"user[0-9]*", local) or (CATCHALL and CATCHALL.fullmatch(dom)):
                return "250 2.1.5 ok\r\n", False
        return "550 5.1.1 user unknown\r\n", False
    if cmd == "RSET":
        S["rset"] += 1
        return "250 2.0.0 ok\r\n", False
    if cmd == "NOOP":
        return "250 2.0.0 ok\r\n", False
    if cmd == "QUIT":
        S["quit"] += 1
        return "221 2.0.0 bye\r\n", True
    return "502 5.5.2 not implemented\r\n", False


async def session(reader, writer, host):
    S["sessions"] += 1
    S["now"][host] = S["now"].get(host, 0) + 1
    S["host_max"] = max(S["host_max"], S["now"][host])
    S["total_now"] += 1
    S["total_max"] = max(S["total_max"], S["total_now"])
    st = {"tls": False, "helo": False, "mail": 0, "rcpt": 0, "flights": 0, "cmds": []}
    counted = True

    def uncount():
        nonlocal counted
        if counted:
            counted = False
            S["now"][host] -= 1
            S["total_now"] -= 1
    try:
        writer.write(b"220 farm.bench.test ESMTP\r\n")
        await writer.drain()
        buf = b""
        while True:
            data = await reader.read(65536)
            if not data:
                break
            buf += data
            if b"\n" not in buf:
                continue
            *lines, buf = buf.split(b"\n")
            st["flights"] += 1
            S["flights"] += 1
            if not RELEASED.is_set():
                HELD["now"] += 1
                try:
                    await RELEASED.wait()
                finally:
                    HELD["now"] -= 1
            await asyncio.sleep(FLIGHT)
            out, close, tls = [], False, False
            for raw in lines:
                line = raw.decode("latin-1").rstrip("\r")
                cmd = line.split(" ", 1)[0].split(":", 1)[0].upper()
                st["cmds"].append(cmd)
                r, close = reply(cmd, line, st)
                out.append(r)
                if cmd == "STARTTLS" and not st["tls"]:
                    tls = True
                    break
                if close:
                    break
            writer.write("".join(out).encode())
            await writer.drain()
            if close:
                uncount()
                break
            if tls:
                await writer.start_tls(TLS)
                st["tls"] = True
                buf = b""
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    finally:
        uncount()
        S["max_mail"] = max(S["max_mail"], st["mail"])
        S["max_rcpt"] = max(S["max_rcpt"], st["rcpt"])
        S["last"] = "sessions=%d flights=%d tls=%d commands=%s" % (
            S["sessions"], st["flights"], 1 if st["tls"] else 0, ",".join(st["cmds"]))
        try:
            writer.close()
        except Exception:
            pass


async def control(reader, writer, stop):
    line = (await reader.readline()).decode().strip()
    cmd = line.split(" ", 1)[0] if line else ""
    if cmd == "reset":
        reset()
        ans = "ok"
    elif cmd == "set":
        for kv in line.split()[1:]:
            if kv == "hold=1":
                RELEASED.clear()
            elif kv == "hold=0":
                RELEASED.set()
        ans = "ok"
    elif cmd == "held":
        ans = "held=%d" % HELD["now"]
    elif cmd == "quit":
        ans = "bye"
        stop.set()
    elif cmd == "concurrency":
        ans = "total_max=%d now=%d max=%d sessions=%d" % (S["total_max"], S["total_now"], S["host_max"], S["sessions"])
    elif cmd == "stats":
        ans = "sessions=%d max_mail=%d max_rcpt=%d rset=%d quit=%d flights=%d" % (
            S["sessions"], S["max_mail"], S["max_rcpt"], S["rset"], S["quit"], S["flights"])
    elif cmd == "log":
        ans = S["last"]
    else:
        ans = "error unknown command"
    writer.write((ans + "\n").encode())
    await writer.drain()
    writer.close()


async def main(argv):
    global FLIGHT, CATCHALL, TLS, RELEASED
    ready = cert = key = None
    port = 0
    hosts = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--ready", "--cert", "--key", "--port", "--flight-ms", "--catchall") and i + 1 < len(argv):
            v = argv[i + 1]
            i += 2
            if a == "--ready":
                ready = v
            elif a == "--cert":
                cert = v
            elif a == "--key":
                key = v
            elif a == "--port":
                port = int(v)
            elif a == "--flight-ms":
                FLIGHT = int(v) / 1000.0
            else:
                CATCHALL = re.compile(v, re.I)
            continue
        hosts.append(a)
        i += 1
    if not hosts or not cert or not key or not ready:
        sys.exit("usage: farm_smtp.py --ready FILE --cert C --key K [--port P] [--flight-ms N] [--catchall RE] HOST...")
    TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    TLS.load_cert_chain(cert, key)
    reset()
    RELEASED = asyncio.Event()
    RELEASED.set()
    stop = asyncio.Event()
    servers = []
    for h in hosts:
        s = await asyncio.start_server(lambda r, w, h=h: session(r, w, h), h, port, backlog=1024)
        port = s.sockets[0].getsockname()[1]
        servers.append(s)
    ctl = await asyncio.start_server(lambda r, w: control(r, w, stop), hosts[0], 0)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)
    tmp = ready + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d %d\n" % (port, ctl.sockets[0].getsockname()[1]))
    os.rename(tmp, ready)
    await stop.wait()
    for s in servers + [ctl]:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv)))
