-- Each block's place in the log: its epoch and the (partition, from, to) ranges of log records it
-- consumed, so that its chain record (the per-group Kafka chain topic, docs/ledger.md) can be
-- written again from the ledger. chain_written is set once that record is in Kafka; blocks sealed
-- before this migration have no ranges and get no chain record.
ALTER TABLE blocks
  ADD COLUMN epoch integer,
  ADD COLUMN log_ranges json,
  ADD COLUMN chain_written boolean NOT NULL DEFAULT true;
ALTER TABLE blocks ALTER COLUMN chain_written SET DEFAULT false;
CREATE INDEX blocks_chain_unwritten ON blocks (group_id, height) WHERE NOT chain_written;
