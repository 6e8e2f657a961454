-- 006_charged_rows.sql: refunds count only what was charged. A job row
-- records whether its address was charged (a sandbox key's sandbox-domain
-- addresses are free), and the job keeps two running counts written with
-- the results, under the job row's lock: charged rows done, and charged
-- rows done as "unknown". Completion refunds the second; cancellation and
-- failure refund credits_charged minus the first. Jobs created before this
-- migration charged every row; their counts start from what they did.

ALTER TABLE job_emails
  ADD COLUMN charged TINYINT NOT NULL DEFAULT 1;

ALTER TABLE jobs
  ADD COLUMN charged_done INT NOT NULL DEFAULT 0,
  ADD COLUMN charged_unknown INT NOT NULL DEFAULT 0;

UPDATE jobs SET charged_done = LEAST(processed_emails, credits_charged),
  charged_unknown = LEAST(count_unknown, credits_charged);
