import { describe, expect, it } from "vitest";
import { KAFKA_TIMEOUT_DEFAULTS, KafkaClient, rotated } from "./kafka-client.ts";
import { silentLogger } from "@evb/domain";

describe("rotated", () => {
  it("starts the list at the broker the draw picks and keeps the order after it", () => {
    expect(rotated(["a", "b", "c"], () => 0)).toEqual(["a", "b", "c"]);
    expect(rotated(["a", "b", "c"], () => 0.5)).toEqual(["b", "c", "a"]);
    expect(rotated(["a", "b", "c"], () => 0.99)).toEqual(["c", "a", "b"]);
  });
});

describe("KafkaClient.options", () => {
  it("sets the timeouts chosen for a silent broker and lists every broker once", () => {
    const kafka = new KafkaClient({ brokers: ["k1:9092", "k2:9092", "k3:9092"], clientId: "t", logger: silentLogger });
    const o = kafka.options("x");
    expect(o).toMatchObject({ connectTimeout: KAFKA_TIMEOUT_DEFAULTS.connectMs, requestTimeout: 5_000, metadataMaxAge: 10_000 });
    expect([...(o.bootstrapBrokers as string[])].sort()).toEqual(["k1:9092", "k2:9092", "k3:9092"]);
    expect(KAFKA_TIMEOUT_DEFAULTS).toEqual({ requestMs: 5_000, connectMs: 1_000 });
  });
});
