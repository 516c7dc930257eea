import { describe, expect, it } from "vitest";
import { redisKeys } from "./redis-keys.ts";

describe("redisKeys", () => {
  const keys = redisKeys("evb-x");
  const all = [
    keys.receiptChannel("gw-1"),
    keys.blocksChannel,
    keys.wakeChannel,
    keys.statsKey("10.0.0.1:8080"),
    keys.bullPrefix,
    keys.registry,
    keys.publishRateLimit("k1"),
    keys.stompGateways,
    keys.consoleHistory("1"),
    keys.testDeliveryChannel,
  ];

  it("puts every key and channel under the prefix, so one prefix isolates one deployment", () => {
    for (const k of all) expect(k.startsWith("evb-x:")).toBe(true);
  });

  it("gives every name its own namespace", () => {
    const firstSegment = all.map((k) => k.split(":")[1]);
    expect(new Set(firstSegment).size).toBe(all.length);
  });

  it("keeps the names deployed services already use", () => {
    expect(keys.receiptChannel("gw-1")).toBe("evb-x:receipt:gw-1");
    expect(keys.blocksChannel).toBe("evb-x:blocks");
    expect(keys.wakeChannel).toBe("evb-x:subscription-wake");
    expect(keys.statsKey("n")).toBe("evb-x:subscription-stats:n");
    expect(keys.bullPrefix).toBe("evb-x:bull");
    expect(keys.registry).toBe("evb-x:registry");
    expect(keys.publishRateLimit("k1")).toBe("evb-x:ratelimit:publish:k1");
  });

  it("keeps the STOMP subscription lists of every gateway under one namespace, apart from each other", () => {
    expect(keys.stompGateways).toBe("evb-x:stomp:gateways");
    expect(keys.stompSubscriptions("gw-1")).toBe("evb-x:stomp:subscriptions:gw-1");
    expect(keys.stompSubscriptions("gw-1")).not.toBe(keys.stompSubscriptions("gw-2"));
  });

  it("keeps the MQTT take-over names under the mqtt namespace, apart from the sessions (mqtt:session)", () => {
    expect(keys.mqttClientOwner("c1")).toBe("evb-x:mqtt:owner:c1");
    expect(keys.mqttTakeoverChannel("gw-1")).toBe("evb-x:mqtt:takeover:gw-1");
  });

  it("keeps a test delivery's request, claim and answer under one namespace", () => {
    expect(keys.testDeliveryChannel).toBe("evb-x:test-delivery");
    expect(keys.testDeliveryClaim("r1")).toBe("evb-x:test-delivery:claim:r1");
    expect(keys.testDeliveryReply("r1")).toBe("evb-x:test-delivery:reply:r1");
  });

  it("keeps the console's chart history, its slot claims and the shared publish counts under one namespace", () => {
    expect(keys.consoleHistory("2")).toBe("evb-x:console-history:samples:2");
    expect(keys.consoleHistorySlot(1_000)).toBe("evb-x:console-history:slot:1000");
    expect(keys.consoleHistoryPublishes("2")).toBe("evb-x:console-history:publishes:2");
  });
});
