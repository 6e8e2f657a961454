#!/usr/bin/env python3
"""ha_stream_check.py: what tests/integration/test_galera.sh asserts about
its stream of idempotent requests (single verifications and key
creations, each with an Idempotency-Key, each sent until two hosts have
answered it). DIR/log has a line per attempt, "T_US HOST KIND N STATUS"
(T_US: the microsecond the answer came), the body of attempt A of request
N in DIR/N.A.

    ha_stream_check.py DIR

Prints one
line of figures "key=value ..." and then one line per problem:
  - the answers to one Idempotency-Key that are final (2xx, or 4xx other
    than 409 idempotency_key_in_use) differ in their JSON (a key
    creation's replay leaves out the key's text: "key" and "key_shown" are
    not compared);
  - a request without a final answer, unless one of its attempts was cut
    (no HTTP answer: its host was killed) and the others were 409
    idempotency_key_in_use (the dead request's entry, taken over after
    IDEMPOTENCY_STALE_SECONDS);
  - a final answer other than 200 (verify) or 201 (key);
  - a 5xx other than 503 (what svc answers when it cannot reach a
    database that can answer).
Figures: requests, attempts, answers by status, verify_200 (single
verifications answered 200: the charges the ledger must hold), keys_201,
cut, in_use_left (requests cut and left running), verify_left (those of
them that are single verifications: each may have been charged, its
answer lost with its host), and the longest run of 5xx answers: from the first 5xx
of a run to the first answer after it that is not 5xx (attempts without an
answer do not end a run), in ms, as max_5xx_run_ms."""
import json
import os
import sys


def canon(path, kind):
    try:
        with open(path, "rb") as f:
            o = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if kind == "key" and isinstance(o, dict):
        o.pop("key", None)
        o.pop("key_shown", None)
    return json.dumps(o, sort_keys=True)


def main():
    d = sys.argv[1]
    rows = []
    with open(os.path.join(d, "log")) as f:
        for line in f:
            p = line.split()
            if len(p) != 5:
                continue
            rows.append((int(p[0]), p[1], p[2], p[3], p[4]))
    rows.sort()
    reqs = {}
    by_status = {}
    attempt_no = {}
    problems = []
    run_start = None
    max_run = 0
    for t, host, kind, n, status in rows:
        attempt_no[n] = attempt_no.get(n, 0) + 1
        a = attempt_no[n]
        by_status[status] = by_status.get(status, 0) + 1
        r = reqs.setdefault(n, {"kind": kind, "final": [], "cut": 0, "in_use": 0})
        if status == "000":
            r["cut"] += 1
            continue
        if status.startswith("5"):
            if status != "503":
                problems.append("request %s (%s): %s from host %s (%s/%s.%d): a 5xx other than 503"
                                % (n, kind, status, host, d, n, a))
            if run_start is None:
                run_start = t
            continue
        if run_start is not None:
            max_run = max(max_run, t - run_start)
            run_start = None
        body = canon(os.path.join(d, "%s.%d" % (n, a)), kind)
        if status == "409" and body and "idempotency_key_in_use" in body:
            r["in_use"] += 1
            continue
        r["final"].append((status, body, host))
    if run_start is not None and rows:
        max_run = max(max_run, rows[-1][0] - run_start)
        problems.append("the stream ended in a run of 5xx answers")
    verify_200 = keys_201 = cut = in_use_left = verify_left = 0
    for n, r in sorted(reqs.items()):
        want = "200" if r["kind"] == "verify" else "201"
        if r["cut"]:
            cut += 1
        if not r["final"]:
            if r["cut"] and r["in_use"]:
                in_use_left += 1
                if r["kind"] == "verify":
                    verify_left += 1
            else:
                problems.append("request %s (%s): no final answer (cut %d, 409 in use %d)"
                                % (n, r["kind"], r["cut"], r["in_use"]))
            continue
        if r["in_use"] and not r["cut"]:
            problems.append("request %s (%s): 409 idempotency_key_in_use without a cut attempt"
                            % (n, r["kind"]))
        statuses = {s for s, _, _ in r["final"]}
        bodies = {b for _, b, _ in r["final"]}
        if statuses != {want}:
            problems.append("request %s (%s): final answers %s, not %s"
                            % (n, r["kind"], ",".join(sorted(statuses)), want))
        elif len(bodies) != 1 or None in bodies:
            problems.append("request %s (%s): %d different bodies: %s"
                            % (n, r["kind"], len(bodies),
                               " | ".join(str(b)[:160] for b in bodies)))
        elif r["kind"] == "verify":
            verify_200 += 1
        else:
            keys_201 += 1
    print("requests=%d attempts=%d answers=%s verify_200=%d keys_201=%d cut=%d in_use_left=%d verify_left=%d max_5xx_run_ms=%d"
          % (len(reqs), sum(by_status.values()),
             ",".join("%s:%d" % kv for kv in sorted(by_status.items())),
             verify_200, keys_201, cut, in_use_left, verify_left, max_run // 1000))
    for p in problems[:20]:
        print(p)
    if len(problems) > 20:
        print("... and %d more" % (len(problems) - 20))
    return 0


if __name__ == "__main__":
    sys.exit(main())
