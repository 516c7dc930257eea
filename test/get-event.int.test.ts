import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topicHash8, type Variant } from "@evb/domain";
import {
  ALL_VARIANTS,
  expectBrokerError,
  expectJson200,
  expectSuccess,
  genericCodeOf,
  rest,
  uniqueTopic,
} from "./support/broker-expect.ts";
import { TestSystem } from "./support/system.ts";

const HEIGHT_FAILED = "get block height failed due to InterruptedException|ExecutionException|TimeoutException|RuntimeException";

// Crash survived: none (getEvent's checks and reply shapes on a healthy system).
describe("getEvent over HTTP", () => {
  let sys: TestSystem;
  let base: string;
  let topic: string;
  let eventId: string;
  let plainId: string;
  let height: number;
  beforeAll(async () => {
    // Group 3 is configured but never written: its height reads 0.
    sys = await TestSystem.start({ env: { GROUP_IDS: "1,2,3" } });
    base = sys.gatewayUrl;
    topic = uniqueTopic("get");
    await rest(base, "L", "open", { topic });
    const pub = await rest(base, "L", "publish", { topic, content: "hello", "event-format": "json", "event-plus": "client value" }, "POST");
    eventId = (pub.json as { eventId: string }).eventId;
    const plain = await rest(base, "L", "publish", { topic, content: "123456" }, "POST");
    plainId = (plain.json as { eventId: string }).eventId;
    height = Number(plainId.split("-")[2]);
  });
  afterAll(async () => {
    await sys?.stop();
  });
  const get = (v: Variant, id: string | undefined, extra: Record<string, string> = {}) =>
    rest(base, v, "getEvent", id === undefined ? extra : { eventId: id, ...extra });

  describe("the Event per variant", () => {
    it("L: topic, content, extensions (with event-plus as a JSON string), eventId", async () => {
      const ev = expectSuccess(await get("L", eventId), "L") as Record<string, unknown>;
      expect(Object.keys(ev)).toEqual(["topic", "content", "extensions", "eventId"]);
      expect(ev).toMatchObject({ topic, content: "aGVsbG8=", eventId });
      const ext = ev.extensions as Record<string, string>;
      expect(Object.keys(ext).sort()).toEqual(["event-format", "event-plus"]);
      expect(ext["event-format"]).toBe("json");
      // A client-supplied event-plus is overwritten on read.
      expect(typeof ext["event-plus"]).toBe("string");
      const plus = JSON.parse(ext["event-plus"] as string) as Record<string, unknown>;
      expect(Object.keys(plus)).toEqual(["timestamp", "height", "txHash", "sender"]);
      expect(String(plus.timestamp)).toMatch(/^\d{13}$/);
      expect(plus.height).toBe(Number(eventId.split("-")[2]));
      expect(plus.txHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(plus.sender).toMatch(/^0x[0-9a-f]{40}$/);
      const state = expectSuccess(await rest(base, "L", "state", { topic }), "L") as { senderAddress: string };
      // Same caller (127.0.0.1) created the topic and published: same address.
      expect(plus.sender).toBe(state.senderAddress);
    });

    it("L: an event published without extensions still carries event-plus", async () => {
      const ev = expectSuccess(await get("L", plainId), "L") as { content: string; extensions: Record<string, string> };
      expect(ev.content).toBe("MTIzNDU2");
      expect(Object.keys(ev.extensions)).toEqual(["event-plus"]);
    });

    it("M: bare Event with the extensions as published, no event-plus added", async () => {
      const ev = expectSuccess(await get("M", eventId), "M") as Record<string, unknown>;
      expect(Object.keys(ev)).toEqual(["topic", "content", "extensions", "eventId"]);
      expect(ev).toEqual({ topic, content: "aGVsbG8=", extensions: { "event-format": "json", "event-plus": "client value" }, eventId });
      expect((expectSuccess(await get("M", plainId), "M") as { extensions: unknown }).extensions).toEqual({});
    });

    it("E: bare Event without an extensions key", async () => {
      const ev = expectSuccess(await get("E", eventId), "E") as Record<string, unknown>;
      expect(Object.keys(ev)).toEqual(["topic", "content", "eventId"]);
      expect(ev).toEqual({ topic, content: "aGVsbG8=", eventId });
    });

    it("the id is sha256(topic)[0..8]-seq-block", () => {
      expect(eventId).toBe(`${topicHash8(topic)}-1-${eventId.split("-")[2]}`);
      expect(plainId.startsWith(`${topicHash8(topic)}-2-`)).toBe(true);
    });
  });

  describe("checks in the order of behaviour.md 7.5", () => {
    it.each(ALL_VARIANTS)("%s: an absent eventId is the generic missing-parameter error", async (v) => {
      expectBrokerError(await get(v, undefined), v, genericCodeOf(v), "Required String parameter 'eventId' is not present");
      expectBrokerError(await get(v, undefined, { groupId: "99" }), v, genericCodeOf(v));
    });

    it.each(ALL_VARIANTS)("%s: an unknown group is 200211 before the id is looked at", async (v) => {
      expectBrokerError(await get(v, "", { groupId: "99" }), v, 200211, "unknown group id");
      expectBrokerError(await get(v, eventId, { groupId: "99" }), v, 200211);
    });

    it("E: a non-numeric group is 100306; L and M call it unknown", async () => {
      expectBrokerError(await get("E", "", { groupId: "abc" }), "E", 100306, "event group id should be a string start from 1");
      expectBrokerError(await get("L", "", { groupId: "abc" }), "L", 200211);
      expectBrokerError(await get("M", "", { groupId: "abc" }), "M", 200211);
    });

    const illegal: [string, string][] = [
      ["empty", ""],
      ["a space", " "],
      ["65 spaces (blank is checked before length)", " ".repeat(65)],
      ["no dashes", "abcdefghij"],
      ["a trailing empty part (Java split drops it)", "abcdefgh-1-"],
      ["four parts", "abcdefgh--1-2"],
      ["a leading empty part", "-abcdefgh-1-2"],
      ["a 7-character first part", "abcdefg-1-2"],
      ["a 9-character first part", "abcdefghi-1-2"],
      ["seq 0", "abcdefgh-0-1"],
      ["negative seq", "abcdefgh--1-1"],
      ["block 0", "abcdefgh-1-0"],
      ["seq not a number", "abcdefgh-x-1"],
      ["block not a number", "abcdefgh-1-1.5"],
      ["block beyond 64 bits", "abcdefgh-1-99999999999999999999"],
      ["only dashes", "--"],
    ];
    it.each(illegal)("%s → 100302 in every variant", async (_label, id) => {
      for (const v of ALL_VARIANTS) expectBrokerError(await get(v, id), v, 100302, "eventId is illegal");
    });

    it("longer than 64 characters → 100301, checked before the shape", async () => {
      const long = `abcdefgh-1-${"1".repeat(54)}`;
      expect(long).toHaveLength(65);
      for (const v of ALL_VARIANTS) {
        expectBrokerError(await get(v, long), v, 100301, "eventId exceeds max length[64 bytes]");
        expectBrokerError(await get(v, "x".repeat(65)), v, 100301);
      }
    });

    it("64 characters pass the length check and go on to the height check", async () => {
      const id = `abcdefgh-1-${"1".repeat(53)}`;
      expect(id).toHaveLength(64);
      expectBrokerError(await get("L", id), "L", 100302); // beyond 64 bits
      const fits = `abcdefgh-${"0".repeat(44)}1-999999999`;
      expect(fits).toHaveLength(64);
      expectBrokerError(await get("L", fits), "L", 100304);
    });

    it.each(ALL_VARIANTS)("%s: a group with no block yet is 200205, after the syntax checks", async (v) => {
      expectBrokerError(await get(v, eventId, { groupId: "3" }), v, 200205, HEIGHT_FAILED);
      expectBrokerError(await get(v, "abcdefgh-1-", { groupId: "3" }), v, 100302);
    });

    it.each(ALL_VARIANTS)("%s: a block above the current height is 100304", async (v) => {
      expectBrokerError(await get(v, `${topicHash8(topic)}-1-${height + 1000}`), v, 100304, "eventId is mismatch with block chain");
      expectBrokerError(await get(v, "abcdefgh-1-9223372036854775807"), v, 100304);
    });

    it.each(ALL_VARIANTS)("%s: a well-formed id within the height that matches no event is 100303", async (v) => {
      const [hash8, seq, block] = eventId.split("-") as [string, string, string];
      const notFound = [
        `abcdefgh-${seq}-${block}`, // wrong hash8
        `${hash8}-${Number(seq) + 5}-${block}`, // seq not in that block
        `${hash8}-+${seq}-${block}`, // parses, but the lookup compares the whole string
        `${hash8}-0${seq}-${block}`,
        `${hash8}-${seq}-0${block}`,
        `${eventId}-`, // Java split drops the trailing part, so it reaches the lookup
        `${hash8.toUpperCase()}-${seq}-${block}`,
        `${hash8.slice(0, 7)}\u0000-${seq}-${block}`, // NUL cannot be stored, so it is simply not found
      ];
      for (const id of notFound) expectBrokerError(await get(v, id), v, 100303, "eventId is not exist");
    });

    it("an event of group 1 is not found through another group's chain", async () => {
      const t = uniqueTopic("g2");
      await rest(base, "L", "open", { topic: t, groupId: "2" });
      const pub = await rest(base, "L", "publish", { topic: t, content: "in group 2", groupId: "2" }, "POST");
      const g2Id = (pub.json as { eventId: string }).eventId;
      expect(expectJson200(await get("L", g2Id, { groupId: "2" }))).toMatchObject({ code: 0, data: { eventId: g2Id } });
      expectBrokerError(await get("L", eventId, { groupId: "2" }), "L", Number(eventId.split("-")[2]) > 1 ? 100304 : 100303);
    });
  });
});
