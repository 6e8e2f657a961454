#!/usr/bin/env python3
"""farm_client.py: the plain client of make bench-farm, what the farm allows
(tests/bench/bench_farm.sh): for every domain at once, one SMTP session to
its MX address: greeting, EHLO | STARTTLS (TLS, the certificate checked
against CA) | EHLO | MAIL + every RCPT of the domain + one random probe RCPT
+ QUIT in one flight. No DNS (the addresses are given), no database.

  farm_client.py CA PORT LIST
LIST: one domain a line, "DOMAIN MXNAME ADDRESS LOCAL1,LOCAL2,..." (the
certificate is checked for MXNAME)
Prints "CLIENT addresses=N seconds=S rate=R/min right=K wrong=W sessions=D";
a verdict is right when user<N>@ and every local part of a catch-all domain
(r<N>-c<NNN>) got 250, and the others 550.
"""
import asyncio
import re
import ssl
import sys
import time


async def replies(reader, n):
    """n SMTP replies (multi-line ones as one): their codes"""
    codes = []
    while len(codes) < n:
        line = await reader.readline()
        if not line:
            raise ConnectionError("closed")
        if line[3:4] != b"-":
            codes.append(int(line[:3]))
    return codes


async def domain(dom, mx, addr, port, locals_, ctx, out):
    reader, writer = await asyncio.open_connection(addr, port)
    await replies(reader, 1)
    writer.write(b"EHLO client.bench.test\r\n")
    await replies(reader, 1)
    writer.write(b"STARTTLS\r\n")
    if (await replies(reader, 1))[0] != 220:
        raise RuntimeError("STARTTLS refused")
    await writer.start_tls(ctx, server_hostname=mx)
    writer.write(b"EHLO client.bench.test\r\n")
    await replies(reader, 1)
    cmds = ["MAIL FROM:<>"] + ["RCPT TO:<%s@%s>" % (l, dom) for l in locals_]
    cmds += ["RCPT TO:<zz-probe-%d@%s>" % (time.monotonic_ns() % 1000000, dom), "QUIT"]
    writer.write(("\r\n".join(cmds) + "\r\n").encode())
    codes = await replies(reader, len(cmds))
    writer.close()
    ca = re.match(r"r[0-9]+-c", dom) is not None
    for l, c in zip(locals_, codes[1:]):
        want = 250 if (ca or re.fullmatch(r"user[0-9]*", l)) else 550
        out["right" if c == want else "wrong"] += 1


async def main(argv):
    ca, port, path = argv[1], int(argv[2]), argv[3]
    ctx = ssl.create_default_context(cafile=ca)
    jobs = []
    for line in open(path):
        f = line.split()
        if len(f) == 4:
            jobs.append((f[0], f[1], f[2], f[3].split(",")))
    out = {"right": 0, "wrong": 0}
    total = sum(len(j[3]) for j in jobs)
    t0 = time.monotonic()
    res = await asyncio.gather(*(domain(d, m, a, port, l, ctx, out) for d, m, a, l in jobs), return_exceptions=True)
    secs = time.monotonic() - t0
    errors = [r for r in res if isinstance(r, BaseException)]
    print("CLIENT addresses=%d seconds=%.3f rate=%d right=%d wrong=%d sessions=%d errors=%d%s" % (
        total, secs, total / secs * 60, out["right"], out["wrong"], len(jobs), len(errors),
        (" first_error=" + repr(errors[0]).replace(" ", "_")) if errors else ""), flush=True)
    return 0 if not errors and out["wrong"] == 0 and out["right"] == total else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv)))
