import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Variant } from "@evb/domain";
import { ALL_VARIANTS, expectBrokerError, expectSuccess, genericCodeOf, rest, uniqueTopic } from "./support/broker-expect.ts";
import { TestSystem } from "./support/system.ts";

const NINE_KEYS = [
  "topicName",
  "topicAddress",
  "senderAddress",
  "createdTimestamp",
  "sequenceNumber",
  "blockNumber",
  "lastTimestamp",
  "lastSender",
  "lastBlock",
];
// The seed's TopicState fields per variant win over behaviour.md 6.2 (section 0): M has six.
const M_KEYS = NINE_KEYS.slice(0, 6);
const E_KEYS = ["topicName", "topicAddress", "senderAddress", "createdTimestamp"];
const ADDRESS = /^0x[0-9a-f]{40}$/;

const TOPIC_ERRORS: [string, string, number, string][] = [
  ["empty", "", 100103, "topic name is blank"],
  ["spaces only", "   ", 100103, "topic name is blank"],
  ["ideographic space only", "\u3000", 100103, "topic name is blank"],
  ["65 characters", "a".repeat(65), 100102, "topic name exceeds max length[64 bytes]"],
  ["70 Chinese characters", "中".repeat(70), 100102, "topic name exceeds max length[64 bytes]"],
  ["Chinese", "中国", 100106, "topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#)"],
  ["a + wildcard", "a+b", 100106, "topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#)"],
  ["a # wildcard", "a#b", 100106, "topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#)"],
  ["a control character", "a\u001fb", 100106, "topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#)"],
  ["a trailing slash", "a/b/", 100106, "topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#)"],
];

// Crash survived: none (validation, replies and paging of the topic operations).
describe("topic operations over HTTP", () => {
  let sys: TestSystem;
  let base: string;
  beforeAll(async () => {
    sys = await TestSystem.start({ env: { GROUP_IDS: "1,2,3" } });
    base = sys.gatewayUrl;
  });
  afterAll(async () => {
    await sys?.stop();
  });

  const open = (v: Variant, topic: string, extra: Record<string, string> = {}) => rest(base, v, "open", { topic, ...extra });

  describe("open, close, exist", () => {
    it("open answers true in every variant's shape, and opening again is true too", async () => {
      const topic = uniqueTopic("open");
      expect((await open("L", topic)).json).toEqual({ code: 0, message: "success", data: true });
      expect((await open("L", topic)).json).toEqual({ code: 0, message: "success", data: true });
      expect(expectSuccess(await open("M", topic), "M")).toBe(true);
      expect(expectSuccess(await open("E", topic), "E")).toBe(true);
    });

    it("exist is false (not an error) before open and true after, as a JSON boolean", async () => {
      const topic = uniqueTopic("exist");
      expect((await rest(base, "L", "exist", { topic })).json).toEqual({ code: 0, message: "success", data: false });
      expect(expectSuccess(await rest(base, "M", "exist", { topic }), "M")).toBe(false);
      expect(expectSuccess(await rest(base, "E", "exist", { topic }), "E")).toBe(false);
      await open("L", topic);
      for (const v of ALL_VARIANTS) expect(expectSuccess(await rest(base, v, "exist", { topic }), v)).toBe(true);
    });

    it("close of an existing topic is true and changes nothing", async () => {
      const topic = uniqueTopic("close");
      await open("M", topic);
      for (const v of ALL_VARIANTS) expect(expectSuccess(await rest(base, v, "close", { topic }), v)).toBe(true);
      expect(expectSuccess(await rest(base, "E", "exist", { topic }), "E")).toBe(true);
    });

    it.each(ALL_VARIANTS)("%s: close and state of a missing topic answer 100101", async (v) => {
      const topic = uniqueTopic("missing");
      expectBrokerError(await rest(base, v, "close", { topic }), v, 100101, "topic not exist");
      expectBrokerError(await rest(base, v, "state", { topic }), v, 100101, "topic not exist");
    });

    it("concurrent opens of one new topic all answer true and create it once", async () => {
      const topic = uniqueTopic("race");
      const replies = await Promise.all(Array.from({ length: 8 }, () => open("L", topic)));
      for (const r of replies) expect(r.json).toEqual({ code: 0, message: "success", data: true });
      const page = expectSuccess(await rest(base, "L", "list", { pageIndex: "0", pageSize: "100" }), "L") as {
        topicInfoList: { topicName: string }[];
      };
      expect(page.topicInfoList.filter((t) => t.topicName === topic)).toHaveLength(1);
    });

    it.each(["/a", "a//b", "a b", " leading-space", "del\u007f", "c128\u0080", "x".repeat(64)])(
      "the legal name %j opens and reads back exactly",
      async (name) => {
        // Group 2 keeps these fixed names apart from the other tests' topics.
        expect(expectSuccess(await open("L", name, { groupId: "2" }), "L")).toBe(true);
        const state = expectSuccess(await rest(base, "M", "state", { topic: name, groupId: "2" }), "M") as { topicName: string };
        expect(state.topicName).toBe(name);
      },
    );

    it("topic names are case-sensitive and groups are separate namespaces", async () => {
      const topic = uniqueTopic("Case");
      await open("L", topic, { groupId: "2" });
      expect(expectSuccess(await rest(base, "L", "exist", { topic: topic.toLowerCase(), groupId: "2" }), "L")).toBe(false);
      expect(expectSuccess(await rest(base, "L", "exist", { topic }), "L")).toBe(false);
      expect(expectSuccess(await rest(base, "L", "exist", { topic, groupId: "2" }), "L")).toBe(true);
    });
  });

  describe("name validation (behaviour.md 5.1), in every variant and operation", () => {
    for (const op of ["open", "close", "exist", "state"]) {
      it.each(TOPIC_ERRORS)(`${op}: %s → %i`, async (_label, topic, code, message) => {
        for (const v of ALL_VARIANTS) expectBrokerError(await rest(base, v, op, { topic }), v, code, message);
      });

      it(`${op}: an absent topic parameter is the generic missing-parameter error`, async () => {
        for (const v of ALL_VARIANTS) {
          expectBrokerError(await rest(base, v, op), v, genericCodeOf(v), "Required String parameter 'topic' is not present");
        }
      });
    }

    it("validation comes before the existence check: a bad name that was never opened is 100106, not 100101", async () => {
      expectBrokerError(await rest(base, "L", "close", { topic: "a#b" }), "L", 100106);
    });
  });

  describe("group checks (behaviour.md 4)", () => {
    it.each(["open", "close", "exist", "state"])("L and M: %s checks the group before the topic", async (op) => {
      for (const v of ["L", "M"] as const) {
        expectBrokerError(await rest(base, v, op, { topic: "", groupId: "99" }), v, 200211, "unknown group id");
        expectBrokerError(await rest(base, v, op, { topic: "ok", groupId: "abc" }), v, 200211, "unknown group id");
      }
    });

    it.each(["open", "close", "exist"])("E: %s checks the topic before the group", async (op) => {
      expectBrokerError(await rest(base, "E", op, { topic: "", groupId: "99" }), "E", 100103);
      expectBrokerError(await rest(base, "E", op, { topic: "ok", groupId: "99" }), "E", 200211, "unknown group id");
    });

    it("E: state checks the group before the topic, and a non-numeric group is 100306", async () => {
      expectBrokerError(await rest(base, "E", "state", { topic: "", groupId: "99" }), "E", 200211);
      expectBrokerError(
        await rest(base, "E", "state", { topic: "ok", groupId: "abc" }),
        "E",
        100306,
        "event group id should be a string start from 1",
      );
    });

    it("a blank groupId means group 1", async () => {
      const topic = uniqueTopic("blankgroup");
      await open("L", topic, { groupId: " " });
      expect(expectSuccess(await rest(base, "E", "exist", { topic, groupId: "" }), "E")).toBe(true);
      expect(expectSuccess(await rest(base, "M", "exist", { topic, groupId: "1" }), "M")).toBe(true);
    });
  });

  describe("state (behaviour.md 6.2)", () => {
    it("L: nine keys and M: six keys in order, topicAddress/lastSender/lastBlock null, counters 0 before any publish", async () => {
      const topic = uniqueTopic("state");
      const before = Date.now();
      await open("L", topic);
      for (const v of ["L", "M"] as const) {
        const s = expectSuccess(await rest(base, v, "state", { topic }), v) as Record<string, unknown>;
        expect(Object.keys(s)).toEqual(v === "L" ? NINE_KEYS : M_KEYS);
        expect(s).toMatchObject({ topicName: topic, topicAddress: null, sequenceNumber: 0, blockNumber: 0 });
        if (v === "L") expect(s).toMatchObject({ lastTimestamp: 0, lastSender: null, lastBlock: null });
        expect(s.senderAddress).toMatch(ADDRESS);
        expect(s.createdTimestamp).toBeGreaterThanOrEqual(before - 1000);
        expect(String(s.createdTimestamp)).toMatch(/^\d{13}$/);
      }
    });

    it("E: the four TopicInfo keys with a 0x + 40 hex topic address", async () => {
      const topic = uniqueTopic("stateE");
      await open("E", topic);
      const s = expectSuccess(await rest(base, "E", "state", { topic }), "E") as Record<string, unknown>;
      expect(Object.keys(s)).toEqual(E_KEYS);
      expect(s.topicName).toBe(topic);
      expect(s.topicAddress).toMatch(ADDRESS);
      expect(s.senderAddress).toMatch(ADDRESS);
      expect(typeof s.createdTimestamp).toBe("number");
    });

    it("counts publishes and reports the last block, read fresh", async () => {
      const topic = uniqueTopic("counted");
      await open("L", topic);
      let lastId = "";
      for (let i = 0; i < 2; i++) {
        const pub = await rest(base, "L", "publish", { topic, content: `n${i}` }, "POST");
        expect(pub.json).toMatchObject({ status: "SUCCESS" });
        lastId = (pub.json as { eventId: string }).eventId;
      }
      const s = expectSuccess(await rest(base, "L", "state", { topic }), "L") as Record<string, number>;
      expect(s.sequenceNumber).toBe(2);
      expect(s.blockNumber).toBe(Number(lastId.split("-")[2]));
      expect(s.lastTimestamp).toBeGreaterThanOrEqual(s.createdTimestamp as number);
    });
  });

  describe("list paging (behaviour.md 6.3)", () => {
    const names = Array.from({ length: 5 }, (_, i) => `paged-${i}-${Math.random().toString(36).slice(2, 6)}`);
    // Group 3 holds only these five topics, opened in this order.
    beforeAll(async () => {
      for (const topic of names) await open("M", topic, { groupId: "3" });
    });
    const list = (v: Variant, pageIndex: string, pageSize: string, extra: Record<string, string> = {}) =>
      rest(base, v, "list", { pageIndex, pageSize, groupId: "3", ...extra });
    type Page = { total: number; pageIndex: number; pageSize: number; topicInfoList: { topicName: string }[] };

    it("pages in creation order; M and L report the items on the page as pageSize", async () => {
      for (const v of ["L", "M"] as const) {
        const p0 = expectSuccess(await list(v, "0", "2"), v) as Page;
        expect(Object.keys(p0)).toEqual(["total", "pageIndex", "pageSize", "topicInfoList"]);
        expect(p0).toMatchObject({ total: 5, pageIndex: 0, pageSize: 2 });
        expect(p0.topicInfoList.map((t) => t.topicName)).toEqual(names.slice(0, 2));
        const p2 = expectSuccess(await list(v, "2", "2"), v) as Page;
        expect(p2).toMatchObject({ total: 5, pageIndex: 2, pageSize: 1 });
        expect(p2.topicInfoList.map((t) => t.topicName)).toEqual(names.slice(4));
        const all = expectSuccess(await list(v, "0", "100"), v) as Page;
        expect(all.topicInfoList.map((t) => t.topicName)).toEqual(names);
        for (const item of all.topicInfoList) expect(Object.keys(item)).toEqual(v === "L" ? NINE_KEYS : M_KEYS);
      }
    });

    it("E echoes the requested pageSize and lists the four TopicInfo keys", async () => {
      const p = expectSuccess(await list("E", "2", "2"), "E") as Page;
      expect(p).toMatchObject({ total: 5, pageIndex: 2, pageSize: 2 });
      expect(p.topicInfoList.map((t) => t.topicName)).toEqual(names.slice(4));
      expect(Object.keys(p.topicInfoList[0] as object)).toEqual(E_KEYS);
    });

    it("a page past the end is an empty success", async () => {
      expect((await list("L", "5", "10")).json).toEqual({
        code: 0,
        message: "success",
        data: { total: 5, pageIndex: 5, pageSize: 0, topicInfoList: [] },
      });
      expect((await list("M", "5", "10")).json).toEqual({ total: 5, pageIndex: 5, pageSize: 0, topicInfoList: [] });
      expect((await list("E", "5", "10")).json).toEqual({ total: 5, pageIndex: 5, pageSize: 10, topicInfoList: [] });
      expect((await list("L", "2147483647", "100")).json).toMatchObject({ data: { total: 5, pageSize: 0, topicInfoList: [] } });
    });

    it.each<[string, string, string, number]>([
      ["pageIndex -1", "-1", "10", 100104],
      ["pageIndex empty", "", "10", 100104],
      ["pageSize 0", "0", "0", 100107],
      ["pageSize -1", "0", "-1", 100107],
      ["pageSize 101", "0", "101", 100107],
      ["pageSize empty", "0", "", 100107],
      ["both bad: pageIndex first", "-1", "0", 100104],
    ])("%s → %i", async (_label, pageIndex, pageSize, code) => {
      const message = code === 100104 ? "page index should be an integer start from 0" : "page size should be an integer in(1, 100)";
      for (const v of ALL_VARIANTS) expectBrokerError(await list(v, pageIndex, pageSize), v, code, message);
    });

    it("accepts pageSize 1 and 100", async () => {
      expect((expectSuccess(await list("L", "0", "1"), "L") as Page).topicInfoList).toHaveLength(1);
      expect((expectSuccess(await list("L", "0", "100"), "L") as Page).topicInfoList).toHaveLength(5);
    });

    it("checks paging before the group, then the group", async () => {
      for (const v of ALL_VARIANTS) {
        expectBrokerError(await list(v, "0", "0", { groupId: "99" }), v, 100107);
        expectBrokerError(await list(v, "0", "10", { groupId: "99" }), v, 200211);
      }
      expectBrokerError(await list("E", "0", "10", { groupId: "abc" }), "E", 100306);
      expectBrokerError(await list("M", "0", "10", { groupId: "abc" }), "M", 200211);
    });

    it("absent and non-integer paging parameters are the generic code with Spring's message", async () => {
      for (const v of ALL_VARIANTS) {
        const g = genericCodeOf(v);
        expectBrokerError(await rest(base, v, "list", { pageSize: "10" }), v, g, "Required Integer parameter 'pageIndex' is not present");
        expectBrokerError(await rest(base, v, "list", { pageIndex: "0" }), v, g, "Required Integer parameter 'pageSize' is not present");
        expectBrokerError(
          await rest(base, v, "list", { pageIndex: "abc", pageSize: "10" }),
          v,
          g,
          `Failed to convert value of type 'java.lang.String' to required type 'java.lang.Integer'; nested exception is java.lang.NumberFormatException: For input string: "abc"`,
        );
        expectBrokerError(await rest(base, v, "list", { pageIndex: "0", pageSize: "1.5" }), v, g);
        expectBrokerError(await rest(base, v, "list", { pageIndex: "99999999999", pageSize: "10" }), v, g);
      }
    });
  });
});
