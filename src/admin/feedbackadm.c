/* feedbackadm.c: svcadm's delivery-feedback commands (feedbackadm.h). */
#include "admin/feedbackadm.h"
#include "engine/cachekey.h"
#include "jobs/feedback.h"
#include "jobs/feedback_report.h"
#include "jobs/feedback_senders.h"
#include "jobs/feedback_sns.h"
#include "util/hex.h"
#include "util/postfix_log.h"
#include "util/timeutil.h"
#include <errno.h>
#include <gnutls/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int
feedbackadm_key_init(const struct conf *c, int *wrote, struct buf *err)
{
	const char *path = conf_str(c, CONF_FEEDBACK_HASH_KEY_FILE);
	const char *key = conf_str(c, CONF_FEEDBACK_HASH_KEY);
	struct stat st;

	*wrote = 0;
	if (path == NULL || *path == '\0' || (key != NULL && *key != '\0'))
		return 0;
	/* never replaced: outcomes stored under it would be lost */
	if (stat(path, &st) == 0)
		return 0;
	if (errno != ENOENT) {
		buf_printf(err, "feedback_hash_key_file %s: %s", path,
		    strerror(errno));
		return -1;
	}
	/* written as the verdict cache's key is (mode 0640, by a rename) */
	if (cachekey_write_file(path, err) == -1)
		return -1;
	*wrote = 1;
	return 0;
}

/* 0 when the account exists, else -1 with why in err. */
static int
feedbackadm_account(struct db *db, const char *account, struct buf *err)
{
	long long v;
	int found;

	if (db_query_int(db, "SELECT 1 FROM accounts WHERE id = ?",
	    DB_ARGS(DBP_STR(account)), &v, &found) != DB_OK) {
		buf_puts(err, db_error(db));
		return -1;
	}
	if (!found) {
		buf_printf(err, "no account %s", account);
		return -1;
	}
	return 0;
}

int
feedbackadm_set(struct db *db, const char *account, int suppress,
    const char *mailgun_key, const char *postmark_auth,
    const char *sendgrid_key, const char *ses_topics, struct buf *err)
{
	char user[101], hash_hex[65];
	unsigned char hash[32];
	const char *colon = NULL;

	if (feedbackadm_account(db, account, err) == -1)
		return -1;
	if (mailgun_key != NULL && (*mailgun_key == '\0' ||
	    strlen(mailgun_key) > 200)) {
		buf_puts(err, "--mailgun-signing-key: 1 to 200 characters");
		return -1;
	}
	if (postmark_auth != NULL) {
		colon = strchr(postmark_auth, ':');
		if (colon == NULL || colon == postmark_auth ||
		    (size_t)(colon - postmark_auth) >= sizeof(user) ||
		    colon[1] == '\0') {
			buf_puts(err, "--postmark-auth: USER:PASSWORD");
			return -1;
		}
		memcpy(user, postmark_auth, (size_t)(colon - postmark_auth));
		user[colon - postmark_auth] = '\0';
		gnutls_hash_fast(GNUTLS_DIG_SHA256, postmark_auth,
		    strlen(postmark_auth), hash);
		hex_encode(hash, sizeof(hash), hash_hex);
	}
	if (sendgrid_key != NULL && (strlen(sendgrid_key) > 200 ||
	    !feedback_senders_sendgrid_key_ok(sendgrid_key))) {
		buf_puts(err, "--sendgrid-public-key: the verification key "
		    "SendGrid shows (base64 of an elliptic-curve public key)");
		return -1;
	}
	if (ses_topics != NULL && (strlen(ses_topics) > 1024 ||
	    !feedback_sns_topics_valid(ses_topics))) {
		buf_puts(err, "--ses-topic-arns: SNS topic ARNs "
		    "(arn:aws:sns:REGION:ACCOUNT:NAME) separated by commas, "
		    "1024 characters in all, or \"\" for none");
		return -1;
	}
	if (feedback_settings_set(db, account, suppress, mailgun_key,
	    colon ? user : NULL, colon ? hash_hex : NULL, sendgrid_key) !=
	    DB_OK || (ses_topics != NULL && feedback_settings_set_ses(db,
	    account, ses_topics) != DB_OK)) {
		buf_puts(err, db_error(db));
		return -1;
	}
	return 0;
}

static void
feedbackadm_row(FILE *out, const char *name, const struct feedback_tally *t)
{
	int k;

	fprintf(out, "%-24s %9lld", name, t->verified);
	for (k = 0; k < FEEDBACK_OUTCOME__MAX; k++)
		fprintf(out, " %11lld", t->outcome[k]);
	fprintf(out, " %10lld\n", t->no_outcome);
}

static void
feedbackadm_head(FILE *out, const char *first)
{
	int k;

	fprintf(out, "%-24s %9s", first, "verified");
	for (k = 0; k < FEEDBACK_OUTCOME__MAX; k++)
		fprintf(out, " %11s", feedback_outcome_names[k]);
	fprintf(out, " %10s\n", "no_outcome");
}

int
feedbackadm_report(struct db *db, const struct conf *c, const char *account,
    const char *since_s, const char *until_s, int json, FILE *out,
    struct buf *err)
{
	struct feedback_report rep;
	struct addrhash_key key;
	time_t until = time(NULL) + 1, since;
	char a[TIMEUTIL_ISO_LEN], b[TIMEUTIL_ISO_LEN];
	json_t *o;
	size_t i;
	int k;

	if (addrhash_key_from_conf(c, CONF_FEEDBACK_HASH_KEY, &key) == -1) {
		buf_puts(err, "feedback_hash_key is not set (svcadm db migrate "
		    "writes feedback_hash_key_file)");
		return -1;
	}
	if (until_s != NULL && timeutil_parse_iso8601(until_s, &until) == -1) {
		buf_puts(err, "--until: an ISO 8601 UTC time");
		return -1;
	}
	since = until - 30 * 86400;
	if (since_s != NULL && timeutil_parse_iso8601(since_s, &since) == -1) {
		buf_puts(err, "--since: an ISO 8601 UTC time");
		return -1;
	}
	if (feedback_report_build(db, &key, account, since, until, &rep) !=
	    DB_OK) {
		buf_puts(err, db_error(db));
		return -1;
	}
	if (json) {
		o = feedback_report_json(&rep);
		json_dumpf(o, out, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', out);
		json_decref(o);
		feedback_report_free(&rep);
		return 0;
	}
	timeutil_iso8601(rep.since, a);
	timeutil_iso8601(rep.until, b);
	fprintf(out, "accuracy of results verified from %s to %s (%s)\n\n", a,
	    b, account ? account : "all accounts");
	feedbackadm_head(out, "classification");
	for (k = 0; k < VERDICT_CLASS__MAX; k++)
		feedbackadm_row(out, verdict_class_names[k], &rep.by_class[k]);
	feedbackadm_row(out, "total", &rep.all);
	fputc('\n', out);
	feedbackadm_head(out, "provider");
	for (i = 0; i < rep.nprov; i++)
		feedbackadm_row(out, rep.prov[i].provider, &rep.prov[i].t);
	fprintf(out, "\nunknown_share %.4f\n", rep.all.verified ?
	    (double)rep.by_class[VERDICT_C_UNKNOWN].verified /
	    (double)rep.all.verified : 0.0);
	fprintf(out, "addresses_verified_twice %lld\nsame_classification "
	    "%lld\n", rep.repeated, rep.repeated_same);
	feedback_report_free(&rep);
	return 0;
}

/* ---------------------------------------------------------------- import */

struct feedbackadm_import {
	struct db		*db;
	const char		*account;
	long long		 suppressions_max;
	struct feedback_event	*ev;
	size_t			 n;
	/* what was read and done, printed at the end */
	long long		 lines, deliveries, stored, duplicates,
				 suppressed, suppress_skipped, other, bad_time,
				 bad_line, bad_address;
};

/* Stores the events read so far, in one transaction: 0, or -1. */
static int
feedbackadm_import_flush(struct feedbackadm_import *im, struct buf *err)
{
	struct feedback_counts c;

	if (im->n == 0)
		return 0;
	memset(&c, 0, sizeof(c));
	if (feedback_store(im->db, im->account, FEEDBACK_SOURCE_POSTFIX, im->ev,
	    im->n, im->suppressions_max, &c) != DB_OK) {
		buf_puts(err, db_error(im->db));
		return -1;
	}
	im->stored += (long long)c.accepted;
	im->duplicates += (long long)c.replayed;
	im->suppressed += (long long)c.suppressed;
	im->suppress_skipped += (long long)c.suppress_skipped;
	im->n = 0;
	return 0;
}

/* A delivery attempt as an outcome: sent is delivered, deferred a soft
 * bounce, bounced a hard one unless its dsn is 4.x.x (a message that
 * expired in the queue). The event id is the queue id, the address's
 * hash and the status: the same line imported again is a replay, and the
 * address is not kept in clear in it. */
static int
feedbackadm_import_event(const struct postfix_log_delivery *d,
    const struct addrhash_key *key, struct feedback_event *ev)
{
	if (feedback_event_address(ev, d->to, key) == -1)
		return -1;
	switch (d->status) {
	case POSTFIX_LOG_SENT:
		ev->outcome = FEEDBACK_DELIVERED;
		break;
	case POSTFIX_LOG_BOUNCED:
		ev->outcome = d->dsn[0] == '4' ? FEEDBACK_SOFT_BOUNCE :
		    FEEDBACK_HARD_BOUNCE;
		break;
	default:
		ev->outcome = FEEDBACK_SOFT_BOUNCE;
		break;
	}
	ev->occurred_at = d->at;
	ev->smtp_code = d->smtp_code;
	/* postfix_log keeps only a well-formed dsn */
	snprintf(ev->enhanced, sizeof(ev->enhanced), "%s", d->dsn);
	snprintf(ev->event_id, sizeof(ev->event_id), "%s:%.16s:%s",
	    d->queue_id, ev->addr_hash, postfix_log_status_names[d->status]);
	return 0;
}

int
feedbackadm_import(struct db *db, const struct conf *c, const char *account,
    FILE *in, FILE *out, struct buf *err)
{
	struct feedbackadm_import im;
	struct postfix_log_delivery d;
	struct addrhash_key key;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	time_t now = time(NULL);
	int rc = -1;

	if (addrhash_key_from_conf(c, CONF_FEEDBACK_HASH_KEY, &key) == -1) {
		buf_puts(err, "feedback_hash_key is not set (svcadm db migrate "
		    "writes feedback_hash_key_file)");
		return -1;
	}
	if (feedbackadm_account(db, account, err) == -1)
		return -1;
	memset(&im, 0, sizeof(im));
	im.db = db;
	im.account = account;
	im.suppressions_max = conf_int(c, CONF_ACCOUNT_SUPPRESSIONS_MAX);
	if ((im.ev = calloc(FEEDBACK_EVENTS_MAX, sizeof(*im.ev))) == NULL) {
		buf_puts(err, "out of memory");
		return -1;
	}
	while ((len = getline(&line, &cap, in)) != -1) {
		im.lines++;
		switch (postfix_log_parse(line, (size_t)len, now, &d)) {
		case POSTFIX_LOG_OK:
			break;
		case POSTFIX_LOG_OTHER:
			im.other++;
			continue;
		case POSTFIX_LOG_BAD_TIME:
			im.bad_time++;
			continue;
		default:
			im.bad_line++;
			continue;
		}
		im.deliveries++;
		memset(&im.ev[im.n], 0, sizeof(im.ev[im.n]));
		if (feedbackadm_import_event(&d, &key, &im.ev[im.n]) == -1) {
			im.bad_address++;
			continue;
		}
		if (++im.n == FEEDBACK_EVENTS_MAX &&
		    feedbackadm_import_flush(&im, err) == -1)
			goto out;
	}
	if (ferror(in)) {
		buf_printf(err, "reading the log: %s", strerror(errno));
		goto out;
	}
	if (feedbackadm_import_flush(&im, err) == -1)
		goto out;
	fprintf(out, "lines %lld\ndeliveries %lld\nstored %lld\n"
	    "duplicates %lld\nsuppressed %lld\nsuppress_skipped %lld\n"
	    "skipped_other_lines %lld\nskipped_bad_time %lld\n"
	    "skipped_unreadable %lld\nskipped_bad_address %lld\n", im.lines,
	    im.deliveries, im.stored, im.duplicates, im.suppressed,
	    im.suppress_skipped, im.other, im.bad_time, im.bad_line,
	    im.bad_address);
	rc = 0;
out:
	free(line);
	free(im.ev);
	return rc;
}
