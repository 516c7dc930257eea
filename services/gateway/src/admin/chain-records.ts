import { formatLocalTimestamp } from "@evb/domain";
import type { ChainNode } from "@evb/registry";
import type { BlockRow, TransactionRow } from "@evb/storage";

/**
 * The admin records in the original's key order and JSON types (behaviour.md 2.3, 9.3–9.5):
 * numbers stay numbers, timestamps are local `yyyy-MM-dd HH:mm:ss` strings, and the audit
 * fields the original never filled are null.
 */
export function transactionRecord(t: TransactionRow) {
  return {
    transHash: t.txHash,
    transFrom: t.sender,
    transTo: t.toAddress,
    blockNumber: t.height,
    blockTimestamp: formatLocalTimestamp(t.timestampMs),
    createTime: null,
    modifyTime: null,
  };
}

export function blockRecord(b: BlockRow) {
  return {
    pkHash: b.hash,
    blockNumber: b.height,
    blockTimestamp: formatLocalTimestamp(b.sealedAt),
    transCount: b.txCount,
    sealerIndex: b.sealerIndex,
    sealer: b.sealer,
    createTime: null,
    modifyTime: null,
  };
}

/** Every indexer seals blocks, so every chain node is a `sealer`; there are no observers. */
export function nodeRecord(n: ChainNode) {
  return {
    nodeId: n.nodeId,
    nodeName: null,
    nodeType: "sealer",
    blockNumber: n.blockNumber,
    pbftView: null,
    nodeActive: n.active ? 1 : 0,
    createTime: null,
    modifyTime: null,
  };
}
