-- 029_ledger_pool_day.sql: the credit ledger indexed by pool and time, for
-- a pool's usage per UTC day (GET /v1/credits?days=N, the dashboard's
-- chart: ledger_daily), which would otherwise read every row of the pool.
--
-- Additive: binaries of the previous schema do not use it.

ALTER TABLE credit_ledger ADD KEY credit_ledger_pool_day (pool_id, created_at);
