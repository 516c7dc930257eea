import { describe, expect, it } from "vitest";
import { BrokerError, NEUTRAL_SPELLING, silentLogger } from "@evb/domain";
import type { ApiKeyRecord } from "@evb/storage";
import type { PublishOutcome, PublishRequest } from "../events/publish-operation.ts";
import type { CallerChecks } from "../http/access-control.ts";
import { CallerQuota } from "./caller-quota.ts";
import { ITEMS_PER_TURN, MAX_BUFFERED_BYTES } from "./intake.ts";
import type { StompSocket } from "./socket-writer.ts";
import { type SessionDeps, StompSession } from "./stomp-session.ts";

/** A socket recording what is sent (commands and receipt-ids) and whether reading is paused. */
class FakeSocket implements StompSocket {
  readonly sent: string[] = [];
  bufferedAmount = 0;
  isOpen = true;
  paused = false;
  closedWith: number | null = null;
  send(text: string, done: () => void): void {
    this.sent.push(text);
    done();
  }
  close(code: number): void {
    this.closedWith = code;
    this.isOpen = false;
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
  replies(): string[] {
    return this.sent.map((t) => `${t.split("\n")[0]}:${/\nreceipt-id:([^\n]*)/.exec(t)?.[1] ?? ""}`);
  }
}

/** A publisher whose outcomes the test settles by hand, in any order. */
class FakePublisher {
  readonly started: PublishRequest[] = [];
  private readonly settle: ((o: PublishOutcome) => void)[] = [];
  async start(req: PublishRequest): Promise<{ outcome: Promise<PublishOutcome> }> {
    if (req.topic === "missing") throw BrokerError.of("TOPIC_NOT_EXIST");
    this.started.push(req);
    return { outcome: new Promise((r) => this.settle.push(r)) };
  }
  seal(i: number): void {
    this.settle[i]?.({ status: "SUCCESS", eventId: `id-${i}` });
  }
  fail(i: number, err: unknown): void {
    this.settle[i]?.({ status: "ERROR", err });
  }
}

const KEY = { id: "k", roles: ["subscribe"], groups: ["1"] } as unknown as ApiKeyRecord;

function checks(required: boolean): CallerChecks {
  return {
    required,
    admits: () => true,
    authorization: async (a) => (a === "Bearer good" ? { ok: true, key: KEY } : { ok: false, unavailable: false }),
    permits: async (key, op) => (key && op.role === "publish" ? "forbidden" : "ok"),
  };
}

function session(
  opts: { required?: boolean; maxPending?: number; checks?: CallerChecks; shared?: Partial<SessionDeps>; quota?: CallerQuota } = {},
) {
  const socket = new FakeSocket();
  const publisher = new FakePublisher();
  const deps: SessionDeps = {
    publisher,
    groups: new Set(["1"]),
    topics: { exists: async (_g, t) => t !== "missing" },
    ledger: { head: async () => 0, after: async () => [], locate: async () => null },
    blocks: { watch: () => () => {} },
    live: { has: () => false, add: () => {}, delivered: () => {}, remove: () => {} },
    owners: { claim: async () => true, liveOwner: () => undefined, hold: () => {}, drop: () => {}, evictStranger: () => {} },
    quota: opts.quota ?? new CallerQuota({ subscriptions: 1_000, filters: 1_000 }),
    maxTopics: 3,
    checks: opts.checks ?? checks(opts.required ?? false),
    ...opts.shared,
    node: () => "n:1",
    spelling: NEUTRAL_SPELLING,
    limits: {
      heartbeatMs: 30_000,
      pageEvents: 10,
      sendBufferBytes: 1 << 20,
      maxPendingPublishes: opts.maxPending ?? 100,
      maxSubscriptions: 2,
    },
    now: () => 0,
    logger: silentLogger,
  };
  return { s: new StompSession(deps, socket, "127.0.0.1", null), socket, publisher };
}

const frame = (command: string, headers: Record<string, string>, body = "") =>
  Buffer.from(
    `${command}\n${Object.entries(headers)
      .map(([k, v]) => `${k}:${v}\n`)
      .join("")}\n${body}\u0000`,
  );
/** Runs the microtask queue dry without letting the event loop turn. */
const microtasks = async () => {
  for (let i = 0; i < 2_000; i++) await Promise.resolve();
};
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe("StompSession", () => {
  it("answers in frame order: later replies wait for an earlier SEND's block, later SENDs are appended meanwhile", async () => {
    const { s, socket, publisher } = session();
    s.receive(
      Buffer.concat([
        frame("SEND", { destination: "t", receipt: "1" }, "a"),
        frame("SEND", { destination: "missing", receipt: "2" }, "b"),
        frame("SEND", { destination: "t", receipt: "3" }, "c"),
      ]),
    );
    await settle();
    expect(publisher.started.map((r) => r.content)).toEqual(["a", "c"]);
    expect(socket.sent).toEqual([]);
    publisher.seal(1);
    await settle();
    expect(socket.sent).toEqual([]);
    publisher.seal(0);
    await settle();
    expect(socket.replies()).toEqual(["RECEIPT:1", "ERROR:2", "RECEIPT:3"]);
  });

  it("passes an idempotency-key to the publisher; a bad one (100210) and a reused one (100211) answer coded ERRORs", async () => {
    const { s, socket, publisher } = session();
    s.receive(
      Buffer.concat([
        frame("SEND", { destination: "t", receipt: "1", "idempotency-key": "order-4711" }, "a"),
        frame("SEND", { destination: "t", receipt: "2", "idempotency-key": "x".repeat(256) }, "b"),
        frame("SEND", { destination: "t", receipt: "3", "idempotency-key": "order-4711" }, "c"),
      ]),
    );
    await settle();
    expect(publisher.started.map((r) => [r.content, r.idempotencyKey])).toEqual([
      ["a", "order-4711"],
      ["c", "order-4711"],
    ]);
    publisher.seal(0);
    publisher.fail(1, BrokerError.of("IDEMPOTENCY_KEY_REUSED"));
    await settle();
    expect(socket.replies()).toEqual(["RECEIPT:1", "ERROR:2", "ERROR:3"]);
    expect(socket.sent[1]).toContain("\ncode:100210\n");
    expect(socket.sent[2]).toContain("\ncode:100211\n");
  });

  it("reads no further frames while maxPendingPublishes SENDs wait for their blocks", async () => {
    const { s, publisher } = session({ maxPending: 2 });
    for (let i = 0; i < 4; i++) s.receive(frame("SEND", { destination: "t", receipt: String(i) }, `m${i}`));
    await settle();
    expect(publisher.started).toHaveLength(2);
    publisher.seal(0);
    await settle();
    expect(publisher.started).toHaveLength(3);
  });

  it("with credentials required: frames before a login are refused; a key's roles apply after it", async () => {
    const { s, socket, publisher } = session({ required: true });
    s.receive(frame("SEND", { destination: "t", receipt: "early" }, "x"));
    s.receive(frame("CONNECT", { login: "apikey", passcode: "bad" }));
    s.receive(frame("CONNECT", { passcode: "good", "accept-version": "1.1" }));
    s.receive(frame("SEND", { destination: "t", receipt: "late" }, "x"));
    await settle();
    expect(socket.replies()).toEqual(["ERROR:early", "ERROR:", "CONNECTED:", "ERROR:late"]);
    expect(socket.sent[3]).toContain("message:not allowed");
    expect(publisher.started).toEqual([]);
  });

  it("a malformed frame ends the connection after the replies before it; the frames after it are not read", async () => {
    const { s, socket } = session();
    s.receive(Buffer.concat([frame("UNSUBSCRIBE", { id: "x" }), Buffer.from("BOGUS\n\n\u0000"), frame("UNSUBSCRIBE", { id: "y" })]));
    await settle();
    expect(socket.replies()).toEqual(["ERROR:x", "ERROR:"]);
    expect(socket.closedWith).toBe(1002);
  });

  it("one message of 5,000 frames is decoded and answered at most ITEMS_PER_TURN frames per turn, in order, reading paused meanwhile", async () => {
    const { s, socket } = session();
    const message = Buffer.concat(Array.from({ length: 5_000 }, (_, i) => frame("UNSUBSCRIBE", { id: String(i) })));
    expect(message.length).toBeGreaterThan(MAX_BUFFERED_BYTES);
    s.receive(message);
    expect(socket.paused).toBe(true);
    await microtasks();
    // Only microtasks ran: the first batch, nothing of the next turn.
    expect(socket.sent.length).toBeLessThanOrEqual(ITEMS_PER_TURN);
    await new Promise((r) => setImmediate(r));
    await microtasks();
    expect(socket.sent.length).toBeLessThanOrEqual(2 * ITEMS_PER_TURN);
    for (let i = 0; i < 400 && socket.sent.length < 5_000; i++) await settle();
    expect(socket.replies()).toEqual(Array.from({ length: 5_000 }, (_, i) => `ERROR:${i}`));
    expect(s.intake.turns).toBeGreaterThanOrEqual(Math.floor(5_000 / ITEMS_PER_TURN) - 1);
    expect(socket.paused).toBe(false);
  });

  it("a connection holds at most maxSubscriptions subscriptions: one more is 100510", async () => {
    const { s, socket } = session();
    for (const id of ["a", "b", "c"]) s.receive(frame("SUBSCRIBE", { destination: "t", id }));
    await settle();
    expect(socket.replies()).toEqual(["RECEIPT:a", "RECEIPT:b", "ERROR:c"]);
    expect(socket.sent[2]).toContain("code:100510");
    s.receive(frame("UNSUBSCRIBE", { id: "a" }));
    s.receive(frame("SUBSCRIBE", { destination: "t", id: "d" }));
    await settle();
    expect(socket.replies().slice(3)).toEqual(["RECEIPT:a", "RECEIPT:d"]);
  });

  it("a destination of more than maxTopics items is 100110, before the ledger is read", async () => {
    const { s, socket } = session();
    s.receive(frame("SUBSCRIBE", { destination: "a,b,c,d", id: "long" }));
    s.receive(frame("SUBSCRIBE", { destination: "a,b,c", id: "ok" }));
    await settle();
    expect(socket.replies()).toEqual(["ERROR:long", "RECEIPT:ok"]);
    expect(socket.sent[0]).toContain("code:100110");
  });

  it("a caller's subscriptions count over all its connections: past its quota one more is 100510", async () => {
    const quota = new CallerQuota({ subscriptions: 10, filters: 4 });
    const one = session({ quota });
    const two = session({ quota });
    one.s.receive(frame("SUBSCRIBE", { destination: "a,b,c", id: "1" }));
    await settle();
    two.s.receive(frame("SUBSCRIBE", { destination: "a,b", id: "2" }));
    two.s.receive(frame("SUBSCRIBE", { destination: "a", id: "3" }));
    await settle();
    expect(one.socket.replies()).toEqual(["RECEIPT:1"]);
    expect(two.socket.replies()).toEqual(["ERROR:2", "RECEIPT:3"]);
    expect(two.socket.sent[0]).toContain("code:100510");
    one.s.closed();
    two.s.receive(frame("SUBSCRIBE", { destination: "a,b", id: "4" }));
    await settle();
    expect(two.socket.replies().at(-1)).toBe("RECEIPT:4");
  });

  it("DISCONNECT is answered after the SENDs before it, then closes", async () => {
    const { s, socket, publisher } = session();
    s.receive(Buffer.concat([frame("SEND", { destination: "t", receipt: "1" }, "a"), frame("DISCONNECT", { receipt: "9" })]));
    await settle();
    expect(socket.sent).toEqual([]);
    publisher.seal(0);
    await settle();
    expect(socket.replies()).toEqual(["RECEIPT:1", "RECEIPT:9"]);
    expect(socket.closedWith).toBe(1000);
  });

  // Regression: a second CONNECT as another key logged the session in as that key, and the
  // subscriptions made under the first kept running past the first key's revocation.
  it("a second CONNECT as another key is refused and the session keeps its first identity; the same key's is answered", async () => {
    const OTHER = { id: "k2", roles: ["publish"], groups: ["1"] } as unknown as ApiKeyRecord;
    const twoKeys: CallerChecks = {
      ...checks(true),
      permits: async (key) => (key?.id === "k" ? "ok" : "forbidden"),
      authorization: async (a) =>
        a === "Bearer good" ? { ok: true, key: KEY } : a === "Bearer other" ? { ok: true, key: OTHER } : { ok: false, unavailable: false },
    };
    const { s, socket, publisher } = session({ checks: twoKeys });
    s.receive(frame("CONNECT", { passcode: "good", "accept-version": "1.1" }));
    s.receive(frame("CONNECT", { passcode: "other", "accept-version": "1.1" }));
    s.receive(frame("CONNECT", { passcode: "good", "accept-version": "1.1" }));
    s.receive(frame("SEND", { destination: "t", receipt: "as-first" }, "x"));
    await settle();
    expect(socket.replies().slice(0, 3)).toEqual(["CONNECTED:", "ERROR:", "CONNECTED:"]);
    expect(socket.sent[1]).toContain("logged in as another identity");
    // The SEND is still checked as the first key (which permits it), not the second (which would not).
    expect(publisher.started).toHaveLength(1);
  });

  it("a session whose key stops verifying ends at its next SEND: ERROR, close 1008, nothing published", async () => {
    let valid = true;
    const revocable: CallerChecks = {
      ...checks(true),
      permits: async () => "ok",
      authorization: async (a) => (a === "Bearer good" && valid ? { ok: true, key: KEY } : { ok: false, unavailable: false }),
    };
    const { s, socket, publisher } = session({ checks: revocable });
    s.receive(frame("CONNECT", { passcode: "good", "accept-version": "1.1" }));
    s.receive(frame("SEND", { destination: "t", receipt: "before" }, "x"));
    await settle();
    publisher.seal(0);
    await settle();
    valid = false;
    s.receive(frame("SEND", { destination: "t", receipt: "after" }, "x"));
    await settle();
    expect(socket.replies().slice(0, 2)).toEqual(["CONNECTED:", "RECEIPT:before"]);
    expect(socket.sent.at(-1)).toMatch(/^ERROR\n[\s\S]*message:the API key of this session is no longer valid/);
    expect(socket.closedWith).toBe(1008);
    expect(publisher.started).toHaveLength(1);
  });

  it("the owner's resume of a subscription id a stranger holds here ends the stranger's session (ERROR, close 1008)", async () => {
    const ids = new Set<string>();
    const held = new Map<string, { owner: string; evict: () => void }>();
    const shared: Partial<SessionDeps> = {
      live: { has: (id) => ids.has(id), add: (r) => ids.add(r.id), delivered: () => {}, remove: (id) => ids.delete(id) },
      owners: {
        claim: async () => true,
        liveOwner: (id) => held.get(id)?.owner,
        hold: (id, owner, evict) => held.set(id, { owner, evict }),
        drop: (id, evict) => (held.get(id)?.evict === evict ? held.delete(id) : undefined),
        evictStranger: (id, owner) => {
          const h = held.get(id);
          if (h && h.owner !== owner) h.evict();
        },
      },
    };
    const two: CallerChecks = {
      ...checks(true),
      permits: async () => "ok",
      authorization: async (a) =>
        a === "Bearer a" || a === "Bearer b" ? { ok: true, key: { ...KEY, id: a.slice(7) } } : { ok: false, unavailable: false },
    };
    const stranger = session({ checks: two, shared });
    const owner = session({ checks: two, shared });
    const id = "3f1e0c1a-8f3b-4c47-9d0c-6a2b7e5d4c21";
    stranger.s.receive(frame("CONNECT", { passcode: "b" }));
    stranger.s.receive(frame("SUBSCRIBE", { destination: "t", id: "s", "event-subscriptionId": id }));
    await settle();
    expect(stranger.socket.replies()).toEqual(["CONNECTED:", "RECEIPT:s"]);
    owner.s.receive(frame("CONNECT", { passcode: "a" }));
    owner.s.receive(frame("SUBSCRIBE", { destination: "t", id: "o", "event-subscriptionId": id }));
    await settle();
    expect(owner.socket.replies()).toEqual(["CONNECTED:", "RECEIPT:o"]);
    expect(stranger.socket.sent.at(-1)).toMatch(/message:this subscription id was resumed by its owner/);
    expect(stranger.socket.closedWith).toBe(1008);
    expect([ids.has(id), held.get(id)?.owner]).toEqual([true, "key:a"]);
  });
});
