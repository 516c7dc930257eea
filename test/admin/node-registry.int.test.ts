import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chainNodeId } from "@evb/registry";
import { expectBrokerError } from "../support/broker-expect.ts";
import { call } from "../support/http.ts";
import { TestSystem } from "../support/system.ts";

const L = "/event-broker";

interface NodePage {
  total: number;
  pageData: { nodeId: string; nodeActive: number }[];
}

/** Polls `read` until `ok` holds; fails with the last value after the deadline. */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Crash survived: SIGKILL of an indexer and of a gateway. Nothing deregisters them; their
// registry entries expire on Redis's clock, so the admin API first shows them inactive (chain
// nodes) or drops them from listNodes (broker nodes), then forgets them.
describe("node registry as the admin API sees it", () => {
  let sys: TestSystem;
  const ids = [chainNodeId(0), chainNodeId(1)];
  const nodeList = async (groupId = "1") => {
    const r = await call(sys.gatewayUrl, `${L}/admin/node/nodeList`, { groupId, pageNumber: "1", pageSize: "10" });
    return r.json as { code: number; data: NodePage | null };
  };
  const activity = (page: NodePage | null) => Object.fromEntries((page?.pageData ?? []).map((n) => [n.nodeId, n.nodeActive]));

  beforeAll(async () => {
    sys = await TestSystem.start({
      gateways: 2,
      indexers: 2,
      env: { GROUP_IDS: "1,2", NODE_HEARTBEAT_MS: "200", NODE_STALE_MS: "2000", NODE_GONE_MS: "5000" },
    });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("a killed indexer turns nodeActive 0 in every group, then disappears; restarted, it returns under the same id", async () => {
    expect(activity((await nodeList()).data)).toEqual({ [ids[0] as string]: 1, [ids[1] as string]: 1 });
    await sys.kill("indexer-2");
    for (const groupId of ["1", "2"]) {
      await until(
        () => nodeList(groupId),
        (r) => activity(r.data)[ids[1] as string] === 0,
        `sealer 1 is inactive in group ${groupId}`,
      );
    }
    expect(activity((await nodeList()).data)[ids[0] as string]).toBe(1);
    const gone = await until(
      () => nodeList(),
      (r) => r.data?.total === 1,
      "sealer 1 is gone",
    );
    expect(activity(gone.data)).toEqual({ [ids[0] as string]: 1 });
    const general = await call(sys.gatewayUrl, `${L}/admin/group/general`);
    expect((general.json as { data: { nodeCount: number } }).data.nodeCount).toBe(1);

    await sys.restart("indexer-2");
    await until(
      () => nodeList(),
      (r) => activity(r.data)[ids[1] as string] === 1,
      "sealer 1 is back",
    );
  });

  it("a killed gateway drops out of listNodes on the surviving one", async () => {
    const listNodes = async () => (await call(sys.gatewayUrl, `${L}/admin/listNodes`)).json as { data: string[] };
    const second = new URL(sys.gatewayUrls[1] as string).host;
    expect((await listNodes()).data).toEqual([new URL(sys.gatewayUrl).host, second].sort());
    await sys.kill("gateway-2");
    const after = await until(listNodes, (r) => !r.data.includes(second), "the killed gateway is not listed");
    expect(after.data).toEqual([new URL(sys.gatewayUrl).host]);
  });

  it("with no indexer left, nodeList is 200214 and the group has no nodes", async () => {
    await Promise.all([sys.kill("indexer-1"), sys.kill("indexer-2")]);
    await until(nodeList, (r) => r.code === 200214, "nodeList has no nodes");
    expectBrokerError(
      await call(sys.gatewayUrl, `${L}/admin/node/nodeList`, { pageNumber: "1", pageSize: "1" }),
      "L",
      200214,
      "we3sdk's rpc failed",
    );
    const general = await call(sys.gatewayUrl, `${L}/admin/group/general`, { groupId: "2" });
    expect((general.json as { data: { nodeCount: number } }).data.nodeCount).toBe(0);
    const info = await call(sys.gatewayUrl, "/event-e/admin/blockchaininfo");
    expect(info.json).toMatchObject({ nodeIdList: [], nodeIpList: [] });
  });
});
