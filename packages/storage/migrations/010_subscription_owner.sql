-- Who owns a subscription, and who ended it. A continuation (subscribe with a live id) switches
-- the callback URL only for the owner: the caller address recorded at creation, or `key:<id>`
-- of the API key that created it when keys are on (behaviour.md 10.4). Rows made before this
-- column existed are owned by the address that subscribed them.
ALTER TABLE subscriptions
  ADD COLUMN owner text,
  ADD COLUMN unsubscribed_by text,   -- the caller that ended it (address or key:<id>), kept for the record
  ADD COLUMN unsubscribed_at bigint; -- epoch ms
-- In the form the gateway now compares: an IPv4-mapped IPv6 address as plain IPv4.
UPDATE subscriptions SET owner = regexp_replace(remote_ip, '^::ffff:(\d+\.\d+\.\d+\.\d+)$', '\1', 'i');
ALTER TABLE subscriptions ALTER COLUMN owner SET NOT NULL;
