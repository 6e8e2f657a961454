/* retentionadm.c: svcadm's side of erasure (retentionadm.h); the erasing
 * and the receipts themselves are jobs/retention.c. */
#include "admin/retentionadm.h"
#include "jobs/retention.h"

int
retentionadm_erase(struct db *db, const char *account, const char *actor,
    FILE *out, struct buf *err)
{
	struct retention_counts n;
	long long jobs, refunded;
	int k, rc;

	rc = retention_erase_account(db, account, actor, &n, &jobs, &refunded);
	if (rc == 1) {
		buf_printf(err, "no account %s", account);
		return -1;
	}
	if (rc != 0) {
		buf_printf(err, "erase %s: %s", account, db_error(db));
		return -1;
	}
	fprintf(out, "account %s\njobs %lld\ncredits_refunded %lld\n", account,
	    jobs, refunded);
	for (k = 0; k < RETENTION_KIND__MAX; k++)
		fprintf(out, "%s %lld\n", retention_kind_names[k], n.n[k]);
	return 0;
}

static int
retentionadm_audit_row(void *arg, const struct retention_audit_row *r)
{
	FILE *out = arg;
	int k;

	fprintf(out, "%s account=%s job=%s actor=%s actor_id=%s reason=%s",
	    r->created_at, r->account_id, r->job_id ? r->job_id : "-",
	    r->actor, r->actor_id ? r->actor_id : "-", r->reason);
	for (k = 0; k < RETENTION_KIND__MAX; k++)
		fprintf(out, " %s=%lld", retention_kind_names[k],
		    r->counts.n[k]);
	fputc('\n', out);
	return 0;
}

int
retentionadm_audit(struct db *db, const char *account, long limit,
    FILE *out, struct buf *err)
{
	if (retention_audit_list(db, account, 0, limit, NULL,
	    retentionadm_audit_row, out) != 0) {
		buf_printf(err, "audit: %s", db_error(db));
		return -1;
	}
	return 0;
}
