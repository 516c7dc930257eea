import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { silentLogger } from "@evb/domain";
import type { ApiRole } from "@evb/storage";
import { loadGatewayConfig } from "../config.ts";
import { PUBLISH_ACCESS } from "../events/publish-operation.ts";
import { gatewayOperations } from "../gateway-operations.ts";
import { gatewayCore } from "../gateway-parts.ts";
import { SUBSCRIBE_ACCESS } from "../subscriptions/subscribe-operation.ts";
import type { Operation } from "./operation.ts";
import { keyPermits, operationGroup, requiredRole } from "./operation-roles.ts";

// Every operation the gateway registers, as its composition root builds them (building them
// touches none of their connections; only handling a request does).
const none = {} as never;
const REGISTERED: readonly Operation[] = gatewayOperations(
  gatewayCore(loadGatewayConfig({}), { pool: none, feedPool: none, redis: none, subscriber: none }, silentLogger),
  { writer: none, receipts: none, chainLog: none, registry: none, metrics: none, buildInfo: none, listing: none },
).operations;
const byPath = new Map(REGISTERED.map((op) => [op.path, op]));

/** The operation registered at `path`; an unknown one fails the test. */
function op(path: string): Operation {
  const found = byPath.get(path);
  if (!found) throw new Error(`no operation ${path}`);
  return found;
}

/**
 * What writes: the role each writing operation must declare (docs/security.md). A write that
 * forgets its `role` needs only `read`, so any reader could call it: this table, and the name
 * rule below, fail when one does.
 */
const WRITES: Readonly<Record<string, ApiRole>> = {
  "rest/publish": "publish",
  "rest/publishBatch": "publish",
  "rest/open": "publish",
  "rest/subscribe": "subscribe",
  "rest/unSubscribe": "subscribe",
  "admin/subscriptionSettings": "subscribe",
  "rest/close": "admin",
  "admin/replayDeadLetters": "admin",
  "admin/resendEvent": "admin",
};
/** Names that say an operation changes something (publish, open, close, subscribe, replay, resend, settings, …). */
const WRITE_NAME =
  /^(publish|open|close|subscribe|unSubscribe|replay|resend|create|delete|remove|update|set|add|pause|resume|rotate|revoke)|Settings$/;

describe("operation roles", () => {
  it("maps every kind of operation to its role", () => {
    expect(requiredRole(op("rest/publish"))).toBe("publish");
    expect(requiredRole(op("rest/open"))).toBe("publish");
    expect(requiredRole(op("rest/subscribe"))).toBe("subscribe");
    expect(requiredRole(op("rest/unSubscribe"))).toBe("subscribe");
    expect(requiredRole(op("rest/close"))).toBe("admin");
    expect(requiredRole(op("admin/replayDeadLetters"))).toBe("admin");
    expect(requiredRole(op("admin/deliveryAttempts"))).toBe("admin");
    for (const read of ["rest/getEvent", "rest/state", "rest/exist", "rest/list", "admin/listSubscription", "admin/deadLetters"])
      expect(requiredRole(op(read)), read).toBe("read");
    // An operation that declares nothing needs `read`.
    expect(requiredRole({})).toBe("read");
  });

  it("finds the group a call touches", () => {
    expect(operationGroup(op("rest/publish"), undefined)).toBe("1");
    expect(operationGroup(op("rest/publish"), " ")).toBe("1");
    expect(operationGroup(op("rest/publish"), "2")).toBe("2");
    expect(operationGroup(op("admin/getVersion"), "2")).toBeNull();
    expect(operationGroup(op("admin/deadLetters"), undefined)).toBe("*");
    expect(operationGroup(op("admin/deadLetters"), "2")).toBe("2");
    expect(operationGroup(op("admin/replayDeadLetters"), "2")).toBe("*");
    expect(operationGroup(op("admin/deliveryAttempts"), "2")).toBe("*");
  });

  it("defect 4: E's blockchaininfo is group 1 whatever groupId says", () => {
    const info = op("admin/blockchaininfo");
    expect(operationGroup(info, "2")).toBe("1");
    expect(operationGroup(info, undefined)).toBe("1");
    expect(keyPermits({ roles: ["read"], groups: ["2"] }, "read", operationGroup(info, "2"))).toBe(false);
    expect(keyPermits({ roles: ["read"], groups: ["1"] }, "read", operationGroup(info, "2"))).toBe(true);
  });

  it("defect 5: unSubscribe needs only the role (ownership is checked by the store), not group 1", () => {
    expect(operationGroup(op("rest/unSubscribe"), undefined)).toBeNull();
    expect(keyPermits({ roles: ["subscribe"], groups: ["2"] }, "subscribe", operationGroup(op("rest/unSubscribe"), undefined))).toBe(true);
  });

  it("declares the group scopes docs/security.md describes", () => {
    const scopes = Object.fromEntries(REGISTERED.filter((o) => o.groupScope !== undefined).map((o) => [o.path, o.groupScope]));
    expect(scopes).toEqual({
      "admin/getVersion": "groupless",
      "admin/listGroup": "groupless",
      "admin/listNodes": "groupless",
      "admin/validateGroupId": "groupless",
      "admin/batch": "groupless",
      "rest/unSubscribe": "groupless",
      "admin/blockchaininfo": "group-one",
      "admin/deadLetters": "all-unless-named",
      "admin/replayDeadLetters": "all",
      "admin/deliveryAttempts": "all",
      "admin/resendEvent": "all",
    });
  });

  it("declares publish's own rules on publish alone, and STOMP and MQTT check against the same declarations", () => {
    const publish = op("rest/publish");
    expect(publish.paramFailures).toEqual({ "body-too-large": "CONTENT_TOO_LONG", "malformed-multipart": "URL_INVALID" });
    expect(publish).toMatchObject(PUBLISH_ACCESS);
    expect(op("rest/subscribe")).toMatchObject(SUBSCRIBE_ACCESS);
    // The batch publish is a publish: the same access, its own body's failures, each event counted.
    const batch = op("rest/publishBatch");
    expect(batch).toMatchObject(PUBLISH_ACCESS);
    expect(batch.paramFailures).toEqual({ "body-too-large": "BATCH_TOO_LARGE", "malformed-json": "BATCH_INVALID" });
    for (const other of REGISTERED.filter((o) => o.path !== "rest/publish" && o.path !== "rest/publishBatch")) {
      expect(other.paramFailures, other.path).toBeUndefined();
      expect(other.rateLimited, other.path).toBeUndefined();
      expect(other.groupIdParam, other.path).toBeUndefined();
    }
  });

  it("regression: no operation that writes forgets its role", () => {
    for (const [path, role] of Object.entries(WRITES)) expect(requiredRole(op(path)), path).toBe(role);
    for (const o of REGISTERED) {
      const name = o.path.split("/").at(-1) as string;
      if (WRITE_NAME.test(name)) expect(requiredRole(o), `${o.path} writes: it declares its role`).not.toBe("read");
    }
  });

  const cases: Array<
    [
      string,
      { roles: ("publish" | "subscribe" | "read" | "admin")[]; groups: string[] },
      Parameters<typeof keyPermits>[1],
      string | null,
      boolean,
    ]
  > = [
    ["publish key publishes in its group", { roles: ["publish"], groups: ["1", "2"] }, "publish", "2", true],
    ["publish key cannot publish in another group", { roles: ["publish"], groups: ["1"] }, "publish", "2", false],
    ["publish key cannot read", { roles: ["publish"], groups: ["1"] }, "read", "1", false],
    ["read key cannot subscribe", { roles: ["read"], groups: ["1"] }, "subscribe", "1", false],
    ["admin holds every role", { roles: ["admin"], groups: ["1"] }, "publish", "1", true],
    ["admin is still scoped to its groups", { roles: ["admin"], groups: ["1"] }, "publish", "2", false],
    ["a call across all groups needs the * scope", { roles: ["admin"], groups: ["1", "2"] }, "admin", "*", false],
    ["* covers every group", { roles: ["admin"], groups: ["*"] }, "admin", "*", true],
    ["groupless calls need only the role", { roles: ["read"], groups: ["7"] }, "read", null, true],
  ];
  it.each(cases)("%s", (_n, key, role, group, ok) => {
    expect(keyPermits(key, role, group)).toBe(ok);
  });

  it("defect 11(a): docs/security.md's role table names every registered operation with the role it declares, and no role for unknown paths", () => {
    const doc = readFileSync(join(import.meta.dirname, "..", "..", "..", "..", "docs", "security.md"), "utf8");
    const rows = doc.split("\n").filter((l) => /^\| `(publish|subscribe|read|admin)` \|/.test(l));
    expect(rows).toHaveLength(4);
    const documented = new Map<string, string>();
    for (const row of rows) {
      const role = /^\| `(\w+)`/.exec(row)?.[1] as string;
      const ops = [...row.matchAll(/`([A-Za-z]+(?:\/[A-Za-z]+)?)`/g)].map((m) => m[1] as string).filter((o) => o !== role);
      expect(ops.length, row).toBeGreaterThan(1);
      for (const name of ops) {
        // `state` is rest/state; `group/general` is admin/group/general.
        const path =
          name.startsWith("rest/") || name.startsWith("admin/") ? name : byPath.has(`admin/${name}`) ? `admin/${name}` : `rest/${name}`;
        expect(requiredRole(op(path)), `${role}: ${name}`).toBe(role);
        documented.set(path, role);
      }
      // Unknown paths are answered before authorization (app.ts routes first): no role covers them.
      expect(row).not.toMatch(/unknown/i);
    }
    expect([...byPath.keys()].filter((path) => !documented.has(path))).toEqual([]);
    expect(doc).toMatch(/An unknown path is answered as the variant answers it.{0,40}before any role is\s+checked/s);
  });
});
