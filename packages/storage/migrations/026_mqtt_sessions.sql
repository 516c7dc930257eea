-- The durable copy of each persistent MQTT session (clean session 0, or an MQTT 5 session expiry):
-- its filters and ledger positions, as the gateway keeps them in Redis (StoredSession, JSON). Redis
-- may lose its data (a flush, a Redis without persistence restarted); the gateway then resumes the
-- session from this row, so the events published while the client was away are still delivered
-- (docs/protocols.md, "Redis holds the sessions"). Written at every change of the filters and when
-- the connection ends, the positions at most every 10 s in between: a session restored from here
-- may get up to 10 s of QoS 1 deliveries again (at least once), never a gap. A row past expires_at
-- is no session: it is deleted when found expired and by the gateways' bounded periodic sweep.
CREATE TABLE mqtt_sessions (
  client_id  text PRIMARY KEY,
  session    jsonb NOT NULL,
  expires_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mqtt_sessions_expiry ON mqtt_sessions (expires_at);
