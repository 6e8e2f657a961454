/* feedback_sns.c: SNS messages, their signatures and the SES events in
 * them (feedback_sns.h). URLs are read with libcurl's URL parser (the
 * one that fetches them); signatures are checked with GnuTLS. */
#include "jobs/feedback_sns.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <curl/curl.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

const char *const feedback_sns_type_names[FEEDBACK_SNS_TYPE__MAX] = {
	"SubscriptionConfirmation", "Notification", "UnsubscribeConfirmation"
};

static int
feedback_sns_bad(char *why, size_t whysz, const char *w)
{
	snprintf(why, whysz, "%s", w);
	return -1;
}

/* A string member (1 to max bytes, no NUL inside) into out: 0, or -1. */
static int
feedback_sns_str(const json_t *o, const char *name, char *out, size_t max)
{
	json_t *v = json_object_get(o, name);
	size_t n;

	if (!json_is_string(v) || (n = json_string_length(v)) == 0 ||
	    n > max || strlen(json_string_value(v)) != n)
		return -1;
	memcpy(out, json_string_value(v), n + 1);
	return 0;
}

/* A string member of any length (no NUL inside), malloc'd, or NULL. */
static char *
feedback_sns_dup(const json_t *o, const char *name)
{
	json_t *v = json_object_get(o, name);
	char *s;

	if (!json_is_string(v) || strlen(json_string_value(v)) !=
	    json_string_length(v))
		return NULL;
	if ((s = malloc(json_string_length(v) + 1)) != NULL)
		memcpy(s, json_string_value(v), json_string_length(v) + 1);
	return s;
}

int
feedback_sns_parse(const char *body, size_t n, struct feedback_sns *m,
    char *why, size_t whysz)
{
	char type[40], version[4];
	json_t *root;
	int i, rc = -1;

	memset(m, 0, sizeof(*m));
	if ((root = json_loadb(body, n, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return feedback_sns_bad(why, whysz, "not JSON");
	if (!json_is_object(root) || feedback_sns_str(root, "Type", type,
	    sizeof(type) - 1) == -1) {
		feedback_sns_bad(why, whysz, "no Type");
		goto out;
	}
	for (i = 0; i < FEEDBACK_SNS_TYPE__MAX; i++)
		if (strcmp(type, feedback_sns_type_names[i]) == 0)
			break;
	if (i == FEEDBACK_SNS_TYPE__MAX) {
		feedback_sns_bad(why, whysz, "Type is not SubscriptionConfirmation, "
		    "Notification or UnsubscribeConfirmation");
		goto out;
	}
	m->type = (enum feedback_sns_type)i;
	if (feedback_sns_str(root, "SignatureVersion", version,
	    sizeof(version) - 1) == -1 || (strcmp(version, "1") != 0 &&
	    strcmp(version, "2") != 0)) {
		feedback_sns_bad(why, whysz, "SignatureVersion is not 1 or 2");
		goto out;
	}
	m->version = version[0] - '0';
	if (feedback_sns_str(root, "MessageId", m->message_id,
	    FEEDBACK_SNS_ID_MAX) == -1 ||
	    feedback_sns_str(root, "TopicArn", m->topic_arn,
	    FEEDBACK_SNS_ARN_MAX) == -1 ||
	    feedback_sns_str(root, "Timestamp", m->timestamp,
	    sizeof(m->timestamp) - 1) == -1 ||
	    feedback_sns_str(root, "Signature", m->signature,
	    FEEDBACK_SNS_SIG_MAX) == -1 ||
	    feedback_sns_str(root, "SigningCertURL", m->signing_cert_url,
	    FEEDBACK_SNS_URL_MAX) == -1 ||
	    (m->message = feedback_sns_dup(root, "Message")) == NULL) {
		feedback_sns_bad(why, whysz, "MessageId, TopicArn, Timestamp, "
		    "Message, Signature and SigningCertURL are needed");
		goto out;
	}
	for (i = 0; m->message_id[i] != '\0'; i++)
		if (m->message_id[i] < 0x21 || m->message_id[i] > 0x7e) {
			feedback_sns_bad(why, whysz, "MessageId");
			goto out;
		}
	if (m->type == FEEDBACK_SNS_NOTIFICATION) {
		if (json_object_get(root, "Subject") != NULL &&
		    !json_is_null(json_object_get(root, "Subject"))) {
			if ((m->subject = feedback_sns_dup(root, "Subject")) ==
			    NULL) {
				feedback_sns_bad(why, whysz, "Subject");
				goto out;
			}
			m->has_subject = 1;
		}
	} else if (feedback_sns_str(root, "SubscribeURL", m->subscribe_url,
	    FEEDBACK_SNS_URL_MAX) == -1 || feedback_sns_str(root, "Token",
	    m->token, FEEDBACK_SNS_TOKEN_MAX) == -1) {
		feedback_sns_bad(why, whysz, "SubscribeURL and Token are "
		    "needed");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	if (rc == -1)
		feedback_sns_free(m);
	return rc;
}

void
feedback_sns_free(struct feedback_sns *m)
{
	free(m->message);
	free(m->subject);
	m->message = m->subject = NULL;
}

/* Appends "name\nvalue\n" to s at *len (s has room). */
static void
feedback_sns_field(char *s, size_t *len, const char *name, const char *value)
{
	size_t a = strlen(name), b = strlen(value);

	memcpy(s + *len, name, a);
	s[*len + a] = '\n';
	memcpy(s + *len + a + 1, value, b);
	s[*len + a + 1 + b] = '\n';
	*len += a + b + 2;
}

char *
feedback_sns_string_to_sign(const struct feedback_sns *m, size_t *len)
{
	const char *type = feedback_sns_type_names[m->type];
	size_t cap;
	char *s;

	cap = strlen(m->message) + strlen(m->message_id) +
	    strlen(m->timestamp) + strlen(m->topic_arn) + strlen(type) +
	    strlen(m->subscribe_url) + strlen(m->token) +
	    (m->subject ? strlen(m->subject) : 0) + 128;
	if ((s = malloc(cap)) == NULL)
		return NULL;
	*len = 0;
	feedback_sns_field(s, len, "Message", m->message);
	feedback_sns_field(s, len, "MessageId", m->message_id);
	if (m->type == FEEDBACK_SNS_NOTIFICATION) {
		if (m->has_subject)
			feedback_sns_field(s, len, "Subject", m->subject);
	} else
		feedback_sns_field(s, len, "SubscribeURL", m->subscribe_url);
	feedback_sns_field(s, len, "Timestamp", m->timestamp);
	if (m->type != FEEDBACK_SNS_NOTIFICATION)
		feedback_sns_field(s, len, "Token", m->token);
	feedback_sns_field(s, len, "TopicArn", m->topic_arn);
	feedback_sns_field(s, len, "Type", type);
	s[*len] = '\0';
	return s;
}

/* Whether host is sns.<region>.amazonaws.com(.cn), region 3+ of
 * [A-Za-z0-9-]. */
static int
feedback_sns_host_ok(const char *host)
{
	const char *p, *end;
	size_t n;

	if (strncasecmp(host, "sns.", 4) != 0)
		return 0;
	p = host + 4;
	for (end = p; (*end >= 'a' && *end <= 'z') || (*end >= 'A' &&
	    *end <= 'Z') || (*end >= '0' && *end <= '9') || *end == '-'; end++)
		;
	if ((n = (size_t)(end - p)) < 3)
		return 0;
	return strcasecmp(end, ".amazonaws.com") == 0 ||
	    strcasecmp(end, ".amazonaws.com.cn") == 0;
}

int
feedback_sns_url_ok(const char *url, int cert)
{
	char *scheme = NULL, *host = NULL, *user = NULL, *frag = NULL,
	    *query = NULL, *path = NULL;
	size_t i, pl;
	CURLU *u;
	int ok = 0;

	for (i = 0; url[i] != '\0'; i++)
		if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f ||
		    url[i] == '\\')
			return 0;
	if (i == 0 || i > FEEDBACK_SNS_URL_MAX || (u = curl_url()) == NULL)
		return 0;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		goto out;
	if (strcasecmp(scheme, "https") != 0 || !feedback_sns_host_ok(host))
		goto out;
	if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK)
		goto out;
	if (cert) {
		pl = strlen(path);
		if (pl < 5 || strcmp(path + pl - 4, ".pem") != 0 ||
		    curl_url_get(u, CURLUPART_QUERY, &query, 0) == CURLUE_OK)
			goto out;
	}
	ok = 1;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_free(frag);
	curl_free(query);
	curl_free(path);
	curl_url_cleanup(u);
	return ok;
}

/* The RSA public key of a PEM certificate valid now, or NULL. */
static gnutls_pubkey_t
feedback_sns_pubkey(const char *cert_pem, size_t cert_len)
{
	gnutls_x509_crt_t crt = NULL;
	gnutls_pubkey_t pk = NULL;
	gnutls_datum_t pem;
	time_t now = time(NULL);
	int ok = 0;

	if (cert_pem == NULL || cert_len == 0 || cert_len > 64 * 1024)
		return NULL;
	pem.data = (unsigned char *)cert_pem;
	pem.size = (unsigned)cert_len;
	if (gnutls_x509_crt_init(&crt) == 0 &&
	    gnutls_x509_crt_import(crt, &pem, GNUTLS_X509_FMT_PEM) == 0 &&
	    gnutls_x509_crt_get_activation_time(crt) <= now &&
	    gnutls_x509_crt_get_expiration_time(crt) > now &&
	    gnutls_pubkey_init(&pk) == 0 &&
	    gnutls_pubkey_import_x509(pk, crt, 0) == 0 &&
	    gnutls_pubkey_get_pk_algorithm(pk, NULL) == GNUTLS_PK_RSA)
		ok = 1;
	if (crt != NULL)
		gnutls_x509_crt_deinit(crt);
	if (!ok && pk != NULL) {
		gnutls_pubkey_deinit(pk);
		pk = NULL;
	}
	return pk;
}

int
feedback_sns_cert_ok(const char *cert_pem, size_t cert_len)
{
	gnutls_pubkey_t pk = feedback_sns_pubkey(cert_pem, cert_len);

	if (pk == NULL)
		return 0;
	gnutls_pubkey_deinit(pk);
	return 1;
}

int
feedback_sns_verify(const struct feedback_sns *m, const char *cert_pem,
    size_t cert_len)
{
	gnutls_datum_t in, sig = { NULL, 0 }, data = { NULL, 0 };
	gnutls_pubkey_t pk;
	size_t len;
	int ok = 0;

	if ((pk = feedback_sns_pubkey(cert_pem, cert_len)) == NULL)
		return 0;
	in.data = (unsigned char *)m->signature;
	in.size = (unsigned)strlen(m->signature);
	if (gnutls_base64_decode2(&in, &sig) != 0)
		goto out;
	if ((data.data = (unsigned char *)feedback_sns_string_to_sign(m,
	    &len)) == NULL)
		goto out;
	data.size = (unsigned)len;
	/* SignatureVersion 1 is SHA1withRSA, as SNS signs it */
	ok = gnutls_pubkey_verify_data2(pk, m->version == 1 ?
	    GNUTLS_SIGN_RSA_SHA1 : GNUTLS_SIGN_RSA_SHA256, m->version == 1 ?
	    GNUTLS_VERIFY_ALLOW_SIGN_WITH_SHA1 : 0, &data, &sig) >= 0;
out:
	free(data.data);
	gnutls_free(sig.data);
	gnutls_pubkey_deinit(pk);
	return ok;
}

/* The next ARN of a list (commas or blanks between) from *p: its start
 * and length, 0 at the end. */
static size_t
feedback_sns_next(const char **p, const char **start)
{
	const char *s = *p;
	size_t n;

	while (*s == ',' || *s == ' ' || *s == '\t')
		s++;
	n = strcspn(s, ", \t");
	*start = s;
	*p = s + n;
	return n;
}

int
feedback_sns_topic_listed(const char *topics, const char *arn)
{
	const char *p = topics, *s;
	size_t n, al = strlen(arn);

	if (topics == NULL || al == 0)
		return 0;
	while ((n = feedback_sns_next(&p, &s)) > 0)
		if (n == al && memcmp(s, arn, n) == 0)
			return 1;
	return 0;
}

int
feedback_sns_topics_valid(const char *topics)
{
	const char *p = topics, *s;
	size_t n, i;
	int sns;

	while ((n = feedback_sns_next(&p, &s)) > 0) {
		if (n > FEEDBACK_SNS_ARN_MAX || n < 12 ||
		    strncmp(s, "arn:aws", 7) != 0)
			return 0;
		for (i = 0, sns = 0; i < n; i++) {
			if (s[i] < 0x21 || s[i] > 0x7e)
				return 0;
			if (i + 5 <= n && memcmp(s + i, ":sns:", 5) == 0)
				sns = 1;
		}
		if (!sns)
			return 0;
	}
	return 1;
}

/* ---------------------------------------------------------------- SES */

/* A time of the event (ISO 8601 UTC, SES gives milliseconds): 0, or -1. */
static int
feedback_sns_time(const json_t *o, time_t *at)
{
	json_t *v = json_object_get(o, "timestamp");

	if (!json_is_string(v) || timeutil_parse_iso8601(json_string_value(v),
	    at) == -1 || *at < 946684800)
		return -1;
	return 0;
}

/* One recipient's event: ev from the address and codes. */
static int
feedback_sns_recipient(struct feedback_event *ev, enum feedback_outcome o,
    time_t at, const char *addr, const char *status, const char *text,
    const char *message_id, size_t index, const struct addrhash_key *key)
{
	memset(ev, 0, sizeof(*ev));
	if (addr == NULL || feedback_event_address(ev, addr, key) == -1)
		return -1;
	ev->outcome = o;
	ev->occurred_at = at;
	if (status != NULL && feedback_enhanced_ok(status) == 0)
		strparse_copy(ev->enhanced, sizeof(ev->enhanced), status);
	else if (text != NULL && feedback_enhanced_find(text, ev->enhanced) ==
	    -1)
		ev->enhanced[0] = '\0';
	if (text != NULL)
		ev->smtp_code = strparse_reply_code(text[0] == 's' &&
		    strncmp(text, "smtp;", 5) == 0 ? text + 5 +
		    strspn(text + 5, " ") : text);
	if (ev->smtp_code < 200 || ev->smtp_code > 599)
		ev->smtp_code = 0;
	snprintf(ev->event_id, sizeof(ev->event_id), "%s:%zu", message_id,
	    index);
	return 0;
}

static const char *
feedback_sns_member(const json_t *o, const char *name)
{
	json_t *v = json_object_get(o, name);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

enum feedback_sender_err
feedback_sns_ses_parse(const char *message, const char *message_id,
    const struct addrhash_key *key, struct feedback_event *ev, size_t max,
    size_t *n, char *why, size_t whysz)
{
	enum feedback_sender_err rc = FEEDBACK_SENDER_INVALID;
	enum feedback_outcome outcome;
	const char *kind, *list, *member, *text = NULL;
	json_t *root, *d, *rcpts, *r;
	time_t at;
	size_t i;

	*n = 0;
	if ((root = json_loads(message, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL || !json_is_object(root)) {
		snprintf(why, whysz, "Message is not an SES event (JSON)");
		goto out;
	}
	if ((kind = feedback_sns_member(root, "notificationType")) == NULL &&
	    (kind = feedback_sns_member(root, "eventType")) == NULL) {
		snprintf(why, whysz, "Message has no notificationType or "
		    "eventType");
		goto out;
	}
	if (strcmp(kind, "Delivery") == 0) {
		outcome = FEEDBACK_DELIVERED;
		member = "delivery";
		list = "recipients";
	} else if (strcmp(kind, "Bounce") == 0) {
		outcome = FEEDBACK_HARD_BOUNCE;
		member = "bounce";
		list = "bouncedRecipients";
	} else if (strcmp(kind, "Complaint") == 0) {
		outcome = FEEDBACK_COMPLAINT;
		member = "complaint";
		list = "complainedRecipients";
	} else {
		rc = FEEDBACK_SENDER_IGNORED;
		goto out;
	}
	if (!json_is_object(d = json_object_get(root, member))) {
		snprintf(why, whysz, "Message has no \"%s\"", member);
		goto out;
	}
	if (outcome == FEEDBACK_HARD_BOUNCE) {
		kind = feedback_sns_member(d, "bounceType");
		if (kind != NULL && strcmp(kind, "Transient") == 0)
			outcome = FEEDBACK_SOFT_BOUNCE;
		else if (kind == NULL || strcmp(kind, "Permanent") != 0) {
			/* Undetermined: SES could not tell */
			rc = FEEDBACK_SENDER_IGNORED;
			goto out;
		}
	}
	if (outcome == FEEDBACK_DELIVERED)
		text = feedback_sns_member(d, "smtpResponse");
	if (feedback_sns_time(d, &at) == -1) {
		snprintf(why, whysz, "%s.timestamp is not ISO 8601 UTC", member);
		goto out;
	}
	rcpts = json_object_get(d, list);
	if (!json_is_array(rcpts) || json_array_size(rcpts) == 0 ||
	    json_array_size(rcpts) > max ||
	    json_array_size(rcpts) > FEEDBACK_SNS_RECIPIENTS_MAX) {
		snprintf(why, whysz, "%s.%s is not an array of 1 to %d "
		    "recipients", member, list, FEEDBACK_SNS_RECIPIENTS_MAX);
		goto out;
	}
	json_array_foreach(rcpts, i, r) {
		if (outcome == FEEDBACK_DELIVERED ? feedback_sns_recipient(&ev[i],
		    outcome, at, json_is_string(r) ? json_string_value(r) :
		    NULL, NULL, text, message_id, i, key) :
		    feedback_sns_recipient(&ev[i], outcome, at,
		    feedback_sns_member(r, "emailAddress"),
		    feedback_sns_member(r, "status"),
		    feedback_sns_member(r, "diagnosticCode"), message_id, i,
		    key)) {
			snprintf(why, whysz, "%s.%s[%zu] is not an address",
			    member, list, i);
			*n = 0;
			goto out;
		}
	}
	*n = json_array_size(rcpts);
	rc = FEEDBACK_SENDER_OK;
out:
	json_decref(root);
	return rc;
}
