-- A Postgres lease per subscription, taken by the delivery job at the start of each slice, with a
-- fencing token: BullMQ's lock lives in Redis, and a notifier cut off from Redis longer than the
-- lock keeps running while another one takes the job. Every delivery record and retry-state
-- update checks the token, so the stale one can neither record nor go on; and a new slice cannot
-- start while another notifier's lease is still valid. lease_until is Postgres clock time (epoch
-- ms), so notifiers with skewed clocks agree on it.
CREATE SEQUENCE delivery_lease_tokens;
ALTER TABLE subscriptions
  ADD COLUMN lease_token bigint NOT NULL DEFAULT 0,
  ADD COLUMN lease_until bigint NOT NULL DEFAULT 0;
