/* ids.h: random opaque identifiers and secrets (GnuTLS's RNG). */
#ifndef SVC_IDS_H
#define SVC_IDS_H
#include <stddef.h>

#define IDS_MAX 80

/* "<prefix>_" followed by 24 base62 characters (about 142 random bits). */
int	 ids_new(const char *prefix, char out[IDS_MAX]);
/* prefix followed by n base62 characters; out holds strlen(prefix)+n+1. */
int	 ids_random_text(const char *prefix, size_t n, char *out, size_t outsz);
#endif
