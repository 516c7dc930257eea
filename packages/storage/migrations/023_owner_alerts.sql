-- Issue 23, item 3: alerts to the owner. A subscription's owner may set an alert URL
-- (admin/subscriptionSettings?alertUrl=…); the notifiers POST signed operational callbacks to it
-- when the subscription starts failing, is suspended and recovers (docs/delivery.md, "Alerts to
-- the owner").
ALTER TABLE subscription_settings ADD COLUMN alert_url text;

-- Which alert a subscription last raised, so that each fires once per transition and not once
-- per failed attempt: no row means "ok" (the usual case, so a delivered batch only probes the
-- primary key). Written in the same statement or transaction as the subscription row's
-- `failed`, `dead` and `delivered` transitions, always after that row's lock (the order every
-- writer of the row takes). No foreign key, as for delivery_attempts: it must not lock the row.
CREATE TABLE subscription_alert_state (
  subscription_id      text PRIMARY KEY,
  state                text NOT NULL CHECK (state IN ('failing', 'suspended')),
  consecutive_failures integer NOT NULL,
  last_error           text,
  since                bigint NOT NULL            -- epoch ms: when this state began
);

-- The outbox: an alert is stored here in the transaction that changes the state, then sent by any
-- notifier's AlertSender with retries and backoff (at least once; `webhook-id` is the same on every
-- try). A row goes once the alert URL answered 2xx, or after ALERT_MAX_ATTEMPTS, or when the
-- subscription no longer has an alert URL. Only a subscription's oldest row is sent at a time, so
-- its alerts arrive in the order they happened.
CREATE TABLE owner_alerts (
  id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subscription_id      text NOT NULL,
  type                 text NOT NULL,             -- subscription.failing | subscription.suspended | subscription.recovered
  group_id             text NOT NULL,
  topic                text NOT NULL,
  consecutive_failures integer NOT NULL,
  last_error           text,
  occurred_at          bigint NOT NULL,           -- epoch ms
  attempts             integer NOT NULL DEFAULT 0,
  next_attempt_at      bigint NOT NULL DEFAULT 0  -- epoch ms; also the claim of the sender trying it
);
CREATE INDEX owner_alerts_by_subscription ON owner_alerts (subscription_id, id);
CREATE INDEX owner_alerts_due ON owner_alerts (next_attempt_at);
