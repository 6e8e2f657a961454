-- 026_web_sessions.sql: the dashboard's sign-in (issue 27). An account's
-- password (libsodium Argon2id string, crypto_pwhash_str; NULL: none set,
-- sign-in refused) and the browser sessions signed in with it. A session
-- id is random and stored as its SHA-256 only; csrf_token is the value a
-- state-changing request made with the session's cookie must carry in
-- X-CSRF-Token. A session ends at sign-out (row deleted), after
-- session_idle_seconds without a request, or session_max_seconds after it
-- began.
--
-- Additive: binaries of the previous schema do not read these.

ALTER TABLE accounts ADD COLUMN password_hash VARCHAR(255) NULL;

CREATE TABLE web_sessions (
  id_hash       BINARY(32) NOT NULL PRIMARY KEY,
  account_id    VARCHAR(40) NOT NULL,
  csrf_token    CHAR(43) NOT NULL,
  created_at    DATETIME(3) NOT NULL,
  last_seen_at  DATETIME(3) NOT NULL,
  KEY web_sessions_account (account_id),
  CONSTRAINT web_sessions_account FOREIGN KEY (account_id)
    REFERENCES accounts (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One-time invitations to set an account's password (svcadm account
-- invite): the token is in the link's fragment, stored as its SHA-256; it
-- works once (used_at) and until expires_at.
CREATE TABLE web_invites (
  token_hash    BINARY(32) NOT NULL PRIMARY KEY,
  account_id    VARCHAR(40) NOT NULL,
  created_at    DATETIME(3) NOT NULL,
  expires_at    DATETIME(3) NOT NULL,
  used_at       DATETIME(3) NULL,
  KEY web_invites_account (account_id),
  CONSTRAINT web_invites_account FOREIGN KEY (account_id)
    REFERENCES accounts (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
