/* feedback.c: delivery outcomes reported by an account (feedback.h): the
 * checks of one event, storing a call's events with their effects in one
 * transaction, the account's feedback settings, and expiry. */
#include "jobs/feedback.h"
#include "jobs/caps.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <string.h>

const char *const feedback_outcome_names[FEEDBACK_OUTCOME__MAX] = {
	"delivered", "hard_bounce", "soft_bounce", "complaint"
};
const char *const feedback_source_names[FEEDBACK_SOURCE__MAX] = {
	"api", "mailgun", "postmark", "sendgrid", "postfix", "ses"
};

/* Enhanced codes of a hard bounce that say the address does not exist
 * (RFC 3463, RFC 7505's 5.1.10 null MX); 5.1.7 and 5.1.8 are about the
 * sender's address and do not count. */
static const char *const feedback_suppress_codes[] = {
	"5.1.0", "5.1.1", "5.1.2", "5.1.3", "5.1.6", "5.1.10"
};

int
feedback_event_address(struct feedback_event *ev, const char *email,
    const struct addrhash_key *key)
{
	struct addr a;

	if (addr_parse(email, &a) != ADDR_OK)
		return -1;
	strparse_copy(ev->normalised, sizeof(ev->normalised), a.normalised);
	addrhash_hex(key, a.normalised, strlen(a.normalised), ev->addr_hash);
	return 0;
}

int
feedback_enhanced_ok(const char *s)
{
	size_t n = strparse_enhanced_len(s);

	return n > 0 && s[n] == '\0' ? 0 : -1;
}

int
feedback_enhanced_find(const char *text, char out[FEEDBACK_ENHANCED_MAX + 1])
{
	const char *p;
	size_t n;

	for (p = text; *p != '\0'; p++) {
		if (p > text && (p[-1] >= '0' && p[-1] <= '9'))
			continue;
		if (p > text && p[-1] == '.')
			continue;
		if ((n = strparse_enhanced_len(p)) == 0 || p[n] == '.')
			continue;
		if (n > FEEDBACK_ENHANCED_MAX)
			continue;
		memcpy(out, p, n);
		out[n] = '\0';
		return 0;
	}
	return -1;
}

int
feedback_suppresses(const struct feedback_event *ev)
{
	size_t i;

	if (ev->outcome != FEEDBACK_HARD_BOUNCE)
		return 0;
	for (i = 0; i < sizeof(feedback_suppress_codes) /
	    sizeof(feedback_suppress_codes[0]); i++)
		if (strcmp(ev->enhanced, feedback_suppress_codes[i]) == 0)
			return 1;
	return 0;
}

static int
feedback_fail(char *field, size_t fieldsz, char *why, size_t whysz,
    const char *f, const char *w)
{
	snprintf(field, fieldsz, "%s", f);
	snprintf(why, whysz, "%s", w);
	return -1;
}

#define FAIL(f, w) feedback_fail(field, fieldsz, why, whysz, (f), (w))

int
feedback_event_parse(const json_t *o, const struct addrhash_key *key,
    struct feedback_event *ev, char *field, size_t fieldsz, char *why,
    size_t whysz)
{
	static const char *const known[] = { "email", "outcome",
	    "occurred_at", "smtp_code", "enhanced_code", "diagnostic",
	    "event_id" };
	const char *k, *s;
	json_t *v;
	size_t i;
	int o_i;

	memset(ev, 0, sizeof(*ev));
	if (!json_is_object(o))
		return FAIL("", "an event is an object");
	json_object_foreach((json_t *)o, k, v) {
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strcmp(k, known[i]) == 0)
				break;
		if (i == sizeof(known) / sizeof(known[0]))
			return FAIL(k, "unknown member");
	}
	v = json_object_get(o, "email");
	if (!json_is_string(v) || feedback_event_address(ev,
	    json_string_value(v), key) == -1)
		return FAIL("email", "not an email address");
	v = json_object_get(o, "outcome");
	s = json_is_string(v) ? json_string_value(v) : "";
	for (o_i = 0; o_i < FEEDBACK_OUTCOME__MAX; o_i++)
		if (strcmp(s, feedback_outcome_names[o_i]) == 0)
			break;
	if (o_i == FEEDBACK_OUTCOME__MAX)
		return FAIL("outcome", "one of delivered, hard_bounce, "
		    "soft_bounce, complaint");
	ev->outcome = (enum feedback_outcome)o_i;
	v = json_object_get(o, "occurred_at");
	if (!json_is_string(v) || timeutil_parse_iso8601(json_string_value(v),
	    &ev->occurred_at) == -1 || ev->occurred_at < 946684800 ||
	    ev->occurred_at > time(NULL) + 86400)
		return FAIL("occurred_at", "an ISO 8601 UTC time such as "
		    "2026-11-28T10:00:00Z, not in the future");
	v = json_object_get(o, "smtp_code");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 200 ||
		    json_integer_value(v) > 599)
			return FAIL("smtp_code", "an integer from 200 to 599");
		ev->smtp_code = (int)json_integer_value(v);
	}
	v = json_object_get(o, "enhanced_code");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_string(v) ||
		    feedback_enhanced_ok(json_string_value(v)) == -1)
			return FAIL("enhanced_code", "an enhanced status code "
			    "such as 5.1.1");
		strparse_copy(ev->enhanced, sizeof(ev->enhanced),
		    json_string_value(v));
	}
	v = json_object_get(o, "diagnostic");
	if (v != NULL && !json_is_null(v) && (!json_is_string(v) ||
	    json_string_length(v) > FEEDBACK_DIAGNOSTIC_MAX))
		return FAIL("diagnostic", "a string of at most 2000 bytes");
	v = json_object_get(o, "event_id");
	if (v != NULL && !json_is_null(v)) {
		s = json_is_string(v) ? json_string_value(v) : "";
		if (*s == '\0' || json_string_length(v) > FEEDBACK_EVENT_ID_MAX)
			return FAIL("event_id", "a string of 1 to 200 "
			    "printable ASCII characters");
		for (i = 0; s[i] != '\0'; i++)
			if (s[i] < 0x21 || s[i] > 0x7e)
				return FAIL("event_id", "a string of 1 to 200 "
				    "printable ASCII characters");
		strparse_copy(ev->event_id, sizeof(ev->event_id), s);
	}
	return 0;
}

#undef FAIL

struct feedback_storing {
	const char		*account;
	enum feedback_source	 source;
	struct feedback_event	*ev;
	size_t			 n;
	long long		 max;
	struct feedback_counts	*c;
	/* the first row the last run inserted (0: none): when a run again
	 * after a lost connection (db_tx_retry) finds it, that run's COMMIT
	 * was applied, and its counts stand */
	long long		 first_id;
	int			 runs;
};

/* Whether the last run committed (its first row is there). */
static enum db_err
feedback_store_done(struct db *db, struct feedback_storing *s, int *done)
{
	long long n = 0;
	int found = 0;
	enum db_err e;

	*done = 0;
	if (s->runs++ == 0 || s->first_id == 0)
		return DB_OK;
	e = db_query_int(db, "SELECT COUNT(*) FROM feedback_outcomes WHERE "
	    "id = ? AND account_id = ?", DB_ARGS(DBP_INT(s->first_id),
	    DBP_STR(s->account)), &n, &found);
	*done = e == DB_OK && n > 0;
	s->first_id = 0;
	return e;
}

static enum db_err
feedback_store_work(struct db *db, void *arg)
{
	struct feedback_storing *s = arg;
	struct feedback_counts *c = s->c;
	struct feedback_settings set;
	struct feedback_event *ev;
	unsigned long long affected;
	long long total;
	char when[TIMEUTIL_ISO_LEN];
	enum db_err e;
	size_t i;
	int done, found;

	if ((e = feedback_store_done(db, s, &done)) != DB_OK || done)
		return e;
	c->accepted = c->replayed = c->suppressed = c->suppress_skipped =
	    c->complainers = 0;
	if (c->replay != NULL)
		memset(c->replay, 0, s->n);
	if ((e = caps_lock(db, s->account)) != DB_OK ||
	    (e = feedback_settings_get(db, s->account, &set)) != DB_OK ||
	    (e = caps_suppressions(db, s->account, &total)) != DB_OK)
		return e;
	for (i = 0; i < s->n; i++) {
		ev = &s->ev[i];
		timeutil_iso8601(ev->occurred_at, when);
		when[strcspn(when, "Z")] = '\0';
		e = db_exec(db, "INSERT IGNORE INTO feedback_outcomes "
		    "(account_id, addr_hash, outcome, occurred_at, smtp_code, "
		    "enhanced_code, source, event_id, received_at) VALUES "
		    "(?, ?, ?, REPLACE(?, 'T', ' '), ?, ?, ?, ?, "
		    "UTC_TIMESTAMP(3))", DB_ARGS(DBP_STR(s->account),
		    DBP_STR(ev->addr_hash),
		    DBP_STR(feedback_outcome_names[ev->outcome]),
		    DBP_STR(when),
		    ev->smtp_code ? DBP_INT(ev->smtp_code) : DBP_NULL,
		    ev->enhanced[0] ? DBP_STR(ev->enhanced) : DBP_NULL,
		    DBP_STR(feedback_source_names[s->source]),
		    ev->event_id[0] ? DBP_STR(ev->event_id) : DBP_NULL),
		    &affected);
		if (e != DB_OK)
			return e;
		if (affected == 0) {
			c->replayed++;
			if (c->replay != NULL)
				c->replay[i] = 1;
			continue;
		}
		c->accepted++;
		if (s->first_id == 0 && (e = db_query_int(db,
		    "SELECT LAST_INSERT_ID()", DB_NOARGS, &s->first_id,
		    &found)) != DB_OK)
			return e;
		if (ev->outcome == FEEDBACK_COMPLAINT) {
			if ((e = db_exec(db, "INSERT IGNORE INTO "
			    "account_complainers (account_id, addr_hash, "
			    "added_at) VALUES (?, ?, UTC_TIMESTAMP(3))",
			    DB_ARGS(DBP_STR(s->account),
			    DBP_STR(ev->addr_hash)), &affected)) != DB_OK)
				return e;
			c->complainers += affected ? 1 : 0;
		}
		if (!set.suppress_hard_bounces || !feedback_suppresses(ev))
			continue;
		if (total >= s->max) {
			c->suppress_skipped++;
			continue;
		}
		if ((e = db_exec(db, "INSERT IGNORE INTO suppressions "
		    "(account_id, entry, created_at) VALUES (?, ?, "
		    "UTC_TIMESTAMP(3))", DB_ARGS(DBP_STR(s->account),
		    DBP_STR(ev->normalised)), &affected)) != DB_OK)
			return e;
		if (affected) {
			c->suppressed++;
			total++;
		}
	}
	return DB_OK;
}

enum db_err
feedback_store(struct db *db, const char *account, enum feedback_source src,
    struct feedback_event *ev, size_t n, long long suppressions_max,
    struct feedback_counts *c)
{
	struct feedback_storing s = { account, src, ev, n, suppressions_max,
	    c, 0, 0 };

	return db_tx_retry(db, feedback_store_work, &s);
}

enum db_err
feedback_settings_get(struct db *db, const char *account,
    struct feedback_settings *s)
{
	struct db_res *r;
	const char *v;
	int row;

	enum db_err e;

	memset(s, 0, sizeof(*s));
	s->suppress_hard_bounces = 1;
	if ((e = db_query(db, "SELECT suppress_hard_bounces, "
	    "mailgun_signing_key, postmark_user, postmark_auth_hash, "
	    "sendgrid_public_key, ses_topic_arns FROM feedback_settings WHERE "
	    "account_id = ?",
	    DB_ARGS(DBP_STR(account)), &r)) != DB_OK)
		return e;
	if ((row = db_res_next(r)) == 1) {
		s->suppress_hard_bounces = db_res_int(r, 0) != 0;
		if ((v = db_res_str(r, 1)) != NULL)
			strparse_copy(s->mailgun_signing_key,
			    sizeof(s->mailgun_signing_key), v);
		if ((v = db_res_str(r, 2)) != NULL)
			strparse_copy(s->postmark_user,
			    sizeof(s->postmark_user), v);
		if ((v = db_res_str(r, 3)) != NULL)
			strparse_copy(s->postmark_auth_hash,
			    sizeof(s->postmark_auth_hash), v);
		if ((v = db_res_str(r, 4)) != NULL)
			strparse_copy(s->sendgrid_public_key,
			    sizeof(s->sendgrid_public_key), v);
		if ((v = db_res_str(r, 5)) != NULL)
			strparse_copy(s->ses_topic_arns,
			    sizeof(s->ses_topic_arns), v);
	}
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

/* The account's settings row, made with the defaults when it has none. */
static enum db_err
feedback_settings_row(struct db *db, const char *account)
{
	return db_exec(db, "INSERT IGNORE INTO feedback_settings (account_id) "
	    "VALUES (?)", DB_ARGS(DBP_STR(account)), NULL);
}

enum db_err
feedback_settings_set(struct db *db, const char *account, int suppress,
    const char *mailgun_key, const char *postmark_user,
    const char *postmark_auth_hash, const char *sendgrid_key)
{
	unsigned long long affected;
	enum db_err e;

	if ((e = feedback_settings_row(db, account)) != DB_OK)
		return e;
	if (suppress >= 0 && (e = db_exec(db, "UPDATE feedback_settings SET "
	    "suppress_hard_bounces = ? WHERE account_id = ?",
	    DB_ARGS(DBP_INT(suppress), DBP_STR(account)), &affected)) !=
	    DB_OK)
		return e;
	if (mailgun_key != NULL && (e = db_exec(db, "UPDATE "
	    "feedback_settings SET mailgun_signing_key = ? WHERE "
	    "account_id = ?", DB_ARGS(DBP_STR(mailgun_key),
	    DBP_STR(account)), &affected)) != DB_OK)
		return e;
	if (postmark_user != NULL && postmark_auth_hash != NULL &&
	    (e = db_exec(db, "UPDATE feedback_settings SET postmark_user = ?, "
	    "postmark_auth_hash = ? WHERE account_id = ?",
	    DB_ARGS(DBP_STR(postmark_user), DBP_STR(postmark_auth_hash),
	    DBP_STR(account)), &affected)) != DB_OK)
		return e;
	if (sendgrid_key != NULL && (e = db_exec(db, "UPDATE "
	    "feedback_settings SET sendgrid_public_key = ? WHERE "
	    "account_id = ?", DB_ARGS(DBP_STR(sendgrid_key),
	    DBP_STR(account)), &affected)) != DB_OK)
		return e;
	return DB_OK;
}

enum db_err
feedback_settings_set_ses(struct db *db, const char *account,
    const char *topics)
{
	unsigned long long affected;
	enum db_err e;

	if ((e = feedback_settings_row(db, account)) != DB_OK)
		return e;
	return db_exec(db, "UPDATE feedback_settings SET ses_topic_arns = ? "
	    "WHERE account_id = ?", DB_ARGS(*topics ? DBP_STR(topics) :
	    DBP_NULL, DBP_STR(account)), &affected);
}

long long
feedback_expire(struct db *db, long days, long limit)
{
	unsigned long long affected;

	if (db_exec(db, "DELETE FROM feedback_outcomes WHERE occurred_at < "
	    "UTC_TIMESTAMP(3) - INTERVAL ? DAY LIMIT ?",
	    DB_ARGS(DBP_INT(days), DBP_INT(limit)), &affected) != DB_OK)
		return -1;
	return (long long)affected;
}
