-- 012_credits_needed.sql: what an upload's confirmation charges. Cells of
-- an upload's email column that are not shaped like an address are kept as
-- rows (verified invalid_syntax) but cost nothing (spec, credit rule 2), so
-- the job's charge is no longer its row count: ingestion writes the number
-- of its charged rows here, confirmation charges it, and the preview shows
-- it as credits_needed. Jobs ingested before this migration charged every
-- row.

ALTER TABLE jobs
  ADD COLUMN credits_needed INT NOT NULL DEFAULT 0;

UPDATE jobs SET credits_needed = total_emails;
