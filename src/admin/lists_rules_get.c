/* lists_rules_get.c: one rule table downloaded over HTTPS with libcurl
 * for "svcadm lists update" (see lists_rules_get.h). */
#include "admin/lists_rules_get.h"
#include "admin/lists_rules.h"
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

struct lists_rules_sink {
	struct buf	*body;
	int		 too_large;
	int		 nomem;
};

static size_t
lists_rules_get_write(char *p, size_t size, size_t n, void *arg)
{
	struct lists_rules_sink *s = arg;

	if (s->body->len + size * n > LISTS_RULES_GET_MAX) {
		s->too_large = 1;
		return 0;	/* CURLE_WRITE_ERROR */
	}
	if (buf_append(s->body, p, size * n) == -1) {
		s->nomem = 1;
		return 0;
	}
	return size * n;
}

int
lists_rules_get(const char *url, const char *ca_file, struct buf *body,
    struct buf *err)
{
	struct lists_rules_sink sink = { body, 0, 0 };
	char errbuf[CURL_ERROR_SIZE], shown[1024];
	CURL *h;
	CURLcode rc;
	long status = 0;
	int bad = 0;

	buf_reset(body);
	lists_rules_url_shown(url, shown, sizeof(shown));
	if (strncasecmp(url, "https://", 8) != 0) {
		buf_printf(err, "%s: not an https:// URL", shown);
		return -1;
	}
	if ((h = curl_easy_init()) == NULL) {
		buf_puts(err, "out of memory");
		return -1;
	}
	errbuf[0] = '\0';
	bad |= curl_easy_setopt(h, CURLOPT_URL, url) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https") != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https") !=
	    CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
	    LISTS_RULES_GET_TIMEOUT_MS) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION,
	    lists_rules_get_write) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_USERAGENT, "svcadm/" PACKAGE_VERSION)
	    != CURLE_OK;
	if (ca_file != NULL && ca_file[0] != '\0')
		bad |= curl_easy_setopt(h, CURLOPT_CAINFO, ca_file) != CURLE_OK;
	if (bad) {
		curl_easy_cleanup(h);
		buf_printf(err, "%s: libcurl refused an option", shown);
		return -1;
	}
	rc = curl_easy_perform(h);
	if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
		status = 0;
	curl_easy_cleanup(h);
	if (sink.too_large || sink.nomem) {
		if (sink.too_large)
			buf_printf(err, "%s: larger than %u bytes", shown,
			    LISTS_RULES_GET_MAX);
		else
			buf_printf(err, "%s: out of memory", shown);
		return -1;
	}
	if (rc != CURLE_OK) {
		buf_printf(err, "%s: %s", shown, errbuf[0] != '\0' ? errbuf :
		    curl_easy_strerror(rc));
		return -1;
	}
	if (status != 200) {
		buf_printf(err, "%s: HTTP status %ld, not 200", shown, status);
		return -1;
	}
	return 0;
}
