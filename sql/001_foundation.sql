-- 001_foundation.sql: accounts, organizations, keys, credit ledger, rate-limit
-- window and idempotency store. All times are UTC (the connection sets
-- time_zone = '+00:00').

-- svcadm db migrate makes this table first (src/admin/migrate.c: its lock
-- row needs it before this file runs), hence IF NOT EXISTS
CREATE TABLE IF NOT EXISTS schema_version (
  version     INT NOT NULL PRIMARY KEY,
  applied_at  DATETIME(3) NOT NULL
) ENGINE=InnoDB;

CREATE TABLE organizations (
  id              VARCHAR(40) NOT NULL PRIMARY KEY,
  name            VARCHAR(200) NOT NULL,
  api_rate_limit  INT NULL,
  created_at      DATETIME(3) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE accounts (
  id                   VARCHAR(40) NOT NULL PRIMARY KEY,
  email                VARCHAR(254) NOT NULL,
  tier                 ENUM('free','trial','pro','admin') NOT NULL,
  subscription_type    VARCHAR(40) NOT NULL,
  subscription_active  TINYINT NOT NULL DEFAULT 1,
  org_id               VARCHAR(40) NULL,
  created_at           DATETIME(3) NOT NULL,
  UNIQUE KEY accounts_email (email),
  CONSTRAINT accounts_org FOREIGN KEY (org_id) REFERENCES organizations (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One pool per account and one per organization. balance, used and refunded
-- are running totals kept in the same transaction as each ledger row, so
-- they always equal the sums over credit_ledger (svcadm credits check).
CREATE TABLE credit_pools (
  owner_id   VARCHAR(40) NOT NULL PRIMARY KEY,
  balance    BIGINT NOT NULL DEFAULT 0,
  used       BIGINT NOT NULL DEFAULT 0,
  refunded   BIGINT NOT NULL DEFAULT 0,
  granted    BIGINT NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Append-only: rows are never updated or deleted. ref makes a charge or a
-- refund happen at most once ("job:<id>:charge", "job:<id>:refund:unknown").
CREATE TABLE credit_ledger (
  id          BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  pool_id     VARCHAR(40) NOT NULL,
  account_id  VARCHAR(40) NULL,
  kind        ENUM('grant','charge','refund') NOT NULL,
  amount      BIGINT NOT NULL,
  ref         VARCHAR(160) NULL,
  note        VARCHAR(255) NULL,
  created_at  DATETIME(3) NOT NULL,
  UNIQUE KEY credit_ledger_ref (ref),
  KEY credit_ledger_pool (pool_id, id),
  CONSTRAINT credit_ledger_amount CHECK (amount > 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE api_keys (
  id            VARCHAR(40) NOT NULL PRIMARY KEY,
  account_id    VARCHAR(40) NOT NULL,
  org_id        VARCHAR(40) NULL,
  name          VARCHAR(200) NOT NULL DEFAULT '',
  key_hash      BINARY(32) NOT NULL,
  key_hint      VARCHAR(32) NOT NULL,
  scopes        VARCHAR(255) NOT NULL,
  sandbox       TINYINT NOT NULL DEFAULT 0,
  rate_limit    INT NULL,
  ip_allowlist  VARCHAR(4000) NOT NULL DEFAULT '',
  expires_at    DATETIME(3) NULL,
  revoked_at    DATETIME(3) NULL,
  created_at    DATETIME(3) NOT NULL,
  UNIQUE KEY api_keys_hash (key_hash),
  KEY api_keys_account (account_id, created_at),
  CONSTRAINT api_keys_account_fk FOREIGN KEY (account_id) REFERENCES accounts (id),
  CONSTRAINT api_keys_org_fk FOREIGN KEY (org_id) REFERENCES organizations (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Sliding 60-second window: one row per counted request. The bucket row is
-- locked while a request is counted, so concurrent responders on any number
-- of hosts never let more than the limit through.
CREATE TABLE rate_buckets (
  bucket  VARCHAR(80) NOT NULL PRIMARY KEY
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;

CREATE TABLE rate_hits (
  id      BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  bucket  VARCHAR(80) NOT NULL,
  at_ms   BIGINT NOT NULL,
  KEY rate_hits_bucket_at (bucket, at_ms),
  KEY rate_hits_at (at_ms)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;

CREATE TABLE idempotency_keys (
  account_id    VARCHAR(40) NOT NULL,
  idem_key      VARCHAR(255) NOT NULL,
  request_hash  BINARY(32) NOT NULL,
  state         ENUM('running','done') NOT NULL,
  status        INT NULL,
  body          MEDIUMBLOB NULL,
  created_at    DATETIME(3) NOT NULL,
  PRIMARY KEY (account_id, idem_key),
  KEY idempotency_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
