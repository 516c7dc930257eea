import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminScenarios } from "./admin-scenarios.ts";
import { chainListScenarios } from "./chain-list-scenarios.ts";
import { MOUNT_CASES } from "./conformance-support.ts";
import { chainInvariantScenarios, groupIsolationScenarios } from "./group-isolation-scenarios.ts";
import { groupLogScenarios, groupRoutingScenarios } from "./group-routing-scenarios.ts";
import { nodeScenarios } from "./node-scenarios.ts";
import { restScenarios } from "./rest-scenarios.ts";
import { innerListScenarios, subscriptionScenarios } from "./subscription-scenarios.ts";
import { variantOperationScenarios } from "./variant-operation-scenarios.ts";
import { startWorld, stopWorld, type World } from "./world.ts";

// Crash survived: none. One gateway serves L, M and E at once over a system with groups 1 and
// 2 and two indexers (sealers 0xa and 0xb); the same scenarios run against each mount and check
// the variant's exact shapes, key order, JSON types, codes and messages.
describe("variant conformance", () => {
  let world: World | undefined;
  const w = (): World => {
    if (!world) throw new Error("the system did not start");
    return world;
  };
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(async () => {
    await stopWorld(world);
  });

  describe.each(MOUNT_CASES)("variant $variant at $context", (m) => {
    describe("REST operations", () => restScenarios(m, w));
    describe("general admin operations", () => adminScenarios(m, w));
    describe("transList and blockList", () => chainListScenarios(m, w));
    describe("nodes", () => nodeScenarios(m, w));
    describe("subscriptions", () => subscriptionScenarios(m, w));
    describe("innerListSubscription", () => innerListScenarios(m, w));
    describe("operations of this variant only", () => variantOperationScenarios(m, w));
    describe("group isolation", () => groupIsolationScenarios(m, w));
    describe("group routing", () => groupRoutingScenarios(m, w));
  });

  it("serves /openapi.json, which every reply above is checked against, and its reference page", async () => {
    const doc = await fetch(`${w().sys.gatewayUrl}/openapi.json`);
    expect(doc.headers.get("content-type")).toMatch(/^application\/json/);
    expect(((await doc.json()) as { openapi: string }).openapi).toBe("3.1.0");
    const page = await fetch(`${w().sys.gatewayUrl}/openapi.html`);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await page.text()).toContain("<code>/event-m/rest/subscribe</code>");
  });

  describe("the chains behind the admin API", () => chainInvariantScenarios(w));
  describe("the Kafka log per group", () => groupLogScenarios(w));
});
