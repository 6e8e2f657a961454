/* ingest_fetch.h: svc-worker's download of an upload job's source_url
 * into the job's stored file (upload_store.h), in the 1 MiB pieces a
 * multipart upload is stored in, so that the file is then read like an
 * uploaded one and a worker never holds it whole. Through fetch.h (the SSRF
 * guard: every address checked when its socket is opened, no proxy):
 * https only, whatever allow_private_urls says; redirects (301, 302, 303,
 * 307, 308) followed here, at most INGEST_FETCH_REDIRECTS, each hop's URL
 * checked again; a body announced or found larger than 50 MB stopped while
 * it comes; one time limit for the whole download, redirects included.
 *
 * The file's format, in this order: the extension of the path of the URL
 * that answered with the file, else of source_url itself (.csv, .tsv,
 * .txt, .xlsx); else the Content-Type (text/csv, text/tab-separated-values,
 * the XLSX type); else its first bytes: a zip is XLSX, anything else CSV
 * (the delimiter sniffed; a list of one address a line reads the same). */
#ifndef SVC_INGEST_FETCH_H
#define SVC_INGEST_FETCH_H
#include "jobs/fetch.h"
#include "jobs/ingest.h"

#define INGEST_FETCH_REDIRECTS 5

/* The options of a source_url download from svc.conf: allow_private_urls,
 * ca_file, source_url_timeout_seconds, source_url_min_rate and
 * source_url_min_rate_seconds; https only, 50 MB. */
void	 ingest_fetch_opts(struct fetch_opts *, const struct conf *);

/* Downloads j->source_url into j's stored file (pieces left by an earlier
 * attempt deleted first), calling progress about once a second with the
 * bytes downloaded (rows 0), which renews the lease. INGEST_OK with *fail
 * INGEST_FAIL_NONE: the file is stored, j->format and j->file_size are
 * set, in the job's row too; INGEST_OK with *fail source_unreachable,
 * source_too_slow (under source_url_min_rate), file_too_large,
 * upload_storage_exceeded (the account's other stored upload files and
 * this one over storage_max bytes) or no_emails (an empty file) and a
 * message: nothing is stored. INGEST_STOPPED: progress returned -1, or the
 * job stopped being this owner's; nothing is stored. INGEST_DB,
 * INGEST_NOMEM. */
enum ingest_err ingest_fetch(struct db *, const struct fetch_opts *,
	    long long storage_max, struct ingest_job *, const char *owner,
	    ingest_progress_fn,
	    void *arg, enum ingest_fail *fail,
	    char message[INGEST_MESSAGE_MAX]);
#endif
