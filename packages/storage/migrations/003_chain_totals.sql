-- A running transaction count per group, so admin/group/general answers in O(1) instead of
-- summing every block. Kept by a trigger on blocks so the count moves in the same transaction
-- as the block it counts: a rolled-back seal leaves it unchanged.

ALTER TABLE chain_heads ADD COLUMN tx_total bigint NOT NULL DEFAULT 0;

UPDATE chain_heads h SET tx_total = coalesce((SELECT sum(b.tx_count) FROM blocks b WHERE b.group_id = h.group_id), 0);

-- SET search_path FROM CURRENT binds the function to this schema: the trigger then finds
-- chain_heads whatever search_path the sealing session runs with.
CREATE FUNCTION count_block_transactions() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE chain_heads SET tx_total = tx_total + NEW.tx_count WHERE group_id = NEW.group_id;
  RETURN NULL;
END
$$;

CREATE TRIGGER blocks_count_transactions AFTER INSERT ON blocks FOR EACH ROW EXECUTE FUNCTION count_block_transactions();
