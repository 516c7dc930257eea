import { createHash } from "node:crypto";
import type { ChainRecord } from "./chain-record.ts";

/** What a group's chain topic holds at one height, as far as judging a write needs. */
export interface ChainEntry {
  hash: string;
  prevHash: string;
  /** A digest of the whole record (`chainRecordContent`): the same hash with other ranges is other content. */
  content: string;
}

/**
 * What a tail of a group's chain topic knows, read up to the topic's end: its highest height,
 * and the records of the heights from `since` up (bounded: older heights are forgotten).
 */
export interface ChainTopicView {
  /** The highest height the topic holds for the group; 0 when it holds none. */
  lastHeight: number;
  /** The lowest height `entries` still answers for; below it the view cannot tell. */
  since: number;
  /** Every height from `since` to `lastHeight` the topic holds, with its (first) record. */
  entries: ReadonlyMap<number, ChainEntry>;
}

export type ChainAppendDecision =
  | { kind: "append" }
  /** The write would put a second, different history in the topic: `height` holds `inTopic`, the write offers `offered`. */
  | { kind: "refuse"; height: number; inTopic: string; offered: string; reason: string }
  /** The view cannot judge it (a height older than it remembers): not a permission, the write waits. */
  | { kind: "unknown"; reason: string };

/**
 * A digest of everything a chain record says, key order and range order aside (a record the
 * ledger writes again comes from its rows, where the ranges went through jsonb).
 */
function chainRecordContent(r: ChainRecord): string {
  const ranges = [...r.ranges].sort((a, b) => a.partition - b.partition).map((g) => [g.partition, g.from, g.to]);
  const block = [r.v, r.groupId, r.height, r.hash, r.prevHash, r.timestampMs, r.sealer, r.sealerIndex];
  const log = [r.epoch, r.clusterId, r.topicId, ranges];
  return createHash("sha256")
    .update(JSON.stringify([block, log]))
    .digest("hex")
    .slice(0, 32);
}

export function chainEntryOf(r: ChainRecord): ChainEntry {
  return { hash: r.hash, prevHash: r.prevHash, content: chainRecordContent(r) };
}

/**
 * Whether `records` may be written to the group's chain topic, which holds `view`. A record
 * the topic already holds (same height, same content) may be written again: the recorder
 * re-writes after failures, and compaction keeps one. Any other record for a height the topic
 * holds, or one that does not chain onto its neighbours there, is refused: the chain topic is
 * the history the ledger is rebuilt from, and it must never hold two for one height.
 */
export function decideChainAppend(groupId: string, view: ChainTopicView, records: readonly ChainRecord[]): ChainAppendDecision {
  // The write's own earlier records count as held for its later ones.
  const written = new Map<number, ChainEntry>();
  let lastHeight = view.lastHeight;
  const at = (h: number) => written.get(h) ?? view.entries.get(h);
  for (const r of records) {
    const offered = chainEntryOf(r);
    const held = at(r.height);
    if (held) {
      if (held.hash !== r.hash) return refuse(groupId, r.height, held.hash, r.hash, "the chain topic holds another block");
      const other = "the chain topic holds this hash with other content (epoch, log ranges, seal time)";
      if (held.content !== offered.content) return refuse(groupId, r.height, held.hash, r.hash, other);
      continue;
    }
    if (r.height <= lastHeight && r.height < view.since) {
      return {
        kind: "unknown",
        reason: `group ${groupId}: height ${r.height} is older than the chain topic's heights this indexer remembers (from ${view.since})`,
      };
    }
    const below = at(r.height - 1);
    if (below && below.hash !== r.prevHash) {
      return refuse(groupId, r.height - 1, below.hash, r.prevHash, `this ledger's block ${r.height} follows another block`);
    }
    const above = at(r.height + 1);
    if (above && above.prevHash !== r.hash) {
      return refuse(groupId, r.height, above.prevHash, r.hash, `the chain topic's block ${r.height + 1} follows another block`);
    }
    written.set(r.height, offered);
    lastHeight = Math.max(lastHeight, r.height);
  }
  return { kind: "append" };
}

function refuse(groupId: string, height: number, inTopic: string, offered: string, what: string): ChainAppendDecision {
  return {
    kind: "refuse",
    height,
    inTopic,
    offered,
    reason:
      `group ${groupId}: height ${height} is ${inTopic} in the chain topic, ${offered} in this ledger (${what}): ` +
      "two ledgers sealed on this log",
  };
}
