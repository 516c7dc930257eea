import fc from "fast-check";
import type { Variant } from "@evb/domain";
import type { OperationSpec } from "./operation-catalogue.ts";

/** How a body is framed: which Content-Type it declares and how the pairs are laid out. */
export type BodyKind = "none" | "form" | "multipart" | "broken-multipart" | "json" | "text" | "garbage";

/** One name/value pair, already encoded for the wire (malformed escapes included on purpose). */
export interface WirePair {
  name: string;
  value: string;
}

/**
 * A request the fuzz suite sends. `path` and the pairs are latin1 strings, one character per
 * byte on the wire, so that raw bytes above 0x7f (invalid UTF-8) survive as written.
 */
export interface HostileRequest {
  method: string;
  /** The mount's context path, or a path outside every mount. */
  mountPath: string;
  /** The variant of the mount, null for a path outside every mount. */
  variant: Variant | null;
  /** The operation the path names for this variant, null for an unknown path. */
  op: OperationSpec | null;
  /** The rest of the path after the mount, decorations included (trailing slash, ;jsessionid=…). */
  subPath: string;
  query: WirePair[];
  bodyKind: BodyKind;
  bodyPairs: WirePair[];
  /** Raw bytes for the "garbage" and "text" kinds. */
  bodyText: string;
  contentType: string | null;
}

function formText(pairs: readonly WirePair[]): string {
  return pairs.map((p) => `${p.name}=${p.value}`).join("&");
}

function multipartText(pairs: readonly WirePair[], broken: boolean): string {
  const parts = pairs.map((p) => `--fuzzB\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`).join("");
  return broken ? `${parts}--fuzzB\r\nContent-Disposition: form-dat` : `${parts}--fuzzB--\r\n`;
}

/** The body bytes, as latin1 text. */
export function bodyOf(r: HostileRequest): string {
  switch (r.bodyKind) {
    case "none":
      return "";
    case "form":
      return formText(r.bodyPairs);
    case "multipart":
      return multipartText(r.bodyPairs, false);
    case "broken-multipart":
      return multipartText(r.bodyPairs, true);
    case "json":
      return JSON.stringify(Object.fromEntries(r.bodyPairs.map((p) => [p.name, p.value])));
    default:
      return r.bodyText;
  }
}

/** The request line's target: mount, sub-path and query string. */
export function targetOf(r: HostileRequest): string {
  const q = r.query.length > 0 ? `?${formText(r.query)}` : "";
  return `${r.mountPath}${r.subPath === "" ? "" : `/${r.subPath}`}${q}`;
}

/** The whole request as it goes on the wire. `Connection: close` lets the reader stop at EOF. */
export function wireBytes(r: HostileRequest): Buffer {
  const body = Buffer.from(bodyOf(r), "latin1");
  const head = [
    `${r.method} ${targetOf(r)} HTTP/1.1`,
    "Host: 127.0.0.1",
    ...(r.contentType === null ? [] : [`Content-Type: ${r.contentType}`]),
    `Content-Length: ${body.length}`,
    "Connection: close",
  ];
  return Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), body]);
}

/** A printable form of the raw request for a failure report: escapes, and long runs cut. */
export function describeRequest(r: HostileRequest): string {
  const raw = wireBytes(r).toString("latin1");
  const shown = raw.length > 2_000 ? `${raw.slice(0, 1_500)}…(${raw.length} bytes in all)…${raw.slice(-300)}` : raw;
  return JSON.stringify(shown);
}

/** `r`, printed by fast-check (a shrunk counterexample) as its raw bytes rather than as a huge object. */
export function printable(r: HostileRequest): HostileRequest {
  return Object.defineProperty(r, fc.toStringMethod, { value: () => describeRequest(r), enumerable: false });
}
