import { expect, it } from "vitest";
import { uniqueTopic } from "../support/broker-expect.ts";
import type { CallResult } from "../support/http.ts";
import { expectBrokerError, expectOk, expectShape, type MountCase, missingParam } from "./conformance-support.ts";
import type { World } from "./world.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const M_MOUNT: MountCase = { variant: "M", context: "/event-m" };

/** Subscription record keys in order: E has the first six (behaviour.md 2.3); all are strings. */
const RECORD_E = {
  interfaceType: "string",
  notifiedEventCount: "string",
  notifyingEventCount: "string",
  notifyTimeStamp: "string",
  topicName: "string",
  subscribeId: "string",
} as const;
const RECORD_ML = { ...RECORD_E, remoteIp: "string", createTimeStamp: "string", groupId: "string" } as const;

/** subscribe's reply: the id as raw, unquoted text. */
function expectRawId(r: CallResult): string {
  expect(r.status, r.text).toBe(200);
  expect(r.contentType).toMatch(/^text\/plain/);
  expect(r.text).toMatch(UUID);
  return r.text;
}

/**
 * REST subscription (M and E only) and admin/listSubscription in each variant's parameters and
 * shapes: L and M list per requested node, E lists every node; L gives arrays, M and E objects
 * keyed by subscription id.
 */
export function subscriptionScenarios(m: MountCase, w: () => World): void {
  const v = m.variant;
  const node = () => w().ctx.gatewayAddress();
  const subscribe = async (via: MountCase, topic: string, groupId?: string) =>
    expectRawId(await w().ctx.call(via, "rest/subscribe", { topic, url: w().callbackUrl, ...(groupId ? { groupId } : {}) }));
  const list = async (groupId?: string): Promise<Record<string, unknown>> => {
    const params: Record<string, string> = groupId ? { groupId } : {};
    if (v === "L") params.nodeInstances = node();
    if (v === "M") params.nodeIp = node();
    return expectOk(await w().ctx.call(m, "admin/listSubscription", params), v, "admin") as Record<string, unknown>;
  };
  /** This gateway's records, whatever the variant's container shape. */
  const recordsOf = (listing: Record<string, unknown>): Record<string, unknown>[] => {
    const mine = listing[node()];
    if (v === "L") {
      expect(Array.isArray(mine)).toBe(true);
      return mine as Record<string, unknown>[];
    }
    expect(mine && typeof mine === "object" && !Array.isArray(mine)).toBe(true);
    const byId = mine as Record<string, Record<string, unknown>>;
    for (const [id, rec] of Object.entries(byId)) expect(rec.subscribeId).toBe(id);
    return Object.values(byId);
  };

  if (v !== "L") {
    it("subscribe answers the id as raw text; unSubscribe answers bare true, then 100504", async () => {
      const id = await subscribe(m, uniqueTopic(`sub.${v}`));
      expect(expectOk(await w().ctx.call(m, "rest/unSubscribe", { subscriptionId: id }), v, "rest")).toBe(true);
      expectBrokerError(await w().ctx.call(m, "rest/unSubscribe", { subscriptionId: id }), v, 100504, "subscribe id is not exist");
      expectBrokerError(
        await w().ctx.call(m, "rest/unSubscribe", { subscriptionId: " " }),
        v,
        100503,
        "subscribe interface subscription id is blank",
      );
      const missing = missingParam(v, "String", "url");
      expectBrokerError(await w().ctx.call(m, "rest/subscribe", { topic: "a" }), v, missing.code, missing.message);
    });
  }

  it("listSubscription lists this gateway's live subscriptions as all-string records of the variant", async () => {
    const topic = uniqueTopic(`sub.${v}`);
    const id = await subscribe(v === "L" ? M_MOUNT : m, topic);
    const records = recordsOf(await list());
    const rec = records.find((r) => r.subscribeId === id);
    expect(rec, `subscription ${id} listed`).toBeDefined();
    expectShape(rec, v === "E" ? RECORD_E : RECORD_ML);
    expect(rec).toMatchObject({ interfaceType: "restful", topicName: topic, notifiedEventCount: "0" });
    expect(rec?.notifyTimeStamp).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    if (v !== "E") expect(rec).toMatchObject({ groupId: "1" });
    await w().ctx.call(M_MOUNT, "rest/unSubscribe", { subscriptionId: id });
    expect(recordsOf(await list()).map((r) => r.subscribeId)).not.toContain(id);
  });

  it("listSubscription honours groupId: a group-2 subscription is listed in group 2 only", async () => {
    const id = await subscribe(v === "L" ? M_MOUNT : m, uniqueTopic(`sub2.${v}`), "2");
    try {
      expect(recordsOf(await list("2")).map((r) => r.subscribeId)).toContain(id);
      expect(recordsOf(await list()).map((r) => r.subscribeId)).not.toContain(id);
    } finally {
      await w().ctx.call(M_MOUNT, "rest/unSubscribe", { subscriptionId: id });
    }
  });

  it("listSubscription's node parameter: the variant's blank and absent errors; an unknown node lists nothing", async () => {
    const admin = (params: Record<string, string>) => w().ctx.call(m, "admin/listSubscription", params);
    if (v === "L") {
      expectBrokerError(await admin({ nodeInstances: "" }), v, 200001, "invalid input param");
      const absent = missingParam(v, "String", "nodeInstances");
      expectBrokerError(await admin({}), v, absent.code, absent.message);
      expect(expectOk(await admin({ nodeInstances: "10.9.9.9:1" }), v, "admin")).toEqual({ "10.9.9.9:1": [] });
    } else if (v === "M") {
      expectBrokerError(await admin({ nodeIp: " " }), v, -1, "node ipList is null.");
      const absent = missingParam(v, "String", "nodeIp");
      expectBrokerError(await admin({}), v, absent.code, absent.message);
      expect(expectOk(await admin({ nodeIp: "10.9.9.9:1" }), v, "admin")).toEqual({ "10.9.9.9:1": {} });
    } else {
      // E takes no node parameter: it lists every node, this one included.
      expect(Object.keys(expectOk(await admin({ nodeIp: "10.9.9.9:1" }), v, "admin") as object)).toContain(node());
    }
  });
}

/**
 * admin/innerListSubscription (behaviour.md 9.1, 9.2): the local node's map of subscription id →
 * record, bare in M and E (M requires groupId), enveloped in L.
 */
export function innerListScenarios(m: MountCase, w: () => World): void {
  const v = m.variant;
  it("innerListSubscription maps this node's subscription ids to records, in the variant's envelope", async () => {
    const topic = uniqueTopic(`inner.${v}`);
    const id = expectRawId(await w().ctx.call(M_MOUNT, "rest/subscribe", { topic, url: w().callbackUrl }));
    try {
      const r = await w().ctx.call(m, "admin/innerListSubscription", { groupId: "1" });
      const map = expectOk(r, v, "rest") as Record<string, Record<string, unknown>>;
      expect(Array.isArray(map)).toBe(false);
      expectShape(map[id], v === "E" ? RECORD_E : RECORD_ML);
      expect(map[id]).toMatchObject({ subscribeId: id, topicName: topic });
      expect(
        Object.keys((expectOk(await w().ctx.call(m, "admin/innerListSubscription", { groupId: "2" }), v, "rest") as object) ?? {}),
      ).not.toContain(id);
      if (v === "M") {
        const absent = missingParam(v, "String", "groupId");
        expectBrokerError(await w().ctx.call(m, "admin/innerListSubscription", {}), v, absent.code, absent.message);
      } else {
        expect(Object.keys(expectOk(await w().ctx.call(m, "admin/innerListSubscription", {}), v, "rest") as object)).toContain(id);
      }
    } finally {
      await w().ctx.call(M_MOUNT, "rest/unSubscribe", { subscriptionId: id });
    }
  });
}
