import fc from "fast-check";
import type { Variant } from "@evb/domain";
import { CONTEXT } from "../support/broker-expect.ts";
import { type BodyKind, type HostileRequest, printable, type WirePair } from "./hostile-request.ts";
import { OPERATIONS, type OperationSpec, UNKNOWN_PATHS } from "./operation-catalogue.ts";
import { formEncode, type Seeds, valueFor, wireValue } from "./value-arbitraries.ts";

const VARIANTS: readonly Variant[] = ["L", "M", "E"];
/** Common, rare, lower-case (not a method token to Node's parser) and unknown methods. */
const METHODS = [
  ...["GET", "POST", "GET", "POST", "GET", "POST", "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"],
  ...["TRACE", "PROPFIND", "get", "FOO"],
];

const CONTENT_TYPES: Record<BodyKind, readonly (string | null)[]> = {
  none: [null],
  form: ["application/x-www-form-urlencoded", "application/x-www-form-urlencoded; charset=latin1", "APPLICATION/X-WWW-FORM-URLENCODED"],
  multipart: ["multipart/form-data; boundary=fuzzB", 'multipart/form-data; boundary="fuzzB"; charset=utf-8'],
  "broken-multipart": ["multipart/form-data; boundary=fuzzB", "multipart/form-data", "multipart/form-data; boundary="],
  json: ["application/json", "application/json; charset=utf-8"],
  text: ["text/plain", null],
  garbage: ["x/y", ";;;", "application/x-www-form-urlencoded; ===", "multipart/mixed; boundary=fuzzB", "\u00ff/\u00fe"],
};

interface Target {
  variant: Variant | null;
  mountPath: string;
  op: OperationSpec | null;
  subPath: string;
}

function target(): fc.Arbitrary<Target> {
  const known = fc
    .tuple(fc.constantFrom(...OPERATIONS), fc.constantFrom(...VARIANTS), fc.constantFrom("", "", "", "/", ";jsessionid=0A1B"))
    .map(([op, variant, deco]) => ({
      variant,
      mountPath: CONTEXT[variant],
      op: op.variants.includes(variant) ? op : null,
      subPath: `${op.path}${deco}`,
    }));
  const unknown = fc
    .tuple(fc.constantFrom(...UNKNOWN_PATHS, "rest/%zz", "rest/op\u00ffen"), fc.constantFrom(...VARIANTS))
    .map(([subPath, variant]) => ({ variant, mountPath: CONTEXT[variant], op: null, subPath }));
  const outside = fc
    .constantFrom("/", "/nothing", "/event-broker.json", "/EVENT-BROKER", "/%zz")
    .map((mountPath) => ({ variant: null, mountPath, op: null, subPath: "rest/open" }));
  return fc.oneof({ weight: 12, arbitrary: known }, { weight: 2, arbitrary: unknown }, { weight: 1, arbitrary: outside });
}

/** One parameter's occurrences: absent, once, or repeated, each in the query or the body. */
function occurrences(
  name: string,
  values: fc.Arbitrary<[string, string]>,
  multipartBody: boolean,
): fc.Arbitrary<{ pair: WirePair; inBody: boolean }[]> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<{ pair: WirePair; inBody: boolean }[]>([]) },
    {
      weight: 4,
      arbitrary: fc
        .array(fc.record({ value: values, inBody: fc.boolean() }), { minLength: 1, maxLength: 3 })
        // Form-encoded in a query string or urlencoded body, raw UTF-8 in a multipart part.
        .map((list) =>
          list.map(({ value: [encoded, raw], inBody }) => ({ pair: { name, value: inBody && multipartBody ? raw : encoded }, inBody })),
        ),
    },
  );
}

/** Parameters other than the operation's: unknown names, event- extensions, a flood of one name. */
function extras(): fc.Arbitrary<WirePair[]> {
  // Mostly encoded, so that they reach the broker; "%zz" and a raw 0xff byte as written.
  const junk = fc.record({
    name: fc.oneof(
      fc.constantFrom("event-", "event-a", "x", "__proto__", "%zz", "\u00ff", ""),
      fc.string({ maxLength: 8 }).map(formEncode),
    ),
    value: fc.string({ maxLength: 12 }).map(formEncode),
  });
  const flood = fc
    .tuple(fc.constantFrom("a", "event-a", "topic"), fc.constantFrom(50, 2_000, 10_001))
    .map(([name, n]): WirePair[] => Array.from({ length: n }, () => ({ name, value: "" })));
  return fc.oneof({ weight: 8, arbitrary: fc.array(junk, { maxLength: 3 }) }, { weight: 1, arbitrary: flood });
}

function bodyKind(): fc.Arbitrary<BodyKind> {
  return fc.constantFrom<BodyKind>("none", "form", "form", "form", "multipart", "multipart", "broken-multipart", "json", "text", "garbage");
}

/**
 * Any request at all: every operation of every variant and unknown paths, with missing,
 * repeated, empty, huge, non-numeric, negative and overflowing parameters, malformed
 * percent-encoding and invalid UTF-8, in the query string or a body of any content type.
 */
export function hostileRequest(seeds: Seeds, targets: fc.Arbitrary<Target> = target()): fc.Arbitrary<HostileRequest> {
  return fc
    .tuple(targets, bodyKind(), fc.constantFrom(...METHODS), extras(), fc.string({ maxLength: 30, unit: "binary" }))
    .chain(([t, kind, method, extra, text]) => {
      const spec = t.op ?? OPERATIONS.find((o) => t.subPath.startsWith(o.path));
      const multipart = kind === "multipart" || kind === "broken-multipart";
      const params = (spec?.params ?? []).map((p) =>
        occurrences(
          p.name,
          valueFor(p.kind, seeds).chain((v) => fc.tuple(wireValue(v, true), wireValue(v, false))),
          multipart,
        ),
      );
      return fc.tuple(fc.tuple(...params), fc.constantFrom(...CONTENT_TYPES[kind])).map(([occ, contentType]): HostileRequest => {
        const all = occ.flat();
        const bodyPairs = all.filter((o) => o.inBody).map((o) => o.pair);
        return printable({
          method,
          mountPath: t.mountPath,
          variant: t.variant,
          op: t.op,
          subPath: t.subPath,
          query: [...all.filter((o) => !o.inBody).map((o) => o.pair), ...extra],
          bodyKind: kind,
          bodyPairs,
          bodyText: text,
          contentType,
        });
      });
    });
}

/** Operations whose success writes, each with the parameter change that makes any request to it refused. */
const BREAKERS: Record<string, ((r: HostileRequest) => HostileRequest)[]> = {
  "rest/open": [drop("topic"), only("groupId", "3")],
  "rest/publish": [drop("topic"), drop("content"), only("groupId", "3"), only("content", "")],
  "rest/subscribe": [drop("topic"), drop("url"), only("groupId", "3"), only("url", "no scheme")],
  "rest/unSubscribe": [drop("subscriptionId"), only("subscriptionId", " ")],
};

function drop(name: string) {
  return (r: HostileRequest): HostileRequest => ({
    ...r,
    query: r.query.filter((p) => p.name !== name),
    bodyPairs: r.bodyPairs.filter((p) => p.name !== name),
  });
}

function only(name: string, value: string) {
  return (r: HostileRequest): HostileRequest => {
    const d = drop(name)(r);
    return { ...d, query: [{ name, value: formEncode(value) }, ...d.query] };
  };
}

/**
 * Requests to operations that write, each certain to be refused: a required parameter absent,
 * an unknown group or an invalid value put in place of every occurrence. Used to show that a
 * refused request writes nothing.
 */
export function refusedWrite(seeds: Seeds): fc.Arbitrary<HostileRequest> {
  const writeTargets = fc
    .constantFrom(...OPERATIONS.filter((o) => o.path in BREAKERS).flatMap((op) => op.variants.map((variant) => ({ op, variant }))))
    .map(({ op, variant }): Target => ({ variant, mountPath: CONTEXT[variant], op, subPath: op.path }));
  return fc.tuple(hostileRequest(seeds, writeTargets), fc.nat()).map(([r, pick]) => {
    const breakers = BREAKERS[(r.op as OperationSpec).path] ?? [];
    const breaker = breakers[pick % breakers.length];
    return printable(breaker ? breaker(r) : r);
  });
}
