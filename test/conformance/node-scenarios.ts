import { expect, it } from "vitest";
import { chainNodeId } from "@evb/registry";
import { expectBrokerError, expectOk, expectShape, type MountCase, missingParam, notAnInteger } from "./conformance-support.ts";
import { SEALER_INDEXES, type World } from "./world.ts";

const NODE = {
  nodeId: "string",
  nodeName: "null",
  nodeType: "string",
  blockNumber: ["number", "null"],
  pbftView: ["number", "null"],
  nodeActive: "number",
  createTime: "null",
  modifyTime: "null",
} as const;

/** node/nodeList in every variant, and E's blockchaininfo: the indexers as the chain's sealers. */
export function nodeScenarios(m: MountCase, w: () => World): void {
  const v = m.variant;
  const admin = (op: string, params: Record<string, string> = {}) => w().ctx.call(m, `admin/${op}`, params);
  const ids = SEALER_INDEXES.map(chainNodeId);

  it("nodeList answers every indexer of the group as an active sealer; paging is echoed, not applied", async () => {
    for (const groupId of ["1", "2"]) {
      // Neither checked nor applied (behaviour.md 9.5): page 0 of size 1000 lists both nodes.
      const page = expectShape(expectOk(await admin("node/nodeList", { groupId, pageNumber: "0", pageSize: "1000" }), v, "admin"), {
        total: "number",
        pageIndex: "number",
        pageSize: "number",
        pageData: "array",
      });
      expect(page).toMatchObject({ total: 2, pageIndex: 0, pageSize: 1000 });
      const nodes = (page.pageData as unknown[]).map((n) => expectShape(n, NODE));
      expect(nodes.map((n) => n.nodeId)).toEqual(ids);
      const height = await w().oracle.height(groupId);
      for (const n of nodes) {
        expect(n).toMatchObject({ nodeType: "sealer", nodeActive: 1 });
        expect(n.blockNumber as number).toBeLessThanOrEqual(height);
      }
    }
  });

  it("nodeList binds its paging parameters: absent or non-integer ones are the generic error", async () => {
    const missing = missingParam(v, "Integer", "pageSize");
    expectBrokerError(await admin("node/nodeList", { pageNumber: "1" }), v, missing.code, missing.message);
    const bad = notAnInteger(v, "x");
    expectBrokerError(await admin("node/nodeList", { pageNumber: "x", pageSize: "1" }), v, bad.code, bad.message);
    const blank = expectOk(await admin("node/nodeList", { pageNumber: "", pageSize: "" }), v, "admin");
    expect(blank).toMatchObject({ total: 2, pageIndex: null, pageSize: null });
  });

  if (v === "E") {
    it("blockchaininfo answers group 1's height, node ids and bracketed node addresses, bare", async () => {
      const info = expectShape(expectOk(await admin("blockchaininfo"), v, "admin"), {
        blockNumber: "number",
        nodeIdList: "array",
        nodeIpList: "array",
      });
      expect(info.blockNumber).toBe(await w().oracle.height("1"));
      expect(info.nodeIdList).toEqual(ids);
      expect(info.nodeIpList).toHaveLength(2);
      for (const ip of info.nodeIpList as string[]) expect(ip).toMatch(/^\[127\.0\.0\.1:\d{1,5}\]$/);
    });

    // Regression: blockchaininfo validated a groupId (100306 for "abc", 200211 for "3") although
    // E early's operation takes no parameters (behaviour.md 9.2); a groupId is now ignored.
    it("blockchaininfo takes no groupId: any value sent is ignored, never validated", async () => {
      const height = await w().oracle.height("1");
      for (const groupId of ["2", "3", "abc", ""]) {
        expect(expectOk(await admin("blockchaininfo", { groupId }), v, "admin")).toMatchObject({ blockNumber: height, nodeIdList: ids });
      }
    });
  }
}
