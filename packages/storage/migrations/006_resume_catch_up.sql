-- Resuming an unsubscribed subscription refills its backlog with the events published while it
-- was away. That used to happen inside subscribe, under the group's dispatch lock, for as many
-- events as were missed. Now subscribe only records what is to be refilled: the events after
-- catchup_(height, idx) up to catchup_to_(height, idx) (the dispatch position at resume time;
-- the dispatcher covers everything after it). The subscription's delivery job refills it in
-- bounded pages, outside that lock, before delivering anything (so order holds).
-- catchup_to_height NULL: nothing to refill. catchup_seq: for a plain topic, the topic sequence
-- number at catchup_(height, idx), so pages walk the (group_id, topic, seq) index.
ALTER TABLE subscriptions
  ADD COLUMN catchup_height bigint,
  ADD COLUMN catchup_idx integer,
  ADD COLUMN catchup_seq bigint,
  ADD COLUMN catchup_to_height bigint,
  ADD COLUMN catchup_to_idx integer;
