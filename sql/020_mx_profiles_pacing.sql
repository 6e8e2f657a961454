-- 020_mx_profiles_pacing.sql: what svc-worker learns about each mail host,
-- shared by every worker host (issue 24 items 3 and 4).
--
-- mx_profiles: one row per MX host name (lower-case A-labels), written
-- only when a worker learns something new about it (src/engine/mxprofile.c):
-- the RCPTs one session may carry (from 452 4.5.3 "too many recipients":
-- Outlook.com takes one), whether a catch-all probe was accepted, the
-- greylisting delay that got through, whether it offers STARTTLS, the rate
-- (RCPTs a minute, from one egress address) at which it first answered
-- 421 / 4.7.x "slow down", and the last block it gave. NULL: not known.
-- provider: the provider id (item 1) once it is known, else NULL.
--
-- pacing_pairs: the AIMD state of a budget per (provider or mail host,
-- egress route) (src/engine/pacing.c). Rows exist only for pairs that are
-- paced: a shipped default matched, or the host said "slow down" once.
-- The rate now is a function of these columns and the database's clock
-- (every worker computes the same, nothing is written while it creeps):
-- before the first 421 it doubles every window from start_rate; after it,
-- it grows from base_rate by a quarter of it a window up to three
-- quarters of learned_rate. The RCPTs themselves are counted with
-- rate_counts / ratelimit_lease (010) under the bucket "pace:<hash>".
-- penalty_until: nobody sends to the pair before (no RCPT, no connect);
-- paused_until: a block, reason says which reply.
--
-- Additive: binaries of the previous schema do not read them.

CREATE TABLE mx_profiles (
  host               VARCHAR(255) NOT NULL,
  provider           VARCHAR(64) NULL,
  rcpts_per_session  INT NULL,
  accept_all         TINYINT NULL,
  greylist_delay_s   INT NULL,
  starttls           TINYINT NULL,
  rate_421           INT NULL,
  rate_421_at        DATETIME(3) NULL,
  last_block_at      DATETIME(3) NULL,
  last_block         VARCHAR(255) CHARACTER SET utf8mb4 NULL,
  updated_at         DATETIME(3) NOT NULL,
  PRIMARY KEY (host)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_general_ci;

CREATE TABLE pacing_pairs (
  pair           VARCHAR(255) NOT NULL,
  egress         VARCHAR(128) NOT NULL,
  start_rate     INT NOT NULL,
  base_rate      INT NOT NULL,
  learned_rate   INT NULL,
  since          DATETIME(3) NOT NULL,
  penalty_until  DATETIME(3) NULL,
  paused_until   DATETIME(3) NULL,
  strikes        INT NOT NULL DEFAULT 0,
  reason         VARCHAR(255) CHARACTER SET utf8mb4 NULL,
  updated_at     DATETIME(3) NOT NULL,
  PRIMARY KEY (pair, egress)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_general_ci;
