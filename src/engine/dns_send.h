/* dns_send.h: the network side of the DNS lookups (src/engine/dns.c): DNS
 * messages sent all at once over UDP to the resolver's servers, asked again
 * over TCP when the answer is truncated, each try waiting the timeout at
 * most and all of them ending by a deadline. It knows the wire format only
 * as far as the message id: dns.c builds the questions and reads the
 * answers. */
#ifndef SVC_DNS_SEND_H
#define SVC_DNS_SEND_H
#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_SEND_SERVERS_MAX 4

enum dns_send_status {
	DNS_SEND_OK,		/* reply holds the answer's bytes */
	DNS_SEND_FAILED,	/* every try timed out or failed */
	DNS_SEND_DEADLINE,	/* the deadline passed before an answer */
	DNS_SEND__MAX
};
extern const char *const dns_send_status_names[DNS_SEND__MAX];

struct dns_send_server {
	struct sockaddr_storage	 addr;
	socklen_t		 len;
};

/* Where and how long to ask. Tries go round the servers in turn. */
struct dns_send_conf {
	struct dns_send_server	 srv[DNS_SEND_SERVERS_MAX];
	size_t			 nsrv;
	int			 timeout_ms;	/* per try */
	unsigned		 tries;		/* per server */
	int64_t			 deadline;	/* timeutil_mono_ms(); 0: none */
};

struct dns_send_query {
	const uint8_t		*msg;		/* the query, id in bytes 0-1 */
	size_t			 len;
	enum dns_send_status	 status;
	uint8_t			*reply;		/* malloc'd; the caller frees it */
	size_t			 rlen;
};

/* Sends the n queries at once and waits until each has a reply (from the
 * server asked, with the query's id), has used up its tries, or the
 * deadline has passed: no try starts after it, and none waits beyond it.
 * Sets status, reply and rlen of each. */
void	 dns_send(const struct dns_send_conf *, struct dns_send_query *,
	    size_t n);
#endif
