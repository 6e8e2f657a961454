/* feedback_sns_fetch.c: the SNS signing certificate (fetched and cached)
 * and subscription confirmations (feedback_sns_fetch.h). */
#include "jobs/feedback_sns_fetch.h"
#include "engine/dns.h"
#include "jobs/feedback_sns.h"
#include "jobs/fetch.h"
#include <stdio.h>
#include <string.h>

/* GET url (an SNS URL) into out (max bytes): OK on a 2xx. */
static enum feedback_sns_fetch_err
feedback_sns_fetch_get(const struct conf *c, const char *url, int cert, size_t max,
    struct buf *out, char *why, size_t whysz)
{
	enum feedback_sns_fetch_err rc = FEEDBACK_SNS_FETCH_FAILED;
	struct curl_slist *pins = NULL, *l;
	struct dns_resolver *res = NULL;
	struct dns_addrs addrs;
	struct fetch_opts o;
	struct fetch f;
	struct buf err, pin;
	char host[256], *port = NULL;
	enum fetch_err fe;
	CURLU *u = NULL;
	long status;
	size_t i;

	buf_init(&err, 256);
	buf_init(&pin, 512);
	if (!feedback_sns_url_ok(url, cert) ||
	    fetch_host_of(url, host, sizeof(host)) == -1) {
		snprintf(why, whysz, "not an SNS URL");
		buf_free(&err);
		buf_free(&pin);
		return FEEDBACK_SNS_FETCH_REFUSED;
	}
	if ((u = curl_url()) == NULL || curl_url_set(u, CURLUPART_URL, url, 0) !=
	    CURLUE_OK || curl_url_get(u, CURLUPART_PORT, &port,
	    CURLU_DEFAULT_PORT) != CURLUE_OK) {
		snprintf(why, whysz, "not an SNS URL");
		rc = FEEDBACK_SNS_FETCH_REFUSED;
		goto out;
	}
	if ((res = dns_resolver_new(c, &err)) == NULL) {
		snprintf(why, whysz, "resolver: %s", buf_str(&err));
		goto out;
	}
	dns_resolver_set_deadline(res, 0);
	if (dns_lookup_addrs(res, host, &addrs) != DNS_OK || addrs.n == 0) {
		snprintf(why, whysz, "%s does not resolve (%s)", host,
		    dns_status_names[addrs.status]);
		goto out;
	}
	/* libcurl connects to these addresses only (the guard checks each) */
	buf_printf(&pin, "%s:%s:", host, port);
	for (i = 0; i < addrs.n; i++)
		buf_printf(&pin, addrs.addr[i].ip.family == 6 ? "%s[%s]" :
		    "%s%s", i ? "," : "", addrs.addr[i].text);
	if ((l = curl_slist_append(NULL, buf_str(&pin))) == NULL)
		goto out;
	pins = l;
	fetch_opts_from_conf(&o, c, FEEDBACK_SNS_FETCH_TIMEOUT_MS, max);
	o.https_only = 1;
	if (fetch_init(&f, &o) == -1) {
		snprintf(why, whysz, "out of memory");
		goto out;
	}
	if ((fe = fetch_url(&f, url)) != FETCH_OK ||
	    curl_easy_setopt(f.easy, CURLOPT_RESOLVE, pins) != CURLE_OK) {
		snprintf(why, whysz, "%s", fetch_error_text(&f, fe));
		rc = fe == FETCH_URL_REFUSED ? FEEDBACK_SNS_FETCH_REFUSED :
		    FEEDBACK_SNS_FETCH_FAILED;
		fetch_free(&f);
		goto out;
	}
	fe = fetch_result(&f, curl_easy_perform(f.easy), &status);
	if (fe != FETCH_OK)
		snprintf(why, whysz, "%s", fetch_error_text(&f, fe));
	else if (status < 200 || status > 299)
		snprintf(why, whysz, "HTTP status %ld", status);
	else {
		buf_reset(out);
		buf_append(out, buf_str(&f.body), f.body.len);
		rc = FEEDBACK_SNS_FETCH_OK;
	}
	fetch_free(&f);
out:
	curl_slist_free_all(pins);
	curl_free(port);
	curl_url_cleanup(u);
	if (res != NULL)
		dns_resolver_free(res);
	buf_free(&err);
	buf_free(&pin);
	return rc;
}

enum feedback_sns_fetch_err
feedback_sns_fetch_cert(struct db *db, const struct conf *c, const char *url,
    struct buf *pem, int *fetched, char *why, size_t whysz)
{
	enum feedback_sns_fetch_err rc;
	unsigned long long affected;
	struct db_res *r;
	const char *v;
	int row;

	*fetched = 0;
	if (!feedback_sns_url_ok(url, 1)) {
		snprintf(why, whysz, "SigningCertURL is not an SNS URL");
		return FEEDBACK_SNS_FETCH_REFUSED;
	}
	if (db_query(db, "SELECT pem FROM sns_certs WHERE url = ? AND "
	    "fetched_at > UTC_TIMESTAMP(3) - INTERVAL ? SECOND",
	    DB_ARGS(DBP_STR(url), DBP_INT(FEEDBACK_SNS_CERT_CACHE_SECONDS)),
	    &r) != DB_OK) {
		snprintf(why, whysz, "the certificate cache: %s", db_error(db));
		return FEEDBACK_SNS_FETCH_DB;
	}
	row = db_res_next(r);
	if (row == 1 && (v = db_res_str(r, 0)) != NULL && *v != '\0') {
		buf_reset(pem);
		buf_puts(pem, v);
		db_res_free(r);
		return FEEDBACK_SNS_FETCH_OK;
	}
	db_res_free(r);
	if (row == -1) {
		snprintf(why, whysz, "the certificate cache: %s", db_error(db));
		return FEEDBACK_SNS_FETCH_DB;
	}
	if ((rc = feedback_sns_fetch_get(c, url, 1, FEEDBACK_SNS_CERT_MAX, pem, why,
	    whysz)) != FEEDBACK_SNS_FETCH_OK)
		return rc;
	*fetched = 1;
	if (!feedback_sns_cert_ok(buf_str(pem), pem->len)) {
		snprintf(why, whysz, "SigningCertURL gave no RSA certificate");
		return FEEDBACK_SNS_FETCH_FAILED;
	}
	/* a failure to cache is no failure: the next message fetches it */
	(void)db_exec(db, "INSERT INTO sns_certs (url, pem, fetched_at) "
	    "VALUES (?, ?, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE pem = "
	    "VALUES(pem), fetched_at = VALUES(fetched_at)",
	    DB_ARGS(DBP_STR(url), DBP_STR(buf_str(pem))), &affected);
	return FEEDBACK_SNS_FETCH_OK;
}

enum feedback_sns_fetch_err
feedback_sns_fetch_confirm(const struct conf *c, const char *url, char *why,
    size_t whysz)
{
	enum feedback_sns_fetch_err rc;
	struct buf body;

	buf_init(&body, 64 * 1024);
	rc = feedback_sns_fetch_get(c, url, 0, 64 * 1024, &body, why, whysz);
	buf_free(&body);
	return rc;
}
