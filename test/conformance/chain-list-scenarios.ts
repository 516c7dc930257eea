import { expect, it } from "vitest";
import type { CallResult } from "../support/http.ts";
import {
  ADMIN_TIMESTAMP,
  expectBrokerError,
  expectOk,
  expectShape,
  type MountCase,
  missingParam,
  notAnInteger,
} from "./conformance-support.ts";
import type { OracleBlock } from "./ledger-oracle.ts";
import { SEALER_INDEXES, type World } from "./world.ts";

const PAGE = { total: "number", pageIndex: "number", pageSize: "number", pageData: "array" } as const;
const TRANSACTION = {
  transHash: "string",
  transFrom: "string",
  transTo: "string",
  blockNumber: "number",
  blockTimestamp: "string",
  createTime: "null",
  modifyTime: "null",
} as const;
const BLOCK = {
  pkHash: "string",
  blockNumber: "number",
  blockTimestamp: "string",
  transCount: "number",
  sealerIndex: "number",
  sealer: "string",
  createTime: "null",
  modifyTime: "null",
} as const;

/** The paging errors transList and blockList share (behaviour.md 9.3 steps 2–3, 1.5). */
async function expectPagingErrors(m: MountCase, list: (p: Record<string, string>) => Promise<CallResult>): Promise<void> {
  const v = m.variant;
  const pageIndex = [100104, "page index should be an integer start from 0"] as const;
  const pageSize = [100107, "page size should be an integer in(1, 100)"] as const;
  for (const [params, [code, message]] of [
    [{ pageNumber: "-1", pageSize: "10" }, pageIndex],
    [{ pageNumber: "", pageSize: "10" }, pageIndex],
    [{ pageNumber: "1", pageSize: "0" }, pageSize],
    [{ pageNumber: "1", pageSize: "101" }, pageSize],
    [{ pageNumber: "1", pageSize: "" }, pageSize],
    // Page 0 passes the range check and fails the page check.
    [{ pageNumber: "0", pageSize: "10" }, [-1, "pageIndex error."]],
    [{ pageNumber: "1" }, Object.values(missingParam(v, "Integer", "pageSize"))],
    [{ pageSize: "1" }, Object.values(missingParam(v, "Integer", "pageNumber"))],
    [{ pageNumber: "abc", pageSize: "1" }, Object.values(notAnInteger(v, "abc"))],
  ] as const) {
    expectBrokerError(await list(params), v, code as number, message as string);
  }
}

function expectBlockRecord(record: unknown, b: OracleBlock): void {
  const r = expectShape(record, BLOCK);
  expect(r).toMatchObject({ pkHash: b.hash, blockNumber: b.height, transCount: b.txCount, sealerIndex: b.sealerIndex, sealer: b.sealer });
  expect(r.blockTimestamp).toMatch(ADMIN_TIMESTAMP);
  expect(SEALER_INDEXES as readonly number[]).toContain(r.sealerIndex);
  expect(Number.parseInt(r.sealer as string, 16)).toBe(r.sealerIndex);
  expect(r.sealer).toMatch(/^0x[0-9a-f]+$/);
}

/** transaction/transList and block/blockList: paging from 1, filters, and the -1/200214 rules. */
export function chainListScenarios(m: MountCase, w: () => World): void {
  const v = m.variant;
  const transList = (p: Record<string, string>) => w().ctx.call(m, "admin/transaction/transList", p);
  const blockList = (p: Record<string, string>) => w().ctx.call(m, "admin/block/blockList", p);

  it("transList without a filter pages the latest block's transactions", async () => {
    const latest = await w().oracle.block("1", await w().oracle.height("1"));
    const page = expectShape(expectOk(await transList({ pageNumber: "1", pageSize: "10" }), v, "admin"), PAGE);
    expect(page).toMatchObject({ total: latest.txCount, pageIndex: 1, pageSize: 10 });
    const hashes = await w().oracle.txHashes("1", latest.height);
    expect((page.pageData as unknown[]).map((t) => expectShape(t, TRANSACTION).transHash)).toEqual(hashes);
    const tx = (page.pageData as Record<string, unknown>[])[0] as Record<string, unknown>;
    expect(tx).toMatchObject({ blockNumber: latest.height });
    expect(tx.transFrom).toMatch(/^0x[0-9a-f]{40}$/);
    expect(tx.transTo).toMatch(/^0x[0-9a-f]{40}$/);
    expect(tx.blockTimestamp).toMatch(ADMIN_TIMESTAMP);
  });

  it("transList by blockNumber pages in block order; a page starting at the end is empty, past it -1", async () => {
    const { height, txCount } = w().multiTxBlock;
    expect(txCount).toBeGreaterThanOrEqual(3);
    const hashes = await w().oracle.txHashes("1", height);
    const bn = String(height);
    const page2 = expectOk(await transList({ blockNumber: bn, pageNumber: "2", pageSize: "2" }), v, "admin");
    expect(page2).toMatchObject({ total: txCount, pageIndex: 2, pageSize: 2 });
    expect((page2 as { pageData: { transHash: string }[] }).pageData.map((t) => t.transHash)).toEqual(hashes.slice(2, 4));
    const atEnd = expectOk(await transList({ blockNumber: bn, pageNumber: String(txCount + 1), pageSize: "1" }), v, "admin");
    expect(atEnd).toEqual({ total: txCount, pageIndex: txCount + 1, pageSize: 1, pageData: [] });
    expectBrokerError(await transList({ blockNumber: bn, pageNumber: String(txCount + 2), pageSize: "1" }), v, -1, "pageIndex error.");
    expect(expectOk(await transList({ blockNumber: bn, pageNumber: "1", pageSize: "100" }), v, "admin")).toMatchObject({ total: txCount });
  });

  it("transList's transactionHash selects a BLOCK by its hash; a transaction's own hash finds nothing", async () => {
    const { height, txCount } = w().multiTxBlock;
    const block = await w().oracle.block("1", height);
    const page = expectOk(await transList({ transactionHash: block.hash, pageNumber: "1", pageSize: "1" }), v, "admin");
    expect(page).toMatchObject({
      total: txCount,
      pageData: [{ transHash: (await w().oracle.txHashes("1", height))[0], blockNumber: height }],
    });
    const txHash = (await w().oracle.txHashes("1", height))[0] as string;
    expectBrokerError(await transList({ transactionHash: txHash, pageNumber: "1", pageSize: "1" }), v, 200214, "we3sdk's rpc failed");
  });

  it("transList on a block that does not exist is 200214; its paging errors match the reference", async () => {
    const beyond = String((await w().oracle.height("1")) + 1000);
    expectBrokerError(await transList({ blockNumber: beyond, pageNumber: "1", pageSize: "1" }), v, 200214, "we3sdk's rpc failed");
    await expectPagingErrors(m, transList);
  });

  it("blockList pages count from block 1 and list newest first inside a page", async () => {
    const blocks = await w().oracle.blocks("1");
    const latest = blocks.length;
    expect(latest).toBeGreaterThanOrEqual(4);
    const first = expectShape(expectOk(await blockList({ pageNumber: "1", pageSize: "2" }), v, "admin"), PAGE);
    expect(first).toMatchObject({ total: latest, pageIndex: 1, pageSize: 2 });
    const data = first.pageData as unknown[];
    expect(data).toHaveLength(2);
    expectBlockRecord(data[0], blocks[1] as OracleBlock);
    expectBlockRecord(data[1], blocks[0] as OracleBlock);
    // The last page holds the remainder, newest first.
    const size = 3;
    const lastPage = Math.ceil(latest / size);
    const last = expectOk(await blockList({ pageNumber: String(lastPage), pageSize: String(size) }), v, "admin") as {
      pageData: { blockNumber: number }[];
    };
    const want = blocks
      .slice((lastPage - 1) * size)
      .map((b) => b.height)
      .reverse();
    expect(last.pageData.map((b) => b.blockNumber)).toEqual(want);
  });

  it("blockList: a page starting exactly past the latest block is empty, one further is -1", async () => {
    const latest = await w().oracle.height("1");
    const empty = expectOk(await blockList({ pageNumber: String(latest + 1), pageSize: "1" }), v, "admin");
    expect(empty).toEqual({ total: latest, pageIndex: latest + 1, pageSize: 1, pageData: [] });
    expectBrokerError(await blockList({ pageNumber: String(latest + 2), pageSize: "1" }), v, -1, "pageIndex error.");
    await expectPagingErrors(m, blockList);
  });

  it("blockList by pkHash or blockNumber answers that one block; an unknown one is 200214", async () => {
    const b = await w().oracle.block("1", w().multiTxBlock.height);
    const filters: Record<string, string>[] = [{ pkHash: b.hash }, { blockNumber: String(b.height) }];
    for (const filter of filters) {
      const page = expectOk(await blockList({ ...filter, pageNumber: "1", pageSize: "10" }), v, "admin") as { pageData: unknown[] };
      expect(page).toMatchObject({ total: 1, pageIndex: 1, pageSize: 10 });
      expect(page.pageData).toHaveLength(1);
      expectBlockRecord(page.pageData[0], b);
    }
    expectBrokerError(await blockList({ pkHash: `0x${"0".repeat(64)}`, pageNumber: "1", pageSize: "1" }), v, 200214, "we3sdk's rpc failed");
    expectBrokerError(await blockList({ blockNumber: "99999", pageNumber: "1", pageSize: "1" }), v, 200214, "we3sdk's rpc failed");
  });
}
