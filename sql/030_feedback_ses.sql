-- 030_feedback_ses.sql: Amazon SES outcomes through SNS
-- (/v1/feedback/ses).
--
-- feedback_settings.ses_topic_arns: the SNS topics (ARNs separated by
-- commas) whose messages the account takes; a message of any other topic
-- is refused, and only these topics' subscriptions are confirmed. Set
-- with svcadm feedback set ACCOUNT --ses-topic-arns ARN[,ARN...].
--
-- sns_certs: the SNS signing certificates fetched from SigningCertURL
-- (https://sns.<region>.amazonaws.com/...pem only), kept a day.
--
-- Additive: binaries of the previous schema read neither.

ALTER TABLE feedback_settings ADD COLUMN ses_topic_arns VARCHAR(1024) NULL;

CREATE TABLE sns_certs (
  url         VARCHAR(1024) NOT NULL,
  pem         MEDIUMTEXT NOT NULL,
  fetched_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (url)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;
