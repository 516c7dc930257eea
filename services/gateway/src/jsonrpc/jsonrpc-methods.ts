import { type RpcError, rpcError } from "./jsonrpc-errors.ts";

/**
 * The methods of the original's JSON-RPC endpoint and the overloads its releases took, each the
 * REST operation of the same name (one implementation, two codecs): a call becomes that
 * operation's parameters, which its handler checks in its own order. Pure.
 *
 * Every mount takes the overloads of every release (v1.0 and v1.1 had the forms without
 * `groupId`, v1.2 only the full ones): a superset, so each release's calls resolve. Named
 * parameters (v1.0's client) must name exactly one overload's parameters; positional ones (v1.1,
 * v1.2) pick the overload of that many whose types they match. Not offered: `subscribe` and
 * `unSubscribe` (v1.0's server only, which no client called), and nothing else; the original
 * v1.1/v1.2 servers exposed every public method of their class, setters included.
 */

/** How a JSON argument becomes a parameter: text, an Integer, Base64 bytes (content), a string map (extensions). */
type ArgType = "string" | "int" | "bytes" | "map";

interface Overload {
  readonly names: readonly string[];
  readonly types: readonly ArgType[];
  /** Named only: a positional call of this length would be ambiguous with another overload. */
  readonly namedOnly?: boolean;
}

interface MethodDef {
  /** The REST operation it runs. */
  readonly path: string;
  readonly overloads: readonly Overload[];
}

const TYPES: Record<string, ArgType> = {
  topic: "string",
  groupId: "string",
  eventId: "string",
  pageIndex: "int",
  pageSize: "int",
  content: "bytes",
  extensions: "map",
  idempotencyKey: "string",
};

function overload(names: readonly string[], namedOnly = false): Overload {
  return { names, types: names.map((n) => TYPES[n] as ArgType), ...(namedOnly ? { namedOnly } : {}) };
}

const topicMethod = (path: string): MethodDef => ({ path, overloads: [overload(["topic", "groupId"]), overload(["topic"])] });

const PUBLISH_FORMS = [
  ["topic", "groupId", "content", "extensions"],
  ["topic", "content", "extensions"],
  ["topic", "content"],
  ["topic", "groupId", "content"],
] as const;

/**
 * The methods by name. publish also takes an `idempotencyKey` (not the original's: as rest/publish
 * takes one, docs/idempotency.md) after any form when named, and positionally after the full one.
 */
const METHODS: ReadonlyMap<string, MethodDef> = new Map<string, MethodDef>([
  ["open", topicMethod("rest/open")],
  ["close", topicMethod("rest/close")],
  ["exist", topicMethod("rest/exist")],
  ["state", topicMethod("rest/state")],
  ["list", { path: "rest/list", overloads: [overload(["pageIndex", "pageSize", "groupId"]), overload(["pageIndex", "pageSize"])] }],
  ["getEvent", { path: "rest/getEvent", overloads: [overload(["eventId", "groupId"]), overload(["eventId"])] }],
  [
    "publish",
    {
      path: "rest/publish",
      overloads: [
        ...PUBLISH_FORMS.map((f) => overload(f)),
        overload([...PUBLISH_FORMS[0], "idempotencyKey"]),
        ...PUBLISH_FORMS.slice(1).map((f) => overload([...f, "idempotencyKey"], true)),
      ],
    },
  ],
]);

/** The methods served, in the reference's order (docs and tests list them). */
export const METHOD_NAMES: readonly string[] = [...METHODS.keys()];

/** A call resolved: the REST operation's path and parameters, and publish's extensions as a map. */
export interface ResolvedCall {
  path: string;
  raw: Map<string, string[]>;
  extensions?: Record<string, string>;
}

function signature(o: Overload): string {
  return `(${o.names.join(", ")})`;
}

function badParams(method: string, def: MethodDef, why: string): { error: RpcError } {
  const forms = def.overloads.map(signature).join(" or ");
  return { error: rpcError("INVALID_PARAMS", `${why}; ${method} takes ${forms}`) };
}

/** A method's call as its REST operation's parameters, or -32601 / -32602 saying why not. */
export function resolveCall(method: string, params: unknown): ResolvedCall | { error: RpcError } {
  const def = METHODS.get(method);
  if (!def) return { error: rpcError("METHOD_NOT_FOUND", `${method.slice(0, 64)}; the methods are ${METHOD_NAMES.join(", ")}`) };
  if (params === undefined) return badParams(method, def, "no params");
  const named = !Array.isArray(params);
  const args = named ? (params as Record<string, unknown>) : undefined;
  const list = named ? undefined : (params as unknown[]);
  const match = def.overloads.find((o) =>
    named
      ? sameNames(o.names, Object.keys(args as object))
      : !o.namedOnly && o.names.length === (list as unknown[]).length && o.types.every((t, i) => fits(t, (list as unknown[])[i])),
  );
  if (!match) return badParams(method, def, named ? "no form has exactly these names" : "no form of this length takes these types");
  const values = match.names.map((n, i) => (named ? (args as Record<string, unknown>)[n] : (list as unknown[])[i]));
  const raw = new Map<string, string[]>();
  let extensions: Record<string, string> | undefined;
  for (let i = 0; i < match.names.length; i++) {
    const name = match.names[i] as string;
    const converted = convert(match.types[i] as ArgType, values[i]);
    if ("why" in converted) return badParams(method, def, `${name}: ${converted.why}`);
    if (converted.map !== undefined) extensions = converted.map;
    // groupId absent, null or "" is the default group (v1.1's client sends "" when built without one).
    else if (name === "groupId" && converted.text === "") continue;
    else raw.set(name, [converted.text]);
  }
  return { path: def.path, raw, ...(extensions ? { extensions } : {}) };
}

function sameNames(names: readonly string[], keys: readonly string[]): boolean {
  return keys.length === names.length && keys.every((k) => names.includes(k));
}

/** Whether a positional value can be the overload's type (null fits any): what picks between two forms of one length. */
function fits(type: ArgType, v: unknown): boolean {
  if (v === null) return true;
  if (type === "map") return typeof v === "object" && !Array.isArray(v);
  if (type === "bytes") return typeof v === "string" || Array.isArray(v);
  if (type === "int") return typeof v === "number" || typeof v === "string";
  return typeof v !== "object";
}

type Converted = { text: string; map?: undefined } | { map: Record<string, string>; text?: undefined } | { why: string };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A JSON value as the parameter's text, as the original's Jackson converted it: a string from any
 * scalar, an Integer from a number or a numeric string (the operation then checks it as a REST
 * parameter: a fraction is its type-mismatch error), null as an empty value (the operation's own
 * check answers: a blank topic 100103, an empty page index 100104), content from Base64 (or an
 * array of byte values) as UTF-8 text, extensions from an object of scalars.
 */
function convert(type: ArgType, v: unknown): Converted {
  if (type === "map") return convertMap(v);
  if (v === null) return { text: "" };
  if (type === "bytes") return convertBytes(v);
  if (typeof v === "object") return { why: type === "int" ? "not an integer" : "not text" };
  if (type === "int" && typeof v === "boolean") return { why: "not an integer" };
  return { text: String(v) };
}

function convertMap(v: unknown): Converted {
  if (v === null) return { map: {} };
  if (typeof v !== "object" || Array.isArray(v)) return { why: "not an object of strings" };
  // No prototype: a key `__proto__` stays a key (and is refused as one without the prefix), not a setter.
  const map: Record<string, string> = Object.create(null);
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (x !== null && typeof x === "object") return { why: `${k.slice(0, 64)} is not a string` };
    map[k] = x === null ? "" : String(x);
  }
  return { map };
}

function convertBytes(v: unknown): Converted {
  let bytes: Buffer;
  if (typeof v === "string") {
    if (!BASE64.test(v)) return { why: "not Base64" };
    bytes = Buffer.from(v, "base64");
  } else if (Array.isArray(v) && v.every((b) => Number.isInteger(b) && b >= -128 && b <= 255)) {
    bytes = Buffer.from(v.map((b: number) => b & 0xff));
  } else {
    return { why: "not Base64" };
  }
  try {
    return { text: UTF8.decode(bytes) };
  } catch {
    return { why: "not UTF-8 text (this broker keeps an event's content as text)" };
  }
}
