import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { countersSql, NEW_REVISION, RELEASE_DEAD_LETTER, RESET_RETRY_STATE, SQL } from "./subscription-lifecycle.ts";
import { COUNTER_COLUMNS, type SubscriptionCounters } from "./subscription-row.ts";
import { countersAfter } from "../../../test/support/counters-after.ts";
import { failureTransition, subscribeTransition, TRANSITIONS, type Transition } from "./subscription-transitions.ts";

const ALL = Object.keys(TRANSITIONS) as Transition[];
const BEFORE: SubscriptionCounters = { delivered: 5, pending: 3, notifiedAt: 100, rev: 9 };

describe("countersAfter", () => {
  // n = 2 events concerned, at time 200.
  it.each<[Transition, SubscriptionCounters]>([
    ["created", { delivered: 0, pending: 0, notifiedAt: null, rev: 10 }],
    ["resumed", { delivered: 5, pending: 0, notifiedAt: 100, rev: 10 }],
    ["continued", BEFORE],
    ["unsubscribed", { delivered: 5, pending: 0, notifiedAt: 100, rev: 10 }],
    ["replayed", BEFORE],
    ["rewound", { delivered: 5, pending: 0, notifiedAt: 100, rev: 10 }],
    ["restored", BEFORE],
    ["matched", { delivered: 5, pending: 5, notifiedAt: 100, rev: 10 }],
    ["refilled", { delivered: 5, pending: 5, notifiedAt: 100, rev: 10 }],
    ["leased", BEFORE],
    ["renewed", BEFORE],
    ["released", BEFORE],
    ["delivered", { delivered: 7, pending: 1, notifiedAt: 200, rev: 10 }],
    ["failed", BEFORE],
    ["dead", BEFORE],
  ])("%s", (t, want) => {
    expect(countersAfter(t, BEFORE, { n: 2, now: 200 })).toEqual(want);
  });

  it("covers every transition", () => {
    expect(ALL).toHaveLength(15);
  });

  it("never takes pending below zero (a delivery recorded twice counts once)", () => {
    expect(countersAfter("delivered", { ...BEFORE, pending: 1 }, { n: 3, now: 1 })).toMatchObject({ delivered: 8, pending: 0 });
  });
});

describe("failureTransition", () => {
  it.each([
    { deadAt: null, want: "failed" },
    { deadAt: 0, want: "dead" },
    { deadAt: 1_790_000_000_000, want: "dead" },
  ])("deadAt $deadAt: $want", ({ deadAt, want }) => {
    expect(failureTransition(deadAt)).toBe(want);
  });
});

describe("subscribeTransition", () => {
  it.each([
    { d: { kind: "create" as const }, want: "created" },
    { d: { kind: "resume" as const }, want: "resumed" },
    { d: { kind: "continue" as const, switchUrl: true }, want: "continued" },
    { d: { kind: "continue" as const, switchUrl: false }, want: null },
    { d: { kind: "decline" as const }, want: null },
    { d: { kind: "mismatch" as const }, want: null },
  ])("$d.kind (switchUrl $d.switchUrl): $want", ({ d, want }) => {
    expect(subscribeTransition(d)).toBe(want);
  });
});

describe("countersSql", () => {
  it("assigns nothing for an effect that keeps every counter", () => {
    expect(countersSql(TRANSITIONS.failed.counters)).toBe("");
  });

  it("refuses an effect that needs the events' count or the time when none is given", () => {
    expect(() => countersSql(TRANSITIONS.matched.counters)).toThrow(/n is needed/);
    expect(() => countersSql(TRANSITIONS.delivered.counters, { n: "x" })).toThrow(/now is needed/);
  });
});

/** Whether `sql` assigns `column` (SET column = …), as opposed to selecting it. */
const assigns = (sql: string, column: string) => new RegExp(`\\b${column} = `).test(sql);

describe("each transition's statement does what TRANSITIONS says", () => {
  it.each(ALL)("%s", (t) => {
    const spec = TRANSITIONS[t];
    const sql = SQL[t];
    expect(sql.includes(RESET_RETRY_STATE), "resets the retry state").toBe(spec.retry === "reset");
    expect(assigns(sql, "attempts") && !sql.includes(RESET_RETRY_STATE), "records an attempt").toBe(spec.retry === "record");
    expect(sql.includes(RELEASE_DEAD_LETTER), "releases the dead letter").toBe(spec.deadLetter === "release");
    expect(/dead_at = \$/.test(sql), "sets the dead letter").toBe(spec.deadLetter === "set" || t === "failed");
    expect(sql.includes(NEW_REVISION), "takes a new revision").toBe(spec.rematch);
    expect(/\bactive = true|VALUES \([^)]*, true,/.test(sql), "starts").toBe(spec.live === "start");
    expect(/\bactive = false\b/.test(sql), "ends").toBe(spec.live === "end");
    expect(/lease_token = nextval/.test(sql), "takes the lease").toBe(spec.lease === "take" || spec.lease === "revoke");
    expect(/lease_until = \(extract/.test(sql), "sets the lease's end").toBe(spec.lease === "take" || spec.lease === "extend");
    expect(/lease_until = 0/.test(sql), "ends the lease").toBe(spec.lease === "end" || spec.lease === "revoke");
    for (const [k, column] of Object.entries(COUNTER_COLUMNS) as [keyof SubscriptionCounters, string][]) {
      expect(assigns(sql, column), `moves ${k}`).toBe(spec.counters[k] !== "keep");
    }
  });

  it("failed and dead are one statement, told apart by deadAt", () => {
    expect(SQL.dead).toBe(SQL.failed);
  });
});

describe("writers of the subscriptions row", () => {
  const root = join(import.meta.dirname, "..", "..", "..");
  // Every source file of the packages and services (their src folders), tests aside.
  const sources = ["packages", "services"].flatMap((top) =>
    readdirSync(join(root, top)).flatMap((part) => {
      const src = join(top, part, "src");
      if (!existsSync(join(root, src))) return [];
      return (readdirSync(join(root, src), { recursive: true }) as string[])
        .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith(".test.ts"))
        .map((f) => join(src, f));
    }),
  );
  const WRITE = /\b(UPDATE|INSERT\s+INTO|DELETE\s+FROM|MERGE\s+INTO|TRUNCATE(\s+TABLE)?)\s+"?subscriptions"?(?![\w"])/i;

  it("are all in subscription-lifecycle.ts", () => {
    expect(sources.length).toBeGreaterThan(50);
    const writers = sources.filter((f) => WRITE.test(readFileSync(join(root, f), "utf8")));
    expect(writers).toEqual(["packages/storage/src/subscription-lifecycle.ts"]);
  });

  it("are recognised by the scan", () => {
    expect(WRITE.test("UPDATE subscriptions SET url = $2")).toBe(true);
    expect(WRITE.test('insert into "subscriptions" (id)')).toBe(true);
    expect(WRITE.test("DELETE FROM subscription_backlog WHERE")).toBe(false);
    expect(WRITE.test("INSERT INTO subscription_endings (subscription_id)")).toBe(false);
  });
});
