/**
 * What a JSON-RPC body is before anything parses it: one pass over the text that finds its
 * nesting depth and, for a batch, where each call begins and ends. Pure.
 *
 * Why before JSON.parse: JSON.parse is one call that cannot be interrupted, and its cost is not
 * the body's size alone: a 1 MiB body of nested `[` took it over half a second, and a batch of
 * 10,000 calls tens of milliseconds. So the depth and the number of calls are counted first (a
 * loop that pauses every few milliseconds), a body over either limit is refused unparsed, and a
 * batch is parsed one call at a time.
 */

/** Deepest nesting of arrays and objects a body may have (a batch is 1, a call 2, its params 3, publish's extensions 4). */
export const MAX_JSON_DEPTH = 32;

/** Most calls one batch may carry; a larger batch is refused as a whole, before any of it runs. */
export const MAX_BATCH_CALLS = 100;

/**
 * Largest text of one call (or of a single request), in UTF-16 code units: JSON.parse of 1 MiB
 * takes some 15–30 ms on a small machine, inside the 50 ms the gateway allows one request to hold
 * its loop. A publish carries at most 10,240 characters of content, under 60 KiB in Base64.
 */
export const MAX_CALL_CHARS = 1_048_576;

export type JsonScan =
  /** Not an array at the top: one request, the whole text. */
  | { kind: "single" }
  /** A batch: each call's text as [start, end) of the body (none for `[]`). */
  | { kind: "batch"; calls: (readonly [number, number])[] }
  | { kind: "too-deep" }
  | { kind: "too-many-calls" }
  /** Brackets that do not balance, or text after the batch's `]`: not JSON. */
  | { kind: "malformed" };

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;

function isJsonSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** How often the scan asks whether to pause (characters). */
const CHECK_EVERY = 65_536;

/**
 * Scans `text` (see the file's comment). `maybePause` is awaited every CHECK_EVERY characters, so
 * that a large body is scanned in slices of the event loop; its text must not change meanwhile.
 */
export async function scanJson(text: string, maybePause: () => Promise<void> = async () => {}): Promise<JsonScan> {
  let i = 0;
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
  const batch = text.charCodeAt(i) === OPEN_ARRAY;
  const calls: [number, number][] = [];
  let callStart = i + 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let nextCheck = CHECK_EVERY;
  for (; i < text.length; i++) {
    if (i >= nextCheck) {
      nextCheck += CHECK_EVERY;
      await maybePause();
    }
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH) return { kind: "too-deep" };
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (--depth < 0) return { kind: "malformed" };
      if (batch && depth === 0) return endOfBatch(text, i, callStart, calls);
    } else if (batch && depth === 1 && c === COMMA) {
      calls.push([callStart, i]);
      if (calls.length >= MAX_BATCH_CALLS) return { kind: "too-many-calls" };
      callStart = i + 1;
    }
  }
  return batch ? { kind: "malformed" } : { kind: "single" };
}

/** The batch's `]` is at `close`: its last call (none for an empty `[ ]`) and nothing after it but spaces. */
function endOfBatch(text: string, close: number, lastStart: number, calls: [number, number][]): JsonScan {
  for (let j = close + 1; j < text.length; j++) if (!isJsonSpace(text.charCodeAt(j))) return { kind: "malformed" };
  let blank = true;
  for (let j = lastStart; j < close && blank; j++) blank = isJsonSpace(text.charCodeAt(j));
  if (blank && calls.length === 0) return { kind: "batch", calls };
  calls.push([lastStart, close]);
  return { kind: "batch", calls };
}
