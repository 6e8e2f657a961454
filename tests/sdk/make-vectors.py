#!/usr/bin/env python3
"""make-vectors.py: writes tests/sdk/vectors.json, the test vectors that the
C (libsvc-sdk), Node and Python signature helpers are all tested against.
Signatures are computed here with Python's hmac module, independently of
the service's signer (src/jobs/sign.c) and of the helpers under test.

    python3 tests/sdk/make-vectors.py > tests/sdk/vectors.json
"""
import hashlib
import hmac
import json

T = 1700000000
NEW = "whsec_Q5n3aU4sZ8bT2wX7kP1mR9vC6dJ0fH3e"
OLD = "whsec_L8p2cE6gN4qV1yB7tK3xM5zA9sD0rW2u"
BODY = ('{"event_id":"evt_9aZ3kQ","event":"job.completed","timestamp":'
        '"2023-11-14T22:13:20Z","data":{"job_id":"job_1","type":"bulk"}}')


def v1(secret, t, body):
    return hmac.new(secret.encode(), (str(t) + "." + body).encode(),
                    hashlib.sha256).hexdigest()


def header(t, *secrets, body=BODY):
    return "t=%s" % t + "".join(",v1=" + v1(s, t, body) for s in secrets)


def case(name, expected, hdr, secrets=(NEW,), body=BODY, now=T, tol=300):
    return {"name": name, "header": hdr, "body": body, "secrets": list(secrets),
            "now": now, "tolerance": tol, "expected": expected}


good = header(T, NEW)
vectors = [
    case("one secret, one signature", "ok", good),
    case("rotation: signed with new and old, receiver knows only the old",
         "ok", header(T, NEW, OLD), secrets=[OLD]),
    case("rotation: signed with new and old, receiver knows only the new",
         "ok", header(T, NEW, OLD), secrets=[NEW]),
    case("rotation: signed with the new only, receiver knows both",
         "ok", header(T, NEW), secrets=[OLD, NEW]),
    case("rotation: signed with the old only, receiver moved to the new",
         "no_matching_signature", header(T, OLD), secrets=[NEW]),
    case("wrong secret", "no_matching_signature", good, secrets=["whsec_other"]),
    case("no secrets", "no_matching_signature", good, secrets=[]),
    case("empty secret never matches", "no_matching_signature", good,
         secrets=[""]),
    case("body changed by one byte", "no_matching_signature", good,
         body=BODY.replace("job_1", "job_2")),
    case("timestamp changed in the header", "no_matching_signature",
         good.replace("t=%d" % T, "t=%d" % (T + 1), 1)),
    case("signature cut short", "no_matching_signature", good[:-1]),
    case("signature not hex", "no_matching_signature",
         good[:-1] + "g"),
    case("upper-case hex is the same signature", "ok",
         "t=%d,v1=%s" % (T, v1(NEW, T, BODY).upper())),
    case("tolerance edge: 300 s late", "ok", good, now=T + 300),
    case("tolerance edge: 301 s late", "timestamp_outside_tolerance", good,
         now=T + 301),
    case("tolerance edge: 300 s early", "ok", good, now=T - 300),
    case("tolerance edge: 301 s early", "timestamp_outside_tolerance", good,
         now=T - 301),
    case("tolerance 0, same second", "ok", good, tol=0),
    case("tolerance 0, one second off", "timestamp_outside_tolerance", good,
         now=T + 1, tol=0),
    case("a bad signature is reported before an old timestamp",
         "no_matching_signature", good, secrets=["whsec_other"], now=T + 9999),
    case("white space around the items", "ok",
         " t=%d , v1=%s " % (T, v1(NEW, T, BODY))),
    case("items in any order", "ok", "v1=%s,t=%d" % (v1(NEW, T, BODY), T)),
    case("an unknown scheme is ignored", "ok",
         "t=%d,v0=abc,v1=%s" % (T, v1(NEW, T, BODY))),
    case("empty body", "ok", header(T, NEW, body=""), body=""),
    case("UTF-8 body", "ok", header(T, NEW, body='{"name":"Liste \u00e9t\u00e9 \u2713"}'),
         body='{"name":"Liste \u00e9t\u00e9 \u2713"}'),
    case("leading zeros in t are signed as sent", "ok",
         "t=0%d,v1=%s" % (T, v1(NEW, "0%d" % T, BODY))),
    case("empty header", "bad_header", ""),
    case("not a signature header", "bad_header", "garbage"),
    case("no timestamp", "bad_header", "v1=" + v1(NEW, T, BODY)),
    case("no v1", "bad_header", "t=%d" % T),
    case("timestamp not a number", "bad_header",
         "t=12a,v1=" + v1(NEW, T, BODY)),
    case("negative timestamp", "bad_header",
         "t=-%d,v1=%s" % (T, v1(NEW, T, BODY))),
    case("empty timestamp", "bad_header", "t=,v1=" + v1(NEW, T, BODY)),
    case("timestamp of 19 digits", "bad_header",
         "t=1000000000000000000,v1=" + v1(NEW, T, BODY)),
    case("two timestamps", "bad_header",
         "t=%d,t=%d,v1=%s" % (T, T, v1(NEW, T, BODY))),
    case("an empty item", "bad_header", good + ","),
    case("an item without '='", "bad_header", good + ",v1"),
]

print(json.dumps({
    "about": "Signature test vectors for the svc webhook helpers "
             "(libsvc-sdk, contrib/sdk). Each vector: the "
             "X-Service-Signature header, the raw body (UTF-8), the "
             "receiver's secrets, the receiver's clock (now, Unix seconds), "
             "the tolerance in seconds and the expected result. Made by "
             "tests/sdk/make-vectors.py.",
    "vectors": vectors}, indent=1, ensure_ascii=False))
