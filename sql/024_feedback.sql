-- 024_feedback.sql: delivery outcomes that accounts report back
-- (POST /v1/feedback and the senders' webhooks at /v1/feedback/{sender}),
-- each account's feedback settings, and its complainer list.
--
-- Addresses are never kept in clear here: addr_hash is util/addrhash.h's
-- keyed BLAKE2b of the normalised address (feedback_hash_key), 32 hex
-- digits. The diagnostic text of a bounce is not stored (it often quotes
-- the address). Outcomes older than feedback_retention_days (by
-- occurred_at) are deleted by svc-worker's housekeeping.
--
-- Additive: binaries of the previous schema do not read these tables.

CREATE TABLE feedback_outcomes (
  id             BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  account_id     VARCHAR(40) NOT NULL,
  addr_hash      CHAR(32) NOT NULL,
  outcome        ENUM('delivered','hard_bounce','soft_bounce','complaint') NOT NULL,
  occurred_at    DATETIME(3) NOT NULL,
  smtp_code      SMALLINT NULL,
  enhanced_code  VARCHAR(16) NULL,
  source         VARCHAR(16) NOT NULL,
  -- the sender's or the client's id of the event; NULL: no replay check
  event_id       VARCHAR(200) NULL,
  received_at    DATETIME(3) NOT NULL,
  UNIQUE KEY feedback_outcomes_event (account_id, source, event_id),
  KEY feedback_outcomes_addr (account_id, addr_hash, occurred_at),
  KEY feedback_outcomes_occurred (occurred_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per account that changed a default (svcadm feedback set).
CREATE TABLE feedback_settings (
  account_id             VARCHAR(40) NOT NULL PRIMARY KEY,
  suppress_hard_bounces  TINYINT NOT NULL DEFAULT 1,
  -- Mailgun's HTTP webhook signing key (HMAC-SHA256 needs it in clear)
  mailgun_signing_key    VARCHAR(200) NULL,
  -- Postmark's webhook basic-auth user, and SHA-256 of "user:password"
  postmark_user          VARCHAR(100) NULL,
  postmark_auth_hash     CHAR(64) NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The account's own complainer list (complaints it reported), by hash.
CREATE TABLE account_complainers (
  account_id  VARCHAR(40) NOT NULL,
  addr_hash   CHAR(32) NOT NULL,
  added_at    DATETIME(3) NOT NULL,
  PRIMARY KEY (account_id, addr_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
