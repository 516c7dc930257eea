import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { newestCounters, readStats, type StatsCopy, statsEntry, writeStats } from "./subscription-stats.ts";

const entry = { id: "s", nodeInstance: "n:1", delivered: 4, pending: 2, notifiedAt: 99, rev: 7 };

/** A Redis that keeps what eval is given and answers hmget from a fixed hash. */
function fakeRedis(hash: Record<string, string> = {}) {
  const evals: unknown[][] = [];
  const redis = {
    eval: async (...args: unknown[]) => {
      evals.push(args);
      return 0;
    },
    hmget: async (_key: string, ...ids: string[]) => ids.map((id) => hash[id] ?? null),
  };
  return { redis: redis as unknown as Redis, evals };
}

describe("statsEntry", () => {
  it("keeps the ledger's counters under their own names, dropping what is not copied", () => {
    expect(statsEntry({ ...entry, createdAt: 1 } as typeof entry)).toEqual(entry);
  });
});

describe("the Redis copy", () => {
  it("is stored under the names copies have always had (notified, notifying, notifyTs)", async () => {
    const { redis, evals } = fakeRedis();
    await writeStats(redis, "evb", [entry]);
    const args = evals[0] ?? [];
    expect(args.slice(2)).toEqual([expect.stringContaining("n:1"), "s", "7", '{"notified":4,"notifying":2,"notifyTs":99,"rev":7}']);
  });

  it("reads back in the code's vocabulary", async () => {
    const { redis } = fakeRedis({ s: '{"notified":4,"notifying":2,"notifyTs":null,"rev":7}' });
    expect(await readStats(redis, "evb", "n:1", ["s", "other"])).toEqual(
      new Map([["s", { delivered: 4, pending: 2, notifiedAt: null, rev: 7 }]]),
    );
  });
});

describe("newestCounters", () => {
  const row: StatsCopy = { delivered: 3, pending: 1, notifiedAt: 50, rev: 5 };
  it.each([
    { name: "no copy: the row", copy: undefined, want: row },
    { name: "an older copy: the row", copy: { ...row, delivered: 2, rev: 4 }, want: row },
    { name: "a copy as new as the row: the copy", copy: { ...row, delivered: 9 }, want: { ...row, delivered: 9 } },
    {
      name: "a newer copy: the copy",
      copy: { delivered: 4, pending: 0, notifiedAt: null, rev: 6 },
      want: { delivered: 4, pending: 0, notifiedAt: null, rev: 6 },
    },
  ])("$name", ({ copy, want }) => {
    expect(newestCounters(row, copy)).toEqual(want);
  });
});
