-- The ledger's identity (issue 19): made once with the schema, never changed. Every indexer reads
-- it when it matches its groups' logs and checks it in every seal, so a ledger that vanished and
-- came back (a dropped schema recreated by another service's start, a restored dump, another
-- deployment's database) is noticed before anything is sealed into it.
CREATE TABLE ledger_identity (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  id text NOT NULL,
  created_at bigint NOT NULL
);
INSERT INTO ledger_identity (id, created_at) VALUES (gen_random_uuid()::text, (extract(epoch FROM now()) * 1000)::bigint);
