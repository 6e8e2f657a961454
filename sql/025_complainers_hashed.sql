-- 025_complainers_hashed.sql: the known-complainer list kept as keyed
-- hashes of the normalised addresses (addr_hash, 32 hex digits, under
-- feedback_hash_key, as account_complainers). Rows in clear are hashed by
-- "svcadm db migrate" right after this file (the key is only known in C),
-- in one transaction; until then they are not found.

ALTER TABLE complainers
  DROP PRIMARY KEY,
  ADD COLUMN id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY FIRST,
  ADD COLUMN addr_hash CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NULL
    AFTER id,
  MODIFY address VARCHAR(254) NULL,
  ADD UNIQUE KEY complainers_hash (addr_hash);
