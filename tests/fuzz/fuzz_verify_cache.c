/* fuzz_verify_cache.c: libFuzzer target for the verdict cache's reader
 * (engine/verify_cache.c, through verify_from_cache as svc-api and
 * svc-worker call it): a value of the shared verdict_cache table, in either
 * form (the compact array, or the object of entries cached by earlier
 * versions), for the address user@example.com. A row is read from
 * MariaDB, not from a client, but a damaged or foreign row must be a miss,
 * never a crash. Invariants on a hit: every text of the result ends
 * within its buffer and is whole UTF-8 (a text too long for its buffer is
 * cut between characters), the enums and counts are in range, and the result
 * written back as a cache entry reads back to the same verdict, score, MX
 * hosts and SMTP code. */
#include "engine/addr.h"
#include "engine/calibration.h"
#include "engine/vcache.h"
#include "engine/verify.h"
#include "engine/verify_cache.h"
#include "util/jsonw.h"
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_verify_cache: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)
/* ends within its buffer, and is whole UTF-8 (an answer carries it) */
#define ENDS(s) CHECK(memchr((s), '\0', sizeof(s)) != NULL && \
	jsonw_utf8_ok(s))

static void
check_result(const struct verify_result *r)
{
	size_t i;

	ENDS(r->email);
	ENDS(r->normalised);
	ENDS(r->domain);
	ENDS(r->ascii_domain);
	ENDS(r->did_you_mean);
	ENDS(r->provider);
	ENDS(r->smtp_enhanced);
	ENDS(r->smtp_message);
	CHECK(r->v.kind < VERDICT_KIND__MAX);
	CHECK(r->v.classification < VERDICT_CLASS__MAX);
	CHECK(r->v.status < VERDICT_STATUS__MAX);
	CHECK(r->v.reason < VERDICT_REASON__MAX);
	CHECK(r->v.sub < VERDICT_SUB__MAX);
	CHECK(r->nmx <= DNS_MAX_MX);
	for (i = 0; i < r->nmx; i++)
		ENDS(r->mx[i].host);
	CHECK(r->cached == 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct verify_result r, back;
	struct vcache_entry e;
	struct addr a;
	json_t *j, *again;
	size_t i;

	if ((j = json_loadb((const char *)data, n, JSON_DECODE_ANY, NULL)) ==
	    NULL)
		return 0;
	CHECK(addr_parse("user@example.com", &a) == ADDR_OK);
	memset(&r, 0, sizeof(r));
	if (verify_from_cache(&r, &a, j) == -1) {
		json_decref(j);
		return 0;
	}
	json_decref(j);
	check_result(&r);
	/* written back (as a fresh result of this address would be) and
	 * read again: the same facts */
	r.cached = 0;
	strcpy(r.cache_key, "fuzz");
	if (verify_cache_entry(&r, &e) == -1)
		return 0;
	CHECK(e.value != NULL);
	again = json_loads(e.value, 0, NULL);
	CHECK(again != NULL);
	memset(&back, 0, sizeof(back));
	CHECK(verify_from_cache(&back, &a, again) == 0);
	json_decref(again);
	check_result(&back);
	CHECK(back.v.kind == r.v.kind && back.v.sub == r.v.sub);
	CHECK(back.score == r.score && back.score_basis == r.score_basis);
	CHECK(back.nmx <= r.nmx);
	for (i = 0; i < back.nmx; i++)
		CHECK(strcmp(back.mx[i].host, r.mx[i].host) == 0);
	CHECK(back.has_smtp == r.has_smtp && back.smtp_code == r.smtp_code);
	vcache_entries_clear(&e, 1);
	return 0;
}
