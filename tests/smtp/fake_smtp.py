#!/usr/bin/env python3
"""fake_smtp.py: a scriptable SMTP server on loopback for the faults a real
MTA will not produce on demand (tests of src/engine/smtp.c).

  fake_smtp.py --ready FILE [--host 127.0.0.1] [--also 127.0.0.3 ...]
               [--port 0] [--cert CERT --key KEY] [SETTING=VALUE ...]

It listens for SMTP on HOST:PORT (PORT 0: a free one) and on the same port
of every --also address, plus a control port on HOST. When ready it writes
"SMTP_PORT CONTROL_PORT" to FILE (atomically). SIGTERM/SIGINT or the control
command "quit" stop it; connections are daemon threads, so nothing lingers.

Scenario settings (given on the command line or with the control command
"set k=v ..."; "reset" restores the defaults and forgets greylisting and
the session log):
  banner=ok|silent|421|554|close   greeting (silent: never answer)
  banner_lines=N                   greeting of N lines
  max_open=N                       a connection while N are open already gets
                                   "421 4.7.0 too many connections" and is
                                   closed (0: any; Postfix's
                                   smtpd_client_connection_count_limit)
  long_line=N                      greeting with a continuation line of N chars
  ehlo=ok|refuse                   refuse: 502 to EHLO, HELO accepted
  pipelining=1|0                   offer PIPELINING
  starttls=off|offered|required|broken|broken_required
                                   required: 530 5.7.0 to MAIL without TLS;
                                   broken: 220 to STARTTLS, then not TLS;
                                   broken_required: both
  tickets=1|0                      0: TLS sessions get no session tickets
                                   (a server that never resumes)
  mail=ok|disconnect|421|451|550   reply to MAIL (disconnect: close, no reply)
  mail_limit=N                     MAIL transactions one session may begin
                                   (0: no limit); the next MAIL gets
                                   "421 4.7.0 too many messages" and the
                                   connection is closed
  rset=ok|550|421|disconnect       reply to RSET
  catchall=1|0                     unknown local parts accepted or 550 5.1.1
  catchall_domains=REGEX           unknown local parts at the domains that
                                   REGEX matches whole are accepted too
                                   (a catch-all domain among others)
  defer_domains=REGEX              unknown local parts at the domains that
                                   REGEX matches whole get "451 4.3.0
                                   Temporary lookup failure" (a host that
                                   cannot say now: a verifier's catch-all
                                   probe gets no answer there)
  delay_ms=N                       delay before every reply (slow server)
  flight_delay_ms=N                delay once per flight of commands
  split=1|0                        send replies one byte per send()
  allow_from=ADDR,...              only these client source addresses are
                                   served (the others get "554 5.7.1 ...
                                   not allowed" and are closed); empty: all
  block_rcpt_from=ADDR,...         these client source addresses are served,
                                   but every RCPT gets "554 5.7.1 Service
                                   unavailable; Client host [ADDRESS] blocked
                                   using zen.spamhaus.org" (a block told at
                                   RCPT, not at the greeting)
  block_sessions=N                 the first N sessions since the start or
                                   the last reset get that block to every
                                   RCPT, whatever their source address; the
                                   later ones are served (a block that ends)
  hold=1|0                         1: every flight of commands waits, unanswered,
                                   until hold is set back to 0 (a test that must
                                   know a session is still going, without a
                                   delay long enough by guess)
  rcpt_max=N                       RCPTs one session may send (0: any); the
                                   next get "452 4.5.3 Too many recipients"
                                   (Outlook.com takes one)
Rate limit per client source address (a provider's, for tests of pacing):
  rate_limit=N                     RCPTs one source address may send in any
                                   rate_window_ms (0: no limit); the next one
                                   gets "421 4.7.28 ... rate limited" and the
                                   connection is closed, and the address is in
                                   a penalty for rate_penalty_ms
  rate_window_ms=N                 (default 1000)
  rate_from=ADDR,...               the limit holds only for these source
                                   addresses (empty: for every one); the
                                   others are neither limited nor counted
  rate_penalty_ms=N                (default 1000)
  block_after=N                    a client that comes back (connects, or
                                   sends MAIL or RCPT) during its penalty
                                   gets a strike (421 4.7.28, closed); at N
                                   strikes (0: never) it is blocked: every
                                   greeting is "554 5.7.1 ... Client host
                                   [ADDRESS] blocked using zen.spamhaus.org"
Per-recipient verdicts by local part (a keyword, then digits or nothing:
"user", "user12"; not "userx", so that a verifier's random catch-all probe
never falls on a keyword by chance):
  user, ok    250 2.1.5         unknown    550 5.1.1 user unknown
  disabled    550 5.2.1         full       452 4.2.2 mailbox full
  blocked     554 5.7.1 Spamhaus text
  grey        450 4.7.1 greylisted the first time, 250 afterwards
  greyforever 450 4.7.1 greylisted every time
  close421    421 4.3.2 and the connection is closed
  multi       a multi-line 250
  the providers' own replies, as they send them (PROVIDER_REPLIES below):
  officeunknown (550 5.4.1 ... AS(201806281)), gmailbusy (450 4.2.1 ...
  receiving mail at a rate), gmailfull (452 4.2.2 OverQuotaTemp),
  gmaildisabled (550 5.2.1), outlookrate (451 4.7.650), mimecastinvalid
  (550 Invalid Recipient), mimecastspoof, mimecastpolicy, proofpointblocked,
  barracudablocked (their blocks), quarantined (550 5.0.0 a text no shipped
  rule reads), tenantthrottle (451 4.7.99: a provider's own "slow down"
  that only an operator's rule for that provider reads so)
  anything else: 250 with catchall=1 (or catchall_domains), else 451
  4.3.0 at defer_domains, else 550 5.1.1

Control commands (one line each, answered with one line):
  set k=v ...   reset   quit
  concurrency   "now=N max=M sessions=S busy=B": connections open now, the
                most open at once since the start or the last reset (a
                connection refused for max_open counts while it is
                open), sessions, and connections refused for max_open
                (a connection counts until it ends or its QUIT is answered:
                after 221 the client may connect again before this server
                has closed its side)
  log           the last session: "sessions=N flights=F tls=0|1
                pipelined_unoffered=K helo=NAME commands=EHLO,MAIL,...
                resumed=0|1" (resumed: its TLS handshake resumed a
                session, SSLSocket.session_reused)
  held          "held=N": flights waiting for hold=0 now
  peers         the client source addresses of the sessions since the
                start or the last reset, refused ones included, with their
                counts, sorted: "127.0.0.2=3 127.0.0.3=3" ("-": none)
  senders       the sessions since the start or the last reset that sent
                MAIL, by (client source address, EHLO/HELO name, MAIL
                FROM path) with their counts, sorted:
                "127.0.0.2,out.example,<a@b.example>=3" ("-": none)
  paths         the last session's MAIL and RCPT command lines as sent,
                joined with "|" ("MAIL FROM:<a@b> SMTPUTF8|RCPT TO:<c@d>")
  stats         over the sessions since the start or the last reset:
                "sessions=N max_mail=M max_rcpt=R rset=K quit=Q tls=T
                resumed=U": the most MAIL and RCPT commands one session
                sent, RSETs, QUITs, TLS sessions and resumed TLS sessions
                in all
  rate          the rate limit's counters over every source address since
                the start or the last reset: "rcpts=N refused=R strikes=S
                blocked=B too_many=T sessions_blocked=K": RCPTs counted,
                421s for the rate, strikes (came back during a penalty),
                clients blocked, 452 4.5.3 answers, sessions blocked by
                block_sessions
"""
import os
import re
import signal
import socket
import socketserver
import ssl
import sys
import threading
import time

DEFAULTS = {
    "banner": "ok", "banner_lines": "1", "long_line": "0", "ehlo": "ok",
    "pipelining": "1", "starttls": "off", "tickets": "1", "mail": "ok", "catchall": "0",
    "delay_ms": "0", "flight_delay_ms": "0", "split": "0",
    "mail_limit": "0", "rset": "ok", "catchall_domains": "",
    "defer_domains": "",
    "hold": "0", "rcpt_max": "0", "rate_limit": "0",
    "rate_window_ms": "1000", "rate_penalty_ms": "1000", "block_after": "0",
    "allow_from": "", "rate_from": "", "block_rcpt_from": "",
    "block_sessions": "0",
    "max_open": "0",
}

# Real texts of the providers and gateways (issue 24), by keyword:
# (code, [lines]); an enhanced code begins the lines that have one.
PROVIDER_REPLIES = {
    "officeunknown": (550, ["5.4.1 Recipient address rejected: Access denied. AS(201806281) [DM6NAM11FT012.eop-nam11.prod.protection.outlook.com]"]),
    "gmailbusy": (450, ["4.2.1 The user you are trying to contact is receiving mail at a rate that",
                        "4.2.1 prevents additional messages from being delivered. Please resend your",
                        "4.2.1 message at a later time. x - gsmtp"]),
    "gmailfull": (452, ["4.2.2 The recipient's inbox is out of storage space. Please direct the",
                        "4.2.2 recipient to https://support.google.com/mail/?p=OverQuotaTemp x - gsmtp"]),
    "gmaildisabled": (550, ["5.2.1 The email account that you tried to reach is disabled. Learn more at",
                            "5.2.1 https://support.google.com/mail/?p=DisabledUser x - gsmtp"]),
    "outlookrate": (451, ["4.7.650 The mail server [127.0.0.1] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://postmaster.live.com (S775)"]),
    "mimecastinvalid": (550, ["Invalid Recipient - https://community.mimecast.com/docs/DOC-1369#550 [abcdEFG.us12]"]),
    "mimecastspoof": (550, ["Rejected by header based Anti-Spoofing policy: x@fake.test - https://community.mimecast.com/docs/DOC-1369#550 [abcdEFG.us12]"]),
    "mimecastpolicy": (554, ["Email rejected due to security policies - https://community.mimecast.com/docs/DOC-1369#554 [abcdEFG.us12]"]),
    "proofpointblocked": (554, ["5.7.0 Blocked - see https://ipcheck.proofpoint.com/?ip=127.0.0.1"]),
    "barracudablocked": (554, ["Service unavailable; Client host [127.0.0.1] blocked using Barracuda Reputation; http://www.barracudanetworks.com/reputation/?r=1&ip=127.0.0.1"]),
    "quarantined": (550, ["5.0.0 <x@fake.test>: quarantined by the gateway"]),
    "tenantthrottle": (451, ["4.7.99 Too much mail from your address just now (TENANT-THROTTLE)"]),
}

lock = threading.Lock()
released = threading.Condition(lock)   # notified when settings change
held = {"now": 0}       # flights waiting for hold=0
conf = dict(DEFAULTS)
greylist = set()
sessions = []           # one dict per connection, in accept order
concurrent = {"now": 0, "max": 0, "busy": 0}   # connections open at once
tls_context = None
tls_context_no_tickets = None   # tickets=0
clients = {}            # source address -> rate-limit state (under lock)
rate_counts = {"rcpts": 0, "refused": 0, "strikes": 0, "blocked": 0,
               "too_many": 0, "sessions_blocked": 0}


def client_state(addr):
    """The rate-limit state of a source address (lock held)."""
    c = clients.get(addr)
    if c is None:
        c = {"times": [], "penalty_until": 0.0, "strikes": 0,
             "blocked": False}
        clients[addr] = c
    return c


def rate_gate(addr, what):
    """Before a greeting ("connect"), MAIL or RCPT of a client: None to go
    on, or (code, text) of the reply that refuses it (then the connection
    is closed). An RCPT within the limit is counted."""
    with lock:
        if int(conf["rate_limit"] or 0) <= 0:
            return None
        only = [a for a in (conf["rate_from"] or "").split(",") if a]
        if only and addr not in only:
            return None
        c = client_state(addr)
        now = time.monotonic()
        if c["blocked"]:
            return (554, "5.7.1 Service unavailable; Client host [%s] blocked using zen.spamhaus.org" % addr)
        if now < c["penalty_until"]:
            c["strikes"] += 1
            rate_counts["strikes"] += 1
            after = int(conf["block_after"] or 0)
            if after > 0 and c["strikes"] >= after:
                c["blocked"] = True
                rate_counts["blocked"] += 1
                return (554, "5.7.1 Service unavailable; Client host [%s] blocked using zen.spamhaus.org" % addr)
            return (421, "4.7.28 [%s] Our system has detected an unusual rate of unsolicited mail, rate limited; try again later" % addr)
        if what != "rcpt":
            return None
        window = int(conf["rate_window_ms"] or 1000) / 1000.0
        c["times"] = [t for t in c["times"] if t > now - window]
        if len(c["times"]) >= int(conf["rate_limit"]):
            c["penalty_until"] = now + int(conf["rate_penalty_ms"] or 1000) / 1000.0
            rate_counts["refused"] += 1
            return (421, "4.7.28 [%s] Our system has detected an unusual rate of unsolicited mail, rate limited; try again later" % addr)
        c["times"].append(now)
        rate_counts["rcpts"] += 1
        return None
stop_event = threading.Event()


def setting(name):
    with lock:
        return conf[name]


def int_setting(name):
    try:
        return int(setting(name))
    except ValueError:
        return 0


class Closed(Exception):
    pass


class Session:
    def __init__(self, sock, log):
        self.sock = sock
        self.log = log
        try:
            self.peer = sock.getpeername()[0]
        except OSError:
            self.peer = "?"
        self.rcpts = 0
        self.tls = False
        self.mail = False
        self.mails = 0
        self.counted = True
        self.split = int_setting("split") != 0
        self.delay = int_setting("delay_ms") / 1000.0

    def uncount(self):
        """The connection no longer counts as open (once)."""
        with lock:
            if self.counted:
                self.counted = False
                concurrent["now"] -= 1

    def send(self, data):
        if self.delay > 0:
            time.sleep(self.delay)
        try:
            if self.split:
                for i in range(len(data)):
                    self.sock.sendall(data[i:i + 1])
            else:
                self.sock.sendall(data)
        except OSError:
            raise Closed()

    def reply(self, code, lines, sep_enh=None):
        """A reply; lines is a list of texts; sep_enh prefixes each."""
        out = b""
        for i, text in enumerate(lines):
            sep = " " if i == len(lines) - 1 else "-"
            t = (sep_enh + " " + text) if sep_enh else text
            out += ("%d%s%s\r\n" % (code, sep, t)).encode()
        return out

    def greeting(self):
        refused = rate_gate(self.peer, "connect")
        if refused:
            self.send(self.reply(refused[0], [refused[1]]))
            raise Closed()
        limit = int_setting("max_open")
        with lock:
            busy = limit > 0 and concurrent["now"] > limit
            if busy:
                concurrent["busy"] += 1
        if busy:
            self.send(self.reply(421, ["4.7.0 fake.test Error: too many connections"]))
            raise Closed()
        allow = [a for a in setting("allow_from").split(",") if a]
        if allow and self.log["peer"] not in allow:
            self.send(self.reply(554, ["5.7.1 fake.test connections from %s not allowed" % self.log["peer"]]))
            raise Closed()
        b = setting("banner")
        if b == "silent":
            self.wait_close()
            raise Closed()
        if b == "close":
            raise Closed()
        if b == "421":
            self.send(self.reply(421, ["4.3.2 fake.test Service not available, closing"]))
            raise Closed()
        if b == "554":
            self.send(self.reply(554, ["5.7.1 fake.test No SMTP service for you"]))
            self.wait_close()
            raise Closed()
        lines = ["fake.test ESMTP fake_smtp"]
        n = int_setting("banner_lines")
        for i in range(1, n):
            lines.append("fake.test greeting line %d" % (i + 1))
        ll = int_setting("long_line")
        if ll > 0:
            lines.insert(0, "fake.test " + "x" * ll)
        self.send(self.reply(220, lines))

    def wait_close(self):
        """Reads and ignores everything until the client goes away."""
        try:
            while not stop_event.is_set():
                if not self.sock.recv(4096):
                    return
        except OSError:
            return

    def ehlo_reply(self, name):
        lines = ["fake.test greets " + name, "SIZE 10240000", "8BITMIME",
                 "ENHANCEDSTATUSCODES"]
        if setting("pipelining") == "1":
            lines.append("PIPELINING")
        if setting("starttls") != "off" and not self.tls:
            lines.append("STARTTLS")
        lines.append("SMTPUTF8")
        return self.reply(250, lines)

    def rcpt(self, arg):
        addr = arg.strip()
        if addr.upper().startswith("TO:"):
            addr = addr[3:].strip()
        addr = addr.strip("<>")
        if self.log["blocked"] or self.log["peer"] in [a for a in setting("block_rcpt_from").split(",") if a]:
            return self.reply(554, ["5.7.1 Service unavailable; Client host [%s] blocked using zen.spamhaus.org" % self.log["peer"]]), None
        local = addr.split("@")[0].lower()
        m = re.fullmatch(r"(close421|[a-z]+)[0-9]*", local)
        local = m.group(1) if m else ""
        if local in ("user", "ok"):
            return self.reply(250, ["2.1.5 <%s> recipient ok" % addr]), None
        if local == "unknown":
            return self.reply(550, ["5.1.1 <%s>: Recipient address rejected: User unknown in local recipient table" % addr]), None
        if local == "disabled":
            return self.reply(550, ["5.2.1 <%s>: mailbox disabled" % addr]), None
        if local == "full":
            return self.reply(452, ["4.2.2 <%s>: mailbox full, over quota" % addr]), None
        if local == "blocked":
            return self.reply(554, ["5.7.1 Service unavailable; Client host [127.0.0.1] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/127.0.0.1"]), None
        if local == "greyforever":
            return self.reply(450, ["4.7.1 <%s>: Recipient address rejected: Greylisted, try again later" % addr]), None
        if local == "grey":
            with lock:
                seen = addr in greylist
                greylist.add(addr)
            if not seen:
                return self.reply(450, ["4.7.1 <%s>: Recipient address rejected: Greylisted, try again later" % addr]), None
            return self.reply(250, ["2.1.5 <%s> ok (greylisting passed)" % addr]), None
        if local == "close421":
            return self.reply(421, ["4.3.2 fake.test shutting down, closing connection"]), "close"
        if local in PROVIDER_REPLIES:
            code, lines = PROVIDER_REPLIES[local]
            return self.reply(code, lines), None
        if local == "multi":
            return self.reply(250, ["<%s> accepted" % addr, "second line", "third line"], "2.1.5"), None
        if setting("catchall") == "1" or domain_matches("catchall_domains", addr):
            return self.reply(250, ["2.1.5 <%s> ok" % addr]), None
        if domain_matches("defer_domains", addr):
            return self.reply(451, ["4.3.0 <%s>: Temporary lookup failure" % addr]), None
        return self.reply(550, ["5.1.1 <%s>: user unknown" % addr]), None

    def command(self, line):
        """Returns (reply bytes, action) with action None, "close",
        "starttls" or "broken_tls"."""
        verb, _, arg = line.partition(" ")
        verb = verb.upper()
        with lock:
            self.log["commands"].append(verb)
            if verb in self.log["counts"]:
                self.log["counts"][verb] += 1
            if verb in ("MAIL", "RCPT"):
                self.log["paths"].append(line)
            if verb == "MAIL" and not self.log.get("sender"):
                m = re.match(r"(?i)FROM:(<[^>]*>)", arg)
                self.log["sender"] = "%s,%s,%s" % (self.log["peer"], self.log["helo"] or "-",
                                                   m.group(1) if m else arg)
        if verb == "EHLO":
            with lock:
                self.log["helo"] = arg
            if setting("ehlo") == "refuse":
                return self.reply(502, ["5.5.2 EHLO not implemented"]), None
            self.mail = False
            return self.ehlo_reply(arg), None
        if verb == "HELO":
            with lock:
                self.log["helo"] = arg
            return self.reply(250, ["fake.test"]), None
        if verb == "STARTTLS":
            st = setting("starttls")
            if st == "off" or self.tls:
                return self.reply(502, ["5.5.1 not offered"]), None
            if st in ("broken", "broken_required"):
                return self.reply(220, ["2.0.0 Ready to start TLS"]), "broken_tls"
            return self.reply(220, ["2.0.0 Ready to start TLS"]), "starttls"
        if verb in ("MAIL", "RCPT") and (verb == "MAIL" or self.mail):
            refused = rate_gate(self.peer, verb.lower())
            if refused:
                return self.reply(refused[0], [refused[1]]), "close"
        if verb == "RCPT" and self.mail:
            self.rcpts += 1
            rmax = int_setting("rcpt_max")
            if rmax > 0 and self.rcpts > rmax:
                with lock:
                    rate_counts["too_many"] += 1
                return self.reply(452, ["4.5.3 Too many recipients (AS780090)"]), None
        if verb == "MAIL":
            if setting("starttls") in ("required", "broken_required") and not self.tls:
                return self.reply(530, ["5.7.0 Must issue a STARTTLS command first"]), None
            limit = int_setting("mail_limit")
            if limit > 0 and self.mails >= limit:
                return self.reply(421, ["4.7.0 fake.test too many messages in this connection"]), "close"
            self.mails += 1
            m = setting("mail")
            if m == "disconnect":
                return b"", "close"
            if m == "421":
                return self.reply(421, ["4.3.2 fake.test closing"]), "close"
            if m == "451":
                return self.reply(451, ["4.3.0 temporary local problem"]), None
            if m == "550":
                return self.reply(550, ["5.7.1 sender address rejected: access denied"]), None
            self.mail = True
            return self.reply(250, ["2.1.0 Ok"]), None
        if verb == "RCPT":
            if not self.mail:
                return self.reply(503, ["5.5.1 Error: need MAIL command"]), None
            return self.rcpt(arg)
        if verb == "RSET":
            r = setting("rset")
            if r == "disconnect":
                return b"", "close"
            if r == "421":
                return self.reply(421, ["4.3.2 fake.test closing"]), "close"
            if r == "550":
                return self.reply(550, ["5.5.1 RSET not allowed here"]), None
            self.mail = False
            return self.reply(250, ["2.0.0 Ok"]), None
        if verb == "NOOP":
            return self.reply(250, ["2.0.0 Ok"]), None
        if verb == "QUIT":
            self.uncount()
            return self.reply(221, ["2.0.0 Bye"]), "close"
        if verb == "DATA":
            return self.reply(554, ["5.5.1 Error: no valid recipients"]), None
        return self.reply(502, ["5.5.2 Error: command not recognized"]), None

    def run(self):
        self.greeting()
        buf = b""
        while not stop_event.is_set():
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            buf += data
            if b"\n" not in buf:
                if len(buf) > 100000:
                    return
                continue
            lines = []
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                lines.append(line.rstrip(b"\r").decode("utf-8", "replace"))
            with lock:
                self.log["flights"] += 1
                if len(lines) > 1 and setting_unlocked("pipelining") != "1":
                    self.log["pipelined_unoffered"] += 1
            wait_while_held()
            fd = int_setting("flight_delay_ms")
            if fd > 0:
                time.sleep(fd / 1000.0)
            out = b""
            for i, line in enumerate(lines):
                reply, action = self.command(line)
                if self.delay > 0 or self.split:
                    self.send(reply)
                else:
                    out += reply
                if action == "close":
                    self.send(out)
                    return
                if action in ("starttls", "broken_tls"):
                    self.send(out)
                    out = b""
                    # Commands sent before TLS are dropped (RFC 3207 5).
                    buf = b""
                    if action == "broken_tls":
                        self.send(b"this is not a TLS record\r\n" * 4)
                        self.wait_close()
                        return
                    self.start_tls()
                    break
            if out:
                self.send(out)

    def start_tls(self):
        try:
            ctx = tls_context if setting("tickets") != "0" else tls_context_no_tickets
            self.sock = ctx.wrap_socket(self.sock, server_side=True)
        except (ssl.SSLError, OSError):
            raise Closed()
        self.tls = True
        with lock:
            self.log["tls"] = 1
            self.log["resumed"] = 1 if self.sock.session_reused else 0


def setting_unlocked(name):
    return conf[name]


def domain_matches(name, addr):
    """Whether the setting name (a REGEX) matches addr's domain whole."""
    pattern = setting(name)
    if not pattern:
        return False
    try:
        return re.fullmatch(pattern, addr.rpartition("@")[2].lower()) is not None
    except re.error:
        return False


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        log = {"commands": [], "flights": 0, "tls": 0, "resumed": 0, "helo": "",
               "pipelined_unoffered": 0, "paths": [],
               "counts": {"MAIL": 0, "RCPT": 0, "RSET": 0, "QUIT": 0},
               "peer": self.client_address[0]}
        with lock:
            # Only the last session's commands are asked for (log,
            # paths): older ones keep their counts (a benchmark makes
            # thousands of sessions).
            if len(sessions) >= 8:
                old = sessions[-8]
                old["commands"] = []
                old["paths"] = []
            sessions.append(log)
            # block_sessions: the first N sessions are blocked at RCPT
            log["blocked"] = rate_counts["sessions_blocked"] < int(conf["block_sessions"] or 0)
            if log["blocked"]:
                rate_counts["sessions_blocked"] += 1
            concurrent["now"] += 1
            concurrent["max"] = max(concurrent["max"], concurrent["now"])
        s = Session(self.request, log)
        try:
            s.run()
        except Closed:
            pass
        finally:
            try:
                s.sock.close()
            except OSError:
                pass
            s.uncount()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    request_queue_size = 128


class Control(socketserver.StreamRequestHandler):
    def handle(self):
        for raw in self.rfile:
            words = raw.decode("utf-8", "replace").split()
            if not words:
                continue
            cmd = words[0]
            if cmd == "set":
                bad = apply_settings(words[1:])
                self.answer("ok" if not bad else "error unknown " + bad)
            elif cmd == "reset":
                with lock:
                    conf.clear()
                    conf.update(DEFAULTS)
                    released.notify_all()
                    greylist.clear()
                    clients.clear()
                    for k in rate_counts:
                        rate_counts[k] = 0
                    del sessions[:]
                    concurrent["max"] = concurrent["now"]
                    concurrent["busy"] = 0
                self.answer("ok")
            elif cmd == "log":
                with lock:
                    if not sessions:
                        self.answer("sessions=0")
                        continue
                    last = sessions[-1]
                    self.answer("sessions=%d flights=%d tls=%d pipelined_unoffered=%d helo=%s commands=%s resumed=%d" % (
                        len(sessions), last["flights"], last["tls"],
                        last["pipelined_unoffered"], last["helo"] or "-",
                        ",".join(last["commands"]) or "-", last["resumed"]))
            elif cmd == "concurrency":
                with lock:
                    self.answer("now=%d max=%d sessions=%d busy=%d" % (
                        concurrent["now"], concurrent["max"], len(sessions),
                        concurrent["busy"]))
            elif cmd == "stats":
                with lock:
                    c = [s["counts"] for s in sessions]
                    self.answer("sessions=%d max_mail=%d max_rcpt=%d rset=%d quit=%d tls=%d resumed=%d" % (
                        len(c), max([x["MAIL"] for x in c] or [0]),
                        max([x["RCPT"] for x in c] or [0]),
                        sum(x["RSET"] for x in c), sum(x["QUIT"] for x in c),
                        sum(x["tls"] for x in sessions),
                        sum(x["resumed"] for x in sessions)))
            elif cmd == "rate":
                with lock:
                    self.answer("rcpts=%d refused=%d strikes=%d blocked=%d too_many=%d sessions_blocked=%d" % (
                        rate_counts["rcpts"], rate_counts["refused"],
                        rate_counts["strikes"], rate_counts["blocked"],
                        rate_counts["too_many"], rate_counts["sessions_blocked"]))
            elif cmd == "held":
                with lock:
                    self.answer("held=%d" % held["now"])
            elif cmd == "peers":
                with lock:
                    seen = {}
                    for x in sessions:
                        seen[x["peer"]] = seen.get(x["peer"], 0) + 1
                self.answer(" ".join("%s=%d" % (k, seen[k]) for k in sorted(seen)) or "-")
            elif cmd == "senders":
                with lock:
                    seen = {}
                    for x in sessions:
                        if x.get("sender"):
                            seen[x["sender"]] = seen.get(x["sender"], 0) + 1
                self.answer(" ".join("%s=%d" % (k, seen[k]) for k in sorted(seen)) or "-")
            elif cmd == "paths":
                with lock:
                    last = sessions[-1]["paths"] if sessions else []
                self.answer("|".join(last) or "-")
            elif cmd == "quit":
                self.answer("bye")
                stop_event.set()
                return
            else:
                self.answer("error unknown command")

    def answer(self, text):
        self.wfile.write((text + "\n").encode())
        self.wfile.flush()


def apply_settings(pairs):
    with lock:
        for p in pairs:
            k, _, v = p.partition("=")
            if k not in DEFAULTS:
                return k
            conf[k] = v
        released.notify_all()
    return None


def wait_while_held():
    """A flight waits here while hold=1 (or until the server stops)."""
    with lock:
        if conf["hold"] != "1":
            return
        held["now"] += 1
        try:
            while conf["hold"] == "1" and not stop_event.is_set():
                released.wait(0.5)
        finally:
            held["now"] -= 1


def main(argv):
    global tls_context, tls_context_no_tickets
    ready = None
    host = "127.0.0.1"
    also = []
    port = 0
    cert = key = None
    settings = []
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--ready", "--host", "--also", "--port", "--cert", "--key"):
            if i + 1 >= len(argv):
                sys.exit("fake_smtp: %s needs a value" % a)
            v = argv[i + 1]
            i += 2
            if a == "--ready":
                ready = v
            elif a == "--host":
                host = v
            elif a == "--also":
                also.append(v)
            elif a == "--port":
                port = int(v)
            elif a == "--cert":
                cert = v
            else:
                key = v
            continue
        if "=" in a:
            settings.append(a)
            i += 1
            continue
        sys.exit("usage: fake_smtp.py --ready FILE [--host H] [--also H] [--port P] [--cert C --key K] [k=v ...]")
    bad = apply_settings(settings)
    if bad:
        sys.exit("fake_smtp: unknown setting " + bad)
    if cert and key:
        tls_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls_context.load_cert_chain(cert, key)
        # a context of its own (its own ticket keys) that sends none
        tls_context_no_tickets = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls_context_no_tickets.load_cert_chain(cert, key)
        tls_context_no_tickets.num_tickets = 0
        tls_context_no_tickets.options |= ssl.OP_NO_TICKET
    elif setting("starttls") != "off":
        sys.exit("fake_smtp: starttls needs --cert and --key")

    servers = [Server((host, port), Handler)]
    port = servers[0].server_address[1]
    for h in also:
        servers.append(Server((h, port), Handler))
    control = Server((host, 0), Control)
    servers.append(control)

    # The stopping signals are blocked (the threads below inherit it) and
    # taken by the main thread with sigtimedwait, not by a handler: a
    # Python handler runs in the main thread between bytecodes, and one
    # that set stop_event while the main thread was inside
    # stop_event.wait() waited for ever for the Event's lock the main
    # thread held (a CI run's teardown waited 13 minutes for this exit).
    stop_signals = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)

    threads = []
    for s in servers:
        t = threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.1})
        t.daemon = True
        t.start()
        threads.append(t)
    if ready:
        tmp = ready + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d %d\n" % (port, control.server_address[1]))
        os.rename(tmp, ready)
    else:
        print("%d %d" % (port, control.server_address[1]), flush=True)
    while not stop_event.is_set():   # (set by the control's "quit")
        if signal.sigtimedwait(stop_signals, 0.2) is not None:
            break
    stop_event.set()
    for s in servers:
        s.shutdown()
        s.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
