/* mxprofile.c: the learned profile of a mail host (mxprofile.h). One row
 * per MX host name in mx_profiles; a note is one INSERT ... ON DUPLICATE
 * KEY UPDATE whose unknown fields are bound as NULL and kept by COALESCE,
 * so that workers noting different facts at once never undo each other. */
#include "engine/mxprofile.h"
#include "util/strparse.h"
#include <ctype.h>
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
	p->starttls = p->rate_421 = -1;
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

enum db_err
mxprofile_get(struct db *db, const char *host, struct mxprofile *p,
    int *found)
{
	struct db_res *r = NULL;
	enum db_err e;

	mxprofile_init(p, host);
	*found = 0;
	e = db_query(db, "SELECT provider, rcpts_per_session, accept_all, "
	    "greylist_delay_s, starttls, rate_421, rate_421_at, "
	    "last_block_at, last_block, updated_at FROM mx_profiles "
	    "WHERE host = ?", DB_ARGS(DBP_STR(p->host)), &r);
	if (e != DB_OK)
		return e;
	if (db_res_next(r) == 1) {
		*found = 1;
		mxprofile_str(p->provider, sizeof(p->provider), r, 0);
		p->rcpts_per_session = mxprofile_int(r, 1);
		p->accept_all = mxprofile_int(r, 2);
		p->greylist_delay_s = mxprofile_int(r, 3);
		p->starttls = mxprofile_int(r, 4);
		p->rate_421 = mxprofile_int(r, 5);
		mxprofile_str(p->rate_421_at, sizeof(p->rate_421_at), r, 6);
		mxprofile_str(p->last_block_at, sizeof(p->last_block_at), r,
		    7);
		mxprofile_str(p->last_block, sizeof(p->last_block), r, 8);
		mxprofile_str(p->updated_at, sizeof(p->updated_at), r, 9);
	}
	db_res_free(r);
	return DB_OK;
}

static struct db_param
mxprofile_param(int v)
{
	return v < 0 ? DBP_NULL : DBP_INT(v);
}

enum db_err
mxprofile_note(struct db *db, const struct mxprofile *n)
{
	return db_exec(db, "INSERT INTO mx_profiles (host, provider, "
	    "rcpts_per_session, accept_all, greylist_delay_s, starttls, "
	    "rate_421, rate_421_at, last_block, last_block_at, updated_at) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, IF(? IS NULL, NULL, "
	    "UTC_TIMESTAMP(3)), ?, IF(? IS NULL, NULL, UTC_TIMESTAMP(3)), "
	    "UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE "
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
	    "last_block_at = COALESCE(VALUES(last_block_at), last_block_at), "
	    "updated_at = VALUES(updated_at)",
	    DB_ARGS(DBP_STR(n->host),
	    DBP_STR(n->provider[0] ? n->provider : NULL),
	    mxprofile_param(n->rcpts_per_session),
	    mxprofile_param(n->accept_all),
	    mxprofile_param(n->greylist_delay_s),
	    mxprofile_param(n->starttls), mxprofile_param(n->rate_421),
	    mxprofile_param(n->rate_421),
	    DBP_STR(n->last_block[0] ? n->last_block : NULL),
	    DBP_STR(n->last_block[0] ? n->last_block : NULL)), NULL);
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
	mxprofile_print_str(out, "updated_at", p->updated_at);
}
