/* sign.c: signatures of event deliveries (sign.h). The signed string is
 * built once and each secret's HMAC-SHA256 taken over it with GnuTLS
 * (gnutls_hmac_fast); receivers check it with libsvc-sdk or the helpers
 * in contrib/sdk. */
#include "jobs/sign.h"
#include "util/hex.h"
#include <gnutls/crypto.h>
#include <stdio.h>
#include <string.h>

int
sign_header(const char *const *secrets, size_t n, time_t t, const void *body,
    size_t len, struct buf *out)
{
	uint8_t mac[32];
	char hex[SIGN_V1_LEN + 1];
	struct buf msg, hdr;
	size_t i;
	int rc = -1;

	if (n == 0)
		return -1;
	buf_init(&msg, BUF_NOMAX);
	buf_init(&hdr, BUF_NOMAX);
	if (buf_printf(&msg, "%lld.", (long long)t) == -1 ||
	    (len > 0 && buf_append(&msg, body, len) == -1) ||
	    buf_printf(&hdr, "t=%lld", (long long)t) == -1)
		goto out;
	for (i = 0; i < n; i++) {
		if (secrets[i] == NULL || secrets[i][0] == '\0' ||
		    gnutls_hmac_fast(GNUTLS_MAC_SHA256, secrets[i],
		    strlen(secrets[i]), msg.data, msg.len, mac) != 0)
			goto out;
		hex_encode(mac, sizeof(mac), hex);
		if (buf_printf(&hdr, ",v1=%s", hex) == -1)
			goto out;
	}
	rc = buf_append(out, hdr.data, hdr.len);
out:
	buf_free(&msg);
	buf_free(&hdr);
	return rc;
}
