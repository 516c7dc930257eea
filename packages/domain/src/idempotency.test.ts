import { describe, expect, it } from "vitest";
import { type BlockPlan, type LedgerHead, type PositionedRecord, planBlock, type SealedBlock } from "./block-plan.ts";
import { GENESIS_HASH } from "./chain.ts";
import { BrokerError } from "./errors.ts";
import { topicHash8 } from "./event-id.ts";
import { IDEMPOTENCY_KEY_MAX_LENGTH, idempotencyKeyOf, type KeptKey, publishContentHash, scopedIdempotencyKey } from "./idempotency.ts";
import type { LogRecord } from "./log-record.ts";

const HOUR = 3_600_000;
const T0 = 1_700_000_000_000;
let requests = 0;
const rec = (topic: string, content: string, key?: string, retentionMs = 24 * HOUR): LogRecord => ({
  v: 1,
  requestId: `r${++requests}`,
  gatewayId: "gw",
  groupId: "1",
  topic,
  content,
  extensions: {},
  sender: "0xs",
  publishedAt: 0,
  ...(key === undefined ? {} : { idempotency: { key, retentionMs } }),
});
const at = (offset: number, record: LogRecord): PositionedRecord => ({ partition: 0, offset, record });
const head = (keys?: Map<string, KeptKey>, over: Partial<LedgerHead> = {}): LedgerHead => ({
  height: 0,
  hash: GENESIS_HASH,
  nextOffsets: new Map(),
  topics: new Map(),
  ...(keys ? { keys } : {}),
  ...over,
});
const opts = (timestampMs = T0) => ({ groupId: "1", timestampMs, sealerIndex: 0 });
const ids = (p: BlockPlan) => p.block?.events.map((e) => e.eventId) ?? [];
const id = (topic: string, seq: number, height: number) => `${topicHash8(topic)}-${seq}-${height}`;
const kept = (r: LogRecord, eventId: string, expiresAt = T0 + HOUR): KeptKey => ({
  contentHash: publishContentHash(r),
  eventId,
  expiresAt,
});

describe("idempotencyKeyOf", () => {
  it("is off without a header or parameter, and takes either", () => {
    expect(idempotencyKeyOf(undefined, undefined)).toBeUndefined();
    expect(idempotencyKeyOf("k-1", undefined)).toBe("k-1");
    expect(idempotencyKeyOf(undefined, "k-1")).toBe("k-1");
    expect(idempotencyKeyOf("k-1", "k-1")).toBe("k-1");
    expect(idempotencyKeyOf("~".repeat(255), undefined)).toHaveLength(255);
  });

  it.each([
    ["empty", ""],
    ["longer than 255", "k".repeat(256)],
    ["with a space", "a b"],
    ["non-ASCII", "clé"],
    ["a control character", "a\tb"],
  ])("refuses a key %s with 100210", (_what, key) => {
    for (const [h, p] of [
      [key, undefined],
      [undefined, key],
    ] as const) {
      const err = (() => {
        try {
          idempotencyKeyOf(h, p);
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(BrokerError);
      expect((err as BrokerError).code).toBe(100210);
    }
  });

  it("refuses a header and a parameter that differ", () => {
    expect(() => idempotencyKeyOf("a", "b")).toThrow(BrokerError);
  });
});

describe("scopedIdempotencyKey", () => {
  it("one caller's key names the same stored key every time; another caller's the same key names another (issue 28)", () => {
    expect(scopedIdempotencyKey("key:k1", "order-4711")).toBe(scopedIdempotencyKey("key:k1", "order-4711"));
    expect(scopedIdempotencyKey("key:k1", "order-4711")).not.toBe(scopedIdempotencyKey("key:k2", "order-4711"));
    expect(scopedIdempotencyKey("10.0.0.1", "order-4711")).not.toBe(scopedIdempotencyKey("10.0.0.2", "order-4711"));
    expect(scopedIdempotencyKey("key:k1", "order-4711")).not.toBe(scopedIdempotencyKey("key:k1", "order-4712"));
  });

  it("no two (scope, key) pairs store alike when their concatenations agree", () => {
    expect(scopedIdempotencyKey("key:ab", "c")).not.toBe(scopedIdempotencyKey("key:a", "bc"));
  });

  it("fits the log record's key limit whatever the key's length", () => {
    const stored = scopedIdempotencyKey(`key:${"i".repeat(64)}`, "~".repeat(IDEMPOTENCY_KEY_MAX_LENGTH));
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("publishContentHash", () => {
  it("covers topic, content and extensions, not their order nor the sender", () => {
    const base = rec("t", "c");
    const h = publishContentHash({ ...base, extensions: { "event-a": "1", "event-b": "2" } });
    expect(publishContentHash({ ...base, extensions: { "event-b": "2", "event-a": "1" } })).toBe(h);
    const elsewhere: LogRecord = { ...base, sender: "0xother", extensions: { "event-a": "1", "event-b": "2" } };
    expect(publishContentHash(elsewhere)).toBe(h);
    expect(publishContentHash({ ...base, extensions: { "event-a": "1" } })).not.toBe(h);
    expect(publishContentHash({ ...base, topic: "u" })).not.toBe(publishContentHash(base));
    expect(publishContentHash({ ...base, content: "d" })).not.toBe(publishContentHash(base));
    // Length prefixes: moving a character between parts changes the hash.
    expect(publishContentHash(rec("ab", "c"))).not.toBe(publishContentHash(rec("a", "bc")));
  });
});

describe("planBlock with idempotency keys", () => {
  it("the same key and content as a ledger's key is not sealed again: answered with the original id", () => {
    const first = rec("t", "hello", "k1");
    const again = rec("t", "hello", "k1");
    const plan = planBlock(head(new Map([["k1", kept(first, id("t", 1, 1))]]), { height: 1 }), [at(0, again)], opts());
    expect(plan.answers).toEqual([{ requestId: again.requestId, gatewayId: "gw", outcome: "duplicate", eventId: id("t", 1, 1) }]);
    expect([...plan.advance]).toEqual([[0, 1]]);
    expect(plan.topicSeqs.size).toBe(0);
    // An empty block, so that a chain record covers the record and a rebuild decides it again.
    expect(plan.block).toMatchObject({ height: 2, events: [], ranges: [{ partition: 0, from: 0, to: 0 }] });
    expect(plan.pruneKeysAt).toBe(T0);
  });

  it("the same key with other content is a conflict, and makes no event either", () => {
    const first = rec("t", "hello", "k1");
    const other = rec("t", "bye", "k1");
    const plan = planBlock(head(new Map([["k1", kept(first, id("t", 1, 1))]])), [at(0, other), at(1, rec("t", "plain"))], opts());
    expect(plan.answers).toEqual([{ requestId: other.requestId, gatewayId: "gw", outcome: "conflict", eventId: id("t", 1, 1) }]);
    // Sequence numbers do not move for it: the next event takes 1.
    expect(ids(plan)).toEqual([id("t", 1, 1)]);
    expect(plan.block?.ranges).toEqual([{ partition: 0, from: 0, to: 1 }]);
    expect(plan.pruneKeysAt).toBe(T0);
  });

  it("two records with one key in a batch: the first wins, the second is its duplicate or conflict", () => {
    const a = rec("t", "x", "k");
    const b = rec("t", "x", "k");
    const c = rec("t", "y", "k");
    const plan = planBlock(head(), [at(0, a), at(1, b), at(2, c), at(3, rec("t", "z", "k2"))], opts());
    expect(ids(plan)).toEqual([id("t", 1, 1), id("t", 2, 1)]);
    expect(plan.answers.map((x) => [x.requestId, x.outcome, x.eventId])).toEqual([
      [b.requestId, "duplicate", id("t", 1, 1)],
      [c.requestId, "conflict", id("t", 1, 1)],
    ]);
    expect(plan.keys).toEqual([
      { key: "k", contentHash: publishContentHash(a), eventId: id("t", 1, 1), expiresAt: T0 + 24 * HOUR },
      { key: "k2", contentHash: publishContentHash(rec("t", "z")), eventId: id("t", 2, 1), expiresAt: T0 + 24 * HOUR },
    ]);
  });

  it("a key past its window (by the block's seal time, pruned or not) is absent: a new event", () => {
    const first = rec("t", "x", "k");
    const keys = new Map([["k", kept(first, id("t", 1, 1), T0)]]);
    const plan = planBlock(
      head(keys, { height: 1, topics: new Map([["t", { seq: 1, address: "0xa" }]]) }),
      [at(0, rec("t", "x", "k"))],
      opts(),
    );
    expect(ids(plan)).toEqual([id("t", 2, 2)]);
    expect(plan.answers).toEqual([]);
    expect(plan.keys.map((k) => [k.key, k.eventId])).toEqual([["k", id("t", 2, 2)]]);
    // One millisecond earlier the key still counted.
    expect(planBlock(head(keys, { height: 1 }), [at(0, rec("t", "x", "k"))], opts(T0 - 1)).answers).toHaveLength(1);
  });

  it("the window is the first publish's own retention", () => {
    const short = rec("t", "x", "k", 1_000);
    const first = planBlock(head(), [at(0, short)], opts());
    expect(first.keys[0]?.expiresAt).toBe(T0 + 1_000);
  });

  it("records without a key plan as before: no keys, no answers, no pruning", () => {
    const plan = planBlock(head(), [at(0, rec("t", "x")), at(1, rec("t", "x"))], opts());
    expect(ids(plan)).toEqual([id("t", 1, 1), id("t", 2, 1)]);
    expect(plan).toMatchObject({ answers: [], keys: [], pruneKeysAt: null });
  });

  it("a key is not taken by an event that was cut to the next block", () => {
    // t26821 and t49091 share their hash8: the second event opens the next block.
    const plan = planBlock(head(), [at(0, rec("t26821", "a")), at(1, rec("t49091", "b", "k"))], opts());
    expect(plan.rest).toHaveLength(1);
    expect(plan.keys).toEqual([]);
    expect(plan.pruneKeysAt).toBeNull();
  });
});

/**
 * The ledger as BlockSealer keeps it, in memory: head, positions, topics and keys, with the keys
 * of each block written and expired keys pruned exactly when the plan says.
 */
function memoryLedger() {
  const state = {
    height: 0,
    hash: GENESIS_HASH,
    next: new Map<number, number>(),
    topics: new Map<string, { seq: number; address: string }>(),
  };
  const keys = new Map<string, KeptKey>();
  const blocks: SealedBlock[] = [];
  const seal = (records: PositionedRecord[], timestampMs: number): BlockPlan => {
    const mine = new Map([...keys].filter(([k]) => records.some((r) => r.record?.idempotency?.key === k)));
    const plan = planBlock(
      { height: state.height, hash: state.hash, nextOffsets: state.next, topics: state.topics, keys: mine },
      records,
      opts(timestampMs),
    );
    for (const [p, o] of plan.advance) state.next.set(p, o);
    if (!plan.block) return plan;
    for (const [t, seq] of plan.topicSeqs) state.topics.set(t, { seq, address: state.topics.get(t)?.address ?? "0x" });
    if (plan.pruneKeysAt !== null) for (const [k, v] of keys) if (v.expiresAt <= plan.pruneKeysAt) keys.delete(k);
    for (const k of plan.keys) keys.set(k.key, k);
    state.height = plan.block.height;
    state.hash = plan.block.hash;
    blocks.push(plan.block);
    return plan;
  };
  return { seal, blocks, keys };
}

describe("a replay of keyed blocks", () => {
  it("seals every block again with the same hash, duplicates, expiries and pruning included", () => {
    const log: PositionedRecord[] = [
      at(0, rec("t", "a", "k1", HOUR)),
      at(1, rec("t", "b", "k2", 10 * HOUR)),
      at(2, rec("t", "e", "k4", 1.5 * HOUR)),
      at(3, rec("t", "a", "k1")), // duplicate of offset 0
      at(4, rec("t", "c")),
      at(5, rec("t", "z", "k1")), // conflict
      at(6, rec("t", "a", "k1")), // k1 expired by this block's time: a new event; k4 pruned
      at(7, rec("t", "b", "k2")), // sealed by a clock behind: k2 still counts
      at(8, rec("t", "e", "k4")), // k4 would count by this clock, but the block before pruned it: a new event, on replay too
      at(9, rec("t", "e", "k4")),
    ];
    // Seal times: the fourth block's clock is behind the third's, as another indexer's may be.
    const rounds: [number, number, number][] = [
      [0, 3, T0],
      [3, 6, T0 + 1_000],
      [6, 7, T0 + 2 * HOUR],
      [7, 9, T0 + HOUR + 1],
      [9, 10, T0 + HOUR + 2], // a repeat alone: an empty block
    ];
    const original = memoryLedger();
    const answers = rounds.map(([from, to, ts]) => original.seal(log.slice(from, to), ts).answers.map((a) => a.outcome));
    expect(answers).toEqual([[], ["duplicate", "conflict"], [], ["duplicate"], ["duplicate"]]);
    expect(original.blocks.map((b) => b.events.length)).toEqual([3, 1, 1, 1, 0]);

    // The rebuild: each block's ranges, sealed again at its recorded time on an empty ledger.
    const rebuilt = memoryLedger();
    for (const b of original.blocks) {
      const records = b.ranges.flatMap((r) => log.filter((x) => x.partition === r.partition && x.offset >= r.from && x.offset <= r.to));
      rebuilt.seal(records, b.timestampMs);
    }
    expect(rebuilt.blocks.map((b) => b.hash)).toEqual(original.blocks.map((b) => b.hash));
    expect([...rebuilt.keys]).toEqual([...original.keys]);
  });
});
