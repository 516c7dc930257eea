import { describe, expect, it } from "vitest";
import { NEUTRAL_SPELLING, Spelling } from "./spelling.ts";

const WEEVENT = new Spelling("weevent");

/** Every branded name of protocols.md 8 besides the prefix itself. */
const NAMES = ["format", "tag", "subscriptionId", "ephemeral", "sign", "file", "plus", "willmessage"];

describe("Spelling", () => {
  it("spells every name of protocols.md 8 in the original's exact form under BRAND=weevent, and keeps it under the neutral brand", () => {
    for (const n of NAMES) {
      expect(WEEVENT.name(`event-${n}`)).toBe(`weevent-${n}`);
      expect(NEUTRAL_SPELLING.name(`event-${n}`)).toBe(`event-${n}`);
    }
    expect(WEEVENT.name("event-subscriptionId")).toBe("weevent-subscriptionId");
    expect(WEEVENT.prefix).toBe("weevent-");
    expect(NEUTRAL_SPELLING.prefix).toBe("event-");
  });

  it("leaves unbranded names alone (protocols.md 8: eventId, groupId, subscription-id, …)", () => {
    for (const n of ["eventId", "groupId", "subscription-id", "simpSubscriptionId", "destination", "events-x"]) {
      expect(WEEVENT.name(n)).toBe(n);
    }
  });

  it("gives the one plus key in this deployment's spelling", () => {
    expect(NEUTRAL_SPELLING.plusKey).toBe("event-plus");
    expect(WEEVENT.plusKey).toBe("weevent-plus");
  });

  it("reads rest/publish parameters with this deployment's prefix only, case-sensitively", () => {
    expect(NEUTRAL_SPELLING.isParameterExtension("event-tag")).toBe(true);
    expect(NEUTRAL_SPELLING.isParameterExtension("weevent-tag")).toBe(false);
    expect(WEEVENT.isParameterExtension("weevent-tag")).toBe(true);
    expect(WEEVENT.isParameterExtension("event-tag")).toBe(false);
    expect(WEEVENT.isParameterExtension("WeEvent-tag")).toBe(false);
  });

  it("reads STOMP headers in the neutral spelling only by default; both under BRAND=weevent, the original's first", () => {
    expect(NEUTRAL_SPELLING.isHeaderExtension("event-tag")).toBe(true);
    expect(NEUTRAL_SPELLING.isHeaderExtension("weevent-tag")).toBe(false);
    expect(WEEVENT.isHeaderExtension("event-tag")).toBe(true);
    expect(WEEVENT.isHeaderExtension("weevent-tag")).toBe(true);
    for (const s of [NEUTRAL_SPELLING, WEEVENT]) expect(s.isHeaderExtension("receipt")).toBe(false);
    expect(NEUTRAL_SPELLING.spellings("event-subscriptionId")).toEqual(["event-subscriptionId"]);
    expect(WEEVENT.spellings("event-subscriptionId")).toEqual(["weevent-subscriptionId", "event-subscriptionId"]);
  });

  it("shows stored extensions unchanged under the neutral brand (the same object)", () => {
    const stored = { "event-tag": "a", "weevent-format": "b", other: "c" };
    expect(NEUTRAL_SPELLING.shown(stored)).toBe(stored);
  });

  it("shows neutral stored names in the original spelling under BRAND=weevent; a name stored in both spellings shows the original's value", () => {
    expect(WEEVENT.shown({ "event-tag": "a", "weevent-format": "b", other: "c" })).toEqual({
      "weevent-tag": "a",
      "weevent-format": "b",
      other: "c",
    });
    expect(WEEVENT.shown({ "event-tag": "neutral", "weevent-tag": "original" })).toEqual({ "weevent-tag": "original" });
    expect(WEEVENT.shown({ "weevent-tag": "original", "event-tag": "neutral" })).toEqual({ "weevent-tag": "original" });
  });

  it("names the stored keys a tag header matches: itself when neutral, both spellings (original first) under BRAND=weevent", () => {
    expect(NEUTRAL_SPELLING.storedKeys("weevent-tag")).toEqual(["weevent-tag"]);
    expect(NEUTRAL_SPELLING.storedKeys("event-tag")).toEqual(["event-tag"]);
    expect(WEEVENT.storedKeys("weevent-tag")).toEqual(["weevent-tag", "event-tag"]);
    expect(WEEVENT.storedKeys("event-tag")).toEqual(["weevent-tag", "event-tag"]);
  });

  it("answers a key without either prefix with 100206 in this deployment's words", () => {
    expect(NEUTRAL_SPELLING.checkKeys({ "event-a": "" })).toBeNull();
    expect(NEUTRAL_SPELLING.checkKeys({ "weevent-b": "" })?.code).toBe(100206);
    expect(WEEVENT.checkKeys({ "event-a": "", "weevent-b": "" })).toBeNull();
    const neutral = NEUTRAL_SPELLING.checkKeys({ format: "json" });
    expect(neutral?.code).toBe(100206);
    expect(neutral?.wireMessage).toBe("event extensions key not startwith event-");
    expect(WEEVENT.checkKeys({ format: "json" })?.wireMessage).toBe("event extensions key not startwith weevent-");
  });

  it("respells only the bare prefix in a text, not words that merely begin with it", () => {
    expect(WEEVENT.text("key not startwith event-")).toBe("key not startwith weevent-");
    expect(WEEVENT.text("event content is blank")).toBe("event content is blank");
    expect(WEEVENT.text("event-tag is event-ish")).toBe("event-tag is event-ish");
  });

  it("names the JSON-RPC broker error's Java class in the brand's spelling: the original client loads only its own", () => {
    expect(WEEVENT.brokerExceptionClass).toBe("com.webank.weevent.sdk.BrokerException");
    expect(NEUTRAL_SPELLING.brokerExceptionClass).toBe("com.webank.event.sdk.BrokerException");
  });
});
