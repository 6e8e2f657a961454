-- 002_verification.sql: caches of the verification engine (verdicts per
-- address, MX answers per domain, domain facts such as catch-all) and the
-- known-complainer list. Cache rows carry their own expiry; svc-worker's
-- housekeeping deletes expired rows.

CREATE TABLE verdict_cache (
  address     VARCHAR(254) NOT NULL PRIMARY KEY,
  result      MEDIUMTEXT NOT NULL,
  expires_at  DATETIME(3) NOT NULL,
  KEY verdict_cache_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE dns_cache (
  domain      VARCHAR(253) NOT NULL PRIMARY KEY,
  result      MEDIUMTEXT NOT NULL,
  expires_at  DATETIME(3) NOT NULL,
  KEY dns_cache_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;

CREATE TABLE domain_facts (
  domain        VARCHAR(253) NOT NULL PRIMARY KEY,
  accept_all    TINYINT NULL,
  web_presence  TINYINT NULL,
  expires_at    DATETIME(3) NOT NULL,
  KEY domain_facts_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;

CREATE TABLE complainers (
  address   VARCHAR(254) NOT NULL PRIMARY KEY,
  source    VARCHAR(200) NOT NULL DEFAULT '',
  added_at  DATETIME(3) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
