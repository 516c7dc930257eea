import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { expectBrokerError, expectOk, expectShape, type MountCase } from "./conformance-support.ts";
import type { World } from "./world.ts";

const ROOT_VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "package.json"), "utf8")) as { version: string })
  .version;

/** The general admin operations, offered in every variant: M and L envelope them, E answers bare. */
export function adminScenarios(m: MountCase, w: () => World): void {
  const v = m.variant;
  const admin = (op: string, params: Record<string, string> = {}, method: "GET" | "POST" | "PUT" | "DELETE" = "GET") =>
    w().ctx.call(m, `admin/${op}`, params, method);

  it("getVersion answers four strings: the package version and the build's git facts", async () => {
    const info = expectShape(expectOk(await admin("getVersion"), v, "admin"), {
      eventVersion: "string",
      gitCommitTimeStamp: "string",
      gitBranch: "string",
      gitCommitHash: "string",
    });
    expect(info.eventVersion).toBe(ROOT_VERSION);
    expect(info.gitCommitTimeStamp).toMatch(/^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})?$/);
  });

  it("listGroup answers the configured groups as strings, whatever the HTTP method", async () => {
    for (const method of ["GET", "POST", "PUT", "DELETE"] as const) {
      expect(expectOk(await admin("listGroup", {}, method), v, "admin"), method).toEqual(["1", "2"]);
    }
  });

  it("listNodes answers ip:port strings and lists this gateway", async () => {
    const nodes = expectOk(await admin("listNodes"), v, "admin") as unknown[];
    expect(Array.isArray(nodes)).toBe(true);
    for (const n of nodes) expect(n).toMatch(/^[^\s:]+:\d{1,5}$/);
    expect(nodes).toContain(w().ctx.gatewayAddress());
  });

  it("group/general counts each group's own chain, as numbers, with both indexers as nodes", async () => {
    for (const groupId of ["1", "2"]) {
      const g = expectShape(expectOk(await admin("group/general", { groupId }), v, "admin"), {
        nodeCount: "number",
        transactionCount: "number",
        latestBlock: "number",
      });
      expect(g, `group ${groupId}`).toEqual({
        nodeCount: 2,
        transactionCount: await w().oracle.transactionCount(groupId),
        latestBlock: await w().oracle.height(groupId),
      });
    }
    // No groupId means group 1.
    expect(expectOk(await admin("group/general"), v, "admin")).toMatchObject({ latestBlock: await w().oracle.height("1") });
  });

  it("every group-aware admin operation rejects an unknown group before anything else", async () => {
    const cases: [string, Record<string, string>][] = [
      ["group/general", { groupId: "9" }],
      ["transaction/transList", { groupId: "9", pageNumber: "-1", pageSize: "0" }],
      ["block/blockList", { groupId: "9", pageNumber: "-1", pageSize: "0" }],
      ["node/nodeList", { groupId: "9", pageNumber: "1", pageSize: "10" }],
    ];
    for (const [op, params] of cases) expectBrokerError(await admin(op, params), v, 200211, "unknown group id");
    const nonNumeric = v === "E" ? [100306, "event group id should be a string start from 1"] : [200211, "unknown group id"];
    expectBrokerError(await admin("group/general", { groupId: "abc" }), v, nonNumeric[0] as number, nonNumeric[1] as string);
  });
}
