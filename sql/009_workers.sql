-- 009_workers.sql: what "svcadm status" reads about the workers of every
-- host. Each svc-worker process (a daemon, or one --once run from cron)
-- keeps a row under its lease owner name ("host:pid") and refreshes seen_at
-- as it works, idle or not; housekeeping deletes rows not seen for a day.
-- job_chunks.done_by keeps the owner that finished a chunk (the lease
-- owner is cleared then), so one can tell which worker did which part of a
-- job.
--
-- Additive: binaries of schema 8 run unchanged on it (they neither write
-- heartbeats nor done_by), which is what a rolling upgrade needs.

CREATE TABLE worker_heartbeats (
  owner       VARCHAR(100) NOT NULL PRIMARY KEY,
  host        VARCHAR(64) NOT NULL,
  pid         BIGINT NOT NULL,
  mode        ENUM('daemon','once') NOT NULL,
  version     VARCHAR(32) NOT NULL,
  started_at  DATETIME(3) NOT NULL,
  seen_at     DATETIME(3) NOT NULL,
  KEY worker_heartbeats_seen (seen_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

ALTER TABLE job_chunks
  ADD COLUMN done_by VARCHAR(100) NULL;
