-- Every ending of a subscription: who owned it, who ended it and when. The columns
-- unsubscribed_by/unsubscribed_at on subscriptions keep the latest ending (no longer erased when
-- the owner takes the id again); this table keeps all of them, since without keys anyone may end
-- any id (docs/security.md, "Subscription ownership").
CREATE TABLE subscription_endings (
  subscription_id text NOT NULL,
  owner text NOT NULL,
  ended_by text NOT NULL,   -- address or key:<id>
  ended_at bigint NOT NULL  -- epoch ms
);
CREATE INDEX subscription_endings_by_id ON subscription_endings (subscription_id, ended_at);
