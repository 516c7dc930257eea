-- Endpoint health: when the current run of failed attempts began (epoch ms; set by the first
-- failure after a success, meaningful while attempts > 0). A subscription failing for longer
-- than DELIVERY_DISABLE_AFTER_MS is suspended even before its retry budget is spent.
ALTER TABLE subscriptions ADD COLUMN failing_since bigint;
