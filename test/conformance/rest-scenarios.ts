import { expect, it } from "vitest";
import { expectJson200, uniqueTopic } from "../support/broker-expect.ts";
import { expectBrokerError, expectOk, expectShape, type MountCase, missingParam } from "./conformance-support.ts";
import type { World } from "./world.ts";

// The seed's TopicState fields per variant win over behaviour.md 6.2 (section 0): M has six.
const TOPIC_STATE_M = {
  topicName: "string",
  topicAddress: "null",
  senderAddress: "string",
  createdTimestamp: "number",
  sequenceNumber: "number",
  blockNumber: "number",
} as const;
const TOPIC_STATE_L = { ...TOPIC_STATE_M, lastTimestamp: "number", lastSender: "null", lastBlock: "null" } as const;
const TOPIC_INFO_E = { topicName: "string", topicAddress: "string", senderAddress: "string", createdTimestamp: "number" } as const;

/** REST operations every variant has: envelope, record fields, JSON types and errors per variant. */
export function restScenarios(m: MountCase, w: () => World): void {
  const v = m.variant;
  const rest = (op: string, params: Record<string, string> = {}, method: "GET" | "POST" = "GET") =>
    w().ctx.call(m, `rest/${op}`, params, method);

  it("open, exist and close answer JSON booleans, enveloped only in L", async () => {
    const topic = uniqueTopic(`conf.${v}`);
    for (const [op, want] of [
      ["exist", false],
      ["open", true],
      ["open", true],
      ["exist", true],
      ["close", true],
    ] as const) {
      expect(expectOk(await rest(op, { topic }), v, "rest"), op).toBe(want);
    }
  });

  it("state carries the variant's TopicState fields in order with their JSON types", async () => {
    const topic = uniqueTopic(`conf.${v}`);
    await rest("open", { topic });
    const pub = expectJson200(await rest("publish", { topic, content: "x" }, "POST")) as { status: string };
    expect(pub.status).toBe("SUCCESS");
    const state = expectOk(await rest("state", { topic }), v, "rest");
    const s = expectShape(state, v === "E" ? TOPIC_INFO_E : v === "M" ? TOPIC_STATE_M : TOPIC_STATE_L);
    expect(s.topicName).toBe(topic);
    expect(s.senderAddress).toMatch(/^0x[0-9a-f]{40}$/);
    expect(String(s.createdTimestamp)).toMatch(/^\d{13}$/);
    if (v === "E") expect(s.topicAddress).toMatch(/^0x[0-9a-f]{40}$/);
    else expect(s).toMatchObject({ sequenceNumber: 1 });
  });

  it("list answers a TopicPage whose items have the variant's fields", async () => {
    const page = expectShape(expectOk(await rest("list", { pageIndex: "0", pageSize: "2" }), v, "rest"), {
      total: "number",
      pageIndex: "number",
      pageSize: "number",
      topicInfoList: "array",
    });
    expect(page.pageIndex).toBe(0);
    for (const item of page.topicInfoList as unknown[])
      expectShape(item, v === "E" ? TOPIC_INFO_E : v === "M" ? TOPIC_STATE_M : TOPIC_STATE_L);
    const past = expectOk(await rest("list", { pageIndex: "999", pageSize: "7" }), v, "rest") as Record<string, unknown>;
    // M and L report the number of items on the page, E echoes the request (behaviour.md 6.3).
    expect(past).toMatchObject({ pageIndex: 999, pageSize: v === "E" ? 7 : 0, topicInfoList: [] });
  });

  it("publish answers a bare SendResult in every variant and fails in the variant's error shape", async () => {
    const topic = uniqueTopic(`conf.${v}`);
    await rest("open", { topic });
    const ok = expectJson200(await rest("publish", { topic, content: "hello" }, "POST"));
    expectShape(ok, { status: "string", topic: "string", eventId: "string" });
    expect(ok).toMatchObject({ status: "SUCCESS", topic });
    expectBrokerError(await rest("publish", { topic: uniqueTopic("missing"), content: "x" }, "POST"), v, 100101, "topic not exist");
  });

  it("getEvent: event-plus as a JSON string in L only; extensions absent in E", async () => {
    const topic = uniqueTopic(`conf.${v}`);
    await rest("open", { topic });
    const pub = expectJson200(await rest("publish", { topic, content: "hello", "event-format": "json" }, "POST")) as { eventId: string };
    const ev = expectOk(await rest("getEvent", { eventId: pub.eventId }), v, "rest");
    if (v === "E") {
      expectShape(ev, { topic: "string", content: "string", eventId: "string" });
    } else {
      const e = expectShape(ev, { topic: "string", content: "string", extensions: "object", eventId: "string" });
      const ext = e.extensions as Record<string, string>;
      expect(Object.keys(ext).sort()).toEqual(v === "L" ? ["event-format", "event-plus"] : ["event-format"]);
      if (v === "L") {
        const plus = JSON.parse(ext["event-plus"] as string);
        expectShape(plus, { timestamp: "number", height: "number", txHash: "string", sender: "string" });
        expect(plus.height).toBe(Number(pub.eventId.split("-")[2]));
      }
    }
    expect(ev).toMatchObject({ topic, content: "aGVsbG8=", eventId: pub.eventId });
  });

  it("a missing required parameter is the variant's generic code with the framework's message", async () => {
    const r = await rest("state");
    const want = missingParam(v, "String", "topic");
    expectBrokerError(r, v, want.code, want.message);
    const list = missingParam(v, "Integer", "pageIndex");
    expectBrokerError(await rest("list", { pageSize: "10" }), v, list.code, list.message);
  });

  it("groupId: blank is group 1, an unknown number is 200211, a non-number is the variant's code", async () => {
    const topic = uniqueTopic(`conf.${v}`);
    await rest("open", { topic });
    expect(expectOk(await rest("exist", { topic, groupId: " " }), v, "rest")).toBe(true);
    expectBrokerError(await rest("exist", { topic, groupId: "9" }), v, 200211, "unknown group id");
    if (v === "E")
      expectBrokerError(await rest("exist", { topic, groupId: "abc" }), v, 100306, "event group id should be a string start from 1");
    else expectBrokerError(await rest("exist", { topic, groupId: "abc" }), v, 200211, "unknown group id");
  });
}
