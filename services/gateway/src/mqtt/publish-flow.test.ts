import type { IPublishPacket, Packet } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { BrokerError, silentLogger } from "@evb/domain";
import type { PublishOutcome, PublishRequest } from "../events/publish-operation.ts";
import type { CallerChecks } from "../http/access-control.ts";
import type { Publisher } from "../stomp/stomp-send.ts";
import type { MqttVersion, Refusal } from "./mqtt-replies.ts";
import { PublishFlow, receiveMaximum } from "./publish-flow.ts";

/** A publisher whose outcomes the test settles by topic. */
class FakePublisher implements Publisher {
  readonly started: PublishRequest[] = [];
  private readonly settle = new Map<string, (o: PublishOutcome) => void>();
  async start(req: PublishRequest): Promise<{ outcome: Promise<PublishOutcome> }> {
    if (req.topic === "missing") throw BrokerError.of("TOPIC_NOT_EXIST");
    this.started.push(req);
    return { outcome: new Promise((resolve) => this.settle.set(req.content, resolve)) };
  }
  seal(content: string, o: PublishOutcome = { status: "SUCCESS", eventId: content }): void {
    this.settle.get(content)?.(o);
  }
}

const checks: CallerChecks = {
  required: false,
  admits: () => true,
  authorization: async () => ({ ok: true, key: null }),
  permits: async () => "ok",
};

function flow(version: MqttVersion, maxPending = 10) {
  const publisher = new FakePublisher();
  const sent: Packet[] = [];
  const failed: Refusal[] = [];
  const f = new PublishFlow({
    publisher,
    checks,
    maxPending,
    version,
    group: "1",
    remoteIp: "127.0.0.1",
    key: null,
    send: (p) => sent.push(p),
    fail: (r) => failed.push(r),
    logger: silentLogger,
  });
  return { f, publisher, sent, failed };
}

const publish = (content: string, qos: 0 | 1, messageId?: number, topic = "t"): IPublishPacket => ({
  cmd: "publish",
  topic,
  payload: Buffer.from(content),
  qos,
  dup: false,
  retain: false,
  messageId,
});
const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

describe("PublishFlow", () => {
  it("acknowledges QoS 1 only once sealed, in PUBLISH order, while later publishes go on", async () => {
    const { f, publisher, sent } = flow(4);
    await f.publish(publish("a", 1, 1));
    await f.publish(publish("b", 1, 2));
    await f.publish(publish("c", 0));
    expect(publisher.started.map((r) => r.content)).toEqual(["a", "b", "c"]);
    publisher.seal("b");
    await settle();
    expect(sent).toEqual([]);
    publisher.seal("a");
    await settle();
    expect(sent).toEqual([
      { cmd: "puback", messageId: 1 },
      { cmd: "puback", messageId: 2 },
    ]);
  });

  it("MQTT 5: a failure is a PUBACK with its reason code and string; 3.1.1: the connection is failed instead", async () => {
    const v5 = flow(5);
    await v5.f.publish(publish("x", 1, 7, "missing"));
    await v5.f.publish(publish("y", 1, 8));
    v5.publisher.seal("y", { status: "TIMEOUT" });
    await settle();
    expect(v5.sent).toMatchObject([
      { cmd: "puback", messageId: 7, reasonCode: 0x90, properties: { reasonString: "topic not exist (100101)" } },
      { cmd: "puback", messageId: 8, reasonCode: 0x80 },
    ]);
    const v4 = flow(4);
    await v4.f.publish(publish("x", 1, 7, "missing"));
    await settle();
    expect(v4.sent).toEqual([]);
    expect(v4.failed).toMatchObject([{ reason: 0x90 }]);
  });

  it("a connection with maxPending publishes unsealed waits before reading on", async () => {
    const { f, publisher } = flow(4, 2);
    await f.publish(publish("a", 1, 1));
    let third = false;
    const second = f.publish(publish("b", 1, 2)).then(() => {
      third = true;
    });
    await settle();
    expect(third).toBe(false);
    publisher.seal("a");
    await second;
    expect(third).toBe(true);
  });

  it("MQTT 5: one QoS 1 PUBLISH past the Receive Maximum in flight is DISCONNECT 0x93; the ones within it are acknowledged", async () => {
    const { f, publisher, sent, failed } = flow(5, 2);
    await f.publish(publish("a", 1, 1));
    await f.publish(publish("b", 1, 2)); // the Receive Maximum: no wait, the client may send on
    await f.publish(publish("q0", 0)); // QoS 0 does not count
    expect(failed).toEqual([]);
    await f.publish(publish("c", 1, 3));
    expect(failed).toMatchObject([{ reason: 0x93 }]);
    expect(publisher.started.map((r) => r.content)).toEqual(["a", "b", "q0"]);
    expect(sent).toEqual([]);
  });

  it("MQTT 5: a PUBLISH sent once a PUBACK freed its place is within the Receive Maximum, refused ones counting until answered", async () => {
    const { f, publisher, sent, failed } = flow(5, 2);
    await f.publish(publish("x", 1, 1, "missing")); // refused at once, yet in flight until its PUBACK
    await f.publish(publish("a", 1, 2));
    await settle();
    expect(sent).toMatchObject([{ cmd: "puback", messageId: 1, reasonCode: 0x90 }]);
    await f.publish(publish("b", 1, 3));
    expect(failed).toEqual([]);
    publisher.seal("a");
    await settle();
    await f.publish(publish("c", 1, 4));
    expect(failed).toEqual([]);
    await f.publish(publish("d", 1, 5));
    expect(failed).toMatchObject([{ reason: 0x93 }]);
  });

  it("the Receive Maximum announced is STOMP_MAX_PENDING_PUBLISHES, capped at MQTT's 65,535", () => {
    expect(receiveMaximum(256)).toBe(256);
    expect(receiveMaximum(100_000)).toBe(65_535);
  });

  it("a will is published with the event-willmessage extension", async () => {
    const { f, publisher } = flow(4);
    void f.will({ topic: "t", payload: Buffer.from("bye") });
    await settle();
    expect(publisher.started[0]?.extensions).toEqual({ "event-willmessage": "event-willmessage" });
  });
});
