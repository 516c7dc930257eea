import { createHash } from "node:crypto";
import { BrokerError } from "./errors.ts";
import type { LogRecord } from "./log-record.ts";

/** The header a publisher names its publish with (docs/idempotency.md). */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";
/** The same as a parameter, for clients that cannot set headers; not an `event-` extension. */
export const IDEMPOTENCY_KEY_PARAM = "idempotencyKey";
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const DEFAULT_IDEMPOTENCY_RETENTION_MS = 86_400_000;

/** Visible ASCII only: no spaces, so a header's trimming or joining can never change a key. */
const KEY_PATTERN = /^[\x21-\x7e]+$/;

/**
 * The key a publish carries: the header, else the parameter; undefined when neither is given
 * (idempotency off, the original interface). Both given must agree. A bad key answers 100210.
 */
export function idempotencyKeyOf(header: string | undefined, param: string | undefined): string | undefined {
  if (header === undefined && param === undefined) return undefined;
  const key = (header ?? param) as string;
  if (param !== undefined && header !== undefined && param !== header) throw BrokerError.of("IDEMPOTENCY_KEY_INVALID");
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !KEY_PATTERN.test(key)) throw BrokerError.of("IDEMPOTENCY_KEY_INVALID");
  return key;
}

/**
 * The key as the ledger stores it (`LogRecord.idempotency.key`, `idempotency_keys.key`): the
 * caller's key within its caller's scope, so that a key names a publish of one caller only.
 * Unscoped, anyone in the group could use a guessable key (`order-4711`) first: the owner's own
 * publish would then get 100211 for the whole window, and a repeat of a guessed content would
 * answer the owner's eventId, confirming the guess. `scope` is the API key id (`key:<id>`), or
 * the caller's address without keys (ownerId). Hashed with its length, so no two (scope, key)
 * pairs store alike, and the stored key is 64 characters whatever the key's length (within
 * IDEMPOTENCY_KEY_MAX_LENGTH, which the log record's schema keeps).
 */
export function scopedIdempotencyKey(scope: string, key: string): string {
  return createHash("sha256")
    .update(`${Buffer.byteLength(scope, "utf8")}:${scope}${key}`, "utf8")
    .digest("hex");
}

/**
 * What "the same publish" means for a key: topic, content and extensions (in name order, so
 * that a retry may send its parameters in another order). Not the sender: a retry may come from
 * another address. Each part is length-prefixed, so no two different publishes hash alike.
 */
export function publishContentHash(r: Pick<LogRecord, "topic" | "content" | "extensions">): string {
  const parts = [r.topic, r.content];
  for (const k of Object.keys(r.extensions).sort()) parts.push(k, r.extensions[k] as string);
  let text = "";
  for (const p of parts) text += `${Buffer.byteLength(p, "utf8")}:${p}`;
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** A key the ledger holds (`idempotency_keys`): the event its first publish made, and until when it counts. */
export interface KeptKey {
  contentHash: string;
  eventId: string;
  /** The first event's seal time plus the retention its publish carried (epoch ms). */
  expiresAt: number;
}

/** A key a block's event takes, to be written with the block. */
export interface NewKey extends KeptKey {
  key: string;
}

/**
 * A keyed record answered without an event: `duplicate` (the same key and content within the
 * window: the original's eventId) or `conflict` (the same key, other content).
 */
export interface KeyedAnswer {
  requestId: string;
  gatewayId: string;
  outcome: "duplicate" | "conflict";
  /** The original event's id (for a conflict: the event the key names, never told the caller). */
  eventId: string;
}

type KeyDecision = { kind: "new" } | { kind: "duplicate" | "conflict"; eventId: string };

/**
 * The keys one plan knows: the ledger's (read under the seal's lock) and those its own events
 * take, the first record of a key winning. A key whose `expiresAt` is not after the block's seal
 * time counts as absent whether or not it was pruned yet, so a replay decides the same.
 */
export class KeyBook {
  private readonly kept: ReadonlyMap<string, KeptKey>;
  private readonly atMs: number;
  readonly taken = new Map<string, NewKey>();

  constructor(kept: ReadonlyMap<string, KeptKey> | undefined, atMs: number) {
    this.kept = kept ?? new Map();
    this.atMs = atMs;
  }

  decide(key: string, contentHash: string): KeyDecision {
    const known = this.taken.get(key) ?? this.kept.get(key);
    if (!known || known.expiresAt <= this.atMs) return { kind: "new" };
    return { kind: known.contentHash === contentHash ? "duplicate" : "conflict", eventId: known.eventId };
  }

  take(key: string, contentHash: string, eventId: string, retentionMs: number): void {
    this.taken.set(key, { key, contentHash, eventId, expiresAt: this.atMs + retentionMs });
  }
}
