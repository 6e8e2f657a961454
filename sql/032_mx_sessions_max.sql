-- 032_mx_sessions_max.sql: the sessions at once a mail host takes
-- (issue 24 item 3), learned by svc-worker's window of sessions per host.
--
-- mx_profiles.sessions_max: the most SMTP sessions at once (from one
-- worker) the host answered before it refused one more at the greeting
-- ("421 too many connections"; of two learned within a day the lower);
-- sessions_max_at: when that was last learned. A worker that meets the
-- host starts its window no wider and grows it no further than that,
-- while sessions_max_at is less than a day old (after that the host gets
-- the whole window again and the cap is learned anew). NULL: not known.
--
-- Additive: binaries of the previous schema do not read them.

ALTER TABLE mx_profiles
  ADD COLUMN sessions_max INT NULL,
  ADD COLUMN sessions_max_at DATETIME(3) NULL;
