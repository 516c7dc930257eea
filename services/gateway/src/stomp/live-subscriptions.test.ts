import { describe, expect, it } from "vitest";
import { type LiveRecord, newestById } from "./live-subscriptions.ts";

const rec = (id: string, createdAt: number, node = "n:1"): LiveRecord => ({
  id,
  node,
  groupId: "1",
  topicName: "t",
  remoteIp: "127.0.0.1",
  createdAt,
  delivered: 0,
  notifiedAt: null,
});

describe("newestById", () => {
  it("lists a subscription resumed on a restarted gateway once, by its newest record, oldest first", () => {
    const killed = rec("a", 10, "n:1");
    const resumed = rec("a", 30, "n:1");
    expect(newestById([resumed, rec("b", 20), killed])).toEqual([rec("b", 20), resumed]);
  });
});
