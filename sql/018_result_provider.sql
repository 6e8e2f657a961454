-- 018_result_provider.sql: who runs the MX of each result row (the
-- provider id of contrib/lists/mx_providers.txt, else the registrable
-- domain of the first MX host; NULL when the domain has no MX), shown as
-- "provider" in job results and "svc_provider" in downloads.
--
-- Additive: binaries of the previous schema do not read it; rows written
-- before it have NULL.

ALTER TABLE job_emails
  ADD COLUMN provider VARCHAR(253) NULL;
