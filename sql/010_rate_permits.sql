-- 010_rate_permits.sql: rate-limit permits leased in batches. A host (the
-- svc-api master and its responders, src/core/permits.c) asks for several
-- permits of a bucket in one round trip and hands them out from shared
-- memory; ratelimit_lease takes the place of ratelimit_count (a request
-- counted on its own is a lease of one permit that nobody holds).
--
-- Additive: ratelimit_count stays, so that binaries of schema 9 keep
-- counting during a rolling upgrade (leases are in rate_counts like their
-- requests, so both see one window; the old binaries count by their own
-- clocks, as they always did). A later migration may drop it.
--
-- A lease of k permits is counted in rate_counts at the second it is
-- granted, by the database's clock, as if k requests had been made then;
-- the host may use its permits only until that second ends, and gives the
-- unused ones back later (the count goes down). So rate_counts is, at any
-- time, at least what was used in each second, and a lease is granted only
-- while the window holds fewer than the limit: the argument for exactness
-- is in src/core/permits.c.
--
-- rate_leases remembers each lease until its unused permits are given
-- back, so that a give-back counts once however often it is sent, and a
-- lease whose caller died before it could use it is taken back whole, or
-- refused if it arrives after that (a row with permits = 0 stays as the
-- mark). Rows older than the window are purged with the counters.

CREATE TABLE rate_leases (
  bucket   VARCHAR(80) NOT NULL,
  holder   VARCHAR(64) NOT NULL,
  seq      BIGINT NOT NULL,
  sec      BIGINT NOT NULL,
  permits  INT NOT NULL,
  PRIMARY KEY (bucket, holder, seq),
  KEY rate_leases_sec (sec)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;

-- ratelimit_lease: under the bucket row's lock, in one transaction:
--  1. the holder's lease p_ret_seq (if any) gives back p_ret_unused
--     permits and is forgotten;
--  2. with p_void_seq > 0, the holder's leases up to that seq, granted to
--     round trips that never came back (the caller died or lost its
--     connection) and so never used, give back all their permits, and a
--     mark at that seq makes a grant of them still under way come too late
--     (a grant is refused when the holder has a row at its seq or later);
--  3. the window is summed (p_window_ms, the database's clock);
--  4. if the sum is below p_limit (0: no new lease), a lease is granted:
--     as many permits as the holder is expected to use before this second
--     ends (p_rate a second, half as many again), at most p_max and at most
--     half of what is left of the limit, at least one; with p_new_seq > 0
--     (a holder's lease) it is remembered in rate_leases.
-- Result: one row (permits granted, the window's sum before the grant,
-- start of its oldest counted second in ms or NULL, the database's time in
-- ms, and when nothing was granted, the permits other holders may still
-- give back and the latest second of their leases).
DELIMITER //
CREATE PROCEDURE ratelimit_lease(
  IN p_bucket VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin,
  IN p_holder VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin,
  IN p_ret_seq BIGINT, IN p_ret_unused BIGINT, IN p_void_seq BIGINT,
  IN p_new_seq BIGINT, IN p_limit BIGINT, IN p_rate BIGINT,
  IN p_max BIGINT, IN p_window_ms BIGINT)
  MODIFIES SQL DATA
BEGIN
  DECLARE v_now, v_sec, v_since, v_lsec, v_permits BIGINT DEFAULT 0;
  DECLARE v_used, v_grant, v_others, v_others_sec BIGINT DEFAULT 0;
  DECLARE v_found BIGINT DEFAULT 0;
  DECLARE v_oldest BIGINT DEFAULT NULL;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  INSERT INTO rate_buckets (bucket) VALUES (p_bucket)
    ON DUPLICATE KEY UPDATE bucket = bucket;
  -- the clock is read once the lock is held (SYSDATE: now, not when the
  -- CALL began), so that the grants of a bucket come in the order of
  -- their seconds
  SET v_now = FLOOR(UNIX_TIMESTAMP(SYSDATE(3)) * 1000);
  SET v_sec = v_now DIV 1000;
  SET v_since = (v_now - p_window_ms) DIV 1000;
  IF p_ret_seq > 0 THEN
    SELECT COUNT(*), COALESCE(MAX(sec), 0), COALESCE(MAX(permits), 0)
      INTO v_found, v_lsec, v_permits FROM rate_leases
      WHERE bucket = p_bucket AND holder = p_holder AND seq = p_ret_seq;
    IF v_found > 0 THEN
      IF p_ret_unused > 0 AND v_permits > 0 THEN
        UPDATE rate_counts SET n = n - LEAST(p_ret_unused, v_permits)
          WHERE bucket = p_bucket AND sec = v_lsec;
        DELETE FROM rate_counts
          WHERE bucket = p_bucket AND sec = v_lsec AND n <= 0;
      END IF;
      DELETE FROM rate_leases
        WHERE bucket = p_bucket AND holder = p_holder AND seq = p_ret_seq;
    END IF;
  END IF;
  IF p_void_seq > 0 THEN
    -- at most a few rows: the grants of round trips that did not come back
    UPDATE rate_counts c JOIN (SELECT sec, SUM(permits) AS p FROM rate_leases
        WHERE bucket = p_bucket AND holder = p_holder AND seq <= p_void_seq
          AND permits > 0 GROUP BY sec) l ON l.sec = c.sec
      SET c.n = c.n - l.p WHERE c.bucket = p_bucket;
    DELETE FROM rate_counts WHERE bucket = p_bucket AND n <= 0;
    UPDATE rate_leases SET permits = 0
      WHERE bucket = p_bucket AND holder = p_holder AND seq <= p_void_seq
        AND permits > 0;
    INSERT INTO rate_leases (bucket, holder, seq, sec, permits)
      VALUES (p_bucket, p_holder, p_void_seq, v_sec, 0)
      ON DUPLICATE KEY UPDATE permits = 0;
  END IF;
  SELECT COALESCE(SUM(n), 0), MIN(sec) INTO v_used, v_oldest
    FROM rate_counts WHERE bucket = p_bucket AND sec > v_since;
  IF p_limit > 0 AND v_used < p_limit THEN
    SET v_found = 0;
    IF p_new_seq > 0 THEN
      -- a later seq of the holder is known: this call comes too late
      SELECT COUNT(*) INTO v_found FROM rate_leases
        WHERE bucket = p_bucket AND holder = p_holder AND seq >= p_new_seq;
    END IF;
    IF v_found = 0 THEN
      SET v_grant = 1 + (GREATEST(p_rate, 0) * (1000 - v_now MOD 1000) * 3)
        DIV 2000;
      SET v_grant = LEAST(v_grant, GREATEST(p_max, 1),
        GREATEST(1, (p_limit - v_used) DIV 2));
      INSERT INTO rate_counts (bucket, sec, n) VALUES (p_bucket, v_sec, v_grant)
        ON DUPLICATE KEY UPDATE n = n + v_grant;
      IF p_new_seq > 0 THEN
        INSERT INTO rate_leases (bucket, holder, seq, sec, permits)
          VALUES (p_bucket, p_holder, p_new_seq, v_sec, v_grant);
      END IF;
    END IF;
  END IF;
  IF v_grant = 0 AND p_limit > 0 THEN
    SELECT COALESCE(SUM(permits - 1), 0), COALESCE(MAX(sec), 0)
      INTO v_others, v_others_sec FROM rate_leases
      WHERE bucket = p_bucket AND holder <> p_holder AND permits > 1
        AND sec >= v_sec - 1;
  END IF;
  COMMIT;
  SELECT v_grant, v_used, v_oldest * 1000, v_now, v_others, v_others_sec;
END//
DELIMITER ;
