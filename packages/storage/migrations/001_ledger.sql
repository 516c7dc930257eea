-- The ledger: per group, a gapless hash-chained block sequence; topics; events (one
-- transaction each); and the Kafka positions already indexed, so that a redelivered record
-- is never indexed twice.

CREATE TABLE chain_heads (
  group_id   text PRIMARY KEY,
  height     bigint NOT NULL,
  hash       text NOT NULL
);

CREATE TABLE blocks (
  group_id     text NOT NULL,
  height       bigint NOT NULL,
  hash         text NOT NULL,
  prev_hash    text NOT NULL,
  sealed_at    bigint NOT NULL,            -- epoch ms
  tx_count     integer NOT NULL,
  sealer       text NOT NULL,              -- "0x<index>" of the indexer that sealed it
  sealer_index integer NOT NULL,
  PRIMARY KEY (group_id, height)
);
CREATE UNIQUE INDEX blocks_hash ON blocks (group_id, hash);

CREATE TABLE topics (
  group_id       text NOT NULL,
  name           text NOT NULL,
  address        text NOT NULL,
  creator        text NOT NULL,
  created_at     bigint NOT NULL,          -- epoch ms
  seq            bigint NOT NULL DEFAULT 0,
  last_block     bigint NOT NULL DEFAULT 0,
  last_timestamp bigint NOT NULL DEFAULT 0,
  ordinal        bigserial NOT NULL,       -- creation order for list paging
  PRIMARY KEY (group_id, name)
);
CREATE INDEX topics_order ON topics (group_id, ordinal);

CREATE TABLE events (
  group_id        text NOT NULL,
  height          bigint NOT NULL,
  idx             integer NOT NULL,        -- position inside the block
  event_id        text NOT NULL,
  topic           text NOT NULL,
  seq             bigint NOT NULL,
  content         bytea NOT NULL,
  extensions      json NOT NULL,           -- json, not jsonb: keeps any string, \u0000 included
  sender          text NOT NULL,
  tx_hash         text NOT NULL,
  to_address      text NOT NULL,
  ts              bigint NOT NULL,         -- epoch ms (the block's seal time)
  kafka_partition integer NOT NULL,
  kafka_offset    bigint NOT NULL,
  PRIMARY KEY (group_id, height, idx),
  FOREIGN KEY (group_id, height) REFERENCES blocks (group_id, height)
);
CREATE UNIQUE INDEX events_event_id ON events (group_id, event_id);
CREATE UNIQUE INDEX events_kafka_position ON events (group_id, kafka_partition, kafka_offset);
CREATE INDEX events_topic_seq ON events (group_id, topic, seq);

-- Next Kafka offset to index per (group, partition). Read and advanced under the chain-head lock.
CREATE TABLE indexed_offsets (
  group_id    text NOT NULL,
  partition   integer NOT NULL,
  next_offset bigint NOT NULL,
  PRIMARY KEY (group_id, partition)
);
