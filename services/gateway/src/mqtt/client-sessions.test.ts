import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "@evb/domain";
import { MemoryOwnerStore } from "../../../../test/support/mqtt-fakes.ts";
import { type ClientHolder, ClientSessions } from "./client-sessions.ts";

/** A connection that records when it was taken over; its end releases the id, as MqttConnection's does. */
class Holder implements ClientHolder {
  ended = false;
  private readonly sessions: () => ClientSessions;
  private readonly id: string;
  private readonly endMs: number;
  constructor(sessions: () => ClientSessions, id: string, endMs = 0) {
    this.sessions = sessions;
    this.id = id;
    this.endMs = endMs;
  }
  async takeOver(): Promise<void> {
    await new Promise((r) => setTimeout(r, this.endMs));
    this.ended = true;
    this.sessions().release(this.id, this);
  }
}

const sessions: ClientSessions[] = [];
async function gateway(store: MemoryOwnerStore, gatewayId: string, takeoverWaitMs = 3_000): Promise<ClientSessions> {
  const s = new ClientSessions({ gatewayId, owners: store.view(), takeoverWaitMs, refreshEveryMs: 60_000, logger: silentLogger });
  await s.start();
  sessions.push(s);
  return s;
}

afterEach(async () => {
  vi.useRealTimers();
  for (const s of sessions.splice(0)) await s.close();
});

describe("ClientSessions", () => {
  it("a second connection with the id on the same gateway ends the first before its claim returns", async () => {
    const store = new MemoryOwnerStore();
    const a = await gateway(store, "gw-a");
    const first = new Holder(() => a, "c1", 20);
    await a.claim("c1", first, "key:k1");
    const second = new Holder(() => a, "c1");
    await a.claim("c1", second, "key:k1");
    expect(first.ended).toBe(true);
    expect(a.holds("c1", second)).toBe(true);
  });

  it("a connection with the id on another gateway ends the holder there, and the claim waits until it has", async () => {
    const store = new MemoryOwnerStore();
    const [a, b] = [await gateway(store, "gw-a"), await gateway(store, "gw-b")];
    const old = new Holder(() => a, "c1", 50);
    await a.claim("c1", old, "key:k1");
    const next = new Holder(() => b, "c1");
    await b.claim("c1", next, "key:k1");
    expect(old.ended).toBe(true);
    expect(a.holds("c1", old)).toBe(false);
    expect(b.holds("c1", next)).toBe(true);
    // The old connection's late release did not take the entry of the new one.
    expect(store.owners.get("c1")?.startsWith("gw-b/")).toBe(true);
  });

  it("a late take-over names one connection: a newer one with the id on that gateway stays", async () => {
    const store = new MemoryOwnerStore();
    const [a, b] = [await gateway(store, "gw-a"), await gateway(store, "gw-b")];
    const old = new Holder(() => a, "c1");
    await a.claim("c1", old, "key:k1");
    const owner = store.owners.get("c1") as string;
    const newer = new Holder(() => a, "c1");
    await a.claim("c1", newer, "key:k1");
    // An ask for the first connection arrives only now.
    store.owners.set("c1", owner);
    await b.claim("c1", new Holder(() => b, "c1"), "key:k1");
    expect(newer.ended).toBe(false);
    expect(a.holds("c1", newer)).toBe(true);
  });

  it("a gateway that does not answer is waited for at most takeoverWaitMs; one that is gone not at all", async () => {
    vi.useFakeTimers();
    const store = new MemoryOwnerStore();
    const [a, b] = [await gateway(store, "gw-a"), await gateway(store, "gw-b", 3_000)];
    await a.claim("c1", new Holder(() => a, "c1"), "key:k1");
    store.silent.add("gw-a");
    let done = false;
    const claim = b.claim("c1", new Holder(() => b, "c1"), "key:k1").then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(2_999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await claim;
    // The owner now is gw-b's connection; a gateway with no listener ("gw-gone") answers at once.
    store.owners.set("c2", "gw-gone/x");
    await b.claim("c2", new Holder(() => b, "c2"), "key:k1");
  });

  it("a store that cannot answer makes the claim throw (the CONNECT is refused, not hung)", async () => {
    const store = new MemoryOwnerStore();
    const a = await gateway(store, "gw-a");
    store.down = true;
    await expect(a.claim("c1", new Holder(() => a, "c1"), "key:k1")).rejects.toThrow(/store down/);
  });

  it("another identity's claim is refused before anything is ended, here and across gateways; the same identity takes the id over", async () => {
    const store = new MemoryOwnerStore();
    const a = await gateway(store, "gw-a");
    const b = await gateway(store, "gw-b");
    const owner = new Holder(() => a, "c1");
    expect(await a.claim("c1", owner, "key:k1")).toBe(true);
    const entry = store.owners.get("c1");
    const here = new Holder(() => a, "c1");
    expect(await a.claim("c1", here, "key:k2")).toBe(false);
    expect(await b.claim("c1", new Holder(() => b, "c1"), "10.0.0.2")).toBe(false);
    expect([owner.ended, a.holds("c1", owner), store.owners.get("c1")]).toEqual([false, true, entry]);
    // The refused connection's own release (its close) leaves the owner's entry alone.
    a.release("c1", here);
    expect(store.owners.get("c1")).toBe(entry);
    const next = new Holder(() => b, "c1");
    expect(await b.claim("c1", next, "key:k1")).toBe(true);
    expect([owner.ended, b.holds("c1", next)]).toEqual([true, true]);
  });
});
