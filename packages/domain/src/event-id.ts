import { createHash } from "node:crypto";
import { BrokerError } from "./errors.ts";
import { isBlank, javaSplit, parseJavaInteger } from "./text.ts";

export const EVENT_ID_MAX_LENGTH = 64;
const MAX_I64 = 9223372036854775807n;

const hash8s = new Map<string, string>();

/**
 * First 8 characters of the lowercase hex SHA-256 of the topic's UTF-8 bytes (`hello` → `2cf24dba`).
 * Every sealed event needs its topic's, and a group has few topics next to its events, so the
 * answers are remembered (up to 10 000 topics, then afresh).
 */
export function topicHash8(topic: string): string {
  let h = hash8s.get(topic);
  if (h === undefined) {
    h = createHash("sha256").update(topic, "utf8").digest("hex").slice(0, 8);
    if (hash8s.size >= 10_000) hash8s.clear();
    hash8s.set(topic, h);
  }
  return h;
}

/** `<hash8>-<seq>-<block>` (behaviour.md 7.4). */
export function formatEventId(topic: string, seq: bigint | number, block: bigint | number): string {
  return `${topicHash8(topic)}-${seq}-${block}`;
}

export interface ParsedEventId {
  hash8: string;
  seq: bigint;
  block: bigint;
}

/** Long.parseLong with "unparseable counts as 0" (behaviour.md 7.5 step 5). */
function parsePositiveLong(s: string): bigint {
  const v = parseJavaInteger(s);
  return v === null || v > MAX_I64 || v < -MAX_I64 - 1n ? 0n : v;
}

/**
 * The syntactic part of getEvent's checks (behaviour.md 7.5 steps 2–5): blank → 100302,
 * too long → 100301, not three parts with an 8-character first part → 100302, seq or block not
 * a positive 64-bit integer → 100302. Height and existence are the ledger's business.
 */
export function parseEventId(id: string): { ok: true; value: ParsedEventId } | { ok: false; error: BrokerError } {
  if (isBlank(id)) return { ok: false, error: BrokerError.of("EVENT_ID_ILLEGAL") };
  if (id.length > EVENT_ID_MAX_LENGTH) return { ok: false, error: BrokerError.of("EVENT_ID_TOO_LONG") };
  const parts = javaSplit(id, "-");
  if (parts.length !== 3 || parts[0]?.length !== 8) return { ok: false, error: BrokerError.of("EVENT_ID_ILLEGAL") };
  const seq = parsePositiveLong(parts[1] as string);
  const block = parsePositiveLong(parts[2] as string);
  if (seq <= 0n || block <= 0n) return { ok: false, error: BrokerError.of("EVENT_ID_ILLEGAL") };
  return { ok: true, value: { hash8: parts[0], seq, block } };
}
