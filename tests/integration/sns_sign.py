#!/usr/bin/env python3
"""sns_sign.py: an Amazon SNS HTTP(S) message as SNS posts it, signed the
way SNS signs (tests/integration/test_feedback_ses.sh): the fields AWS
documents for each Type, the text to sign ("Name\\nvalue\\n" for Message,
MessageId, Subject when given or SubscribeURL, Timestamp, Token for the
confirmations, TopicArn, Type) signed with openssl (SHA1withRSA for
SignatureVersion 1, SHA256withRSA for 2) by --key, base64 in Signature.
Prints the JSON body.

    sns_sign.py --key KEY --cert-url URL --topic ARN --id MESSAGE_ID
        [--type Notification|SubscriptionConfirmation|UnsubscribeConfirmation]
        [--version 1|2] [--message TEXT | --message-file FILE]
        [--subject S] [--subscribe-url URL] [--token T]
        [--tamper]   (changes Message after signing)
"""
import argparse
import base64
import json
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--key", required=True)
ap.add_argument("--cert-url", required=True)
ap.add_argument("--topic", required=True)
ap.add_argument("--id", required=True)
ap.add_argument("--type", default="Notification")
ap.add_argument("--version", default="1", choices=["1", "2"])
ap.add_argument("--message", default=None)
ap.add_argument("--message-file", default=None)
ap.add_argument("--subject", default=None)
ap.add_argument("--subscribe-url", default=None)
ap.add_argument("--token", default=None)
ap.add_argument("--timestamp", default="2026-11-29T10:00:00.123Z")
ap.add_argument("--tamper", action="store_true")
a = ap.parse_args()

message = a.message
if a.message_file:
    with open(a.message_file, encoding="utf-8") as f:
        message = json.dumps(json.load(f))     # as SES puts it: one line
if message is None:
    sys.exit("sns_sign.py: --message or --message-file")

m = {"Type": a.type, "MessageId": a.id, "TopicArn": a.topic}
if a.type == "Notification":
    if a.subject is not None:
        m["Subject"] = a.subject
    m["Message"] = message
    fields = ["Message", "MessageId", "Subject", "Timestamp", "TopicArn",
              "Type"]
else:
    m["Token"] = a.token or "2336412f37fb687f5d51e6e2425c464de12884a1"
    m["Message"] = message
    m["SubscribeURL"] = a.subscribe_url
    fields = ["Message", "MessageId", "SubscribeURL", "Timestamp", "Token",
              "TopicArn", "Type"]
m["Timestamp"] = a.timestamp
text = "".join("%s\n%s\n" % (k, m[k]) for k in fields if k in m)
digest = "-sha1" if a.version == "1" else "-sha256"
sig = subprocess.run(["openssl", "dgst", digest, "-sign", a.key],
                     input=text.encode("utf-8"), capture_output=True,
                     check=True).stdout
m["SignatureVersion"] = a.version
m["Signature"] = base64.b64encode(sig).decode()
m["SigningCertURL"] = a.cert_url
if a.type == "Notification":
    m["UnsubscribeURL"] = ("https://sns.us-east-1.amazonaws.com/?Action="
                           "Unsubscribe&SubscriptionArn=" + a.topic +
                           ":2bcfbf39-05c3-41de-beaa-fcfcc21c8f55")
if a.tamper:
    m["Message"] = m["Message"].replace("Permanent", "Transient") + " "
print(json.dumps(m, indent=2))
