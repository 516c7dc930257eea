-- Callback subscriptions and their delivery state. The ledger (events) is the source of truth;
-- these tables only say who wants which events and how far delivery has come, so that a crash
-- of any process loses no event (see docs/delivery.md).

CREATE SEQUENCE subscription_revisions;

CREATE TABLE subscriptions (
  id              text PRIMARY KEY,             -- canonical lower-case UUID
  group_id        text NOT NULL,
  topic           text NOT NULL,                -- a topic name or a +/# pattern
  match_rule      text NOT NULL,                -- 'M' | 'E': whether com/# also matches com
  body_variant    text NOT NULL,                -- 'M' | 'E': E callbacks carry no extensions key
  url             text NOT NULL,
  node_instance   text NOT NULL,                -- ip:port of the broker instance that owns it
  remote_ip       text NOT NULL,
  interface_type  text NOT NULL DEFAULT 'restful',
  created_at      bigint NOT NULL,              -- epoch ms
  active          boolean NOT NULL,             -- false after unSubscribe (kept so that a continuation resumes)
  -- Bumped (under the group's dispatch lock) whenever the dispatcher's view of the subscription
  -- changes, so that dispatchers reload only what changed, in commit order.
  revision        bigint NOT NULL,
  start_height    bigint NOT NULL,              -- the dispatcher matches events of blocks above this height
  delivered_height bigint NOT NULL,             -- cursor: the last delivered event (height, idx)
  delivered_idx   integer NOT NULL,
  delivered_count bigint NOT NULL DEFAULT 0,
  pending_count   bigint NOT NULL DEFAULT 0,    -- rows in subscription_backlog
  notified_at     bigint,                       -- epoch ms of the last successful delivery
  attempts        integer NOT NULL DEFAULT 0,   -- failed attempts of the backlog's head event
  next_attempt_at bigint NOT NULL DEFAULT 0,    -- epoch ms before which the head is not retried
  last_error      text,
  dead_at         bigint,                       -- set: head dead-lettered, delivery suspended until replay
  stats_rev       bigint NOT NULL DEFAULT 0     -- orders the counter copies written to Redis
);
CREATE INDEX subscriptions_revision ON subscriptions (group_id, revision);
CREATE INDEX subscriptions_owner ON subscriptions (node_instance, group_id) WHERE active;
CREATE INDEX subscriptions_dead ON subscriptions (dead_at) WHERE dead_at IS NOT NULL;

-- Matched, not yet delivered events per subscription, drained in (height, idx) order = publish
-- order within a group.
CREATE TABLE subscription_backlog (
  subscription_id text NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  height          bigint NOT NULL,
  idx             integer NOT NULL,
  PRIMARY KEY (subscription_id, height, idx)
);

-- Per group: every block at or below `height` has been matched into the backlogs. The row lock
-- serialises dispatchers with each other and with subscription changes.
CREATE TABLE dispatch_cursors (
  group_id text PRIMARY KEY,
  height   bigint NOT NULL
);
