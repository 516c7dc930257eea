import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topicHash8, type Variant } from "@evb/domain";
import { expectBrokerError, expectJson200, expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { waitUntil } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";

// Crash survived: the indexer is down (SIGKILL) while publishes arrive. The gateway's bounded
// wait ends in TIMEOUT (E: 200202), yet the events are durable in Kafka and land once the
// indexer is back.
describe("a publish that outlives its wait", () => {
  let sys: TestSystem;
  let base: string;
  const topics = {} as Record<Variant, string>;
  beforeAll(async () => {
    sys = await TestSystem.start({ env: { PUBLISH_TIMEOUT_MS: "1000" } });
    base = sys.gatewayUrl;
    for (const v of ["L", "M", "E"] as const) {
      topics[v] = uniqueTopic(`late${v}`);
      await rest(base, "L", "open", { topic: topics[v] });
    }
    await sys.kill("indexer-1");
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("L and M answer a bare SendResult with status TIMEOUT and a null eventId", async () => {
    for (const v of ["L", "M"] as const) {
      const r = await rest(base, v, "publish", { topic: topics[v], content: `late ${v} 中文` }, "POST");
      const body = expectJson200(r) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(["status", "topic", "eventId"]);
      expect(body).toEqual({ status: "TIMEOUT", topic: topics[v], eventId: null });
    }
  });

  it("E answers 200202 instead", async () => {
    const r = await rest(base, "E", "publish", { topic: topics.E, content: "late E 中文" }, "POST");
    expectBrokerError(r, "E", 200202, "the transaction does not correctly executed.");
  });

  it("every timed-out event lands with sequence number 1 once the indexer is back", async () => {
    await sys.restart("indexer-1");
    for (const v of ["L", "M", "E"] as const) {
      const topic = topics[v];
      let state: { sequenceNumber: number; blockNumber: number } | undefined;
      await waitUntil(`${topic} has its event`, async () => {
        state = expectSuccess(await rest(base, "L", "state", { topic }), "L") as typeof state;
        return (state?.sequenceNumber ?? 0) > 0;
      });
      expect(state?.sequenceNumber).toBe(1);
      const eventId = `${topicHash8(topic)}-1-${state?.blockNumber}`;
      const ev = expectSuccess(await rest(base, "L", "getEvent", { eventId }), "L") as { topic: string; content: string };
      expect(ev.topic).toBe(topic);
      expect(Buffer.from(ev.content, "base64").toString("utf8")).toBe(`late ${v} 中文`);
    }
  });

  it("the next publish succeeds with sequence number 2", async () => {
    const r = await rest(base, "L", "publish", { topic: topics.L, content: "on time" }, "POST");
    expect(r.json).toEqual({
      status: "SUCCESS",
      topic: topics.L,
      eventId: expect.stringMatching(new RegExp(`^${topicHash8(topics.L)}-2-\\d+$`)),
    });
  });
});
