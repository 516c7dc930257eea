import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topicHash8, type Variant } from "@evb/domain";
import { ALL_VARIANTS, expectBrokerError, expectJson200, expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import type { CallResult } from "./support/http.ts";
import { TestSystem } from "./support/system.ts";

type SendResult = { status: string; topic: string; eventId: string | null };
type Event = { topic: string; content: string; extensions?: Record<string, string>; eventId: string };

/** A bare SendResult with its three keys in order and status SUCCESS. */
function expectSent(r: CallResult, topic: string): SendResult {
  const body = expectJson200(r) as SendResult;
  expect(Object.keys(body), r.text).toEqual(["status", "topic", "eventId"]);
  expect(body, r.text).toMatchObject({ status: "SUCCESS", topic });
  expect(body.eventId).toMatch(new RegExp(`^${topicHash8(topic)}-\\d+-\\d+$`));
  return body;
}

const idParts = (id: string) => id.split("-").slice(1).map(Number) as [number, number];
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

// Crash survived: none (publish validation, ids and round trips on a healthy system).
describe("publish over HTTP", () => {
  let sys: TestSystem;
  let base: string;
  const topics: Record<string, string> = {};
  beforeAll(async () => {
    sys = await TestSystem.start({ env: { GROUP_IDS: "1,2" } });
    base = sys.gatewayUrl;
    for (const t of ["main", "seq", "ext", "utf8", "big"]) {
      topics[t] = uniqueTopic(t);
      expect(expectSuccess(await rest(base, "L", "open", { topic: topics[t] as string }), "L")).toBe(true);
    }
  });
  afterAll(async () => {
    await sys?.stop();
  });
  const topic = (t: string) => topics[t] as string;
  const publish = (v: Variant, params: Record<string, string | string[]>, method: "GET" | "POST" | "PUT" = "POST") =>
    rest(base, v, "publish", params, method);
  const getEvent = async (eventId: string, v: Variant = "M") => expectSuccess(await rest(base, v, "getEvent", { eventId }), v) as Event;

  describe("success", () => {
    it("answers a bare SendResult in every variant, L included", async () => {
      for (const v of ALL_VARIANTS) expectSent(await publish(v, { topic: topic("main"), content: `hello ${v}` }), topic("main"));
    });

    it("gives each topic its own sequence from 1 and a block number that never decreases", async () => {
      const t = topic("seq");
      const ids: [number, number][] = [];
      for (let i = 0; i < 4; i++) ids.push(idParts(expectSent(await publish("L", { topic: t, content: "same" }), t).eventId as string));
      expect(ids.map(([seq]) => seq)).toEqual([1, 2, 3, 4]);
      for (let i = 1; i < ids.length; i++)
        expect((ids[i] as [number, number])[1]).toBeGreaterThanOrEqual((ids[i - 1] as [number, number])[1]);
      const state = expectSuccess(await rest(base, "L", "state", { topic: t }), "L") as Record<string, number>;
      expect(state.sequenceNumber).toBe(4);
      expect(state.blockNumber).toBe((ids[3] as [number, number])[1]);
    });

    it("the same content twice gives two events with different ids", async () => {
      const a = expectSent(await publish("M", { topic: topic("main"), content: "twice" }), topic("main"));
      const b = expectSent(await publish("M", { topic: topic("main"), content: "twice" }), topic("main"));
      expect(a.eventId).not.toBe(b.eventId);
    });

    it("works with GET (query string), POST (form body) and PUT", async () => {
      for (const method of ["GET", "POST", "PUT"] as const) {
        const sent = expectSent(await publish("L", { topic: topic("main"), content: `by ${method}` }, method), topic("main"));
        expect((await getEvent(sent.eventId as string)).content).toBe(b64(`by ${method}`));
      }
    });

    it("groupId selects the group; the default is 1", async () => {
      const t = uniqueTopic("group2");
      await rest(base, "L", "open", { topic: t, groupId: "2" });
      expectBrokerError(await publish("L", { topic: t, content: "x" }), "L", 100101, "topic not exist");
      const sent = expectSent(await publish("L", { topic: t, content: "x", groupId: "2" }), t);
      expect(idParts(sent.eventId as string)[0]).toBe(1);
      const e = expectSuccess(await rest(base, "M", "getEvent", { eventId: sent.eventId as string, groupId: "2" }), "M") as Event;
      expect(e.topic).toBe(t);
    });
  });

  describe("content and UTF-8", () => {
    it.each([
      ["Chinese", "中文内容，你好"],
      ["emoji", "emoji 🙂 and 𝄞"],
      ["reserved characters", "a+b&c=d%e#f?g/h 'q' \"d\""],
      ["newlines and tabs", "line1\nline2\r\n\tend"],
      ["JSON", '{"k":[1,2,{"x":null}]}'],
      ["NUL and control characters", "a\u0000b\u0001c\u007f"],
      ["a backslash escape lookalike", "\\u0000 and \\n"],
    ])("%s round-trips by GET and by POST; getEvent answers Base64 of the UTF-8 bytes", async (_label, content) => {
      for (const method of ["GET", "POST"] as const) {
        const sent = expectSent(await publish("L", { topic: topic("utf8"), content }, method), topic("utf8"));
        const ev = await getEvent(sent.eventId as string, "L");
        expect(ev.content).toBe(b64(content));
        expect(Buffer.from(ev.content, "base64").toString("utf8")).toBe(content);
      }
    });

    it("accepts 10240 UTF-16 code units by POST (30 KB of Chinese) and rejects 10241", async () => {
      const big = "中".repeat(10240);
      const sent = expectSent(await publish("L", { topic: topic("big"), content: big }), topic("big"));
      expect((await getEvent(sent.eventId as string)).content).toBe(b64(big));
      expectBrokerError(
        await publish("L", { topic: topic("big"), content: `${big}x` }),
        "L",
        100201,
        "event content exceeds max length[10k bytes]",
      );
      const ascii = "x".repeat(10240);
      expectSent(await publish("M", { topic: topic("big"), content: ascii }), topic("big"));
      expectBrokerError(await publish("M", { topic: topic("big"), content: `${ascii}x` }), "M", 100201);
    });

    it.each(ALL_VARIANTS)("%s: blank content is 100200", async (v) => {
      for (const content of ["", "   ", "\t\n", "\u3000"]) {
        expectBrokerError(await publish(v, { topic: topic("main"), content }), v, 100200, "event content is blank");
      }
    });
  });

  describe("extensions (behaviour.md 7.2)", () => {
    it("keeps exactly the event-* parameters, empty values included, first value of a repeated name", async () => {
      const sent = expectSent(
        await publish("M", {
          topic: topic("ext"),
          content: "x",
          "event-format": "json",
          "event-tag": "",
          "event-中文": "值",
          "event-rep": ["first", "second"],
          "Event-upper": "ignored",
          eventx: "ignored",
          other: "ignored",
        }),
        topic("ext"),
      );
      const ev = await getEvent(sent.eventId as string, "M");
      expect(ev.extensions).toEqual({ "event-format": "json", "event-tag": "", "event-中文": "值", "event-rep": "first" });
    });

    it("round-trips NUL, control characters and JSON lookalikes in extension keys and values", async () => {
      const ext = { "event-nul": "a\u0000b", "event-\u0001ctl": "\t\n", "event-json": '{"x":"\\u0000"}', 'event-q"': "'" };
      const sent = expectSent(await publish("L", { topic: topic("ext"), content: "x", ...ext }), topic("ext"));
      expect((await getEvent(sent.eventId as string, "M")).extensions).toEqual(ext);
    });

    it("accepts a rendering of exactly 1024 code units and rejects 1025", async () => {
      // Rendered as {event-a=<v>, event-bb=<w>}: 2 + (7 + 1 + |v|) + 2 + (8 + 1 + |w|) = 21 + |v| + |w|.
      const v = "v".repeat(500);
      const at = { "event-a": v, "event-bb": "w".repeat(1024 - 21 - 500) };
      const sent = expectSent(await publish("L", { topic: topic("ext"), content: "x", ...at }), topic("ext"));
      const ev = await getEvent(sent.eventId as string, "M");
      expect(ev.extensions).toEqual(at);
      const over = { ...at, "event-bb": `${at["event-bb"]}w` };
      for (const variant of ALL_VARIANTS) {
        expectBrokerError(
          await publish(variant, { topic: topic("ext"), content: "x", ...over }),
          variant,
          100204,
          "event extensions exceeds max length[1k bytes]",
        );
      }
    });

    it("counts UTF-16 code units of Chinese extension values, not bytes", async () => {
      const at = { "event-a": "值".repeat(1024 - 10) };
      expectSent(await publish("L", { topic: topic("ext"), content: "x", ...at }), topic("ext"));
      expectBrokerError(await publish("L", { topic: topic("ext"), content: "x", "event-a": `${at["event-a"]}值` }), "L", 100204);
    });
  });

  describe("checks and their order (behaviour.md 7.1)", () => {
    it.each(ALL_VARIANTS)("%s: an absent topic or content parameter is 100501, before anything else", async (v) => {
      expectBrokerError(await publish(v, { content: "x" }), v, 100501, "invalid url format");
      expectBrokerError(await publish(v, { topic: topic("main") }), v, 100501, "invalid url format");
      expectBrokerError(await publish(v, { topic: "", groupId: "99" }), v, 100501);
      expectBrokerError(await publish(v, {}), v, 100501);
    });

    it.each(ALL_VARIANTS)("%s: a missing topic is 100101, after the content and extension checks", async (v) => {
      const t = uniqueTopic("never-opened");
      expectBrokerError(await publish(v, { topic: t, content: "x" }), v, 100101, "topic not exist");
      expectBrokerError(await publish(v, { topic: t, content: " " }), v, 100200);
      expectBrokerError(await publish(v, { topic: t, content: "x", "event-a": "v".repeat(1100) }), v, 100204);
    });

    it.each(ALL_VARIANTS)("%s: the topic name is checked before the content", async (v) => {
      expectBrokerError(await publish(v, { topic: " ", content: "" }), v, 100103, "topic name is blank");
      expectBrokerError(await publish(v, { topic: "a".repeat(65), content: "" }), v, 100102);
      expectBrokerError(await publish(v, { topic: "a#b", content: "" }), v, 100106);
      expectBrokerError(await publish(v, { topic: "中国", content: "x" }), v, 100106);
    });

    it("L and M: an unknown group is 200211, before the topic name", async () => {
      for (const v of ["L", "M"] as const) {
        expectBrokerError(await publish(v, { topic: "a#b", content: "", groupId: "99" }), v, 200211, "unknown group id");
        expectBrokerError(await publish(v, { topic: topic("main"), content: "x", groupId: "abc" }), v, 200211);
      }
    });

    it("L and M: a blank groupId means group 1", async () => {
      expectSent(await publish("L", { topic: topic("main"), content: "x", groupId: "" }), topic("main"));
      expectSent(await publish("M", { topic: topic("main"), content: "x", groupId: "  " }), topic("main"));
    });

    it("E: a blank groupId is 100306 first; an unknown one comes after the event checks", async () => {
      const msg = "event group id should be a string start from 1";
      expectBrokerError(await publish("E", { topic: "a#b", content: "", groupId: "" }), "E", 100306, msg);
      expectBrokerError(await publish("E", { topic: "a#b", content: "x", groupId: "99" }), "E", 100106);
      expectBrokerError(await publish("E", { topic: topic("main"), content: "", groupId: "99" }), "E", 100200);
      expectBrokerError(await publish("E", { topic: topic("main"), content: "x", groupId: "abc" }), "E", 100306, msg);
      expectBrokerError(await publish("E", { topic: uniqueTopic("none"), content: "x", groupId: "99" }), "E", 200211);
      expectSent(await publish("E", { topic: topic("main"), content: "x", groupId: "1" }), topic("main"));
    });

    it("L errors are enveloped with data null while its success is bare", async () => {
      const r = await publish("L", { topic: uniqueTopic("none"), content: "x" });
      expect(r.json).toEqual({ code: 100101, message: "topic not exist", data: null });
    });
  });
});
