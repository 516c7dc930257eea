import { describe, expect, it } from "vitest";
import { NEUTRAL_SPELLING, Spelling } from "@evb/domain";
import type { FeedEvent } from "@evb/storage";
import { messageFrame } from "./stomp-replies.ts";
import { takesEvent } from "./subscribe-request.ts";

const event = (extensions: Record<string, string>): FeedEvent => ({
  height: 3,
  idx: 0,
  eventId: "abcd0123-1-3",
  topic: "t",
  content: Buffer.from("hi"),
  extensions,
  sender: "0x01",
  txHash: "0x02",
  timestampMs: 1_700_000_000_000,
});

/** The header lines of a frame's text (the values here hold no escapes that matter). */
const headers = (text: string) =>
  (text.split("\n\n")[0] as string)
    .split("\n")
    .slice(1)
    .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1)] as const);
const headerNames = (text: string) => headers(text).map(([k]) => k);
const to = { handle: "1", subscriptionId: "s" };

describe("messageFrame spelling (protocols.md 8)", () => {
  const stored = { "event-tag": "a", "weevent-format": "json", "event-plus": "client value" };

  it("by default writes stored names as they are and event-plus alone (interface.md's wire: no weevent-plus)", () => {
    expect(headerNames(messageFrame(to, event(stored), NEUTRAL_SPELLING))).toEqual([
      "subscription",
      "subscription-id",
      "message-id",
      "destination",
      "content-type",
      "event-tag",
      "weevent-format",
      "event-plus",
      "eventId",
      "content-length",
    ]);
  });

  it("under BRAND=weevent writes every extension and the plus header in the original spelling only", () => {
    const text = messageFrame(to, event(stored), new Spelling("weevent"));
    expect(headerNames(text)).toEqual([
      "subscription",
      "subscription-id",
      "message-id",
      "destination",
      "content-type",
      "weevent-tag",
      "weevent-format",
      "weevent-plus",
      "eventId",
      "content-length",
    ]);
    const plus = headers(text).find(([k]) => k === "weevent-plus")?.[1] as string;
    expect(JSON.parse(plus.replaceAll("\\c", ":"))).toEqual({ timestamp: 1_700_000_000_000, height: 3, txHash: "0x02", sender: "0x01" });
  });
});

describe("a SUBSCRIBE tag under BRAND=weevent", () => {
  const weevent = new Spelling("weevent");
  const filter = { items: ["t"], tag: { keys: weevent.storedKeys("weevent-tag"), value: "x" } };

  it("takes events tagged in either stored spelling, as MESSAGE shows both as weevent-tag", () => {
    expect(takesEvent(filter, "t", { "weevent-tag": "x" })).toBe(true);
    expect(takesEvent(filter, "t", { "event-tag": "x" })).toBe(true);
    expect(takesEvent(filter, "t", { "event-tag": "y" })).toBe(false);
    expect(takesEvent(filter, "t", { "weevent-tag": "x", "event-tag": "y" })).toBe(true);
  });
});
