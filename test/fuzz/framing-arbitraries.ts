import fc from "fast-check";
import type { Variant } from "@evb/domain";
import { CONTEXT } from "../support/broker-expect.ts";
import {
  FRAMING_REFUSALS,
  type FramingCase,
  HANG_BOUND_MS,
  printableCase,
  type Target,
  type Verdict,
  type WireRequest,
} from "./framing-cases.ts";
import { OPERATIONS } from "./operation-catalogue.ts";
import type { Seeds } from "./value-arbitraries.ts";

export function target(variant: Variant | null, subPath: string): Target {
  if (variant === null) return { variant, mountPath: subPath, op: null, subPath: "" };
  const op = OPERATIONS.find((o) => o.path === subPath && o.variants.includes(variant)) ?? null;
  return { variant, mountPath: CONTEXT[variant], op, subPath };
}

/** Operations that only read, unknown paths and a path outside every mount: framing is what varies. */
const READ_TARGETS: readonly Target[] = [
  target("M", "rest/exist"),
  target("L", "rest/exist"),
  target("E", "rest/state"),
  target("M", "admin/getVersion"),
  target("M", "rest/nope"),
  target("L", "rest/nope"),
  target(null, "/nothing"),
];
export const readTarget = () => fc.constantFrom(...READ_TARGETS);

/** Node's parser refuses any other method token with a 400 before the gateway sees the request. */
export const PARSER_METHODS = new Set(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"]);
/** Methods whose urlencoded body is a parameter source (request-params.ts); multipart is read for any method. */
const FORM_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

type BodyKind = "form" | "multipart" | "json" | "text" | "octet" | "missing" | "garbage";
export const CONTENT_TYPES: Record<BodyKind, readonly (string | null)[]> = {
  form: [
    "application/x-www-form-urlencoded",
    "application/x-www-form-urlencoded; charset=utf-16",
    'APPLICATION/X-WWW-FORM-URLENCODED;charset="',
    "application/x-www-form-urlencoded; charset=ebcdic-cp-us",
  ],
  multipart: [
    "multipart/form-data; boundary=B",
    'multipart/form-data; boundary="B"; charset=shift_jis',
    "Multipart/Form-Data; charset=utf-7; boundary=B",
  ],
  json: ["application/json", "application/json; charset=koi8-r"],
  text: ["text/plain", "text/plain; charset=x-unknown"],
  octet: ["application/octet-stream"],
  missing: [null],
  garbage: [
    "x/y",
    ";;;",
    "\u00ff/\u00fe; charset=\u00ff",
    "multipart/mixed; boundary=B",
    "application/x-www-form-urlencoded; ===",
    "multipart/form-data; boundary=",
  ],
};
export const bodyKind = () =>
  fc.constantFrom<BodyKind>("form", "form", "multipart", "multipart", "json", "text", "octet", "missing", "garbage");

/** Whether the gateway reads this body to find parameters: a broken one must then refuse the request. */
function readsBody(method: string, t: Target, contentType: string | null): boolean {
  if (t.op === null) return false;
  if (/^multipart\/form-data/i.test(contentType ?? "")) return true;
  return /^application\/x-www-form-urlencoded/i.test(contentType ?? "") && FORM_METHODS.has(method);
}

export interface Part {
  name: string;
  value: string;
  filename?: string;
  /** Extra header lines of the part. */
  headers?: string[];
}

export function multipart(parts: readonly Part[], boundary = "B", close = true): string {
  const text = parts
    .map((p) => {
      const file = p.filename === undefined ? "" : `; filename="${p.filename}"`;
      const extra = (p.headers ?? []).map((h) => `${h}\r\n`).join("");
      return `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${file}\r\n${extra}\r\n${p.value}\r\n`;
    })
    .join("");
  return close ? `${text}--${boundary}--\r\n` : text;
}

/**
 * A body of `kind` carrying `params` (name/value pairs, values plain ASCII), at least `atLeast`
 * bytes long: a `pad` parameter (or filler bytes) makes up the rest.
 */
export function bodyText(kind: BodyKind, contentType: string | null, params: [string, string][], atLeast = 0): string {
  const build = (pad: number): string => {
    const all: [string, string][] = pad > 0 ? [...params, ["pad", "a".repeat(pad)]] : params;
    if (kind === "multipart" || /^multipart\/form-data/i.test(contentType ?? ""))
      return multipart(all.map(([name, value]) => ({ name, value })));
    if (kind === "json") return JSON.stringify(Object.fromEntries(all));
    return all.map(([n, v]) => `${n}=${v}`).join("&");
  };
  const base = build(0).length;
  return atLeast <= base ? build(0) : build(atLeast - base - (kind === "json" ? 8 : 5));
}

export function withLength(contentType: string | null, body: string | Buffer, extra: string[] = []): string[] {
  return [
    ...(contentType === null ? [] : [`Content-Type: ${contentType}`]),
    `Content-Length: ${Buffer.byteLength(body, "latin1")}`,
    ...extra,
  ];
}

/** How chunk sizes are spelt: hex case, leading zeros, an extension on every chunk, trailers after the last. */
interface ChunkStyle {
  upper: boolean;
  zeros: number;
  ext: string;
  trailers: string[];
}
export const chunkStyle = (): fc.Arbitrary<ChunkStyle> =>
  fc.record({
    upper: fc.boolean(),
    zeros: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 6 }) }),
    ext: fc.constantFrom("", "", ";a=b", ";a", ';a="q;r"', ";a=b;c=d"),
    trailers: fc.constantFrom([], [], ["X-Trailer: 1"], ["X-A: 1", "X-B: two"]),
  });

/** A chunk-size line's size, as `style` spells it. */
function size(n: number, style: ChunkStyle): string {
  const hex = n.toString(16);
  return `${"0".repeat(style.zeros)}${style.upper ? hex.toUpperCase() : hex}`;
}

/** The lengths of the chunks that split `length` bytes by `sizes`: the last chunk takes the rest. */
function pieces(length: number, sizes: readonly number[]): number[] {
  const out: number[] = [];
  for (let at = 0, i = 0; at < length; i++) {
    const n = i < sizes.length - 1 ? Math.min(Math.max(1, sizes[i] ?? 1), length - at) : length - at;
    out.push(n);
    at += n;
  }
  return out;
}

/**
 * `body` in chunks of the given sizes. `badSize` replaces the size line of chunk `badAt` (modulo
 * the chunks there are), `extraData` lengthens that chunk's data past its size, and
 * `final: false` leaves the last chunk (and so the request) unfinished.
 */
export function chunked(
  body: Buffer,
  sizes: readonly number[],
  style: ChunkStyle,
  opts: { badAt?: number; badSize?: string; final?: boolean; extraData?: number } = {},
): Buffer {
  const lengths = pieces(body.length, sizes);
  const bad = opts.badAt === undefined ? -1 : opts.badAt % Math.max(1, lengths.length);
  const out: string[] = bad >= 0 && lengths.length === 0 ? [`${opts.badSize ?? size(0, style)}\r\n\r\n`] : [];
  let at = 0;
  lengths.forEach((n, i) => {
    const spelt = i === bad && opts.badSize !== undefined ? opts.badSize : size(n, style);
    const data = body.subarray(at, at + n).toString("latin1") + (i === bad && opts.extraData ? "x".repeat(opts.extraData) : "");
    out.push(`${spelt}${style.ext}\r\n${data}\r\n`);
    at += n;
  });
  if (opts.final !== false) out.push(`${"0".repeat(style.zeros)}0${style.ext}\r\n${style.trailers.map((t) => `${t}\r\n`).join("")}\r\n`);
  return Buffer.from(out.join(""), "latin1");
}

/** Sizes that split a body: one chunk, a few random ones, or one byte each (up to 100,000 chunks). */
const chunkPlan = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ tiny: fc.constant(0), sizes: fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 8 }) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        tiny: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.constantFrom(1_000, 10_000, 100_000)),
        sizes: fc.constant<number[]>([]),
      }),
    },
  );

/** Sizes Node's parser cannot read; a run of leading zeros may or may not be read (an "overlong" spelling). */
export const BAD_SIZES = ["zz", "-1", "", "10000000000000000", "0x5", "g", "5 5"];

/**
 * One request with a chunked body: valid spellings, extensions, trailers and up to 100,000
 * one-byte chunks; or a size Node cannot read, a chunk longer than its size, or chunked
 * together with Content-Length. On any method, with any content type.
 */
export function chunkedCase(seeds: Seeds): fc.Arbitrary<FramingCase> {
  const methods = fc.constantFrom("POST", "POST", "POST", "GET", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS");
  const fault = fc.oneof(
    { weight: 5, arbitrary: fc.constant({ kind: "valid" as const }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("bad-size" as const), size: fc.constantFrom(...BAD_SIZES) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("overlong" as const), zeros: fc.constantFrom(20, 64, 300) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("long-data" as const), extra: fc.integer({ min: 1, max: 5 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("with-length" as const), first: fc.boolean() }) },
  );
  return fc
    .tuple(readTarget(), methods, bodyKind(), fc.nat(), chunkPlan(), chunkStyle(), fault, fc.nat(), fc.constantFrom("chunked", "Chunked"))
    .map(([t, method, kind, pick, plan, style, f, badPick, te]) => {
      const contentType = CONTENT_TYPES[kind][pick % CONTENT_TYPES[kind].length] ?? null;
      const text = bodyText(kind, contentType, [["topic", seeds.topic]], plan.tiny);
      const body = Buffer.from(text, "latin1");
      const sizes = plan.tiny > 0 ? Array.from({ length: body.length }, () => 1) : plan.sizes;
      const chunks = pieces(body.length, sizes).length;
      let wire: Buffer;
      if (f.kind === "bad-size") wire = chunked(body, sizes, style, { badAt: badPick, badSize: f.size });
      else if (f.kind === "overlong") wire = chunked(body, sizes, { ...style, zeros: f.zeros });
      else if (f.kind === "long-data") wire = chunked(body, sizes, style, { badAt: badPick, extraData: f.extra });
      else wire = chunked(body, sizes, style);
      const te_ = `Transfer-Encoding: ${te}`;
      const length = `Content-Length: ${wire.length}`;
      const framing = f.kind === "with-length" ? (f.first ? [length, te_] : [te_, length]) : [te_];
      const broken: Verdict = readsBody(method, t, contentType) ? "refused" : "either";
      const verdict: Verdict =
        f.kind === "valid" ? "served" : f.kind === "with-length" ? "refused" : f.kind === "overlong" ? "either" : broken;
      const request: WireRequest = {
        method,
        target: t,
        query: "",
        headers: [...(contentType === null ? [] : [`Content-Type: ${contentType}`]), ...framing],
        body: wire,
        verdict,
        rawStatuses: FRAMING_REFUSALS,
      };
      const note = `chunked ${f.kind}${"size" in f ? ` "${f.size}"` : ""}, ${chunks} chunk(s), ${kind} body, ${method}`;
      return printableCase({ note, requests: [request], boundMs: HANG_BOUND_MS, heavy: chunks >= 10_000 });
    });
}

/** 100,000 one-byte chunks in one write, on a POST whose form body is read and on a GET whose body is skipped. */
export function chunkedExtremes(seeds: Seeds): FramingCase[] {
  const type = "application/x-www-form-urlencoded";
  const body = Buffer.from(bodyText("form", type, [["topic", seeds.topic]], 100_000), "latin1");
  const wire = chunked(
    body,
    Array.from({ length: body.length }, () => 1),
    { upper: false, zeros: 0, ext: "", trailers: [] },
  );
  return ["POST", "GET"].map((method) => {
    const headers = [`Content-Type: ${type}`, "Transfer-Encoding: chunked"];
    const r: WireRequest = {
      method,
      target: target("M", "rest/exist"),
      query: "",
      headers,
      body: wire,
      verdict: "served",
      rawStatuses: FRAMING_REFUSALS,
    };
    return printableCase({ note: `100,000 one-byte chunks, ${method}`, requests: [r], boundMs: HANG_BOUND_MS, heavy: true });
  });
}
