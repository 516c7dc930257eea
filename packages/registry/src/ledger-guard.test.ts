import { describe, expect, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { judgeLedger, LedgerGuard } from "./ledger-guard.ts";

describe("judgeLedger", () => {
  it("remembers the ledger found first, and serves it", () => {
    expect(judgeLedger(null, "a", new Set())).toEqual({ remembered: "a", refusal: null });
    expect(judgeLedger("a", "a", new Set())).toEqual({ remembered: "a", refusal: null });
  });

  it("refuses another ledger no indexer has matched (being rebuilt, or another deployment's)", () => {
    const j = judgeLedger("a", "b", new Set(["a"]));
    expect(j.remembered).toBe("a");
    expect(j.refusal).toMatch(/identity b.*not the one this service served \(a\)/);
  });

  it("takes another ledger once an indexer that can seal reports it", () => {
    expect(judgeLedger("a", "b", new Set(["b"]))).toEqual({ remembered: "b", refusal: null });
  });
});

describe("LedgerGuard", () => {
  const guard = (read: () => Promise<string>, vouched: string[] = []) =>
    new LedgerGuard({ readIdentity: read, vouched: async () => new Set(vouched), intervalMs: 60_000, logger: silentLogger });

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
});
