import fc from "fast-check";
import {
  bodyKind,
  CONTENT_TYPES,
  chunked,
  chunkStyle,
  multipart,
  PARSER_METHODS,
  type Part,
  readTarget,
  target,
  withLength,
  bodyText,
} from "./framing-arbitraries.ts";
import {
  FRAMING_REFUSALS,
  type FramingCase,
  HANG_BOUND_MS,
  printableCase,
  type Target,
  type Verdict,
  type WireRequest,
} from "./framing-cases.ts";
import type { Seeds } from "./value-arbitraries.ts";

/** The gateway's cap on multipart parts (MAX_PARAMETERS, the servlet container's maxParameterCount). */
const MAX_PARTS = 10_000;

export function request(method: string, t: Target, query: string, headers: string[], body: string | Buffer, verdict: Verdict): WireRequest {
  return {
    method,
    target: t,
    query,
    headers,
    body: typeof body === "string" ? Buffer.from(body, "latin1") : body,
    verdict,
    rawStatuses: FRAMING_REFUSALS,
  };
}

const MULTIPART_FAULTS = [
  "valid",
  "valid",
  "valid",
  "truncated",
  "unterminated-file",
  "huge-part-header",
  "boundary",
  "short-length",
] as const;
/** Declared boundaries the body's "--B" does not match: none, empty, another, an open quote, longer than RFC 2046's 70. */
const GARBLED_TYPES: [string, Verdict][] = [
  ["multipart/form-data", "refused"],
  ["multipart/form-data; boundary=", "refused"],
  ["multipart/form-data; boundary=C", "refused"],
  ['multipart/form-data; boundary="B', "either"],
  [`multipart/form-data; boundary=${"B".repeat(80)}`, "refused"],
];

/**
 * One multipart request: up to 10,000 parts and just over, file parts, part headers beyond
 * busboy's caps, a body truncated before its closing boundary (an unterminated file part
 * among them), a missing or garbled boundary, and a Content-Length shorter than the body.
 */
export function multipartCase(seeds: Seeds): fc.Arbitrary<FramingCase> {
  const t = fc.constantFrom(target("M", "rest/exist"), target("L", "rest/exist"), target("E", "rest/state"));
  const extra = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 5 }) },
    { weight: 1, arbitrary: fc.constantFrom(9_998, 9_999, 10_000) },
  );
  const file = fc.option(
    fc.record({
      filename: fc.constantFrom("a.txt", "", "..\\x", "\u00e9.bin"),
      content: fc.string({ unit: "binary-ascii", maxLength: 200 }),
    }),
  );
  return fc
    .tuple(
      t,
      fc.constantFrom("POST", "POST", "POST", "PUT", "PATCH", "GET", "HEAD"),
      extra,
      file,
      fc.constantFrom(...MULTIPART_FAULTS),
      fc.nat(),
      fc.nat(),
    )
    .map(([tg, method, extraCount, f, fault, cutPick, pick]) => {
      const parts: Part[] = [{ name: "topic", value: seeds.topic }];
      for (let i = 0; i < extraCount; i++) parts.push({ name: `x${i}`, value: "v" });
      if (fault === "unterminated-file" || f !== null) {
        parts.push({ name: "f", value: f?.content.replaceAll("--B", "") ?? "abc", filename: f?.filename ?? "a.txt" });
      }
      if (fault === "huge-part-header") {
        const line = pick % 2 === 0 ? [`X-Long: ${"h".repeat(20_000)}`] : Array.from({ length: 2_001 }, (_, i) => `X-H${i}: 1`);
        parts.splice(cutPick % parts.length, 0, { name: "h", value: "v", headers: line });
      }
      let contentType = CONTENT_TYPES.multipart[pick % CONTENT_TYPES.multipart.length] ?? "multipart/form-data; boundary=B";
      let body = multipart(parts);
      let verdict: Verdict = parts.length > MAX_PARTS ? "refused" : "served";
      let headers: string[] | undefined;
      let note = `multipart ${fault}, ${parts.length} part(s)${f ? " with a file" : ""}, ${method}`;
      if (fault === "truncated" || fault === "unterminated-file") {
        // Cut anywhere before the closing delimiter: the last part, a file part for
        // "unterminated-file", never ends.
        const close = body.lastIndexOf("\r\n--B--");
        const from = fault === "unterminated-file" ? body.lastIndexOf("\r\n\r\n") + 4 : 0;
        body = body.slice(0, from + (cutPick % (close - from + 1)));
        verdict = "refused";
      } else if (fault === "huge-part-header") {
        verdict = "either";
      } else if (fault === "boundary") {
        const [type, v] = GARBLED_TYPES[pick % GARBLED_TYPES.length] as [string, Verdict];
        contentType = type;
        verdict = v;
        note += ` (${type.slice(0, 40)})`;
      } else if (fault === "short-length") {
        // The declared length stops before the closing boundary; the rest follows as if it were
        // the next request.
        const close = body.lastIndexOf("\r\n--B--");
        headers = withLength(contentType, body.slice(0, cutPick % (close + 1)));
        verdict = "refused";
      }
      const r = request(method, tg, "", headers ?? withLength(contentType, body), body, verdict);
      return printableCase({ note, requests: [r], boundMs: HANG_BOUND_MS, heavy: parts.length >= 5_000 });
    });
}

/** Faults of a request head; each makes Node's parser or the gateway refuse it before any operation runs. */
const HEAD_FAULTS = ["bad-length", "oversize", "two-hosts", "nul-in-value", "many-headers", "space-in-name"] as const;
type HeadFault = (typeof HEAD_FAULTS)[number];

function headFault(fault: HeadFault): { headers: string[]; query: string } {
  switch (fault) {
    case "bad-length":
      return { headers: ["Content-Length: 1x"], query: "" };
    case "oversize":
      return { headers: [], query: `pad=${"a".repeat(300 * 1024)}` };
    case "two-hosts":
      return { headers: ["Host: other.example"], query: "" };
    case "nul-in-value":
      return { headers: ["X-Nul: a\u0000b"], query: "" };
    case "many-headers":
      return { headers: Array.from({ length: 1_001 }, (_, i) => `X-H${i}: 1`), query: "" };
    case "space-in-name":
      return { headers: ["Bad Name: x"], query: "" };
  }
}

/**
 * One request of any method (HEAD most, lower-case and made-up tokens too), any content type
 * with odd charsets, its body framed by length, by chunks or absent, and now and then a head
 * fault that the server refuses itself: HEAD must get no body bytes either way.
 */
export function methodCase(seeds: Seeds): fc.Arbitrary<FramingCase> {
  const methods = fc.constantFrom(
    "HEAD",
    "HEAD",
    "HEAD",
    "GET",
    "POST",
    "OPTIONS",
    "TRACE",
    "PATCH",
    "DELETE",
    "PUT",
    "get",
    "FROB",
    "XYZZY",
  );
  const fault = fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: fc.constantFrom(...HEAD_FAULTS) });
  return fc
    .tuple(readTarget(), methods, bodyKind(), fc.nat(), fc.constantFrom("none", "length", "chunked"), fc.boolean(), fault, chunkStyle())
    .map(([t, method, kind, pick, framing, inQuery, f, style]) => {
      const contentType = framing === "none" ? null : (CONTENT_TYPES[kind][pick % CONTENT_TYPES[kind].length] ?? null);
      const params: [string, string][] = [["topic", seeds.topic]];
      const text = framing === "none" || inQuery ? bodyText(kind, contentType, []) : bodyText(kind, contentType, params);
      const body =
        framing === "none"
          ? Buffer.alloc(0)
          : framing === "chunked"
            ? chunked(Buffer.from(text, "latin1"), [3, 5], style)
            : Buffer.from(text, "latin1");
      const typeLine = contentType === null ? [] : [`Content-Type: ${contentType}`];
      const framingLines =
        framing === "none" ? [] : framing === "chunked" ? [...typeLine, "Transfer-Encoding: chunked"] : withLength(contentType, body);
      const extra = f === null ? { headers: [], query: "" } : headFault(f);
      const query = [inQuery || framing === "none" ? `topic=${seeds.topic}` : "", extra.query].filter((q) => q !== "").join("&");
      const verdict: Verdict = PARSER_METHODS.has(method) && f === null ? "served" : "refused";
      // A bad Content-Length replaces the real one rather than adding a second.
      const headers = f === "bad-length" ? [...typeLine, ...extra.headers] : [...framingLines, ...extra.headers];
      const r = request(method, t, query, headers, f === "bad-length" ? Buffer.alloc(0) : body, verdict);
      const note = `${method} ${framing} ${kind} body${f ? `, head fault ${f}` : ""}`;
      return printableCase({ note, requests: [r], boundMs: HANG_BOUND_MS, heavy: false });
    });
}

/** The part cap and one part over it, and a file part cut off before its boundary. */
export function multipartExtremes(seeds: Seeds): FramingCase[] {
  const type = "multipart/form-data; boundary=B";
  const parts = (n: number): Part[] => [
    { name: "topic", value: seeds.topic },
    ...Array.from({ length: n - 1 }, (_, i) => ({ name: `x${i}`, value: "v" })),
  ];
  const atCap = multipart(parts(MAX_PARTS));
  const overCap = multipart(parts(MAX_PARTS + 1));
  const file = `${multipart(parts(1), "B", false)}--B\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\nabc`;
  const t = target("M", "rest/exist");
  return [
    { note: `multipart of ${MAX_PARTS} parts`, r: request("POST", t, "", withLength(type, atCap), atCap, "served") },
    { note: `multipart of ${MAX_PARTS + 1} parts`, r: request("POST", t, "", withLength(type, overCap), overCap, "refused") },
    { note: "multipart file part without its closing boundary", r: request("POST", t, "", withLength(type, file), file, "refused") },
  ].map(({ note, r }) => printableCase({ note, requests: [r], boundMs: HANG_BOUND_MS, heavy: true }));
}
