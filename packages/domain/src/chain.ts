import { createHash } from "node:crypto";

/** The previous-hash of block 1 in every group. */
export const GENESIS_HASH = `0x${"0".repeat(64)}`;

function sha256Hex(parts: readonly (string | number | bigint)[]): string {
  // Length-prefix every part (its UTF-8 byte count, ":") so that no two different part lists
  // hash the same. The parts are joined into one string and hashed in one update: the same
  // bytes as one update per prefix and part, for a fraction of the calls into the hash.
  let text = "";
  for (const p of parts) {
    const s = String(p);
    text += `${Buffer.byteLength(s, "utf8")}:${s}`;
  }
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Remembers up to `limit` answers of a pure string function; starts afresh when full. */
function memo(limit: number, fn: (key: string) => string): (key: string) => string {
  const seen = new Map<string, string>();
  return (key) => {
    let v = seen.get(key);
    if (v === undefined) {
      v = fn(key);
      if (seen.size >= limit) seen.clear();
      seen.set(key, v);
    }
    return v;
  };
}

/** A topic's contract address: deterministic from group and name, `0x` + 40 hex. */
export function topicAddress(groupId: string, topic: string): string {
  return `0x${sha256Hex(["topic", groupId, topic]).slice(0, 40)}`;
}

/**
 * A publisher's address, derived from who called (`0x` + 40 hex). Computed on every publish
 * from few distinct callers, so the answers are remembered (bounded).
 */
export const senderAddress: (identity: string) => string = memo(10_000, (identity) => `0x${sha256Hex(["sender", identity]).slice(0, 40)}`);

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
