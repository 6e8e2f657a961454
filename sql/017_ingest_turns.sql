-- 017_ingest_turns.sql: when each account last had an upload job claimed
-- (ingestion, preview or preview refresh), so that svc-worker's ingestion
-- threads take upload jobs round robin across accounts: the job of the
-- account whose turn was longest ago goes first (an account never served
-- before first of all), then, within an account, the job waiting longest.
-- One row per account that ever uploaded, written by the claim.
--
-- Additive: binaries of the previous schema do not read it (they take
-- upload jobs oldest first, as before).

CREATE TABLE ingest_turns (
  account_id  VARCHAR(40) NOT NULL PRIMARY KEY,
  turn_at     DATETIME(3) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
