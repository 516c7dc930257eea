import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Variant } from "@evb/domain";
import { CONTEXT, expectBrokerError, expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { type CallResult, callResultOf } from "./support/http.ts";
import { callFrom } from "./support/http-from.ts";
import { verifyLedger } from "./support/ledger-integrity.ts";
import { blockHashes, dropSchema, inSchema } from "./support/ledger-services.ts";
import { waitUntil } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";

interface SendResult {
  status: string;
  topic: string | null;
  eventId: string | null;
}

// Issue 21, item 5: a publish named by an Idempotency-Key is decided where events are sealed, so
// a repeat answers the first event whichever gateway takes it, and whatever crashed in between.
describe("idempotent publish", () => {
  let sys: TestSystem;
  let topic: string;
  /** Every key this suite used and the eventId it first answered. */
  const answered = new Map<string, string>();

  /** A POST publish with an optional Idempotency-Key header (extra form parameters in `params`). */
  const publish = async (gateway: string, variant: Variant, params: Record<string, string>, key?: string): Promise<CallResult> => {
    const res = await fetch(`${gateway}${CONTEXT[variant]}/rest/publish`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(key === undefined ? {} : { "Idempotency-Key": key }) },
      body: new URLSearchParams({ topic, ...params }).toString(),
      signal: AbortSignal.timeout(30_000),
    });
    return callResultOf(res);
  };
  const sendResult = (r: CallResult) => r.json as SendResult;
  const ledger = () => verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
  /** How many events of the ledger hold `content`, once the ledger is sound. */
  const copies = async (content: string) => {
    const report = await ledger();
    expect(report.problems).toEqual([]);
    return report.events.filter((e) => e.content === content).length;
  };

  beforeAll(async () => {
    sys = await TestSystem.start({ gateways: 2, env: { PUBLISH_TIMEOUT_MS: "2000" } });
    topic = uniqueTopic("idem");
    expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  // Fault survived: a publisher whose answer was lost retries through another gateway (a load
  // balancer picks another instance), after the first landed, and at the same moment.
  it("the same key through two gateways answers one eventId, and the ledger holds one event", async () => {
    const [gw1, gw2] = sys.gatewayUrls as [string, string];
    const first = sendResult(await publish(gw1, "L", { content: "once", "event-format": "json" }, "order-1"));
    expect(first).toMatchObject({ status: "SUCCESS", topic });
    // The parameter, for clients without headers, is the same key; extensions in another order are the same content.
    const again = sendResult(await publish(gw2, "M", { "event-format": "json", content: "once", idempotencyKey: "order-1" }));
    expect(again).toEqual(first);
    answered.set("order-1", first.eventId as string);

    const together = await Promise.all([
      publish(gw1, "L", { content: "together" }, "order-2"),
      publish(gw2, "L", { content: "together" }, "order-2"),
      publish(gw2, "E", { content: "together" }, "order-2"),
    ]);
    const ids = together.map((r) => sendResult(r).eventId);
    expect(together.map((r) => sendResult(r).status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS"]);
    expect(new Set(ids).size).toBe(1);
    expect(await copies("once")).toBe(1);
    expect(await copies("together")).toBe(1);
    const data = expectSuccess(await rest(gw2, "L", "getEvent", { eventId: first.eventId as string }), "L") as { extensions: object };
    expect(data.extensions).toMatchObject({ "event-format": "json" });
    expect(data.extensions).not.toHaveProperty("idempotencyKey");
  });

  // Fault survived: a client that reuses a key for another publish (a bug, or two clients
  // sharing a key space): refused, never answered with the other event's id.
  it("the same key with other content answers 100211 in every variant, and stores nothing", async () => {
    for (const variant of ["L", "M", "E"] as const) {
      expectBrokerError(await publish(sys.gatewayUrl, variant, { content: "other" }, "order-1"), variant, 100211);
    }
    expectBrokerError(await publish(sys.gatewayUrl, "L", { content: "once", "event-format": "xml" }, "order-1"), "L", 100211);
    expect(await copies("other")).toBe(0);
    expect(await copies("once")).toBe(1);
  });

  it("a bad key answers 100210; without a key every publish is a new event, as in the original", async () => {
    expectBrokerError(await publish(sys.gatewayUrl, "L", { content: "bad" }, "two words"), "L", 100210);
    expectBrokerError(await publish(sys.gatewayUrl, "M", { content: "bad", idempotencyKey: "" }), "M", 100210);
    expectBrokerError(await publish(sys.gatewayUrl, "E", { content: "bad", idempotencyKey: "k".repeat(256) }), "E", 100210);
    const plain = [await publish(sys.gatewayUrl, "L", { content: "plain" }), await publish(sys.gatewayUrl, "L", { content: "plain" })];
    const ids = plain.map((r) => sendResult(r).eventId);
    expect(ids[0]).not.toBe(ids[1]);
    expect(await copies("plain")).toBe(2);
    expect(await copies("bad")).toBe(0);
  });

  // Issue 28: without API keys a key is the caller address's. Another address using a guessable
  // key first does not block the owner's publish (100211 before), nor does a repeat of a guessed
  // content from it answer the owner's eventId (which confirmed the guess).
  it("another address's use of the same key neither blocks nor reveals this caller's publish", async () => {
    const from = (address: string, content: string, key: string) =>
      callFrom(address, sys.gatewayUrl, `${CONTEXT.L}/rest/publish`, { topic, content, idempotencyKey: key });
    const squat = sendResult(await from("127.0.0.2", "a guess", "order-4711"));
    expect(squat.status).toBe("SUCCESS");
    const owner = sendResult(await publish(sys.gatewayUrl, "L", { content: "the real order" }, "order-4711"));
    expect(owner).toMatchObject({ status: "SUCCESS", topic });
    expect(owner.eventId).not.toBe(squat.eventId);
    const [, gw2] = sys.gatewayUrls as [string, string];
    expect(sendResult(await publish(gw2, "M", { content: "the real order", idempotencyKey: "order-4711" }))).toEqual(owner);
    // The other address's key is its own: its first content holds it.
    expectBrokerError(await from("127.0.0.2", "the real order", "order-4711"), "L", 100211);
    const secret = sendResult(await publish(sys.gatewayUrl, "L", { content: "the owner's content" }, "order-4712"));
    const guess = sendResult(await from("127.0.0.3", "the owner's content", "order-4712"));
    expect(guess.status).toBe("SUCCESS");
    expect(guess.eventId).not.toBe(secret.eventId);
    expect(await copies("the real order")).toBe(1);
    expect(await copies("the owner's content")).toBe(2);
  });

  // Fault survived: SIGKILL of the (only) indexer, once while a keyed publish is in flight (it
  // may have been sealed, its receipt lost) and with a keyed publish made while it is down (it
  // waits in Kafka and answers TIMEOUT). Retried after the restart through the other gateway,
  // each answers the one event its first publish became.
  it("a publish retried after an indexer SIGKILL with its key lands once", async () => {
    const [gw1, gw2] = sys.gatewayUrls as [string, string];
    const inFlight = publish(gw1, "L", { content: "killed in flight" }, "order-3");
    await new Promise((r) => setTimeout(r, 30));
    await sys.kill("indexer-1");
    const first = sendResult(await inFlight);
    expect(sendResult(await publish(gw1, "L", { content: "while down" }, "order-4")).status).toBe("TIMEOUT");
    await sys.restart("indexer-1");
    const retries = await Promise.all([
      publish(gw2, "L", { content: "killed in flight" }, "order-3"),
      publish(gw2, "M", { content: "while down" }, "order-4"),
    ]);
    const [again, late] = retries.map(sendResult) as [SendResult, SendResult];
    expect([again.status, late.status]).toEqual(["SUCCESS", "SUCCESS"]);
    if (first.status === "SUCCESS") expect(again.eventId).toBe(first.eventId);
    expect(await copies("killed in flight")).toBe(1);
    expect(await copies("while down")).toBe(1);
    const data = expectSuccess(await rest(gw1, "L", "getEvent", { eventId: late.eventId as string }), "L") as { content: string };
    expect(Buffer.from(data.content, "base64").toString("utf8")).toBe("while down");
    answered.set("order-4", late.eventId as string);
  });

  // Fault survived: the ledger's schema dropped with Kafka kept. The keys are rebuilt with the
  // blocks (the same planner seals the same ranges again), so every block hash is the same and a
  // repeat still answers the original eventId.
  it("a ledger rebuilt from Kafka has the same blocks and still knows the keys", async () => {
    await waitUntil("every block has its chain record", async () =>
      inSchema(sys.env, async (c) => (await c.query("SELECT count(*)::int AS n FROM blocks WHERE NOT chain_written")).rows[0].n === 0),
    );
    const before = await blockHashes(sys.env);
    await sys.kill("indexer-1");
    await dropSchema(sys.env);
    await sys.restart("indexer-1");
    expect(await blockHashes(sys.env)).toEqual(before);
    for (const [key, eventId] of answered) {
      const content = key === "order-1" ? "once" : "while down";
      const extra: Record<string, string> = key === "order-1" ? { "event-format": "json" } : {};
      await waitUntil(`the gateway answers ${key} again`, async () => {
        const r = sendResult(await publish(sys.gatewayUrl, "L", { content, ...extra }, key));
        if (r.status !== "SUCCESS") return false; // the gateways serve the new ledger once the indexer matched it
        expect(r.eventId).toBe(eventId);
        return true;
      });
    }
    // The repeats made no event (only empty blocks on top, whose chain records cover them).
    const after = await blockHashes(sys.env);
    expect(new Map([...after].filter(([h]) => before.has(h)))).toEqual(before);
    expect(await copies("once")).toBe(1);
    expect(await copies("while down")).toBe(1);
  });
});
