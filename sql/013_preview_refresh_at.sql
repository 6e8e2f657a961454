-- 013_preview_refresh_at.sql: when a preview refresh was last asked for.
-- POST .../preview?refresh=true sets preview_refresh and, now,
-- preview_refresh_at; every POST .../preview answers 202 refreshing with
-- refresh_requested_at (and the old preview) until a worker stored a
-- preview computed after that time. The worker notes the time of the
-- request it serves when it claims the job and clears the flag only when
-- no later request came meanwhile (one that did is computed again).
--
-- Additive: binaries of schema 12 ignore the column (they answer 200 with
-- the old preview while it is recomputed, as before).

ALTER TABLE jobs
  ADD COLUMN preview_refresh_at DATETIME(3) NULL;
