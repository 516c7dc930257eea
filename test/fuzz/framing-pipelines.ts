import fc from "fast-check";
import { chunked, target, withLength } from "./framing-arbitraries.ts";
import { type FramingCase, HANG_BOUND_MS, printableCase, type Target, TIMEOUT_REFUSALS, type WireRequest } from "./framing-cases.ts";
import { request } from "./framing-families.ts";
import type { Seeds } from "./value-arbitraries.ts";

/**
 * Malformed requests that can sit in a pipeline. The head faults come as GET or HEAD, and two of
 * them with a head too long for one TCP read, so that the server must tell which request a raw
 * answer refuses (a HEAD's has no body) from a head it did not read in one piece.
 */
export const MALFORMATIONS = [
  "bad-length",
  "two-lengths",
  "chunked-and-length",
  "lower-method",
  "unknown-method",
  "space-in-name",
  "nul-in-value",
  "oversize-head",
  "padded-bad-name",
  "bad-chunk-form",
] as const;
type Malformation = (typeof MALFORMATIONS)[number];

const FORM = "Content-Type: application/x-www-form-urlencoded";
const PLAIN = { upper: false, zeros: 0, ext: "", trailers: [] };

/** `kind` on target `t`; `params` go in the query, or in the body where the fault is in the body; `head` makes a head fault a HEAD. */
export function malformed(kind: Malformation, t: Target, params: [string, string][], head = false): WireRequest {
  const query = params.map(([n, v]) => `${n}=${v}`).join("&");
  const method = head ? "HEAD" : "GET";
  switch (kind) {
    case "bad-length":
      return request(head ? "HEAD" : "POST", t, query, [FORM, "Content-Length: zz"], "", "refused");
    case "two-lengths":
      return request(
        "POST",
        t,
        "",
        [FORM, `Content-Length: ${query.length}`, `Content-Length: ${query.length + 1}`],
        `${query}&`,
        "refused",
      );
    case "chunked-and-length": {
      const body = chunked(Buffer.from(query), [4], PLAIN);
      return request("POST", t, "", [FORM, "Transfer-Encoding: chunked", `Content-Length: ${body.length}`], body, "refused");
    }
    case "lower-method":
      return request(head ? "head" : "get", t, query, [], "", "refused");
    case "unknown-method":
      return request("FROB", t, query, [], "", "refused");
    case "space-in-name":
      return request(method, t, query, ["Bad Name: x"], "", "refused");
    case "nul-in-value":
      return request(method, t, query, ["X-Nul: a\u0000b"], "", "refused");
    case "oversize-head":
      return request(method, t, `${query}&pad=${"a".repeat(300 * 1024)}`, [], "", "refused");
    case "padded-bad-name":
      return request(method, t, query, [`X-Pad: ${"p".repeat(100 * 1024)}`, "Bad Name: x"], "", "refused");
    case "bad-chunk-form": {
      const body = chunked(Buffer.from(query), [4], PLAIN, { badAt: 0, badSize: "zz" });
      return request("POST", t, "", [FORM, "Transfer-Encoding: chunked"], body, "refused");
    }
  }
}

type Step = "get" | "head" | "post" | "state";

/** A well-formed request of a pipeline: GET, HEAD or a form POST to a read-only operation. */
function wellFormed(kind: Step, seeds: Seeds): WireRequest {
  const query = `topic=${seeds.topic}`;
  const form = "application/x-www-form-urlencoded";
  if (kind === "post") return request("POST", target("M", "rest/exist"), "", withLength(form, query), query, "served");
  if (kind === "state") return request("GET", target("E", "rest/state"), query, [], "", "served");
  return request(kind === "head" ? "HEAD" : "GET", target("M", "rest/exist"), query, [], "", "served");
}

interface Fault {
  at: "middle" | "end";
  kind: Malformation;
  head: boolean;
}

/** `n` requests repeating `pattern`, one of them replaced by `fault`. */
function pipeline(seeds: Seeds, n: number, pattern: readonly Step[], fault: Fault | null): FramingCase {
  const requests = Array.from({ length: n }, (_, i) => wellFormed(pattern[i % pattern.length] ?? "get", seeds));
  let what = "";
  if (fault) {
    const refused = malformed(fault.kind, target("M", "rest/exist"), [["topic", seeds.topic]], fault.head);
    // Behind a deep pipeline the gateway reads the connection no further until earlier requests
    // start; a head already begun meanwhile may outlive HTTP_HEADERS_TIMEOUT_MS (2 s here): 408.
    const bad = n > 32 ? { ...refused, rawStatuses: [...refused.rawStatuses, ...TIMEOUT_REFUSALS] } : refused;
    requests[fault.at === "end" ? n - 1 : Math.floor(n / 2)] = bad;
    what = `, ${bad.method} ${fault.kind} at the ${fault.at}`;
  }
  return printableCase({ note: `pipeline of ${n} (${pattern.join(",")})${what}`, requests, boundMs: HANG_BOUND_MS, heavy: n >= 500 });
}

/**
 * 1 to 2,000 requests in one write, a repeating pattern of GET, HEAD and form POSTs, with at most
 * one malformed request in the middle or at the end: answers to all before it, in order, then
 * a raw refusal or a close.
 */
export function pipelineCase(seeds: Seeds): fc.Arbitrary<FramingCase> {
  const depth = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: 20 }) },
    { weight: 2, arbitrary: fc.integer({ min: 21, max: 300 }) },
    { weight: 1, arbitrary: fc.constantFrom(1_000, 2_000) },
  );
  const pattern = fc.array(fc.constantFrom<Step>("get", "head", "post", "state"), { minLength: 1, maxLength: 4 });
  const fault = fc.record({
    at: fc.constantFrom<Fault["at"]>("middle", "end"),
    kind: fc.constantFrom(...MALFORMATIONS),
    head: fc.boolean(),
  });
  return fc.tuple(depth, pattern, fc.option(fault, { freq: 3 })).map(([n, pat, f]) => pipeline(seeds, n, pat, f));
}

/** The deepest pipelines, each ended by a head too long for one read: a HEAD behind GETs, a GET behind HEADs. */
export function pipelineExtremes(seeds: Seeds): FramingCase[] {
  return [
    pipeline(seeds, 2_000, ["get"], { at: "end", kind: "oversize-head", head: true }),
    pipeline(seeds, 2_000, ["head", "post"], { at: "end", kind: "padded-bad-name", head: false }),
    pipeline(seeds, 2_000, ["get", "head", "state"], null),
  ];
}
