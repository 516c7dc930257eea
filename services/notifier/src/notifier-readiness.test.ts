import { describe, expect, it } from "vitest";
import { notifierReadiness } from "./notifier-readiness.ts";

describe("notifierReadiness", () => {
  it("is not ready while the ledger is refused, and says why", () => {
    const r = notifierReadiness({ fatal: null, failures: [], stuck: [], ledger: "the ledger's tables are gone" });
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/tables are gone: nothing is dispatched or delivered meanwhile/);
  });

  it("is ready with nothing wrong, and says nothing more", () => {
    expect(notifierReadiness({ fatal: null, failures: [], stuck: [] })).toEqual({ ok: true });
  });

  it("shows a failing dispatch from its first failure but stays ready until the third in a row", () => {
    const failure = { groupId: "1", failures: 2, since: 0, lastError: "timeout", retryAt: 0 };
    expect(notifierReadiness({ fatal: null, failures: [failure], stuck: [] })).toEqual({ ok: true, dispatchFailures: [failure] });
    expect(notifierReadiness({ fatal: null, failures: [{ ...failure, failures: 3 }], stuck: [] }).ok).toBe(false);
  });

  it("names every reason at once: a dead worker, a failing group, a stuck group", () => {
    const r = notifierReadiness({
      fatal: "delivery worker: run loop died",
      failures: [{ groupId: "2", failures: 4, since: 0, lastError: "timeout", retryAt: 0 }],
      stuck: [{ groupId: "3", cursorHeight: 7, head: 9, stillForMs: 61_000 }],
    });
    expect(r.ok).toBe(false);
    expect(r.reason).toContain("delivery worker: run loop died");
    expect(r.reason).toContain("dispatch of group 2 failed 4 times in a row: timeout");
    expect(r.reason).toContain("dispatch of group 3 is stuck: its cursor has stayed at height 7 for 61 s while the ledger is at height 9");
    expect(r).toMatchObject({ failed: "delivery worker: run loop died", stuckDispatch: [{ groupId: "3" }] });
  });
});
