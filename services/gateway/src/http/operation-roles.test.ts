import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keyPermits, operationGroup, requiredRole } from "./operation-roles.ts";

describe("operation roles", () => {
  it("maps every kind of operation to its role", () => {
    expect(requiredRole("rest/publish")).toBe("publish");
    expect(requiredRole("rest/open")).toBe("publish");
    expect(requiredRole("rest/subscribe")).toBe("subscribe");
    expect(requiredRole("rest/unSubscribe")).toBe("subscribe");
    expect(requiredRole("rest/close")).toBe("admin");
    expect(requiredRole("admin/replayDeadLetters")).toBe("admin");
    expect(requiredRole("admin/deliveryAttempts")).toBe("admin");
    for (const read of [
      "rest/getEvent",
      "rest/state",
      "rest/exist",
      "rest/list",
      "admin/listSubscription",
      "admin/deadLetters",
      "rest/nope",
    ])
      expect(requiredRole(read), read).toBe("read");
  });

  it("finds the group a call touches", () => {
    expect(operationGroup("rest/publish", undefined)).toBe("1");
    expect(operationGroup("rest/publish", " ")).toBe("1");
    expect(operationGroup("rest/publish", "2")).toBe("2");
    expect(operationGroup("admin/getVersion", "2")).toBeNull();
    expect(operationGroup("admin/deadLetters", undefined)).toBe("*");
    expect(operationGroup("admin/deadLetters", "2")).toBe("2");
    expect(operationGroup("admin/replayDeadLetters", "2")).toBe("*");
    expect(operationGroup("admin/deliveryAttempts", "2")).toBe("*");
  });

  it("defect 4: E's blockchaininfo is group 1 whatever groupId says", () => {
    expect(operationGroup("admin/blockchaininfo", "2")).toBe("1");
    expect(operationGroup("admin/blockchaininfo", undefined)).toBe("1");
    expect(keyPermits({ roles: ["read"], groups: ["2"] }, "read", operationGroup("admin/blockchaininfo", "2"))).toBe(false);
    expect(keyPermits({ roles: ["read"], groups: ["1"] }, "read", operationGroup("admin/blockchaininfo", "2"))).toBe(true);
  });

  it("defect 5: unSubscribe needs only the role (ownership is checked by the store), not group 1", () => {
    expect(operationGroup("rest/unSubscribe", undefined)).toBeNull();
    expect(keyPermits({ roles: ["subscribe"], groups: ["2"] }, "subscribe", operationGroup("rest/unSubscribe", undefined))).toBe(true);
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

  it("defect 11(a): docs/security.md's role table says what requiredRole does, and no role for unknown paths", () => {
    const doc = readFileSync(join(import.meta.dirname, "..", "..", "..", "..", "docs", "security.md"), "utf8");
    const rows = doc.split("\n").filter((l) => /^\| `(publish|subscribe|read)` \|/.test(l));
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const role = /^\| `(\w+)`/.exec(row)?.[1];
      const ops = [...row.matchAll(/`([A-Za-z]+(?:\/[A-Za-z]+)?)`/g)].map((m) => m[1] as string).filter((op) => op !== role);
      expect(ops.length, row).toBeGreaterThan(1);
      for (const op of ops) expect(requiredRole(op.includes("/") ? op : `admin/${op}`), `${role}: ${op}`).toBe(role);
      // Unknown paths are answered before authorization (app.ts routes first): no role covers them.
      expect(row).not.toMatch(/unknown/i);
    }
    expect(doc).toMatch(/An unknown path is answered as the variant answers it.{0,40}before any role is\s+checked/s);
  });
});
