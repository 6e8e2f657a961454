#!/bin/bash
# test_feedback_ses.sh: Amazon SES outcomes through SNS at
# /v1/feedback/ses. The test's own DNS zone us-east-1.amazonaws.com (unbound,
# the resolver svc is told to use) points sns.us-east-1.amazonaws.com at
# 127.0.0.1, where an HTTPS file server (a certificate for that name from a
# test CA that svc trusts by ca_file, as test_source_url.sh does) serves the
# SNS signing certificate and answers the SubscribeURL. Messages are the
# shapes AWS documents, signed as SNS signs (sns_sign.py: SignatureVersion 1
# SHA1withRSA and 2 SHA256withRSA) with the test signing key. A
# subscription of the account's topic is confirmed (the SubscribeURL is
# fetched), one of another topic is not; Bounce (Permanent: hard, the 5.1.1
# suppressed; Transient: soft), Complaint and Delivery are stored, the
# certificate fetched once; a replayed MessageId is ignored; a bad
# signature, a key not the certificate's, a SigningCertURL on another host
# or over http and an unknown TopicArn are 401 with nothing written and
# nothing fetched from where they point.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require python3 certtool openssl timeout

SNS=sns.us-east-1.amazonaws.com
SAMPLES=$top_srcdir/tests/integration/feedback
mkdir -p "$IT_DIR/dns"
printf '%s\n' '$ORIGIN us-east-1.amazonaws.com.' '$TTL 300' \
    '@ IN SOA ns.us-east-1.amazonaws.com. hostmaster.us-east-1.amazonaws.com. 1 3600 600 86400 300' \
    '@ IN NS ns.us-east-1.amazonaws.com.' 'ns IN A 127.0.0.1' 'sns IN A 127.0.0.1' \
    > "$IT_DIR/dns/us-east-1.amazonaws.com.zone"
mail_env_dns "$IT_DIR/dns/us-east-1.amazonaws.com.zone"
mail_env_certs "$SNS" "$SNS"

# the SNS signing key and its certificate (served), and a stranger's key
F=$IT_DIR/files
mkdir -p "$F"
printf '%s\n' 'cn = "sns.amazonaws.com"' 'organization = "Amazon.com, Inc."' signing_key expiration_days = 2 > "$IT_DIR/sns.tmpl"
certtool --generate-privkey --key-type=rsa --bits=2048 --outfile "$IT_DIR/sns.key" > /dev/null 2>&1 &&
certtool --generate-self-signed --load-privkey "$IT_DIR/sns.key" --template "$IT_DIR/sns.tmpl" \
    --outfile "$F/SimpleNotificationService-0123456789abcdef.pem" > /dev/null 2>&1 &&
certtool --generate-privkey --key-type=rsa --bits=2048 --outfile "$IT_DIR/other.key" > /dev/null 2>&1 ||
    { echo "Bail out! certtool"; exit 1; }
printf '<ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>arn:aws:sns:us-east-1:123456789012:ses-feedback:1</SubscriptionArn></ConfirmSubscriptionResult></ConfirmSubscriptionResponse>\n' > "$F/confirm"

SERVED=$IT_DIR/served
PYTHONDONTWRITEBYTECODE=1 python3 "$top_srcdir/tests/integration/file_server.py" --host 127.0.0.1 --port 0 \
    --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" --dir "$F" --log "$SERVED" \
    --ready "$IT_DIR/files.port" > "$IT_DIR/files.log" 2>&1 &
FAKE_PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$IT_DIR/files.port" ] && break; sleep 0.1; done
[ -s "$IT_DIR/files.port" ] || { cat "$IT_DIR/files.log"; echo "Bail out! file server"; exit 1; }
PORT=$(cat "$IT_DIR/files.port")
touch "$SERVED"

it_conf_add "dns_resolver = $DNS
dns_timeout_ms = 500
feedback_hash_key_file = $IT_DIR/feedback-hash-key
allow_private_urls = yes
allow_url_ports = $PORT
ca_file = $IT_DIR/tls/ca.pem"
it_stack_start

ACC=$(it_account admin 10)
TOPIC=arn:aws:sns:us-east-1:123456789012:ses-feedback
OTHER_TOPIC=arn:aws:sns:us-east-1:123456789012:someone-else
CERT_PATH=/files/SimpleNotificationService-0123456789abcdef.pem
CERT_URL=https://$SNS:$PORT$CERT_PATH
outcomes() { it_sql "SELECT COUNT(*) FROM feedback_outcomes WHERE account_id = '$ACC'"; }
served() { jq -c --arg p "$1" 'select(.path == $p)' "$SERVED" | wc -l; }

# sns FILE ARGS...: a signed SNS message (sns_sign.py) into IT_DIR/FILE
sns() {
    local out=$IT_DIR/$1
    shift
    python3 "$top_srcdir/tests/integration/sns_sign.py" --key "$IT_DIR/sns.key" --cert-url "$CERT_URL" \
        --topic "$TOPIC" "$@" > "$out" || it_fail "sns_sign.py $*"
}
post() {	# post FILE [ACCOUNT]: as SNS posts it
    local type
    type=$(jq -r .Type "$IT_DIR/$1")
    API_KEY= http POST "/v1/feedback/ses?account=${2:-$ACC}" "@$IT_DIR/$1" \
        -H 'Content-Type: text/plain; charset=UTF-8' -H "x-amz-sns-message-type: $type"
}

t_settings() {
    svcadm feedback set "$ACC" --ses-topic-arns "not-an-arn" 2> /dev/null && { it_fail "a bad ARN was taken"; return 1; }
    svcadm feedback set "$ACC" --ses-topic-arns "$TOPIC" || return 1
    expect_eq "topics" "$TOPIC" "$(it_sql "SELECT ses_topic_arns FROM feedback_settings WHERE account_id = '$ACC'")"
}
t_case "svcadm feedback set --ses-topic-arns takes SNS topic ARNs only" t_settings

t_subscribe() {
    sns sub.json --type SubscriptionConfirmation --id 165545c9-2a5c-472c-8df2-7ff2be2b3b1b \
        --message "You have chosen to subscribe to the topic $TOPIC. To confirm the subscription, visit the SubscribeURL included in this message." \
        --subscribe-url "https://$SNS:$PORT/files/confirm?Action=ConfirmSubscription&TopicArn=$TOPIC&Token=2336412f37f"
    post sub.json
    expect_status 200 && expect_json .confirmed true || return 1
    expect_eq "SubscribeURL fetched" 1 "$(jq -c 'select(.path == "/files/confirm" and (.query | contains("Token=2336412f37f")))' "$SERVED" | wc -l)" || return 1
    expect_eq "certificate fetched" 1 "$(served "$CERT_PATH")" || return 1
    # signed, but of a topic the account did not name: not confirmed
    sns sub2.json --type SubscriptionConfirmation --id 265545c9-2a5c-472c-8df2-7ff2be2b3b1b --topic "$OTHER_TOPIC" \
        --message "You have chosen to subscribe to the topic $OTHER_TOPIC." \
        --subscribe-url "https://$SNS:$PORT/files/confirm?Action=ConfirmSubscription&TopicArn=$OTHER_TOPIC&Token=other"
    post sub2.json
    expect_status 401 && expect_json .error.code unauthorized || return 1
    expect_eq "SubscribeURL of another topic fetched" 0 "$(jq -c 'select(.query | contains("Token=other"))' "$SERVED" | wc -l)"
}
t_case "a SubscriptionConfirmation of the account's topic is confirmed (SubscribeURL fetched), another topic's is refused unfetched" t_subscribe

t_bounce() {
    sns bounce.json --id 0d3c2bd2-0001-5b6c-8b1a-5d1c2d3e4f50 --version 2 --message-file "$SAMPLES/ses_bounce.json"
    post bounce.json
    expect_status 200 && expect_json .accepted 2 && expect_json .suppressed 2 && expect_json .replayed 0 || return 1
    expect_eq "stored" "hard_bounce 550 5.1.1 ses 0d3c2bd2-0001-5b6c-8b1a-5d1c2d3e4f50:0,hard_bounce 550 5.1.1 ses 0d3c2bd2-0001-5b6c-8b1a-5d1c2d3e4f50:1" \
        "$(it_sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', outcome, smtp_code, enhanced_code, source, event_id) ORDER BY event_id) FROM feedback_outcomes WHERE account_id = '$ACC'")" || return 1
    expect_eq "occurred_at" "2026-11-29 09:58:12" "$(it_sql "SELECT DISTINCT DATE_FORMAT(occurred_at, '%Y-%m-%d %H:%i:%s') FROM feedback_outcomes WHERE account_id = '$ACC'")" || return 1
    expect_eq "suppressed" "ses-gone@good.test,ses-nobody@good.test" \
        "$(it_sql "SELECT GROUP_CONCAT(entry ORDER BY entry) FROM suppressions WHERE account_id = '$ACC'")" || return 1
    # the certificate came from the cache
    expect_eq "certificate fetched" 1 "$(served "$CERT_PATH")"
}
t_case "a Permanent bounce (SignatureVersion 2) stores a hard bounce per recipient, 5.1.1 suppressed, the certificate from the cache" t_bounce

t_others() {
    sns transient.json --id 0d3c2bd2-0002-5b6c-8b1a-5d1c2d3e4f50 --message-file "$SAMPLES/ses_transient.json"
    post transient.json
    expect_status 200 && expect_json .accepted 1 && expect_json .suppressed 0 || return 1
    sns complaint.json --id 0d3c2bd2-0003-5b6c-8b1a-5d1c2d3e4f50 --subject "Amazon SES Email Event Notification" \
        --message-file "$SAMPLES/ses_complaint.json"
    post complaint.json
    expect_status 200 && expect_json .accepted 1 && expect_json .complainers_added 1 || return 1
    sns delivery.json --id 0d3c2bd2-0004-5b6c-8b1a-5d1c2d3e4f50 --version 2 --message-file "$SAMPLES/ses_delivery.json"
    post delivery.json
    expect_status 200 && expect_json .accepted 1 || return 1
    sns send.json --id 0d3c2bd2-0005-5b6c-8b1a-5d1c2d3e4f50 --message-file "$SAMPLES/ses_send.json"
    post send.json
    expect_status 200 && expect_json .ignored true || return 1
    expect_eq "stored" "soft_bounce 452 4.2.2,complaint,delivered 250 2.6.0" \
        "$(it_sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', outcome, smtp_code, enhanced_code) ORDER BY event_id) FROM feedback_outcomes WHERE account_id = '$ACC' AND event_id NOT LIKE '0d3c2bd2-0001-%'")" || return 1
    expect_eq "suppressions" 2 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$ACC'")" || return 1
    expect_eq "complainers" 1 "$(it_sql "SELECT COUNT(*) FROM account_complainers WHERE account_id = '$ACC'")"
}
t_case "a Transient bounce is soft, a Complaint lists the address, a Delivery (event publishing) is stored, a Send event ignored" t_others

t_replay() {
    post bounce.json
    expect_status 200 && expect_json .accepted 0 && expect_json .replayed 2 && expect_eq "outcomes" 5 "$(outcomes)"
}
t_case "the same SNS message again (its MessageId) is a replay: nothing stored" t_replay

refused() {	# refused FILE: 401, nothing written
    post "$@"
    expect_status 401 && expect_json .error.code unauthorized && expect_eq "outcomes after $1" 5 "$(outcomes)"
}
t_refused() {
    local literal=/files/SimpleNotificationService-literal.pem
    cp "$F/SimpleNotificationService-0123456789abcdef.pem" "$F/${literal#/files/}"
    sns tampered.json --id 0d3c2bd2-0006-5b6c-8b1a-5d1c2d3e4f50 --message-file "$SAMPLES/ses_bounce.json" --tamper
    refused tampered.json || return 1
    python3 "$top_srcdir/tests/integration/sns_sign.py" --key "$IT_DIR/other.key" --cert-url "$CERT_URL" --topic "$TOPIC" \
        --id 0d3c2bd2-0007-5b6c-8b1a-5d1c2d3e4f50 --version 2 --message-file "$SAMPLES/ses_bounce.json" > "$IT_DIR/stranger.json"
    refused stranger.json || return 1
    for url in "http://$SNS:$PORT$CERT_PATH" "https://127.0.0.1:$PORT$literal" "https://$SNS.evil.test:$PORT$CERT_PATH" \
            "https://evil.test/$SNS$CERT_PATH" "https://$SNS:$PORT$CERT_PATH?x=1" "https://user@$SNS:$PORT$CERT_PATH"; do
        python3 "$top_srcdir/tests/integration/sns_sign.py" --key "$IT_DIR/sns.key" --cert-url "$url" --topic "$TOPIC" \
            --id 0d3c2bd2-0008-5b6c-8b1a-5d1c2d3e4f50 --message-file "$SAMPLES/ses_bounce.json" > "$IT_DIR/url.json"
        refused url.json || { it_fail "SigningCertURL $url"; return 1; }
    done
    expect_eq "fetched from elsewhere" 0 "$(served "$literal")" || return 1
    sns topic.json --id 0d3c2bd2-0009-5b6c-8b1a-5d1c2d3e4f50 --topic "$OTHER_TOPIC" --message-file "$SAMPLES/ses_bounce.json"
    refused topic.json || return 1
    # an account that named no topic takes nothing
    refused bounce.json "$(it_account admin 10)" || return 1
    expect_eq "certificate fetched" 1 "$(served "$CERT_PATH")"
}
t_case "a tampered message, a stranger's key, a SigningCertURL over http or on another host, an unknown TopicArn: 401, nothing written or fetched" t_refused

t_bad() {
    printf '{"Type":"Notification","MessageId":"x"}' > "$IT_DIR/half.json"
    post half.json
    expect_status 400 && expect_json .error.code invalid_json || return 1
    sns unsub.json --type UnsubscribeConfirmation --id 0d3c2bd2-000a-5b6c-8b1a-5d1c2d3e4f50 \
        --message "You have chosen to deactivate subscription." \
        --subscribe-url "https://$SNS:$PORT/files/confirm?Action=ConfirmSubscription&TopicArn=$TOPIC&Token=unsub"
    post unsub.json
    expect_status 200 && expect_json .unsubscribed true && expect_eq "outcomes" 5 "$(outcomes)"
}
t_case "a body that is no SNS message is 400; an UnsubscribeConfirmation is taken (200)" t_bad

t_done
