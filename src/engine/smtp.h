/* smtp.h: the SMTP probing client. An explicit, non-blocking state machine
 * (banner, EHLO or HELO, STARTTLS with GnuTLS when offered, EHLO again,
 * MAIL FROM, RCPT TO for each address, QUIT; never DATA) that a worker can
 * drive for many sessions from one poll loop, or run one at a time
 * (smtp_session_run, smtp_probe).
 * One session checks several addresses of one domain at one MX: with
 * PIPELINING, MAIL, every RCPT and QUIT go out in one flight. A session
 * may also carry several transactions, one after another, on one
 * connection (as Postfix's connection cache does): opened without
 * recipients (smtp_session_open_mx), it waits READY after its handshake
 * and after each transaction, and the driver gives it the next one
 * (smtp_session_next: RSET, MAIL and the RCPTs in one flight) or ends it
 * (smtp_session_quit); a transaction's answers can be taken out of the
 * session before the next (smtp_session_detach). */
#ifndef SVC_SMTP_H
#define SVC_SMTP_H
#include "engine/dns.h"
#include "engine/egress.h"
#include "engine/smtp_classify.h"
#include "engine/smtp_reply.h"
#include "util/buf.h"
#include "util/conf.h"
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#define SMTP_RCPT_MAX		100	/* recipients per session (RFC 5321 4.5.3.1.8) */
#define SMTP_ADDRESS_MAX	254	/* octets of one address */
#define SMTP_TARGETS_MAX	(DNS_MAX_MX * DNS_MAX_ADDRS)
#define SMTP_PROVIDER_MAX	254	/* a provider id, as PROVIDERS_NAME_MAX */

/* How a session ended. The per-recipient replies are meaningful when the
 * outcome is SMTP_OUTCOME_OK (and, partially, for DISCONNECTED, TEMPFAIL and
 * TIMEOUT: recipients answered before the end keep their replies). */
enum smtp_outcome {
	SMTP_OUTCOME_OK,		/* every RCPT got a reply */
	SMTP_OUTCOME_UNREACHABLE,	/* no address connected (refused, connect timeout, none) */
	SMTP_OUTCOME_PRIVATE_ADDRESS,	/* every address private/loopback, allow_private_mx = no */
	SMTP_OUTCOME_TIMEOUT,		/* a reply or the overall deadline timed out */
	SMTP_OUTCOME_REFUSED_AT_BANNER,	/* 4xx/5xx greeting at every address tried */
	SMTP_OUTCOME_BLOCKED,		/* 5xx to EHLO and HELO or to MAIL, or x.7.x there */
	SMTP_OUTCOME_TEMPFAIL,		/* 4xx to HELO/MAIL, or 421 mid-session */
	SMTP_OUTCOME_TLS_REQUIRED,	/* 530 (or a 5xx naming TLS) without TLS in use */
	SMTP_OUTCOME_TLS_FAILED,	/* the TLS handshake or TLS I/O failed */
	SMTP_OUTCOME_DISCONNECTED,	/* the server closed the connection mid-session */
	SMTP_OUTCOME_PROTOCOL_ERROR,	/* unparsable reply, unexpected code class */
	SMTP_OUTCOME_ERROR,		/* local failure: memory, socket, GnuTLS set-up */
	SMTP_OUTCOME__MAX
};
extern const char *const smtp_outcome_names[SMTP_OUTCOME__MAX];

/* States of the machine, for logs and for smtp_session_info.stage. */
enum smtp_state {
	SMTP_STATE_INIT,		/* next address to be tried */
	SMTP_STATE_CONNECT,		/* TCP connect in progress (to the MX,
					 * or to the SOCKS5 proxy) */
	SMTP_STATE_PROXY,		/* SOCKS5 exchange with the proxy */
	SMTP_STATE_BANNER,		/* waiting for the greeting */
	SMTP_STATE_EHLO,
	SMTP_STATE_HELO,
	SMTP_STATE_STARTTLS,
	SMTP_STATE_TLS_HANDSHAKE,
	SMTP_STATE_EHLO_TLS,		/* EHLO again inside TLS */
	SMTP_STATE_READY,		/* no transaction under way: the driver
					 * gives the next one or ends it */
	SMTP_STATE_RSET,		/* a later transaction: RSET first */
	SMTP_STATE_MAIL,
	SMTP_STATE_RCPT,		/* waiting for RCPT replies */
	SMTP_STATE_QUIT,		/* results final, waiting for 221 */
	SMTP_STATE_DONE,
	SMTP_STATE__MAX
};
extern const char *const smtp_state_names[SMTP_STATE__MAX];

/* Shared TLS client credentials (one per process or thread). */
struct smtp_tls;

struct smtp_opts {
	unsigned	 port;			/* smtp_port: the same for every MX */
	const char	*helo_name;		/* smtp_helo_name */
	const char	*mail_from;		/* smtp_mail_from ("" for <>) */
	int		 connect_timeout_ms;	/* per connection attempt */
	int		 reply_timeout_ms;	/* per reply and TLS handshake */
	int		 deadline_ms;		/* whole session, 0: none */
	int		 allow_private_mx;	/* allow loopback/private/link-local */
	int		 starttls;		/* use STARTTLS when offered (default 1) */
	int		 tls_fallback;		/* after a failed handshake, retry the
						 * same address once without TLS */
	int		 tls_resume;		/* smtp_tls_resume: offer session data
						 * kept in tls's cache (needs tls) */
	size_t		 max_addrs;		/* addresses tried at most (0: all) */
	struct smtp_tls	*tls;			/* NULL: the session makes its own */
	const struct smtp_rules *rules;		/* reading rules of replies (NULL:
						 * by class only) */
	struct egress	*egress;		/* smtp_egress; NULL: direct */
	struct dns_resolver *dns;		/* looks up proxies' host names as
						 * sessions start (egress_resolve.h);
						 * NULL: not looked up */
	uint32_t	 routes;		/* the routes of egress sessions may
						 * take (egress_in; 0: all): a
						 * provider's pin */
	char		 mail_from_ascii[SMTP_ADDRESS_MAX + 1];
						/* smtp_mail_from with A-labels */
};

/* Fills opts from the configuration; deadline from verify_time_budget_ms;
 * tls NULL. Strings point into conf, except mail_from when smtp_mail_from
 * has an IDN domain: it is converted to A-labels once, here, into
 * mail_from_ascii (the form every server takes, as for recipients: struct
 * addr's smtp_path). conf and these opts must outlive the sessions (a copy
 * of the opts still points at the original's mail_from_ascii). */
void	 smtp_opts_from_conf(struct smtp_opts *, const struct conf *);

/* TLS credentials. The server certificate is never required to verify:
 * MX certificates are often self-signed or for another name, and a probe
 * sends nothing secret. With a ca_file (or "" for the system store; read at
 * the first STARTTLS, an unreadable file is an error here) the session only
 * records whether the certificate verified. NULL on error, with a message
 * in err. */
struct smtp_tls *smtp_io_tls_new(const char *ca_file, struct buf *err);
/* The credentials also keep the TLS session data of the sessions that
 * used them (smtp_tls_cache.h), offered again to the same host name, port
 * and egress route when opts->tls_resume: how many entries it holds. */
size_t	 smtp_io_tls_cached(struct smtp_tls *);
void	 smtp_io_tls_free(struct smtp_tls *);

/* The reply to one RCPT. code 0: no reply arrived (the session ended). */
struct smtp_rcpt_result {
	const char	*rcpt;			/* the address, as given */
	int		 code;
	char		 enhanced[SMTP_REPLY_ENH_MAX];	/* "5.1.1" or "" */
	char		*text;			/* one line, cleaned; "" when none */
	enum smtp_verdict verdict;		/* smtp_classify_reply(); UNKNOWN if no reply */
};

struct smtp_session_info {
	enum smtp_outcome outcome;
	enum smtp_state	 stage;			/* where the session ended */
	int		 tls;			/* the RCPTs went over TLS */
	int		 tls_verified;		/* certificate verified (needs a CA) */
	int		 tls_resumed;		/* the handshake resumed a session
						 * (tls_verified: that session's) */
	int		 starttls_offered;
	int		 pipelining;		/* RCPTs were sent in one flight */
	int		 helo;			/* HELO was used (EHLO refused) */
	unsigned	 ext;			/* SMTP_EXT_BIT()s of the last EHLO */
	size_t		 attempts;		/* connections tried */
	size_t		 transactions;		/* MAIL transactions given to the
						 * session (1 for smtp_session_new) */
	size_t		 refused_private;	/* addresses refused as private */
	const char	*host;			/* MX host connected to (or last tried) */
	const char	*route;			/* egress route of the last connection
						 * ("direct", "bind:...", "socks5://...") */
	size_t		 route_index;		/* its index in opts->egress (0) */
	size_t		 route_failures;	/* routes that failed (bind, proxy) */
	/* The SOCKS5 routes whose proxy failed (refused, closed, a bad
	 * exchange), by index bit, and the last one's reason. */
	uint32_t	 proxy_failed;
	const char	*proxy_why;
	char		 addr[DNS_ADDR_TEXT];	/* its address, "" if none */
	/* The reply that ended the session (or the last one), code 0 if none. */
	int		 code;
	char		 enhanced[SMTP_REPLY_ENH_MAX];
	char		*text;			/* "" when none */
	const char	*error;			/* short reason for logs, never NULL */
};

struct smtp_session;

/* A session for one MX host and its addresses (tried in order), or for
 * every host of an MX lookup (hosts in preference order, then their
 * addresses). rcpts: 1..SMTP_RCPT_MAX addresses, copied; the catch-all
 * probe is one of them (see smtp_random_local). opts (and its strings) must
 * outlive the session. NULL on bad arguments (an address with control
 * characters, "<", ">" or too long) or no memory. The overall deadline
 * starts now. */
struct smtp_session *smtp_session_new(const struct smtp_opts *,
	    const char *mx_host, const struct dns_addrs *,
	    const char *const *rcpts, size_t n);
struct smtp_session *smtp_session_new_mx(const struct smtp_opts *,
	    const struct dns_mx_result *, const char *const *rcpts, size_t n);
/* A session without recipients yet, for transactions given one by one:
 * after its handshake it waits READY (smtp_session_ready) for
 * smtp_session_next. NULL on bad options or no memory. */
struct smtp_session *smtp_session_open_mx(const struct smtp_opts *,
	    const struct dns_mx_result *);
#define SMTP_ROUTE_PICK	((size_t)-1)	/* the round robin's route */
/* The same, starting on egress route route (an index into opts->egress)
 * instead of the round robin's: a caller that paces per route chose it.
 * A route that fails still hands over to the next. */
struct smtp_session *smtp_session_open_mx_route(const struct smtp_opts *,
	    const struct dns_mx_result *, size_t route);
struct smtp_session *smtp_session_new_mx_route(const struct smtp_opts *,
	    const struct dns_mx_result *, const char *const *rcpts, size_t n,
	    size_t route);
void	 smtp_session_free(struct smtp_session *);

/* 1 when the session is READY: connected and greeted, no transaction under
 * way (its handshake is done, or its last transaction's RCPTs are all
 * answered: smtp_session_rcpt reads them until smtp_session_detach or
 * smtp_session_next). A READY session that the server closes or that
 * waits longer than the reply timeout ends with the outcome OK. */
int	 smtp_session_ready(const struct smtp_session *);
/* Gives a READY session its next transaction: rcpts as for
 * smtp_session_new (copied; the results of the previous transaction are
 * dropped), sent with RSET first when a transaction went before on the
 * connection (with PIPELINING, RSET, MAIL and every RCPT in one flight);
 * last: QUIT follows the transaction (pipelined too), else the session is
 * READY again once every RCPT is answered. The overall deadline starts
 * again. -1 (the session unchanged) when it is not READY, on bad
 * arguments or no memory. A refused RSET ends the session (TEMPFAIL for
 * 4xx, PROTOCOL_ERROR for 5xx). */
int	 smtp_session_next(struct smtp_session *, const char *const *rcpts,
	    size_t n, int last, int64_t now_ms);
/* Ends a READY session: QUIT, then DONE when 221 (or the end) comes. */
void	 smtp_session_quit(struct smtp_session *, int64_t now_ms);
/* Takes the answers of a READY session's transaction out into a session
 * of their own (DONE, no connection: smtp_session_info, _nrcpt, _rcpt
 * read it and smtp_session_free frees it), so that the session can go
 * on. NULL when it is not READY after a transaction, or no memory. */
struct smtp_session *smtp_session_detach(struct smtp_session *);

/* What the session waits for: returns 1 and sets *fd, *events (POLLIN
 * and/or POLLOUT) and *deadline_ms (absolute, timeutil_mono_ms() time, the
 * time base of poll and step) when it is running; 0 when it is done. */
int	 smtp_session_poll(const struct smtp_session *, int *fd,
	    short *events, int64_t *deadline_ms);
/* Advances the session with the poll revents of its fd (0 when only the
 * deadline passed). Never blocks. Returns 1 while running, 0 when done. */
int	 smtp_session_step(struct smtp_session *, short revents, int64_t now_ms);
int	 smtp_session_done(const struct smtp_session *);
const struct smtp_session_info *smtp_session_info(const struct smtp_session *);
/* The provider id of the host the session talks to (providers.h; NULL or
 * "": none): its replies are read by that provider's rules first
 * (smtp_reply_rules.txt), the RCPTs' verdicts and the session's outcome
 * alike. Set before the first reply, and again for each transaction of
 * another domain (verify_batch_next). The provider is the domain's first
 * MX host's, as in its results: when that host fails and the session
 * goes on to a later MX, that one's replies are read by it too. */
void	 smtp_session_set_provider(struct smtp_session *, const char *);
/* That id, or NULL when none was given. */
const char *smtp_session_provider(const struct smtp_session *);
size_t	 smtp_session_nrcpt(const struct smtp_session *);
const struct smtp_rcpt_result *smtp_session_rcpt(const struct smtp_session *,
	    size_t i);

/* Drives one session with poll() until it is done (single verification's
 * driver). */
void	 smtp_session_run(struct smtp_session *);
/* A new session run to its end; returns its outcome.
 * *out gets the session (the caller reads and frees it), or NULL when it
 * could not be made (SMTP_OUTCOME_ERROR). */
enum smtp_outcome smtp_probe(const struct smtp_opts *, const char *mx_host,
	    const struct dns_addrs *, const char *const *rcpts, size_t n,
	    struct smtp_session **out);

/* A random local part for the catch-all probe: 16 lower-case letters and
 * digits, starting with a letter, that no one has as a mailbox. buf must
 * hold 17 bytes. 0, or -1 if no randomness. */
int	 smtp_random_local(char *buf, size_t size);
#endif
