-- 003_jobs.sql: bulk and batch jobs, their addresses (one row each, in input
-- order, holding the result once verified), the chunks that workers lease,
-- and the outbox of job events (job.completed, job.failed) for delivery.

CREATE TABLE jobs (
  id                  VARCHAR(40) NOT NULL PRIMARY KEY,
  account_id          VARCHAR(40) NOT NULL,
  pool_id             VARCHAR(40) NOT NULL,
  type                ENUM('bulk','upload','batch') NOT NULL,
  name                VARCHAR(200) NOT NULL DEFAULT '',
  status              ENUM('ingesting','awaiting_confirmation','pending',
                           'processing','completed','failed','cancelled') NOT NULL,
  sandbox             TINYINT NOT NULL DEFAULT 0,
  total_emails        INT NOT NULL DEFAULT 0,
  duplicates_removed  INT NOT NULL DEFAULT 0,
  processed_emails    INT NOT NULL DEFAULT 0,
  count_valid         INT NOT NULL DEFAULT 0,
  count_invalid       INT NOT NULL DEFAULT 0,
  count_risky         INT NOT NULL DEFAULT 0,
  count_catch_all     INT NOT NULL DEFAULT 0,
  count_disposable    INT NOT NULL DEFAULT 0,
  count_unknown       INT NOT NULL DEFAULT 0,
  credits_charged     BIGINT NOT NULL DEFAULT 0,
  credits_refunded    BIGINT NOT NULL DEFAULT 0,
  webhook_url         VARCHAR(2048) NULL,
  webhook_secret      VARCHAR(80) NULL,
  callback_data       MEDIUMTEXT NULL,
  error_code          VARCHAR(64) NULL,
  error_message       VARCHAR(500) NULL,
  created_at          DATETIME(3) NOT NULL,
  started_at          DATETIME(3) NULL,
  completed_at        DATETIME(3) NULL,
  expires_at          DATETIME(3) NULL,
  KEY jobs_account (account_id, created_at),
  KEY jobs_status (status, created_at),
  KEY jobs_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per unique address. state: pending (not verified yet), retry
-- (greylisted: verify again after retry_at), done (result columns set).
CREATE TABLE job_emails (
  job_id             VARCHAR(40) NOT NULL,
  seq                INT NOT NULL,
  chunk              INT NOT NULL,
  email              VARCHAR(320) NOT NULL,
  domain             VARCHAR(253) NOT NULL,
  state              ENUM('pending','retry','done') NOT NULL DEFAULT 'pending',
  retry_at           DATETIME(3) NULL,
  attempts           TINYINT NOT NULL DEFAULT 0,
  classification     ENUM('valid','invalid','risky','catch_all','disposable','unknown') NULL,
  status             ENUM('deliverable','undeliverable','risky','unknown') NULL,
  reason             VARCHAR(32) NULL,
  sub_status         VARCHAR(32) NULL,
  score              TINYINT UNSIGNED NULL,
  free               TINYINT NULL,
  role               TINYINT NULL,
  disposable         TINYINT NULL,
  accept_all         TINYINT NULL,
  catch_all_verdict  VARCHAR(24) NULL,
  verified_at        DATETIME(3) NULL,
  PRIMARY KEY (job_id, seq),
  KEY job_emails_chunk (job_id, chunk, state),
  KEY job_emails_class (job_id, classification, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Work units leased by workers (SELECT ... FOR UPDATE SKIP LOCKED). A chunk
-- holds addresses of one or a few domains. A lease that expires (the worker
-- died) makes the chunk claimable again; results already written stay.
CREATE TABLE job_chunks (
  job_id         VARCHAR(40) NOT NULL,
  chunk          INT NOT NULL,
  state          ENUM('pending','leased','done') NOT NULL DEFAULT 'pending',
  lease_owner    VARCHAR(100) NULL,
  lease_expires  DATETIME(3) NULL,
  not_before     DATETIME(3) NULL,
  attempts       INT NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, chunk),
  KEY job_chunks_claim (state, lease_expires)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Events waiting for delivery (webhooks come with their own issue). One
-- row per job and event kind: written once, in the transaction that
-- completes or fails the job.
CREATE TABLE event_outbox (
  id            VARCHAR(40) NOT NULL PRIMARY KEY,
  account_id    VARCHAR(40) NOT NULL,
  job_id        VARCHAR(40) NOT NULL,
  event         VARCHAR(40) NOT NULL,
  payload       MEDIUMTEXT NOT NULL,
  created_at    DATETIME(3) NOT NULL,
  delivered_at  DATETIME(3) NULL,
  UNIQUE KEY event_outbox_once (job_id, event),
  KEY event_outbox_pending (delivered_at, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
