-- Listings and lookups that do not scan what they list (issue 29, item 7). The Postgres the
-- broker runs on may have autovacuum off, so plans must not depend on statistics.
--
-- rest/list answered its last page with a count(*) over the group and a sort of every row (no
-- statistics: the planner guessed 125 rows a group) to keep 10. Each topic now takes its place in
-- its group's list when it is inserted (`list_pos`: 1, 2, 3, … without gaps, topics are never
-- deleted): a page is a range of places read from one index, and the total is the group's
-- highest place (one descent of the same index), whatever the group's size.
ALTER TABLE topics ADD COLUMN list_pos bigint;
UPDATE topics t SET list_pos = o.p
  FROM (SELECT group_id, name, row_number() OVER (PARTITION BY group_id ORDER BY ordinal) AS p FROM topics) o
  WHERE t.group_id = o.group_id AND t.name = o.name;
CREATE UNIQUE INDEX topics_list_pos ON topics (group_id, list_pos);
-- The old paging index: nothing orders by ordinal any more, and without statistics the planner
-- chose it (reading the whole group) for lookups by name.
DROP INDEX topics_order;

-- Before each row goes in: under a lock of the group held to the end of the inserting transaction
-- (so the inserts of one group's new topics take their places one after the other, and each sees
-- the places taken before it), a name the group does not have yet takes the next place. A name it
-- has (the insert will meet its ON CONFLICT) takes none, so the places stay gapless. Every writer
-- of topics (rest/open, the seal, a rebuild's restore) goes through here. A lock, not a counter
-- row: a bulk insert would leave one dead version of that row per topic and walk them all.
-- search_path FROM CURRENT: the schema the migration runs in, whoever inserts. force_custom_plan:
-- PL/pgSQL would keep a generic plan made while the table was small (or analysed empty), a
-- sequential scan that a bulk insert then runs once per row; planned each time, the lookups
-- follow the table's size and use its indexes.
CREATE FUNCTION topics_take_list_pos() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('evb.topic-list'), hashtext(NEW.group_id));
  -- After the lock, so that what was committed before it is seen. Null when the name is there.
  NEW.list_pos := CASE WHEN NOT EXISTS (SELECT 1 FROM topics WHERE group_id = NEW.group_id AND name = NEW.name)
    THEN coalesce((SELECT max(list_pos) FROM topics WHERE group_id = NEW.group_id), 0) + 1 END;
  RETURN NEW;
END
$$;
CREATE TRIGGER topics_list_pos BEFORE INSERT ON topics FOR EACH ROW EXECUTE FUNCTION topics_take_list_pos();
