-- Issue 23: events an operator can see.
-- admin/events turns a time range into a height range through the blocks' seal times (one row
-- per block, so the index costs the indexer next to nothing); the events themselves are then read
-- by their primary key (group_id, height, idx).
CREATE INDEX blocks_sealed_at ON blocks (group_id, sealed_at, height);

-- admin/resendEvent: one event to send again to one subscription, out of order and marked as a
-- resend, by the notifier's delivery slice under the subscription's lease (DeliveryStore /
-- ResendStore). A row goes once the receiver answered 2xx, or after the retry budget. No foreign
-- key, as for delivery_attempts: it must not take locks on the subscription row.
CREATE TABLE subscription_resends (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subscription_id text NOT NULL,
  height          bigint NOT NULL,
  idx             integer NOT NULL,
  requested_at    bigint NOT NULL,         -- epoch ms
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL DEFAULT 0 -- epoch ms; 0: now
);
CREATE INDEX subscription_resends_by_subscription ON subscription_resends (subscription_id, id);
