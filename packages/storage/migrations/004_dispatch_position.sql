-- The dispatch cursor moves by event, not only by whole block, so that one dispatch transaction
-- can be bounded by the backlog rows it writes even inside a huge block: every event up to
-- (height, idx) has been matched. idx = 2147483647 (the default, what every existing row means)
-- says "the whole block".
ALTER TABLE dispatch_cursors ADD COLUMN idx integer NOT NULL DEFAULT 2147483647;
