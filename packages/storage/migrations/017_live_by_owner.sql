-- Subscribe counts the caller's live subscriptions against MAX_SUBSCRIPTIONS_PER_CALLER (issue 18,
-- F10): nothing capped how many one caller could create, and one listSubscription over them all
-- held the gateway's event loop.
CREATE INDEX subscriptions_live_by_owner ON subscriptions (owner) WHERE active;
