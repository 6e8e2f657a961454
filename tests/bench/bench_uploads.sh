#!/bin/bash
# bench_uploads.sh: a 50 MB CSV from upload to its preview (make
# bench-uploads), as a user sees it: the time from the start of
# POST /v1/verify/bulk/upload (curl -F, through lighttpd) until
# GET /v1/jobs/{id} says awaiting_confirmation with its preview, with cold
# caches (a fresh MariaDB, an empty DNS cache, unbound answering a
# generated zone), svc-worker running as a daemon (worker_poll_interval 1);
# and the peak memory (VmHWM) of the svc-api responder that took the
# upload and of svc-worker.
#
# The file: BENCH_UPLOADS_ROWS (1,500,000) rows "email,name" of
# BENCH_UPLOADS_UNIQUE (500,000) unique addresses over
# BENCH_UPLOADS_DOMAINS (2,000) domains of the generated zone, each
# address three times in a case of its own (so de-duplication works on the
# normal form), shuffled; about 50 MB. Every domain's MX is one fake SMTP
# server on loopback (tests/smtp/fake_smtp.py, STARTTLS offered,
# PIPELINING, user* accepted, others 550), so the preview's SMTP sample of
# 200 is answered for real. Goals (issue 12): under 15 s, responder under
# 64 MB, worker under 256 MB; the preview must count every row.
#
# top_builddir names the build (point it at an -O2 build without
# sanitizers for figures, tests/bench/README). Exit status: 0 all held, 1 a
# goal or check failed, 77 missing tools or programs.
export STACK_DB_BUFFER_POOL=${STACK_DB_BUFFER_POOL:-256M} STACK_DB_LOG_FILE=${STACK_DB_LOG_FILE:-128M}
. "${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
it_require unbound drill python3 certtool awk curl

ROWS=${BENCH_UPLOADS_ROWS:-1500000}
UNIQUE=${BENCH_UPLOADS_UNIQUE:-500000}
NDOM=${BENCH_UPLOADS_DOMAINS:-2000}
GOAL_S=${BENCH_UPLOADS_GOAL_SECONDS:-15}
API_RSS_KB=$(( 64 * 1024 ))
WORKER_RSS_KB=$(( 256 * 1024 ))
WORKER=$top_builddir/src/worker/svc-worker
API=$top_builddir/src/api/svc-api
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
[ -x "$WORKER" ] && [ -x "$API" ] || it_skip "svc-worker and svc-api must be built"
bench_init bench-uploads "$WORKER" "$API"

# ------------------------------------------------------------- the world
mail_env_certs mx.u.test "*.u.test" u.test
SMTP_PORT=$(stack_free_port)
fake 127.0.0.40 --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" \
    starttls=offered pipelining=1 flight_delay_ms=20
mkdir -p "$IT_DIR/dns"
{
    echo '$ORIGIN u.test.'
    echo '$TTL 3600'
    echo '@ 3600 IN SOA ns.u.test. hostmaster.u.test. 1 3600 600 86400 3600'
    echo '@ 3600 IN NS ns.u.test.'
    echo 'ns 3600 IN A 127.0.0.1'
    echo 'mx 3600 IN A 127.0.0.40'
    awk -v n="$NDOM" 'BEGIN { for (i = 0; i < n; i++) {
        printf "d%04d 3600 IN MX 10 mx.u.test.\n", i
        printf "d%04d 3600 IN A 192.0.2.1\n", i } }'
} > "$IT_DIR/dns/u.test.zone"
mail_env_dns "$IT_DIR/dns/u.test.zone"
mail_env_lists
mail_env_conf dns_timeout_ms=2000 smtp_connect_timeout_ms=5000 smtp_reply_timeout_ms=10000
it_conf_add "ca_file = $IT_DIR/tls/ca.pem
worker_poll_interval = 1"
IT_LOG_LEVEL=${BENCH_UPLOADS_LOG_LEVEL:-info}
IT_SVC_API=$API
it_stack_start
ACC=$(svcadm account create --email bench-uploads@bench.example --tier admin --credits 100000000)
API_KEY=$(svcadm key create --account "$ACC" --scopes '*' --rate-limit 100000)

# ------------------------------------------------------------- the file
"$PYTHON" - "$IT_DIR/list.csv" "$ROWS" "$UNIQUE" "$NDOM" <<'EOF'
import random, sys
path, rows, unique, ndom = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rnd = random.Random(12)
order = list(range(rows))
rnd.shuffle(order)
with open(path, "w", newline="") as f:
    f.write("email,name\r\n")
    for n, k in enumerate(order):
        u = k % unique
        local = ("user%d" if u % 2 == 0 else "nobody%d") % u
        email = "%s@d%04d.u.test" % (local, u % ndom)
        if k // unique == 1:
            email = email.upper()
        elif k // unique >= 2:
            email = email.capitalize()
        f.write("%s,P%d\r\n" % (email, n))
EOF
SIZE=$(stat -c %s "$IT_DIR/list.csv")
say "file: $ROWS rows, $UNIQUE unique addresses over $NDOM domains, $SIZE bytes; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ------------------------------------------------------------- the run
stack_proc_start "$IT_DIR/worker" svc-worker "$WORKER" -c "$SVC_CONF" || { echo "Bail out! svc-worker"; exit 1; }
WPID=$(stack_pidfile_pid "$IT_DIR/worker/svc-worker.pid")
t0=$(date +%s.%N)
http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/list.csv" -F preview=true -F name=bench
t_upload=$(date +%s.%N)
[ "$HTTP_STATUS" = 202 ] || { bad "upload: $HTTP_STATUS $(it_body_excerpt)"; exit 1; }
JOB=$(json .job_id)
# the responder that took it (its request line names the job)
APID=$(grep "event=upload_accepted .*job=$JOB" "$IT_DIR/log/svc.log" | sed -n 's/.*svc-api\[\([0-9]*\)\].*/\1/p' | head -n 1)
status=
while :; do
    http GET "/v1/jobs/$JOB"
    status=$(json .status)
    case $status in awaiting_confirmation|failed|cancelled) break ;; esac
    [ "$(echo "$t0 $(date +%s.%N)" | awk '{ print ($2 - $1 > 600) }')" = 1 ] && break
    sleep 0.1
done
t_done=$(date +%s.%N)
API_HWM=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$APID/status" 2>/dev/null)
WORKER_HWM=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$WPID/status" 2>/dev/null)
stack_proc_stop "$IT_DIR/worker" svc-worker
[ "$status" = awaiting_confirmation ] || { bad "the job is $status: $(it_body_excerpt)"; it_show_logs; exit 1; }
secs=$(echo "$t0 $t_done" | awk '{ printf "%.2f", $2 - $1 }')
up=$(echo "$t0 $t_upload" | awk '{ printf "%.2f", $2 - $1 }')
say "upload answered in ${up} s; awaiting_confirmation with its preview ${secs} s after the upload began"
grep -E "event=(ingest_started|ingest_done|preview_computed|preview_ready) .*$JOB|event=preview_computed" "$IT_DIR/log/svc.log" |
    sed 's/^/bench-uploads:   /' | tail -n 4
say "peak memory: svc-api responder ${API_HWM:-?} kB, svc-worker ${WORKER_HWM:-?} kB"
printf '%s' "$HTTP_BODY" | jq -c '.preview | {total_emails, duplicates_removed, free_checks, smtp_sample: (.smtp_sample | {size, counts}), estimated_counts, confidence}' |
    sed 's/^/bench-uploads: preview /'

# ------------------------------------------------------------- checks
[ "$(json .preview.total_emails)" = "$UNIQUE" ] || bad "preview total_emails $(json .preview.total_emails), not $UNIQUE"
[ "$(json .preview.duplicates_removed)" = "$(( ROWS - UNIQUE ))" ] || bad "duplicates_removed $(json .preview.duplicates_removed)"
[ "$(json '.preview.free_checks | .resolved_without_smtp + .needs_smtp')" = "$UNIQUE" ] || bad "free checks do not add up"
[ "$(json .preview.smtp_sample.size)" = 200 ] || bad "sample size $(json .preview.smtp_sample.size)"
# every sampled address answered (accepted or rejected by the fake server):
# the published counts are rounded down to multiples of 5 and the unknown
# share takes what the rounding left (jobs/preview.h), so with the two
# classes answered here it shows at most 4 + 4 = 8 that no probe left
# unknown (seen: 98 accepted and 102 rejected published as 95, 100 and 5
# unknown)
[ "$(json '.preview.smtp_sample.counts | .valid + .invalid + .unknown')" = 200 ] &&
    [ "$(json .preview.smtp_sample.counts.unknown)" -le 8 ] ||
    bad "the sample was not all answered: $(json .preview.smtp_sample.counts | tr -d ' \n')"
awk -v s="$secs" -v g="$GOAL_S" 'BEGIN { exit !(s < g) }' && say "GOAL MET: ${secs} s (goal under ${GOAL_S} s)" || bad "${secs} s, goal under ${GOAL_S} s"
[ -n "$API_HWM" ] && [ "$API_HWM" -lt "$API_RSS_KB" ] && say "GOAL MET: responder ${API_HWM} kB (goal under $API_RSS_KB kB)" ||
    bad "responder peak ${API_HWM:-?} kB, goal under $API_RSS_KB kB"
[ -n "$WORKER_HWM" ] && [ "$WORKER_HWM" -lt "$WORKER_RSS_KB" ] && say "GOAL MET: worker ${WORKER_HWM} kB (goal under $WORKER_RSS_KB kB)" ||
    bad "worker peak ${WORKER_HWM:-?} kB, goal under $WORKER_RSS_KB kB"
exit $FAILED
