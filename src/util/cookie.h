/* cookie.h: reading one cookie out of a request's Cookie header. */
#ifndef SVC_COOKIE_H
#define SVC_COOKIE_H
#include <stddef.h>

/* Finds the cookie called name in header ("a=1; b=2", RFC 6265 section
 * 5.4; untrusted text, NULL allowed) and copies its value, without
 * surrounding double quotes, into out: 0; -1 when it is absent, empty,
 * does not fit outsz or holds a byte outside RFC 6265's cookie-octet.
 * When the name appears more than once, the first is used. */
int	 cookie_get(const char *header, const char *name, char *out,
	    size_t outsz);
#endif
