import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Variant } from "@evb/domain";
import { type ApiRole, ApiKeyStore, poolOptions } from "@evb/storage";
import { CONTEXT, expectBrokerError, uniqueTopic } from "./support/broker-expect.ts";
import { type CallResult, callResultOf } from "./support/http.ts";
import { verifyLedger } from "./support/ledger-integrity.ts";
import { TestSystem } from "./support/system.ts";
import { createKey } from "./support/api-keys.ts";

type Item = { status: string; topic: string | null; eventId: string | null } | { code: number; message: string | null };

// Crash survived: none. rest/publishBatch over real sockets against a real stack (Kafka,
// Postgres, Redis, an indexer sealing the events): order in the ledger, per-event errors beside
// successes, idempotency keys per event, the batch's limits, and API keys (role, group, and a
// publish rate counting every event of a batch).
describe("batch publish", () => {
  let sys: TestSystem;
  let pool: pg.Pool;
  let topic: string;
  const keys: Record<string, string> = {};

  const make = async (name: string, roles: ApiRole[], groups: string[], rate: number | null = null, burst: number | null = null) => {
    const k = await createKey(new ApiKeyStore(pool), { name, roles, groups: groups, publishRate: rate, publishBurst: burst });
    keys[name] = k.key;
  };
  /** POST `body` (JSON text, or a value to serialize) to rest/publishBatch as key `as`. */
  const batch = async (
    body: unknown,
    o: { as?: string; variant?: Variant; headers?: Record<string, string> } = {},
  ): Promise<CallResult> => {
    const res = await fetch(`${sys.gatewayUrl}${CONTEXT[o.variant ?? "L"]}/rest/publishBatch`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${keys[o.as ?? "admin"]}`, ...o.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    return callResultOf(res);
  };
  const items = (r: CallResult): Item[] => {
    expect(r.status, r.text).toBe(200);
    expect(Array.isArray(r.json), r.text).toBe(true);
    return r.json as Item[];
  };
  const ledger = async () => {
    const report = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
    expect(report.problems).toEqual([]);
    return report.events;
  };
  const publishOne = (as: string, content: string) =>
    fetch(`${sys.gatewayUrl}/event-broker/rest/publish`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${keys[as]}` },
      body: new URLSearchParams({ topic, content }).toString(),
      signal: AbortSignal.timeout(60_000),
    });

  beforeAll(async () => {
    sys = await TestSystem.start({ env: { GROUP_IDS: "1,2", API_KEYS: "true", BODY_LIMIT_BYTES: "65536", PUBLISH_TIMEOUT_MS: "10000" } });
    pool = new pg.Pool(poolOptions(sys.env.DATABASE_URL as string, sys.env.DATABASE_SCHEMA as string, 2));
    await make("admin", ["admin"], ["*"]);
    await make("reader", ["read"], ["1"]);
    await make("pub2", ["publish"], ["2"]);
    await make("limited", ["publish"], ["1"], 0.01, 5);
    topic = uniqueTopic("batch");
    const opened = await fetch(`${sys.gatewayUrl}/event-broker/rest/open?topic=${topic}`, {
      headers: { authorization: `Bearer ${keys.admin}` },
    });
    expect(await opened.json()).toMatchObject({ code: 0, data: true });
  });
  afterAll(async () => {
    await pool?.end();
    await sys?.stop();
  });

  it("keeps one topic's events in the body's order in the ledger, one result per event", async () => {
    const contents = Array.from({ length: 60 }, (_, i) => `order-${i}`);
    const results = items(await batch({ events: contents.map((content) => ({ topic, content, extensions: { "event-n": content } })) }));
    expect(results).toHaveLength(60);
    for (const r of results) expect(r).toMatchObject({ status: "SUCCESS", topic });
    const ids = results.map((r) => (r as { eventId: string }).eventId);
    expect(new Set(ids).size).toBe(60);
    const stored = (await ledger()).filter((e) => e.topic === topic && e.content.startsWith("order-"));
    expect(stored.map((e) => e.content)).toEqual(contents);
    expect(stored.map((e) => e.eventId)).toEqual(ids);
  });

  it("answers a bad event with publish's error for it, beside the others' results, in every variant", async () => {
    for (const variant of ["L", "M", "E"] as const) {
      const results = items(
        await batch(
          {
            groupId: "1",
            events: [
              { topic, content: `ok-a-${variant}` },
              { topic: uniqueTopic("nowhere"), content: "x" },
              { topic, content: "c".repeat(10_241) },
              { topic: "a+b", content: "x" },
              { topic, content: 5 },
              { topic, content: `ok-b-${variant}` },
            ],
          },
          { variant },
        ),
      );
      expect(
        results.map((r) => ("code" in r ? r.code : r.status)),
        variant,
      ).toEqual(["SUCCESS", 100101, 100201, 100106, 100501, "SUCCESS"]);
      expect(results[1]).toEqual({ code: 100101, message: "topic not exist" });
    }
    const stored = (await ledger()).filter((e) => e.topic === topic && e.content.startsWith("ok-")).map((e) => e.content);
    expect(stored).toEqual(["ok-a-L", "ok-b-L", "ok-a-M", "ok-b-M", "ok-a-E", "ok-b-E"]);
  });

  it("takes an idempotency key per event: the same batch again answers the same eventIds and stores nothing twice", async () => {
    const body = {
      events: [
        { topic, content: "idem-a", idempotencyKey: "batch-k1" },
        { topic, content: "idem-b", idempotencyKey: "batch-k2" },
        { topic, content: "idem-free" },
      ],
    };
    const first = items(await batch(body));
    const again = items(await batch(body));
    expect(first.map((r) => "status" in r && r.status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS"]);
    expect(again.slice(0, 2)).toEqual(first.slice(0, 2));
    expect((again[2] as { eventId: string }).eventId).not.toBe((first[2] as { eventId: string }).eventId);
    // The same key for other content: that event alone is 100211.
    const reused = items(
      await batch({
        events: [
          { topic, content: "idem-other", idempotencyKey: "batch-k1" },
          { topic, content: "idem-c" },
        ],
      }),
    );
    expect(reused.map((r) => ("code" in r ? r.code : r.status))).toEqual([100211, "SUCCESS"]);
    const stored = (await ledger()).filter((e) => e.content.startsWith("idem-")).map((e) => e.content);
    expect(stored.filter((c) => c === "idem-a")).toHaveLength(1);
    expect(stored.filter((c) => c === "idem-b")).toHaveLength(1);
    expect(stored.filter((c) => c === "idem-free")).toHaveLength(2);
    expect(stored).not.toContain("idem-other");
  });

  it("refuses a batch whole past its limits, with the documented codes, publishing none of it", async () => {
    const small = (n: number, tag: string) => ({ events: Array.from({ length: n }, (_, i) => ({ topic, content: `${tag}-${i}` })) });
    expectBrokerError(await batch(small(1001, "cap")), "L", 100212);
    expectBrokerError(await batch(small(1001, "cap"), { variant: "M" }), "M", 100212);
    expectBrokerError(await batch({ events: [] }), "L", 100212);
    expectBrokerError(await batch("{not json"), "L", 100212);
    // A form body is not read as a form: it is the JSON, and not JSON (answered, not waited on).
    expectBrokerError(await batch("topic=t&content=c", { headers: { "content-type": "application/x-www-form-urlencoded" } }), "L", 100212);
    expectBrokerError(await batch("--X\r\n", { headers: { "content-type": "multipart/form-data; boundary=X" } }), "L", 100212);
    expectBrokerError(await batch(`${"[".repeat(40)}${"]".repeat(40)}`), "L", 100212);
    // BODY_LIMIT_BYTES is 65536 here: seven events of 10000 characters are over it.
    const big = { events: Array.from({ length: 7 }, (_, i) => ({ topic, content: `${i}`.repeat(10_000) })) };
    expectBrokerError(await batch(big), "L", 100213);
    expectBrokerError(await batch(big, { variant: "E" }), "E", 100213);
    expectBrokerError(await batch(small(2, "hdr"), { headers: { "Idempotency-Key": "one-for-all" } }), "L", 100210);
    expectBrokerError(await batch({ groupId: "9", ...small(2, "grp") }), "L", 200211);
    expectBrokerError(await batch({ groupId: " ", ...small(2, "grp") }, { variant: "E" }), "E", 100306);
    const stored = (await ledger()).map((e) => e.content);
    expect(stored.filter((c) => /^(cap|hdr|grp)-/.test(c))).toEqual([]);
  });

  it("checks a key's role and the body's group, and counts every event of a batch against its publish rate", async () => {
    const events = [{ topic, content: "keyed" }];
    expect((await batch({ events }, { as: "reader" })).status).toBe(403);
    expect((await batch({ groupId: "1", events }, { as: "pub2" })).status).toBe(403);
    // No groupId: group 1, outside pub2's groups.
    expect((await batch({ events }, { as: "pub2" })).status).toBe(403);
    // Its own group: let through (the topic is not in group 2).
    expect(items(await batch({ groupId: 2, events }, { as: "pub2" }))).toEqual([{ code: 100101, message: "topic not exist" }]);

    // Burst 5, refilled at 0.01/s: a batch of 3 takes 3 tokens, so another batch of 3 is refused
    // and only two single publishes remain.
    const three = { events: [0, 1, 2].map((i) => ({ topic, content: `rate-${i}` })) };
    expect(items(await batch(three, { as: "limited" })).map((r) => "status" in r && r.status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS"]);
    const refused = await batch(three, { as: "limited" });
    expect(refused.status).toBe(429);
    expect((await publishOne("limited", "rate-single-1")).status).toBe(200);
    expect((await publishOne("limited", "rate-single-2")).status).toBe(200);
    expect((await publishOne("limited", "rate-single-3")).status).toBe(429);
  });
});
