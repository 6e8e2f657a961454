-- 031_calibration_hosts.sql: calibration per mail host, and single
-- verifications counted in the accuracy report (issue 29).
--
-- job_emails.mx_host: the first MX host of a result (the one its provider
-- is named after), NULL without MX or for rows written before this.
--
-- calibration_hosts: as calibration (028), per mail host: for each
-- (provider, mail host, classification) how many results of the window
-- were later delivered and how many hard-bounced, over every account.
-- Counts only: no address, no hash, no account.
--
-- single_results: each single verification (POST /v1/verify) of a
-- mail-checked verdict, so that its outcome counts in the accuracy report
-- and the calibration: the address only as the feedback key's keyed hash
-- (util/addrhash.h, as feedback_outcomes keeps it), its classification,
-- provider and mail host; deleted at expires_at (the account's
-- retention_days, else job_retention_days, as a job's results) by
-- svc-worker's housekeeping, and with the account (svcadm account erase).
--
-- Additive: binaries of the previous schema read none of it.

ALTER TABLE job_emails
  ADD COLUMN mx_host VARCHAR(253) NULL;

CREATE TABLE calibration_hosts (
  provider        VARCHAR(253) NOT NULL,
  mx_host         VARCHAR(253) NOT NULL,
  classification  VARCHAR(16) NOT NULL,
  delivered       BIGINT NOT NULL,
  bounced         BIGINT NOT NULL,
  window_days     INT NOT NULL,
  updated_at      DATETIME(3) NOT NULL,
  PRIMARY KEY (provider, mx_host, classification)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE single_results (
  id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  account_id      VARCHAR(40) NOT NULL,
  addr_hash       CHAR(32) NOT NULL,
  classification  VARCHAR(16) NOT NULL,
  provider        VARCHAR(253) NULL,
  mx_host         VARCHAR(253) NULL,
  verified_at     DATETIME(3) NOT NULL,
  expires_at      DATETIME(3) NOT NULL,
  KEY single_results_account (account_id, verified_at),
  KEY single_results_verified (verified_at),
  KEY single_results_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
