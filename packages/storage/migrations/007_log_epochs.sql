-- Log identity. Kafka offsets mean something only within one log: the log topic of a group on
-- one Kafka cluster. Each log a group's ledger has indexed is an epoch, named by the cluster id
-- and the topic id Kafka gave the topic when it was created. Positions (indexed_offsets) and
-- events' Kafka positions are per epoch, so a new log (a fresh cluster, a deleted .cache) is
-- recognised instead of having its records skipped as "already indexed"; heights and topic
-- sequence numbers are the ledger's and simply continue across epochs.
--
-- A ledger from before this migration gets epoch 0 with an unknown identity; the first log
-- that fits its positions claims it (see docs/ledger.md).

CREATE TABLE log_epochs (
  group_id    text NOT NULL,
  epoch       integer NOT NULL,
  cluster_id  text,                 -- NULL until claimed (epoch 0 of a ledger older than this)
  topic_id    text,
  base_height bigint NOT NULL,      -- the chain head when the epoch was adopted
  base_hash   text NOT NULL,
  adopted_at  bigint NOT NULL,      -- epoch ms
  retired_at  bigint,               -- set by an operator: this log is never continued again
  PRIMARY KEY (group_id, epoch)
);
CREATE UNIQUE INDEX log_epochs_identity ON log_epochs (group_id, cluster_id, topic_id) WHERE retired_at IS NULL;

INSERT INTO log_epochs (group_id, epoch, base_height, base_hash, adopted_at)
SELECT DISTINCT group_id, 0, 0, '0x0000000000000000000000000000000000000000000000000000000000000000', 0 FROM indexed_offsets;

ALTER TABLE indexed_offsets ADD COLUMN epoch integer NOT NULL DEFAULT 0;
ALTER TABLE indexed_offsets DROP CONSTRAINT indexed_offsets_pkey;
ALTER TABLE indexed_offsets ADD PRIMARY KEY (group_id, epoch, partition);
ALTER TABLE indexed_offsets ALTER COLUMN epoch DROP DEFAULT;

ALTER TABLE events ADD COLUMN epoch integer NOT NULL DEFAULT 0;
ALTER TABLE events ALTER COLUMN epoch DROP DEFAULT;
DROP INDEX events_kafka_position;
CREATE UNIQUE INDEX events_kafka_position ON events (group_id, epoch, kafka_partition, kafka_offset);
