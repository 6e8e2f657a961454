"""svc_webhook.py: checks the signature of a webhook or callback delivery
from svc, for receivers written in Python (standard library only). It
behaves exactly like libsvc-sdk's svc_webhook_verify (svc_webhook_verify(3))
and the Node helper; all three pass tests/sdk/vectors.json.

    import svc_webhook
    # body: the raw request body as received (bytes), before any parsing
    result = svc_webhook.verify(headers["X-Service-Signature"], body,
                                [os.environ["SVC_WEBHOOK_SECRET"]])
    if result != svc_webhook.OK:
        return 400, result

The header is "t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=...]": one v1 per
secret that signs (two while a secret is being rotated). Each v1 is
HMAC-SHA256(secret, "<t>.<raw body>"). Results: "ok", "bad_header",
"no_matching_signature", "timestamp_outside_tolerance". De-duplicate
deliveries on the body's event_id: a delivery may come more than once.
"""
import hashlib
import hmac
import re
import time

HEADER = "X-Service-Signature"
ID_HEADER = "X-Webhook-ID"
TOLERANCE = 300

OK = "ok"
BAD_HEADER = "bad_header"
NO_MATCH = "no_matching_signature"
TIMESTAMP = "timestamp_outside_tolerance"

_HEADER_MAX = 8192
_T_DIGITS = 18
_V1_MAX = 16
_DIGITS = re.compile(r"[0-9]+\Z")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}\Z")


def _parse(header):
    """(t as sent, [32-byte signatures or None]) or None."""
    if not isinstance(header, str) or not header or \
            len(header.encode("utf-8")) > _HEADER_MAX:
        return None
    t = None
    v1 = []
    for raw in header.split(","):
        item = raw.strip(" \t")
        eq = item.find("=")
        if eq <= 0:
            return None
        name, value = item[:eq], item[eq + 1:]
        if name == "t":
            if t is not None or not _DIGITS.match(value) or \
                    len(value) > _T_DIGITS:
                return None
            t = value
        elif name == "v1":
            if len(v1) < _V1_MAX:
                v1.append(bytes.fromhex(value) if _HEX64.match(value)
                          else None)
    if t is None or not v1:
        return None
    return t, v1


def _signed_by(sig, secret, body):
    t, v1 = sig
    if not isinstance(secret, str) or not secret:
        return False
    mac = hmac.new(secret.encode("utf-8"), t.encode("ascii") + b"." + body,
                   hashlib.sha256).digest()
    match = False
    for v in v1:
        if v is not None and hmac.compare_digest(mac, v):
            match = True
    return match


def verify(header, body, secrets, tolerance=TOLERANCE, now=None):
    """Checks a delivery: header is the X-Service-Signature value, body the
    raw body (bytes, or str taken as UTF-8), secrets a str or a list of
    them, now the receiver's clock in Unix seconds (default: time.time())."""
    sig = _parse(header)
    if sig is None:
        return BAD_HEADER
    if secrets is None:
        secrets = []
    elif isinstance(secrets, str):
        secrets = [secrets]
    if isinstance(body, str):
        body = body.encode("utf-8")
    elif body is None:
        body = b""
    match = False
    for s in secrets:
        if _signed_by(sig, s, bytes(body)):
            match = True
    if not match:
        return NO_MATCH
    tolerance = max(0, int(tolerance))
    if now is None:
        now = time.time()
    return OK if abs(int(now) - int(sig[0])) <= tolerance else TIMESTAMP
