/* smtp_reply.h: pure, incremental SMTP reply parser (RFC 5321 4.2) with
 * RFC 3463 enhanced status codes and an EHLO extension helper. No I/O: the
 * caller feeds bytes as they arrive and gets complete replies back. */
#ifndef SVC_SMTP_REPLY_H
#define SVC_SMTP_REPLY_H
#include "util/buf.h"
#include <stddef.h>

#define SMTP_REPLY_LINE_MAX	2048	/* octets of one line, CRLF included */
#define SMTP_REPLY_MAX		65536	/* octets of one reply, all lines */
#define SMTP_REPLY_ENH_MAX	16	/* "5.999.999" and its NUL fit */

enum smtp_reply_status {
	SMTP_REPLY_OK,			/* a complete reply was returned */
	SMTP_REPLY_MORE,		/* all input consumed, reply incomplete */
	SMTP_REPLY_BAD_CODE,		/* line does not start with 3 digits */
	SMTP_REPLY_CODE_RANGE,		/* code outside 200-599 */
	SMTP_REPLY_BAD_SEPARATOR,	/* 4th character not " ", "-" or EOL */
	SMTP_REPLY_CODE_MISMATCH,	/* lines of one reply differ in code */
	SMTP_REPLY_LINE_TOO_LONG,	/* a line passed SMTP_REPLY_LINE_MAX */
	SMTP_REPLY_TOO_LONG,		/* the reply passed SMTP_REPLY_MAX */
	SMTP_REPLY_NOMEM,		/* allocation failed */
	SMTP_REPLY_TRAILING,		/* smtp_reply_parse: bytes after the reply */
	SMTP_REPLY_STATUS__MAX
};
extern const char *const smtp_reply_status_names[SMTP_REPLY_STATUS__MAX];

struct smtp_reply {
	int	 code;			/* 200..599 */
	/* Enhanced status code of the first line ("5.1.1") or "" when the
	 * first line's text does not start with one whose class matches the
	 * code's first digit. */
	char	 enhanced[SMTP_REPLY_ENH_MAX];
	int	 enh_class, enh_subject, enh_detail;	/* -1 when absent */
	/* Text of all lines joined with "\n", the enhanced code stripped from
	 * the lines that start with it. Cleaned: valid UTF-8 (bad bytes become
	 * "?"), no control characters (they become spaces) except the "\n"
	 * separators. Never NULL after SMTP_REPLY_OK; free with
	 * smtp_reply_free(). */
	char	*text;
	size_t	 text_len;
	size_t	 lines;			/* number of lines, >= 1 */
};

struct smtp_reply_parser {
	struct buf	 line;		/* the line being received */
	struct buf	 text;		/* text of the reply so far */
	size_t		 reply_bytes;	/* raw octets of the reply so far */
	size_t		 lines;
	int		 code;		/* of the first line, 0 before it */
	char		 enhanced[SMTP_REPLY_ENH_MAX];
	int		 enh[3];
	enum smtp_reply_status error;	/* sticky once set */
};

void	 smtp_reply_parser_init(struct smtp_reply_parser *);
/* Forgets any partial reply and a sticky error. */
void	 smtp_reply_parser_reset(struct smtp_reply_parser *);
void	 smtp_reply_parser_free(struct smtp_reply_parser *);
/* Consumes bytes of data until one reply is complete. Returns
 * SMTP_REPLY_OK with *out filled (the caller owns it) and *used set to the
 * bytes consumed, so the rest (pipelined replies) can be fed again;
 * SMTP_REPLY_MORE when all len bytes were consumed without completing a
 * reply; or an error, which stays until smtp_reply_parser_reset() (a
 * connection that sent it should be closed). Lines end with CRLF or a bare
 * LF. */
enum smtp_reply_status smtp_reply_parser_feed(struct smtp_reply_parser *,
	    const char *data, size_t len, size_t *used, struct smtp_reply *out);
/* At end of input: completes a final line that had no line ending.
 * Returns SMTP_REPLY_MORE when nothing (or only a continuation) was
 * pending. */
enum smtp_reply_status smtp_reply_parser_finish(struct smtp_reply_parser *,
	    struct smtp_reply *out);
/* Whether a partial line or reply is buffered. */
int	 smtp_reply_parser_pending(const struct smtp_reply_parser *);

/* Parses exactly one complete reply from s (the last line's line ending is
 * optional). Bytes after it: SMTP_REPLY_TRAILING; an unfinished multi-line
 * reply: SMTP_REPLY_MORE. */
enum smtp_reply_status smtp_reply_parse(const char *s, size_t len,
	    struct smtp_reply *out);
void	 smtp_reply_free(struct smtp_reply *);
/* Writes the text with its line breaks turned into single spaces. */
int	 smtp_reply_oneline(const struct smtp_reply *, struct buf *);

/* Parses an RFC 3463 code "c.sss.ddd" (class 2, 4 or 5; 1-3 digits each)
 * at the start of s, followed by a space or the end. Returns its length
 * (without the space) and fills v[3], or 0 when there is none. */
size_t	 smtp_reply_parse_enhanced(const char *s, size_t len, int v[3]);

/* EHLO extensions this client cares about. */
enum smtp_ext {
	SMTP_EXT_STARTTLS,
	SMTP_EXT_PIPELINING,
	SMTP_EXT_SIZE,
	SMTP_EXT_8BITMIME,
	SMTP_EXT_SMTPUTF8,
	SMTP_EXT_ENHANCEDSTATUSCODES,
	SMTP_EXT_CHUNKING,
	SMTP_EXT_DSN,
	SMTP_EXT__MAX
};
extern const char *const smtp_ext_names[SMTP_EXT__MAX];
#define SMTP_EXT_BIT(e)	(1u << (e))

struct smtp_ehlo {
	unsigned	 ext;		/* SMTP_EXT_BIT() of each offered */
	unsigned long	 size;		/* SIZE parameter, 0 if none/unlimited */
};

/* Reads the extension keywords of a 250 EHLO reply (every line after the
 * first). Returns -1 when the reply is not a 2xx. */
int	 smtp_reply_ehlo(const struct smtp_reply *, struct smtp_ehlo *);
/* Whether the EHLO reply offers keyword kw (case-insensitive); when params
 * is not NULL it gets the rest of that line (may be "") and its length. */
int	 smtp_reply_ehlo_has(const struct smtp_reply *, const char *kw,
	    const char **params, size_t *paramslen);
#endif
