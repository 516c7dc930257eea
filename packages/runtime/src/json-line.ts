/**
 * Characters JSON leaves raw that a terminal or log viewer acts on: DEL and the C1 controls
 * (U+009B is CSI, as ESC [ is), the Unicode line and paragraph separators, and the bidi marks,
 * embeddings, overrides and isolates. JSON.stringify escapes only the C0 controls, so a topic or
 * client id carrying these reached every `docker logs` and `tail -f` of the service as written.
 */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * One JSON log line with those characters written as `\uXXXX` escapes: the same JSON value (they
 * can only stand inside strings), safe to print. pino's `streamWrite` hook (service-logger.ts).
 */
export function escapeRawControls(line: string): string {
  return line.replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
