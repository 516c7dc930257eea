import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type LogRecord, type PositionedRecord, silentLogger, topicHash8 } from "@evb/domain";
import { BlockSealer, LedgerFenceError, readLedgerFence } from "./block-sealer.ts";
import { migrate } from "./migrate.ts";
import { poolOptions } from "./pool.ts";

const record = (topic: string, content: string): LogRecord => ({
  v: 1,
  requestId: randomBytes(8).toString("hex"),
  gatewayId: "gw-test",
  groupId: "1",
  topic,
  content,
  extensions: {},
  sender: "0x00",
  publishedAt: 0,
});

// Crash survived: none; these pin the sealer's block boundaries and redelivery rule.
describe("BlockSealer", () => {
  const schema = `t_${randomBytes(4).toString("hex")}`;
  let pool: pg.Pool;
  let sealer: BlockSealer;
  beforeAll(async () => {
    pool = new pg.Pool(poolOptions(inject("databaseUrl"), schema, 2));
    await migrate(pool, schema, silentLogger);
    sealer = new BlockSealer({ pool, sealer: { index: 0 } });
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    await pool.end();
  });

  it("topics whose sha256 prefixes collide do not wedge the partition: the second event goes to the next block", async () => {
    // Two topic names with the same first 8 hex digits of SHA-256: their first events in one
    // block would both be 3b787b99-1-<height>, which the unique event-id index rejects forever.
    expect(topicHash8("t26821")).toBe(topicHash8("t49091"));
    const batch: PositionedRecord[] = [
      { partition: 0, offset: 0, record: record("t26821", "a") },
      { partition: 0, offset: 1, record: record("t49091", "b") },
      { partition: 0, offset: 2, record: record("t26821", "c") },
    ];
    const { blocks } = await sealer.seal("1", 1, batch);
    expect(blocks.map((b) => b.events.map((e) => e.eventId))).toEqual([["3b787b99-1-1"], ["3b787b99-1-2", "3b787b99-2-2"]]);
    const rows = await pool.query("SELECT topic, seq, height, kafka_offset FROM events ORDER BY kafka_offset");
    expect(rows.rows).toEqual([
      { topic: "t26821", seq: 1, height: 1, kafka_offset: 0 },
      { topic: "t49091", seq: 1, height: 2, kafka_offset: 1 },
      { topic: "t26821", seq: 2, height: 2, kafka_offset: 2 },
    ]);
    expect((await pool.query("SELECT next_offset FROM indexed_offsets")).rows).toEqual([{ next_offset: 3 }]);
  });

  it("does not seal past records missing from the batch, and says which", async () => {
    expect((await sealer.seal("1", 1, [{ partition: 7, offset: 0, record: record("gappy", "a") }])).gaps).toEqual([]);
    const out = await sealer.seal("1", 1, [{ partition: 7, offset: 5, record: record("gappy", "b") }]);
    expect(out).toEqual({ blocks: [], gaps: [{ groupId: "1", partition: 7, expected: 1, got: 5 }], answers: [] });
    expect((await pool.query("SELECT next_offset FROM indexed_offsets WHERE partition = 7")).rows).toEqual([{ next_offset: 1 }]);
  });

  it("a redelivered batch is indexed once", async () => {
    const batch: PositionedRecord[] = [
      { partition: 1, offset: 0, record: record("again", "x") },
      { partition: 1, offset: 1, record: null },
      { partition: 1, offset: 2, record: record("again", "y") },
    ];
    const first = await sealer.seal("1", 1, batch);
    expect(first.blocks).toHaveLength(1);
    expect((await sealer.seal("1", 1, batch)).blocks).toEqual([]);
    const { blocks: partial } = await sealer.seal("1", 1, [...batch, { partition: 1, offset: 3, record: record("again", "z") }]);
    expect(partial.map((b) => b.events.map((e) => e.seq))).toEqual([[3]]);
    expect((await pool.query("SELECT count(*)::int AS n FROM events WHERE topic = 'again'")).rows[0].n).toBe(3);
  });

  it("a replay seals a block whose range starts past records consumed without a block", async () => {
    // Offsets 0-1 of partition 9 were undecodable: consumed, no block, no chain record.
    await sealer.seal("1", 1, [
      { partition: 9, offset: 0, record: null },
      { partition: 9, offset: 1, record: null },
    ]);
    await pool.query("UPDATE indexed_offsets SET next_offset = 0 WHERE partition = 9"); // as in a ledger restored from before them
    const replayed = await sealer.seal("1", 1, [{ partition: 9, offset: 2, record: record("replayed", "r") }], {
      replay: { timestampMs: 5, sealerIndex: 4 },
    });
    expect(replayed.gaps).toEqual([]);
    expect(replayed.blocks.map((b) => [b.timestampMs, b.sealer])).toEqual([[5, "0x4"]]);
    // Outside a replay the same batch would be a gap.
    await pool.query("UPDATE indexed_offsets SET next_offset = 0 WHERE partition = 9");
    expect((await sealer.seal("1", 1, [{ partition: 9, offset: 3, record: record("replayed", "s") }])).gaps).toHaveLength(1);
  });

  // Crash survived: a publish retried (its first record sealed, its receipt lost) is found in
  // the ledger by its key, under the seal's lock; a rebuild on an empty schema decides the same.
  it("a key the ledger holds answers its repeat with the original id, other content as a conflict, and a replay seals the same blocks", async () => {
    const keyed = (content: string, key: string, retentionMs = 60_000): LogRecord => ({
      ...record("keyed", content),
      idempotency: { key, retentionMs },
    });
    const T = 1_800_000_000_000;
    const rounds: [PositionedRecord[], number][] = [
      [
        [
          { partition: 11, offset: 0, record: keyed("a", "k1") },
          { partition: 11, offset: 1, record: keyed("b", "k2", 1_000) },
          { partition: 12, offset: 0, record: keyed("d", "k4", 1_000) },
        ],
        T,
      ],
      [[{ partition: 11, offset: 2, record: keyed("a", "k1") }], T + 10], // only a duplicate: an empty block
      [
        [
          { partition: 11, offset: 3, record: keyed("z", "k1") },
          { partition: 11, offset: 4, record: keyed("c", "k3") },
        ],
        T + 20,
      ],
      [[{ partition: 11, offset: 5, record: keyed("b", "k2") }], T + 5_000], // k2 expired: a new event; k4 pruned
    ];
    const at = (ts: number) => new BlockSealer({ pool, sealer: { index: 0 }, now: () => ts });
    const outs = [];
    for (const [batch, ts] of rounds) outs.push(await at(ts).seal("3", 1, batch));
    const k1 = outs[0]?.blocks[0]?.events[0]?.eventId;
    expect(outs.map((o) => o.answers.map((a) => [a.outcome, a.eventId]))).toEqual([[], [["duplicate", k1]], [["conflict", k1]], []]);
    expect(outs.map((o) => o.blocks.map((b) => b.events.map((e) => e.seq)))).toEqual([[[1, 2, 3]], [[]], [[4]], [[5]]]);
    const keys = async (p: pg.Pool) =>
      (await p.query("SELECT key, event_id, sealed_at, expires_at FROM idempotency_keys WHERE group_id = '3' ORDER BY key")).rows;
    const kept = await keys(pool);
    expect(kept.map((k) => [k.key, k.expires_at])).toEqual([
      ["k1", T + 60_000],
      ["k2", T + 5_000 + 60_000],
      ["k3", T + 20 + 60_000],
    ]);

    // The rebuild: every block's range sealed again on an empty ledger at its recorded time.
    const other = `t_${randomBytes(4).toString("hex")}`;
    const fresh = new pg.Pool(poolOptions(inject("databaseUrl"), other, 2));
    try {
      await migrate(fresh, other, silentLogger);
      const log = rounds.flatMap(([batch]) => batch);
      for (const b of outs.flatMap((o) => o.blocks)) {
        const range = log.filter((r) => b.ranges.some((g) => g.partition === r.partition && r.offset >= g.from && r.offset <= g.to));
        const again = await new BlockSealer({ pool: fresh, sealer: { index: 0 } }).seal("3", 1, range, {
          replay: { timestampMs: b.timestampMs, sealerIndex: b.sealerIndex },
        });
        expect(again.blocks.map((x) => x.hash)).toEqual([b.hash]);
      }
      expect(await keys(fresh)).toEqual(kept);
    } finally {
      await fresh.query(`DROP SCHEMA "${other}" CASCADE`);
      await fresh.end();
    }
  });

  // Issue 19: with a fence, a seal commits only into the ledger the indexer matched and on the
  // chain through the head it saw; otherwise it writes nothing at all.
  it("a fenced seal commits on the head it saw, or one grown from it, and nothing anywhere else", async () => {
    const fence = await readLedgerFence(pool, "2");
    expect(fence).toMatchObject({ identity: expect.stringMatching(/^[0-9a-f-]{36}$/), height: 0 });
    const first = await sealer.seal("2", 1, [{ partition: 3, offset: 0, record: record("fenced", "a") }], { fence: fence ?? undefined });
    const b1 = first.blocks[0];
    // Another indexer of the group seals block 2 on top of block 1 (no fence of ours involved).
    await sealer.seal("2", 1, [{ partition: 3, offset: 1, record: record("fenced", "b") }]);
    const after1 = { identity: fence?.identity ?? "", height: b1?.height ?? 0, hash: b1?.hash ?? "" };
    const third = await sealer.seal("2", 1, [{ partition: 3, offset: 2, record: record("fenced", "c") }], { fence: after1 });
    expect(third.blocks.map((b) => b.height)).toEqual([3]);
    const count = async () => (await pool.query("SELECT count(*)::int AS n FROM events WHERE group_id = '2'")).rows[0].n;
    const before = await count();
    const refused = async (f: typeof after1) => {
      const err = await sealer
        .seal("2", 1, [{ partition: 3, offset: 3, record: record("fenced", "d") }], { fence: f })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LedgerFenceError);
      return (err as Error).message;
    };
    // A fence above the head (blocks lost: a restored backup), on another block, or in another ledger.
    expect(await refused({ ...after1, height: 9 })).toMatch(/moved back from 9 to 3/);
    expect(await refused({ ...after1, hash: "0xother" })).toMatch(/block 1 is 0x/);
    expect(await refused({ ...after1, identity: "another-ledger" })).toMatch(/replaced/);
    expect(await count()).toBe(before);
    expect((await pool.query("SELECT next_offset FROM indexed_offsets WHERE group_id = '2'")).rows).toEqual([{ next_offset: 3 }]);
  });
});
