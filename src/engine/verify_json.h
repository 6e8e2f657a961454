/* verify_json.h: a verification's result as JSON, both ways. */
#ifndef SVC_VERIFY_JSON_H
#define SVC_VERIFY_JSON_H
#include "engine/verify.h"
#include <jansson.h>

/* API.md's result object (without the credits fields); the verdict cache
 * stores it too. */
json_t	*verify_json_result(const struct verify_result *);
/* Reads back what the verdict cache stored (with its "kind", "trap" and
 * "did_you_mean_domain"): 0, or -1 for an entry of an earlier version
 * (no "provider"), which is verified again. */
int	 verify_json_read(json_t *, struct verify_result *);
#endif
