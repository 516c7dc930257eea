-- Idempotency keys (issue 21, docs/idempotency.md): the key of each keyed publish's event, written
-- in the event's block transaction and read under the chain-head lock by the seals whose batch
-- carries keys, so a repeat of a key is decided where events are sealed, across gateways and
-- crashes. `expires_at` is the event's seal time plus the retention the publish carried; a
-- block that consumes a keyed record deletes the group's keys expired at its seal time, so
-- the table is a function of the blocks and a rebuild from Kafka makes it again exactly.
CREATE TABLE idempotency_keys (
  group_id     text NOT NULL,
  key          text NOT NULL,
  content_hash text NOT NULL,   -- sha256 of topic, content and extensions (publishContentHash)
  event_id     text NOT NULL,
  sealed_at    bigint NOT NULL, -- epoch ms, the block's seal time
  expires_at   bigint NOT NULL, -- epoch ms
  PRIMARY KEY (group_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (group_id, expires_at);
