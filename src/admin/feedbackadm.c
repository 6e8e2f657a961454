/* feedbackadm.c: svcadm's delivery-feedback commands (feedbackadm.h). */
#include "admin/feedbackadm.h"
#include "engine/cachekey.h"
#include "jobs/feedback.h"
#include "jobs/feedback_report.h"
#include "util/hex.h"
#include "util/timeutil.h"
#include <errno.h>
#include <gnutls/crypto.h>
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

int
feedbackadm_set(struct db *db, const char *account, int suppress,
    const char *mailgun_key, const char *postmark_auth, struct buf *err)
{
	char user[101], hash_hex[65];
	unsigned char hash[32];
	const char *colon = NULL;
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
	if (feedback_settings_set(db, account, suppress, mailgun_key,
	    colon ? user : NULL, colon ? hash_hex : NULL) != DB_OK) {
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
