-- 023_verdict_cache_hashed.sql: the shared verdict cache keyed by the keyed
-- hash of the normalised address (BLAKE2b, 32 hex digits, cachekey.h) in
-- place of the address. Rows cached before hold addresses in clear: they
-- are deleted (the next verification of each address is a miss).

DELETE FROM verdict_cache;
ALTER TABLE verdict_cache
  CHANGE address address_hash CHAR(32) CHARACTER SET ascii COLLATE ascii_bin
    NOT NULL;
