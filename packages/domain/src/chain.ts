import { createHash } from "node:crypto";

/** The previous-hash of block 1 in every group. */
export const GENESIS_HASH = `0x${"0".repeat(64)}`;

function sha256Hex(parts: readonly (string | number | bigint)[]): string {
  const h = createHash("sha256");
  // Length-prefix every part so that no two different part lists hash the same.
  for (const p of parts) {
    const s = String(p);
    h.update(`${Buffer.byteLength(s, "utf8")}:`);
    h.update(s, "utf8");
  }
  return h.digest("hex");
}

/** A topic's contract address: deterministic from group and name, `0x` + 40 hex. */
export function topicAddress(groupId: string, topic: string): string {
  return `0x${sha256Hex(["topic", groupId, topic]).slice(0, 40)}`;
}

/** A publisher's address, derived from who called (`0x` + 40 hex). */
export function senderAddress(identity: string): string {
  return `0x${sha256Hex(["sender", identity]).slice(0, 40)}`;
}

/** Everything a transaction hash covers: the event as stored. */
export interface TxHashInput {
  eventId: string;
  topic: string;
  /** The stored content bytes, Base64. */
  contentBase64: string;
  /** Extensions as published (keys sorted when hashed). */
  extensions: Record<string, string>;
  sender: string;
  timestampMs: number;
}

export function transactionHash(tx: TxHashInput): string {
  // Key and value are separate length-prefixed parts (not "k=v"): a key may contain "=", and
  // {"event-a": "b=c"} must not hash like {"event-a=b": "c"}.
  const ext = Object.keys(tx.extensions)
    .sort()
    .flatMap((k) => [k, tx.extensions[k] ?? ""]);
  return `0x${sha256Hex(["tx", tx.eventId, tx.topic, tx.contentBase64, ext.length / 2, ...ext, tx.sender, tx.timestampMs])}`;
}

export interface BlockHashInput {
  groupId: string;
  height: bigint | number;
  prevHash: string;
  timestampMs: number;
  sealer: string;
  txHashes: readonly string[];
}

/**
 * A block's hash chains it to its predecessor: anyone can recompute it from the previous
 * block's hash and this block's transactions, so an edited event breaks every later hash.
 */
export function blockHash(b: BlockHashInput): string {
  return `0x${sha256Hex(["block", b.groupId, b.height, b.prevHash, b.timestampMs, b.sealer, b.txHashes.length, ...b.txHashes])}`;
}
