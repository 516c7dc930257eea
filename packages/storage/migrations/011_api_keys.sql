-- API keys (docs/security.md). Only the SHA-256 of a key's secret part is stored; the key itself
-- is printed once when it is created and cannot be read back. A revoked key keeps its row, so
-- `npm run keys -- list` still shows what it was.
CREATE TABLE api_keys (
  id            text PRIMARY KEY,          -- the public part of the key, 12 hex digits
  name          text NOT NULL,
  secret_sha256 bytea NOT NULL,
  roles         text[] NOT NULL,           -- publish, subscribe, read, admin
  groups        text[] NOT NULL,           -- group ids, or '*' for every group
  publish_rate  double precision,          -- publishes per second refilled into the bucket; NULL = unlimited
  publish_burst integer,                   -- bucket size (publishes at once)
  created_at    bigint NOT NULL,           -- epoch ms
  revoked_at    bigint                     -- epoch ms; set = refused
);
