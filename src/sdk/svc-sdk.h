/* svc-sdk.h: libsvc-sdk, for receivers of svc's webhooks and callbacks:
 * checks the X-Service-Signature header of a delivery against the raw
 * body and the receiver's secrets. See svc_webhook_verify(3). */
#ifndef SVC_SDK_H
#define SVC_SDK_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SVC_SDK_VERSION		"0.1.0"
/* The header that carries the signature, and the one naming the receiver
 * (the webhook's id, job_callback:<job_id> or batch_callback:<job_id>). */
#define SVC_WEBHOOK_HEADER	"X-Service-Signature"
#define SVC_WEBHOOK_ID_HEADER	"X-Webhook-ID"
/* Seconds a delivery's timestamp may be away from the receiver's clock. */
#define SVC_WEBHOOK_TOLERANCE	300

enum svc_webhook_result {
	SVC_WEBHOOK_OK = 0,		/* signed with one of the secrets, in time */
	SVC_WEBHOOK_BAD_HEADER,		/* not "t=<unix>,v1=<hex>[,v1=...]" */
	SVC_WEBHOOK_NO_MATCH,		/* no v1 matches any secret */
	SVC_WEBHOOK_TIMESTAMP,		/* signed, but t is outside the tolerance */
	SVC_WEBHOOK__MAX
};

/*
 * Checks a delivery. header: the X-Service-Signature value; body, len: the
 * raw request body, exactly as received; secrets, nsecrets: the secrets
 * that may have signed it (during a rotation, the new and the old one);
 * tolerance_s: how far t may be from now (SVC_WEBHOOK_TOLERANCE; a
 * negative value counts as 0); now: the receiver's clock, Unix seconds
 * (time(NULL)). Every v1 of the header is tried against every secret;
 * signatures are compared in constant time.
 */
enum svc_webhook_result svc_webhook_verify(const char *header,
	    const void *body, size_t len, const char *const *secrets,
	    size_t nsecrets, long tolerance_s, long long now);
/* "ok", "bad_header", "no_matching_signature",
 * "timestamp_outside_tolerance"; "unknown" for anything else. */
const char *svc_webhook_result_name(enum svc_webhook_result);

#ifdef __cplusplus
}
#endif
#endif
