-- 021_egress_down.sql: egress routes marked down (issue 24, dead-proxy
-- memory). A socks5:// route of smtp_egress whose proxy refused the
-- connection, closed it or failed the SOCKS5 exchange is marked down by
-- the svc-worker that saw it, for a back-off that doubles with each
-- failure in a row (src/engine/egress_down.c: 30 s, 60 s, ... 10 min at
-- most); every worker host reads the table each second and opens no
-- session by that route until down_until passes (while another route is
-- up). The first session after it is the health check: when it gets
-- through the proxy the row is deleted, when it fails the back-off grows.
-- route: the route's name as logged (never the password).
--
-- Additive: binaries of the previous schema do not read it.

CREATE TABLE egress_down (
  route       VARCHAR(340) NOT NULL,
  down_until  DATETIME(3) NOT NULL,
  failures    INT NOT NULL,
  reason      VARCHAR(255) NULL,
  updated_at  DATETIME(3) NOT NULL,
  PRIMARY KEY (route)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
