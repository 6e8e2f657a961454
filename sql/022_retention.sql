-- 022_retention.sql: retention you can set and see, erasure and its
-- receipts (issue 30).
--
-- accounts.retention_days: the account's default retention in days (NULL:
-- the operator's job_retention_days), set with svcadm account retention.
-- jobs.retention_days: the days the job's data is kept after it ended,
-- fixed at creation (the request's retention_days, else the account's,
-- else job_retention_days, never above retention_days_max); NULL for jobs
-- made before this migration (job_retention_days applies).
-- jobs.data_erased_at: when the job's data (its rows, chunks, stored file,
-- preview, columns, callback data, events) was erased; the job row stays
-- with its counts, and the ledger keeps its charge and refund.
--
-- erase_audit: one row per erasure (expiry, DELETE /v1/jobs/{id}/data,
-- svcadm account erase): who (actor housekeeping, api_key or operator, and
-- the key id), what (the account and the job, or NULL for the account's
-- other data), how many rows of each kind, and when. No address text.
ALTER TABLE accounts
  ADD COLUMN retention_days INT NULL;

ALTER TABLE jobs
  ADD COLUMN retention_days INT NULL,
  ADD COLUMN data_erased_at DATETIME(3) NULL,
  ADD KEY jobs_erase (data_erased_at, status, completed_at);

CREATE TABLE erase_audit (
  id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  account_id      VARCHAR(40) NOT NULL,
  job_id          VARCHAR(40) NULL,
  actor           VARCHAR(16) NOT NULL,
  actor_id        VARCHAR(40) NULL,
  reason          VARCHAR(16) NOT NULL,
  results         BIGINT NOT NULL DEFAULT 0,
  chunks          BIGINT NOT NULL DEFAULT 0,
  upload_pieces   BIGINT NOT NULL DEFAULT 0,
  events          BIGINT NOT NULL DEFAULT 0,
  job_fields      BIGINT NOT NULL DEFAULT 0,
  suppressions    BIGINT NOT NULL DEFAULT 0,
  stored_answers  BIGINT NOT NULL DEFAULT 0,
  created_at      DATETIME(3) NOT NULL,
  KEY erase_audit_account (account_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;

