#!/usr/bin/env python3
"""openapi_check.py: holds the answers an integration script received against
src/api/openapi.yaml (as the built openapi.json), so that the document cannot
drift from the code.

  openapi_check.py DOC.json RECORD     every recorded answer (lib.sh's http)
  openapi_check.py --doc DOC.json      the document alone

RECORD has one line per answer: METHOD<TAB>PATH<TAB>STATUS<TAB>BODY<TAB>HEADERS
(files). For each answer to a path of the API (/v1/..., /rate-limit): the
operation is found by path template; its status must be declared; a body is
checked against the declared media type and, for JSON, against the schema
(JSON Schema 2020-12, python3-jsonschema); the headers the response declares
as required must be there. A /v1 path that no template matches must be one
of UNROUTED. An answer without X-Request-Id came from the web server in
front (431 for huge headers...), not svc-api, and is counted apart. Prints one line per failure naming the request; exit 1
on any. The document check: every schema is a valid 2020-12 schema, every
$ref resolves, operationIds are unique, every route of src/api/router.c is
documented and every documented operation is routed (ROUTER=path/router.c).
"""
import json
import os
import re
import sys

import jsonschema

SCHEMA_KEYS = {"schema"}
# what a path without an operation may answer: the checks in front of
# every route run first (router.c), then 404 or 405
UNROUTED = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
            405: "MethodNotAllowed", 429: "RateLimited",
            500: "InternalError", 503: "Unavailable"}


def pointer(doc, ref):
    if not ref.startswith("#/"):
        raise KeyError(ref)
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[part]
    return node


def deref(doc, node):
    while isinstance(node, dict) and "$ref" in node:
        node = pointer(doc, node["$ref"])
    return node


def template_re(path):
    return re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+",
                                   re.escape(path)) + "$")


class Checker:
    def __init__(self, doc):
        self.doc = doc
        self.paths = [(template_re(p), p) for p in doc["paths"]]
        # literal templates first (/v1/verify/bulk/upload before {job_id})
        self.paths.sort(key=lambda t: t[1].count("{"))
        self.validators = {}

    def validator(self, where):
        """A validator for the schema at JSON pointer `where`: the document
        itself is the root schema, so that every #/components ref
        resolves without a resolver (works with jsonschema 4.10 and
        later); its other keys are not schema keywords."""
        if where not in self.validators:
            root = dict(self.doc)
            root["$ref"] = where
            self.validators[where] = jsonschema.Draft202012Validator(
                root, format_checker=None)
        return self.validators[where]

    def operation(self, method, path):
        for rx, tmpl in self.paths:
            if rx.match(path):
                item = self.doc["paths"][tmpl]
                return tmpl, item.get(method.lower()), item
        return None, None, None

    def check(self, method, path, status, body, headers):
        """Failures of one answer, as a list of strings."""
        path = path.split("?", 1)[0]
        if not (path.startswith("/v1/") or path == "/rate-limit"):
            return []       # not the API (the dashboard, a proxy prefix)
        if "x-request-id" not in headers:
            return None     # the web server answered, not svc-api
        tmpl, op, item = self.operation(method, path)
        if op is None:
            key = UNROUTED.get(status)
            if key is None:
                what = "no operation" if tmpl is None else \
                    "no %s operation on %s" % (method, tmpl)
                return ["%s, answered %d (possible: %s)" % (what, status,
                        ", ".join(str(k) for k in sorted(UNROUTED)))]
            resp_ref = "#/components/responses/" + key
        else:
            responses = op.get("responses", {})
            code = str(status)
            if code not in responses:
                code = code[0] + "XX"
            if code not in responses:
                return ["status %d is not declared for %s %s (declared: %s)"
                        % (status, method, tmpl, ", ".join(sorted(responses)))]
            resp_ref = "#/paths/%s/%s/responses/%s" % (
                tmpl.replace("~", "~0").replace("/", "~1"), method.lower(),
                code)
        resp = pointer(self.doc, resp_ref)
        while "$ref" in resp:
            resp_ref = resp["$ref"]
            resp = pointer(self.doc, resp_ref)
        fails = []
        for name, h in (resp.get("headers") or {}).items():
            h = deref(self.doc, h)
            if h.get("required") and name.lower() not in headers:
                fails.append("header %s is missing" % name)
        ctype = headers.get("content-type", "").split(";")[0].strip().lower()
        content = resp.get("content") or {}
        if not body:
            if content and status != 204:
                fails.append("empty body, %s declared" % ", ".join(content))
            return fails
        if ctype not in content:
            fails.append("content type %r is not declared (declared: %s)"
                         % (ctype, ", ".join(content) or "none"))
            return fails
        if ctype != "application/json":
            return fails
        try:
            value = json.loads(body)
        except ValueError as e:
            return fails + ["body is not JSON (%s)" % e]
        where = "%s/content/application~1json/schema" % resp_ref
        errs = sorted(self.validator(where).iter_errors(value),
                      key=lambda e: list(e.absolute_path))
        for e in errs[:5]:
            at = "/".join(str(p) for p in e.absolute_path) or "(body)"
            fails.append("body at %s: %s" % (at, e.message[:300]))
        return fails


def read_headers(fname):
    out = {}
    try:
        with open(fname, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return out
    # the last header block (after a 100 Continue)
    block = re.split(r"\r?\n\r?\n(?=HTTP/)", text.strip())[-1]
    for line in block.splitlines()[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            out.setdefault(k.strip().lower(), v.strip())
    return out


def check_record(doc, record):
    c = Checker(doc)
    n = bad = front = 0
    with open(record, encoding="utf-8") as f:
        for line in f:
            method, path, status, body_f, head_f = \
                line.rstrip("\n").split("\t")
            n += 1
            try:
                with open(body_f, "rb") as b:
                    body = b.read().decode("utf-8", "replace")
            except OSError:
                body = ""
            msgs = c.check(method, path, int(status), body,
                           read_headers(head_f))
            if msgs is None:
                front += 1
                continue
            for msg in msgs:
                bad += 1
                print("%s %s -> %s: %s" % (method, path, status, msg))
    print("# openapi: %d answers checked (%d from the web server itself, "
          "without X-Request-Id, not held to the document), %d problems"
          % (n - front, front, bad))
    return bad == 0


def refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            else:
                yield from refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from refs(v)


def schemas(node, path=""):
    """Every Schema Object of the document (under a "schema" key or in
    components/schemas), with where it is."""
    if isinstance(node, dict):
        for k, v in node.items():
            p = path + "/" + k
            if k in SCHEMA_KEYS and isinstance(v, dict):
                yield p, v
            elif path == "/components/schemas" and isinstance(v, dict):
                yield p, v
            else:
                yield from schemas(v, p)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from schemas(v, "%s/%d" % (path, i))


def router_routes(fname):
    text = open(fname, encoding="utf-8").read()
    return {(m, p.replace("{}", "{}")) for m, p in re.findall(
        r'\{ HTTP_([A-Z]+), "([^"]+)"', text)}


def check_doc(doc, router):
    fails = []
    if not str(doc.get("openapi", "")).startswith("3.1."):
        fails.append("openapi is not 3.1.x")
    for r in refs(doc):
        try:
            pointer(doc, r)
        except (KeyError, IndexError, TypeError):
            fails.append("unresolved $ref %s" % r)
    for where, s in schemas(doc):
        try:
            jsonschema.Draft202012Validator.check_schema(s)
        except jsonschema.SchemaError as e:
            fails.append("schema at %s: %s" % (where, e.message))
    ids = {}
    documented = set()
    for p, item in doc["paths"].items():
        for m, op in item.items():
            if m not in ("get", "post", "put", "patch", "delete"):
                continue
            documented.add((m.upper(), re.sub(r"\{[^}]+\}", "{}", p)))
            oid = op.get("operationId")
            if oid in ids:
                fails.append("operationId %s used twice" % oid)
            ids[oid] = p
            if not op.get("responses"):
                fails.append("%s %s has no responses" % (m, p))
    if router:
        routed = router_routes(router)
        for m, p in sorted(routed - documented):
            fails.append("%s %s is routed (router.c) but not documented"
                         % (m, p))
        for m, p in sorted(documented - routed):
            fails.append("%s %s is documented but not routed" % (m, p))
    for f in fails:
        print("openapi document: " + f)
    return not fails


def main(argv):
    if len(argv) == 3 and argv[1] == "--doc":
        with open(argv[2], encoding="utf-8") as f:
            doc = json.load(f)
        return 0 if check_doc(doc, os.environ.get("ROUTER")) else 1
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    return 0 if check_record(doc, argv[2]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
