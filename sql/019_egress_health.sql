-- 019_egress_health.sql: how the SMTP sessions of each egress route
-- (smtp_egress: "direct", "bind:...", "socks5://user@host:port", never a
-- password) fared, per UTC hour, summed over every svc-worker: sessions
-- started, those that got a connection to an MX, those whose every
-- connect was refused or timed out. "svcadm status" and "svcadm doctor"
-- read it to say when outbound port 25 looks blocked.
--
-- Additive: binaries of the previous schema do not read it.

CREATE TABLE egress_health (
  route       VARCHAR(340) NOT NULL,
  hour        DATETIME NOT NULL,
  sessions    BIGINT NOT NULL DEFAULT 0,
  connected   BIGINT NOT NULL DEFAULT 0,
  refused     BIGINT NOT NULL DEFAULT 0,
  timed_out   BIGINT NOT NULL DEFAULT 0,
  updated_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (route, hour)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
