import { expect, it } from "vitest";
import { blockHash, GENESIS_HASH } from "@evb/domain";
import { expectJson200, uniqueTopic } from "../support/broker-expect.ts";
import { expectBrokerError, expectOk, type MountCase } from "./conformance-support.ts";
import type { World } from "./world.ts";

/** What happens in group 2 is never visible in group 1, in any variant's terms. */
export function groupIsolationScenarios(m: MountCase, w: () => World): void {
  const v = m.variant;
  const call = (path: string, params: Record<string, string>, method: "GET" | "POST" = "GET") => w().ctx.call(m, path, params, method);

  it("a topic and its events in group 2 are invisible from group 1", async () => {
    const topic = uniqueTopic(`iso.${v}`);
    expect(expectOk(await call("rest/open", { topic, groupId: "2" }), v, "rest")).toBe(true);
    const pub = expectJson200(await call("rest/publish", { topic, content: "only in two", groupId: "2" }, "POST")) as { eventId: string };
    expect(pub).toMatchObject({ status: "SUCCESS" });

    expect(expectOk(await call("rest/exist", { topic }), v, "rest")).toBe(false);
    expectBrokerError(await call("rest/state", { topic, groupId: "1" }), v, 100101, "topic not exist");
    expectBrokerError(await call("rest/publish", { topic, content: "x" }, "POST"), v, 100101, "topic not exist");
    const got = expectOk(await call("rest/getEvent", { eventId: pub.eventId, groupId: "2" }), v, "rest");
    expect(got).toMatchObject({ topic, eventId: pub.eventId });
    // In group 1 the id is either past the height (100304) or names no event there (100303).
    const inOne = (await call("rest/getEvent", { eventId: pub.eventId })).json as { code: number };
    expect([100303, 100304]).toContain(inOne.code);

    const listOne = expectOk(await call("rest/list", { pageIndex: "0", pageSize: "100" }), v, "rest") as {
      topicInfoList: { topicName: string }[];
    };
    expect(listOne.topicInfoList.map((t) => t.topicName)).not.toContain(topic);
  });

  it("a group-2 block is not found by hash or transactions from group 1", async () => {
    const height = await w().oracle.height("2");
    const b = await w().oracle.block("2", height);
    expectBrokerError(
      await call("admin/block/blockList", { pkHash: b.hash, pageNumber: "1", pageSize: "1" }),
      v,
      200214,
      "we3sdk's rpc failed",
    );
    expectBrokerError(
      await call("admin/transaction/transList", { transactionHash: b.hash, pageNumber: "1", pageSize: "1" }),
      v,
      200214,
      "we3sdk's rpc failed",
    );
    const inTwo = expectOk(
      await call("admin/block/blockList", { groupId: "2", pkHash: b.hash, pageNumber: "1", pageSize: "1" }),
      v,
      "admin",
    );
    expect(inTwo).toMatchObject({ total: 1, pageData: [{ pkHash: b.hash, blockNumber: height }] });
  });
}

/** Checked once: each group's chain is its own gapless, hash-chained sequence. */
export function chainInvariantScenarios(w: () => World): void {
  it("heights are gapless from 1 and hash-chained in each group, independently", async () => {
    const hashes = new Map<string, Set<string>>();
    for (const groupId of ["1", "2"]) {
      const blocks = await w().oracle.blocks(groupId);
      expect(blocks.length).toBeGreaterThan(2);
      expect(blocks.map((b) => b.height)).toEqual(blocks.map((_, i) => i + 1));
      expect(await w().oracle.height(groupId)).toBe(blocks.length);
      let prev = GENESIS_HASH;
      for (const b of blocks) {
        expect(b.prevHash, `group ${groupId} block ${b.height}`).toBe(prev);
        const recomputed = blockHash({
          groupId,
          height: b.height,
          prevHash: prev,
          timestampMs: b.sealedAt,
          sealer: b.sealer,
          txHashes: await w().oracle.txHashes(groupId, b.height),
        });
        expect(recomputed, `group ${groupId} block ${b.height}`).toBe(b.hash);
        prev = b.hash;
      }
      hashes.set(groupId, new Set(blocks.map((b) => b.hash)));
    }
    const one = hashes.get("1") as Set<string>;
    expect([...(hashes.get("2") as Set<string>)].filter((h) => one.has(h))).toEqual([]);
  });
}
