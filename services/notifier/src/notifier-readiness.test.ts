import { NOT_CHECKED_YET } from "@evb/runtime";
import { describe, expect, it } from "vitest";
import { notifierReadiness } from "./notifier-readiness.ts";

const up = { postgres: { ok: true, value: undefined, at: 1 }, redis: { ok: true, value: "PONG", at: 1 } } as const;

describe("notifierReadiness", () => {
  // Issue 21: notifiers answered 200 through a Postgres and a Redis outage with no callback moving.
  it("is not ready while Postgres or Redis does not answer, naming each", () => {
    const r = notifierReadiness({
      postgres: { ok: false, reason: "no answer within 1000 ms", at: 5 },
      redis: { ok: false, reason: "Command timed out", at: 5 },
      fatal: null,
      failures: [],
      stuck: [],
    });
    expect(r).toMatchObject({ ok: false, postgres: false, redis: false });
    expect(r.reason).toBe(
      "Postgres: no answer within 1000 ms: nothing is dispatched or delivered meanwhile; Redis: Command timed out: nothing is dispatched or delivered meanwhile",
    );
  });

  it("is not ready before its first looks at Postgres and Redis answered, saying it is checking", () => {
    const checking = { ok: false, reason: NOT_CHECKED_YET, at: null } as const;
    const r = notifierReadiness({ postgres: checking, redis: up.redis, fatal: null, failures: [], stuck: [] });
    expect(r.reason).toMatch(/^Postgres: checking \(no answer yet\)/);
  });

  it("is not ready while the ledger is refused, and says why", () => {
    const r = notifierReadiness({ ...up, fatal: null, failures: [], stuck: [], ledger: "the ledger's tables are gone" });
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/tables are gone: nothing is dispatched or delivered meanwhile/);
  });

  it("is ready with nothing wrong, and says nothing more", () => {
    expect(notifierReadiness({ ...up, fatal: null, failures: [], stuck: [] })).toEqual({ ok: true, postgres: true, redis: true });
  });

  it("shows a failing dispatch from its first failure but stays ready until the third in a row", () => {
    const failure = { groupId: "1", failures: 2, since: 0, lastError: "timeout", retryAt: 0 };
    expect(notifierReadiness({ ...up, fatal: null, failures: [failure], stuck: [] })).toEqual({
      ok: true,
      postgres: true,
      redis: true,
      dispatchFailures: [failure],
    });
    expect(notifierReadiness({ ...up, fatal: null, failures: [{ ...failure, failures: 3 }], stuck: [] }).ok).toBe(false);
  });

  it("names every reason at once: a dead worker, a failing group, a stuck group", () => {
    const r = notifierReadiness({
      ...up,
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
