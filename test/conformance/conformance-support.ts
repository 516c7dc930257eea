import { expect } from "vitest";
import type { Variant } from "@evb/domain";
import { ALL_VARIANTS, CONTEXT, expectJson200, genericCodeOf } from "../support/broker-expect.ts";
import { type CallResult, call } from "../support/http.ts";
import { OpenApiReplies } from "./openapi-replies.ts";

export { expectBrokerError, genericCodeOf } from "../support/broker-expect.ts";

/** One mounted variant: what every scenario is parameterised by. */
export interface MountCase {
  variant: Variant;
  context: string;
}

export const MOUNT_CASES: readonly MountCase[] = ALL_VARIANTS.map((variant) => ({ variant, context: CONTEXT[variant] }));

type Method = "GET" | "POST" | "PUT" | "DELETE";

/** What a scenario needs from the running system; getters because the system starts in beforeAll. */
export interface ConformanceContext {
  base(): string;
  /** `ip:port` of the gateway as it registers itself. */
  gatewayAddress(): string;
  call(m: MountCase, path: string, params?: Record<string, string | string[]>, method?: Method): Promise<CallResult>;
}

/**
 * Every reply a scenario sees passes through `call`, which also checks it against the
 * gateway's /openapi.json (see openapi-replies.ts).
 */
export function makeContext(base: () => string): ConformanceContext {
  let document: Promise<OpenApiReplies> | undefined;
  return {
    base,
    gatewayAddress: () => new URL(base()).host,
    call: async (m, path, params = {}, method = "GET") => {
      document ??= OpenApiReplies.load(base());
      const r = await call(base(), `${m.context}/${path}`, params, method);
      (await document).check(`${m.context}/${path}`, r);
      return r;
    },
  };
}

/**
 * A success reply's payload in the variant's shape: enveloped `{code: 0, message: "success",
 * data}` (that key order) in L, and in M for admin operations; bare otherwise.
 */
export function expectOk(r: CallResult, variant: Variant, kind: "rest" | "admin"): unknown {
  const body = expectJson200(r);
  const enveloped = variant === "L" || (variant === "M" && kind === "admin");
  if (!enveloped) {
    if (body && typeof body === "object" && !Array.isArray(body)) expect(Object.keys(body), r.text).not.toContain("code");
    return body;
  }
  const env = body as Record<string, unknown>;
  expect(Object.keys(env), r.text).toEqual(["code", "message", "data"]);
  expect(env.code, r.text).toBe(0);
  expect(env.message).toBe("success");
  return env.data;
}

export type JsonType = "string" | "number" | "boolean" | "null" | "object" | "array";

export function jsonType(v: unknown): JsonType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v as JsonType;
}

/**
 * A JSON object with exactly these keys in this order, each of the given JSON type(s). Numbers
 * must be integers where the original wrote longs, which every admin number is.
 */
export function expectShape(value: unknown, shape: Record<string, JsonType | readonly JsonType[]>): Record<string, unknown> {
  expect(jsonType(value), JSON.stringify(value)).toBe("object");
  const obj = value as Record<string, unknown>;
  expect(Object.keys(obj), JSON.stringify(value)).toEqual(Object.keys(shape));
  for (const [key, want] of Object.entries(shape)) {
    const allowed = typeof want === "string" ? [want] : want;
    expect(allowed, `${key} of ${JSON.stringify(value)}`).toContain(jsonType(obj[key]));
    if (typeof obj[key] === "number") expect(Number.isInteger(obj[key]), key).toBe(true);
  }
  return obj;
}

/**
 * How a variant answers an operation it does not have (behaviour.md 1.4): L answers 404 with
 * the framework's error JSON; M and E answer 200 with 200203 naming the method and path.
 */
export function expectUnknownPath(r: CallResult, variant: Variant, method: Method, path: string): void {
  if (variant === "L") {
    expect(r.status, r.text).toBe(404);
    const body = expectShape(r.json, { timestamp: "string", status: "number", error: "string", message: "string", path: "string" });
    expect(body).toMatchObject({ status: 404, error: "Not Found", message: "No message available", path });
    return;
  }
  const body = expectJson200(r);
  expect(Object.keys(body as object)).toEqual(["code", "message"]);
  expect(body).toEqual({ code: 200203, message: `No handler found for ${method} ${path}` });
}

/** `yyyy-MM-dd HH:mm:ss`, the admin timestamp format. */
export const ADMIN_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** The missing-parameter error of a variant (behaviour.md 1.5). */
export function missingParam(variant: Variant, type: "String" | "Integer", name: string) {
  return { code: genericCodeOf(variant), message: `Required ${type} parameter '${name}' is not present` };
}

/** The type-mismatch error of a variant for a non-integer Integer parameter. */
export function notAnInteger(variant: Variant, value: string) {
  return {
    code: genericCodeOf(variant),
    message: `Failed to convert value of type 'java.lang.String' to required type 'java.lang.Integer'; nested exception is java.lang.NumberFormatException: For input string: "${value}"`,
  };
}
