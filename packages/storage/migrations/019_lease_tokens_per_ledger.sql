-- Delivery lease tokens fence a slice's writes to its subscription row (migration 005). A ledger
-- made again (schema dropped and recreated, then rebuilt from Kafka) starts the sequence again,
-- and a slice of a notifier still holding a token of the old ledger could then match a token the
-- new ledger hands out. Each ledger's tokens start at a random point instead, so tokens of two
-- ledgers do not meet (2^50 apart on average, far more than any ledger ever hands out).
SELECT setval('delivery_lease_tokens', GREATEST((SELECT last_value FROM delivery_lease_tokens), (random() * 2^52)::bigint));
