-- 004_rate_counts.sql: the rate-limit window as per-second counters. The
-- window is still 60 seconds sliding by the second, but counting it reads
-- at most 60 rows per bucket whatever the limit, where one row per request
-- (rate_hits) made a busy account's every request slower.

CREATE TABLE rate_counts (
  bucket  VARCHAR(80) NOT NULL,
  sec     BIGINT NOT NULL,
  n       INT NOT NULL,
  PRIMARY KEY (bucket, sec),
  KEY rate_counts_sec (sec)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;

DROP TABLE rate_hits;
