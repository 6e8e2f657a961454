-- 008_uploads.sql: jobs made from an uploaded file or a source_url, their
-- stored file, ingestion by svc-worker, the free preview, and the accounts'
-- suppression lists.
--
-- A file comes in through svc-api in pieces of about 1 MiB (upload_chunks,
-- keyed by the id the job will have), so that no process ever holds it
-- whole and a worker on any host can read it. The job row is written only
-- once the whole request was good; pieces whose job never came (a
-- responder that died) are deleted by housekeeping.

CREATE TABLE upload_chunks (
  job_id      VARCHAR(40) NOT NULL,
  seq         INT NOT NULL,
  data        MEDIUMBLOB NOT NULL,
  created_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (job_id, seq),
  KEY upload_chunks_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- An upload job: where its file is (stored, or source_url to fetch), how
-- the email column is chosen (column_rule: auto, the email_column field,
-- or column_mapping's email), whether it stops at a preview. Ingestion is
-- leased like chunks (ingest_owner, ingest_lease_expires), its progress
-- counted in rows and bytes. original_header: the file's header row (JSON
-- array) for include_original downloads. preview: the preview object
-- (JSON) once computed; preview_refresh asks a worker to compute it again.
ALTER TABLE jobs
  ADD COLUMN source_url            VARCHAR(2048) NULL,
  ADD COLUMN file_name             VARCHAR(255) NULL,
  ADD COLUMN file_format           VARCHAR(8) NULL,
  ADD COLUMN file_size             BIGINT NULL,
  ADD COLUMN column_rule           VARCHAR(16) NULL,
  ADD COLUMN email_column          VARCHAR(255) NULL,
  ADD COLUMN want_preview          TINYINT NOT NULL DEFAULT 0,
  ADD COLUMN preview               MEDIUMTEXT NULL,
  ADD COLUMN preview_refresh       TINYINT NOT NULL DEFAULT 0,
  ADD COLUMN original_header       MEDIUMTEXT NULL,
  ADD COLUMN ingest_owner          VARCHAR(100) NULL,
  ADD COLUMN ingest_lease_expires  DATETIME(3) NULL,
  ADD COLUMN ingest_rows           BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN ingest_bytes          BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS callback_url     VARCHAR(2048) NULL,
  ADD COLUMN IF NOT EXISTS callback_secret  VARCHAR(80) NULL,
  ADD KEY jobs_ingest (status, want_preview, preview_refresh);

-- The original cells of an upload's row (JSON array of strings), for
-- include_original downloads: the row where the address first appeared.
-- suppressed: the address or its domain was on the account's suppression
-- list when the job was made.
ALTER TABLE job_emails
  ADD COLUMN original MEDIUMTEXT NULL,
  ADD COLUMN suppressed TINYINT NOT NULL DEFAULT 0;

-- Addresses (normal form: ASCII-lower-cased local part, A-label domain)
-- and whole domains ("@" and the A-label domain) an account never wants
-- to mail. The preview counts them; result rows say "suppressed".
CREATE TABLE suppressions (
  account_id  VARCHAR(40) NOT NULL,
  entry       VARCHAR(330) NOT NULL,
  created_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (account_id, entry),
  KEY suppressions_created (account_id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
