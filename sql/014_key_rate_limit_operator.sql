-- 014_key_rate_limit_operator.sql: who set a key's rate_limit. A limit
-- the customer set (POST /v1/keys) never goes above what the key would
-- have without one, and that is checked again at every use (auth.c's
-- auth_key_rate_limit), so a key made on a higher tier, or for an
-- organization with a higher api_rate_limit, does not keep its limit
-- after a downgrade. A limit the operator set (svcadm key create
-- --rate-limit, svcadm key set --rate-limit) is used as it is, above the
-- tier too.
--
-- Existing keys are marked as the customer's: an operator's lift made
-- before this migration is clamped until it is set again with svcadm key
-- set (NEWS says so).
ALTER TABLE api_keys
  ADD COLUMN rate_limit_operator TINYINT(1) NOT NULL DEFAULT 0 AFTER rate_limit;
