/**
 * "The ledger holds exactly what was acknowledged": after a publish scenario, every SUCCESS
 * answer's event id must be in the ledger under its topic, once, and the ledger may hold more
 * events of the scenario's topics only for publishes the generator left unanswered when it
 * stopped (at most one per connection).
 */
import { readFileSync } from "node:fs";
import type pg from "pg";

export interface LedgerCheck {
  scenario: string;
  acknowledged: number;
  /** SUCCESS answers that named an event id another answer had named already. */
  duplicates: number;
  /** Acknowledged event ids the ledger does not hold under their topic. */
  missing: number;
  /** Events of the scenario's topics in the ledger. */
  inLedger: number;
  /** inLedger − distinct acknowledged: sealed publishes whose answer nobody waited for. */
  unanswered: number;
  /** The most `unanswered` may be: requests in flight when the generator stopped. */
  unansweredBound: number;
  ok: boolean;
}

/** Reads "topic<TAB>eventId[<TAB>…]" lines as written by load.lua and fixed-rate.ts. */
export function readAcks(file: string): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const [topic, eventId] = line.split("\t");
    if (topic !== undefined && eventId) rows.push([topic, eventId]);
  }
  return rows;
}

/** Send (due) epoch ms by eventId, from fixed-rate.ts's fourth column. */
export function readSendTimes(file: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const [, eventId, , sentAt] = line.split("\t");
    if (eventId && sentAt) m.set(eventId, Number(sentAt));
  }
  return m;
}

/** The verdict from the counts alone (pure, for the unit test). */
export function judgeLedger(c: Omit<LedgerCheck, "ok" | "unanswered">, distinct: number): LedgerCheck {
  const unanswered = c.inLedger - distinct;
  const ok = c.duplicates === 0 && c.missing === 0 && unanswered >= 0 && unanswered <= c.unansweredBound;
  return { ...c, unanswered, ok };
}

/**
 * Events of the topics under `topicPrefix` once their count holds still: publishes in flight
 * when the generator stopped may be sealed a moment later.
 */
async function settledCount(pool: pg.Pool, events: string, topicPrefix: string): Promise<number> {
  let inLedger = -1;
  for (let i = 0; i < 40; i++) {
    const r = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${events} WHERE starts_with(topic, $1)`, [topicPrefix]);
    const n = Number(r.rows[0]?.n);
    if (n === inLedger) break;
    inLedger = n;
    await new Promise((r) => setTimeout(r, 300));
  }
  return inLedger;
}

/** Reads "topic<TAB>eventId<TAB>key" lines as protocol-publisher.ts writes them: [topic, key]. */
export function readKeyedAcks(file: string): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const [topic, , key] = line.split("\t");
    if (topic !== undefined && key) rows.push([topic, key]);
  }
  return rows;
}

/**
 * The same verdict for publishes whose answer names no eventId (MQTT's PUBACK): each content
 * starts with a key of its own (`k<n>|`), and every acknowledged key must be in the ledger once,
 * under its topic. A key stored twice counts as a duplicate.
 */
/** Each acknowledged name (eventId or key) with the topic it was first answered under, and how many answers named one again. */
function topicByName(acks: ReadonlyArray<readonly [string, string]>): { byName: Map<string, string>; repeats: number } {
  const byName = new Map<string, string>();
  let repeats = 0;
  for (const [topic, name] of acks) {
    if (byName.has(name)) repeats++;
    else byName.set(name, topic);
  }
  return { byName, repeats };
}

export async function checkLedgerByKey(
  pool: pg.Pool,
  schema: string,
  scenario: string,
  topicPrefix: string,
  acks: Array<[string, string]>,
  unansweredBound: number,
): Promise<LedgerCheck> {
  const { byName: acked, repeats } = topicByName(acks);
  let duplicates = repeats;
  const events = `"${schema}".events`;
  const inLedger = await settledCount(pool, events, topicPrefix);
  const r = await pool.query<{ topic: string; key: string }>(
    `SELECT topic, split_part(convert_from(content, 'UTF8'), '|', 1) AS key FROM ${events} WHERE starts_with(topic, $1)`,
    [topicPrefix],
  );
  const stored = new Map<string, string>();
  for (const row of r.rows) {
    if (stored.has(row.key)) duplicates++;
    else stored.set(row.key, row.topic);
  }
  let missing = 0;
  for (const [key, topic] of acked) if (stored.get(key) !== topic) missing++;
  return judgeLedger({ scenario, acknowledged: acks.length, duplicates, missing, inLedger, unansweredBound }, acked.size);
}

export async function checkLedger(
  pool: pg.Pool,
  schema: string,
  scenario: string,
  topicPrefix: string,
  acks: Array<[string, string]>,
  unansweredBound: number,
): Promise<LedgerCheck> {
  const { byName: ids, repeats: duplicates } = topicByName(acks);
  const events = `"${schema}".events`;
  const inLedger = await settledCount(pool, events, topicPrefix);
  const r = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM unnest($1::text[], $2::text[]) AS a(event_id, topic)
       LEFT JOIN ${events} e ON e.event_id = a.event_id AND e.topic = a.topic WHERE e.event_id IS NULL`,
    [[...ids.keys()], [...ids.values()]],
  );
  return judgeLedger(
    { scenario, acknowledged: acks.length, duplicates, missing: Number(r.rows[0]?.n), inLedger, unansweredBound },
    ids.size,
  );
}
