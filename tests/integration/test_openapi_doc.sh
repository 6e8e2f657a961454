#!/bin/sh
# test_openapi_doc.sh: src/api/openapi.yaml is a sound OpenAPI 3.1 document
# (every schema a valid JSON Schema 2020-12, every $ref resolved, operationIds
# unique), every route of src/api/router.c is in it and every operation in it
# is routed, and the openapi.json built from it is current. Needs no server:
# runs offline (python3-jsonschema; 77 when missing).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
doc=$top_srcdir/src/api/openapi.json
if ! python3 -c 'import jsonschema' 2>/dev/null; then
    echo "SKIP: test_openapi_doc: python3-jsonschema is not installed (run contrib/install-deps)"
    [ "${SVC_TEST_NO_SKIP:-0}" = 1 ] && exit 1
    exit 77
fi
fail=0
if ROUTER=$top_srcdir/src/api/router.c python3 "$top_srcdir/tests/integration/openapi_check.py" --doc "$doc"; then
    echo "ok 1 - openapi.yaml is sound and documents exactly the routes of router.c"
else
    echo "not ok 1 - openapi.yaml is sound and documents exactly the routes of router.c"; fail=1
fi
# the JSON is made from the YAML (a tarball has no need of python3-yaml)
if python3 -c 'import yaml' 2>/dev/null; then
    if python3 -c 'import json, sys, yaml
sys.exit(0 if yaml.safe_load(open(sys.argv[1], encoding="utf-8")) ==
    json.load(open(sys.argv[2], encoding="utf-8")) else 1)' \
        "$top_srcdir/src/api/openapi.yaml" "$doc"; then
        echo "ok 2 - openapi.json is current with openapi.yaml"
    else
        echo "not ok 2 - openapi.json is current with openapi.yaml (run make)"; fail=1
    fi
else
    echo "ok 2 - openapi.json is current with openapi.yaml # SKIP no python3-yaml"
fi
[ $fail = 0 ] && echo "2 passed, 0 failed" || echo "failed"
exit $fail
