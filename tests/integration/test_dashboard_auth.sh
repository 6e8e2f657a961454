#!/bin/bash
# test_dashboard_auth.sh: the dashboard's sign-in (issue 27) over HTTP:
# svcadm account set-password (from standard input, length checked),
# POST /v1/session (wrong password and unknown e-mail answer alike), the
# cookie's attributes, GET /v1/session, a key made with the cookie and the
# CSRF token (and refused, nothing made, without the token), another
# account's job not found, an idle or too old session refused, sign-out
# ends the cookie, svc-worker's housekeeping deletes ended sessions and used
# or expired invitations, and failed attempts limited per e-mail and per
# address (429 with Retry-After, even for the right password).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_conf_add "signin_attempts_max = 3
signin_address_attempts_max = 8
session_idle_seconds = 600
session_max_seconds = 3600"
it_stack_start

EMAIL=dash$RANDOM$RANDOM@example.com
ACC=$(svcadm account create --email "$EMAIL" --tier pro --credits 10)
PW='correct horse battery staple'
OTHER=$(it_account pro 10)
JAR=$IT_DIR/cookies

# signin EMAIL PASSWORD: POST /v1/session, the cookie kept in JAR
signin() {
    API_KEY= http POST /v1/session "$(jq -cn --arg e "$1" --arg p "$2" '{email:$e,password:$p}')" -c "$JAR"
}
# with_cookie METHOD PATH [BODY] [CURL ARGS...]: a request with the jar's cookie, no key
with_cookie() {
    local m=$1 p=$2 b=${3-}
    shift 2; [ $# -gt 0 ] && shift
    API_KEY= http "$m" "$p" "$b" -b "$JAR" "$@"
}

t_set_password() {
    local err
    err=$(printf 'short\n' | svcadm account set-password "$ACC" 2>&1) && { it_fail "a short password was taken"; return 1; }
    case $err in *"12 to 1024 characters"*) ;; *) it_fail "unclear error: $err"; return 1 ;; esac
    printf '%s\n' "$PW" | svcadm account set-password "$ACC" || { it_fail "set-password failed"; return 1; }
    printf '%s\n' "$PW" | svcadm account set-password nosuchaccount 2>/dev/null && { it_fail "unknown account taken"; return 1; }
    expect_eq "stored as Argon2id" 1 "$(it_sql "SELECT password_hash LIKE '\$argon2id\$%' FROM accounts WHERE id = '$ACC'")"
}
t_case "svcadm account set-password: from stdin, length checked, stored as Argon2id" t_set_password

t_wrong_same_as_unknown() {
    local a b
    signin "$EMAIL" 'not the password at all'
    expect_status 401 && expect_json .error.code invalid_credentials || return 1
    a=$(json .error.message)
    signin "nobody$RANDOM@example.com" 'not the password at all'
    expect_status 401 && expect_json .error.code invalid_credentials || return 1
    b=$(json .error.message)
    expect_eq "same message" "$a" "$b" || return 1
    expect_eq "no session made" 0 "$(it_sql "SELECT COUNT(*) FROM web_sessions")"
}
t_case "a wrong password and an unknown e-mail get the same 401" t_wrong_same_as_unknown

t_signin() {
    local sc
    signin "$EMAIL" "$PW"
    expect_status 201 && expect_json .account_id "$ACC" && expect_json .email "$EMAIL" || return 1
    expect_jq '.csrf_token | test("^[A-Za-z0-9]{43}$")' || return 1
    CSRF=$(json .csrf_token)
    sc=$(header_value set-cookie)
    case "; $sc;" in *"; HttpOnly;"*) ;; *) it_fail "no HttpOnly: $sc"; return 1 ;; esac
    case "; $sc;" in *"; SameSite=Strict;"*) ;; *) it_fail "no SameSite=Strict: $sc"; return 1 ;; esac
    case "; $sc;" in *"; Path=/;"*) ;; *) it_fail "no Path=/: $sc"; return 1 ;; esac
    case "; $sc;" in *"; Secure;"*) it_fail "Secure over plain HTTP: $sc"; return 1 ;; esac
    case $sc in svc_session=[A-Za-z0-9]*) ;; *) it_fail "cookie: $sc"; return 1 ;; esac
    # only the hash of the id is stored
    expect_eq "stored hashed" 0 "$(it_sql "SELECT COUNT(*) FROM web_sessions WHERE id_hash = '${sc%%;*}'")" || return 1
    with_cookie GET /v1/session
    expect_status 200 && expect_json .account_id "$ACC" && expect_json .csrf_token "$CSRF"
}
t_case "sign-in: 201, cookie HttpOnly SameSite=Strict Path=/ (not Secure over http), GET /v1/session" t_signin

t_csrf() {
    local before
    before=$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC'")
    with_cookie POST /v1/keys '{"name":"from the dashboard","scopes":["jobs:read"]}'
    expect_status 403 && expect_json .error.code csrf_token_invalid || return 1
    with_cookie POST /v1/keys '{"name":"from the dashboard","scopes":["jobs:read"]}' -H "X-CSRF-Token: x$CSRF"
    expect_status 403 && expect_json .error.code csrf_token_invalid || return 1
    expect_eq "nothing made" "$before" "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC'")" || return 1
    with_cookie POST /v1/keys '{"name":"from the dashboard","scopes":["jobs:read"]}' -H "X-CSRF-Token: $CSRF"
    expect_status 201 && expect_jq '.key | startswith("svc_live_")' || return 1
    expect_eq "one made" "$((before + 1))" "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC'")" || return 1
    # a GET needs no token
    with_cookie GET /v1/keys
    expect_status 200
}
t_case "a key made with the cookie and the CSRF token; without it 403 and nothing made" t_csrf

t_other_account() {
    local job
    API_KEY=$(it_key "$OTHER" '*') http POST /v1/verify/bulk '{"emails":["a@example.com"]}'
    expect_status 202 || return 1
    job=$(json .job_id)
    [ -n "$job" ] && [ "$job" != null ] || { it_fail "no job id: $(it_body_excerpt)"; return 1; }
    with_cookie GET "/v1/jobs/$job"
    expect_status 404 && expect_json .error.code not_found
}
t_case "another account's job is not found with the cookie" t_other_account

t_expiry() {
    # idle: no request for longer than session_idle_seconds
    it_sql "UPDATE web_sessions SET last_seen_at = last_seen_at - INTERVAL 601 SECOND WHERE account_id = '$ACC'"
    with_cookie GET /v1/session
    expect_status 401 && expect_json .error.code unauthorized || return 1
    # absolute: begun longer than session_max_seconds ago, however busy
    signin "$EMAIL" "$PW"; expect_status 201 || return 1
    it_sql "UPDATE web_sessions SET created_at = created_at - INTERVAL 3601 SECOND WHERE account_id = '$ACC'"
    with_cookie GET /v1/session
    expect_status 401 && expect_json .error.code unauthorized
}
t_case "an idle session and one older than session_max_seconds are refused" t_expiry

t_signout() {
    signin "$EMAIL" "$PW"; expect_status 201 || return 1
    CSRF=$(json .csrf_token)
    cp "$JAR" "$IT_DIR/old-jar"
    with_cookie DELETE /v1/session
    expect_status 403 && expect_json .error.code csrf_token_invalid || return 1
    with_cookie DELETE /v1/session "" -H "X-CSRF-Token: $CSRF"
    expect_status 200 || return 1
    case "$(header_value set-cookie)" in *"Max-Age=0"*) ;; *) it_fail "cookie not cleared"; return 1 ;; esac
    API_KEY= http GET /v1/session "" -b "$IT_DIR/old-jar"
    expect_status 401 && expect_json .error.code unauthorized
}
t_case "sign-out (with the CSRF token) ends the session: the old cookie is refused" t_signout

t_invite() {
    local link token
    link=$(svcadm account invite "$OTHER") || { it_fail "invite failed"; return 1; }
    case $link in "$BASE_URL/app/invite#"*) ;; *) it_fail "link: $link"; return 1 ;; esac
    token=${link#*#}
    API_KEY= http POST /v1/session/invite "$(jq -cn --arg t "$token" '{token:$t,password:"short"}')"
    expect_status 400 && expect_json .error.details.field password || return 1
    API_KEY= http POST /v1/session/invite "$(jq -cn --arg t "$token" '{token:$t,password:"the invited password"}')"
    expect_status 200 && expect_json .password_set true || return 1
    signin "$(it_sql "SELECT email FROM accounts WHERE id = '$OTHER'")" 'the invited password'
    expect_status 201 && expect_json .account_id "$OTHER" || return 1
    # used once: the second use is refused
    API_KEY= http POST /v1/session/invite "$(jq -cn --arg t "$token" '{token:$t,password:"another password 2"}')"
    expect_status 401 && expect_json .error.code invalid_invitation || return 1
    # expired
    token=$(svcadm account invite "$OTHER"); token=${token#*#}
    it_sql "UPDATE web_invites SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE used_at IS NULL"
    API_KEY= http POST /v1/session/invite "$(jq -cn --arg t "$token" '{token:$t,password:"another password 3"}')"
    expect_status 401 && expect_json .error.code invalid_invitation
}
t_case "svcadm account invite: a one-time link; the password set once, then refused; expired refused" t_invite

t_purge() {
    local ended live pending n_ended n_done
    ended="last_seen_at <= UTC_TIMESTAMP(3) - INTERVAL 600 SECOND OR created_at <= UTC_TIMESTAMP(3) - INTERVAL 3600 SECOND"
    svcadm account invite "$OTHER" > /dev/null || { it_fail "invite failed"; return 1; }
    # what t_expiry and t_invite left: ended sessions, live ones, a used
    # and an expired invitation, and the pending one just made
    n_ended=$(it_sql "SELECT COUNT(*) FROM web_sessions WHERE $ended")
    live=$(it_sql "SELECT COUNT(*) FROM web_sessions WHERE NOT ($ended)")
    n_done=$(it_sql "SELECT COUNT(*) FROM web_invites WHERE used_at IS NOT NULL OR expires_at <= UTC_TIMESTAMP(3)")
    pending=$(it_sql "SELECT COUNT(*) FROM web_invites WHERE used_at IS NULL AND expires_at > UTC_TIMESTAMP(3)")
    [ "$n_ended" -ge 2 ] && [ "$live" -ge 1 ] && [ "$n_done" = 2 ] && [ "$pending" = 1 ] ||
        { it_fail "before: ended sessions $n_ended, live $live, invitations done $n_done, pending $pending"; return 1; }
    it_worker_once || { it_fail "svc-worker --once failed"; return 1; }
    expect_eq "ended sessions after housekeeping" 0 "$(it_sql "SELECT COUNT(*) FROM web_sessions WHERE $ended")" || return 1
    expect_eq "live sessions after housekeeping" "$live" "$(it_sql "SELECT COUNT(*) FROM web_sessions WHERE NOT ($ended)")" || return 1
    expect_eq "invitations after housekeeping (the pending one)" 1 "$(it_sql "SELECT COUNT(*) FROM web_invites")" || return 1
    grep -q "svc-worker\[[0-9]*\] .*event=housekeeping .* web_sessions_purged=$((n_ended + n_done))\b" "$IT_DIR/log/svc.log" ||
        it_fail "no housekeeping line with web_sessions_purged=$((n_ended + n_done))"
}
t_case "housekeeping deletes ended sessions and used or expired invitations, keeps live ones" t_purge

t_lockout() {
    local ra
    # 1 failure for $EMAIL so far; two more fill its window of 3
    signin "$EMAIL" wrong-1; expect_status 401 || return 1
    signin "$EMAIL" wrong-2; expect_status 401 || return 1
    signin "$EMAIL" "$PW"
    expect_status 429 && expect_json .error.code too_many_signin_attempts || return 1
    ra=$(header_value retry-after)
    [[ $ra =~ ^[0-9]+$ ]] && [ "$ra" -ge 1 ] || { it_fail "Retry-After: $ra"; return 1; }
    # the address: 6 failures so far of 8
    signin "x$RANDOM@example.com" wrong-3; expect_status 401 || return 1
    signin "y$RANDOM@example.com" wrong-4; expect_status 401 || return 1
    signin "$(it_sql "SELECT email FROM accounts WHERE id = '$OTHER'")" 'the invited password'

    expect_status 429 && expect_json .error.code too_many_signin_attempts && expect_header Retry-After
}
t_case "failed attempts limited per e-mail and per address: 429 with Retry-After" t_lockout

t_done
