import fc from "fast-check";
import type { Variant } from "@evb/domain";
import { BAD_SIZES, chunked, multipart, target, withLength } from "./framing-arbitraries.ts";
import { FRAMING_REFUSALS, type FramingCase, HANG_BOUND_MS, printableCase, type Target, type WireRequest } from "./framing-cases.ts";
import { MALFORMATIONS, malformed } from "./framing-pipelines.ts";
import type { Seeds } from "./value-arbitraries.ts";

const FORM = "application/x-www-form-urlencoded";
const MP = "multipart/form-data; boundary=B";
const PLAIN = { upper: false, zeros: 0, ext: "", trailers: [] };
/** Faults of a write's own framing (besides MALFORMATIONS), each leaving at least one required parameter unread. */
const BODY_FAULTS = [
  "bad-chunk-size",
  "multipart-truncated",
  "multipart-unterminated-file",
  "multipart-garbled",
  "multipart-over-cap",
  "form-short-length",
] as const;

function post(t: Target, headers: string[], body: string | Buffer, verdict: WireRequest["verdict"]): WireRequest {
  return {
    method: "POST",
    target: t,
    query: "",
    headers,
    body: typeof body === "string" ? Buffer.from(body, "latin1") : body,
    verdict,
    rawStatuses: FRAMING_REFUSALS,
  };
}

interface Write {
  t: Target;
  params: [string, string][];
}

/** A publish to the seed topic, or an open of a topic nobody has opened: each writes when accepted. */
function write(seeds: Seeds): fc.Arbitrary<Write> {
  const variant = fc.constantFrom<Variant>("L", "M", "E");
  const publish = fc.tuple(variant, fc.nat()).map(
    ([v, n]): Write => ({
      t: target(v, "rest/publish"),
      params: [
        ["topic", seeds.topic],
        ["content", `c${n}`],
      ],
    }),
  );
  const open = fc.tuple(variant, fc.nat()).map(([v, n]): Write => ({ t: target(v, "rest/open"), params: [["topic", `fzf.${n}`]] }));
  return fc.oneof(publish, open);
}

function bodyFault(kind: (typeof BODY_FAULTS)[number], w: Write, pick: number): WireRequest {
  const form = w.params.map(([n, v]) => `${n}=${v}`).join("&");
  const parts = w.params.map(([name, value]) => ({ name, value }));
  switch (kind) {
    case "bad-chunk-size": {
      const body = chunked(Buffer.from(form), [3, 4], PLAIN, { badAt: pick % 2, badSize: BAD_SIZES[pick % BAD_SIZES.length] });
      return post(w.t, [`Content-Type: ${FORM}`, "Transfer-Encoding: chunked"], body, "refused");
    }
    case "multipart-truncated": {
      // Every field whole, only the closing delimiter missing: the fields must still not be used.
      const body = multipart(parts, "B", false);
      return post(w.t, withLength(MP, body), body, "refused");
    }
    case "multipart-unterminated-file": {
      const body = `${multipart(parts, "B", false)}--B\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\nabc`;
      return post(w.t, withLength(MP, body), body, "refused");
    }
    case "multipart-garbled": {
      const body = multipart(parts);
      const type = ["multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=C"][pick % 3] as string;
      return post(w.t, withLength(type, body), body, "refused");
    }
    case "multipart-over-cap": {
      const body = multipart([...parts, ...Array.from({ length: 10_001 - parts.length }, (_, i) => ({ name: `x${i}`, value: "" }))]);
      return post(w.t, withLength(MP, body), body, "refused");
    }
    case "form-short-length": {
      // The declared length ends inside the first parameter's name or before the second one:
      // one required parameter is missing; the rest reads as a malformed next request.
      const stop = w.params.length > 1 ? form.indexOf("&") : form.indexOf("=");
      return post(w.t, [`Content-Type: ${FORM}`, `Content-Length: ${pick % (stop + 1)}`], form, "refused");
    }
  }
}

/**
 * A write certain to be refused for its framing, alone or after up to five well-formed reads in
 * the same write: a malformed head (MALFORMATIONS), a chunk size Node cannot read, a multipart
 * body cut before its closing boundary (a file part among them), a garbled boundary, more parts
 * than the cap, a Content-Length that ends before the last required parameter.
 */
export function refusedWriteCase(seeds: Seeds): fc.Arbitrary<FramingCase> {
  const fault = fc.constantFrom<string>(...MALFORMATIONS, ...BODY_FAULTS);
  return fc.tuple(write(seeds), fault, fc.nat(), fc.integer({ min: 0, max: 5 })).map(([w, f, pick, before]) => {
    const bad = (MALFORMATIONS as readonly string[]).includes(f)
      ? malformed(f as (typeof MALFORMATIONS)[number], w.t, w.params)
      : bodyFault(f as (typeof BODY_FAULTS)[number], w, pick);
    const read: WireRequest = { ...post(target("M", "rest/exist"), [], "", "served"), method: "GET", query: `topic=${seeds.topic}` };
    const requests = [...Array.from({ length: before }, () => read), bad];
    const note = `${w.t.mountPath}/${w.t.subPath} with ${f}${before > 0 ? ` after ${before} read(s)` : ""}`;
    return printableCase({ note, requests, boundMs: HANG_BOUND_MS, heavy: false });
  });
}

/** The same writes framed correctly (chunked, and multipart), each a success: they show the write check can fail. */
export function unbrokenWrites(seeds: Seeds): FramingCase[] {
  const publish = target("M", "rest/publish");
  const form = `topic=${seeds.topic}&content=unbroken`;
  const chunkedPublish = post(
    publish,
    [`Content-Type: ${FORM}`, "Transfer-Encoding: chunked"],
    chunked(Buffer.from(form), [3, 4], PLAIN),
    "served",
  );
  const body = multipart([
    { name: "topic", value: seeds.topic },
    { name: "content", value: "unbroken" },
  ]);
  const multipartPublish = post(publish, withLength(MP, body), body, "served");
  return [chunkedPublish, multipartPublish].map((r, i) =>
    printableCase({ note: `unbroken ${i === 0 ? "chunked" : "multipart"} publish`, requests: [r], boundMs: HANG_BOUND_MS, heavy: false }),
  );
}
