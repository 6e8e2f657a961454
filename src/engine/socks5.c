/* socks5.c: the SOCKS5 client exchange (socks5.h): the greeting with the
 * methods offered, the username/password sub-negotiation (RFC 1929), the
 * CONNECT request by IP address and the parsing of each reply, octet
 * counts first so that nothing past the last reply is ever asked for. */
#include "engine/socks5.h"
#include <string.h>

const char *const socks5_state_names[SOCKS5_S__MAX] = {
	[SOCKS5_S_METHOD] = "method",
	[SOCKS5_S_AUTH] = "auth",
	[SOCKS5_S_CONNECT] = "connect",
	[SOCKS5_S_DONE] = "done",
	[SOCKS5_S_FAILED] = "failed",
};

const char *const socks5_err_names[SOCKS5_E__MAX] = {
	[SOCKS5_OK] = "ok",
	[SOCKS5_E_ARGS] = "bad arguments",
	[SOCKS5_E_PROTOCOL] = "not a SOCKS5 reply",
	[SOCKS5_E_NO_METHOD] = "no acceptable authentication method",
	[SOCKS5_E_AUTH] = "username/password refused",
	[SOCKS5_E_REPLY] = "CONNECT refused",
};

const char *const socks5_rep_names[SOCKS5_REP__MAX] = {
	[SOCKS5_REP_SUCCEEDED] = "succeeded",
	[SOCKS5_REP_GENERAL_FAILURE] = "general failure",
	[SOCKS5_REP_NOT_ALLOWED] = "not allowed by ruleset",
	[SOCKS5_REP_NETWORK_UNREACHABLE] = "network unreachable",
	[SOCKS5_REP_HOST_UNREACHABLE] = "host unreachable",
	[SOCKS5_REP_CONNECTION_REFUSED] = "connection refused",
	[SOCKS5_REP_TTL_EXPIRED] = "TTL expired",
	[SOCKS5_REP_COMMAND_NOT_SUPPORTED] = "command not supported",
	[SOCKS5_REP_ADDRESS_NOT_SUPPORTED] = "address type not supported",
};

#define SOCKS5_VER	0x05
#define SOCKS5_AUTH_VER	0x01	/* RFC 1929's sub-negotiation version */
#define SOCKS5_M_NONE	0x00
#define SOCKS5_M_USER	0x02
#define SOCKS5_M_REFUSE	0xff
#define SOCKS5_CMD_CONNECT 0x01
#define SOCKS5_ATYP_V4	0x01
#define SOCKS5_ATYP_NAME 0x03
#define SOCKS5_ATYP_V6	0x04

static void
socks5_put(struct socks5 *s, const uint8_t *p, size_t n)
{
	memcpy(s->out, p, n);
	s->outlen = n;
	s->outoff = 0;
}

enum socks5_err
socks5_start(struct socks5 *s, const char *user, const char *pass,
    int family, const uint8_t *addr, unsigned port)
{
	size_t ul, pl, alen = family == 6 ? 16 : 4;
	uint8_t greet[3];

	memset(s, 0, sizeof(*s));
	s->rep = -1;
	s->auth_status = -1;
	s->state = SOCKS5_S_FAILED;
	s->err = SOCKS5_E_ARGS;
	ul = user != NULL ? strlen(user) : 0;
	pl = pass != NULL ? strlen(pass) : 0;
	if ((family != 4 && family != 6) || addr == NULL || port == 0 ||
	    port > 65535 || ul > SOCKS5_CRED_MAX || pl > SOCKS5_CRED_MAX ||
	    (ul == 0) != (pl == 0))
		return SOCKS5_E_ARGS;
	if (ul > 0) {
		/* VER ULEN UNAME PLEN PASSWD */
		s->auth[0] = SOCKS5_AUTH_VER;
		s->auth[1] = (uint8_t)ul;
		memcpy(s->auth + 2, user, ul);
		s->auth[2 + ul] = (uint8_t)pl;
		memcpy(s->auth + 3 + ul, pass, pl);
		s->authlen = 3 + ul + pl;
	}
	/* VER CMD RSV ATYP DST.ADDR DST.PORT */
	s->conn[0] = SOCKS5_VER;
	s->conn[1] = SOCKS5_CMD_CONNECT;
	s->conn[2] = 0;
	s->conn[3] = family == 6 ? SOCKS5_ATYP_V6 : SOCKS5_ATYP_V4;
	memcpy(s->conn + 4, addr, alen);
	s->conn[4 + alen] = (uint8_t)(port >> 8);
	s->conn[5 + alen] = (uint8_t)(port & 0xff);
	s->connlen = 6 + alen;
	/* VER NMETHODS METHODS: only the one we mean to use, so that a
	 * proxy that wants a password says so rather than letting us in. */
	greet[0] = SOCKS5_VER;
	greet[1] = 1;
	greet[2] = s->authlen ? SOCKS5_M_USER : SOCKS5_M_NONE;
	socks5_put(s, greet, sizeof(greet));
	s->state = SOCKS5_S_METHOD;
	s->err = SOCKS5_OK;
	return SOCKS5_OK;
}

const uint8_t *
socks5_out(const struct socks5 *s, size_t *len)
{
	*len = s->outlen - s->outoff;
	return s->out + s->outoff;
}

void
socks5_sent(struct socks5 *s, size_t n)
{
	s->outoff += n < s->outlen - s->outoff ? n : s->outlen - s->outoff;
	if (s->outoff == s->outlen)
		s->outlen = s->outoff = 0;
}

size_t
socks5_want(const struct socks5 *s)
{
	size_t need;

	switch (s->state) {
	case SOCKS5_S_METHOD:
	case SOCKS5_S_AUTH:
		need = 2;
		break;
	case SOCKS5_S_CONNECT:
		/* VER REP RSV ATYP, then the address's length is known */
		if (s->inlen < 5)
			need = 5;
		else if (s->in[3] == SOCKS5_ATYP_V4)
			need = 4 + 4 + 2;
		else if (s->in[3] == SOCKS5_ATYP_V6)
			need = 4 + 16 + 2;
		else	/* SOCKS5_ATYP_NAME: one length octet, the name */
			need = 4 + 1 + (size_t)s->in[4] + 2;
		break;
	default:
		return 0;
	}
	return need > s->inlen ? need - s->inlen : 0;
}

static enum socks5_state
socks5_fail(struct socks5 *s, enum socks5_err e)
{
	s->state = SOCKS5_S_FAILED;
	s->err = e;
	s->outlen = s->outoff = 0;
	return s->state;
}

/* A whole reply is in s->in: act on it. */
static enum socks5_state
socks5_reply(struct socks5 *s)
{
	switch (s->state) {
	case SOCKS5_S_METHOD:
		if (s->in[0] != SOCKS5_VER)
			return socks5_fail(s, SOCKS5_E_PROTOCOL);
		if (s->in[1] == SOCKS5_M_USER && s->authlen > 0) {
			socks5_put(s, s->auth, s->authlen);
			s->state = SOCKS5_S_AUTH;
		} else if (s->in[1] == SOCKS5_M_NONE && s->authlen == 0) {
			socks5_put(s, s->conn, s->connlen);
			s->state = SOCKS5_S_CONNECT;
		} else
			return socks5_fail(s, SOCKS5_E_NO_METHOD);
		break;
	case SOCKS5_S_AUTH:
		/* VER STATUS; VER is 1 (some proxies answer 5) */
		if (s->in[0] != SOCKS5_AUTH_VER && s->in[0] != SOCKS5_VER)
			return socks5_fail(s, SOCKS5_E_PROTOCOL);
		s->auth_status = s->in[1];
		if (s->in[1] != 0)
			return socks5_fail(s, SOCKS5_E_AUTH);
		socks5_put(s, s->conn, s->connlen);
		s->state = SOCKS5_S_CONNECT;
		break;
	case SOCKS5_S_CONNECT:
		if (s->in[0] != SOCKS5_VER || s->in[2] != 0)
			return socks5_fail(s, SOCKS5_E_PROTOCOL);
		s->rep = s->in[1];
		if (s->in[1] != SOCKS5_REP_SUCCEEDED)
			return socks5_fail(s, SOCKS5_E_REPLY);
		s->state = SOCKS5_S_DONE;
		break;
	default:
		break;
	}
	s->inlen = 0;
	return s->state;
}

enum socks5_state
socks5_feed(struct socks5 *s, const uint8_t *p, size_t n, size_t *used)
{
	size_t want, take;

	*used = 0;
	while (n > 0 && (want = socks5_want(s)) > 0) {
		take = n < want ? n : want;
		memcpy(s->in + s->inlen, p, take);
		s->inlen += take;
		p += take;
		n -= take;
		*used += take;
		if (s->state == SOCKS5_S_CONNECT && s->inlen >= 4 &&
		    s->in[3] != SOCKS5_ATYP_V4 && s->in[3] != SOCKS5_ATYP_V6 &&
		    s->in[3] != SOCKS5_ATYP_NAME)
			return socks5_fail(s, SOCKS5_E_PROTOCOL);
		if (s->state == SOCKS5_S_CONNECT && s->inlen == 5 &&
		    s->in[3] == SOCKS5_ATYP_NAME && s->in[4] == 0)
			return socks5_fail(s, SOCKS5_E_PROTOCOL);
		if (socks5_want(s) == 0 && socks5_reply(s) == SOCKS5_S_FAILED)
			return s->state;
		/* a message to send comes before the next reply */
		if (s->outlen > 0)
			break;
	}
	return s->state;
}

int
socks5_proxy_fault(const struct socks5 *s)
{
	if (s->state != SOCKS5_S_FAILED)
		return 0;
	if (s->err != SOCKS5_E_REPLY)
		return 1;
	switch (s->rep) {
	case SOCKS5_REP_NETWORK_UNREACHABLE:
	case SOCKS5_REP_HOST_UNREACHABLE:
	case SOCKS5_REP_CONNECTION_REFUSED:
	case SOCKS5_REP_TTL_EXPIRED:
		return 0;
	default:
		return 1;
	}
}
