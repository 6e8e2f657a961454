/* probes.h: the limits on requests that wait on something outside the
 * service (probes of mail servers, revocation waits): per account and per
 * host, counted in slots.h's shared places. */
#ifndef SVC_PROBES_H
#define SVC_PROBES_H
#include "api/api.h"

/* A gate for verify_address / verify_domain: the first use of the network
 * takes the account's and the host's places, or answers 429 (the account
 * has probe_concurrency_per_account probes running) or 503 (every
 * responder probes may use is busy) and refuses. */
void	 probes_gate(struct api_call *, struct verify_gate *);
/* Before a revocation waits out the key cache: 0 to go on, -1 answered
 * (409 another revocation of the account is waiting, 503 as above). */
int	 probes_revocation(struct api_call *);
#endif
