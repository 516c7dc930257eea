import { describe, expect, it } from "vitest";
import { statsEntry } from "./subscription-stats.ts";

describe("statsEntry", () => {
  it("maps the ledger's counter names onto the ones admin/listSubscription shows", () => {
    expect(statsEntry({ id: "s", nodeInstance: "n:1", delivered: 4, pending: 2, notifiedAt: 99, rev: 7 })).toEqual({
      id: "s",
      nodeInstance: "n:1",
      notified: 4,
      notifying: 2,
      notifyTs: 99,
      rev: 7,
    });
  });
});
