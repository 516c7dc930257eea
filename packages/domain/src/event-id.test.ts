import { describe, expect, it } from "vitest";
import { formatEventId, parseEventId, topicHash8 } from "./event-id.ts";

describe("eventId", () => {
  it("hash8 is the first 8 hex of SHA-256 of the topic", () => {
    expect(topicHash8("hello")).toBe("2cf24dba");
    expect(topicHash8("com.event.test")).toBe("4cf7f4cc");
    // A second time from the remembered answers.
    expect(topicHash8("hello")).toBe("2cf24dba");
  });

  it("formats <hash8>-<seq>-<block>", () => {
    expect(formatEventId("com.event.test", 12, 3456)).toBe("4cf7f4cc-12-3456");
  });

  it.each([
    ["abcdefghij", 100302],
    [" ", 100302],
    ["", 100302],
    ["a".repeat(65), 100301],
    ["abcdefgh-1-", 100302],
    ["abcdefg-1-2", 100302],
    ["abcdefgh-0-2", 100302],
    ["abcdefgh-1-x", 100302],
    ["abcdefgh-1-99999999999999999999", 100302],
  ])("rejects %j with %i", (id, code) => {
    const r = parseEventId(id);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe(code);
  });

  it("keeps middle empty parts and drops trailing ones like Java split", () => {
    const r = parseEventId("abcdefgh-1-2-");
    expect(r.ok && r.value.block).toBe(2n);
    expect(parseEventId("abcdefgh--1-2").ok).toBe(false);
  });

  it("reads digits of any script as Java does (Arabic-Indic ٣ is 3, mathematical 𝟗 is 9)", () => {
    const r = parseEventId("abcdefgh-\u0663-\u{1D7D7}");
    expect(r.ok && [r.value.seq, r.value.block]).toEqual([3n, 9n]);
    expect(parseEventId("abcdefgh-\u0660-1").ok).toBe(false); // ٠ is zero: not positive
  });

  it("accepts +5 and 007 forms, which only the exact lookup later rejects", () => {
    const r = parseEventId("abcdefgh-+5-007");
    expect(r.ok && [r.value.seq, r.value.block]).toEqual([5n, 7n]);
  });
});
