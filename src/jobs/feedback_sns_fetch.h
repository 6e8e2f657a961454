/* feedback_sns_fetch.h: what /v1/feedback/ses fetches from SNS: the
 * signing certificate of SigningCertURL (cached in MariaDB, table
 * sns_certs, for FEEDBACK_SNS_CERT_CACHE_SECONDS) and the SubscribeURL of
 * a SubscriptionConfirmation (a GET confirms the subscription).
 *
 * The URL must pass feedback_sns_url_ok first (https on
 * sns.<region>.amazonaws.com: nothing is ever fetched from another host).
 * The host is resolved with the engine's resolver (dns_resolver, the one
 * verification uses) and libcurl is pinned to those addresses; the
 * transfer is fetch.h's (the SSRF guard on every address, ca_file, https
 * only, allow_url_ports for a port other than 443, a time limit). */
#ifndef SVC_FEEDBACK_SNS_FETCH_H
#define SVC_FEEDBACK_SNS_FETCH_H
#include "core/db.h"
#include "util/buf.h"
#include "util/conf.h"

#define FEEDBACK_SNS_CERT_CACHE_SECONDS	86400
#define FEEDBACK_SNS_CERT_MAX		(64 * 1024)
#define FEEDBACK_SNS_FETCH_TIMEOUT_MS	10000

enum feedback_sns_fetch_err {
	FEEDBACK_SNS_FETCH_OK,
	FEEDBACK_SNS_FETCH_REFUSED,	/* not an SNS URL, or the guard */
	FEEDBACK_SNS_FETCH_FAILED,	/* DNS, connection, TLS, not 2xx */
	FEEDBACK_SNS_FETCH_DB,		/* the cache could not be read */
	FEEDBACK_SNS_FETCH_ERR__MAX
};

/* The PEM certificate at url into pem (from the cache when fetched less
 * than a day ago, else fetched and cached); *fetched 1 when it was
 * fetched now. why says what failed (for logs). */
enum feedback_sns_fetch_err feedback_sns_fetch_cert(struct db *,
	    const struct conf *, const char *url, struct buf *pem,
	    int *fetched, char *why, size_t whysz);
/* Confirms a subscription: GET url (a SubscribeURL), OK on a 2xx. */
enum feedback_sns_fetch_err feedback_sns_fetch_confirm(const struct conf *,
	    const char *url, char *why, size_t whysz);
#endif
