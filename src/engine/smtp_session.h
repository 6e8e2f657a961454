/* smtp_session.h: INTERNAL to the SMTP client, included by smtp.c,
 * smtp_io.c and smtp_session.c only (everyone else uses smtp.h). The
 * session's struct and what the three files share:
 *   - smtp_io.c: sockets and GnuTLS, non-blocking (smtp_io_*);
 *   - smtp_session.c: the state machine (smtp_session_enter, the replies,
 *     the targets, the end of a session) and its I/O steps;
 *   - smtp.c: options, construction, the driver, smtp_probe. */
#ifndef SVC_SMTP_SESSION_H
#define SVC_SMTP_SESSION_H
#include "engine/smtp.h"
#include "engine/socks5.h"
#include <gnutls/gnutls.h>

/* What a reply answers, in the order the commands were sent. */
enum smtp_cmd {
	SMTP_CMD_GREETING,
	SMTP_CMD_EHLO,
	SMTP_CMD_HELO,
	SMTP_CMD_STARTTLS,
	SMTP_CMD_RSET,
	SMTP_CMD_MAIL,
	SMTP_CMD_RCPT,
	SMTP_CMD_QUIT,
	SMTP_CMD__MAX
};

/* Result of a byte-level I/O call. */
enum smtp_io {
	SMTP_IO_OK,		/* done (write) or bytes read */
	SMTP_IO_AGAIN,		/* would block: poll s->io_events */
	SMTP_IO_EOF,		/* the peer closed the connection */
	SMTP_IO_ERR,		/* socket error */
	SMTP_IO_TLS_ERR,	/* fatal GnuTLS error */
	SMTP_IO_ROUTE,		/* the egress route failed (bind, proxy) */
	SMTP_IO__MAX
};
extern const char *const smtp_io_names[SMTP_IO__MAX];

#define SMTP_OUT_MAX	(64 * 1024)	/* one flight: 100 RCPTs fit easily */
#define SMTP_TEXT_MAX	1024		/* octets of reply text kept */
#define SMTP_READ_CHUNK	4096

struct smtp_target {
	size_t		 host;		/* index into hosts */
	struct dns_addr	 addr;
};

struct smtp_session {
	unsigned	 id;		/* for logs */
	const struct smtp_opts *opts;
	enum smtp_state	 state;

	struct smtp_rcpt_result *rcpt;
	size_t		 nrcpt;
	size_t		 next_rcpt;	/* next RCPT to send (one by one) */
	size_t		 answered;
	int		 pending;	/* a transaction waits for the handshake */
	int		 last;		/* QUIT after this transaction */
	int		 mail_sent;	/* this transaction's MAIL is queued */
	int		 quit_sent;

	char		**hosts;
	size_t		 nhosts;
	/* who runs the mail host (smtp_session_set_provider; "": nobody
	 * known): its own reading rules come before the generic ones */
	char		 provider[SMTP_PROVIDER_MAX];
	struct smtp_target *targets;
	size_t		 ntargets;
	size_t		 next_target;
	enum smtp_outcome fail;		/* best failure among targets */
	int		 fail_rank;

	int		 fd;
	size_t		 route;		/* index into opts->egress */
	size_t		 route_tries;	/* routes tried for this address */
	int		 route_retry;	/* next connection: same address */
	struct socks5	*socks;		/* the proxy exchange, or NULL */
	const char	*route_why;	/* why the route failed */
	int		 route_quiet;	/* not a fault: logged at debug level
					 * (a source address of the other
					 * family) */
	unsigned	 conn;		/* connection counter */
	int		 plain_only;	/* this connection: no STARTTLS */
	int		 plain_retry;	/* next connection: same address, plain */
	int		 tls_failed;	/* a handshake failed in this session */
	int		 needs_utf8;
	struct smtp_tls	*own_tls;
	gnutls_session_t tls;
	int		 tls_wpending;	/* a gnutls_record_send returned AGAIN */
	int		 tls_offered;	/* this connection offered cached
					 * session data (smtp_tls_cache.h) */
	int		 tls_offered_verified;	/* its session's certificate
					 * verified */
	int		 tls_stored;	/* this connection's data are kept */
	const char	*tls_host;	/* the name TLS started with (SNI) */
	short		 io_events;	/* what the last AGAIN waits for */

	struct smtp_reply_parser parser;
	struct buf	 out;
	size_t		 out_off;
	enum smtp_cmd	*expect;	/* replies still due, a FIFO */
	size_t		*expect_rcpt;
	size_t		 expect_head, expect_tail, expect_cap;

	int64_t		 deadline;	/* overall, 0: none */
	int64_t		 stage_deadline;
	struct smtp_session_info info;
};

/* smtp.c: the empty reply text ("" that is never freed) and the free that
 * knows it; the recipients of a transaction, checked and copied in (-1,
 * the session unchanged, on bad ones or no memory). */
extern char smtp_empty[1];
void	 smtp_str_free(char *);
int	 smtp_session_set_rcpts(struct smtp_session *, const char *const *,
	    size_t n);

/* smtp_io.c: sockets and GnuTLS, never blocking. SMTP_IO_AGAIN leaves in
 * s->io_events what to poll for. */
enum smtp_io smtp_io_connect(struct smtp_session *, const struct dns_addr *);
/* The route of the session's connection (NULL: direct). */
const struct egress_route *smtp_io_route(const struct smtp_session *);
/* The SOCKS5 exchange (PROXY): OK when the tunnel is open, AGAIN, EOF
 * (the proxy closed), ERR, ROUTE (the exchange failed: s->socks says
 * why). */
enum smtp_io smtp_io_proxy(struct smtp_session *);
enum smtp_io smtp_io_write(struct smtp_session *);	/* what is left of out */
enum smtp_io smtp_io_read(struct smtp_session *, char *, size_t, size_t *);
int	 smtp_io_tls_start(struct smtp_session *, const char *host);
enum smtp_io smtp_io_handshake(struct smtp_session *);
void	 smtp_io_tls_check(struct smtp_session *, const char *host);
/* After a TLS record came in: keeps the session's data for resumption
 * once they are usable (TLS 1.3: once the server's ticket came). */
void	 smtp_io_tls_store(struct smtp_session *);
const char *smtp_io_tls_version(const struct smtp_session *);
void	 smtp_io_close(struct smtp_session *);	/* socket, TLS, queues */

/* smtp_session.c: the state machine. smtp_session_enter does what a state
 * demands and is the one place the state changes; finish ends the session
 * (DONE), target_failed moves on to the next address, next_target
 * connects to it. The driver's steps: handshake (TLS_HANDSHAKE), input
 * (replies that came), output (what is queued; -1 when the connection
 * was lost), timeout (a deadline passed). */
void	 smtp_session_enter(struct smtp_session *, enum smtp_state, int64_t);
/* The handshake is done: the transaction waiting (MAIL), or READY. */
void	 smtp_session_begin(struct smtp_session *, int64_t);
void	 smtp_session_finish(struct smtp_session *, enum smtp_outcome,
	    const struct smtp_reply *, const char *why, int64_t);
void	 smtp_session_target_failed(struct smtp_session *, enum smtp_outcome,
	    const struct smtp_reply *, const char *why, int64_t);
void	 smtp_session_next_target(struct smtp_session *, int64_t);
void	 smtp_session_handshake(struct smtp_session *, int64_t);
/* The connection's route failed (why: for the log): the same address by
 * the next route, or, when every route failed, the next address. */
void	 smtp_session_route_failed(struct smtp_session *, const char *why,
	    int64_t);
/* The TCP connection is up: the proxy exchange or the greeting. */
void	 smtp_session_connected(struct smtp_session *, int64_t);
void	 smtp_session_proxy(struct smtp_session *, int64_t);
void	 smtp_session_input(struct smtp_session *, int64_t);
int	 smtp_session_output(struct smtp_session *, int64_t);
void	 smtp_session_timeout(struct smtp_session *, int64_t);
#endif
