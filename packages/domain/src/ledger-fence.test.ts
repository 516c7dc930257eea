import { describe, expect, it } from "vitest";
import { fenceProblem, type LedgerFence } from "./ledger-fence.ts";

const fence: LedgerFence = { identity: "L1", height: 5, hash: "0xaa" };

describe("fenceProblem", () => {
  it("lets a seal commit on the head it saw, or on a chain another indexer grew from it", () => {
    expect(fenceProblem("1", fence, { identity: "L1", height: 5, hashAtFence: "0xaa" })).toBeNull();
    expect(fenceProblem("1", fence, { identity: "L1", height: 9, hashAtFence: "0xaa" })).toBeNull();
    expect(fenceProblem("1", { identity: "L1", height: 0, hash: "0x00" }, { identity: "L1", height: 3, hashAtFence: null })).toBeNull();
  });

  it("stops a seal into a ledger that was dropped, recreated or replaced", () => {
    expect(fenceProblem("1", fence, { identity: null, height: 0, hashAtFence: null })).toMatch(/no identity/);
    expect(fenceProblem("1", fence, { identity: "L2", height: 5, hashAtFence: "0xaa" })).toMatch(
      /replaced \(identity L2, this indexer matched L1\)/,
    );
  });

  it("stops a seal into a ledger that lost blocks or holds other ones at the fence's height", () => {
    expect(fenceProblem("1", fence, { identity: "L1", height: 3, hashAtFence: null })).toMatch(/moved back from 5 to 3/);
    expect(fenceProblem("1", fence, { identity: "L1", height: 7, hashAtFence: "0xbb" })).toMatch(/block 5 is 0xbb, not the 0xaa/);
    expect(fenceProblem("1", fence, { identity: "L1", height: 7, hashAtFence: null })).toMatch(/block 5 is missing/);
  });
});
