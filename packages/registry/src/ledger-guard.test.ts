import { describe, expect, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { judgeLedger, LedgerGuard, type LedgerReports } from "./ledger-guard.ts";

const reports = (vouched: string[] = [], foreign: string[] = []): LedgerReports => ({
  vouched: new Set(vouched),
  foreign: new Set(foreign),
});

describe("judgeLedger", () => {
  it("remembers the ledger found first, and serves it", () => {
    expect(judgeLedger(null, "a", reports())).toEqual({ remembered: "a", refusal: null });
    expect(judgeLedger("a", "a", reports())).toEqual({ remembered: "a", refusal: null });
  });

  it("refuses another ledger no indexer has matched (being rebuilt, or another deployment's)", () => {
    const j = judgeLedger("a", "b", reports(["a"]));
    expect(j.remembered).toBe("a");
    expect(j.refusal).toMatch(/identity b.*not the one this service served \(a\)/);
  });

  it("takes another ledger once an indexer that can seal reports it", () => {
    expect(judgeLedger("a", "b", reports(["b"]))).toEqual({ remembered: "b", refusal: null });
  });

  it("never serves a ledger an indexer refused as another deployment's, not even one found at start", () => {
    expect(judgeLedger(null, "x", reports([], ["x"])).refusal).toMatch(/refused by an indexer as another deployment's/);
    expect(judgeLedger("x", "x", reports([], ["x"])).refusal).toMatch(/refused by an indexer/);
    // Another indexer matched it (rebuilt from our topics): served.
    expect(judgeLedger("x", "x", reports(["x"], ["x"])).refusal).toBeNull();
  });
});

describe("LedgerGuard", () => {
  const guard = (read: () => Promise<string>, r: () => LedgerReports = () => reports()) =>
    new LedgerGuard({ readIdentity: read, reports: async () => r(), intervalMs: 60_000, logger: silentLogger });

  it("refuses while the tables are gone, and serves the same ledger when it is back", async () => {
    let answer: () => Promise<string> = async () => "a";
    const g = guard(() => answer());
    await g.look();
    answer = async () => Promise.reject(Object.assign(new Error('relation "ledger_identity" does not exist'), { code: "42P01" }));
    await g.look();
    expect(g.refusal()).toMatch(/tables are gone/);
    answer = async () => "a";
    await g.look();
    expect(g.refusal()).toBeNull();
  });

  it("changes nothing when Postgres does not answer", async () => {
    let answer: () => Promise<string> = async () => "a";
    const g = guard(() => answer());
    await g.look();
    answer = async () => Promise.reject(new Error("connect ECONNREFUSED"));
    await g.look();
    expect(g.refusal()).toBeNull();
  });

  it("stops serving the ledger it started on once an indexer refuses it as another deployment's", async () => {
    let r = reports();
    const g = guard(
      async () => "x",
      () => r,
    );
    await g.look();
    expect(g.refusal()).toBeNull();
    r = reports([], ["x"]);
    await g.look();
    expect(g.refusal()).toMatch(/another deployment's/);
  });
});
