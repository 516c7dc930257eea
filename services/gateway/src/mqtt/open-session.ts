import type { IDisconnectPacket, IPublishPacket, ISubscribePacket, IUnsubscribePacket, Packet } from "mqtt-packet";
import { SessionKey, type SessionLogin } from "../sessions/session-key.ts";
import { subscriberOf } from "../stomp/caller-quota.ts";
import type { SocketWriter } from "../stomp/socket-writer.ts";
import { DeliveryWindow } from "./delivery-window.ts";
import type { SessionTerms } from "./mqtt-connect.ts";
import type { MqttDeps } from "./mqtt-deps.ts";
import { delivery, encode, Reason, type Refusal, suback, unsuback } from "./mqtt-replies.ts";
import { MqttSubscriptions } from "./mqtt-subscriptions.ts";
import { PublishFlow } from "./publish-flow.ts";
import { subscribeFilters } from "./subscribe-flow.ts";
import { SessionPersistence } from "./session-persistence.ts";
import type { StoredSession } from "./session-store.ts";

/** What the connection gives the session it opened. */
export interface SessionLink {
  out: SocketWriter;
  remoteIp: string;
  /** Who logged in (SessionKey checks it again while the session lasts). */
  login: SessionLogin;
  send: (packet: Packet) => void;
  /** Ends the connection for a failure (MQTT 5: with a DISCONNECT saying why). */
  fail: (refusal: Refusal) => void;
}

/**
 * An MQTT session after its CONNECT was accepted: PUBLISH into the publish path, SUBSCRIBE and
 * UNSUBSCRIBE over ledger subscriptions, PUBACKs of deliveries, and its end: the will unless the
 * client said DISCONNECT, and, for a persistent session, its filters and positions stored for the
 * next connection with its client id (protocols.md 3.7). Its key is checked again on each
 * PUBLISH and SUBSCRIBE and on the key clock (SessionKey): a revoked key ends the connection
 * (MQTT 5: DISCONNECT 0x87), a role taken away refuses what it covered.
 */
export class OpenSession {
  private readonly deps: MqttDeps;
  readonly terms: SessionTerms;
  private readonly link: SessionLink;
  private readonly window: DeliveryWindow;
  private readonly subs: MqttSubscriptions;
  private readonly publishes: PublishFlow;
  private readonly key: SessionKey;
  private persistence: SessionPersistence | null = null;
  private expiryMs: number;
  private willWanted = true;
  /** The filters and positions as the session ended (its subscriptions are gone by the last write). */
  private final: ReturnType<MqttSubscriptions["snapshot"]> | null = null;
  private ended?: Promise<void>;

  constructor(deps: MqttDeps, terms: SessionTerms, link: SessionLink) {
    this.deps = deps;
    this.terms = terms;
    this.link = link;
    this.expiryMs = terms.expiryMs;
    this.window = new DeliveryWindow(terms.window);
    this.key = new SessionKey({
      checks: deps.checks,
      login: link.login,
      remoteIp: link.remoteIp,
      revoked: () => link.fail({ reason: Reason.NOT_AUTHORIZED, message: "the API key of this session is no longer valid" }),
      logger: deps.logger,
    });
    const { version } = terms;
    this.subs = new MqttSubscriptions(
      { ...deps, pageEvents: deps.limits.pageEvents },
      {
        out: link.out,
        window: this.window,
        encode: (event, qos, packetId) => encode(delivery(version, event, qos, packetId), version),
        maxPacket: terms.maxPacketToClient,
        remoteIp: link.remoteIp,
        caller: subscriberOf(link.login.key, link.remoteIp),
      },
    );
    this.publishes = new PublishFlow({
      ...deps,
      checks: this.key.checks(),
      maxPending: deps.limits.maxPendingPublishes,
      version,
      group: terms.group,
      remoteIp: link.remoteIp,
      key: link.login.key,
      send: link.send,
      fail: link.fail,
      logger: deps.logger,
    });
  }

  /** Takes up a stored session's filters where they were; they read once `start` is called (after CONNACK). */
  resume(stored: StoredSession | null): void {
    for (const s of stored?.subscriptions ?? []) {
      if (this.deps.groups.has(s.group)) this.subs.add(s.filter, s.qos, s.group, s.position);
    }
    if (this.expiryMs > 0) {
      this.persistence = new SessionPersistence({
        store: this.deps.store,
        clientId: this.terms.clientId,
        owner: this.key.owner,
        ttlMs: this.expiryMs,
        snapshot: () => this.final ?? this.subs.snapshot(),
        everyMs: this.deps.limits.saveEveryMs,
        now: this.deps.now,
        logger: this.deps.logger,
      });
      this.persistence.start();
    }
  }

  /** Starts the resumed filters' reading. */
  start(): void {
    this.key.start();
    for (const s of this.subs.all()) s.kick();
  }

  /** QoS 2, and MQTT 5's retain and topic aliases, which its CONNACK said are not served, end the connection. */
  async publish(p: IPublishPacket): Promise<void> {
    const { fail } = this.link;
    if (p.qos === 2) fail({ reason: Reason.QOS_NOT_SUPPORTED, message: "QoS 2 is not supported; the maximum is 1" });
    else if (this.terms.version === 5 && p.retain)
      fail({ reason: Reason.RETAIN_NOT_SUPPORTED, message: "retained messages are not supported" });
    else if (p.properties?.topicAlias !== undefined)
      fail({ reason: Reason.TOPIC_ALIAS_INVALID, message: "topic aliases are not supported" });
    else await this.publishes.publish(p);
  }

  /** The client's PUBACK of a delivery (an id not in flight is ignored). */
  acked(packetId: number): void {
    this.window.ack(packetId);
  }

  async subscribe(p: ISubscribePacket): Promise<void> {
    const { deps, terms } = this;
    const granted = await subscribeFilters(p.subscriptions, {
      ...deps,
      checks: this.key.checks(),
      maxSubscriptions: deps.limits.maxSubscriptions,
      subs: this.subs,
      group: terms.group,
      key: this.link.login.key,
    });
    // A persistent session's new filter is stored before the SUBACK: a gateway killed right after still resumes it.
    if (granted.started.length > 0) await this.persistence?.flush(true).catch(() => {});
    this.link.send(suback(terms.version, p.messageId ?? 0, granted.codes));
    for (const s of granted.started) s.kick();
  }

  async unsubscribe(p: IUnsubscribePacket): Promise<void> {
    const codes = p.unsubscriptions.map((f) => (this.subs.remove(f) ? Reason.SUCCESS : Reason.NO_SUBSCRIPTION_EXISTED));
    await this.persistence?.flush(true).catch(() => {});
    this.link.send(unsuback(this.terms.version, p.messageId ?? 0, codes));
  }

  /** DISCONNECT: no will (unless MQTT 5 asks for it with 0x04); MQTT 5 may change the session's expiry. */
  disconnected(p: IDisconnectPacket): void {
    this.willWanted = this.terms.version === 5 && p.reasonCode === 0x04;
    const interval = p.properties?.sessionExpiryInterval;
    if (interval !== undefined && this.terms.expiryMs > 0) this.expiryMs = Math.min(interval * 1000, this.deps.limits.sessionExpiryMaxMs);
  }

  /**
   * Ends the session once: subscriptions stop and leave the listing; a persistent session's state
   * is stored for its expiry (or dropped when that is 0 now); the will goes out unless DISCONNECT
   * discarded it.
   */
  end(): Promise<void> {
    this.ended ??= (async () => {
      const { deps, terms } = this;
      this.key.stop();
      this.final = this.subs.snapshot();
      this.subs.endAll();
      this.window.close();
      const persistence = this.persistence;
      if (persistence && this.expiryMs > 0) await persistence.close();
      else if (persistence || !terms.clean) {
        persistence?.stop();
        await deps.store.drop(terms.clientId).catch((err: unknown) => deps.logger.warn({ err }, "could not drop an MQTT session"));
      }
      if (terms.will && this.willWanted) void this.publishes.will(terms.will);
      deps.logger.debug({ clientId: terms.clientId, subscriptions: this.final.length }, "MQTT session ended");
    })();
    return this.ended;
  }
}
