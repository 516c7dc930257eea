import { BrokerError, type Logger } from "@evb/domain";
import { PUBLISH_ACCESS } from "../events/publish-operation.ts";
import type { CallerChecks } from "../http/access-control.ts";
import { ownerId } from "../http/caller-address.ts";
import { SessionKey, type SessionLogin } from "../sessions/session-key.ts";
import { SUBSCRIBE_ACCESS } from "../subscriptions/subscribe-operation.ts";
import { subscriberOf } from "./caller-quota.ts";
import { heartBeatReply, loginAuthorizations, negotiatedVersion } from "./connect-frame.ts";
import { type LiveRegistry, SessionSubscriptions, type SessionSubscriptionsDeps } from "./session-subscriptions.ts";
import { type FrameItem, FrameReader } from "./frame-reader.ts";
import { Intake } from "./intake.ts";
import { header, type StompFrame } from "./stomp-frame.ts";
import { ANOTHER_IDENTITY, connected, errorFrame, LOGIN_REQUIRED, loginFailed, NOT_SUPPORTED, receipt } from "./stomp-replies.ts";
import { failureFrame, type Publisher, refusedFrame, sendReply, sendRequest } from "./stomp-send.ts";
import { planSubscription, type SubscribeContext } from "./stomp-subscribe.ts";
import { SocketWriter, type StompSocket } from "./socket-writer.ts";
import type { SubscriptionIdOwners } from "./subscription-owners.ts";

export interface SessionDeps extends Omit<SubscribeContext, "live">, Omit<SessionSubscriptionsDeps, "pageEvents" | "ledger"> {
  publisher: Publisher;
  live: LiveRegistry;
  /** Who may resume which subscription id, across gateways. */
  owners: SubscriptionIdOwners;
  checks: CallerChecks;
  limits: SessionLimits;
  now: () => number;
  logger: Logger;
}

export interface SessionLimits {
  /** STOMP_HEARTBEAT_MS: the beat the server asks for and offers. */
  heartbeatMs: number;
  /** STOMP_PAGE_EVENTS: events a subscription reads per query. */
  pageEvents: number;
  /** STOMP_SEND_BUFFER_BYTES: bytes waiting in the socket past which deliveries wait. */
  sendBufferBytes: number;
  /** STOMP_MAX_PENDING_PUBLISHES: SENDs awaiting their block before the session reads further frames. */
  maxPendingPublishes: number;
  /** MAX_SUBSCRIPTIONS_PER_CALLER: subscriptions one connection may hold (the original had no cap). */
  maxSubscriptions: number;
}

/**
 * One STOMP connection (protocols.md 2). Frames are handled one at a time in arrival order,
 * decoded and handled a bounded batch per turn of the event loop (Intake); a SEND is handed to the
 * log in order and answered when its block is sealed, while later frames go on (up to
 * maxPendingPublishes unanswered) and while the replies waiting to be written stay within
 * sendBufferBytes. A malformed frame or an unsupported command gets an ERROR and
 * ends the connection; everything else keeps it. A closed connection ends its subscriptions.
 * The session is its login's (SessionKey): a key revoked meanwhile ends it (ERROR, close), a
 * role taken away refuses the next SEND or SUBSCRIBE, and a subscription id is resumed only by
 * the identity that owns it (docs/security.md, "Sessions").
 */
export class StompSession {
  private readonly deps: SessionDeps;
  private readonly out: SocketWriter;
  private readonly remoteIp: string;
  /** Who logged in; null until a successful CONNECT when credentials are required. */
  private identity: SessionKey | null = null;
  private readonly subs: SessionSubscriptions;
  /** The way in: undecoded messages, decoded and handled a batch per turn. */
  readonly intake: Intake<FrameItem>;
  private readonly pending = new Set<Promise<void>>();
  /** The reply to the latest frame: each reply waits for those of earlier frames, so replies keep frame order. */
  private replies: Promise<void> = Promise.resolve();
  /** Replies queued behind an unanswered SEND and not yet sent. */
  private unsent = 0;
  /** An ERROR that ends the connection is on its way: no further frame is handled. */
  private ending = false;
  private beat?: NodeJS.Timeout;

  constructor(deps: SessionDeps, socket: StompSocket, remoteIp: string, identity: SessionLogin | null) {
    this.deps = deps;
    this.out = new SocketWriter(socket, deps.limits.sendBufferBytes);
    this.remoteIp = remoteIp;
    const login = identity ?? (deps.checks.required ? null : { key: null });
    if (login) this.loggedIn(login);
    this.subs = new SessionSubscriptions({ ...deps, live: this.ownedListing(), pageEvents: deps.limits.pageEvents });
    this.intake = new Intake({
      decoder: new FrameReader(),
      socket,
      handle: (item) => this.next(item),
      stopped: () => this.ending || !this.out.open,
      failed: (err) => {
        deps.logger.error({ err }, "STOMP frame handling failed; closing the connection");
        this.fail("internal error", 1011);
      },
    });
  }

  /** One text message: its frames are decoded and handled in later batches, in order. */
  receive(data: Buffer): void {
    this.intake.receive(data);
  }

  private async next(item: FrameItem): Promise<void> {
    // Replies wait for room as deliveries do: a client that reads none of them is read no
    // further (undecoded messages pile up and the socket pauses), instead of its replies piling up here.
    await this.out.room();
    if (!this.out.open || this.ending) return;
    if ("malformed" in item) this.fail(`malformed frame: ${item.malformed}`, 1002);
    else await this.handle(item);
  }

  private async handle(frame: StompFrame): Promise<void> {
    switch (frame.command) {
      case "CONNECT":
        return this.connect(frame);
      case "SEND":
        return this.guarded(frame, header(frame, "receipt"), () => this.send(frame));
      case "SUBSCRIBE":
        return this.guarded(frame, header(frame, "id"), () => this.subscribe(frame));
      case "UNSUBSCRIBE":
        return this.guarded(frame, header(frame, "id"), async () => this.unsubscribe(frame));
      case "DISCONNECT":
        return this.disconnect(frame);
      default:
        // STOMP, ACK, NACK, BEGIN, COMMIT, ABORT: refused and closed, as the original did (2.2).
        this.ending = true;
        this.inOrder(errorFrame(NOT_SUPPORTED, undefined, header(frame, "id")), () => this.out.close(1002, "unsupported STOMP command"));
    }
  }

  /**
   * Sends a reply after the replies of earlier frames (a SEND's comes once its block is sealed),
   * then runs `after`. The original answered one frame at a time; this keeps its order without
   * holding the frames behind a SEND.
   */
  private inOrder(reply: string | Promise<string>, after?: () => void): Promise<void> {
    if (this.unsent === 0 && typeof reply === "string") {
      // Nothing earlier is still owed: sent now, without a turn of the microtask queue per frame.
      this.out.send(reply);
      after?.();
      return Promise.resolve();
    }
    this.unsent++;
    const before = this.replies;
    const done = (async () => {
      await before;
      this.out.send(await reply);
      after?.();
    })()
      .catch((err: unknown) => this.deps.logger.error({ err }, "a STOMP reply failed"))
      .finally(() => this.unsent--);
    this.replies = done;
    return done;
  }

  /** Runs a command of a logged-in session; without a login (when one is required) answers ERROR. */
  private async guarded(_frame: StompFrame, receiptId: string | undefined, run: () => Promise<void>): Promise<void> {
    if (!this.identity) {
      this.inOrder(errorFrame(LOGIN_REQUIRED, undefined, receiptId));
      return;
    }
    await run();
  }

  private async connect(frame: StompFrame): Promise<void> {
    if (this.deps.checks.required) {
      const found = await this.login(header(frame, "login") ?? "", header(frame, "passcode") ?? "");
      if (!found) {
        this.inOrder(loginFailed());
        return;
      }
      // A session keeps the identity it logged in with: a second CONNECT as another key would
      // leave the subscriptions made under the first running past that key's revocation.
      const owner = ownerId({ address: this.remoteIp, keyId: found.key?.id ?? null });
      if (this.identity && this.identity.owner !== owner) {
        this.inOrder(errorFrame(ANOTHER_IDENTITY, undefined, undefined));
        return;
      }
      this.identity?.stop();
      this.loggedIn(found);
    }
    const beats = heartBeatReply(header(frame, "heart-beat"), this.deps.limits.heartbeatMs);
    this.inOrder(connected(beats.header, negotiatedVersion(header(frame, "accept-version"))));
    clearInterval(this.beat);
    if (beats.sendEveryMs > 0) this.beat = setInterval(() => this.out.send("\n"), beats.sendEveryMs);
  }

  /** The first of the CONNECT's credential readings that the access settings accept, or null. */
  private async login(login: string, passcode: string): Promise<SessionLogin | null> {
    for (const authorization of loginAuthorizations(login, passcode)) {
      const r = await this.deps.checks.authorization(authorization);
      if (r.ok) return { key: r.key, authorization };
    }
    return null;
  }

  private loggedIn(login: SessionLogin): void {
    this.identity = new SessionKey({
      checks: this.deps.checks,
      login,
      remoteIp: this.remoteIp,
      revoked: () => this.end("the API key of this session is no longer valid", 1008),
      logger: this.deps.logger,
    });
    this.identity.start();
  }

  /**
   * The listing this session's subscriptions report to, which also records whose each id is: a
   * subscription of this session ends (ERROR, close) when the id's owner resumes it here.
   */
  private ownedListing(): LiveRegistry {
    const { live, owners } = this.deps;
    const evict = (): void => this.end("this subscription id was resumed by its owner", 1008);
    return {
      has: (id) => live.has(id),
      add: (record) => {
        live.add(record);
        if (this.identity) owners.hold(record.id, this.identity.owner, evict);
      },
      delivered: (id, at) => live.delivered(id, at),
      remove: (id) => {
        live.remove(id);
        owners.drop(id, evict);
      },
    };
  }

  private async send(frame: StompFrame): Promise<void> {
    const receiptId = header(frame, "receipt");
    const req = sendRequest(frame, this.deps.groups, this.remoteIp, this.deps.spelling);
    if (req instanceof BrokerError) return this.reply(failureFrame(req, receiptId));
    const verdict = await this.permits(PUBLISH_ACCESS, req.group);
    if (verdict !== "ok") return this.reply(refusedFrame(verdict, receiptId));
    let outcome: Awaited<ReturnType<Publisher["start"]>>["outcome"];
    try {
      ({ outcome } = await this.deps.publisher.start(req, this.identity?.owner ?? ownerId({ address: this.remoteIp, keyId: null })));
    } catch (err) {
      if (!(err instanceof BrokerError)) this.deps.logger.warn({ err }, "STOMP SEND failed before the log");
      return this.reply(failureFrame(err, receiptId));
    }
    const answered = this.inOrder(outcome.then((o) => sendReply(o, req.topic, receiptId)));
    const tracked = answered.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
    if (this.pending.size >= this.deps.limits.maxPendingPublishes) await Promise.race(this.pending);
  }

  private async subscribe(frame: StompFrame): Promise<void> {
    const handle = header(frame, "id");
    const { deps } = this;
    let plan: Awaited<ReturnType<typeof planSubscription>>;
    if (this.subs.size >= deps.limits.maxSubscriptions) return this.reply(failureFrame(BrokerError.of("SUBSCRIPTION_LIMIT"), handle));
    const owner = this.identity?.owner ?? this.remoteIp;
    try {
      // 100507 for an id live here under this identity; one a stranger holds here is the owner's to take back.
      plan = await planSubscription(frame, { ...deps, live: (id) => deps.live.has(id) && (deps.owners.liveOwner(id) ?? owner) === owner });
      const verdict = await this.permits(SUBSCRIBE_ACCESS, plan.group);
      if (verdict !== "ok") return this.reply(refusedFrame(verdict, handle));
      // Another identity's id answers as a live one does: 100507, whatever gateway it lives on.
      if (!(await this.claim(plan, owner))) return this.reply(failureFrame(BrokerError.of("SUBSCRIPTION_ID_LIVE"), handle));
    } catch (err) {
      if (!(err instanceof BrokerError)) deps.logger.warn({ err }, "STOMP SUBSCRIBE failed on the ledger");
      return this.reply(failureFrame(err, handle));
    }
    // The RECEIPT goes out before any MESSAGE: the Java client drops MESSAGEs of ids it has not seen (2.5).
    const headers: [string, string][] = [["destination", plan.destination]];
    if (handle !== undefined) headers.push(["receipt-id", handle]);
    headers.push(["subscription-id", plan.id]);
    deps.owners.evictStranger(plan.id, owner);
    // Live at once (a second SUBSCRIBE with its id is 100507), reading only once the RECEIPT is out.
    const sub = this.subs.start(plan, handle, this.out, this.remoteIp, this.identity?.owner ?? subscriberOf(null, this.remoteIp));
    if (!sub) return this.reply(failureFrame(BrokerError.of("SUBSCRIPTION_LIMIT"), handle));
    this.inOrder(receipt(headers, undefined), () => sub.kick());
  }

  /** UNSUBSCRIBE by the SUBSCRIBE's `id`: the newest subscription under that handle ends (2.7). */
  private unsubscribe(frame: StompFrame): void {
    const handle = header(frame, "id");
    this.inOrder(this.subs.endByHandle(handle) ? receipt([], handle) : errorFrame(undefined, undefined, handle));
  }

  /** DISCONNECT: the SENDs still waiting are answered first, then RECEIPT and close. */
  private async disconnect(frame: StompFrame): Promise<void> {
    this.ending = true;
    this.subs.endAll();
    await this.inOrder(receipt([], header(frame, "receipt")), () => this.out.close(1000, "DISCONNECT"));
  }

  /**
   * Makes the subscription id `owner`'s. A named id (a resume) must be checked: a store that
   * cannot answer throws (the SUBSCRIBE is refused). An id the gateway just made is nobody else's
   * yet: recorded best effort (and again by the owners' refresh), so Redis failures never cost a
   * new subscription.
   */
  private async claim(plan: { id: string; named: boolean }, owner: string): Promise<boolean> {
    if (plan.named) return this.deps.owners.claim(plan.id, owner);
    await this.deps.owners
      .claim(plan.id, owner)
      .catch((err: unknown) => this.deps.logger.warn({ err }, "could not record a STOMP subscription id's owner; recorded again later"));
    return true;
  }

  /** CallerChecks.permits for the session's key as it is now (a revoked key ends the session and is refused). */
  private permits(op: Parameters<CallerChecks["permits"]>[1], group: string): ReturnType<CallerChecks["permits"]> {
    return this.identity ? this.identity.permits(op, group) : this.deps.checks.permits(null, op, group);
  }

  /** Ends the session for its rights: its subscriptions stop at once, then ERROR (after the replies owed) and close (1008). */
  private end(message: string, code: 1008): void {
    this.identity?.stop();
    this.subs.endAll();
    if (this.ending) return;
    this.ending = true;
    this.inOrder(errorFrame(message, undefined, undefined), () => this.out.close(code, "session ended"));
  }

  /** Sends one reply frame in order (a command's last act). */
  private reply(text: string): undefined {
    this.inOrder(text);
    return undefined;
  }

  /** ERROR and close: a malformed frame (1002) or a failure of ours (1011). */
  private fail(message: string, code: 1002 | 1011): void {
    this.ending = true;
    this.inOrder(errorFrame(message, undefined, undefined), () =>
      this.out.close(code, code === 1002 ? "malformed STOMP frame" : "internal error"),
    );
  }

  /** The socket closed (either side): every subscription of the connection ends (2.7). */
  closed(): void {
    clearInterval(this.beat);
    this.identity?.stop();
    this.ending = true;
    this.subs.endAll();
    this.out.closed();
  }
}
