/* mxprofile.c: the learned profile of a mail host (mxprofile.h). One row
 * per MX host name in mx_profiles; a note is one INSERT ... ON DUPLICATE
 * KEY UPDATE whose unknown fields are bound as NULL and kept by COALESCE,
 * so that workers noting different facts at once never undo each other;
 * many notes go in one statement of several rows, applied in order. */
#include "engine/mxprofile.h"
#include "core/dbsql.h"
#include "util/strparse.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void
mxprofile_init(struct mxprofile *p, const char *host)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	strparse_copy(p->host, sizeof(p->host), host ? host : "");
	for (i = 0; p->host[i] != '\0'; i++)
		p->host[i] = (char)tolower((unsigned char)p->host[i]);
	p->rcpts_per_session = p->accept_all = p->greylist_delay_s = -1;
	p->starttls = p->rate_421 = p->sessions_max = -1;
	p->sessions_max_age_s = -1;
}

void
mxprofile_merge(struct mxprofile *into, const struct mxprofile *n)
{
	if (n->provider[0] != '\0')
		memcpy(into->provider, n->provider, sizeof(into->provider));
	if (n->rcpts_per_session >= 0)
		into->rcpts_per_session = n->rcpts_per_session;
	if (n->accept_all >= 0)
		into->accept_all = n->accept_all;
	if (n->greylist_delay_s >= 0)
		into->greylist_delay_s = n->greylist_delay_s;
	if (n->starttls >= 0)
		into->starttls = n->starttls;
	if (n->rate_421 >= 0)
		into->rate_421 = n->rate_421;
	if (n->last_block[0] != '\0')
		memcpy(into->last_block, n->last_block,
		    sizeof(into->last_block));
	if (n->sessions_max >= 0)
		into->sessions_max = n->sessions_max;
}

int
mxprofile_sessions_max(const struct mxprofile *p)
{
	/* (an age below 0, a time ahead of this clock: another database
	 * node's, is fresh) */
	if (p->sessions_max <= 0 || p->sessions_max_at[0] == '\0' ||
	    p->sessions_max_age_s >= MXPROFILE_SESSIONS_MAX_TTL_S)
		return -1;
	return p->sessions_max;
}

static int
mxprofile_int(struct db_res *r, unsigned col)
{
	return db_res_isnull(r, col) ? -1 : (int)db_res_int(r, col);
}

static void
mxprofile_str(char *dst, size_t sz, struct db_res *r, unsigned col)
{
	const char *s = db_res_str(r, col);

	strparse_copy(dst, sz, s ? s : "");
}

/* The columns a profile is read from, in mxprofile_row's order. */
#define MXPROFILE_COLUMNS "provider, rcpts_per_session, accept_all, " \
	"greylist_delay_s, starttls, rate_421, rate_421_at, last_block_at, " \
	"last_block, updated_at, sessions_max, sessions_max_at, " \
	"TIMESTAMPDIFF(SECOND, sessions_max_at, UTC_TIMESTAMP(3))"

/* p from a row whose MXPROFILE_COLUMNS begin at column first. */
static void
mxprofile_row(struct db_res *r, unsigned first, struct mxprofile *p)
{
	mxprofile_str(p->provider, sizeof(p->provider), r, first);
	p->rcpts_per_session = mxprofile_int(r, first + 1);
	p->accept_all = mxprofile_int(r, first + 2);
	p->greylist_delay_s = mxprofile_int(r, first + 3);
	p->starttls = mxprofile_int(r, first + 4);
	p->rate_421 = mxprofile_int(r, first + 5);
	mxprofile_str(p->rate_421_at, sizeof(p->rate_421_at), r, first + 6);
	mxprofile_str(p->last_block_at, sizeof(p->last_block_at), r,
	    first + 7);
	mxprofile_str(p->last_block, sizeof(p->last_block), r, first + 8);
	mxprofile_str(p->updated_at, sizeof(p->updated_at), r, first + 9);
	p->sessions_max = mxprofile_int(r, first + 10);
	mxprofile_str(p->sessions_max_at, sizeof(p->sessions_max_at), r,
	    first + 11);
	p->sessions_max_age_s = db_res_isnull(r, first + 12) ? -1 :
	    (long)db_res_int(r, first + 12);
}

struct mxprofile_many {
	struct mxprofile	*p;
	int			*found;
};

static void
mxprofile_many_row(void *arg, struct db_res *r, size_t i)
{
	struct mxprofile_many *m = arg;

	m->found[i] = 1;
	mxprofile_row(r, 1, &m->p[i]);
}

enum db_err
mxprofile_get_many(struct db *db, struct mxprofile *p, int *found, size_t n)
{
	struct mxprofile_many m = { p, found };
	const char **keys;
	enum db_err e;
	size_t i;

	if (n == 0)
		return DB_OK;
	if ((keys = calloc(n, sizeof(*keys))) == NULL)
		return DB_ERR_QUERY;
	for (i = 0; i < n; i++) {
		found[i] = 0;
		keys[i] = p[i].host;
	}
	e = dbsql_select_in(db, "SELECT host, " MXPROFILE_COLUMNS " FROM "
	    "mx_profiles WHERE host IN (", keys, n, mxprofile_many_row, &m);
	free(keys);
	return e;
}

enum db_err
mxprofile_get(struct db *db, const char *host, struct mxprofile *p,
    int *found)
{
	mxprofile_init(p, host);
	return mxprofile_get_many(db, p, found, 1);
}

static struct db_param
mxprofile_param(int v)
{
	return v < 0 ? DBP_NULL : DBP_INT(v);
}

/* MXPROFILE_SESSIONS_MAX_TTL_S as SQL text, so that the number is written
 * once (# makes a string of the macro's value, hence the two steps). */
#define MXPROFILE_TEXT(n)	#n
#define MXPROFILE_NUMBER_TEXT(n) MXPROFILE_TEXT(n)
#define MXPROFILE_TTL_SQL	"INTERVAL " \
	MXPROFILE_NUMBER_TEXT(MXPROFILE_SESSIONS_MAX_TTL_S) " SECOND"

/* Notes per INSERT at most (a power of two, see dbsql.h). */
#define MXPROFILE_GROUP_MAX	32
#define MXPROFILE_NOTE_PARAMS	12

static void
mxprofile_note_params(const struct mxprofile *n, struct db_param *q)
{
	q[0] = DBP_STR(n->host);
	q[1] = DBP_STR(n->provider[0] ? n->provider : NULL);
	q[2] = mxprofile_param(n->rcpts_per_session);
	q[3] = mxprofile_param(n->accept_all);
	q[4] = mxprofile_param(n->greylist_delay_s);
	q[5] = mxprofile_param(n->starttls);
	q[6] = mxprofile_param(n->rate_421);
	q[7] = mxprofile_param(n->rate_421);
	q[8] = DBP_STR(n->last_block[0] ? n->last_block : NULL);
	q[9] = DBP_STR(n->last_block[0] ? n->last_block : NULL);
	q[10] = mxprofile_param(n->sessions_max);
	q[11] = mxprofile_param(n->sessions_max);
}

enum db_err
mxprofile_note_many(struct db *db, const struct mxprofile *notes, size_t n)
{
	struct db_param q[MXPROFILE_GROUP_MAX * MXPROFILE_NOTE_PARAMS];
	struct buf sql;
	enum db_err e = DB_OK;
	size_t i = 0, k, j;

	buf_init(&sql, BUF_NOMAX);
	while (e == DB_OK && i < n) {
		k = dbsql_group(n - i, MXPROFILE_GROUP_MAX);
		dbsql_repeat(&sql, "INSERT INTO mx_profiles (host, provider, "
		    "rcpts_per_session, accept_all, greylist_delay_s, starttls, "
		    "rate_421, rate_421_at, last_block, last_block_at, "
		    "sessions_max, sessions_max_at, updated_at) VALUES ",
		    "(?, ?, ?, ?, ?, ?, ?, IF(? IS NULL, NULL, "
		    "UTC_TIMESTAMP(3)), ?, IF(? IS NULL, NULL, "
		    "UTC_TIMESTAMP(3)), ?, IF(? IS NULL, NULL, "
		    "UTC_TIMESTAMP(3)), UTC_TIMESTAMP(3))", ",", k,
		    " ON DUPLICATE KEY UPDATE "
		    "provider = COALESCE(VALUES(provider), provider), "
		    "rcpts_per_session = COALESCE(VALUES(rcpts_per_session), "
		    "rcpts_per_session), "
		    "accept_all = COALESCE(VALUES(accept_all), accept_all), "
		    "greylist_delay_s = COALESCE(VALUES(greylist_delay_s), "
		    "greylist_delay_s), "
		    "starttls = COALESCE(VALUES(starttls), starttls), "
		    "rate_421 = COALESCE(VALUES(rate_421), rate_421), "
		    "rate_421_at = COALESCE(VALUES(rate_421_at), rate_421_at), "
		    "last_block = COALESCE(VALUES(last_block), last_block), "
		    "last_block_at = COALESCE(VALUES(last_block_at), "
		    "last_block_at), "
		    /* the lower of two caps learned within a day (workers
		     * that read the profile before the other wrote); this
		     * reads sessions_max_at before it is assigned */
		    "sessions_max = IF(VALUES(sessions_max) IS NULL, "
		    "sessions_max, IF(sessions_max_at > UTC_TIMESTAMP(3) - "
		    MXPROFILE_TTL_SQL ", "
		    "LEAST(sessions_max, VALUES(sessions_max)), "
		    "VALUES(sessions_max))), "
		    "sessions_max_at = COALESCE(VALUES(sessions_max_at), "
		    "sessions_max_at), updated_at = VALUES(updated_at)");
		for (j = 0; j < k; j++)
			mxprofile_note_params(&notes[i + j],
			    &q[j * MXPROFILE_NOTE_PARAMS]);
		e = db_exec(db, buf_str(&sql), q, k * MXPROFILE_NOTE_PARAMS,
		    NULL);
		i += k;
	}
	buf_free(&sql);
	return e;
}

enum db_err
mxprofile_note(struct db *db, const struct mxprofile *n)
{
	return mxprofile_note_many(db, n, 1);
}

static void
mxprofile_print_int(struct buf *out, const char *key, int v)
{
	if (v < 0)
		buf_printf(out, "%-18s unknown\n", key);
	else
		buf_printf(out, "%-18s %d\n", key, v);
}

static void
mxprofile_print_str(struct buf *out, const char *key, const char *v)
{
	buf_printf(out, "%-18s %s\n", key, v[0] ? v : "-");
}

void
mxprofile_print(const struct mxprofile *p, struct buf *out)
{
	mxprofile_print_str(out, "host", p->host);
	mxprofile_print_str(out, "provider", p->provider);
	mxprofile_print_int(out, "rcpts_per_session", p->rcpts_per_session);
	mxprofile_print_int(out, "accept_all", p->accept_all);
	mxprofile_print_int(out, "greylist_delay_s", p->greylist_delay_s);
	mxprofile_print_int(out, "starttls", p->starttls);
	mxprofile_print_int(out, "rate_421", p->rate_421);
	mxprofile_print_str(out, "rate_421_at", p->rate_421_at);
	mxprofile_print_str(out, "last_block_at", p->last_block_at);
	mxprofile_print_str(out, "last_block", p->last_block);
	mxprofile_print_int(out, "sessions_max", p->sessions_max);
	if (p->sessions_max > 0)
		buf_printf(out, "%-18s %s%s\n", "sessions_max_at",
		    p->sessions_max_at, mxprofile_sessions_max(p) < 0 ?
		    " (more than a day ago: no longer applied)" : "");
	mxprofile_print_str(out, "updated_at", p->updated_at);
}
