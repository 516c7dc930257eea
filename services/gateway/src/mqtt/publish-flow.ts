import type { IPublishPacket, Packet } from "mqtt-packet";
import { BrokerError, type Logger, type Spelling } from "@evb/domain";
import type { ApiKeyRecord } from "@evb/storage";
import { PUBLISH_ACCESS, type PublishOutcome } from "../events/publish-operation.ts";
import type { CallerChecks } from "../http/access-control.ts";
import { ownerId } from "../http/caller-address.ts";
import type { Publisher } from "../stomp/stomp-send.ts";
import { outcomeRefusal, type PublishedMessage, publishRequest, verdictRefusal, willRequest } from "./mqtt-publish.ts";
import { type MqttVersion, puback, Reason, type Refusal, refusalOf } from "./mqtt-replies.ts";

/** The Receive Maximum an MQTT 5 CONNACK announces for STOMP_MAX_PENDING_PUBLISHES (a two-byte field). */
export function receiveMaximum(maxPending: number): number {
  return Math.min(65_535, maxPending);
}

export interface PublishFlowOptions {
  publisher: Publisher;
  checks: CallerChecks;
  /**
   * STOMP_MAX_PENDING_PUBLISHES: QoS 1 publishes awaiting their PUBACK. 3.1.1: past it the
   * connection reads on only once one is acknowledged. MQTT 5: the Receive Maximum (receiveMaximum())
   * CONNACK announced; one more is a protocol violation (DISCONNECT 0x93).
   */
  maxPending: number;
  version: MqttVersion;
  group: string;
  remoteIp: string;
  key: ApiKeyRecord | null;
  send: (packet: Packet) => void;
  /** A failure 3.1.1 cannot answer (it has no negative PUBACK): the connection ends. */
  fail: (refusal: Refusal) => void;
  /** How the will's extension is spelt (BRAND); absent: `event-willmessage`. */
  spelling?: Spelling | undefined;
  logger: Logger;
}

/**
 * PUBLISHes of one connection into the publish path rest/publish and STOMP SEND use (protocols.md
 * 3.4): each is handed to the log in arrival order and acknowledged once its block is sealed,
 * while later packets go on. Up to maxPending QoS 1 PUBLISHes may await their PUBACK: then a
 * 3.1.1 connection waits for one, and an MQTT 5 client that sends one more than the Receive
 * Maximum it was told is disconnected with 0x93 (MQTT 5 4.9, MQTT-3.3.4-9). PUBACKs
 * go out in PUBLISH order. A failure is answered with MQTT 5's reason code and the broker's
 * message as reason string; 3.1.1 has no negative PUBACK, so the connection is closed. QoS 0
 * failures have no answer.
 */
export class PublishFlow {
  private readonly o: PublishFlowOptions;
  /** QoS 1 PUBLISHes whose PUBACK (or 3.1.1 close) is not yet sent. */
  private readonly pending = new Set<Promise<void>>();
  /** The latest PUBACK: each waits for the ones before it. */
  private acks: Promise<void> = Promise.resolve();

  constructor(o: PublishFlowOptions) {
    this.o = o;
  }

  async publish(p: IPublishPacket): Promise<void> {
    const { o } = this;
    if (p.qos === 1 && o.version === 5 && this.pending.size >= receiveMaximum(o.maxPending)) {
      const limit = receiveMaximum(o.maxPending);
      return o.fail({ reason: Reason.RECEIVE_MAXIMUM_EXCEEDED, message: `more than ${limit} QoS 1 PUBLISHes await their PUBACK` });
    }
    // Handed to the log before the next packet is handled (arrival order); answered once decided.
    const { result, early } = await this.attempt(p);
    const answered = this.answer(p, result);
    // A refusal before the log is answered before the next packet is read, as it was decided
    // (3.1.1: the connection is closed before anything after it is handled).
    if (early) await answered;
    // 3.1.1 has no Receive Maximum: the connection reads no further until a PUBACK is out.
    if (o.version !== 5 && this.pending.size >= o.maxPending) await Promise.race(this.pending);
  }

  /** Hands the PUBLISH to the log; `result` is its refusal (null: sealed) once decided; `early`: refused before the log. */
  private async attempt(p: IPublishPacket): Promise<{ result: Promise<Refusal | null>; early?: true }> {
    const { o } = this;
    const req = publishRequest({ topic: p.topic, payload: p.payload, userProperties: p.properties?.userProperties }, o.group, o.remoteIp);
    if ("reason" in req) return { result: Promise.resolve(req), early: true };
    const verdict = await o.checks.permits(o.key, PUBLISH_ACCESS, o.group);
    if (verdict !== "ok") return { result: Promise.resolve(verdictRefusal(verdict)), early: true };
    let outcome: Promise<PublishOutcome>;
    try {
      ({ outcome } = await o.publisher.start(req, this.owner()));
    } catch (err) {
      if (!(err instanceof BrokerError)) o.logger.warn({ err }, "MQTT PUBLISH failed before the log");
      return { result: Promise.resolve(refusalOf(err)), early: true };
    }
    return { result: outcome.then(outcomeRefusal) };
  }

  /**
   * The will of a connection that ended without DISCONNECT, published as an event with the
   * `event-willmessage` extension (as BRAND spells it); nobody waits for it and failures are only logged.
   */
  async will(m: PublishedMessage): Promise<void> {
    const { o } = this;
    const req = willRequest(m, o.group, o.remoteIp, o.spelling);
    if ("reason" in req) return o.logger.info({ topic: m.topic, reason: req.message }, "MQTT will message refused");
    try {
      if ((await o.checks.permits(o.key, PUBLISH_ACCESS, o.group)) !== "ok") return;
      const result = await (await o.publisher.start(req, this.owner())).outcome;
      if (result.status !== "SUCCESS") o.logger.info({ topic: m.topic, status: result.status }, "MQTT will message not confirmed");
    } catch (err) {
      o.logger.info({ err, topic: m.topic }, "MQTT will message not published");
    }
  }

  /** Who publishes, as ownerId names it: the scope of the publishes' idempotency keys. */
  private owner(): string {
    return ownerId({ address: this.o.remoteIp, keyId: this.o.key?.id ?? null });
  }

  /** Answers a QoS 1 PUBLISH after the ones before it (counted as pending until then); QoS 0 is answered by nothing. */
  private answer(p: IPublishPacket, result: Promise<Refusal | null>): Promise<void> {
    const { o } = this;
    if (p.qos !== 1) {
      void result.then((r) => r && o.logger.debug({ topic: p.topic, reason: r.message }, "MQTT QoS 0 PUBLISH not stored"));
      return Promise.resolve();
    }
    const before = this.acks;
    const id = p.messageId ?? 0;
    const done = (async () => {
      const refusal = await result;
      await before;
      if (!refusal || o.version === 5) o.send(puback(o.version, id, refusal ?? undefined));
      else o.fail(refusal);
    })()
      .catch((err: unknown) => o.logger.error({ err }, "an MQTT PUBACK failed"))
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
    this.acks = done;
    return done;
  }
}
