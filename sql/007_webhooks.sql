-- 007_webhooks.sql: events leave the outbox. Account webhooks (their
-- secrets: the newest signs, a rotated one keeps signing until its
-- expires_at), one delivery per event and receiver (an account webhook,
-- a job's callback_url or a batch's webhook_url) with its state, lease and
-- retry time, and one row per attempt. A job may carry a callback_url and
-- its callback_secret (set by uploads). event_outbox.delivered_at now
-- says when an event was turned into its deliveries.

ALTER TABLE jobs
  ADD COLUMN IF NOT EXISTS callback_url VARCHAR(2048) NULL,
  ADD COLUMN IF NOT EXISTS callback_secret VARCHAR(80) NULL;

CREATE TABLE webhooks (
  id               VARCHAR(40) NOT NULL PRIMARY KEY,
  account_id       VARCHAR(40) NOT NULL,
  url              VARCHAR(2048) NOT NULL,
  events           SET('job.completed','job.failed') NOT NULL,
  description      VARCHAR(500) NOT NULL DEFAULT '',
  enabled          TINYINT NOT NULL DEFAULT 1,
  disabled_reason  VARCHAR(64) NULL,
  created_at       DATETIME(3) NOT NULL,
  updated_at       DATETIME(3) NOT NULL,
  KEY webhooks_account (account_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Secrets sign while expires_at is NULL or in the future.
CREATE TABLE webhook_secrets (
  id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  webhook_id  VARCHAR(40) NOT NULL,
  secret      VARCHAR(80) NOT NULL,
  created_at  DATETIME(3) NOT NULL,
  expires_at  DATETIME(3) NULL,
  KEY webhook_secrets_hook (webhook_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- receiver is the X-Webhook-ID sent: the webhook's id,
-- job_callback:<job_id> or batch_callback:<job_id>; one delivery per event
-- and receiver. state: pending (next_attempt_at says when), sending
-- (leased by lease_owner until lease_expires: a worker that dies leaves
-- it to be sent again after that), delivered, failed (given up).
CREATE TABLE event_deliveries (
  id               VARCHAR(40) NOT NULL PRIMARY KEY,
  event_id         VARCHAR(40) NOT NULL,
  event            VARCHAR(40) NOT NULL,
  account_id       VARCHAR(40) NOT NULL,
  job_id           VARCHAR(40) NULL,
  receiver         VARCHAR(80) NOT NULL,
  webhook_id       VARCHAR(40) NULL,
  url              VARCHAR(2048) NOT NULL,
  host             VARCHAR(255) NOT NULL,
  payload          MEDIUMTEXT NOT NULL,
  state            ENUM('pending','sending','delivered','failed') NOT NULL
                   DEFAULT 'pending',
  attempts         INT NOT NULL DEFAULT 0,
  next_attempt_at  DATETIME(3) NULL,
  lease_owner      VARCHAR(100) NULL,
  lease_expires    DATETIME(3) NULL,
  last_status      INT NULL,
  last_error       VARCHAR(200) NULL,
  created_at       DATETIME(3) NOT NULL,
  finished_at      DATETIME(3) NULL,
  UNIQUE KEY event_deliveries_once (event_id, receiver),
  KEY event_deliveries_due (state, next_attempt_at),
  KEY event_deliveries_lease (state, lease_expires),
  KEY event_deliveries_hook (webhook_id, created_at),
  KEY event_deliveries_finished (finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per attempt; finished_at NULL while it runs (or when its worker
-- died: the next attempt marks it interrupted).
CREATE TABLE event_attempts (
  delivery_id  VARCHAR(40) NOT NULL,
  attempt      INT NOT NULL,
  started_at   DATETIME(3) NOT NULL,
  finished_at  DATETIME(3) NULL,
  duration_ms  INT NULL,
  status_code  INT NULL,
  error        VARCHAR(200) NULL,
  PRIMARY KEY (delivery_id, attempt)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
