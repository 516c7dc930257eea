import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callFrom } from "../support/http-from.ts";
import { Receiver } from "../support/receiver.ts";
import { TestSystem } from "../support/system.ts";
import { E, M, openTopic } from "./helpers.ts";

/** A service's log as TestSystem writes it (.cache/test-logs/<REDIS_PREFIX>-<name>.log). */
const logOf = (sys: TestSystem, name: string) =>
  readFileSync(join(import.meta.dirname, "..", "..", ".cache", "test-logs", `${sys.env.REDIS_PREFIX}-${name}.log`), "utf8");

const OWNER = "127.0.0.1";
const STRANGER = "127.0.0.2";

// Crash survived: none. Anyone could take over a subscription: admin/listSubscription shows every
// id, and a continuation from any address switched the callback to its own URL. Two callers on
// two loopback addresses (real sockets bound to 127.0.0.1 and 127.0.0.2), keys off.
describe("anyone can take over a subscription (keys off: the owner is the caller address)", () => {
  let sys: TestSystem;
  let ownerRx: Receiver;
  let ownerRx2: Receiver;
  let strangerRx: Receiver;
  const sub = (from: string, params: Record<string, string>, mount = M) =>
    callFrom(from, sys.gatewayUrl, `${mount}/rest/subscribe`, params);
  const publish = async (topic: string, content: string) => {
    const r = await callFrom(OWNER, sys.gatewayUrl, `${M}/rest/publish`, { topic, content });
    expect((r.json as { status: string }).status, r.text).toBe("SUCCESS");
    return (r.json as { eventId: string }).eventId;
  };

  beforeAll(async () => {
    sys = await TestSystem.start({ notifiers: 1, env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8", NOTIFIER_POLL_MS: "200" } });
    [ownerRx, ownerRx2, strangerRx] = await Promise.all([Receiver.start(), Receiver.start(), Receiver.start()]);
  });
  afterAll(async () => {
    await Promise.all([ownerRx, ownerRx2, strangerRx].map((r) => r?.close()));
    await sys?.stop();
  });

  it("a stranger's continuation answers the same id, but callbacks keep going to the owner's URL", async () => {
    await openTopic(sys.gatewayUrl, "owned");
    const id = (await sub(OWNER, { topic: "owned", url: ownerRx.url() })).text;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    for (const mount of [M, E]) {
      const r = await sub(STRANGER, { topic: "owned", url: strangerRx.url(), subscriptionId: id }, mount);
      expect(r.text, mount).toBe(id);
    }
    const first = await publish("owned", "one");
    await ownerRx.until(() => ownerRx.deliveredIds(id).includes(first), "the event at the owner's URL");
    expect(strangerRx.requests).toHaveLength(0);
    // listSubscription still names the owner's address.
    const list = (await callFrom(OWNER, sys.gatewayUrl, `${E}/admin/listSubscription`)).json as Record<string, Record<string, object>>;
    const node = Object.keys(list).find((n) => list[n]?.[id]) as string;
    const m = (await callFrom(OWNER, sys.gatewayUrl, `${M}/admin/listSubscription`, { nodeIp: node })).json as {
      data: Record<string, Record<string, { remoteIp: string }>>;
    };
    expect(m.data[node]?.[id]?.remoteIp).toBe(OWNER);

    // The owner may switch: the next event goes to its new URL.
    expect((await sub(OWNER, { topic: "owned", url: ownerRx2.url(), subscriptionId: id })).text).toBe(id);
    const second = await publish("owned", "two");
    await ownerRx2.until(() => ownerRx2.deliveredIds(id).includes(second), "the event at the owner's new URL");
    expect(strangerRx.requests).toHaveLength(0);
    expect(ownerRx.deliveredIds(id)).not.toContain(second);
  });

  it("a stranger's unSubscribe keeps the original's answer, and who did it is recorded and logged", async () => {
    const id = (await sub(OWNER, { topic: "ended", url: ownerRx.url() })).text;
    const r = await callFrom(STRANGER, sys.gatewayUrl, `${M}/rest/unSubscribe`, { subscriptionId: id });
    expect(r.text).toBe("true");
    const client = new pg.Client({ connectionString: sys.env.DATABASE_URL });
    await client.connect();
    try {
      const row = (
        await client.query(`SELECT owner, unsubscribed_by, active FROM "${sys.env.DATABASE_SCHEMA}".subscriptions WHERE id = $1`, [id])
      ).rows[0];
      expect(row).toEqual({ owner: OWNER, unsubscribed_by: STRANGER, active: false });
    } finally {
      await client.end();
    }
    await expect
      .poll(() => logOf(sys, "gateway-1"))
      .toMatch(new RegExp(`"subscriptionId":"${id}","owner":"127\\.0\\.0\\.1","by":"127\\.0\\.0\\.2".*other than its owner`));
  });

  it("an ended id taken up by a stranger starts afresh from the latest event; only the owner resumes", async () => {
    await openTopic(sys.gatewayUrl, "resumable");
    const id = (await sub(OWNER, { topic: "resumable", url: ownerRx.url() })).text;
    expect((await callFrom(OWNER, sys.gatewayUrl, `${M}/rest/unSubscribe`, { subscriptionId: id })).text).toBe("true");
    const missed = await publish("resumable", "while away");
    expect((await sub(STRANGER, { topic: "resumable", url: strangerRx.url(), subscriptionId: id })).text).toBe(id);
    const after = await publish("resumable", "after");
    await strangerRx.until(() => strangerRx.deliveredIds(id).includes(after), "the new event at the new subscriber");
    expect(strangerRx.deliveredIds(id)).not.toContain(missed);
  });
});
