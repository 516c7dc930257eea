/**
 * A subscription's content filter (docs/delivery.md, "Content filter"), pure: a JSON array of
 * conditions on the published JSON content, all of which must hold. Each names a dotted path
 * (object keys, or array indexes as digits; no wildcards, no expressions) and one test:
 * `{"path":"order.status","equals":"paid"}`, `{"path":"region","in":["eu","us"]}`,
 * `{"path":"customer.vip","exists":true}`. The cost is bounded: at most 10 conditions of at
 * most 8 path segments each, on content of at most 32 KiB parsed once per event; content that
 * is not JSON (or larger) never matches.
 */

type Scalar = string | number | boolean | null;
type Test = { equals: Scalar } | { in: Scalar[] } | { exists: boolean };
type Condition = { path: string[] } & Test;
export type ContentFilter = readonly Condition[];

const LIMITS = { text: 2048, conditions: 10, segments: 8, segment: 64, string: 256, inValues: 16, contentBytes: 32_768 } as const;
const SEGMENT = /^[A-Za-z0-9_$-]+$/;

function isScalar(v: unknown): v is Scalar {
  if (v === null || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  return typeof v === "string" && v.length <= LIMITS.string;
}

function pathOf(raw: unknown): string[] | null {
  if (typeof raw !== "string") return null;
  const segs = raw.split(".");
  if (segs.length > LIMITS.segments) return null;
  return segs.every((s) => s.length > 0 && s.length <= LIMITS.segment && SEGMENT.test(s)) ? segs : null;
}

function testOf(o: Record<string, unknown>): Test | null {
  const keys = Object.keys(o).filter((k) => k !== "path");
  if (keys.length !== 1) return null;
  if ("equals" in o) return isScalar(o.equals) ? { equals: o.equals } : null;
  if ("exists" in o) return typeof o.exists === "boolean" ? { exists: o.exists } : null;
  if ("in" in o) {
    const values = o.in;
    if (!Array.isArray(values) || values.length === 0 || values.length > LIMITS.inValues || !values.every(isScalar)) return null;
    return { in: values };
  }
  return null;
}

/** The filter a `filter` parameter asks for; null: not a valid filter. */
export function parseContentFilter(raw: string): ContentFilter | null {
  if (raw.length > LIMITS.text) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > LIMITS.conditions) return null;
  const out: Condition[] = [];
  for (const c of value) {
    if (typeof c !== "object" || c === null || Array.isArray(c)) return null;
    const path = pathOf((c as Record<string, unknown>).path);
    const test = testOf(c as Record<string, unknown>);
    if (!path || !test) return null;
    out.push({ path, ...test });
  }
  return out;
}

/** The filter as the settings keep and show it: the same conditions with their paths dotted again. */
export function filterText(f: ContentFilter): string {
  return JSON.stringify(f.map(({ path, ...test }) => ({ path: path.join("."), ...test })));
}

/** The value at `path` in parsed JSON; undefined when there is none. */
function at(root: unknown, path: readonly string[]): unknown {
  let cur: unknown = root;
  for (const seg of path) {
    if (Array.isArray(cur)) cur = /^\d+$/.test(seg) ? cur[Number(seg)] : undefined;
    else if (typeof cur === "object" && cur !== null && Object.hasOwn(cur, seg)) cur = (cur as Record<string, unknown>)[seg];
    else return undefined;
  }
  return cur;
}

function holds(c: Condition, root: unknown): boolean {
  const v = at(root, c.path);
  if ("exists" in c) return (v !== undefined) === c.exists;
  if ("equals" in c) return v === c.equals;
  return c.in.some((x) => x === v);
}

/** Whether published `content` passes the filter: JSON of at most 32 KiB on which every condition holds. */
export function matchesContentFilter(f: ContentFilter, content: Uint8Array): boolean {
  if (content.length > LIMITS.contentBytes) return false;
  let root: unknown;
  try {
    root = JSON.parse(Buffer.from(content).toString("utf8"));
  } catch {
    return false;
  }
  return f.every((c) => holds(c, root));
}
