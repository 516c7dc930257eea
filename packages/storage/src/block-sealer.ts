import type pg from "pg";
import { blockHash, formatEventId, GENESIS_HASH, type LogRecord, topicAddress, transactionHash } from "@evb/domain";
import { inTransaction } from "./pool.ts";

/** One fetched Kafka record; `record` is null when its value could not be decoded. */
export interface PositionedRecord {
  partition: number;
  offset: number;
  record: LogRecord | null;
}

export interface SealedEvent {
  record: LogRecord;
  eventId: string;
  seq: number;
  idx: number;
  txHash: string;
  toAddress: string;
}

export interface SealedBlock {
  groupId: string;
  height: number;
  hash: string;
  timestampMs: number;
  events: SealedEvent[];
}

/** Kafka records between `expected` and `got` were never indexed and are gone from the log. */
export interface OffsetGap {
  groupId: string;
  partition: number;
  expected: number;
  got: number;
}

export interface Sealer {
  /** The indexer instance's sealer number; recorded as `sealer` "0x<n>" and `sealerIndex` n. */
  index: number;
}

/**
 * Seals fetched Kafka records into the next block of a group, in ONE Postgres transaction.
 *
 * Invariants (what the crash tests prove):
 * - The chain head row is locked first, so all seals of a group are serialised: heights are
 *   gapless and each block's prev_hash is the previous block's hash.
 * - `indexed_offsets` is read under that lock and advanced in the same transaction, so a
 *   record redelivered after a crash, or fetched by two consumers across a rebalance, is
 *   skipped: each (group, partition, offset) is indexed at most once. The unique index on
 *   events' Kafka position is the backstop.
 * - Nothing is visible until COMMIT; a crash before it leaves no trace and Kafka redelivers.
 */
export class BlockSealer {
  private readonly pool: pg.Pool;
  private readonly sealer: Sealer;
  private readonly now: () => number;
  private readonly onGap: (gap: OffsetGap) => void;

  constructor(opts: { pool: pg.Pool; sealer: Sealer; now?: () => number; onGap?: (gap: OffsetGap) => void }) {
    this.pool = opts.pool;
    this.sealer = opts.sealer;
    this.now = opts.now ?? Date.now;
    this.onGap = opts.onGap ?? (() => {});
  }

  /**
   * Seals every record of the batch that is not indexed yet, in Kafka order, into as few
   * blocks as possible (usually one; see `sealPrefix` for when a block must end early).
   * Returns the blocks sealed, oldest first; empty when every record was already indexed or
   * undecodable.
   */
  async seal(groupId: string, batch: readonly PositionedRecord[]): Promise<SealedBlock[]> {
    const blocks: SealedBlock[] = [];
    let rest = [...batch].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
    while (rest.length > 0) {
      const out = await this.sealPrefix(groupId, rest);
      if (out.block) blocks.push(out.block);
      if (out.rest.length >= rest.length) throw new Error("block sealer made no progress"); // cannot happen: a block holds ≥ 1 record
      rest = out.rest;
    }
    return blocks;
  }

  /**
   * One transaction: seals the longest prefix of `sorted` (ordered by partition, offset) that
   * fits in one block and returns the records left for the next block.
   *
   * A block ends early only when two events in it would get the same eventId: ids are
   * `sha256(topic)[0..8]-seq-height`, so two topics whose hashes share 8 hex digits collide
   * when they reach the same sequence number in the same block. The second event goes to the
   * next block, where the height differs. (Without this the unique index on event ids would
   * reject the batch forever and stop the partition.)
   */
  sealPrefix(groupId: string, sorted: readonly PositionedRecord[]): Promise<{ block: SealedBlock | null; rest: PositionedRecord[] }> {
    return inTransaction(this.pool, async (c) => {
      await c.query("INSERT INTO chain_heads (group_id, height, hash) VALUES ($1, 0, $2) ON CONFLICT DO NOTHING", [groupId, GENESIS_HASH]);
      const head = (
        await c.query<{ height: number; hash: string }>("SELECT height, hash FROM chain_heads WHERE group_id = $1 FOR UPDATE", [groupId])
      ).rows[0] as { height: number; hash: string };

      const partitions = [...new Set(sorted.map((r) => r.partition))];
      const next = new Map<number, number>();
      for (const row of (
        await c.query<{ partition: number; next_offset: number }>(
          "SELECT partition, next_offset FROM indexed_offsets WHERE group_id = $1 AND partition = ANY($2::int[])",
          [groupId, partitions],
        )
      ).rows) {
        next.set(row.partition, row.next_offset);
      }
      const fresh: PositionedRecord[] = [];
      const seen = new Map<number, number>();
      for (const r of sorted) {
        const from = seen.get(r.partition) ?? next.get(r.partition) ?? 0;
        if (r.offset < from) continue;
        // Our producers write contiguous offsets, so a jump means Kafka deleted records
        // (retention) before they were indexed: nothing can bring them back, but say so loudly.
        if (r.offset > from && next.has(r.partition)) this.onGap({ groupId, partition: r.partition, expected: from, got: r.offset });
        seen.set(r.partition, r.offset + 1);
        fresh.push(r);
      }
      const valid = fresh.filter((r): r is PositionedRecord & { record: LogRecord } => r.record !== null);
      const advance = new Map<number, number>();
      const writeOffsets = async () => {
        if (advance.size === 0) return;
        await c.query(
          `INSERT INTO indexed_offsets (group_id, partition, next_offset)
           SELECT $1, p, o FROM unnest($2::int[], $3::bigint[]) AS t(p, o)
           ON CONFLICT (group_id, partition) DO UPDATE SET next_offset = GREATEST(indexed_offsets.next_offset, EXCLUDED.next_offset)`,
          [groupId, [...advance.keys()], [...advance.values()]],
        );
      };
      if (valid.length === 0) {
        for (const r of fresh) advance.set(r.partition, r.offset + 1);
        await writeOffsets();
        return { block: null, rest: [] };
      }

      const topics = [...new Set(valid.map((r) => r.record.topic))];
      const ts = this.now();
      // A topic unknown to the ledger (opened in another schema, or a hand-made record) is created
      // by its first event rather than dropped: the publish was acknowledged by Kafka.
      await c.query(
        `INSERT INTO topics (group_id, name, address, creator, created_at)
         SELECT $1, n, a, s, $5 FROM unnest($2::text[], $3::text[], $4::text[]) AS t(n, a, s) ON CONFLICT DO NOTHING`,
        [
          groupId,
          topics,
          topics.map((t) => topicAddress(groupId, t)),
          topics.map((t) => valid.find((r) => r.record.topic === t)?.record.sender ?? ""),
          ts,
        ],
      );
      const seqs = new Map<string, { seq: number; address: string }>();
      for (const row of (
        await c.query<{ name: string; seq: number; address: string }>(
          "SELECT name, seq, address FROM topics WHERE group_id = $1 AND name = ANY($2::text[]) ORDER BY name FOR UPDATE",
          [groupId, topics],
        )
      ).rows) {
        seqs.set(row.name, { seq: row.seq, address: row.address });
      }

      const height = head.height + 1;
      const events: SealedEvent[] = [];
      const positions: PositionedRecord[] = [];
      const ids = new Set<string>();
      let cut = fresh.length;
      for (let i = 0; i < fresh.length; i++) {
        const r = fresh[i] as PositionedRecord;
        if (r.record) {
          const t = seqs.get(r.record.topic) as { seq: number; address: string };
          const eventId = formatEventId(r.record.topic, t.seq + 1, height);
          if (ids.has(eventId)) {
            cut = i;
            break;
          }
          ids.add(eventId);
          t.seq += 1;
          const txHash = transactionHash({
            eventId,
            topic: r.record.topic,
            contentBase64: Buffer.from(r.record.content, "utf8").toString("base64"),
            extensions: r.record.extensions,
            sender: r.record.sender,
            timestampMs: ts,
          });
          events.push({ record: r.record, eventId, seq: t.seq, idx: events.length, txHash, toAddress: t.address });
          positions.push(r);
        }
        advance.set(r.partition, r.offset + 1);
      }
      await writeOffsets();
      // Only topics that got an event in this block change; a topic whose first record was cut
      // keeps its sequence number for the next block.
      const touched = new Set(events.map((e) => e.record.topic));
      for (const name of [...seqs.keys()]) if (!touched.has(name)) seqs.delete(name);
      const sealerName = `0x${this.sealer.index.toString(16)}`;
      const hash = blockHash({
        groupId,
        height,
        prevHash: head.hash,
        timestampMs: ts,
        sealer: sealerName,
        txHashes: events.map((e) => e.txHash),
      });

      await c.query(
        "INSERT INTO blocks (group_id, height, hash, prev_hash, sealed_at, tx_count, sealer, sealer_index) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
        [groupId, height, hash, head.hash, ts, events.length, sealerName, this.sealer.index],
      );
      await c.query(
        `INSERT INTO events (group_id, height, idx, event_id, topic, seq, content, extensions, sender, tx_hash, to_address, ts, kafka_partition, kafka_offset)
         SELECT $1, $2, i, e, t, s, ct, x::json, snd, h, ta, $3, p, o
         FROM unnest($4::int[], $5::text[], $6::text[], $7::bigint[], $8::bytea[], $9::text[], $10::text[], $11::text[], $12::text[], $13::int[], $14::bigint[])
           AS u(i, e, t, s, ct, x, snd, h, ta, p, o)`,
        [
          groupId,
          height,
          ts,
          events.map((e) => e.idx),
          events.map((e) => e.eventId),
          events.map((e) => e.record.topic),
          events.map((e) => e.seq),
          events.map((e) => Buffer.from(e.record.content, "utf8")),
          events.map((e) => JSON.stringify(e.record.extensions)),
          events.map((e) => e.record.sender),
          events.map((e) => e.txHash),
          events.map((e) => e.toAddress),
          positions.map((r) => r.partition),
          positions.map((r) => r.offset),
        ],
      );
      await c.query(
        `UPDATE topics SET seq = u.s, last_block = $2, last_timestamp = $3
         FROM unnest($4::text[], $5::bigint[]) AS u(n, s) WHERE topics.group_id = $1 AND topics.name = u.n`,
        [groupId, height, ts, [...seqs.keys()], [...seqs.values()].map((v) => v.seq)],
      );
      await c.query("UPDATE chain_heads SET height = $2, hash = $3 WHERE group_id = $1", [groupId, height, hash]);
      return { block: { groupId, height, hash, timestampMs: ts, events }, rest: fresh.slice(cut) };
    });
  }
}
