import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type LogRecord, type PositionedRecord, silentLogger } from "@evb/domain";
import { BlockSealer } from "./block-sealer.ts";
import { ChainStore } from "./chain-store.ts";
import { migrate } from "./migrate.ts";
import { poolOptions } from "./pool.ts";

function record(topic: string, groupId: string): LogRecord {
  return {
    v: 1,
    requestId: randomBytes(8).toString("hex"),
    gatewayId: "gw-test",
    groupId,
    topic,
    content: "x",
    extensions: {},
    sender: `0x${"ab".repeat(20)}`,
    publishedAt: 1,
  };
}

// Crash survived: none; these pin the admin API's ledger reads on a real Postgres.
describe("ChainStore over a sealed ledger", () => {
  const schema = `t_${randomBytes(4).toString("hex")}`;
  let pool: pg.Pool;
  let chain: ChainStore;
  let offset = 0;
  const seal = async (sealer: BlockSealer, groupId: string, n: number) => {
    const batch: PositionedRecord[] = Array.from({ length: n }, () => ({ partition: 0, offset: offset++, record: record("t", groupId) }));
    return (await sealer.seal(groupId, 1, batch)).blocks;
  };

  beforeAll(async () => {
    pool = new pg.Pool(poolOptions(inject("databaseUrl"), schema, 2));
    await migrate(pool, schema, silentLogger);
    chain = new ChainStore(pool);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    await pool.end();
  });

  it("totals are zero before a group's first block", async () => {
    expect(await chain.totals("1")).toEqual({ latestBlock: 0, transactionCount: 0 });
    expect(await chain.latestBlock("1")).toBeNull();
  });

  it("counts transactions per group as blocks are sealed, and reads blocks by height, hash and range", async () => {
    const s10 = new BlockSealer({ pool, sealer: { index: 10 }, now: () => 1_715_677_200_000 });
    const [b1] = await seal(s10, "1", 3);
    const [b2] = await seal(s10, "1", 1);
    await seal(new BlockSealer({ pool, sealer: { index: 2 } }), "2", 5);
    expect(await chain.totals("1")).toEqual({ latestBlock: 2, transactionCount: 4 });
    expect(await chain.totals("2")).toEqual({ latestBlock: 1, transactionCount: 5 });

    const byHeight = await chain.blockByHeight("1", 1);
    expect(byHeight).toEqual({ height: 1, hash: b1?.hash, sealedAt: 1_715_677_200_000, txCount: 3, sealer: "0xa", sealerIndex: 10 });
    expect(await chain.blockByHash("1", b2?.hash as string)).toMatchObject({ height: 2, txCount: 1 });
    // A hash is only found in its own group.
    expect(await chain.blockByHash("2", b2?.hash as string)).toBeNull();
    expect((await chain.latestBlock("1"))?.height).toBe(2);
    expect((await chain.blocksBetween("1", 1, 5)).map((b) => b.height)).toEqual([2, 1]);

    const txs = await chain.transactionsOfBlock("1", 1, 1, 10);
    expect(txs.map((t) => t.txHash)).toEqual(b1?.events.slice(1).map((e) => e.txHash));
    expect(txs[0]).toMatchObject({ sender: `0x${"ab".repeat(20)}`, height: 1, timestampMs: 1_715_677_200_000 });
    expect(txs[0]?.toAddress).toMatch(/^0x[0-9a-f]{40}$/);
  });
});
