-- 028_calibration.sql: the calibrated score (issue 29).
--
-- calibration: for each provider (job_emails.provider: the
-- mx_providers.txt id or the registrable domain of the MX host) and each
-- classification, how many of the results verified in the last
-- window_days (calibration_window_days) were later reported delivered,
-- and how many hard-bounced, over every account. Counts only: no address,
-- no hash, no account. Rewritten whole by svcadm calibration update and by
-- svc-worker's housekeeping (every calibration_update_seconds); read by
-- the verification engine (engine/calibration.h has the maths).
--
-- job_emails.score_basis: whether a stored result's score is the rules'
-- or the calibrated one ("score_basis" in job results, "svc_score_basis"
-- in downloads); NULL for rows written before this migration (rules).
--
-- Additive: binaries of the previous schema read neither.

CREATE TABLE calibration (
  provider        VARCHAR(253) NOT NULL,
  classification  VARCHAR(16) NOT NULL,
  delivered       BIGINT NOT NULL,
  bounced         BIGINT NOT NULL,
  window_days     INT NOT NULL,
  updated_at      DATETIME(3) NOT NULL,
  PRIMARY KEY (provider, classification)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

ALTER TABLE job_emails
  ADD COLUMN score_basis VARCHAR(10) NULL;
