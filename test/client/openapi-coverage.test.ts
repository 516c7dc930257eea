import { describe, expect, it } from "vitest";
import type { Variant } from "@evb/domain";
import {
  BrokerClientE,
  BrokerClientL,
  BrokerClientM,
  type CallOptions,
  type SettingsChange,
  type SettingsUpdate,
  type SubscribeOptions,
} from "evb-client";
import { buildOpenApiDocument } from "../../services/gateway/src/openapi/openapi-document.ts";
import { OPERATION_SCHEMAS } from "../../services/gateway/src/openapi/operation-schemas.ts";
import { DOCUMENTED_MOUNTS, DOCUMENTED_OPERATIONS } from "../support/openapi-fixture.ts";

/**
 * The published client against the gateway's OpenAPI document, built here as the gateway builds
 * it: every operation the document lists for a variant has a method on that variant's client,
 * and the settings types carry every parameter subscribe and admin/subscriptionSettings take.
 * A new operation or parameter fails this until the client has it (or it is listed below as
 * one the client leaves to `call`).
 */

const OPERATIONS = DOCUMENTED_OPERATIONS;
const MOUNTS = DOCUMENTED_MOUNTS;
const { document } = buildOpenApiDocument({ mounts: MOUNTS, operations: OPERATIONS, schemas: OPERATION_SCHEMAS, version: "0.1.0" });

/** The console's own operations: reachable with `call(path, params)`, not given methods. */
const LEFT_TO_CALL = new Set(["admin/batch", "admin/metricsHistory", "admin/subscriptionStates"]);
/** A method is named by the operation's last segment, except: */
const METHOD_OF: Record<string, string> = { "admin/group/general": "groupGeneral", "rest/publishBatch": "publishMany" };
const methodOf = (op: string) => METHOD_OF[op] ?? (op.split("/").pop() as string);

const CLIENTS: Record<Variant, object> = {
  L: BrokerClientL.prototype,
  M: BrokerClientM.prototype,
  E: BrokerClientE.prototype,
};

type Param = { name: string; in: string };
function documentedParams(mount: string, op: string): string[] {
  const item = document.paths[`${mount}/${op}`] as { get?: { parameters?: Param[] } } | undefined;
  if (!item?.get) throw new Error(`${mount}/${op} is not in the document`);
  return (item.get.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
}

// Each key of the client's type, spelled out: tsc fails when the type gains or loses a key and
// this list does not (a key missing here: "property is missing"; an extra one: "excess property").
const SETTINGS_UPDATE: Record<keyof SettingsUpdate, true> = {
  maxRate: true,
  retryMaxAttempts: true,
  retryBaseMs: true,
  retryMaxMs: true,
  deliveryWindow: true,
  paused: true,
  alertUrl: true,
  bodyMode: true,
  filter: true,
};
const SETTINGS_CHANGE: Record<keyof SettingsChange, true> = {
  ...SETTINGS_UPDATE,
  rotateSecret: true,
  secretGraceMs: true,
  dropSecret: true,
  headers: true,
};
// subscribe(topic, url, opts): the options besides the per-call ones and the settings object.
const SUBSCRIBE_OPTIONS: Record<Exclude<keyof SubscribeOptions, keyof CallOptions | "settings">, true> = {
  subscriptionId: true,
  groupId: true,
  verify: true,
};

/** Every parameter one call sends, with a fake fetch that answers what `reply` says. */
async function sentParams(reply: unknown, call: (c: BrokerClientM) => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit) => {
    sent.push(...new URLSearchParams(init?.body as URLSearchParams).keys());
    return new Response(JSON.stringify(reply), { headers: { "content-type": "application/json" } });
  };
  await call(new BrokerClientM({ baseUrl: "http://broker.test/event-m", fetch: fetch as typeof globalThis.fetch }));
  return sent;
}

describe("the client covers the OpenAPI document", () => {
  for (const { variant, path: mount } of MOUNTS) {
    it(`every operation of ${variant} has a method on BrokerClient${variant}`, () => {
      const documented = Object.keys(document.paths)
        .filter((p) => p.startsWith(`${mount}/`))
        .map((p) => p.slice(mount.length + 1));
      expect(documented.length).toBeGreaterThan(20);
      const missing = documented.filter((op) => !LEFT_TO_CALL.has(op) && typeof Reflect.get(CLIENTS[variant], methodOf(op)) !== "function");
      expect(missing).toEqual([]);
    });
  }

  it("SettingsChange carries every parameter of admin/subscriptionSettings (dropSecret included)", () => {
    for (const { path: mount } of MOUNTS) {
      const params = documentedParams(mount, "admin/subscriptionSettings").filter((n) => n !== "subscriptionId");
      expect(Object.keys(SETTINGS_CHANGE).sort(), mount).toEqual(params.sort());
    }
  });

  it("subscribe's options and settings carry every parameter of rest/subscribe", () => {
    for (const { path: mount } of MOUNTS.filter((m) => m.variant !== "L")) {
      const params = documentedParams(mount, "rest/subscribe");
      const client = ["topic", "url", ...Object.keys(SUBSCRIBE_OPTIONS), ...Object.keys(SETTINGS_UPDATE)];
      expect(client.sort(), mount).toEqual(params.sort());
    }
  });

  it("and sends each of them by the document's name", async () => {
    const all = <K extends string>(keys: Record<K, true>, value: (k: K) => unknown) =>
      Object.fromEntries(Object.keys(keys).map((k) => [k, value(k as K)]));
    const change = all(SETTINGS_CHANGE, (k) => (k === "paused" || k === "rotateSecret" || k === "dropSecret" ? true : 1)) as SettingsChange;
    const settings = await sentParams({ code: 0, message: "success", data: {} }, (c) => c.subscriptionSettings("s", change));
    expect(settings.sort()).toEqual(documentedParams("/event-m", "admin/subscriptionSettings").sort());
    const update = all(SETTINGS_UPDATE, (k) => (k === "paused" ? true : k === "alertUrl" ? "https://a.test/" : 1)) as SettingsUpdate;
    const subscribe = await sentParams("id", (c) =>
      c.subscribe("t", "https://r.test/", { subscriptionId: "s", groupId: "1", verify: true, settings: update }),
    );
    expect(subscribe.sort()).toEqual(documentedParams("/event-m", "rest/subscribe").sort());
  });
});
