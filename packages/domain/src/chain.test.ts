import { describe, expect, it } from "vitest";
import { type BlockHashInput, blockHash, GENESIS_HASH, senderAddress, topicAddress, type TxHashInput, transactionHash } from "./chain.ts";

const HASH = /^0x[0-9a-f]{64}$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;

const tx: TxHashInput = {
  eventId: "4cf7f4cc-1-1",
  topic: "com.event.test",
  contentBase64: "aGVsbG8=",
  extensions: { "event-format": "json", "event-tag": "t" },
  sender: senderAddress("127.0.0.1"),
  timestampMs: 1715680800000,
};

const block: BlockHashInput = {
  groupId: "1",
  height: 1,
  prevHash: GENESIS_HASH,
  timestampMs: 1715680800000,
  sealer: "0x0",
  txHashes: [transactionHash(tx)],
};

describe("addresses", () => {
  it("topic addresses are 0x + 40 hex, deterministic, and differ per group and name", () => {
    expect(topicAddress("1", "a")).toMatch(ADDRESS);
    expect(topicAddress("1", "a")).toBe(topicAddress("1", "a"));
    expect(topicAddress("2", "a")).not.toBe(topicAddress("1", "a"));
    expect(topicAddress("1", "b")).not.toBe(topicAddress("1", "a"));
  });

  it("sender addresses are 0x + 40 hex per caller", () => {
    expect(senderAddress("10.0.0.1")).toMatch(ADDRESS);
    expect(senderAddress("10.0.0.1")).not.toBe(senderAddress("10.0.0.2"));
  });

  it("the genesis hash is 0x + 64 zeros", () => {
    expect(GENESIS_HASH).toBe(`0x${"0".repeat(64)}`);
  });
});

describe("transactionHash", () => {
  it("is 0x + 64 hex and ignores the order extension keys came in", () => {
    expect(transactionHash(tx)).toMatch(HASH);
    const reordered = { ...tx, extensions: { "event-tag": "t", "event-format": "json" } };
    expect(transactionHash(reordered)).toBe(transactionHash(tx));
  });

  it.each<[string, Partial<TxHashInput>]>([
    ["eventId", { eventId: "4cf7f4cc-2-1" }],
    ["topic", { topic: "com.event.other" }],
    ["content", { contentBase64: "aGVsbG9v" }],
    ["an extension value", { extensions: { "event-format": "xml", "event-tag": "t" } }],
    ["an extension removed", { extensions: { "event-format": "json" } }],
    ["sender", { sender: senderAddress("127.0.0.2") }],
    ["timestamp", { timestampMs: 1715680800001 }],
  ])("changes when %s changes", (_what, change) => {
    expect(transactionHash({ ...tx, ...change })).not.toBe(transactionHash(tx));
  });

  it("does not collide when text moves across a field boundary", () => {
    expect(transactionHash({ ...tx, topic: "ab", contentBase64: "c" })).not.toBe(
      transactionHash({ ...tx, topic: "a", contentBase64: "bc" }),
    );
  });

  // Regression: keys and values were hashed as one "k=v" string, so an edited extension map
  // {"event-a": "b=c"} → {"event-a=b": "c"} kept the same hash and the ledger did not notice.
  it("extension keys containing '=' do not collide with values", () => {
    const a = transactionHash({ ...tx, extensions: { "event-a": "b=c" } });
    const b = transactionHash({ ...tx, extensions: { "event-a=b": "c" } });
    expect(a).not.toBe(b);
  });
});

describe("blockHash", () => {
  it("is 0x + 64 hex and deterministic", () => {
    expect(blockHash(block)).toMatch(HASH);
    expect(blockHash({ ...block, txHashes: [...block.txHashes] })).toBe(blockHash(block));
  });

  it.each<[string, Partial<BlockHashInput>]>([
    ["the previous hash", { prevHash: `0x${"1".repeat(64)}` }],
    ["the height", { height: 2 }],
    ["the group", { groupId: "2" }],
    ["the seal time", { timestampMs: 1 }],
    ["the sealer", { sealer: "0x1" }],
    ["a transaction", { txHashes: [transactionHash({ ...tx, contentBase64: "eA==" })] }],
    ["the number of transactions", { txHashes: [...block.txHashes, ...block.txHashes] }],
  ])("changes when %s changes", (_what, change) => {
    expect(blockHash({ ...block, ...change })).not.toBe(blockHash(block));
  });

  it("depends on transaction order", () => {
    const t2 = transactionHash({ ...tx, eventId: "4cf7f4cc-2-1" });
    expect(blockHash({ ...block, txHashes: [block.txHashes[0] as string, t2] })).not.toBe(
      blockHash({ ...block, txHashes: [t2, block.txHashes[0] as string] }),
    );
  });
});

// The hashes are in every ledger: pinned, so a faster way of computing them cannot change them
// (values computed by the first implementation, one hash update per prefix and per part).
describe("pinned hashes", () => {
  it("are what the ledger holds", () => {
    const t: TxHashInput = {
      eventId: "4cf7f4cc-1-1",
      topic: "com.event.tést",
      contentBase64: "aGVsbG8=",
      extensions: { "event-format": "json", "event-tag": "t→" },
      sender: senderAddress("127.0.0.1"),
      timestampMs: 1715680800000,
    };
    expect(senderAddress("127.0.0.1")).toBe("0x518914b4710e5a0d240f2f32ff2e3a890f8843f4");
    expect(senderAddress("127.0.0.1")).toBe("0x518914b4710e5a0d240f2f32ff2e3a890f8843f4");
    expect(topicAddress("1", "com.event.tést")).toBe("0x30d2e03592954b6b2304a525f5cab4784b3f3f05");
    expect(transactionHash(t)).toBe("0x17a1e373a6bd39a8d763d7dab0627283c9f627dc2591d30c1ebd2e5679afbebe");
    const b = {
      groupId: "1",
      height: 7n,
      prevHash: GENESIS_HASH,
      timestampMs: 1715680800000,
      sealer: "0x0",
      txHashes: [transactionHash(t), transactionHash({ ...t, extensions: {} })],
    };
    expect(blockHash(b)).toBe("0xdd1a315ea59ad0cd356c0d446d0419e07ac83b3ff86b564acff131816acb28a2");
  });
});
