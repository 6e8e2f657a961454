#!/bin/bash
# test_fair_share.sh: one tenant cannot make the others' uploads wait
# (issue 25 item 3), through lighttpd, svc-api and the real svc-worker.
# The ingestion thread takes uploads, previews and preview refreshes round
# robin across accounts (the account whose turn was longest ago first):
# an account with several uploads queued does not hold up another
# account's single one, and a ?refresh=true on an old job waits for its
# account's turn, not ahead of other accounts' uploads by the job's age,
# and within its account counts from when it was asked for.
# svc-worker --once takes turns between uploads and
# verification: a job waiting for verification is verified after the
# first upload of the run, not after all of them. Orders are read from
# the worker's log lines (event=ingest_claimed, event=chunk_claimed), in
# one single-threaded --once run each, never from timings.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
it_require python3 curl jq
it_conf_add "worker_poll_interval = 1
dns_resolver = 127.0.0.1:9"
it_stack_start

SB=sandbox.svc.example
F=$IT_DIR/files
mkdir -p "$F"
for i in 1 2 3 4 5 6; do
    printf 'email\naccepted_email@%s\nrejected_email@%s\n' "$SB" "$SB" > "$F/list$i.csv"
done

# account: an account with a key (ACC, KEY)
account() {
    ACC=$(it_account pro 100000)
    KEY=$(it_key "$ACC" '*')
}

# upload KEY FILE [curl -F arguments...]: a multipart upload; JOB
upload() {
    local key=$1 file=$2
    shift 2
    API_KEY=$key http POST /v1/verify/bulk/upload "" -F "file=@$file" "$@"
    expect_status 202 || return 1
    JOB=$(json .job_id)
}

# mark: the worker log's length now (MARK), for claims
mark() { MARK=$(wc -l < "$IT_DIR/log/svc.log"); }

# claims EVENT JOB...: the order in which the worker's log names these
# jobs on EVENT lines since mark, as the jobs' 1-based places in the
# argument list
claims() {
    local event=$1 j k n out=
    shift
    for j in $(tail -n +$((MARK + 1)) "$IT_DIR/log/svc.log" | sed -n "s/.*event=$event job=\([^ ]*\).*/\1/p" | awk '!seen[$0]++'); do
        n=1
        for k in "$@"; do
            [ "$j" = "$k" ] && out="$out $n"
            n=$((n + 1))
        done
    done
    echo "${out# }"
}

t_round_robin() {
    local a b a1 a2 a3 b1
    account; a=$KEY
    account; b=$KEY
    # A queues three uploads, then B one
    upload "$a" "$F/list1.csv" && a1=$JOB || return 1
    upload "$a" "$F/list2.csv" && a2=$JOB || return 1
    upload "$a" "$F/list3.csv" && a3=$JOB || return 1
    upload "$b" "$F/list4.csv" && b1=$JOB || return 1
    mark
    it_worker_once || return 1
    # B's upload is taken right after A's first, before A's second
    expect_eq "order of the claims (A1 A2 A3 B1 = 1 2 3 4)" "1 4 2 3" \
        "$(claims ingest_claimed "$a1" "$a2" "$a3" "$b1")" || return 1
    for j in "$a1" "$a2" "$a3" "$b1"; do
        expect_eq "status of $j" 1 "$(it_sql "SELECT status IN ('pending', 'processing', 'completed') FROM jobs WHERE id = '$j'")" || return 1
    done
}
t_case "uploads are ingested round robin across accounts: another account's single upload before the first account's second" t_round_robin

t_refresh_waits_its_turn() {
    local a b p a2 b1 b2
    account; a=$KEY
    account; b=$KEY
    # an old preview job of A, computed
    upload "$a" "$F/list5.csv" -F preview=true && p=$JOB || return 1
    it_job_wait "$p" awaiting_confirmation || return 1
    # B's uploads are queued, then a new upload of A, then A asks for a
    # refresh of its old job
    upload "$b" "$F/list6.csv" && b1=$JOB || return 1
    upload "$b" "$F/list1.csv" && b2=$JOB || return 1
    upload "$a" "$F/list4.csv" && a2=$JOB || return 1
    API_KEY=$a http POST "/v1/verify/bulk/$p/preview?refresh=true" "" --data ""
    expect_status 202 && expect_json .refreshing true || return 1
    mark
    it_worker_once || return 1
    # B never had a turn: its first upload goes first; then A's turn
    # (longer ago than B's): A's upload, queued before the refresh was
    # asked for (the refresh counts from then, not from the old job's
    # creation); then B's second upload; then the refresh
    expect_eq "order of the claims (B1 B2 A2 refresh = 1 2 3 4)" "1 3 2 4" \
        "$(claims ingest_claimed "$b1" "$b2" "$a2" "$p")" || return 1
    expect_eq "refresh flag" 0 "$(it_sql "SELECT preview_refresh FROM jobs WHERE id = '$p'")"
}
t_case "a ?refresh=true on an old job waits for its account's turn, not ahead of other accounts' uploads by the job's age" t_refresh_waits_its_turn

t_once_takes_turns() {
    local a b c u1 u2 bulk
    account; a=$KEY
    account; b=$KEY
    account; c=$KEY
    # a bulk job waiting for verification, and two uploads of other
    # accounts queued behind it
    API_KEY=$a http POST /v1/verify/bulk "{\"emails\":[\"accepted_email@$SB\",\"rejected_email@$SB\"]}"
    expect_status 202 || return 1
    bulk=$(json .job_id)
    upload "$b" "$F/list2.csv" && u1=$JOB || return 1
    upload "$c" "$F/list3.csv" && u2=$JOB || return 1
    mark
    it_worker_once || return 1
    # one upload, then verification (the bulk job and that upload, in
    # either order), then the next upload
    local order
    order=$(tail -n +$((MARK + 1)) "$IT_DIR/log/svc.log" | sed -n "s/.*event=\(ingest_claimed\|chunk_claimed\) job=\([^ ]*\) .*/\1:\2/p" |
        sed "s/:$bulk\$/:bulk/; s/:$u1\$/:u1/; s/:$u2\$/:u2/" | grep -E ':(bulk|u1|u2)$' | awk '!seen[$0]++' | paste -sd' ')
    it_log "the run's order: $order"
    case " $order " in
        " ingest_claimed:u1 chunk_claimed:bulk chunk_claimed:u1 ingest_claimed:u2 chunk_claimed:u2 " | \
        " ingest_claimed:u1 chunk_claimed:u1 chunk_claimed:bulk ingest_claimed:u2 chunk_claimed:u2 ") ;;
        *) it_fail "the run's order: $order"; return 1 ;;
    esac
    expect_eq "the bulk job" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$bulk'")"
}
t_case "svc-worker --once takes turns: one upload, then the verification waiting, then the next upload" t_once_takes_turns

t_done
