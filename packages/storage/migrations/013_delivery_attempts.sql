-- The delivery-attempt log: every callback attempt (delivered or not), for operators asking
-- "what did the receiver answer?" (admin/deliveryAttempts). One row holds the attempts recorded
-- together (a delivered batch, or one failure), as parallel arrays in attempt order, written in
-- the same statement as the delivery record (DeliveryStore.deliveredBatch / failed): a row per
-- attempt cost a quarter of the delivery throughput, a row per batch costs next to nothing.
-- Pruned by age and by count per subscription (DeliveryAttemptStore.prune). No foreign key: it
-- must not take locks on the subscription row.
CREATE TABLE delivery_attempts (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- insertion order
  subscription_id text NOT NULL,
  newest_at       bigint NOT NULL,      -- epoch ms, the start of the row's last attempt
  attempt_count   integer NOT NULL,
  event_ids       text[] NOT NULL,
  attempted_at    bigint[] NOT NULL,    -- epoch ms, when each POST started
  duration_ms     integer[] NOT NULL,
  status          integer[] NOT NULL,   -- HTTP status, NULL where none came back
  error           text[] NOT NULL,      -- NULL where delivered (2xx)
  excerpt         text[] NOT NULL       -- the start of the answer's body, at most 256 bytes; NULL when empty
);
CREATE INDEX delivery_attempts_subscription ON delivery_attempts (subscription_id, id);
