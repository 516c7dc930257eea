-- Issue 23, item 2: settings per subscription, set by its owner (admin/subscriptionSettings, or
-- beside subscribe's parameters). A column left NULL takes the deployment's value (RETRY_*,
-- DELIVERY_WINDOW, WEBHOOK_SECRETS; no rate limit). A table of its own, not columns of
-- `subscriptions`: changing a setting is no transition of the subscription's delivery state, and
-- no statement here may take the subscription row's lock (the delivery slices hold it briefly
-- per record). No foreign key for the same reason, as for subscription_resends; the row is kept
-- when the subscription ends, so a resume keeps its settings.
CREATE TABLE subscription_settings (
  subscription_id     text PRIMARY KEY,
  paused              boolean NOT NULL DEFAULT false,
  paused_at           bigint,                 -- epoch ms; NULL while not paused
  max_rate            double precision,       -- callbacks per second
  retry_max_attempts  integer,
  retry_base_ms       integer,
  retry_max_ms        integer,
  delivery_window     integer,
  -- Signing secrets (`whsec_<base64>`), kept as WEBHOOK_SECRETS is: the key itself (HMAC needs
  -- it), never logged, never answered again after the operation that made it.
  secret              text,
  previous_secret     text,
  previous_until      bigint,                 -- epoch ms: the previous secret signs too until then
  updated_at          bigint NOT NULL
);
