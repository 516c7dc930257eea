import { expect, it } from "vitest";
import type { Variant } from "@evb/domain";
import { expectBrokerError, expectOk, expectShape, expectUnknownPath, type MountCase, missingParam } from "./conformance-support.ts";
import type { World } from "./world.ts";

/**
 * Admin operations only some variants have (seed, behaviour.md 9.1). REST subscription, which L
 * lacks, is checked below; M and E use it in the subscription scenarios.
 */
const ONLY_IN: Record<string, readonly Variant[]> = {
  "admin/validateGroupId": ["L"],
  "admin/getContractContext": ["L"],
  "admin/blockchaininfo": ["E"],
};
const NOWHERE = ["rest/foo", "admin/foo", "rest/open.json", "admin/group"];

/** Each variant has exactly its operations; the others answer as an unknown path does. */
export function variantOperationScenarios(m: MountCase, w: () => World): void {
  const v = m.variant;
  const admin = (op: string, params: Record<string, string> = {}) => w().ctx.call(m, `admin/${op}`, params);

  it("operations the variant lacks, and unknown paths, answer like the original's unknown path", async () => {
    const missing = [
      ...Object.entries(ONLY_IN)
        .filter(([, has]) => !has.includes(v))
        .map(([op]) => op),
      ...NOWHERE,
    ];
    if (v === "L") missing.push("rest/subscribe", "rest/unSubscribe");
    for (const op of missing) {
      expectUnknownPath(await w().ctx.call(m, op), v, "GET", `${m.context}/${op}`);
    }
    // The method named is the request's; the query string is not part of the path.
    expectUnknownPath(await w().ctx.call(m, "rest/foo", { a: "1" }, "POST"), v, "POST", `${m.context}/rest/foo`);
  });

  if (v === "L") {
    it("validateGroupId: a known group is the string SUCCESS; blank or unknown is 200211; absent is 200000", async () => {
      expect(expectOk(await admin("validateGroupId", { groupId: "1" }), v, "admin")).toBe("SUCCESS");
      expect(expectOk(await admin("validateGroupId", { groupId: "2" }), v, "admin")).toBe("SUCCESS");
      for (const groupId of ["", " ", "9", "abc"])
        expectBrokerError(await admin("validateGroupId", { groupId }), v, 200211, "unknown group id");
      const absent = missingParam(v, "String", "groupId");
      expectBrokerError(await admin("validateGroupId"), v, absent.code, absent.message);
    });

    it("getContractContext answers the group's storage parameters with string and number fields", async () => {
      for (const groupId of ["1", "2"]) {
        const c = expectShape(expectOk(await admin("getContractContext", { groupId }), v, "admin"), {
          chainId: "string",
          blockNumber: "number",
          blockLimit: "number",
          topicAddress: "string",
          gasLimit: "number",
          gasPrice: "number",
        });
        expect(c.blockNumber).toBe(await w().oracle.height(groupId));
        // A signed transaction's validity window: height + 500 (the reference's sample: 100 → 600).
        expect(c.blockLimit).toBe((c.blockNumber as number) + 500);
        expect(c.topicAddress).toMatch(/^0x[0-9a-f]{40}$/);
        expect(c).toMatchObject({ chainId: "1", gasLimit: 300_000_000, gasPrice: 300_000_000 });
      }
      const one = expectOk(await admin("getContractContext", { groupId: "1" }), v, "admin") as { topicAddress: string };
      const two = expectOk(await admin("getContractContext", { groupId: "2" }), v, "admin") as { topicAddress: string };
      expect(one.topicAddress).not.toBe(two.topicAddress);
      expectBrokerError(await admin("getContractContext", { groupId: "9" }), v, 200211, "unknown group id");
    });
  }
}
