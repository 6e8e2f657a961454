/* test_feedback_sns.c: Amazon SNS messages and the SES events in them
 * (feedback_sns.h): which SigningCertURL and SubscribeURL are taken (https,
 * sns.<region>.amazonaws.com(.cn), a .pem path, no query, user or
 * fragment), the exact text SNS signs for each Type, AWS's sample
 * Notification verified with SignatureVersion 1 and 2 by a test
 * certificate (and refused changed, with the other version, by a
 * damaged certificate or by one that expired), the topic lists, and the SES events read from a
 * Message (one per recipient, codes, ids, what is ignored). */
#include "jobs/feedback_sns.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* openssl req -x509 -newkey rsa:2048 -subj /CN=sns.amazonaws.com */
static const char cert_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIDGzCCAgOgAwIBAgIUBM5Rb+0hpYjywfEX4Ixn02oftFswDQYJKoZIhvcNAQEL\n"
	"BQAwHDEaMBgGA1UEAwwRc25zLmFtYXpvbmF3cy5jb20wIBcNMjYxMTI5MTAzNTI2\n"
	"WhgPMjEyNjExMDUxMDM1MjZaMBwxGjAYBgNVBAMMEXNucy5hbWF6b25hd3MuY29t\n"
	"MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAk5WVQw2E4l2lk942RfNb\n"
	"dC48RekQKtTE+ickaS1DHf6IWOcRUeCTbdRvX0TOES0GC490kBXLvdKbZ/v0tH0U\n"
	"gQXT8EIJBXPKom/QgCUzDRQ+UuOkS+YIuL+xhpWjqetY+pwY6r0LRkMCQqMwpL11\n"
	"lyOk9rSwNCmDyFJr0UUxdL1f3vhrG3Q76vr7EIurc/R5tYeCUReF4FnoW5pZxIIX\n"
	"kc3iAgTG54SdnAg3oumu9cLh/qcZEgwvJc3qtzHZbuJ1JXxRg/MiT0hKxsRXIu04\n"
	"ayIUBeSJZ6/YE8kyg6tkJcbi96tNd5ac2PDlhzWnA2FMEpUOS3sL1bcJD/j16hdq\n"
	"dQIDAQABo1MwUTAdBgNVHQ4EFgQUfN/rp41vioX6vxNK5Z1bCFkTPA0wHwYDVR0j\n"
	"BBgwFoAUfN/rp41vioX6vxNK5Z1bCFkTPA0wDwYDVR0TAQH/BAUwAwEB/zANBgkq\n"
	"hkiG9w0BAQsFAAOCAQEAgVs0Sxsuey3mb4Y0aJ1s1LSwCm+c8mmpArKpF2vx1HDP\n"
	"iDDk4eG2uHt6+hwLGlScvZ+eX1a+x+Wgjtg6JoDxH77htrIp+pcL1RsuRyCDB58n\n"
	"NVbOjy4GdlbLiRZCV4TRv2hSO7vNsG8+YUqIGV2T2WjVpQKiNPjdP68FIqfNWJZA\n"
	"X2yVm2uQWKyKqWYra0DcidTSvQkUEig8ILwluPEwuAghzN3Kh7n5goFzgA7E5jrV\n"
	"cSdbJv709VyYdUvN/f74UiM4bPT9MXSmyVjCqV+atg1yvOQSsUTpPQEo1rbJ/0Ct\n"
	"ERpGqSBsbqok1jHAV9L/ifkMi+lW0nfqxUmajwaYZA==\n"
	"-----END CERTIFICATE-----\n";

/* openssl dgst -sha1 (-sha256) -sign of the sample's text to sign */
static const char sig_v1[] =
	    "AaAeGA0qNpLgNAnd4vi4YW4WpHT5xlvmS0cU08MRkmXaDgPVEFPIRX1PpKEb"
	    "cPB24KoMqiI4st0jWPVE1dqZEwl+ihkax9lEGr3UJ7XDzE68yxLQAkO/ORfc"
	    "0cJocqxrSUrahkZLHQKM9K0XQ3qNHZPZN8GjYm2oaxK5JdgI4MLj6HCJhePA"
	    "h7onA1z4JUGvifjDj/a7avPo5FJMOVa5jT9rjwEvBtZpeEnSqBL/UxGkEe9+"
	    "U7m3CS4XK2Q//vXtMLjv6mT6g42srPim/YCfVl73T8DBc5A9skiPzvp+iSV1"
	    "ybqxKVyLOPWpFe94AqX/xbw1uxRN46b/FXFkVKZ2YA==";
static const char sig_v2[] =
	    "Cth6usbJj3gLK90YZjH321oh6iwtblahuHzA1HkfGIj1c9hMRU1YcSqfAnA1"
	    "u3HR4F6pD1QqHyIXFGsXVXu1xtFsKEtcm+eErFDPOWUbrP9/JCPjJ/OPTV3w"
	    "suq8IUWAmxHj/tEMxkmuuqHY7WobDWPoOUX/oNzK8AXlsvUv5t9i5ydk2WgM"
	    "sTjtrz1xAX//oogxU4g/8jubxWVnLKrig/9CmwNV2czVzi1zJmzfSxxkiLZO"
	    "ZcilaZNxNQ/x3b/BGyQLbwFgwdUXzxpQHHr43E8LZ5jmlz57wKezHQwuyMKU"
	    "58twdks/V2Ca+wopCwvLK0arf2L6SJpSVxNIJPyHbQ==";

/* certtool, activation 2019-01-01, expiration 2020-01-01, and its
 * SignatureVersion 2 signature of the sample */
static const char expired_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIDBTCCAe2gAwIBAgIUMyRNAOfNftb0f4Hgy69IASiI5uQwDQYJKoZIhvcNAQEL\n"
	"BQAwHDEaMBgGA1UEAxMRc25zLmFtYXpvbmF3cy5jb20wHhcNMTkwMTAxMDAwMDAw\n"
	"WhcNMjAwMTAxMDAwMDAwWjAcMRowGAYDVQQDExFzbnMuYW1hem9uYXdzLmNvbTCC\n"
	"ASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEBALBSPfwTKKLpHHYIaHDHHed3\n"
	"eF5L9p6vq0tyP5gFvaBQk9s3+hZ5BiKnhiPrPMBryBcVAFjMTb/nDR9+B4VMvltm\n"
	"SYuTjs1DOfzSFiBfWwzKGBuboVIUfHKcu/KVZTt0u3H0Wr0ActTIxMWVSf7CD1DD\n"
	"QWRKSdQgug//M5AoQWJOY5ZmOpnloXiutlEQYQHX7CAk3KHECY9eNvkMi1NNQdhr\n"
	"DNY3hJnl+olpbee5GxhLFOvz+Yhtjq4pWO7zqe6MAdXHeQWNtIvrG0X3Wwz6qYrk\n"
	"UAdpz/oZcJ1QYnXts7/aZIM0a6nVcgDYuYrANy1t5Bq9fVxTt9YwkaQuTtv8xMsC\n"
	"AwEAAaM/MD0wDAYDVR0TAQH/BAIwADAOBgNVHQ8BAf8EBAMCB4AwHQYDVR0OBBYE\n"
	"FEptfEoFC9SDqH5CtC1BUQQ6w41JMA0GCSqGSIb3DQEBCwUAA4IBAQAGPdjrZR/A\n"
	"OZRVfUQEH3s74qp7h2OK3s75CsUkR44ScXrEAFlwrlZEXsIOZ5ZMwTpS7Rv7k4cv\n"
	"ahS/uX7k2o8DM2q5+r5HVDTbC06Ml27IWjNH0vhY2QM54Lf3wgd0WwMm3uaaJqpK\n"
	"EUNJ5l2RtBQltgkTYSJ3O3Nv17jVe1hakpfln8LF+C4x4qNGMiveBTCZNhz2MARx\n"
	"hLDYtSLySaY+exQn4WcSYk02vTsiIlcxQVWYlW2lc9vwSW4xuqDJwXX2bmgmSKpA\n"
	"pQ8IuMpSDNzstUmNeYieCs0s0a13kQYGX/oriV5/MiKAiEzGMtfQlTmJ1a5Rpjl+\n"
	"9swcmZ7Rw1de\n"
	"-----END CERTIFICATE-----\n";
static const char expired_sig_v2[] =
	    "KAjXxNVnYYmgp77jwDrxAFv5L1kN0jH24meSEfaTFPyM4NHO3Pyod4mPzqGf"
	    "VZouFLwu8IfQTL1lxetFVZUemoVKwWAvi+xhWH/5BkxXJa9TUHhUmRdxpBv5"
	    "GH65YYELOmQNm4ddjIOO6TJAWTe3VUiP4QPfoXsZqfgfthJYGKfP5wHoHtZq"
	    "keRh2mzSRxzob1lpj8CrYij1Dc2CTCrbx/79IR1YODYfOUuxMsLaRjI4FRxX"
	    "/d1L3tvHbStNaXGDW5p9CDjdSxJ6jEO+HrIOmL/wOzICV4qfIiP3K0z6vVvq"
	    "Hg+rSweX3un7bPFSN4vpZrkmCwsT7iT/v0w7dYtmDA==";

static const char sample[] = "{"
    "\"Type\": \"Notification\","
    "\"MessageId\": \"22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324\","
    "\"TopicArn\": \"arn:aws:sns:us-west-2:123456789012:MyTopic\","
    "\"Subject\": \"My First Message\","
    "\"Message\": \"Hello world!\","
    "\"Timestamp\": \"2012-05-02T00:54:06.655Z\","
    "\"SignatureVersion\": \"%s\","
    "\"Signature\": \"%s\","
    "\"SigningCertURL\": \"https://sns.us-west-2.amazonaws.com/"
    "SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem\","
    "\"UnsubscribeURL\": \"https://sns.us-west-2.amazonaws.com/"
    "?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-west-2:"
    "123456789012:MyTopic:c9135db0-26c4-47ec-8998-413945fb5a96\"}";

static int
parse_sample(const char *version, const char *sig, struct feedback_sns *m)
{
	char body[4096], why[200];

	snprintf(body, sizeof(body), sample, version, sig);
	return feedback_sns_parse(body, strlen(body), m, why, sizeof(why));
}

static void
test_urls(void **st)
{
	static const struct {
		const char	*url;
		int		 cert, want;
	} c[] = {
		{ "https://sns.us-east-1.amazonaws.com/"
		    "SimpleNotificationService-0123.pem", 1, 1 },
		{ "https://SNS.eu-west-3.AmazonAWS.com/x.pem", 1, 1 },
		{ "https://sns.cn-north-1.amazonaws.com.cn/x.pem", 1, 1 },
		/* a port: allow_url_ports decides when it is fetched */
		{ "https://sns.us-east-1.amazonaws.com:8443/x.pem", 1, 1 },
		{ "http://sns.us-east-1.amazonaws.com/x.pem", 1, 0 },
		{ "https://sns.us-east-1.amazonaws.com.evil.test/x.pem", 1, 0 },
		{ "https://sns.us-east-1.amazonaws.com./x.pem", 1, 0 },
		{ "https://evil.test/sns.us-east-1.amazonaws.com/x.pem", 1, 0 },
		{ "https://s3.amazonaws.com/sns.us-east-1/x.pem", 1, 0 },
		{ "https://sns.aa.amazonaws.com/x.pem", 1, 0 },
		{ "https://sns.us_east.amazonaws.com/x.pem", 1, 0 },
		{ "https://sns.us-east-1.amazonaws.com/x.txt", 1, 0 },
		{ "https://sns.us-east-1.amazonaws.com/x.pem?a=1", 1, 0 },
		{ "https://sns.us-east-1.amazonaws.com/x.pem#f", 1, 0 },
		{ "https://me@sns.us-east-1.amazonaws.com/x.pem", 1, 0 },
		{ "https://sns.us-east-1.amazonaws.com/ x.pem", 1, 0 },
		{ "sns.us-east-1.amazonaws.com/x.pem", 1, 0 },
		{ "", 1, 0 },
		/* a SubscribeURL has its query */
		{ "https://sns.us-east-1.amazonaws.com/?Action="
		    "ConfirmSubscription&TopicArn=arn:aws:sns:us-east-1:1:t"
		    "&Token=2336", 0, 1 },
		{ "https://127.0.0.1/?Action=ConfirmSubscription", 0, 0 },
		{ "http://sns.us-east-1.amazonaws.com/?Action=x", 0, 0 },
	};
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (feedback_sns_url_ok(c[i].url, c[i].cert) != c[i].want)
			fail_msg("%s (cert %d): want %d", c[i].url, c[i].cert,
			    c[i].want);
}

static void
test_text_to_sign(void **st)
{
	struct feedback_sns m;
	const char *conf = "{\"Type\": \"SubscriptionConfirmation\", "
	    "\"MessageId\": \"165545c9\", \"Token\": \"2336412f37\", "
	    "\"TopicArn\": \"arn:aws:sns:us-west-2:123456789012:MyTopic\", "
	    "\"Message\": \"You have chosen to subscribe.\", "
	    "\"SubscribeURL\": \"https://sns.us-west-2.amazonaws.com/?Action="
	    "ConfirmSubscription\", \"Timestamp\": \"2012-04-26T20:45:04.751Z\", "
	    "\"SignatureVersion\": \"1\", \"Signature\": \"AAAA\", "
	    "\"SigningCertURL\": \"https://sns.us-west-2.amazonaws.com/x.pem\"}";
	char why[200], *s;
	size_t n;

	(void)st;
	assert_int_equal(parse_sample("1", "AAAA", &m), 0);
	s = feedback_sns_string_to_sign(&m, &n);
	assert_string_equal(s, "Message\nHello world!\nMessageId\n"
	    "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324\nSubject\nMy First Message\n"
	    "Timestamp\n2012-05-02T00:54:06.655Z\nTopicArn\n"
	    "arn:aws:sns:us-west-2:123456789012:MyTopic\nType\nNotification\n");
	assert_int_equal(n, strlen(s));
	free(s);
	feedback_sns_free(&m);
	assert_int_equal(feedback_sns_parse(conf, strlen(conf), &m, why,
	    sizeof(why)), 0);
	assert_int_equal(m.type, FEEDBACK_SNS_SUBSCRIPTION_CONFIRMATION);
	s = feedback_sns_string_to_sign(&m, &n);
	assert_string_equal(s, "Message\nYou have chosen to subscribe.\n"
	    "MessageId\n165545c9\nSubscribeURL\nhttps://sns.us-west-2."
	    "amazonaws.com/?Action=ConfirmSubscription\nTimestamp\n"
	    "2012-04-26T20:45:04.751Z\nToken\n2336412f37\nTopicArn\n"
	    "arn:aws:sns:us-west-2:123456789012:MyTopic\nType\n"
	    "SubscriptionConfirmation\n");
	free(s);
	feedback_sns_free(&m);
	/* refused: another Type, another version, a field missing */
	assert_int_equal(feedback_sns_parse("{\"Type\": \"Other\"}", 17, &m,
	    why, sizeof(why)), -1);
	assert_int_equal(parse_sample("3", "AAAA", &m), -1);
	assert_int_equal(feedback_sns_parse(conf, 40, &m, why, sizeof(why)),
	    -1);
	assert_true(why[0] != '\0');
}

static void
test_signatures(void **st)
{
	struct feedback_sns m;
	char other[sizeof(cert_pem)];

	(void)st;
	assert_int_equal(feedback_sns_cert_ok(cert_pem, strlen(cert_pem)), 1);
	assert_int_equal(parse_sample("1", sig_v1, &m), 0);
	assert_int_equal(feedback_sns_verify(&m, cert_pem, strlen(cert_pem)),
	    1);
	/* the message changed after signing */
	m.message[0] = 'J';
	assert_int_equal(feedback_sns_verify(&m, cert_pem, strlen(cert_pem)),
	    0);
	feedback_sns_free(&m);
	assert_int_equal(parse_sample("2", sig_v2, &m), 0);
	assert_int_equal(feedback_sns_verify(&m, cert_pem, strlen(cert_pem)),
	    1);
	feedback_sns_free(&m);
	/* a version 1 signature said to be version 2, and the reverse */
	assert_int_equal(parse_sample("2", sig_v1, &m), 0);
	assert_int_equal(feedback_sns_verify(&m, cert_pem, strlen(cert_pem)),
	    0);
	feedback_sns_free(&m);
	assert_int_equal(parse_sample("1", sig_v2, &m), 0);
	assert_int_equal(feedback_sns_verify(&m, cert_pem, strlen(cert_pem)),
	    0);
	/* a certificate that expired, though its signature is right */
	feedback_sns_free(&m);
	assert_int_equal(parse_sample("2", expired_sig_v2, &m), 0);
	assert_int_equal(feedback_sns_cert_ok(expired_pem,
	    strlen(expired_pem)), 0);
	assert_int_equal(feedback_sns_verify(&m, expired_pem,
	    strlen(expired_pem)), 0);
	/* no certificate, or a damaged one */
	assert_int_equal(feedback_sns_verify(&m, "", 0), 0);
	memcpy(other, cert_pem, sizeof(cert_pem));
	other[200] = other[200] == 'A' ? 'B' : 'A';
	assert_int_equal(feedback_sns_verify(&m, other, strlen(other)), 0);
	feedback_sns_free(&m);
}

static void
test_topics(void **st)
{
	const char *list = "arn:aws:sns:us-east-1:123456789012:a, "
	    "arn:aws:sns:eu-west-1:123456789012:b";

	(void)st;
	assert_int_equal(feedback_sns_topics_valid(list), 1);
	assert_int_equal(feedback_sns_topics_valid(""), 1);
	assert_int_equal(feedback_sns_topics_valid("arn:aws:sqs:us-east-1:1:q"),
	    0);
	assert_int_equal(feedback_sns_topics_valid("not-an-arn"), 0);
	assert_int_equal(feedback_sns_topic_listed(list,
	    "arn:aws:sns:eu-west-1:123456789012:b"), 1);
	assert_int_equal(feedback_sns_topic_listed(list,
	    "arn:aws:sns:eu-west-1:123456789012"), 0);
	assert_int_equal(feedback_sns_topic_listed(list,
	    "arn:aws:sns:eu-west-1:123456789012:bb"), 0);
	assert_int_equal(feedback_sns_topic_listed("", "x"), 0);
	assert_int_equal(feedback_sns_topic_listed(NULL, "x"), 0);
}

static void
test_ses_events(void **st)
{
	struct feedback_event ev[4];
	struct addrhash_key key;
	char why[200];
	size_t n;

	(void)st;
	memset(&key, 3, sizeof(key));
	assert_int_equal(feedback_sns_ses_parse("{\"notificationType\": "
	    "\"Bounce\", \"bounce\": {\"bounceType\": \"Permanent\", "
	    "\"timestamp\": \"2026-11-29T09:58:12.414Z\", "
	    "\"bouncedRecipients\": [{\"emailAddress\": \"A@x.test\", "
	    "\"status\": \"5.1.1\", \"diagnosticCode\": \"smtp; 550 5.1.1 "
	    "user unknown\"}, {\"emailAddress\": \"b@x.test\", "
	    "\"diagnosticCode\": \"smtp; 554 4.4.7 expired\"}]}}", "m1", &key,
	    ev, 4, &n, why, sizeof(why)), FEEDBACK_SENDER_OK);
	assert_int_equal(n, 2);
	assert_int_equal(ev[0].outcome, FEEDBACK_HARD_BOUNCE);
	assert_int_equal(ev[0].smtp_code, 550);
	assert_string_equal(ev[0].enhanced, "5.1.1");
	assert_string_equal(ev[0].event_id, "m1:0");
	assert_string_equal(ev[0].normalised, "a@x.test");
	assert_int_equal(ev[0].occurred_at, 1795946292);
	assert_int_equal(feedback_suppresses(&ev[0]), 1);
	assert_int_equal(ev[1].smtp_code, 554);
	assert_string_equal(ev[1].enhanced, "4.4.7");
	assert_string_equal(ev[1].event_id, "m1:1");
	assert_int_equal(feedback_sns_ses_parse("{\"eventType\": \"Bounce\", "
	    "\"bounce\": {\"bounceType\": \"Transient\", \"timestamp\": "
	    "\"2026-11-29T09:58:12Z\", \"bouncedRecipients\": [{"
	    "\"emailAddress\": \"c@x.test\"}]}}", "m2", &key, ev, 4, &n, why,
	    sizeof(why)), FEEDBACK_SENDER_OK);
	assert_int_equal(ev[0].outcome, FEEDBACK_SOFT_BOUNCE);
	assert_int_equal(feedback_sns_ses_parse("{\"notificationType\": "
	    "\"Delivery\", \"delivery\": {\"timestamp\": "
	    "\"2026-11-29T09:58:12Z\", \"recipients\": [\"d@x.test\"], "
	    "\"smtpResponse\": \"250 2.6.0 ok\"}}", "m3", &key, ev, 4, &n, why,
	    sizeof(why)), FEEDBACK_SENDER_OK);
	assert_int_equal(ev[0].outcome, FEEDBACK_DELIVERED);
	assert_int_equal(ev[0].smtp_code, 250);
	assert_int_equal(feedback_sns_ses_parse("{\"notificationType\": "
	    "\"Complaint\", \"complaint\": {\"timestamp\": "
	    "\"2026-11-29T09:58:12Z\", \"complainedRecipients\": "
	    "[{\"emailAddress\": \"e@x.test\"}]}}", "m4", &key, ev, 4, &n, why,
	    sizeof(why)), FEEDBACK_SENDER_OK);
	assert_int_equal(ev[0].outcome, FEEDBACK_COMPLAINT);
	/* no outcome: SES could not tell, or not a delivery event */
	assert_int_equal(feedback_sns_ses_parse("{\"notificationType\": "
	    "\"Bounce\", \"bounce\": {\"bounceType\": \"Undetermined\"}}",
	    "m5", &key, ev, 4, &n, why, sizeof(why)), FEEDBACK_SENDER_IGNORED);
	assert_int_equal(feedback_sns_ses_parse("{\"eventType\": \"Open\"}",
	    "m6", &key, ev, 4, &n, why, sizeof(why)), FEEDBACK_SENDER_IGNORED);
	/* refused: a recipient that is no address, more than max, no time */
	assert_int_equal(feedback_sns_ses_parse("{\"notificationType\": "
	    "\"Delivery\", \"delivery\": {\"timestamp\": "
	    "\"2026-11-29T09:58:12Z\", \"recipients\": [\"d@x.test\", "
	    "\"nobody\"]}}", "m7", &key, ev, 4, &n, why, sizeof(why)),
	    FEEDBACK_SENDER_INVALID);
	assert_int_equal(n, 0);
	assert_int_equal(feedback_sns_ses_parse("{\"notificationType\": "
	    "\"Delivery\", \"delivery\": {\"timestamp\": "
	    "\"2026-11-29T09:58:12Z\", \"recipients\": [\"a@x.test\", "
	    "\"b@x.test\", \"c@x.test\"]}}", "m8", &key, ev, 2, &n, why,
	    sizeof(why)), FEEDBACK_SENDER_INVALID);
	assert_int_equal(feedback_sns_ses_parse("{\"notificationType\": "
	    "\"Complaint\", \"complaint\": {\"complainedRecipients\": "
	    "[{\"emailAddress\": \"e@x.test\"}]}}", "m9", &key, ev, 4, &n, why,
	    sizeof(why)), FEEDBACK_SENDER_INVALID);
	assert_int_equal(feedback_sns_ses_parse("Hello world!", "m10", &key,
	    ev, 4, &n, why, sizeof(why)), FEEDBACK_SENDER_INVALID);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_text_to_sign),
		cmocka_unit_test(test_signatures),
		cmocka_unit_test(test_topics),
		cmocka_unit_test(test_ses_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
