/* ingest_decode.h: the text encodings of uploaded files: strict UTF-8
 * checks and cuts, Windows-1252 and UTF-16 to UTF-8. */
#ifndef SVC_INGEST_DECODE_H
#define SVC_INGEST_DECODE_H
#include <stddef.h>

/* The length of the longest prefix of s that is valid UTF-8 (no overlong
 * forms, no surrogates, nothing above U+10FFFF). */
size_t	 ingest_decode_utf8_valid(const char *s, size_t n);
/* s read as Windows-1252 into dst as UTF-8, stopping before a character
 * that would pass dstmax bytes; the bytes written (no NUL added). */
size_t	 ingest_decode_cp1252(char *dst, size_t dstmax, const char *s,
	    size_t n);

/* A UTF-16 stream's state between pieces. */
struct ingest_decode_utf16 {
	int		 be;		/* big-endian */
	int		 odd;		/* a byte of a unit is waiting */
	unsigned char	 byte;
	unsigned	 high;		/* a high surrogate waiting, or 0 */
};
/* The room ingest_decode_utf16 may need for n bytes in. */
#define INGEST_DECODE_UTF16_ROOM(n) (2 * (n) + 8)
/* n bytes of UTF-16 into out (INGEST_DECODE_UTF16_ROOM(n) bytes) as
 * UTF-8; unpaired surrogates become U+FFFD. The bytes written. */
size_t	 ingest_decode_utf16(struct ingest_decode_utf16 *, const char *in,
	    size_t n, char *out);
/* At the end of the stream: a waiting high surrogate as U+FFFD into out
 * (8 bytes); the bytes written, or -1 when a byte is left over (an odd
 * number of bytes). */
int	 ingest_decode_utf16_end(struct ingest_decode_utf16 *, char *out);
#endif
