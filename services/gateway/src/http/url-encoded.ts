import { unescape as percentDecode } from "node:querystring";
import type { ParamCollector } from "./param-collector.ts";

/**
 * Form-urlencoded decoding of one name or value (behaviour.md 1.2): `+` is a space, `%XX` escapes
 * are bytes read as UTF-8 (an invalid sequence becomes U+FFFD), and a malformed escape such as
 * `%zz` or a lone `%` stays as written. Linear in the input.
 */
function decodeComponent(text: string): string {
  const spaced = text.includes("+") ? text.replaceAll("+", " ") : text;
  return spaced.includes("%") ? percentDecode(spaced) : spaced;
}

/**
 * Splits a query string or urlencoded body into name/value pairs in one pass: `&` separates pairs,
 * the first `=` separates name from value, a pair without `=` has the value "". Empty pairs and
 * pairs with an empty name are skipped (no operation reads a nameless parameter). Each character
 * is looked at a bounded number of times, so the work is linear whatever the repetition: the
 * search for `=` never runs past the pair's own `&`.
 */
export function parseUrlEncoded(text: string, into: ParamCollector): void {
  let start = 0;
  let eq = -1;
  for (let i = 0; i <= text.length; i++) {
    const ch = i < text.length ? text.charCodeAt(i) : 0x26;
    if (ch === 0x3d && eq < 0) {
      eq = i;
    } else if (ch === 0x26) {
      const nameEnd = eq < 0 ? i : eq;
      if (nameEnd > start) {
        into.add(decodeComponent(text.slice(start, nameEnd)), eq < 0 ? "" : decodeComponent(text.slice(eq + 1, i)));
      }
      start = i + 1;
      eq = -1;
    }
  }
}
