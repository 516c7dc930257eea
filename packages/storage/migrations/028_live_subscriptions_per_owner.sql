-- Each subscribe checked MAX_SUBSCRIPTIONS_PER_CALLER with a count(*) of the caller's live
-- subscriptions, under the group's dispatch lock: one heap visit per live subscription (no
-- visibility map with autovacuum off), so subscribing slowed as the caller's subscriptions grew
-- (155/s falling to 106/s by 6 k; issue 29, item 7). Each owner's live count is kept here instead,
-- by triggers on every change of a row's `active` or `owner`, in the changing transaction, whoever
-- changes it (the lifecycle's statements stay the one writer of `subscriptions`). Read under the
-- owner's advisory lock, as the count was, so concurrent subscribes still cannot pass it together.
CREATE TABLE subscription_owner_live (
  owner text PRIMARY KEY,
  live  integer NOT NULL
);
INSERT INTO subscription_owner_live (owner, live) SELECT owner, count(*) FROM subscriptions WHERE active GROUP BY owner;

-- search_path FROM CURRENT: the schema the migration runs in, whoever writes. force_custom_plan:
-- planned each time, the lookups of an owner's row follow the table's size (a cached generic plan
-- made while it was small would scan every owner's row). Inserts and deletes
-- are counted per statement (one write of each owner's row however many rows the statement
-- takes: a bulk insert updating one row 20 k times in one transaction walks all its dead versions
-- each time); an update that moves a count is counted per row, so the delivery path's many
-- updates (cursor, lease, retry state), which name neither column, fire nothing.
CREATE FUNCTION subscriptions_count_inserted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  INSERT INTO subscription_owner_live (owner, live)
    SELECT owner, count(*) FROM new_rows WHERE active GROUP BY owner ORDER BY owner
    ON CONFLICT (owner) DO UPDATE SET live = subscription_owner_live.live + EXCLUDED.live;
  RETURN NULL;
END
$$;
CREATE FUNCTION subscriptions_count_deleted() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  UPDATE subscription_owner_live l SET live = l.live - d.n
    FROM (SELECT owner, count(*) AS n FROM old_rows WHERE active GROUP BY owner) d WHERE l.owner = d.owner;
  RETURN NULL;
END
$$;
CREATE FUNCTION subscriptions_count_updated() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  IF OLD.active THEN
    UPDATE subscription_owner_live SET live = live - 1 WHERE owner = OLD.owner;
  END IF;
  IF NEW.active THEN
    INSERT INTO subscription_owner_live (owner, live) VALUES (NEW.owner, 1)
      ON CONFLICT (owner) DO UPDATE SET live = subscription_owner_live.live + 1;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER subscriptions_live_inserted AFTER INSERT ON subscriptions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION subscriptions_count_inserted();
CREATE TRIGGER subscriptions_live_deleted AFTER DELETE ON subscriptions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION subscriptions_count_deleted();
CREATE TRIGGER subscriptions_live_updated AFTER UPDATE OF active, owner ON subscriptions
  FOR EACH ROW WHEN (OLD.active IS DISTINCT FROM NEW.active OR OLD.owner IS DISTINCT FROM NEW.owner)
  EXECUTE FUNCTION subscriptions_count_updated();
