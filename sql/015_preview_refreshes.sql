-- 015_preview_refreshes.sql: how many times a job's preview was asked to
-- be computed again (POST .../preview?refresh=true), so that one job's
-- free SMTP sample cannot be drawn again and again: svc-api refuses a
-- refresh past preview_refresh_limit (409 rate_limit_exceeded).
--
-- Additive: binaries of the previous schema do not read it.

ALTER TABLE jobs
  ADD COLUMN preview_refreshes INT NOT NULL DEFAULT 0;
