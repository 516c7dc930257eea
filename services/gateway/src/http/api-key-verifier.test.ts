import { type ApiKeyRecord, newApiKey } from "@evb/storage";
import { describe, expect, it } from "vitest";
import { type ApiKeyLookup, ApiKeyVerifier } from "./api-key-verifier.ts";

function setup() {
  const made = newApiKey();
  const record: ApiKeyRecord = {
    id: made.id,
    name: "ci",
    roles: ["publish"],
    groups: ["1"],
    publishRate: null,
    publishBurst: null,
    createdAt: 0,
    revokedAt: null,
  };
  let t = 0;
  let fail = false;
  const lookups: string[] = [];
  const lookup: ApiKeyLookup = {
    async find(id) {
      lookups.push(id);
      if (fail) throw new Error("postgres down");
      return id === made.id ? { record: { ...record }, secretSha256: made.secretSha256 } : null;
    },
  };
  const verifier = new ApiKeyVerifier({ lookup, cacheMs: 1000, now: () => t });
  return {
    made,
    record,
    verifier,
    lookups,
    tick: (ms: number) => {
      t += ms;
    },
    setFail: (f: boolean) => {
      fail = f;
    },
  };
}

describe("API key verifier", () => {
  it("accepts the key and refuses a wrong secret, an unknown id and text that is no key", async () => {
    const { made, verifier } = setup();
    expect((await verifier.verify(made.key))?.id).toBe(made.id);
    expect(await verifier.verify(`${made.key.slice(0, -1)}${made.key.endsWith("A") ? "B" : "A"}`)).toBeNull();
    expect(await verifier.verify(`evbk_000000000000_${"A".repeat(43)}`)).toBeNull();
    expect(await verifier.verify("not-a-key")).toBeNull();
  });

  it("caches lookups for the TTL: one Postgres query for many requests, a revocation seen after the TTL", async () => {
    const { made, record, verifier, lookups, tick } = setup();
    for (let i = 0; i < 5; i++) await verifier.verify(made.key);
    expect(lookups).toHaveLength(1);
    record.revokedAt = 1; // revoked in the store (the lookup returns copies of `record`)
    tick(999);
    expect(await verifier.verify(made.key)).not.toBeNull();
    tick(1);
    expect(await verifier.verify(made.key)).toBeNull();
    expect(lookups).toHaveLength(2);
  });

  it("keeps serving a known key from the cache while Postgres fails, and throws when nothing is cached", async () => {
    const { made, verifier, tick, setFail } = setup();
    await verifier.verify(made.key);
    setFail(true);
    tick(5000);
    expect((await verifier.verify(made.key))?.id).toBe(made.id);
    await expect(verifier.verify(`evbk_111111111111_${"A".repeat(43)}`)).rejects.toThrow("postgres down");
  });

  it("a call may ask for a fresher answer than the TTL (a session's re-check), never an older one", async () => {
    const { made, record, verifier, lookups, tick } = setup();
    await verifier.verify(made.key);
    record.revokedAt = 1;
    tick(500);
    expect(await verifier.verify(made.key, 10_000)).not.toBeNull();
    expect(await verifier.verify(made.key, 500)).toBeNull();
    expect(lookups).toHaveLength(2);
  });
});
