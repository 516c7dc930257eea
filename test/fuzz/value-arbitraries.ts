import fc from "fast-check";
import type { ParamKind } from "./operation-catalogue.ts";

/** Values from the running system that make a request get further than its first check. */
export interface Seeds {
  topic: string;
  eventId: string;
}

/** Empty, blank, huge, non-numeric, negative, overflowing and odd values tried for every parameter. */
const HOSTILE_VALUES = [
  "",
  " ",
  "\t\n",
  "\u00a0",
  "abc",
  "-1",
  "0",
  "1",
  "+1",
  "007",
  "1.5",
  "1e3",
  "0x10",
  "#1",
  "2147483647",
  "2147483648",
  "-2147483649",
  "9223372036854775808",
  "99999999999999999999999999",
  "NaN",
  "中文",
  "a\u0000b",
  "\ud800",
  "\ufffd",
  "/",
  "a/b/",
  "+",
  "#",
  "%",
  "&",
  "=",
  "../../etc/passwd",
  "<script>",
  "' OR 1=1 --",
  "__proto__",
  "a".repeat(65),
  "a".repeat(1025),
  "a".repeat(10_241),
];

function hostileValue(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_VALUES) },
    { weight: 3, arbitrary: fc.string({ maxLength: 40, unit: "binary" }) },
    { weight: 1, arbitrary: fc.constantFrom("x".repeat(70_000), "中".repeat(10_241)) },
  );
}

/** Values that pass a parameter's own checks, so that later checks are reached too. */
function plausible(kind: ParamKind, seeds: Seeds): fc.Arbitrary<string> {
  switch (kind) {
    case "topic":
      return fc.oneof(fc.constant(seeds.topic), fc.stringMatching(/^fz\.[a-z0-9]{1,8}$/));
    case "pattern":
      return fc.constantFrom(seeds.topic, "fz/#", "+/x", "#/a", "a/+/+", "a#", "a/#/b", "+");
    case "content":
      return fc.constantFrom("hello", "中", "a".repeat(10_240));
    case "int":
      return fc.oneof(fc.constantFrom("1", "10", "100", "101"), fc.integer({ min: -5, max: 200 }).map(String));
    case "eventId":
      return fc.constantFrom(seeds.eventId, "abcdefgh-1-1", "abcdefgh-1-99999999", "abcdefgh-1-", "abcdefgh-1-2-", "x-y-z");
    case "url":
      // IP literals only: a host name would send the connectivity check to DNS.
      return fc.constantFrom(
        "http://127.0.0.1:1/cb",
        "http://[::1]:1/cb",
        "http://10.0.0.1:1/cb",
        "http://192.0.2.1:9/cb",
        "https://127.0.0.1:1/cb",
        "ftp://127.0.0.1/x",
        "http://",
        "javascript:alert(1)",
        "http://127.0.0.1:99999/",
        "http://user:pw@127.0.0.1:1/",
        "no scheme",
      );
    case "subscriptionId":
      return fc.oneof(fc.uuid().map(String), fc.constantFrom("not-a-uuid", "00000000-0000-0000-0000-000000000000"));
    case "group":
      return fc.constantFrom("1", "2", "3", "01", "1 ", " ", "-1", "abc", "1,1");
    case "nodes":
      return fc.constantFrom("127.0.0.1:1", ",", "a,b", "127.0.0.1:8080,127.0.0.1:8081");
    case "text":
      return fc.constantFrom("json", "0xabc", "x");
  }
}

export function valueFor(kind: ParamKind, seeds: Seeds): fc.Arbitrary<string> {
  return fc.oneof({ weight: 1, arbitrary: plausible(kind, seeds) }, { weight: 1, arbitrary: hostileValue() });
}

/** Malformed escapes spliced into a query string or urlencoded value. */
const BAD_ESCAPES = ["%zz", "%", "%E4%B8", "%FF%FE", "%C0%80", "%ED%A0%80", "%%", "%0"];
/** Invalid UTF-8 spliced into a multipart value (raw bytes in a request target are the HTTP parser's to refuse). */
const BAD_BYTES = ["\u00ff", "\u0080", "\u00c0\u0080", "\u00ed\u00a0\u0080", "\u00e4\u00b8"];

/** application/x-www-form-urlencoded bytes of `value`'s UTF-8 (a lone surrogate becomes U+FFFD). */
export function formEncode(value: string): string {
  return encodeURIComponent(value.toWellFormed()).replaceAll("%20", "+");
}

/** A value as the wire carries it: usually well encoded, sometimes with a malformed escape or invalid UTF-8. */
export function wireValue(value: string, form: boolean): fc.Arbitrary<string> {
  const clean = form ? formEncode(value) : Buffer.from(value, "utf8").toString("latin1");
  return fc.oneof(
    { weight: 5, arbitrary: fc.constant(clean) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...(form ? BAD_ESCAPES : BAD_BYTES)), fc.nat({ max: clean.length }))
        .map(([bad, at]) => `${clean.slice(0, at)}${bad}${clean.slice(at)}`),
    },
  );
}
