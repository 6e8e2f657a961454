#!/usr/bin/env python3
"""job_client.py: a job timed as an API client sees it, for the benches.

  job_client.py BASE_URL API_KEY PATH BODY_FILE EVERY_MS TIMEOUT_S

POSTs BODY_FILE (JSON) to BASE_URL + PATH, then GETs /v1/jobs/{id}/progress
every EVERY_MS until the job has ended or TIMEOUT_S have passed since the
POST was sent. Prints "JOB id code t0 t1 total" (the POST sent and
answered, epoch seconds), "SAMPLE t processed status" per answer and
"DONE t status" at the end; "ERROR code body" (exit 1) when the POST is
refused. Python 3 standard library only.
"""
import json
import sys
import time
import urllib.error
import urllib.request

base, key, path, body, every, timeout = sys.argv[1:7]
every = int(every) / 1000.0
head = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
data = open(body, "rb").read()
t0 = time.time()
try:
    r = urllib.request.urlopen(urllib.request.Request(base + path, data=data, headers=head,
                                                      method="POST"), timeout=600)
    code, j = r.status, json.loads(r.read())
except urllib.error.HTTPError as e:
    print("ERROR %d %s" % (e.code, e.read()[:300]), flush=True)
    sys.exit(1)
t1 = time.time()
job = j.get("job_id") or j.get("id")
print("JOB %s %d %.6f %.6f %s" % (job, code, t0, t1, j.get("total_emails")), flush=True)
while time.time() - t0 < float(timeout):
    try:
        r = urllib.request.urlopen(urllib.request.Request(base + "/v1/jobs/%s/progress" % job,
                                                          headers=head), timeout=30)
        p = json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        time.sleep(every)
        continue
    now = time.time()
    print("SAMPLE %.6f %d %s" % (now, p.get("processed_emails") or 0, p.get("status")), flush=True)
    if p.get("status") in ("completed", "failed", "cancelled"):
        print("DONE %.6f %s" % (now, p.get("status")), flush=True)
        break
    time.sleep(every)
