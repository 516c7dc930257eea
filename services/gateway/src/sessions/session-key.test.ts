import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "@evb/domain";
import { type ApiKeyRecord, newApiKey } from "@evb/storage";
import { PUBLISH_ACCESS } from "../events/publish-operation.ts";
import { accessControl } from "../http/access-control.ts";
import { ApiKeyVerifier } from "../http/api-key-verifier.ts";
import type { PublishRateLimiter } from "../http/publish-rate-limit.ts";
import { SessionKey } from "./session-key.ts";

const CACHE_MS = 1_000;

/** The real access checks and key verifier over a key table in memory, on the fake clock. */
function setup() {
  const made = newApiKey();
  let record: ApiKeyRecord = {
    id: made.id,
    name: "s",
    roles: ["publish", "subscribe"],
    groups: ["1"],
    publishRate: null,
    publishBurst: null,
    createdAt: 0,
    revokedAt: null,
  };
  let down = false;
  const lookups: number[] = [];
  const verifier = new ApiKeyVerifier({
    lookup: {
      async find() {
        lookups.push(Date.now());
        if (down) throw new Error("postgres down");
        return { record: { ...record }, secretSha256: made.secretSha256 };
      },
    },
    cacheMs: CACHE_MS,
    now: Date.now,
  });
  const { checks } = accessControl({
    allowed: [],
    basicUsers: new Map(),
    keys: { verifier, limiter: { take: async () => ({ ok: true }) } as unknown as PublishRateLimiter },
    logger: silentLogger,
  });
  const revoked = vi.fn();
  const key = new SessionKey({
    checks,
    login: { key: { ...record }, authorization: `Bearer ${made.key}` },
    remoteIp: "10.0.0.9",
    revoked,
    logger: silentLogger,
  });
  return {
    key,
    revoked,
    lookups,
    checks,
    change: (c: Partial<ApiKeyRecord>) => {
      record = { ...record, ...c };
    },
    setDown: (d: boolean) => {
      down = d;
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("SessionKey", () => {
  it("ends a session whose key is revoked within API_KEY_CACHE_MS, though it sends nothing", async () => {
    vi.useFakeTimers();
    const s = setup();
    s.key.start();
    await s.key.current(); // the login's lookup, cached from here
    s.change({ revokedAt: Date.now() });
    await vi.advanceTimersByTimeAsync(CACHE_MS - 1);
    expect(s.revoked).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(5 * CACHE_MS);
    expect(s.revoked).toHaveBeenCalledTimes(1);
    expect(await s.key.permits(PUBLISH_ACCESS, "1")).toBe("forbidden");
  });

  it("answers each publish from the verifier's cache: one key lookup per half cache period, however many frames", async () => {
    vi.useFakeTimers();
    const s = setup();
    s.key.start();
    for (let i = 0; i < 500; i++) expect(await s.key.permits(PUBLISH_ACCESS, "1")).toBe("ok");
    expect(s.lookups).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10 * CACHE_MS);
    expect(s.lookups.length).toBeLessThanOrEqual(21);
    expect(s.revoked).not.toHaveBeenCalled();
  });

  it("refuses what a role change took away, as over HTTP, and keeps the session", async () => {
    vi.useFakeTimers();
    const s = setup();
    expect(await s.key.permits(PUBLISH_ACCESS, "1")).toBe("ok");
    s.change({ roles: ["subscribe"] });
    await vi.advanceTimersByTimeAsync(CACHE_MS);
    expect(await s.key.permits(PUBLISH_ACCESS, "1")).toBe("forbidden");
    s.change({ roles: ["publish"], groups: ["2"] });
    await vi.advanceTimersByTimeAsync(CACHE_MS);
    expect(await s.key.permits(PUBLISH_ACCESS, "1")).toBe("forbidden");
    expect(await s.key.permits(PUBLISH_ACCESS, "2")).toBe("ok");
    expect(s.revoked).not.toHaveBeenCalled();
  });

  it("a revoked key is refused at the next publish after the cache period, and ends the session once", async () => {
    vi.useFakeTimers();
    const s = setup();
    expect(await s.key.permits(PUBLISH_ACCESS, "1")).toBe("ok");
    s.change({ revokedAt: Date.now() });
    await vi.advanceTimersByTimeAsync(CACHE_MS);
    expect(await s.key.permits(PUBLISH_ACCESS, "1")).toBe("forbidden");
    expect(await s.key.current()).toBe("revoked");
    expect(s.revoked).toHaveBeenCalledTimes(1);
  });

  it("keeps the last known key while the keys cannot be read (as the HTTP mounts serve known keys through an outage)", async () => {
    vi.useFakeTimers();
    const s = setup();
    s.key.start();
    await s.key.current();
    s.setDown(true);
    await vi.advanceTimersByTimeAsync(5 * CACHE_MS);
    expect(await s.key.permits(PUBLISH_ACCESS, "1")).toBe("ok");
    expect(s.revoked).not.toHaveBeenCalled();
  });

  it("is owned by its key, or without one by the caller's address; a session without a key is never re-checked", async () => {
    vi.useFakeTimers();
    const s = setup();
    expect(s.key.owner).toMatch(/^key:[0-9a-f]{12}$/);
    const revoked = vi.fn();
    const open = new SessionKey({ checks: s.checks, login: { key: null }, remoteIp: "10.0.0.9", revoked, logger: silentLogger });
    open.start();
    expect(open.owner).toBe("10.0.0.9");
    await vi.advanceTimersByTimeAsync(5 * CACHE_MS);
    expect(await open.current()).toBeNull();
    expect(s.lookups).toHaveLength(0);
    expect(revoked).not.toHaveBeenCalled();
  });
});
