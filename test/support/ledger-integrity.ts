import pg from "pg";
import { blockHash, formatEventId, GENESIS_HASH, transactionHash } from "@evb/domain";

/** One event as the ledger holds it, for tests to match against what publishers were told. */
export interface LedgerEvent {
  height: number;
  idx: number;
  eventId: string;
  topic: string;
  seq: number;
  /** The stored bytes decoded as UTF-8. */
  content: string;
  /** The log epoch (which Kafka log) the event came from; its partition and offset are in that log. */
  epoch: number;
  partition: number;
  offset: number;
}

export interface LedgerReport {
  /** Every broken invariant, in words; empty when the ledger is sound. */
  problems: string[];
  height: number;
  events: LedgerEvent[];
}

interface BlockRow {
  height: number;
  hash: string;
  prev_hash: string;
  sealed_at: number;
  tx_count: number;
  sealer: string;
}

interface EventRow {
  height: number;
  idx: number;
  event_id: string;
  topic: string;
  seq: number;
  content: Buffer;
  extensions: Record<string, string>;
  sender: string;
  tx_hash: string;
  ts: number;
  epoch: number;
  kafka_partition: number;
  kafka_offset: number;
}

/**
 * Reads one group's ledger in `schema` and checks the invariants the crash tests rely on:
 * block heights 1..H without gaps, each prev_hash the previous block's hash, every transaction
 * and block hash recomputable from the stored rows, no Kafka record (epoch, partition, offset) indexed
 * twice, per-topic sequence numbers 1..n in block order, eventIds `hash8-seq-height`, and topic
 * rows and the chain head agreeing with the events. Reads only; safe while services run, but
 * call it once they are idle for a stable answer.
 */
export async function verifyLedger(opts: { databaseUrl: string; schema: string; groupId?: string }): Promise<LedgerReport> {
  const group = opts.groupId ?? "1";
  const client = new pg.Client({ connectionString: opts.databaseUrl, options: `-c search_path="${opts.schema}"` });
  await client.connect();
  try {
    // One snapshot, so that a block sealed mid-read cannot look like a broken chain.
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const num = (v: unknown) => Number(v);
    const blocks = (
      await client.query<BlockRow>(
        "SELECT height, hash, prev_hash, sealed_at, tx_count, sealer FROM blocks WHERE group_id = $1 ORDER BY height",
        [group],
      )
    ).rows.map((b) => ({ ...b, height: num(b.height), sealed_at: num(b.sealed_at) }));
    const rows = (
      await client.query<EventRow>(
        `SELECT height, idx, event_id, topic, seq, content, extensions, sender, tx_hash, ts, epoch, kafka_partition, kafka_offset
         FROM events WHERE group_id = $1 ORDER BY height, idx`,
        [group],
      )
    ).rows.map((e) => ({ ...e, height: num(e.height), seq: num(e.seq), ts: num(e.ts), kafka_offset: num(e.kafka_offset) }));
    const head = (await client.query("SELECT height, hash FROM chain_heads WHERE group_id = $1", [group])).rows[0] as
      | { height: unknown; hash: string }
      | undefined;
    const topics = (await client.query("SELECT name, seq, last_block FROM topics WHERE group_id = $1", [group])).rows as {
      name: string;
      seq: unknown;
      last_block: unknown;
    }[];
    const offsets = (await client.query("SELECT epoch, partition, next_offset FROM indexed_offsets WHERE group_id = $1", [group])).rows as {
      epoch: number;
      partition: number;
      next_offset: unknown;
    }[];
    await client.query("COMMIT");

    const problems: string[] = [];
    const byHeight = new Map<number, EventRow[]>();
    for (const e of rows) byHeight.set(e.height, [...(byHeight.get(e.height) ?? []), e]);

    let prev = GENESIS_HASH;
    blocks.forEach((b, i) => {
      if (b.height !== i + 1) problems.push(`block #${i + 1} has height ${b.height}: heights are not 1..H`);
      if (b.prev_hash !== prev) problems.push(`block ${b.height}: prev_hash ${b.prev_hash} is not the previous hash ${prev}`);
      const evs = byHeight.get(b.height) ?? [];
      if (evs.length !== b.tx_count) problems.push(`block ${b.height}: tx_count ${b.tx_count} but ${evs.length} events`);
      evs.forEach((e, j) => {
        if (e.idx !== j) problems.push(`block ${b.height}: event positions are not 0..n-1 (found ${e.idx} at ${j})`);
        if (e.ts !== b.sealed_at) problems.push(`event ${e.event_id}: ts ${e.ts} is not its block's seal time ${b.sealed_at}`);
        const tx = transactionHash({
          eventId: e.event_id,
          topic: e.topic,
          contentBase64: e.content.toString("base64"),
          extensions: e.extensions,
          sender: e.sender,
          timestampMs: e.ts,
        });
        if (tx !== e.tx_hash) problems.push(`event ${e.event_id}: stored tx_hash does not recompute`);
      });
      const recomputed = blockHash({
        groupId: group,
        height: b.height,
        prevHash: b.prev_hash,
        timestampMs: b.sealed_at,
        sealer: b.sealer,
        txHashes: evs.map((e) => e.tx_hash),
      });
      if (recomputed !== b.hash) problems.push(`block ${b.height}: hash does not recompute`);
      prev = b.hash;
    });
    const height = blocks.length;
    for (const h of byHeight.keys()) if (h < 1 || h > height) problems.push(`events at height ${h}, which has no block`);
    if (height > 0 && (num(head?.height) !== height || head?.hash !== prev)) {
      problems.push(`chain head ${JSON.stringify(head)} is not the last block (${height}, ${prev})`);
    }

    const positions = new Set<string>();
    const ids = new Set<string>();
    const seqs = new Map<string, EventRow[]>();
    for (const e of rows) {
      const pos = `${e.epoch}/${e.kafka_partition}:${e.kafka_offset}`;
      if (positions.has(pos)) problems.push(`Kafka record ${pos} is indexed twice`);
      positions.add(pos);
      if (ids.has(e.event_id)) problems.push(`eventId ${e.event_id} appears twice`);
      ids.add(e.event_id);
      if (e.event_id !== formatEventId(e.topic, e.seq, e.height)) problems.push(`event ${e.event_id} is not hash8-${e.seq}-${e.height}`);
      seqs.set(e.topic, [...(seqs.get(e.topic) ?? []), e]);
    }
    // Rows are in block order, so each topic's list must read 1, 2, 3, ... as it is.
    for (const [topic, evs] of seqs) {
      const got = evs.map((e) => e.seq);
      if (got.some((s, i) => s !== i + 1)) problems.push(`topic ${topic}: seq in block order is ${summarise(got)}, not 1..${evs.length}`);
    }
    const topicRows = new Map(topics.map((t) => [t.name, t]));
    for (const [topic, evs] of seqs) {
      const t = topicRows.get(topic);
      const last = evs[evs.length - 1] as EventRow;
      if (!t) problems.push(`topic ${topic} has events but no topic row`);
      else if (num(t.seq) !== evs.length || num(t.last_block) !== last.height) {
        problems.push(`topic ${topic}: row says seq ${t.seq} block ${t.last_block}, events say ${evs.length} at ${last.height}`);
      }
    }
    for (const t of topics) if (!seqs.has(t.name) && num(t.seq) !== 0) problems.push(`topic ${t.name}: seq ${t.seq} without events`);
    for (const e of rows) {
      const next = offsets.find((o) => o.epoch === e.epoch && o.partition === e.kafka_partition);
      if (!next || num(next.next_offset) <= e.kafka_offset)
        problems.push(`offset ${e.epoch}/${e.kafka_partition}:${e.kafka_offset} is past next_offset`);
    }

    const events: LedgerEvent[] = rows.map((e) => ({
      height: e.height,
      idx: e.idx,
      eventId: e.event_id,
      topic: e.topic,
      seq: e.seq,
      content: e.content.toString("utf8"),
      epoch: e.epoch,
      partition: e.kafka_partition,
      offset: e.kafka_offset,
    }));
    return { problems, height, events };
  } finally {
    await client.end();
  }
}

function summarise(list: number[]): string {
  return list.length > 20 ? `${list.slice(0, 20).join(",")},…` : list.join(",");
}
