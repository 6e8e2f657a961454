/* fuzz_socks5.c: libFuzzer target for the SOCKS5 client exchange fed with
 * hostile proxy replies. The first byte picks the credentials (none or a
 * user name and password) and the address family; the rest is what the
 * proxy sends, fed in pieces no larger than socks5_want (as smtp_io reads
 * them) whose sizes come from the second byte. Invariants: no crash; a
 * piece is never taken past what was wanted; the state only moves forward;
 * DONE has reply code 0; FAILED says why (an error in range, a reply code
 * with SOCKS5_E_REPLY, an authentication status with SOCKS5_E_AUTH), wants
 * nothing and sends nothing more; a message to send never exceeds its
 * buffer. */
#include "engine/socks5.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_socks5: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t addr[16] = { 192, 0, 2, 1 };
	struct socks5 s;
	enum socks5_state prev;
	size_t off = 2, want, n, used, len, step;
	const uint8_t *o;

	if (size < 2)
		return 0;
	CHECK(socks5_start(&s, (data[0] & 1) ? "user" : NULL,
	    (data[0] & 1) ? "password" : NULL, (data[0] & 2) ? 6 : 4, addr,
	    25) == SOCKS5_OK);
	step = (size_t)(data[1] % 16) + 1;
	while (off < size) {
		o = socks5_out(&s, &len);
		CHECK(o != NULL && len <= sizeof(s.out));
		socks5_sent(&s, len);
		if (s.state == SOCKS5_S_DONE || s.state == SOCKS5_S_FAILED)
			break;
		want = socks5_want(&s);
		CHECK(want > 0 && want <= sizeof(s.in));
		n = size - off < step ? size - off : step;
		if (n > want)
			n = want;
		prev = s.state;
		(void)socks5_feed(&s, data + off, n, &used);
		CHECK(used == n);
		CHECK(s.state >= prev);
		off += used;
	}
	if (s.state == SOCKS5_S_DONE)
		CHECK(s.rep == 0 && s.err == SOCKS5_OK);
	if (s.state == SOCKS5_S_FAILED) {
		CHECK(s.err > SOCKS5_OK && s.err < SOCKS5_E__MAX);
		CHECK(s.err != SOCKS5_E_REPLY || (s.rep > 0 && s.rep < 256));
		CHECK(s.err != SOCKS5_E_AUTH || s.auth_status > 0);
		CHECK(socks5_want(&s) == 0);
		(void)socks5_out(&s, &len);
		CHECK(len == 0);
		(void)socks5_proxy_fault(&s);
	}
	return 0;
}
