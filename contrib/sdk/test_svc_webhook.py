"""test_svc_webhook.py: the Python helper against the shared vectors
(tests/sdk/vectors.json, or $SVC_SDK_VECTORS) and a few cases of its own
(bytes bodies, one secret as a str, the default clock).
Run: python3 -m unittest discover -s contrib/sdk -p 'test_*.py'
"""
import hashlib
import hmac
import json
import os
import time
import unittest

import svc_webhook

VECTORS = os.environ.get("SVC_SDK_VECTORS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "sdk",
    "vectors.json")


def sign(secret, t, body):
    return hmac.new(secret.encode(), t.encode() + b"." + body,
                    hashlib.sha256).hexdigest()


class SharedVectors(unittest.TestCase):
    def test_every_vector(self):
        with open(VECTORS, encoding="utf-8") as f:
            vectors = json.load(f)["vectors"]
        self.assertGreaterEqual(len(vectors), 30)
        for v in vectors:
            with self.subTest(v["name"]):
                self.assertEqual(
                    svc_webhook.verify(v["header"], v["body"], v["secrets"],
                                       tolerance=v["tolerance"], now=v["now"]),
                    v["expected"])


class OwnCases(unittest.TestCase):
    def test_bytes_body_with_nul_and_one_secret_as_str(self):
        body = b"{\x00}"
        header = "t=5,v1=" + sign("k", "5", body)
        self.assertEqual(svc_webhook.verify(header, body, "k", now=5),
                         svc_webhook.OK)
        self.assertEqual(svc_webhook.verify(header, body[:2], "k", now=5),
                         svc_webhook.NO_MATCH)

    def test_default_clock_and_tolerance(self):
        t = str(int(time.time()) - 200)
        self.assertEqual(svc_webhook.verify(
            "t=%s,v1=%s" % (t, sign("k", t, b"x")), b"x", ["k"]),
            svc_webhook.OK)
        old = str(int(time.time()) - 400)
        self.assertEqual(svc_webhook.verify(
            "t=%s,v1=%s" % (old, sign("k", old, b"x")), b"x", ["k"]),
            svc_webhook.TIMESTAMP)

    def test_no_header_or_no_secret_is_never_ok(self):
        self.assertEqual(svc_webhook.verify(None, b"x", ["k"]),
                         svc_webhook.BAD_HEADER)
        self.assertEqual(svc_webhook.verify(
            "t=5,v1=" + sign("k", "5", b"x"), b"x", None, now=5),
            svc_webhook.NO_MATCH)


if __name__ == "__main__":
    unittest.main()
