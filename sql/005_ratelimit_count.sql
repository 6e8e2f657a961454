-- 005_ratelimit_count.sql: counting a request against its bucket's window
-- in one round trip. ratelimit_count runs, in the server, the transaction
-- src/core/ratelimit.c used to send statement by statement (START
-- TRANSACTION, lock the bucket row, sum its window, add one to the current
-- second's counter when the sum is below the limit, COMMIT): one CALL
-- instead of five round trips. The bucket row's lock still makes concurrent
-- callers on any host take turns, so the limit+1st request is never let
-- through. An error (deadlock, lock wait timeout) rolls the transaction
-- back and reaches the caller unchanged, which tries again.
-- Result: one row (used before this request, start of the oldest counted
-- second in ms or NULL, 1 when this request was counted).

DELIMITER //
CREATE PROCEDURE ratelimit_count(
  IN p_bucket VARCHAR(80) CHARACTER SET ascii COLLATE ascii_bin,
  IN p_limit BIGINT, IN p_now_sec BIGINT, IN p_since_sec BIGINT)
  MODIFIES SQL DATA
BEGIN
  DECLARE v_used BIGINT;
  DECLARE v_oldest BIGINT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  INSERT INTO rate_buckets (bucket) VALUES (p_bucket)
    ON DUPLICATE KEY UPDATE bucket = bucket;
  SELECT COALESCE(SUM(n), 0), MIN(sec) INTO v_used, v_oldest
    FROM rate_counts WHERE bucket = p_bucket AND sec > p_since_sec;
  IF v_used < p_limit THEN
    INSERT INTO rate_counts (bucket, sec, n) VALUES (p_bucket, p_now_sec, 1)
      ON DUPLICATE KEY UPDATE n = n + 1;
  END IF;
  COMMIT;
  SELECT v_used, v_oldest * 1000, v_used < p_limit;
END//
DELIMITER ;
