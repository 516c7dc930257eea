import type { IConnectPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { connectTerms, sessionExpiry } from "./mqtt-connect.ts";
import { Reason } from "./mqtt-replies.ts";

const LIMITS = { sessionExpiryMaxMs: 60_000, maxInflight: 100 };
const GROUPS = new Set(["1", "2"]);
const connect = (p: Partial<IConnectPacket>): IConnectPacket => ({
  cmd: "connect",
  clientId: "c",
  protocolVersion: 4,
  clean: true,
  keepalive: 30,
  ...p,
});
const terms = (p: Partial<IConnectPacket>) => connectTerms(connect(p), GROUPS, LIMITS, () => "fresh");

describe("connectTerms", () => {
  it("3.1.1: group 1, keep-alive in ms, a persistent session kept for the longest the broker keeps any", () => {
    expect(terms({ clean: false })).toMatchObject({
      version: 4,
      clientId: "c",
      group: "1",
      keepAliveMs: 30_000,
      expiryMs: 60_000,
      window: 100,
    });
    expect(terms({})).toMatchObject({ clean: true, expiryMs: 0 });
  });

  it("an empty client id is assigned for a clean 3.1.1 session and for MQTT 5, refused otherwise", () => {
    expect(terms({ clientId: "" })).toMatchObject({ clientId: "fresh", assigned: true });
    expect(terms({ clientId: "", protocolVersion: 5, clean: false })).toMatchObject({ clientId: "fresh" });
    expect(terms({ clientId: "", clean: false })).toMatchObject({ reason: Reason.CLIENT_ID_INVALID });
    expect(terms({ clientId: "", protocolVersion: 3 })).toMatchObject({ reason: Reason.CLIENT_ID_INVALID });
    expect(terms({ clientId: "x".repeat(24), protocolVersion: 3 })).toMatchObject({ reason: Reason.CLIENT_ID_INVALID });
    expect(terms({ clientId: "x".repeat(24) })).toMatchObject({ clientId: "x".repeat(24) });
  });

  it("MQTT 5: the groupId user property picks the group; an unknown one is refused with the broker's error", () => {
    expect(terms({ protocolVersion: 5, properties: { userProperties: { groupId: "2" } } })).toMatchObject({ group: "2" });
    expect(terms({ protocolVersion: 5, properties: { userProperties: { groupId: "9" } } })).toMatchObject({
      reason: Reason.UNSPECIFIED,
      message: "unknown group id (200211)",
    });
  });

  it("MQTT 5: Receive Maximum narrows the window; Maximum Packet Size and the will are kept", () => {
    const t = terms({
      protocolVersion: 5,
      properties: { receiveMaximum: 3, maximumPacketSize: 500 },
      will: { topic: "w", payload: Buffer.from("bye"), qos: 0, retain: false },
    });
    expect(t).toMatchObject({ window: 3, maxPacketToClient: 500, will: { topic: "w", payload: Buffer.from("bye") } });
  });

  it("session expiry: MQTT 5's interval in seconds, capped (and said so), never-expires capped too", () => {
    expect(sessionExpiry(5, true, 10, 60_000)).toEqual({ expiryMs: 10_000, expiryCapped: false });
    expect(sessionExpiry(5, false, undefined, 60_000)).toEqual({ expiryMs: 0, expiryCapped: false });
    expect(sessionExpiry(5, false, 0xffffffff, 60_000)).toEqual({ expiryMs: 60_000, expiryCapped: true });
    expect(sessionExpiry(4, false, undefined, 60_000)).toEqual({ expiryMs: 60_000, expiryCapped: false });
  });
});
