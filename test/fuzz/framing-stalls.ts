import fc from "fast-check";
import type { Stage } from "./framing-socket.ts";
import { chunked, multipart, target, withLength } from "./framing-arbitraries.ts";
import { caseBytes, type FramingCase, printableCase, TIMEOUT_REFUSALS, type WireRequest } from "./framing-cases.ts";
import type { Seeds } from "./value-arbitraries.ts";

/** The gateway's request timeouts as the suite sets them, and how late past one an answer may still come. */
export interface Timeouts {
  headersMs: number;
  requestMs: number;
  /** The longest pause inside a body; the slow-but-served bodies pause for less. */
  bodyIdleMs: number;
  keepAliveMs: number;
  slackMs: number;
}

const STALLS = ["head-stalled", "head-slowloris", "head-slow-in-time", "body-stalled", "body-slow-in-time", "keep-alive-idle"] as const;
const BODY_STALLS = ["length", "multipart", "no-final-chunk", "huge-chunk"] as const;
const FORM = "application/x-www-form-urlencoded";

/** `bytes` in `pieces` writes with `pauseMs` between them. */
function dribble(bytes: Buffer, pieces: number, pauseMs: number): Stage[] {
  const step = Math.ceil(bytes.length / pieces);
  return Array.from({ length: pieces }, (_, i) => ({ bytes: bytes.subarray(i * step, (i + 1) * step), delayMs: i === 0 ? 0 : pauseMs }));
}

/** A form POST whose body, as declared, is whole; what a stall case sends of it is decided by the stages. */
function stalledBody(
  kind: (typeof BODY_STALLS)[number],
  seeds: Seeds,
): { request: WireRequest; sent: (full: Buffer, cut: number) => Buffer } {
  const form = `topic=${seeds.topic}&pad=${"a".repeat(64)}`;
  const t = target("M", "rest/exist");
  const base = { method: "POST", target: t, query: "", verdict: "refused" as const, rawStatuses: TIMEOUT_REFUSALS };
  const cutBody = (bodyLength: number) => (full: Buffer, cut: number) => full.subarray(0, full.length - bodyLength + (cut % bodyLength));
  switch (kind) {
    case "length":
      return { request: { ...base, headers: withLength(FORM, form), body: Buffer.from(form) }, sent: cutBody(form.length) };
    case "multipart": {
      const body = multipart([
        { name: "topic", value: seeds.topic },
        { name: "f", value: "x".repeat(64), filename: "a.txt" },
      ]);
      const type = "multipart/form-data; boundary=B";
      return { request: { ...base, headers: withLength(type, body), body: Buffer.from(body) }, sent: cutBody(body.length) };
    }
    case "no-final-chunk": {
      const body = chunked(Buffer.from(form), [7, 9], { upper: false, zeros: 0, ext: "", trailers: [] }, { final: false });
      return { request: { ...base, headers: [`Content-Type: ${FORM}`, "Transfer-Encoding: chunked"], body }, sent: (full) => full };
    }
    case "huge-chunk": {
      // A size llhttp accepts (2^64 - 1): the body can never be complete; only a check of the size or a timeout ends it.
      const body = Buffer.from(`ffffffffffffffff\r\n${form}`);
      return { request: { ...base, headers: [`Content-Type: ${FORM}`, "Transfer-Encoding: chunked"], body }, sent: (full) => full };
    }
  }
}

/**
 * One slow or stalled client: a head cut short and left open, a head dribbled a line at a time
 * forever (slowloris), a body that stops before its end and stays open or is half-closed, an idle
 * keep-alive connection; and, as controls that timeouts must not cut, a head and a body sent
 * slowly but well within the timeouts, which must be served.
 */
export function stallCase(seeds: Seeds, t: Timeouts): fc.Arbitrary<FramingCase> {
  return fc
    .tuple(
      fc.constantFrom(...STALLS),
      fc.constantFrom(...BODY_STALLS),
      fc.nat(),
      fc.boolean(),
      fc.integer({ min: 2, max: 4 }),
      fc.integer({ min: 250, max: 500 }),
    )
    .map(([kind, bodyKind, cut, halfClose, pieces, intervalMs]) => {
      const get: WireRequest = {
        method: "GET",
        target: target("M", "rest/exist"),
        query: `topic=${seeds.topic}`,
        headers: [],
        body: Buffer.alloc(0),
        verdict: "refused",
        rawStatuses: halfClose ? [400, ...TIMEOUT_REFUSALS] : TIMEOUT_REFUSALS,
      };
      const headBound = t.headersMs + t.slackMs;
      const full = caseBytes({ requests: [get] });
      let c: FramingCase;
      if (kind === "head-stalled") {
        const stages = [{ bytes: full.subarray(0, 1 + (cut % (full.length - 4))), delayMs: 0 }];
        c = { note: "head stopped part way", requests: [get], stages, halfClose, boundMs: headBound, heavy: false };
      } else if (kind === "head-slowloris") {
        // More lines than fit in the bound: only the headers timeout can end it.
        const lines = Math.ceil((headBound + 2_000) / intervalMs);
        const start = `GET /event-m/rest/exist?topic=${seeds.topic} HTTP/1.1\r\nHost: 127.0.0.1\r\n`;
        const stages = [{ bytes: Buffer.from(start), delayMs: 0 }];
        for (let i = 0; i < lines; i++) stages.push({ bytes: Buffer.from(`X-Slow-${i}: y\r\n`), delayMs: intervalMs });
        const r = { ...get, rawStatuses: TIMEOUT_REFUSALS };
        c = { note: `head dribbled a line every ${intervalMs} ms`, requests: [r], stages, boundMs: headBound, heavy: false };
      } else if (kind === "head-slow-in-time") {
        const pause = Math.floor(t.headersMs / 2 / pieces);
        const r: WireRequest = { ...get, verdict: "served" };
        c = {
          note: "head sent slowly within the headers timeout",
          requests: [r],
          stages: dribble(full, pieces, pause),
          boundMs: headBound,
          heavy: false,
        };
      } else if (kind === "keep-alive-idle") {
        const r: WireRequest = { ...get, verdict: "served" };
        c = { note: "answered, then idle on keep-alive", requests: [r], keepAlive: true, boundMs: t.keepAliveMs + t.slackMs, heavy: false };
      } else {
        const { request, sent } = stalledBody(bodyKind, seeds);
        const whole = caseBytes({ requests: [request] });
        const bound = t.requestMs + t.slackMs;
        if (kind === "body-slow-in-time") {
          // A chunked body without its end never finishes however it is sent: a slow stall.
          const finishes = bodyKind === "length" || bodyKind === "multipart";
          const r: WireRequest = finishes ? { ...request, verdict: "served" } : request;
          const stages = dribble(whole, pieces, Math.floor(Math.min(t.requestMs / 2 / pieces, t.bodyIdleMs / 2)));
          const note = finishes ? `${bodyKind} body sent slowly within the request timeout` : `${bodyKind} body dribbled, never finished`;
          c = { note, requests: [r], stages, boundMs: bound, heavy: false };
        } else {
          const r = halfClose ? { ...request, rawStatuses: [400, ...TIMEOUT_REFUSALS] } : request;
          const stages = [{ bytes: sent(whole, cut), delayMs: 0 }];
          c = { note: `${bodyKind} body stopped part way`, requests: [r], stages, halfClose, boundMs: bound, heavy: false };
        }
      }
      return printableCase(c);
    });
}
