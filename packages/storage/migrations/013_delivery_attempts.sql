-- The delivery-attempt log: one row per callback attempt (delivered or not), for operators
-- asking "what did the receiver answer?" (admin/deliveryAttempts). Written in batches with the
-- delivery records (DeliveryStore.deliveredBatch / failed), pruned by age and by count per
-- subscription (DeliveryAttemptStore.prune). No foreign key: the log outlives nothing it
-- describes (subscriptions are never deleted) and must not take locks on the subscription row.
CREATE TABLE delivery_attempts (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- insertion order
  subscription_id text NOT NULL,
  event_id        text NOT NULL,
  attempted_at    bigint NOT NULL,      -- epoch ms, when the POST started
  duration_ms     integer NOT NULL,
  status          integer,              -- HTTP status, NULL when none came back
  error           text,                 -- NULL when delivered (2xx)
  excerpt         text                  -- the start of the answer's body, at most 256 bytes
);
CREATE INDEX delivery_attempts_subscription ON delivery_attempts (subscription_id, id);

