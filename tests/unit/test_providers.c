/* test_providers.c: table-driven tests of the MX provider table
 * (src/engine/providers.c): exact and wildcard patterns and which one is
 * the most specific, case and root dots, comments, the operator's local
 * overrides and removals, bad lines skipped with a warning naming the line,
 * the registrable domain (libpsl) for hosts no pattern matches, and the
 * shipped contrib/lists/mx_providers.txt against the providers' real MX
 * host names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/providers.h"

static char tmpdir[] = "/tmp/test_providers.XXXXXX";

static void
write_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	assert_true(snprintf(path, sizeof(path), "%s/%s", tmpdir, name) <
	    (int)sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static const char fx_shipped[] =
    "# fixture\n"
    "*.google.com\t\tgoogle\n"
    "*.mail.protection.outlook.com microsoft365\n"
    "*.olc.protection.outlook.com  outlook   # consumer\n"
    "*.YahooDNS.net. yahoo\r\n"
    "smtp.exact.example exacthost\n"
    "*.exact.example wildhost\n"
    "*.pphosted.com proofpoint\n"
    "*.gone.example gone\n"
    "\n"
    "   # indented comment\n"
    "*.com everything\n"			/* 12: one label */
    "bad_id.example Bad\n"			/* 13: upper-case id */
    "three.example id extra\n"		/* 14: three fields */
    "only-pattern.example\n"		/* 15: no id */
    "a.*.example mid\n"			/* 16: wildcard inside */
    "-dash.example dash\n"			/* 17: label starts with - */
    "!not-local.example\n"			/* 18: ! outside local */
    "*.pphosted.com proofpoint2\n";		/* duplicate: later wins */

static const char fx_local[] =
    "*.google.com mygoogle\n"		/* override */
    "!*.gone.example\n"			/* removal */
    "*.mx.internal.example inhouse\n"	/* addition */
    "!x.example extra\n";			/* 4: removal with an id */

static void
test_match(void **state)
{
	static const struct { const char *host, *want; } t[] = {
		{ "aspmx.l.google.com", "mygoogle" },
		{ "ALT1.ASPMX.L.GOOGLE.COM.", "mygoogle" },
		{ "google.com", NULL },		/* *. needs a label more */
		{ "contoso-com.mail.protection.outlook.com", "microsoft365" },
		{ "hotmail-com.olc.protection.outlook.com", "outlook" },
		{ "protection.outlook.com", NULL },
		{ "x.protection.outlook.com", NULL },
		{ "mta5.am0.yahoodns.net", "yahoo" },
		{ "smtp.exact.example", "exacthost" },	/* exact wins */
		{ "mx.smtp.exact.example", "wildhost" },
		{ "other.exact.example", "wildhost" },
		{ "mx0a-001.pphosted.com", "proofpoint2" },
		{ "mx.gone.example", NULL },		/* removed locally */
		{ "a.mx.internal.example", "inhouse" },
		{ "anything.com", NULL },
		{ "not a host", NULL },
		{ "", NULL },
		{ NULL, NULL },
	};
	struct providers *p;
	struct buf msg;
	const char *got;
	size_t i;

	(void)state;
	write_file("mx_providers.txt", fx_shipped);
	write_file("local/mx_providers.txt", fx_local);
	buf_init(&msg, 1 << 16);
	assert_int_equal(providers_load(tmpdir, &p, &msg), PROVIDERS_OK);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		got = providers_lookup(p, t[i].host);
		if (t[i].want == NULL) {
			if (got != NULL)
				fail_msg("%s: %s, expected none", t[i].host,
				    got);
		} else if (got == NULL || strcmp(got, t[i].want) != 0)
			fail_msg("%s: %s, expected %s", t[i].host,
			    got ? got : "none", t[i].want);
	}
	/* 8 good shipped patterns (one duplicate), one local addition, one
	 * removed. */
	assert_int_equal(providers_count(p), 8);
	assert_int_equal(providers_skipped(p), 8);
	providers_free(p);
	buf_free(&msg);
}

static void
test_warnings(void **state)
{
	static const char *const want[] = {
		"mx_providers.txt:12: a wildcard needs two labels",
		"mx_providers.txt:13: not a provider id",
		"mx_providers.txt:14: expected \"PATTERN ID\"",
		"mx_providers.txt:15: expected \"PATTERN ID\"",
		"mx_providers.txt:16: not a host name",
		"mx_providers.txt:17: not a host name",
		"mx_providers.txt:18: expected \"PATTERN ID\"",
		"local/mx_providers.txt:4: \"!PATTERN\" takes no id",
	};
	struct providers *p;
	struct buf msg;
	size_t i;

	(void)state;
	write_file("mx_providers.txt", fx_shipped);
	write_file("local/mx_providers.txt", fx_local);
	buf_init(&msg, 1 << 16);
	assert_int_equal(providers_load(tmpdir, &p, &msg), PROVIDERS_OK);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(buf_str(&msg), want[i]) == NULL)
			fail_msg("no warning \"%s\" in:\n%s", want[i],
			    buf_str(&msg));
	providers_free(p);
	buf_free(&msg);
}

static void
test_missing(void **state)
{
	struct providers *p;
	struct buf msg;
	char out[PROVIDERS_NAME_MAX];

	(void)state;
	unlink("/tmp/test_providers.none/mx_providers.txt");
	buf_init(&msg, 4096);
	assert_int_equal(providers_load("/tmp/test_providers.none", &p, &msg),
	    PROVIDERS_OK);
	assert_non_null(strstr(buf_str(&msg), "mx_providers.txt: missing"));
	assert_int_equal(providers_count(p), 0);
	assert_null(providers_lookup(p, "aspmx.l.google.com"));
	/* Without a table, still the registrable domain. */
	assert_int_equal(providers_of_mx(p, "aspmx.l.google.com", out), 0);
	assert_string_equal(out, "google.com");
	providers_free(p);
	assert_int_equal(providers_load("", &p, &msg), PROVIDERS_ERR_ARG);
	assert_null(p);
	buf_free(&msg);
}

/* Hosts no pattern matches: the registrable domain, never the last two
 * labels. */
static void
test_registrable(void **state)
{
	static const struct { const char *host, *want; } t[] = {
		{ "mx.example.co.uk", "example.co.uk" },
		{ "MX1.Example.CO.UK.", "example.co.uk" },
		{ "mail.example.com.au", "example.com.au" },
		{ "mx.example.com", "example.com" },
		{ "example.com", "example.com" },
		{ "mx1.svc.test", "svc.test" },		/* not in the PSL: * */
		{ "smtp.city.kawasaki.jp", "city.kawasaki.jp" },
		{ "co.uk", "co.uk" },			/* a suffix itself */
		{ "aspmx.l.google.com", "mygoogle" },	/* the table first */
	};
	struct providers *p;
	char out[PROVIDERS_NAME_MAX];
	size_t i;

	(void)state;
	write_file("mx_providers.txt", fx_shipped);
	write_file("local/mx_providers.txt", fx_local);
	assert_int_equal(providers_load(tmpdir, &p, NULL), PROVIDERS_OK);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(providers_of_mx(p, t[i].host, out), 0);
		if (strcmp(out, t[i].want) != 0)
			fail_msg("%s: %s, expected %s", t[i].host, out,
			    t[i].want);
	}
	assert_int_equal(providers_of_mx(p, "bad host", out), -1);
	assert_string_equal(out, "");
	assert_int_equal(providers_of_mx(p, NULL, out), -1);
	providers_free(p);
}

/* The parser on text that is no table at all. */
static void
test_parse_garbage(void **state)
{
	static const char text[] = "\0\0*.a.b c\n\xff\xfe x\n*.a.b\0 d\n"
	    "*.ok.example ok";
	struct providers *p = providers_new();
	struct buf msg;

	(void)state;
	buf_init(&msg, 4096);
	assert_non_null(p);
	assert_int_equal(providers_parse(p, text, sizeof(text) - 1, "t", 0,
	    &msg), PROVIDERS_OK);
	assert_int_equal(providers_count(p), 1);
	assert_string_equal(providers_lookup(p, "mx.ok.example"), "ok");
	assert_int_equal(providers_skipped(p), 3);
	providers_free(p);
	buf_free(&msg);
}

/* The shipped table names the providers' published MX hosts. */
static void
test_shipped(void **state)
{
	static const struct { const char *host, *want; } t[] = {
		{ "aspmx.l.google.com", "google" },
		{ "alt2.aspmx.l.google.com", "google" },
		{ "smtp.google.com", "google" },
		{ "aspmx2.googlemail.com", "google" },
		{ "contoso-com.mail.protection.outlook.com", "microsoft365" },
		{ "contoso-com.o-v1.mx.microsoft", "microsoft365" },
		{ "outlook-com.olc.protection.outlook.com", "outlook" },
		{ "hotmail-com.olc.protection.outlook.com", "outlook" },
		{ "mta6.am0.yahoodns.net", "yahoo" },
		{ "mx-aol.mail.gm0.yahoodns.net", "yahoo" },
		{ "mx01.mail.icloud.com", "apple" },
		{ "mail.protonmail.ch", "proton" },
		{ "mailsec.protonmail.ch", "proton" },
		{ "mx.zoho.com", "zoho" },
		{ "mx2.zoho.eu", "zoho" },
		{ "mx00.gmx.net", "gmx" },
		{ "mxs.mail.ru", "mailru" },
		{ "mx.yandex.net", "yandex" },
		{ "mx.yandex.ru", "yandex" },
		{ "in1-smtp.messagingengine.com", "fastmail" },
		{ "us-smtp-inbound-1.mimecast.com", "mimecast" },
		{ "za-smtp-inbound-1.mimecast.co.za", "mimecast" },
		{ "mx0a-001b2d01.pphosted.com", "proofpoint" },
		{ "mx1-us1.ppe-hosted.com", "proofpoint" },
		{ "d123456a.ess.barracudanetworks.com", "barracuda" },
		{ "cluster1.eu.messagelabs.com", "broadcom" },
	};
	struct providers *p;
	struct buf msg;
	const char *got;
	size_t i;

	(void)state;
	buf_init(&msg, 1 << 16);
	assert_int_equal(providers_load(PROVIDERS_CURATED_DIR, &p, &msg),
	    PROVIDERS_OK);
	if (providers_skipped(p) != 0)
		fail_msg("shipped table has bad lines:\n%s", buf_str(&msg));
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		got = providers_lookup(p, t[i].host);
		if (got == NULL || strcmp(got, t[i].want) != 0)
			fail_msg("%s: %s, expected %s", t[i].host,
			    got ? got : "none", t[i].want);
	}
	providers_free(p);
	buf_free(&msg);
}

static int
setup(void **state)
{
	char path[512];

	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/local", tmpdir);
	return mkdir(path, 0700);
}

static int
teardown(void **state)
{
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/local/mx_providers.txt", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/local", tmpdir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/mx_providers.txt", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_registrable),
		cmocka_unit_test(test_parse_garbage),
		cmocka_unit_test(test_shipped),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
