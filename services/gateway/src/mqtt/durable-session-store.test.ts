import { describe, expect, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { type DurableSessions, DurableSessionStore } from "./durable-session-store.ts";
import type { SessionStore, StoredSession } from "./session-store.ts";

class FakeRedis implements SessionStore {
  readonly keys = new Map<string, { session: StoredSession; ttlMs: number }>();
  fail = false;
  async load(id: string): Promise<StoredSession | null> {
    if (this.fail) throw new Error("Redis away");
    return this.keys.get(id)?.session ?? null;
  }
  async save(id: string, session: StoredSession, ttlMs: number): Promise<void> {
    if (this.fail) throw new Error("Redis away");
    this.keys.set(id, { session: structuredClone(session), ttlMs });
  }
  async drop(id: string): Promise<void> {
    if (this.fail) throw new Error("Redis away");
    this.keys.delete(id);
  }
}

class FakePostgres implements DurableSessions {
  readonly rows = new Map<string, { session: unknown; ttlMs: number }>();
  readonly upserts: { id: string; session: StoredSession; ttlMs: number }[] = [];
  fail = false;
  async upsert(id: string, session: unknown, ttlMs: number): Promise<void> {
    if (this.fail) throw new Error("Postgres away");
    this.rows.set(id, { session: structuredClone(session), ttlMs });
    this.upserts.push({ id, session: structuredClone(session) as StoredSession, ttlMs });
  }
  async load(id: string): Promise<{ session: unknown; ttlMs: number } | null> {
    if (this.fail) throw new Error("Postgres away");
    return this.rows.get(id) ?? null;
  }
  async drop(id: string): Promise<void> {
    if (this.fail) throw new Error("Postgres away");
    this.rows.delete(id);
  }
  async sweep(): Promise<number> {
    return 0;
  }
}

const session = (height: number, filter = "a"): StoredSession => ({
  v: 1,
  subscriptions: [{ filter, qos: 1, group: "1", position: { height, idx: -1 } }],
});

function setup() {
  const redis = new FakeRedis();
  const pg = new FakePostgres();
  const clock = { t: 0 };
  const store = new DurableSessionStore({ fast: redis, durable: pg, now: () => clock.t, logger: silentLogger, positionsEveryMs: 10_000 });
  return { redis, pg, clock, store };
}

const heights = (pg: FakePostgres) => pg.upserts.map((u) => u.session.subscriptions[0]?.position.height);

describe("DurableSessionStore", () => {
  it("Redis without the key: the Postgres copy is used and written back to Redis", async () => {
    const { redis, pg, store } = setup();
    pg.rows.set("c", { session: session(7), ttlMs: 42_000 });
    expect(await store.load("c")).toEqual(session(7));
    expect(redis.keys.get("c")).toEqual({ session: session(7), ttlMs: 42_000 });
    pg.rows.clear();
    expect(await store.load("c")).toEqual(session(7)); // now from Redis
    expect(await store.load("other")).toBeNull();
  });

  it("Redis that cannot answer: load throws (the CONNECT is refused, never started empty)", async () => {
    const { redis, pg, store } = setup();
    pg.rows.set("c", { session: session(7), ttlMs: 42_000 });
    redis.fail = true;
    await expect(store.load("c")).rejects.toThrow("Redis away");
    redis.fail = false;
    pg.fail = true;
    await expect(store.load("c")).rejects.toThrow("Postgres away");
  });

  it("a change of the filters is written to both, awaited; a Postgres failure is thrown", async () => {
    const { redis, pg, store } = setup();
    await store.save("c", session(1), 30_000);
    expect(redis.keys.get("c")?.session).toEqual(session(1));
    expect(pg.upserts).toEqual([{ id: "c", session: session(1), ttlMs: 40_000 }]);
    await store.save("c", session(1, "b"), 30_000);
    expect(pg.upserts.map((u) => u.session.subscriptions[0]?.filter)).toEqual(["a", "b"]);
    pg.fail = true;
    await expect(store.save("c", session(1, "x"), 30_000)).rejects.toThrow("Postgres away");
    expect(redis.keys.get("c")?.session).toEqual(session(1, "x"));
    pg.fail = false;
    await store.save("c", session(2, "x"), 30_000); // the filters still differ from Postgres's: written at once
    expect(pg.upserts.at(-1)?.session).toEqual(session(2, "x"));
  });

  it("positions alone go to Postgres at most every 10 s, the latest ones, and always when the session ends", async () => {
    const { redis, pg, clock, store } = setup();
    await store.save("c", session(1), 30_000);
    for (let h = 2; h <= 5; h++) {
      clock.t += 1_000;
      await store.save("c", session(h), 30_000);
    }
    expect(redis.keys.get("c")?.session).toEqual(session(5));
    expect(heights(pg)).toEqual([1]);
    clock.t = 10_000;
    await store.save("c", session(6), 30_000);
    expect(heights(pg)).toEqual([1, 6]);
    clock.t = 11_000;
    await store.save("c", session(7), 30_000);
    expect(heights(pg)).toEqual([1, 6]);
    await store.save("c", session(8), 30_000, true);
    expect(heights(pg)).toEqual([1, 6, 8]);
    expect(pg.upserts.at(-1)?.ttlMs).toBe(30_000); // ending: the session's own expiry
  });

  it("positions that stop moving still reach Postgres within 10 s (the tick copies the pending ones)", async () => {
    const { pg, clock, store } = setup();
    await store.save("c", session(1), 30_000);
    clock.t = 1_000;
    await store.save("c", session(2), 30_000);
    (store as unknown as { tick(): void }).tick();
    await new Promise((r) => setTimeout(r, 0));
    expect(heights(pg)).toEqual([1]);
    clock.t = 10_000;
    (store as unknown as { tick(): void }).tick();
    await new Promise((r) => setTimeout(r, 0));
    expect(heights(pg)).toEqual([1, 2]);
  });

  it("a Postgres failure on a positions-only save does not throw; the positions are written at the next save", async () => {
    const { redis, pg, clock, store } = setup();
    await store.save("c", session(1), 30_000);
    pg.fail = true;
    clock.t = 10_000;
    await expect(store.save("c", session(2), 30_000)).resolves.toBeUndefined();
    expect(redis.keys.get("c")?.session).toEqual(session(2));
    pg.fail = false;
    clock.t = 11_000;
    await store.save("c", session(3), 30_000);
    expect(heights(pg)).toEqual([1, 3]);
  });

  it("a Redis failure on save is still thrown (as before)", async () => {
    const { redis, pg, store } = setup();
    redis.fail = true;
    await expect(store.save("c", session(1), 30_000)).rejects.toThrow("Redis away");
    expect(heights(pg)).toEqual([1]);
  });

  it("drop deletes both copies", async () => {
    const { redis, pg, store } = setup();
    await store.save("c", session(1), 30_000);
    await store.drop("c");
    expect(redis.keys.has("c")).toBe(false);
    expect(pg.rows.has("c")).toBe(false);
    expect(await store.load("c")).toBeNull();
  });
});
