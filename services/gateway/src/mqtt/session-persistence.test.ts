import { describe, expect, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { SessionPersistence } from "./session-persistence.ts";
import type { SessionStore, StoredSession, StoredSubscription } from "./session-store.ts";

class FakeStore implements SessionStore {
  readonly saves: { session: StoredSession; ttlMs: number; ending: boolean }[] = [];
  fail = false;
  async load(): Promise<StoredSession | null> {
    return null;
  }
  async save(_id: string, session: StoredSession, ttlMs: number, ending = false): Promise<void> {
    if (this.fail) throw new Error("Redis away");
    this.saves.push({ session: structuredClone(session), ttlMs, ending });
  }
  async drop(): Promise<void> {}
}

function persistence(store: FakeStore, subs: StoredSubscription[], clock: { t: number }) {
  return new SessionPersistence({
    store,
    clientId: "c",
    owner: "key:k1",
    ttlMs: 30_000,
    snapshot: () => subs,
    everyMs: 1_000,
    now: () => clock.t,
    logger: silentLogger,
  });
}

const sub = (height: number): StoredSubscription => ({ filter: "a", qos: 1, group: "1", position: { height, idx: -1 } });

describe("SessionPersistence", () => {
  it("writes only when the positions moved, or before the key would expire", async () => {
    const store = new FakeStore();
    const subs = [sub(1)];
    const clock = { t: 0 };
    const p = persistence(store, subs, clock);
    await p.flush(false);
    await p.flush(false);
    expect(store.saves.length).toBe(1);
    subs[0] = sub(2);
    await p.flush(false);
    expect(store.saves.map((s) => s.session.subscriptions[0]?.position.height)).toEqual([1, 2]);
    clock.t = 10_001;
    await p.flush(false);
    expect(store.saves.length).toBe(3);
    expect(store.saves[0]?.ttlMs).toBe(30_000);
  });

  it("a failed write is tried again at the next flush; a forced one reports the failure", async () => {
    const store = new FakeStore();
    const p = persistence(store, [sub(1)], { t: 0 });
    store.fail = true;
    await p.flush(false);
    await expect(p.flush(true)).rejects.toThrow("Redis away");
    store.fail = false;
    await p.flush(false);
    expect(store.saves.length).toBe(1);
    await p.close();
    expect(store.saves.map((s) => s.ending)).toEqual([false, true]); // the last write says the connection ended
  });
});
