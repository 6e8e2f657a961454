/* svc_webhook.c: libsvc-sdk's signature check (svc-sdk.h). It depends on
 * nothing of the service, only on GnuTLS for HMAC-SHA256. The header is
 * "t=<decimal>,v1=<64 hex>[,v1=...]": items separated by commas, spaces
 * and tabs around an item ignored, names other than t and v1 ignored; t
 * given once, 1 to 18 digits. Each secret's HMAC over "<t as sent>.<body>"
 * is compared with every v1 in constant time; a match whose t is within
 * the tolerance is SVC_WEBHOOK_OK. */
#include "svc-sdk.h"
#include <gnutls/crypto.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SVC_WEBHOOK_HEADER_MAX	8192
#define SVC_WEBHOOK_T_DIGITS	18
#define SVC_WEBHOOK_V1_MAX	16	/* v1 values looked at */

static const char *const svc_webhook_names[SVC_WEBHOOK__MAX] = {
	[SVC_WEBHOOK_OK] = "ok",
	[SVC_WEBHOOK_BAD_HEADER] = "bad_header",
	[SVC_WEBHOOK_NO_MATCH] = "no_matching_signature",
	[SVC_WEBHOOK_TIMESTAMP] = "timestamp_outside_tolerance",
};

const char *
svc_webhook_result_name(enum svc_webhook_result r)
{
	return (unsigned)r < SVC_WEBHOOK__MAX ? svc_webhook_names[r] :
	    "unknown";
}

/* What the header says. */
struct svc_webhook_sig {
	const char	*t;		/* the digits as sent */
	size_t		 tlen;
	long long	 tval;
	uint8_t		 v1[SVC_WEBHOOK_V1_MAX][32];
	int		 v1ok[SVC_WEBHOOK_V1_MAX];	/* valid hex of 32 bytes */
	size_t		 nv1;
};

/* (its own, not util/hex.c: the SDK depends on nothing of the service) */
static int
svc_webhook_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 64 hex digits into 32 bytes; 0, or -1 when it is not that. */
static int
svc_webhook_unhex(const char *s, size_t n, uint8_t out[32])
{
	size_t i;
	int hi, lo;

	if (n != 64)
		return -1;
	for (i = 0; i < 32; i++) {
		if ((hi = svc_webhook_hexval(s[2 * i])) < 0 ||
		    (lo = svc_webhook_hexval(s[2 * i + 1])) < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* One item "name=value" (white space trimmed by the caller). */
static int
svc_webhook_item(const char *p, size_t n, struct svc_webhook_sig *sig)
{
	const char *eq = memchr(p, '=', n), *v;
	size_t k, vn, i;

	if (eq == NULL || eq == p)
		return -1;
	k = (size_t)(eq - p);
	v = eq + 1;
	vn = n - k - 1;
	if (k == 1 && p[0] == 't') {
		if (sig->t != NULL || vn == 0 || vn > SVC_WEBHOOK_T_DIGITS)
			return -1;
		sig->tval = 0;
		for (i = 0; i < vn; i++) {
			if (v[i] < '0' || v[i] > '9')
				return -1;
			sig->tval = sig->tval * 10 + (v[i] - '0');
		}
		sig->t = v;
		sig->tlen = vn;
	} else if (k == 2 && p[0] == 'v' && p[1] == '1') {
		if (sig->nv1 < SVC_WEBHOOK_V1_MAX) {
			sig->v1ok[sig->nv1] = svc_webhook_unhex(v, vn,
			    sig->v1[sig->nv1]) == 0;
			sig->nv1++;
		}
	}
	return 0;
}

static int
svc_webhook_parse(const char *h, struct svc_webhook_sig *sig)
{
	const char *p, *e, *end;
	size_t len;

	memset(sig, 0, sizeof(*sig));
	if (h == NULL || (len = strnlen(h, SVC_WEBHOOK_HEADER_MAX + 1)) == 0 ||
	    len > SVC_WEBHOOK_HEADER_MAX)
		return -1;
	end = h + len;
	for (p = h; p <= end; p = e + 1) {
		if ((e = memchr(p, ',', (size_t)(end - p))) == NULL)
			e = end;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		len = (size_t)(e - p);
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (len == 0 || svc_webhook_item(p, len, sig) == -1)
			return -1;
	}
	return sig->t != NULL && sig->nv1 > 0 ? 0 : -1;
}

/* Whether a and b (32 bytes) are equal, in time that does not depend on
 * where they differ. */
static int
svc_webhook_same(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;
	size_t i;

	for (i = 0; i < 32; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* Whether a secret signed what sig says: its MAC over "<t>.<body>". */
static int
svc_webhook_signed_by(const struct svc_webhook_sig *sig, const char *secret,
    const void *body, size_t len)
{
	gnutls_hmac_hd_t h;
	uint8_t mac[32];
	size_t i;
	int match = 0;

	if (secret == NULL || secret[0] == '\0' ||
	    gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, secret,
	    strlen(secret)) < 0)
		return 0;
	if (gnutls_hmac(h, sig->t, sig->tlen) < 0 ||
	    gnutls_hmac(h, ".", 1) < 0 ||
	    (len > 0 && gnutls_hmac(h, body, len) < 0)) {
		gnutls_hmac_deinit(h, NULL);
		return 0;
	}
	gnutls_hmac_deinit(h, mac);
	for (i = 0; i < sig->nv1; i++)
		match |= sig->v1ok[i] && svc_webhook_same(mac, sig->v1[i]);
	return match;
}

enum svc_webhook_result
svc_webhook_verify(const char *header, const void *body, size_t len,
    const char *const *secrets, size_t nsecrets, long tolerance_s,
    long long now)
{
	struct svc_webhook_sig sig;
	unsigned long long diff;
	size_t i;
	int match = 0;

	if (svc_webhook_parse(header, &sig) == -1)
		return SVC_WEBHOOK_BAD_HEADER;
	for (i = 0; i < nsecrets; i++)
		match |= svc_webhook_signed_by(&sig, secrets[i], body, len);
	if (!match)
		return SVC_WEBHOOK_NO_MATCH;
	if (tolerance_s < 0)
		tolerance_s = 0;
	/* the distance, in unsigned arithmetic: no overflow for any now */
	diff = now > sig.tval ? (unsigned long long)now -
	    (unsigned long long)sig.tval : (unsigned long long)sig.tval -
	    (unsigned long long)now;
	return diff <= (unsigned long long)tolerance_s ? SVC_WEBHOOK_OK :
	    SVC_WEBHOOK_TIMESTAMP;
}
