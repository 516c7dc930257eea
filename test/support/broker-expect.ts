import { expect } from "vitest";
import type { Variant } from "@evb/domain";
import { type CallResult, call } from "./http.ts";

/** Context paths of the gateway's default mounts (VARIANTS "L:/event-broker,M:/event-m,E:/event-e"). */
export const CONTEXT: Record<Variant, string> = { L: "/event-broker", M: "/event-m", E: "/event-e" };
export const ALL_VARIANTS: readonly Variant[] = ["L", "M", "E"];

/** `{context}/rest/<op>` of one variant. */
export function rest(
  base: string,
  variant: Variant,
  op: string,
  params: Record<string, string | string[]> = {},
  method: "GET" | "POST" | "PUT" | "DELETE" = "GET",
): Promise<CallResult> {
  return call(base, `${CONTEXT[variant]}/rest/${op}`, params, method);
}

/** Status 200, JSON with the charset the original wrote, and the body parsed. */
export function expectJson200(r: CallResult): unknown {
  expect(r.status, r.text).toBe(200);
  expect(r.contentType).toBe("application/json;charset=UTF-8");
  expect(r.json, r.text).toBeDefined();
  return r.json;
}

/**
 * The broker-exception object in the variant's shape and key order: `{code, message, data: null}`
 * in L, `{code, message}` in M and E; `code` a JSON number. `message` undefined skips the text check.
 */
export function expectBrokerError(r: CallResult, variant: Variant, code: number, message?: string): void {
  const body = expectJson200(r) as Record<string, unknown>;
  expect(Object.keys(body), r.text).toEqual(variant === "L" ? ["code", "message", "data"] : ["code", "message"]);
  expect(typeof body.code).toBe("number");
  expect(body.code, r.text).toBe(code);
  if (message !== undefined) expect(body.message).toBe(message);
  if (variant === "L") expect(body.data).toBeNull();
}

/** The generic code of a variant for missing or unconvertible parameters (behaviour.md 1.5). */
export function genericCodeOf(variant: Variant): number {
  return variant === "L" ? 200000 : 200203;
}

/**
 * A success reply's payload: L wraps REST replies in `{code: 0, message: "success", data}`
 * (keys in that order), M and E answer it bare.
 */
export function expectSuccess(r: CallResult, variant: Variant): unknown {
  const body = expectJson200(r);
  if (variant !== "L") {
    if (body && typeof body === "object") expect(Object.keys(body), r.text).not.toContain("code");
    return body;
  }
  const env = body as Record<string, unknown>;
  expect(Object.keys(env), r.text).toEqual(["code", "message", "data"]);
  expect(env.code, r.text).toBe(0);
  expect(env.message).toBe("success");
  return env.data;
}

/** A topic name unique to this run, so tests sharing one system never see each other's topics. */
export function uniqueTopic(label: string): string {
  return `${label}.${Math.random().toString(36).slice(2, 10)}`;
}
