import { describe, expect, it } from "vitest";
import { formatLocalTimestamp } from "@evb/domain";
import { blockRecord, nodeRecord, transactionRecord } from "./chain-records.ts";

const AT = 1_715_677_200_000;

describe("admin chain records", () => {
  it("a block record has the original's keys in order, a hex sealer and its numeric index", () => {
    const r = blockRecord({ height: 7, hash: "0xab", sealedAt: AT, txCount: 3, sealer: "0xa", sealerIndex: 10 });
    expect(Object.keys(r)).toEqual([
      "pkHash",
      "blockNumber",
      "blockTimestamp",
      "transCount",
      "sealerIndex",
      "sealer",
      "createTime",
      "modifyTime",
    ]);
    expect(r).toMatchObject({
      pkHash: "0xab",
      blockNumber: 7,
      transCount: 3,
      sealerIndex: 10,
      sealer: "0xa",
      createTime: null,
      modifyTime: null,
    });
    expect(r.blockTimestamp).toBe(formatLocalTimestamp(AT));
    expect(r.blockTimestamp).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  it("a transaction record names sender and topic address, with the block's time", () => {
    const r = transactionRecord({ txHash: "0x1", sender: "0x2", toAddress: "0x3", height: 4, timestampMs: AT });
    expect(Object.keys(r)).toEqual(["transHash", "transFrom", "transTo", "blockNumber", "blockTimestamp", "createTime", "modifyTime"]);
    expect(r).toMatchObject({ transHash: "0x1", transFrom: "0x2", transTo: "0x3", blockNumber: 4 });
  });

  it("a node record is a sealer whose nodeActive is the number 1 or 0", () => {
    const node = { nodeId: "ff", sealerIndex: 1, address: "h:1", blockNumber: 5, lastSeenMs: AT };
    const live = nodeRecord({ ...node, active: true });
    expect(Object.keys(live)).toEqual([
      "nodeId",
      "nodeName",
      "nodeType",
      "blockNumber",
      "pbftView",
      "nodeActive",
      "createTime",
      "modifyTime",
    ]);
    expect(live).toMatchObject({ nodeId: "ff", nodeName: null, nodeType: "sealer", blockNumber: 5, pbftView: null, nodeActive: 1 });
    expect(nodeRecord({ ...node, active: false }).nodeActive).toBe(0);
  });
});
