import type { Request } from "express";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BrokerError, decodeLogRecord, type Receipt, scopedIdempotencyKey, silentLogger, Spelling, type Variant } from "@evb/domain";
import { LogBackpressureError } from "@evb/eventlog";
import type { OperationContext } from "../http/operation.ts";
import { Params } from "../http/params.ts";
import { type EventLog, publishOperation, type TopicCatalog } from "./publish-operation.ts";
import type { ReceiptInbox } from "./receipt-waiter.ts";

const TIMEOUT_MS = 10_000;

/** Topics in memory, counting lookups. */
class FakeTopics implements TopicCatalog {
  lookups = 0;
  readonly known: Set<string>;
  constructor(known: Set<string>) {
    this.known = known;
  }
  async exists(groupId: string, topic: string): Promise<boolean> {
    this.lookups++;
    return this.known.has(`${groupId}/${topic}`);
  }
}

/** A log whose next append resolves, rejects with `fail`, or never settles (`hang`). */
class FakeLog implements EventLog {
  readonly appended: { topic: string; key: string; value: Buffer }[] = [];
  fail: unknown = null;
  hang = false;
  async append(topic: string, key: string, value: Buffer): Promise<void> {
    this.appended.push({ topic, key, value });
    if (this.hang) await new Promise(() => {});
    if (this.fail) throw this.fail;
  }
}

/** Receipts in memory on fake timers: `answer` plays the indexer's receipt. */
class FakeInbox implements ReceiptInbox {
  readonly waiting = new Map<string, (r: Receipt | null) => void>();
  cancelled = 0;
  expect(requestId: string, timeoutMs: number) {
    const receipt = new Promise<Receipt | null>((resolve) => {
      this.waiting.set(requestId, resolve);
      setTimeout(() => resolve(null), timeoutMs);
    });
    return { receipt, cancel: () => void this.cancelled++ };
  }
  answer(eventId: string, idempotency?: Receipt["idempotency"]): void {
    for (const [requestId, resolve] of this.waiting) resolve({ requestId, eventId, height: 1, ...(idempotency ? { idempotency } : {}) });
  }
}

let topics: FakeTopics;
let log: FakeLog;
let inbox: FakeInbox;

function operation(spelling?: Spelling) {
  return publishOperation({
    ...(spelling ? { spelling } : {}),
    topics,
    groups: new Set(["1", "2"]),
    log,
    receipts: inbox,
    gatewayId: "gw-test",
    kafkaTopicPrefix: "evb.",
    publishTimeoutMs: TIMEOUT_MS,
    now: () => 1_700_000_000_000,
    logger: silentLogger,
    idempotencyRetentionMs: 3_600_000,
  });
}

function ctx(
  variant: Variant,
  params: Record<string, string>,
  headers: Record<string, string> = {},
  keyId: string | null = null,
): OperationContext {
  const raw = new Map(Object.entries(params).map(([k, v]) => [k, [v]]));
  return {
    variant,
    params: new Params(raw, variant),
    req: { headers } as unknown as Request,
    remoteIp: "10.1.2.3",
    caller: { address: "10.1.2.3", keyId },
  };
}

const publish = { topic: "com/a", content: "hello", groupId: "1", "event-x": "1" };

beforeEach(() => {
  vi.useFakeTimers();
  topics = new FakeTopics(new Set(["1/com/a"]));
  log = new FakeLog();
  inbox = new FakeInbox();
});

afterEach(() => {
  vi.useRealTimers();
});

describe("publishOperation", () => {
  it("appends the record keyed by topic to the group's log and answers SUCCESS with the receipt's eventId", async () => {
    const answer = operation().handle(ctx("M", publish));
    await vi.advanceTimersByTimeAsync(0);
    inbox.answer("ev-1");
    await expect(answer).resolves.toEqual({ kind: "bare", body: { status: "SUCCESS", topic: "com/a", eventId: "ev-1" } });
    expect(log.appended).toHaveLength(1);
    const [sent] = log.appended;
    expect(sent?.topic).toBe("evb.log.1");
    expect(sent?.key).toBe("com/a");
    const decoded = decodeLogRecord(sent?.value ?? null);
    expect(decoded.ok && decoded.record).toMatchObject({
      gatewayId: "gw-test",
      groupId: "1",
      topic: "com/a",
      content: "hello",
      extensions: { "event-x": "1" },
    });
  });

  it.each([
    { variant: "L" as const, want: { kind: "bare", body: { status: "TIMEOUT", topic: "com/a", eventId: null } } },
    { variant: "M" as const, want: { kind: "bare", body: { status: "TIMEOUT", topic: "com/a", eventId: null } } },
  ])("without a receipt in time, $variant answers TIMEOUT", async ({ variant, want }) => {
    const answer = operation().handle(ctx(variant, publish));
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS);
    await expect(answer).resolves.toEqual(want);
  });

  it("without a receipt in time, E answers TRANSACTION_FAILED", async () => {
    const answer = operation().handle(ctx("E", publish));
    const failed = expect(answer).rejects.toMatchObject({ code: BrokerError.of("TRANSACTION_FAILED").code });
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS);
    await failed;
  });

  it("the timeout counts from before the append: a Kafka that never answers still ends in TIMEOUT", async () => {
    log.hang = true;
    const answer = operation().handle(ctx("L", publish));
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS);
    await expect(answer).resolves.toMatchObject({ body: { status: "TIMEOUT" } });
  });

  it("a record Kafka certainly did not take answers ERROR (E: TRANSACTION_FAILED) and drops the waiter", async () => {
    log.fail = new LogBackpressureError(20_000);
    await expect(operation().handle(ctx("M", publish))).resolves.toMatchObject({ body: { status: "ERROR" } });
    await expect(operation().handle(ctx("E", publish))).rejects.toMatchObject({ code: BrokerError.of("TRANSACTION_FAILED").code });
    expect(inbox.cancelled).toBe(2);
  });

  it("a send that failed after reaching Kafka may still land: TIMEOUT, not ERROR", async () => {
    log.fail = Object.assign(new Error("Request timed out"), { type: "REQUEST_TIMED_OUT" });
    await expect(operation().handle(ctx("M", publish))).resolves.toMatchObject({ body: { status: "TIMEOUT" } });
  });

  it("a broker refusal of the record itself answers ERROR", async () => {
    log.fail = Object.assign(new Error("too large"), { apiId: "MESSAGE_TOO_LARGE" });
    await expect(operation().handle(ctx("L", publish))).resolves.toMatchObject({ body: { status: "ERROR" } });
  });

  it("an unknown topic is TOPIC_NOT_EXIST and appends nothing", async () => {
    await expect(operation().handle(ctx("M", { ...publish, topic: "com/none" }))).rejects.toMatchObject({
      code: BrokerError.of("TOPIC_NOT_EXIST").code,
    });
    expect(log.appended).toHaveLength(0);
  });

  it("asks the catalogue once per topic: topics are never deleted", async () => {
    const op = operation();
    for (let i = 0; i < 3; i++) {
      const answer = op.handle(ctx("M", publish));
      await vi.advanceTimersByTimeAsync(0);
      inbox.answer(`ev-${i}`);
      await answer;
    }
    expect(topics.lookups).toBe(1);
  });

  it("validates before any lookup: a missing content is URL_INVALID", async () => {
    await expect(operation().handle(ctx("M", { topic: "com/a" }))).rejects.toMatchObject({ code: BrokerError.of("URL_INVALID").code });
    expect(topics.lookups).toBe(0);
  });

  describe("with an Idempotency-Key", () => {
    const sent = () => {
      const d = decodeLogRecord(log.appended.at(-1)?.value ?? null);
      return d.ok ? d.record : null;
    };

    it("without one, the record carries none: the original interface", async () => {
      const answer = operation().handle(ctx("L", publish));
      await vi.advanceTimersByTimeAsync(0);
      inbox.answer("ev-1");
      await answer;
      expect(log.appended[0]?.value.toString()).not.toContain("idempotency");
    });

    it("the header travels in the record with the retention; a duplicate's receipt answers SUCCESS with the original id", async () => {
      const answer = operation().handle(ctx("L", publish, { "idempotency-key": "order-17" }));
      await vi.advanceTimersByTimeAsync(0);
      expect(sent()?.idempotency).toEqual({ key: scopedIdempotencyKey("10.1.2.3", "order-17"), retentionMs: 3_600_000 });
      inbox.answer("ev-original", "duplicate");
      await expect(answer).resolves.toEqual({ kind: "bare", body: { status: "SUCCESS", topic: "com/a", eventId: "ev-original" } });
    });

    it("the idempotencyKey parameter does the same, and is not an extension", async () => {
      const answer = operation().handle(ctx("M", { ...publish, idempotencyKey: "order-18" }));
      await vi.advanceTimersByTimeAsync(0);
      expect(sent()).toMatchObject({ idempotency: { key: scopedIdempotencyKey("10.1.2.3", "order-18") }, extensions: { "event-x": "1" } });
      expect(Object.keys(sent()?.extensions ?? {})).toEqual(["event-x"]);
      inbox.answer("ev-2");
      await answer;
    });

    it("the key is stored within its caller's scope: the API key's id, else the address (issue 28)", async () => {
      for (const keyId of ["k1", "k2", null]) {
        void operation().handle(ctx("L", publish, { "idempotency-key": "order-4711" }, keyId));
        await vi.advanceTimersByTimeAsync(0);
      }
      const stored = log.appended.map((a) => decodeLogRecord(a.value)).map((d) => (d.ok ? d.record.idempotency?.key : undefined));
      expect(stored).toEqual([
        scopedIdempotencyKey("key:k1", "order-4711"),
        scopedIdempotencyKey("key:k2", "order-4711"),
        scopedIdempotencyKey("10.1.2.3", "order-4711"),
      ]);
      expect(new Set(stored).size).toBe(3);
      inbox.answer("ev-1");
    });

    it.each(["L", "M", "E"] as const)("a key reused for other content answers 100211 (%s)", async (variant) => {
      const answer = operation().handle(ctx(variant, publish, { "idempotency-key": "k" }));
      const refused = expect(answer).rejects.toMatchObject({ code: 100211 });
      await vi.advanceTimersByTimeAsync(0);
      inbox.answer("ev-other", "conflict");
      await refused;
    });

    it.each([
      ["empty", { "idempotency-key": "" }, {}],
      ["with a space", { "idempotency-key": "a b" }, {}],
      ["too long", {}, { idempotencyKey: "k".repeat(256) }],
      ["header and parameter differ", { "idempotency-key": "a" }, { idempotencyKey: "b" }],
    ])("a bad key (%s) answers 100210 before any lookup", async (_what, headers, params) => {
      await expect(operation().handle(ctx("L", { ...publish, ...params }, headers))).rejects.toMatchObject({ code: 100210 });
      expect(topics.lookups).toBe(0);
      expect(log.appended).toHaveLength(0);
    });

    it("the reference's checks come first: a blank content is still 100200", async () => {
      await expect(operation().handle(ctx("L", { ...publish, content: " " }, { "idempotency-key": "" }))).rejects.toMatchObject({
        code: 100200,
      });
    });
  });
});

describe("publishOperation extension parameters (BRAND, protocols.md 8)", () => {
  const appendedExtensions = async (spelling: Spelling | undefined, params: Record<string, string>) => {
    const answer = operation(spelling).handle(ctx("L", { topic: "com/a", content: "hello", ...params }));
    await vi.advanceTimersByTimeAsync(0);
    inbox.answer("ev-1");
    await answer;
    const decoded = decodeLogRecord(log.appended[0]?.value ?? null);
    return decoded.ok ? decoded.record.extensions : null;
  };

  it("by default reads event- parameters only: a weevent- one is an unknown parameter, ignored", async () => {
    expect(await appendedExtensions(undefined, { "event-tag": "a", "weevent-format": "b" })).toEqual({ "event-tag": "a" });
  });

  it("under BRAND=weevent reads the original's weevent- parameters, stored as sent, and ignores event- ones", async () => {
    const got = await appendedExtensions(new Spelling("weevent"), { "weevent-tag": "a", "weevent-format": "", "event-x": "c" });
    expect(got).toEqual({ "weevent-tag": "a", "weevent-format": "" });
  });
});
