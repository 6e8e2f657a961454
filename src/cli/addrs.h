/* addrs.h: the addresses a command sends: whether a string is shaped like
 * an email (else it is invalid_input and never sent), and the list of
 * addresses of bulk create, from its arguments or a .csv or .txt file. */
#ifndef SVC_CLI_ADDRS_H
#define SVC_CLI_ADDRS_H
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include "util/buf.h"

#define ADDRS_SAMPLES 3

struct addrs {
	json_t	*emails;		/* array of strings, in input order */
	size_t	 invalid;		/* values left out: not shaped like an email */
	char	*sample[ADDRS_SAMPLES];	/* the first few of them */
};

/* 1 when s (n bytes) is shaped like an email: one @ outside a quoted local
 * part, a local part of 1-64 octets, a domain of 1-253 octets made of
 * labels (letters, digits, hyphens, UTF-8) or an [address literal], valid
 * UTF-8, no space or control character. */
int	 addrs_shaped(const char *s, size_t n);
void	 addrs_init(struct addrs *);
void	 addrs_free(struct addrs *);
/* Adds one value (trimmed; an empty one is skipped): to emails when it is
 * shaped like an email, else counted in invalid. -1 when out of memory. */
int	 addrs_add(struct addrs *, const char *s, size_t n);
/* One address a line; blank lines are skipped. */
int	 addrs_read_txt(struct addrs *, FILE *, struct buf *err);
/* RFC 4180 CSV (quoted fields, "" escapes, CRLF). The email column is the
 * one whose header reads like an email column (Email, E-mail, Email
 * Address, Mail ...), else the one whose first rows most often hold
 * addresses; a first row that holds no address there is a header. */
int	 addrs_read_csv(struct addrs *, FILE *, struct buf *err);
/* By the name's extension, .csv or .txt (any case); err says why not. */
int	 addrs_read_file(struct addrs *, const char *path, struct buf *err);
#endif
