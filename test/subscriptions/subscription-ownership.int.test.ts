import { readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { senderAddress } from "@evb/domain";
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
// id, and a continuation from any address switched the callback to its own URL; then (probe
// defect 2) ending the id and taking it again did the same. Two callers on
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

  const query = async (sql: string, params: unknown[]) => {
    const client = new pg.Client({ connectionString: sys.env.DATABASE_URL });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    sys = await TestSystem.start({ notifiers: 1, env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8", NOTIFIER_POLL_MS: "200" } });
    [ownerRx, ownerRx2, strangerRx] = await Promise.all([Receiver.start(), Receiver.start(), Receiver.start()]);
  });
  afterAll(async () => {
    await Promise.all([ownerRx, ownerRx2, strangerRx].map((r) => r?.close()));
    await sys?.stop();
  });

  it("only the owner reads or changes a subscription's settings: a stranger gets 100504 and learns no secret", async () => {
    await openTopic(sys.gatewayUrl, "configured");
    const id = (await sub(OWNER, { topic: "configured", url: ownerRx.url() })).text;
    const settings = (from: string, params: Record<string, string>) =>
      callFrom(from, sys.gatewayUrl, `${M}/admin/subscriptionSettings`, { subscriptionId: id, ...params });
    for (const params of [{}, { rotateSecret: "true" }, { paused: "true" }] as Record<string, string>[]) {
      const r = await settings(STRANGER, params);
      expect((r.json as { code: number }).code, JSON.stringify(params)).toBe(100504);
      expect(r.text).not.toMatch(/whsec_/);
    }
    const own = (await settings(OWNER, {})).json as { code: number; data: { paused: boolean; signing: string } };
    expect(own).toMatchObject({ code: 0, data: { paused: false, signing: "deployment" } });
  });

  // Issue 28: without keys an address is no proof of identity, so the settings show an alert URL's
  // user, password and token redacted even to the owner's address, as every other view does.
  it("admin/subscriptionSettings shows an alert URL redacted without keys, even to the owner's address", async () => {
    await openTopic(sys.gatewayUrl, "alerted");
    const alertUrl = ownerRx2.url("/alerts?token=s3cret").replace("http://", "http://ops:hunter2@");
    const id = (await sub(OWNER, { topic: "alerted", url: ownerRx.url(), alertUrl })).text;
    const r = await callFrom(OWNER, sys.gatewayUrl, `${M}/admin/subscriptionSettings`, { subscriptionId: id });
    expect(r.json).toMatchObject({ code: 0, data: { alertUrl: ownerRx2.url("/alerts?token=***").replace("http://", "http://***:***@") } });
    expect(r.text).not.toMatch(/hunter2|s3cret|ops:/);
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

  it("defect 2: a stranger who ends an id and takes it again gets the id but not the subscription; the owner resumes it", async () => {
    await openTopic(sys.gatewayUrl, "resumable");
    const id = (await sub(OWNER, { topic: "resumable", url: ownerRx.url() })).text;
    expect((await callFrom(STRANGER, sys.gatewayUrl, `${M}/rest/unSubscribe`, { subscriptionId: id })).text).toBe("true");
    const missed = await publish("resumable", "while away");
    // The reply is still the id (behaviour.md 8.2), for the same topic and for another one, on M and E.
    for (const [topic, mount] of [
      ["resumable", M],
      ["resumable", E],
      ["elsewhere", M],
    ] as const)
      expect((await sub(STRANGER, { topic, url: strangerRx.url(), subscriptionId: id }, mount)).text, `${topic} ${mount}`).toBe(id);
    const row = async () =>
      (
        await query(
          `SELECT owner, topic, active, url, unsubscribed_by AS "by" FROM "${sys.env.DATABASE_SCHEMA}".subscriptions WHERE id = $1`,
          [id],
        )
      )[0];
    expect(await row()).toEqual({ owner: OWNER, topic: "resumable", active: false, url: ownerRx.url(), by: STRANGER });
    await expect
      .poll(() => logOf(sys, "gateway-1"))
      .toMatch(
        new RegExp(`"subscriptionId":"${id}","owner":"127\\.0\\.0\\.1","by":"127\\.0\\.0\\.2".*ended id by a caller other than its owner`),
      );

    // The owner continuing with its URL resumes: the event published while it was away comes first.
    expect((await sub(OWNER, { topic: "resumable", url: ownerRx.url(), subscriptionId: id })).text).toBe(id);
    const after = await publish("resumable", "after");
    await ownerRx.until(() => ownerRx.deliveredIds(id).includes(after), "the new event at the owner");
    expect(ownerRx.deliveredIds(id)).toContain(missed);
    expect(strangerRx.requests).toHaveLength(0);
    // Who ended it is kept once the owner has it back, and every ending is on record.
    expect(await row()).toMatchObject({ owner: OWNER, active: true, by: STRANGER });
    expect((await callFrom(OWNER, sys.gatewayUrl, `${M}/rest/unSubscribe`, { subscriptionId: id })).text).toBe("true");
    const endings = await query(
      `SELECT owner, ended_by AS "by" FROM "${sys.env.DATABASE_SCHEMA}".subscription_endings WHERE subscription_id = $1 ORDER BY ended_at`,
      [id],
    );
    expect(endings).toEqual([
      { owner: OWNER, by: STRANGER },
      { owner: OWNER, by: OWNER },
    ]);
    // The owner taking its ended id for another topic starts afresh, still its owner, the ending kept.
    expect((await sub(OWNER, { topic: "elsewhere", url: ownerRx.url(), subscriptionId: id })).text).toBe(id);
    expect(await row()).toEqual({ owner: OWNER, topic: "elsewhere", active: true, url: ownerRx.url(), by: OWNER });
  });

  it("defect 8: a forwarded value that is not an IP address is not stored nor listed as remoteIp", async () => {
    const id = (
      await callFrom(
        OWNER,
        sys.gatewayUrl,
        `${M}/rest/subscribe`,
        { topic: "forwarded", url: ownerRx.url() },
        {
          "x-forwarded-for": "<img src=x onerror=alert(1)>",
        },
      )
    ).text;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await query(`SELECT remote_ip AS "ip" FROM "${sys.env.DATABASE_SCHEMA}".subscriptions WHERE id = $1`, [id]);
    expect(stored).toEqual([{ ip: OWNER }]);
    const list = (await callFrom(OWNER, sys.gatewayUrl, `${E}/admin/listSubscription`)).json as Record<string, Record<string, object>>;
    const node = Object.keys(list).find((n) => list[n]?.[id]) as string;
    const m = await callFrom(OWNER, sys.gatewayUrl, `${M}/admin/listSubscription`, { nodeIp: node });
    expect(m.text).not.toContain("onerror");
    expect((m.json as { data: Record<string, Record<string, { remoteIp: string }>> }).data[node]?.[id]?.remoteIp).toBe(OWNER);
    // A topic opened the same way names the caller's address as its creator, not the forwarded text.
    const forged = { "x-forwarded-for": "<img src=x onerror=alert(1)>" };
    expect((await callFrom(OWNER, sys.gatewayUrl, `${M}/rest/open`, { topic: "forwarded" }, forged)).json).toBe(true);
    const state = (await callFrom(OWNER, sys.gatewayUrl, `${M}/rest/state`, { topic: "forwarded" })).json as { senderAddress: string };
    expect(state.senderAddress).toBe(senderAddress(OWNER));
  });

  // Regression (issue 18, F8): TRUSTED_PROXIES defaulted to loopback, so any local process could
  // claim the owner's address in X-Forwarded-For from another loopback address and take the
  // subscription over. The default now believes no proxy: the stranger stays a stranger.
  it("with the default TRUSTED_PROXIES a stranger's X-Forwarded-For naming the owner takes nothing", async () => {
    await openTopic(sys.gatewayUrl, "claimed");
    const id = (await sub(OWNER, { topic: "claimed", url: ownerRx.url() })).text;
    const claim = await callFrom(
      STRANGER,
      sys.gatewayUrl,
      `${M}/rest/subscribe`,
      { topic: "claimed", url: strangerRx.url(), subscriptionId: id },
      { "x-forwarded-for": OWNER },
    );
    expect(claim.text).toBe(id);
    const stored = await query(`SELECT url, owner FROM "${sys.env.DATABASE_SCHEMA}".subscriptions WHERE id = $1`, [id]);
    expect(stored).toEqual([{ url: ownerRx.url(), owner: OWNER }]);
  });
});
