/**
 * Java's Character.isWhitespace, which decides what "blank" means for topics, content and ids
 * (behaviour.md 5.1): U+0009–U+000D, U+001C–U+001F, U+0020, U+1680, U+2000–U+2006,
 * U+2008–U+200A, U+2028, U+2029, U+205F, U+3000. Not the no-break spaces U+00A0, U+2007, U+202F.
 */
export function isJavaWhitespace(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    (code >= 0x1c && code <= 0x20) ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x2006) ||
    (code >= 0x2008 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** The same set as isJavaWhitespace, as a regular expression class. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+001C–U+001F are Java whitespace, on purpose.
const ALL_JAVA_WHITESPACE = /^[\t\n\v\f\r\u001c-\u0020\u1680\u2000-\u2006\u2008-\u200a\u2028\u2029\u205f\u3000]*$/;

/**
 * Empty, or every UTF-16 code unit is Java whitespace. The regular expression engine scans a
 * 1 MiB value of spaces (a hostile topic) in about a millisecond; a loop calling
 * isJavaWhitespace per character took over ten while the code was still cold.
 */
export function isBlank(value: string): boolean {
  return ALL_JAVA_WHITESPACE.test(value);
}

/**
 * Splits like Java's String.split with a literal one-character separator: leading and middle
 * empty parts are kept, trailing empty parts are dropped (`"a-1-"` → `["a", "1"]`).
 */
export function javaSplit(value: string, sep: string): string[] {
  const parts = value.split(sep);
  while (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/** `yyyy-MM-dd HH:mm:ss` in the server's local time zone, as the admin records use. */
export function formatLocalTimestamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

const ND = /^\p{Nd}$/u;

/**
 * The value of a Unicode decimal digit, as Java's Character.digit gives it: Nd characters come
 * in runs of ten starting at a zero, so the value is the distance from the run's start, mod 10.
 */
function digitValue(cp: number): number {
  let start = cp;
  while (ND.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/**
 * Java's Integer/Long.parseLong text rules, without a range: an optional sign, then decimal
 * digits of any script (Java reads e.g. Arabic-Indic digits). Null when it is not such a number.
 */
export function parseJavaInteger(s: string): bigint | null {
  if (!/^[+-]?\p{Nd}+$/u.test(s)) return null;
  let v = 0n;
  for (const ch of s.replace(/^[+-]/, "")) v = v * 10n + BigInt(digitValue(ch.codePointAt(0) as number));
  return s.startsWith("-") ? -v : v;
}

const NUL = "\u0000";

/**
 * Does `s` hold U+0000? Postgres text cannot, so no stored value does: a lookup by such a value
 * finds nothing (not found, not an error) and is not sent at all, since Postgres would refuse it.
 */
export function holdsNul(s: string): boolean {
  return s.includes(NUL);
}

/** `s` with each U+0000 as U+FFFD: text from outside (an error, an answer's excerpt) that Postgres must store. */
export function replaceNul(s: string): string {
  return holdsNul(s) ? s.replaceAll(NUL, "\uFFFD") : s;
}
