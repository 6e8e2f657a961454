/* socks5.h: the client side of a SOCKS5 exchange (RFC 1928) with
 * username/password authentication (RFC 1929), as a pure state machine
 * with no I/O of its own: the caller sends what socks5_out() gives, reads
 * at most socks5_want() octets (never more: what follows the proxy's last
 * reply is the tunnelled protocol's) and feeds them in. Only CONNECT to an
 * IP address: the caller has resolved and checked the destination. */
#ifndef SVC_SOCKS5_H
#define SVC_SOCKS5_H
#include <stddef.h>
#include <stdint.h>

#define SOCKS5_CRED_MAX 255

enum socks5_state {
	SOCKS5_S_METHOD,	/* greeting sent, waiting for the method */
	SOCKS5_S_AUTH,		/* username/password sent, waiting */
	SOCKS5_S_CONNECT,	/* CONNECT sent, waiting for the reply */
	SOCKS5_S_DONE,		/* the tunnel is open */
	SOCKS5_S_FAILED,
	SOCKS5_S__MAX
};
extern const char *const socks5_state_names[SOCKS5_S__MAX];

enum socks5_err {
	SOCKS5_OK,
	SOCKS5_E_ARGS,		/* bad credentials or address given */
	SOCKS5_E_PROTOCOL,	/* not a SOCKS5 reply */
	SOCKS5_E_NO_METHOD,	/* no acceptable method (0xFF, or one we
				 * did not offer) */
	SOCKS5_E_AUTH,		/* username/password refused */
	SOCKS5_E_REPLY,		/* CONNECT refused: see rep */
	SOCKS5_E__MAX
};
extern const char *const socks5_err_names[SOCKS5_E__MAX];

/* RFC 1928 section 6 reply codes. */
enum socks5_rep {
	SOCKS5_REP_SUCCEEDED,
	SOCKS5_REP_GENERAL_FAILURE,
	SOCKS5_REP_NOT_ALLOWED,
	SOCKS5_REP_NETWORK_UNREACHABLE,
	SOCKS5_REP_HOST_UNREACHABLE,
	SOCKS5_REP_CONNECTION_REFUSED,
	SOCKS5_REP_TTL_EXPIRED,
	SOCKS5_REP_COMMAND_NOT_SUPPORTED,
	SOCKS5_REP_ADDRESS_NOT_SUPPORTED,
	SOCKS5_REP__MAX
};
extern const char *const socks5_rep_names[SOCKS5_REP__MAX];

struct socks5 {
	enum socks5_state state;
	enum socks5_err	 err;
	int		 rep;		/* CONNECT reply code, -1 none yet */
	int		 auth_status;	/* RFC 1929 STATUS, -1 none yet */
	uint8_t		 out[3 + 2 * (1 + SOCKS5_CRED_MAX) + 22];
	size_t		 outlen, outoff;
	uint8_t		 in[4 + 1 + 255 + 2];
	size_t		 inlen;
	uint8_t		 auth[2 + 2 * (1 + SOCKS5_CRED_MAX)];
	size_t		 authlen;	/* 0: no authentication offered */
	uint8_t		 conn[4 + 16 + 2];
	size_t		 connlen;
};

/* Starts an exchange: the greeting is in out. user and pass NULL or "":
 * no authentication offered; else both 1..255 octets. family 4 or 6, addr
 * its 4 or 16 octets. SOCKS5_OK or SOCKS5_E_ARGS. */
enum socks5_err socks5_start(struct socks5 *, const char *user,
	    const char *pass, int family, const uint8_t *addr, unsigned port);
/* What is left to send of the current message (0 octets: nothing due);
 * socks5_sent says how many octets went out. */
const uint8_t *socks5_out(const struct socks5 *, size_t *len);
void	 socks5_sent(struct socks5 *, size_t n);
/* Octets the proxy's current reply still needs (0 when DONE or FAILED). */
size_t	 socks5_want(const struct socks5 *);
/* Feeds at most n octets of the proxy's replies; *used says how many were
 * taken (never past the end of the last reply: what follows is left).
 * Returns the state: DONE
 * when the tunnel is open, FAILED (err, rep, auth_status say why), else
 * still going (maybe with a message to send: socks5_out). */
enum socks5_state socks5_feed(struct socks5 *, const uint8_t *, size_t n,
	    size_t *used);
/* Whether a failure is the proxy's (1: the route is unusable: protocol,
 * method, authentication, general failure, not allowed, unsupported) or
 * the destination's (0: network or host unreachable, refused, TTL). */
int	 socks5_proxy_fault(const struct socks5 *);
#endif
